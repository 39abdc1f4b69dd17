#!/bin/bash
# SPDX-License-Identifier: MIT
# perf is the oracle.  Linux perf (Debian's linux-perf) runs under the fake
# PMU in a private mount namespace where the fixture stands in for sysfs,
# with PERF_CPUID set to the fixture's model; topdownd runs --watch --json
# on the same fixture and scenario (some cases again through
# /api/v1/topdown and /metrics).  Every tma_* value perf gives is
# compared per CPU, per socket and for the host, within 0.05 percentage
# points (tests/oracle/parity.py).  The host is compared with perf's
# --per-socket rule (each CPU's count scaled by its own times, summed over
# every socket, perf's expressions on the sum), as topdownd computes it;
# perf -a scales counts summed over the CPUs by times summed over them
# (util/stat.c, AGGR_GLOBAL): with every CPU multiplexed alike the two
# rules coincide and perf -a must agree within the tolerance; with CPUs
# multiplexed unevenly perf -a leans to the CPUs that ran more, the
# "global_scaling" departure, whose size is printed (1.8 pp in the skx case
# below).  Both tools' fake PMUs keep a read-paced clock
# (FAKEPMU_CLOCK_STEP): the time moves only at reads, a counter's k-th
# read seeing k intervals, so every read of an interval sees the same
# instant and each tool's interval k spans exactly [k, k+1] intervals of
# the scenario: a loaded machine delaying a tool's reads (~0.1-0.2 pp seen
# on ungrouped events when perf's clock moved with the wall; a phases case
# failed once in CI when perf's clock was moved by a thread of the oracle
# and topdownd's intervals placed by the wall clock) does not enter the
# figures.  The /api and /metrics cases run topdownd on the
# real clock, on scenarios without phases.
#
#   spr-2s, icx-1s: perf stat -M TopdownL1,TopdownL2 (icx: TopdownL1 with
#     the PERF_METRICS scenarios, both levels with parity-icl).
#   skx-2s, clx-2s, icl-client: perf stat -M TopdownL1,TopdownL2.
#   srf-2s, grr-12, adl-hybrid E-cores: perf counts ungrouped (more events than
#     counters), the upstream table's expressions are evaluated.  For phase
#     changes perf's four rotating slots groups (-M TopdownL1,TopdownL2) and
#     one group counted with -e and evaluated with perf's own expressions
#     are both compared.
#   adl-hybrid (P-cores): perf 6.1 crashes on -M for hybrid parts; perf
#     counts the cpu_core group and its own expressions are evaluated.
#   emr-2s, gnr-2s, genoa-2s (Zen 4), turin-1s (Zen 5): perf 6.1 does
#     not know them; perf counts, and the expressions of perf's table
#     files are evaluated.
#
# Scenarios (tests/scenarios/parity-*.json): mixed (halted CPUs, rates
# and fractions differing by CPU, refinement events), multiplexed (every
# CPU runs half the time), clamps (frontend below 0 in perf, Ice Lake's
# total above 100 %), phases (three phases of 2 s); and, made here from
# them, counts that do not partition the slots, as independently counted
# events on hardware seldom do: level-1 sums of 1.1 and 0.9, a category
# at 0, children above their parent, a ratio whose denominator is 0, an
# SMT sibling with a different load.  perf's values are compared raw;
# where perf prints a value below 0, or none, topdownd's documented
# departure (0) is asserted on its own, with its count and size, and its
# topdown_departures_total must have counted it (parity.py).
. "$(dirname "$0")/lib.sh"

command -v perf >/dev/null || missing_all "perf is not installed (make deps installs linux-perf)"
[ "$(id -u)" -eq 0 ] || missing_all "needs root for a private mount namespace (CI runs as root)"
unshare --mount --propagation private true 2>/dev/null ||
	missing_all "unshare --mount is not permitted here"

TOOL=$ROOT/tests/oracle
SCEN=$ROOT/tests/scenarios
PERF_TABLES=${PERF_TABLES:-$ROOT/reference/perf-tables}
# pmu_sharing = share: a scenario's "running" below 1 is another user's
# events rotating with topdownd's; by default (yield) topdownd would give
# its general-purpose counters back to them (45-shared-pmu.t), here it
# keeps them and is scaled as perf is, which is what is compared.
P=(/usr/bin/python3 "$TOOL/parity.py" --topdownd "$TOPDOWND" --fakepmu "$FAKEPMU"
   --sysns "$TOOL/sysns" --tables "$PERF_TABLES" --topdownd-sharing share)

