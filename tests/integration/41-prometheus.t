#!/bin/bash
# SPDX-License-Identifier: MIT
# contrib/ against a real Prometheus: Debian's prometheus server scrapes the
# daemon under the fake PMU every second and evaluates rules.yml every
# second; the recording rules must match the scenario's truth (check.py)
# within 0.01, the alerts must be in the states the scenario implies, and
# every query of the Grafana dashboard must return data.
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/prometheus ]; then
	missing_all "prometheus package not installed (make deps installs it)"
	exit 0
fi

PROM=$ROOT/contrib/prometheus
RULES=$PROM/rules.yml
DASH=$ROOT/contrib/grafana/topdownd.json
PC="/usr/bin/python3 $PROM/tests/promcheck.py"
SPR=$FIXTURES/spr-2s
L1="retiring bad_speculation frontend_bound backend_bound"
L2="heavy_operations light_operations branch_mispredicts machine_clears fetch_latency fetch_bandwidth memory_bound core_bound"

# Package 1 (CPUs 4-7, 12-15) runs another workload at twice the slot rate;
# CPU 2 (package 0) a third, multiplexed: its counters run half the time.
scenario=$(write_scenario multi <<'EOF'
{"cpus": {"default": {"slots_per_second": 1.2e10, "phases": [
  {"retiring": 0.30, "bad_speculation": 0.10, "frontend_bound": 0.20, "backend_bound": 0.40,
   "heavy_operations": 0.05, "branch_mispredicts": 0.06, "fetch_latency": 0.12,
   "memory_bound": 0.25, "uop_dropping": 0.01}]},
  "4-7,12-15": {"slots_per_second": 2.4e10, "phases": [
  {"retiring": 0.55, "bad_speculation": 0.05, "frontend_bound": 0.25, "backend_bound": 0.15,
   "heavy_operations": 0.15, "branch_mispredicts": 0.02, "fetch_latency": 0.10,
   "memory_bound": 0.05, "uop_dropping": 0.02}]},
  "2": {"slots_per_second": 1.2e10, "running": 0.5, "phases": [
  {"retiring": 0.20, "bad_speculation": 0.30, "frontend_bound": 0.15, "backend_bound": 0.35,
   "heavy_operations": 0.02, "branch_mispredicts": 0.25, "fetch_latency": 0.08,
   "memory_bound": 0.10, "uop_dropping": 0.005}]}},
 "smt": {"default": [{"both": 0.6, "first": 0.2, "second": 0.1}]}}
EOF
)

# The dashboard's queries are counted before anything starts: one test each.
$PC exprs "$DASH" >"$TMP/exprs0" || exit 1
n_exprs=$(wc -l <"$TMP/exprs0")
plan $((120 + n_exprs))

