#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks every entry of topdownd's per-microarchitecture tables against
Linux perf's own tables (reference/perf-tables), as TAP:

  - each model number is one perf's x86/mapfile.csv maps to that
    microarchitecture's table directory;
  - each event perf encodes (terms) has the encoding perf's table gives it,
    in the file the entry names;
  - each metric is verbatim the MetricExpr of the file it names, and every
    event it reads is one the microarchitecture counts;
  - topdownd's arithmetic gives perf's values on random counts, where
    perf's own output is consistent, and exactly the documented clamps
    where it is not (README, "How it measures").

usage: uarch_check.py UARCH_DUMP PERF_TABLES
"""
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfexpr import Tables, canonical_event, parse_terms  # noqa: E402

# reference/perf-tables/README.md, "Known skew": the copied
# icelakex/pipeline.json lacks INT_MISC.CLEARS_COUNT, which newer metric
# files use for what perf 6.1 writes cpu@INT_MISC.RECOVERY_CYCLES\,cmask\=1\,edge@.
ALIASES = {"INT_MISC.CLEARS_COUNT": "INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1"}

n = 0
failed = 0


def ok(cond, desc, why=""):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, desc))
    if not cond:
        failed += 1
        for line in str(why).splitlines():
            print("#   " + line)


def table_dir(rel):
    return os.path.dirname(rel)


def unit_of(ua):
    return ua["pmu"] if ua["pmu"] in ("cpu_core", "cpu_atom") else None


def event_encoding(tables, ua, directory, name):
    """Encoding of a canonical event name in @directory's tables, or None."""
    base, _, mods = name.partition(",")
    events = tables.events(directory)
    hit = events.get((base, unit_of(ua))) or events.get((base, None))
    if hit is None:
        if name in ALIASES:
            return event_encoding(tables, ua, directory, ALIASES[name])
        return None
    enc = dict(hit[1])
    for t in filter(None, mods.split(",")):
        key, _, val = t.partition("=")
        enc[key] = int(val, 0) if val else 1
    return enc


def check_models(tables, ua):
    for model in ua["models"]:
        cpuid = "%s-%d-%X" % (ua["vendor"], ua["family"], model)
        got = tables.directory_of(cpuid)
        ok(got == ua["id"], "%s: model 0x%X: perf's mapfile.csv picks %s" % (ua["id"], model, got),
           "expected %s" % ua["id"])


def check_events(tables, ua):
    for e in ua["events"]:
        if e["terms"] is None:
            ok(e["sysfs"] is not None and e["table"].startswith("kernel"),
               "%s: %s comes from the kernel's events/%s" % (ua["id"], e["name"], e["sysfs"]))
            continue
        directory = table_dir(e["table"])
        base = e["name"].split(",")[0]
        fname = os.path.basename(e["table"])
        events = tables.events(directory)
        hit = events.get((base, unit_of(ua))) or events.get((base, None))
        ok(hit is not None and hit[0] == fname,
           "%s: %s is in %s" % (ua["id"], base, e["table"]),
           "found in %s" % (hit[0] if hit else "no file"))
        want = event_encoding(tables, ua, directory, e["name"])
        got = parse_terms(e["terms"])
        ok(want == got, "%s: %s = %s, as perf's table encodes it" % (ua["id"], e["name"], e["terms"]),
           "table: %s\ntopdownd: %s" % (want, got))


def counted_encodings(tables, ua):
    """{kernel name or encoding key: topdownd event name}."""
    out = {}
    for e in ua["events"]:
        if e["sysfs"]:
            out[e["sysfs"]] = e["name"]
            out[canonical_event(e["name"])] = e["name"]
        else:
            enc = parse_terms(e["terms"])
            out[json.dumps(enc, sort_keys=True)] = e["name"]
    return out


def resolve(tables, ua, counted, directory, name):
    """The topdownd event counting perf's @name, or None."""
    if name in counted:
        return counted[name]
    enc = event_encoding(tables, ua, directory, name)
    if enc is None:
        return None
    return counted.get(json.dumps(enc, sort_keys=True))


def check_metrics(tables, ua):
    counted = counted_encodings(tables, ua)
    for m in ua["metrics"]:
        metrics = tables.metrics(m["table"], unit_of(ua))
        text = metrics.expr.get(m["perf_name"])
        ok(text == m["expr"], "%s: %s is verbatim %s's" % (ua["id"], m["perf_name"], m["table"]),
           "table:    %s\ntopdownd: %s" % (text, m["expr"]))
        missing = [ev for ev in sorted(metrics.events(m["perf_name"]))
                   if resolve(tables, ua, counted, table_dir(m["table"]), ev) is None]
        ok(not missing, "%s: every event %s reads is counted" % (ua["id"], m["perf_name"]),
           "not counted: %s" % missing)


