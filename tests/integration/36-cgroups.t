#!/bin/bash
# SPDX-License-Identifier: MIT
# Per-cgroup TopDown through the real kernel's BPF: the daemon runs
# unmodified on the swclock fixture (its core PMU is the kernel's software
# PMU, every event cpu-clock), so each cgroup's "slots" are the CPU time
# its tasks ran, which the kernel also keeps in cpu.stat usage_usec: the
# oracle.  CPU hogs in two cgroups (one through an untracked child) share
# CPU 0, a ping-pong between two more cgroups switches on CPU 1.  Then: the
# buckets partition the host, the cost guard stops attribution over its
# budget, and 1,000 cgroups created and removed keep the series at the cap
# and the memory flat.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || missing_all "per-cgroup attribution needs root (BPF, cgroups); CI runs as root"
plan 32

HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$(swclock)

BASE=topdownd-test-$$
cgroup_tree "$BASE"
mkdir -p "$CG/a/inner" "$CG/b" "$CG/c" "$CG/d"

usage() { awk '/^usage_usec/ { print $2 }' "$CG/$1/cpu.stat"; }

cat >"$TMP/cg.conf" <<CONF
[collect]
interval = 500ms
[cgroups]
enabled = true
track = $BASE/*
level = 2
max_cgroups = 10
# The ping-pong switches cgroups ~50,000 times a second: at the default 1 %
# the guard would stop attribution (its own test is below).
budget = 100%
CONF
td_start_real "$TMP/cg.conf"
ok $? "the daemon starts on the swclock fixture with [cgroups] enabled"
grep -q "Per-cgroup TopDown: tracking" "$TD_LOG"
ok $? "it attributes (log: $(grep -m1 -o 'Per-cgroup.*\|per-cgroup.*' "$TD_LOG"))"
wait_intervals 2 || diag "no two intervals within 60 s"

hog a/inner 0 3
hog b 0 3
kill -CONT "${HOGS[@]}"
"$HERE/pingpong.py" "$CG/c" "$CG/d" 1 3 >"$TMP/trips" &
HOGS+=($!)
for p in "${HOGS[@]}"; do wait "$p" 2>/dev/null; done
HOGS=()
diag "ping-pong round trips: $(cat "$TMP/trips")"
# Every slice has ended; two intervals later each is in a published flush.
wait_intervals 3
curl -sf "$TD_URL/api/v1/topdown?scope=cgroup" >"$TMP/doc1"
ok $? "GET /api/v1/topdown?scope=cgroup answers"
for g in a b c d; do echo "$g $(usage "$g")"; done >"$TMP/usage"

# Each tracked cgroup's cpu-clock against cpu.stat, within 3 %; the
# figures are in the description, so that a failure in a quiet `make
# check` says them.
for g in a b c d; do
	fig=$(/usr/bin/python3 - "$TMP/doc1" "$TMP/usage" "/$BASE/$g" "$g" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
usage = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[2])}
got = {c["cgroup"]: c["slots_total"] for c in doc["cgroups"]}
name, g = sys.argv[3], sys.argv[4]
want = usage[g] * 1000.0
err = abs(got.get(name, 0) - want) / want
print("%.0f ms counted, cpu.stat %.0f ms, %.2f %%" % (got.get(name, 0) / 1e6, want / 1e6, err * 100))
sys.exit(0 if want > 1e8 and err < 0.03 else 1)
PY
)
	ok $? "/$BASE/$g: its cpu-clock matches cpu.stat usage_usec within 3 % ($fig)"
done

# The buckets partition the host: over the next intervals their deltas
# sum to the host's delta (the two reads are microseconds apart).
wait_intervals 2
curl -sf "$TD_URL/api/v1/topdown?scope=cgroup" >"$TMP/doc2"
/usr/bin/python3 - "$TMP/doc1" "$TMP/doc2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def tot(d):
    return sum(c["slots_total"] for c in d["cgroups"]), d["host"]["slots_total"]
(ba, ha), (bb, hb) = tot(a), tot(b)
err = abs((bb - ba) - (hb - ha)) / (hb - ha)
print("# buckets %.1f ms, host %.1f ms over the last %d intervals: %.3f %%" % ((bb - ba) / 1e6, (hb - ha) / 1e6, b["intervals"] - a["intervals"], err * 100))
sys.exit(0 if hb > ha and err < 0.01 else 1)
PY
ok $? "the buckets' slots sum to the host's within 1 % over the same intervals"
/usr/bin/python3 - "$TMP/doc2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# On swclock every event counts the same CPU time, so perf's formulas give
# any bucket the shares they give the host: a bucket charged another
# event's delta, or another CPU's, would differ.
host = d["host"]["level1_slots_total"]
hs = d["host"]["slots_total"]
for c in d["cgroups"]:
    if c["slots_total"] < 1e8:
        continue
    for k, v in c["level1_slots_total"].items():
        got, want = v / c["slots_total"], host[k] / hs
        # Relative: on swclock Ice Lake's backend reads 5 x RECOVERY_CYCLES
        # per slot, perf's 5.25 (no cap), and a loaded machine skews its
        # events' reads by a little of that.
        if abs(got - want) > 0.01 * max(1.0, want):
            print("# %s: %s %.4f of its slots, the host's %.4f" % (c["cgroup"], k, got, want))
            sys.exit(1)
names = [c["cgroup"] for c in d["cgroups"]]
slots = [c["slots_total"] for c in d["cgroups"]]
sys.exit(0 if slots == sorted(slots, reverse=True) and "other" in names else 1)
PY
ok $? "scope=cgroup lists other and the tracked cgroups by slots, each with the host's level-1 shares (every event counts the same time)"
jq -e --arg a "/$BASE/a" '.cgroups | map(.cgroup) | index($a) != null and (index("/'"$BASE"'/a/inner") == null)' "$TMP/doc2" >/dev/null
ok $? "the untracked child a/inner counts for its tracked parent a"
jq -e '.cgroup_attribution | .attributing and .tracked == 4 and .dropped == 0 and (.trigger == "cgroup-switches" or .trigger == "sched_switch")' "$TMP/doc2" >/dev/null
ok $? "cgroup_attribution: attributing, 4 tracked, none dropped ($(jq -c '.cgroup_attribution | {trigger, switches, bpf_seconds}' "$TMP/doc2"))"

curl -sf "$TD_URL/metrics" >"$TMP/metrics"
grep -q "^topdown_cgroup_slots_total{cgroup=\"/$BASE/c\"} [0-9]" "$TMP/metrics"
ok $? "/metrics: topdown_cgroup_slots_total{cgroup=\"/$BASE/c\"}"
[ "$(grep -c '^topdown_cgroup_level1_slots_total{' "$TMP/metrics")" -eq 20 ]
ok $? "/metrics: 4 level-1 categories for each of 5 buckets, no cpu label"
grep -q '^topdown_cgroup_level2_slots_total{cgroup="other",category="memory_bound",parent="backend_bound"} ' "$TMP/metrics"
ok $? "/metrics: level 2 per cgroup with [cgroups] level = 2"
grep -q '^topdown_cgroups{state="tracked"} 4$' "$TMP/metrics"
ok $? '/metrics: topdown_cgroups{state="tracked"} 4'
# Every per-cgroup family is documented in topdownd.8, and the other way.
man -l "$HERE/../../daemon/topdownd.8" 2>/dev/null | col -bx >"$TMP/8.txt"
live=$(awk '$1 == "#" && $2 == "TYPE" && $3 ~ /^topdown_cgroup/ { print $3 }' "$TMP/metrics" | sort -u)
doc=$(grep -oE '^       topdown_cgroup[a-z0-9_]+' "$TMP/8.txt" | sed 's/^ *//' | sort -u)
is "$live" "$doc" "topdownd.8 METRICS documents exactly the per-cgroup families exported"
"$TOPDOWND" -c "$TMP/cg.conf" --sysfs-root "$FIX" --once >"$TMP/once" 2>"$TMP/once.err"
ok $? "--once with [cgroups] enabled exits 0"
grep -qE '^cgroup +slots +retiring +bad_speculation +frontend_bound +backend_bound$' "$TMP/once" &&
	grep -qE '^other +[0-9.]+%' "$TMP/once"
