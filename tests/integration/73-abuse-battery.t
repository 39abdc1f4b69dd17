#!/bin/bash
# SPDX-License-Identifier: MIT
# Holding under abuse, from an attacker's and an operator's side, on
# loopback with many client hosts (127.0.1.x, 127.0.2.x attack; the victim
# scrapes from 127.0.3.1; tests/integration/abuse.py).  Every case is one
# the daemon failed before: the figures it printed then are in the
# comments, today's in the diagnostics.
. "$(dirname "$0")/lib.sh"

plan 59

SPR=$FIXTURES/spr-2s
scen=$ROOT/tests/scenarios/level1.json
A() { /usr/bin/python3 "$ROOT/tests/integration/abuse.py" "$port" "$@"; }
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$TD_PID/status"; }
curlk() { curl -sk "$@"; }
# scrapes_ok JSON: all five victim scrapes answered 200, none of which
# could have waited for a crowd connection's deadline (abuse.py: answered
# before the first connection's deadline, or no crowd connection closed
# meanwhile).  A scrape starved by the connections held (before: queued
# behind them) is let in only when one of them goes.  Not a bound on
# milliseconds: a 3 s bound failed under ThreadSanitizer beside a loaded
# CI run's other tests (3,382 ms), where the scrape straddled the crowd's
# deadline and nothing was closed to let it in.
scrapes_ok() { jq -e '.scrapes | length == 5 and all(.status == 200 and (.waited | not))' <<<"$1" >/dev/null; }
# scrapes JSON: what each scrape took (ms), when it was answered (with TLS:
# its handshake done; s since the crowd's first connect) and how many crowd
# connections went meanwhile.
scrapes() { jq -c '[.scrapes[] | "\(.ms) ms at \(.at) s, \(.freed) closed"]' <<<"$1"; }