# name|fixture|options...
cases=()
# General-purpose counters (issue 17).  The fake PMU takes events perf's
# 6.1 files have and the upstream copy lacks from reference/perf-tables-6.1
# (--tables-fallback).  Packages and the host are perf's --per-socket and
# -a figures (the expressions on summed counts), ratio children included.
F61="--tables-fallback $ROOT/reference/perf-tables-6.1"
for s in skx skx-multiplexed; do
	cases+=("skx-2s $s (Skylake-SP, SMT, AnyThread)|skx-2s|--cpuid GenuineIntel-6-55-4 --weight-event CPU_CLK_UNHALTED.THREAD_ANY $F61 --intervals 3 --scenario $SCEN/parity-$s.json")
	cases+=("clx-2s $s (Cascade Lake-SP, SMT off)|clx-2s|--cpuid GenuineIntel-6-55-7 --weight-event CPU_CLK_UNHALTED.THREAD $F61 --intervals 3 --scenario $SCEN/parity-$s.json")
done
for s in icl icl-multiplexed; do
	cases+=("icx-1s $s levels 1-2 by perf -M|icx-1s|--cpuid GenuineIntel-6-6A-0 --icl --weight-event TOPDOWN.SLOTS $F61 --intervals 3 --scenario $SCEN/parity-$s.json")
	cases+=("icl-client $s levels 1-2 by perf -M|icl-client|--cpuid GenuineIntel-6-7E-5 --icl --weight-event TOPDOWN.SLOTS $F61 --intervals 3 --scenario $SCEN/parity-$s.json")
done
for s in srf srf-multiplexed; do
	cases+=("srf-2s $s (Crestmont; perf 6.1 does not know it: its table's expressions)|srf-2s|--cpuid GenuineIntel-6-AF-0 --ungrouped --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/sierraforest/srf-metrics.json --intervals 3 --scenario $SCEN/parity-$s.json")
done
for s in grr grr-multiplexed; do
	cases+=("grr-12 $s (Grand Ridge, Crestmont: its own table's expressions)|grr-12|--cpuid GenuineIntel-6-B6-0 --ungrouped --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/grandridge/grr-metrics.json --intervals 3 --scenario $SCEN/parity-$s.json")
done
for s in hybrid hybrid-multiplexed; do
	cases+=("adl-hybrid E-cores $s (Gracemont: the upstream table's expressions)|adl-hybrid|--cpuid GenuineIntel-6-97-0 --ungrouped --ignore resource_bound --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/alderlake/adl-metrics.json --table-dir x86/alderlake --unit cpu_atom --pmu cpu_atom --cpus 8-15 $F61 --intervals 3 --scenario $SCEN/parity-$s.json")
	cases+=("adl-hybrid P-cores $s, E-cores counting beside them|adl-hybrid|--cpuid GenuineIntel-6-97-0 --events-from perf --table-dir x86/alderlake --unit cpu_core --pmu cpu_core --cpus 0-7 $F61 --intervals 3 --scenario $SCEN/parity-$s.json")
done
# AMD (issue 13): perf 6.1 knows neither Zen 4's nor Zen 5's PipelineL1/L2;
# perf counts the raw events ungrouped and the expressions of perf's
# upstream pipeline.json are evaluated on its counts.
Z="--ungrouped --weight-event ls_not_halted_cyc --intervals 3"
for s in zen4 zen4-multiplexed; do
	cases+=("genoa-2s $s (Zen 4, SMT; perf's amdzen4 expressions)|genoa-2s|--cpuid AuthenticAMD-25-11-1 --events-from x86/amdzen4/pipeline.json $Z --scenario $SCEN/parity-$s.json")
done
for s in zen5 zen5-multiplexed; do
	cases+=("turin-1s $s (Zen 5, SMT; perf's amdzen5 expressions)|turin-1s|--cpuid AuthenticAMD-26-2-0 --events-from x86/amdzen5/pipeline.json $Z --scenario $SCEN/parity-$s.json")
done
# Zen 6 (family 0x1A, model 0x50): perf 7.2's tables, the fake PMU the
# hardware they describe.
T72=$ROOT/reference/perf-tables-7.2
for s in zen6 zen6-multiplexed; do
	cases+=("zen6-1s $s (Zen 6, SMT; perf 7.2's amdzen6 expressions, bp_fe_redir.resync)|zen6-1s|--cpuid AuthenticAMD-26-50-0 --tables $T72 --fake-tables $T72 --events-from x86/amdzen6/pipeline.json $Z --scenario $SCEN/parity-$s.json")
