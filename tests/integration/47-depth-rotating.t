#!/bin/bash
# SPDX-License-Identifier: MIT
# Below level 2 where the level-1/2 events already rotate on the
# general-purpose counters (issue 42, point 3): Ice Lake, Skylake-SP and
# Cascade Lake, the Crestmont E-core parts.  Under the fake PMU, which
# rotates as the kernel does (ctx_event_to_rotate: the first active
# flexible group; a disabled one never takes a turn).
#   1. Without [collect] depth_multiplex no node is counted, and --probe
#      says what it would cost the level-1/2 groups and how to ask.
#   2. With it, perf is the oracle: perf 6.1's -M TopdownL3 under the fake
#      against level 3 per CPU, package and host within 0.05 pp (Ice Lake
#      server, every CPU alike and half of them at other rates; Ice Lake
#      client; Skylake-SP; Cascade Lake), perf 7.2's expressions on perf's
#      counts on Sierra Forest and Grand Ridge.  Skylake-SP and Cascade
#      Lake share a model number and differ below level 2: the nodes their
#      tables disagree on are left out and said.
#   3. What it costs, exactly, on the read-paced clock: the level-1/2
#      groups' running share with and without the depth group in their
#      rotation; no CPU takes the depth group's share for another user's.
#   4. perf's tables as written: a node's parent is the group that names a
#      node or a level-2 category (perf 7.2 also lists every level-3 node
#      in "tma_L3_group"), a ScaleUnit of "1%" (perf 6.1's tma_lsd on Ice
#      Lake server) scales the node as perf prints it.
. "$(dirname "$0")/lib.sh"

plan 20

SCEN=$ROOT/tests/scenarios
TOOL=$ROOT/tests/oracle
T61=$ROOT/reference/perf-tables-6.1
T72=$ROOT/reference/perf-tables-7.2
printf '[collect]\nlevel = 3\n' >"$TMP/l3.conf"
printf '[collect]\nlevel = 3\ndepth_multiplex = true\n' >"$TMP/l3m.conf"

probe() { # probe FIXTURE CONF: --probe's "Below L2:" lines
	FAKEPMU_SYSFS="$FIXTURES/$1" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" \
		"$TOPDOWND" -c "$TMP/$2" --probe --sysfs-root "$FIXTURES/$1" 2>/dev/null | sed -n '/^Below L2:/,/^Monitored:/p' |
		grep -v '^Monitored:' | tr '\n' ' ' | tr -s ' '
}
groups_of() { probe "$1" l3m.conf | sed -n 's/.* events in \([0-9]*\) groups taking turns.*/\1/p'; }

# ---- 1. not without asking ----
like "$(probe icx-1s l3.conf)" "Below L2: level 3 requested: Ice Lake server's level-1/2 events rotate in 3 groups here, and the nodes below level 2 would take running time from them \(each would run 1/4 of the time instead of 1/3\): set \[collect\] depth_multiplex = true to count them anyway; using level 2" \
	"Ice Lake server at level 3: no node without depth_multiplex, what it would cost and how to ask"
like "$(probe srf-2s l3.conf)" "rotate in 2 groups here, .* \(each would run 1/3 of the time instead of 1/2\): set \[collect\] depth_multiplex = true" \
	"Sierra Forest at level 3: the same, 1/3 instead of 1/2"
like "$(probe icx-1s l3m.conf)" "levels 3 to 3: 24 nodes from reference/perf-tables-6.1/x86/icelakex/icx-metrics.json, 45 events in 10 groups taking turns, one per interval, on 8 general-purpose counters and fixed counter 1 \[collect\] depth_multiplex: each of them joins the 3 level-1/2 groups' rotation while it takes its turn, which then run 1/4 of the time each, not 1/3" \
	"with depth_multiplex: 24 nodes, their groups joining the rotation, and what that costs"

