#!/bin/bash
# SPDX-License-Identifier: MIT
# The JSON API as an operator uses it with curl and jq: the figure of a
# selection of CPUs, a CPU that does not exist, cumulative counts to
# difference, ratios over a window, level 2 under its parent.  Values are
# checked against the scenario's truth.
. "$(dirname "$0")/lib.sh"

plan 28

SPR=$FIXTURES/spr-2s
# Phase A for 3 s, then phase B for good; every CPU alike.
scen=$(write_scenario phases <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"seconds": 3, "retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40,
   "heavy_operations": 0.05, "branch_mispredicts": 0.06, "fetch_latency": 0.12, "memory_bound": 0.25},
  {"retiring": 0.60, "bad_speculation": 0.10, "frontend_bound": 0.10, "backend_bound": 0.20,
   "heavy_operations": 0.10, "branch_mispredicts": 0.04, "fetch_latency": 0.05, "memory_bound": 0.15}]}}}
EOF
)
# The fake PMU's clock runs in phase A (never past 2.9 s) until the test
# moves it to phase B: which phase an interval sees does not depend on the
# machine's speed.
clock=$TMP/clock
clock_run "$clock" 0 2.9
FAKEPMU_CLOCK_FILE=$clock td_start "$SPR" "$scen" -i 200ms || exit 1
api() { curl -s "$TD_URL/api/v1/topdown$1"; }
hist_samples() { curl -s "$TD_URL/api/v1/topdown/history" | jq "[.samples[] | select(.start >= ${1:-0})] | length"; }
hist_ge() { [ "$(hist_samples "$1")" -ge "$2" ]; }
wait_intervals 2

is "$(api "" | jq -r .api_version)" "1.11" "the document says its API version"
out=$(curl -s -w ' %{http_code}' "$TD_URL/api/v1/topdown?cpu=3,100")
is "$out" '{"error":"invalid cpu: 100 does not exist on this host (its CPUs are 0-15)"} 400' \
	"?cpu=3,100: 400 naming the CPU that does not exist"

api "?cpu=0-3" >"$TMP/sel.json"
is "$(jq -c .selection.cpus "$TMP/sel.json")" "[0,1,2,3]" "?cpu=0-3: a selection of exactly those CPUs"
# Still phase A (the clock stops before 3 s): the selection's figures are its truth.
near "$(jq .selection.level1.retiring "$TMP/sel.json")" 0.30 0.005 "the selection's retiring is phase A's truth (0.30)"
ok $(jq -e '.selection.level1 and .selection.level2 and .selection.bottleneck' "$TMP/sel.json" >/dev/null; echo $?) \
	"the selection has the fields of the host"

# Two history steps of phase A, then phase B from the fake's 3.5 s on.
wait_until 30 hist_ge 0 2
clock_stop
jump=$(date +%s.%N)
clock_run "$clock" 3.5
# Phase B: the differenced counters give its truth (both documents read
# after an interval that began in phase B).
wait_intervals 2
api "" >"$TMP/a.json"
wait_intervals 2
api "" >"$TMP/b.json"
diffed() { # CATEGORY LEVEL: slots of the category gained / slots gained
	jq -n --slurpfile a "$TMP/a.json" --slurpfile b "$TMP/b.json" --arg c "$1" --arg l "$2" \
		'($b[0].host[$l + "_slots_total"][$c] - $a[0].host[$l + "_slots_total"][$c]) /
		 ($b[0].host.slots_total - $a[0].host.slots_total)'
}
near "$(diffed retiring level1)" 0.60 0.005 "two requests differenced: retiring over the second between them (truth 0.60)"
near "$(diffed backend_bound level1)" 0.20 0.005 "... backend_bound (truth 0.20)"
near "$(diffed memory_bound level2)" 0.15 0.005 "... memory_bound (truth 0.15)"

