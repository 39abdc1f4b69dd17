#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""holders.py SCENARIO NCPUS HOLDERS_JSON: SCENARIO (a fake-PMU scenario)
with other users of the counters on some CPUs.  HOLDERS_JSON maps a CPU
number to its holders list ({"gp": N, "fixed": [...], "pinned": bool,
"from": s, "to": s}, tests/fakepmu/README.md).  Each such CPU gets an entry
of its own: a copy of the entry that covered it (a cpulist key or
"default") with the holders, and the cpulist it came from loses it (the
fake refuses keys that overlap).  Prints the new scenario."""
import copy
import json
import sys


def cpulist(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def fmt(cpus):
    cpus = sorted(cpus)
    parts, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(parts)


def main():
    scen = json.load(open(sys.argv[1]))
    ncpus = int(sys.argv[2])
    holders = {int(k): v for k, v in json.loads(sys.argv[3]).items()}
    cpus = scen["cpus"]
    owner = {}
    for key in cpus:
        if key != "default":
            for c in cpulist(key):
                owner[c] = key
    out = {}
    for key, entry in cpus.items():
        if key == "default":
            out[key] = entry
            continue
        left = [c for c in cpulist(key) if c not in holders]
        if left:
            out[fmt(left)] = entry
    for c, hs in sorted(holders.items()):
        if c >= ncpus:
            continue
        entry = copy.deepcopy(cpus[owner.get(c, "default")])
        if owner.get(c) is not None and "default" in cpus:
            # A cpulist entry inherits what it leaves out from "default".
            for k, v in cpus["default"].items():
                entry.setdefault(k, copy.deepcopy(v))
        entry["holders"] = hs
        out[str(c)] = entry
    scen["cpus"] = out
    json.dump(scen, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
