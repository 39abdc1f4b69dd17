#!/bin/bash
# SPDX-License-Identifier: MIT
# Below level 2 (issue 42): perf's TopDown nodes of levels 3 and deeper on
# the counters the level-1/2 group leaves, under the fake PMU.
#   1. Every event the nodes read is encoded as perf 6.1 opens it (its
#      config and config1, perf stat -e NAME traced by the fake).
#   2. perf is the oracle: perf 6.1's -M TopdownL3 under the fake against
#      [collect] level = 3 on the same scenario, per CPU, package and host,
#      within 0.05 pp, with every CPU alike and with half of them at other
#      rates (a domain's nodes are perf's expressions on summed counts);
#      levels 4 to 6, with the nodes that read the TSC over the interval
#      (msr@tsc@, duration_time) and perf 6.1's sum of the TSC over a
#      domain's CPUs as a departure of its own; Alder Lake's P-cores by
#      perf 6.1's expressions on perf's counts; Granite Rapids without and
#      with an NFIT table (perf's #has_pmem); Emerald Rapids at levels 4-6,
#      with tma_false_sharing's event of terms of its own (perf's
#      EVENT@offcore_rsp=...@) and the nodes reading the TSC; Granite
#      Rapids at levels 4 to 6, its nodes reading a retire latency and the
#      TSC together.
#   3. Level 1 and 2 never lose: with depth on, the level-1/2 group runs
#      all the time on every CPU; /metrics' node counters give the node's
#      value over a window; the JSON document has the tree.
#   4. The PMU is shared: a CPU whose depth groups cannot run (another
#      user's pinned events hold 7 of its 8 general-purpose counters)
#      counts no node, says so, and keeps its level 1 and 2.
#   5. The drill-down ([collect] drilldown) counts each package's
#      bottleneck's subtree only and follows it when it changes: the
#      intervals it takes, exactly (the fake's read-paced clock), its values
#      the scenario's; packages that differ drill apart.
#   6. A family without nodes in perf's tables says why (--probe), and a
#      reload from level 3 to 2 and back closes and reopens the depth
#      groups without losing a descriptor.
. "$(dirname "$0")/lib.sh"

plan 69

SCEN=$ROOT/tests/scenarios
TOOL=$ROOT/tests/oracle
SPR=$FIXTURES/spr-2s
T61=$ROOT/reference/perf-tables-6.1

# ---- 1. encodings ----
# duration_time is no event (perf's tool event: nothing opened); msr@tsc@
# is the msr PMU's, which perf spells msr/tsc/.
"$TOOL_DIR/depth_dump" "$SPR" 6 | grep -vE '^(group|subtree|duration_time) ' >"$TMP/depth.txt"
n=$(wc -l <"$TMP/depth.txt")
evs=$(awk '{n = $1; if (n ~ /^(cpu|msr)@/) { sub(/@/, "/", n); sub(/@$/, "/", n) } printf "%s%s", (NR > 1 ? "," : ""), n}' "$TMP/depth.txt")
FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$SCEN/depth-spr.json" FAKEPMU_TABLES="$T61" \
	FAKEPMU_TRACE="$TMP/enc.trace" PERF_CPUID=GenuineIntel-6-8F-4 LD_PRELOAD="$FAKEPMU" \
	"$TOOL/sysns" "$SPR" perf stat -C 0 -e "$evs" -I 100 --interval-count 1 >/dev/null 2>"$TMP/enc.err"
