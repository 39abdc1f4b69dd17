#!/bin/bash
# SPDX-License-Identifier: MIT
# The daemon against the real kernel and a real PMU, without the fake,
# when this machine has one (`perf stat -e instructions true` counts);
# otherwise a skip that says why (the CI machines have none: a skip for
# want of hardware, not of a package, so it stays a skip under make check).
# Where `perf stat -M TopdownL1` gives figures, --probe must succeed and the
# host's level 1, on a busy loop pinned to CPU 0, must be perf's within
# 2 percentage points, both measured in this run on the same loop.
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

L1="retiring bad_speculation frontend_bound backend_bound"
# perf_l1 FILE: "category value" lines (fractions) from perf stat -x, output.
perf_l1() {
	awk -F, '{
		for (i = 2; i <= NF; i++) if ($i ~ /tma_(retiring|bad_speculation|frontend_bound|backend_bound)$/) {
			name = $i; sub(/.*tma_/, "", name); v = $(i - 1) + 0
			if (v > 1.5) v /= 100 # perf prints percentages
			print name, v
		}
	}' "$1"
}
# Does perf give TopDown level 1 here?  (AMD, Arm and older Intel parts
# name their metrics differently or have none.)
perf stat -x, -M TopdownL1 -a sleep 0.2 >/dev/null 2>"$TMP/perf-try.txt"
perf_td=0
[ "$(perf_l1 "$TMP/perf-try.txt" | wc -l)" -ge 4 ] && perf_td=1

plan 10
probe=$("$TOPDOWND" -c /dev/null --probe 2>&1)
st=$?
diag "$(echo "$probe" | sed 's/^/  /')"
if [ $st -ne 0 ]; then
	if [ $perf_td = 1 ]; then
		ok 1 "--probe on real hardware where perf stat -M TopdownL1 works must succeed (exit $st)"
	else
		# A PMU, but no TopDown perf knows of: the reason is given.
		like "$probe" 'TopDown: +not usable: .+' "--probe on real hardware without TopDown gives the reason"
	fi
	for _ in $(seq 9); do skip "TopDown not usable on this CPU"; done
	done_testing
fi
ok 0 "--probe on real hardware: TopDown usable"
# The counter figure --probe gives is the kernel's: perfprobe (no code of
# the daemon) opens the same groups of enabled events until it refuses.
case $(uname -m) in
aarch64) pe="armv8_pmuv3_0 0x08" ;;
*) if grep -q AuthenticAMD /proc/cpuinfo; then pe="cpu 0x0076"; else pe="cpu 0x00c5"; fi ;;
esac
[ -d /sys/bus/event_source/devices/cpu_core ] && pe="cpu_core 0x00c5"
read -r pmu ev <<<"$pe"
kernel=$("${TOOL_DIR:-$ROOT/build/tests/tools}/perfprobe" groups "$pmu" "$ev" 0 | awk '$2 == "all_enabled" {print $3}')
got=$(echo "$probe" | awk -v p="$pmu" '$1 == "PMU:" {on = ($2 == p)} on && $1 == "Counters:" {
	for (i = 1; i <= NF; i++) if ($i == "per" && $(i + 1) == "CPU") {print $(i - 1); exit}}')
is "${got:-none}" "${kernel:-unknown}" "--probe's counter figure ($got) is the kernel's ($kernel, perfprobe)"
td_spawn "$TOPDOWND" -c /dev/null -l 127.0.0.1:0 -i 200ms || exit 1
wait_intervals 3
curl -s "$TD_URL/metrics" >"$TMP/m.txt"
curl -s "$TD_URL/api/v1/topdown?scope=cpu" >"$TMP/cpu.json"
is "$(sample "$TMP/m.txt" topdown_up)" 1 "topdown_up 1 on the real kernel"
ok $(jq -e '.host.slots_total > 0 and .host.running_ratio > 0' "$TMP/cpu.json" >/dev/null; echo $?) \
	"slots counted, the counters running ($(jq .host.running_ratio "$TMP/cpu.json"))"
is "$(promtool check metrics <"$TMP/m.txt" 2>&1)" "" "promtool check metrics prints nothing"
td_stop
is "$TD_STATUS" 0 "exit 0"

# ---- against perf, on one busy loop pinned to CPU 0 ----
if [ $perf_td = 0 ]; then
	for _ in 1 2 3 4; do skip "perf stat -M TopdownL1 gives no TopDown figures on this CPU"; done
	done_testing
fi
taskset -c 0 sh -c 'i=0; while :; do i=$((i + 1)); done' &
loop=$!
_TD_PIDS+=("$loop")
perf stat -x, -M TopdownL1 -C 0 sleep 3 >/dev/null 2>"$TMP/perf.txt"
printf '[collect]\ncpus = 0\ninterval = 3s\n' >"$TMP/cpu0.conf"
"$TOPDOWND" -c "$TMP/cpu0.conf" --once --json >"$TMP/once.json" 2>"$TMP/once.err"
kill "$loop"
perf_l1 "$TMP/perf.txt" >"$TMP/perf-l1"
for c in $L1; do
	want=$(awk -v c="$c" '$1 == c {print $2; exit}' "$TMP/perf-l1")
	got=$(jq ".cpus[] | select(.cpu == 0) | .level1.$c" "$TMP/once.json")
	diag "$c: topdownd $got, perf $want"
	near "$got" "${want:-none}" 0.02 "CPU 0 busy loop: $c within 2 pp of perf stat -M TopdownL1 ($got vs $want)"
done
done_testing