# --- the daemon and Prometheus ---
# At level 3: the dashboard's row below level 2 reads the node counters;
# and the SMT split, asked for beside them (each core's threads run 0.6
# of the time together).
printf '[collect]\nlevel = 3\nsmt = on\n' >"$TMP/l3.conf"
td_start "$SPR" "$scenario" -c "$TMP/l3.conf" || exit 1
instance=${TD_URL#http://}
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: topdownd
    static_configs:
      - targets: ["$instance"]
  - job_name: topdownd_cpu
    params:
      granularity: [cpu]
    static_configs:
      - targets: ["$instance"]
EOF
# start_prom CONFIG NAME: a Prometheus server on an ephemeral port, its
# log in $TMP/NAME.log; sets P_PID, and P_URL once it is ready.
start_prom() {
	/usr/bin/prometheus --config.file="$1" --storage.tsdb.path="$TMP/tsdb-$2" \
		--web.listen-address=127.0.0.1:0 --log.level=info >"$TMP/$2.log" 2>&1 &
	P_PID=$!
	_TD_PIDS+=("$P_PID")
	P_URL=
	for _ in $(seq 1 400); do
		P_URL=$(sed -n 's/.*msg="Listening on" address=\(127\.0\.0\.1:[0-9]*\).*/http:\/\/\1/p' "$TMP/$2.log" | head -1)
		[ -n "$P_URL" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$P_URL/-/ready")" = 200 ] && break
		kill -0 "$P_PID" 2>/dev/null || break
		sleep 0.05
	done
}
start_prom "$TMP/prometheus.yml" prometheus
PROM_PID=$P_PID
PURL=$P_URL
[ -n "$PURL" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$PURL/-/ready")" = 200 ]
ok $? "prometheus $(/usr/bin/prometheus --version 2>&1 | awk 'NR == 1 {print $3}') ready on ${PURL:-?} (scrape and rules every 1s, rules.yml loaded)"
if [ -z "$PURL" ]; then
	sed 's/^/#   /' "$TMP/prometheus.log"
	exit 1
fi

q() { # q EXPR -> "{labels} value" lines
	curl -sf --data-urlencode "query=$1" "$PURL/api/v1/query" | $PC vector
}
val() { # val EXPR LABEL-SUBSTRINGS... -> the value of the first sample matching all
	local expr=$1
	shift
	q "$expr" | awk -v pats="$*" 'BEGIN {n = split(pats, p, " ")}
		{for (i = 1; i <= n; i++) if (index($1, p[i]) == 0) next; print $2; exit}'
}

# Wait for 10 scrapes and for every rule family to have data (at most 60 s).
start=$(date +%s)
ready=1
while [ $(($(date +%s) - start)) -lt 60 ]; do
	n=$(val "count_over_time(topdown_collections_total{job=\"topdownd\"}[1m])")
	if [ "${n:-0}" -ge 10 ] &&
		[ -n "$(val 'instance_package:topdown_level2:ratio_rate1m')" ] &&
		[ -n "$(val 'instance:topdown_bottleneck_level2:ratio_rate5m')" ] &&
		[ -n "$(val 'job:topdown_level2:ratio_rate5m')" ]; then
		ready=0
		break
	fi
	sleep 0.5
done
ok $ready "every rule has data after $(($(date +%s) - start)) s (${n:-0} scrapes in the last minute)"
[ $ready -eq 0 ] || { sed 's/^/#   /' "$TMP/prometheus.log" | tail -20; tail -5 "$TD_LOG" | sed 's/^/#   /'; }

n_rules=$($PC rules "$RULES" | wc -l)
curl -sf "$PURL/api/v1/rules" >"$TMP/rules.json"
is "$(jq -r "[.data.groups[].rules[]] | \"\(length) \(map(select(.health != \"ok\")) | length)\"" "$TMP/rules.json")" \
	"$n_rules 0" "Prometheus loaded all $n_rules rules and none fails to evaluate"
jq -r '.data.groups[].rules[] | select(.health != "ok") | "#   \(.name): \(.lastError)"' "$TMP/rules.json"

# --- recording rules vs the scenario's truth ---
$CHECK truth "$scenario" "$SPR" >"$TMP/truth.json"
truth() { jq -r "$1" "$TMP/truth.json"; }
# rate(running)/rate(enabled) over all CPUs: enabled time is the same on each.
running_truth=$(/usr/bin/python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import check, json
scen = json.load(open(sys.argv[2]))
topo = check.topology(sys.argv[3])
print(sum(check.cpu_settings(scen, c)[1] for c in topo) / len(topo))' \
	"$ROOT/tests/integration" "$scenario" "$SPR")

compare() { # compare RULE LABEL-FILTER TRUTH-PATH CATEGORY [PARENT]
	local rule=$1 filter=$2 path=$3 cat=$4 parent=${5:-} got want shown
	got=$(awk -v c="category=\"$cat\"" -v f="$filter" 'index($1, c) && index($1, f) {print $2; exit}' "$TMP/q-$rule")
	want=$(truth "$path.$cat")
	shown="{${filter:+$filter,}category=\"$cat\"${parent:+,parent=\"$parent\"}}"
	diag "$(printf '%s%s = %.4f (truth %.4f)' "$rule" "$shown" "${got:-nan}" "$want")"
	near "$got" "$want" 0.01 "$rule$shown within 0.01 of the truth"
}
parent_of() {
	case $1 in
	heavy_operations | light_operations) echo retiring ;;
	branch_mispredicts | machine_clears) echo bad_speculation ;;
	fetch_latency | fetch_bandwidth) echo frontend_bound ;;
	*) echo backend_bound ;;
	esac
}
for w in 1m 5m; do
	for level in instance instance_package job; do
		for n in 1 2; do
			rule="$level:topdown_level$n:ratio_rate$w"
			q "$rule" >"$TMP/q-$rule"
		done
	done
	for level in instance job; do
		for c in $L1; do compare "$level:topdown_level1:ratio_rate$w" "" .host "$c"; done
		for c in $L2; do compare "$level:topdown_level2:ratio_rate$w" "" .host "$c" "$(parent_of "$c")"; done
	done
	for p in 0 1; do
		for c in $L1; do compare "instance_package:topdown_level1:ratio_rate$w" "package=\"$p\"" ".packages[\"$p\"]" "$c"; done
		for c in $L2; do
			compare "instance_package:topdown_level2:ratio_rate$w" "package=\"$p\"" ".packages[\"$p\"]" "$c" "$(parent_of "$c")"
		done
	done
	got=$(val "instance:topdown_running:ratio_rate$w")
	diag "$(printf 'instance:topdown_running:ratio_rate%s = %.4f (truth %.4f)' "$w" "${got:-nan}" "$running_truth")"
	near "$got" "$running_truth" 0.01 "instance:topdown_running:ratio_rate$w within 0.01 of the mean running fraction"