grep '^open' "$TMP/enc.trace" | sed -E 's/.* config=([^ ]+) config1=([^ ]+) .*/\1 \2/' >"$TMP/perf-enc.txt"
diffs=$(paste -d' ' "$TMP/depth.txt" "$TMP/perf-enc.txt" | /usr/bin/python3 -c '
import sys
for line in sys.stdin:
    f = line.split()
    if len(f) != 5 or int(f[1], 16) != int(f[3], 0) or int(f[2], 16) != int(f[4], 0):
        print(line.strip())')
ok $([ "$n" -ge 80 ] && [ "$(wc -l <"$TMP/perf-enc.txt")" = "$n" ] && [ -z "$diffs" ]; echo $?) \
	"the $n events of Sapphire Rapids' nodes of levels 3 to 6: topdownd's config and config1 are what perf 6.1 opens$(printf '\n%s' "$diffs" | head -5)"

# ---- 2. perf is the oracle ----
# Sapphire Rapids for parity_ok (lib.sh): perf 6.1's tables, the fixture, the model.
P=(--tables "$T61" --fake-tables "$T61" --fixture "$SPR" --cpuid GenuineIntel-6-8F-4)
groups=$("$TOOL_DIR/depth_dump" "$SPR" 3 | grep -c '^group')
# Values once every group ran: the first rotation left out.
W=(--warmup $((groups + 1)) --intervals $((groups + 5)))
# CPUs 8-15 at other rates: every event of theirs scaled by its own factor.
jq '.cpus["8-15"] = (.cpus.default | .phases[0].events |= (to_entries | map(.value *= (1 + ((.key | length) % 7) / 5)) | from_entries))' \
	"$SCEN/depth-spr.json" >"$TMP/depth-skew.json"
for s in "$SCEN/depth-spr.json|every CPU alike" "$TMP/depth-skew.json|CPUs 8-15 at other rates"; do
	parity_ok "level 3 on spr-2s, ${s#*|}: perf 6.1's TopdownL3 nodes within 0.05 pp per CPU, package and host" \
		"${P[@]}" --metric-groups TopdownL3 --topdownd-level 3 "${W[@]}" --scenario "${s%|*}"
	n=$(awk '$1 == "cpu" {print $2}' <<<"$PARITY_OUT")
	ok $([ "${n:-0}" -ge 5000 ]; echo $?) "${s#*|}: ${n:-0} CPU values compared"
done

# The nodes that read the TSC over the interval (perf's Average_Frequency:
# msr@tsc@ / duration_time, 7 of Sapphire Rapids' at levels 4 and 5, with
# the reference cycles on fixed counter 2): perf 6.1's TopdownL4 to L6
# per CPU.  Per package and host perf 6.1 sums msr/tsc over the domain's
# CPUs against one interval's duration_time, N times a CPU's frequency;
# topdownd sums duration_time too (the domain's mean frequency): that
# departure, perf's value over N, is asserted with its N.
g6=$("$TOOL_DIR/depth_dump" "$SPR" 6 | grep -c '^group')
parity_ok "level 6 on spr-2s: perf 6.1's TopdownL4, L5 and L6 nodes within 0.05 pp per CPU, package and host, the TSC's nodes over the domain's CPUs" \
	"${P[@]}" --metric-groups TopdownL4,TopdownL5,TopdownL6 --topdownd-level 6 --tsc-departure \
	--warmup $((g6 + 1)) --intervals $((g6 + 5)) --scenario "$SCEN/depth-spr.json"
like "$(grep '^departure tsc_sum' <<<"$PARITY_OUT")" \
	'^departure tsc_sum: 7 nodes read msr@tsc@ and duration_time \(contested_accesses,data_sharing,false_sharing,l3_hit_latency,local_dram,remote_cache,remote_dram\); 112 CPU phase values compared as perf.s; host: [0-9]+ perf values divided by the domain.s CPUs \(16\); package: [0-9]+ perf values divided by the domain.s CPUs \(8\)$' \
	"the TSC's 7 nodes: each CPU's perf's; a package's perf's over its 8 CPUs, the host's over 16"

# Alder Lake's P-cores (a hybrid part: the nodes of cpu_core's table;
# perf 6.1's -M does not run on it under the fake, so perf counts the
# events and perf 6.1's own expressions, its adl-metrics.json, are
# evaluated on its counts).
ag=$("$TOOL_DIR/depth_dump" "$FIXTURES/adl-hybrid" 3 | grep -c '^group')
parity_ok "level 3 on adl-hybrid's P-cores: perf 6.1's expressions on perf's counts within 0.05 pp per CPU, their nodes per core, package and host" \
	--tables "$T61" --fake-tables "$T61" --fixture "$FIXTURES/adl-hybrid" --cpuid GenuineIntel-6-97-0 \
	--tables-fallback "$ROOT/reference/perf-tables" \
	--events-from x86/alderlake/adl-metrics.json --unit cpu_core --pmu cpu_core --cpus 0-7 --domain-nodes --ungrouped \
	--metric-groups TopdownL1,TopdownL2,TopdownL3 --topdownd-level 3 --warmup $((ag + 1)) --intervals $((ag + 5)) \
	--scenario "$SCEN/depth-adl.json"
n=$(awk '$1 == "cpu" {print $2}' <<<"$PARITY_OUT")
ok $([ "${n:-0}" -ge 15000 ]; echo $?) "adl-hybrid P-cores: ${n:-0} CPU values compared"
is "$(grep '^nodes:' <<<"$PARITY_OUT")" "nodes: 37 of 37 compared" \
	"adl-hybrid P-cores: every node of levels 1 to 3 had a value in both (those reading CPU_CLK_UNHALTED.THREAD read 0 on cpu_core under the fake before)"
# Alder Lake's E-cores (Gracemont, cpu_atom), a tree of their own beside
# the P-cores': the upstream tables' (it hangs from the level-1/2 nodes
# topdownd counts there, which follow them: hw/uarch_atom.c; perf 6.1's
# level 3 reads MEM_BOUND_STALLS_AT_RET_CORRECTION, which none of its
# files defines), counted with depth_multiplex (their level-1/2 events
# rotate in 2 groups).  perf counts the events, the upstream expressions
# are evaluated on its counts.  perf's tma_resource_bound is
# tma_backend_bound itself (an auxiliary tree): no category of topdownd's,
# its nodes compared.
printf '[collect]\nlevel = 4\ndepth_multiplex = true\n' >"$TMP/l4m.conf"
printf '[collect]\nlevel = 3\ndepth_multiplex = true\n' >"$TMP/l3m.conf"
eg=$(FAKEPMU_SYSFS="$FIXTURES/adl-hybrid" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" \
	"$TOPDOWND" -c "$TMP/l4m.conf" --probe --sysfs-root "$FIXTURES/adl-hybrid" 2>/dev/null |
	sed -n 's/^Below L2: *levels 3 to 4: \([0-9]*\) nodes from reference\/perf-tables\/x86\/alderlake\/adl-metrics.json, \([0-9]*\) events in \([0-9]*\) groups.*/\1 \2 \3/p')
is "$eg" "36 35 6" "adl-hybrid E-cores at level 4: 36 nodes, 35 events in 6 groups (--probe; the level-1/2 events their expressions read, cpu_atom@TOPDOWN_BE_BOUND.ALL@..., are the level-1/2 group's counts)"
parity_ok "levels 3 and 4 on adl-hybrid's E-cores: the upstream expressions on perf's counts within 0.05 pp per CPU, their nodes per core, package and host" \
	--tables "$ROOT/reference/perf-tables" --tables-fallback "$T61" --fixture "$FIXTURES/adl-hybrid" \
	--cpuid GenuineIntel-6-97-0 --events-from x86/alderlake/adl-metrics.json --unit cpu_atom --pmu cpu_atom \
	--cpus 8-15 --domain-nodes --ungrouped --weight-event CPU_CLK_UNHALTED.CORE \
	--metric-groups TopdownL1,TopdownL2,TopdownL3,TopdownL4 --topdownd-level 4 --topdownd-set "depth_multiplex = true" \
	--ignore resource_bound --warmup 10 --intervals 15 --scenario "$SCEN/depth-adl.json"
n=$(awk '$1 == "cpu" {print $2}' <<<"$PARITY_OUT")
ok $([ "${n:-0}" -ge 20000 ]; echo $?) "adl-hybrid E-cores: ${n:-0} CPU values compared"
is "$(grep '^nodes:' <<<"$PARITY_OUT")" "nodes: 48 of 48 compared (1 ignored)" \
	"adl-hybrid E-cores: every node of levels 1 to 4 had a value in both (resource_bound, backend_bound itself, ignored)"
# Both trees in one daemon: each CPU its core type's nodes, a package
# and the host each tree's by PMU, the totals a rate() reads.
FAKEPMU_SYSFS="$FIXTURES/adl-hybrid" FAKEPMU_SCENARIO="$SCEN/depth-adl.json" FAKEPMU_TABLES="$T61" \
	FAKEPMU_TABLES_FALLBACK="$ROOT/reference/perf-tables" FAKEPMU_CLOCK_STEP=0.1 LD_PRELOAD="$FAKEPMU" \
	"$TOPDOWND" -c "$TMP/l3m.conf" --sysfs-root "$FIXTURES/adl-hybrid" --watch --json --count 14 -i 100ms \
	2>/dev/null | tail -1 >"$TMP/hybrid.doc"
is "$(jq -c '[[.trees[] | [.pmu, (.nodes | length), .groups]], (.host.nodes_by_pmu | keys),
	([.cpus[0].nodes[] | select(. != null)] | length), ([.cpus[8].nodes[] | select(. != null)] | length),
	.cpus[0].nodes.l1_bound, .cpus[8].nodes.l1_bound, .host.nodes_by_pmu.cpu_atom.nodes.l1_bound,
	(.cpus[8] | has("nodes_by_pmu"))]' "$TMP/hybrid.doc")" \
	'[[["cpu_core",25,9],["cpu_atom",24,4]],["cpu_atom","cpu_core"],25,24,0.0944,0.0565,0.0565,false]' \
	"adl-hybrid at level 3: a tree per core type (trees[]); a CPU has its type's nodes, the host each type's (nodes_by_pmu)"
is "$(jq -r '[.cpus[8:16][] | . as $c | .nodes | to_entries[] | select(.value != null) |
	[((($c.nodes_slots_total[.key] / $c.nodes_base_slots_total) - .value) | fabs), $c.nodes_base_slots_total]] |
	"\(length) \((map(.[0]) | max) < 1e-5) \((map(.[1]) | min) > 0)"' "$TMP/hybrid.doc")" "192 true true" \
	"adl-hybrid E-cores (no slots event: 5 x cycles): each node's slots_total over the base slots is its value, on every CPU"
FAKEPMU_SYSFS="$FIXTURES/adl-hybrid" FAKEPMU_SCENARIO="$SCEN/depth-adl.json" FAKEPMU_TABLES="$T61" \
	FAKEPMU_TABLES_FALLBACK="$ROOT/reference/perf-tables" FAKEPMU_CLOCK_STEP=0.1 LD_PRELOAD="$FAKEPMU" \
	"$TOPDOWND" -c "$TMP/l3m.conf" --sysfs-root "$FIXTURES/adl-hybrid" --watch --count 14 -i 100ms \
	2>/dev/null >"$TMP/hybrid.txt"
