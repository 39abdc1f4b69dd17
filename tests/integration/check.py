#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks for the integration tests, independent of the daemon's code.

The truth of a scenario is computed here from the scenario file alone with
the reference page's formulas (perf 6.1 metric tables), so a test compares
what the daemon reports against what the hardware was told to do:

  truth SCENARIO FIXTURE [opts]              print expected ratios as JSON
  api SCENARIO FIXTURE API_JSON [opts]       daemon JSON vs truth
  scrape-ratios SCENARIO FIXTURE M1 M2 [opts]  ratios from two /metrics
                                             scrapes' counters vs truth
  sum-by-package CPU_METRICS PKG_METRICS     per-CPU counters summed by
                                             package equal package counters
  openmetrics FILE | text FILE               strict parsers accept the file

opts: --formulas spr|icl  --model perf|hardware  --level 1|2  --tol 0.005
      --phase N (default: the last)  --cpus LIST (only these CPUs exist)
"""
import argparse
import json
import os
import sys

L1 = ["retiring", "bad_speculation", "frontend_bound", "backend_bound"]
L2 = [("heavy_operations", "retiring"), ("light_operations", "retiring"),
      ("branch_mispredicts", "bad_speculation"), ("machine_clears", "bad_speculation"),
      ("fetch_latency", "frontend_bound"), ("fetch_bandwidth", "frontend_bound"),
      ("memory_bound", "backend_bound"), ("core_bound", "backend_bound")]


def cpulist(text):
    out = []
    for part in filter(None, text.strip().split(",")):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def read(path):
    with open(path) as f:
        return f.read().strip()


def topology(fixture, only=None):
    """{cpu: (core, package)} for the fixture's CPUs with a topology."""
    base = os.path.join(fixture, "devices/system/cpu")
    topo = {}
    for cpu in cpulist(read(os.path.join(base, "possible"))):
        d = os.path.join(base, "cpu%d/topology" % cpu)
        if not os.path.isdir(d) or (only is not None and cpu not in only):
            continue
        topo[cpu] = (int(read(d + "/core_id")), int(read(d + "/physical_package_id")))
    return topo


def cpu_settings(scen, cpu):
    cpus = scen["cpus"]
    entry = {}
    for key, val in cpus.items():
        if key != "default" and cpu in cpulist(key):
            entry = val
    default = cpus.get("default", {})
    get = lambda k, d=None: entry.get(k, default.get(k, d))
    return get("slots_per_second"), get("running", 1.0), get("phases")


def ratios(phase, formulas, model, level):
    f = lambda k: phase.get(k, 0.0)
    ud = f("uop_dropping") if model == "perf" else 0.0
    rc = f("recovery_cycles") if model == "perf" and formulas == "icl" else 0.0
    ret = f("retiring")
    fe = max(f("frontend_bound") - ud, 0.0)
    be = f("backend_bound") + 5 * rc
    if ret + fe + be > 1:
        be = 1 - ret - fe
    bad = max(1 - (fe + be + ret), 0.0)
    out = {"retiring": ret, "bad_speculation": bad, "frontend_bound": fe,
           "backend_bound": be}
    if level >= 2:
        heavy = min(f("heavy_operations"), ret)
        brm = min(f("branch_mispredicts"), bad)
        fl = min(max(f("fetch_latency") - ud, 0.0), fe)
        mb = min(f("memory_bound"), be)
        out.update({"heavy_operations": heavy, "light_operations": ret - heavy,
                    "branch_mispredicts": brm, "machine_clears": bad - brm,
                    "fetch_latency": fl, "fetch_bandwidth": fe - fl,
                    "memory_bound": mb, "core_bound": be - mb})
    return out


def truth(a):
    with open(a.scenario) as fh:
        scen = json.load(fh)
    only = cpulist(a.cpus) if a.cpus else None
    topo = topology(a.fixture, only)
    per_cpu, weight = {}, {}
    for cpu in topo:
        sps, _, phases = cpu_settings(scen, cpu)
        phase = phases[a.phase] if a.phase is not None else phases[-1]
        per_cpu[cpu] = ratios(phase, a.formulas, a.model, a.level)
        # A multiplexed CPU counts part of the time, and its counts are
        # scaled to the whole of it (as perf does): its weight is its
        # true slot rate, whatever the running fraction.
        weight[cpu] = sps

    def combine(cpus):
        total = sum(weight[c] for c in cpus)
        return {k: sum(per_cpu[c][k] * weight[c] for c in cpus) / total
                for k in per_cpu[cpus[0]]}

    pkgs = {}
    for cpu, (_, pkg) in topo.items():
        pkgs.setdefault(pkg, []).append(cpu)
    return {"host": combine(list(topo)),
            "packages": {p: combine(c) for p, c in pkgs.items()},
            "cpus": per_cpu}


def compare(label, got, want, tol, errors):
    for k, v in want.items():
        g = got.get(k) if got else None
        if g is None or abs(g - v) > tol:
            errors.append("%s %s: got %s, truth %.6f (tolerance %g)" % (label, k, g, v, tol))


