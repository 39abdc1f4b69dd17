#!/bin/bash
# SPDX-License-Identifier: MIT
# The PMU is shared (issue 41).  Under the fake PMU, which schedules other
# users' events as the kernel does (pinned ones first, flexible ones in
# its rotation: tests/fakepmu/README.md), on every family:
#   1. pinned holders of a different number of counters per CPU arrive
#      and leave while topdownd runs, at rotations of 4, 30, 100 and
#      125 ms (the PMU's perf_event_mux_interval_ms): no CPU is ever given
#      up, each steps down and back up within a bound in intervals (the
#      conclusion waits for several rotations: collect/share.c), has
#      figures in every other interval, the same figures held or not,
#      and the host says over how many CPUs it is;
#   2. at 4 ms, the same CPUs' figures are perf's (perf does not meet the
#      holders) in every interval in which topdownd has them;
#   3. a flexible user that wants every general-purpose counter (perf
#      stat -e with more events than fit, a profiler): with pmu_sharing =
#      yield topdownd gives them back (the fake traces the other user's
#      running time: 100 % after), keeping level 1 and 2 from the fixed
#      counters on Sapphire Rapids, and takes them again once it is gone;
#      with share it keeps them, and on Skylake-SP, which has no fixed
#      grouping, it yields them whole;
#   4. isolated CPUs (isolcpus, nohz_full) are not read unless [collect]
#      cpus lists them.
# Runs are on the fake's read-paced clock: interval k counts [k, k + 1]
# steps of the scenario, whatever the machine's load.  In part 1 a step is
# 2 s of the scenario while topdownd reads every 0.25 s: an interval then
# covers a whole rotation of the most groups a holder leaves it (7 of
# Skylake-SP's at 125 ms: 0.9 s), as a 2 s interval would on hardware
# (shorter ones have intervals without figures: topdownd warns), and
# topdownd's own schedule (a probe for more every 10 intervals) is in its
# intervals all the same.
. "$(dirname "$0")/lib.sh"

