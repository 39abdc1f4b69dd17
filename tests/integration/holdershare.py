#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""holdershare.py TRACE DOCS CPU STEP: a flexible holder's share of its
time on CPU (the fake's "holder cpu=C in|out|arrives|leaves NS" trace
lines) over the intervals of topdownd's documents (--watch --json, on a
read-paced clock of STEP seconds: document k covers [k, k + 1] steps)
through which that CPU had yielded its counters (the document before
said so), and over those it had not, while the holder was there.  Prints "yielded PCT N shared PCT N"."""
import json
import sys


def main():
    trace, docs_path, cpu, step = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    spans, start, there = [], None, []
    arrive = leave = None
    for line in open(trace):
        f = line.split()
        if len(f) < 4 or f[0] != "holder" or f[1] != "cpu=%d" % cpu:
            continue
        t = int(f[3]) / 1e9
        if f[2] == "arrives" and arrive is None:
            arrive = t
        if f[2] == "leaves":
            leave = t
        if f[2] == "in":
            start = t
        elif f[2] in ("out", "leaves") and start is not None:
            spans.append((start, t))
            start = None
    if start is not None:
        spans.append((start, float("inf")))
    docs = [json.loads(x) for x in open(docs_path) if x.strip()]

    def ran(a, b):
        return sum(max(0.0, min(b, e) - max(a, s)) for s, e in spans)

    out = {True: [0.0, 0.0, 0], False: [0.0, 0.0, 0]}
    for k, d in enumerate(docs):
        if k == 0:
            continue
        # Yielded through interval k: the state document k - 1 ended
        # with (a document says what its interval's end decided).
        prev = next(x for x in docs[k - 1]["cpus"] if x["cpu"] == cpu)
        a, b = k * step, (k + 1) * step
        if arrive is None or a < arrive or (leave is not None and b > leave):
            continue
        y = bool((prev.get("counters") or {}).get("yielded"))
        out[y][0] += ran(a, b)
        out[y][1] += b - a
        out[y][2] += 1
    pct = {y: (100.0 * v[0] / v[1] if v[1] else -1) for y, v in out.items()}
    print("yielded %.1f %d shared %.1f %d" % (pct[True], out[True][2], pct[False], out[False][2]))


if __name__ == "__main__":
    main()
