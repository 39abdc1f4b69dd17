#!/bin/bash
# SPDX-License-Identifier: MIT
# The series budget of the default configuration: a 2-package host exposes
# at most 150 series and 30 kB per uncompressed scrape, whatever its number
# of CPUs (16 and 1024 here); the per-CPU detail is one parameter away.
. "$(dirname "$0")/lib.sh"

plan 7

scen=$ROOT/tests/scenarios/constant.json
for n in 16 1024; do
	fx=$TMP/spr-$n
	"$FIXTURES/gen-fixture" --kind spr --cpus $n --packages 2 "$fx" >/dev/null
	td_start "$fx" "$scen" -i 200ms || exit 1
	wait_intervals 2
	# One scrape of each kind first, so that the HTTP families exist.
	curl -sf "$TD_URL/metrics" "$TD_URL/metrics?granularity=cpu" "$TD_URL/api/v1/topdown" >/dev/null
	curl -sf "$TD_URL/metrics" >"$TMP/m-$n"
	series=$(grep -vc '^#' "$TMP/m-$n")
	bytes=$(wc -c <"$TMP/m-$n")
	diag "$n CPUs, defaults: $series series, $bytes bytes"
	ok $([ "$series" -le 150 ]; echo $?) "$n CPUs on 2 packages, default configuration: $series series (at most 150)"
	ok $([ "$bytes" -le 30000 ]; echo $?) "$n CPUs: $bytes bytes per scrape (at most 30 kB)"
	# The series themselves, values and the HTTP accounting aside (which
	# status codes a loaded machine's scrapes got is no function of the CPUs).
	grep -v '^#' "$TMP/m-$n" | grep -v '^topdown_http_' | sed 's/ [^ ]*$//' | sort >"$TMP/s-$n"
	if [ $n -eq 1024 ]; then
		is "$(diff "$TMP/s-16" "$TMP/s-1024" | grep '^[<>]' | head -5 | tr '\n' ' ')" "" \
			"the default scrape does not grow with the CPUs (16 and 1024: the same $(wc -l <"$TMP/s-16") series besides HTTP's)"
		is "$(curl -sf "$TD_URL/metrics?granularity=cpu" | grep -c '^topdown_slots_total{')" 1024 \
			"?granularity=cpu still gives all 1024 CPUs"
	fi
	td_stop
done

# docs/prometheus.md's fleet-sizing table is what the script measures now
# (16, 448 and 1024 CPUs, each granularity): a change of the exposition
# that leaves the guide's figures stale fails here.
out=$("$ROOT/tests/bench/fleet-sizing" --check "$ROOT/docs/prometheus.md" 2>&1 >/dev/null)
rc=$?
[ -z "$out" ] || while read -r line; do diag "$line"; done <<<"$out"
ok $rc "docs/prometheus.md's fleet-sizing table is today's (the series besides HTTP's exactly, the bytes within 10 %)"

done_testing