ok $? "--once prints the per-cgroup table"
td_stop

# ---- the sched_switch trigger (kernels without cgroup-switches, and
# perf_event on a cgroup v1 hierarchy): the same attribution ----
sed 's/^budget = 100%$/budget = 100%\ntrigger = sched_switch/' "$TMP/cg.conf" >"$TMP/sched.conf"
td_start_real "$TMP/sched.conf"
wait_intervals 2
A0=$(usage a)
B0=$(usage b)
hog a 0 2
hog b 0 2
kill -CONT "${HOGS[@]}"
for p in "${HOGS[@]}"; do wait "$p" 2>/dev/null; done
HOGS=()
wait_intervals 3
curl -sf "$TD_URL/api/v1/topdown?scope=cgroup" >"$TMP/sched"
td_stop
/usr/bin/python3 - "$TMP/sched" "$BASE" "$((($(usage a) - A0) * 1000))" "$((($(usage b) - B0) * 1000))" <<'PY'
import json, sys
doc, base = json.load(open(sys.argv[1])), sys.argv[2]
got = {c["cgroup"]: c["slots_total"] for c in doc["cgroups"]}
ok = True
for g, want in (("a", float(sys.argv[3])), ("b", float(sys.argv[4]))):
    err = abs(got.get("/%s/%s" % (base, g), 0) - want) / want
    print("# sched_switch: /%s/%s: %.0f ms counted, cpu.stat %.0f ms, %.2f %%" % (base, g, got.get("/%s/%s" % (base, g), 0) / 1e6, want / 1e6, err * 100))
    ok = ok and want > 5e8 and err < 0.03