like "$(tail -40 "$TMP/hybrid.txt" | tr '\n' '|')" "  memory_bound .*\|    cpu_core:\|      l1_bound +9\.4% .*\|    cpu_atom:\|      dram_bound .*\|  resource_bound +- +- \|    cpu_atom:\|      alloc_restriction +4\.1%" \
	"--watch: each core type's nodes under their level-2 category, named; Gracemont's resource_bound subtree under its name"

# Emerald Rapids and Granite Rapids (perf 6.1 does not know them): perf
# 7.2's nodes, perf counting the events and perf 7.2's expressions on its
# counts, the fake PMU being the hardware perf 7.2's tables describe.
# Granite Rapids' tma_dram_bound and tma_cxl_mem_bound read perf's
# #has_pmem (an NFIT table in the firmware's ACPI tables): the same
# fixture without it and with it, and the loads they count.
T72=$ROOT/reference/perf-tables-7.2
jq '.cpus.default.phases[0].events += {"MEM_LOAD_RETIRED.FB_HIT": 0.0007, "MEM_LOAD_RETIRED.L1_MISS": 0.0031,
	"MEM_LOAD_L3_MISS_RETIRED.REMOTE_DRAM": 0.00011, "MEM_LOAD_L3_MISS_RETIRED.LOCAL_DRAM": 0.00029,
	"MEM_LOAD_L3_MISS_RETIRED.REMOTE_FWD": 2e-05, "MEM_LOAD_L3_MISS_RETIRED.REMOTE_HITM": 1e-05,
	"MEM_LOAD_RETIRED.LOCAL_CXL_MEM": 3.3e-05, "MEM_LOAD_L3_MISS_RETIRED.REMOTE_CXL_MEM": 1.9e-05,
	"BR_MISP_RETIRED.COND_NTAKEN_COST": 0.00113, "BR_MISP_RETIRED.COND_TAKEN_COST": 0.00231,
	"BR_MISP_RETIRED.INDIRECT_CALL_COST": 0.00029, "BR_MISP_RETIRED.INDIRECT_COST": 0.00047,
	"BR_MISP_RETIRED.RET_COST": 0.00017}' \
	"$SCEN/depth-emr.json" >"$TMP/depth-gnr.json"
