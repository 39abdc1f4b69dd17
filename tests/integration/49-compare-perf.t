#!/bin/bash
# SPDX-License-Identifier: MIT
# topdownd --compare-perf (issue 47): topdownd beside the installed perf on
# the machine it runs on.  Here that machine is the fake PMU: the command
# runs in a private mount namespace where the fixture stands in for /sys
# (tests/oracle/sysns), and the perf it starts (Debian's perf 6.1, or a
# wrapper around it) inherits the fake PMU and PERF_CPUID.  Both processes'
# fake clocks are read-paced (FAKEPMU_CLOCK_STEP, one interval per read),
# so that each tool's interval k spans the same stretch of the scenario
# however late a loaded machine makes its reads: the figures compared are
# the two tools' arithmetic, not their timing.
#   1. Every family perf 6.1 knows (Sapphire Rapids, Skylake-SP, Cascade
#      Lake, Ice Lake server and client), multiplexed scenarios included:
#      every node compared per CPU, core, package and host, verdict
#      agree, exit 0; the report names perf's version, the kernel and the
#      model.
#   1b. Every family perf 6.1 does not know (Emerald and Granite Rapids,
#      Sierra Forest, Grand Ridge, Zen 4, 5 and 6, every Neoverse, a
#      Neoverse guest, AmpereOne and AmpereOne M, NVIDIA Olympus): the
#      events mode, perf counting the events of perf's expressions (-e),
#      the expressions from perf's tables evaluated on its counts; the
#      departures perf 7.2's AmpereOne expressions make; nothing counted;
#      formulas perf's tables do not have.
#   2. A departure: perf's frontend_bound and fetch_latency below 0
#      (parity-clamps), 0 in topdownd, with the size the scenario gives.
#   3. A difference: perf counting another scenario (retiring 10 points
#      higher): verdict differ, exit 2, the node and its size.
#   4. What it cannot compare, said with the fix: perf missing, perf that
#      does not know the model (Emerald Rapids for perf 6.1), perf that
#      fails, perf that hangs (stopped within its bound), a model perf
#      has no metrics for.
#   5. A shared PMU (another user holds counters before it starts) and a
#      topdownd daemon running beside it: both said.
#   6. Nothing left behind: no perf process, no child.
. "$(dirname "$0")/lib.sh"

command -v perf >/dev/null || missing_all "perf is not installed (make deps installs linux-perf)"
[ "$(id -u)" -eq 0 ] || missing_all "needs root for a private mount namespace (CI runs as root)"
unshare --mount --propagation private true 2>/dev/null || missing_all "unshare --mount is not permitted here"

plan 163

SCEN=$ROOT/tests/scenarios
SYSNS=$ROOT/tests/oracle/sysns
PERF_VERSION=$(perf --version | sed 's/^perf version //')
# The perf the command finds in PATH: Debian's, each process it starts
# noted (its pid stays through exec), so that "nothing left behind" is
# about these and not another test's perf running meanwhile.
mkdir -p "$TMP/bin"
cat >"$TMP/bin/perf" <<EOF
#!/bin/sh
echo \$\$ >>$TMP/perf-pids
exec /usr/bin/perf "\$@"
EOF
chmod +x "$TMP/bin/perf"

# compare FIXTURE CPUID SCENARIO [topdownd args...]: --compare-perf in the
# fixture's namespace, on a read-paced clock of 200 ms.  Sets OUT (stdout),
# ERR (stderr), RC.
compare() {
	local fx=$FIXTURES/$1 cpuid=$2 scen=$3
	shift 3
	OUT=$TMP/out-$RANDOM ERR=$TMP/err-$RANDOM
	env PATH="$TMP/bin:$PATH" FAKEPMU_SYSFS="$fx" FAKEPMU_SCENARIO="$scen" LD_PRELOAD="$FAKEPMU" PERF_CPUID="$cpuid" \
		FAKEPMU_CLOCK_STEP=0.2 FAKEPMU_TABLES_FALLBACK="$ROOT/reference/perf-tables-6.1" \
		${TABLES:+FAKEPMU_TABLES="$ROOT/reference/$TABLES"} \
		timeout -k 5 120 "$SYSNS" "$fx" "$TOPDOWND" -c /dev/null --compare-perf -i 200ms "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

# The largest difference of any node in any aggregation (pp), and the
# aggregations where every node was compared over 3 intervals.
worst() { jq -r '.max_diff_pp' "$OUT"; }
complete() {
	jq -r '[.aggregations[] | select(.intervals_compared == 3 and
		([.nodes[] | select(.compared > 0 and .perf_printed)] | length) == (.nodes | length)) |
		.aggregation] | join(" ")' "$OUT"
}