# --- Connections (before: 64 accepted, the rest queued; 0 of 5 scrapes) ---
printf '[http]\ntimeout = 3s\n' >"$TMP/conn.conf"
td_start "$SPR" "$scen" -c "$TMP/conn.conf" -i 200ms || exit 1
port=${TD_URL##*:}
for _ in $(seq 1 20); do curl -s -o /dev/null "$TD_URL/metrics"; done
rss0=$(rss)
# RSS once the daemon holds the 1,000 (abuse.py creates the file then).
( wait_until 60 test -e "$TMP/held" && rss >"$TMP/rss.idle" ) &
rss_pid=$!
out=$(A crowd 1000 50 2.5 timeout=3 ready="$TMP/held")
wait "$rss_pid"
diag "1,000 idle connections from 50 hosts: $out; RSS $rss0 -> $(cat "$TMP/rss.idle") KiB"
is "$(jq '[.connected, .held >= 1000] | map(tostring) | join(" ")' -r <<<"$out")" "1000 true" \
	"1,000 idle connections from 50 hosts are all accepted and held at once"
ok "$(scrapes_ok "$out"; echo $?)" "a third host's 5 scrapes are answered 200 while they are held, before the 3 s deadline could free one ($(scrapes "$out"))"
if [ "${SAN:-}" = thread ]; then
	skip "ThreadSanitizer's shadow memory makes RSS meaningless"
else
	ok $([ $(($(cat "$TMP/rss.idle") - rss0)) -le 4096 ]; echo $?) \
		"1,000 idle connections cost at most 4 MiB of RSS ($rss0 -> $(cat "$TMP/rss.idle") KiB)"
fi
timeouts0=$(metric 'topdown_http_rejected_total{reason="timeout"}')
out=$(A crowd 1000 50 5 slowloris timeout=3)
diag "slowloris from 50 hosts (a header line every second, timeout 3s): $out"
ok "$(scrapes_ok "$out"; echo $?)" "a third host's scrapes are answered 200 during a slowloris, none waiting for its deadline ($(scrapes "$out"))"
is "$(jq .closed_by_server <<<"$out")" 1000 "every slowloris connection is closed at the head deadline, trickling or not"
timeouts1=$(metric 'topdown_http_rejected_total{reason="timeout"}')
ok $([ $((timeouts1 - timeouts0)) -ge 1000 ]; echo $?) "counted as reason=\"timeout\" ($timeouts0 -> $timeouts1)"
out=$(A crowd 300 1 1.5 accept=256 timeout=3)
diag "one host opening 300 connections: $out"
is "$(jq .closed_by_server <<<"$out")" 44 "one host holds at most 256 (a sixteenth of 4096): each of the last 44 closes its oldest idle one"
is "$(metric 'topdown_http_rejected_total{reason="evicted"}')" 44 "counted as reason=\"evicted\""
ok "$(scrapes_ok "$out"; echo $?)" "other hosts are served meanwhile, none waiting for a deadline ($(scrapes "$out"))"
# The scraper's own address (before: 300 idle connections from 127.0.0.1
# and its scrape was reset): a request beyond its address's share closes
# the oldest idle connection of the address.
out=$(A crowd 300 1 1.5 same accept=256 timeout=3)
diag "300 idle connections from the scraper's own address: $out"
ok "$(scrapes_ok "$out"; echo $?)" "the scraper's own address, its share held by 300 idle connections: its 5 scrapes answered 200, none waiting for a deadline ($(scrapes "$out"))"

# --- Inputs (before: no response, or held 10 s, or two status lines) ---
out=$(A raw $'GET /api/v1/topdown?scope=%ff HTTP/1.1\r\nHost: x\r\n\r\n')
is "$(jq -r '.status_lines | join("|")' <<<"$out")" "HTTP/1.1 400 Bad Request" "?scope=%ff (not UTF-8): 400"
is "$(jq -r .body <<<"$out")" '{"error":"invalid scope \"?\": expected host, package, core, cpu or cgroup"}' \
	"?scope=%ff: a JSON body, the byte replaced"
amps=$(printf '&%.0s' $(seq 1 3000))
out=$(A raw "GET /api/v1/topdown?$amps HTTP/1.1"$'\r\nHost: x\r\n\r\n')
is "$(jq -r '[.status_lines[0], .body] | join("|")' <<<"$out")" "HTTP/1.1 414 URI Too Long|{\"error\":\"query string too long\"}" \
	"3,000 '&' in a query: 414 with a JSON body (the API's)"
ok $(jq -e '.seconds < 2' <<<"$out" >/dev/null; echo $?) "... at once ($(jq .seconds <<<"$out") s)"
amps=$(printf '&%.0s' $(seq 1 900))
out=$(A raw "GET /api/v1/topdown?$amps HTTP/1.1"$'\r\nHost: x\r\n\r\n')
is "$(jq -r '[.status_lines[0], .body] | join("|")' <<<"$out")" "HTTP/1.1 400 Bad Request|{\"error\":\"too many query parameters\"}" \
	"900 '&' (under 1 KiB): 400 with a JSON body"
out=$(A raw $'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\nxx')
is "$(jq -r '[.status_lines[0], .body] | join("|")' <<<"$out")" "HTTP/1.1 413 Content Too Large|413 request bodies are not accepted" \
	"a body promised and never sent: 413 at once, not held"
ok $(jq -e '.seconds < 2' <<<"$out" >/dev/null; echo $?) "... at once ($(jq .seconds <<<"$out") s)"
out=$(A raw $'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n')
is "$(jq -r '.status_lines[0]' <<<"$out")" "HTTP/1.1 413 Content Too Large" "an overflowing Content-Length: 413 at once"
# libmicrohttpd 0.9.75 builds its own error response twice when a header
# fails to parse (connection.c: parse_connection_headers() queues it, then
# MHD_connection_handle_idle() overwrites the state and builds it again);
# no callback runs in between.  A known limitation (README "Limits"), not
# a test: reported here so a newer libmicrohttpd shows up.
diag "known limitation: an overflowing Content-Length gets $(jq '.status_lines | length' <<<"$out") status line(s) (libmicrohttpd 0.9.75 sends its 413 twice)"
ok $(kill -0 "$TD_PID"; echo $?) "the daemon is alive after the connection and input cases"
td_stop
is "$TD_STATUS" 0 "exit 0"

# --- A full pool (before: 16 hosts x 256 connections, every other scrape
# from a 17th host took 7-8 s): here 16 hosts x 16 fill a pool of 256,
# and each of the 17th host's connections closes the oldest idle one. ---
printf '[http]\nmax_connections = 256\ntimeout = 10s\n' >"$TMP/pool.conf"
td_start "$SPR" "$scen" -c "$TMP/pool.conf" -i 200ms || exit 1
port=${TD_URL##*:}
out=$(A crowd 256 16 1.5 accept=256 timeout=10)
diag "16 hosts holding the 256 connections of the pool: $out"
# The 17th host's connection takes the place of the oldest idle one at
# once; the 7-8 s a scrape waited before is well above 3 s.
ok "$(scrapes_ok "$out" && jq -e '.held >= 256 and .closed_by_server >= 1' <<<"$out" >/dev/null; echo $?)" \
	"a 17th host's 5 scrapes answered 200, taking an idle connection's place (closed $(jq .closed_by_server <<<"$out")), while 16 hosts hold the whole pool ($(scrapes "$out"))"
td_stop

# --- TLS (before: one byte of a record pinned a core at 92-100 %) ---
PKI=$TMP/pki
mkdir -p "$PKI"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$PKI/key.pem" \
	-out "$PKI/cert.pem" -days 2 -subj /CN=localhost 2>/dev/null
printf '[http]\ntimeout = 3s\ntls_cert = %s\ntls_key = %s\n' "$PKI/cert.pem" "$PKI/key.pem" >"$TMP/tls.conf"
td_start "$SPR" "$scen" -c "$TMP/tls.conf" -i 200ms || exit 1
port=${TD_URL##*:}
out=$(A tls-stall "$TD_PID" byte 5)
diag "one byte of a TLS record, then nothing: $out"
ok $(jq -e '.cpu_percent < 10' <<<"$out" >/dev/null; echo $?) "a stalled TLS record costs no CPU ($(jq .cpu_percent <<<"$out") % of a core)"
ok $(jq -e '.closed_after != null and .closed_after < 4.5' <<<"$out" >/dev/null; echo $?) "... and is closed by the 3 s deadline"
out=$(A tls-stall "$TD_PID" hello 5)
diag "a whole ClientHello, then nothing: $out"
ok $(jq -e '.cpu_percent < 10' <<<"$out" >/dev/null; echo $?) "a stalled TLS handshake costs no CPU ($(jq .cpu_percent <<<"$out") % of a core)"
ok $(jq -e '.closed_after != null and .closed_after < 4.5' <<<"$out" >/dev/null; echo $?) "... and is closed by the 3 s deadline"
# The crowd's 200 handshakes took 2.7 s beside a loaded gate, and its
# deadline then fell among the scrapes: a timeout of 10 s for it (a
# reload), the scrapes done well before.
printf '[http]\ntimeout = 10s\ntls_cert = %s\ntls_key = %s\n' "$PKI/cert.pem" "$PKI/key.pem" >"$TMP/tls.conf"
td_reload
out=$(A crowd 200 20 12 slowloris tls timeout=10)
diag "TLS slowloris (handshake done, then a header line a second): $out"
is "$(jq .closed_by_server <<<"$out")" 200 "every TLS slowloris connection is closed at the deadline"
ok "$(scrapes_ok "$out"; echo $?)" "HTTPS scrapes are answered 200 meanwhile, none waiting for the deadline ($(scrapes "$out"))"
td_stop
is "$TD_STATUS" 0 "exit 0"

# --- Basic auth (before: guessing pushed cached scrapes to 2-7 s; an
# unknown user answered in 2 ms, a known one in 212 ms) ---
/usr/bin/python3 -W ignore -c '
import crypt, sys
print("prometheus:" + crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=4096)))
' >"$TMP/users"
printf '[http]\nbasic_auth_file = %s\n' "$TMP/users" >"$TMP/auth.conf"
td_start "$SPR" "$scen" -c "$TMP/auth.conf" -i 200ms || exit 1
port=${TD_URL##*:}
# The daemon's CPU time per answer, not the wall time: beside other work
# (two make checks, TSan) the medians of answer times drifted apart.
out=$(A auth-timing "$TD_PID" prometheus s3cret)
diag "a wrong password, cost 12 (medians of the answer times, and the daemon's CPU time per answer): $out"
ok $(jq -e '.known_cpu_ms > 50' <<<"$out" >/dev/null; echo $?) "a wrong password for a known user pays bcrypt ($(jq .known_cpu_ms <<<"$out") ms of CPU)"
ok $(jq -e '.unknown_cpu_ms >= 0.8 * .known_cpu_ms' <<<"$out" >/dev/null; echo $?) \
	"an unknown user costs as much ($(jq .unknown_cpu_ms <<<"$out") ms of CPU): user names cannot be told apart"
out=$(A throttle prometheus 9)
diag "nine wrong passwords in a row from one address: $out"
is "$(jq -c .statuses <<<"$out")" "[401,401,401,401,401,401,429,429,429]" \
	"after 5 free failures and a sixth, the address gets 429"
is "$(jq -r .retry_after <<<"$out")" 1 "with Retry-After: 1"
# Until each guesser was answered 7 times: its 6th failure, then a 7th
# try at once, inside the block.  By construction, whatever bcrypt costs.
out=$(A guess 10 7 prometheus s3cret)
diag "10 hosts guessing, each answered at least 7 times: $out"
is "$(jq .min_answers_per_address <<<"$out" | awk '{print ($1 >= 7)}')" 1 \
	"every guessing address was answered at least 7 times (least: $(jq .min_answers_per_address <<<"$out"))"
# Not queued behind the password checks (before: 2-7 s): judged by how
# many checks were answered while a request waited, the median under half
# a guesser's, which waits for its own check behind the others'; a bound
# in milliseconds would depend on the machine's load.
ok $(jq -e '.scrape.ok == .scrape.n and .scrape.checks_meanwhile_median < .guesser_checks_meanwhile_median / 2' <<<"$out" >/dev/null; echo $?) \
	"scrapes with cached credentials are not queued behind password checks: all $(jq .scrape.n <<<"$out") answered 200, a median of $(jq .scrape.checks_meanwhile_median <<<"$out") checks answered meanwhile against a guesser's $(jq .guesser_checks_meanwhile_median <<<"$out") ($(jq .scrape.median_ms <<<"$out") ms median, $(jq .scrape.max_ms <<<"$out") max)"
ok $(jq -e '.healthy.ok == .healthy.n and .healthy.checks_meanwhile_median < .guesser_checks_meanwhile_median / 2' <<<"$out" >/dev/null; echo $?) \
	"/-/healthy is not queued either: all $(jq .healthy.n <<<"$out") answered 200, a median of $(jq .healthy.checks_meanwhile_median <<<"$out") checks meanwhile ($(jq .healthy.median_ms <<<"$out") ms median, $(jq .healthy.max_ms <<<"$out") max)"
ok $(jq -e '.guessers["429"] >= 10' <<<"$out" >/dev/null; echo $?) \
	"the guessers are throttled (429) once past their 5 free failures ($(jq -c .guessers <<<"$out"))"
like "$(curl -s -u prometheus:s3cret "$TD_URL/metrics" |
	awk '$1 == "topdown_http_rejected_total{reason=\"throttled\"}" {print $2}')" \
	'^[1-9][0-9]*$' "counted as reason=\"throttled\""
td_stop
is "$TD_STATUS" 0 "exit 0"

# --- Reloads (before: SIGHUPs every 0.4 s alternating the interval gave
# 0 collections in 10 s; keep-alive connections were dropped) ---
printf '[collect]\ninterval = 1s\n' >"$TMP/reload.conf"
td_start "$SPR" "$scen" -c "$TMP/reload.conf" || exit 1
port=${TD_URL##*:}
out=$(A keepalive-reload "$TD_PID" "$TD_LOG")
is "$out" '{"before": 200, "after": 200}' "a keep-alive connection is still served after a reload"
n0=$(intervals)
t_storm=$(date +%s%N)
for i in $(seq 1 25); do
	if [ $((i % 2)) -eq 0 ]; then interval=1s; else interval=500ms; fi
	printf '[collect]\ninterval = %s\n' "$interval" >"$TMP/reload.conf"
	td_reload
	# A reload every 0.4 s at least (the storm's pace, not a wait on
	# anything): faster than either interval.
	sleep 0.4
done
n1=$(intervals)
storm_ms=$((($(date +%s%N) - t_storm) / 1000000))
diag "25 reloads in $storm_ms ms alternating 500ms and 1s: $((n1 - n0)) collections"
# Before, each reload pushed the next collection a whole interval away:
# none at all.  Now the schedule holds: one a second at least, whatever
# the storm lasted (half of that allowed for a loaded machine).
ok $([ $((n1 - n0)) -ge $((storm_ms / 2000)) ] && [ $((n1 - n0)) -ge 4 ]; echo $?) \
	"collection kept going through a reload storm ($((n1 - n0)) in $storm_ms ms; at least $((storm_ms / 2000)) and 4)"
td_stop
is "$TD_STATUS" 0 "exit 0"
printf '[collect]\ninterval = 1m\n[metrics]\ngranularity = cpu\n' >"$TMP/gran.conf"
td_start "$SPR" "$scen" -c "$TMP/gran.conf" || exit 1
like "$(curl -s "$TD_URL/metrics" | grep -m1 '^topdown_slots_total')" 'cpu="0",core="0",package="0"' \
	"granularity cpu before the reload"
printf '[collect]\ninterval = 1m\n[metrics]\ngranularity = package\n' >"$TMP/gran.conf"
td_reload
is "$(curl -s "$TD_URL/metrics" | grep -m1 '^topdown_slots_total' | cut -d' ' -f1)" 'topdown_slots_total{package="0"}' \
	"the same interval's /metrics right after the reload has the new labels (the render cache went)"
td_stop
is "$TD_STATUS" 0 "exit 0"

# --- Descriptors (before: a 64-CPU machine with a hard limit of 300
# exited at start: "Failed to create inter-thread communication channel") ---
BIG=$TMP/spr64
"$FIXTURES/gen-fixture" --kind spr --cpus 64 "$BIG" >/dev/null
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	TD_LOG=$TMP/fd.log
	prlimit --nofile=300:300 setpriv --bounding-set=-sys_resource --inh-caps=-sys_resource \
		env FAKEPMU_SYSFS="$BIG" FAKEPMU_SCENARIO="$scen" LD_PRELOAD="$FAKEPMU" \
		"$TOPDOWND" -c /dev/null --sysfs-root "$BIG" -l 127.0.0.1:0 -i 200ms >"$TD_LOG" 2>&1 &
	TD_PID=$!
	_TD_PIDS+=("$TD_PID")
	for _ in $(seq 1 200); do grep -q 'Listening on' "$TD_LOG" && break; sleep 0.05; done
	TD_URL=$(sed -n 's|.*Listening on \(http://127\.0\.0\.1:[0-9]*\)/.*|\1|p' "$TD_LOG")
	like "$(cat "$TD_LOG")" 'RLIMIT_NOFILE is 300 and cannot be raised \(raising the hard limit needs CAP_SYS_RESOURCE\): 17 of the 64 CPUs to monitor fit \(10 descriptors each\), keeping 128 for HTTP and the daemon\. Set LimitNOFILE=4800' \
		"hard limit 300 without CAP_SYS_RESOURCE: it says how many CPUs fit and what to set"
	wait_intervals 1
	is "$(metric 'topdown_cpus{state="monitored"}') $(metric 'topdown_cpus{state="failed"}')" "17 47" \
		"it monitors the 17 CPUs that fit and marks 47 failed"
	# Room for 66 connections (the log says so), a sixteenth each: 4 per
	# host, so 40 of 50 from 10 hosts are held, 10 refused at once.
	out=$(port=${TD_URL##*:} A crowd 50 10 1 accept=40 timeout=10)
	diag "50 connections from 10 hosts beside 17 CPUs' groups under a limit of 300 descriptors: $out"
	ok "$(scrapes_ok "$out" && jq -e '.held >= 40 and .closed_by_server == 10' <<<"$out" >/dev/null; echo $?)" \
		"and keeps serving, with the 40 connections its share allows held ($(jq .held <<<"$out") open) and 10 refused ($(jq .closed_by_server <<<"$out"))"
	td_stop
	is "$TD_STATUS" 0 "exit 0"
else
	missing "needs root and setpriv(1) to drop CAP_SYS_RESOURCE" 4
fi

# --- Reads (before: a CPU whose reads always failed stayed "monitored") ---
scen_rf=$(write_scenario readfail <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40}]}},
 "faults": [{"cpus": "5", "op": "read", "errno": "EIO", "count": 8}]}
