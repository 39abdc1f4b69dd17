#!/bin/bash
# SPDX-License-Identifier: MIT
# Collection under the fake PMU: values against scenario truths, slot
# weighting, Ice Lake, model fallback, hotplug, EACCES, multiplexing,
# interrupted and short reads.
. "$(dirname "$0")/lib.sh"

plan 87

SPR=$FIXTURES/spr-2s
api() { curl -sf "$TD_URL/api/v1/topdown?$1"; }

constant=$ROOT/tests/scenarios/constant.json

# --- 1. constant fractions: every CPU, L1 and L2, against the truth ---
td_start "$SPR" "$constant" -i 100ms || exit 1
wait_intervals 3
api "scope=cpu" >"$TMP/cpu.json"
check "SPR constant: per-CPU, package and host L1/L2 within 0.005 of the truth" \
	api "$constant" "$SPR" "$TMP/cpu.json"
is "$(jq -r '.pmu.model' "$TMP/cpu.json")" "perf" "model perf with INT_MISC.UOP_DROPPING"
is "$(jq -r '.host.bottleneck' "$TMP/cpu.json")" "backend_bound.memory_bound" "host bottleneck"
is "$(jq '[.cpus[] | select(.state == "monitored")] | length' "$TMP/cpu.json")" 16 "16 CPUs monitored"
# The refinement term is visible: frontend_bound is the metric minus UOP_DROPPING.
near "$(jq '.host.level1.frontend_bound' "$TMP/cpu.json")" 0.19 0.005 \
	"frontend_bound = 0.20 - uop_dropping 0.01"
curl -sf "$TD_URL/metrics" >"$TMP/constant.prom"
# The counters (what rate() divides) against the truth, per package: perf's
# SPR numerators, frontend less UOP_DROPPING, bad speculation the rest.
s1=$(sample "$TMP/constant.prom" 'topdown_slots_total{package="1"}')
for kv in retiring=0.30 bad_speculation=0.11 frontend_bound=0.19 backend_bound=0.40; do
	c=$(sample "$TMP/constant.prom" "topdown_level1_slots_total{package=\"1\",category=\"${kv%=*}\"}")
	near "$(awk -v c="$c" -v s="$s1" 'BEGIN {if (s > 0) printf "%.4f", c / s}')" "${kv#*=}" 0.005 \
		"/metrics counters: package 1 ${kv%=*} slots / slots = ${kv#*=} (truth)"
done
td_stop
is "$TD_STATUS" 0 "SIGTERM: exit status 0"

# --- 2. slot weighting: different fractions and rates per CPU ---
mixed=$(write_scenario mixed <<'EOF'
{"cpus": {
  "default": {"slots_per_second": 1.2e10, "phases": [
    {"retiring": 0.20, "bad_speculation": 0.05, "frontend_bound": 0.15, "backend_bound": 0.60,
     "heavy_operations": 0.02, "branch_mispredicts": 0.03, "fetch_latency": 0.10, "memory_bound": 0.45}]},
  "8-11": {"slots_per_second": 3.6e10, "phases": [
    {"retiring": 0.60, "bad_speculation": 0.15, "frontend_bound": 0.15, "backend_bound": 0.10,
     "heavy_operations": 0.10, "branch_mispredicts": 0.12, "fetch_latency": 0.05, "memory_bound": 0.04}]},
  "4-7": {"slots_per_second": 2.4e10, "phases": [
    {"retiring": 0.50, "bad_speculation": 0.20, "frontend_bound": 0.20, "backend_bound": 0.10,
     "heavy_operations": 0.10, "branch_mispredicts": 0.15, "fetch_latency": 0.15, "memory_bound": 0.05,
     "uop_dropping": 0.02}]}}}
EOF
)
td_start "$SPR" "$mixed" -i 100ms || exit 1
wait_intervals 3
api "scope=cpu" >"$TMP/mixed.json"
check "mixed rates and fractions: CPUs, packages and host (perf's expressions on summed counts: truth)" \
	api "$mixed" "$SPR" "$TMP/mixed.json"
