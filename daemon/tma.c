/* tma: perf-compatible TopDown formulas.
 *
 * perf (6.1 metric tables), with S = fe + bad + ret + be (metric deltas)
 * and SLOTS the slots delta:
 *   Sapphire Rapids:  retiring = ret/S, backend = be/S,
 *                     frontend = fe/S - UOP_DROPPING/SLOTS,
 *                     bad_speculation = max(1 - (frontend + backend + retiring), 0)
 *   Ice Lake:         frontend as above, backend = be/S + 5*RECOVERY_CYCLES/SLOTS
 *   level 2:          heavy = heavy/S, branch_mispredicts = brm/S,
 *                     fetch_latency = fl/S - UOP_DROPPING/SLOTS, memory_bound = mb/S,
 *                     the other child of each parent = max(0, parent - child).
 *
 * Beyond perf, so that slot counters partition the slots exactly (the L1
 * categories sum to 1 and every L2 pair sums to its parent):
 *   - frontend_bound and fetch_latency are clamped at 0 (the refinement
 *     term can exceed the 8-bit metric);
 *   - on Ice Lake, when the recovery-cycles term pushes frontend + backend
 *     + retiring above 1, backend_bound is capped at 1 - retiring -
 *     frontend (perf would print more than 100% in total);
 *   - the measured L2 child is clamped to [0, parent] before the derived
 *     child is taken as parent - child (8-bit rounding can make
 *     topdown-heavy-ops exceed topdown-retiring by 1/255).
 * These only act where perf's output is itself inconsistent, by at most
 * the metric quantisation or the refinement term. */
#include "tma.h"

#include <errno.h>
#include <stdio.h>

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

int tma_compute(const struct tma_model *model, const struct tma_input *in,
		struct tma_ratios *out)
{
	const uint64_t *d = in->delta;
	double slots = (double)d[TD_EV_SLOTS];
	double s = (double)d[TD_EV_RETIRING] + (double)d[TD_EV_BAD_SPEC] +
		   (double)d[TD_EV_FE_BOUND] + (double)d[TD_EV_BE_BOUND];
	double ud = 0, rc = 0;
	double ret, fe, be, bad;

	if (d[TD_EV_SLOTS] == 0 || s == 0)
		return -ENODATA;
	if (model->refine) {
		ud = (double)d[TD_EV_UOP_DROPPING] / slots;
		if (model->formulas == TD_FORMULAS_ICL)
			rc = 5.0 * (double)d[TD_EV_RECOVERY_CYCLES] / slots;
	}

	ret = (double)d[TD_EV_RETIRING] / s;
	fe = clamp((double)d[TD_EV_FE_BOUND] / s - ud, 0, 1);
	be = (double)d[TD_EV_BE_BOUND] / s + rc;
	if (ret + fe + be > 1)
		be = clamp(1 - ret - fe, 0, 1);
	bad = 1 - (fe + be + ret);
	if (bad < 0)
		bad = 0;
	out->l1[TD_RETIRING] = ret;
	out->l1[TD_BAD_SPECULATION] = bad;
	out->l1[TD_FRONTEND_BOUND] = fe;
	out->l1[TD_BACKEND_BOUND] = be;

	if (model->level < 2) {
		for (int i = 0; i < TD_L2_COUNT; i++)
			out->l2[i] = 0;
		return 0;
	}
	double heavy = clamp((double)d[TD_EV_HEAVY_OPS] / s, 0, ret);
	double brm = clamp((double)d[TD_EV_BR_MISPREDICT] / s, 0, bad);
	double fl = clamp((double)d[TD_EV_FETCH_LAT] / s - ud, 0, fe);
	double mb = clamp((double)d[TD_EV_MEM_BOUND] / s, 0, be);

	out->l2[TD_HEAVY_OPERATIONS] = heavy;
	out->l2[TD_LIGHT_OPERATIONS] = ret - heavy;
	out->l2[TD_BRANCH_MISPREDICTS] = brm;
	out->l2[TD_MACHINE_CLEARS] = bad - brm;
	out->l2[TD_FETCH_LATENCY] = fl;
	out->l2[TD_FETCH_BANDWIDTH] = fe - fl;
	out->l2[TD_MEMORY_BOUND] = mb;
	out->l2[TD_CORE_BOUND] = be - mb;
	return 0;
}

void tma_bottleneck(const double l1[TD_L1_COUNT], const double l2[TD_L2_COUNT],
		    bool with_l2, char *buf, size_t len)
{
	int best = -1, child = -1;

	for (int c = 0; c < TD_L1_COUNT; c++)
		if (c != TD_RETIRING && l1[c] > 0 && (best < 0 || l1[c] > l1[best]))
			best = c;
	if (best < 0) {
		if (len)
			buf[0] = '\0';
		return;
	}
	if (with_l2)
		for (int c = 0; c < TD_L2_COUNT; c++)
			if (td_l2_parent[c] == (enum td_l1)best && l2[c] > 0 &&
			    (child < 0 || l2[c] > l2[child]))
				child = c;
	if (child >= 0)
		snprintf(buf, len, "%s.%s", td_l1_name[best], td_l2_name[child]);
	else
		snprintf(buf, len, "%s", td_l1_name[best]);
}