# ---- 2. perf is the oracle ----
parity() { # parity DESCRIPTION MIN_CPU_VALUES ARGS...: parity_ok (lib.sh) at level 3 with depth_multiplex, its CPU values counted
	local d=$1 min=$2 rc n
	shift 2
	parity_ok "$d" --topdownd-level 3 --topdownd-set "depth_multiplex = true" "$@"
	rc=$?
	n=$(awk '$1 == "cpu" {print $2}' <<<"$PARITY_OUT")
	[ "${n:-0}" -ge "$min" ] || diag "only ${n:-0} CPU values compared (at least $min expected)"
	return $rc
}
W() { local g; g=$(groups_of "$1"); echo "--warmup $((g + 1)) --intervals $((g + 5))"; }
# CPUs 4-7 at other rates: every depth event of theirs scaled by its own
# factor (the level-1/2 events, parity-icl.json's, kept: their level 2
# stays a partition).
jq --slurpfile l12 "$SCEN/parity-icl.json" '($l12[0].cpus.default.phases[0].events | keys) as $keep |
	.cpus["4-7"] = (.cpus.default | .phases[0].events |= (to_entries |
		map(if (.key | IN($keep[])) then . else .value *= (1 + ((.key | length) % 7) / 5) end) | from_entries))' \
	"$SCEN/depth-icx.json" >"$TMP/depth-icx-skew.json"
for s in "$SCEN/depth-icx.json|every CPU alike" "$TMP/depth-icx-skew.json|CPUs 4-7 at other rates"; do
	parity "icx-1s, ${s#*|}: perf 6.1's TopdownL3 nodes within 0.05 pp per CPU, package and host" 10000 \
		--tables "$T61" --fake-tables "$T61" --fixture "$FIXTURES/icx-1s" --cpuid GenuineIntel-6-6A-0 --icl \
		--metric-groups TopdownL3 $(W icx-1s) --scenario "${s%|*}"
done
# Levels 4 to 6 on Ice Lake server: 19 groups in the rotation.  The
# nodes reading the core's frequency (msr@tsc@ over duration_time) per
# CPU perf's, a domain's at its mean frequency (perf 6.1 sums the TSC of
# its CPUs over one interval: the tsc_sum departure, 46-depth.t's); the
# scenario states the loads and snoops they read.
jq '.cpus.default.phases[0].events += {"CPU_CLK_UNHALTED.REF_TSC": 0.1043, "MEM_LOAD_L3_HIT_RETIRED.XSNP_HIT": 3.1e-05,
	"MEM_LOAD_L3_HIT_RETIRED.XSNP_HITM": 1.7e-05, "MEM_LOAD_L3_HIT_RETIRED.XSNP_MISS": 2.3e-05,
	"MEM_LOAD_RETIRED.L3_HIT": 0.00052, "OCR.DEMAND_DATA_RD.L3_HIT.SNOOP_HITM": 1.3e-05,
	"OCR.DEMAND_DATA_RD.L3_HIT.SNOOP_HIT_WITH_FWD": 2.9e-05, "OCR.DEMAND_RFO.L3_HIT.SNOOP_HITM": 7.1e-06}' \
	"$SCEN/depth-icx.json" >"$TMP/depth-icx6.json"
printf '[collect]\nlevel = 6\ndepth_multiplex = true\n' >"$TMP/l6m.conf"
g6=$(probe icx-1s l6m.conf | sed -n 's/.* events in \([0-9]*\) groups taking turns.*/\1/p')
parity "icx-1s, levels 4 to 6 ($g6 groups): perf 6.1's TopdownL4-L6 nodes within 0.05 pp per CPU, package and host" 10000 \
	--topdownd-level 6 --tables "$T61" --fake-tables "$T61" \
	--fixture "$FIXTURES/icx-1s" --cpuid GenuineIntel-6-6A-0 --icl --metric-groups TopdownL4,TopdownL5,TopdownL6 \
	--tsc-departure --warmup $((g6 + 1)) --intervals $((g6 + 5)) --scenario "$TMP/depth-icx6.json"
