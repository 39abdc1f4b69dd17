#!/bin/bash
# SPDX-License-Identifier: MIT
# Kubernetes identity on per-cgroup TopDown, on the real kernel's cgroup v2
# hierarchy and BPF: a kubelet's trees of both cgroup drivers are made
# under a test root (systemd: kubepods.slice/kubepods-burstable.slice/
# kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope; cgroupfs:
# kubepods/besteffort/pod<uid>/<id>), a CPU hog runs in one container of
# each, and the daemon (the swclock fixture, [cgroups] track = @containers,
# then @pods) must label those series with the pod's UID as the API shows
# it, the container's ID and the QoS class, in /metrics and the JSON API.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || missing_all "per-cgroup attribution needs root (BPF, cgroups); CI runs as root"
plan 13

cgroup_tree topdownd-kube-$$

UID1=6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b     # systemd driver, Burstable
UID2=0b7a3c1e-5d2f-4e8a-9c6b-1f2e3d4c5b6a     # cgroupfs driver, BestEffort
CID1=$(printf '%064x' 0x3f9c2a7b8e1d)
CID2=$(printf 'ab%062x' 0x5a0b9e8d7c6b)
SD_POD=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID1//-/_}.slice
SD=$SD_POD/cri-containerd-$CID1.scope
FS_POD=kubepods/besteffort/pod$UID2
FS=$FS_POD/$CID2
mkdir -p "$CG/$SD" "$CG/$SD_POD/crio-conmon-$CID1.scope" "$CG/$FS"

hog "$SD" 0 300
hog "$FS" 1 300

run() { # run TRACK: the daemon on the test root with [cgroups] track = TRACK
	cat >"$TMP/kube.conf" <<CONF
[collect]
interval = 500ms
[cgroups]
enabled = true
root = $CG
track = $1
budget = 100%
CONF
	td_start_real "$TMP/kube.conf"
}

run @containers
ok $? "the daemon starts with [cgroups] track = @containers on a kubelet's trees"
kill -CONT "${HOGS[@]}"
wait_intervals 3 || diag "no three intervals within 60 s"
curl -sf "$TD_URL/metrics" >"$TMP/metrics"
label_line() { # label_line CGROUP-PATH: its topdown_cgroup_slots_total sample's labels
	awk -v c="cgroup=\"/$1\"" 'index($0, "topdown_cgroup_slots_total{" c) == 1 {
		sub(/^[^{]*\{/, ""); sub(/\} .*/, ""); print; exit }' "$TMP/metrics"
}
value_of() {
	awk -v c="cgroup=\"/$1\"" 'index($0, "topdown_cgroup_slots_total{" c) == 1 { print $NF; exit }' "$TMP/metrics"
}
is "$(label_line "$SD")" \
	"cgroup=\"/$SD\",pod_uid=\"$UID1\",container_id=\"$CID1\",qos_class=\"Burstable\"" \
	"systemd driver: the container's series has the pod's UID (the driver's _ back to -), its ID and Burstable"
is "$(label_line "$FS")" \
	"cgroup=\"/$FS\",pod_uid=\"$UID2\",container_id=\"$CID2\",qos_class=\"BestEffort\"" \
	"cgroupfs driver: the container's series has the pod's UID, its ID and BestEffort"
is "$(label_line "$SD_POD/crio-conmon-$CID1.scope")" \
	"cgroup=\"/$SD_POD/crio-conmon-$CID1.scope\",pod_uid=\"$UID1\",qos_class=\"Burstable\"" \
	"the runtime's own cgroup in the pod: the pod's labels, no container_id"
# The hogs ran: their series count slots (CPU time on the swclock fixture).
awk -v a="$(value_of "$SD")" -v b="$(value_of "$FS")" 'BEGIN { exit !(a > 0 && b > 0) }'
ok $? "both containers' hogs are counted ($(value_of "$SD") and $(value_of "$FS") slots)"
grep -q "topdown_cgroup_level1_slots_total{cgroup=\"/$FS\",pod_uid=\"$UID2\",container_id=\"$CID2\",qos_class=\"BestEffort\",category=\"retiring\"} " "$TMP/metrics"
ok $? "the level-1 series carry the same labels, the category after them"
curl -sf "$TD_URL/api/v1/topdown?scope=cgroup" >"$TMP/doc.json"
is "$(jq -r --arg c "/$SD" '.cgroups[] | select(.cgroup == $c) | [.pod_uid, .container_id, .qos_class] | join(" ")' "$TMP/doc.json")" \
	"$UID1 $CID1 Burstable" "the JSON API: the same pod, container and class"
is "$(jq -r '[.cgroups[] | select(.pod_uid == null)] | map(.cgroup) | join(" ")' "$TMP/doc.json")" \
	"other" "every tracked cgroup is a pod's; only other has no pod"
# With the Prometheus text parser: the label sets are valid.
/usr/bin/python3 -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
pods = {s.labels.get("pod_uid") for s in fams["topdown_cgroup_slots"].samples}
sys.exit(0 if {sys.argv[2], sys.argv[3]} <= pods else 1)' "$TMP/metrics" "$UID1" "$UID2"
ok $? "prometheus_client parses the exposition, both pods among its label values"
td_stop

run @pods
ok $? "the daemon starts again with track = @pods"
wait_intervals 3 || diag "no three intervals within 60 s"
curl -sf "$TD_URL/metrics" >"$TMP/metrics"
is "$(label_line "$SD_POD")" "cgroup=\"/$SD_POD\",pod_uid=\"$UID1\",qos_class=\"Burstable\"" \
	"@pods: the systemd pod's series, its UID and class, no container_id"
is "$(label_line "$FS_POD")" "cgroup=\"/$FS_POD\",pod_uid=\"$UID2\",qos_class=\"BestEffort\"" \
	"@pods: the cgroupfs pod's series"
n=$(grep -c '^topdown_cgroup_slots_total{' "$TMP/metrics")
is "$n" 3 "@pods: one series per pod, and other"
done_testing
