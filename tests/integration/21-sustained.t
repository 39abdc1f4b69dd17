#!/bin/bash
# SPDX-License-Identifier: MIT
# 2,000 intervals at 10 ms on 64 CPUs: no growth in memory or descriptors.
# Memory is compared over the second 1,000 intervals: pages the daemon
# touches for the first time during the first 1,000 (the history ring
# filling, glibc settling its arenas under the scrapes) are not growth.
. "$(dirname "$0")/lib.sh"

plan 5

"$FIXTURES/gen-fixture" --kind spr --cpus 64 --packages 2 --smt 2 "$TMP/spr64"
scen=$(write_scenario phases <<'EOF2'
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"seconds": 2, "retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40,
   "heavy_operations": 0.05, "branch_mispredicts": 0.06, "fetch_latency": 0.12, "memory_bound": 0.25,
   "uop_dropping": 0.01},
  {"seconds": 2, "retiring": 0.50, "bad_speculation": 0.05, "frontend_bound": 0.25, "backend_bound": 0.20,
   "heavy_operations": 0.10, "branch_mispredicts": 0.02, "fetch_latency": 0.15, "memory_bound": 0.10},
  {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40,
   "heavy_operations": 0.05, "branch_mispredicts": 0.06, "fetch_latency": 0.12, "memory_bound": 0.25}]}}}
EOF2
)
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$TD_PID/status"; }
# The daemon's descriptors but its client connections, which come and go
# with the scrapes (a connection the last curl closed may still be open
# on the daemon's side for a moment on a loaded machine): every socket
# whose inode /proc/net/tcp{,6} lists in a state other than LISTEN.
fds() {
	local conns n=0 f l i
	conns=" $(awk 'NR > 1 && $4 != "0A" {printf "%s ", $10}' /proc/net/tcp /proc/net/tcp6) "
	for f in /proc/"$TD_PID"/fd/*; do
		l=$(readlink "$f") || continue
		case $l in
		socket:\[*\])
			i=${l#socket:[}
			i=${i%]}
			[[ $conns == *" $i "* ]] && continue
			;;
		esac
		n=$((n + 1))
	done
	echo "$n"
}

td_start "$TMP/spr64" "$scen" -i 10ms || exit 1
wait_intervals 100 "" 120
# Warm up the HTTP side before measuring: glibc's malloc settles its
# arena and mmap threshold over the first few hundred large responses
# (measured: flat after ~200 scrapes).
for _ in $(seq 1 150); do
	curl -sf "$TD_URL/metrics" "$TD_URL/api/v1/topdown?scope=cpu" >/dev/null
	curl -sf -H 'Accept-Encoding: gzip' "$TD_URL/metrics" >/dev/null
done
# Scrape now and then, as Prometheus would, while the intervals run.
run_1000() {
	local start
	start=$(intervals)
	for _ in $(seq 1 20); do
		curl -sf "$TD_URL/metrics" >/dev/null
		curl -sf "$TD_URL/api/v1/topdown?scope=cpu" >/dev/null
		sleep 0.45
	done
	wait_intervals $((1000 - ($(intervals) - start))) "" 300
}
start=$(intervals)
fds0=$(fds)
run_1000
rss0=$(rss)
run_1000
ok $? "2,000 more intervals collected"
end=$(intervals)
rss1=$(rss)
fds1=$(fds)
diag "intervals $start -> $end, RSS after the first 1,000 $rss0 -> after the second $rss1 KiB, fds $fds0 -> $fds1"
is "$fds1" "$fds0" "open descriptors unchanged ($fds0: 64 CPUs x 10 events + the daemon's own)"
if [ "${SAN:-}" = 1 ]; then
	skip "RSS under AddressSanitizer grows with its quarantine, not with the daemon"
else
	ok $([ $((rss1 - rss0)) -le 64 ]; echo $?) "RSS did not grow over the second 1,000 intervals (+$((rss1 - rss0)) KiB, at most 64)"
fi
td_stop
is "$TD_STATUS" 0 "exit status 0 after SIGTERM"
bound=$(stop_bound_ms)
ok $([ "$TD_STOP_MS" -lt "$bound" ]; echo $?) "stopped in ${TD_STOP_MS} ms (< $bound: the unit's TimeoutStopSec, or a hang's under the sanitizers)"
done_testing