SCEN=$ROOT/tests/scenarios
IV=0.25
DOCS=36
STEP=2
# Holders arrive at 8 s and leave at 40 s of the scenario: intervals 4 and
# 20.
ARRIVE=8
LEAVE=40
# name|fixture|scenario|fixed1 holder|parity options (at 4 ms)
F61="--tables-fallback $ROOT/reference/perf-tables-6.1"
A="--ungrouped --weight-event CPU_CYCLES --pmu armv8_pmuv3_0"
Z="--ungrouped --weight-event ls_not_halted_cyc"
families=(
	"skx-2s|skx-2s|parity-skx.json|{\"fixed\": [1]}|--cpuid GenuineIntel-6-55-4 --weight-event CPU_CLK_UNHALTED.THREAD_ANY $F61"
	"icx-1s|icx-1s|parity-icl.json|{\"fixed\": [1]}|--cpuid GenuineIntel-6-6A-0 --icl --weight-event TOPDOWN.SLOTS $F61 --metric-groups TopdownL1"
	"spr-2s|spr-2s|parity-mixed.json|{\"fixed\": [1]}|--cpuid GenuineIntel-6-8F-4"
	"gnr-2s|gnr-2s|parity-mixed.json|{\"fixed\": [1]}|--cpuid GenuineIntel-6-AD-0 --events-from x86/graniterapids/gnr-metrics.json"
	"srf-2s|srf-2s|parity-srf.json|{\"fixed\": [1]}|--cpuid GenuineIntel-6-AF-0 --ungrouped --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/sierraforest/srf-metrics.json"
	"grr-12|grr-12|parity-grr.json|{\"fixed\": [1]}|--cpuid GenuineIntel-6-B6-0 --ungrouped --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/grandridge/grr-metrics.json"
	"adl-hybrid|adl-hybrid|parity-hybrid.json|{\"fixed\": [1]}|--cpuid GenuineIntel-6-97-0 --events-from perf --table-dir x86/alderlake --unit cpu_core --pmu cpu_core --cpus 0-7 $F61"
	"genoa-2s|genoa-2s|parity-zen4.json|{\"gp\": 1}|--cpuid AuthenticAMD-25-11-1 --events-from x86/amdzen4/pipeline.json $Z"
	"turin-1s|turin-1s|parity-zen5.json|{\"gp\": 1}|--cpuid AuthenticAMD-26-2-0 --events-from x86/amdzen5/pipeline.json $Z"
	"neoverse-v2-64|neoverse-v2-64|parity-neoverse-v2.json|{\"fixed\": [1]}|--cpuid 0x00000000410fd4f1 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A"
)
MUXES=(4 30 100 125)
plan $((${#families[@]} * ${#MUXES[@]} * 11 + ${#families[@]} + 13 + 4))

fake() { # FIXTURE SCENARIO COMMAND...
	local fx=$1 sc=$2
	shift 2
	env FAKEPMU_SYSFS="$fx" FAKEPMU_SCENARIO="$sc" LD_PRELOAD="$FAKEPMU" \
		FAKEPMU_TABLES_FALLBACK="$ROOT/reference/perf-tables-6.1" "$@"
}
# The first core PMU's directory and general-purpose counters (--probe).
pmu_dir() { ls -d "$1"/bus/event_source/devices/{cpu_core,cpu,armv8_pmuv3_0} 2>/dev/null | head -1; }
gp_of() { awk '$1 == "Counters:" { for (i = 1; i <= NF; i++) if ($i == "per") { print $(i - 1); exit } }' "$1"; }
groups_of() { awk '$1 == "PMU:" { n++ } n == 1 && $1 == "Group" { g++ } END { print g ? g : 1 }' "$1"; }

# ---- 1. pinned holders arriving and leaving, every family, four rotations
run_case() { # INDEX MUX
	local name fx sc held opts i=$1 mux=$2 dir m g need none d u free4 ncpu t
	IFS='|' read -r name fx sc held opts <<<"${families[$i]}"
	dir=$TMP/$name-$mux
	mkdir -p "$dir"
	cp -r "$FIXTURES/$fx" "$dir/fx"
	echo "$mux" >"$(pmu_dir "$dir/fx")/perf_event_mux_interval_ms"
	fake "$dir/fx" "$SCEN/$sc" "$TOPDOWND" -c /dev/null --sysfs-root "$dir/fx" --probe >"$dir/probe" 2>&1
	m=$(gp_of "$dir/probe")
	g=$(groups_of "$dir/probe")
	need=$(awk '$1 == "Counters:" { print $2; exit }' "$dir/probe")
	[ "$need" -gt "$m" ] && need=$m
	ncpu=$(($(sed 's/.*-//' "$dir/fx/devices/system/cpu/possible") + 1))
	# CPU 1: one counter held; 2: all but two; 3: every one; 4: the
	# watchdog's (for good); from ARRIVE to LEAVE (and for the parity
	# run, on its 0.25 s steps, from 1 s to 3 s).
	for t in "$ARRIVE $LEAVE held" "1 3 parity"; do
		set -- $t
		/usr/bin/python3 "$ROOT/tests/integration/holders.py" "$SCEN/$sc" "$ncpu" "{
			\"1\": [{\"gp\": 1, \"from\": $1, \"to\": $2}],
			\"2\": [{\"gp\": $((m - 2)), \"from\": $1, \"to\": $2}],
			\"3\": [{\"gp\": $m, \"from\": $1, \"to\": $2}],
			\"4\": [$held]}" >"$dir/$3.json"
	done
	# Level 1 and 2 from the fixed counters alone (PERF_METRICS with 8
	# metrics): a CPU with every general-purpose counter held still has
	# figures; elsewhere none while it is held.
	case $name in spr-2s | gnr-2s | adl-hybrid) none=false ;; *) none=true ;; esac
	# The bounds: a conclusion waits max(4 rotations x (groups + 1), 0.1 s)
	# and two reads, plus the interval it is made in; the probe for
	# more runs every 10 intervals (at least 1 s), plus the reopening.
	d=$(awk -v mux="$mux" -v g="$g" -v iv="$STEP" 'BEGIN { w = 4 * mux / 1000 * (g + 1); if (w < 0.1) w = 0.1;
		n = int(w / iv + 0.999); if (n < 2) n = 2; print n + 2 }')
	u=12
	free4=$m
	case $held in *gp*) free4=$((m - 1)) ;; esac
	# A step only where what is left no longer holds the groups.
	step() { [ "$1" -lt "$need" ] && echo true || echo false; }
	# CPU 3 on the fixed counters alone: the scenario's own fractions.
	truth=null
	[ "$none" = false ] && truth=$(jq -c '.cpus["3"].phases[0] | {
		"level1.retiring": .retiring, "level1.bad_speculation": .bad_speculation,
		"level1.frontend_bound": .frontend_bound, "level1.backend_bound": .backend_bound,
		"level2.heavy_operations": .heavy_operations, "level2.light_operations": (.retiring - .heavy_operations),
		"level2.branch_mispredicts": .branch_mispredicts, "level2.machine_clears": (.bad_speculation - .branch_mispredicts),
		"level2.fetch_latency": .fetch_latency, "level2.fetch_bandwidth": (.frontend_bound - .fetch_latency),
		"level2.memory_bound": .memory_bound, "level2.core_bound": (.backend_bound - .memory_bound)}' "$dir/held.json")
	cat >"$dir/spec.json" <<EOF
{"interval": $STEP, "documents": $DOCS, "gp_total": $m, "down_max": $d, "up_max": $u, "tol": 0.0005,
 "cpus": {"1": {"free": $((m - 1)), "arrive": $ARRIVE, "leave": $LEAVE, "step": $(step $((m - 1)))},
          "2": {"free": 2, "arrive": $ARRIVE, "leave": $LEAVE, "step": $(step 2)},
          "3": {"free": 0, "arrive": $ARRIVE, "leave": $LEAVE, "none": $none, "step": true, "fixed_truth": $truth},
          "4": {"free": $free4, "arrive": 0, "step": $(step $free4)}}}
EOF
	fake "$dir/fx" "$dir/held.json" env FAKEPMU_CLOCK_STEP=$STEP FAKEPMU_TRACE="$dir/trace" \
		timeout 120 "$TOPDOWND" -c /dev/null --sysfs-root "$dir/fx" --watch --json --count $DOCS -i ${IV}s \
		>"$dir/docs" 2>"$dir/err"
	echo $? >"$dir/rc"
	/usr/bin/python3 "$ROOT/tests/integration/shared.py" "$dir/docs" "$dir/spec.json" >"$dir/result" 2>&1
}
for i in "${!families[@]}"; do
	for mux in "${MUXES[@]}"; do
		run_case "$i" "$mux" &
		while [ "$(jobs -rp | wc -l)" -ge 3 ]; do sleep 0.2; done
	done