sys.exit(0 if ok else 1)
PY
ok $? "trigger = sched_switch: the hogs' cpu-clock matches cpu.stat within 3 %"
jq -e '.cgroup_attribution.trigger == "sched_switch"' "$TMP/sched" >/dev/null
ok $? "cgroup_attribution.trigger is sched_switch"

# ---- 1,000 cgroups created and removed: the series stay at the cap ----
sed -i 's/^level = 2$/level = 1/' "$TMP/cg.conf"
td_start_real "$TMP/cg.conf"
wait_intervals 2
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$TD_PID/status"; }
churn() {
	local i
	for i in $(seq 1 1000); do mkdir "$CG/churn$i"; done
	wait_intervals 3
	curl -sf "$TD_URL/metrics" >"$TMP/churn"
	for i in $(seq 1 1000); do rmdir "$CG/churn$i"; done
	wait_intervals 3
}
churn
RSS1=$(rss)
series=$(grep -c '^topdown_cgroup_slots_total{' "$TMP/churn")
is "$series" 11 "1,004 matching cgroups: 10 tracked + other = 11 series (max_cgroups = 10)"
grep -q '^topdown_cgroups{state="dropped"} 994$' "$TMP/churn"
ok $? "topdown_cgroups{state=\"dropped\"} 994 ($(grep '^topdown_cgroups' "$TMP/churn" | tr '\n' ' '))"
churn
churn
RSS2=$(rss)
# Three times the count of cgroups beyond the cap went from 0 to 994 and
# back: one warning (at most every 10 minutes; before, one each time,
# 1,800 lines an hour under churn).
is "$(grep -c 'cgroups match \[cgroups\] track beyond max_cgroups=10' "$TD_LOG")" 1 \
	"three rounds over the cap: one warning ($(grep -o 'warning: [0-9]* cgroups match.*' "$TD_LOG" | head -1))"
diag "RSS after one round of 1,000 cgroups: $RSS1 KiB, after three: $RSS2 KiB"
if [ -n "${SAN:-}" ]; then
	# ASan keeps freed memory in quarantine: its RSS measures that.
	skip "RSS under a sanitizer measures its quarantine (plain pass: grew $((RSS2 - RSS1)) KiB here)"
else
	ok $((RSS2 - RSS1 > 256)) "memory flat over two more rounds (grew $((RSS2 - RSS1)) KiB, at most 256)"
fi
curl -sf "$TD_URL/metrics" >"$TMP/after"
is "$(grep -c '^topdown_cgroup_slots_total{' "$TMP/after")" 5 "after the churn: the 4 cgroups left + other"
td_stop

