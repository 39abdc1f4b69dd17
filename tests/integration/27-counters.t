#!/bin/bash
# SPDX-License-Identifier: MIT
# Counters as the kernel schedules them, on every fixture of the kernel
# audit, under the kernel-faithful fake PMU (it validates groups as x86's
# collect_events and Arm's validate_event do, and a pinned holder of
# counters is invisible to validation, as the NMI watchdog is):
#   1. --probe's counter figure is what the kernel gives: perfprobe (which
#      shares nothing with the daemon) opens the same groups of enabled
#      events until the kernel refuses;
#   2. the default configuration monitors every CPU with the counters
#      running;
#   3. at level 1, with a watchdog the daemon does not know of holding a
#      counter (fixed counter 1 on Intel, the cycle counter on Arm, one
#      general-purpose counter on AMD), every CPU is monitored, running,
#      and its figures are perf's for the same workload without the
#      holder (tests/oracle/parity.py --topdownd-scenario), within 0.5 pp.
# The fixtures: icx-1s, icl-client, skx-1s, skx-2s with SMT on and off,
# clx-2s, genoa-2s, turin-1s, adl-hybrid (both PMUs), neoverse-v1-16,
# neoverse-n2-8, neoverse-v2-64 and a 5-counter Neoverse V2 guest.
. "$(dirname "$0")/lib.sh"

command -v perf >/dev/null || missing_all "perf is not installed (make deps installs linux-perf)"
[ "$(id -u)" -eq 0 ] || missing_all "needs root for perf's private mount namespace (CI runs as root)"

SCEN=$ROOT/tests/scenarios
PROBE=${TOOL_DIR:-$ROOT/build/tests/tools}/perfprobe
PERF_TABLES=${PERF_TABLES:-$ROOT/reference/perf-tables}
F61="--tables-fallback $ROOT/reference/perf-tables-6.1"

# A fixture whose SMT is off: skx-2s with smt/active 0 (the kernel then
# gives a thread the core's 8 counters, CPUID.0AH).
SKXNOSMT=$TMP/skx-2s-nosmt
cp -a "$FIXTURES/skx-2s" "$SKXNOSMT"
echo 0 >"$SKXNOSMT/devices/system/cpu/smt/active"
# A Neoverse V2 guest whose PMU has 5 event counters (PMCR_EL0.N).
jq '.gp_counters = 5' "$SCEN/parity-neoverse-v2.json" >"$TMP/parity-neoverse-v2-5.json"

