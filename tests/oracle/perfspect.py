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


def convert(spec):
    out = []
    for m in spec["Metrics"]:
        alias = {e["Alias"]: e["Name"] for e in m["Events"]}
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