def random_counts(rng, ua, level):
    """Counts of one interval as the kernel reports PERF_METRICS: metric
    = slots * byte / 255 (truncated), the L1 bytes summing to 255, each L2
    byte at most its parent's; refinement events per slot, sometimes more
    than the frontend share (perf then prints a negative frontend)."""
    slots = rng.randint(10**6, 10**11)
    cut = sorted(rng.randint(0, 255) for _ in range(3))
    l1 = [cut[0], cut[1] - cut[0], cut[2] - cut[1], 255 - cut[2]]
    l2 = [rng.randint(0, b) for b in l1]
    names1 = ["topdown-retiring", "topdown-bad-spec", "topdown-fe-bound", "topdown-be-bound"]
    names2 = ["topdown-heavy-ops", "topdown-br-mispredict", "topdown-fetch-lat", "topdown-mem-bound"]
    c = {"TOPDOWN.SLOTS": slots}
    for name, b in zip(names1, l1):
        c[name] = slots * b // 255
    if level >= 2:
        for name, b in zip(names2, l2):
            c[name] = slots * b // 255
    big = rng.random() < 0.2
    for e in ua["events"]:
        if e["refine"]:
            share = rng.uniform(0, 0.4 if big else 0.03)
            c[e["name"]] = int(slots * share / (5 if "RECOVERY" in e["name"] or "CLEARS" in e["name"] else 1))
    return c


def documented_clamps(p, formulas, level):
    """perf's values -> what topdownd reports (README, "How it measures")."""
    clamp = lambda v, lo, hi: lo if v < lo else hi if v > hi else v
    ret = p["retiring"]
    fe = clamp(p["frontend_bound"], 0, 1)
    be = p["backend_bound"]
    if ret + fe + be > 1:
        be = clamp(1 - ret - fe, 0, 1)
    bad = max(1 - (fe + be + ret), 0)
    out = {"retiring": ret, "bad_speculation": bad, "frontend_bound": fe, "backend_bound": be}
    if level >= 2:
        heavy = clamp(p["heavy_operations"], 0, ret)
        brm = clamp(p["branch_mispredicts"], 0, bad)
        fl = clamp(p["fetch_latency"], 0, fe)
        mb = clamp(p["memory_bound"], 0, be)
        out.update({"heavy_operations": heavy, "light_operations": ret - heavy,
                    "branch_mispredicts": brm, "machine_clears": bad - brm,
                    "fetch_latency": fl, "fetch_bandwidth": fe - fl,
                    "memory_bound": mb, "core_bound": be - mb})
    return out


def check_formulas(tables, ua, dump, reference_ua):
    """topdownd's tma on random counts vs perf's expressions."""
    rng = random.Random(0x70D0 + len(ua["id"]))
    src = reference_ua or ua
    level = ua["max_level"]
    counted = counted_encodings(tables, src)
    cases, worst, clamped = 400, 0.0, 0
    proc = subprocess.Popen([dump, "eval"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    errors = []
    for _ in range(cases):
        counts = random_counts(rng, src, level)
        refine = reference_ua is None
        if not refine:
            for e in src["events"]:
                if e["refine"]:
                    counts[e["name"]] = 0
        proc.stdin.write(json.dumps({"uarch": ua["id"], "level": level, "refine": refine,
                                     "counts": counts}) + "\n")
        proc.stdin.flush()
        got = json.loads(proc.stdout.readline())
        perf = {}
        for m in src["metrics"]:
            metrics = tables.metrics(m["table"], unit_of(src))
            values = {}
            for ev in metrics.events(m["perf_name"]):
                values[ev] = counts[resolve(tables, src, counted, table_dir(m["table"]), ev)]
            perf[m["category"]] = metrics.evaluate(m["perf_name"], values)
        want = documented_clamps(perf, src["formulas"], level)
        if want != {k: perf[k] for k in want}:
            clamped += 1
        for cat, v in want.items():
            d = abs(got["frac"][cat] - v)
            worst = max(worst, d)
            if d > 1e-9:
                errors.append("%s: perf %.12f -> %.12f, topdownd %.12f" %
                              (cat, perf[cat], v, got["frac"][cat]))
        if abs(got["slots"] - counts["TOPDOWN.SLOTS"]) > 0.5:
            errors.append("slots %s, counted %s" % (got["slots"], counts["TOPDOWN.SLOTS"]))
    proc.stdin.close()
    proc.wait()
    ok(not errors, "%s: %d random intervals give perf's values (%d where a documented clamp "
       "applies), largest difference %.2g" % (ua["id"], cases, clamped, worst),
       "\n".join(errors[:10]))


def main():
    dump, root = sys.argv[1], sys.argv[2]
    tables = Tables(root)
    uarches = json.loads(subprocess.check_output([dump, "tables"]))
    by_id = {u["id"]: u for u in uarches}
    for ua in uarches:
        if ua["metrics"]:
            check_models(tables, ua)
            check_events(tables, ua)
            check_metrics(tables, ua)
            check_formulas(tables, ua, dump, None)
        else:
            # PERF_METRICS alone: Sapphire Rapids' formulas without refinement.
            check_formulas(tables, ua, dump, by_id["sapphirerapids"])
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