# ---- 1. the families perf 6.1 knows
while IFS='|' read -r name fx cpuid scen nodes; do
	compare "$fx" "$cpuid" "$SCEN/$scen.json" --json --tolerance 0.05
	is "$RC $(jq -r .verdict "$OUT" 2>/dev/null)" "0 agree" "$name: agree, exit 0$([ $RC = 0 ] || echo ": $(head -3 "$ERR")")"
	is "$(complete)" "cpu core package host" "$name: every one of its $nodes nodes compared per CPU, core, package and host over 3 intervals"
	near "$(worst)" 0 0.0001 "$name: the largest difference from perf is 0 pp (perf's six decimals)"
done <<'EOF'
spr-2s mixed (Sapphire Rapids: halted CPUs, rates differing by CPU)|spr-2s|GenuineIntel-6-8F-4|parity-mixed|12
spr-2s multiplexed (every CPU counted half the time)|spr-2s|GenuineIntel-6-8F-4|parity-multiplexed|12
skx-2s (Skylake-SP, SMT, AnyThread; its 4 groups rotate)|skx-2s|GenuineIntel-6-55-4|parity-skx|12
clx-2s multiplexed (Cascade Lake, SMT off)|clx-2s|GenuineIntel-6-55-7|parity-skx-multiplexed|12
icx-1s (Ice Lake server)|icx-1s|GenuineIntel-6-6A-0|parity-icl|12
icl-client multiplexed (Ice Lake client)|icl-client|GenuineIntel-6-7E-5|parity-icl-multiplexed|12
EOF
is "$(jq -r '.perf.version' "$OUT")" "$PERF_VERSION" "the report names perf's version (perf --version)"
is "$(jq -r '.kernel.release' "$OUT")" "$(uname -r)" "... the kernel (uname -r)"
is "$(jq -r '.model' "$OUT")" "Ice Lake (GenuineIntel-6-7E)" "... and the model, as --probe names it"
is "$(jq -r '.aggregations | map(.perf_option) | join(" ")' "$OUT")" "-A --per-core --per-socket -a" \
	"... and perf's aggregations, one perf stat each"

# ---- 1b. the families perf 6.1 does not know: perf's expressions on its
# counts.  An arm64 fixture runs the host's x86 perf, told a CPU it has no
# tables for (its arm64 tables are not in it): what matters is that perf
# counts the raw events it is given.
X=GenuineIntel-6-00-0
while IFS='|' read -r name fx cpuid scen tables nodes events; do
	TABLES=$tables compare "$fx" "$cpuid" "$SCEN/$scen.json" --json --tolerance 0.05
	is "$RC $(jq -r '"\(.verdict) \(.mode)"' "$OUT" 2>/dev/null)" "0 agree events" \
		"$name: perf's expressions on perf's counts agree, exit 0$([ $RC = 0 ] || echo ": $(head -3 "$ERR")")"
	is "$(complete)" "cpu core package host" "... every one of its $nodes nodes compared per CPU, core, package and host over 3 intervals"
	near "$(worst)" 0 0.0001 "... the largest difference from perf's expressions is 0 pp"
	like "$(jq -r .mode_note "$OUT")" "^perf $PERF_VERSION does not know .*: perf counted the $events events of perf's expressions \\(perf-tables" \
		"... perf counted the $events events the expressions read"
