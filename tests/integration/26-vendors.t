#!/bin/bash
# SPDX-License-Identifier: MIT
# AMD and Arm as an operator sees them: /metrics, the JSON API and --once
# on the Genoa (Zen 4, SMT), Turin (Zen 5) and Neoverse V2 fixtures, each
# against its scenario's truth (tests/scenarios/parity-*.json state the
# event rates; the figures below are perf's expressions on those rates),
# and the reasons on the parts perf has no TopDown for.
. "$(dirname "$0")/lib.sh"

plan 38

SCEN=$ROOT/tests/scenarios

# ---- Genoa: CPU 0 (parity-zen4.json's default rates) ----
# per slot: no_ops_from_frontend 0.20, backend_stalls 0.30, smt_contention
# 0.10, ops dispatched 0.40 of which 0.32 retire: retiring 0.32, bad
# speculation 0.08, frontend 0.20, backend 0.30, smt_contention 0.10;
# level 2: latency 6 x 0.02 = 0.12, mispredicts 0.08 x 0.006/0.008 = 0.06,
# memory 0.30 x 0.03/0.05 = 0.18, microcode 0.32 x 0.04/0.32 = 0.04.
td_start "$FIXTURES/genoa-2s" "$SCEN/parity-zen4.json" -i 200ms || exit 1
wait_intervals 3
curl -s "$TD_URL/metrics?granularity=cpu" >"$TMP/genoa.prom"
slots=$(sample "$TMP/genoa.prom" 'topdown_slots_total{cpu="0",core="0",package="0"}')
smt=$(sample "$TMP/genoa.prom" 'topdown_level1_slots_total{cpu="0",core="0",package="0",category="smt_contention"}')
mem=$(sample "$TMP/genoa.prom" 'topdown_level2_slots_total{cpu="0",core="0",package="0",category="backend_bound_memory",parent="backend_bound"}')
near "$(awk -v a="$smt" -v b="$slots" 'BEGIN { print a / b }')" 0.10 0.002 \
	"genoa /metrics: CPU 0 smt_contention is 10 % of its slots"
near "$(awk -v a="$mem" -v b="$slots" 'BEGIN { print a / b }')" 0.18 0.002 \
	"genoa /metrics: CPU 0 backend_bound_memory (parent backend_bound) is 18 %"
# The other four counters against the truth too (what rate() divides).
for kv in retiring=0.32 bad_speculation=0.08 frontend_bound=0.20 backend_bound=0.30; do
	c=$(sample "$TMP/genoa.prom" "topdown_level1_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"${kv%=*}\"}")
	near "$(awk -v a="$c" -v b="$slots" 'BEGIN { if (b > 0) print a / b }')" "${kv#*=}" 0.002 \
		"genoa /metrics: CPU 0 ${kv%=*} is ${kv#*=} of its slots (truth)"
done
like "$(grep '^topdown_pmu_info' "$TMP/genoa.prom")" 'uarch="amdzen4",level="2",model="perf",per_cpu="thread"' \
	"genoa /metrics: topdown_pmu_info names amdzen4, level 2, per_cpu thread"
curl -s "$TD_URL/api/v1/topdown?cpu=0" >"$TMP/genoa.json"
got=$(jq -r '.selection.level1 | [.retiring, .bad_speculation, .frontend_bound, .backend_bound, .smt_contention] | map(. * 1000 | round / 1000) | @tsv' "$TMP/genoa.json")
is "$got" "$(printf '0.32\t0.08\t0.2\t0.3\t0.1')" "genoa API ?cpu=0: level 1 is the truth"
got=$(jq -r '.selection.level2_by_parent | [.frontend_bound.frontend_bound_latency, .bad_speculation.bad_speculation_mispredicts, .retiring.retiring_microcode] | map(. * 1000 | round / 1000) | @tsv' "$TMP/genoa.json")
is "$got" "$(printf '0.12\t0.06\t0.04')" "genoa API ?cpu=0: level 2 under perf's parents is the truth"
is "$(jq -r '.pmu.uarch' "$TMP/genoa.json")" "amdzen4" "genoa API: the PMU's microarchitecture"
td_stop

# ---- Turin: Zen 5, 8 dispatch slots per cycle ----
td_start "$FIXTURES/turin-1s" "$SCEN/parity-zen5.json" -i 200ms || exit 1
wait_intervals 3
curl -s "$TD_URL/api/v1/topdown?cpu=0" >"$TMP/turin.json"
got=$(jq -r '.selection.level1 | [.retiring, .smt_contention] | map(. * 1000 | round / 1000) | @tsv' "$TMP/turin.json")
is "$got" "$(printf '0.32\t0.1')" "turin API ?cpu=0: retiring 0.32, smt_contention 0.10"
near "$(jq -r '.selection.level2.frontend_bound_latency' "$TMP/turin.json")" 0.12 0.001 \
	"turin API: Zen 5's frontend_bound_by_latency, as frontend_bound_latency"
