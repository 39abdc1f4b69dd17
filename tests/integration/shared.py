#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""shared.py DOCS SPEC: checks one run of topdownd --watch --json (one
document per interval, on the fake PMU's read-paced clock) in which other
users' pinned events take counters of some CPUs and give them back.

SPEC (JSON): {"interval": s, "gp_total": M, "down_max": D, "up_max": U,
  "cpus": {"N": {"free": F, "arrive": s, "leave": s|null, "none": bool, "step": bool}}}
  - free: the general-purpose counters the holder leaves CPU N;
  - step: whether that is less than its groups need (default true);
  - none: while it holds them the CPU has no figures (every counter held
    and no grouping on the fixed counters alone).
Document k (0-based) covers fake time [k, k + 1] intervals.

Prints one line per check, "PASS name: detail" or "FAIL name: detail".
The caller turns them into TAP."""
import json
import math
import sys

CATS = ("level1", "level2")


def figures(cpu):
    out = {}
    for group in CATS:
        for k, v in (cpu.get(group) or {}).items():
            if isinstance(v, (int, float)):
                out[group + "." + k] = v
    return out


def main():
    docs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    spec = json.load(open(sys.argv[2]))
    iv = spec["interval"]
    results = []

    def check(name, ok, detail):
        results.append(("PASS" if ok else "FAIL", name, detail))

    n = len(docs)
    check("documents", n == spec["documents"], "%d documents of %d" % (n, spec["documents"]))
    if not docs:
        for r in results:
            print("%s %s: %s" % r)
        return
    # 1. No CPU ever given up.
    bad = sorted({"%d:%s" % (c["cpu"], c["state"]) for d in docs for c in d["cpus"]
                  if c["state"] in ("unsupported", "failed", "silenced", "yielded")})
    check("states", not bad, "no CPU unsupported, failed, silenced or yielded in any interval%s" %
          ("" if not bad else ": " + " ".join(bad[:8])))

    # 2. Step down and back up, in intervals, from the counters each
    # document shows.
    steps = {}
    for key, h in spec["cpus"].items():
        cpu = int(key)
        series = [next(c for c in d["cpus"] if c["cpu"] == cpu) for d in docs]
        free = [((c.get("counters") or {}).get("general_purpose_free")) for c in series]
        arrive = int(round(h["arrive"] / iv))
        if not h.get("step", True):
            # What is left still holds its groups: nothing to learn, no
            # probe, the figures go on.
            changed = [k for k in range(n) if free[k] not in (None, spec["gp_total"])]
            check("cpu%d.down" % cpu, not changed,
                  "CPU %d: %d left still hold its groups: no step (general_purpose_free stays %d%s)" %
                  (cpu, h["free"], spec["gp_total"], "" if not changed else "; changed in " + str(changed[:5])))
            if h.get("leave") is not None:
                check("cpu%d.up" % cpu, True, "CPU %d: nothing to step back up from" % cpu)
            continue
        down = next((k for k in range(arrive, n) if free[k] == h["free"]), None)
        up = None
        if h.get("leave") is not None:
            leave = int(round(h["leave"] / iv))
            up = next((k for k in range(leave, n) if free[k] == spec["gp_total"]), None)
        steps[cpu] = (arrive, down, up)
        dn = None if down is None else down - arrive + 1
        check("cpu%d.down" % cpu, dn is not None and dn <= spec["down_max"],
              "CPU %d: %s intervals to step down to %d free (at most %d)" %
              (cpu, dn, h["free"], spec["down_max"]))
        if h.get("leave") is not None:
            leave = int(round(h["leave"] / iv))
            un = None if up is None else up - leave + 1
            check("cpu%d.up" % cpu, un is not None and un <= spec["up_max"],
                  "CPU %d: %s intervals to step back up to %d (at most %d)" %
                  (cpu, un, spec["gp_total"], spec["up_max"]))

    # 3. Figures in every interval but those of a step (and a CPU with
    # nothing left to count with, while held).
    gaps, unexpected = 0, []
    last = {c["cpu"]: figures(c) for c in docs[-1]["cpus"] if c.get("level1")}
    for k, d in enumerate(docs):
        if k < 2:
            continue
        for c in d["cpus"]:
            if c.get("level1") or c["state"] in ("offline",) or c.get("pmu") is None:
                continue
            if c.get("slots", 1) == 0 and c["state"] == "monitored" and (c.get("running_ratio") or 0) > 0:
                continue  # a halted CPU (its scenario's): no figures by design
            gaps += 1
            allowed = False
            h = spec["cpus"].get(str(c["cpu"]))
            if h and h.get("step", True) and c["cpu"] in steps:
                arrive, down, up = steps[c["cpu"]]
                end_down = (down if down is not None else n) + 1
                allowed = arrive <= k <= end_down
                if h.get("leave") is not None:
                    leave = int(round(h["leave"] / iv))
                    end_up = (up if up is not None else n) + 1
                    allowed = allowed or leave <= k <= end_up
                    if h.get("none"):
                        allowed = allowed or arrive <= k <= end_up
                elif h.get("none"):
                    allowed = allowed or k >= arrive
            if not allowed:
                unexpected.append("%d@%d" % (c["cpu"], k))
    check("gaps", not unexpected, "%d CPU intervals without figures, all in a step%s" %
          (gaps, "" if not unexpected else "; unexpected: " + " ".join(unexpected[:8])))

    # 4. Held or not, each CPU's figures are the same (a constant
    # workload): every interval's against the last one's.  Counting on
    # the fixed counters alone (none general-purpose free: model
    # hardware, PERF_METRICS as the hardware gives it) a CPU's figures
    # are the scenario's fractions within PERF_METRICS' 8-bit step; how
    # far that is from the perf model's is printed.
    worst, where = 0.0, ""
    fixed_worst, fixed_n, departure = 0.0, 0, 0.0
    for k, d in enumerate(docs):
        for c in d["cpus"]:
            if not c.get("level1") or c["cpu"] not in last:
                continue
            truth = (spec["cpus"].get(str(c["cpu"])) or {}).get("fixed_truth")
            # The grouping it counted with through interval k: the one
            # document k - 1 ended with.
            before = next((x for x in docs[k - 1]["cpus"] if x["cpu"] == c["cpu"]), {}) if k else {}
            if truth and (before.get("counters") or {}).get("general_purpose_free") == 0:
                fixed_n += 1
                for name, v in figures(c).items():
                    if name in truth:
                        fixed_worst = max(fixed_worst, abs(v - truth[name]))
                    if name in last[c["cpu"]]:
                        departure = max(departure, abs(v - last[c["cpu"]][name]))
                continue
            for name, v in figures(c).items():
                ref = last[c["cpu"]].get(name)
                if ref is None:
                    continue
                diff = abs(v - ref)
                if diff > worst:
                    worst, where = diff, "CPU %d %s in interval %d: %.4f against %.4f" % (
                        c["cpu"], name, k, v, ref)
    check("figures", worst <= spec.get("tol", 0.0005) and fixed_worst <= 0.005,
          "every CPU's figures, held or not, within %.2f pp of its own at the end (largest %.4f pp%s)%s" %
          (100 * spec.get("tol", 0.0005), 100 * worst, ": " + where if where else "",
           "" if not fixed_n else "; on the fixed counters alone (%d CPU intervals) the scenario's "
           "PERF_METRICS within %.2f pp (0.5 at most), %.2f pp from the perf model's figures" %
           (fixed_n, 100 * fixed_worst, 100 * departure)))

    # 5. The aggregates say what they cover.
    wrong = []
    for k, d in enumerate(docs):
        measured = sum(1 for c in d["cpus"] if c.get("cpus_measured"))
        host = d.get("host") or {}
        if host.get("cpus_measured") != measured:
            wrong.append("%d: %s against %d" % (k, host.get("cpus_measured"), measured))
    check("coverage", not wrong, "the host's cpus_measured is the number of CPUs with figures in every "
          "interval%s" % ("" if not wrong else ": " + ", ".join(wrong[:5])))
    for r in results:
        print("%s %s: %s" % r)


if __name__ == "__main__":
    main()
