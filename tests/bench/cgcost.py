# SPDX-License-Identifier: MIT
"""The collection's cost in instructions, under callgrind: shared by
`make bench` (tests/bench/run) and the cost gate of `make check`
(tests/integration/29-cost.t, through `python3 -m cgcost`).

Instruction counts do not depend on the machine's speed or load: the
daemon is run as `topdownd --watch --count N` twice (N = 4 and 12), each
collecting exactly N intervals, and the difference of the two runs'
instructions over the difference of their interval counts is one
steady-state interval (start-up, the first publication and exit cancel).
Every instruction under the per-interval roots counts, the libc they call
included, except call chains through the fake PMU (its read() stands for
the kernel, which valgrind never counts on hardware)."""

import json
import os
import re
import subprocess
import sys

# Functions of the per-interval path.  Whether a history sample is due is
# asked by the collection; the sample itself is taken on the history
# worker, like the sums a rendering reader does.
ROOTS = ["collector_collect", "collector_fill", "snapring_begin", "snapring_publish",
         "history_due"]
DEPTH = 24


def parse_callgrind(path):
    """Self cost of every context (function'caller'caller...), its object,
    and the number of calls to each function (by its own name)."""
    names, objs = {}, {}
    cost, ctx_obj, calls = {}, {}, {}
    cur_ob = cur_fn = None
    pending_call = None  # the callee of the last calls= line
    cfn = None

    def name_of(table, spec):
        m = re.match(r"\((\d+)\)(?: (.*))?$", spec)
        if not m:
            return spec
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table[m.group(1)]

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                if pending_call is not None:
                    pending_call = None  # the inclusive cost of the call: not self
                    continue
                if len(parts) > 1 and cur_fn is not None:
                    cost[cur_fn] = cost.get(cur_fn, 0) + int(parts[1])
                continue
            key, _, val = line.partition("=")
            if key == "ob":
                cur_ob = name_of(objs, val)
            elif key == "fn":
                cur_fn = name_of(names, val)
                ctx_obj.setdefault(cur_fn, cur_ob)
            elif key == "cob":
                name_of(objs, val)
            elif key == "cfn":
                cfn = name_of(names, val)
            elif key == "calls":
                n = int(val.split()[0])
                base = cfn.split("'")[0]
                calls[base] = calls.get(base, 0) + n
                pending_call = cfn
    return cost, ctx_obj, calls


def attribute(path):
    """Instructions of the per-interval path, split into the daemon's share
    and the fake PMU's, plus the call counts and a per-function breakdown."""
    cost, ctx_obj, calls = parse_callgrind(path)
    fake = {ctx.split("'")[0] for ctx, ob in ctx_obj.items()
            if ob and os.path.basename(ob).startswith("libfakepmu")}
    own = excluded = thread = 0
    by_fn = {}
    for ctx, ir in cost.items():
        chain = ctx.split("'")
        if any(fn in fake for fn in chain):
            if any(r in chain for r in ROOTS):
                excluded += ir
            continue
        thread += ir
        if not any(r in chain for r in ROOTS):
            continue
        own += ir
        by_fn[chain[0]] = by_fn.get(chain[0], 0) + ir
    return {"own": own, "fake": excluded, "thread": thread,
            "calls": calls.get("collector_collect", 0),
            "fills": calls.get("collector_fill", 0), "by_fn": by_fn}


def cpus_of(fixture):
    text = open(os.path.join(fixture, "devices", "system", "cpu", "possible")).read().strip()
    n = 0
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def per_interval(a, b, n):
    """Per CPU per interval from two attributed runs of different lengths."""
    dn = b["calls"] - a["calls"]
    if dn <= 0:
        raise RuntimeError("the longer run collected no more intervals (%d, %d)" % (a["calls"], b["calls"]))
    by_fn = {fn: (b["by_fn"].get(fn, 0) - a["by_fn"].get(fn, 0)) / dn / n
             for fn in set(a["by_fn"]) | set(b["by_fn"])}
    return {"per_interval": (b["own"] - a["own"]) / dn, "per_cpu": (b["own"] - a["own"]) / dn / n,
            "fake_per_cpu": (b["fake"] - a["fake"]) / dn / n,
            "thread_per_cpu": (b["thread"] - a["thread"]) / dn / n,
            "naive_per_cpu": b["own"] / b["calls"] / n,
            "intervals": (a["calls"], b["calls"]), "by_fn": by_fn}


def parse_interval(s):
    m = re.fullmatch(r"([\d.]+)(ms|s)", s)
    if not m:
        raise ValueError("interval %r: expected NUMBERms or NUMBERs" % s)
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)


def watch_runs(topdownd, fakepmu, fixture, scenario, out_prefix, interval="50ms", counts=(4, 12),
               config="/dev/null", tables_fallback=None, timeout=900, tables=None):
    """Runs `topdownd --watch --count N` under callgrind for each N and
    returns the cost of one interval."""
    n = cpus_of(fixture)
    # The fake PMU's clock paced by reads, an interval per read: on the
    # wall clock, the minutes a 1024-CPU start-up takes under valgrind
    # would each be simulated rotation by rotation (40 ms slices of every
    # CPU), longer the slower it runs.
    env = dict(os.environ, FAKEPMU_SYSFS=fixture, FAKEPMU_SCENARIO=scenario, LD_PRELOAD=fakepmu,
               FAKEPMU_CLOCK_STEP="%g" % parse_interval(interval))
    env.pop("FAKEPMU_CLOCK_FILE", None)
    if tables_fallback:
        env["FAKEPMU_TABLES_FALLBACK"] = tables_fallback
    if tables:
        env["FAKEPMU_TABLES"] = tables
    runs = []
    for count in counts:
        out = "%s-%d.out" % (out_prefix, count)
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
               "--separate-threads=yes", "--separate-callers=%d" % DEPTH,
               "--dump-instr=no", "--compress-strings=yes",
               topdownd, "-c", config, "--sysfs-root", fixture, "--watch", "--count", str(count),
               "-i", interval]
        with open(out + ".log", "w") as log:
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log, check=True,
                           timeout=timeout)
        a = attribute(out + "-01")
        if a["calls"] != count:
            raise RuntimeError("%s collected %d intervals, not %d" % (out, a["calls"], count))
        runs.append(a)
    res = per_interval(runs[0], runs[1], n)
    res["cpus"] = n
    return res


def main(argv):
    import argparse
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--topdownd", required=True)
    p.add_argument("--fakepmu", required=True)
    p.add_argument("--fixture", required=True)
    p.add_argument("--scenario", required=True)
    p.add_argument("--out", required=True, help="prefix of the callgrind files")
    p.add_argument("--interval", default="50ms")
    p.add_argument("--config", default="/dev/null")
    p.add_argument("--tables-fallback")
    p.add_argument("--counts", default="4,12",
                   help="the two runs' intervals (beyond a warm-up: the nodes below level 2 "
                   "start once their groups took their turns)")
    a = p.parse_args(argv)
    res = watch_runs(a.topdownd, a.fakepmu, a.fixture, a.scenario, a.out, a.interval,
                     counts=tuple(int(x) for x in a.counts.split(",")),
                     config=a.config, tables_fallback=a.tables_fallback)
    top = sorted(res["by_fn"].items(), key=lambda kv: -kv[1])[:int(os.environ.get("CGCOST_TOP", "10"))]
    res["top"] = [[fn, round(v, 1)] for fn, v in top]
    del res["by_fn"]
    json.dump(res, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
