#!/bin/bash
# SPDX-License-Identifier: MIT
# --probe on every fixture tree, under the fake PMU (the probe opens, reads
# and closes a real group per core PMU), and on the real /sys when it has
# no core PMU.
# Environment: TOPDOWND (the binary, default ./daemon/topdownd), FIXTURES
# (default tests/fixtures).  Run from the repository root by prove.
. "$(dirname "$0")/lib.sh"

SCENARIO=$ROOT/tests/scenarios/constant.json
tmp=$TMP

plan 93
# A failure shows the command's output.
not_ok() { fail "$@" "$tmp/out" "$tmp/err"; }

# probe ROOT [options...]: runs --probe with the defaults (-c /dev/null keeps
# an /etc/topdownd/topdownd.conf of the machine out of it); sets $rc.
probe() {
	local root=$1
	shift
	FAKEPMU_SYSFS=$root FAKEPMU_SCENARIO=${PROBE_SCENARIO:-$SCENARIO} LD_PRELOAD=$FAKEPMU \
		timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$root" --probe "$@" \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
}

expect_rc() { # DESC WANT
	if [ "$rc" -eq "$2" ]; then pass "$1"; else not_ok "$1" "exit status $rc, expected $2"; fi
}

# expect_lines DESC LINE...: each LINE is a whole line of the output.
expect_lines() {
	local desc=$1 missing=()
	shift
	for line in "$@"; do
		grep -qxF -- "$line" "$tmp/out" || missing+=("missing line: '$line'")
	done
	if [ ${#missing[@]} -eq 0 ]; then pass "$desc"; else not_ok "$desc" "${missing[@]}"; fi
}

# expect_not_usable DESC REASON: exactly one "TopDown:" line, saying
# "not usable: REASON", and no Monitored line.
expect_not_usable() {
	local desc=$1 want="TopDown:      not usable: $2" got count
	count=$(grep -c '^TopDown:' "$tmp/out")
	got=$(grep '^TopDown:' "$tmp/out")
	if [ "$count" -eq 1 ] && [ "$got" = "$want" ] && ! grep -q '^Monitored:' "$tmp/out"; then
		pass "$desc"
	else
		not_ok "$desc" "expected exactly one line '$want' and no Monitored: line"
	fi
}

# ---- Sapphire Rapids, 2 sockets, SMT ----
probe "$FIXTURES/spr-2s"
expect_rc "spr-2s: --probe exits 0" 0
expect_lines "spr-2s: PMU, microarchitecture, level 2, its perf table, model, 16 CPUs on 2 packages" \
	"PMU:          cpu (type 4)" \
	"pmu_name:     sapphire_rapids" \
	"Uarch:        Sapphire Rapids (GenuineIntel-6-8F)" \
	"Level:        2" \
	"Formulas:     sapphirerapids (perf's x86/sapphirerapids tables)" \
	"Model:        perf (refinement events: INT_MISC.UOP_DROPPING)" \
	"Monitored:    16 CPUs on 2 packages, 8 cores (0-15)" \
	"  package 0:  8 CPUs, 4 cores (0-3,8-11)" \
	"  package 1:  8 CPUs, 4 cores (4-7,12-15)" \
	"Offline:      none" \
	"Unsupported:  none" \
	"Counted:      cpu on CPU 0, model perf" \
	"TopDown:      usable"
if ! grep -q 'not usable\|requested but' "$tmp/out"; then
	pass "spr-2s: no level note, nothing unusable"
else
	not_ok "spr-2s: no level note, nothing unusable"
fi

# ---- Emerald and Granite Rapids: the model number decides, not pmu_name ----
probe "$FIXTURES/emr-2s"
expect_lines "emr-2s: pmu_name sapphire_rapids, but Emerald Rapids' own table" \
	"pmu_name:     sapphire_rapids" \
	"Uarch:        Emerald Rapids (GenuineIntel-6-CF)" \
	"Formulas:     emeraldrapids (perf's x86/emeraldrapids tables)" \
	"Level:        2" \
	"TopDown:      usable"
probe "$FIXTURES/gnr-2s"
expect_lines "gnr-2s: Granite Rapids' own table" \
	"pmu_name:     granite_rapids" \
	"Uarch:        Granite Rapids (GenuineIntel-6-AD)" \
	"Formulas:     graniterapids (perf's x86/graniterapids tables)" \
	"TopDown:      usable"

# ---- Ice Lake server: level 2 from general-purpose events, three groups ----
probe "$FIXTURES/icx-1s"
expect_rc "icx-1s: --probe exits 0" 0
expect_lines "icx-1s: level 2, Ice Lake formulas, groups and counters" \
	"PMU:          cpu (type 4)" \
	"pmu_name:     icelake" \
	"Level:        2" \
	"Uarch:        Ice Lake server (GenuineIntel-6-6A)" \
	"Formulas:     icelakex (perf's x86/icelakex tables)" \
	"Model:        perf (refinement events: INT_MISC.UOP_DROPPING, INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1)" \
	"Counters:     15 general-purpose needed, 8 per CPU (probed on CPU 0 with INT_MISC.UOP_DROPPING)" \
	"              3 groups rotate: 15 general-purpose counters needed, 8 per CPU; events perf's tables keep on counters 0-3 (IDQ.MS_UOPS) go in groups of at most 4; each group is scaled to the interval by its running time, as perf does" \
	"Monitored:    8 CPUs on 1 package, 4 cores (0-7)" \
	"TopDown:      usable"

# ---- Alder Lake hybrid: both core PMUs ----
probe "$FIXTURES/adl-hybrid"
expect_rc "adl-hybrid: --probe exits 0" 0
expect_lines "adl-hybrid: cpu_core 0-7 with PERF_METRICS, cpu_atom 8-15 with Gracemont's general-purpose events" \
	"PMU:          cpu_core (type 4)" \
	"pmu_name:     alderlake_hybrid" \
	"Uarch:        Alder Lake / Raptor Lake P-core (GenuineIntel-6-97)" \
	"CPUs:         8 (0-7)" \
	"Level:        2" \
	"Formulas:     alderlake (perf's x86/alderlake tables)" \
	"PMU:          cpu_atom (type 10)" \
	"Uarch:        Alder Lake / Raptor Lake E-core (Gracemont) (GenuineIntel-6-97)" \
	"CPUs:         8 (8-15)" \
	"Model:        perf (perf's formulas on general-purpose counters: nothing to refine)" \
	"Counters:     12 general-purpose needed, 6 per CPU (probed on CPU 8 with TOPDOWN_FE_BOUND.ALL)" \
	"Monitored:    16 CPUs on 1 package, 12 cores (0-15)" \
	"Unsupported:  none" \
	"Counted:      cpu_core on CPU 0, model perf, cpu_atom on CPU 8, model perf" \
	"TopDown:      usable"

# ---- Sapphire Rapids with CPUs 3-4 offline ----
probe "$FIXTURES/spr-holes"
expect_rc "spr-holes: --probe exits 0" 0
expect_lines "spr-holes: offline CPUs listed apart, Monitored adds up with its package lines" \
	"Level:        2" \
	"Monitored:    6 CPUs on 1 package, 4 cores (0-2,5-7)" \
	"  package 0:  6 CPUs, 4 cores (0-2,5-7)" \
	"Offline:      2 CPUs (3-4): monitored once they come online" \
	"TopDown:      usable"

# ---- VM without a PMU ----
probe "$FIXTURES/vm-nopmu"
expect_rc "vm-nopmu: --probe exits 1" 1
expect_not_usable "vm-nopmu: one 'TopDown: not usable' line with the reason" \
	"no core PMU registered by the kernel (bus/event_source/devices has no cpu, cpu_core or armv8_pmuv3): a virtual machine without a virtual PMU, or a CPU the perf driver does not support"
expect_lines "vm-nopmu: no PMU, level 0, every CPU unsupported" \
	"PMU:          none" \
	"Level:        0" \
	"Unsupported:  4 CPUs (0-3)"

# ---- Skylake server: general-purpose counters, AnyThread, 4 groups ----
probe "$FIXTURES/skx-1s"
expect_rc "skx-1s: --probe exits 0" 0
expect_lines "skx-1s: Skylake-SP tables, SMT shares, level 1 in the first group" \
	"PMU:          cpu (type 4)" \
	"pmu_name:     skylake" \
	"Uarch:        Skylake-SP / Cascade Lake-SP (GenuineIntel-6-55)" \
	"Level:        2" \
	"Formulas:     skylakex (perf's x86/skylakex tables)" \
	"SMT:          on, every thread of each core counted: a CPU's figures are its share of its core (AnyThread counts / 2)" \
	"Counters:     13 general-purpose needed, 4 per CPU (probed on CPU 0 with UOPS_ISSUED.ANY)" \
	"Group 1:      UOPS_ISSUED.ANY, UOPS_RETIRED.RETIRE_SLOTS," \
	"              IDQ_UOPS_NOT_DELIVERED.CORE, INT_MISC.RECOVERY_CYCLES_ANY," \
	"              CPU_CLK_UNHALTED.THREAD_ANY, INST_RETIRED.ANY" \
	"              4 groups rotate: 13 general-purpose counters needed, 4 per CPU; each group is scaled to the interval by its running time, as perf does" \
	"Monitored:    8 CPUs on 1 package, 4 cores (0-7)" \
	"TopDown:      usable"
printf '[collect]\ncpus = 0-1\nlevel = 1\n' >"$tmp/half.conf"
probe "$FIXTURES/skx-1s" -c "$tmp/half.conf"
expect_lines "skx-1s, one thread of cores 0 and 1: perf's per-thread estimate of the core's clocks" \
	"SMT:          on, some threads of a core not counted: a CPU's figures are its share of its core, from perf's per-thread estimate of the core's clocks" \
	"Counters:     6 general-purpose needed, 4 per CPU (probed on CPU 0 with UOPS_ISSUED.ANY)"
# Cascade Lake-SP without SMT: 8 counters (the fake PMU, like CPUID, gives
# a thread the core's 8 when SMT is off).
probe "$FIXTURES/clx-2s"
expect_lines "clx-2s: SMT off, the thread's own clocks, 8 counters, 2 groups" \
	"SMT:          off: each CPU is a core" \
	"Counters:     13 general-purpose needed, 8 per CPU (probed on CPU 0 with UOPS_ISSUED.ANY)" \
	"TopDown:      usable"
# allow_tsx_force_abort=0 takes a counter away: the probe finds 3.
cp -r "$FIXTURES/skx-1s" "$tmp/skx-tfa"
echo 0 >"$tmp/skx-tfa/bus/event_source/devices/cpu/allow_tsx_force_abort"
probe "$tmp/skx-tfa" -c "$tmp/half.conf"
expect_lines "skx-1s with allow_tsx_force_abort=0: 3 counters probed" \
	"Counters:     6 general-purpose needed, 3 per CPU (probed on CPU 0 with UOPS_ISSUED.ANY)"
# Sierra Forest: E-cores only, Crestmont.
probe "$FIXTURES/srf-2s"
expect_rc "srf-2s: --probe exits 0" 0
expect_lines "srf-2s: Crestmont, 9 general-purpose events (perf's own for every level-2 node) in 2 groups" \
	"Uarch:        Sierra Forest (Crestmont) (GenuineIntel-6-AF)" \
	"Formulas:     sierraforest (perf's x86/sierraforest tables)" \
	"Counters:     9 general-purpose needed, 8 per CPU (probed on CPU 0 with TOPDOWN_FE_BOUND.ALL_P)" \
	"              2 groups rotate: 9 general-purpose counters needed, 8 per CPU; each group is scaled to the interval by its running time, as perf does" \
	"Monitored:    16 CPUs on 2 packages, 16 cores (0-15)" \
	"TopDown:      usable"
# Grand Ridge: the same core, its own model and tables.
probe "$FIXTURES/grr-12"
expect_rc "grr-12: --probe exits 0" 0
expect_lines "grr-12: Crestmont by model 0xB6, perf's grandridge tables" \
	"Uarch:        Grand Ridge (Crestmont) (GenuineIntel-6-B6)" \
	"Formulas:     grandridge (perf's x86/grandridge tables)" \
	"Counters:     9 general-purpose needed, 8 per CPU (probed on CPU 0 with TOPDOWN_FE_BOUND.ALL_P)" \
	"Monitored:    12 CPUs on 1 package, 12 cores (0-11)" \
	"TopDown:      usable"
# AMD Genoa (Zen 4) and Turin (Zen 5): PipelineL1/L2 on six counters,
# probed; the driver's figure is the fallback.
probe "$FIXTURES/genoa-2s"
expect_rc "genoa-2s: --probe exits 0" 0
expect_lines "genoa-2s: Zen 4 by perf's mapfile pattern, 12 events in 2 groups of 6" \
	"Uarch:        AMD Zen 4 (AuthenticAMD-25-11)" \
	"Formulas:     amdzen4 (perf's x86/amdzen4 tables)" \
	"SMT:          on: each CPU's dispatch slots are its own; the slots the other thread took are smt_contention" \
	"Counters:     12 general-purpose needed, 6 per CPU (probed on CPU 0 with ls_not_halted_cyc)" \
	"Group 2:      de_no_dispatch_per_slot.no_ops_from_frontend,cmask=6," \
	"Monitored:    16 CPUs on 2 packages, 8 cores (0-15)" \
	"TopDown:      usable"
# A Zen 4 guest whose hypervisor does not pass PerfCtrExtCore: 4 counters
# (amd_core_pmu_init), so the 12 events rotate in 3 groups of 4.
jq 'del(.cpus["8-15"]) | .gp_counters = 4' "$ROOT/tests/scenarios/parity-zen4.json" >"$tmp/zen4-4.json"
PROBE_SCENARIO=$tmp/zen4-4.json probe "$FIXTURES/genoa-guest"
expect_lines "genoa-guest, 4 counters: 12 events in 3 rotating groups of 4" \
	"Counters:     12 general-purpose needed, 4 per CPU (probed on CPU 0 with ls_not_halted_cyc)" \
	"Group 3:      resyncs_or_nc_redirects, ex_no_retire.not_complete," \
	"              3 groups rotate: 12 general-purpose counters needed, 4 per CPU; each group is scaled to the interval by its running time, as perf does" \
	"Monitored:    8 CPUs on 1 package, 4 cores (0-7)" \
	"TopDown:      usable"
# A Zen 6 guest without PerfCtrExtCore: the same, perf 7.2's amdzen6.
jq 'del(.cpus["8-15"]) | .gp_counters = 4' "$ROOT/tests/scenarios/parity-zen6.json" >"$tmp/zen6-4.json"
PROBE_SCENARIO=$tmp/zen6-4.json FAKEPMU_TABLES=$ROOT/reference/perf-tables-7.2 probe "$FIXTURES/zen6-guest"
expect_lines "zen6-guest, 4 counters: Zen 6 by perf 7.2's mapfile, 12 events in 3 rotating groups of 4" \
	"Uarch:        AMD Zen 6 (AuthenticAMD-26-50)" \
	"Counters:     12 general-purpose needed, 4 per CPU (probed on CPU 0 with ls_not_halted_cyc)" \
	"              3 groups rotate: 12 general-purpose counters needed, 4 per CPU; each group is scaled to the interval by its running time, as perf does" \
	"Monitored:    8 CPUs on 1 package, 4 cores (0-7)" \
	"TopDown:      usable"
# Clearwater Forest, a model without tables whose kernel shows Intel's
# architectural TopDown events as topdown-*: level 1 from them, saying so.
PROBE_SCENARIO=$ROOT/tests/scenarios/parity-cwf-guest.json probe "$FIXTURES/cwf-guest"
expect_lines "cwf-guest: the architectural TopDown events, level 1, and why" \
	"Uarch:        Intel architectural TopDown events (model not in topdownd's tables) (GenuineIntel-6-DD)" \
	"Level:        1" \
	"Formulas:     intel_arch (kernel/kvm-x86-pmu.h)" \
	"              no perf reference for this model: Clearwater Forest (Darkmont) (x86/clearwaterforest): perf 7.2's tables have its events and no TopDown metrics; no TopDown tables for this model and no PERF_METRICS: counting Intel's architectural TopDown events (events/topdown-*; SDM \"Pre-defined Architectural Performance Events\", CPUID.0AH EBX bits 8-11), level 1 as perf's PERF_METRICS expressions over them" \
	"Events:       cpu-cycles, topdown-retiring, topdown-bad-spec, topdown-fe-bound," \
	"Monitored:    8 CPUs on 1 package, 8 cores (0-7)" \
	"TopDown:      usable"
# Panther Lake (ptl-hybrid, as the kernel shows it: Lunar Lake's events):
# perf knows it, with events and no TopDown metrics: the P-cores with
# PERF_METRICS alone, the E-cores with the architectural TopDown events
# the kernel shows as their topdown-*, each said.
probe "$FIXTURES/ptl-hybrid"
expect_lines "Panther Lake: P-cores on PERF_METRICS alone, E-cores on the architectural events, 'no perf reference for this model' with perf's directory" \
	"pmu_name:     pantherlake_hybrid" \
	"Uarch:        PERF_METRICS (model not in topdownd's tables) (GenuineIntel-6-CC)" \
	"Counters:     fixed counters alone, no general-purpose one used" \
	"Free now:     cpu_core: no general-purpose counter used on CPUs 0-3" \
	"Formulas:     PERF_METRICS only (no perf table for this model in topdownd)" \
	"              no perf reference for this model: Panther Lake (x86/pantherlake): perf 7.2's tables have its events and no TopDown metrics; no TopDown tables for this model: PERF_METRICS alone, levels 1 and 2 as the hardware gives them (perf's expressions without a model's refinement events)" \
	"Uarch:        Intel architectural TopDown events (model not in topdownd's tables) (GenuineIntel-6-CC)" \
	"              no perf reference for this model: Panther Lake (x86/pantherlake): perf 7.2's tables have its events and no TopDown metrics; no TopDown tables for this model and no PERF_METRICS: counting Intel's architectural TopDown events (events/topdown-*; SDM \"Pre-defined Architectural Performance Events\", CPUID.0AH EBX bits 8-11), level 1 as perf's PERF_METRICS expressions over them" \
	"Events:       cpu-cycles, topdown-retiring, topdown-bad-spec, topdown-fe-bound," \
	"Monitored:    8 CPUs on 1 package, 8 cores (0-7)" \
	"TopDown:      usable"
# Nova Lake (family 18): in no perf table; counted the same way, and said.
probe "$FIXTURES/nvl-hybrid"
expect_lines "Nova Lake (family 18): PERF_METRICS alone and the architectural events, 'no perf reference for this model'" \
	"pmu_name:     novalake_hybrid" \
	"Uarch:        PERF_METRICS (model not in topdownd's tables) (GenuineIntel-18-1)" \
	"              no perf reference for this model: Nova Lake: perf 7.2's x86/mapfile.csv lists no family-18 model; no TopDown tables for this model: PERF_METRICS alone, levels 1 and 2 as the hardware gives them (perf's expressions without a model's refinement events)" \
	"Uarch:        Intel architectural TopDown events (model not in topdownd's tables) (GenuineIntel-18-1)" \
	"Monitored:    8 CPUs on 1 package, 8 cores (0-7)" \
	"TopDown:      usable"
probe "$FIXTURES/turin-1s"
expect_lines "turin-1s: Zen 5, its own resync event and cmask 8" \
	"Uarch:        AMD Zen 5 (AuthenticAMD-26-2)" \
	"Group 2:      de_no_dispatch_per_slot.no_ops_from_frontend,cmask=8," \
	"              ex_ret_brn_misp, bp_redirects.resync, ex_no_retire.not_complete," \
	"TopDown:      usable"
# Zen 6 (family 0x1A, model 0x50): perf 7.2's mapfile.csv gives it
# amdzen6, whose resync event is bp_fe_redir.resync.
probe "$FIXTURES/zen6-1s"
expect_lines "zen6-1s: Zen 6 from perf 7.2's tables, bp_fe_redir.resync" \
	"Uarch:        AMD Zen 6 (AuthenticAMD-26-50)" \
	"Formulas:     amdzen6 (perf's x86/amdzen6 tables)" \
	"              ex_ret_brn_misp, bp_fe_redir.resync, ex_no_retire.not_complete," \
	"TopDown:      usable"
# Zen 3 (Milan) and Zen 2 (Rome): perf has no TopDown for them.
probe "$FIXTURES/milan-1s"
expect_rc "milan-1s (Zen 3): --probe exits 1" 1
expect_not_usable "milan-1s (Zen 3): the reason names Zen 3 and why" \
	"AuthenticAMD-25-1 is AMD Zen 3 (perf's table amdzen3): perf has no TopDown (PipelineL1) metrics for it: they need the per-slot dispatch events (PMCx1A0) of Zen 4 and later"
cp -r "$FIXTURES/milan-1s" "$tmp/rome"
sed -i s/fam0019mod0001/fam0017mod0031/ "$tmp/rome/devices/system/cpu/modalias"
probe "$tmp/rome"
expect_not_usable "a Rome (Zen 2) host: the reason names Zen 2" \
	"AuthenticAMD-23-31 is AMD Zen 2 (perf's table amdzen2): perf has no TopDown (PipelineL1) metrics for it: they need the per-slot dispatch events (PMCx1A0) of Zen 4 and later"
# Arm Neoverse: the core PMU armv8_pmuv3_0, the CPU by its MIDR, the slots
# per cycle from caps/slots; N2 before r0p3 with perf's stall-slot fix.
probe "$FIXTURES/neoverse-v2-64"
expect_rc "neoverse-v2-64: --probe exits 0" 0
expect_lines "neoverse-v2-64: Neoverse V2 by MIDR, 8 slots per cycle, one group" \
	"PMU:          armv8_pmuv3_0 (type 8)" \
	"Uarch:        Arm Neoverse N2 / V2 (0x00000000410fd4f1)" \
	"Formulas:     arm/neoverse-n2-v2 (perf's arm64/arm/neoverse-n2-v2 tables)" \
	"Slots:        8 per cycle (caps/slots)" \
	"Counters:     6 general-purpose needed, 6 per CPU (probed on CPU 0 with STALL_SLOT_FRONTEND)" \
	"Monitored:    64 CPUs on 1 package, 64 cores (0-63)" \
	"TopDown:      usable"
probe "$FIXTURES/neoverse-n2-8"
expect_lines "neoverse-n2-8 (r0p0): 5 slots per cycle, STALL_SLOT corrected" \
	"Uarch:        Arm Neoverse N2 / V2 (0x00000000410fd490)" \
	"Slots:        5 per cycle (caps/slots); STALL_SLOT and STALL_SLOT_FRONTEND less CPU_CYCLES (this revision counts a slot per cycle too many, as perf corrects)"
# The whole report, so that a line too many shows as well.
cat >"$tmp/n2.want" <<'EOF'
PMU:          armv8_pmuv3_0 (type 8)
pmu_name:     unknown
Uarch:        Arm Neoverse N2 / V2 (0x00000000410fd490)
Level:        1
              level 2 requested but armv8_pmuv3_0 (Arm Neoverse N2 / V2, pmu_name unknown) offers level 1; using level 1
Formulas:     arm/neoverse-n2-v2 (perf's arm64/arm/neoverse-n2-v2 tables)
Slots:        5 per cycle (caps/slots); STALL_SLOT and STALL_SLOT_FRONTEND less CPU_CYCLES (this revision counts a slot per cycle too many, as perf corrects)
Model:        perf (perf's formulas on general-purpose counters: nothing to refine)
Counters:     6 general-purpose needed, 6 per CPU (probed on CPU 0 with STALL_SLOT_FRONTEND)
Events:       CPU_CYCLES, STALL_SLOT_FRONTEND, STALL_SLOT_BACKEND, STALL_SLOT,
              OP_RETIRED, OP_SPEC, BR_MIS_PRED
SMT split:    each core runs one thread (SMT off or absent): nothing to split
Monitored:    8 CPUs on 1 package, 8 cores (0-7)
  package 0:  8 CPUs, 8 cores (0-7)
Offline:      none
Unsupported:  none
Free now:     armv8_pmuv3_0: 6 of 6 general-purpose on CPUs 0-7
Counted:      armv8_pmuv3_0 on CPU 0, model perf
TopDown:      usable
EOF
if diff -u "$tmp/n2.want" "$tmp/out" >"$tmp/n2.diff"; then
	pass "neoverse-n2-8: the whole --probe report"
else
	not_ok "neoverse-n2-8: the whole --probe report" "$(cat "$tmp/n2.diff")"
fi
probe "$FIXTURES/neoverse-v1-16"
expect_lines "neoverse-v1-16: Neoverse V1" \
	"Uarch:        Arm Neoverse V1 (0x00000000411fd401)" \
	"TopDown:      usable"
# Neoverse V3 and N3 (perf 7.2's tables): STALL_FRONTEND_FLUSH, which the
# driver never lists in events/, is counted; an N3 guest takes Arm's
# published 5 slots; a V3 guest is refused, said why: perf 7.2 gives its
# tables to part 0xd83, for which Arm publishes no width.
export FAKEPMU_TABLES=$ROOT/reference/perf-tables-7.2
probe "$FIXTURES/neoverse-v3-16"
expect_lines "neoverse-v3-16: Neoverse V3, 10 slots, STALL_FRONTEND_FLUSH" \
	"Uarch:        Arm Neoverse V3 (0x00000000410fd830)" \
	"Slots:        10 per cycle (caps/slots)" \
	"              OP_RETIRED, OP_SPEC, STALL_FRONTEND_FLUSH" \
	"TopDown:      usable"
probe "$FIXTURES/neoverse-n3-guest"
expect_lines "neoverse-n3-guest: Neoverse N3 under KVM, Arm's published 5 slots" \
	"Uarch:        Arm Neoverse N3 (0x00000000410fd8e0)" \
	"Slots:        5 per cycle; caps/slots is 0 or absent (a virtual machine reads PMMIR_EL1 as 0): 5 slots per cycle, Arm's published width of the Neoverse N3 (ARM-software/telemetry-solution data/pmu/cpu/neoverse/neoverse-n3.json)" \
	"TopDown:      usable"
probe "$FIXTURES/neoverse-v3-guest"
expect_not_usable "neoverse-v3-guest: refused, and why" \
	"core PMU armv8_pmuv3_0 (Arm Neoverse V3) has no caps/slots, and Arm publishes no slot width for this part here: perf's TopdownL1 needs the slots per cycle (PMMIR_EL1.SLOTS), which the kernel shows from PMUv3.4 on and a virtual machine reads as 0"
probe "$FIXTURES/ampereone-guest"
expect_not_usable "ampereone-guest: an AmpereOne virtual machine refused, and why" \
	"core PMU armv8_pmuv3_0 (AmpereOne) has no caps/slots, and Ampere publishes no slot width for this part here: perf's TopdownL1 needs the slots per cycle (PMMIR_EL1.SLOTS), which the kernel shows from PMUv3.4 on and a virtual machine reads as 0"
probe "$FIXTURES/ampereone-16"
expect_lines "ampereone-16: AmpereOne by its MIDR (implementer 0xc0), perf 7.2's tables" \
	"Uarch:        AmpereOne (0x00000000c00fac30)" \
	"Level:        2" \
	"Formulas:     ampere/ampereone (perf's arm64/ampere/ampereone tables)" \
	"Group 1:      CPU_CYCLES, STALL_SLOT_BACKEND, OP_RETIRED, OP_SPEC," \
	"              BR_MIS_PRED_RETIRED, GPC_FLUSH, STALL_FRONTEND" \
	"Group 2:      STALL_SLOT_FRONTEND, STALL_BACKEND_TLB, STALL_BACKEND_CACHE" \
	"TopDown:      usable"
printf '[collect]\nlevel = 1\n' >"$tmp/level1.conf"
probe "$FIXTURES/ampereone-16" -c "$tmp/level1.conf"
expect_lines "ampereone-16 at level 1: TopdownL1's four events in one group" \
	"Level:        1" \
	"Events:       CPU_CYCLES, STALL_SLOT_BACKEND, OP_RETIRED, OP_SPEC" \
	"TopDown:      usable"
probe "$FIXTURES/nvidia-t410-16"
expect_lines "nvidia-t410-16: NVIDIA Olympus by its MIDR (implementer 0x4e), CPU_SLOT counted, no caps/slots read; CPU_CYCLES for perf's SMT metrics" \
	"Uarch:        NVIDIA Olympus (0x000000004e0f0100)" \
	"Formulas:     nvidia/t410 (perf's arm64/nvidia/t410 tables)" \
	"Events:       CPU_CYCLES, CPU_SLOT, STALL_SLOT_FRONTEND_WITHOUT_MISPRED," \
	"SMT split:    perf's SMT metrics instead (cpu_cycles_in_st_mode," \
	"              cpu_cycles_in_smt_mode: each thread's cycles in ST and SMT mode," \
	"TopDown:      usable"
printf '[collect]\nsmt = off\n' >"$tmp/smt-off.conf"
probe "$FIXTURES/nvidia-t410-16" -c "$tmp/smt-off.conf"
expect_lines "nvidia-t410-16 with smt = off: no SMT metrics" \
	"SMT split:    off ([collect] smt = off)"
# Lunar Lake and Arrow Lake: Lion Cove P-cores on PERF_METRICS, Skymont
# E-cores with their retiring and frontend bound on fixed counters 6 and 5
# (the kernel's topdown-retiring and topdown-fe-bound): one group.
probe "$FIXTURES/lnl-hybrid"
expect_lines "lnl-hybrid: Lunar Lake, both core types at level 2 from perf 7.2's tables" \
	"pmu_name:     lunarlake_hybrid" \
	"Uarch:        Lunar Lake P-core (Lion Cove) (GenuineIntel-6-BD)" \
	"Uarch:        Lunar Lake E-core (Skymont) (GenuineIntel-6-BD)" \
	"Formulas:     lunarlake (perf's x86/lunarlake tables)" \
	"Counters:     7 general-purpose needed, 8 per CPU (probed on CPU 4 with TOPDOWN_BE_BOUND.ALL_P)" \
	"Events:       CPU_CLK_UNHALTED.CORE, TOPDOWN_FE_BOUND.ALL," \
	"Monitored:    8 CPUs on 1 package, 8 cores (0-7)" \
	"TopDown:      usable"
probe "$FIXTURES/arl-hybrid"
expect_lines "arl-hybrid: Arrow Lake (model 0xC6), both core types" \
	"Uarch:        Arrow Lake P-core (Lion Cove) (GenuineIntel-6-C6)" \
	"Uarch:        Arrow Lake E-core (Skymont) (GenuineIntel-6-C6)" \
	"Formulas:     arrowlake (perf's x86/arrowlake tables)" \
	"TopDown:      usable"
probe "$FIXTURES/arlh-hybrid"
expect_lines "arlh-hybrid: Arrow Lake-H (model 0xC5): P- and E-cores counted; the low-power E-cores, which perf gives no TopDown and whose topdown-* are not the architectural events, not counted, and why" \
	"pmu_name:     arrowlake_h_hybrid" \
	"Uarch:        Arrow Lake P-core (Lion Cove) (GenuineIntel-6-C5)" \
	"Uarch:        Arrow Lake E-core (Skymont) (GenuineIntel-6-C5)" \
	"Counters:     7 general-purpose needed, 8 per CPU (probed on CPU 6 with TOPDOWN_BE_BOUND.ALL_P)" \
	"PMU:          cpu_lowpower (type 12)" \
	"Monitored:    14 CPUs on 1 package, 14 cores (0-13)" \
	"Unsupported:  2 CPUs (14-15): no perf reference for this model: Arrow Lake-H low-power E-core (x86/arrowlake): perf 7.2's tables have its events (Unit cpu_lowpower) and no TopDown metrics for it; cpu_lowpower of GenuineIntel-6-C5 shows topdown-* events of its own, not the architectural ones: not counted" \
	"TopDown:      usable"
# A core type whose PMU topdownd does not know (its name): its online CPUs
# are unsupported, and said so, not dropped.
cp -r "$FIXTURES/arlh-hybrid" "$tmp/arlh-x"
mv "$tmp/arlh-x/bus/event_source/devices/cpu_lowpower" "$tmp/arlh-x/bus/event_source/devices/cpu_other"
probe "$tmp/arlh-x"
expect_lines "a third core PMU topdownd does not know: its online CPUs unsupported, with the reason" \
	"Monitored:    14 CPUs on 1 package, 14 cores (0-13)" \
	"Unsupported:  2 CPUs (14-15): online and in the cpus of no core PMU topdownd counts: a core type it does not know" \
	"TopDown:      usable"
unset FAKEPMU_TABLES
probe "$FIXTURES/graviton2-16"
expect_rc "graviton2-16 (Neoverse N1): --probe exits 1" 1
expect_not_usable "graviton2-16 (Neoverse N1): the reason names N1 and why" \
	"0x00000000413fd0c1 is Arm Neoverse N1 (perf's table arm/neoverse-n1): perf has no TopdownL1 for it: its metrics.json defines none, only cycle accounting from stalled cycles (STALL_FRONTEND, STALL_BACKEND)"
# The figures against the scenarios' truths (not perf): CPU 0 runs 0.2 of
# its slots frontend-stalled and 0.35 backend-stalled, retires 80 % of the
# ops it speculates and mispredicts 0.001 branches per slot (8 per 1000
# cycles at 8 slots per cycle, 5 at 5); perf's N2/V2 expressions make that
# frontend 0.192, bad speculation 0.122, backend 0.326 and retiring 0.36 on
# the V2, and 0.195, 0.11, 0.335, 0.36 on the 5-wide N2 r0p0 once its extra
# slot per cycle is taken off; V1's make it 0.168, 0.122, 0.35, 0.36.
arm_truth() { # FIXTURE SCENARIO(in tests/scenarios, or a path) FE BAD BE RET
	local got scen=$2
	case $scen in /*) ;; *) scen=$PWD/tests/scenarios/$scen ;; esac
	FAKEPMU_SYSFS=$FIXTURES/$1 FAKEPMU_SCENARIO=$scen LD_PRELOAD=$FAKEPMU \
		timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$FIXTURES/$1" --once --json >"$tmp/arm.json" 2>"$tmp/err"
	got=$(jq -r '.cpus[0].level1 | [.frontend_bound, .bad_speculation, .backend_bound, .retiring] | @tsv' "$tmp/arm.json")
	if awk -v g="$got" -v w="$3 $4 $5 $6" 'BEGIN { split(g, v, "\t"); split(w, t, " ");
		for (i = 1; i <= 4; i++) { d = v[i] - t[i]; if (d * d > 1e-6) exit 1 } }'; then
		pass "$1: CPU 0 is the scenario's truth ($3 $4 $5 $6)"
	else
		not_ok "$1: CPU 0 is the scenario's truth ($3 $4 $5 $6)" "got $got"
	fi
}
arm_truth neoverse-v2-64 parity-neoverse-v2.json 0.192 0.122 0.326 0.36
arm_truth neoverse-n2-8 parity-neoverse-n2.json 0.195 0.11 0.335 0.36
arm_truth neoverse-v1-16 parity-neoverse-v1.json 0.168 0.122 0.35 0.36
# The guests (caps/slots 0) at Arm's published 8 slots: the same truths.
arm_truth graviton3-guest parity-neoverse-v1.json 0.168 0.122 0.35 0.36
jq 'del(.cpus["9"])' tests/scenarios/parity-neoverse-v2.json >"$tmp/nv2-8cpus.json"	# 8 vCPUs
arm_truth graviton4-guest "$tmp/nv2-8cpus.json" 0.192 0.122 0.326 0.36
# A heterogeneous part: per-core PMU names, a V2 cluster and an N1 one,
# each PMU recognised by the MIDR of its own first CPU.
cp -r "$FIXTURES/neoverse-v2-64" "$tmp/hetero"
(cd "$tmp/hetero/bus/event_source/devices" && mv armv8_pmuv3_0 armv9_neoverse_v2 &&
	cp -r armv9_neoverse_v2 armv8_neoverse_n1 && echo 0-31 >armv9_neoverse_v2/cpus &&
	echo 32-63 >armv8_neoverse_n1/cpus && echo 9 >armv8_neoverse_n1/type && rm -r armv8_neoverse_n1/caps &&
	for c in $(seq 32 63); do
		echo 0x00000000413fd0c1 >"../../../devices/system/cpu/cpu$c/regs/identification/midr_el1"
	done)
probe "$tmp/hetero"
expect_lines "a V2 + N1 part: the V2 cluster monitored, the N1 one unsupported with its reason" \
	"PMU:          armv9_neoverse_v2 (type 8)" \
	"Uarch:        Arm Neoverse N2 / V2 (0x00000000410fd4f1)" \
	"Uarch:        none (0x00000000413fd0c1)" \
	"Monitored:    32 CPUs on 1 package, 32 cores (0-31)" \
	"Unsupported:  32 CPUs (32-63): 0x00000000413fd0c1 is Arm Neoverse N1 (perf's table arm/neoverse-n1): perf has no TopdownL1 for it: its metrics.json defines none, only cycle accounting from stalled cycles (STALL_FRONTEND, STALL_BACKEND)" \
	"TopDown:      usable"
cp -r "$FIXTURES/neoverse-v2-64" "$tmp/v2-noslots"
rm "$tmp/v2-noslots/bus/event_source/devices/armv8_pmuv3_0/caps/slots"
probe "$tmp/v2-noslots"
expect_lines "a Neoverse V2 whose kernel shows no caps/slots: Arm's published width, and where it comes from" \
	"Slots:        8 per cycle; caps/slots is 0 or absent (a virtual machine reads PMMIR_EL1 as 0): 8 slots per cycle, Arm's published width of the Neoverse V2 (ARM-software/telemetry-solution data/pmu/cpu/neoverse/neoverse-v2.json)" \
	"Monitored:    64 CPUs on 1 package, 64 cores (0-63)" \
	"TopDown:      usable"
# A Sapphire Rapids KVM guest (tests/fixtures/spr-guest): the model's
# events, no slots, no topdown-* (KVM does not virtualise PERF_METRICS):
# Intel's alternate TMA formulas on general-purpose counters, both levels.
PROBE_SCENARIO=$PWD/tests/scenarios/parity-spr-guest.json probe "$FIXTURES/spr-guest"
expect_lines "spr-guest: no PERF_METRICS, counted at level 2 with Intel's alternate formulas, saying so" \
	"Uarch:        Sapphire Rapids without PERF_METRICS (GenuineIntel-6-8F)" \
	"Level:        2" \
	"Formulas:     sapphirerapids-alt (perfspect/spr_alt_tma_metrics.json), events from perf's x86/sapphirerapids tables" \
	"              no PERF_METRICS (no events/slots: a virtual machine?): counting with general-purpose events, Intel's alternate TMA formulas for Sapphire Rapids (perfspect/spr_alt_tma_metrics.json)" \
	"Counters:     10 general-purpose needed, 8 per CPU (probed on CPU 0 with TOPDOWN.SLOTS_P)" \
	"Monitored:    8 CPUs on 1 package, 4 cores (0-7)" \
	"TopDown:      usable"
# parity-spr-guest.json's rates per slot, through Intel's formulas: CPU 0
# frontend (0.26 - 0.012) = 0.248, backend 0.38, retiring 0.29, bad
# speculation 1 - 0.918 = 0.082; fetch latency 6 x 0.021 - 0.012 = 0.114.
# CPU 4's events over-fill the slots (1.08): bad speculation and core
# bound clamp at 0, as the formulas' max() says.
# once_figures FIXTURE SCENARIO FIELDS: --once's figures (jq paths), to 3
# decimals, tab-separated.
once_figures() {
	FAKEPMU_SYSFS=$FIXTURES/$1 FAKEPMU_SCENARIO=$PWD/tests/scenarios/$2 LD_PRELOAD=$FAKEPMU \
		timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$FIXTURES/$1" --once --json -i 300ms 2>"$tmp/err" |
		jq -r "[$3] | map(. * 1000 | round / 1000) | @tsv"
}
is "$(once_figures spr-guest parity-spr-guest.json '.cpus[0].level1.frontend_bound, .cpus[0].level1.backend_bound, .cpus[0].level1.retiring, .cpus[0].level1.bad_speculation, .cpus[0].level2.fetch_latency, .cpus[4].level1.bad_speculation, .cpus[4].level2.core_bound')" \
	"$(printf '0.248\t0.38\t0.29\t0.082\t0.114\t0\t0')" "spr-guest: the figures are the formulas' on the scenario's rates"
# An Ice Lake server guest (tests/fixtures/icx-guest): its alternate
# formulas, 19 events in 3 rotating groups.  CPU 0: frontend 0.22 - 0.01,
# bad speculation 1 - (0.21 + (0.36 + 5 x 0.004) + 0.31) = 0.10, fetch
# latency 5 x 0.025 - 0.01 = 0.115.
PROBE_SCENARIO=$PWD/tests/scenarios/parity-icx-guest.json probe "$FIXTURES/icx-guest"
expect_lines "icx-guest: no PERF_METRICS, counted at level 2 with Intel's alternate formulas" \
	"Uarch:        Ice Lake server without PERF_METRICS (GenuineIntel-6-6A)" \
	"Formulas:     icelakex-alt (perfspect/icx_alt_tma_metrics.json), events from perf's x86/icelakex tables" \
	"Level:        2" \
	"TopDown:      usable"
is "$(once_figures icx-guest parity-icx-guest.json '.cpus[0].level1.frontend_bound, .cpus[0].level1.bad_speculation, .cpus[0].level2.fetch_latency')" \
	"$(printf '0.21\t0.1\t0.115')" "icx-guest: the figures are the formulas' on the scenario's rates"
# Emerald Rapids and Granite Rapids guests (tests/fixtures/emr-guest,
# gnr-guest): PerfSpect's nofixedtma formulas, Sapphire Rapids' alternate
# tree, so the same scenario gives the same figures.
for g in "emr-guest Emerald emeraldrapids CF emr" "gnr-guest Granite graniterapids AD gnr"; do
	set -- $g
	PROBE_SCENARIO=$PWD/tests/scenarios/parity-spr-guest.json probe "$FIXTURES/$1"
	expect_lines "$1: no PERF_METRICS, counted at level 2 with PerfSpect's nofixedtma formulas, saying so" \
		"Uarch:        $2 Rapids without PERF_METRICS (GenuineIntel-6-$4)" \
		"Level:        2" \
		"Formulas:     $3-alt (perfspect/$5_nofixedtma.json), events from perf's x86/$3 tables" \
		"              no PERF_METRICS (no events/slots: a virtual machine?): counting with general-purpose events, Intel's alternate TMA formulas for $2 Rapids (perfspect/$5_nofixedtma.json)" \
		"TopDown:      usable"
	is "$(once_figures "$1" parity-spr-guest.json '.cpus[0].level1.frontend_bound, .cpus[0].level1.backend_bound, .cpus[0].level1.retiring, .cpus[0].level1.bad_speculation, .cpus[0].level2.fetch_latency, .cpus[4].level1.bad_speculation, .cpus[4].level2.core_bound')" \
		"$(printf '0.248\t0.38\t0.29\t0.082\t0.114\t0\t0')" "$1: the figures are the formulas' on the scenario's rates, as on spr-guest"
done
# An Ice Lake client guest: no alternate formulas published for it.
cp -r "$FIXTURES/icl-client" "$tmp/iclc-guest"
rm "$tmp/iclc-guest/bus/event_source/devices/cpu/events/"{slots,topdown-*}
PROBE_SCENARIO=$PWD/tests/scenarios/constant.json probe "$tmp/iclc-guest"
expect_not_usable "an Ice Lake client guest without PERF_METRICS: the reason says so, and that no formulas count it otherwise" \
	"core PMU cpu (Ice Lake) has no events/slots: no PERF_METRICS (a virtual machine? KVM does not virtualise it; or a kernel before its TopDown support), and topdownd has no general-purpose-counter TopDown formulas for Ice Lake"
# KVM guests of Graviton3 (Neoverse V1) and Graviton4 (V2): caps/slots 0.
for g in "graviton3-guest V1 neoverse-v1" "graviton4-guest V2 neoverse-v2"; do
	set -- $g
	probe "$FIXTURES/$1"
	expect_lines "$1 (caps/slots 0x00000000): counted with Arm's published width of the Neoverse $2, level 1, all 8 CPUs" \
		"Slots:        8 per cycle; caps/slots is 0 or absent (a virtual machine reads PMMIR_EL1 as 0): 8 slots per cycle, Arm's published width of the Neoverse $2 (ARM-software/telemetry-solution data/pmu/cpu/neoverse/$3.json)" \
		"Level:        1" \
		"Monitored:    8 CPUs on 1 package, 8 cores (0-7)" \
		"TopDown:      usable"
done
# Broadwell (model 0x4F): the generic-counter events, no perf tables.
cp -r "$FIXTURES/skx-1s" "$tmp/bdx"
sed -i s/mod0055/mod004F/ "$tmp/bdx/devices/system/cpu/modalias"
probe "$tmp/bdx"
expect_rc "a Broadwell server: --probe exits 1" 1
expect_not_usable "a Broadwell server: one 'TopDown: not usable' line with the reason" \
	"GenuineIntel-6-4F (pmu_name skylake) is older than Skylake or not in topdownd's tables: TopDown needs Skylake or later"

# ---- the NMI watchdog holds fixed counter 1 ----
# The kernel's watchdog setting is the running kernel's: a private mount
# namespace shows the daemon (and the fake PMU, which then keeps fixed
# counter 1 busy on every CPU) a /proc/sys/kernel/nmi_watchdog of 1.
if [ "$(id -u)" -eq 0 ] && unshare --mount --propagation private true 2>/dev/null; then
	echo 1 >"$tmp/nmi_watchdog"
	printf '[collect]\nlevel = 1\n' >"$tmp/l1.conf"
	wd() { # ROOT SCENARIO ARGS...
		local root=$1 scen=$2
		shift 2
		FAKEPMU_SYSFS=$root FAKEPMU_SCENARIO=$scen LD_PRELOAD=$FAKEPMU \
			timeout 20 unshare --mount --propagation private /bin/sh -c \
			'mount --bind "$0" /proc/sys/kernel/nmi_watchdog && exec "$@"' "$tmp/nmi_watchdog" \
			"$TOPDOWND" -c "$tmp/l1.conf" --sysfs-root "$root" "$@"
	}
	wd "$FIXTURES/skx-2s" "$PWD/tests/scenarios/parity-skx.json" --probe >"$tmp/out" 2>"$tmp/err"
	expect_lines "skx-2s, watchdog on: cycles take a general-purpose counter, level 1 in two groups" \
		"Counters:     5 general-purpose needed, 4 per CPU (probed on CPU 0 with UOPS_ISSUED.ANY); fixed counter 1 held by the NMI watchdog" \
		"              2 groups rotate: 5 general-purpose counters needed, 4 per CPU (the NMI watchdog holds fixed counter 1: cycles take one of them); each group is scaled to the interval by its running time, as perf does"
	# Had the plan put cycles on fixed counter 1, that group would never
	# run; split, each runs half the time and the figures are the truth
	# (parity-skx.json, CPU 0: retiring 0.30, bad speculation 0.10).
	wd "$FIXTURES/skx-2s" "$PWD/tests/scenarios/parity-skx.json" --once --json >"$tmp/wd.json" 2>"$tmp/err"
	got=$(jq -r '[.cpus[0].level1.retiring, .cpus[0].level1.bad_speculation, .cpus[0].running_ratio] | @tsv' "$tmp/wd.json")
	if awk -v g="$got" 'BEGIN { split(g, v, "\t"); d = v[1] - 0.3; e = v[2] - 0.1; f = v[3] - 0.5;
		exit !(d * d < 4e-6 && e * e < 4e-6 && f * f < 4e-4) }'; then
		pass "skx-2s, watchdog on: CPU 0 retiring 0.30, bad speculation 0.10, running half the time"
	else
		not_ok "skx-2s, watchdog on: CPU 0 retiring 0.30, bad speculation 0.10, running half the time" "got $got"
	fi
	# AMD has no fixed counters: the watchdog takes one of the six, and
	# level 1's six events no longer fit one group.
	wd "$FIXTURES/genoa-2s" "$PWD/tests/scenarios/parity-zen4.json" --probe >"$tmp/out" 2>"$tmp/err"
	expect_lines "genoa-2s, watchdog on: 5 of 6 counters left, level 1 in two groups" \
		"Counters:     6 general-purpose needed, 5 per CPU (probed on CPU 0 with ls_not_halted_cyc); one more held by the NMI watchdog" \
		"              2 groups rotate: 6 general-purpose counters needed, 5 per CPU (the NMI watchdog holds one more); each group is scaled to the interval by its running time, as perf does"
	# parity-zen4.json, CPU 0: retiring 0.32, smt_contention 0.10.
	wd "$FIXTURES/genoa-2s" "$PWD/tests/scenarios/parity-zen4.json" --once --json >"$tmp/wd.json" 2>"$tmp/err"
	got=$(jq -r '[.cpus[0].level1.retiring, .cpus[0].level1.smt_contention, .cpus[0].running_ratio] | @tsv' "$tmp/wd.json")
	if awk -v g="$got" 'BEGIN { split(g, v, "\t"); d = v[1] - 0.32; e = v[2] - 0.1; f = v[3] - 0.5;
		exit !(d * d < 4e-6 && e * e < 4e-6 && f * f < 4e-4) }'; then
		pass "genoa-2s, watchdog on: CPU 0 retiring 0.32, smt_contention 0.10, running half the time"
	else
		not_ok "genoa-2s, watchdog on: CPU 0 retiring 0.32, smt_contention 0.10, running half the time" "got $got"
	fi
else
	missing "root and unshare --mount for the watchdog's file" 4
fi

# ---- configuration shapes the probe ----
printf '[collect]\ncpus = 0-3,99\nmodel = hardware\nlevel = 1\n' >"$tmp/cpus.conf"
probe "$FIXTURES/spr-2s" -c "$tmp/cpus.conf"
expect_rc "spr-2s, cpus = 0-3,99: --probe exits 0" 0
expect_lines "spr-2s, cpus = 0-3,99: 4 CPUs monitored, 99 ignored, level 1, model hardware" \
	"Level:        1" \
	"Model:        hardware (metric events only)" \
	"Monitored:    4 CPUs on 1 package, 4 cores (0-3)" \
	"Ignored:      1 CPU (99): configured in [collect] cpus but not present on this machine"

printf '[collect]\ncpus = 8-15\n' >"$tmp/atoms.conf"
probe "$FIXTURES/adl-hybrid" -c "$tmp/atoms.conf"
expect_rc "adl-hybrid, cpus = 8-15: --probe exits 0" 0
expect_lines "adl-hybrid, cpus = 8-15: the E-cores alone" \
	"Monitored:    8 CPUs on 1 package, 8 cores (8-15)" \
	"TopDown:      usable"

# ---- the probe counts, or says why it cannot ----
printf '{"cpus": {"default": {"slots_per_second": 1e10, "phases": [{"retiring": 0.3, "bad_speculation": 0.1, "frontend_bound": 0.2, "backend_bound": 0.4}]}},\n "faults": [{"op": "open", "errno": "%s"}]}\n' EACCES >"$tmp/eacces.json"
PROBE_SCENARIO=$tmp/eacces.json probe "$FIXTURES/spr-2s"
expect_rc "every open refused (EACCES): --probe exits 1" 1
expect_lines "every open refused: not usable, with the reason and the fix" \
	"TopDown:      not usable: opening TOPDOWN.SLOTS on CPU 0 (cpu) failed: Permission denied; the process has CAP_PERFMON, so a security module (SELinux, AppArmor, lockdown) or a seccomp filter denies perf_event_open"
printf '{"cpus": {"default": {"slots_per_second": 1e10, "phases": [{"retiring": 0.3, "bad_speculation": 0.1, "frontend_bound": 0.2, "backend_bound": 0.4}]}},\n "faults": [{"op": "open", "event": "INT_MISC.UOP_DROPPING", "errno": "EINVAL"}]}\n' >"$tmp/refine.json"
PROBE_SCENARIO=$tmp/refine.json probe "$FIXTURES/spr-2s"
expect_rc "the refinement event refused: --probe exits 0" 0
expect_lines "... it counted with model hardware, as the daemon would" \
	"Counted:      cpu on CPU 0, model hardware" "TopDown:      usable"
# Without the fake PMU this kernel has no such PMU: the open fails.
timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$FIXTURES/spr-2s" --probe >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "a sysfs tree that is not this machine: --probe exits 1" 1
if grep -q '^TopDown:      not usable: opening TOPDOWN.SLOTS on CPU 0 (cpu) failed: .*is that tree this machine?)$' "$tmp/out"; then
	pass "... saying the kernel refused the event"
else
	not_ok "... saying the kernel refused the event"
fi

# ---- a CPU taken offline in a copy of a fixture ----
cp -r "$FIXTURES/spr-2s" "$tmp/spr" && "$FIXTURES/set-online" "$tmp/spr" 5 0
probe "$tmp/spr"
expect_rc "spr-2s with CPU 5 offline: --probe exits 0" 0
expect_lines "spr-2s with CPU 5 offline: listed as offline" \
	"Monitored:    15 CPUs on 2 packages, 8 cores (0-4,6-15)" \
	"  package 1:  7 CPUs, 4 cores (4,6-7,12-15)" \
	"Offline:      1 CPU (5): monitored once they come online"

# ---- unusable sysfs roots (no fake PMU: there is nothing to emulate) ----
plain_probe() {
	timeout 20 "$TOPDOWND" -c /dev/null --sysfs-root "$1" --probe >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
plain_probe "$tmp/does-not-exist"
if [ "$rc" -eq 1 ] && grep -qF "$tmp/does-not-exist" "$tmp/err"; then
	pass "missing --sysfs-root: exit 1 naming the directory"
else
	not_ok "missing --sysfs-root: exit 1 naming the directory" "exit status $rc"
fi
mkdir -p "$tmp/empty-root"
plain_probe "$tmp/empty-root"
if [ "$rc" -eq 1 ] && [ -s "$tmp/err" ] && [ ! -s "$tmp/out" ]; then
	pass "--sysfs-root without devices/system/cpu: exit 1 with an error"
else
	not_ok "--sysfs-root without devices/system/cpu: exit 1 with an error" "exit status $rc"
fi

# ---- the real /sys ----
if [ -e /sys/bus/event_source/devices/cpu ] || [ -e /sys/bus/event_source/devices/cpu_core ]; then
	skip "this machine has a core PMU: --probe of /sys is not predictable"
else
	timeout 20 "$TOPDOWND" -c /dev/null --probe >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q '^TopDown:      not usable: no core PMU registered by the kernel' "$tmp/out"; then
		pass "/sys without a core PMU: --probe exits 1, 'no core PMU registered by the kernel'"
	else
		not_ok "/sys without a core PMU: --probe exits 1, 'no core PMU registered by the kernel'" \
			"exit status $rc"
	fi
fi
