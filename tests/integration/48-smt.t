#!/bin/bash
# SPDX-License-Identifier: MIT
# Which threads of each core ran when (issue 43): McCalpin's four-way split
# of each SMT core's time (neither thread, the first alone, the second
# alone, both), per core, package and host.
#   1. Against the truth and perf: the fake PMU counts each thread's
#      reference clocks from a scenario stating every core's thread
#      activity over time (phases across interval boundaries, cores at
#      other activities); topdownd's split equals the scenario's, and its
#      both / (first + second + both) equals perf 6.1's own
#      SMT_2T_Utilization (perf stat -M, --per-core, --per-socket, the
#      system) on the same fake clock (tests/oracle/smtcheck.py).  Sapphire
#      Rapids by default; Skylake-SP and Ice Lake server, whose level-1/2
#      events rotate, with [collect] smt = on (the split's group joins the
#      rotation, the TopDown groups keep every CPU); Ice Lake client; Emerald
#      and Granite Rapids against the truth (perf 6.1 knows neither); Alder
#      Lake's P-cores.
#   2. Where there is nothing to split, no series and the reason: SMT off
#      (clx-2s), the E-cores of a hybrid part, a sibling offline, smt = off;
#      on the rotating families by default, how to ask and what it costs.
#   3. Another user holding the counters of one CPU: that core is not split
#      (the group did not run whole, tried again later), the others are,
#      and TopDown keeps the CPU.
. "$(dirname "$0")/lib.sh"

plan 26

SCEN=$ROOT/tests/scenarios
T61=$ROOT/reference/perf-tables-6.1
SC=(/usr/bin/python3 "$ROOT/tests/oracle/smtcheck.py" --topdownd "$TOPDOWND" --fakepmu "$FAKEPMU"
    --sysns "$ROOT/tests/oracle/sysns" --tables "$T61" --intervals 8)
printf '[collect]\nsmt = on\n' >"$TMP/on.conf"
printf '[collect]\nsmt = off\n' >"$TMP/off.conf"
printf '[metrics]\ngranularity = core\n' >"$TMP/core.conf"

smt_check() { # DESCRIPTION ARGS...: smtcheck's verdict and its figures
	local what=$1 out rc
	shift
	out=$("${SC[@]}" "$@" 2>&1)
	rc=$?
	ok $rc "$what$( [ $rc = 0 ] || printf '\n%s' "$(tail -8 <<<"$out")")"
	diag "$(tr '\n' ';' <<<"$out")"
}

# ---- 1. the truth and perf ----
smt_check "spr-2s: every core's, package's and the host's split equal to the scenario's (within 0.5 pp, interval by interval and since start), and to perf 6.1's SMT_2T_Utilization per core, socket and system" \
	--fixture "$FIXTURES/spr-2s" --scenario "$SCEN/smt-spr.json" --cpuid GenuineIntel-6-8F-4 --metric SMT_2T_Utilization
# The same thread activity beside each family's own TopDown scenario.
jq --slurpfile s "$SCEN/smt-spr.json" '. + {smt: $s[0].smt, tsc_hz: $s[0].tsc_hz}' "$SCEN/parity-skx.json" >"$TMP/skx.json"
smt_check "skx-2s, [collect] smt = on (REF_XCLK_ANY, in the 4 level-1/2 groups' rotation): the scenario's split and perf 6.1's SMT_2T_Utilization" \
	--fixture "$FIXTURES/skx-2s" --scenario "$TMP/skx.json" --config "$TMP/on.conf" --cpuid GenuineIntel-6-55-4 \
	--metric SMT_2T_Utilization
jq --slurpfile s "$SCEN/smt-spr.json" '. + {smt: {default: $s[0].smt.default}, tsc_hz: $s[0].tsc_hz}' \
	"$SCEN/parity-icl.json" >"$TMP/icx.json"
smt_check "icx-1s, [collect] smt = on (in the 3 level-1/2 groups' rotation): the scenario's split and perf 6.1's SMT_2T_Utilization" \
	--fixture "$FIXTURES/icx-1s" --scenario "$TMP/icx.json" --config "$TMP/on.conf" --cpuid GenuineIntel-6-6A-4 \
	--metric SMT_2T_Utilization
