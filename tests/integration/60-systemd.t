#!/bin/bash
# SPDX-License-Identifier: MIT
# systemd integration: the sd_notify sequence for start, reload (good and
# bad) and stop; the watchdog's rate and a stuck collector; socket
# activation; the units (verify, security exposure); make install.
. "$(dirname "$0")/lib.sh"

plan 65

SPR=$FIXTURES/spr-2s
scen=$ROOT/tests/scenarios/level2.json
NOTIFY=$TMP/notify.sock
start_notify() {
	/usr/bin/python3 "$ROOT/tests/integration/notify.py" "$NOTIFY" >"$TMP/notify.log" &
	_TD_PIDS+=($!)
	wait_until 10 log_has "$TMP/notify.log" '^listening$'
}
# Messages other than WATCHDOG=1, one per line, without timestamps.
messages() { grep -v $'\tWATCHDOG=1$' "$TMP/notify.log" | grep -v '^listening' | cut -f2-; }
n_messages_ge() { [ "$(messages | wc -l)" -ge "$1" ]; }
wait_message() { wait_until 20 n_messages_ge "$1"; } # wait_message N: N non-watchdog messages
n_pings_ge() { [ "$(grep -c $'\tWATCHDOG=1$' "$TMP/notify.log")" -ge "$1" ]; }

# --- 1. the notification sequence ---
conf=$TMP/td.conf
printf '[collect]\ninterval = 100ms\n' >"$conf"
start_notify
NOTIFY_SOCKET=$NOTIFY WATCHDOG_USEC=1000000 td_start "$SPR" "$scen" -c "$conf" || exit 1
wait_message 1
ok $? "READY=1 arrives"
# WATCHDOG_USEC=1 s: a ping every 0.5 s; five of them to measure the rate.
wait_until 30 n_pings_ge 5
ok $? "WATCHDOG=1 keeps coming ($(grep -c $'\tWATCHDOG=1$' "$TMP/notify.log") pings)"
printf '[collect]\ninterval = 250ms\n' >"$conf"
kill -HUP "$TD_PID"
wait_message 3
is "$(curl -sf "$TD_URL/api/v1/topdown" | jq .interval_seconds)" 0.25 "SIGHUP with a new interval: JSON interval_seconds 0.25"
printf '[collect]\ninterval = 250ms\nbogus = 1\n' >"$conf"
kill -HUP "$TD_PID"
wait_message 5
is "$(metric topdown_config_last_reload_successful)" 0 "a failed reload: topdown_config_last_reload_successful 0"
is "$(curl -s -o /dev/null -w '%{http_code}' "$TD_URL/metrics")" 200 "after a broken config the daemon still serves"
is "$(curl -sf "$TD_URL/api/v1/topdown" | jq .interval_seconds)" 0.25 "and keeps the previous configuration"
grep -q "error: $conf:3: unknown key \"bogus\" in \[collect\]" "$TD_LOG"
ok $? "the broken reload is logged as FILE:LINE: message"
wait_intervals 3
ok $? "collection continues after the failed reload"
td_stop
is "$TD_STATUS" 0 "SIGTERM: exit 0"
bound=$(stop_bound_ms)
ok $([ "$TD_STOP_MS" -lt "$bound" ]; echo $?) "SIGTERM: gone in ${TD_STOP_MS} ms (< $bound: the unit's TimeoutStopSec, or a hang's under the sanitizers)"
wait_message 6
messages >"$TMP/seq"
status='STATUS=monitoring 16 CPUs, level 2, model perf'
like "$(sed -n 1p "$TMP/seq")" "^READY=1\|$status$" "1: READY=1 with STATUS= after listening and setting up the PMU"
like "$(sed -n 2p "$TMP/seq")" '^RELOADING=1\|MONOTONIC_USEC=[0-9]+$' "2: RELOADING=1 with MONOTONIC_USEC on SIGHUP"
like "$(sed -n 3p "$TMP/seq")" "^READY=1\|$status$" "3: READY=1 after the reload"
like "$(sed -n 4p "$TMP/seq")" '^RELOADING=1\|MONOTONIC_USEC=[0-9]+$' "4: RELOADING=1 on the second SIGHUP"
like "$(sed -n 5p "$TMP/seq")" "^READY=1\|$status; last reload failed, previous configuration in force: $conf:3: unknown key \"bogus\"" \
	"5: READY=1 with the reason of the failed reload"