def cmd_api(a):
    t = truth(a)
    with open(a.api_json) as fh:
        doc = json.load(fh)
    errors = []
    sections = [("level1", L1)] + ([("level2", [n for n, _ in L2])] if a.level >= 2 else [])

    def check(label, obj, want):
        for sec, names in sections:
            compare(label + " " + sec, obj.get(sec), {n: want[n] for n in names}, a.tol, errors)

    # With --cpus only those CPUs are known here: no host or package truth.
    if not a.cpus:
        check("host", doc["host"], t["host"])
        for p in doc.get("packages", []):
            check("package %d" % p["package"], p, t["packages"][p["package"]])
    for c in doc.get("cpus", []):
        if c["cpu"] in t["cpus"] and c["state"] == "monitored":
            check("cpu %d" % c["cpu"], c, t["cpus"][c["cpu"]])
    if not a.cpus and "packages" in doc and len(doc["packages"]) != len(t["packages"]):
        errors.append("%d packages reported, %d expected" % (len(doc["packages"]), len(t["packages"])))
    return errors


def parse_text(path):
    """{(name, frozenset(labels.items())): value} of a text exposition."""
    from prometheus_client.parser import text_string_to_metric_families
    out = {}
    for fam in text_string_to_metric_families(read(path) + "\n"):
        for s in fam.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def sums(samples, name, by):
    out = {}
    for (n, labels), v in samples.items():
        if n != name:
            continue
        d = dict(labels)
        key = tuple(d.get(k) for k in by)
        out[key] = out.get(key, 0) + v
    return out


def cmd_scrape_ratios(a):
    t = truth(a)["host"]
    m1, m2 = parse_text(a.m1), parse_text(a.m2)
    errors = []
    d1 = {k[0]: v for k, v in sums(m2, "topdown_level1_slots_total", ["category"]).items()}
    for k, v in sums(m1, "topdown_level1_slots_total", ["category"]).items():
        d1[k[0]] -= v
    total = sum(d1.values())
    if total <= 0:
        return ["no level-1 slots counted between the two scrapes"]
    compare("host level1 (counters)", {k: v / total for k, v in d1.items()},
            {k: t[k] for k in L1}, a.tol, errors)
    if a.level >= 2:
        d2 = {k[0]: v for k, v in sums(m2, "topdown_level2_slots_total", ["category"]).items()}
        for k, v in sums(m1, "topdown_level2_slots_total", ["category"]).items():
            d2[k[0]] -= v
        compare("host level2 (counters)", {k: v / total for k, v in d2.items()},
                {n: t[n] for n, _ in L2}, a.tol, errors)
    return errors


def cmd_sum_by_package(a):
    cpu, pkg = parse_text(a.cpu_metrics), parse_text(a.pkg_metrics)
    errors = []
    for name, by in [("topdown_slots_total", ["package"]),
                     ("topdown_level1_slots_total", ["package", "category"]),
                     ("topdown_level2_slots_total", ["package", "category"]),
                     ("topdown_enabled_seconds_total", ["package"])]:
        s_cpu, s_pkg = sums(cpu, name, by), sums(pkg, name, by)
        if not s_pkg:
            errors.append("%s: no package-level samples" % name)
        for key, v in s_pkg.items():
            c = s_cpu.get(key)
            # Same interval, same doubles: sums agree to rounding only.
            if c is None or abs(c - v) > max(1e-9 * v, 2 * len(s_cpu)):
                errors.append("%s%s: per-CPU sum %s, package %s" % (name, key, c, v))
    return errors


def cmd_openmetrics(a):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
    fams = list(text_string_to_metric_families(read(a.file) + "\n"))
    return [] if fams else ["no metric families"]


def cmd_text(a):
    return [] if parse_text(a.file) else ["no samples"]


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)

    def opts(p):
        p.add_argument("scenario")
        p.add_argument("fixture")
        p.add_argument("--formulas", default="spr", choices=["spr", "icl"])
        p.add_argument("--model", default="perf", choices=["perf", "hardware"])
        p.add_argument("--level", type=int, default=2)
        p.add_argument("--tol", type=float, default=0.005)
        p.add_argument("--phase", type=int)
        p.add_argument("--cpus")

    opts(sub.add_parser("truth"))
    p = sub.add_parser("api")
    opts(p)
    p.add_argument("api_json")
    p = sub.add_parser("scrape-ratios")
    opts(p)
    p.add_argument("m1")
    p.add_argument("m2")
    p = sub.add_parser("sum-by-package")
    p.add_argument("cpu_metrics")
    p.add_argument("pkg_metrics")
    sub.add_parser("openmetrics").add_argument("file")
    sub.add_parser("text").add_argument("file")
    a = ap.parse_args()

    if a.cmd == "truth":
        print(json.dumps(truth(a), indent=1, sort_keys=True, default=str))
        return 0
    errors = {"api": cmd_api, "scrape-ratios": cmd_scrape_ratios,
              "sum-by-package": cmd_sum_by_package, "openmetrics": cmd_openmetrics,
              "text": cmd_text}[a.cmd](a)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