done
# A Zen 6 virtual machine (EPYC Venice as clouds sell it): 6 counters, and
# 4 where the hypervisor does not pass PerfCtrExtCore.
jq 'del(.cpus["8-15"])' "$SCEN/parity-zen6.json" >"$TMP/zen6-guest.json"
jq 'del(.cpus["8-15"]) | .gp_counters = 4' "$SCEN/parity-zen6-multiplexed.json" >"$TMP/zen6-guest-4.json"
cases+=("zen6-guest (Zen 6 under KVM, 6 counters; perf 7.2's amdzen6 expressions)|zen6-guest|--cpuid AuthenticAMD-26-50-0 --tables $T72 --fake-tables $T72 --events-from x86/amdzen6/pipeline.json $Z --scenario $TMP/zen6-guest.json")
cases+=("zen6-guest, 4 counters (no PerfCtrExtCore), half the time running|zen6-guest|--cpuid AuthenticAMD-26-50-0 --tables $T72 --fake-tables $T72 --events-from x86/amdzen6/pipeline.json $Z --scenario $TMP/zen6-guest-4.json")
# Lunar Lake and Arrow Lake (issue 44; perf 6.1 knows neither): perf 7.2's
# tables, the fake PMU the hardware they describe.  P-cores (Lion Cove):
# the PERF_METRICS group, led by slots as perf leads it.  E-cores
# (Skymont): perf counts its tables' events, TOPDOWN_RETIRING.ALL and
# TOPDOWN_FE_BOUND.ALL under their fixed counters' pseudo-encodings;
# topdownd counts them as the kernel's cpu_atom topdown-retiring and
# topdown-fe-bound (the codes Skymont's constraints put on fixed counters
# 6 and 5), the same counts in the scenario as on hardware.  Arrow Lake's
# E-cores are CPUs 8-15 of its fixture.
jq '.cpus["8-11"] = .cpus["4-5"] | .cpus["12-15"] = .cpus["6-7"] | del(.cpus["4-5"], .cpus["6-7"])' \
	"$SCEN/parity-lnl.json" >"$TMP/arl.json"
for h in "lnl-hybrid lunarlake lnl BD 0-3 4-7 $SCEN/parity-lnl.json" "arl-hybrid arrowlake arl C6 0-7 8-15 $TMP/arl.json"; do
	set -- $h
	cases+=("$1 P-cores (Lion Cove; perf 7.2's $2 TopdownL1 and L2)|$1|--cpuid GenuineIntel-6-$4-0 --tables $T72 --fake-tables $T72 --events-from x86/$2/$3-metrics.json --table-dir x86/$2 --unit cpu_core --pmu cpu_core --cpus $5 --intervals 3 --scenario $7")
	cases+=("$1 E-cores (Skymont; perf 7.2's $2 TopdownL1 and L2)|$1|--cpuid GenuineIntel-6-$4-0 --tables $T72 --fake-tables $T72 --ungrouped --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/$2/$3-metrics.json --table-dir x86/$2 --unit cpu_atom --pmu cpu_atom --cpus $6 --intervals 3 --scenario $7")
done
# A Zen 4 KVM guest (issue 32): 8 vCPUs, the host's 6 core counters, and
# the same guest where the hypervisor does not pass PerfCtrExtCore: the
# kernel then keeps the 4 legacy counters (arch/x86/events/amd/core.c,
# amd_core_pmu_init), so level 2's 12 events rotate in 3 groups.
jq 'del(.cpus["8-15"])' "$SCEN/parity-zen4.json" >"$TMP/zen4-guest.json"
jq 'del(.cpus["8-15"]) | .gp_counters = 4' "$SCEN/parity-zen4-multiplexed.json" >"$TMP/zen4-guest-4.json"
cases+=("genoa-guest (Zen 4 under KVM, 6 counters; perf's amdzen4 expressions)|genoa-guest|--cpuid AuthenticAMD-25-11-1 --events-from x86/amdzen4/pipeline.json $Z --scenario $TMP/zen4-guest.json")
cases+=("genoa-guest, 4 counters (no PerfCtrExtCore), half the time running|genoa-guest|--cpuid AuthenticAMD-25-11-1 --events-from x86/amdzen4/pipeline.json $Z --scenario $TMP/zen4-guest-4.json")
# Arm Neoverse (issue 13): perf 6.1 x86 knows no arm64 tables; it counts
# the PMUv3 events on armv8_pmuv3_0 and the expressions of perf's arm64
# files (the core's overrides of sbsa.json) are evaluated with the
# fixture's #slots and MIDR.
A="--ungrouped --weight-event CPU_CYCLES --pmu armv8_pmuv3_0 --intervals 3"
for s in neoverse-v2 neoverse-v2-multiplexed; do
	cases+=("neoverse-v2-64 $s (Neoverse V2, 8 slots)|neoverse-v2-64|--cpuid 0x00000000410fd4f1 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A --scenario $SCEN/parity-$s.json")
