#!/bin/bash
# SPDX-License-Identifier: MIT
# The third battery: what one tenant, one line of a file, one signal or a
# step of the wall clock did to a host's monitoring, each case as it was
# found (issue 40), now held:
#   - a cgroup named with bytes that are not UTF-8 (real BPF, a real
#     cgroup v2 tree) and a pmu_name with an escape byte: every exposition
#     passes promtool and the strict parsers, the JSON keeps the name,
#     --probe and the log print no control byte; a cgroup path too long
#     for a bucket is counted as dropped;
#   - a bcrypt cost above the maximum: refused at start and on reload,
#     naming FILE:LINE; SIGTERM under a flood of password checks;
#   - obs-fold (RFC 9112 5.2): one 400, the body never a second request;
#   - a second daemon on a unix socket in use: refused, the first keeps it;
#   - SIGHUP while main() reads its configuration; SIGUSR1, SIGUSR2;
#   - the wall clock stepped a day forward and an hour back (?window=,
#     the history);
#   - a FIFO under --sysfs-root; a storm of reloads;
#   - the request line's refusals after authentication, in JSON on the API.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || missing_all "the cgroup cases need root (BPF, cgroups); CI runs as root"
command -v promtool >/dev/null || missing_all "promtool (make deps installs prometheus)"
plan 46

HERE=$(cd "$(dirname "$0")" && pwd)
SPR=$FIXTURES/spr-2s
SCEN=$ROOT/tests/scenarios/constant.json
SHIM_DIR=${SHIM_DIR:-$ROOT/build/tests/shims}
B3="/usr/bin/python3 $HERE/battery3.py"

# Text any reader takes: valid UTF-8, no control byte but newline and tab.
clean_text() { # FILE
	/usr/bin/python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
b.decode("utf-8")
bad = [c for c in b if c < 0x20 and c not in (9, 10)] + [c for c in b if c == 0x7f]
sys.exit(1 if bad else 0)' "$1" 2>/dev/null
}

