#!/bin/bash
# SPDX-License-Identifier: MIT
# 100 concurrent full scrapes of a 1,024-CPU host (1.7 MB each): the
# slowest 1 % against nginx serving the same bytes in the same run.  The
# scrapes begin as Prometheus's do, on a cache the daemon rendered two or
# more intervals ago, so the first wave waits for a render; before, each
# of the hundred then counted the daemon's 15,000 descriptors for its own
# process_open_fds (one after another, 15 ms each) although one render
# served them all: p99 0.84-1.44 s against nginx's 0.07-0.08 s.
. "$(dirname "$0")/lib.sh"

plan 3

for tool in wrk nginx; do
	command -v "$tool" >/dev/null || { missing_all "$tool (make deps installs it)"; exit 0; }
done

scen=$ROOT/tests/scenarios/constant.json
BIG=$TMP/spr-1024
"$FIXTURES/gen-fixture" --kind spr --cpus 1024 --packages 2 --smt 2 "$BIG" >/dev/null
printf '[metrics]\ngranularity = cpu\n' >"$TMP/td.conf"
td_start "$BIG" "$scen" -c "$TMP/td.conf" -i 1s || exit 1
wait_intervals 2
curl -sf -o "$TMP/body" "$TD_URL/metrics"
scraped=$(awk '$1 == "topdown_collections_total" { print $2 }' "$TMP/body")

# nginx: the same bytes as a static file, sendfile, two workers.
mkdir -p "$TMP/ngx/www" "$TMP/ngx/t"
cp "$TMP/body" "$TMP/ngx/www/metrics"
nport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$TMP/ngx/nginx.conf" <<NGX
user root root;
worker_processes 2;
daemon off;
pid $TMP/ngx/nginx.pid;
error_log $TMP/ngx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off; sendfile on; tcp_nopush on; keepalive_requests 1000000;
    client_body_temp_path $TMP/ngx/t; proxy_temp_path $TMP/ngx/t; fastcgi_temp_path $TMP/ngx/t;
    uwsgi_temp_path $TMP/ngx/t; scgi_temp_path $TMP/ngx/t;
    types { } default_type "text/plain; version=0.0.4; charset=utf-8";
    server { listen 127.0.0.1:$nport; root $TMP/ngx/www; }
}
NGX
nginx -p "$TMP/ngx" -c "$TMP/ngx/nginx.conf" &
NPID=$!
_TD_PIDS+=("$NPID")
wait_until 10 curl -sf -o /dev/null "http://127.0.0.1:$nport/metrics"

# p99 URL: the 99th percentile of wrk's 100 connections over 5 s, in ms;
# the whole output in $TMP/wrk.out.  Non-2xx answers or socket errors are
# in it too.
p99() {
	wrk -t2 -c100 -d5s --latency "$1" >"$TMP/wrk.out" 2>&1
	awk '$1 == "99%" {
		v = $2; unit = v; sub(/^[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v)
		print v * (unit == "us" ? 0.001 : unit == "s" ? 1000 : unit == "m" ? 60000 : 1) }' "$TMP/wrk.out"
}
ngx=$(p99 "http://127.0.0.1:$nport/metrics")
diag "nginx: p99 $ngx ms ($(grep -E 'Requests/sec' "$TMP/wrk.out"))"

# Prometheus's case: no scrape for two intervals, so the cache is older
# than the interval before the newest (which is served while the newest
# renders).  The JSON API tells the intervals without touching it.
api_intervals() { curl -sf "$TD_URL/api/v1/topdown" | jq .intervals; }
wait_until 60 eval '[ "$(api_intervals)" -ge $((scraped + 2)) ]'
td=$(p99 "$TD_URL/metrics")
diag "topdownd: p99 $td ms ($(grep -E 'Requests/sec' "$TMP/wrk.out"))"
ok "$(grep -qE 'Non-2xx|Socket errors' "$TMP/wrk.out"; [ $? = 1 ]; echo $?)" \
	"every scrape answered 200 ($(grep -E 'Non-2xx|Socket errors' "$TMP/wrk.out" | tr '\n' ' '))"
# The bound of the issue: 3 times nginx's, or 250 ms.  A sanitizer build
# does its work several times slower: twice the bound there.
factor=1
[ -n "${SAN:-}" ] && factor=2
bound=$(awk -v n="$ngx" -v f="$factor" 'BEGIN { b = 3 * n; if (b < 250) b = 250; print b * f }')
ok "$(awk -v t="$td" -v b="$bound" 'BEGIN { exit !(t > 0 && t <= b) }'; echo $?)" \
	"p99 of 100 concurrent full scrapes from a cold cache: $td ms, within $bound ms (nginx $ngx ms)"
kill -TERM "$NPID"
wait "$NPID" 2>/dev/null
td_stop
is "$TD_STATUS" 0 "exit 0"
