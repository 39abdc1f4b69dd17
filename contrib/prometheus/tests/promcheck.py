#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Helpers for tests/integration/40-rules.t and 41-prometheus.t: read the
rules file and the Grafana dashboard without a YAML library (python3-yaml
is not among the test dependencies) and list what the tests check.

  rules FILE                  one line per rule: record|alert TAB name TAB expr
  rules-lint FILE             every alert has severity, summary, description
                              and runbook; every record is level:metric:ops;
                              a recorded series used by a rule is recorded
                              earlier (same group, or an earlier group)
  exprs DASHBOARD [VAR=VALUE ...]
                              every PromQL expression of the dashboard (panel
                              targets, nested rows, query variables), one a
                              line: title TAB expr, with the variables and
                              Grafana's $__rate_interval etc. substituted;
                              label_values(S, L) becomes count by (L) (S)
  names [--known FILE]        metric names in the expressions read from
                              stdin (title TAB expr lines, or bare exprs);
                              with --known: only those not in FILE, as
                              "title: name"
  dashboard-lint DASHBOARD    the structure the README promises
  vector                      /api/v1/query JSON on stdin -> "labels value"
"""
import json
import re
import signal
import sys

KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
            "group_right", "bool", "offset", "inf", "nan", "atan2"}
GRAFANA_BUILTINS = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h",
                    "__interval_ms": "15000", "__range_s": "3600", "__range_ms": "3600000"}


# ---- rules.yml: the subset of YAML it is written in ----

def parse_rules(path):
    """[{group, kind, name, expr, labels:set, annotations:set}] from a rules
    file written as rules.yml is: `- record:`/`- alert:` items with `expr:`
    either on one line or as a `|` block, labels/annotations as mappings."""
    rules, group, cur, block, block_indent, section = [], None, None, None, None, None
    with open(path) as fh:
        lines = fh.read().split("\n")
    for raw in lines:
        line = raw.rstrip()
        indent = len(line) - len(line.lstrip())
        if block is not None:
            if line.strip() == "" or indent > block_indent:
                block.append(line.strip())
                continue
            cur["expr"] = " ".join(x for x in block if x)
            block = None
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = re.match(r"- name:\s*(\S+)", s)
        if m:
            group = m.group(1)
            continue
        m = re.match(r"- (record|alert):\s*(\S+)", s)
        if m:
            cur = {"group": group, "kind": m.group(1), "name": m.group(2), "expr": None,
                   "labels": set(), "annotations": set(), "indent": indent}
            rules.append(cur)
            section = None
            continue
        if cur is None:
            continue
        m = re.match(r"expr:\s*(.*)$", s)
        if m:
            if m.group(1) in ("|", "|-", ">", ">-"):
                block, block_indent = [], indent
            else:
                cur["expr"] = m.group(1)
            continue
        if s in ("labels:", "annotations:"):
            section, section_indent = s[:-1], indent
            continue
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*):", s)
        if m and section and indent > section_indent:
            cur[section if section == "labels" else "annotations"].add(m.group(1))
        elif m:
            section = None
    if block is not None:
        cur["expr"] = " ".join(x for x in block if x)
    return rules


def cmd_rules(args):
    for r in parse_rules(args[0]):
        print("%s\t%s\t%s" % (r["kind"], r["name"], r["expr"]))


def cmd_rules_lint(args):
    rules = parse_rules(args[0])
    errors = []
    recorded = {}
    for i, r in enumerate(rules):
        if r["expr"] is None:
            errors.append("%s: no expr" % r["name"])
            continue
        if r["kind"] == "alert":
            if "severity" not in r["labels"]:
                errors.append("alert %s: no severity label" % r["name"])
            for a in ("summary", "description", "runbook"):
                if a not in r["annotations"]:
                    errors.append("alert %s: no %s annotation" % (r["name"], a))
        else:
            if not re.match(r"^[a-z_]+:[a-z0-9_]+:[a-z0-9_]+$", r["name"]):
                errors.append("record %s: not level:metric:operations" % r["name"])
            if r["name"] in recorded:
                errors.append("record %s: recorded twice" % r["name"])
        for n in metric_names(r["expr"]):
            if ":" in n and n not in recorded:
                errors.append("%s %s uses %s before it is recorded" % (r["kind"], r["name"], n))
        if r["kind"] == "record":
            recorded[r["name"]] = r["group"]
    for e in errors:
        print(e)
    return 1 if errors else 0


# ---- PromQL: which metric names an expression reads ----

def metric_names(expr):
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    names = []
    for m in re.finditer(r"(?<![\w.$])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?", e):
        word, call = m.group(1), m.group(2)
        if call or word in KEYWORDS:
            continue
        if word not in names:
            names.append(word)
    return names


def cmd_names(args):
    known = None
    if args and args[0] == "--known":
        with open(args[1]) as fh:
            known = set(fh.read().split())
    seen = []
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        title, _, expr = line.rpartition("\t")
        for n in metric_names(expr):
            if known is None:
                if n not in seen:
                    seen.append(n)
            elif n not in known:
                print("%s: %s" % (title or expr, n))
    for n in seen:
        print(n)


# ---- the Grafana dashboard ----

def all_panels(dash):
    for p in dash.get("panels", []):
        yield p
        for q in p.get("panels", []) or []:
            yield q


def substitute(expr, values):
    def repl(m):
        name = m.group(1) or m.group(2)
        if name in values:
            return values[name]
        if name in GRAFANA_BUILTINS:
            return GRAFANA_BUILTINS[name]
        return m.group(0)
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", repl, expr)


def variable_query(v):
    q = v.get("query")
    if isinstance(q, dict):
        q = q.get("query")
    return q or v.get("definition") or ""


def cmd_exprs(args):
    with open(args[0]) as fh:
        dash = json.load(fh)
    values = dict(a.split("=", 1) for a in args[1:])
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = variable_query(v)
        m = re.match(r"^\s*label_values\((.*),\s*(\w+)\s*\)\s*$", q)
        expr = "count by (%s) (%s)" % (m.group(2), m.group(1)) if m else q
        print("variable %s\t%s" % (v["name"], substitute(expr, values)))
    for p in all_panels(dash):
        for t in p.get("targets", []) or []:
            if "expr" in t:
                expr = " ".join(substitute(t["expr"], values).split())
                print("panel %s [%s]\t%s" % (substitute(p.get("title", ""), values),
                                             t.get("refId", "?"), expr))


def cmd_dashboard_lint(args):
    with open(args[0]) as fh:
        dash = json.load(fh)
    errors = []
    if not isinstance(dash.get("schemaVersion"), int) or dash["schemaVersion"] < 37:
        errors.append("schemaVersion %r < 37" % dash.get("schemaVersion"))
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    if ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        errors.append("no datasource variable of type prometheus")
    inst = variables.get("instance")
    if not inst or not re.match(r"label_values\(topdown_up(\{.*\})?, *instance\)", variable_query(inst)):
        errors.append("no instance variable label_values(topdown_up, instance)")
    for name, v in variables.items():
        if v.get("type") == "query" and (v.get("datasource") or {}).get("uid") != "${datasource}":
            errors.append("variable %s does not use ${datasource}" % name)
    ids, exprs = set(), []
    for p in all_panels(dash):
        if p.get("id") in ids:
            errors.append("panel id %s used twice" % p.get("id"))
        ids.add(p.get("id"))
        if "gridPos" not in p:
            errors.append("panel %r has no gridPos" % p.get("title"))
        if p.get("type") == "row":
            continue
        if (p.get("datasource") or {}).get("uid") != "${datasource}":
            errors.append("panel %r does not use ${datasource}" % p.get("title"))
        if not p.get("targets"):
            errors.append("panel %r has no targets" % p.get("title"))
        for t in p.get("targets", []):
            if (t.get("datasource") or {}).get("uid") != "${datasource}":
                errors.append("panel %r target %s does not use ${datasource}" % (p.get("title"), t.get("refId")))
            exprs.append((p, t.get("expr", "")))

    def has(pred, what):
        if not any(pred(p, e) for p, e in exprs):
            errors.append("missing: " + what)

    stacking = lambda p: p.get("fieldConfig", {}).get("defaults", {}).get("custom", {}).get("stacking", {}).get("mode")
    has(lambda p, e: p["type"] == "timeseries" and stacking(p) == "percent"
        and "instance:topdown_level1:ratio_rate" in e, "host level 1 as a 100% stacked area from the rules")
    for parent in ("retiring", "bad_speculation", "frontend_bound", "backend_bound"):
        has(lambda p, e, parent=parent: p["type"] == "timeseries" and "instance:topdown_level2:ratio_rate" in e
            and 'parent="%s"' % parent in e, "level 2 panel under " + parent)
    has(lambda p, e: "instance_package:topdown_level1:ratio_rate" in e and p.get("repeat") == "package",
        "per-package level 1 (repeated by package)")
    has(lambda p, e: p["type"] == "heatmap" and "by (cpu)" in e, "per-CPU heatmap")
    has(lambda p, e: "topdown_running" in e, "running ratio")
    has(lambda p, e: "topdown_last_collection_timestamp_seconds" in e, "collection health")
    has(lambda p, e: p["type"] == "table" and "instance:topdown_bottleneck:ratio_rate" in e,
        "table of hosts by bottleneck")
    has(lambda p, e: p["type"] == "table" and "cgroup:topdown_bottleneck:ratio_rate" in e,
        "table of services (cgroups) by bottleneck")
    has(lambda p, e: p["type"] == "table" and "by (job, instance, pod_uid)" in e and "kube_pod_info" in e,
        "table of pods by bottleneck, named by kube-state-metrics' kube_pod_info")
    has(lambda p, e: "sum by (namespace)" in e and "kube_pod_info" in e, "TopDown by namespace")
    for e in errors:
        print(e)
    return 1 if errors else 0


def cmd_vector(args):
    doc = json.load(sys.stdin)
    if doc.get("status") != "success":
        print("error: %s" % doc.get("error"))
        return 1
    res = doc["data"]["result"]
    if doc["data"]["resultType"] == "scalar":
        print("{} %s" % res[1])
        return 0
    for s in res:
        labels = ",".join('%s="%s"' % kv for kv in sorted(s["metric"].items()))
        print("{%s} %s" % (labels, s["value"][1]))
    return 0


def main():
    # A reader that takes the first line and goes (awk '{...; exit}') is
    # no error: die of SIGPIPE quietly, as a shell tool does.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    cmds = {"rules": cmd_rules, "rules-lint": cmd_rules_lint, "exprs": cmd_exprs,
            "names": cmd_names, "dashboard-lint": cmd_dashboard_lint, "vector": cmd_vector}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 64
    return cmds[sys.argv[1]](sys.argv[2:]) or 0


if __name__ == "__main__":
    sys.exit(main())
