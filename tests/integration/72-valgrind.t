#!/bin/bash
# SPDX-License-Identifier: MIT
# One run of the daemon under valgrind's memcheck, through every endpoint,
# basic auth, a reload and SIGTERM: no errors and no leaks.
. "$(dirname "$0")/lib.sh"

needs_valgrind
plan 10

SPR=$FIXTURES/spr-2s
scen=$(write_scenario constant <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40,
   "heavy_operations": 0.05, "branch_mispredicts": 0.06, "fetch_latency": 0.12, "memory_bound": 0.25,
   "uop_dropping": 0.01}]}},
 "faults": [{"cpus": "5", "op": "read", "short": true, "count": 1}]}
EOF
)
/usr/bin/python3 -W ignore - "$TMP/htpasswd" <<'EOF'
import crypt, sys
h = crypt.crypt("pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** 4))
open(sys.argv[1], "w").write("prom:%s\n" % h)
EOF
conf=$TMP/vg.conf
printf '[http]\nbasic_auth_file = %s\n' "$TMP/htpasswd" >"$conf"
vglog=$TMP/valgrind.log
FAKEPMU_SYSFS=$SPR FAKEPMU_SCENARIO=$scen LD_PRELOAD=$FAKEPMU \
	valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99 --log-file="$vglog" \
	"$TOPDOWND" -c "$conf" --sysfs-root "$SPR" -l 127.0.0.1:0 -i 200ms >"$TMP/d.log" 2>&1 &
TD_PID=$!
_TD_PIDS+=("$TD_PID")
TD_URL=
for _ in $(seq 1 600); do
	TD_URL=$(sed -n 's|.*Listening on \(http://127\.0\.0\.1:[0-9]*\)/.*|\1|p' "$TMP/d.log" | head -1)
	[ -n "$TD_URL" ] && break
	sleep 0.05
done
ok $([ -n "$TD_URL" ]; echo $?) "the daemon starts under valgrind"
u=(-u prom:pw)
# Two intervals published (valgrind makes each one slow to come).
collections() { curl -s --max-time 20 "${u[@]}" "$TD_URL/metrics" | awk '$1 == "topdown_collections_total" {print $2}'; }
wait_until 120 eval '[ "$(collections)" -ge 2 ] 2>/dev/null'
ok $? "two intervals collected under valgrind ($(collections))"
codes=""
for req in "/metrics" "/api/v1/topdown?scope=cpu" "/api/v1/topdown?level=1&cpu=0-3" "/" "/-/ready" \
	"/api/v1/topdown?scope=nope" "/nope"; do
	codes="$codes $(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "${u[@]}" "$TD_URL$req")"
done
codes="$codes $(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "${u[@]}" -H 'Accept: application/openmetrics-text' -H 'Accept-Encoding: gzip' "$TD_URL/metrics")"
codes="$codes $(curl -s -o /dev/null -w '%{http_code}' --max-time 20 -u prom:bad "$TD_URL/metrics")"
codes="$codes $(curl -s -o /dev/null -w '%{http_code}' --max-time 20 -X POST "$TD_URL/metrics")"
is "$codes" " 200 200 200 200 200 400 404 200 401 405" "every endpoint answered under valgrind"
printf '[collect]\nlevel = 1\n[http]\nbasic_auth_file = %s\n' "$TMP/htpasswd" >"$conf"
kill -HUP "$TD_PID"
level() { curl -s --max-time 20 "${u[@]}" "$TD_URL/api/v1/topdown" | jq .pmu.level; }
wait_until 120 eval '[ "$(level)" = 1 ]'
is "$(level)" 1 "a reload under valgrind"
kill -TERM "$TD_PID"
wait "$TD_PID"
st=$?
is "$st" 0 "exit status 0 (valgrind's --error-exitcode is 99)"
summary=$(grep 'ERROR SUMMARY' "$vglog")
like "$summary" 'ERROR SUMMARY: 0 errors' "memcheck: $summary"
grep -q 'definitely lost: 0 bytes' "$vglog" || grep -q 'All heap blocks were freed' "$vglog"
ok $? "no memory definitely lost"
grep -q 'indirectly lost: 0 bytes' "$vglog" || grep -q 'All heap blocks were freed' "$vglog"
ok $? "no memory indirectly lost"
ok $(grep -q 'Invalid read\|Invalid write\|uninitialised' "$vglog"; [ $? -ne 0 ]; echo $?) "no invalid access or uninitialised use"
grep -q 'Received SIGTERM, stopping' "$TMP/d.log"
ok $? "stopped on SIGTERM"
[ "$_T_FAILED" -eq 0 ] || sed 's/^/#   /' "$vglog" | tail -40
done_testing