done
wait
for i in "${!families[@]}"; do
	IFS='|' read -r name _ <<<"${families[$i]}"
	for mux in "${MUXES[@]}"; do
		dir=$TMP/$name-$mux
		is "$(cat "$dir/rc")" 0 "$name, rotation $mux ms: --watch ran its $DOCS intervals with holders arriving and leaving"
		for check in documents states cpu1.down cpu1.up cpu2.down cpu2.up cpu3.down cpu3.up gaps figures; do
			line=$(grep -m1 "^[A-Z]* $check: " "$dir/result")
			[ "${line%% *}" = PASS ]
			ok $? "$name, rotation $mux ms: ${line#* }"
		done
	done
	diag "$name: $(grep -h 'another user holds' "$TMP/$name-125/err" | head -3 | sed 's/.*topdownd\[[0-9]*\]: //' | tr '\n' ';')"
done

# ---- 2. at 4 ms, perf's figures (perf does not meet the holders)
P=(/usr/bin/python3 "$ROOT/tests/oracle/parity.py" --topdownd "$TOPDOWND" --fakepmu "$FAKEPMU"
	--sysns "$ROOT/tests/oracle/sysns" --tables "$PERF_TABLES" --interval-ms 250 --intervals 28 --gaps --tol 0.0005)
run_parity() { # INDEX
	local name fx sc held opts dir
	IFS='|' read -r name fx sc held opts <<<"${families[$1]}"
	dir=$TMP/$name-4
	# shellcheck disable=SC2086
	timeout 300 "${P[@]}" --fixture "$dir/fx" --scenario "$SCEN/$sc" --topdownd-scenario "$dir/parity.json" \
		$opts >"$dir/parity" 2>&1
	echo $? >"$dir/parity.rc"
}
for i in "${!families[@]}"; do
	run_parity "$i" &
	while [ "$(jobs -rp | wc -l)" -ge 3 ]; do sleep 0.2; done
done
wait
for i in "${!families[@]}"; do
	IFS='|' read -r name _ <<<"${families[$i]}"
	dir=$TMP/$name-4
	# Gaps only on the holders' CPUs, within the bounds part 1 asserts.
	others=$(awk '$1 == "GAP" && $3 != 1 && $3 != 2 && $3 != 3 && $3 != 4 { print $3 }' "$dir/parity" | sort -u | tr '\n' ' ')
	[ "$(cat "$dir/parity.rc")" = 0 ] && [ -z "$others" ]
	ok $? "$name, rotation 4 ms: each CPU's figures are perf's within 0.05 pp in every interval topdownd has them ($(grep -c '^GAP' "$dir/parity") CPU intervals without, all on the holders' CPUs${others:+; others: $others}; $(grep -m1 '^cpu ' "$dir/parity" | sed 's/ \+/ /g'))"
	[ "$(cat "$dir/parity.rc")" = 0 ] || grep -m5 MISMATCH "$dir/parity" | cut -c 1-300 | sed 's/^/# /'