# The history keeps a sample a second: a 2 s window starts 2 to 3 s ago,
# inside phase B once four steps began after the jump.
wait_until 30 hist_ge "$jump" 4
api "?window=2s&scope=package" >"$TMP/w.json"
curl -s "$TD_URL/api/v1/topdown/history" >"$TMP/wh.json"
# It starts at the newest step boundary at least 2 s before the document:
# judged against the history's boundaries, not a bound in seconds (the
# steps are further apart when collection is late on a loaded machine).
ok $(jq -e --slurpfile h "$TMP/wh.json" '
	.window.start as $s | (.timestamp - 2) as $edge
	| ([$h[0].samples[] | .start, .["end"]] | unique) as $b
	| .window.requested_seconds == 2 and .window.seconds >= 2
	  and any($b[]; . - $s < 0.0025 and $s - . < 0.0025)
	  and ([$b[] | select(. > $s + 0.0025 and . < $edge - 0.0025)] | length == 0)' "$TMP/w.json" >/dev/null; echo $?) \
	"?window=2s: the window covered $(jq .window.seconds "$TMP/w.json") s, from the newest step boundary 2 s before"
near "$(jq .host.level1.retiring "$TMP/w.json")" 0.60 0.005 "?window=2s in phase B: retiring 0.60"
near "$(jq .packages[1].level2.memory_bound "$TMP/w.json")" 0.15 0.005 "... and per package: memory_bound 0.15"
# Over the whole run so far: between the two phases' figures.
api "?window=10m" >"$TMP/all.json"
ok $(jq -e '.host.level1.retiring > 0.31 and .host.level1.retiring < 0.59' "$TMP/all.json" >/dev/null; echo $?) \
	"?window=10m spans both phases: retiring $(jq .host.level1.retiring "$TMP/all.json") between 0.30 and 0.60"
is "$(curl -s -w ' %{http_code}' "$TD_URL/api/v1/topdown?window=1h")" \
	'{"error":"window 1h is longer than the history kept ([collect] history = 15m)"} 400' "?window=1h: 400, the history is 15m"
is "$(curl -s -w ' %{http_code}' "$TD_URL/api/v1/topdown?window=1m&scope=cpu")" \
	'{"error":"window covers scope=host and scope=package (the history keeps nothing finer); for CPUs, difference the *_slots_total of two requests"} 400' \
	"?window= with scope=cpu: 400 saying what to do instead"

# The history, step by step: phase A's steps, then phase B's.
curl -s "$TD_URL/api/v1/topdown/history" >"$TMP/h.json"
ok $(jq -e '.step_seconds == 1 and .level == 2 and (.samples | length) >= 5' "$TMP/h.json" >/dev/null; echo $?) \
	"/api/v1/topdown/history: a step a second, $(jq '.samples | length' "$TMP/h.json") of them so far"
near "$(jq '.samples[0].host.level1.retiring' "$TMP/h.json")" 0.30 0.005 "the first step is phase A's: retiring 0.30"
near "$(jq '.samples[-1].host.level1.retiring' "$TMP/h.json")" 0.60 0.005 "the last step is phase B's: retiring 0.60"
near "$(jq '.samples[-1].packages["1"].level2.memory_bound' "$TMP/h.json")" 0.15 0.005 \
	"... per package too: memory_bound 0.15"
is "$(jq -c '[.categories[] | select(.level == 2 and .parent == "backend_bound") | .name]' "$TMP/h.json")" \
	'["memory_bound","core_bound"]' "the categories name their parents"
since=$(jq '.samples[-2].end' "$TMP/h.json")
# Steps may end between the requests (any number of them on a loaded machine):
# the answer is judged against the history fetched after it, not by its length.
curl -s "$TD_URL/api/v1/topdown/history?since=$since&level=1" >"$TMP/since.json"
curl -s "$TD_URL/api/v1/topdown/history" >"$TMP/h2.json"
is "$(jq -c --argjson s "$since" --slurpfile h "$TMP/h2.json" '
	(.samples | length) as $n
	| [$n >= 1, .samples[0].start == $s, all(.samples[]; .host | has("level2") | not),
	   ([.samples[] | {start, e: .["end"], r: .host.level1.retiring}]
	    == [$h[0].samples[] | select(.start >= $s) | {start, e: .["end"], r: .host.level1.retiring}][:$n])]' "$TMP/since.json")" \
	'[true,true,true,true]' \
	"?since=the end of the second-to-last step&level=1: the history's steps from it on ($(jq '.samples | length' "$TMP/since.json")), level 1 only"
is "$(curl -s -w ' %{http_code}' "$TD_URL/api/v1/topdown/history?since=yesterday")" \
	'{"error":"invalid since \"yesterday\": expected a timestamp in seconds (a sample'"'"'s \"end\")"} 400' \
	"?since=yesterday: 400 saying what it expects"
is "$(curl -s -w ' %{http_code}' "$TD_URL/api/v1/topdown/history?scope=cpu")" \
	'{"error":"unknown parameter \"scope\": expected since or level"} 400' \
	"?scope= on the history: 400, it has since and level"

api "?scope=cpu&cpu=5" >"$TMP/tree.json"
is "$(jq -c '.host.level2_by_parent | to_entries | map([.key, (.value | keys)])' "$TMP/tree.json")" \
	'[["retiring",["heavy_operations","light_operations"]],["bad_speculation",["branch_mispredicts","machine_clears"]],["frontend_bound",["fetch_bandwidth","fetch_latency"]],["backend_bound",["core_bound","memory_bound"]]]' \
	"level2_by_parent: each level-2 category under its parent"
near "$(jq .cpus[0].level2_by_parent.backend_bound.memory_bound "$TMP/tree.json")" 0.15 0.005 \
	"... with the same values (a CPU's memory_bound 0.15)"
# gzip when the client takes it (the live page fetches the core scope
# every interval): the same document, compressed.
curl -s -D "$TMP/gz.h" -H 'Accept-Encoding: gzip' -o "$TMP/core.json.gz" "$TD_URL/api/v1/topdown?scope=core"
ok $(grep -qi '^Content-Encoding: gzip' "$TMP/gz.h" && grep -qi '^Vary: Accept-Encoding' "$TMP/gz.h"; echo $?) \
	"Accept-Encoding: gzip: the document comes compressed, with Vary: Accept-Encoding"
is "$(gzip -dc "$TMP/core.json.gz" | jq -r '[.api_version, (.cores | length)] | join(" ")')" "1.11 8" \
	"the compressed document is the JSON API's, all 8 cores"
is "$(curl -s -D - -o /dev/null "$TD_URL/api/v1/topdown" | grep -ci '^Content-Encoding')" 0 \
	"without Accept-Encoding: not compressed"
td_stop
is "$TD_STATUS" 0 "exit 0"

done_testing