done
# The bottleneck: the largest non-retiring level-1 category, its largest child.
b1=$(truth '.host | to_entries | map(select(.key == "bad_speculation" or .key == "frontend_bound" or .key == "backend_bound")) | max_by(.value) | .key')
b2=$(truth ".host as \$h | {retiring: [\"heavy_operations\",\"light_operations\"], bad_speculation: [\"branch_mispredicts\",\"machine_clears\"], frontend_bound: [\"fetch_latency\",\"fetch_bandwidth\"], backend_bound: [\"memory_bound\",\"core_bound\"]}[\"$b1\"] | map({key: ., value: \$h[.]}) | max_by(.value) | .key")
line=$(q instance:topdown_bottleneck:ratio_rate5m)
like "$line" "category=\"$b1\"" "instance:topdown_bottleneck:ratio_rate5m names $b1"
got=${line##* }
diag "$(printf 'instance:topdown_bottleneck:ratio_rate5m{category="%s"} = %.4f (truth %.4f)' "$b1" "${got:-nan}" "$(truth ".host.$b1")")"
near "$got" "$(truth ".host.$b1")" 0.01 "instance:topdown_bottleneck:ratio_rate5m within 0.01 of the truth"
line=$(q instance:topdown_bottleneck_level2:ratio_rate5m)
like "$line" "category=\"$b2\".*parent=\"$b1\"" "instance:topdown_bottleneck_level2:ratio_rate5m names $b1.$b2"
got=${line##* }
diag "$(printf 'instance:topdown_bottleneck_level2:ratio_rate5m{category="%s",parent="%s"} = %.4f (truth %.4f)' "$b2" "$b1" "${got:-nan}" "$(truth ".host.$b2")")"
near "$got" "$(truth ".host.$b2")" 0.01 "instance:topdown_bottleneck_level2:ratio_rate5m within 0.01 of the truth"
diag "the level-1 shares of the host add up to $(val 'sum(instance:topdown_level1:ratio_rate1m{job="topdownd"})') (each is checked against the truth above)"

# --- alerts: only the multiplexing one, pending (CPU 2 runs half the time) ---
curl -sf "$PURL/api/v1/alerts" >"$TMP/alerts.json"
is "$(jq -r '[.data.alerts[] | select(.labels.alertname == "TopdownHeavyMultiplexing") | "\(.state) \(.labels.instance)"] | join(",")' "$TMP/alerts.json")" \
	"pending $instance" "TopdownHeavyMultiplexing pending for the host (CPU 2 runs 50% of the time)"
is "$(jq -r '[.data.alerts[] | select(.labels.alertname != "TopdownHeavyMultiplexing") | .labels.alertname] | join(",")' "$TMP/alerts.json")" \
	"" "no other alert is pending or firing"

# --- every dashboard query, variables substituted, returns data ---
$PC exprs "$DASH" job=topdownd "instance=$instance" package=0 category=backend_bound datasource=prometheus >"$TMP/exprs"
# The per-cgroup panels need a daemon with [cgroups] enabled: below.
is_cgroup() { case $1 in *topdown_cgroup* | *cgroup:topdown*) return 0 ;; esac; return 1; }
while IFS=$'\t' read -r title expr; do
	is_cgroup "$expr" && continue
	q "$expr" >"$TMP/res"
	n=$(grep -c . "$TMP/res")
	ok $([ "$n" -gt 0 ] && ! grep -q '^error' "$TMP/res"; echo $?) "dashboard $title: $n series"
	diag "  $expr"
	diag "  -> $(head -1 "$TMP/res")${n:+$([ "$n" -gt 1 ] && echo " (+$((n - 1)) more)")}"
done <"$TMP/exprs"
# The heatmap's per-CPU backend_bound against each CPU's truth.
heat=$(awk -F'\t' '$1 ~ /by CPU/ {print $2}' "$TMP/exprs")
q "$heat" | sed 's/.*cpu="\([0-9]*\)".* \(.*\)/\1 \2/' >"$TMP/heat"
worst=$(while read -r cpu v; do
	echo "$cpu $v $(truth ".cpus[\"$cpu\"].backend_bound")"
done <"$TMP/heat" | awk '{d = $2 - $3; if (d < 0) d = -d; if (d > m) {m = d; w = $1}} END {printf "%d %.4f %d", NR, m, w}')
read -r n_cpus maxdev _ <<<"$worst"
diag "heatmap backend_bound per CPU: $n_cpus CPUs, largest deviation from the truth $maxdev"
ok $([ "$n_cpus" = 16 ] && awk -v d="$maxdev" 'BEGIN {exit !(d <= 0.01)}'; echo $?) \
	"the per-CPU heatmap query gives all 16 CPUs within 0.01 of their truth"

# The SMT panels against the scenario: every core's threads both run 0.6
# of the time, one alone 0.3 (CPU 2's core is not split: an outside user
# takes all its counters half the time, and the split's group gives way).
smt=$(awk -F'\t' '$1 ~ /^panel Both threads/ {print $2}' "$TMP/exprs")
v=$(q "$smt" | awk '{print $NF; exit}')
ok $(awk -v v="${v:-0}" 'BEGIN {exit !(v > 0.6567 && v < 0.6767)}'; echo $?) \
	"dashboard SMT: both threads ran ${v:-?} of the busy time, the scenario's 0.6 / 0.9 within 0.01"

# --- without the rules (one host, no rule_files), the same dashboard ---
sed '/^rule_files:/,/^scrape_configs:/{/^scrape_configs:/!d}' "$TMP/prometheus.yml" >"$TMP/norules.yml"
start_prom "$TMP/norules.yml" prometheus2
PROM2_PID=$P_PID
PURL2=$P_URL
q2() { curl -sf --data-urlencode "query=$1" "$PURL2/api/v1/query" | $PC vector; }
# A few scrapes: the 1m and 5m ranges need two samples.
for _ in $(seq 1 100); do
	[ "$(q2 'count_over_time(topdown_collections_total{job="topdownd"}[1m])' | awk '{print $2; exit}')" -ge 5 ] 2>/dev/null && break
	sleep 0.1
done
empty=
while IFS=$'\t' read -r title expr; do
	case $title in variable*) continue ;; esac
	is_cgroup "$expr" && continue
	[ "$(q2 "$expr" | grep -c .)" -gt 0 ] || empty="$empty [$title]"
