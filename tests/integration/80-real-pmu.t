#!/bin/bash
# SPDX-License-Identifier: MIT
# The daemon against the real kernel, without the fake PMU, when this
# machine has a hardware PMU (`perf stat -e instructions true` counts);
# otherwise a skip that says why.
. "$(dirname "$0")/lib.sh"

why=
if command -v perf >/dev/null; then
	out=$(perf stat -e instructions true 2>&1)
	if [ $? -ne 0 ] || [[ "$out" == *"not supported"* ]] || [[ "$out" == *"not counted"* ]]; then
		why="no hardware PMU here: perf stat -e instructions true says it is not supported"
	fi
elif [ ! -d /sys/bus/event_source/devices/cpu ] && [ ! -d /sys/bus/event_source/devices/cpu_core ]; then
	why="no hardware PMU here: perf is not installed and the kernel registered no core PMU"
fi
if [ -n "$why" ]; then
	echo "1..0 # SKIP $why"
	exit 0
fi

plan 7
probe=$("$TOPDOWND" -c /dev/null --probe 2>&1)
st=$?
diag "$(echo "$probe" | sed 's/^/  /')"
if [ $st -ne 0 ]; then
	# A PMU, but no TopDown (AMD, pre-Ice Lake, Atom): the reason is given.
	like "$probe" 'TopDown: +not usable: .+' "--probe on real hardware without TopDown gives the reason"
	for _ in 1 2 3 4 5 6; do skip "TopDown not usable on this CPU"; done
	done_testing
fi
ok 0 "--probe on real hardware: TopDown usable"
LOG=$TMP/real.log
"$TOPDOWND" -c /dev/null -l 127.0.0.1:0 -i 200ms >"$LOG" 2>&1 &
TD_PID=$!
_TD_PIDS+=("$TD_PID")
for _ in $(seq 1 100); do
	TD_URL=$(sed -n 's|.*Listening on \(http://127\.0\.0\.1:[0-9]*\)/.*|\1|p' "$LOG" | head -1)
	[ -n "$TD_URL" ] && break
	sleep 0.05
done
wait_intervals 3
curl -s "$TD_URL/metrics" >"$TMP/m.txt"
curl -s "$TD_URL/api/v1/topdown?scope=cpu" >"$TMP/cpu.json"
is "$(sample "$TMP/m.txt" topdown_up)" 1 "topdown_up 1 on the real kernel"
ok $(jq -e '.host.slots > 0' "$TMP/cpu.json" >/dev/null; echo $?) "slots counted"
near "$(jq '.host.level1 | add' "$TMP/cpu.json")" 1 0.000001 "host level 1 sums to 1"
ok $(jq -e '[.host.level1[] | select(. < 0 or . > 1)] | length == 0' "$TMP/cpu.json" >/dev/null; echo $?) \
	"every ratio in [0, 1]"
is "$(promtool check metrics <"$TMP/m.txt" 2>&1)" "" "promtool check metrics prints nothing"
td_stop
is "$TD_STATUS" 0 "exit 0"
done_testing
