#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Intel's alternate TMA formulas (PerfSpect's metric files, kept in
reference/perfspect) as a perf metrics table, for the perf-parity harness:
each metric's "Formula", its aliases replaced by the events they stand for,
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
        alias = {e["Alias"]: perf_spelling(e["Name"]) for e in m["Events"]}
        expr = re.sub(r"\b([a-z])\b", lambda g: alias[g.group(1)], m["Formula"])
        out.append({"MetricName": "tma_" + m["MetricName"].lower(), "MetricExpr": expr,
                    "MetricGroup": "TopdownL%d" % m["Level"], "ScaleUnit": "1percent"})
    return out


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    with open(sys.argv[2], "w") as f:
        json.dump(convert(spec), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