EOF
)
# Interval by interval, on the fake's read-paced clock (a read an
# interval, whatever the machine's load): CPU 5's state in each interval's
# document.  Its first 8 reads fail (every read on CPU 5 takes one, the
# SMT split's group's too): the TopDown group's in intervals 1 to 6.
# Intervals 1 and 2 are the 1st and 2nd failure in a row (still
# monitored), the 3rd makes it failed, and interval 7's read works.
# (Polling a daemon's API for the states missed the first one under a
# loaded gate.)
seen=$(FAKEPMU_SYSFS="$SPR" FAKEPMU_SCENARIO="$scen_rf" FAKEPMU_CLOCK_STEP=0.2 LD_PRELOAD="$FAKEPMU" \
	"$TOPDOWND" -c /dev/null --sysfs-root "$SPR" --watch --json --count 10 -i 200ms 2>/dev/null |
	jq -r '.cpus[] | select(.cpu == 5) | .state' | uniq -c | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')
is "$seen" "monitored x2, failed x4, monitored x4" "CPU 5's reads fail: monitored, then failed after 3 intervals, then monitored when they work"
# The daemon says so, and serves it.
td_start "$SPR" "$scen_rf" -i 200ms || exit 1
wait_until 60 log_has "$TD_LOG" 'Reads of the group of CPU 5 work again after 6 failed intervals; monitoring it'
ok $? "the daemon logs that CPU 5's reads work again after 6 failed intervals"
like "$(cat "$TD_LOG")" 'Reads of the group of CPU 5 failed 3 intervals in a row: CPU 5 is failed until a read works again' \
	"the log says so"
wait_intervals 2
# Both from one document: two requests could straddle an interval (once,
# under a loaded gate, CPU 5's was two intervals later than CPU 4's).
read -r s4 s5 < <(curl -s "$TD_URL/api/v1/topdown?scope=cpu&cpu=4,5" |
	jq -r '[.cpus[] | select(.cpu == 4 or .cpu == 5) | .slots_total] | @tsv')
near "$(awk -v a="$s5" -v b="$s4" 'BEGIN {print a / b}')" 1 0.02 \
	"no slots lost: CPU 5 counted what CPU 4 did ($s5 vs $s4), the first good read covering the gap"
td_stop
is "$TD_STATUS" 0 "exit 0"

# --- A JSON flood (before: 200 connections asking ?scope=cpu of a
# 1024-CPU host made scrapes of /metrics take 8.9-10.5 s and serve data up
# to 8 s old; SIGTERM in it took 9-11 s): /metrics has its own worker,
# an API request that waited 2 s in its queue gets 503 with Retry-After,
# and shutdown answers the queued ones at once. ---
BIG=$TMP/spr-1024
"$FIXTURES/gen-fixture" --kind spr --cpus 1024 --packages 2 --smt 2 "$BIG" >/dev/null
td_start "$BIG" "$scen" -i 1s || exit 1
port=${TD_URL##*:}
wait_intervals 1
# Each flooding client asks a document of its own (CPUs k to 1023): one
# the others' renders cannot answer (identical requests share one render,
# below).
out=$(A flood 64 '/api/v1/topdown?scope=cpu&cpu={k}-1023')
diag "64 clients asking ?scope=cpu of 960-1,024 CPUs as fast as answered: $out"
# Judged in the flood's answers given meanwhile (below), not in
# milliseconds: a scrape queued behind the flood waits for about as many as
# a flooding client does; the median, as the flood's 503s come fast (one
# scrape in 35 ms saw 28 once, the others 0).
ok "$(jq -e '(.scrapes | length == 5) and all(.scrapes[]; .status == 200) and
	([.scrapes[].answers_meanwhile] | sort | .[2]) < .flood_answers_meanwhile_median / 2' <<<"$out" >/dev/null; echo $?)" \
	"/metrics scrapes during the flood: all 200, the median after under half as many of the flood's answers as a flooding client waits for ($(jq -c '[.scrapes[].answers_meanwhile]' <<<"$out") against $(jq .flood_answers_meanwhile_median <<<"$out"); $(jq -c '[.scrapes[].ms]' <<<"$out") ms)"
ok "$(jq -e '.flood["200"] > 0' <<<"$out" >/dev/null; echo $?)" \
	"the flood is served too, the oldest turned away ($(jq -c .flood <<<"$out"))"
# Clients take turns in the API queue (before: first come first served,
# so another client's request waited behind the whole flood, up to the
# 2 s deadline and a 503): the victim asks an as expensive document
# from its own address, and waits about one turn of the 8 flooding
# addresses, a fraction of what a flooding client waits.
out=$(A flood 64 '/api/v1/topdown?scope=cpu&cpu={k}-1023' victim='/api/v1/topdown?scope=cpu')
diag "the victim asking ?scope=cpu during the flood: $out"
vmed=$(jq '[.scrapes[].ms] | sort | .[2]' <<<"$out")
fmed=$(jq '.flood_ok_median_ms' <<<"$out")
# Waits in the flood's renders given meanwhile (its 200 answers), not in
# milliseconds nor in all of its answers: its 503s come at a rate of
# their own, while a render of 1,024 CPUs takes 40 ms here and over a
# second under ASan beside two busy loops (the victim's median was 38
# answers there, the flood's 61: a measure of the load).  Taking turns
# (http/jobs.c, one API worker), the victim waits for the render under
# way and at most one of each flooding address: 9.  First come first
# served, it waited for the renders queued before it (21-27 here, and a
# 503 three times in five).
vren=$(jq '[.scrapes[].renders_meanwhile] | sort | .[2]' <<<"$out")
ok "$(jq -e '(.scrapes | length == 5) and
	([.scrapes[] | select(.status == 200)] | length) / 5 > (.flood["200"] // 0) / ([.flood[]] | add)' <<<"$out" >/dev/null; echo $?)" \
	"another client's API requests during the flood are answered 200 more often than the flood's ($(jq -c '[.scrapes[].status]' <<<"$out"), flood $(jq -c .flood <<<"$out"))"
ok "$(test "$vren" -le 9; echo $?)" \
	"... after at most one render of each of the 8 flooding addresses and the one under way (median $vren: $(jq -c '[.scrapes[].renders_meanwhile]' <<<"$out"); $vmed ms, the flood's median $fmed ms)"
# The same document asked by every client is rendered once per interval
# (before: once per request, each ~45 ms at 1,024 CPUs and the flood's
# median 2 s).  Every render is of an interval no older than the two
# before the newest (older requests time out at 2 s): at most the
# intervals collected during the flood, plus the three kept.
r0=$(metric topdown_http_api_renders_total); i0=$(intervals)
out=$(A flood 64 '/api/v1/topdown?scope=cpu')
# /metrics is rendered once an interval: the next one counts the last.
wait_intervals 1
r1=$(metric topdown_http_api_renders_total); i1=$(intervals)
diag "64 clients asking the same ?scope=cpu: $out; $((r1 - r0)) renders over $((i1 - i0)) intervals"
ok "$(jq -e --argjson r $((r1 - r0)) --argjson i $((i1 - i0)) \
	'$r >= 1 and $r <= $i + 3 and (.flood["200"] // 0) >= 4 * $r' <<<"$out" >/dev/null; echo $?)" \
	"identical requests share renders: $((r1 - r0)) renders over $((i1 - i0)) intervals for $(jq '.flood["200"] // 0' <<<"$out") answers"
( A flood 64 '/api/v1/topdown?scope=cpu&cpu={k}-1023' ready="$TMP/flooding" >/dev/null ) &
flood_pid=$!
wait_until 60 test -e "$TMP/flooding"
# The stop comes while requests wait in the queue, as the daemon says
# (topdown_http_api_queued_requests), not when the flood says it is under
# way: that is when its first 64 answers are in, and under ASan beside two
# busy loops (a render taking over a second) those end in a burst of
# 503s for the requests that waited 2 s, which empties the queue; a stop
# then found none queued (once, in a gate beside two busy loops).
api_queued_ge() { [ "$(metric topdown_http_api_queued_requests)" -ge "$1" ] 2>/dev/null; }
wait_until 60 api_queued_ge 16
queued=$(metric topdown_http_api_queued_requests)
td_stop
# Judged by what the stop did, not by how long it took (2,049 ms once
# under a loaded gate against a bound of 2 s): it exits 0 before td_stop's
# 5 s grace ends in SIGKILL, and the requests queued behind the one
# worker (some 60 of the 64 clients' at any time) were answered 503, not
# rendered one by one (which took 9-11 s before).
unrendered=$(sed -n 's/.*Stopping: \([0-9]*\) queued API requests answered 503 without being rendered.*/\1/p' "$TD_LOG")
ok $([ "$TD_STATUS" = 0 ] && [ "${unrendered:-0}" -ge 1 ]; echo $?) \
	"SIGTERM in the flood ($queued requests queued just before): exit $TD_STATUS, ${unrendered:-no} queued requests answered 503 unrendered ($TD_STOP_MS ms)"
wait "$flood_pid" 2>/dev/null

done_testing