done
cases+=("neoverse-n2-8 (N2 r0p0, 5 slots, perf's stall-slot fix)|neoverse-n2-8|--cpuid 0x00000000410fd490 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A --scenario $SCEN/parity-neoverse-n2.json")
cases+=("neoverse-v1-16 (Neoverse V1)|neoverse-v1-16|--cpuid 0x00000000411fd401 --events-from arm64/arm/neoverse-v1/metrics.json $A --scenario $SCEN/parity-neoverse-v1.json")
# Neoverse V3 and N3: perf 7.2's tables (their frontend and bad
# speculation over the core's own width, with STALL_FRONTEND_FLUSH), and
# an N3 guest (caps/slots 0: #slots 5 from Arm's telemetry specification).
cases+=("neoverse-v3-16 (Neoverse V3, 10 slots; perf 7.2)|neoverse-v3-16|--cpuid 0x00000000410fd830 --tables $T72 --fake-tables $T72 --events-from arm64/arm/neoverse-v3/metrics.json $A --scenario $SCEN/parity-neoverse-v3n3.json")
cases+=("neoverse-n3-16 (Neoverse N3, 5 slots; perf 7.2)|neoverse-n3-16|--cpuid 0x00000000410fd8e0 --tables $T72 --fake-tables $T72 --events-from arm64/arm/neoverse-n3/metrics.json $A --scenario $SCEN/parity-neoverse-v3n3.json")
# AmpereOne and AmpereOne M: perf 7.2's own TopdownL1 (retired_fraction,
# slots_lost_misspeculation_fraction, sbsa.json's backend_bound, frontend
# bound the rest) and TopdownL2 (parity.py's AMPERE_NAMES: which of
# topdownd's categories each is), on the fixture's caps/slots; CPU 3
# without flushes (perf has no branch_mispredict there), CPUs 4-7 with
# more mispredicted branches than flushes and more backend memory stall
# cycles than backend-bound slots (perf's values below 0).
for a in "ampereone-16 0x00000000c00fac30 ampereone" "ampereonex-16 0x00000000c00fac40 ampereonex"; do
	set -- $a
	cases+=("$1 (perf 7.2's $3 TopdownL1 and L2)|$1|--cpuid $2 --tables $T72 --fake-tables $T72 --events-from arm64/ampere/$3/metrics.json $A --scenario $SCEN/parity-ampereone.json")
done
# NVIDIA Olympus (Vera): perf 7.2's nvidia/t410 TopdownL1 over its counted
# CPU_SLOT, 8 cores of 2 threads (perf's --per-core sums both), and its
# SMT metrics (--smt-mode: cpu_cycles_fraction_in_st_mode, from CPU_SLOT
# over CPU_CYCLES: 0.8002 on most CPUs, 0.3012 on CPUs 4-7, so that cores
# 4-7 mix both).
cases+=("nvidia-t410-16 (NVIDIA Olympus, SMT; perf 7.2's t410 TopdownL1 over CPU_SLOT and SMT metrics)|nvidia-t410-16|--cpuid 0x000000004e0f0100 --tables $T72 --fake-tables $T72 --events-from arm64/nvidia/t410/metrics.json --ungrouped --weight-event CPU_SLOT --pmu armv8_pmuv3_0 --intervals 3 --smt-mode --scenario $SCEN/parity-nvidia-t410.json")
cases+=("neoverse-n3-guest (Neoverse N3 under KVM, caps/slots 0; #slots 5 from Arm's telemetry specification)|neoverse-n3-guest|--cpuid 0x00000000410fd8e0 --tables $T72 --fake-tables $T72 --events-from arm64/arm/neoverse-n3/metrics.json $A --scenario $TMP/nv3n3-8cpus.json --slots-from $ROOT/reference/arm-telemetry/neoverse-n3.json")
# KVM guests (issue 32): caps/slots reads 0, so perf's #slots is 0 and its
# TopdownL1 divides by it; the reference is perf's expressions with the
# width Arm publishes for the part (reference/arm-telemetry), topdownd's
# own table of those widths being checked against the same files by
# 12-uarch-tables.t.
jq 'del(.cpus["9"])' "$SCEN/parity-neoverse-v2.json" >"$TMP/nv2-8cpus.json"
jq 'del(.cpus["9"])' "$SCEN/parity-neoverse-v3n3.json" >"$TMP/nv3n3-8cpus.json"
# A Sapphire Rapids KVM guest (no PERF_METRICS): perf counts the events of
# Intel's alternate TMA formulas (reference/perfspect, made a perf metrics
# table by tests/oracle/perfspect.py) and the formulas are evaluated on
# its counts; CPUs 4-7 over-fill the slots.
/usr/bin/python3 "$TOOL/perfspect.py" "$ROOT/reference/perfspect/spr_alt_tma_metrics.json" "$TMP/spr-alt-perf.json"
cases+=("spr-guest (Sapphire Rapids under KVM, no PERF_METRICS; Intel's alternate TMA formulas)|spr-guest|--cpuid GenuineIntel-6-8F-4 --events-from $TMP/spr-alt-perf.json --table-dir x86/sapphirerapids --ungrouped --weight-event TOPDOWN.SLOTS_P --intervals 3 --scenario $SCEN/parity-spr-guest.json")
# The same guest given 4 counters by its hypervisor: the 10 events rotate.
jq '.gp_counters = 4' "$SCEN/parity-spr-guest.json" >"$TMP/spr-guest-4.json"
cases+=("spr-guest, 4 counters (rotating groups)|spr-guest|--cpuid GenuineIntel-6-8F-4 --events-from $TMP/spr-alt-perf.json --table-dir x86/sapphirerapids --ungrouped --weight-event TOPDOWN.SLOTS_P --intervals 3 --scenario $TMP/spr-guest-4.json")
# Emerald Rapids and Granite Rapids guests: PerfSpect's nofixedtma
# formulas (the same tree), events from each model's perf tables.
for g in "emr emeraldrapids CF Emerald" "gnr graniterapids AD Granite"; do
	set -- $g
	/usr/bin/python3 "$TOOL/perfspect.py" "$ROOT/reference/perfspect/$1_nofixedtma.json" "$TMP/$1-alt-perf.json"
	cases+=("$1-guest ($4 Rapids under KVM, no PERF_METRICS; PerfSpect's nofixedtma formulas)|$1-guest|--cpuid GenuineIntel-6-$3-0 --events-from $TMP/$1-alt-perf.json --table-dir x86/$2 --ungrouped --weight-event TOPDOWN.SLOTS_P --intervals 3 --scenario $SCEN/parity-spr-guest.json")
