# SPDX-License-Identifier: MIT
"""The SMT split (issue 43) against the scenario's truth and against perf.

topdownd runs `--watch --json` on a fixture under its fake PMU, on a
read-paced clock of one second of the scenario per interval (100 ms of
wall time: the read-paced clock moves only with reads); the scenario states each
core's thread activity over time ("smt": both threads, the first alone,
the second alone; neither is the rest).  Checked, per core, package and
host, interval by interval (the phases need not start on an interval):

  truth  each state's share of the interval (topdownd's "last") and its
         seconds since start ("seconds_total") against the scenario's,
         integrated over the interval's seconds (McCalpin's split);
  perf   perf's own value of its smt_2t_utilization metric (perf stat -M,
         --per-core, --per-socket and the whole system, 6 decimals) for
         the same interval against topdownd's both / (first + second +
         both), perf under the same fake PMU on the same clock.

Prints one line per comparison, "truth core 0.000001 120" (the largest
difference in shares, the values compared), and exits 1 when any is above
--tol.  The oracle is the scenario and perf: nothing here reads topdownd's
tables."""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity import FIELD, cpulist  # noqa: E402  (perf's -j fields, cpulists: parity's)

STATES = ["neither", "first_only", "second_only", "both"]


def topology(fixture):
    """{cpu: (package, core_id, first thread of its core)}"""
    base = os.path.join(fixture, "devices", "system", "cpu")
    out = {}
    for cpu in cpulist(open(os.path.join(base, "possible")).read()):
        t = os.path.join(base, "cpu%d" % cpu, "topology")
        if not os.path.isdir(t):
            continue
        pkg = int(open(os.path.join(t, "physical_package_id")).read())
        core = int(open(os.path.join(t, "core_id")).read())
        first = cpulist(open(os.path.join(t, "thread_siblings_list")).read())[0]
        out[cpu] = (pkg, core, first)
    return out


def timeline(scen, first_cpu):
    """The phases [(t0, t1, shares)] of the core whose first thread is
    @first_cpu, as the scenario states them (the key holding it)."""
    smt = scen["smt"]
    phases = None
    for key, v in smt.items():
        if key != "default" and first_cpu in cpulist(key):
            phases = v
    if phases is None:
        phases = smt.get("default")
    if phases is None:
        return None
    out, t = [], 0.0
    for i, ph in enumerate(phases):
        end = t + ph["seconds"] if i < len(phases) - 1 else float("inf")
        both, first, second = ph.get("both", 0), ph.get("first", 0), ph.get("second", 0)
        out.append((t, end, [1 - both - first - second, first, second, both]))
        t = end
    return out


def truth(line, t0, t1):
    """Seconds in each state over [t0, t1]."""
    secs = [0.0] * 4
    for a, b, shares in line:
        lo, hi = max(a, t0), min(b, t1)
        if hi > lo:
            for s in range(4):
                secs[s] += (hi - lo) * shares[s]
    return secs


def env_for(a, step):
    env = dict(os.environ, FAKEPMU_SYSFS=a.fixture, FAKEPMU_SCENARIO=a.scenario, LD_PRELOAD=a.fakepmu,
               FAKEPMU_CLOCK_STEP=str(step))
    env.pop("FAKEPMU_CLOCK_FILE", None)
    if a.tables:
        env["FAKEPMU_TABLES"] = a.tables
    return env