# Make sure this test can tell weighting from averaging.
plain=$(jq '[.cpus[].level1.retiring] | add / length' "$TMP/mixed.json")
weighted=$(jq '.host.level1.retiring' "$TMP/mixed.json")
awk -v p="$plain" -v w="$weighted" 'BEGIN {d = p - w; if (d < 0) d = -d; exit !(d > 0.05)}'
ok $? "host retiring $weighted differs from the plain CPU average $plain"
p0=$(jq '.packages[] | select(.package == 0) | .level1.retiring' "$TMP/mixed.json")
near "$p0" 0.50 0.005 "package 0 retiring = (0.20*1.2 + 0.60*3.6)/4.8 = 0.50"
td_stop

# --- 3. Ice Lake: RECOVERY_CYCLES on backend_bound; level 2 from
# general-purpose events in a second group, the two rotating ---
ICX=$FIXTURES/icx-1s
icl=$(write_scenario icl <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.0e10, "phases": [
  {"retiring": 0.25, "bad_speculation": 0.15, "frontend_bound": 0.30, "backend_bound": 0.30,
   "uop_dropping": 0.02, "recovery_cycles": 0.006,
   "events": {"IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE": 0.012,
              "BR_MISP_RETIRED.ALL_BRANCHES": 0.003, "MACHINE_CLEARS.COUNT": 0.001}}]}}}
EOF
)
# On the fake's read-paced clock: each interval is exactly 100 ms of the
# fake's time, 25 slices of its 4 ms rotation (8, 8 and 9 per group),
# however late a loaded machine fires the timer (on the wall clock an
# interval a tenth short left a group 7 slices: a third of the time is not
# then what the kernel's rotation gives).
FAKEPMU_CLOCK_STEP=0.1 td_start "$ICX" "$icl" -i 100ms || exit 1
wait_intervals 3
api "scope=cpu" >"$TMP/icl.json"
check "ICL: L1 with UOP_DROPPING and 5*RECOVERY_CYCLES (truth)" \
	api "$icl" "$ICX" "$TMP/icl.json" --formulas icl --level 1
is "$(jq '.pmu.level' "$TMP/icl.json")" 2 "ICL: level 2"
like "$(jq -r '.pmu.reason' "$TMP/icl.json")" '^3 groups rotate: 15 general-purpose counters needed, 8 per CPU; events perf.s tables keep on counters 0-3 \(IDQ.MS_UOPS\) go in groups of at most 4' \
	"ICL: the reason the counters run a third of the time is reported"
near "$(jq '.host.running_ratio' "$TMP/icl.json")" 0.333 0.02 "ICL: each of the three groups runs a third of the time"
near "$(jq '.host.level1.backend_bound' "$TMP/icl.json")" 0.33 0.005 "backend_bound = 0.30 + 5*0.006"
# fetch_latency = 5 * IDQ..CYCLES_0_UOPS_DELIV.CORE / SLOTS - UOP_DROPPING / SLOTS;
# branch_mispredicts = BR_MISP / (BR_MISP + MACHINE_CLEARS) * bad_speculation
# (bad_speculation = 1 - 0.25 - (0.30 - 0.02) - 0.33 = 0.14).
near "$(jq '.host.level2.fetch_latency' "$TMP/icl.json")" 0.04 0.003 "ICL: fetch_latency = 5*0.012 - 0.02"
near "$(jq '.host.level2.branch_mispredicts' "$TMP/icl.json")" 0.105 0.003 "ICL: branch_mispredicts = 0.75 * 0.14"
td_stop

# --- 4. refinement events refused: model hardware, ratios = member/S ---
refused=$(write_scenario refused <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40,
   "heavy_operations": 0.05, "branch_mispredicts": 0.06, "fetch_latency": 0.12,
   "memory_bound": 0.25, "uop_dropping": 0.03}]}},
 "faults": [{"op": "open", "event": "uop_dropping", "errno": "EINVAL"}]}
EOF
)
printf '[collect]\ninterval = 100ms\n' >"$TMP/same.conf"
td_start "$SPR" "$refused" -c "$TMP/same.conf" || exit 1
wait_intervals 3
api "scope=cpu" >"$TMP/hw.json"
is "$(jq -r '.pmu.model' "$TMP/hw.json")" "hardware" "refinement refused: model hardware"
check "model hardware: ratios = member/S, no UOP_DROPPING term (truth)" \
	api "$refused" "$SPR" "$TMP/hw.json" --model hardware