done
/usr/bin/python3 "$TOOL/perfspect.py" "$ROOT/reference/perfspect/icx_alt_tma_metrics.json" "$TMP/icx-alt-perf.json"
cases+=("icx-guest (Ice Lake server under KVM, no PERF_METRICS; Intel's alternate TMA formulas, 19 events in 3 rotating groups)|icx-guest|--cpuid GenuineIntel-6-6A-0 --events-from $TMP/icx-alt-perf.json --table-dir x86/icelakex $F61 --ungrouped --weight-event TOPDOWN.SLOTS_P --intervals 3 --scenario $SCEN/parity-icx-guest.json")
# A Clearwater Forest KVM guest (a model without tables): Intel's
# architectural TopDown events, which its kernel shows as topdown-*; perf
# counts them, and perf's own PERF_METRICS level 1 (spr-metrics.json, its
# frontend's Golden Cove refinement term taken off: tests/oracle/
# archmetrics.py) is evaluated on its counts; then with 3 counters for the
# 5 events (rotating).
/usr/bin/python3 "$TOOL/archmetrics.py" "$PERF_TABLES/x86/sapphirerapids/spr-metrics.json" "$TMP/arch-metrics.json"
jq '.gp_counters = 3' "$SCEN/parity-cwf-guest.json" >"$TMP/cwf-guest-3.json"
for s in "$SCEN/parity-cwf-guest.json|8 counters" "$TMP/cwf-guest-3.json|3 counters, rotating"; do
	cases+=("cwf-guest (Clearwater Forest under KVM, architectural TopDown events, ${s#*|})|cwf-guest|--cpuid GenuineIntel-6-DD-0 --events-from $TMP/arch-metrics.json --table-dir x86/clearwaterforest --ungrouped --weight-event topdown-retiring --intervals 3 --scenario ${s%|*}")
done
cases+=("graviton3-guest (Neoverse V1 under KVM, caps/slots 0; #slots 8 from Arm's telemetry specification)|graviton3-guest|--cpuid 0x00000000411fd401 --events-from arm64/arm/neoverse-v1/metrics.json $A --scenario $SCEN/parity-neoverse-v1.json --slots-from $ROOT/reference/arm-telemetry/neoverse-v1.json")
cases+=("graviton4-guest (Neoverse V2 under KVM, caps/slots 0; #slots 8 from Arm's telemetry specification)|graviton4-guest|--cpuid 0x00000000410fd4f1 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A --scenario $TMP/nv2-8cpus.json --slots-from $ROOT/reference/arm-telemetry/neoverse-v2.json")
for s in mixed multiplexed clamps; do
	cases+=("spr-2s $s|spr-2s|--cpuid GenuineIntel-6-8F-4 --intervals 3 --scenario $SCEN/parity-$s.json")
	cases+=("icx-1s $s|icx-1s|--cpuid GenuineIntel-6-6A-0 --icl --metric-groups TopdownL1 --intervals 3 --scenario $SCEN/parity-$s.json")
	cases+=("adl-hybrid P-cores $s|adl-hybrid|--cpuid GenuineIntel-6-97-0 --events-from perf --table-dir x86/alderlake --unit cpu_core --pmu cpu_core --cpus 0-7 --intervals 3 --scenario $SCEN/parity-$s.json")
	cases+=("emr-2s $s|emr-2s|--cpuid GenuineIntel-6-CF-0 --events-from x86/emeraldrapids/emr-metrics.json --intervals 3 --scenario $SCEN/parity-$s.json")
	cases+=("gnr-2s $s|gnr-2s|--cpuid GenuineIntel-6-AD-0 --events-from x86/graniterapids/gnr-metrics.json --intervals 3 --scenario $SCEN/parity-$s.json")