done <<EOF
emr-2s (Emerald Rapids)|emr-2s|GenuineIntel-6-CF-0|parity-mixed||12|10
gnr-2s (Granite Rapids)|gnr-2s|GenuineIntel-6-AD-0|parity-multiplexed||12|10
srf-2s (Sierra Forest, Crestmont)|srf-2s|GenuineIntel-6-AF-0|parity-srf||10|10
grr-12 (Grand Ridge)|grr-12|GenuineIntel-6-B6-0|parity-grr||10|10
genoa-2s (Zen 4)|genoa-2s|AuthenticAMD-25-11-1|parity-zen4||13|12
turin-1s (Zen 5)|turin-1s|AuthenticAMD-26-2-0|parity-zen5||13|12
zen6-1s (Zen 6, perf 7.2's tables)|zen6-1s|AuthenticAMD-26-50-0|parity-zen6|perf-tables-7.2|13|12
neoverse-v1-16 (Neoverse V1)|neoverse-v1-16|$X|parity-neoverse-v1||4|7
neoverse-n2-8 (Neoverse N2 r0p0, perf's stall-slot fix)|neoverse-n2-8|$X|parity-neoverse-n2||4|7
neoverse-v2-64 (Neoverse V2)|neoverse-v2-64|$X|parity-neoverse-v2||4|7
graviton3-guest (Neoverse V1 guest, #slots from Arm's telemetry)|graviton3-guest|$X|parity-neoverse-v1||4|7
neoverse-v3-16 (Neoverse V3, perf 7.2)|neoverse-v3-16|$X|parity-neoverse-v3n3|perf-tables-7.2|4|7
neoverse-n3-16 (Neoverse N3, perf 7.2)|neoverse-n3-16|$X|parity-neoverse-v3n3|perf-tables-7.2|4|7
ampereone-16 (AmpereOne, perf 7.2)|ampereone-16|$X|parity-ampereone|perf-tables-7.2|10|10
ampereonex-16 (AmpereOne M, perf 7.2)|ampereonex-16|$X|parity-ampereone|perf-tables-7.2|10|10
nvidia-t410-16 (NVIDIA Olympus, perf 7.2)|nvidia-t410-16|$X|parity-nvidia-t410|perf-tables-7.2|4|6
EOF
# The departures of perf 7.2's AmpereOne expressions: perf below 0 where
# the scenario's CPUs 4-7 mispredict more branches than they flush and
# stall on memory more than backend bound; no value where CPU 3 flushes
# nothing.
TABLES=perf-tables-7.2 compare ampereone-16 "$X" "$SCEN/parity-ampereone.json" --json --tolerance 0.05
dep() { jq -r --arg a "$1" '[.aggregations[] | select(.aggregation == $a) | .nodes[] |
	select(.negative.count > 0 or .no_value.count > 0) | "\(.node) \(.negative.count) \(.negative.max_pp) \(.no_value.count)"] | join(", ")' "$OUT"; }
is "$(dep cpu)" "branch_mispredicts 0 null 3, machine_clears 12 1.8 3, fetch_bandwidth 12 3 0, core_bound 12 2.7 0" \
	"AmpereOne: perf's values below 0 (4 CPUs x 3 intervals, down to 1.8, 3 and 2.7 pp) and without one (CPU 3 x 3), each 0 in topdownd"
is "$(dep host)" "" "... none for the host, whose sums are inside"
is "$(jq -r '.aggregations | map(.perf_option) | join(" ")' "$OUT")" "-A -A -A -A" \
	"... every aggregation from one perf stat -A: the CPUs' counts, summed per core, package and host"
is "$(jq -r '.perf_events' "$OUT" | grep -o 'armv8_pmuv3_0/[^/]*/' | head -2 | tr '\n' ' ')" \
	"armv8_pmuv3_0/event=0x3a,name=topdownd_e0/ armv8_pmuv3_0/event=0x11,name=topdownd_e1/ " \
	"... perf was given each event's encoding from topdownd's table on the PMU, named so its records are found"
# A PMU that counts nothing (every CPU halted throughout).
jq '.cpus = {"default": (.cpus["0-1"] + {phases: .cpus.default.phases})}' "$SCEN/parity-mixed.json" >"$TMP/halted.json"
compare emr-2s GenuineIntel-6-CF-0 "$TMP/halted.json"
is "$RC" 1 "events mode, nothing counted (every CPU halted): exit 1"
like "$(cat "$ERR")" '^topdownd: not compared: perf counted nothing for topdown-retiring, .*INT_MISC\.UOP_DROPPING.* on this machine \(0, "<not counted>" or "<not supported>"\): perf.s expressions have no value without them$' \
	"... said, naming the events"
# What perf's tables cannot give: a guest counted with PerfSpect's formulas.
compare spr-guest GenuineIntel-6-8F-4 "$SCEN/constant.json"
is "$RC" 1 "Sapphire Rapids without PERF_METRICS (PerfSpect's formulas): exit 1"
like "$(head -1 "$ERR")" "perf's expressions cannot be evaluated on its events here: Sapphire Rapids without PERF_METRICS's Frontend_Bound is not from perf's tables \\(perfspect/spr_alt_tma_metrics\\.json\\)\$" \
	"... perf's tables have no such metrics: said"
like "$(sed -n 2p "$ERR")" '^topdownd: none: topdownd counts Sapphire Rapids without PERF_METRICS with formulas perf.s tables do not have' \
	"... and that no perf can print them"

# The text report of the first family, with the default tolerance: the
# run the README and docs/compare-perf.md show.
compare spr-2s GenuineIntel-6-8F-4 "$SCEN/parity-mixed.json"
is "$RC" 0 "the text report: exit 0"
is "$(grep '^Verdict:' "$OUT")" 'Verdict:      agree: 900 values, largest difference 0.0000 pp (retiring, CPU 2, interval 1); tolerance 0.5000 pp' \
	"... its verdict line: 12 nodes of 14 CPUs (0 and 1 are halted: no figures in either tool), 8 cores, 2 packages and the host over 3 intervals; where: the first of equal differences"
for doc in README.md docs/compare-perf.md; do
	is "$(grep '^Verdict:' "$ROOT/$doc")" "$(grep '^Verdict:' "$OUT")" "$doc shows this run's verdict"
done
is "$(sed -n '/^\$ sudo topdownd --compare-perf$/,/^```$/p' "$ROOT/docs/compare-perf.md" | grep -E '^[a-z_]+ +[0-9.]+ +[0-9.]+' | head -1)" \
	"$(grep '^retiring' "$OUT")" "docs/compare-perf.md shows this run's table"
like "$(grep '^perf:' "$OUT")" "^perf: +$PERF_VERSION \\($TMP/bin/perf\\)$" "... perf's version and the path it found in PATH"
like "$(grep '^largest difference' "$OUT")" '^largest difference, pp +cpu +core +package +host$' "... the table's head"
like "$(grep '^memory_bound' "$OUT")" '^memory_bound( +0\.0000){4}$' "... a node's row: its largest difference per aggregation"
like "$(grep '^cpu ' "$OUT")" '^cpu +3 intervals; running: perf [0-9]+-[0-9]+ %, topdownd 100-100 %$' \
	"... both tools' running shares (perf's four groups rotate on the fixed counters)"

# ---- 2. a departure: perf's value below 0, topdownd's 0
compare spr-2s GenuineIntel-6-8F-4 "$SCEN/parity-clamps.json" --json --tolerance 0.05
is "$RC $(jq -r .verdict "$OUT")" "0 agree" "parity-clamps: agree (topdownd's 0 where perf prints a value below 0 is its documented departure)"
neg() { jq -r --arg a "$1" --arg n "$2" '.aggregations[] | select(.aggregation == $a) | .nodes[] | select(.node == $n) | "\(.negative.count) \(.negative.max_pp)"' "$OUT"; }
read -r cnt size <<<"$(neg cpu frontend_bound)"
is "$cnt" 48 "frontend_bound below 0 in perf on all 16 CPUs in each of 3 intervals"
# The scenario's frontend_bound 0.03 less uop_dropping 0.05, through the
# 8-bit PERF_METRICS field (a step of 1/255 = 0.39 pp).
near "$size" 2.0 0.4 "... by ${size} pp: the scenario's 3 % less 5 % of uop dropping (within the metric's 8-bit step)"
read -r cnt size <<<"$(neg host fetch_latency)"
is "$cnt" 3 "fetch_latency below 0 for the host in each interval"
near "$size" 3.0 0.4 "... by ${size} pp: the scenario's 2 % less 5 %"
compare spr-2s GenuineIntel-6-8F-4 "$SCEN/parity-clamps.json" --tolerance 0.05
like "$(grep -m1 'departure: frontend_bound' "$OUT")" '^ +departure: frontend_bound below 0 in perf 48 times \(down to -1\.[0-9]{4} pp\), 0 in topdownd$' \
	"the text report says each departure with its count and size"

# ---- 3. a difference: perf counts retiring 10 points higher
jq '.cpus.default.phases[0].retiring = 0.40 | .cpus.default.phases[0].backend_bound = 0.30' \
	"$SCEN/constant.json" >"$TMP/other.json"
cat >"$TMP/perf-other" <<EOF
#!/bin/sh
FAKEPMU_SCENARIO=$TMP/other.json exec /usr/bin/perf "\$@"
EOF
chmod +x "$TMP/perf-other"
compare spr-2s GenuineIntel-6-8F-4 "$SCEN/constant.json" --json --perf "$TMP/perf-other"
is "$RC $(jq -r .verdict "$OUT")" "2 differ" "perf counting another workload: verdict differ, exit 2"
node() { jq -r --arg a "$1" --arg n "$2" '.aggregations[] | select(.aggregation == $a) | .nodes[] | select(.node == $n) | .max_diff_pp' "$OUT"; }
near "$(node cpu retiring)" 10 0.4 "... retiring differs by 10 pp on the CPUs (within the 8-bit step)"
near "$(node host backend_bound)" 10 0.4 "... backend_bound by 10 pp for the host"
near "$(node host frontend_bound)" 0 0.4 "... frontend_bound as it was"
is "$(jq -r .tolerance_pp "$OUT")" 0.5 "the default tolerance is 0.5 pp"

# ---- 4. what it cannot compare
compare spr-2s GenuineIntel-6-8F-4 "$SCEN/constant.json" --perf /nonexistent/perf
is "$RC" 1 "perf missing: exit 1"
is "$(head -1 "$ERR")" "topdownd: /nonexistent/perf is not installed (or not executable)" "... said"
like "$(sed -n 2p "$ERR")" '^topdownd: install it: .+$' "... and what installs it ($(sed -n 2p "$ERR" | cut -d: -f3-))"
compare spr-2s GenuineIntel-6-8F-4 "$SCEN/constant.json" --perf /nonexistent/perf --json
is "$RC $(jq -r '"\(.verdict)|\(.reason)"' "$OUT")" "1 not compared|/nonexistent/perf is not installed (or not executable)" \
	"... and with --json, the report says it (the file to attach)"
compare emr-2s GenuineIntel-6-CF-0 "$SCEN/parity-mixed.json"
is "$RC" 0 "perf 6.1 on Emerald Rapids, whose metrics it does not know: the events mode, exit 0"
like "$(grep '^Events mode:' "$OUT")" "^Events mode: +perf $PERF_VERSION does not know Emerald Rapids \\(GenuineIntel-6-CF\\)'s TopDown metrics \\(it printed no tma_retiring, .*tma_core_bound\\): perf counted the 10 events of perf's expressions \\(perf-tables/x86/emeraldrapids/emr-metrics\\.json\\), evaluated by topdownd on perf's counts\$" \
	"... the text report says why (the metrics perf did not print) and what it compared instead"
like "$(sed -n '/^Events mode:/{n;p;}' "$OUT")" '^ +perf stat -A -e \{cpu/slots/,cpu/topdown-retiring/,.*\},cpu/event=0xad,umask=0x10,name=topdownd_e5/$' \
	"... and perf's events: the kernel's PERF_METRICS ones in a group led by slots, the others alone"
cat >"$TMP/perf-denied" <<'EOF'
#!/bin/sh
[ "$1" = --version ] && exec /usr/bin/perf --version
echo "Error:" >&2
echo "Access to performance monitoring and observability operations is limited." >&2
exit 255
EOF
chmod +x "$TMP/perf-denied"
compare spr-2s GenuineIntel-6-8F-4 "$SCEN/constant.json" --perf "$TMP/perf-denied"
is "$RC" 1 "perf that fails: exit 1"
is "$(cat "$ERR")" "topdownd: not compared: perf exited after 0 intervals: Error: Access to performance monitoring and observability operations is limited." \
	"... with perf's own first words"
cat >"$TMP/perf-hangs" <<EOF
#!/bin/sh
[ "\$1" = --version ] && exec /usr/bin/perf --version
echo \$\$ >$TMP/hang.pid
exec sleep 1000
EOF
chmod +x "$TMP/perf-hangs"
start=$(date +%s)
compare spr-2s GenuineIntel-6-8F-4 "$SCEN/constant.json" --perf "$TMP/perf-hangs" --count 1 -i 100ms
took=$(($(date +%s) - start))
is "$RC" 1 "perf that prints nothing: exit 1"
is "$(cat "$ERR")" "topdownd: not compared: perf began 0 of its 3 intervals in 30 s; stopped" \
	"... stopped at its bound: 1 interval, the first and the last, and 30 s to start"
# Its own bound, not the machine's speed: compare()'s timeout would have
# killed it at 120 s (status 124).
ok $([ "$RC" -ne 124 ]; echo $?) "... ended by itself at its bound, not by the test's 120 s timeout (took ${took} s)"
ok $(! kill -0 "$(cat "$TMP/hang.pid")" 2>/dev/null; echo $?) "... and the hung perf is gone"
# Hybrid parts: each core type's expressions on perf's counts of its own
# events (perf 6.1's -M fails there); a package or the host holds both
# types, whose values perf keeps apart: those are not compared, said.
jq '.cpus["8-11"] = .cpus["4-5"] | .cpus["12-15"] = .cpus["6-7"] | del(.cpus["4-5"], .cpus["6-7"])' \
	"$SCEN/parity-lnl.json" >"$TMP/arl.json"
while IFS='|' read -r name fx cpuid scen tables events; do
	TABLES=$tables compare "$fx" "$cpuid" "$scen" --json --tolerance 0.05
	is "$RC $(jq -r '"\(.verdict) \(.mode)"' "$OUT" 2>/dev/null)" "0 agree events" \
		"$name: each core type's expressions on perf's counts agree, exit 0$([ $RC = 0 ] || echo ": $(head -3 "$ERR")")"
	is "$(complete)" "cpu core" "... every node compared per CPU and core over 3 intervals"
	is "$(jq -r '[.aggregations[] | select(.aggregation == "package" or .aggregation == "host") | .error] | unique | join("|")' "$OUT")" \
		"two core types in it: perf's expressions are each core type's own" "... packages and the host not compared, and why"
	near "$(worst)" 0 0.0001 "... the largest difference is perf's last digit"
	like "$(jq -r .mode_note "$OUT")" "^cpu_core and cpu_atom are 2 core types, whose metrics perf keeps apart \\(perf 6\\.1's -M fails on a hybrid part\\): perf counted the $events events" \
		"... said, with the $events events of both types"
done <<EOF
adl-hybrid (Alder Lake: Golden Cove and Gracemont)|adl-hybrid|GenuineIntel-6-97-0|$SCEN/parity-hybrid.json||23
lnl-hybrid (Lunar Lake: Lion Cove and Skymont, perf 7.2)|lnl-hybrid|GenuineIntel-6-BD-0|$SCEN/parity-lnl.json|perf-tables-7.2|18
arl-hybrid (Arrow Lake)|arl-hybrid|GenuineIntel-6-C6-0|$TMP/arl.json|perf-tables-7.2|18
arlh-hybrid (Arrow Lake-H, its low-power E-cores not counted)|arlh-hybrid|GenuineIntel-6-C5-0|$TMP/arl.json|perf-tables-7.2|18
EOF
TABLES=perf-tables-7.2 compare lnl-hybrid GenuineIntel-6-BD-0 "$SCEN/parity-lnl.json" --json --tolerance 0.05
is "$(dep cpu)" "resource_bound 6 3 0" "Lunar Lake's E-cores: perf's resource_bound below 0 (2 CPUs x 3 intervals, by 3 pp), 0 in topdownd"
is "$(jq -r '.perf_events' "$OUT" | grep -o '{[^}]*}\|cpu_atom/topdown-[a-z-]*/' | tr '\n' ' ')" \
	"{cpu_core/slots/,cpu_core/topdown-retiring/,cpu_core/topdown-fe-bound/,cpu_core/topdown-bad-spec/,cpu_core/topdown-be-bound/,cpu_core/topdown-heavy-ops/,cpu_core/topdown-br-mispredict/,cpu_core/topdown-fetch-lat/,cpu_core/topdown-mem-bound/} cpu_atom/topdown-retiring/ cpu_atom/topdown-fe-bound/ " \
	"... the P-cores' PERF_METRICS events in a group led by slots; Skymont's topdown-retiring and topdown-fe-bound (its fixed counters 6 and 5) alone"
TABLES=perf-tables-7.2 compare ptl-hybrid GenuineIntel-6-CC-0 "$SCEN/parity-lnl.json"
is "$RC" 1 "Panther Lake (no perf reference): exit 1"
is "$(cat "$ERR")" "topdownd: not compared: no perf reference for this model: perf's tables have no TopDown metric for PERF_METRICS (model not in topdownd's tables) (GenuineIntel-6-CC), so there is nothing of perf's to compare with" \
	"... said"

# ---- 5. a shared PMU; a daemon beside it
jq '.cpus["0-1"].held = {gp: 3, fixed: [], after_seconds: 0}' "$SCEN/parity-mixed.json" >"$TMP/held.json"
compare spr-2s GenuineIntel-6-8F-4 "$TMP/held.json" --tolerance 0.05
is "$RC" 0 "another user holding 3 counters of CPUs 0-1: still compared, agree"
like "$(grep '^Free before:' "$OUT")" '^Free before: +cpu: 5 of 8 general-purpose on CPUs 0-1; 8 of 8 general-purpose on CPUs 2-15$' \
	"... what the counters' other users leave, as --probe says it"
like "$(grep '^Shared:' "$OUT")" '^Shared: +another user holds counters \(above\)' "... and that the PMU is shared"
compare spr-2s GenuineIntel-6-8F-4 "$TMP/held.json" --json --tolerance 0.05
is "$(jq -r .pmu_shared_before "$OUT")" true "... in the JSON report too"
td_start "$FIXTURES/spr-2s" "$SCEN/constant.json"
compare spr-2s GenuineIntel-6-8F-4 "$SCEN/parity-mixed.json" --tolerance 0.05
# (Other tests' daemons may run meanwhile: they are named too.)
like "$(grep '^Others:' "$OUT")" "^Others: +a topdownd daemon counts too \\(pid ([0-9]+, )*$TD_PID(, [0-9]+)*\\): its groups take turns with both;\$" \
	"a topdownd daemon running: named, with its pid"
like "$(grep -A1 '^Others:' "$OUT" | tail -1)" 'stop it \(systemctl stop topdownd\) and run again$' "... and how to compare without it"
ok $(kill -0 "$TD_PID"; echo $?) "... and left running"
td_stop

# ---- 6. nothing left behind; usage
left=0
while read -r pid; do kill -0 "$pid" 2>/dev/null && left=$((left + 1)); done <"$TMP/perf-pids"
is "$left" 0 "none of the $(wc -l <"$TMP/perf-pids") perf processes the command started is left running"
"$TOPDOWND" --perf /usr/bin/perf >/dev/null 2>"$TMP/usage"
is "$? $(head -1 "$TMP/usage")" "64 topdownd: --perf and --tolerance only go with --compare-perf" "--perf alone: a usage error"
"$TOPDOWND" --compare-perf --tolerance 0 >/dev/null 2>"$TMP/usage"
is "$? $(head -1 "$TMP/usage")" '64 topdownd: --tolerance: expected percentage points above 0, at most 100, not "0"' \
	"--tolerance 0: a usage error"
"$TOPDOWND" --compare-perf --probe >/dev/null 2>"$TMP/usage"
is "$? $(head -1 "$TMP/usage")" "64 topdownd: choose one of --check-config, --print-config, --probe, --once, --watch and --compare-perf" \
	"--compare-perf with --probe: a usage error"
done_testing
