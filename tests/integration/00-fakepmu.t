#!/bin/bash
# SPDX-License-Identifier: MIT
# 00-fakepmu.t: proves every rule the fake PMU (tests/fakepmu/libfakepmu.so)
# emulates.  Runs each case of the test programs in build/tests/fakepmu/ in
# its own process under LD_PRELOAD, with the fixture, scenario and (for the
# exact tests) fake clock it needs, and checks that invalid scenarios stop
# the process with exit status 70 and the exact one-line message.
#
# Run from the repository root with prove.  Environment:
#   FAKEPMU      the library (default tests/fakepmu/libfakepmu.so)
#   TESTBIN_DIR  the test programs (default build/tests/fakepmu)
. "$(dirname "$0")/lib.sh"

root=$ROOT
TESTBIN_DIR=${TESTBIN_DIR:-$root/build/tests/fakepmu}
case $FAKEPMU in /*) ;; *) FAKEPMU=$PWD/$FAKEPMU ;; esac
case $TESTBIN_DIR in /*) ;; *) TESTBIN_DIR=$PWD/$TESTBIN_DIR ;; esac
fixtures=$root/tests/fixtures

for f in "$FAKEPMU" "$TESTBIN_DIR"/test_{open,count,hotplug,faults,scale}; do
	if [ ! -e "$f" ]; then
		echo "Bail out! $f is missing: build the fake PMU and its tests first (make)"
		exit 1
	fi
done

tmp=$TMP

# run DESC FIXTURE_DIR SCENARIO CLOCK(0|1) PROGRAM CASE
run() {
	local desc=$1 fixture=$2 scenario=$3 clock=$4 prog=$5 case=$6
	local -a extra=()

	if [ "$clock" = 1 ]; then
		echo 0 >"$tmp/clock"
		extra=(FAKEPMU_CLOCK_FILE="$tmp/clock")
	elif [ "$clock" = step ]; then
		rm -f "$tmp/trace"
		extra=(FAKEPMU_CLOCK_STEP=0.25 FAKEPMU_TRACE="$tmp/trace")
	fi
	# Another tables root (perf 7.2's, for the models 6.1 does not know).
	[ -n "${RUN_TABLES:-}" ] && extra+=(FAKEPMU_TABLES="$RUN_TABLES")
	if timeout 30 env LD_PRELOAD="$FAKEPMU" FAKEPMU_SCENARIO="$scenario" \
		FAKEPMU_SYSFS="$fixture" SET_ONLINE="$fixtures/set-online" "${extra[@]}" \
		"$TESTBIN_DIR/$prog" "$case" >"$tmp/out" 2>&1; then
		pass "$desc"
		grep '^# ' "$tmp/out" || true
	else
		fail "$desc ($prog $case, exit $?)" "$tmp/out"
	fi
}

# bad DESC EXPECTED_STDERR SCENARIO_JSON [FIXTURE]: the library constructor
# must reject the scenario (written to scen.json in the current directory).
bad() {
	local desc=$1 want=$2 json=$3 fixture=${4:-$fixtures/spr-2s} rc

	printf '%s\n' "$json" >"$tmp/bad/scen.json"
	(cd "$tmp/bad" && timeout 10 env LD_PRELOAD="$FAKEPMU" FAKEPMU_SCENARIO=scen.json \
		FAKEPMU_SYSFS="$fixture" "$TESTBIN_DIR/test_open" noop >"$tmp/out" 2>"$tmp/err")
	rc=$?
	if [ "$rc" = 70 ] && [ ! -s "$tmp/out" ] && [ "$(cat "$tmp/err")" = "$want" ]; then
		pass "invalid scenario: $desc"
	else
		{ echo "exit $rc, want 70"; echo "stderr: $(cat "$tmp/err")"; echo "want:   $want"; } >"$tmp/why"
		fail "invalid scenario: $desc" "$tmp/why"
	fi
}

# Phase fractions used below (L1 sums to 1, each L2 within its parent).
A='"retiring": 0.31, "bad_speculation": 0.07, "frontend_bound": 0.22, "backend_bound": 0.40,
   "heavy_operations": 0.06, "branch_mispredicts": 0.05, "fetch_latency": 0.13, "memory_bound": 0.27,
   "uop_dropping": 0.011, "recovery_cycles": 0.0023,
   "events": {"BR_MISP_RETIRED.ALL_BRANCHES": 0.0042, "MACHINE_CLEARS.COUNT": 0.0007}'
PLAIN='"retiring": 0.31, "bad_speculation": 0.07, "frontend_bound": 0.22, "backend_bound": 0.40,
   "uop_dropping": 0.011, "recovery_cycles": 0.0023'
B='"retiring": 0.55, "bad_speculation": 0.15, "frontend_bound": 0.10, "backend_bound": 0.20,
   "heavy_operations": 0.20, "branch_mispredicts": 0.12, "fetch_latency": 0.04, "memory_bound": 0.09,
   "uop_dropping": 0.003, "recovery_cycles": 0.001'

cat >"$tmp/basic.json" <<EOF
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [{$A}]}}}
EOF
# Without named events, for fixtures whose CPU has no perf table or no core PMU.
cat >"$tmp/plain.json" <<EOF
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [{$PLAIN}]}}}
EOF
cat >"$tmp/count.json" <<EOF
{"cpus": {
   "default": {"slots_per_second": 1.2e10, "phases": [{"seconds": 1, $A}, {$B}]},
   "1": {"phases": [{"retiring": 0.3, "bad_speculation": 0.3, "frontend_bound": 0.3,
                     "backend_bound": 0.1, "fetch_latency": 0.3, "memory_bound": 0.1}]},
   "2": {"running": 0.5},
   "3": {"slots_per_second": 2.4e10},
   "8-11": {"slots_per_second": 3.3e9, "running": 0.25},
   "14": {"phases": [{"seconds": 0.1, "retiring": 0.4, "bad_speculation": 0.00392156862745098,
                      "frontend_bound": 0.2, "backend_bound": 0.39607843137254902},
                     {"retiring": 0.4, "bad_speculation": 0, "frontend_bound": 0.2, "backend_bound": 0.4}]},
   "15": {"slots_per_second": 1.0000003e9, "running": 0.7}}}
EOF
cat >"$tmp/rt.json" <<EOF
{"cpus": {
   "default": {"slots_per_second": 1.2e10, "running": 1.0, "phases": [{$A}]},
   "2": {"running": 0.5},
   "5": {"phases": [{"seconds": 1.5, $A}, {$B}]}}}
EOF
cat >"$tmp/faults.json" <<EOF
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [{$A}]}},
 "faults": [
   {"cpus": "0-3", "op": "open", "errno": "EACCES"},
   {"cpus": "5", "op": "open", "event": "uop_dropping", "errno": "EINVAL"},
   {"cpus": "5", "op": "read", "errno": "EINTR", "count": 1},
   {"cpus": "6", "op": "read", "short": true, "count": 2},
   {"cpus": "7", "op": "read", "errno": "EIO", "after_seconds": 1},
   {"cpus": "8-9", "op": "open", "event": "slots", "errno": "EBUSY", "count": 1},
   {"cpus": "10", "op": "open", "errno": "EMFILE", "count": 2, "after_seconds": 0.5}]}
EOF

# ---- perf_event_open validation (one errno rule per case) ----
spr=$fixtures/spr-2s
run "slots + 8 metrics + refinement + other events open as one group" "$spr" "$tmp/basic.json" 0 test_open full_group_opens
run "metric event without a slots leader (group_fd -1, or cycles leader): EINVAL" "$spr" "$tmp/basic.json" 0 test_open metric_without_slots_leader
run "sampling metric event (sample_period or freq): EINVAL" "$spr" "$tmp/basic.json" 0 test_open metric_sampling
run "metric added to a sampling slots leader: EINVAL" "$spr" "$tmp/basic.json" 0 test_open slots_leader_sampling
run "config1/config2 on slots or metric events: EINVAL" "$spr" "$tmp/basic.json" 0 test_open topdown_config1_config2
run "edge/inv/cmask/any on slots or metric events: EINVAL" "$spr" "$tmp/basic.json" 0 test_open topdown_filter_bits
run "same metric twice, a 9th metric, two slots in one group: EINVAL" "$spr" "$tmp/basic.json" 0 test_open too_many_or_duplicate_metrics
run "cpu < 0 or >= possible CPUs: EINVAL" "$spr" "$tmp/basic.json" 0 test_open cpu_out_of_range
run "pid != -1 is not emulated: EINVAL" "$spr" "$tmp/basic.json" 0 test_open pid_not_supported
run "unknown read_format bits: EINVAL" "$spr" "$tmp/basic.json" 0 test_open read_format_unknown_bits
run "group_fd that is not a fake fd: EBADF" "$spr" "$tmp/basic.json" 0 test_open group_fd_not_fake
run "group_fd that is a member, not a leader: EINVAL" "$spr" "$tmp/basic.json" 0 test_open group_fd_not_leader
run "leader on another CPU: EINVAL" "$spr" "$tmp/basic.json" 0 test_open leader_on_other_cpu
run "attr.size below PERF_ATTR_SIZE_VER0 or non-zero tail: E2BIG" "$spr" "$tmp/basic.json" 0 test_open attr_size
run "unknown type ENOENT, non-core PMU EOPNOTSUPP, generic events on the core PMU" "$spr" "$tmp/basic.json" 0 test_open pmu_types
run "a group that cannot fit the counters (8 general-purpose, fixed 1 and 3): EINVAL" "$spr" "$tmp/basic.json" 0 test_open group_capacity
run "ioctl: IOC_ID to NULL EFAULT, unknown request ENOTTY" "$spr" "$tmp/basic.json" 0 test_open ioctl_errors
run "PERF_FLAG_FD_CLOEXEC honoured, unknown flags EINVAL, closed fd not fake" "$spr" "$tmp/basic.json" 0 test_open fd_flags
run "ids are unique, increasing, from 1000" "$spr" "$tmp/basic.json" 0 test_open ids_unique
run "EMFILE from real fds under a lowered RLIMIT_NOFILE" "$spr" "$tmp/basic.json" 0 test_open emfile
run "other syscalls, read and close pass through" "$spr" "$tmp/basic.json" 0 test_open passthrough
run "icx-1s: L2 metric on a 4-metric PMU: EINVAL" "$fixtures/icx-1s" "$tmp/basic.json" 0 test_open l2_on_icelake
run "adl-hybrid: CPU not in the PMU's cpus: ENOENT" "$fixtures/adl-hybrid" "$tmp/basic.json" 0 test_open hybrid_cpu_not_in_pmu
run "adl-hybrid: cpu_core and cpu_atom events in one group: ENOENT (the other PMU's event_init refuses the CPU first)" "$fixtures/adl-hybrid" "$tmp/basic.json" 0 test_open hybrid_mixed_group
run "x86 group validation: the leader and the new event count, OFF siblings do not (collect_events)" "$spr" "$tmp/basic.json" 0 test_open validation_skips_off_siblings
run "arm64 group validation: every OFF event is skipped, the leader too (arm_pmu.c validate_event)" "$fixtures/neoverse-v2-64" "$tmp/plain.json" 0 test_open validation_arm_skips_off
cat >"$tmp/held.json" <<EOF
{"cpus": {"default": {"slots_per_second": 1.2e10, "held": {"gp": 1}, "phases": [{$PLAIN}]}}}
EOF
run "a pinned holder's counter: a group that needs it validates and never runs" "$fixtures/genoa-2s" "$tmp/held.json" 0 test_open held_counter_never_runs
run "a group read over 16 KiB: E2BIG (perf_event_validate_size)" "$spr" "$tmp/basic.json" 0 test_open oversized_group_e2big
cat >"$tmp/mediated.json" <<EOF
{"mediated_vpmu": true, "cpus": {"default": {"slots_per_second": 1.2e10, "phases": [{$A}]}}}
EOF
run "mediated vPMU: events without exclude_guest EOPNOTSUPP" "$spr" "$tmp/mediated.json" 0 test_open mediated_vpmu
rm -rf "$tmp/fx"
cp -r "$fixtures/adl-hybrid" "$tmp/fx"
run "adl-hybrid: an offline CPU is out of its PMU's cpus: ENOENT, then fine once back" "$tmp/fx" "$tmp/basic.json" 0 test_open hybrid_offline_enoent
rm -rf "$tmp/fx"
cp -r "$fixtures/neoverse-v2-64" "$tmp/fx"
rm "$tmp/fx/bus/event_source/devices/armv8_pmuv3_0/events/stall_slot"
cat >"$tmp/arm.json" <<EOF
{"cpus": {"default": {"slots_per_second": 8e9, "phases": [{$PLAIN,
   "events": {"STALL_SLOT": 0.5, "STALL_SLOT_FRONTEND": 0.2}}]}}}
EOF
run "arm64: an event events/ leaves out (not implemented, PMCEID) opens and counts 0" "$tmp/fx" "$tmp/arm.json" 0 test_open arm_hidden_event_counts_zero
cat >"$tmp/arm-n3.json" <<EOF
{"cpus": {"default": {"slots_per_second": 8e9, "phases": [{$PLAIN,
   "events": {"STALL_SLOT_FRONTEND": 0.2, "STALL_FRONTEND_FLUSH": 0.01}}]}}}
EOF
RUN_TABLES=$ROOT/reference/perf-tables-7.2 \
	run "arm64: an IMPLEMENTATION DEFINED event (0x8162, never in events/) counts its rate; a common one events/ leaves out counts 0" \
	"$fixtures/neoverse-n3-16" "$tmp/arm-n3.json" 0 test_open arm_impdef_event_counts
run "adl-hybrid: slots/metric config on cpu_atom: EINVAL" "$fixtures/adl-hybrid" "$tmp/basic.json" 0 test_open hybrid_atom_no_slots
run "adl-hybrid: Gracemont has no fixed counters 4-6: those three codes take general-purpose counters, the 6 of them hold cycles aside and no 7th event" "$fixtures/adl-hybrid" "$tmp/basic.json" 0 test_open skymont_fixed_counters
FAKEPMU_TEST_SKYMONT=1 RUN_TABLES=$ROOT/reference/perf-tables-7.2 run "lnl-hybrid: Skymont's fixed counters 4-6 take TOPDOWN_BAD_SPECULATION, _FE_BOUND and _RETIRING (0x0073, 0x019c, 0x02c2), a general-purpose counter when taken" "$fixtures/lnl-hybrid" "$tmp/basic.json" 0 test_open skymont_fixed_counters
FAKEPMU_TEST_SKYMONT=1 RUN_TABLES=$ROOT/reference/perf-tables-7.2 run "nvl-hybrid: Arctic Wolf's fixed counters 4-6 (intel_arw_event_constraints) take the same three codes, a general-purpose counter when taken" "$fixtures/nvl-hybrid" "$tmp/plain.json" 0 test_open skymont_fixed_counters
run "vm-nopmu: type 4 and generic events: ENOENT" "$fixtures/vm-nopmu" "$tmp/plain.json" 0 test_open vm_no_core_pmu
run "spr-holes: CPU offline at open: ENODEV" "$fixtures/spr-holes" "$tmp/basic.json" 0 test_open offline_cpu_enodev
run "skx-1s: no events/slots, slots/metric config: EINVAL" "$fixtures/skx-1s" "$tmp/plain.json" 0 test_open skx_no_slots

# ---- counting model (exact, on the fake clock) ----
for c in group_read reset_on_read per_cpu_keys multiplex fixed_counter_sharing rotate_active_only positive_only ioc_reset \
	ioc_disable_enable start_disabled refinement_events table_events software_events read_formats close_leader; do
	case $c in
	group_read) d="group read: nr, ids, times, metric = slots*byte/255, refinement counts" ;;
	reset_on_read) d="reset on read: every interval has its own period's bytes, phases integrate piecewise" ;;
	per_cpu_keys) d="per-CPU keys inherit from default; tie-breaking and L2 clamping of bytes" ;;
	multiplex) d="running 0.5: every other 4 ms slice taken; SLOTS/PERF_METRICS saved at schedule-out, restored at schedule-in" ;;
	fixed_counter_sharing) d="groups rotate on fixed counter 3 every 4 ms tick, placed in list order until one does not fit" ;;
	rotate_active_only) d="the rotation moves the first active flexible group: a disabled one never takes a turn (ctx_event_to_rotate)" ;;
	positive_only) d="a metric whose value went down since schedule-out adds nothing (__icl_update_topdown_event)" ;;
	ioc_reset) d="IOC_RESET folds, zeroes counts, keeps times" ;;
	ioc_disable_enable) d="IOC_DISABLE stops counts and time_enabled; IOC_ENABLE resumes" ;;
	start_disabled) d="attr.disabled: nothing counts until IOC_ENABLE" ;;
	refinement_events) d="UOP_DROPPING/RECOVERY_CYCLES(cmask=1,edge) with the fixture's encodings = fraction*slots; Ice Lake's encoding and others 0" ;;
	table_events) d="general-purpose events count the scenario's rate of the event perf's table names" ;;
	software_events) d="cpu-clock/task-clock count ns; software groups are never taken off" ;;
	read_formats) d="read layouts: non-group, GROUP via member, LOST, ENOSPC" ;;
	close_leader) d="closing the leader: metrics go to ERROR (EOF), others become singletons" ;;
	esac
	run "$d" "$spr" "$tmp/count.json" 1 test_count "clk_$c"
done

cat >"$tmp/hybrid.json" <<EOF
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [{$PLAIN,
   "events": {"CPU_CLK_UNHALTED.THREAD": 0.25}}]},
   "8-15": {"slots_per_second": 6e9}}}
EOF
run "adl-hybrid: an event counts on each PMU under that PMU's name for it (CPU_CLK_UNHALTED.THREAD, 0x3c: cpu_atom's table calls it CORE)" \
	"$fixtures/adl-hybrid" "$tmp/hybrid.json" 1 test_count clk_hybrid_table_names

# ---- a core's thread activity drives the reference clocks ----
cat >"$tmp/smt.json" <<EOF
{"tsc_hz": 2e9, "crystal_hz": 2.5e7,
 "cpus": {"default": {"slots_per_second": 1.2e10, "phases": [{$A}]}},
 "smt": {"default": [{"seconds": 0.1, "both": 0.5, "first": 0.2, "second": 0.1},
                     {"both": 0.25, "second": 0.5}]}}
EOF
run "smt activity: REF_TSC, ONE_THREAD_ACTIVE, REF_DISTRIBUTED and msr/tsc of both threads of a core as the SDM defines them" \
	"$spr" "$tmp/smt.json" 1 test_count clk_smt_activity

# ---- other users of the PMU that come and go ----
cat >"$tmp/holders.json" <<EOF
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [{$A}]},
   "0": {"holders": [{"gp": 6, "pinned": false, "from": 0, "to": 0.2}]},
   "1": {"holders": [{"gp": 6, "pinned": true, "from": 0.1, "to": 0.3}]}}}
EOF
rm -f "$tmp/trace"
FAKEPMU_TRACE="$tmp/trace" run "holders: a flexible one takes turns with our group (4 ms slices, half each) and leaves; a pinned one keeps it off while there" \
	"$spr" "$tmp/holders.json" 1 test_count clk_holders
# In once as it arrives beside our group's first event, then every other
# slice until it leaves.
is "$(grep -c '^holder cpu=0 in ' "$tmp/trace"):$(grep -c '^holder cpu=0 out ' "$tmp/trace"):$(grep '^holder cpu=0 \(arrives\|leaves\)' "$tmp/trace" | tr '\n' ' ')" \
	"26:26:holder cpu=0 arrives 0 holder cpu=0 leaves 200000000 " \
	"... the flexible holder's turns are traced: in and out 26 times, arriving at 0 and leaving at 0.2 s"

# ---- the read-paced clock (tests/oracle/parity.py's) ----
run "read-paced clock: an event's nth read sees n steps, whatever the real clock did; slots over exactly those steps" \
	"$spr" "$tmp/count.json" step test_count step_paced_reads
is "$(grep '^clock ' "$tmp/trace")" "clock 750000000" "read-paced clock: its last time is traced at exit (parity.py places a tool's intervals back from it)"

# ---- counting model on the real clock ----
run "real clock: group read after 80 ms, bytes exact, slots/running = rate within 1%" "$spr" "$tmp/rt.json" 0 test_count rt_group_read
run "real clock: running 0.5, running/enabled = 0.5, slots = 0.5*rate*enabled" "$spr" "$tmp/rt.json" 0 test_count rt_multiplex
run "real clock: a first phase of 1.5 s, bytes before and after the switch" "$spr" "$tmp/rt.json" 0 test_count rt_phases
run "thread safety with concurrent pipe I/O; cost of a 10-event read" "$spr" "$tmp/rt.json" 0 test_count rt_threads_and_cost
run "__read_chk on a fake fd" "$spr" "$tmp/rt.json" 0 test_count rt_read_chk

# ---- hotplug, each on its own copy of the fixture ----
for c in offline_midrun offline_enodev_then_online cpu_online_file_alone; do
	case $c in
	offline_midrun) d="CPU offline mid-run: nr=1, frozen at the mtime, stays frozen after online; new group counts" ;;
	offline_enodev_then_online) d="open on a CPU taken offline: ENODEV, then fine once back" ;;
	cpu_online_file_alone) d="cpuN/online alone saying 0 takes the CPU offline" ;;
	esac
	rm -rf "$tmp/fx"
	cp -r "$spr" "$tmp/fx"
	run "$d" "$tmp/fx" "$tmp/basic.json" 0 test_hotplug "$c"
done

# ---- injected faults (fake clock) ----
for c in open_eacces_listed_cpus open_event_specific read_eintr_once read_short \
	read_after_seconds open_count_per_cpu open_after_seconds_count; do
	run "fault: $c" "$spr" "$tmp/faults.json" 1 test_faults "$c"
done

# ---- scale: 1024 CPUs x 12 events ----
if python3 "$fixtures/gen-fixture" --kind spr --cpus 1024 --packages 2 --smt 2 "$tmp/fx1024" \
	>"$tmp/out" 2>&1; then
	run "1024 CPUs x 12 events = 12288 fake fds" "$tmp/fx1024" "$tmp/basic.json" 0 test_scale many_fds
	rm -rf "$tmp/fx1024"
else
	fail "generate the 1024-CPU fixture" "$tmp/out"
fi

# ---- example scenario shipped in tests/scenarios ----
run "tests/scenarios/fakepmu-example.json loads" "$spr" "$root/tests/scenarios/fakepmu-example.json" 0 test_open noop

# ---- environment and scenario validation (exit 70, one exact line) ----
mkdir -p "$tmp/bad"
D='"slots_per_second": 1e9'
P="$A"
env -u FAKEPMU_SCENARIO LD_PRELOAD="$FAKEPMU" FAKEPMU_SYSFS="$spr" \
	"$TESTBIN_DIR/test_open" noop >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 70 ] && [ "$(cat "$tmp/err")" = "fakepmu: FAKEPMU_SCENARIO is not set (path of the JSON scenario)" ]; then
	pass "FAKEPMU_SCENARIO unset: exit 70"
else
	fail "FAKEPMU_SCENARIO unset: exit 70 (got $rc)" "$tmp/err"
fi
env -u FAKEPMU_SYSFS LD_PRELOAD="$FAKEPMU" FAKEPMU_SCENARIO="$tmp/basic.json" \
	"$TESTBIN_DIR/test_open" noop >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 70 ] && [ "$(cat "$tmp/err")" = "fakepmu: FAKEPMU_SYSFS is not set (fixture tree standing in for /sys)" ]; then
	pass "FAKEPMU_SYSFS unset: exit 70"
else
	fail "FAKEPMU_SYSFS unset: exit 70 (got $rc)" "$tmp/err"
fi
bad "FAKEPMU_SYSFS without a cpu tree" \
	'fakepmu: FAKEPMU_SYSFS=/nonexistent: cannot read devices/system/cpu/possible: No such file or directory' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}}" /nonexistent
rm -f "$tmp/bad/scen.json"
(cd "$tmp/bad" && env LD_PRELOAD="$FAKEPMU" FAKEPMU_SCENARIO=missing.json FAKEPMU_SYSFS="$spr" \
	"$TESTBIN_DIR/test_open" noop >"$tmp/out" 2>"$tmp/err")
rc=$?
if [ $rc = 70 ] && [ "$(cat "$tmp/err")" = "fakepmu: missing.json: cannot load: unable to open missing.json: No such file or directory" ]; then
	pass "invalid scenario: missing file"
else
	fail "invalid scenario: missing file (got $rc)" "$tmp/err"
fi
bad "not JSON" \
	"fakepmu: scen.json:1:13: invalid JSON: invalid token near 'cpus'" \
	'{"cpus": cpus}'
bad "duplicate key" \
	"fakepmu: scen.json:1:32: invalid JSON: duplicate object key near '\"cpus\"'" \
	'{"cpus": {"default": {}}, "cpus": {}}'
bad "unknown top-level key" 'fakepmu: scen.json: unknown key "fault"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"fault\": []}"
bad "no cpus" 'fakepmu: scen.json: "cpus" is required' '{"faults": []}'
bad "unknown phase key" 'fakepmu: scen.json: cpus.default.phases[0]: unknown key "retring"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{\"seconds\": 5, \"retring\": 0.3}]}}}"
bad "unknown CPU entry key" 'fakepmu: scen.json: cpus.3: unknown key "sps"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}, \"3\": {\"sps\": 1}}}"
bad "L1 fractions do not sum to 1" \
	'fakepmu: scen.json: cpus.default.phases[0]: retiring + bad_speculation + frontend_bound + backend_bound = 0.9, must be 1' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{\"retiring\": 0.3, \"bad_speculation\": 0.1, \"frontend_bound\": 0.2, \"backend_bound\": 0.3}]}}}"
bad "L2 fraction above its parent" \
	'fakepmu: scen.json: cpus.default.phases[0]: heavy_operations 0.4 exceeds its parent retiring 0.3' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{\"retiring\": 0.3, \"bad_speculation\": 0.1, \"frontend_bound\": 0.2, \"backend_bound\": 0.4, \"heavy_operations\": 0.4}]}}}"
bad "fraction out of range" 'fakepmu: scen.json: cpus.default.phases[0].retiring: must be a number in [0,1]' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{\"retiring\": 1.5}]}}}"
bad "negative uop_dropping" 'fakepmu: scen.json: cpus.default.phases[0].uop_dropping: must be a number >= 0 (events per slot)' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{\"retiring\": 1, \"uop_dropping\": -1}]}}}"
bad "seconds missing before the last phase" \
	'fakepmu: scen.json: cpus.default.phases[0]: "seconds" is required except on the last phase' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}, {$P}]}}}"
bad "seconds not > 0" 'fakepmu: scen.json: cpus.default.phases[0].seconds: must be a number > 0' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{\"seconds\": 0, $P}, {$P}]}}}"
bad "empty phases" 'fakepmu: scen.json: cpus.default.phases: must be a non-empty array' \
	"{\"cpus\": {\"default\": {$D, \"phases\": []}}}"
bad "running out of range" 'fakepmu: scen.json: cpus.default.running: must be a number in (0,1]' \
	"{\"cpus\": {\"default\": {$D, \"running\": 0, \"phases\": [{$P}]}}}"
bad "negative slots_per_second" 'fakepmu: scen.json: cpus.default.slots_per_second: must be a number >= 0' \
	"{\"cpus\": {\"default\": {\"slots_per_second\": -5, \"phases\": [{$P}]}}}"
bad "default without phases" 'fakepmu: scen.json: cpus.default: "phases" is required' \
	"{\"cpus\": {\"default\": {$D}}}"
bad "reversed cpulist key" 'fakepmu: scen.json: cpus: key "3-1" is not a valid cpulist: range 3-1 is reversed' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}, \"3-1\": {}}}"
bad "malformed cpulist key" 'fakepmu: scen.json: cpus: key "2,,4" is not a valid cpulist: expected a CPU number at ",4"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}, \"2,,4\": {}}}"
bad "cpulist key beyond the possible CPUs" \
	'fakepmu: scen.json: cpus: key "16" is not a valid cpulist: CPU 16 is not a possible CPU (there are 16)' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}, \"16\": {}}}"
bad "overlapping cpulist keys" 'fakepmu: scen.json: cpus: keys "0-3" and "3" overlap on CPU 3' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}, \"0-3\": {}, \"3\": {}}}"
bad "smt: one core's threads in two keys" \
	'fakepmu: scen.json: smt: CPUs 0 and 8 are threads of one core: they must be in the same key' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"smt\": {\"0-7\": [{\"both\": 1}], \"8-15\": [{\"both\": 1}]}}"
bad "smt: shares above 1" \
	'fakepmu: scen.json: smt.default[0]: both + first + second = 1.2, must be at most 1 (neither is the rest)' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"smt\": {\"default\": [{\"both\": 0.6, \"first\": 0.6}]}}"
bad "no default and CPUs left without an entry" \
	'fakepmu: scen.json: cpus: "default" is required: CPUs 8-15 have no entry' \
	"{\"cpus\": {\"0-7\": {$D, \"phases\": [{$P}]}}}"
bad "no default and an entry missing a field" \
	'fakepmu: scen.json: cpus.0-15: "phases" is required (there is no "default" to inherit it from)' \
	"{\"cpus\": {\"0-15\": {$D}}}"
bad "fault: unknown key" 'fakepmu: scen.json: faults[0]: unknown key "cpu"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"cpu\": \"1\"}]}"
bad "fault: bad op" 'fakepmu: scen.json: faults[0].op: must be "open" or "read"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"op\": \"write\", \"errno\": \"EIO\"}]}"
bad "fault: unknown errno name" 'fakepmu: scen.json: faults[0].errno: unknown errno name "EFOO"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"op\": \"open\", \"errno\": \"EFOO\"}]}"
bad "fault: open without errno" 'fakepmu: scen.json: faults[0]: "errno" is required for an open fault' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"op\": \"open\"}]}"
bad "fault: read with errno and short" \
	'fakepmu: scen.json: faults[0]: a read fault takes one of "errno", "short": true or "delay_ms"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"op\": \"read\", \"errno\": \"EIO\", \"short\": true}]}"
bad "fault: read without errno, short or delay" \
	'fakepmu: scen.json: faults[0]: a read fault takes one of "errno", "short": true or "delay_ms"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"op\": \"read\"}]}"
bad "fault: delay_ms on an open fault" 'fakepmu: scen.json: faults[0].delay_ms: only allowed with "op": "read"' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"op\": \"open\", \"errno\": \"EIO\", \"delay_ms\": 5}]}"
bad "holders: one that holds nothing" 'fakepmu: scen.json: cpus.default.holders[0]: holds no counter: give "gp" or "fixed"' \
	"{\"cpus\": {\"default\": {$D, \"holders\": [{\"pinned\": false}], \"phases\": [{$P}]}}}"
bad "holders: leaving before it comes" 'fakepmu: scen.json: cpus.default.holders[0].to: must be a number after "from"' \
	"{\"cpus\": {\"default\": {$D, \"holders\": [{\"gp\": 2, \"from\": 3, \"to\": 1}], \"phases\": [{$P}]}}}"
bad "fault: unknown event" \
	"fakepmu: scen.json: faults[0].event: unknown event \"cycles\" (slots, retiring, bad_speculation, frontend_bound, backend_bound, heavy_operations, branch_mispredicts, fetch_latency, memory_bound, uop_dropping, recovery_cycles, or an event of perf's sapphirerapids tables)" \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"op\": \"open\", \"errno\": \"EIO\", \"event\": \"cycles\"}]}"
bad "events: a name perf's table for the fixture does not have" \
	"fakepmu: scen.json: cpus.default.phases[0].events.INT_MISC.UOP_DROPING: unknown event \"INT_MISC.UOP_DROPING\": not in perf's sapphirerapids tables for this fixture" \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$PLAIN, \"events\": {\"INT_MISC.UOP_DROPING\": 0.01}}]}}}"
bad "events: not an object" \
	'fakepmu: scen.json: cpus.default.phases[0].events: must be an object of perf event names and events per slot' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$PLAIN, \"events\": [1]}]}}}"
bad "events: negative rate" \
	'fakepmu: scen.json: cpus.default.phases[0].events.INT_MISC.UOP_DROPPING: must be a number >= 0 (events per slot)' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$PLAIN, \"events\": {\"INT_MISC.UOP_DROPPING\": -1}}]}}}"
bad "events: the same event as uop_dropping and by name" \
	'fakepmu: scen.json: cpus.default.phases[0].events.INT_MISC.UOP_DROPPING: given twice (also as uop_dropping or recovery_cycles)' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$PLAIN, \"events\": {\"INT_MISC.UOP_DROPPING\": 0.02}}]}}}"
bad "events: one counter by two names (perf encodes CPU_CLK_UNHALTED.CORE and .THREAD_P as 0x3c)" \
	'fakepmu: scen.json: cpus.default.phases[0].events.CPU_CLK_UNHALTED.THREAD_P: given twice (also as uop_dropping or recovery_cycles)' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$PLAIN, \"events\": {\"CPU_CLK_UNHALTED.CORE\": 0.2, \"CPU_CLK_UNHALTED.THREAD_P\": 0.2}}]}}}" \
	"$fixtures/adl-hybrid"
bad "fault: bad cpulist" 'fakepmu: scen.json: faults[0].cpus: "0-99" is not a valid cpulist: CPU 99 is not a possible CPU (there are 16)' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"cpus\": \"0-99\", \"op\": \"open\", \"errno\": \"EIO\"}]}"
bad "fault: count 0" 'fakepmu: scen.json: faults[0].count: must be an integer >= 1' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"op\": \"open\", \"errno\": \"EIO\", \"count\": 0}]}"
bad "fault: negative after_seconds" 'fakepmu: scen.json: faults[0].after_seconds: must be a number >= 0' \
	"{\"cpus\": {\"default\": {$D, \"phases\": [{$P}]}}, \"faults\": [{\"op\": \"open\", \"errno\": \"EIO\", \"after_seconds\": -1}]}"

plan "$_T_NUM"
done_testing
