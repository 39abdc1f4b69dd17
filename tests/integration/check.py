#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks for the integration tests, independent of the daemon's code.

The truth of a scenario is perf's: the tma_* expressions of perf's own
table files (reference/perf-tables: Sapphire Rapids; perf-tables-6.1: Ice
Lake server), evaluated by tests/oracle/perfexpr.py on the event counts the
scenario states, per CPU and on the counts summed per package and for the
host (perf --per-socket, -a).  No formula is typed here; topdownd's one
rule applied is its documented departure, a value below 0 reported as 0.
A test compares what the daemon reports against what the hardware was
told to do:

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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
from perfexpr import Tables  # noqa: E402
from parity import cpulist  # noqa: E402  (the oracle's CPU-list parser)

# The table of each --formulas, and the event each scenario key counts
# (per slot, as the fake PMU counts it: tests/fakepmu/README.md).
TABLES = {"spr": ("perf-tables", "x86/sapphirerapids/spr-metrics.json"),
          "icl": ("perf-tables-6.1", "x86/icelakex/icx-metrics.json")}
EVENTS = {"retiring": "topdown-retiring", "bad_speculation": "topdown-bad-spec",
          "frontend_bound": "topdown-fe-bound", "backend_bound": "topdown-be-bound",
          "heavy_operations": "topdown-heavy-ops", "branch_mispredicts": "topdown-br-mispredict",
          "fetch_latency": "topdown-fetch-lat", "memory_bound": "topdown-mem-bound"}
REFINE = {"uop_dropping": "INT_MISC.UOP_DROPPING",
          "recovery_cycles": "INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1"}

L1 = ["retiring", "bad_speculation", "frontend_bound", "backend_bound"]
L2 = [("heavy_operations", "retiring"), ("light_operations", "retiring"),
      ("branch_mispredicts", "bad_speculation"), ("machine_clears", "bad_speculation"),
      ("fetch_latency", "frontend_bound"), ("fetch_bandwidth", "frontend_bound"),
      ("memory_bound", "backend_bound"), ("core_bound", "backend_bound")]


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


def counts_of(phase, model, slots):
    """The counts of @slots slots of @phase, by event name."""
    c = {"TOPDOWN.SLOTS": slots}
    for key, ev in EVENTS.items():
        c[ev] = phase.get(key, 0.0) * slots
    for key, ev in REFINE.items():
        # Model hardware: the refinement events are not counted.
        c[ev] = phase.get(key, 0.0) * slots if model == "perf" else 0.0
    c["INT_MISC.CLEARS_COUNT"] = c[REFINE["recovery_cycles"]]
    return c


def perf_values(counts, formulas, level):
    """perf's tma_* values on @counts, with topdownd's departure (below 0:
    0; none: 0)."""
    root, rel = TABLES[formulas]
    metrics = Tables(os.path.join(ROOT, "reference", root)).metrics(rel)
    if formulas == "icl" and level >= 2:
        raise SystemExit("check.py: Ice Lake's level 2 comes from general-purpose events "
                         "the PERF_METRICS scenarios do not state")
    cats = L1 + ([c for c, _ in L2] if level >= 2 else [])
    out = {}
    for cat in cats:
        try:
            out[cat] = max(metrics.evaluate("tma_" + cat, counts), 0.0)
        except ZeroDivisionError:
            out[cat] = 0.0
    return out


def truth(a):
    with open(a.scenario) as fh:
        scen = json.load(fh)
    only = cpulist(a.cpus) if a.cpus else None
    topo = topology(a.fixture, only)
    counts, per_cpu = {}, {}
    for cpu in topo:
        sps, _, phases = cpu_settings(scen, cpu)
        phase = phases[a.phase] if a.phase is not None else phases[-1]
        # A multiplexed CPU counts part of the time, and its counts are
        # scaled to the whole of it (as perf does): its counts are its
        # true slot rate's, whatever the running fraction.
        counts[cpu] = counts_of(phase, a.model, sps)
        per_cpu[cpu] = perf_values(counts[cpu], a.formulas, a.level)

    def combine(cpus):
        summed = {}
        for c in cpus:
            for ev, v in counts[c].items():
                summed[ev] = summed.get(ev, 0.0) + v
        return perf_values(summed, a.formulas, a.level)

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