like "$(jq -r '.pmu.reason' "$TMP/hw.json")" 'INT_MISC.UOP_DROPPING refused on CPU 0 \(Invalid argument\); using model hardware' \
	"the fallback is explained in pmu.reason"
like "$(curl -sf "$TD_URL/metrics" | grep '^topdown_pmu_info')" 'model="hardware"' "topdown_pmu_info says model hardware"
# A reload with the same configuration keeps the groups and the fallback.
td_reload
is "$(metric topdown_config_last_reload_successful)" 1 "the reload with the same configuration worked"
wait_intervals 3
api "scope=cpu" >"$TMP/hw2.json"
is "$(jq -r '.pmu.model' "$TMP/hw2.json")" "hardware" "after SIGHUP: still model hardware"
check "after SIGHUP: ratios still right" api "$refused" "$SPR" "$TMP/hw2.json" --model hardware
is "$(metric 'topdown_collection_errors_total{reason="short_read"}')" 0 "after SIGHUP: no short reads"
td_stop

# --- 5. a CPU goes offline and comes back ---
HOT=$(fixture_copy spr-2s)
td_start "$HOT" "$constant" -i 100ms || exit 1
wait_intervals 2
before=$(api "scope=cpu" | jq '.cpus[] | select(.cpu == 5) | .slots_total')
host_before=$(api "" | jq '.host.slots_total')
set_online "$HOT" 5 0
wait_intervals 3
api "scope=cpu" >"$TMP/off.json"
is "$(jq -r '.cpus[] | select(.cpu == 5) | .state' "$TMP/off.json")" offline "CPU 5 offline after set-online 0"
off_total=$(jq '.cpus[] | select(.cpu == 5) | .slots_total' "$TMP/off.json")
ok $([ "$off_total" -ge "$before" ]; echo $?) "CPU 5's counter did not decrease ($before -> $off_total)"
is "$(jq '[.cpus[] | select(.cpu != 5 and .state == "monitored" and .slots > 0)] | length' "$TMP/off.json")" 15 \
	"the 15 other CPUs counted in the last interval"
is "$(curl -sf "$TD_URL/metrics" | grep '^topdown_cpus{state="offline"}' | awk '{print $2}')" 1 "topdown_cpus{state=offline} 1"
# Every other CPU keeps counting every interval while CPU 5 is away.
missed=0
for _ in 1 2 3 4 5; do
	wait_intervals 1
	n=$(api "scope=cpu" | jq '[.cpus[] | select(.cpu != 5 and .slots > 0)] | length')
	[ "$n" -eq 15 ] || missed=$((missed + 1))
done
is "$missed" 0 "no other CPU missed an interval (5 intervals checked)"
set_online "$HOT" 5 1
wait_intervals 3
api "scope=cpu" >"$TMP/back.json"
is "$(jq -r '.cpus[] | select(.cpu == 5) | .state' "$TMP/back.json")" monitored "CPU 5 monitored again"
back_total=$(jq '.cpus[] | select(.cpu == 5) | .slots_total' "$TMP/back.json")
ok $([ "$back_total" -gt "$off_total" ]; echo $?) "CPU 5 counts again after the reopen ($off_total -> $back_total)"
ok $([ "$(jq '.host.slots_total' "$TMP/back.json")" -gt "$host_before" ]; echo $?) "host counter kept growing"
grep -q 'CPU 5 went offline' "$TD_LOG" && grep -q 'CPU 5 is online; monitoring it again' "$TD_LOG"
ok $? "the log tells the offline and the reopen"
check "CPU 5's ratios are right after the reopen" api "$constant" "$HOT" "$TMP/back.json"
td_stop