td_stop

# ---- Neoverse V2: CPU 0 (parity-neoverse-v2.json's default rates) ----
# perf's N2/V2 expressions at 8 slots: frontend 0.192, bad speculation
# 0.122, backend 0.326, retiring 0.36.
td_start "$FIXTURES/neoverse-v2-64" "$SCEN/parity-neoverse-v2.json" -i 200ms || exit 1
wait_intervals 3
curl -s "$TD_URL/metrics?granularity=cpu" >"$TMP/v2.prom"
slots=$(sample "$TMP/v2.prom" 'topdown_slots_total{cpu="0",core="0",package="0"}')
fe=$(sample "$TMP/v2.prom" 'topdown_level1_slots_total{cpu="0",core="0",package="0",category="frontend_bound"}')
near "$(awk -v a="$fe" -v b="$slots" 'BEGIN { print a / b }')" 0.192 0.002 \
	"neoverse-v2 /metrics: CPU 0 frontend bound 0.192"
like "$(grep '^topdown_pmu_info' "$TMP/v2.prom")" 'pmu="armv8_pmuv3_0",pmu_name="",uarch="arm/neoverse-n2-v2",level="1"' \
	"neoverse-v2 /metrics: topdown_pmu_info names armv8_pmuv3_0 and arm/neoverse-n2-v2"
got=$(curl -s "$TD_URL/api/v1/topdown?cpu=0" | jq -r '.selection.level1 | [.frontend_bound, .bad_speculation, .backend_bound, .retiring] | map(. * 1000 | round / 1000) | @tsv')
is "$got" "$(printf '0.192\t0.122\t0.326\t0.36')" "neoverse-v2 API ?cpu=0: level 1 is the truth"
is "$(curl -s "$TD_URL/api/v1/topdown" | jq -r '.cpus_by_state.monitored')" "64" "neoverse-v2: 64 CPUs monitored"
td_stop
# A hypervisor that filters OP_SPEC: it opens and counts 0.  The daemon
# sees ops counting nothing while cycles count and serves no figures from
# that PMU, saying why, rather than figures that look right.
# filtered FIXTURE SCENARIO EVENTS REASON DESCRIPTION: the daemon on
# SCENARIO with EVENTS (a JSON list) filtered, until /metrics says REASON
# (a grep pattern), at most 30 s.
filtered() {
	jq --argjson f "$3" '.filtered = $f' "$2" >"$TMP/filtered-$1.json"
	td_start "$FIXTURES/$1" "$TMP/filtered-$1.json" -i 200ms || exit 1
	silent() { curl -s "$TD_URL/metrics" | grep -q "$1"; }
	wait_until 30 silent "$4"
	ok $? "$5"
}
filtered neoverse-v2-64 "$SCEN/parity-neoverse-v2.json" '["OP_SPEC"]' 'OP_SPEC counts nothing while cycles count' \
	"neoverse-v2 with OP_SPEC filtered: topdown_pmu_info{reason} says OP_SPEC counts nothing while cycles count"
wait_intervals 2
is "$(curl -s "$TD_URL/api/v1/topdown?cpu=0" | jq -c '.selection.level1')" "null" "... and CPU 0 has no level-1 figures"
td_stop
# Not even before the reason: the first interval of --once, in which
# OP_RETIRED / OP_SPEC is 0 / 0, has no figures either (it was "100 %
# bad speculation" before the arm64 guest of tests/kernel showed it).
FAKEPMU_SYSFS="$FIXTURES/neoverse-v2-64" FAKEPMU_SCENARIO="$TMP/filtered-neoverse-v2-64.json" LD_PRELOAD="$FAKEPMU" \
	"$TOPDOWND" -c /dev/null --sysfs-root "$FIXTURES/neoverse-v2-64" --once --json -i 200ms \
	>"$TMP/filtered-once.json" 2>/dev/null
is "$(jq -c '[.host.level1, .host.level1_slots_total.bad_speculation]' "$TMP/filtered-once.json")" "[null,0]" \
	"... and --once's single interval has no figures (no 100 % bad speculation from 0 / 0)"