like "$(grep '^departure tsc_sum' <<<"$PARITY_OUT")" \
	'^departure tsc_sum: 7 nodes read msr@tsc@ and duration_time \(contested_accesses,data_sharing,false_sharing,l3_hit_latency,local_dram,remote_cache,remote_dram\); 56 CPU phase values compared as perf.s; host: [0-9]+ perf values divided by the domain.s CPUs \(8\); package: [0-9]+ perf values divided by the domain.s CPUs \(8\)$' \
	"icx-1s: the TSC's 7 nodes each CPU's perf's, a domain's perf's over its 8 CPUs"
parity "icl-client: perf 6.1's TopdownL3 nodes within 0.05 pp" 10000 \
	--tables "$T61" --fake-tables "$T61" --fixture "$FIXTURES/icl-client" --cpuid GenuineIntel-6-7E-5 --icl \
	--metric-groups TopdownL3 $(W icl-client) --scenario "$SCEN/depth-icl.json"
parity "skx-1s (stepping 4, perf's skylakex): TopdownL3 within 0.05 pp but tma_dram_bound" 10000 \
	--tables "$T61" --fake-tables "$T61" --fixture "$FIXTURES/skx-1s" --cpuid GenuineIntel-6-55-4 \
	--weight-event CPU_CLK_UNHALTED.THREAD --metric-groups TopdownL3 --ignore dram_bound $(W skx-1s) \
	--scenario "$SCEN/depth-skx.json"
g6=$(probe skx-1s l6m.conf | sed -n 's/.* events in \([0-9]*\) groups taking turns.*/\1/p')
parity "skx-1s, levels 4 to 6 ($g6 groups): perf 6.1's TopdownL4-L6 nodes within 0.05 pp per CPU and package" 10000 \
	--topdownd-level 6 --tables "$T61" --fake-tables "$T61" --fixture "$FIXTURES/skx-1s" --cpuid GenuineIntel-6-55-4 \
	--weight-event CPU_CLK_UNHALTED.THREAD --metric-groups TopdownL4,TopdownL5,TopdownL6 \
	--warmup $((g6 + 1)) --intervals $((g6 + 5)) --scenario "$SCEN/depth-skx.json"
parity "clx-2s (stepping 7, perf's cascadelakex): TopdownL3 within 0.05 pp but tma_dram_bound, tma_lsd, tma_pmm_bound" 10000 \
	--tables "$T61" --fake-tables "$T61" --fixture "$FIXTURES/clx-2s" --cpuid GenuineIntel-6-55-7 \
	--weight-event CPU_CLK_UNHALTED.THREAD --metric-groups TopdownL3 --ignore dram_bound --ignore lsd \
	--ignore pmm_bound $(W clx-2s) --scenario "$SCEN/depth-skx.json"
for m in "srf-2s GenuineIntel-6-AF-0 sierraforest/srf-metrics.json" "grr-12 GenuineIntel-6-B6-0 grandridge/grr-metrics.json"; do
	set -- $m
	parity "$1: perf 7.2's expressions on perf's counts within 0.05 pp per CPU, core, package and host" 10000 \
		--tables "$T72" --fake-tables "$T72" --fixture "$FIXTURES/$1" --cpuid "$2" --events-from "x86/$3" \
		--ungrouped --weight-event CPU_CLK_UNHALTED.CORE --metric-groups TopdownL1,TopdownL2,TopdownL3 \
		$(W "$1") --scenario "$SCEN/depth-srf.json"
done
# The nodes model 0x55's two tables disagree on: left out, and why.
like "$(probe clx-2s l3m.conf)" "tma_dram_bound: perf's skylakex \(skx-metrics.json\) and cascadelakex \(clx-metrics.json\) differ in tma_dram_bound, and sysfs does not say which of the two this is \(perf takes it from the stepping\)" \
	"Skylake-SP / Cascade Lake: tma_dram_bound left out, and why"