# --- 5b. CPUs offline at start come online: their topology learned ---
# The kernel creates a CPU's topology directory when it comes online and
# removes it when it goes (drivers/base/topology.c topology_sysfs_init:
# CPUHP_TOPOLOGY_PREPARE, topology_add_dev/topology_remove_dev): a CPU
# offline at start has no core and no package until it is back.  With both
# threads of a core away, its coming back adds a core in the middle of the
# sorted list: the cores, packages and host are summed afresh from their
# CPUs between two intervals, never between an interval's reads and its
# sums (which gave one interval's counts to the neighbouring core, for
# good).
LATE=$(fixture_copy spr-2s)
for c in 5 13; do
	set_online "$LATE" $c 0
	mv "$LATE/devices/system/cpu/cpu$c/topology" "$LATE/cpu$c-topology"
done
td_start "$LATE" "$constant" -i 100ms || exit 1
wait_intervals 2
api "scope=cpu" >"$TMP/late0.json"
is "$(jq -c '[.cores[] | select(.cpus | index(5) or index(13))] | length' "$TMP/late0.json")" 0 \
	"CPUs 5 and 13 offline, topology unknown: in no core"
host0=$(jq '.host.slots_total' "$TMP/late0.json")
mv "$LATE/cpu5-topology" "$LATE/devices/system/cpu/cpu5/topology"
set_online "$LATE" 5 1
wait_until 30 eval '[ "$(api "scope=cpu" | jq -r "[.cores[] | select(.cpus | index(5)) | .cpus_measured] | .[0]")" = 1 ]'
ok $? "CPU 5 online: a core of its own, measured"
wait_intervals 2
api "scope=cpu" >"$TMP/late1.json"
# PERF_METRICS' slots add: every core's and package's counters are their
# CPUs', since start and in the last interval.
sums=$(jq -r '
	. as $d
	| def within(a; b): ((a - b) | fabs) <= 1e-9 * (b | fabs) + 1;
	  def of($cpus; f): [$d.cpus[] | select(.cpu as $c | $cpus | index($c)) | f] | add;
	[ ($d.cores[] | within(.slots_total; of(.cpus; .slots_total)) and within(.slots; of(.cpus; .slots))),
	  ($d.packages[] | .package as $p
	   | within(.slots_total; [$d.cpus[] | select(.package == $p) | .slots_total] | add)) ]
	| map(select(. | not)) | length' "$TMP/late1.json")
is "$sums" 0 "after the new layout: every core's and package's slots are its CPUs', since start and last interval"
ok $([ "$(jq '.host.slots_total' "$TMP/late1.json")" -gt "$host0" ]; echo $?) "the host's counter kept growing across the new layout"
check "CPU 5's core and the others right after the new layout" api "$constant" "$LATE" "$TMP/late1.json"
td_stop

# --- 6. EACCES on every CPU ---
eacces=$(write_scenario eacces <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40}]}},
 "faults": [{"op": "open", "errno": "EACCES"}]}
EOF
)
td_start "$SPR" "$eacces" -i 100ms || exit 1
wait_intervals 2
ok $(kill -0 "$TD_PID"; echo $?) "EACCES everywhere: the daemon stays up"
is "$(metric topdown_up)" 0 "topdown_up 0"
is "$(metric 'topdown_cpus{state="failed"}')" 16 "16 CPUs failed"
like "$(metric 'topdown_collection_errors_total{reason="permission"}')" '^[1-9][0-9]*$' "permission errors counted"
is "$(grep -c 'needs CAP_PERFMON' "$TD_LOG")" 1 "one log line naming the fix"
like "$(grep 'needs CAP_PERFMON' "$TD_LOG")" 'kernel.perf_event_paranoid <= 0' "it names kernel.perf_event_paranoid"
is "$(curl -s -o /dev/null -w '%{http_code}' "$TD_URL/-/healthy")" 200 "/-/healthy 200"
like "$(grep 'needs CAP_PERFMON' "$TD_LOG")" 'Retrying every 30s$' "the service says it retries (it does)"
like "$(grep 'Started:' "$TD_LOG")" 'info: Started: no CPU monitored \(16 failed, 0 offline\): see the journal$' \
	"the start-up log says in one line what is monitored (nothing, here)"