def topdownd_docs(a):
    cmd = [a.topdownd, "-c", a.config, "--sysfs-root", a.fixture, "--watch", "--json", "--count",
           str(a.intervals + 1), "-i", "100ms"]
    out = subprocess.run(cmd, env=env_for(a, 1), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise SystemExit("topdownd: exit %d: %s" % (out.returncode, out.stderr[-2000:]))
    return [json.loads(l) for l in out.stdout.splitlines() if l.strip()]




def perf_values(a, aggr):
    """{interval index: {entity: perf's metric value}}; entity "S0-D0-C1",
    "S0" or "host"."""
    flags = {"core": ["--per-core"], "package": ["--per-socket"], "host": []}[aggr]
    seconds = (a.intervals + 1.5) / 10
    cmd = [a.sysns, a.fixture, "perf", "stat", "-j", "-a", "-I", "100"] + flags + \
        ["-M", a.metric, "--", "sleep", "%.2f" % seconds]
    env = env_for(a, 1)
    env["PERF_CPUID"] = a.cpuid
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise SystemExit("perf: exit %d: %s" % (out.returncode, out.stdout[-2000:]))
    vals, times = {}, []
    for line in out.stdout.splitlines():
        if not line.startswith('{"interval"'):
            continue
        f = dict((k, v.strip('"')) for k, v in FIELD.findall(line))
        if f.get("metric-unit") != a.metric:
            continue
        t = float(f["interval"])
        if t not in times:
            times.append(t)
        ent = f.get("core") or f.get("socket") or "host"
        vals.setdefault(times.index(t), {})[ent] = float(f["metric-value"])
    return vals


def two_t(secs):
    busy = secs[1] + secs[2] + secs[3]
    return secs[3] / busy if busy > 0 else 0.0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--topdownd", required=True)
    p.add_argument("--fakepmu", required=True)
    p.add_argument("--fixture", required=True)
    p.add_argument("--scenario", required=True)
    p.add_argument("--config", default="/dev/null")
    p.add_argument("--intervals", type=int, default=8)
    p.add_argument("--tol", type=float, default=0.005)
    p.add_argument("--sysns")
    p.add_argument("--tables", help="perf's tables for the fake PMU (perf 6.1's for perf 6.1)")
    p.add_argument("--cpuid")
    p.add_argument("--metric", help="perf's name of smt_2t_utilization; none: no perf")
    a = p.parse_args(argv)

    scen = json.load(open(a.scenario))
    topo = topology(a.fixture)
    docs = topdownd_docs(a)
    # Core (package, core id) -> its first thread's timeline.
    lines = {}
    for cpu, (pkg, core, first) in topo.items():
        if first == cpu and sum(1 for v in topo.values() if v[2] == first) == 2:
            tl = timeline(scen, first)
            if tl:
                lines[(pkg, core)] = tl
    worst = {"core": [0.0, 0], "package": [0.0, 0], "host": [0.0, 0], "seconds": [0.0, 0]}
    failed = False
    ours = {}  # interval k -> {entity: 2t}
    # Line k (from 1) covers [k, k + 1] of the scenario on the read-paced
    # clock; --watch's first line is its first read, which has no interval
    # (the TopDown figures' neither).
    for k, doc in enumerate(docs[1:], start=1):
        t0, t1 = k, k + 1
        doms = {}
        for c in doc.get("cores", []):
            key = (c["package"], c["core"])
            if key not in lines:
                continue
            want = truth(lines[key], t0, t1)
            smt = c.get("smt")
            if not smt or smt.get("last") is None:
                print("missing core %s interval %d" % (key, k))
                failed = True
                continue
            for s in range(4):
                d = abs(smt["last"][STATES[s]] - want[s])
                worst["core"][0] = max(worst["core"][0], d)
                worst["core"][1] += 1
            # Since start: the intervals from the second on.
            since = [sum(truth(lines[key], j, j + 1)[s] for j in range(1, k + 1)) for s in range(4)]
            for s in range(4):
                d = abs(smt["seconds_total"][STATES[s]] - since[s]) / k
                worst["seconds"][0] = max(worst["seconds"][0], d)
                worst["seconds"][1] += 1
            for dom in (c["package"], "host"):
                acc = doms.setdefault(dom, [0.0] * 4)
                for s in range(4):
                    acc[s] += want[s]
            ours.setdefault(k, {})["S%d-D0-C%d" % key] = two_t([smt["last"][x] for x in STATES])
        for dom, want in doms.items():
            row = doc["host"] if dom == "host" else next(x for x in doc["packages"] if x["package"] == dom)
            smt = row.get("smt")
            kind = "host" if dom == "host" else "package"
            if not smt or smt.get("last") is None:
                print("missing %s %s interval %d" % (kind, dom, k))
                failed = True
                continue
            total = sum(want)
            for s in range(4):
                d = abs(smt["last"][STATES[s]] - want[s] / total)
                worst[kind][0] = max(worst[kind][0], d)
                worst[kind][1] += 1
            ours.setdefault(k, {})["host" if dom == "host" else "S%d" % dom] = \
                two_t([smt["last"][x] for x in STATES])
    for kind in ("core", "package", "host", "seconds"):
        print("truth %s %.9f %d" % (kind, worst[kind][0], worst[kind][1]))
        failed |= worst[kind][0] > a.tol or worst[kind][1] == 0
    if a.metric:
        for aggr in ("core", "package", "host"):
            perf = perf_values(a, aggr)
            dmax, n = 0.0, 0
            for k, ents in ours.items():
                # perf's interval k - 1 (from 0) counted [k, k + 1]... its
                # index i counted [i, i + 1]: the same seconds.
                for ent, v in ents.items():
                    kind = "host" if ent == "host" else "package" if "-" not in ent else "core"
                    if kind != aggr or ent not in perf.get(k, {}):
                        continue
                    dmax = max(dmax, abs(perf[k][ent] - v))
                    n += 1
            print("perf %s %.9f %d" % (aggr, dmax, n))
            failed |= dmax > a.tol or n == 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