is "$(sed -n 6p "$TMP/seq")" "STOPPING=1" "6: STOPPING=1 on SIGTERM"
is "$(wc -l <"$TMP/seq")" 6 "nothing else"
mono=$(sed -n 2p "$TMP/seq" | sed 's/.*MONOTONIC_USEC=//')
sent=$(grep -m1 $'\tRELOADING' "$TMP/notify.log" | cut -f1)
# Both are CLOCK_MONOTONIC: the message is stamped before it is sent, so
# the stamp can only be earlier than its arrival (notify.py prints ms).
awk -v m="$mono" -v s="$sent" 'BEGIN {d = s - m / 1e6; exit !(d >= -0.001 && d < 5)}'
ok $? "MONOTONIC_USEC is CLOCK_MONOTONIC (stamped $(awk -v m="$mono" -v s="$sent" 'BEGIN {printf "%.3f", s - m / 1e6}') s before it arrived)"
grep $'\tWATCHDOG=1$' "$TMP/notify.log" | cut -f1 >"$TMP/wd"
pings=$(wc -l <"$TMP/wd")
rate=$(awk 'NR == 1 {f = $1} {l = $1} END {if (NR > 1) printf "%.3f", (l - f) / (NR - 1)}' "$TMP/wd")
diag "$pings watchdog pings, every $rate s on average"
# Timer-driven with absolute deadlines: a late ping does not shift the
# next ones, so the average over the run holds on a loaded machine.
near "$rate" 0.5 0.05 "WATCHDOG=1 every half of WATCHDOG_USEC"

# --- 1b. the time of the configuration in force, whatever the interval ---
# interval = 1m: no collection publishes during this part, so what
# /metrics says right after READY=1 is what the reload itself published.
printf '[collect]\ninterval = 1m\n' >"$conf"
: >"$TMP/notify.log"
start_notify
NOTIFY_SOCKET=$NOTIFY td_start "$SPR" "$scen" -c "$conf" || exit 1
wait_message 1
t_start=$(metric topdown_config_last_reload_success_timestamp_seconds)
is "$(metric topdown_collections_total)" 0 "interval = 1m: nothing collected yet (what follows is the reloads' own doing)"
# reload_hup: SIGHUP, wait for its READY=1; prints the success timestamp
# /metrics then gives, the time just before the signal and just after READY=1.
reload_hup() {
	local before after n=$(($(messages | wc -l) + 2))
	before=$(date +%s.%N)
	kill -HUP "$TD_PID"
	wait_message "$n"
	after=$(date +%s.%N)
	echo "$(metric topdown_config_last_reload_success_timestamp_seconds) $before $after"
}
in_bracket() { awk -v t="$1" -v b="$2" -v a="$3" 'BEGIN {exit !(t >= b - 0.001 && t <= a + 0.001)}'; }
printf '[collect]\ninterval = 1m\n[log]\nlevel = info\n' >"$conf"
read -r ts1 b1 a1 < <(reload_hup)
in_bracket "$ts1" "$b1" "$a1"
ok $? "a good reload: the success timestamp is the reload's ($t_start -> $ts1; SIGHUP at $b1, READY=1 by $a1)"
is "$(metric topdown_config_last_reload_successful)" 1 "... and topdown_config_last_reload_successful is 1"
printf '[collect]\ninterval = 1m\nbogus = 1\n' >"$conf"
read -r ts2 _ _ < <(reload_hup)
is "$ts2" "$ts1" "a bad reload: the time of the configuration in force stays that of the good reload"
is "$(metric topdown_config_last_reload_successful)" 0 "... and topdown_config_last_reload_successful is 0 at once"
printf '[collect]\ninterval = 1m\n' >"$conf"
read -r ts3 b3 a3 < <(reload_hup)
is "$(metric topdown_config_last_reload_successful)" 1 "a good reload after a bad one: topdown_config_last_reload_successful is 1 at once"
in_bracket "$ts3" "$b3" "$a3"
ok $? "... and the success timestamp is that reload's ($ts3; SIGHUP at $b3, READY=1 by $a3)"
is "$(metric topdown_collections_total)" 0 "all of it before the first interval (1m): no collection published it"
td_stop

# --- 2. a stuck collector stops the pings ---
stuck=$(write_scenario stuck <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40}]}},
 "faults": [{"cpus": "3", "op": "read", "delay_ms": 3000, "after_seconds": 1.5, "count": 1}]}
