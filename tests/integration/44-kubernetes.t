#!/bin/bash
# SPDX-License-Identifier: MIT
# contrib/kubernetes: the manifests are valid Kubernetes and Prometheus
# Operator objects (the API's schemas, as the npm kubernetes-models
# packages carry them), the ones written from other files are up to date
# and carry those files unchanged, the rules inside the PrometheusRule pass
# the same promtool unit tests as contrib/prometheus/rules.yml, the
# ConfigMap's configuration passes --check-config, and the DaemonSet asks
# for what the README says and no more.
. "$(dirname "$0")/lib.sh"

K=$ROOT/contrib/kubernetes/base
MODS=$ROOT/build/npm/node_modules
if [ ! -d "$MODS/kubernetes-models" ] || ! command -v node >/dev/null; then
	missing_all "node or the kubernetes-models npm packages (make deps installs them under build/npm)"
fi
[ -x /usr/bin/promtool ] || missing_all "prometheus package not installed (make deps installs it)"
command -v kubectl >/dev/null || missing_all "kubectl (its kustomize builds the kube-prometheus-stack profile; make deps installs Debian's kubernetes-client when the machine has none)"
plan 24

# The YAML documents of every manifest, as one JSON array.
/usr/bin/python3 - "$K" "$TMP/objs.json" <<'PY'
import glob, json, os, sys, yaml
objs = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.yaml"))):
    if not f.endswith("kustomization.yaml"):
        objs += [d for d in yaml.safe_load_all(open(f)) if d]
json.dump(objs, open(sys.argv[2], "w"))
PY
ok $? "every manifest is YAML"
jqk() { jq -r "$@" "$TMP/objs.json"; }

out=$(node "$ROOT/tests/integration/kubecheck.js" "$MODS" "$TMP/objs.json" 2>&1)
ok $? "every object validates against the API's schemas"
echo "$out" | sed 's/^/#   /'
is "$(echo "$out" | grep -c '^valid: ')" 8 "eight objects: Namespace, PriorityClass, ConfigMap, DaemonSet, Service, PodMonitor, PrometheusRule, the dashboard's ConfigMap"

# The checker can fail: a port that is not a number, a PodMonitor port
# that is not a name.
jq '(.[] | select(.kind == "DaemonSet") | .spec.template.spec.containers[0].ports[0].containerPort) |= "10412x"
    | (.[] | select(.kind == "PodMonitor") | .spec.podMetricsEndpoints[0].port) |= 10412' \
	"$TMP/objs.json" >"$TMP/bad.json"
out=$(node "$ROOT/tests/integration/kubecheck.js" "$MODS" "$TMP/bad.json" 2>&1)
[ $? -eq 1 ] && [ "$(echo "$out" | grep -c '^invalid: ')" -eq 2 ]
ok $? "a DaemonSet with a string port and a PodMonitor with a numeric one are both refused"

# kustomization.yaml: every manifest, nothing else.
is "$(/usr/bin/python3 -c 'import sys, yaml; print(" ".join(sorted(yaml.safe_load(open(sys.argv[1]))["resources"])))' "$K/kustomization.yaml")" \
	"$(cd "$K" && ls *.yaml | grep -v kustomization | sort | tr '\n' ' ' | sed 's/ $//')" \
	"kustomization.yaml lists every manifest of the folder"

# Written from other files: up to date, and those files unchanged.
mkdir -p "$TMP/gen"
"$ROOT/build-aux/kube-manifests" "$TMP/gen" &&
	cmp -s "$TMP/gen/prometheusrule.yaml" "$K/prometheusrule.yaml" &&
	cmp -s "$TMP/gen/dashboard.yaml" "$K/dashboard.yaml"
ok $? "prometheusrule.yaml and dashboard.yaml are what make manifests writes from rules.yml and the dashboard"
jq -j '.[] | select(.metadata.name == "topdownd-dashboard") | .data["topdownd.json"]' "$TMP/objs.json" >"$TMP/dash.json"
cmp -s "$TMP/dash.json" "$ROOT/contrib/grafana/topdownd.json"
ok $? "the dashboard's ConfigMap holds contrib/grafana/topdownd.json byte for byte"
is "$(jqk '.[] | select(.metadata.name == "topdownd-dashboard") | .metadata.labels.grafana_dashboard')" "1" \
	"... with the label Grafana's sidecar loads"