td_stop
FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$eacces LD_PRELOAD=$FAKEPMU \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --once -i 100ms >/dev/null 2>"$TMP/once-eacces.err"
is "$?" 1 "--once with every open refused: exit 1"
ok $(grep -q 'Retrying' "$TMP/once-eacces.err"; [ $? -ne 0 ]; echo $?) \
	"--once promises no retries: $(grep -o 'perf_event_open[^.]*$' "$TMP/once-eacces.err" | head -1)"
td_start "$SPR" "$constant" -i 100ms || exit 1
like "$(grep 'Started:' "$TD_LOG")" 'info: Started: monitoring 16 CPUs, level 2, model perf$' \
	"the start-up log states what is monitored"
td_stop

# --- 7. multiplexing: running 50% ---
mux=$(write_scenario mux <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.2e10, "running": 0.5, "phases": [
  {"retiring": 0.35, "bad_speculation": 0.05, "frontend_bound": 0.25, "backend_bound": 0.35,
   "heavy_operations": 0.05, "branch_mispredicts": 0.03, "fetch_latency": 0.20, "memory_bound": 0.20}]}}}
EOF
)
td_start "$SPR" "$mux" -i 100ms || exit 1
wait_intervals 3
api "scope=cpu" >"$TMP/mux.json"
check "running 50%: ratios still match the truth" api "$mux" "$SPR" "$TMP/mux.json"
# The fake takes the counters away in whole 4 ms mux slices, as the kernel
# rotates: one interval of 100 ms is 25 slices, 12 or 13 of them running.
near "$(jq '.host.running_ratio' "$TMP/mux.json")" 0.5 0.041 "host running/enabled = 0.5 (+- one mux slice)"
curl -sf "$TD_URL/metrics?granularity=cpu" >"$TMP/mux.prom"
e=$(sample "$TMP/mux.prom" 'topdown_enabled_seconds_total{cpu="0",core="0",package="0"}')
r=$(sample "$TMP/mux.prom" 'topdown_running_seconds_total{cpu="0",core="0",package="0"}')
near "$(awk -v e="$e" -v r="$r" 'BEGIN {if (e > 0) print r / e}')" 0.5 0.01 \
	"running/enabled seconds counters = 0.5 ($r / $e)"
td_stop

# --- 8. EINTR is retried, short reads skip one interval, never garbage ---
# (on the reads of the groups, slots-led, from 0.2 s: not on the counter
# probes before the first interval)
faults=$(write_scenario faults <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40,
   "heavy_operations": 0.05, "branch_mispredicts": 0.06, "fetch_latency": 0.12, "memory_bound": 0.25}]}},
 "faults": [{"cpus": "5", "op": "read", "event": "slots", "errno": "EINTR", "count": 2, "after_seconds": 0.2},
            {"cpus": "6", "op": "read", "event": "slots", "short": true, "count": 2, "after_seconds": 0.2},
            {"cpus": "7", "op": "read", "event": "slots", "errno": "EIO", "count": 1, "after_seconds": 0.2}]}
EOF
)
# On the read-paced clock (each read of an event one interval later):
# the faults then hit the interval reads from the second on, however long
# the start-up took.  On the real clock a start-up slower than 0.2 s
# (ASan beside two busy loops) put them on reads before the first
# interval, which are not counted: 0 read errors and 1 short read.
FAKEPMU_CLOCK_STEP=0.1 td_start "$SPR" "$faults" -i 100ms || exit 1
# Every fault has fired once both short reads are counted; two intervals
# more and anything else (an EINTR counted) would show.
short_reads() { [ "$(metric 'topdown_collection_errors_total{reason="short_read"}')" = 2 ]; }
wait_until 60 short_reads
wait_intervals 2
api "scope=cpu" >"$TMP/faults.json"
is "$(metric 'topdown_collection_errors_total{reason="read"}')" 1 "EIO counted once as a read error; EINTR retried silently"
is "$(metric 'topdown_collection_errors_total{reason="short_read"}')" 2 "two short reads counted"
is "$(jq '[.cpus[] | select(.state == "monitored")] | length' "$TMP/faults.json")" 16 "all CPUs still monitored"
check "CPUs 5-7 report the truth after their faults" api "$faults" "$SPR" "$TMP/faults.json" --cpus 5-7
td_stop