jq --slurpfile s "$SCEN/smt-spr.json" '. + {smt: {default: $s[0].smt.default}, tsc_hz: $s[0].tsc_hz}' \
	"$SCEN/parity-icl.json" >"$TMP/icl.json"
smt_check "icl-client, [collect] smt = on: the scenario's split and perf 6.1's SMT_2T_Utilization" \
	--fixture "$FIXTURES/icl-client" --scenario "$TMP/icl.json" --config "$TMP/on.conf" --cpuid GenuineIntel-6-7E-5 \
	--metric SMT_2T_Utilization
# Emerald and Granite Rapids (perf 6.1 does not know them): the truth.
for fx in emr-2s gnr-2s; do
	smt_check "$fx: every core's, package's and the host's split equal to the scenario's" \
		--fixture "$FIXTURES/$fx" --scenario "$SCEN/smt-spr.json" --tables "$ROOT/reference/perf-tables"
done
# Alder Lake: the P-cores (0-7, cpu_core) have SMT, the E-cores none.
jq --slurpfile s "$SCEN/smt-spr.json" '. + {smt: {"0-7": $s[0].smt.default}, tsc_hz: $s[0].tsc_hz}' \
	"$SCEN/parity-hybrid.json" >"$TMP/adl.json"
smt_check "adl-hybrid: the P-cores' split equal to the scenario's" \
	--fixture "$FIXTURES/adl-hybrid" --scenario "$TMP/adl.json"

watch() { # FIXTURE SCENARIO CONFIG COUNT: the JSON documents
	FAKEPMU_SYSFS=$1 FAKEPMU_SCENARIO=$2 FAKEPMU_TABLES=$T61 LD_PRELOAD=$FAKEPMU FAKEPMU_CLOCK_STEP=1 \
		"$TOPDOWND" -c "$3" --sysfs-root "$1" --watch --json --count "$4" -i 100ms 2>"$TMP/watch.err" ||
		sed "s/^/# /" "$TMP/watch.err"
}

# Skylake-SP keeps TopDown on every CPU with the split in its rotation.
watch "$FIXTURES/skx-2s" "$TMP/skx.json" "$TMP/on.conf" 6 >"$TMP/skx-on.json"
is "$(tail -1 "$TMP/skx-on.json" | jq -c '[.cpus_by_state.monitored, .host.cpus_measured, .host.smt.cores,
	(.host.running_seconds_total / .host.enabled_seconds_total * 1000 | round / 1000)]')" "[16,16,8,0.2]" \
	"skx-2s, smt = on: 16 CPUs monitored and measured, 8 cores split, the level-1/2 groups running 1/5 of the time (4 groups and the split's)"

# ---- 2. nothing to split ----
out=$(watch "$FIXTURES/spr-2s" "$SCEN/smt-spr.json" "$TMP/off.conf" 3 | tail -1)
is "$(jq -c '[.smt.counted, .smt.reason, .host.smt]' <<<"$out")" '[false,"cpu: off ([collect] smt = off)",null]' \
	"spr-2s, smt = off: no split, and why"
probe() { # FIXTURE CONFIG: --probe's "SMT split:" lines, joined
	FAKEPMU_SYSFS=$1 FAKEPMU_SCENARIO=$SCEN/constant.json LD_PRELOAD=$FAKEPMU \
		"$TOPDOWND" -c "$2" --sysfs-root "$1" --probe 2>&1 |
		awk '/^SMT split:/ { f = 1; sub(/^SMT split: */, ""); printf "%s", $0; next }
			f && /^ / { sub(/^ */, " "); printf "%s", $0; next } { f = 0 }'
}
p=$(probe "$FIXTURES/skx-2s" /dev/null)
is "$p" "Skylake-SP / Cascade Lake-SP's level-1/2 events rotate in 4 groups here: the split would take running time from them (each would run 1/5 of the time instead of 1/4); set [collect] smt = on to count it anyway" \
	"skx-2s --probe: not by default, how to ask and what it costs"
out=$(watch "$FIXTURES/skx-2s" "$TMP/skx.json" /dev/null 3 | tail -1)
is "$(jq -c '[.smt.counted, .host.smt]' <<<"$out")" '[false,null]' "skx-2s by default: no split counted"
p=$(probe "$FIXTURES/spr-2s" /dev/null)
is "$p" "each core's time four ways (neither thread, first only, second only, both) from CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE, CPU_CLK_UNHALTED.REF_DISTRIBUTED, CPU_CLK_UNHALTED.REF_TSC (fixed counter 2) and msr/tsc, a group on each CPU beside the level-1/2 group" \
	"spr-2s --probe: the split's events"