EOF
)
: >"$TMP/notify.log"
start_notify
NOTIFY_SOCKET=$NOTIFY WATCHDOG_USEC=400000 td_start "$SPR" "$stuck" -i 100ms || exit 1
# longest_gap: the longest time between two pings so far, in seconds.
longest_gap() {
	grep $'\tWATCHDOG=1$' "$TMP/notify.log" | cut -f1 |
		awk 'NR > 1 && $1 - p > g {g = $1 - p} {p = $1} END {printf "%.2f", g}'
}
gap_seen() { awk -v g="$(longest_gap)" 'BEGIN {exit !(g >= 2.5)}'; }
# A read is stuck for 3 s from 1.5 s on: the gap exists once the first
# ping after it arrived.
wait_until 60 gap_seen
td_stop
gap=$(longest_gap)
diag "longest gap between pings while a read was stuck for 3 s: $gap s"
awk -v g="$gap" 'BEGIN {exit !(g >= 2.5)}'
ok $? "no WATCHDOG=1 while the collector is stuck (gap $gap s > WatchdogSec 0.4 s: systemd would restart it)"

# --- 3. socket activation ---
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
systemd-socket-activate -l "127.0.0.1:$port" \
	-E LD_PRELOAD="$FAKEPMU" -E FAKEPMU_SYSFS="$SPR" -E FAKEPMU_SCENARIO="$scen" \
	-E ASAN_OPTIONS="$ASAN_OPTIONS" -E UBSAN_OPTIONS="$UBSAN_OPTIONS" \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" -l 127.0.0.1:1 -i 100ms >"$TMP/sa.log" 2>&1 &
TD_PID=$!
_TD_PIDS+=("$TD_PID")
# systemd-socket-activate says when it listens; the daemon starts on the
# first connection.
wait_until 10 log_has "$TMP/sa.log" "Listening on 127\.0\.0\.1:$port"
is "$(curl -s --max-time 20 "http://127.0.0.1:$port/-/healthy")" "OK" "served over the socket systemd-socket-activate passed"
grep -q 'Using 1 socket passed by systemd; \[http\] listen is ignored' "$TMP/sa.log"
ok $? "[http] listen ignored, with a log line"
ok $(grep -q 'Listening on http://127.0.0.1:1/' "$TMP/sa.log"; [ $? -ne 0 ]; echo $?) "the configured address was not used"
wait_intervals 2 "http://127.0.0.1:$port"
ok $? "collecting behind the inherited socket"
is "$(curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "topdown_up" {print $2}')" 1 "topdown_up 1 over the inherited socket"
kill -HUP "$TD_PID"
wait_until 20 log_has "$TMP/sa.log" 'Configuration reloaded'
is "$(curl -s --max-time 5 "http://127.0.0.1:$port/-/healthy")" "OK" "the inherited socket survives a reload"
td_stop
is "$TD_STATUS" 0 "socket-activated daemon exits 0"

# --- 4. the units ---
inst=$TMP/root
make -s -C "$ROOT" install DESTDIR="$inst" PREFIX=/usr SYSCONFDIR=/etc UNITDIR=/lib/systemd/system \
	>"$TMP/install.log" 2>&1
ok $? "make install DESTDIR=... succeeds"
for f in usr/sbin/topdownd usr/share/man/man8/topdownd.8 usr/share/man/man5/topdownd.conf.5 \
	lib/systemd/system/topdownd.service lib/systemd/system/topdownd.socket etc/topdownd/topdownd.conf; do
	ok $([ -f "$inst/$f" ]; echo $?) "installed /$f"
done
grep -q '^ExecStart=/usr/sbin/topdownd -c /etc/topdownd/topdownd.conf$' "$inst/lib/systemd/system/topdownd.service"
ok $? "the installed unit names the installed binary and config"
echo "# mine" >>"$inst/etc/topdownd/topdownd.conf"
make -s -C "$ROOT" install DESTDIR="$inst" PREFIX=/usr >/dev/null 2>&1
tail -1 "$inst/etc/topdownd/topdownd.conf" | grep -q '^# mine$'
ok $? "a second install keeps the existing config"
# systemd-analyze needs the binary at ExecStart= and the man pages it names.
sed "s|^ExecStart=/usr/sbin/topdownd|ExecStart=$inst/usr/sbin/topdownd|" \
	"$inst/lib/systemd/system/topdownd.service" >"$TMP/topdownd.service"
cp "$inst/lib/systemd/system/topdownd.socket" "$TMP/topdownd.socket"
out=$(cd "$TMP" && MANPATH="$inst/usr/share/man" systemd-analyze verify topdownd.service topdownd.socket 2>&1)
is "$out" "" "systemd-analyze verify: clean"
exposure=$(cd "$TMP" && systemd-analyze security --offline=yes topdownd.service 2>&1 |
	sed -n 's/.*Overall exposure level for topdownd.service: \([0-9.]*\).*/\1/p')