# --- 9. --once prints a perf-like table and the JSON document ---
out=$(FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$constant LD_PRELOAD=$FAKEPMU \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --once -i 100ms 2>/dev/null)
ok $? "--once exits 0"
like "$out" 'backend_bound +40\.[0-9]%\*' "--once: backend_bound marked as the bottleneck"
like "$out" $'\n  memory_bound +2[45]\.[0-9]%\\*' "--once: L2 indented under its parent, memory_bound marked"
like "$out" 'host +package 0 +package 1' "--once: host and per-package columns"
FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$constant LD_PRELOAD=$FAKEPMU \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --once --json -i 100ms >"$TMP/once.json" 2>/dev/null
check "--once --json: the API document, values against the truth" api "$constant" "$SPR" "$TMP/once.json"

# --- 10. --watch: a table every interval, or one JSON document per line ---
FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$constant LD_PRELOAD=$FAKEPMU \
	timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --watch --count 3 -i 100ms \
	>"$TMP/watch.txt" 2>"$TMP/watch.err"
ok $? "--watch --count 3 exits 0"
is "$(grep -c '^\* bottleneck: host backend_bound.memory_bound$' "$TMP/watch.txt")" 3 \
	"--watch --count 3: three tables, each with the bottleneck"
is "$(grep '^# [0-9.]* s$' "$TMP/watch.txt" | tr '\n' ' ')" "# 0.100 s # 0.200 s # 0.300 s " \
	"--watch: each table after the seconds since the start, on absolute deadlines"
FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$constant LD_PRELOAD=$FAKEPMU \
	timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --watch --json --count 2 -i 100ms \
	>"$TMP/watch.json" 2>/dev/null
is "$(jq -c '.intervals' "$TMP/watch.json" | tr '\n' ' ')" "1 2 " "--watch --json: one document per line, one per interval"
tail -1 "$TMP/watch.json" >"$TMP/watch-last.json"
check "--watch --json: values against the truth" api "$constant" "$SPR" "$TMP/watch-last.json"
ok $(! grep -q '^note:' "$TMP/watch.txt"; echo $?) "--watch: no note while the counters run all the time"
# Another user of SLOTS (perf, a second topdownd): the kernel gives the
# group half the time.
shared=$(jq '.cpus.default.running = 0.5' "$constant" | write_scenario shared)
FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$shared LD_PRELOAD=$FAKEPMU \
	timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --watch --count 2 -i 100ms \
	>"$TMP/watch-shared.txt" 2>/dev/null
# Half of a 100 ms interval, in the fake's multiplexing slices: 45-55 %.
is "$(grep -cE '^running +(4[5-9]|5[0-5])\.[0-9]% ' "$TMP/watch-shared.txt")" 2 \
	"--watch, counters shared: the running fraction shows it (about 50 %)"
is "$(grep -cE '^note: the counters ran (4[5-9]|5[0-5])\.[0-9]% of the time: another user of the PMU shares them \(perf, a second topdownd\) or the groups rotate; figures are scaled to the whole interval, as perf does$' "$TMP/watch-shared.txt")" 2 \
	"--watch, counters shared: a note under each table says why"
FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$constant LD_PRELOAD=$FAKEPMU \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --watch -i 100ms >"$TMP/watch-int.txt" 2>&1 &
wpid=$!
_TD_PIDS+=("$wpid")
# The signal once the first table is out: SIGINT ends a running --watch,
# not one still setting up.
wait_until 20 log_has "$TMP/watch-int.txt" '^# [0-9.]+ s$'
kill -INT "$wpid"
wait "$wpid"
is "$?" 0 "--watch ends on SIGINT with exit 0 (after $(grep -c '^# ' "$TMP/watch-int.txt") tables)"