done <"$TMP/exprs"
is "$empty" "" "without recording rules every dashboard panel still has data (computed from the counters)"
q2 "$(awk -F'\t' '$1 ~ /^panel Level 1/ {print $2}' "$TMP/exprs")" >"$TMP/raw-l1"
worst=$(for c in $L1; do
	got=$(awk -v c="category=\"$c\"" 'index($1, c) && index($1, "job=\"topdownd\"") {print $2; exit}' "$TMP/raw-l1")
	echo "$c ${got:-nan} $(truth ".host.$c")"
done | awk '{d = $2 - $3; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.4f", m}')
ok $(awk -v d="$worst" 'BEGIN {exit !(d <= 0.01)}'; echo $?) \
	"... and its level-1 panel is the truth within 0.01 (largest deviation $worst)"
kill -TERM "$PROM2_PID"
wait "$PROM2_PID" 2>/dev/null

# --- the per-cgroup panels and rules: a daemon with [cgroups] enabled on
# the real kernel (the swclock fixture: every event is cpu-clock, see
# 36-cgroups.t), a CPU hog on CPU 0 in a tracked cgroup, and a Prometheus
# of its own, with the rules and without ---
n_cg=$(grep -cP '\t.*(topdown_cgroup|cgroup:topdown)' "$TMP/exprs")
CGROOT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if [ "$(id -u)" -ne 0 ] || [ -z "$CGROOT" ]; then
	for _ in $(seq 1 $((n_cg + 7))); do
		missing "per-cgroup panels: needs root and a cgroup v2 hierarchy (BPF, cgroups)"
	done