diag "systemd-analyze security --offline=yes: exposure $exposure"
awk -v e="$exposure" 'BEGIN {exit !(e != "" && e <= 2.0)}'
ok $? "security exposure $exposure <= 2.0"
out=$(/usr/bin/python3 "$ROOT/tests/integration/unitcheck.py" "$ROOT/systemd/topdownd.service" 2>&1)
ok $? "the hardening allows every feature: its system calls (perf_event_open, setpriority, prlimit64...) and /proc paths"
[ -n "$out" ] && echo "$out" | sed 's/^/#   /'
# Per-cgroup attribution: the unit with the drop-in the README shows allows
# bpf() and grants CAP_BPF; without the drop-in's filter line it would not.
out=$(/usr/bin/python3 "$ROOT/tests/integration/unitcheck.py" "$ROOT/systemd/topdownd.service" \
	"$ROOT/contrib/systemd/cgroups.conf" 2>&1)
ok $? "with contrib/systemd/cgroups.conf the unit allows per-cgroup attribution (bpf, CAP_BPF)"
[ -n "$out" ] && echo "$out" | sed 's/^/#   /'
grep -v '^SystemCallFilter=bpf$' "$ROOT/contrib/systemd/cgroups.conf" >"$TMP/cgroups-nobpf.conf"
out=$(/usr/bin/python3 "$ROOT/tests/integration/unitcheck.py" "$ROOT/systemd/topdownd.service" \
	"$TMP/cgroups-nobpf.conf" 2>&1)
[ $? -ne 0 ] && [[ $out == *"needs bpf, which SystemCallFilter= denies"* ]]
ok $? "and the check catches a drop-in that leaves bpf() denied"
# The check catches what it is there for: the unit before the fix.
sed -e '/^SystemCallFilter=setpriority$/d' -e 's/^# Not ProcSubset=pid.*/ProcSubset=pid/' \
	"$ROOT/systemd/topdownd.service" >"$TMP/old.service"
out=$(/usr/bin/python3 "$ROOT/tests/integration/unitcheck.py" "$TMP/old.service" 2>&1)
is "$out" "HTTP threads yielding to the collection (nice 5) needs setpriority, which SystemCallFilter= denies
the permission advice reads /proc/sys/kernel/perf_event_paranoid and process_start_time_seconds /proc/stat, which ProcSubset=pid hides" \
	"... and names the feature a stricter unit would break"
for k in Type=notify ExecReload= Restart=on-failure RestartPreventExitStatus=78 WatchdogSec=30s DynamicUser=yes \
	AmbientCapabilities=CAP_PERFMON CapabilityBoundingSet=CAP_PERFMON LimitNOFILE= \
	ConfigurationDirectory=topdownd CPUSchedulingPolicy=rr CPUSchedulingPriority=1 RestrictRealtime=yes; do
	grep -q "^$k" "$ROOT/systemd/topdownd.service"
	ok $? "unit sets $k"
done

# Started as the unit starts it (CPUSchedulingPolicy=rr, priority 1): the
# collection keeps that policy, every other thread runs at normal priority.
if [ "$(id -u)" -eq 0 ] && command -v chrt >/dev/null; then
	printf '#!/bin/sh\nexec chrt -r 1 "%s" "$@"\n' "$TOPDOWND" >"$TMP/rr"
	chmod +x "$TMP/rr"
	TOPDOWND=$TMP/rr td_start "$SPR" "$scen" -i 100ms || exit 1
	# Each thread leaves RR itself as it starts: wait until the daemon's
	# threads are there and settled (or 20 s), then look.
	threads_settled() {
		ps -L -o tid=,cls=,rtprio=,comm= -p "$TD_PID" >"$TMP/threads"
		[ "$(awk -v pid="$TD_PID" '$1 != pid && $2 == "TS"' "$TMP/threads" | wc -l)" -ge 3 ] &&
			[ -z "$(awk -v pid="$TD_PID" '$1 != pid && $2 != "TS"' "$TMP/threads")" ]
	}
	wait_intervals 1
	wait_until 20 threads_settled
	is "$(awk -v pid="$TD_PID" '$1 == pid {print $2, $3}' "$TMP/threads")" "RR 1" \
		"under CPUSchedulingPolicy=rr: the collection keeps RR priority 1"
	is "$(awk -v pid="$TD_PID" '$1 != pid && $2 != "TS" {print $4, $2}' "$TMP/threads")$(awk -v pid="$TD_PID" '$1 != pid' "$TMP/threads" | wc -l | awk '$1 < 3 {print "fewer than 3 other threads"}')" "" \
		"... and its $(awk -v pid="$TD_PID" '$1 != pid' "$TMP/threads" | wc -l) other threads ($(awk -v pid="$TD_PID" '$1 != pid {print $4}' "$TMP/threads" | sort -u | tr '\n' ' ')) run at normal priority (TS)"
	td_stop
else
	missing "needs root and chrt(1) to start the daemon real-time" 2
fi

done_testing