done
# Counts that do not partition the slots.  skew NAME SOURCE JQ [CPU JQ]:
# scenario NAME is SOURCE with JQ applied to the default phase's events
# (and, with CPU, that CPU given its own load: JQ on a copy of them).
skew() {
	local name=$1 src=$2 f=$3 cpu=${4:-} g=${5:-.}
	jq --arg cpu "$cpu" "(.cpus.default.phases[0].events |= ($f))
		| if \$cpu == \"\" then . else .cpus[\$cpu] = (.cpus.default | .phases[0].events |= ($f | $g)) end" \
		"$SCEN/parity-$src.json" >"$TMP/np-$name.json"
}
np() { echo "--scenario $TMP/np-$1.json"; }
skew zen4-110 zen4 '.["de_src_op_disp.all"] += 0.1'
skew zen4-090 zen4 '.["de_no_dispatch_per_slot.backend_stalls"] -= 0.1 | .["de_no_dispatch_per_slot.smt_contention"] = 0'
skew zen4-mux-neg zen4-multiplexed '.["ex_ret_ops"] = 0.45'
skew zen5-110 zen5 '.["de_src_op_disp.all"] += 0.1 | .["ex_ret_brn_misp"] = 0 | .["bp_redirects.resync"] = 0'
skew srf-110 srf '.["TOPDOWN_BE_BOUND.ALL_P"] += 0.1 | .["TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH"] = 0.12 | .["TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS"] = 0'
skew srf-mux-090 srf-multiplexed '.["TOPDOWN_FE_BOUND.ALL_P"] -= 0.1 | .["TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS"] = 0.4'
skew grr-110 grr '.["TOPDOWN_RETIRING.ALL_P"] += 0.1'
jq '.cpus["8-11"].phases[0].events |= (.["TOPDOWN_BE_BOUND.ALL"] += 0.15 | .["TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS"] = 0 | .["TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH"] = 0.1)' \
	"$SCEN/parity-hybrid.json" >"$TMP/np-hybrid-atom.json"
skew skx-fe skx '.["IDQ_UOPS_NOT_DELIVERED.CORE"] += 0.3' 8 '.["UOPS_ISSUED.ANY"] = 0.1'
skew skx-nobr skx '.["BR_MISP_RETIRED.ALL_BRANCHES"] = 0 | .["MACHINE_CLEARS.COUNT"] = 0 | .["CYCLE_ACTIVITY.STALLS_MEM_ANY"] = 0.2'
skew icl-nobr icl '.["BR_MISP_RETIRED.ALL_BRANCHES"] = 0 | .["MACHINE_CLEARS.COUNT"] = 0 | .["IDQ.MITE_UOPS"] = 0'
skew nv2-110 neoverse-v2 '.["STALL_SLOT_BACKEND"] += 0.1'
skew nv2-mux-neg neoverse-v2-multiplexed '.["OP_RETIRED"] = 0.55 | .["STALL_SLOT_FRONTEND"] -= 0.1'
skew nn2-090 neoverse-n2 '.["STALL_SLOT_BACKEND"] -= 0.1'
# CPUs multiplexed unevenly: 8-15 counted a quarter of the time, 0-7 half,
# and loaded differently.  perf -a's host leans to the CPUs that ran more
# (its global scaling): reported, the per-socket rule compared.
jq '.cpus["8-15"] = (.cpus.default | .running = 0.25 | .phases[0].events["UOPS_ISSUED.ANY"] *= 0.8
	| .phases[0].events["CYCLE_ACTIVITY.STALLS_MEM_ANY"] *= 1.5)' "$SCEN/parity-skx-multiplexed.json" >"$TMP/np-skx-uneven.json"