else
	CGB=$CGROOT/topdownd-prom-$$
	# Two pods as the kubelet's cgroupfs driver makes them (38-kubepods.t
	# has both drivers), each with a hog on CPU 1: kube-state-metrics (a
	# static exporter below) knows pod A, not pod B.
	UIDA=5b0e6a1c-2f3d-4e7a-9b8c-0d1e2f3a4b5c
	UIDB=9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b
	PODA=kubepods/burstable/pod$UIDA PODB=kubepods/besteffort/pod$UIDB
	mkdir -p "$CGB/hog" "$CGB/$PODA" "$CGB/$PODB"
	cleanup_cg() {
		cgroup_remove "$CGB"
		_td_cleanup
	}
	trap cleanup_cg EXIT
	printf '[collect]\ninterval = 500ms\n[cgroups]\nenabled = true\ntrack = %s/hog %s/kubepods/*/pod*\nbudget = 100%%\n' \
		"${CGB##*/}" "${CGB##*/}" >"$TMP/cg.conf"
	hog_start "$CGB/hog" 0 120
	HOG=$HOG_PID
	hog_start "$CGB/$PODA" 1 120
	HOGA=$HOG_PID
	hog_start "$CGB/$PODB" 1 120
	HOGB=$HOG_PID
	kill -CONT "$HOG" "$HOGA" "$HOGB"
	# kube-state-metrics' kube_pod_info for pod A, served as it serves it.
	/usr/bin/python3 -c '
import http.server, sys
body = (sys.argv[1] + "\n").encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()' "kube_pod_info{namespace=\"shop\",pod=\"checkout-0\",uid=\"$UIDA\",node=\"node-1\",created_by_kind=\"StatefulSet\",created_by_name=\"checkout\",host_network=\"false\",priority_class=\"\"} 1" \
		>"$TMP/ksm.port" 2>"$TMP/ksm.err" &
	_TD_PIDS+=($!)
	wait_until 10 test -s "$TMP/ksm.port" || diag "the kube-state-metrics stand-in did not start: $(cat "$TMP/ksm.err")"
	KSM_TARGET=127.0.0.1:$(head -1 "$TMP/ksm.port")
	# cpu.stat sampled in the background ("wall_seconds usage_usec"), so
	# that the hog's CPU time is known over exactly the window of the
	# samples the rule read, whatever else takes CPU 0 meanwhile.
	# One process reads the clock and the file together (a shell loop of
	# date and awk forks is late by tens of ms on a loaded machine).
	/usr/bin/python3 -c '
