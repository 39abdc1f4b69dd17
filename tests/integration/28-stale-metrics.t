#!/bin/bash
# SPDX-License-Identifier: MIT
# No stale PERF_METRICS: another user holds the slots counter 80 % of the
# time (the fake PMU's "running": 0.2; its rotation zeroes SLOTS and
# PERF_METRICS each time the group is scheduled in, as the kernel's
# icl_set_topdown_event_period does) while the workload changes.  Whatever
# the phase of topdownd's reads against the rotation, every CPU reports
# the new workload two intervals after the change, and the old one before
# it.  Many runs, each a different phase: Sapphire Rapids, Ice Lake
# server and the Alder Lake P-cores, six runs each.
. "$(dirname "$0")/lib.sh"

RUNS=6
fixtures=(spr-2s icx-1s adl-hybrid)
# Phase 1 (3 s): retiring 0.3, bad speculation 0.1, frontend 0.2, backend
# 0.4; then retiring 0.6, 0.05, 0.15, 0.2.  topdownd reads every 300 ms.
jq -n '{cpus: {default: {slots_per_second: 12e9, running: 0.2, phases: [
	{seconds: 3, retiring: 0.3, bad_speculation: 0.1, frontend_bound: 0.2, backend_bound: 0.4},
	{retiring: 0.6, bad_speculation: 0.05, frontend_bound: 0.15, backend_bound: 0.2}]}}}' >"$TMP/held.json"
plan $((${#fixtures[@]} * RUNS * 2))

run() { # FIXTURE N
	env FAKEPMU_SYSFS="$FIXTURES/$1" FAKEPMU_SCENARIO="$TMP/held.json" LD_PRELOAD="$FAKEPMU" \
		timeout 60 "$TOPDOWND" -c /dev/null --sysfs-root "$FIXTURES/$1" --watch --json --count 18 \
		-i 300ms >"$TMP/$1-$2.json" 2>"$TMP/$1-$2.err"
}
for f in "${fixtures[@]}"; do
	for n in $(seq 1 $RUNS); do
		run "$f" "$n" &
		while [ "$(jobs -rp | wc -l)" -ge 3 ]; do sleep 0.2; done
	done
done
wait

# The CPUs of documents FROM..TO whose retiring is not WANT within 0.5 pp
# (or that have no figures): "cpu@document=value", or nothing.
off() { # FILE FROM TO WANT
	jq -r --argjson from "$2" --argjson to "$3" --argjson want "$4" -s '
		[to_entries[] | select(.key >= $from and .key <= $to) | .key as $k
		 | .value.cpus[] | select(.state == "monitored" and .pmu != "cpu_atom")
		 | select(.level1 == null or ((.level1.retiring - $want) | fabs) > 0.005)
		 | "\(.cpu)@\($k)=\(.level1.retiring)"] | .[:6] | join(" ")' "$1"
}
for f in "${fixtures[@]}"; do
	for n in $(seq 1 $RUNS); do
		out=$TMP/$f-$n.json
		# Documents 1-3 end by 1.2 s (plus the start-up): phase 1.  13-17
		# start at 3.9 s or later: at least two intervals into phase 2.
		bad=$( [ "$(wc -l <"$out")" -eq 18 ] && off "$out" 1 3 0.3 || echo "$(wc -l <"$out") documents")
		is "$bad" "" "$f run $n: every CPU reports the first workload before the change"
		bad=$( [ "$(wc -l <"$out")" -eq 18 ] && off "$out" 13 17 0.6 || echo "$(wc -l <"$out") documents")
		is "$bad" "" "$f run $n: every CPU reports the new workload two intervals after the change (running $(jq -s '[.[-1].cpus[] | select(.state == "monitored") | .running_ratio] | min' "$out"))"
	done
done
done_testing