done

# ---- 3. a flexible user that wants every general-purpose counter (on
# the 0.25 s steps, from 1 s to 4 s; 44 intervals: topdownd has taken its
# counters back by the end)
FLEX_CPUS="4 5 6 7"
flex() { # FIXTURE SCENARIO SHARING OUT GP: a flexible holder of GP (all) on CPUs 4-7 from 1 s to 4 s
	local fx=$1 sc=$2 sharing=$3 out=$4 gp=$5 ncpu spec= c
	ncpu=$(($(sed 's/.*-//' "$FIXTURES/$fx/devices/system/cpu/possible") + 1))
	for c in $FLEX_CPUS; do
		spec="$spec${spec:+,} \"$c\": [{\"gp\": $gp, \"pinned\": false, \"from\": 1, \"to\": 4}]"
	done
	/usr/bin/python3 "$ROOT/tests/integration/holders.py" "$SCEN/$sc" "$ncpu" "{$spec}" >"$out.json"
	printf '[collect]\npmu_sharing = %s\n' "$sharing" >"$out.conf"
	fake "$FIXTURES/$fx" "$out.json" env FAKEPMU_CLOCK_STEP=$IV FAKEPMU_TRACE="$out.trace" \
		timeout 120 "$TOPDOWND" -c "$out.conf" --sysfs-root "$FIXTURES/$fx" --watch --json --count 44 -i ${IV}s \
		>"$out.docs" 2>"$out.err"
	/usr/bin/python3 "$ROOT/tests/integration/holdershare.py" "$out.trace" "$out.docs" 4 $IV >"$out.share"
}
# (Sapphire Rapids: 8 general-purpose counters; Skylake-SP with SMT on: 4)
flex spr-2s parity-mixed.json yield "$TMP/spr-yield" 8
flex spr-2s parity-mixed.json share "$TMP/spr-share" 8
flex skx-2s parity-skx.json yield "$TMP/skx-yield" 4
# "yielded PCT N shared PCT N": the holder's share of its time on CPU 4
# over the intervals topdownd had yielded through, and the others.
read -r _ sy ny _ ss ns <"$TMP/spr-yield.share"
read -r _ _ _ _ sh nh <"$TMP/spr-share.share"
read -r _ ky nky _ ks nks <"$TMP/skx-yield.share"
diag "a flexible holder of every general-purpose counter on CPUs 4-7 for 3 s: beside topdownd on Sapphire Rapids yielding, $sy % over the $ny intervals it had yielded, $ss % over $ns others; sharing, $sh % over $nh; on Skylake-SP yielding, $ky % over $nky, $ks % over $nks"
is "$sy" 100.0 "spr-2s, pmu_sharing = yield: the other user counts 100 % of its time while topdownd has yielded ($ny of the hold's intervals; $ss % in the $ns others, a window to see it and a try to take them back)"
near "$sh" 50 5 "spr-2s, pmu_sharing = share: the other user and topdownd's group rotate ($sh % over $nh intervals)"
is "$ky" 100.0 "skx-2s, pmu_sharing = yield: the other user counts 100 % of its time while topdownd has yielded ($nky intervals)"
like "$(grep -m1 'wanted the counters' "$TMP/spr-yield.err")" 'cpu: CPUs 4-7: another user.s events wanted the counters \(topdownd.s ran [0-9]+% of the time\); counting on the fixed counters alone, model hardware, for [0-9]+ s' \
	"spr-2s: the log says CPUs 4-7 yielded and count on the fixed counters alone"
