#!/bin/bash
# SPDX-License-Identifier: MIT
# --probe on every fixture tree, under the fake PMU (the probe opens, reads
# and closes a real group per core PMU), and on the real /sys when it has
# no core PMU.
# Environment: TOPDOWND (the binary, default ./daemon/topdownd), FIXTURES
# (default tests/fixtures).  Run from the repository root by prove.
set -u

TOPDOWND=${TOPDOWND:-./daemon/topdownd}
FIXTURES=${FIXTURES:-tests/fixtures}
FAKEPMU=${FAKEPMU:-$PWD/tests/fakepmu/libfakepmu.so}
SCENARIO=$PWD/tests/scenarios/constant.json
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1:abort_on_error=1}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/10-probe.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "1..32"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1))
	echo "not ok $n - $1"
	shift
	for line in "$@"; do echo "# $line"; done
	if [ -s "$tmp/out" ]; then sed 's/^/#   stdout: /' "$tmp/out"; fi
	if [ -s "$tmp/err" ]; then sed 's/^/#   stderr: /' "$tmp/err"; fi
}

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
	if [ "$rc" -eq "$2" ]; then ok "$1"; else not_ok "$1" "exit status $rc, expected $2"; fi
}

# expect_lines DESC LINE...: each LINE is a whole line of the output.
expect_lines() {
	local desc=$1 missing=()
	shift
	for line in "$@"; do
		grep -qxF -- "$line" "$tmp/out" || missing+=("missing line: '$line'")
	done
	if [ ${#missing[@]} -eq 0 ]; then ok "$desc"; else not_ok "$desc" "${missing[@]}"; fi
}

# expect_not_usable DESC REASON: exactly one "TopDown:" line, saying
# "not usable: REASON", and no Monitored line.
expect_not_usable() {
	local desc=$1 want="TopDown:      not usable: $2" got count
	count=$(grep -c '^TopDown:' "$tmp/out")
	got=$(grep '^TopDown:' "$tmp/out")
	if [ "$count" -eq 1 ] && [ "$got" = "$want" ] && ! grep -q '^Monitored:' "$tmp/out"; then
		ok "$desc"
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
	ok "spr-2s: no level note, nothing unusable"
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

# ---- Ice Lake server: level 1 only ----
probe "$FIXTURES/icx-1s"
expect_rc "icx-1s: --probe exits 0" 0
expect_lines "icx-1s: level lowered to 1 with the reason, Ice Lake formulas" \
	"PMU:          cpu (type 4)" \
	"pmu_name:     icelake" \
	"Level:        1" \
	"Uarch:        Ice Lake server (GenuineIntel-6-6A)" \
	"              level 2 requested but cpu (Ice Lake server, pmu_name icelake) offers level 1; using level 1" \
	"Formulas:     icelakex (perf's x86/icelakex tables)" \
	"Model:        perf (refinement events: INT_MISC.UOP_DROPPING, INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1)" \
	"Monitored:    8 CPUs on 1 package, 4 cores (0-7)" \
	"TopDown:      usable"

# ---- Alder Lake hybrid ----
probe "$FIXTURES/adl-hybrid"
expect_rc "adl-hybrid: --probe exits 0" 0
expect_lines "adl-hybrid: cpu_core 0-7 monitored with Alder Lake's own table, cpu_atom 8-15 unsupported" \
	"PMU:          cpu_core (type 4)" \
	"pmu_name:     alderlake_hybrid" \
	"Uarch:        Alder Lake / Raptor Lake P-core (GenuineIntel-6-97)" \
	"CPUs:         8 (0-7)" \
	"Level:        2" \
	"Formulas:     alderlake (perf's x86/alderlake tables)" \
	"PMU:          cpu_atom (type 10)" \
	"CPUs:         8 (8-15)" \
	"Monitored:    8 CPUs on 1 package, 4 cores (0-7)" \
	"Unsupported:  8 CPUs (8-15): cpu_atom (E-core): no SLOTS counter or PERF_METRICS" \
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
	"no core PMU registered by the kernel (bus/event_source/devices has no cpu or cpu_core): a virtual machine without a virtual PMU, or a CPU the perf driver does not support"
expect_lines "vm-nopmu: no PMU, level 0, every CPU unsupported" \
	"PMU:          none" \
	"Level:        0" \
	"Unsupported:  4 CPUs (0-3)"

# ---- Skylake server ----
probe "$FIXTURES/skx-1s"
expect_rc "skx-1s: --probe exits 1" 1
expect_not_usable "skx-1s: one 'TopDown: not usable' line with the pre-Ice Lake reason" \
	"pre-Ice Lake CPU (pmu_name skylake): no SLOTS counter or PERF_METRICS, TopDown metrics need Ice Lake or later"
expect_lines "skx-1s: pmu_name skylake, level 0" \
	"PMU:          cpu (type 4)" \
	"pmu_name:     skylake" \
	"Uarch:        none (GenuineIntel-6-55)" \
	"Level:        0" \
	"Unsupported:  8 CPUs (0-7)"

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
expect_rc "adl-hybrid, cpus = 8-15: --probe exits 1" 1
expect_not_usable "adl-hybrid, cpus = 8-15: not usable, no configured CPU is a P-core" \
	"none of the configured CPUs is covered by a core PMU with TopDown: cpu_atom (E-core): no SLOTS counter or PERF_METRICS"

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
	ok "... saying the kernel refused the event"
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
	ok "missing --sysfs-root: exit 1 naming the directory"
else
	not_ok "missing --sysfs-root: exit 1 naming the directory" "exit status $rc"
fi
mkdir -p "$tmp/empty-root"
plain_probe "$tmp/empty-root"
if [ "$rc" -eq 1 ] && [ -s "$tmp/err" ] && [ ! -s "$tmp/out" ]; then
	ok "--sysfs-root without devices/system/cpu: exit 1 with an error"
else
	not_ok "--sysfs-root without devices/system/cpu: exit 1 with an error" "exit status $rc"
fi

# ---- the real /sys ----
if [ -e /sys/bus/event_source/devices/cpu ] || [ -e /sys/bus/event_source/devices/cpu_core ]; then
	n=$((n + 1))
	echo "ok $n # SKIP this machine has a core PMU: --probe of /sys is not predictable"
else
	timeout 20 "$TOPDOWND" -c /dev/null --probe >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q '^TopDown:      not usable: no core PMU registered by the kernel' "$tmp/out"; then
		ok "/sys without a core PMU: --probe exits 1, 'no core PMU registered by the kernel'"
	else
		not_ok "/sys without a core PMU: --probe exits 1, 'no core PMU registered by the kernel'" \
			"exit status $rc"
	fi
fi