import sys, time
while True:
    t0 = time.time()
    with open(sys.argv[1]) as f:
        use = next(l.split()[1] for l in f if l.startswith("usage_usec "))
    t1 = time.time()
    print("%.6f %s" % ((t0 + t1) / 2, use), flush=True)
    time.sleep(0.05)' "$CGB/hog/cpu.stat" >"$TMP/usage.log" 2>/dev/null &
	_TD_PIDS+=($!)
	# The daemon under the fake PMU is stopped last (TopdowndDown below).
	main=("$TD_PID" "$TD_URL" "$TD_LOG")
	td_start_real "$TMP/cg.conf"
	cginst=${TD_URL#http://}
	sed "s|\"$instance\"|\"$cginst\"|" "$TMP/prometheus.yml" >"$TMP/prom-cg.yml"
	printf '  - job_name: kube-state-metrics\n    static_configs:\n      - targets: ["%s"]\n' "$KSM_TARGET" >>"$TMP/prom-cg.yml"
	sed '/^rule_files:/,/^scrape_configs:/{/^scrape_configs:/!d}' "$TMP/prom-cg.yml" >"$TMP/prom-cg-norules.yml"
	start_prom "$TMP/prom-cg.yml" prom-cg
	P3=$P_URL
	start_prom "$TMP/prom-cg-norules.yml" prom-cg-norules
	P4=$P_URL
	q3() { curl -sf --data-urlencode "query=$1" "$P3/api/v1/query" | $PC vector; }
	q4() { curl -sf --data-urlencode "query=$1" "$P4/api/v1/query" | $PC vector; }
	for _ in $(seq 1 600); do
		[ -n "$(q3 'cgroup:topdown_bottleneck:ratio_rate5m')" ] &&
			[ "$(q4 'count_over_time(topdown_cgroup_slots_total[1m])' | awk '{print $2; exit}')" -ge 3 ] 2>/dev/null &&
			[ "$(q3 'count_over_time(topdown_cgroup_slots_total[5m])' | awk '{print $2; exit}')" -ge 10 ] 2>/dev/null && break
		sleep 0.1
	done
	$PC exprs "$DASH" job=topdownd "instance=$cginst" package=0 category=backend_bound datasource=prometheus |
		grep -P '\t.*(topdown_cgroup|cgroup:topdown)' >"$TMP/cg-exprs"
	empty=
	while IFS=$'\t' read -r title expr; do
		q3 "$expr" >"$TMP/res"
		n=$(grep -c . "$TMP/res")
		ok $([ "$n" -gt 0 ] && ! grep -q '^error' "$TMP/res"; echo $?) "dashboard $title: $n series (a daemon with [cgroups] enabled)"
		diag "  -> $(head -1 "$TMP/res")"
		[ "$(q4 "$expr" | grep -c .)" -gt 0 ] || empty="$empty [$title]"
	done <"$TMP/cg-exprs"
	is "$empty" "" "without recording rules the per-cgroup panels still have data (computed from the counters)"
	# The pod view, all at one evaluation time: pod A named by
	# kube_pod_info, pod B by its UID alone, one row each.
	T=$(($(date +%s) - 1))
	qt() { curl -sf --data-urlencode "query=$1" --data-urlencode "time=$T" "$P3/api/v1/query" | $PC vector; }
	pexpr() { awk -F'\t' -v t="$1" 'index($1, t) == 1 {print $2; exit}' "$TMP/cg-exprs"; }
	qt "$(pexpr 'panel Pods by bottleneck (5m) [A]')" >"$TMP/pods"
	rows=$(sed 's/ .*//; s/,*category="[^"]*"//; s/,*\(job\|instance\)="[^"]*"//g; s/{,*/{/' "$TMP/pods" | sort | tr '\n' ' ')
	is "$rows" "{namespace=\"shop\",pod=\"checkout-0\",pod_uid=\"$UIDA\"} {pod_uid=\"$UIDB\"} " \
		"the pods table: pod A by its namespace and name from kube_pod_info, pod B (unknown to it) by its UID alone, one row each"
	sed 's/^/#   /' "$TMP/pods"
	# Each pod has one tracked cgroup here: its figure is that cgroup's,
	# from the same counters at the same instant (not the recording
	# rule's, which was evaluated at an instant of its own).
	qt "$(pexpr 'panel backend_bound by pod (5m) [A]')" >"$TMP/bypod"
	qt 'sum by (cgroup) (rate(topdown_cgroup_level1_slots_total{job="topdownd",category="backend_bound"}[5m])) / on (cgroup) sum by (cgroup) (rate(topdown_cgroup_slots_total{job="topdownd"}[5m]))' >"$TMP/bycg"
	a_pod=$(awk -v u="pod_uid=\"$UIDA\"" 'index($1, u) {print $2}' "$TMP/bypod")
	a_cg=$(awk -v c="cgroup=\"/${CGB##*/}/$PODA\"" 'index($1, c) {print $2}' "$TMP/bycg")
	b_pod=$(awk -v u="pod_uid=\"$UIDB\"" 'index($1, u) {print $2}' "$TMP/bypod")
	b_cg=$(awk -v c="cgroup=\"/${CGB##*/}/$PODB\"" 'index($1, c) {print $2}' "$TMP/bycg")
	near "${a_pod:-none}" "${a_cg:-none}" 1e-9 "backend_bound by pod, pod A: its cgroup's ($a_cg)"
	near "${b_pod:-none}" "${b_cg:-none}" 1e-9 "backend_bound by pod, pod B: its cgroup's ($b_cg)"
	qt "$(pexpr 'panel backend_bound by namespace')" >"$TMP/byns"
	is "$(sed 's/ .*//' "$TMP/byns")" '{namespace="shop"}' "backend_bound by namespace: the namespace kube_pod_info names, and no other"
	near "$(awk '{print $2}' "$TMP/byns")" "${a_pod:-none}" 1e-9 "... its figure is its one pod's"
	# The hog's share of the host's slots (cpu-clock here, on every CPU)
	# against its CPU time in cpu.stat over the time it was scraped (the
	# other processes of this test take CPU 0 too).
	ncpu=$(nproc --all)
	sel="{cgroup=\"/${CGB##*/}/hog\"}"
	# The rule's newest evaluation, and the samples of the hog's counter it
	# read then (rate over 5m: the first and the last in the range).
	curl -sf --data-urlencode "query=cgroup:topdown_host_share:ratio_rate5m$sel[30s]" "$P3/api/v1/query" >"$TMP/rule.json"
	read -r at share < <(jq -r '.data.result[0].values[-1] | "\(.[0]) \(.[1])"' "$TMP/rule.json")
	curl -sf --data-urlencode "query=topdown_cgroup_slots_total$sel[5m]" --data-urlencode "time=$at" \
		"$P3/api/v1/query" >"$TMP/raw.json"
	read -r s0 s1 < <(jq -r '.data.result[0].values | "\(.[0][0]) \(.[-1][0])"' "$TMP/raw.json")
	# A scrape serves the newest collection: the counts are of the moment
	# the daemon collected them, which it exports.
	coll_at() { curl -sf --data-urlencode "query=topdown_last_collection_timestamp_seconds{instance=\"$cginst\"}" \
		--data-urlencode "time=$1" "$P3/api/v1/query" | jq -r '.data.result[0].value[1]'; }
	t0=$(coll_at "$s0") t1=$(coll_at "$s1")
	# cpu.stat at those two moments, interpolated between its samples.
	want=$(awk -v a="$t0" -v b="$t1" -v n="$ncpu" '
		function at(t,   i) { for (i = 2; i <= k; i++) if (T[i] >= t) return U[i - 1] + (U[i] - U[i - 1]) * (t - T[i - 1]) / (T[i] - T[i - 1]); return U[k] }
		NF == 2 && $2 != "" {k++; T[k] = $1; U[k] = $2}
		END {if (k > 1 && b > a) printf "%.4f", (at(b) - at(a)) / 1e6 / (b - a) / n}' "$TMP/usage.log")
	diag "cgroup:topdown_host_share:ratio_rate5m of the hog at $at: ${share:-none}; its cpu.stat usage from $t0 to $t1 (the collections behind the rule's samples), per CPU of $ncpu: ${want:-none}"
	near "$share" "${want:-none}" 0.02 "the hog's share of the host's slots is its cpu.stat share over the same samples within 0.02"
	td_stop
	TD_PID=${main[0]} TD_URL=${main[1]} TD_LOG=${main[2]}
	cgroup_remove "$CGB"
	wait "$HOG" 2>/dev/null
fi

# --- the daemon goes away: TopdowndDown becomes pending ---
td_stop
state=
# Prometheus' next scrape fails, then its next rule evaluation (1 s each
# here; a bound of 60 s for a loaded machine, not the expected time).
for _ in $(seq 1 600); do
	state=$(curl -sf "$PURL/api/v1/alerts" | jq -r '[.data.alerts[] | select(.labels.alertname == "TopdowndDown") | .state] | join(",")')
	[ -n "$state" ] && break
	sleep 0.1
done
is "$state" "pending" "the daemon stopped: TopdowndDown pending (up == 0; it fires after 5m)"

kill -TERM "$PROM_PID"
for _ in $(seq 1 100); do
	kill -0 "$PROM_PID" 2>/dev/null || break
	sleep 0.1
done
wait "$PROM_PID"
is "$?" 0 "prometheus stops cleanly on SIGTERM"

done_testing
