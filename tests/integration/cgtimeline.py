#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""cgtimeline.py SEED SECONDS CPUS: a fake-PMU scenario in which every CPU
runs a random time line of cgroups (slices of 0.2 to 20 ms), each cgroup
with its own true TopDown fractions; the truths are printed to stderr as
JSON ({cgroup: {category: fraction}}).  For 37-cgroups-fakepmu.t."""
import json
import random
import sys

TRUTH = {
    "/system.slice/web.service": dict(retiring=0.45, bad_speculation=0.05, frontend_bound=0.30,
                                      backend_bound=0.20, heavy_operations=0.10, branch_mispredicts=0.04,
                                      fetch_latency=0.22, memory_bound=0.12),
    "/system.slice/db.service": dict(retiring=0.15, bad_speculation=0.03, frontend_bound=0.10,
                                     backend_bound=0.72, heavy_operations=0.02, branch_mispredicts=0.02,
                                     fetch_latency=0.06, memory_bound=0.60),
    "/kubepods.slice/batch.slice": dict(retiring=0.60, bad_speculation=0.25, frontend_bound=0.05,
                                        backend_bound=0.10, heavy_operations=0.30, branch_mispredicts=0.20,
                                        fetch_latency=0.03, memory_bound=0.04),
    "other": dict(retiring=0.25, bad_speculation=0.10, frontend_bound=0.25, backend_bound=0.40,
                  heavy_operations=0.05, branch_mispredicts=0.08, fetch_latency=0.15, memory_bound=0.30),
}


def main():
    seed, seconds, cpus = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    names = sorted(TRUTH)
    spec = {}
    for cpu in range(cpus):
        phases, t = [], 0
        end = round(seconds * 10000)
        while t < end:
            # Every CPU's time line ends at the same instant.
            tenths_ms = min(rng.randint(2, 200), end - t)
            name = rng.choice(names)
            phases.append(dict(seconds=tenths_ms / 10000, cgroup=name, **TRUTH[name]))
            t += tenths_ms
        spec[str(cpu)] = {"slots_per_second": 1.2e10, "phases": phases}
    json.dump({"cpus": spec}, sys.stdout)
    json.dump(TRUTH, sys.stderr)


main()