# --- 10. count_kernel = false is what the kernel is asked: exclude_kernel
# on every event of every group, and a reload that changes it reopens them ---
# live_events TRACE: "N exclude_kernel=V..." for the events open now (the
# fake's trace: the latest open of an fd not closed since).
live_events() {
	awk '$1 == "open" {split($2, f, "="); live[f[2]] = $0}
		$1 == "close" {split($2, f, "="); delete live[f[2]]}
		END {for (fd in live) {n = split(live[fd], w, " "); for (i = 1; i <= n; i++)
			if (w[i] ~ /^exclude_kernel=/) c[w[i]]++}
			for (k in c) printf "%d %s\n", c[k], k}' "$1" | sort
}
printf '[collect]\ncount_kernel = false\ninterval = 100ms\n' >"$TMP/ck.conf"
FAKEPMU_TRACE=$TMP/ck.trace td_start "$SPR" "$constant" -c "$TMP/ck.conf" || exit 1
wait_intervals 2
# 16 CPUs x (slots, 8 metrics, INT_MISC.UOP_DROPPING).
is "$(live_events "$TMP/ck.trace")" "160 exclude_kernel=1" "count_kernel = false: all 160 events open have exclude_kernel set"
printf '[collect]\ncount_kernel = true\ninterval = 100ms\n' >"$TMP/ck.conf"
td_reload
wait_intervals 2
# And the SMT split's group on each CPU (REF_TSC, ONE_THREAD_ACTIVE,
# REF_DISTRIBUTED, msr/tsc), which counts the kernel's time and is not
# counted with count_kernel = false.
is "$(live_events "$TMP/ck.trace")" "224 exclude_kernel=0" "reloaded with count_kernel = true: all 160 reopened without exclude_kernel, and the SMT split's 64"
printf '[collect]\ncount_kernel = false\ninterval = 100ms\n' >"$TMP/ck.conf"
td_reload
wait_intervals 2
is "$(live_events "$TMP/ck.trace")" "160 exclude_kernel=1" "and back to false: all 160 with exclude_kernel again"
check "count_kernel = false: values still the truth" api "$constant" "$SPR" <(curl -sf "$TD_URL/api/v1/topdown?scope=cpu")
td_stop

# --- 11. a read 4.6 days after the last (a suspended machine): each
# CPU's deltas are past 2^52 counts (1.2e10 slots a second for 400,000 s:
# 4.8e15), where collection converts them as scalars, not from their bits
# (an enabled time past 75 minutes; from their bits the slots would read
# 4.8e15 - 2^52, and the frontend, less UOP_DROPPING over the slots, 0.04).
# The fake's clock runs, stops, and jumps: the groups were read before
# the jump, the common path's. ---
jclock=$TMP/clock-jump
clock_run "$jclock" 1
FAKEPMU_CLOCK_FILE=$jclock td_start "$SPR" "$constant" -i 100ms || exit 1
wait_intervals 3
clock_stop
wait_intervals 1
api "" >"$TMP/jump-a.json"
awk '{ printf "%.3f\n", $1 + 400000 }' "$jclock" >"$jclock.new" && mv "$jclock.new" "$jclock"
wait_intervals 2
api "" >"$TMP/jump-b.json"
jumped() { # LEVEL CATEGORY: its slots over the host's, counted across the jump
	jq -n --slurpfile a "$TMP/jump-a.json" --slurpfile b "$TMP/jump-b.json" --arg l "$1" --arg c "$2" \
		'($b[0].host[$l + "_slots_total"][$c] - $a[0].host[$l + "_slots_total"][$c]) /
		 ($b[0].host.slots_total - $a[0].host.slots_total)'
}
# The truths of section 1, through PERF_METRICS' 8-bit fractions: 0.005.
for kv in level1:retiring=0.30 level1:bad_speculation=0.11 level1:frontend_bound=0.19 \
	level1:backend_bound=0.40 level2:memory_bound=0.25 level2:fetch_latency=0.11; do
	c=${kv%=*}
	near "$(jumped "${c%:*}" "${c#*:}")" "${kv#*=}" 0.005 \
		"a read 4.6 days later (deltas past 2^52 counts): the host's ${c#*:} across it is the truth (${kv#*=})"
done
is "$(curl -sf "$TD_URL/api/v1/topdown?scope=cpu" | jq '[.cpus[] | select(.state == "monitored")] | length')" 16 \
	"all 16 CPUs still monitored after the jump"
td_stop

done_testing