p=$(probe "$FIXTURES/clx-2s" /dev/null)
is "$p" "each core runs one thread (SMT off or absent): nothing to split" "clx-2s (SMT off) --probe: nothing to split"
out=$(watch "$FIXTURES/clx-2s" "$SCEN/parity-skx.json" /dev/null 3 | tail -1)
is "$(jq -c '[.smt.counted, .smt.reason, .host.smt]' <<<"$out")" \
	'[false,"cpu: each core runs one thread (SMT off or absent): nothing to split",null]' "clx-2s: no split, no zeros"
out=$(watch "$FIXTURES/adl-hybrid" "$TMP/adl.json" "$TMP/core.conf" 3 | tail -1)
is "$(jq -c '[.smt.counted, .smt.reason, ([.cores[] | select(.smt) | .cpus | length] | unique), ([.cores[] | select(.smt)] | length)]' <<<"$out")" \
	"[true,\"cpu_atom: Alder Lake / Raptor Lake E-core (Gracemont)'s cores run one thread each: nothing to split\",[2],4]" \
	"adl-hybrid: the 4 P-cores split, the E-cores' reason"
# A sibling offline (CPU 9: core 1 of package 0 is CPUs 1 and 9).
cp -r "$FIXTURES/spr-2s" "$TMP/fx"
"$FIXTURES/set-online" "$TMP/fx" 9 0
watch "$TMP/fx" "$SCEN/smt-spr.json" "$TMP/core.conf" 4 >"$TMP/off9.json"
last=$(tail -1 "$TMP/off9.json")
is "$(jq -c '[.host.smt.cores, .smt.reason, (.cores[] | select(.package == 0 and .core == 1) | .smt)]' <<<"$last")" \
	'[7,"1 core has one thread online or selected: nothing to split there",null]' \
	"spr-2s with CPU 9 offline: its core has no split (not zeros) and the reason says why, the 7 others are split"
td_spawn env FAKEPMU_SYSFS="$TMP/fx" FAKEPMU_SCENARIO="$SCEN/smt-spr.json" LD_PRELOAD="$FAKEPMU" \
	"$TOPDOWND" -c "$TMP/core.conf" --sysfs-root "$TMP/fx" -l 127.0.0.1:0 -i 100ms
split7() { curl -sf "$TD_URL/api/v1/topdown" | jq -e '.host.smt.cores == 7' >/dev/null; }
wait_until 60 split7
curl -sf "$TD_URL/metrics" >"$TMP/metrics.txt"
td_stop
is "$(grep -c '^topdown_smt_seconds_total{' "$TMP/metrics.txt")" 28 \
	"/metrics at core granularity: 4 states of the 7 split cores"
is "$(grep -c '^topdown_smt_seconds_total{core="1",package="0",' "$TMP/metrics.txt")" 0 \
	"... and no series for the core whose sibling is offline"
ok $(grep -q '^topdown_smt_seconds_total{core="0",package="1",state="both"} [0-9.e+-]*$' "$TMP/metrics.txt"; echo $?) \
	"... a core's series carry its core and package and the state"

# A hypervisor filtering the reference clocks (they open and count 0)
# while the threads run (TopDown counts their slots): no split, and why,
# rather than cores that never ran.
jq '. + {filtered: ["CPU_CLK_UNHALTED.REF_TSC", "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", "CPU_CLK_UNHALTED.REF_DISTRIBUTED"]}' \
	"$SCEN/smt-spr.json" >"$TMP/filtered.json"
out=$(watch "$FIXTURES/spr-2s" "$TMP/filtered.json" "$TMP/core.conf" 3 | tail -1)
is "$(jq -c '[.host.smt, ([.cores[] | select(.smt)] | length), .smt.reason]' <<<"$out")" \
	'[null,0,"0 of 8 cores with two threads split in the last interval; 8 whose reference clocks count nothing while its threads run (a hypervisor filtering them)"]' \
	"spr-2s, the reference clocks filtered: no split (no zeros), and why"

