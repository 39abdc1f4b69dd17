#!/bin/bash
# SPDX-License-Identifier: MIT
# The live page (/) in a real browser (Chromium, driven by Selenium through
# chromedriver): under the fake PMU with a scenario whose phase changes, the
# bars match the JSON API and the scenario's truth within 1 %, the
# bottleneck is named right before and after the change, the history grows,
# nothing is fetched from outside the daemon, and there are no console
# errors; the same page without JavaScript (the server's rendering) and at
# a phone's width; then AMD, hybrid, Arm and no-PMU machines (bars and
# bottleneck against the JSON API, no console errors).  Screenshots go to
# build/artifacts/.
. "$(dirname "$0")/lib.sh"

N_BROWSER=20
SMOKES="genoa-2s:parity-zen4 adl-hybrid:parity-hybrid neoverse-v2-64:parity-neoverse-v2 vm-nopmu:constant"
plan $((N_BROWSER + 3 + 4 * 4))

for need in /usr/bin/chromium /usr/bin/chromedriver; do
	[ -x "$need" ] || { echo "Bail out! $need is missing: make deps installs chromium and chromium-driver"; exit 1; }
done
/usr/bin/python3 -c 'import selenium' 2>/dev/null ||
	{ echo "Bail out! python3-selenium is missing: make deps installs it"; exit 1; }

# The browser's TAP lines, numbered on from here.
run_tap() { # run_tap FILE: its lines, numbered on from here
	while IFS= read -r line; do
		case $line in
		"ok "*) ok 0 "${line#ok * - }" ;;
		"not ok "*) ok 1 "${line#not ok * - }" ;;
		*) echo "$line" ;;
		esac
	done <"$1"
}

ARTIFACTS=${ARTIFACTS:-$(cd "$(dirname "$0")/../.." && pwd)/build/artifacts}
mkdir -p "$ARTIFACTS"
SPR=$FIXTURES/spr-2s
# Phase a: backend bound (memory); phase b, for good: frontend bound
# (bandwidth).  The fake PMU's clock (clock_run) stays in phase a until
# livepage.py moves it to B_AT: before, phase b came 16 s after the start
# whatever the browser had checked by then, and a loaded gate once saw it
# before the check of phase a's bottleneck.
B_AT=600
scen=$(write_scenario live <<EOF2
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"seconds": $B_AT, "retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40,
   "heavy_operations": 0.05, "branch_mispredicts": 0.06, "fetch_latency": 0.12, "memory_bound": 0.25},
  {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.45, "backend_bound": 0.15,
   "heavy_operations": 0.10, "branch_mispredicts": 0.04, "fetch_latency": 0.15, "memory_bound": 0.05}]}},
 "smt": {"default": [{"both": 0.6, "first": 0.2, "second": 0.1}]}}
EOF2
)
# Every category's truth, the derived level-2 ones included.
cat >"$TMP/truths.json" <<EOF2
{"b_at": $B_AT, "clock": "$TMP/clock",
 "a": {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40,
       "heavy_operations": 0.05, "light_operations": 0.25, "branch_mispredicts": 0.06, "machine_clears": 0.04,
       "fetch_latency": 0.12, "fetch_bandwidth": 0.08, "memory_bound": 0.25, "core_bound": 0.15},
 "b": {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.45, "backend_bound": 0.15,
       "heavy_operations": 0.10, "light_operations": 0.20, "branch_mispredicts": 0.04, "machine_clears": 0.06,
       "fetch_latency": 0.15, "fetch_bandwidth": 0.30, "memory_bound": 0.05, "core_bound": 0.10}}
EOF2
printf '[collect]\ninterval = 500ms\nhistory = 60s\n' >"$TMP/live.conf"
clock_run "$TMP/clock" 0
FAKEPMU_CLOCK_FILE=$TMP/clock td_start "$SPR" "$scen" -c "$TMP/live.conf" || exit 1
wait_intervals 2

timeout 150 /usr/bin/python3 "$(dirname "$0")/livepage.py" "$TD_URL/" "$TMP/truths.json" \
	"$(dirname "$0")/../../contrib/grafana/topdownd.json" "$ARTIFACTS" >"$TMP/browser.tap" 2>"$TMP/browser.err"
st=$?
run_tap "$TMP/browser.tap"
got=$(grep -cE '^(not )?ok ' "$TMP/browser.tap")
is "$got $st" "$N_BROWSER 0" "the browser ran all its $N_BROWSER checks and exited 0"
[ "$st" -eq 0 ] || sed 's/^/#   /' "$TMP/browser.err" | tail -n 30

# What a script-less client and a bookmark get.
is "$(curl -s -w ' %{http_code}' "$TD_URL/?heat=nope")" \
	'400 invalid heat "nope": expected a category of the bottleneck tree, such as backend_bound or memory_bound
 400' "?heat= of no category: 400 saying which are"
ok $([ -s "$ARTIFACTS/live-page.png" ] && [ -s "$ARTIFACTS/live-page-phone.png" ]; echo $?) \
	"screenshots saved in $ARTIFACTS"
td_stop

# Other machines: AMD (smt_contention, long level-2 names), a hybrid
# (two core PMUs, E-core categories), Arm, and no PMU at all.
SCEN_DIR=$(cd "$(dirname "$0")/../scenarios" && pwd)
for pair in $SMOKES; do
	fx=${pair%%:*}
	# Gracemont's MEM_SCHEDULER_BLOCK.* are in perf 6.1's files only.
	FAKEPMU_TABLES_FALLBACK=$PERF_TABLES/../perf-tables-6.1 td_start "$FIXTURES/$fx" "$SCEN_DIR/${pair#*:}.json" || exit 1
	wait_intervals 2
	timeout 60 /usr/bin/python3 "$(dirname "$0")/livepage.py" --smoke "$TD_URL/" "$fx" "$ARTIFACTS" \
		>"$TMP/smoke.tap" 2>"$TMP/smoke.err"
	st=$?
	run_tap "$TMP/smoke.tap"
	is "$(grep -cE '^(not )?ok ' "$TMP/smoke.tap") $st" "3 0" "$fx: the browser ran its 3 checks and exited 0"
	[ "$st" -eq 0 ] || sed 's/^/#   /' "$TMP/smoke.err" | tail -n 20
	td_stop
done
done_testing