# A CPU (or hypervisor) without STALL_SLOT: the kernel leaves it out of
# events/ (PMCEID) but would still open it, and it would count 0.  The
# reason instead of wrong figures.
NOSLOT=$TMP/neoverse-v2-nostallslot
cp -a "$FIXTURES/neoverse-v2-64" "$NOSLOT"
rm "$NOSLOT/bus/event_source/devices/armv8_pmuv3_0/events/stall_slot"
td_start "$NOSLOT" "$SCEN/parity-neoverse-v2.json" -i 200ms || exit 1
curl -s "$TD_URL/metrics" >"$TMP/noslot.prom"
is "$(sample "$TMP/noslot.prom" topdown_up)" 0 "neoverse-v2 without events/stall_slot: topdown_up 0, no figures counted from an event the CPU does not implement"
like "$(grep '^topdown_pmu_info' "$TMP/noslot.prom")" 'reason="core PMU armv8_pmuv3_0 does not list events/stall_slot: the CPU \(or its hypervisor\) does not implement STALL_SLOT, which perf.s TopdownL1 needs"' \
	"... and topdown_pmu_info says why"
td_stop

# ---- a Graviton3 virtual machine: caps/slots 0 ----
td_start "$FIXTURES/graviton3-guest" "$SCEN/parity-neoverse-v1.json" -i 200ms || exit 1
wait_intervals 2
curl -s "$TD_URL/metrics" >"$TMP/g3.prom"
like "$(grep '^topdown_pmu_info' "$TMP/g3.prom")" 'uarch="arm/neoverse-v1",level="1",.*reason="caps/slots is 0 or absent \(a virtual machine reads PMMIR_EL1 as 0\): 8 slots per cycle, Arm.s published width of the Neoverse V1 \(ARM-software/telemetry-solution data/pmu/cpu/neoverse/neoverse-v1.json\)' \
	"graviton3-guest /metrics: topdown_pmu_info says the slot width is Arm's published one, and whose"
is "$(sample "$TMP/g3.prom" topdown_up) $(curl -s "$TD_URL/api/v1/topdown" | jq -r '.cpus_by_state.monitored')" "1 8" \
	"graviton3-guest: topdown_up 1, its 8 CPUs monitored"
td_stop

# ---- a Sapphire Rapids virtual machine: no PERF_METRICS ----
td_start "$FIXTURES/spr-guest" "$SCEN/parity-spr-guest.json" -i 200ms || exit 1
wait_intervals 2
curl -s "$TD_URL/metrics" >"$TMP/sprg.prom"
like "$(grep '^topdown_pmu_info' "$TMP/sprg.prom")" 'uarch="sapphirerapids-alt",level="2",.*reason="no PERF_METRICS \(no events/slots: a virtual machine\?\): counting with general-purpose events, Intel.s alternate TMA formulas for Sapphire Rapids' \
	"spr-guest /metrics: topdown_pmu_info names the alternate formulas and why"
is "$(sample "$TMP/sprg.prom" topdown_up) $(curl -s "$TD_URL/api/v1/topdown?cpu=0" | jq -r '.selection.level1.backend_bound * 1000 | round / 1000')" "1 0.38" \
	"spr-guest: topdown_up 1, CPU 0's backend bound the scenario's 0.38"
td_stop
# A hypervisor that filters UOPS_RETIRED.SLOTS (it opens and counts 0):
# the work check's clock is the architectural cycles the guest's plan
# counts beside the formulas' events.
filtered spr-guest "$SCEN/parity-spr-guest.json" '["UOPS_RETIRED.SLOTS"]' 'UOPS_RETIRED.SLOTS counts nothing while cycles count' \
	"spr-guest with UOPS_RETIRED.SLOTS filtered: topdown_pmu_info{reason} says it counts nothing, no figures"
td_stop
# A hypervisor that passes the architectural events only (Google Cloud's
# lowest PMU level, for instance): every model event opens and counts 0,
# the cycles count.  No figures, and the reason says which event and why.
filtered spr-guest "$SCEN/parity-spr-guest.json" '["TOPDOWN.SLOTS_P", "IDQ_BUBBLES.CORE", "INT_MISC.UOP_DROPPING",
	"TOPDOWN.BACKEND_BOUND_SLOTS", "UOPS_RETIRED.SLOTS", "IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE",
	"TOPDOWN.BR_MISPREDICT_SLOTS", "TOPDOWN.MEMORY_BOUND_SLOTS", "UOPS_RETIRED.HEAVY"]' \
	'reason="TOPDOWN.SLOTS_P counts nothing while cycles count (CPU [0-9]*, [0-9.]* s): the CPU does not implement it or a hypervisor filters it; no TopDown figures from cpu"' \
	"spr-guest whose hypervisor passes architectural events only: TOPDOWN.SLOTS_P counts nothing while cycles count, said in topdown_pmu_info{reason}"
