# SPDX-License-Identifier: MIT
"""topdownd's documented clamps (README, "How it measures"; daemon/tma.c)
applied to perf's values: what topdownd must report where perf's own
output is inconsistent, and perf's values unchanged where it is not.
Shared by uarch_check.py (random counts) and parity.py (perf runs)."""

L1 = ["retiring", "bad_speculation", "frontend_bound", "backend_bound"]
# Each level-2 pair: the child topdownd measures -> the one it takes as the
# rest of their parent (tma.c).
SIBLINGS = {"heavy_operations": "light_operations", "ms_uops": "base",
            "branch_mispredicts": "machine_clears", "fetch_latency": "fetch_bandwidth",
            "ifetch_latency": "ifetch_bandwidth", "memory_bound": "core_bound"}
SIBLINGS_CMT = {"branch_mispredicts": "machine_clears", "ifetch_latency": "ifetch_bandwidth",
                "core_bound": "resource_bound"}
# AMD Zen 4 and later (perf's PipelineL2 names).
SIBLINGS_ZEN = {"retiring_microcode": "retiring_fastpath",
                "bad_speculation_mispredicts": "bad_speculation_pipeline_restarts",
                "frontend_bound_latency": "frontend_bound_bandwidth",
                "backend_bound_memory": "backend_bound_cpu"}
PARENT = {"heavy_operations": "retiring", "ms_uops": "retiring", "branch_mispredicts": "bad_speculation",
          "fetch_latency": "frontend_bound", "ifetch_latency": "frontend_bound",
          "memory_bound": "backend_bound", "core_bound": "backend_bound",
          "retiring_microcode": "retiring", "bad_speculation_mispredicts": "bad_speculation",
          "frontend_bound_latency": "frontend_bound", "backend_bound_memory": "backend_bound"}
# Children perf takes as a ratio of events times their parent: with a
# parent topdownd changed (a clamp), topdownd applies the same ratio to
# its own parent.
SCALED = {"branch_mispredicts", "memory_bound"}
SCALED_ZEN = {"retiring_microcode", "bad_speculation_mispredicts", "backend_bound_memory"}


def clamp(v, lo, hi):
    return lo if v < lo else hi if v > hi else v


def siblings_of(formulas):
    return SIBLINGS_CMT if formulas == "cmt" else SIBLINGS_ZEN if formulas == "zen" else SIBLINGS


def level1_of(formulas):
    return L1 + ["smt_contention"] if formulas == "zen" else L1


def documented(p, formulas, level):
    """perf's values @p (category -> fraction) for formulas "glc", "icl",
    "metrics" (PERF_METRICS) or "skl", "grt", "cmt", "zen" (general-purpose
    counters) -> what topdownd reports."""
    if formulas in ("glc", "icl", "metrics"):
        ret = p["retiring"]
        fe = clamp(p["frontend_bound"], 0, 1)
        be = p["backend_bound"]
        if ret + fe + be > 1:
            be = clamp(1 - ret - fe, 0, 1)
        bad = max(1 - (fe + be + ret), 0)
        out = {"retiring": ret, "bad_speculation": bad, "frontend_bound": fe, "backend_bound": be}
    else:
        l1 = {c: max(p[c], 0.0) for c in level1_of(formulas)}
        total = sum(l1.values())
        if total <= 0:
            l1, total = {c: 0.0 for c in l1}, 1
            l1["backend_bound"] = 1
        out = {c: v / total for c, v in l1.items()}
    if level < 2:
        return out
    for child, rest in siblings_of(formulas).items():
        if child not in p:
            continue
        parent = PARENT[child]
        v = p[child]
        if (child in SCALED and formulas in ("skl", "icl")) or \
                (child in SCALED_ZEN and formulas == "zen"):
            v = v / p[parent] * out[parent] if p[parent] else 0.0
        v = clamp(v, 0, out[parent])
        out[child] = v
        out[rest] = out[parent] - v
    return out