jq '.cpus["8-15"].running = 0.25' "$SCEN/parity-zen4-multiplexed.json" >"$TMP/np-zen4-uneven.json"
cases+=("skx-2s, CPUs 8-15 multiplexed a quarter of the time, 0-7 half, loaded differently|skx-2s|--cpuid GenuineIntel-6-55-4 --weight-event CPU_CLK_UNHALTED.THREAD_ANY $F61 --intervals 3 --uneven-multiplexing $(np skx-uneven)")
cases+=("genoa-2s, SMT siblings 8-15 multiplexed a quarter of the time, 0-7 half|genoa-2s|--cpuid AuthenticAMD-25-11-1 --events-from x86/amdzen4/pipeline.json $Z $(np zen4-uneven)")
cases+=("genoa-2s, level 1 sums to 1.1|genoa-2s|--cpuid AuthenticAMD-25-11-1 --events-from x86/amdzen4/pipeline.json $Z $(np zen4-110)")
cases+=("genoa-2s, level 1 sums to 0.9, smt_contention 0|genoa-2s|--cpuid AuthenticAMD-25-11-1 --events-from x86/amdzen4/pipeline.json $Z $(np zen4-090)")
cases+=("genoa-2s multiplexed, more ops retired than dispatched (each CPU 0-7 and its sibling 8-15 loaded differently)|genoa-2s|--cpuid AuthenticAMD-25-11-1 --events-from x86/amdzen4/pipeline.json $Z $(np zen4-mux-neg)")
cases+=("turin-1s, level 1 sums to 1.1, no mispredicts nor resyncs|turin-1s|--cpuid AuthenticAMD-26-2-0 --events-from x86/amdzen5/pipeline.json $Z $(np zen5-110)")
cases+=("srf-2s, level 1 sums to 1.1, children above frontend_bound, machine clears 0|srf-2s|--cpuid GenuineIntel-6-AF-0 --ungrouped --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/sierraforest/srf-metrics.json --intervals 3 $(np srf-110)")
cases+=("srf-2s multiplexed, level 1 sums to 0.9, core_bound above backend_bound|srf-2s|--cpuid GenuineIntel-6-AF-0 --ungrouped --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/sierraforest/srf-metrics.json --intervals 3 $(np srf-mux-090)")
cases+=("grr-12, level 1 sums to 1.1|grr-12|--cpuid GenuineIntel-6-B6-0 --ungrouped --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/grandridge/grr-metrics.json --intervals 3 $(np grr-110)")
cases+=("adl-hybrid E-cores, bad speculation below 0, machine clears 0|adl-hybrid|--cpuid GenuineIntel-6-97-0 --ungrouped --ignore resource_bound --weight-event CPU_CLK_UNHALTED.CORE --events-from x86/alderlake/adl-metrics.json --table-dir x86/alderlake --unit cpu_atom --pmu cpu_atom --cpus 8-15 $F61 --intervals 3 $(np hybrid-atom)")
cases+=("skx-2s, frontend_bound 0.3 more, CPU 8 (CPU 0's sibling) issuing less|skx-2s|--cpuid GenuineIntel-6-55-4 --weight-event CPU_CLK_UNHALTED.THREAD_ANY $F61 --intervals 3 $(np skx-fe)")
cases+=("clx-2s, no branch mispredicts nor machine clears, memory stalls above backend|clx-2s|--cpuid GenuineIntel-6-55-7 --weight-event CPU_CLK_UNHALTED.THREAD $F61 --intervals 3 $(np skx-nobr)")
cases+=("icx-1s level 2, no mispredicts nor clears, no MITE uops|icx-1s|--cpuid GenuineIntel-6-6A-0 --icl --weight-event TOPDOWN.SLOTS $F61 --intervals 3 $(np icl-nobr)")
cases+=("neoverse-v2-64, level 1 sums to 1.1|neoverse-v2-64|--cpuid 0x00000000410fd4f1 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A $(np nv2-110)")
cases+=("neoverse-v2-64 multiplexed, more ops retired than speculated|neoverse-v2-64|--cpuid 0x00000000410fd4f1 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A $(np nv2-mux-neg)")
cases+=("neoverse-n2-8, level 1 sums to 0.9|neoverse-n2-8|--cpuid 0x00000000410fd490 --events-from arm64/arm/neoverse-n2-v2/metrics.json $A $(np nn2-090)")

ph="--intervals 9 --scenario $SCEN/parity-phases.json"
cases+=("spr-2s phases, level 1 by perf -M|spr-2s|--cpuid GenuineIntel-6-8F-4 --metric-groups TopdownL1 $ph")
cases+=("spr-2s phases, levels 1-2 by perf's expressions|spr-2s|--cpuid GenuineIntel-6-8F-4 --events-from perf --table-dir x86/sapphirerapids $ph")
cases+=("spr-2s phases, levels 1-2 by perf -M (four rotating slots groups)|spr-2s|--cpuid GenuineIntel-6-8F-4 $ph")
cases+=("icx-1s phases|icx-1s|--cpuid GenuineIntel-6-6A-0 --icl --metric-groups TopdownL1 $ph")
cases+=("adl-hybrid P-cores phases|adl-hybrid|--cpuid GenuineIntel-6-97-0 --events-from perf --table-dir x86/alderlake --unit cpu_core --pmu cpu_core --cpus 0-7 $ph")
cases+=("emr-2s phases|emr-2s|--cpuid GenuineIntel-6-CF-0 --events-from x86/emeraldrapids/emr-metrics.json $ph")
cases+=("gnr-2s phases|gnr-2s|--cpuid GenuineIntel-6-AD-0 --events-from x86/graniterapids/gnr-metrics.json $ph")

