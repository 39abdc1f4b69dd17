// SPDX-License-Identifier: MIT
// Validates Kubernetes objects against the API's schemas (the npm
// packages kubernetes-models and @kubernetes-models/prometheus-operator,
// which make deps installs under build/npm): types, required fields,
// enumerations, formats.
//
//   node kubecheck.js NODE_MODULES OBJECTS.json
//
// OBJECTS.json: an array of objects (the YAML documents as JSON).  Prints
// one line per object; exits 1 when one is invalid or of a kind it does
// not know.
"use strict";
const path = require("path");
const fs = require("fs");

const mods = path.resolve(process.argv[2]);
const models = {
  "v1/Namespace": "kubernetes-models/v1/Namespace",
  "v1/ConfigMap": "kubernetes-models/v1/ConfigMap",
  "v1/Service": "kubernetes-models/v1/Service",
  "apps/v1/DaemonSet": "kubernetes-models/apps/v1/DaemonSet",
  "scheduling.k8s.io/v1/PriorityClass": "kubernetes-models/scheduling.k8s.io/v1/PriorityClass",
  "monitoring.coreos.com/v1/PodMonitor":
    "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor",
  "monitoring.coreos.com/v1/PrometheusRule":
    "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule",
};

let failed = 0;
for (const obj of JSON.parse(fs.readFileSync(process.argv[3], "utf8"))) {
  const key = obj.apiVersion + "/" + obj.kind;
  const name = key + " " + ((obj.metadata && obj.metadata.name) || "?");
  if (!models[key]) {
    console.log("unknown kind: " + name);
    failed++;
    continue;
  }
  const mod = require(path.join(mods, models[key]));
  const Model = mod[obj.kind];
  try {
    new Model(obj).validate();
    console.log("valid: " + name);
  } catch (e) {
    console.log("invalid: " + name + ": " + e.message);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
