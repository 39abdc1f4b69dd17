# SPDX-License-Identifier: MIT
"""topdownd's compiler of perf's metric expressions (daemon/hw/expr.c,
through tests/tools/expr_eval) against the independent evaluator
(perfexpr.py), over every metric of every table in reference/perf-tables.

    python3 tests/oracle/expr_check.py TOOL_DIR PERF_TABLES [SAMPLES]

For each metrics file: every metric must compile (or be one the oracle
cannot read either, and then both say so); on SAMPLES random intervals
(event counts between 1e3 and 1e9, the literals perf knows, #SMT_on on and
off) both must give the same value within 1e-9, or both none.  (The two
could read "A if C else B" differently: perf evaluates both branches, bison
reducing each before the "if", so a division by zero in the branch not
taken leaves the whole metric without a value, while the oracle evaluates
the branch taken only; no table has such a metric on these samples, and
one would fail here to be looked at.)  Metrics the grammar refuses (three
uncore ones of Cascade Lake with "A if B if C else D else E") are refused
by both.  Prints a line per file and the totals; exit 1 on a difference."""
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfexpr  # noqa: E402

LITERALS = [
    {"#SMT_on": 1, "#smt_on": 1, "#slots": 6, "#num_packages": 2, "#num_dies": 2, "#num_cores": 32,
     "#num_cpus_online": 64, "#core_wide": 1, "#SYSTEM_TSC_FREQ": 2.1e9, "#has_pmem": 1},
    {"#SMT_on": 0, "#smt_on": 0, "#slots": 4, "#num_packages": 1, "#num_dies": 1, "#num_cores": 8,
     "#num_cpus_online": 8, "#core_wide": 0, "#SYSTEM_TSC_FREQ": 3.0e9, "#has_pmem": 0},
]


def canonical(raw, arm64):
    try:
        ev = perfexpr.canonical_event(raw)
    except ValueError:
        return raw  # an uncore PMU's event (imc@...@): metrics the oracle does not read
    return ev.upper() if arm64 else ev


def oracle(metrics, name, counts, literals):
    try:
        return metrics.evaluate(name, counts, literals)
    except ZeroDivisionError:
        return None


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-300


def check_file(tool, path, samples_n, rng):
    arm64 = "/arm64/" in path
    metrics = perfexpr.Metrics(path)
    exprs = dict(metrics.expr)
    if not exprs:
        return 0, 0, 0, [], []
    with tempfile.TemporaryDirectory() as tmp:
        mpath = os.path.join(tmp, "metrics.json")
        json.dump(exprs, open(mpath, "w"))
        ids = json.loads(subprocess.run([tool, "ids", mpath], check=True, capture_output=True,
                                        text=True).stdout)
        samples, truth = [], []
        names = {}
        for name, info in ids.items():
            for raw in info.get("events", []):
                names.setdefault(raw, canonical(raw, arm64))
        for i in range(samples_n):
            values = {}
            for canon in sorted(set(names.values())):
                values[canon] = float(round(10 ** rng.uniform(3, 9)))
            lits = dict(LITERALS[i % 2])
            samples.append({"events": {raw: values[c] for raw, c in names.items()}, "literals": lits})
            truth.append((values, lits))
        spath = os.path.join(tmp, "samples.json")
        json.dump(samples, open(spath, "w"))
        got = json.loads(subprocess.run([tool, "eval", mpath, spath], check=True, capture_output=True,
                                        text=True).stdout)
    compared = skipped = 0
    bad, refused = [], []
    for name in sorted(exprs):
        info = ids[name]
        try:
            metrics.tree(name)
            readable = True
        except perfexpr.ExprError:
            readable = False
        if "error" in info:
            # Both refuse it, or the oracle reads what perf's grammar does not.
            if readable:
                bad.append("%s: topdownd does not compile what the oracle reads: %s" % (name, info["error"]))
            else:
                refused.append("%s (%s)" % (name, info["error"]))
            continue
        if info.get("functions"):
            skipped += 1  # has_event, source_count: the oracle has none
            continue
        for i, (values, lits) in enumerate(truth):
            try:
                want = oracle(metrics, name, values, lits)
            except perfexpr.ExprError:
                skipped += 1
                break
            value = got[name][i]
            if isinstance(value, str):
                bad.append("%s: %s" % (name, value))
                break
            compared += 1
            if close(value, want):
                continue
            bad.append("%s (sample %d): topdownd %r, oracle %r" % (name, i, value, want))
            break
    return len(exprs), compared, skipped, bad, refused


def main():
    tool = os.path.join(sys.argv[1], "expr_eval")
    root = sys.argv[2]
    samples_n = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    rng = random.Random(20261129)
    files = sorted(f for f in glob.glob(os.path.join(root, "x86", "*", "*.json")) +
                   glob.glob(os.path.join(root, "arm64", "*", "*", "*.json"))
                   if '"MetricExpr"' in open(f).read())
    failed = False
    totals = [0, 0, 0]
    for path in files:
        n, compared, skipped, bad, refused = check_file(tool, path, samples_n, rng)
        print("%s: %d metrics, %d values equal, %d metrics the oracle cannot read (functions it lacks, "
              "uncore events), %d refused by both" % (os.path.relpath(path, root), n, compared - len(bad),
                                                   skipped, len(refused)))
        for r in refused[:3]:
            print("  refused by both: " + r)
        for b in bad[:10]:
            print("  DIFFERENT: " + b)
        totals[0] += n
        totals[1] += compared - len(bad)
        totals[2] += len(bad)
        failed |= bool(bad)
    print("total: %d metrics in %d files, %d values equal, %d different" % (totals[0], len(files), totals[1],
                                                                           totals[2]))
    sys.exit(1 if failed or not files else 0)


if __name__ == "__main__":
    main()
