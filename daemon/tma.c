/* SPDX-License-Identifier: MIT */
/* tma: perf-compatible TopDown formulas.
 *
 * PERF_METRICS microarchitectures (the metrics of uarch_intel.c, verbatim
 * from perf's tables), with S = fe + bad + ret + be (metric counts) and
 * SLOTS the slots count:
 *   Golden Cove and later (SPR, EMR, GNR, ADL P-cores):
 *                     retiring = ret/S, backend = be/S,
 *                     frontend = fe/S - UOP_DROPPING/SLOTS,
 *                     bad_speculation = max(1 - (frontend + backend + retiring), 0)
 *                     level 2: heavy = heavy/S, branch_mispredicts = brm/S,
 *                     fetch_latency = fl/S - UOP_DROPPING/SLOTS, memory_bound = mb/S,
 *                     the other child of each parent = max(0, parent - child)
 *   Ice Lake:         as above at level 1, and backend = be/S + 5*RECOVERY_CYCLES/SLOTS
 *                     (RECOVERY_CYCLES with cmask=1, edge=1: INT_MISC.CLEARS_COUNT)
 *   PERF_METRICS alone (a model not in the tables, or model hardware):
 *                     the same without the refinement terms.
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
#include <string.h>

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int perf_metrics(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double slots = v[TD_EV_SLOTS];
	double s = v[TD_EV_RETIRING] + v[TD_EV_BAD_SPEC] + v[TD_EV_FE_BOUND] + v[TD_EV_BE_BOUND];
	double ud = 0, rc = 0;
	double ret, fe, be, bad, *f = out->frac;

	if (slots <= 0 || s <= 0)
		return -ENODATA;
	if (model->refine && model->formulas != UA_FORMULAS_METRICS) {
		ud = v[TD_EV_UOP_DROPPING] / slots;
		if (model->formulas == UA_FORMULAS_ICL)
			rc = 5.0 * v[TD_EV_RECOVERY_CYCLES] / slots;
	}
	out->slots = slots;
	ret = v[TD_EV_RETIRING] / s;
	fe = clamp(v[TD_EV_FE_BOUND] / s - ud, 0, 1);
	be = v[TD_EV_BE_BOUND] / s + rc;
	if (ret + fe + be > 1)
		be = clamp(1 - ret - fe, 0, 1);
	bad = 1 - (fe + be + ret);
	if (bad < 0)
		bad = 0;
	f[TD_CAT_RETIRING] = ret;
	f[TD_CAT_BAD_SPECULATION] = bad;
	f[TD_CAT_FRONTEND_BOUND] = fe;
	f[TD_CAT_BACKEND_BOUND] = be;
	if (model->level < 2)
		return 0;

	double heavy = clamp(v[TD_EV_HEAVY_OPS] / s, 0, ret);
	double brm = clamp(v[TD_EV_BR_MISPREDICT] / s, 0, bad);
	double fl = clamp(v[TD_EV_FETCH_LAT] / s - ud, 0, fe);
	double mb = clamp(v[TD_EV_MEM_BOUND] / s, 0, be);

	f[TD_CAT_HEAVY_OPERATIONS] = heavy;
	f[TD_CAT_LIGHT_OPERATIONS] = ret - heavy;
	f[TD_CAT_BRANCH_MISPREDICTS] = brm;
	f[TD_CAT_MACHINE_CLEARS] = bad - brm;
	f[TD_CAT_FETCH_LATENCY] = fl;
	f[TD_CAT_FETCH_BANDWIDTH] = fe - fl;
	f[TD_CAT_MEMORY_BOUND] = mb;
	f[TD_CAT_CORE_BOUND] = be - mb;
	return 0;
}

int tma_compute(const struct tma_model *model, const struct tma_input *in,
		struct tma_result *out)
{
	memset(out, 0, sizeof(*out));
	switch (model->formulas) {
	case UA_FORMULAS_GLC:
	case UA_FORMULAS_ICL:
	case UA_FORMULAS_METRICS:
		return perf_metrics(model, in->v, out);
	}
	return -EINVAL;
}

void tma_bottleneck(const double v[TD_CAT_COUNT], td_catset cats, bool with_l2,
		    char *buf, size_t len)
{
	int best = -1, child = -1;

	for (int c = 0; c < TD_CAT_COUNT; c++)
		if (td_catset_has(cats, (enum td_cat)c) && td_cat[c].level == 1 &&
		    c != TD_CAT_RETIRING && v[c] > 0 && (best < 0 || v[c] > v[best]))
			best = c;
	if (best < 0) {
		if (len)
			buf[0] = '\0';
		return;
	}
	if (with_l2)
		for (int c = 0; c < TD_CAT_COUNT; c++)
			if (td_catset_has(cats, (enum td_cat)c) && td_cat[c].level == 2 &&
			    td_cat[c].parent == (enum td_cat)best && v[c] > 0 &&
			    (child < 0 || v[c] > v[child]))
				child = c;
	if (child >= 0)
		snprintf(buf, len, "%s.%s", td_cat[best].name, td_cat[child].name);
	else
		snprintf(buf, len, "%s", td_cat[best].name);
}
