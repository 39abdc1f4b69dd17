#!/bin/bash
# SPDX-License-Identifier: MIT
# The fleet path on real components: two daemons stand for two hosts; a
# Prometheus in agent mode (contrib/prometheus/prometheus-agent.yml) scrapes
# them and remote-writes to a central Prometheus (prometheus-central.yml,
# --web.enable-remote-write-receiver) that evaluates rules.yml.  The
# central fleet ratios must be the slot-weighted truth of both hosts.
# Intervals are shortened to 1 s; everything else is the shipped files.
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/prometheus ]; then
	missing_all "prometheus package not installed (make deps installs it)"
	exit 0
fi
plan 13

PROM=$ROOT/contrib/prometheus
PC="/usr/bin/python3 $PROM/tests/promcheck.py"
SPR=$FIXTURES/spr-2s
L1="retiring bad_speculation frontend_bound backend_bound"

# Host b counts twice the slots of host a, with another workload.
scen_a=$ROOT/tests/scenarios/level2.json
scen_b=$(write_scenario b <<'EOF'
{"cpus": {"default": {"slots_per_second": 2.4e10, "phases": [
  {"retiring": 0.60, "bad_speculation": 0.05, "frontend_bound": 0.15, "backend_bound": 0.20,
   "heavy_operations": 0.10, "branch_mispredicts": 0.03, "fetch_latency": 0.10, "memory_bound": 0.05}]}}}
EOF
)
td_start "$SPR" "$scen_a" -i 250ms || exit 1
A_PID=$TD_PID A=${TD_URL#http://}
td_start "$SPR" "$scen_b" -i 250ms || exit 1
B=${TD_URL#http://}

# start_prom NAME CONFIG ARGS...: sets P_URL; the log is $TMP/NAME.log.
start_prom() {
	local name=$1 cfg=$2
	shift 2
	/usr/bin/prometheus --config.file="$cfg" --web.listen-address=127.0.0.1:0 --log.level=info \
		"$@" >"$TMP/$name.log" 2>&1 &
	_TD_PIDS+=($!)
	eval "${name}_PID=$!"
	P_URL=
	for _ in $(seq 1 400); do
		P_URL=$(sed -n 's/.*msg="Listening on" address=\(127\.0\.0\.1:[0-9]*\).*/http:\/\/\1/p' "$TMP/$name.log" | head -1)
		[ -n "$P_URL" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$P_URL/-/ready")" = 200 ] && return 0
		sleep 0.05
	done
	sed 's/^/#   /' "$TMP/$name.log" | tail -20
	return 1
}

# The central Prometheus: the shipped file, evaluation every second.
mkdir -p "$TMP/central"
cp "$PROM/rules.yml" "$TMP/central/rules.yml"
sed -e 's/evaluation_interval: 15s/evaluation_interval: 1s/' "$PROM/prometheus-central.yml" >"$TMP/central/prometheus.yml"
start_prom central "$TMP/central/prometheus.yml" --storage.tsdb.path="$TMP/central/tsdb" \
	--web.enable-remote-write-receiver
ok $? "central Prometheus ready with the remote-write receiver (${P_URL:-?})"
CENTRAL=$P_URL

# The site agent: the shipped file, our two hosts, the central URL.
awk -v a="$A" -v b="$B" '
	/db1\.example\.com:10412/ {sub(/db1\.example\.com:10412/, a); print; next}
	/db2\.example\.com:10412/ {sub(/db2\.example\.com:10412/, b); print; next}
	{print}' "$PROM/prometheus-agent.yml" |
	sed -e 's/scrape_interval: [0-9]*s/scrape_interval: 1s/' -e 's/scrape_timeout: [0-9]*s/scrape_timeout: 1s/' \
		-e "s|http://prometheus-central.example.com:9090|$CENTRAL|" >"$TMP/agent.yml"
cat >>"$TMP/agent.yml" <<'EOF'
    queue_config:
      batch_send_deadline: 1s
EOF
start_prom agent "$TMP/agent.yml" --enable-feature=agent --storage.agent.path="$TMP/agent-wal"
ok $? "agent-mode Prometheus ready, scraping the two hosts"
grep -q 'Agent mode' "$TMP/agent.log" || grep -qi 'agent' "$TMP/agent.log"
ok $? "it runs in agent mode"

q() { curl -sf --data-urlencode "query=$1" "$CENTRAL/api/v1/query" | $PC vector; }
ready=1
for _ in $(seq 1 240); do
	n=$(q 'count(job:topdown_level1:ratio_rate1m{job="topdownd"})' | awk '{print $2; exit}')
	m=$(q 'count(count by (instance) (topdown_up{job="topdownd"}))' | awk '{print $2; exit}')
	if [ "${n:-0}" = 4 ] && [ "${m:-0}" = 2 ] &&
		[ -n "$(q 'instance:topdown_level1:ratio_rate1m{job="topdownd"} offset 5s')" ]; then
		ready=0
		break
	fi
	sleep 0.5
done
ok $ready "the central Prometheus has both hosts' series and the fleet rules have data"
is "$(q 'count by (site) (topdown_up{job="topdownd"})' | sed 's/ .*//')" '{site="site1"}' \
	"series carry the agent's external label site"

# The truth: each host's, weighted by its slots (b counts twice a's) as
# the central side's rates have them at the same instant: a window of a
# minute over series younger than that weighs the two hosts by how much of
# it each covers (a loaded machine starts them further apart), which the
# fleet ratio must follow too.
$CHECK truth "$scen_a" "$SPR" >"$TMP/ta.json"
$CHECK truth "$scen_b" "$SPR" >"$TMP/tb.json"
# The instant of one evaluation of the rules' group: the fleet ratio and
# the hosts' slot rates it weighs are recorded together there.  An instant
# between two evaluations would read the fleet from one and a host's rate
# from the next where a loaded machine evaluates slowly, while the young
# series' rates still move (1.3 pp seen under ASan beside two busy loops).
at=$(curl -sf --data-urlencode 'query=timestamp(job:topdown_level1:ratio_rate1m{job="topdownd",category="retiring"})' \
	--data "time=$(($(date +%s) - 2))" "$CENTRAL/api/v1/query" | jq -r '.data.result[0].value[1] // empty')
at=${at:-$(($(date +%s) - 2))}
qt() { curl -sf --data-urlencode "query=$1" --data "time=$at" "$CENTRAL/api/v1/query" | $PC vector; }
qt 'job:topdown_level1:ratio_rate1m{job="topdownd"}' >"$TMP/fleet"
qt 'instance:topdown_slots:rate1m{job="topdownd"}' >"$TMP/rates"
ra=$(awk -v i="instance=\"$A\"" 'index($1, i) {print $2; exit}' "$TMP/rates")
rb=$(awk -v i="instance=\"$B\"" 'index($1, i) {print $2; exit}' "$TMP/rates")
diag "slot rates at $at: host a $ra, host b $rb (the scenarios: 1 to 2)"
for c in $L1; do
	want=$(jq -n --slurpfile a "$TMP/ta.json" --slurpfile b "$TMP/tb.json" --argjson ra "${ra:-0}" --argjson rb "${rb:-1}" \
		"(\$ra * \$a[0].host.$c + \$rb * \$b[0].host.$c) / (\$ra + \$rb)")
	got=$(awk -v c="category=\"$c\"" 'index($1, c) {print $2; exit}' "$TMP/fleet")
	diag "$(printf 'job:topdown_level1:ratio_rate1m{category="%s"} = %.4f (truth %.4f)' "$c" "${got:-nan}" "$want")"
	near "$got" "$want" 0.01 "central fleet $c within 0.01 of the truth of both hosts, weighted by their slot rates"
done
q 'instance:topdown_level1:ratio_rate1m{job="topdownd",category="retiring"}' >"$TMP/inst"
near "$(awk -v i="instance=\"$A\"" 'index($1, i) {print $2; exit}' "$TMP/inst")" \
	"$(jq .host.retiring "$TMP/ta.json")" 0.01 "host a's own ratio, centrally"
near "$(awk -v i="instance=\"$B\"" 'index($1, i) {print $2; exit}' "$TMP/inst")" \
	"$(jq .host.retiring "$TMP/tb.json")" 0.01 "host b's own ratio, centrally"

# A host goes away: the central side sees it (the alert is evaluated there).
kill -TERM "$A_PID"
state=
for _ in $(seq 1 200); do
	state=$(curl -sf "$CENTRAL/api/v1/alerts" | jq -r '[.data.alerts[] | select(.labels.alertname == "TopdowndDown") | .labels.instance] | join(",")')
	[ -n "$state" ] && break
	sleep 0.1
done
is "$state" "$A" "host a stopped: TopdowndDown is pending centrally for it"
td_stop
for p in "$agent_PID" "$central_PID"; do kill -TERM "$p"; done
wait "$agent_PID" 2>/dev/null
st_agent=$?
wait "$central_PID" 2>/dev/null
st_central=$?
is "$st_agent $st_central" "0 0" "both Prometheus processes stop cleanly on SIGTERM (exit statuses of the agent and the central server)"

done_testing