is "$(curl -s "$TD_URL/api/v1/topdown?cpu=0" | jq -c '.selection.level1')" "null" "... and CPU 0 has no figures"
td_stop

# ---- Clearwater Forest (a model without tables): the architectural events ----
# Its kernel shows Intel's architectural TopDown events as topdown-*: level
# 1 from them, the reason saying so.  CPU 4's counts over-fill the slots
# (0.26 + 0.055 + 0.47 + 0.24 = 1.025): each is its share of their sum.
td_start "$FIXTURES/cwf-guest" "$SCEN/parity-cwf-guest.json" -i 200ms || exit 1
wait_intervals 2
curl -s "$TD_URL/metrics" >"$TMP/cwf.prom"
like "$(grep '^topdown_pmu_info' "$TMP/cwf.prom")" 'uarch="intel_arch",level="1",.*reason="no perf reference for this model: Clearwater Forest \(Darkmont\) \(x86/clearwaterforest\): perf 7.2.s tables have its events and no TopDown metrics; no TopDown tables for this model and no PERF_METRICS: counting Intel.s architectural TopDown events \(events/topdown-\*; SDM' \
	"cwf-guest /metrics: topdown_pmu_info names the architectural events and why"
is "$(sample "$TMP/cwf.prom" topdown_up) $(curl -s "$TD_URL/api/v1/topdown?cpu=0" | jq -r '.selection.level1.retiring * 1000 | round / 1000')" "1 0.31" \
	"cwf-guest: topdown_up 1, CPU 0's retiring the scenario's 0.31"
near "$(curl -s "$TD_URL/api/v1/topdown?cpu=4" | jq -r '.selection.level1.frontend_bound')" "$(awk 'BEGIN {print 0.47 / 1.025}')" 0.0005 \
	"cwf-guest: CPU 4's frontend bound 0.47 of the 1.025 its four events count (0.4585)"
td_stop
# A hypervisor that filters the architectural retiring event after all.
filtered cwf-guest "$SCEN/parity-cwf-guest.json" '["TOPDOWN_RETIRING.ALL_P"]' 'topdown-retiring counts nothing while cycles count' \
	"cwf-guest with its retiring event filtered: topdown_pmu_info{reason} says topdown-retiring counts nothing"
td_stop

# ---- --once ----
FAKEPMU_SYSFS=$FIXTURES/genoa-2s FAKEPMU_SCENARIO=$SCEN/parity-zen4.json LD_PRELOAD=$FAKEPMU \
	timeout 30 "$TOPDOWND" -c /dev/null --sysfs-root "$FIXTURES/genoa-2s" --once >"$TMP/once.txt" 2>&1
like "$(grep '^  backend_bound_memory' "$TMP/once.txt")" '^  backend_bound_memory +[0-9.]+%\*? +[0-9.]+%' \
	"genoa --once: the level-2 rows under their parent"
like "$(grep '^smt_contention' "$TMP/once.txt")" '^smt_contention +[0-9.]+%' "genoa --once: an smt_contention row"

# ---- no TopDown in perf: the reason ----
reason() { # FIXTURE: topdown_pmu_info's reason into $TMP/reason, topdown_up into $TMP/up
	td_start "$FIXTURES/$1" "$SCEN/constant.json" -i 200ms || return
	wait_intervals 1
	curl -s "$TD_URL/metrics" | sed -n 's/^topdown_pmu_info{.*reason="\([^"]*\)".*/\1/p' >"$TMP/reason"
	metric topdown_up >"$TMP/up"
	td_stop
}
reason milan-1s
is "$(cat "$TMP/reason")" "AuthenticAMD-25-1 is AMD Zen 3 (perf's table amdzen3): perf has no TopDown (PipelineL1) metrics for it: they need the per-slot dispatch events (PMCx1A0) of Zen 4 and later" \
	"milan (Zen 3): topdown_pmu_info{reason} names Zen 3 and why"
is "$(cat "$TMP/up")" "0" "milan: topdown_up 0"
reason graviton2-16
is "$(cat "$TMP/reason")" "0x00000000413fd0c1 is Arm Neoverse N1 (perf's table arm/neoverse-n1): perf has no TopdownL1 for it: its metrics.json defines none, only cycle accounting from stalled cycles (STALL_FRONTEND, STALL_BACKEND)" \
	"graviton2 (Neoverse N1): topdown_pmu_info{reason} names N1 and why"
like "$(grep -m1 'TopDown is not available' "$TD_LOG")" 'TopDown is not available: 0x00000000413fd0c1 is Arm Neoverse N1' \
	"graviton2: the log says it too"
done_testing
