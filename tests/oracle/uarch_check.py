#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks every entry of topdownd's per-microarchitecture tables against
Linux perf's own tables, as TAP.  Entries name their file under
reference/: perf-tables/ (upstream files) or perf-tables-6.1/ (the
installed perf 6.1's own files, for the models it knows):

  - each model number is one perf's x86/mapfile.csv (of the same tree)
    maps to that microarchitecture's table directory, at every stepping
    (skylakex and cascadelakex share a model: the stepping picks);
  - each event perf encodes (terms) has the encoding and the Counter field
    perf's table gives it, in the file the entry names;
  - each metric is verbatim the MetricExpr of the file it names, and every
    event it reads is one the microarchitecture counts;
  - the pipeline width is the constant perf's expressions multiply by;
  - topdownd's arithmetic gives perf's values on random counts (one case
    in five inconsistent, as independently counted events can be), in
    every SMT mode perf's expressions know (#SMT_on, #core_wide): each
    node perf's expression from the table, evaluated by perfexpr.py,
    except the two departures (docs/design.md, "Compared with perf"), checked on
    their own: a negative node is 0 and flagged "negative"; a level-2
    node perf has no value for (a division by 0) is 0 and flagged
    "no_value"; a level-1 one is no figures.

usage: uarch_check.py UARCH_DUMP PERF_TABLES
"""
import re
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfexpr import Tables, canonical_event, midr_matches, midr_same_part, parse_terms  # noqa: E402

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


ROOTS = {}


def tables_of(rel):
    """(Tables, path inside it) of an entry's "perf-tables/x86/..." path."""
    prefix, _, rest = rel.partition("/")
    return ROOTS[prefix], rest


def table_dir(rel):
    return os.path.dirname(rel)


def unit_of(ua):
    return ua["pmu"] if ua["pmu"] in ("cpu_core", "cpu_atom") else None


def event_encoding(tables, ua, directory, name):
    """Encoding of a canonical event name in @directory's tables, or None."""
    base, _, mods = name.partition(",")
    if tables is None:
        tables, directory = tables_of(directory)
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


def directory_of(tables, cpuid):
    """perf's strcmp_cpuid_str(): the pattern matches the whole
    vendor-family-model-stepping string or all of it but the stepping."""
    short = cpuid.rsplit("-", 1)[0]
    for pattern, directory in tables.mapfile("x86"):
        pattern = pattern.replace("[:xdigit:]", "0-9A-Fa-f")
        if re.fullmatch(pattern, cpuid) or re.fullmatch(pattern, short):
            return directory
    return None


def mapfile_pattern(tables, directory):
    for pattern, d in tables.mapfile("x86"):
        if d == directory:
            return pattern
    return None


def check_pattern(tables, what, pattern, directory, samples):
    """A family recognised by perf's own mapfile.csv pattern: the same
    text, and every sample CPUID goes to @directory in perf's order."""
    ok(pattern == mapfile_pattern(tables, directory),
       "%s: CPUID pattern %s is mapfile.csv's for %s" % (what, pattern, directory),
       "mapfile.csv: %s" % mapfile_pattern(tables, directory))
    wrong = [c for c in samples if directory_of(tables, c + "-0") != directory]
    ok(not wrong, "%s: perf's mapfile.csv picks %s for %d sample CPUIDs (%s ... %s)" %
       (what, directory, len(samples), samples[0], samples[-1]), "not %s: %s" % (directory, wrong[:8]))


def pattern_samples(vendor, family, pattern):
    out = []
    for model in range(256):
        cpuid = "%s-%d-%X" % (vendor, family, model)
        if re.fullmatch(pattern.replace("[:xdigit:]", "0-9A-Fa-f"), cpuid):
            out.append(cpuid)
    return out


def metric_groups(directory):
    """The MetricGroup names of every metric in a table directory."""
    out = set()
    if not os.path.isdir(directory):
        return out
    for fname in os.listdir(directory):
        if fname.endswith(".json"):
            with open(os.path.join(directory, fname)) as f:
                for e in json.load(f):
                    if "MetricName" in e:
                        out |= set(filter(None, e.get("MetricGroup", "").split(";")))
    return out


def arm_mapfile(tables):
    rows = []
    with open(tables.path("arm64/mapfile.csv")) as f:
        for line in f:
            parts = line.strip().split(",")
            if line.startswith("0x") and len(parts) >= 3:
                rows.append((parts[0], parts[2]))
    return rows


def check_models(ua):
    tables, _ = tables_of(ua["metrics"][0]["table"])
    if ua["arch"] == "arm64":
        rows = arm_mapfile(tables)
        for midr in ua["midrs"]:
            ok((midr, ua["id"]) in rows, "%s: MIDR %s is arm64/mapfile.csv's for %s" % (ua["id"], midr, ua["id"]),
               "mapfile.csv: %s" % [r for r in rows if r[0] == midr])
        listed = sorted(m for m, d in rows if d == ua["id"])
        ok(listed == sorted(ua["midrs"]), "%s: every MIDR arm64/mapfile.csv lists for it is recognised" % ua["id"],
           "mapfile.csv: %s, topdownd: %s" % (listed, ua["midrs"]))
        return
    if ua["cpuid_pattern"]:
        # Models the pattern matches and no earlier mapfile line takes.
        samples = [c for c in pattern_samples(ua["vendor"], ua["family"], ua["cpuid_pattern"])
                   if directory_of(tables, c + "-0") == ua["id"]]
        ok(len(samples) > 0, "%s: some models of family 0x%x are %s's" % (ua["id"], ua["family"], ua["id"]))
        if samples:
            check_pattern(tables, ua["id"], ua["cpuid_pattern"], ua["id"], samples)
        return
    allowed = {ua["id"]} | set(ua["also"])
    for model in ua["models"]:
        cpuid = "%s-%d-%X" % (ua["vendor"], ua["family"], model)
        got = {directory_of(tables, "%s-%X" % (cpuid, st)) for st in range(16)}
        ok(ua["id"] in got and got <= allowed,
           "%s: model 0x%X: perf's mapfile.csv picks %s" % (ua["id"], model, ", ".join(sorted(map(str, got)))),
           "expected %s" % ", ".join(sorted(allowed)))


def check_events(tables, ua):
    for e in ua["events"]:
        if e["terms"] is None:
            ok(e["sysfs"] is not None and e["table"].startswith("kernel"),
               "%s: %s comes from the kernel's events/%s" % (ua["id"], e["name"], e["sysfs"]))
            continue
        t, rel = tables_of(e["table"])
        directory = table_dir(rel)
        base = e["name"].split(",")[0]
        fname = os.path.basename(rel)
        events = t.events(directory)
        hit = events.get((base, unit_of(ua))) or events.get((base, None))
        ok(hit is not None and hit[0] == fname,
           "%s: %s is in %s" % (ua["id"], base, e["table"]),
           "found in %s" % (hit[0] if hit else "no file"))
        want = event_encoding(t, ua, directory, e["name"])
        got = parse_terms(e["terms"])
        ok(want == got, "%s: %s = %s, as perf's table encodes it" % (ua["id"], e["name"], e["terms"]),
           "table: %s\ntopdownd: %s" % (want, got))
        counter = hit[2] if hit else None
        if ua["arch"] == "arm64":
            # arm64's tables list no counters: the kernel puts CPU_CYCLES
            # on the dedicated cycle counter (armv8pmu_get_event_idx).
            want_counter = "Cycle counter" if base == "CPU_CYCLES" else None
            ok(counter is None and e["counter"] == want_counter,
               "%s: %s counts on %s (the table names no counter)" % (ua["id"], base, e["counter"] or "an event counter"),
               "table: %s, topdownd: %s" % (counter, e["counter"]))
            continue
        ok(counter == e["counter"], "%s: %s counts on %s, as the table's Counter says" %
           (ua["id"], base, e["counter"]), "table: %s" % counter)
        # With SMT off the Skylake family's tables give other counters
        # (CounterHTOff): topdownd holds them where they differ.
        htoff = hit[3] if hit else None
        want_htoff = htoff if htoff and htoff != counter else None
        ok(e["counter_htoff"] == want_htoff,
           "%s: %s counts on %s with SMT off, as the table's CounterHTOff says" %
           (ua["id"], base, e["counter_htoff"] or e["counter"]),
           "table: %s, topdownd: %s" % (htoff, e["counter_htoff"]))


def check_smt(tables, ua):
    """The SMT activity events (issue 43) as perf's tables encode them, and
    perf's metric verbatim in its file."""
    smt = ua["smt"]
    if smt is None:
        return
    check_events(tables, dict(ua, events=smt["events"]))
    t, rel = tables_of(smt["table"])
    path = os.path.join(t.root, rel)
    exprs = {m.get("MetricName"): m.get("MetricExpr") for m in json.load(open(path))}
    ok(exprs.get(smt["metric"]) == smt["expr"],
       "%s: %s is perf's expression in %s" % (ua["id"], smt["metric"], smt["table"]),
       "table: %r\ntopdownd: %r" % (exprs.get(smt["metric"]), smt["expr"]))
    names = [e["name"] for e in smt["events"]]
    want = ["CPU_CLK_UNHALTED.REF_TSC", "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE",
            "CPU_CLK_UNHALTED.REF_DISTRIBUTED" if smt["any"] == "distributed" else "CPU_CLK_UNHALTED.REF_XCLK_ANY"]
    ok(names == want and all(n.split("@")[0] in smt["expr"] or n.endswith("REF_TSC") for n in names[1:]),
       "%s: the SMT split counts %s (the metric's events and fixed counter 2)" % (ua["id"], ", ".join(names)),
       "%s" % names)


def check_smt_mode(ua, dump):
    """perf's SMT mode metrics (issue 44): verbatim, every metric of the
    file's SMT group, the events they read counted in the level-1 group,
    and the collector's values (uarch_dump smtmode) equal to perf's
    expressions on 400 random counts, none where perf has none."""
    sm = ua["smt_mode"]
    if sm is None:
        return
    t, rel = tables_of(sm["table"])
    path = os.path.join(t.root, rel)
    data = json.load(open(path))
    exprs = {m.get("MetricName"): m.get("MetricExpr") for m in data}
    group = sorted(m["MetricName"] for m in data if "SMT" in m.get("MetricGroup", "").split(";"))
    names = [m["perf_name"] for m in sm["metrics"]]
    ok(sorted(names) == group, "%s: the SMT mode metrics are %s's SMT group" % (ua["id"], sm["table"]),
       "group: %s\ntopdownd: %s" % (group, names))
    for m in sm["metrics"]:
        ok(exprs.get(m["perf_name"]) == m["expr"],
           "%s: %s is perf's expression in %s" % (ua["id"], m["perf_name"], sm["table"]),
           "table: %r\ntopdownd: %r" % (exprs.get(m["perf_name"]), m["expr"]))
    metrics = t.metrics(rel)
    read = set()
    for name in names:
        read |= {e for e in metrics.events(name)}
    level1 = {e["name"] for e in ua["events"] if e["level"] == 1}
    ok(read <= level1, "%s: the SMT mode metrics read %s, counted in the level-1 group" %
       (ua["id"], ", ".join(sorted(read))), "not counted: %s" % sorted(read - level1))
    rng = random.Random(44)
    proc = subprocess.Popen([dump, "smtmode"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    worst, errors = 0.0, []
    for case in range(400):
        cycles = 0 if case % 40 == 0 else rng.randint(10**6, 10**10)
        slots = rng.uniform(0, 12) * (cycles or rng.randint(0, 10**6))
        proc.stdin.write(json.dumps({"uarch": ua["id"], "slots": slots, "cycles": cycles}) + "\n")
        proc.stdin.flush()
        got = json.loads(proc.stdout.readline())["values"]
        for name, value in zip(names, got):
            try:
                want = metrics.evaluate(name, {"CPU_SLOT": slots, "CPU_CYCLES": cycles})
            except ZeroDivisionError:
                want = None
            if (want is None) != (value is None):
                errors.append("%s slots %r cycles %r: perf %r, topdownd %r" % (name, slots, cycles, want, value))
            elif want is not None:
                worst = max(worst, abs(want - value) / max(1.0, abs(want)))
    proc.stdin.close()
    proc.wait()
    ok(not errors and worst < 1e-12,
       "%s: the SMT mode metrics on 400 random counts are perf's (largest relative difference %.1e; "
       "none where perf has none)" % (ua["id"], worst), "\n".join(errors[:5]))


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
    enc = event_encoding(None, ua, directory, name)
    # An event of another file of the microarchitecture's (Gracemont's
    # MEM_SCHEDULER_BLOCK.*: perf 6.1's cache.json, not in the upstream copy).
    for other in sorted({table_dir(e["table"]) for e in ua["events"] if e["terms"]}):
        if enc is None:
            enc = event_encoding(None, ua, other, name)
    if enc is None:
        return None
    return counted.get(json.dumps(enc, sort_keys=True))


def metrics_of(m, ua):
    t, rel = tables_of(m["table"])
    return t.metrics(rel, unit_of(ua))


def check_metrics(tables, ua):
    counted = counted_encodings(tables, ua)
    for m in ua["metrics"]:
        metrics = metrics_of(m, ua)
        text = metrics.expr.get(m["perf_name"])
        ok(text == m["expr"], "%s: %s is verbatim %s's" % (ua["id"], m["perf_name"], m["table"]),
           "table:    %s\ntopdownd: %s" % (text, m["expr"]))
        missing = [ev for ev in sorted(metrics.events(m["perf_name"]))
                   if resolve(tables, ua, counted, table_dir(m["table"]), ev) is None]
        ok(not missing, "%s: every event %s reads is counted" % (ua["id"], m["perf_name"]),
           "not counted: %s" % missing)


def check_width(ua):
    if not ua["width"]:
        return
    texts = [m["expr"] for m in ua["metrics"]]
    metrics = metrics_of(ua["metrics"][0], ua)
    for name in ("SLOTS", "tma_info_thread_slots", "tma_info_core_slots", "total_dispatch_slots"):
        if name in metrics.expr:
            texts.append(metrics.expr[name])
    w = ua["width"]
    ok(any(re.search(r"(?<![\w.])%d \* |\* %d\)" % (w, w), t) for t in texts),
       "%s: width %d is the constant perf's expressions multiply by (%s)" % (ua["id"], w, ua["width_source"]),
       "\n".join(texts))


LEVEL1 = {"retiring", "bad_speculation", "frontend_bound", "backend_bound", "smt_contention"}
MODES = {"nosmt": {"#SMT_on": 0, "#core_wide": 1}, "smt": {"#SMT_on": 1, "#core_wide": 1},
         "ebs": {"#SMT_on": 1, "#core_wide": 0}}


def metric_counts(rng, slots):
    """PERF_METRICS as the kernel reports it: metric = slots * byte / 255
    (truncated), the L1 bytes summing to 255, each L2 byte at most its
    parent's."""
    cut = sorted(rng.randint(0, 255) for _ in range(3))
    l1 = [cut[0], cut[1] - cut[0], cut[2] - cut[1], 255 - cut[2]]
    l2 = [rng.randint(0, b) for b in l1]
    names1 = ["topdown-retiring", "topdown-bad-spec", "topdown-fe-bound", "topdown-be-bound"]
    names2 = ["topdown-heavy-ops", "topdown-br-mispredict", "topdown-fetch-lat", "topdown-mem-bound"]
    c = {"TOPDOWN.SLOTS": slots}
    for name, b in zip(names1 + names2, l1 + l2):
        c[name] = slots * b // 255
    return c


def random_counts(rng, ua, level, mode):
    """One interval's counts for @ua: PERF_METRICS registers where it has
    them, every other event at a random rate per cycle or slot; one case
    in five far out of range, so that perf prints negative or >100 %
    values and the documented departures act."""
    big = rng.random() < 0.2
    cycles = rng.randint(10**6, 10**10)
    slots = (ua["width"] or 4) * cycles
    if ua["formulas"] == "zen":
        return zen_counts(rng, ua, cycles, slots, big), slots
    c = metric_counts(rng, slots) if ua["formulas"] in ("glc", "icl", "metrics") else {}
    for e in ua["events"]:
        name = e["name"]
        # The kernel's PERF_METRICS events come from the registers above;
        # another kernel event (Skymont's topdown-retiring) is a count.
        if (e["sysfs"] and ua["formulas"] in ("glc", "icl", "metrics")) or name in c:
            continue
        if "CPU_CLK_UNHALTED.THREAD_ANY" == name:
            c[name] = int(cycles * rng.uniform(1, 2))
        elif "CPU_CLK_UNHALTED" in name and "REF_XCLK" in name:
            c[name] = int(cycles / rng.uniform(10, 40))
        elif "ONE_THREAD_ACTIVE" in name:
            c[name] = int(cycles / rng.uniform(10, 40) * rng.uniform(0, 1))
        elif name.startswith("CPU_CLK_UNHALTED"):
            c[name] = cycles
        elif e["refine"]:
            share = rng.uniform(0, 0.4 if big else 0.03)
            c[name] = int(slots * share / (5 if "RECOVERY" in name or "CLEARS" in name else 1))
        else:
            c[name] = int(slots * rng.uniform(0, 0.9 if big else 0.35))
    if ua["formulas"] in ("grt", "cmt") and not big:
        # The .ALL (.ALL_P) events partition the slots on real hardware.
        alls = [n for n in c if n.startswith("TOPDOWN_") and n.split(".")[1] in ("ALL", "ALL_P")]
        cut = sorted(rng.uniform(0, 1) for _ in range(len(alls) - 1))
        parts = [b - a for a, b in zip([0] + cut, cut + [1])]
        for n, share in zip(alls, parts):
            c[n] = int(slots * share)
    if ua["formulas"] == "skl" and not big:
        # Consistent counts, as on hardware: the core's clocks are the
        # thread's in every SMT mode, the four categories partition the
        # slots, issued at least retired, each child within its parent.
        w = ua["width"]
        c["CPU_CLK_UNHALTED.THREAD_ANY"] = 2 * cycles
        c["CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE"] = c["CPU_CLK_UNHALTED.REF_XCLK"]
        cut = sorted(rng.uniform(0, 1) for _ in range(3))
        fe, ret, bad = cut[0], cut[1] - cut[0], cut[2] - cut[1]
        rc = bad * slots / w * rng.uniform(0, 0.5) if e_refined(ua) else 0
        c["INT_MISC.RECOVERY_CYCLES"] = int(rc)
        c["INT_MISC.RECOVERY_CYCLES_ANY"] = 2 * int(rc)
        c["IDQ_UOPS_NOT_DELIVERED.CORE"] = int(slots * fe)
        c["UOPS_RETIRED.RETIRE_SLOTS"] = rs = int(slots * ret)
        c["UOPS_ISSUED.ANY"] = rs + int(slots * bad - w * int(rc))
        c["UOPS_RETIRED.MACRO_FUSED"] = mf = int(rs * rng.uniform(0, 0.2))
        c["INST_RETIRED.ANY"] = mf + int(rs * rng.uniform(0.5, 1))
        c["IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE"] = int(slots * fe / w * rng.uniform(0, 1))
        c["CYCLE_ACTIVITY.STALLS_TOTAL"] = st = int(cycles * rng.uniform(0.01, 0.8))
        c["CYCLE_ACTIVITY.STALLS_MEM_ANY"] = int(st * rng.uniform(0, 1))
    return c, slots


def e_refined(ua):
    """Whether @ua counts its recovery cycles (model perf)."""
    return any(e["name"].startswith("INT_MISC.RECOVERY_CYCLES") for e in ua["events"])


def arm_counts(rng, ua, cycles, slots, big, extra):
    out = arm_counts_l1(rng, ua, cycles, slots, big, extra)
    if any(e["name"] == "STALL_FRONTEND_FLUSH" for e in ua["events"]):
        # Neoverse V3/N3: flush recovery cycles, a share of the cycles.
        out["STALL_FRONTEND_FLUSH"] = int(cycles * rng.uniform(0, 0.3 if big else 0.05))
    if any(e["name"] == "CPU_SLOT" for e in ua["events"]):
        # NVIDIA Olympus: the slots counted, and the frontend's stall
        # slots less those lost to mispredictions.
        out["CPU_SLOT"] = int(slots)
        out["STALL_SLOT_FRONTEND_WITHOUT_MISPRED"] = int(out["STALL_SLOT_FRONTEND"] *
                                                         rng.uniform(0.5, 1.2 if big else 1.0))
    if any(e["name"] == "GPC_FLUSH" for e in ua["events"]):
        # AmpereOne's TopdownL2: flushes, the retired mispredicted
        # branches among them (more, one case in five; none, one in
        # ten), the frontend's stall cycles, the backend's cache and TLB
        # stall cycles (shares of the cycles; beyond them one in five).
        flush = 0 if rng.random() < 0.1 else int(cycles * rng.uniform(0, 0.05))
        out["GPC_FLUSH"] = flush
        out["BR_MIS_PRED_RETIRED"] = int(flush * rng.uniform(0, 1.3 if big else 1.0))
        out["STALL_FRONTEND"] = int(cycles * rng.uniform(0, 1.2 if big else 0.6))
        out["STALL_BACKEND_TLB"] = int(cycles * rng.uniform(0, 0.4 if big else 0.1))
        out["STALL_BACKEND_CACHE"] = int(cycles * rng.uniform(0, 1.0 if big else 0.5))
    return out


def arm_counts_l1(rng, ua, cycles, slots, big, extra):
    """Neoverse: the frontend and backend stall slots are the stall slots
    (STALL_SLOT, plus @extra a slot per cycle on an N2 before r0p3),
    retired ops at most speculated ones; one case in five not."""
    cut = sorted(rng.uniform(0, 1) for _ in range(2))
    fe, be = cut[0], cut[1] - cut[0]
    spec = rng.uniform(0.2, 1.0)
    ret = spec * rng.uniform(0.3, 1.0)
    brm = rng.uniform(0, 0.01)
    if big:
        fe, be, ret, brm = rng.uniform(0, 1), rng.uniform(0, 1), spec * rng.uniform(0, 1.5), rng.uniform(0, 0.2)
    ss = fe + be + (rng.uniform(-0.2, 0.2) if big else 0)
    return {"CPU_CYCLES": cycles, "STALL_SLOT_FRONTEND": int(slots * fe + extra),
            "STALL_SLOT_BACKEND": int(slots * be), "STALL_SLOT": int(max(slots * ss, 0) + extra),
            "OP_SPEC": int(slots * spec), "OP_RETIRED": int(slots * ret),
            "BR_MIS_PRED": int(cycles * brm)}


def zen_counts(rng, ua, cycles, slots, big):
    """AMD: the no-dispatch reasons and the dispatched ops partition the
    slots on hardware; one case in five they do not."""
    c = {}
    cut = sorted(rng.uniform(0, 1) for _ in range(3))
    fe, be, smt, disp = cut[0], cut[1] - cut[0], cut[2] - cut[1], 1 - cut[2]
    if big:
        fe, be, smt, disp = (rng.uniform(0, 0.9) for _ in range(4))
    ret = disp * rng.uniform(0.5, 1.2 if big else 1.0)
    for e in ua["events"]:
        name = e["name"]
        if name == "ls_not_halted_cyc":
            c[name] = cycles
        elif name == "de_no_dispatch_per_slot.no_ops_from_frontend":
            c[name] = int(slots * fe)
        elif name.startswith("de_no_dispatch_per_slot.no_ops_from_frontend,cmask="):
            c[name] = int(cycles * fe * rng.uniform(0, 1.3 if big else 1.0))
        elif name == "de_no_dispatch_per_slot.backend_stalls":
            c[name] = int(slots * be)
        elif name == "de_no_dispatch_per_slot.smt_contention":
            c[name] = int(slots * smt)
        elif name == "de_src_op_disp.all":
            c[name] = int(slots * disp)
        elif name == "ex_ret_ops":
            c[name] = int(slots * ret)
        elif name == "ex_ret_ucode_ops":
            c[name] = int(slots * ret * rng.uniform(0, 1.2 if big else 0.3))
        elif name == "ex_no_retire.not_complete":
            c[name] = int(cycles * rng.uniform(0, 0.8))
        elif name == "ex_no_retire.load_not_complete":
            c[name] = int(c.get("ex_no_retire.not_complete", cycles) * rng.uniform(0, 1.2 if big else 1.0))
        else:
            c[name] = int(slots * rng.uniform(0, 0.02))
    return c


def check_formulas(tables, ua, dump, reference_ua):
    """topdownd's tma on random counts vs perf's expressions."""
    rng = random.Random(0x70D0 + len(ua["id"]) + len(ua["formulas"]))
    src = reference_ua or ua
    level = ua["max_level"]
    counted = counted_encodings(tables, src)
    modes = list(MODES) if ua["core_scoped"] else ["nosmt"]
    # arm64: #slots and the CPUID are the machine's: each MIDR the table
    # lists, an N2 before and after r0p3, at 5 and 8 slots per cycle.
    arm = ua["arch"] == "arm64"
    cpus = [(int(m, 16) | v, sl) for m in ua["midrs"] for v in (0, 1, 3, 0x100000)
            for sl in (5, 8)] if arm else [(None, None)]
    cases, worst, departed = 400, 0.0, 0
    proc = subprocess.Popen([dump, "eval"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    # --compare-perf's events mode: perf's expressions, evaluated by the
    # daemon on perf's counts, must be perf's values (negative ones and
    # none included) where it has the model's own metrics.
    px = subprocess.Popen([dump, "pxeval"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) if reference_ua is None else None
    px_worst, px_errors = 0.0, []
    errors = []
    for case in range(cases):
        mode = modes[case % len(modes)]
        midr, nslots = cpus[case % len(cpus)]
        if arm:
            cycles = rng.randint(10**6, 10**10)
            fixed = ua_stall_fix(ua, midr)
            counts = arm_counts(rng, ua, cycles, nslots * cycles, rng.random() < 0.2, cycles if fixed else 0)
            slots = nslots * cycles
        else:
            counts, slots = random_counts(rng, src, level, mode)
        refine = reference_ua is None
        if not refine:
            for e in src["events"]:
                if e["refine"]:
                    counts[e["name"]] = 0
        req = {"uarch": ua["id"], "pmu": ua["pmu"], "level": level,
               "refine": refine, "mode": mode, "counts": counts}
        literals = dict(MODES[mode])
        if arm:
            req["slots"], req["midr"] = nslots, "0x%x" % midr
            literals.update({"#slots": nslots, "cpuid": midr})
        proc.stdin.write(json.dumps(req) + "\n")
        proc.stdin.flush()
        got = json.loads(proc.stdout.readline())
        perf = {}
        values_all = {}
        for m in src["metrics"]:
            if level < 2 and m["category"] not in LEVEL1:
                continue    # a level-1 table read against a level-2 one's
            metrics = metrics_of(m, src)
            values = {}
            for ev in metrics.events(m["perf_name"]):
                values[ev] = counts[resolve(tables, src, counted, table_dir(m["table"]), ev)]
            values_all.update(values)
            try:
                perf[m["category"]] = metrics.fraction(m["perf_name"],
                                                       metrics.evaluate(m["perf_name"], values, literals))
            except ZeroDivisionError:
                perf[m["category"]] = None  # perf prints no value
        if px:
            px.stdin.write(json.dumps(req) + "\n")
            px.stdin.flush()
            pgot = json.loads(px.stdout.readline())
            if "error" in pgot:
                px_errors.append(pgot["error"])
            for cat, v in perf.items():
                g = pgot.get("frac", {}).get(cat, "absent")
                if v is None or g is None or g == "absent":
                    if not (v is None and g is None):
                        px_errors.append("%s %s: perf %s, events mode %s" % (mode, cat, v, g))
                    continue
                px_worst = max(px_worst, abs(g - v))
                if abs(g - v) > 1e-9:
                    px_errors.append("%s %s: perf %.12f, events mode %.12f" % (mode, cat, v, g))
        # The departures, on their own: what topdownd must report for
        # perf's value, and the flag it must raise.
        want, flags = {}, {"negative": False, "no_value": False}
        for cat, v in perf.items():
            if v is None:
                flags["no_value"] = True
                want[cat] = None if cat in LEVEL1 else 0.0
            elif v < 0:
                flags["negative"] = True
                want[cat] = 0.0
            else:
                want[cat] = v
        if flags["negative"] or flags["no_value"]:
            departed += 1
        if any(v is None for v in want.values()):
            if not got.get("nodata"):
                errors.append("%s: perf has no level-1 value, topdownd reports one" % mode)
            continue
        if got.get("nodata"):
            errors.append("%s: no data" % mode)
            continue
        for cat, v in want.items():
            d = abs(got["frac"][cat] - v)
            worst = max(worst, d)
            if d > 1e-9:
                errors.append("%s %s: perf %s -> %.12f, topdownd %.12f" %
                              (mode, cat, perf[cat], v, got["frac"][cat]))
        for flag, raised in flags.items():
            if got[flag] != raised:
                errors.append("%s: departure %s %s, perf's values %s" %
                              (mode, flag, "flagged" if got[flag] else "not flagged", perf))
        if arm:
            want_slots = slots
        elif ua["formulas"] == "arch":
            # The four architectural events partition the slots.
            want_slots = sum(counts[n] for n in ("topdown-retiring", "topdown-bad-spec",
                                                 "topdown-fe-bound", "topdown-be-bound"))
        elif "TOPDOWN.SLOTS" in counts:
            want_slots = counts["TOPDOWN.SLOTS"]
        else:
            metrics = metrics_of(src["metrics"][0], src)
            name = [n for n in ("SLOTS", "tma_info_thread_slots", "tma_info_core_slots",
                                "total_dispatch_slots") if n in metrics.expr]
            want_slots = metrics.evaluate(name[0], values_all | counts_named(metrics, name[0], counts, src, tables, counted),
                                          MODES[mode]) if name else \
                src["width"] * counts[[e["name"] for e in src["events"] if e["name"].startswith("CPU_CLK_UNHALTED")][0]]
        if abs(got["slots"] - want_slots) > 1e-6 * max(want_slots, 1):
            errors.append("%s: slots %s, perf %s" % (mode, got["slots"], want_slots))
    proc.stdin.close()
    proc.wait()
    if px:
        px.stdin.close()
        px.wait()
        ok(not px_errors, "%s (%s): --compare-perf's events mode evaluates perf's expressions as perf does "
           "(%d random intervals, largest difference %.2g)" % (ua["id"], ua["pmu"] or ua["arch"], cases, px_worst),
           "\n".join(px_errors[:10]))
    ok(not errors, "%s (%s): %d random intervals%s give perf's values (%d with a documented departure, "
       "each checked), largest difference %.2g" % (ua["id"], ua["pmu"] or ua["arch"], cases,
                                               " in SMT modes " + "/".join(modes) if len(modes) > 1 else
                                               " on %d MIDR and caps/slots pairs" % len(cpus) if arm else "",
                                               departed, worst),
       "\n".join(errors[:10]))


def ua_stall_fix(ua, midr):
    """perf's N2 test: the part of stall_fix_midr, before its version."""
    if not ua["stall_fix_midr"]:
        return False
    fix = int(ua["stall_fix_midr"], 16)
    return midr_same_part(fix, midr) and not midr_matches(fix, midr)


def counts_named(metrics, name, counts, ua, tables, counted):
    out = {}
    for ev in metrics.events(name):
        own = resolve(tables, ua, counted, "", ev) if False else None
        for e in ua["events"]:
            if canonical_event(e["name"]) == ev or e["name"] == ev:
                own = e["name"]
        if own:
            out[ev] = counts[own]
    return out


def alt_spec(path):
    """{node: {"name", "formula", "events", "aliases"}} of an excerpt of
    PerfSpect's alternate formulas: its alt_tma files (MetricName, Events
    with aliases, Formula) or its nofixedtma ones (name, and an expression
    writing each event [NAME]); node is the TMA name ("Fetch_Latency")."""
    with open(path) as f:
        doc = json.load(f)
    spec = {}
    for m in doc["Metrics"]:
        if "expression" in m:
            node = re.sub(r"^(metric_)?TMA_\.*", "", m["name"]).replace("(%)", "")
            events = list(dict.fromkeys(re.findall(r"\[([^\]]+)\]", m["expression"])))
            spec[node] = {"name": m["name"], "formula": m["expression"], "events": events, "aliases": None}
        else:
            spec[m["MetricName"]] = {"name": m["MetricName"], "formula": m["Formula"],
                                     "events": [e["Name"] for e in m["Events"]],
                                     "aliases": {e["Alias"]: e["Name"] for e in m["Events"]}}
    return spec


def node_of(perf_name):
    return re.sub(r"^(metric_)?TMA_\.*", "", perf_name).replace("(%)", "")


def alt_formula(spec, names, counts):
    """An alternate TMA metric's formula (PerfSpect's: its events by alias
    or as [NAME], + - * / and max) evaluated on @counts, as a fraction;
    None where it divides by 0.  @names: PerfSpect's event name -> the
    name @counts has it under (the same encoding)."""
    if spec["aliases"] is None:
        env = {}
        expr = re.sub(r"\[([^\]]+)\]", lambda g: "(%r)" % float(counts[names[g.group(1)]]), spec["formula"])
    else:
        env = {a: float(counts[names[n]]) for a, n in spec["aliases"].items()}
        expr = spec["formula"]
    if not re.fullmatch(r"[a-z0-9.+*/() ,e-]*", expr.replace("max", "")):
        raise ValueError("unexpected token in %r" % expr)
    try:
        return eval(expr, {"__builtins__": {}, "max": max}, env) / 100.0
    except ZeroDivisionError:
        return None


def check_alt(tables, ua, dump, by_id, ref):
    """A guest's table (no PERF_METRICS): Intel's alternate TMA formulas
    (PerfSpect's, reference/perfspect) instead of perf's metrics; its
    events are perf's, encoded as perf's tables encode them."""
    base = by_id.get(ua["alt_of"], {})
    ok((base.get("vendor"), base.get("family"), base.get("models"), base.get("guest_alt")) ==
       (ua["vendor"], ua["family"], ua["models"], ua["id"]),
       "%s: the models of %s, which it stands in for where the kernel shows no PERF_METRICS" %
       (ua["id"], ua["alt_of"]))
    check_events(tables, ua)
    spec = alt_spec(os.path.join(ref, ua["metrics"][0]["table"]))
    counted = counted_encodings(tables, ua)
    directory = table_dir(ua["events"][0]["table"])
    names = {}
    for m in ua["metrics"]:
        s = spec.get(node_of(m["perf_name"]))
        ok(s is not None and s["name"] == m["perf_name"] and s["formula"] == m["expr"] and
           node_of(m["perf_name"]).lower() == m["category"],
           "%s: %s is verbatim %s's %s" % (ua["id"], m["category"], m["table"], m["perf_name"]),
           "spec: %s\ntopdownd: %s" % (s and s["formula"], m["expr"]))
        for e in (s or {}).get("events", []):
            # PerfSpect writes a counter mask as ":c1".
            perf_name = re.sub(r":c(\d+)$", r",cmask=\1", e)
            names[e] = resolve(tables, ua, counted, directory, perf_name)
    missing = sorted(n for n, own in names.items() if own is None)
    ok(not missing and len(ua["metrics"]) == len(spec),
       "%s: every event its %d formulas read is counted, and every level 1 and 2 metric of the file is there" %
       (ua["id"], len(spec)), "not counted: %s" % missing)
    ok(re.search(r"\( %d \)" % ua["width"], spec["Fetch_Latency"]["formula"]) is not None,
       "%s: width %d is the constant the formulas multiply cycles by (%s)" % (ua["id"], ua["width"], ua["width_source"]))
    # topdownd's arithmetic on random counts against the formulas.
    rng = random.Random(0xA17)
    proc = subprocess.Popen([dump, "eval"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    errors, departed, worst, cases = [], 0, 0.0, 400
    for case in range(cases):
        big = rng.random() < 0.2
        slots = rng.randint(10**7, 10**11)
        # Every event at a random rate per slot (one case in five far
        # out of range, so that values below 0 come and are made 0).
        counts = {e["name"]: int(slots * rng.uniform(0, 1.0 if big else 0.4)) for e in ua["events"]}
        counts["TOPDOWN.SLOTS_P"] = slots
        proc.stdin.write(json.dumps({"uarch": ua["id"], "pmu": ua["pmu"], "level": 2, "refine": True,
                                     "mode": "nosmt", "counts": counts}) + "\n")
        proc.stdin.flush()
        got = json.loads(proc.stdout.readline())
        negative = False
        no_value = False
        for m in ua["metrics"]:
            v = alt_formula(spec[node_of(m["perf_name"])], names, counts)
            if v is None:       # a division by 0: topdownd's 0, flagged
                no_value, v = True, 0.0
            elif v < 0:
                negative, v = True, 0.0
            d = abs(got["frac"][m["category"]] - v)
            worst = max(worst, d)
            if d > 1e-9:
                errors.append("%s: formula %.12f, topdownd %.12f" % (m["category"], v, got["frac"][m["category"]]))
        departed += negative or no_value
        if got["no_value"] != no_value:
            errors.append("departure no_value %s" % ("flagged" if got["no_value"] else "not flagged"))
        if got["negative"] != negative:
            errors.append("departure negative %s, the formulas' values %s" %
                          ("flagged" if got["negative"] else "not flagged", "negative" if negative else "not"))
        if got["slots"] != slots:
            errors.append("slots %s, TOPDOWN.SLOTS_P %s" % (got["slots"], slots))
    proc.stdin.close()
    proc.wait()
    ok(not errors, "%s: %d random intervals give the alternate formulas' values (%d with a value below 0 "
       "or none, which topdownd makes 0 and flags), largest difference %.2g" % (ua["id"], cases, departed, worst),
       "\n".join(errors[:10]))


def terms_of(text):
    """{term: value} of "event=0x9c,umask=0x01"; an absent term is 0."""
    out = {}
    for t in filter(None, text.strip().split(",")):
        k, _, v = t.partition("=")
        out[k] = int(v, 0) if v else 1
    return {k: v for k, v in out.items() if v}


# topdownd's name of each architectural event -> the KVM selftests' macro.
ARCH_MACROS = {
    "cpu-cycles": "INTEL_ARCH_CPU_CYCLES",
    "topdown-retiring": "INTEL_ARCH_TOPDOWN_RETIRING",
    "topdown-bad-spec": "INTEL_ARCH_TOPDOWN_BAD_SPEC",
    "topdown-fe-bound": "INTEL_ARCH_TOPDOWN_FE_BOUND",
    "topdown-be-bound": "INTEL_ARCH_TOPDOWN_BE_BOUND",
}


def check_arch(ua, root):
    """Intel's architectural TopDown events: each encoding is the kernel's
    RAW_EVENT() of its macro (reference/kernel/kvm-x86-pmu.h), the four
    topdown ones are CPUID.0AH EBX bits 8-11 there, and the perf driver's
    events/ of Darkmont shows them under these names with these encodings
    (reference/kernel/intel-core-skt-events.c)."""
    with open(os.path.join(root, "kvm-x86-pmu.h")) as f:
        header = f.read()
    raw = {m: {"event": int(e, 16), "umask": int(u, 16)} for m, e, u in
           re.findall(r"#define\s+(INTEL_ARCH_\w+)\s+RAW_EVENT\((0x[0-9a-f]+),\s*(0x[0-9a-f]+)\)", header)}
    enum = re.search(r"enum intel_pmu_architectural_events \{(.*?)\}", header, re.S).group(1)
    index = [n.strip() for n in enum.split(",") if n.strip()]
    with open(os.path.join(root, "intel-core-skt-events.c")) as f:
        driver = f.read()
    attrs = {var: (name, text) for name, var, text in
             re.findall(r"EVENT_ATTR_STR\(([\w-]+),\s*(\w+),\s*\"([^\"]*)\"\)", driver)}
    skt = re.search(r"skt_events_attrs\[\] = \{(.*?)\};", driver, re.S).group(1)
    shown = dict(attrs[v] for v in re.findall(r"EVENT_PTR\((\w+)\)", skt))
    names = set()
    for e in ua["events"]:
        macro = ARCH_MACROS.get(e["name"])
        want = {k: v for k, v in (raw.get(macro) or {}).items() if v}
        ok(macro in raw and e["table"] == "kernel/kvm-x86-pmu.h" and terms_of(e["terms"]) == want,
           "%s: %s is %s, %s in %s" % (ua["id"], e["name"], e["terms"], macro, e["table"]),
           "kernel: %s" % raw.get(macro))
        if e["name"] == "cpu-cycles":
            continue
        names.add(e["name"])
        ok(index.index(macro + "_INDEX") in range(8, 12),
           "%s: %s is CPUID.0AH EBX bit %d" % (ua["id"], macro, index.index(macro + "_INDEX")))
        ok(e["name"] in shown and terms_of(shown[e["name"]]) == terms_of(e["terms"]),
           "%s: Darkmont's perf driver shows events/%s as \"%s\"" % (ua["id"], e["name"], shown.get(e["name"])))
    ok(names == set(shown), "%s: the four level-1 events, and the driver's topdown-* are those four" % ua["id"],
       "topdownd %s, driver %s" % (sorted(names), sorted(shown)))


# Parts perf's mapfile.csv gives a table whose slot width Arm publishes
# under another part number (reference/arm-telemetry/README.md).
UNPUBLISHED = {
    (0x41, 0xd83): "perf 7.2 gives neoverse-v3 to part 0xd83 (V3AE); Arm's V3 specification is part 0xd84",
    (0xc0, 0xac3): "Ampere publishes no telemetry specification (slots per cycle) for AmpereOne here",
    (0xc0, 0xac4): "Ampere publishes no telemetry specification (slots per cycle) for AmpereOne M here",
}


def check_arm_slots(dump, uarches, root):
    """arm64: each published slot width (for a guest whose caps/slots is
    0) against the excerpt of Arm's telemetry specification it cites
    (reference/arm-telemetry), and every part whose formulas read #slots
    has one."""
    table = json.loads(subprocess.check_output([dump, "arm_slots"]))
    for e in table:
        path = os.path.join(root, os.path.basename(e["source"]))
        try:
            with open(path) as f:
                spec = json.load(f)
            pc = spec["product_configuration"]
            ok(spec["excerpt_of"]["path"] == e["source"].split(" ", 1)[1] and
               int(pc["implementer"], 16) == e["implementer"] and int(pc["part_num"], 16) == e["part"] and
               pc["num_slots"] == e["slots"],
               "%s: %d slots per cycle, part 0x%x of implementer 0x%x, as %s says (num_slots %s, part_num %s)"
               % (e["name"], e["slots"], e["part"], e["implementer"], e["source"], pc["num_slots"], pc["part_num"]))
        except (OSError, KeyError, ValueError) as err:
            ok(False, "%s: %s cannot be checked: %s" % (e["name"], path, err))
    parts = {(e["implementer"], e["part"]) for e in table}
    for ua in uarches:
        if not ua["slots_from_caps"]:
            continue
        for midr in ua["midrs"]:
            m = int(midr, 16)
            key = ((m >> 24) & 0xff, (m >> 4) & 0xfff)
            if key in UNPUBLISHED:
                # Asserted on its own: the guest is refused (10-probe.t).
                ok(key not in parts, "%s: MIDR %s has no published slot width: %s" % (ua["id"], midr, UNPUBLISHED[key]))
                continue
            ok(key in parts,
               "%s: MIDR %s has a published slot width (its guests' caps/slots is 0)" % (ua["id"], midr))


def check_own_topdown(w, fixtures, kernel):
    """A core type perf has no TopDown for (Arrow Lake-H's cpu_lowpower),
    which topdownd leaves uncounted: its kernel's topdown-* events are its
    own encodings (the third string of each arl_h_hybrid_events_attrs
    attribute, reference/kernel/intel-core-arlh-events.c, as the fixture
    arlh-hybrid shows them), not the architectural ones topdownd counts
    elsewhere (intel_arch)."""
    names = ["topdown-bad-spec", "topdown-be-bound", "topdown-fe-bound", "topdown-retiring"]
    d = os.path.join(fixtures, "arlh-hybrid", "bus/event_source/devices", w["pmu"], "events")
    shown = {n: open(os.path.join(d, n)).read().strip() for n in names if os.path.exists(os.path.join(d, n))}
    with open(os.path.join(kernel, "intel-core-arlh-events.c")) as f:
        tiny = {name: text.split(";")[2] for name, text in
                re.findall(r"EVENT_ATTR_STR_HYBRID\(([\w-]+),\s*\w+,\s*\"([^\"]*)\"", f.read())}
    arch = {"topdown-retiring": "event=0xc2,umask=0x02", "topdown-bad-spec": "event=0x73,umask=0x00",
            "topdown-fe-bound": "event=0x9c,umask=0x01", "topdown-be-bound": "event=0xa4,umask=0x02"}
    ok(len(shown) == 4 and len(tiny) == 4 and all(terms_of(shown[n]) == terms_of(tiny[n]) for n in names) and
       any(terms_of(shown[n]) != terms_of(arch[n]) for n in names),
       "%s: the fixture's %s topdown-* are the driver's own encodings for it, not the architectural events "
       "(so not counted)" % (w["name"], w["pmu"]), "fixture %s, kernel %s" % (shown, tiny))


# The fixture standing for each hybrid model whose E-core entry counts
# kernel events (tests/fixtures/regenerate).
KERNEL_EVENT_FIXTURES = {"lunarlake": "lnl-hybrid", "arrowlake": "arl-hybrid"}


def check_kernel_events(ua, kernel, fixtures):
    """An E-core entry's events counted through the kernel's events/
    (Skymont's TOPDOWN_RETIRING.ALL as topdown-retiring): the perf driver
    gives cpu_atom that attribute with an encoding (the first of its hybrid
    strings, reference/kernel/intel-core-lnl-events.c) whose code the
    driver's Skymont constraints place on the fixed counter perf's table
    names for the event (intel-fixed-constraints.c, the comment naming the
    event), and the fixture shows that encoding."""
    evs = [e for e in ua["events"] if e["sysfs"] and ua["formulas"] not in ("glc", "icl", "metrics")]
    if not evs:
        return
    with open(os.path.join(kernel, "intel-core-lnl-events.c")) as f:
        driver = f.read()
    listed = set(re.findall(r"EVENT_PTR\((\w+)\)", driver.split("lnl_hybrid_events_attrs[]")[1]))
    attrs = {name: text.split(";")[0] for name, var, text in
             re.findall(r"EVENT_ATTR_STR_HYBRID\(([\w-]+),\s*(\w+),\s*\"([^\"]*)\"", driver) if var in listed}
    with open(os.path.join(kernel, "intel-fixed-constraints.c")) as f:
        skt = f.read().split("intel_skt_event_constraints")[1]
    fixed = {int(code, 16): (int(idx), comment.strip()) for code, idx, comment in
             re.findall(r"FIXED_EVENT_CONSTRAINT\((0x[0-9a-f]+),\s*(\d+)\),\s*/\*([^*]*)\*/", skt)}
    fx = KERNEL_EVENT_FIXTURES.get(ua["id"])
    for e in evs:
        enc = terms_of(attrs[e["sysfs"]]) if e["sysfs"] in attrs else None
        code = enc.get("event", 0) | enc.get("umask", 0) << 8 if enc else None
        want = fixed.get(code)
        ok(enc is not None and want is not None and "Fixed counter %d" % want[0] == e["counter"] and
           want[1] == e["name"],
           "%s: %s is the kernel's cpu_atom events/%s (%s), which Skymont's constraints put on %s" %
           (ua["id"], e["name"], e["sysfs"], attrs.get(e["sysfs"]), e["counter"]),
           "kernel: %s, constraint %s" % (enc, want))
        path = os.path.join(fixtures, fx or "", "bus/event_source/devices/cpu_atom/events", e["sysfs"])
        got = open(path).read().strip() if fx and os.path.exists(path) else None
        ok(got is not None and terms_of(got) == enc,
           "%s: fixture %s shows cpu_atom events/%s as the kernel writes it" % (ua["id"], fx, e["sysfs"]),
           "fixture: %s" % got)


def main():
    dump, root = sys.argv[1], sys.argv[2]
    ref = os.path.dirname(os.path.abspath(root))
    ROOTS["perf-tables"] = Tables(os.path.join(ref, "perf-tables"))
    ROOTS["perf-tables-6.1"] = Tables(os.path.join(ref, "perf-tables-6.1"))
    ROOTS["perf-tables-7.2"] = Tables(os.path.join(ref, "perf-tables-7.2"))
    tables = None
    uarches = json.loads(subprocess.check_output([dump, "tables"]))
    by_id = {u["id"]: u for u in uarches if u["formulas"] in ("glc", "icl", "metrics")}
    every = {u["id"]: u for u in uarches}
    for ua in uarches:
        if ua["alt_of"]:
            check_alt(ROOTS["perf-tables"], ua, dump, every, ref)
        elif ua["metrics"]:
            check_models(ua)
            check_events(tables, ua)
            check_kernel_events(ua, os.path.join(ref, "kernel"),
                                os.path.join(os.path.dirname(ref), "tests", "fixtures"))
            check_smt(tables, ua)
            check_smt_mode(ua, dump)
            check_metrics(tables, ua)
            check_width(ua)
            check_formulas(tables, ua, dump, None)
        else:
            # PERF_METRICS alone, and the architectural TopDown events:
            # Sapphire Rapids' formulas without refinement.
            if ua["formulas"] == "arch":
                check_arch(ua, os.path.join(ref, "kernel"))
            check_formulas(tables, ua, dump, by_id["sapphirerapids"])
    for w in json.loads(subprocess.check_output([dump, "without"])):
        tables = ROOTS["perf-tables"]
        if w["arch"] == "arm64":
            rows = arm_mapfile(tables)
            ok((w["cpuid_pattern"], w["table"]) in rows,
               "%s (no TopDown): MIDR %s is arm64/mapfile.csv's for %s" % (w["name"], w["cpuid_pattern"], w["table"]))
            groups = metric_groups(os.path.join(tables.root, "arm64", w["table"]))
            ok(groups and not groups & {"TopdownL1", "TopdownL2"},
               "%s: perf's %s metrics (%s) have no TopdownL1" % (w["name"], w["table"], ", ".join(sorted(groups))))
            continue
        family = int(w["cpuid_pattern"].split("-")[1])
        samples = [c for c in pattern_samples(w["vendor"], family, w["cpuid_pattern"])
                   if directory_of(tables, c + "-0") == w["table"]]
        check_pattern(tables, w["name"] + " (no TopDown)", w["cpuid_pattern"], w["table"], samples)
        groups = metric_groups(os.path.join(ROOTS["perf-tables-6.1"].root, "x86", w["table"]))
        ok(groups and not groups & {"PipelineL1", "PipelineL2", "TopdownL1", "TopdownL2"},
           "%s: perf 6.1's %s tables have metrics (%s) but no PipelineL1/TopdownL1" %
           (w["name"], w["table"], ", ".join(sorted(groups))))
    # Models perf 7.2 knows with events and no TopDown metrics: perf's own
    # pattern, and no metrics file in the directory.
    t72 = ROOTS["perf-tables-7.2"]
    for w in json.loads(subprocess.check_output([dump, "no_reference"])):
        family = int(w["cpuid_pattern"].split("-")[1])
        if w["table"] is None:
            # Not in perf's tables at all: no mapfile line takes any model
            # of the pattern, nor any of its family.
            samples = pattern_samples(w["vendor"], family, w["cpuid_pattern"])
            taken = [c for c in pattern_samples(w["vendor"], family, "%s-%d-[[:xdigit:]]+" % (w["vendor"], family))
                     if directory_of(t72, c + "-0") is not None]
            ok(samples and not taken,
               "%s (no perf reference): perf 7.2's mapfile.csv lists no model of family %d (%s: %d models)" %
               (w["name"], family, w["cpuid_pattern"], len(samples)), "taken: %s" % taken[:8])
            continue
        samples = [c for c in pattern_samples(w["vendor"], family, w["cpuid_pattern"])
                   if directory_of(t72, c + "-0") == w["table"]]
        check_pattern(t72, w["name"] + " (no perf reference)", w["cpuid_pattern"], w["table"], samples)
        d = os.path.join(t72.root, "x86", w["table"])
        if w["pmu"]:
            # One core type of a model perf has tables for: events of that
            # Unit, and no TopDown metric of it.
            unit_events = sum(1 for f in sorted(os.listdir(d)) if f.endswith(".json") and "metric" not in f
                              for e in json.load(open(os.path.join(d, f))) if e.get("Unit") == w["pmu"])
            unit_groups = set()
            for f in os.listdir(d):
                if f.endswith("metrics.json"):
                    for m in json.load(open(os.path.join(d, f))):
                        if m.get("Unit") == w["pmu"]:
                            unit_groups |= set(m.get("MetricGroup", "").split(";"))
            ok(unit_events and not unit_groups & {"TopdownL1", "TopdownL2"},
               "%s: perf 7.2's x86/%s has %d events of Unit %s and no TopDown metric of it" %
               (w["name"], w["table"], unit_events, w["pmu"]), "groups: %s" % sorted(unit_groups))
            check_own_topdown(w, os.path.join(os.path.dirname(ref), "tests", "fixtures"), os.path.join(ref, "kernel"))
            continue
        files = sorted(os.listdir(d)) if os.path.isdir(d) else []
        groups = metric_groups(d) if files else set()
        ok(files and not groups & {"TopdownL1", "TopdownL2", "PipelineL1"},
           "%s: perf 7.2's x86/%s has events (%d files) and no TopDown metric group (its metrics' groups: %s)"
           % (w["name"], w["table"], len(files), ", ".join(sorted(g for g in groups if g)) or "none"))
    check_arm_slots(dump, uarches, os.path.join(ref, "arm-telemetry"))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