# ---- 1. a tenant's cgroup name, not UTF-8 (real kernel, BPF) ----
BASE=topdownd-b3-$$
cgroup_tree "$BASE"
bad=$'bad\xff\x1b[31mname'
mkdir -p "$CG/$bad" "$CG/good"
# BASE/long: 255 bytes, 256 with the leading '/', one more than a bucket's name holds.
long=$(printf 'l%.0s' $(seq 1 $((255 - ${#BASE} - 1))))
mkdir "$CG/$long"
cat >"$TMP/cg.conf" <<CONF
[collect]
interval = 200ms
[log]
# Each bucket's counts are logged: the name goes through the log too.
level = debug
[cgroups]
enabled = true
track = $BASE/*
max_cgroups = 10
budget = 100%
CONF
td_start_real "$TMP/cg.conf"
ok $? "the daemon tracks $BASE/* on the real cgroup tree (a name with \\xff and ESC among them)"
wait_until 30 eval 'curl -sf "$TD_URL/metrics" | grep -q "topdown_cgroup_slots_total{cgroup=\"/$BASE/bad"'
curl -sf "$TD_URL/metrics" >"$TMP/cg.prom"
curl -sf -H 'Accept: application/openmetrics-text; version=1.0.0' "$TD_URL/metrics" >"$TMP/cg.om"
curl -sf "$TD_URL/api/v1/topdown?scope=cgroup" >"$TMP/cg.json"
out=$(promtool check metrics <"$TMP/cg.prom" 2>&1)
ok $? "promtool check metrics takes the text format (before: 'invalid label value', the whole target down in Prometheus)${out:+: $out}"
check "the strict text parser takes it" text "$TMP/cg.prom"
check "the strict OpenMetrics parser takes it" openmetrics "$TMP/cg.om"
grep -qF "topdown_cgroup_slots_total{cgroup=\"/$BASE/bad\\\\xff\\\\x1b[31mname\"}" "$TMP/cg.prom"
ok $? "the name is there, its bytes written as the text \\xff and \\x1b (the backslash escaped)"
is "$(jq -r --arg b "/$BASE/bad" '.cgroups[] | select(.cgroup | startswith($b)) | .cgroup' "$TMP/cg.json")" \
	"/$BASE/bad\\xff\\x1b[31mname" "the JSON has the same name (before: the key left out)"
clean_text "$TMP/cg.prom" && clean_text "$TMP/cg.json" && clean_text "$TD_LOG"
ok $? "no control byte nor invalid UTF-8 in /metrics, the JSON, or the daemon's log"
like "$(grep -m1 'path longer than' "$TD_LOG")" "1 cgroups match \\[cgroups\\] track with a path longer than 255 bytes" \
	"a tracked cgroup whose path is too long for a bucket's name: logged"
is "$(sample "$TMP/cg.prom" 'topdown_cgroups{state="dropped"}')" 1 "... and counted as dropped (before: skipped unseen)"
td_stop
# --once prints the cgroups too.
"$TOPDOWND" -c "$TMP/cg.conf" --sysfs-root "$(swclock)" --once >"$TMP/once.out" 2>&1
clean_text "$TMP/once.out" && grep -qF "bad\\xff\\x1b[31mname" "$TMP/once.out"
ok $? "--once's cgroup table: the name escaped, no raw byte on the terminal"
cgroup_remove "$CG"

# ---- 2. a pmu_name with an escape byte and a byte that is not UTF-8 ----
FX=$(fixture_copy spr-2s)
printf 'sapphire\033]0;pwned\007_rapids\xff\n' >"$FX/bus/event_source/devices/cpu/caps/pmu_name"
"$TOPDOWND" -c /dev/null --sysfs-root "$FX" --probe >"$TMP/probe.out" 2>&1 </dev/null
clean_text "$TMP/probe.out" && grep -qF 'pmu_name:     sapphire\x1b]0;pwned\x07_rapids\xff' "$TMP/probe.out"
ok $? "--probe prints the pmu_name escaped (before: the escape sequence raw on the terminal)"
td_start "$FX" "$SCEN" -i 100ms || exit 1
wait_intervals 1
curl -sf "$TD_URL/metrics" >"$TMP/pmu.prom"
promtool check metrics <"$TMP/pmu.prom" >/dev/null 2>&1 && clean_text "$TMP/pmu.prom"
ok $? "/metrics with that pmu_name passes promtool"
is "$(curl -sf "$TD_URL/api/v1/topdown" | jq -r .pmu.pmu_name)" 'sapphire\x1b]0;pwned\x07_rapids\xff' \
	"the JSON's pmu_name, escaped the same way"
td_stop

# ---- 3. basic auth: the cost maximum; SIGTERM under a flood of checks ----
/usr/bin/python3 -W ignore - "$TMP" <<'EOF'
import crypt, sys
d = sys.argv[1]
def h(pw, cost):
    return crypt.crypt(pw, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** cost)).replace("$2b$", "$2y$", 1)
open(d + "/users", "w").write("prom:%s\n" % h("s3cret", 12))
# A cost-31 line: its salt and hash are never computed at load.
open(d + "/users31", "w").write("prom:%s\n# a slow one\nslow:$2y$31$%s\n" % (h("s3cret", 5), "a" * 53))
EOF
printf '[http]\nbasic_auth_file = %s\n' "$TMP/users31" >"$TMP/auth31.conf"
out=$(timeout 20 "$TOPDOWND" -c "$TMP/auth31.conf" --sysfs-root "$SPR" -l 127.0.0.1:0 2>&1)
st=$?
is "$st:$(grep -c . <<<"$out")" "78:1" "a cost-31 line: the daemon does not start (exit 78), one message"
is "$out" "$TMP/users31:3: user \"slow\": bcrypt cost 31 is above the maximum of 14 (every check of it, and of unknown users, would hold a core for seconds); make the hash again with htpasswd -B -C 14 or less" \
	"... naming FILE:LINE and the fix"
printf '[http]\nbasic_auth_file = %s\n' "$TMP/users" >"$TMP/auth.conf"
td_start "$SPR" "$SCEN" -c "$TMP/auth.conf" -i 100ms || exit 1
TD_CURL=(-u prom:s3cret)
cp "$TMP/auth.conf" "$TMP/auth.conf.good"
printf '[http]\nbasic_auth_file = %s\n' "$TMP/users31" >"$TMP/auth.conf"
td_reload
like "$(grep 'users31:3' "$TD_LOG")" 'users31:3: user "slow": bcrypt cost 31 is above the maximum of 14' \
	"the same file on reload: the error, FILE:LINE"
is "$(metric topdown_config_last_reload_successful)" 0 "... the reload failed, the old file stays in force (prom:s3cret still answered)"
PORT=${TD_URL##*:}
coproc FLOOD { $B3 bcrypt-flood "$PORT" 60; }
read -r -u "${FLOOD[0]}" sent
# Both auth workers are checking passwords (cost 12) with 58 queued.
busy_auth() { [ "$(grep -l '^topdownd-auth' /proc/"$TD_PID"/task/*/comm 2>/dev/null | wc -l)" -ge 1 ] &&
	[ "$(for t in /proc/"$TD_PID"/task/*; do [ "$(cat "$t/comm")" = topdownd-auth ] && awk '{print $3}' "$t/stat"; done | grep -c R)" -ge 1 ]; }
wait_until 20 busy_auth
td_stop
exec {FLOOD[1]}>&-
wait "$FLOOD_PID" 2>/dev/null
ok $([ "$TD_STATUS" -eq 0 ] && [ "$TD_STOP_MS" -lt 5000 ]; echo $?) \
	"SIGTERM with 60 password checks queued ($sent): exit $TD_STATUS in $TD_STOP_MS ms, within the unit's TimeoutStopSec of 5 s (before: every queued check ran first)"
TD_CURL=()

# ---- 4. obs-fold: a Content-Length continued on the next line ----
td_start "$SPR" "$SCEN" -i 100ms || exit 1
PORT=${TD_URL##*:}
body=$'GET /api/v1/topdown?scope=host HTTP/1.1\r\nHost: x\r\n\r\n'
out=$(/usr/bin/python3 "$HERE/abuse.py" "$PORT" raw $'GET /-/healthy HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n '"${#body}"$'\r\n\r\n'"$body")
is "$(jq -r '.status_lines | join("|")' <<<"$out")" "HTTP/1.1 400 Bad Request" \
	"obs-fold: one 400 (before: 200, then the body answered as a second request, 200)"
is "$(jq -r .body <<<"$out")" "400 a header field is continued on a second line (obsolete line folding is not accepted: RFC 9112 section 5.2)" \
	"... saying why"
out=$(/usr/bin/python3 "$HERE/abuse.py" "$PORT" raw $'GET /-/healthy HTTP/1.1\r\nHost: x\r\nX-A: b\r\n\tc\r\n\r\n')
is "$(jq -r '.status_lines | join("|")' <<<"$out")" "HTTP/1.1 400 Bad Request" "any field folded (a tab): 400"
is "$(curl -s -o /dev/null -w '%{http_code}' -H 'X-Long:     many spaces' "$TD_URL/-/healthy")" 200 \
	"a field with a long run of spaces before its value is not taken for one"

# ---- 5. SIGUSR1 and SIGUSR2 are ignored ----
kill -USR1 "$TD_PID"
kill -USR2 "$TD_PID"
wait_intervals 2
is "$(curl -s "$TD_URL/-/healthy")" OK "SIGUSR1 and SIGUSR2: the daemon carries on (before: killed without a word)"
td_stop

# ---- 6. a unix socket in use is never taken over ----
sock=$TMP/td.sock
td_spawn env FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$SCEN" LD_PRELOAD="$FAKEPMU" \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" -l 127.0.0.1:0 -l "unix:$sock" -i 100ms || exit 1
out=$(env FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$SCEN" LD_PRELOAD="$FAKEPMU" timeout 20 \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" -l "unix:$sock" 2>&1)
st=$?
is "$st" 1 "a second daemon on the same unix socket: refused (exit 1)"
like "$out" "Failed to listen on unix:$sock: a server is listening on it; is another topdownd running\\?" "... saying why"
is "$(curl -s --unix-socket "$sock" http://localhost/-/healthy)" OK \
	"the first daemon keeps its endpoint (before: the second unlinked it)"
td_stop
# What a killed daemon leaves: a socket nobody listens on.
[ -S "$sock" ] || /usr/bin/python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' "$sock"
td_spawn env FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$SCEN" LD_PRELOAD="$FAKEPMU" \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" -l 127.0.0.1:0 -l "unix:$sock" -i 100ms
is "$(curl -s --unix-socket "$sock" http://localhost/-/healthy)" OK "a stale socket (nobody listening) is replaced"
td_stop
: >"$TMP/plain"
out=$(timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$SPR" -l "unix:$TMP/plain" 2>&1)
like "$out" "unix:$TMP/plain: it exists and is not a socket" "a file that is not a socket is left alone"

# ---- 7. SIGHUP the moment main() reads its configuration ----
# The password file of 10,000 users it names keeps main() busy (its
# duplicate check) for a while after the configuration is read: long
# enough for the signal to land before the event loop exists.
/usr/bin/python3 -W ignore - "$TMP/users10k" <<'EOF'
import crypt, sys
h = crypt.crypt("x", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** 4))
open(sys.argv[1], "w").write("".join("user%d:%s\n" % (i, h) for i in range(10000)))
EOF
printf '[collect]\ninterval = 100ms\n[http]\nbasic_auth_file = %s\n' "$TMP/users10k" >"$TMP/hup.conf"
out=$($B3 hup-at-start "$TMP/hup.conf" "$TMP/hup.log" 10 -- env FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$SCEN" \
	LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/hup.conf" --sysfs-root "$SPR" -l 127.0.0.1:0)
is "$out" "10 started, 0 died (-), 10 reloaded" \
	"SIGHUP during start-up, 10 times: a reload once running, never a death (before: exit 129)"

# ---- 8. the wall clock stepped: ?window= and the history ----
[ -s "$SHIM_DIR/libwallstep.so" ] || missing "$SHIM_DIR/libwallstep.so (make check builds it)" 5
if [ -s "$SHIM_DIR/libwallstep.so" ]; then
	printf '[collect]\ninterval = 100ms\nhistory = 90s\n' >"$TMP/hist.conf"
	echo 0 >"$TMP/wall"
	td_spawn env FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$SCEN" LD_PRELOAD="$FAKEPMU $SHIM_DIR/libwallstep.so" \
		WALLSTEP_FILE="$TMP/wall" "$TOPDOWND" -c "$TMP/hist.conf" --sysfs-root "$SPR" -l 127.0.0.1:0
	wait_intervals 15
	echo 86400 >"$TMP/wall"
	wait_intervals 5
	w1=$(curl -sf "$TD_URL/api/v1/topdown?window=1s" | jq .window.seconds)
	echo -3600 >"$TMP/wall"
	wait_intervals 5
	w2=$(curl -sf "$TD_URL/api/v1/topdown?window=1s" | jq .window.seconds)
	near "$w1" 1.1 0.2 "?window=1s after the wall clock jumped a day forward: $w1 s (before: 86,401)"
	near "$w2" 1.1 0.2 "... and an hour back: $w2 s (before: negative)"
	curl -sf "$TD_URL/api/v1/topdown/history" >"$TMP/hist.json"
	is "$(jq '[.samples[] | select(.end <= .start)] | length' "$TMP/hist.json")" 0 \
		"no history sample ends before it starts ($(jq '.samples | length' "$TMP/hist.json") samples)"
	is "$(jq '[.samples | range(1; length) as $i | select(.[$i].start < .[$i - 1].end - 0.001)] | length' "$TMP/hist.json")" 0 \
		"... and the samples follow one another"
	now=$(curl -sf "$TD_URL/api/v1/topdown" | jq .timestamp)
	last=$(jq '.samples[-1].end' "$TMP/hist.json")
	ok $(awk -v n="$now" -v l="$last" 'BEGIN { d = n - l; exit !(d >= 0 && d < 5) }'; echo $?) \
		"... shown on the wall clock now (last end $last, now $now)"
	td_stop
fi

# ---- 9. a FIFO under --sysfs-root never holds the daemon ----
for f in bus/event_source/devices/cpu/events/slots bus/event_source/devices/cpu/type \
	devices/system/cpu/possible devices/system/cpu/cpu0/topology/core_id; do
	FX=$(fixture_copy spr-2s)
	rm -f "$FX/$f"
	mkfifo "$FX/$f"
	timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$FX" --probe >"$TMP/fifo.out" 2>&1 </dev/null
	st=$?
	ok $([ $st -ne 124 ]; echo $?) "a FIFO at $f: --probe answers (exit $st: $(head -c 160 "$TMP/fifo.out" | tr '\n' ' ')) (before: hung for ever)"
done

# ---- 10. a storm of reloads: collection keeps its pace, the last file wins ----
printf '[collect]\ninterval = 100ms\n' >"$TMP/storm.conf"
td_start "$SPR" "$SCEN" -c "$TMP/storm.conf" || exit 1
wait_intervals 2
before=$(intervals)
for i in $(seq 1 40); do
	printf '[collect]\ninterval = %dms\n' $((100 + (i % 2) * 50)) >"$TMP/storm.conf"
	kill -HUP "$TD_PID"
done
printf '[collect]\ninterval = 120ms\n' >"$TMP/storm.conf"
kill -HUP "$TD_PID"
settled() { [ "$(curl -sf "$TD_URL/api/v1/topdown" | jq .interval_seconds)" = 0.12 ]; }
wait_until 20 settled
ok $? "41 SIGHUPs in a row: the last file's interval (0.12 s) is in force"
wait_intervals 5
after=$(intervals)
ok $([ $((after - before)) -ge 5 ]; echo $?) "... and collection went on through the storm ($((after - before)) intervals)"
# How many of the 41 were folded depends on the machine's pace (the
# kernel merges SIGHUPs the loop has not read yet; the daemon folds those
# that come while a reload is read into one more): at most 41 reloads.
started=$(grep -c 'Reloading ' "$TD_LOG")
ok $([ "$started" -ge 1 ] && [ "$started" -le 41 ]; echo $?) "... $started reloads for 41 signals"
# Signals that arrive together are one reload, whatever the pace: ten
# sent while the daemon is stopped (after every reload has finished).
done_reloads() { [ "$(grep -c 'Reloading ' "$TD_LOG")" = "$(grep -c 'Configuration reloaded' "$TD_LOG")" ]; }
wait_until 20 done_reloads
# (A reload folded into "one more" starts in the loop iteration that ends
# the previous one: a few intervals later none can be pending.)
wait_intervals 3
wait_until 20 done_reloads
n0=$(grep -c 'Reloading ' "$TD_LOG")
kill -STOP "$TD_PID"
for i in $(seq 1 10); do kill -HUP "$TD_PID"; done
kill -CONT "$TD_PID"
one_more() { [ "$(grep -c 'Configuration reloaded' "$TD_LOG")" -gt "$n0" ]; }
wait_until 20 one_more
wait_intervals 5
is "$(($(grep -c 'Reloading ' "$TD_LOG") - n0))" 1 "ten SIGHUPs that arrive together: one reload"
td_stop

# ---- 11. the request line's refusals come after authentication ----
td_start "$SPR" "$SCEN" -c "$TMP/auth.conf.good" -i 100ms || exit 1
is "$(curl -s -o /dev/null -w '%{http_code}' "$TD_URL/metrics%00")" 401 \
	"/metrics%00 without credentials: 401 like every path (before: 400, the parser answered first)"
is "$(curl -s -o /dev/null -w '%{http_code}' -u prom:s3cret "$TD_URL/metrics%00")" 400 "... with them: 400"
is "$(curl -s -u prom:s3cret "$TD_URL/api/v1/topdown?window=%00")" '{"error":"the path holds an encoded NUL (%00)"}' \
	"window=%00 on the API: a JSON error (before: plain text)"
is "$(curl -s -u prom:s3cret "$TD_URL/api/v1/topdown?level=1%00")" '{"error":"the path holds an encoded NUL (%00)"}' \
	"level=1%00: the same"
td_stop

done_testing