# ---- the cost guard ----
cat >"$TMP/guard.conf" <<CONF
[collect]
interval = 300ms
[cgroups]
enabled = true
track = $BASE/*
budget = 0.01%
CONF
cp "$TMP/guard.conf" "$TMP/guard.base"
td_start_real "$TMP/guard.conf"
wait_intervals 2
"$HERE/pingpong.py" "$CG/c" "$CG/d" 1 3 >/dev/null
wait_intervals 2
curl -sf "$TD_URL/metrics" >"$TMP/guard"
grep -qE '^topdown_pmu_info\{.*reason="([^"]*; )?per-cgroup attribution stopped: it cost [0-9.]*% of each CPU \(.* switches/s per CPU x [0-9.]* us\), over the budget of 0.01% \(\[cgroups\] budget\)"\} 1$' "$TMP/guard"
ok $? "over budget: topdown_pmu_info{reason} says attribution stopped, with the cost"
grep -q 'warning: per-cgroup attribution stopped: it cost' "$TD_LOG"
ok $? "and a log line says so ($(grep -o 'per-cgroup attribution stopped.*' "$TD_LOG" | head -1))"
! grep -q '^topdown_cgroup_slots_total' "$TMP/guard" && grep -q '^topdown_slots_total' "$TMP/guard"
ok $? "per-cgroup series stop, per-host figures go on"
jq -e '.cgroup_attribution | (.attributing | not) and (.reason | startswith("per-cgroup attribution stopped"))' \
	<(curl -sf "$TD_URL/api/v1/topdown?scope=cgroup") >/dev/null
ok $? "scope=cgroup: attributing false, the reason"
# Attribution stopped lets go of its events: the BPF array held each
# event's file (perf_event_fd_array_get_ptr), so without emptying it every
# group the next reload closes would stay allocated, and enabled.  The
# daemon's own perf-event arrays (map_type 4 in its descriptors' fdinfo)
# are probed slot by slot: deleting an empty slot fails with ENOENT
# (fd_array_map_delete_elem), deleting a held event succeeds, so the count
# of successes is the number of events the array still held.  This is the
# daemon's own state, not the whole system's (fs.file-nr moves with
# whatever else runs: a concurrent make check, ~10,000 files).
fds() { ls "/proc/$TD_PID/fd" | wc -l; }
perf_fds() { find "/proc/$TD_PID/fd" -lname 'anon_inode:\[perf_event\]' | wc -l; }
held_events() {
	local f id max k n=0 arrays=0 slots=0
	for f in /proc/$TD_PID/fdinfo/*; do
		grep -q '^map_type:[[:space:]]*4$' "$f" 2>/dev/null || continue
		id=$(awk '/^map_id:/ {print $2}' "$f")
		max=$(awk '/^max_entries:/ {print $2}' "$f")
		arrays=$((arrays + 1)) slots=$((slots + max))
		for k in $(seq 0 $((max - 1))); do
			bpftool map delete id "$id" key $((k & 255)) $((k >> 8 & 255)) $((k >> 16 & 255)) $((k >> 24)) \
				2>/dev/null && n=$((n + 1))
		done
	done
	echo "$n $arrays $slots"
}
# Reloads that reopen every group (count_kernel toggled): without the
# emptying the array keeps the first set, each reload closes the daemon's
# descriptors of it, and only the array keeps those events alive.
RELOADS=2
d0=$(fds) p0=$(perf_fds)
for n in $(seq 1 $RELOADS); do
	if [ $((n % 2)) = 1 ]; then
		sed 's/^interval = 300ms$/interval = 300ms\ncount_kernel = false/' "$TMP/guard.base" >"$TMP/guard.conf"
	else
		cp "$TMP/guard.base" "$TMP/guard.conf"
	fi
	td_reload
	wait_intervals 2
done
d1=$(fds) p1=$(perf_fds)
read -r held arrays slots < <(held_events)
diag "the daemon's descriptors $d0 -> $d1 ($p0 -> $p1 perf events) across $RELOADS reloads; its perf-event arrays: $arrays, $slots slots, $held still holding an event"
ok $([ "$arrays" -ge 1 ] && [ "$held" -eq 0 ] && [ "$p1" -eq "$p0" ]; echo $?) \
	"after attribution stopped and $RELOADS reloads that reopen the groups, the BPF array holds no event ($held of $slots slots; $arrays array) and the daemon has its $p0 perf events"
td_stop

# ---- without BPF's permission: the fix in the log, per-host figures ----
if command -v capsh >/dev/null; then
	capsh --drop=cap_bpf,cap_sys_admin -- -c "exec '$TOPDOWND' -c '$TMP/cg.conf' --sysfs-root '$FIX' --once" \
		>"$TMP/nocap" 2>&1
	ok $? "without CAP_BPF --once still exits 0"
	grep -q 'CAP_BPF' "$TMP/nocap"
	ok $? "and says CAP_BPF is needed ($(grep -o 'per-cgroup.*' "$TMP/nocap" | head -1))"
else
	missing "capsh not installed (make deps installs libcap2-bin)" 2
fi
done_testing