# Phase changes inside an interval (--lockstep): the intervals of both
# tools that span the same stretch of the scenario are compared one by one;
# with 750 ms intervals the changes at 2 s and 4 s fall inside intervals 2
# and 5, which are compared like the others.  Each
# tool counts in one group here: where a tool rotates groups, an interval a
# change falls inside is sampled by each group in its own slices (perf's
# four rotating groups on Sapphire Rapids: 0.5 pp from the time-weighted
# mix; topdownd's two Ice Lake level-2 groups: 0.26 pp), a property of
# multiplexing on hardware too.
ml="--lockstep --interval-ms 750 --intervals 9 --scenario $SCEN/parity-phases.json"
jq '(.cpus.default.phases) |= [(.[0] + {seconds: 2}),
	(.[0] + {seconds: 2} | .events |= (.STALL_SLOT_BACKEND += 0.1 | .STALL_SLOT += 0.1 | .OP_RETIRED *= 0.7)),
	(.[0] | .events |= (.STALL_SLOT_FRONTEND += 0.15 | .STALL_SLOT += 0.15 | .BR_MIS_PRED *= 3))]
	| del(.cpus["4-7"], .cpus["9"])' "$SCEN/parity-neoverse-v2.json" >"$TMP/nv2-phases.json"
cases+=("spr-2s, phase changes inside intervals, level 1 by perf -M|spr-2s|--cpuid GenuineIntel-6-8F-4 --metric-groups TopdownL1 $ml")
cases+=("spr-2s, phase changes inside intervals, levels 1-2 by perf's expressions|spr-2s|--cpuid GenuineIntel-6-8F-4 --events-from perf --table-dir x86/sapphirerapids $ml")
cases+=("icx-1s, phase changes inside intervals, level 1 (topdownd at level 1)|icx-1s|--cpuid GenuineIntel-6-6A-0 --icl --metric-groups TopdownL1 --topdownd-level 1 $ml")
cases+=("adl-hybrid P-cores, phase changes inside intervals|adl-hybrid|--cpuid GenuineIntel-6-97-0 --events-from perf --table-dir x86/alderlake --unit cpu_core --pmu cpu_core --cpus 0-7 $ml")
cases+=("emr-2s, phase changes inside intervals|emr-2s|--cpuid GenuineIntel-6-CF-0 --events-from x86/emeraldrapids/emr-metrics.json $ml")
cases+=("gnr-2s, phase changes inside intervals|gnr-2s|--cpuid GenuineIntel-6-AD-0 --events-from x86/graniterapids/gnr-metrics.json $ml")
cases+=("neoverse-v2-64, phase changes inside intervals|neoverse-v2-64|--cpuid 0x00000000410fd4f1 --events-from arm64/arm/neoverse-n2-v2/metrics.json --ungrouped --weight-event CPU_CYCLES --pmu armv8_pmuv3_0 --lockstep --interval-ms 750 --intervals 9 --scenario $TMP/nv2-phases.json")

# Every interface: these cases again, topdownd's figures taken from each
# interval's /api/v1/topdown?scope=cpu, and from /metrics (the increases of
# the slot counters at granularity cpu, package and system between two
# intervals, as rate() over rate() gives them, and the host's ratio gauges).
for want in "spr-2s mixed" "icx-1s icl levels 1-2 by perf -M" \
	"skx-2s skx-multiplexed (Skylake-SP, SMT, AnyThread)" "genoa-2s, level 1 sums to 1.1" \
	"srf-2s, level 1 sums to 1.1, children above frontend_bound, machine clears 0" \
	"adl-hybrid E-cores, bad speculation below 0, machine clears 0" \
	"neoverse-v2-64, level 1 sums to 1.1" \
	"nvidia-t410-16 (NVIDIA Olympus, SMT; perf 7.2's t410 TopdownL1 over CPU_SLOT and SMT metrics)"; do
	found=
	for c in "${cases[@]}"; do
		[ "${c%%|*}" = "$want" ] || continue
		found=1
		for iface in api metrics; do
			cases+=("${c%%|*}, from $( [ $iface = api ] && echo /api/v1/topdown || echo /metrics)|${c#*|} --interface $iface")
		done
	done
	[ -n "$found" ] || { echo "Bail out! no case named '$want'"; exit 1; }
done

plan ${#cases[@]}

# Three at a time: each case is a few processes that mostly sleep.
run_case() { # INDEX
	local spec=${cases[$1]} name fixture opts
	IFS='|' read -r name fixture opts <<<"$spec"
	# shellcheck disable=SC2086
	timeout 180 "${P[@]}" --fixture "$FIXTURES/$fixture" $opts >"$TMP/case-$1.out" 2>&1
	echo $? >"$TMP/case-$1.rc"
}
for i in "${!cases[@]}"; do
	run_case "$i" &
	while [ "$(jobs -rp | wc -l)" -ge 3 ]; do sleep 0.2; done
done
wait

for i in "${!cases[@]}"; do
	name=${cases[$i]%%|*}
	rc=$(cat "$TMP/case-$i.rc" 2>/dev/null || echo 1)
	if [ "$rc" -eq 0 ]; then
		pass "perf and topdownd agree within 0.05 pp: $name"
		sed 's/^/#   /' "$TMP/case-$i.out"
	else
		fail "perf and topdownd agree within 0.05 pp: $name (exit $rc)" "$TMP/case-$i.out"
	fi
done
done_testing
