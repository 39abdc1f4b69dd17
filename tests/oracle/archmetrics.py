#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The level-1 metrics topdownd computes from Intel's architectural TopDown
events, as a perf metrics table for the perf-parity harness: perf's own
PERF_METRICS expressions (Sapphire Rapids' spr-metrics.json, verbatim),
which read the kernel's topdown-* events, with tma_frontend_bound's
refinement term taken off (INT_MISC.UOP_DROPPING is a Golden Cove event,
not an architectural one; topdownd leaves it out for any model without
tables, as for PERF_METRICS alone).

usage: archmetrics.py spr-metrics.json OUT.json
"""
import json
import sys

REFINEMENT = " - INT_MISC.UOP_DROPPING / tma_info_thread_slots"
LEVEL1 = ("tma_retiring", "tma_bad_speculation", "tma_frontend_bound", "tma_backend_bound")


def main():
    with open(sys.argv[1]) as f:
        table = {m["MetricName"]: m for m in json.load(f) if "MetricName" in m}
    out = []
    for name in LEVEL1:
        expr = table[name]["MetricExpr"]
        if name == "tma_frontend_bound":
            if not expr.endswith(REFINEMENT):
                sys.exit("archmetrics: %s no longer ends with %r: %s" % (name, REFINEMENT, expr))
            expr = expr[:-len(REFINEMENT)]
        if "INT_MISC" in expr or "slots" in expr.replace("tma_info_thread_slots", "").lower():
            sys.exit("archmetrics: %s reads more than the topdown-* events: %s" % (name, expr))
        out.append({"MetricName": name, "MetricExpr": expr, "MetricGroup": "TopdownL1",
                    "ScaleUnit": table[name].get("ScaleUnit", "100%")})
    with open(sys.argv[2], "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
