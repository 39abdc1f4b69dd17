#!/bin/bash
# SPDX-License-Identifier: MIT
# Per-cgroup TopDown's arithmetic against the truth, under the fake PMU
# (which keeps PERF_METRICS' 8-bit fractions and resets them on every read
# as the kernel does).  The fake cannot run BPF: tests/tools/cgsim stands
# in for the program, charging each CPU's counts to the cgroup of the phase
# that just ended with the program's accounting core (cgacct.h) at every
# phase boundary of a random time line (slices of 0.2 to 20 ms on every
# CPU), then puts each cgroup's counts through the daemon's per-cgroup
# arithmetic.  Each cgroup's fractions must be its truth within one step
# of the 8-bit fraction (1/255), and the cgroups must sum to the host the
# collector reads from the same counters.
. "$(dirname "$0")/lib.sh"

# Sapphire Rapids: level 1 and 2 from PERF_METRICS; Ice Lake server: level 1
# from PERF_METRICS (its level 2 comes from other events, which the
# parity tests check against perf).
FIXTURES_USED="spr-2s icx-1s"
declare -A LEVEL2=([spr-2s]=1 [icx-1s]=0)
plan $((2 * 4))
HERE=$(cd "$(dirname "$0")" && pwd)

for fx in $FIXTURES_USED; do
	ncpu=$(($(sed 's/.*-//' "$FIXTURES/$fx/devices/system/cpu/possible") + 1))
	/usr/bin/python3 "$HERE/cgtimeline.py" 7 2 "$ncpu" >"$TMP/$fx.json" 2>"$TMP/$fx.truth"
	echo 0 >"$TMP/clock"
	FAKEPMU_CLOCK_FILE=$TMP/clock FAKEPMU_SYSFS=$FIXTURES/$fx FAKEPMU_SCENARIO=$TMP/$fx.json \
		LD_PRELOAD=$FAKEPMU "$TOOL_DIR/cgsim" "$FIXTURES/$fx" "$TMP/$fx.json" "$TMP/clock" \
		>"$TMP/$fx.out" 2>"$TMP/$fx.err"
	ok $? "$fx: cgsim runs the time line ($(jq .slices "$TMP/$fx.out" 2>/dev/null) slices on $ncpu CPUs)"
	/usr/bin/python3 - "$TMP/$fx.out" "$TMP/$fx.truth" <<'PY'
import json, sys
out, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
b, h = out["bucket_slots"], out["host_slots"]
print("# cgroups %.6e slots, host %.6e" % (b, h))
sys.exit(0 if h > 0 and abs(b - h) <= 1e-9 * h else 1)
PY
	ok $? "$fx: the cgroups' slots sum to the host's exactly"
	/usr/bin/python3 - "$TMP/$fx.out" "$TMP/$fx.truth" "${LEVEL2[$fx]}" <<'PY'
import json, sys
out, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
l1 = {"retiring", "bad_speculation", "frontend_bound", "backend_bound"}
worst, bad, n = 0.0, [], 0
for g, cats in truth.items():
    got = out["cgroups"].get(g, {}).get("frac", {})
    for c, v in cats.items():
        if c not in got or (sys.argv[3] == "0" and c not in l1):
            continue
        n += 1
        e = abs(got[c] - v)
        worst = max(worst, e)
        if e > 1 / 255 + 1e-9:
            bad.append("%s %s: %.5f, truth %.5f" % (g, c, got[c], v))
print("# %d cgroup categories, worst error %.5f (%.2f/255)" % (n, worst, worst * 255))
for x in bad:
    print("#   " + x)
sys.exit(0 if n >= 4 * 4 and not bad else 1)
PY
	ok $? "$fx: every cgroup's $([ "${LEVEL2[$fx]}" = 1 ] && echo "level-1 and level-2" || echo level-1) categories are its truth within 1/255"
	/usr/bin/python3 - "$TMP/$fx.out" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
# Each cgroup is about a quarter of the time line.
shares = [g["slots"] / out["host_slots"] for g in out["cgroups"].values()]
print("# shares of the host's slots: " + ", ".join("%.3f" % s for s in shares))
sys.exit(0 if len(shares) == 4 and all(0.15 < s < 0.35 for s in shares) else 1)
PY
	ok $? "$fx: four cgroups, each with its share of the slots"
done
done_testing