# name|fixture dir|scenario|pmu event cpu for perfprobe (one or two)|parity options
A="--ungrouped --weight-event CPU_CYCLES --pmu armv8_pmuv3_0"
Z="--ungrouped --weight-event ls_not_halted_cyc"
cases=(
	"icx-1s|$FIXTURES/icx-1s|parity-icl.json|cpu 0x00c5 0|--cpuid GenuineIntel-6-6A-0 --icl --weight-event TOPDOWN.SLOTS $F61 --metric-groups TopdownL1"
	"icl-client|$FIXTURES/icl-client|parity-icl.json|cpu 0x00c5 0|--cpuid GenuineIntel-6-7E-5 --icl --weight-event TOPDOWN.SLOTS $F61 --metric-groups TopdownL1"
	"skx-1s|$FIXTURES/skx-1s|parity-skx.json|cpu 0x00c5 0|--cpuid GenuineIntel-6-55-4 --weight-event CPU_CLK_UNHALTED.THREAD_ANY $F61 --metric-groups TopdownL1"
	"skx-2s SMT on|$FIXTURES/skx-2s|parity-skx.json|cpu 0x00c5 0|--cpuid GenuineIntel-6-55-4 --weight-event CPU_CLK_UNHALTED.THREAD_ANY $F61 --metric-groups TopdownL1"
	"skx-2s SMT off|$SKXNOSMT|parity-skx.json|cpu 0x00c5 0|--cpuid GenuineIntel-6-55-4 --weight-event CPU_CLK_UNHALTED.THREAD $F61 --metric-groups TopdownL1"
	"clx-2s|$FIXTURES/clx-2s|parity-skx.json|cpu 0x00c5 0|--cpuid GenuineIntel-6-55-7 --weight-event CPU_CLK_UNHALTED.THREAD $F61 --metric-groups TopdownL1"
	"genoa-2s|$FIXTURES/genoa-2s|parity-zen4.json|cpu 0x0076 0|--cpuid AuthenticAMD-25-11-1 --events-from x86/amdzen4/pipeline.json $Z"
	"turin-1s|$FIXTURES/turin-1s|parity-zen5.json|cpu 0x0076 0|--cpuid AuthenticAMD-26-2-0 --events-from x86/amdzen5/pipeline.json $Z"
	"adl-hybrid P-cores|$FIXTURES/adl-hybrid|parity-hybrid.json|cpu_core 0x00c5 0|--cpuid GenuineIntel-6-97-0 --events-from perf --table-dir x86/alderlake --unit cpu_core --pmu cpu_core --cpus 0-7 $F61"
	"adl-hybrid E-cores|$FIXTURES/adl-hybrid|parity-hybrid.json|cpu_atom 0x00c5 8|--cpuid GenuineIntel-6-97-0 --ungrouped --ignore resource_bound --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/alderlake/adl-metrics.json --table-dir x86/alderlake --unit cpu_atom --pmu cpu_atom --cpus 8-15 $F61"
	"neoverse-v1-16|$FIXTURES/neoverse-v1-16|parity-neoverse-v1.json|armv8_pmuv3_0 0x08 0|--cpuid 0x00000000411fd401 --events-from arm64/arm/neoverse-v1/metrics.json $A"
	"neoverse-n2-8|$FIXTURES/neoverse-n2-8|parity-neoverse-n2.json|armv8_pmuv3_0 0x08 0|--cpuid 0x00000000410fd490 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A"
	"neoverse-v2-64|$FIXTURES/neoverse-v2-64|parity-neoverse-v2.json|armv8_pmuv3_0 0x08 0|--cpuid 0x00000000410fd4f1 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A"
	"neoverse-v2 guest, 5 counters|$FIXTURES/neoverse-v2-64|$TMP/parity-neoverse-v2-5.json|armv8_pmuv3_0 0x08 0|--cpuid 0x00000000410fd4f1 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A"
)
plan $((${#cases[@]} * 5))

scen_path() { case $1 in /*) echo "$1" ;; *) echo "$SCEN/$1" ;; esac; }
# What a watchdog holds on this fixture: AMD has no fixed counters.
held_of() {
	case $1 in genoa* | turin*) echo '{"gp": 1}' ;; *) echo '{"fixed": [1]}' ;; esac
}
fake() { # fake FIXTURE SCENARIO COMMAND...
	local fx=$1 sc=$2
	shift 2
	env FAKEPMU_SYSFS="$fx" FAKEPMU_SCENARIO="$sc" LD_PRELOAD="$FAKEPMU" \
		FAKEPMU_TABLES_FALLBACK="$ROOT/reference/perf-tables-6.1" "$@"
}

P=(/usr/bin/python3 "$ROOT/tests/oracle/parity.py" --topdownd "$TOPDOWND" --fakepmu "$FAKEPMU"
	--sysns "$ROOT/tests/oracle/sysns" --tables "$PERF_TABLES" --intervals 3
	# topdownd multiplexes around a holder perf does not meet: each tool's
	# estimate of a rotating group, not the same counts, hence 0.5 pp.
	--tol 0.005)

# The parity runs (each a few processes that mostly sleep), three at a time.
run_parity() { # INDEX
	local name fx sc probe opts held
	IFS='|' read -r name fx sc probe opts <<<"${cases[$1]}"
	sc=$(scen_path "$sc")
	held=$(held_of "$name")
	jq --argjson h "$held" '.cpus.default.held = $h' "$sc" >"$TMP/held-$1.json"
	# shellcheck disable=SC2086
	timeout 240 "${P[@]}" --fixture "$fx" --scenario "$sc" --topdownd-scenario "$TMP/held-$1.json" \
		--topdownd-level 1 $opts >"$TMP/parity-$1.out" 2>&1
	echo $? >"$TMP/parity-$1.rc"
}
for i in "${!cases[@]}"; do
	run_parity "$i" &
	while [ "$(jobs -rp | wc -l)" -ge 3 ]; do sleep 0.2; done
done
wait

for i in "${!cases[@]}"; do
	IFS='|' read -r name fx sc probe opts <<<"${cases[$i]}"
	sc=$(scen_path "$sc")
	read -r pmu event cpu <<<"$probe"
	# 1. --probe's figure against the kernel's answer.
	kernel=$(fake "$fx" "$sc" env SYSFS_ROOT="$fx" "$PROBE" groups "$pmu" "$event" "$cpu" |
		awk '$2 == "all_enabled" {print $3}')
	fake "$fx" "$sc" "$TOPDOWND" -c /dev/null --sysfs-root "$fx" --probe >"$TMP/probe-$i" 2>&1
	# The Counters line of that PMU's section of --probe.
	got=$(awk -v p="$pmu" '$1 == "PMU:" {on = ($2 == p)} on && $1 == "Counters:" {
		for (i = 1; i <= NF; i++) if ($i == "per" && $(i + 1) == "CPU") {print $(i - 1); exit}}' "$TMP/probe-$i")
	is "${got:-none}" "${kernel:-unknown}" "$name: --probe says ${got:-nothing} counters per CPU, the kernel (perfprobe groups) takes ${kernel:-nothing}"
	# 2. Default configuration: every CPU monitored, running.
	fake "$fx" "$sc" "$TOPDOWND" -c /dev/null --sysfs-root "$fx" --once --json -i 300ms >"$TMP/once-$i.json" 2>"$TMP/once-$i.err"
	sel=${opts##*--cpus }
	[ "$sel" = "$opts" ] && sel= || sel=${sel%% *}
	[ -s "$TMP/once-$i.json" ] && jq -e --arg sel "$sel" '
		def want: if $sel == "" then true else (.cpu as $c | ($sel | split("-") | map(tonumber)) as $r | $c >= $r[0] and $c <= $r[1]) end;
		[.cpus[] | select(want)] | length > 0 and all(.state == "monitored" and .running_ratio > 0)' \
		"$TMP/once-$i.json" >/dev/null
	ok $? "$name, default configuration: every CPU monitored and running ($(jq -c '[.cpus_by_state.monitored, (.cpus | map(.running_ratio) | min)]' "$TMP/once-$i.json") monitored, least running)"
	# 3. Level 1 with a watchdog holding a counter the daemon is not told of.
	printf '[collect]\nlevel = 1\n' >"$TMP/l1.conf"
	fake "$fx" "$TMP/held-$i.json" "$TOPDOWND" -c "$TMP/l1.conf" --sysfs-root "$fx" --once --json -i 300ms \
		>"$TMP/held-once-$i.json" 2>"$TMP/held-once-$i.err"
	[ -s "$TMP/held-once-$i.json" ] && jq -e --arg sel "$sel" '
		def want: if $sel == "" then true else (.cpu as $c | ($sel | split("-") | map(tonumber)) as $r | $c >= $r[0] and $c <= $r[1]) end;
		[.cpus[] | select(want)] | length > 0 and all(.state == "monitored" and .running_ratio > 0 and (.level1 != null or .slots == 0))' \
		"$TMP/held-once-$i.json" >/dev/null
	ok $? "$name, level 1 with a watchdog holding $(held_of "$name"): every CPU monitored, running, with figures unless halted ($(jq -c '[.cpus_by_state.monitored, (.cpus | map(.running_ratio) | min)]' "$TMP/held-once-$i.json"))"
	like "$(cat "$TMP/held-once-$i.err")" '^$|CPUs? [0-9,-]+: another user holds (fixed counter 1|the cycle counter|[0-9]+ of [0-9]+ general-purpose)' \
		"$name: the log names what another user holds it learned by probing the counters (or nothing it needs is held)"
	diag "$(grep -o 'warning: .*' "$TMP/held-once-$i.err" | head -2)"
	ok "$(cat "$TMP/parity-$i.rc")" "$name, level 1 with the watchdog: perf's figures for the same workload within 0.5 pp"
	diag "$name: $(awk -v p="$pmu" '$1 == "PMU:" {on = ($2 == p)} on && $1 == "Group" {n++} END {print n ? n : 1}' "$TMP/probe-$i") groups planned by default; level 1 with the watchdog against perf: $(grep 'largest difference' "$TMP/parity-$i.out" | awk '{printf "%s %s pp; ", $1, $(NF-1)}')"
	[ "$(cat "$TMP/parity-$i.rc")" = 0 ] ||
		diag "$(grep -m6 -e MISMATCH -e 'largest difference' -e Error "$TMP/parity-$i.out")"
	sed 's/^/#   /' "$TMP/parity-$i.out"
done
done_testing