cp -r "$FIXTURES/gnr-2s" "$TMP/gnr-nfit"
mkdir -p "$TMP/gnr-nfit/firmware/acpi/tables"
: >"$TMP/gnr-nfit/firmware/acpi/tables/NFIT"
for m in "$FIXTURES/emr-2s GenuineIntel-6-CF-0 emeraldrapids/emr-metrics.json depth-emr.json Emerald_Rapids" \
	"$FIXTURES/gnr-2s GenuineIntel-6-AD-0 graniterapids/gnr-metrics.json $TMP/depth-gnr.json Granite_Rapids" \
	"$TMP/gnr-nfit GenuineIntel-6-AD-0 graniterapids/gnr-metrics.json $TMP/depth-gnr.json Granite_Rapids,_NFIT_(#has_pmem_1)"; do
	set -- $m
	g=$("$TOOL_DIR/depth_dump" "$1" 3 | grep -c '^group')
	# Granite Rapids' nodes reading a retire latency (EVENT:R): per CPU
	# perf's (the table's mean, rounded), a domain's the latency once.
	lat=; [[ $3 == graniterapids/* ]] && lat=--retire-latency-once
	parity_ok "level 3 on ${1##*/} (${5//_/ }): perf 7.2's expressions on perf's counts within 0.05 pp per CPU, core, package and host" \
		--tables "$T72" --fake-tables "$T72" --fixture "$1" --cpuid "$2" --events-from "x86/$3" $lat \
		--ungrouped --metric-groups TopdownL1,TopdownL2,TopdownL3 --topdownd-level 3 --warmup $((g + 1)) \
		--intervals $((g + 5)) --scenario "$(cd "$SCEN" && realpath "$4")"
	n=$(awk '$1 == "cpu" {print $2}' <<<"$PARITY_OUT")
	ok $([ "${n:-0}" -ge 5000 ]; echo $?) "${1##*/}: ${n:-0} CPU values compared"
	[ -n "$lat" ] || continue
	# perf's aggregation adds each CPU's read of a retire latency as it
	# adds counts (N times the latency for N CPUs, read in its source: no
	# perf here knows :R): the departure, with its size.
	like "$(grep '^departure retlat_sum' <<<"$PARITY_OUT")" "^departure retlat_sum: core: [1-9][0-9]* values .*; host: [1-9][0-9]* values .*; package: [1-9][0-9]* values " \
		"${1##*/}: a domain's nodes reading a retire latency read it once (perf's rule would differ: $(grep '^departure retlat_sum' <<<"$PARITY_OUT" | sed 's/^departure retlat_sum: //; s/ of perf.s rule (the latency times the domain.s CPUs) differ//g'))"
done
# Emerald Rapids at levels 4 to 6.  tma_false_sharing reads perf 7.2's
# OCR.DEMAND_RFO.L3_MISS@offcore_rsp\=0x103b800002@: perf's parser makes it
# that event with a term of its own, OR-ed into the event's as perf's
# util/pmu.c pmu_format_value() does for a core PMU; with the table's
# 0x3F3FC00002 that is the event's own response bits.  The nodes reading
# the core's frequency (msr@tsc@ over duration_time) are per CPU perf's,
# a domain's at its mean frequency (the tsc_sum departure, as on Sapphire
# Rapids); the scenario states the loads, snoops and reference cycles
# they read.
like "$("$TOOL_DIR/depth_dump" "$FIXTURES/emr-2s" 4 | grep '^OCR.DEMAND_RFO.L3_MISS@')" \
	'^OCR.DEMAND_RFO.L3_MISS@offcore_rsp=0x103b800002@ 0x12a 0x3f3fc00002$' \
	"Emerald Rapids' OCR.DEMAND_RFO.L3_MISS@offcore_rsp=0x103b800002@: event 0x2a umask 0x1, offcore_rsp 0x3F3FC00002 | 0x103B800002"
jq '.cpus.default.phases[0].events += {"CPU_CLK_UNHALTED.REF_TSC": 0.1043, "MEM_LOAD_RETIRED.FB_HIT": 0.0007,
	"MEM_LOAD_RETIRED.L1_MISS": 0.0031, "MEM_LOAD_RETIRED.L3_HIT": 0.00052, "MEM_LOAD_COMPLETED.L1_MISS_ANY": 0.0057,
	"MEM_LOAD_L3_HIT_RETIRED.XSNP_FWD": 3.1e-05, "MEM_LOAD_L3_HIT_RETIRED.XSNP_MISS": 1.7e-05,
	"MEM_LOAD_L3_HIT_RETIRED.XSNP_NO_FWD": 2.3e-05, "OCR.DEMAND_DATA_RD.L3_HIT.SNOOP_HITM": 1.3e-05,
	"OCR.DEMAND_DATA_RD.L3_HIT.SNOOP_HIT_WITH_FWD": 2.9e-05, "OCR.DEMAND_RFO.L3_MISS": 1.9e-05,
	"OCR.DEMAND_RFO.L3_HIT.SNOOP_HITM": 7.1e-06,
	"DTLB_LOAD_MISSES.WALK_ACTIVE": 0.0041, "DTLB_LOAD_MISSES.WALK_COMPLETED_1G": 1.1e-06,
	"DTLB_LOAD_MISSES.WALK_COMPLETED_2M_4M": 2.3e-05, "DTLB_LOAD_MISSES.WALK_COMPLETED_4K": 0.00013,
	"DTLB_STORE_MISSES.WALK_ACTIVE": 0.0013, "DTLB_STORE_MISSES.WALK_COMPLETED_1G": 7e-07,
	"DTLB_STORE_MISSES.WALK_COMPLETED_2M_4M": 1.1e-05, "DTLB_STORE_MISSES.WALK_COMPLETED_4K": 6.1e-05,
	"ITLB_MISSES.WALK_ACTIVE": 0.0009, "ITLB_MISSES.WALK_COMPLETED_2M_4M": 3.7e-06,
	"ITLB_MISSES.WALK_COMPLETED_4K": 2.9e-05, "L2_RQSTS.ALL_RFO": 0.0019, "L2_RQSTS.RFO_HIT": 0.0011,
	"MEM_INST_RETIRED.ALL_STORES": 0.021, "MEM_INST_RETIRED.LOCK_LOADS": 0.00031, "MEM_STORE_RETIRED.L2_HIT": 0.00083,
	"OFFCORE_REQUESTS_OUTSTANDING.CYCLES_WITH_DEMAND_RFO": 0.0071}' "$SCEN/depth-emr.json" >"$TMP/depth-emr4.json"
g6=$("$TOOL_DIR/depth_dump" "$FIXTURES/emr-2s" 6 | grep -c '^group')
parity_ok "levels 4 to 6 on emr-2s: perf 7.2's expressions on perf's counts within 0.05 pp per CPU, core, package and host" \
	--tables "$T72" --fake-tables "$T72" --fixture "$FIXTURES/emr-2s" --cpuid GenuineIntel-6-CF-0 \
	--events-from x86/emeraldrapids/emr-metrics.json --ungrouped --metric-groups TopdownL4,TopdownL5,TopdownL6 \
	--topdownd-level 6 --tsc-departure --warmup $((g6 + 1)) --intervals $((g6 + 5)) --scenario "$TMP/depth-emr4.json"
# Eight of them have values here (contested_accesses, data_sharing,
# false_sharing, l2_hit_latency, l3_hit_latency among them): 128 on 16
# CPUs.
like "$(grep '^departure tsc_sum' <<<"$PARITY_OUT")" \
	'^departure tsc_sum: 14 nodes read msr@tsc@ and duration_time \(.*,false_sharing,.*\); 128 CPU phase values compared as perf.s; core: [0-9]+ perf values with the TSC divided by the domain.s CPUs \(2\); host: [0-9]+ perf values with the TSC divided by the domain.s CPUs \(16\); package: [0-9]+ perf values with the TSC divided by the domain.s CPUs \(8\)$' \
	"Emerald Rapids' nodes reading the core's frequency, tma_false_sharing among them: each CPU's perf's, a domain's at its mean frequency (perf's TSC over its CPUs)"
# Granite Rapids at levels 4 to 6: its nodes reading a retire latency
# and the core's frequency together (min(EVENT:R, 74.6 *
# tma_info_system_core_frequency) in tma_data_sharing) are each CPU's
# perf's; a domain's applies both departures to the expression's inputs
# (the latency once, the TSC over the domain's CPUs).  The two nodes
# reading PEBS, which names no event, are not perf's either.
jq --slurpfile e "$TMP/depth-emr4.json" '.cpus.default.phases[0].events += $e[0].cpus.default.phases[0].events' \
	"$TMP/depth-gnr.json" >"$TMP/depth-gnr6.json"
g6=$("$TOOL_DIR/depth_dump" "$FIXTURES/gnr-2s" 6 | grep -c '^group')
parity_ok "levels 4 to 6 on gnr-2s: perf 7.2's expressions on perf's counts within 0.05 pp per CPU, core, package and host" \
	--tables "$T72" --fake-tables "$T72" --fixture "$FIXTURES/gnr-2s" --cpuid GenuineIntel-6-AD-0 \
	--events-from x86/graniterapids/gnr-metrics.json --retire-latency-once --tsc-departure --ungrouped \
	--metric-groups TopdownL4,TopdownL5,TopdownL6 --topdownd-level 6 --warmup $((g6 + 1)) --intervals $((g6 + 5)) \
	--scenario "$TMP/depth-gnr6.json"
is "$(grep '^not compared' <<<"$PARITY_OUT")" "not compared: 2 nodes read names no event file has (tma_remote_cache: PEBS; tma_remote_mem: PEBS)" \
	"gnr-2s: the nodes perf cannot count either are the two reading PEBS"
printf '[collect]\nlevel = 3\n' >"$TMP/l3.conf"
# Which way #has_pmem took: CXL memory's share of the DRAM stalls is 0
# without an NFIT table, and taken out of tma_dram_bound with one.
for f in "$FIXTURES/gnr-2s" "$TMP/gnr-nfit"; do
	env FAKEPMU_SYSFS="$f" FAKEPMU_SCENARIO="$TMP/depth-gnr.json" FAKEPMU_TABLES="$T72" FAKEPMU_CLOCK_STEP=0.1 \
		LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/l3.conf" --sysfs-root "$f" --watch --json --count 14 -i 100ms \
		2>/dev/null | tail -1 | jq -c '.host.nodes | [.cxl_mem_bound, .dram_bound]'
done >"$TMP/pmem.txt"
like "$(tr '\n' ' ' <"$TMP/pmem.txt")" '^\[0,0\.0[0-9]+\] \[0\.0[0-9]+,0\.0[0-9]+\] $' \
	"#has_pmem: tma_cxl_mem_bound 0 without an NFIT table, a share of the L3-miss stalls with one ($(tr '\n' ' ' <"$TMP/pmem.txt"))"

# Lunar Lake and Arrow Lake: perf 7.2's lunarlake and arrowlake tables
# (the same expressions), Lion Cove P-cores down to level 6 and Skymont
# E-cores at level 3, a tree each.  depth-lnl.json states a rate for
# every event their nodes read (stall cycles 0.4-4.4%, uops 1-16%, the
# rest 0.001-0.08% of the slots: no partition).  Their tables give no
# RetirementLatencyMean, so the nodes reading a retire latency (perf 7.2
# writes them cpu_core@EVENT@R there) are left out, by topdownd and by the
# oracle alike, and listed.  perf 7.2 writes the P-cores' TSC
# msr@tsc\,cpu=cpu_core@ (tma_false_sharing, through the core's
# frequency): the msr PMU's TSC on those CPUs, with a domain's TSC over its
# CPUs as elsewhere (--tsc-departure).
# Skymont's level-1/2 events leave one general-purpose counter: its 15
# events take turns one by one.
printf '[collect]\nlevel = 6\n' >"$TMP/l6p.conf"
gl=$(FAKEPMU_SYSFS="$FIXTURES/lnl-hybrid" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" FAKEPMU_TABLES="$T72" \
	"$TOPDOWND" -c "$TMP/l6p.conf" --probe --sysfs-root "$FIXTURES/lnl-hybrid" 2>/dev/null |
	sed -n 's/^Below L2: *levels 3 to [36]: \([0-9]*\) nodes from reference\/perf-tables-7.2\/x86\/lunarlake\/lnl-metrics.json, \([0-9]*\) events in \([0-9]*\) groups.*/\1 \2 \3/p' | tr '\n' ' ')
is "$gl" "79 95 13 16 15 15 " "lnl-hybrid at level 6: Lion Cove 79 nodes, 95 events in 13 groups; Skymont (level 3, its deepest) 16 nodes, 15 events in 15 groups"
parity_ok "lnl-hybrid P-cores, levels 1 to 6: perf 7.2's expressions on perf's counts within 0.05 pp per CPU, their nodes per core, package and host" \
	--tables "$T72" --fake-tables "$T72" --fixture "$FIXTURES/lnl-hybrid" --cpuid GenuineIntel-6-BD-0 \
	--events-from x86/lunarlake/lnl-metrics.json --unit cpu_core --pmu cpu_core --cpus 0-3 --domain-nodes --ungrouped \
	--metric-groups TopdownL1,TopdownL2,TopdownL3,TopdownL4,TopdownL5,TopdownL6 --topdownd-level 6 --tsc-departure \
	--warmup 15 --intervals 19 --scenario "$SCEN/depth-lnl.json"
is "$(grep -E '^nodes:' <<<"$PARITY_OUT") $(grep -c 'whose file gives no RetirementLatencyMean' <<<"$PARITY_OUT")" \
	"nodes: 91 of 91 compared 1" "lnl-hybrid P-cores: every node of levels 1 to 6 topdownd counts compared (tma_false_sharing with the P-cores' TSC among them); those reading a retire latency without a mean listed, not compared"
like "$(grep '^not compared: ' <<<"$PARITY_OUT")" '^not compared: 22 nodes read a retire latency whose file gives no RetirementLatencyMean \(tma_code_l2_hit: FRONTEND_RETIRED.L1I_MISS:R' \
	"lnl-hybrid: 22 nodes read a retire latency perf's table gives no mean for, themselves or through another"
like "$(grep '^departure tsc_sum: ' <<<"$PARITY_OUT")" '^departure tsc_sum: [0-9]+ nodes read msr@tsc@ and duration_time \([a-z_,]*false_sharing' \
	"lnl-hybrid: tma_false_sharing reads the P-cores' TSC (msr@tsc\\,cpu=cpu_core@), compared"
like "$(FAKEPMU_SYSFS="$FIXTURES/lnl-hybrid" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" FAKEPMU_TABLES="$T72" \
	"$TOPDOWND" -c "$TMP/l6p.conf" --probe --sysfs-root "$FIXTURES/lnl-hybrid" 2>/dev/null | tr -s '\n ' ' ')" \
	"tma_cond_nt_mispredicts: cpu_core@BR_MISP_RETIRED.COND_NTAKEN_COST@R is a retire latency \(perf's R modifier\) whose RetirementLatencyMean perf's table does not give" \
	"--probe says why each of them is left out"
parity_ok "lnl-hybrid E-cores, levels 1 to 3: perf 7.2's expressions on perf's counts within 0.05 pp per CPU, their nodes per core, package and host" \
	--tables "$T72" --fake-tables "$T72" --fixture "$FIXTURES/lnl-hybrid" --cpuid GenuineIntel-6-BD-0 \
	--events-from x86/lunarlake/lnl-metrics.json --unit cpu_atom --pmu cpu_atom --cpus 4-7 --domain-nodes --ungrouped \
	--weight-event CPU_CLK_UNHALTED.CORE --metric-groups TopdownL1,TopdownL2,TopdownL3 --topdownd-level 3 \
	--warmup 17 --intervals 21 --scenario "$SCEN/depth-lnl.json"
is "$(grep -E '^nodes:' <<<"$PARITY_OUT")" "nodes: 26 of 26 compared" "lnl-hybrid E-cores: every node of levels 1 to 3 compared"
jq '.cpus["8-15"] = .cpus["4-7"] | del(.cpus["4-7"])' "$SCEN/depth-lnl.json" >"$TMP/depth-arl.json"
for t in "cpu_core 0-7 8 12" "cpu_atom 8-15 17 21"; do
	set -- $t
	parity_ok "arl-hybrid $1, levels 1 to 3: perf 7.2's expressions on perf's counts within 0.05 pp per CPU, their nodes per core, package and host" \
		--tables "$T72" --fake-tables "$T72" --fixture "$FIXTURES/arl-hybrid" --cpuid GenuineIntel-6-C6-0 \
		--events-from x86/arrowlake/arl-metrics.json --unit "$1" --pmu "$1" --cpus "$2" --domain-nodes --ungrouped \
		$([ "$1" = cpu_atom ] && echo --weight-event CPU_CLK_UNHALTED.CORE) \
		--metric-groups TopdownL1,TopdownL2,TopdownL3 --topdownd-level 3 --warmup "$3" --intervals "$4" \
		--scenario "$TMP/depth-arl.json"
done

# ---- 3. the daemon's outputs ----
printf '[collect]\nlevel = 3\n' >"$TMP/l3.conf"
td_spawn env FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$SCEN/depth-spr.json" FAKEPMU_TABLES="$T61" \
	LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/l3.conf" --sysfs-root "$SPR" -l 127.0.0.1:0 -i 100ms
wait_intervals $((groups + 3))
curl -s "$TD_URL/api/v1/topdown?scope=cpu" >"$TMP/doc.json"
is "$(jq -c '[.cpus[].running_ratio] | unique' "$TMP/doc.json")" "[1]" \
	"with depth on, every CPU's level-1/2 group ran all the time"
is "$(jq -c '[.tree.level, .tree.groups, (.tree.nodes | length), .tree.nodes[0].node, .tree.nodes[0].parent, .tree.source]' "$TMP/doc.json")" \
	"[3,$groups,25,\"icache_misses\",\"fetch_latency\",\"reference/perf-tables-6.1/x86/sapphirerapids/spr-metrics.json\"]" \
	"the document's tree: level 3, $groups groups, perf's 25 nodes with their parents and source"
# tma_l1_bound = max((EXE_ACTIVITY.BOUND_ON_LOADS - MEMORY_ACTIVITY.STALLS_L1D_MISS) / CLKS, 0):
# (0.0337 - 0.0219) / 0.125 of the scenario.
near "$(jq '.host.nodes.l1_bound' "$TMP/doc.json")" 0.0944 0.0001 "host l1_bound is the scenario's 0.0944"
is "$(jq -c '[.cpus[] | .nodes | to_entries[] | select(.value == null)] | length' "$TMP/doc.json")" 0 \
	"every CPU has every node"
# The live page (the server's rendering; page.js draws the same rows):
# the level-3 nodes under the bottleneck's level-2 category, after it.
rows=$(curl -s "$TD_URL/" | grep -m1 -o '<table class="legend">.*</table>' | sed 's/<tr/\n<tr/g' |
	sed -n '/c-memory_bound l2/,/c-core_bound l2/p' | sed -E 's/.*sw c-([a-z0-9_]+) (l[23]).*class="v">([^<]*)<.*/\2 \1 \3/' | tr '\n' ';')
is "$rows" "l2 memory_bound 25.1 %;l3 l1_bound 9.4 %;l3 l2_bound 7.0 %;l3 l3_bound 4.6 %;l3 dram_bound 5.7 %;l3 pmm_bound 0.1 %;l3 store_bound 3.9 %;l2 core_bound 14.9 %;" \
	"the live page: the nodes under the host's bottleneck (memory_bound) with their values"
like "$(grep 'Started:' "$TD_LOG")" 'Started: monitoring 16 CPUs, level 3, model perf$' "the start line says level 3"
# The counters: a node's slots over the base slots, between two scrapes,
# is its value (the scenario is steady).
scrape() { curl -s "$TD_URL/metrics?granularity=system"; }
s0=$(scrape)
wait_intervals 3
s1=$(scrape)
v=$(/usr/bin/python3 -c '
import re, sys
def val(text, name):
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{") and line.split()[0] == name:
            return float(line.split()[-1])
a, b = sys.argv[1], sys.argv[2]
n = "topdown_node_slots_total{node=\"l2_bound\",level=\"3\",parent=\"memory_bound\",pmu=\"cpu\"}"
d = "topdown_node_base_slots_total{pmu=\"cpu\"}"
print("%.6f" % ((val(b, n) - val(a, n)) / (val(b, d) - val(a, d))))' "$s0" "$s1")
near "$v" 0.0704 0.0001 "increase(topdown_node_slots_total{node=l2_bound}) / increase(topdown_node_base_slots_total) is its value, 0.0704"
# Its measured seconds: the intervals its group ran (one of the $groups
# turns), whatever the window: over k intervals, between floor(k / groups)
# and ceil(k / groups) of them.
s0=$s1
wait_intervals $((2 * groups))
s1=$(scrape)
ok $(/usr/bin/python3 -c '
import math, sys
def val(text, prefix):
    for line in text.splitlines():
        if line.startswith(prefix):
            return float(line.split()[-1])
a, b, g = sys.argv[1], sys.argv[2], int(sys.argv[3])
k = val(b, "topdown_collections_total ") - val(a, "topdown_collections_total ")
secs = val(b, "topdown_node_measured_seconds_total{node=\"l1_bound\"") - val(a, "topdown_node_measured_seconds_total{node=\"l1_bound\"")
elapsed = (val(b, "topdown_enabled_seconds_total ") - val(a, "topdown_enabled_seconds_total ")) / 16
share = secs / elapsed
print("# %d intervals, l1_bound measured %.3f s of %.3f s: %.3f" % (k, secs, elapsed, share))
sys.exit(not (math.floor(k / g) / k * 0.8 <= share <= math.ceil(k / g) / k * 1.2))' "$s0" "$s1" "$groups" >"$TMP/share.txt"; echo $?) \
	"l1_bound's measured seconds are the turns of its group: $(cat "$TMP/share.txt")"

# Over a window (?window=), the host's and the packages' nodes from the
# history: what their counters gained over it.  On a scenario whose
# package 1 counts at other rates (its CPUs alternate with package 0's),
# so that each package's
# nodes are its own; once the window starts after the first rotation
# (five samples a second apart), each node's value over it is its value,
# the same as the last interval's.
td_stop
pkg1=$(grep -l '^1$' "$SPR"/devices/system/cpu/cpu*/topology/physical_package_id | sed -E 's|.*/cpu([0-9]+)/topology/.*|\1|' | sort -n | paste -sd,)
jq --arg p "$pkg1" '.cpus[$p] = (.cpus.default | .phases[0].events |= (to_entries | map(.value *= (1 + ((.key | length) % 7) / 5)) | from_entries))' \
	"$SCEN/depth-spr.json" >"$TMP/depth-pkg1.json"
td_spawn env FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$TMP/depth-pkg1.json" FAKEPMU_TABLES="$T61" \
	LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/l3.conf" --sysfs-root "$SPR" -l 127.0.0.1:0 -i 100ms
hist_ge() { [ "$(curl -s "$TD_URL/api/v1/topdown/history" | jq '.samples | length')" -ge "$1" ]; }
wait_until 60 hist_ge 5
curl -s "$TD_URL/api/v1/topdown?window=2s&scope=package" >"$TMP/win.json"
curl -s "$TD_URL/api/v1/topdown?scope=package" >"$TMP/now.json"
ok $(jq -e '(.packages[0].nodes.l1_bound - .packages[1].nodes.l1_bound | fabs) > 0.005' "$TMP/win.json" >/dev/null; echo $?) \
	"?window=2s: each package's nodes are its own (l1_bound $(jq -c '[.packages[].nodes.l1_bound]' "$TMP/win.json"))"
is "$(jq -c --slurpfile n "$TMP/now.json" '
	def vals(d): [(d.host.nodes | to_entries[]), (d.packages[] | .nodes | to_entries[])];
	vals(.) as $w | vals($n[0]) as $l
	| ([range($w | length) | select($w[.].value == null or $l[.].value == null or $w[.].key != $l[.].key
		or (($w[.].value - $l[.].value) | fabs) > 0.0005)] | length), ($w | length), (.tree.nodes | length)' \
	"$TMP/win.json" | tr '\n' ' ')" "0 75 25 " \
	"?window=2s: every node of the host and both packages has a value (75), each its last interval's within 0.0005; the tree is there"

# ---- 4. a CPU whose depth groups cannot run ----
td_stop
jq '.cpus["3"] = (.cpus.default + {"held": {"gp": 7}})' "$SCEN/depth-spr.json" >"$TMP/depth-held.json"
# On the read-paced clock: the pinned probe share.c opens every second on
# a CPU with less than the PMU (STEP_INTERVALS) takes CPU 3's counters for
# the microseconds it exists, as it would on the kernel; on the real clock
# that was 13 us of an interval (a ratio of 0.99987), when it fell in it.
# Before, CPU 3 tried its depth group first: it could not go on, and the
# kernel scheduled nothing after it until the next rotation, its level-1/2
# group running 12 % of that interval (0.12).
FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$TMP/depth-held.json" FAKEPMU_TABLES="$T61" FAKEPMU_CLOCK_STEP=0.1 \
	LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/l3.conf" --sysfs-root "$SPR" --watch --json \
	--count $((groups + 3)) -i 100ms 2>/dev/null >"$TMP/held.all"
tail -1 "$TMP/held.all" >"$TMP/held.json"
is "$(jq -c '[(.cpus[3].nodes | [.[]] | unique), .cpus[3].running_ratio, (.cpus[2].nodes.l1_bound > 0)]' "$TMP/held.json")" \
	"[[null],1,true]" "CPU 3, 7 of its counters held: no node, its level 1 and 2 whole; CPU 2's nodes go on"
is "$(jq -s -c '[.[1:][] | .cpus[3].running_ratio] | unique' "$TMP/held.all")" "[1]" \
	"CPU 3's level-1/2 group ran whole every interval: it never tried the depth groups its counters cannot hold"
is "$(jq -r .tree.reason "$TMP/held.json")" "1 CPU counted no node below level 2 in the last interval: 1 whose counters another user's pinned events hold" \
	"the tree says how many CPUs count no node, and why"
# Why each, as it changes: the first intervals (a baseline read, then the
# groups' first turns), and a flexible user wanting every counter of CPU
# 5 from 1.5 s: its depth group no longer runs whole (given up, retried
# in 60 s), then its level-1/2 groups give counters back (pmu_sharing =
# yield).
jq '.cpus["5"] = (.cpus.default + {"holders": [{"gp": 8, "pinned": false, "from": 1.5}]})' "$TMP/depth-held.json" >"$TMP/depth-held2.json"
FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$TMP/depth-held2.json" FAKEPMU_TABLES="$T61" FAKEPMU_CLOCK_STEP=0.1 \
	LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/l3.conf" --sysfs-root "$SPR" --watch --json \
	--count 24 -i 100ms 2>/dev/null | jq -r .tree.reason | uniq | sed 's/^[0-9]* CPUs* counted no node below level 2 in the last interval: //' >"$TMP/why.txt"
held="1 whose counters another user's pinned events hold"
# In this order (each line once: the intervals between depend on when
# share.c's probes and retries fall).
at() { grep -n -x -F "$1" "$TMP/why.txt" | head -1 | cut -d: -f1; }
a1=$(at "$held, 15 without level-1/2 figures (not read, or not trusted)")
a2=$(at "$held, 15 whose groups have not all had their turn yet")
a3=$(at "$held, 1 retrying their groups 60 s after they could not run whole (or be opened or switched)")
a4=$(at "$held, 1 whose level-1/2 groups gave counters back")
diag "the tree's reasons in turn: $(tr '\n' '|' <"$TMP/why.txt")"
ok $([ "${a1:-0}" = 1 ] && [ "${a2:-0}" = 2 ] && [ "${a3:-0}" -gt 2 ] && [ "${a4:-0}" -gt "${a3:-0}" ]; echo $?) \
	"the tree's reason, as it changes: the baseline read, the groups' first turns, a flexible user taking CPU 5's counters (given up, then regrouped)"

# ---- 5. the drill-down ----
# Memory bound for 3 s, then frontend bound (fetch latency).
jq '.cpus.default.phases = [(.cpus.default.phases[0] + {"seconds": 3}),
	(.cpus.default.phases[0] + {"retiring": 0.25, "bad_speculation": 0.05, "branch_mispredicts": 0.03,
	 "frontend_bound": 0.5, "backend_bound": 0.2, "fetch_latency": 0.4, "memory_bound": 0.1})]' \
	"$SCEN/depth-spr.json" >"$TMP/drill.json"
printf '[collect]\nlevel = 3\ndrilldown = true\n' >"$TMP/drill.conf"
gm=$("$TOOL_DIR/depth_dump" "$SPR" 3 | sed -n 's/^subtree tma_memory_bound: .*, \([0-9]*\) groups$/\1/p')
gf=$("$TOOL_DIR/depth_dump" "$SPR" 3 | sed -n 's/^subtree tma_fetch_latency: .*, \([0-9]*\) groups$/\1/p')
drill_run() { # drill_run SCENARIO N: N intervals of 100 ms on the read-paced clock, a line each
	FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$1" FAKEPMU_TABLES="$T61" FAKEPMU_CLOCK_STEP=0.1 \
		LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/drill.conf" --sysfs-root "$SPR" --watch --json \
		--count "$2" -i 100ms 2>/dev/null | jq -c '[.host.bottleneck, .packages[0].drilldown, .host.drilldown,
			([.host.nodes // {} | to_entries[] | select(.value != null) | .key] | sort | join(",")),
			.host.nodes.l1_bound, .host.nodes.icache_misses]'
}
drill_run "$TMP/drill.json" 45 >"$TMP/drill.out"
# Interval k covers [k - 1, k] tenths of a second of the scenario: the
# change is in interval 31.  The choice is the first interval's with
# level-2 figures (2), its values once its groups took their turns; the
# new bottleneck takes over after leading 3 intervals in a row.
first=$(grep -n 'l1_bound' "$TMP/drill.out" | head -1 | cut -d: -f1)
switch=$(grep -n '"fetch_latency","fetch_latency"' "$TMP/drill.out" | head -1 | cut -d: -f1)
follow=$(grep -n 'icache_misses' "$TMP/drill.out" | head -1 | cut -d: -f1)
is "$first $switch $follow" "$((2 + gm)) 33 $((33 + gf))" \
	"drill-down: memory_bound's $gm groups give values from interval $((2 + gm)); the bottleneck changes in 31, the drill follows in 33 (3 intervals ahead), fetch_latency's $gf groups give values from $((33 + gf))"
is "$(sed -n "$((first + 2))p;40p" "$TMP/drill.out" | jq -c '[.[3], .[4], .[5]]' | tr '\n' ' ')" \
	'["dram_bound,l1_bound,l2_bound,l3_bound,pmm_bound,store_bound",0.0944,null] ["branch_resteers,dsb_switches,icache_misses,itlb_misses,lcp,ms_switches",null,0.0328] ' \
	"drill-down: only the subtree's nodes have values, the scenario's (l1_bound 0.0944, then icache_misses 0.0328)"
# Package 1's CPUs frontend bound all along: the packages drill apart,
# the host into none.
jq '.cpus["4-7,12-15"] = (.cpus.default | .phases = [.phases[1]])' "$TMP/drill.json" >"$TMP/drill2.json"
FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$TMP/drill2.json" FAKEPMU_TABLES="$T61" FAKEPMU_CLOCK_STEP=0.1 \
	LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/drill.conf" --sysfs-root "$SPR" --watch --json --count 12 -i 100ms 2>/dev/null |
	tail -1 >"$TMP/drill2.doc"
is "$(jq -c '[.packages[].drilldown, .host.drilldown, ([.host.nodes[] | select(. != null)] | length), .packages[0].nodes.l1_bound, .packages[1].nodes.icache_misses]' "$TMP/drill2.doc")" \
	'["memory_bound","fetch_latency",null,0,0.0944,0.0328]' \
	"packages with different bottlenecks drill apart (memory_bound, fetch_latency); the host, mixed, has no node"
like "$(FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/drill.conf" --probe --sysfs-root "$SPR" 2>&1 >/dev/null)" \
	"under 6 level-2 categories, each package drilling into its bottleneck's \(1 to 4 groups" \
	"the log says what the drill-down counts"
ok $([ "$gm" -lt "$groups" ] && [ "$gf" -lt "$groups" ]; echo $?) \
	"a subtree's rotation is shorter than every node's: memory_bound $gm and fetch_latency $gf groups, $groups for all"
readme=$(tr '\n' ' ' <"$ROOT/README.md" | tr -s ' ')
like "$readme" "fewer groups take turns \($gm under memory_bound, $gf under fetch_latency on Sapphire Rapids at level 3, against $groups\).*nodes have values $gf intervals after the drill follows, $((2 + gf)) intervals after it changed" \
	"the README's drill-down figures are these"

# ---- 6. without nodes; reloads ----
probe() {
	FAKEPMU_SYSFS="$FIXTURES/$1" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" \
		"$TOPDOWND" -c "$TMP/l3.conf" --probe --sysfs-root "$FIXTURES/$1" 2>/dev/null | grep -A1 '^Below L2:'
}
like "$(probe skx-2s)" "Below L2: +level 3 requested: Skylake-SP / Cascade Lake-SP's level-1/2 events rotate in 4 groups here, and the nodes below level 2 would take running time from them \(each would run 1/5 of the time instead of 1/4\): set \[collect\] depth_multiplex = true to count them anyway; using level 2" \
	"--probe on Skylake-SP at level 3: its level-1/2 events rotate, so no node below level 2 unless asked (47-depth-rotating.t), and why"
like "$(probe neoverse-v2-64)" "Below L2: +level 3 requested: topdownd has no TopDown node below level 2 for Arm Neoverse N2 / V2 \(perf.s tables it reads define none\)" \
	"--probe on Neoverse V2 at level 3: no table of nodes, said"
# The README's table is what --probe says at levels 3 and 6.
# The tables are an argument, not a variable of the caller's: `make
# check-one T=...` exports T, the test's own path.
row() { # row FIXTURE [MULTIPLEX [NTH [TABLES]]]: "| NAME | N nodes, E events | 6: N nodes, E events | G / G |" as --probe gives it (of the NTH core PMU)
	local l3 l6 m=${2:+depth_multiplex = true} nth=${3:-1} fx=$1 tables=()
	[ -n "${4:-}" ] && tables=(FAKEPMU_TABLES="$4")
	printf '[collect]\nlevel = 3\n%s\n' "$m" >"$TMP/l3r.conf"
	printf '[collect]\nlevel = 6\n%s\n' "$m" >"$TMP/l6.conf"
	l3=$(env FAKEPMU_SYSFS="$FIXTURES/$1" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" "${tables[@]}" \
		"$TOPDOWND" -c "$TMP/l3r.conf" --probe --sysfs-root "$FIXTURES/$1" 2>"$TMP/row.err" |
		sed -n 's/.*levels 3 to 3: \([0-9]*\) nodes from .*, \([0-9]*\) events in \([0-9]*\) groups.*/\1 \2 \3/p' | sed -n "${nth}p")
	l6=$(env FAKEPMU_SYSFS="$FIXTURES/$1" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" "${tables[@]}" \
		"$TOPDOWND" -c "$TMP/l6.conf" --probe --sysfs-root "$FIXTURES/$1" 2>>"$TMP/row.err" |
		sed -n 's/.*levels 3 to \([0-9]\): \([0-9]*\) nodes from .*, \([0-9]*\) events in \([0-9]*\) groups.*/\1 \2 \3 \4/p' | sed -n "${nth}p")
	# shellcheck disable=SC2086 # the words of two lines
	set -- $l3 $l6
	if [ $# -ne 7 ]; then
		diag "--probe on $fx gave no row: $(head -c 2000 "$TMP/row.err")" >&2
		return 1
	fi
	echo "$1 nodes, $2 events | $4: $5 nodes, $6 events | $3 / $7 |"
}
want=$(printf '%s\n' "| Sapphire Rapids | $(row spr-2s)" "| Alder Lake, Raptor Lake P-cores | $(row adl-hybrid)" \
	"| Alder Lake, Raptor Lake E-cores (depth_multiplex) | $(row adl-hybrid m 2)" \
	"| Lunar Lake, Arrow Lake P-cores | $(row lnl-hybrid '' 1 "$T72")" "| Lunar Lake, Arrow Lake E-cores | $(row lnl-hybrid '' 2 "$T72")" \
	"| Emerald Rapids | $(row emr-2s)" "| Granite Rapids | $(row gnr-2s)" \
	"| Ice Lake server (depth_multiplex) | $(row icx-1s m)" "| Ice Lake client (depth_multiplex) | $(row icl-client m)" \
	"| Skylake-SP, Cascade Lake (depth_multiplex) | $(row skx-1s m)" \
	"| Sierra Forest, Grand Ridge (depth_multiplex) | $(row srf-2s m)")
is "$(grep -E '^\| (Sapphire Rapids|Alder Lake, Raptor Lake [PE]-cores|Lunar Lake, Arrow Lake [PE]-cores|Emerald Rapids|Granite Rapids|Ice Lake (server|client)|Skylake-SP, Cascade Lake|Sierra Forest, Grand Ridge)( \(depth_multiplex\))? \|' "$ROOT/README.md")" "$want" \
	"the README's table of nodes, events and groups is --probe's at levels 3 and 6"
# Every node left out is listed with its reason (before: "24 nodes left
# out, first ..."): the nodes counted and those listed are perf's nodes of
# levels 3 to 6 in its file, each once.
printf '[collect]\nlevel = 6\n' >"$TMP/l6l.conf"
for f in gnr-2s:graniterapids/gnr emr-2s:emeraldrapids/emr; do
	fx=${f%%:*} file="$ROOT/reference/perf-tables-7.2/x86/${f#*:}-metrics.json"
	out=$(FAKEPMU_SYSFS="$FIXTURES/$fx" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" \
		"$TOPDOWND" -c "$TMP/l6l.conf" --probe --sysfs-root "$FIXTURES/$fx" 2>/dev/null)
	counted=$(sed -n 's/.*levels 3 to 6: \([0-9]*\) nodes from .*/\1/p' <<<"$out")
	listed=$(sed -n '/^Left out:/,/^[A-Z]/p' <<<"$out" | grep -oE '^(Left out:)? +tma_[a-z0-9_]+:' | awk '{sub(":$", "", $NF); print $NF}' | sort)
	perfs=$(jq -r '.[] | select((.MetricGroup // "") | test("TopdownL[3-6]")) | .MetricName' "$file" | sort -u)
	nl=$(grep -c . <<<"$listed"); np=$(grep -c . <<<"$perfs")
	# Listed names that are perf's nodes, each once (a name listed twice
	# or not perf's would not be counted).
	known=$(comm -12 <(uniq <<<"$listed") <(cat <<<"$perfs") | wc -l)
	is "$known $nl $((counted + nl))" "$nl $(uniq <<<"$listed" | grep -c .) $np" \
		"--probe on $fx at level 6: $counted nodes counted and $nl listed as left out, each once, of perf's $np nodes of levels 3-6 (${f#*:}-metrics.json)"
done
like "$(tr -s '\n ' ' ' <<<"$(FAKEPMU_SYSFS="$FIXTURES/gnr-2s" FAKEPMU_SCENARIO="$SCEN/constant.json" LD_PRELOAD="$FAKEPMU" \
	"$TOPDOWND" -c "$TMP/l6l.conf" --probe --sysfs-root "$FIXTURES/gnr-2s" 2>/dev/null)")" \
	"Left out: tma_remote_cache: PEBS is not a core event topdownd counts tma_remote_mem: PEBS is not a core event topdownd counts SMT split:" \
	"... each with why: a name that is no event of the tables (perf 7.2's PEBS)"
td_stop
td_spawn env FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$SCEN/depth-spr.json" FAKEPMU_TABLES="$T61" \
	LD_PRELOAD="$FAKEPMU" "$TOPDOWND" -c "$TMP/l3.conf" --sysfs-root "$SPR" -l 127.0.0.1:0 -i 100ms
wait_intervals 3
# The perf events' descriptors (not HTTP's, which come and go): the fake
# PMU's are /dev/null's, the kernel's perf_event's.
perf_fds() { find /proc/"$TD_PID"/fd \( -lname /dev/null -o -lname 'anon_inode:*perf_event*' \) 2>/dev/null | wc -l; }
fds3=$(perf_fds)
printf '[collect]\nlevel = 2\n' >"$TMP/l3.conf"
td_reload
wait_intervals 2
fds2=$(perf_fds)
is "$(curl -s "$TD_URL/api/v1/topdown" | jq -c '[has("tree"), (.host | has("nodes"))]')" "[false,false]" \
	"reloaded to level 2: no tree, no nodes"
printf '[collect]\nlevel = 3\n' >"$TMP/l3.conf"
td_reload
wait_intervals $((groups + 3))
is "$(perf_fds) $(curl -s "$TD_URL/api/v1/topdown" | jq -c '[.tree.level, (.host.nodes.l1_bound > 0)]')" \
	"$fds3 [3,true]" "back to level 3: the nodes again, with the perf descriptors of the first start ($fds3; $fds2 at level 2)"
td_stop

done_testing
