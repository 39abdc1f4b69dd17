#!/bin/bash
# SPDX-License-Identifier: MIT
# contrib/: the Prometheus rules and scrape config pass promtool, the rule
# unit tests pass and cover every rule, the Grafana dashboard is a valid
# model whose every query reads only metrics topdownd or rules.yml produce.
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/promtool ]; then
	missing_all "prometheus package not installed (make deps installs it)"
	exit 0
fi

plan 22

PROM=$ROOT/contrib/prometheus
RULES=$PROM/rules.yml
DASH=$ROOT/contrib/grafana/topdownd.json
PC="/usr/bin/python3 $PROM/tests/promcheck.py"

# --- the rules ---
out=$(promtool check rules --lint=all --lint-fatal "$RULES" 2>&1)
st=$?
n_rules=$($PC rules "$RULES" | wc -l)
ok $st "promtool check rules --lint=all --lint-fatal rules.yml"
[ $st -eq 0 ] || echo "$out" | sed 's/^/#   /'
like "$out" "SUCCESS: $n_rules rules found" "promtool and promcheck.py agree: $n_rules rules"

out=$(cd "$PROM/tests" && promtool test rules ./*.yml 2>&1)
st=$?
ok $st "promtool test rules contrib/prometheus/tests/*.yml"
[ $st -eq 0 ] || echo "$out" | head -60 | sed 's/^/#   /'

out=$($PC rules-lint "$RULES" 2>&1)
ok $? "alerts carry severity, summary, description, runbook; records are level:metric:ops, recorded before use"
[ -z "$out" ] || echo "$out" | sed 's/^/#   /'

# Every recording rule's value is asserted, every alert fires in a test.
missing=
for r in $($PC rules "$RULES" | awk -F'\t' '$1 == "record" {print $2}'); do
	grep -Eq "^ *- expr: (round\\()?$r([ ){]|\$)" "$PROM"/tests/*.yml || missing="$missing $r"
done
is "$missing" "" "every recording rule's value is asserted in contrib/prometheus/tests"
missing=
for a in $($PC rules "$RULES" | awk -F'\t' '$1 == "alert" {print $2}'); do
	grep -A3 "alertname: $a\$" "$PROM"/tests/*.yml | grep -q 'exp_labels:' || missing="$missing $a(fires)"
	grep -q "alertname: $a, exp_alerts: \[\]" "$PROM"/tests/*.yml || missing="$missing $a(silent)"
done
is "$missing" "" "every alert is tested firing and not firing"
is "$($PC rules "$RULES" | awk -F'\t' '$1 == "alert" {print $2}' | sort | tr '\n' ' ')" \
	"TopdownCPUsFailing TopdownCPUsNotMeasured TopdownCPUsOffline TopdownCollectionStalled TopdownHeavyMultiplexing TopdownUnsupported TopdowndDown " \
	"the seven alerts exist"

# --- the scrape configs, as shipped ---
out=$(promtool check config "$PROM/prometheus.yml" 2>&1)
ok $? "promtool check config contrib/prometheus/prometheus.yml, as shipped"
like "$out" "SUCCESS: $n_rules rules found" "it loads the $n_rules rules (rules.yml next to it)"
out=$(promtool check config --agent "$PROM/prometheus-agent.yml" 2>&1)
ok $? "promtool check config --agent prometheus-agent.yml"
[ -n "$out" ] && ! grep -q SUCCESS <<<"$out" && echo "$out" | sed 's/^/#   /'
out=$(promtool check config "$PROM/prometheus-central.yml" 2>&1)
ok $? "promtool check config prometheus-central.yml"
like "$out" "SUCCESS: $n_rules rules found" "the central Prometheus loads the $n_rules rules"
grep -q '^  scrape_interval: 15s' "$PROM/prometheus.yml" && grep -q 'evaluation_interval: 15s' "$PROM/tests/ratios.yml" &&
	grep -q 'interval: 15s' "$PROM/tests/ratios.yml"
ok $? "the documented scrape interval (15 s) is the one the rule tests run at"
# The commented TLS + basic auth block, uncommented into the first job.
awk -v d="$TMP" '
	/^  # --- TLS and basic auth variant/ {invar = 1; next}
	/^  # --- end of the variant/ {invar = 0; next}
	invar && /^  #   / {sub(/^  #   /, "    "); gsub("/etc/prometheus/", d "/"); block = block $0 "\n"; next}
	{lines[++n] = $0}
	END {for (i = 1; i <= n; i++) {print lines[i]; if (lines[i] == "  - job_name: topdownd") printf "%s", block}}' \
	"$PROM/prometheus.yml" >"$TMP/variant.yml"
sed -i "s|^  - rules.yml|  - $RULES|" "$TMP/variant.yml"
touch "$TMP/topdownd-ca.pem" "$TMP/topdownd-client.pem" "$TMP/topdownd-client.key" "$TMP/topdownd.password"
out=$(promtool check config "$TMP/variant.yml" 2>&1)
st=$?
grep -q '^    scheme: https' "$TMP/variant.yml" && grep -q '^      password_file:' "$TMP/variant.yml"
ok $((st + $?)) "the commented TLS/basic-auth block, added to a job, passes promtool check config"
[ $st -eq 0 ] || echo "$out" | sed 's/^/#   /'
grep -q '^  - job_name: topdownd$' "$PROM/prometheus.yml" && grep -q 'up{job="topdownd"}' "$RULES"
ok $? "the example's job name is the one the alerts select (topdownd)"

# --- the dashboard ---
/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$DASH" 2>"$TMP/err"
ok $? "topdownd.json is valid JSON"
[ -s "$TMP/err" ] && sed 's/^/#   /' "$TMP/err"
out=$($PC dashboard-lint "$DASH" 2>&1)
ok $? "dashboard: schemaVersion >= 37, datasource and instance variables, every panel on \${datasource}, the panels the issue lists"
[ -z "$out" ] || echo "$out" | sed 's/^/#   /'

# Every expression reads only metrics a live daemon serves (granularity
# cpu, level 3: the nodes below level 2 too; the SMT split, asked for at
# level 3, on cores whose threads run) or rules.yml records.
printf '[collect]\nlevel = 3\nsmt = on\n' >"$TMP/l3.conf"
jq '. + {smt: {default: [{both: 0.5, first: 0.2, second: 0.1}]}}' "$ROOT/tests/scenarios/constant.json" >"$TMP/smt.json"
td_start "$FIXTURES/spr-2s" "$TMP/smt.json" -i 100ms -c "$TMP/l3.conf" || exit 1
wait_intervals 2 || { diag "the daemon published no interval; its log:"; sed 's/^/#   /' "$TD_LOG"; }
curl -sf "$TD_URL/metrics" >"$TMP/metrics.txt" || { diag "no /metrics; the daemon's log:"; sed 's/^/#   /' "$TD_LOG"; }
td_stop
# NVIDIA Olympus' SMT mode family: a daemon on its fixture.
FAKEPMU_TABLES=$ROOT/reference/perf-tables-7.2 td_start "$FIXTURES/nvidia-t410-16" \
	"$ROOT/tests/scenarios/parity-nvidia-t410.json" -i 100ms || exit 1
wait_intervals 2 || diag "the Olympus daemon published no interval; its log: $(cat "$TD_LOG")"
curl -sf "$TD_URL/metrics" >>"$TMP/metrics.txt"
td_stop
grep -q '^topdown_smt_mode_cycles_total{' "$TMP/metrics.txt"
ok $? "a daemon on NVIDIA Olympus serves the SMT mode family the rules read"
# The per-cgroup families: a daemon with [cgroups] enabled on the real
# kernel (the swclock fixture: BPF on software events; see 36-cgroups.t).
if [ "$(id -u)" -eq 0 ]; then
	printf '[collect]\ninterval = 100ms\n[cgroups]\nenabled = true\ntrack = *\nbudget = 100%%\n' >"$TMP/cg.conf"
	td_start_real "$TMP/cg.conf"
	wait_intervals 2 || diag "the per-cgroup daemon published no interval: $(cat "$TD_LOG")"
	curl -sf "$TD_URL/metrics" >>"$TMP/metrics.txt"
	td_stop
	grep -q '^topdown_cgroup_level1_slots_total{' "$TMP/metrics.txt"
	ok $? "a daemon with [cgroups] enabled serves the per-cgroup families the rules read"
else
	missing "not root: no per-cgroup daemon (BPF) to scrape"
fi
{
	awk '!/^#/ && NF {sub(/[{ ].*/, "", $1); print $1}' "$TMP/metrics.txt"
	$PC rules "$RULES" | awk -F'\t' '$1 == "record" {print $2}'
} | sort -u >"$TMP/known"
$PC exprs "$DASH" job=topdownd instance=127.0.0.1:10412 package=0 category=backend_bound >"$TMP/exprs"
n_exprs=$(wc -l <"$TMP/exprs")
# The pod view names pods by kube-state-metrics' kube_pod_info, where
# Prometheus has it (the daemon cannot know a pod's namespace or name).
out=$( (cat "$TMP/known"; echo kube_pod_info) >"$TMP/known-dash"; $PC names --known "$TMP/known-dash" <"$TMP/exprs")
is "$out" "" "all $n_exprs dashboard expressions read only names in a live /metrics, recorded by rules.yml, or kube_pod_info"
diag "dashboard reads: $($PC names <"$TMP/exprs" | sort | tr '\n' ' ')"
# The rules read only the daemon's metrics, their own records, and up.
echo up >>"$TMP/known"
out=$($PC rules "$RULES" | $PC names --known "$TMP/known")
is "$out" "" "every rule expression reads only names in a live /metrics, recorded by rules.yml, or up"
# No query uses the last-interval gauges: ratios over a window come from counters.
ok $(grep -q 'topdown_level[12]_ratio\b' "$TMP/exprs" "$RULES"; [ $? -ne 0 ]; echo $?) \
	"no rule or dashboard query averages the last-interval ratio gauges"

done_testing