# ---- 3. another user holds one CPU's counters ----
# CPU 2's general-purpose counters all pinned by someone else from the
# start: the split's group (two of them) cannot run there; Sapphire
# Rapids' TopDown group (fixed counters and PERF_METRICS) still does.
jq '.cpus["2"] = (.cpus.default + {holders: [{gp: 8, pinned: true, from: 0}]})' "$SCEN/smt-spr.json" >"$TMP/held.json"
watch "$FIXTURES/spr-2s" "$TMP/held.json" "$TMP/core.conf" 5 >"$TMP/held.out"
last=$(tail -1 "$TMP/held.out")
is "$(jq -c '[.host.smt.cores, (.cores[] | select(.package == 0 and .core == 2) | .smt), .cpus_by_state.monitored]' <<<"$last")" \
	'[7,null,16]' "spr-2s, CPU 2's counters held: its core not split, the 7 others are, all 16 CPUs keep TopDown"
is "$(jq -r .smt.reason <<<"$last")" \
	"7 of 8 cores with two threads split in the last interval; 1 with a thread whose counters another user holds" \
	"... and the reason says so"

# ---- the daemon's events are perf's ----
# The split's group as perf 6.1 opens the same events (config traced by
# the fake): REF_TSC, ONE_THREAD_ACTIVE, REF_DISTRIBUTED, msr/tsc.
FAKEPMU_SYSFS=$FIXTURES/spr-2s FAKEPMU_SCENARIO=$SCEN/smt-spr.json FAKEPMU_TABLES=$T61 FAKEPMU_TRACE="$TMP/perf.trace" \
	PERF_CPUID=GenuineIntel-6-8F-4 LD_PRELOAD="$FAKEPMU" "$ROOT/tests/oracle/sysns" "$FIXTURES/spr-2s" \
	perf stat -C 0 -e '{CPU_CLK_UNHALTED.REF_TSC,CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE,CPU_CLK_UNHALTED.REF_DISTRIBUTED,msr/tsc/}' \
	-I 100 --interval-count 1 >/dev/null 2>"$TMP/perf.err"
FAKEPMU_SYSFS=$FIXTURES/spr-2s FAKEPMU_SCENARIO=$SCEN/smt-spr.json FAKEPMU_TRACE="$TMP/td.trace" LD_PRELOAD="$FAKEPMU" \
	FAKEPMU_CLOCK_STEP=1 "$TOPDOWND" -c /dev/null --sysfs-root "$FIXTURES/spr-2s" --watch --count 2 -i 100ms >/dev/null 2>&1
# Each open's type, config, disabled and exclude flags, in order: perf's
# four, and the last four of topdownd's on CPU 0 (its split's group).
attrs() { grep '^open .*cpu=0 ' "$1" | sed -E 's/^open fd=[0-9]+ cpu=0 group_fd=(-1|[0-9]+) /\1 /; s/^[0-9]+ /member /; s/^-1 /leader /' | tail -4; }
want=$(attrs "$TMP/perf.trace")
is "$(attrs "$TMP/td.trace")" "$want" \
	"spr-2s: the split's group on CPU 0 is opened as perf 6.1 opens REF_TSC, ONE_THREAD_ACTIVE, REF_DISTRIBUTED and msr/tsc/ (type, config, leader disabled and enabled whole, exclude flags)"
msr=$(cat "$FIXTURES/spr-2s/bus/event_source/devices/msr/type")
ok $(grep -q "^member type=$msr config=0 config1=0 disabled=0 exclude_user=0 exclude_kernel=0 exclude_hv=0 exclude_guest=0 exclude_host=0 " <<<"$want"; echo $?) \
	"... msr/tsc with no exclude flag (the kernel's msr PMU refuses any: perf clears them)"

# ---- cost ----
out=$(watch "$FIXTURES/spr-2s" "$SCEN/smt-spr.json" "$TMP/core.conf" 3 | tail -1)
is "$(jq -c '[.smt.counted, .smt.events]' <<<"$out")" \
	'[true,"CPU_CLK_UNHALTED.REF_TSC, CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE, CPU_CLK_UNHALTED.REF_DISTRIBUTED"]' \
	"spr-2s: the split's events in the document"
is "$(jq -c '[.host.running_seconds_total == .host.enabled_seconds_total]' <<<"$out")" '[true]' \
	"spr-2s: the split beside the level-1/2 group costs it no running time"

done_testing
