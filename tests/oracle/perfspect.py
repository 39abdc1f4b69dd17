#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Intel's alternate TMA formulas (PerfSpect's alt_tma and nofixedtma
metric files, kept in reference/perfspect) as a perf metrics table, for the perf-parity harness:
each metric's "Formula", its aliases replaced by the events they stand for
(or its "expression", its [EVENT]s replaced by the events),
becomes a MetricExpr in percent ("1percent", as perf's arm64 metrics), named
tma_<metric> as perf names its TopDown nodes.  Nothing of topdownd's is
read: the expressions are evaluated by tests/oracle/perfexpr.py on the
counts perf reads.

usage: perfspect.py EXCERPT.json OUT.json
"""
import json
import re
import sys


# PerfSpect's spellings perf 6.1's tables do not have, in perf's metric
# syntax: a counter mask as ":cN"; INT_MISC.CLEARS_COUNT, which newer
# tables define as INT_MISC.RECOVERY_CYCLES with cmask=1,edge=1 (the
# encoding perf 6.1's own Ice Lake metrics spell out).
SPELLINGS = {"INT_MISC.CLEARS_COUNT": "cpu@INT_MISC.RECOVERY_CYCLES\\,cmask\\=1\\,edge@"}


def perf_spelling(name):
    m = re.fullmatch(r"(.*):c(\d+)", name)
    if m:
        return "cpu@%s\\,cmask\\=%s@" % (m.group(1), m.group(2))
    return SPELLINGS.get(name, name)


def convert(spec):
    out = []
    for m in spec["Metrics"]:
        if "expression" in m:
            # A nofixedtma file: "metric_TMA_..Fetch_Latency(%)", its
            # events written [NAME], its level the dots' (none: level 1).
            node = re.fullmatch(r"(?:metric_)?TMA_(\.*)(\w+)\(%\)", m["name"])
            expr = re.sub(r"\[([^\]]+)\]", lambda g: perf_spelling(g.group(1)), m["expression"])
            name, level = node.group(2), 1 + len(node.group(1)) // 2
        else:
            alias = {e["Alias"]: perf_spelling(e["Name"]) for e in m["Events"]}
            expr = re.sub(r"\b([a-z])\b", lambda g: alias[g.group(1)], m["Formula"])
            name, level = m["MetricName"], m["Level"]
        out.append({"MetricName": "tma_" + name.lower(), "MetricExpr": expr,
                    "MetricGroup": "TopdownL%d" % level, "ScaleUnit": "1percent"})
    return out


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    with open(sys.argv[2], "w") as f:
        json.dump(convert(spec), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