# ---- 3. what it costs ----
# 42 intervals of 100 ms on the read-paced clock: the level-1/2 groups'
# running share over them (the CPU's least scheduled group's), without
# and with the depth group in their rotation.
share() { # share FIXTURE SCENARIO CONF: "running/enabled states"
	FAKEPMU_SYSFS="$FIXTURES/$1" FAKEPMU_SCENARIO="$SCEN/$2" FAKEPMU_TABLES="$T61" FAKEPMU_CLOCK_STEP=0.1 \
		LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/$3" --sysfs-root "$FIXTURES/$1" --watch --json --count 42 \
		-i 100ms 2>/dev/null | tail -1 |
		jq -r '"\(.host.running_seconds_total / .host.enabled_seconds_total * 1000 | round / 1000) \([.cpus[].state] | unique | join(",")) \([.cpus[].nodes // {} | .[] | select(. == null)] | length)"'
}
is "$(share icx-1s depth-icx.json l3.conf) $(share icx-1s depth-icx.json l3m.conf)" "0.32 monitored 0 0.24 monitored 0" \
	"Ice Lake server: the level-1/2 groups run 0.32 of the time alone, 0.24 with the depth group (3/4 of it); every CPU monitored, every node valued"
is "$(share skx-1s depth-skx.json l3.conf) $(share skx-1s depth-skx.json l3m.conf)" "0.24 monitored 0 0.2 monitored 0" \
	"Skylake-SP: 0.24 alone, 0.2 with the depth group; every CPU monitored, every node valued"
# The totals a rate() reads, on cores without a slots event (perf's slots
# are cycles times the width): each node's slots_total over the base
# slots is its value on every CPU (the base was 0 there: no window had a
# value).
cumulative() { # cumulative FIXTURE SCENARIO TABLES: "VALUES DIFFERENCE<1e-5 BASE>0"
	FAKEPMU_SYSFS="$FIXTURES/$1" FAKEPMU_SCENARIO="$SCEN/$2" FAKEPMU_TABLES="$3" FAKEPMU_CLOCK_STEP=0.1 \
		LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/l3m.conf" --sysfs-root "$FIXTURES/$1" --watch --json --count 42 \
		-i 100ms 2>/dev/null | tail -1 |
		jq -r '[.cpus[] | select(.nodes != null) | . as $c | .nodes | to_entries[] | select(.value != null) |
			[((($c.nodes_slots_total[.key] / $c.nodes_base_slots_total) - .value) | fabs), $c.nodes_base_slots_total]] |
			"\(length) \((map(.[0]) | max) < 1e-5) \((map(.[1]) | min) > 0)"'
}
is "$(cumulative skx-1s depth-skx.json "$T61")" "176 true true" \
	"Skylake-SP: increase(topdown_node_slots_total) / increase(topdown_node_base_slots_total) is each node's value (176 CPU values)"
is "$(cumulative srf-2s depth-srf.json "$T72")" "256 true true" \
	"Sierra Forest: the same (256 CPU values)"
readme=$(tr '\n' ' ' <"$ROOT/README.md" | tr -s ' ')
like "$readme" "depth_multiplex = true.* their level-1/2 groups then run 3/4 \(Ice Lake\), 4/5 \(Skylake-SP, Cascade Lake\) or 2/3 \(Crestmont\) of the time they ran" \
	"the README says what depth_multiplex costs"

# ---- 4. perf's tables as written ----
cats='^(tma_(fetch_latency|fetch_bandwidth|memory_bound|core_bound|light_operations|heavy_operations|branch_mispredicts|machine_clears|ifetch_latency|ifetch_bandwidth|resource_bound))$'
bad=$(for f in spr-2s emr-2s gnr-2s icx-1s skx-1s srf-2s; do
	"$TOOL_DIR/depth_dump" "$FIXTURES/$f" 6 | sed -n 's/^subtree \([^:]*\):.*/\1/p' | grep -vE "$cats" | sed "s/^/$f: /"
done)
is "$bad" "" "every node's subtree is a level-2 category (not perf 7.2's tma_L3_group), at level 6 on 6 models"