# While yielded: level 1 and 2 from the fixed counters (model hardware:
# PERF_METRICS as the hardware gives it): the scenario's own fractions.
want=$(jq -c '.cpus["4"].phases[0] | [.retiring, .bad_speculation, .frontend_bound, .backend_bound, .heavy_operations, .branch_mispredicts, .fetch_latency, .memory_bound]' "$TMP/spr-yield.json")
got=$(jq -s -c '[.[] | .cpus[4] | select(.counters.yielded and .level1 != null)] | .[-1] | [.level1.retiring, .level1.bad_speculation, .level1.frontend_bound, .level1.backend_bound, .level2.heavy_operations, .level2.branch_mispredicts, .level2.fetch_latency, .level2.memory_bound]' "$TMP/spr-yield.docs")
/usr/bin/python3 -c 'import json, sys; a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2]); sys.exit(0 if a and b and len(a) == len(b) and all(abs(x - y) <= 0.005 for x, y in zip(a, b)) else 1)' "$want" "$got"
ok $? "spr-2s, yielded: CPU 4's level 1 and 2 from the fixed counters are the scenario's PERF_METRICS within 0.5 pp ($got against $want)"
is "$(jq -s -c '[.[] | .cpus[4:8][] | select(.counters.yielded) | .state] | unique' "$TMP/spr-yield.docs")" '["monitored"]' \
	"spr-2s: yielded CPUs 4-7 stay monitored, with figures (cpus[].counters.yielded)"
like "$(grep -m1 'takes its general-purpose counters back' "$TMP/spr-yield.err")" 'CPUs 4-7: takes its general-purpose counters back' \
	"spr-2s: topdownd takes its counters back to see whether the other user is still there"
is "$(jq -s -c '[.[-1].cpus[4:8][] | [.counters.yielded, .running_ratio]] | unique' "$TMP/spr-yield.docs")" '[[false,1]]' \
	"spr-2s: after the holder left, its groups run all the time again"
like "$(grep -m1 'wanted the counters' "$TMP/skx-yield.err")" 'its groups are closed' \
	"skx-2s: no grouping on the fixed counters alone: its groups are closed while it yields"
is "$(jq -s -c '[.[] | .cpus[4:8][] | select(.counters.yielded) | .state] | unique' "$TMP/skx-yield.docs")" '["yielded"]' \
	"skx-2s: CPUs 4-7 are yielded while they are, without figures"
# (an interval through which they had yielded: the document before said so)
is "$(jq -s -c '. as $d | [range(1; length) | select($d[. - 1].cpus_by_state.yielded == 4) | $d[.] | [.host.cpus_measured, .host.cpus_expected]] | unique' "$TMP/skx-yield.docs")" '[[12,16]]' \
	"skx-2s: meanwhile the host's figures are over the 12 CPUs measured of 16"
is "$(jq -s -c '[.[-1].cpus[4:8][] | .state] | unique' "$TMP/skx-yield.docs")" '["monitored"]' \
	"skx-2s: after the holder left, monitored again"
! grep -q 'wanted the counters' "$TMP/spr-share.err"
ok $? "spr-2s, pmu_sharing = share: topdownd keeps its counters"

# ---- 4. isolated CPUs
ISO=$(fixture_copy spr-2s)
echo "2-3" >"$ISO/devices/system/cpu/isolated"
echo "6" >"$ISO/devices/system/cpu/nohz_full"
fake "$ISO" "$SCEN/constant.json" env FAKEPMU_TRACE="$TMP/iso.trace" \
	"$TOPDOWND" -c /dev/null --sysfs-root "$ISO" --once --json -i 100ms >"$TMP/iso.json" 2>"$TMP/iso.err"
is "$(jq -c '[[.cpus[] | select(.state == "isolated") | .cpu], .host.cpus_expected]' "$TMP/iso.json")" '[[2,3,6],13]' \
	"isolcpus 2-3 and nohz_full 6: those CPUs are isolated, 13 expected"
is "$(awk '$1 == "open" { split($3, c, "="); if (c[2] == 2 || c[2] == 3 || c[2] == 6) n++ } END { print n + 0 }' "$TMP/iso.trace")" 0 \
	"... and never opened (the fake's trace), so never read: no IPI for their tenants"
printf '[collect]\ncpus = 0-15\n' >"$TMP/iso.conf"
fake "$ISO" "$SCEN/constant.json" "$TOPDOWND" -c "$TMP/iso.conf" --sysfs-root "$ISO" --once --json -i 100ms >"$TMP/iso2.json" 2>/dev/null
is "$(jq -c '[.cpus_by_state.isolated, .host.cpus_measured]' "$TMP/iso2.json")" '[0,16]' \
	"[collect] cpus = 0-15 lists them: all 16 measured"
like "$(grep -m1 -i 'isolated' "$TMP/iso.err")" '2-3,6' "the log names the isolated CPUs and why they are left out"
done_testing