# The rules inside the PrometheusRule: the same promtool unit tests.
mkdir -p "$TMP/prom/tests"
jqk '.[] | select(.kind == "PrometheusRule") | .spec' >"$TMP/prom/rules.json"
/usr/bin/python3 -c 'import json, sys, yaml; yaml.safe_dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"))' \
	"$TMP/prom/rules.json" "$TMP/prom/rules.yml"
cp "$ROOT"/contrib/prometheus/tests/*.yml "$TMP/prom/tests/"
out=$(cd "$TMP/prom/tests" && promtool test rules ./*.yml 2>&1)
st=$?
ok $st "promtool test rules: contrib/prometheus/tests/*.yml pass on the PrometheusRule's rules"
[ $st -eq 0 ] || echo "$out" | sed 's/^/#   /'

# The ConfigMap's configuration.
jqk '.[] | select(.metadata.name == "topdownd") | select(.kind == "ConfigMap") | .data["topdownd.conf"]' >"$TMP/topdownd.conf"
out=$("$TOPDOWND" -c "$TMP/topdownd.conf" --check-config 2>&1)
ok $? "topdownd --check-config accepts the ConfigMap's topdownd.conf"
[ -z "$out" ] || echo "$out" | sed 's/^/#   /'

# The DaemonSet: the image of this version, the two capabilities, no host
# namespaces, read-only mounts, every node.
ds='.[] | select(.kind == "DaemonSet") | .spec.template.spec'
version=$("$TOPDOWND" -V | awk '{print $2}')
is "$(jqk "$ds | .containers[0].image")" "localhost/topdownd:$version" "the image is make image's tag of this version ($version)"
is "$(jqk "$ds | .containers[0].securityContext | [(.capabilities.drop | join(\",\")), (.capabilities.add | join(\",\")), .allowPrivilegeEscalation, .readOnlyRootFilesystem] | map(tostring) | join(\" \")")" \
	"ALL PERFMON,BPF false true" "capabilities: all dropped, PERFMON and BPF added; no escalation; read-only root"
is "$(jqk "$ds | [.hostNetwork, .hostPID, .securityContext.runAsNonRoot, (.tolerations[0].operator)] | map(tostring) | join(\" \")")" \
	"null null true Exists" "no host network, no host PID, non-root, tolerates every taint"
is "$(jqk "$ds | [.containers[0].volumeMounts[].readOnly] | map(tostring) | join(\" \")")" "true true" \
	"every volume mounted read-only"
# The names that tie the objects together.
is "$(jqk "[(.[] | select(.kind == \"PodMonitor\") | .spec.podMetricsEndpoints[0].port), (.[] | select(.kind == \"Service\") | .spec.ports[0].targetPort), ($ds | .containers[0].ports[0].name)] | join(\" \")")" \
	"metrics metrics metrics" "the PodMonitor and the Service name the container's port"

# Pod Security Admission: the DaemonSet needs what only "privileged"
# allows (a hostPath volume; capabilities beyond baseline's list,
# pod-security.kubernetes.io "baseline": AUDIT_WRITE ... SYS_CHROOT), and
# the namespace says so (before 2026-11-28 it had no label: under a
# cluster's baseline enforcement the DaemonSet created no pod).
baseline='["AUDIT_WRITE","CHOWN","DAC_OVERRIDE","FOWNER","FSETID","KILL","MKNOD","NET_BIND_SERVICE","SETFCAP","SETGID","SETPCAP","SETUID","SYS_CHROOT"]'
is "$(jqk --argjson b "$baseline" "[($ds | [.volumes[] | select(.hostPath)] | length > 0), ($ds | [.containers[].securityContext.capabilities.add[] | select(. as \$c | \$b | index(\$c) | not)] | join(\",\"))] | map(tostring) | join(\" \")")" \
	"true PERFMON,BPF" "the DaemonSet needs the privileged level: a hostPath volume, PERFMON and BPF outside baseline"
is "$(jqk '.[] | select(.kind == "Namespace") | .metadata.labels | [."pod-security.kubernetes.io/enforce", ."pod-security.kubernetes.io/warn", ."pod-security.kubernetes.io/audit"] | join(" ")')" \
	"privileged privileged privileged" "the namespace enforces (and warns, audits) the privileged level"
# The priority class is the manifests' own, not system-node-critical
# (reserved for kube-system on managed clusters), at the highest value a
# user-defined class may have.
is "$(jqk "[($ds | .priorityClassName), (.[] | select(.kind == \"PriorityClass\") | .metadata.name, (.value | tostring), (.globalDefault | tostring))] | join(\" \")")" \
	"topdownd-node-critical topdownd-node-critical 1000000000 false" "the DaemonSet's priority class is priorityclass.yaml's (1000000000, not the default)"
is "$(jqk "$ds | .containers[0].livenessProbe.httpGet.path")" "/-/healthy" "the liveness probe asks /-/healthy (503 on a stalled collection: 30-http.t)"

# The kube-prometheus-stack profile: base/ with the labels the chart's
# Prometheus selects PodMonitors and PrometheusRules by, and the dashboard
# in the namespace its Grafana sidecar searches.  The chart's selectors
# (charts/kube-prometheus-stack/templates/prometheus/prometheus.yaml with
# *SelectorNilUsesHelmValues true, the default: podMonitorSelector
# matchLabels release=RELEASE; ruleSelector release=RELEASE, and before
# chart 50 app=kube-prometheus-stack too) and its Grafana's sidecar
# (label grafana_dashboard=1, searchNamespace unset: the release's own).
P=$ROOT/contrib/kubernetes/kube-prometheus-stack
kubectl kustomize "$P" >"$TMP/profile.yaml" 2>"$TMP/profile.err"
ok $? "kubectl kustomize contrib/kubernetes/kube-prometheus-stack ($(kubectl version --client 2>/dev/null | grep -o 'Kustomize Version: [^ ]*'))"
sed 's/^/#   /' "$TMP/profile.err"
/usr/bin/python3 -c 'import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], open(sys.argv[2], "w"))' \
	"$TMP/profile.yaml" "$TMP/profile.json"
out=$(node "$ROOT/tests/integration/kubecheck.js" "$MODS" "$TMP/profile.json" 2>&1)
ok $? "the profile's $(echo "$out" | grep -c '^valid: ') objects validate against the API's schemas"
release=$(sed -n '/path: \/metadata\/labels\/release/{n;s/.*value: //p}' "$P/release.yaml")
ns=$(sed -n 's/.*value: //p' "$P/dashboard-namespace.yaml")
selects() { # selects KIND MATCHLABELS-JSON: whether the profile's object of KIND carries every label
	jq -e --arg k "$1" --argjson m "$2" '[.[] | select(.kind == $k) | .metadata.labels as $l | $m | to_entries | all(.[]; $l[.key] == .value)] | length == 1 and .[0]' \
		"$TMP/profile.json" >/dev/null
}
selects PodMonitor "{\"release\": \"$release\"}" && selects PrometheusRule "{\"release\": \"$release\"}" &&
	selects PrometheusRule "{\"release\": \"$release\", \"app\": \"kube-prometheus-stack\"}"
ok $? "the chart's Prometheus (release $release) selects its PodMonitor and its PrometheusRule (either chart's ruleSelector)"
is "$(jq -r --arg ns "$ns" '[.[] | select(.metadata.name == "topdownd-dashboard") | .metadata.namespace, .metadata.labels.grafana_dashboard] | join(" ")' "$TMP/profile.json")" \
	"$ns 1" "its dashboard ConfigMap is in $ns, the chart's namespace, with grafana_dashboard=1"
# Everything else is base/'s, unchanged.
jq -S '[.[] | select(.kind != "PodMonitor" and .kind != "PrometheusRule" and .metadata.name != "topdownd-dashboard")] | sort_by(.kind, .metadata.name)' "$TMP/profile.json" >"$TMP/p.rest"
jq -S '[.[] | select(.kind != "PodMonitor" and .kind != "PrometheusRule" and .metadata.name != "topdownd-dashboard")] | sort_by(.kind, .metadata.name)' "$TMP/objs.json" >"$TMP/b.rest"
cmp -s "$TMP/p.rest" "$TMP/b.rest"
ok $? "the other $(jq length "$TMP/b.rest") objects are base/'s unchanged"
done_testing
