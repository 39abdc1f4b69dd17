/* SPDX-License-Identifier: MIT */
/* tma: perf-compatible TopDown formulas.
 *
 * The formulas of the perf metrics each microarchitecture follows
 * (uarch_*.c quotes them verbatim, with their files), computed on one
 * interval's counts.  W is the uarch's pipeline width.
 *
 * PERF_METRICS, with S = fe + bad + ret + be (metric counts) and SLOTS the
 * slots count:
 *   Golden Cove and later (SPR, EMR, GNR, ADL P-cores):
 *                     retiring = ret/S, backend = be/S,
 *                     frontend = fe/S - UOP_DROPPING/SLOTS,
 *                     bad_speculation = max(1 - (frontend + backend + retiring), 0)
 *                     level 2: heavy = heavy/S, branch_mispredicts = brm/S,
 *                     fetch_latency = fl/S - UOP_DROPPING/SLOTS, memory_bound = mb/S,
 *                     the other child of each parent = max(0, parent - child)
 *   Ice Lake:         as above at level 1, and backend = be/S + W*RECOVERY_CYCLES/SLOTS
 *                     (RECOVERY_CYCLES with cmask=1, edge=1: INT_MISC.CLEARS_COUNT);
 *                     level 2 from general-purpose events:
 *                     heavy = retiring*MS_UOPS/UOPS_ISSUED + retiring*(DEC0 - DEC0:c1)/MITE_UOPS,
 *                     fetch_latency = (W*IDQ_0_UOPS_CYCLES - UOP_DROPPING)/SLOTS,
 *                     branch_mispredicts and memory_bound as on Skylake
 *   PERF_METRICS alone (a model not in the tables, or model hardware):
 *                     the same without the refinement terms.
 * Intel's architectural TopDown events (a model not in the tables whose
 * PMU shows them as topdown-*, on general-purpose counters): PERF_METRICS
 * alone's level 1 on their counts, S = fe + bad + ret + be being the
 * slots.
 * Skylake to Cascade Lake (general-purpose counters), SLOTS = W * CORE_CLKS,
 * CORE_CLKS = THREAD_ANY/2 (SMT, every thread counted), THREAD/2 * (1 +
 * ONE_THREAD_ACTIVE/REF_XCLK) (SMT, a thread not counted), THREAD (no
 * SMT); RC = RECOVERY_CYCLES_ANY/2 with SMT, RECOVERY_CYCLES without:
 *                     frontend = IDQ_NOT_DELIVERED/SLOTS, retiring = RETIRE_SLOTS/SLOTS,
 *                     bad_speculation = (UOPS_ISSUED - RETIRE_SLOTS + W*RC)/SLOTS,
 *                     backend = 1 - frontend - (UOPS_ISSUED + W*RC)/SLOTS
 *                     level 2: heavy = (RETIRE_SLOTS + MACRO_FUSED - INST_RETIRED)/SLOTS,
 *                     fetch_latency = W*IDQ_0_UOPS_CYCLES/SLOTS,
 *                     branch_mispredicts = BR_MISP/(BR_MISP + MACHINE_CLEARS) * bad_speculation,
 *                     memory_bound = (STALLS_MEM_ANY + BOUND_ON_STORES) /
 *                       (STALLS_TOTAL + PORTS_UTIL_1 + retiring*PORTS_UTIL_2 + BOUND_ON_STORES) * backend,
 *                     the other child = parent - child
 * Gracemont E-cores, SLOTS = W * CYCLES:
 *                     retiring, frontend, backend = TOPDOWN_*.ALL/SLOTS,
 *                     bad_speculation = 1 - the three;
 *                     level 2: ms_uops = UOPS_RETIRED.MS/SLOTS (base the rest of retiring),
 *                     branch_mispredicts = MISPREDICT/SLOTS, fetch_latency = FRONTEND_LATENCY/SLOTS,
 *                     memory_bound = min(backend, LD_HEAD.ANY_AT_RET/CYCLES +
 *                       MEM_SCHEDULER/SLOTS * ST_BUF/MEM_SCHEDULER_BLOCK.ALL)
 * Crestmont E-cores, SLOTS = W * CYCLES:
 *                     each level-1 category = TOPDOWN_*.ALL_P/SLOTS;
 *                     level 2: ifetch_latency = FRONTEND_LATENCY/SLOTS,
 *                     branch_mispredicts = MISPREDICT/SLOTS, core_bound = ALLOC_RESTRICTIONS/SLOTS,
 *                     the other child = parent - child
 * AMD Zen 4 and later, SLOTS = W * ls_not_halted_cyc (a thread's own
 * dispatch slots, SMT or not):
 *                     frontend = NO_OPS_FRONTEND/SLOTS, backend = BACKEND_STALLS/SLOTS,
 *                     smt_contention = SMT_CONTENTION/SLOTS, retiring = OPS_RETIRED/SLOTS,
 *                     bad_speculation = (OPS_DISPATCHED - OPS_RETIRED)/SLOTS;
 *                     level 2: frontend_bound_latency = W*FRONTEND_CYCLES/SLOTS,
 *                     bad_speculation_mispredicts = bad_speculation * BRANCH_MISP /
 *                       (BRANCH_MISP + RESYNCS),
 *                     backend_bound_memory = backend * LOAD_NOT_COMPLETE/NOT_COMPLETE,
 *                     retiring_microcode = retiring * UCODE_OPS/OPS_RETIRED,
 *                     the other child = parent - child
 * Arm Neoverse (perf's arm64/sbsa.json TopdownL1 with each core's overrides),
 * SLOTS = #slots * CPU_CYCLES (#slots the PMU's caps/slots), r =
 * OP_RETIRED/OP_SPEC, SS and SSF = STALL_SLOT and STALL_SLOT_FRONTEND (less
 * CPU_CYCLES on N2 before r0p3), B = BR_MIS_PRED/CPU_CYCLES:
 *   V1:               frontend = SSF/(8*CPU_CYCLES) - 4B,
 *                     bad_speculation = (1 - r)(1 - SS/(8*CPU_CYCLES)) + 4B,
 *                     backend = STALL_SLOT_BACKEND/SLOTS, retiring = r(1 - SS/SLOTS)
 *   N2, V2:           frontend = SSF/SLOTS - B, bad_speculation = (1 - r)(1 - SS/SLOTS) + 4B,
 *                     backend = STALL_SLOT_BACKEND/SLOTS - 3B, retiring = r(1 - SS/SLOTS)
 *
 * Each node is perf's expression on perf's own values of the nodes it
 * reads: children of a parent read perf's parent, bad_speculation reads
 * perf's frontend_bound, nothing is rescaled, and where perf writes
 * max(0, ...) or min(...) so does this.  The departures (docs/design.md,
 * "Compared with perf"; counted in topdown_departures_total):
 *   - a node below 0 (perf prints one when independently counted events
 *     disagree, or a refinement term exceeds its 8-bit metric) is 0;
 *   - a level-2 node perf has no value for (its '/' divides by 0: no
 *     branch mispredicts nor machine clears, no uops from the legacy
 *     decoders) is 0, as is every node that reads it;
 *   - a level-1 node perf has no value for, or no slots, is no figure for
 *     the interval (-ENODATA), where AMD's d_ratio would print 0.
 * So the level-1 fractions need not sum to 1, nor a parent's children to
 * it: they do where the counts are consistent, and perf's do not either
 * where they are not. */
#include "tma.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "vec.h"

/* perf's '/' (tools/perf/util/expr.y): no value when dividing by 0.  No
 * value is NaN here, and propagates through every node that reads it. */
static double divide(double num, double den)
{
	return den != 0 ? num / den : NAN;
}

/* perf's d_ratio(): 0 when dividing by 0. */
static double d_ratio(double num, double den)
{
	return den != 0 ? num / den : 0;
}

/* perf's max(0, x) and min(x, y), which keep a missing value missing
 * (fmax and fmin would drop it). */
static double max0(double v)
{
	return v < 0 ? 0 : v; /* NaN < 0 is false: NaN stays */
}

/* max(0, x) of an x that is not NaN: one instruction (x86's maxsd, whose
 * NaN case is the other operand), where max0() keeps a NaN and branches. */
static double max0_finite(double v)
{
	return v > 0 ? v : 0;
}

static double min2(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
}

/* The nodes a formula wrote, and whether any of them is not a share
 * (below 0, or NaN): the check the common case needs costs a comparison
 * per node, as it is written. */
struct tally {
	td_catset set;
	int bad;
};

static void put(struct tma_result *out, struct tally *t, enum td_cat cat, double v)
{
	out->frac[cat] = v;
	t->set |= (td_catset)1 << cat;
	t->bad |= !(v >= 0); /* NaN >= 0 is false */
}

/* A level-2 node and its sibling, perf's "parent - node" (without
 * max(0, ...) on the tables that write it so). */
static void put_pair(struct tma_result *out, struct tally *t, enum td_cat cat, enum td_cat sibling, double v,
		     double parent)
{
	put(out, t, cat, v);
	put(out, t, sibling, parent - v);
}

/* A node that cannot be below 0 or NaN: a count over a sum that is
 * above 0 (a CPU's counts are deltas checked to be >= 0, a domain's their
 * sums), or max0() of a value that is not NaN.  No check: this runs a
 * dozen times for every CPU and domain every interval. */
static void put_share(struct tma_result *out, struct tally *t, enum td_cat cat, double v)
{
	out->frac[cat] = v;
	t->set |= (td_catset)1 << cat;
}

/* finish() where a node is not a share. */
static int departures(struct tma_result *out, const struct tally *t)
{
	for (td_catset left = t->set; left; left &= left - 1) {
		int c = __builtin_ctz(left);
		double v = out->frac[c];
		enum tma_departure d;

		if (v >= 0)
			continue;
		if (isnan(v)) {
			if (td_cat[c].level == 1)
				return -ENODATA;
			d = TMA_DEP_NO_VALUE;
		} else {
			d = TMA_DEP_NEGATIVE;
			if (-v > out->departure_size)
				out->departure_size = -v;
		}
		out->departures |= 1u << d;
		out->frac[c] = 0;
	}
	return 0;
}

/* The departures: every node of @t that is not a share becomes 0.  The
 * common case inline, without a branch per node: every node a share (the
 * others are 0).  This runs for every CPU and domain every interval. */
static inline int finish(struct tma_result *out, const struct tally *t)
{
	out->cats = t->set;
	return t->bad ? departures(out, t) : 0;
}

/* perf's tma_memory_bound of Skylake and Ice Lake. */
static double memory_bound(const double *v, double retiring, double backend)
{
	double stalls = v[TD_EV_STALLS_MEM_ANY] + v[TD_EV_BOUND_ON_STORES];
	double den = v[TD_EV_STALLS_TOTAL] + v[TD_EV_PORTS_UTIL_1] +
		     retiring * v[TD_EV_PORTS_UTIL_2] + v[TD_EV_BOUND_ON_STORES];

	return divide(stalls, den) * backend;
}

static double branch_mispredicts(const double *v, double bad)
{
	return divide(v[TD_EV_BR_MISP_RETIRED], v[TD_EV_BR_MISP_RETIRED] + v[TD_EV_MACHINE_CLEARS]) * bad;
}

/* Whether @model's PERF_METRICS formulas refine the frontend by
 * INT_MISC.UOP_DROPPING (and Ice Lake's backend by its recoveries). */
static bool metrics_refine(const struct tma_model *model)
{
	return model->refine && model->formulas != UA_FORMULAS_METRICS && model->formulas != UA_FORMULAS_ARCH;
}

/* PERF_METRICS' formulas on the four level-1 counts (and level 2's), over
 * @slots; with the refinement (@refine), Ice Lake's (@icl), level 2
 * (@l2).  Inline, so that a model's formulas can be chosen once, each
 * branch on these a constant (tma_model_prepare). */
static inline __attribute__((always_inline)) int metrics_over(const struct tma_model *model, const double *v,
							     double slots, struct tma_result *out,
							     bool refine, bool icl, bool l2)
{
	double s = v[TD_EV_RETIRING] + v[TD_EV_BAD_SPEC] + v[TD_EV_FE_BOUND] + v[TD_EV_BE_BOUND];
	double ud = 0, rc = 0, ret, fe, be, bad;
	struct tally set = { 0, 0 };

	if (slots <= 0 || s <= 0)
		return -ENODATA;
	if (refine) {
		ud = v[TD_EV_UOP_DROPPING] / slots;
		if (icl)
			rc = model->width * v[TD_EV_RECOVERY_CYCLES] / slots;
	}
	out->slots = slots;
	ret = v[TD_EV_RETIRING] / s;
	fe = v[TD_EV_FE_BOUND] / s - ud;
	be = v[TD_EV_BE_BOUND] / s + rc;
	bad = max0_finite(1 - (fe + be + ret));
	/* ud and rc are counts over slots > 0: only fe can be below 0
	 * (bad is not NaN, its terms are finite). */
	put_share(out, &set, TD_CAT_RETIRING, ret);
	put_share(out, &set, TD_CAT_BAD_SPECULATION, bad);
	put(out, &set, TD_CAT_FRONTEND_BOUND, fe);
	put_share(out, &set, TD_CAT_BACKEND_BOUND, be);
	if (l2) {
		double heavy, brm, fl, mb;

		if (icl) {
			/* tma_microcode_sequencer = ((tma_retiring * SLOTS) /
			 * UOPS_ISSUED.ANY) * IDQ.MS_UOPS / SLOTS; divide()
			 * leaves NaN where a count is 0: checked. */
			heavy = divide(ret * slots, v[TD_EV_UOPS_ISSUED]) * v[TD_EV_IDQ_MS_UOPS] / slots +
				divide(ret * (v[TD_EV_DEC0] - v[TD_EV_DEC0_CYCLES]), v[TD_EV_IDQ_MITE_UOPS]);
			brm = branch_mispredicts(v, bad);
			fl = model->width * v[TD_EV_IDQ_0_UOPS_CYCLES] / slots - ud;
			mb = memory_bound(v, ret, be);
			put(out, &set, TD_CAT_HEAVY_OPERATIONS, heavy);
			put(out, &set, TD_CAT_LIGHT_OPERATIONS, max0(ret - heavy));
			put(out, &set, TD_CAT_BRANCH_MISPREDICTS, brm);
			put(out, &set, TD_CAT_MACHINE_CLEARS, max0(bad - brm));
			put(out, &set, TD_CAT_MEMORY_BOUND, mb);
			put(out, &set, TD_CAT_CORE_BOUND, max0(be - mb));
		} else {
			heavy = v[TD_EV_HEAVY_OPS] / s;
			brm = v[TD_EV_BR_MISPREDICT] / s;
			fl = v[TD_EV_FETCH_LAT] / s - ud;
			mb = v[TD_EV_MEM_BOUND] / s;
			/* Counts over s > 0 and their differences: finite. */
			put_share(out, &set, TD_CAT_HEAVY_OPERATIONS, heavy);
			put_share(out, &set, TD_CAT_LIGHT_OPERATIONS, max0_finite(ret - heavy));
			put_share(out, &set, TD_CAT_BRANCH_MISPREDICTS, brm);
			put_share(out, &set, TD_CAT_MACHINE_CLEARS, max0_finite(bad - brm));
			put_share(out, &set, TD_CAT_MEMORY_BOUND, mb);
			put_share(out, &set, TD_CAT_CORE_BOUND, max0_finite(be - mb));
		}
		/* Less ud: can be below 0.  fe and fl are finite, so the
		 * bandwidth is a share. */
		put(out, &set, TD_CAT_FETCH_LATENCY, fl);
		put_share(out, &set, TD_CAT_FETCH_BANDWIDTH, max0_finite(fe - fl));
	}
	return finish(out, &set);
}

static int perf_metrics(const struct tma_model *model, const double *v, struct tma_result *out)
{
	return metrics_over(model, v, v[TD_EV_SLOTS], out, metrics_refine(model),
			    model->formulas == UA_FORMULAS_ICL, model->level >= 2);
}

/* perf_metrics() for the settings of the most common models, chosen once
 * (tma_model_prepare): Golden Cove and later, level 2, with and without
 * the refinement (model perf and model hardware). */
static int perf_metrics_l2_refine(const struct tma_model *model, const double *v, struct tma_result *out)
{
	return metrics_over(model, v, v[TD_EV_SLOTS], out, true, false, true);
}

static int perf_metrics_l2(const struct tma_model *model, const double *v, struct tma_result *out)
{
	return metrics_over(model, v, v[TD_EV_SLOTS], out, false, false, true);
}

/* Skylake's CORE_CLKS and recovery term by how SMT threads are counted
 * (perf's #SMT_on and #core_wide). */
static void skl_clocks(const struct tma_model *model, const double *v, double *clks, double *rc)
{
	switch (model->mode) {
	case UA_MODE_SMT:
		*clks = v[TD_EV_CYCLES_ANY] / 2;
		*rc = v[TD_EV_RECOVERY_ANY] / 2;
		break;
	case UA_MODE_EBS:
		*clks = v[TD_EV_CYCLES] / 2 * (1 + divide(v[TD_EV_ONE_THREAD_ACTIVE], v[TD_EV_REF_XCLK]));
		*rc = v[TD_EV_RECOVERY_ANY] / 2;
		break;
	default:
		*clks = v[TD_EV_CYCLES];
		*rc = v[TD_EV_RECOVERY_THREAD];
		break;
	}
}

static int skylake(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double clks, rc, slots, w = model->width;
	double fe, ret, bad, be, issued = v[TD_EV_UOPS_ISSUED], retired = v[TD_EV_RETIRE_SLOTS];
	struct tally set = { 0, 0 };

	skl_clocks(model, v, &clks, &rc);
	slots = w * clks;
	if (!(slots > 0))
		return -ENODATA;
	out->slots = slots;
	fe = v[TD_EV_IDQ_NOT_DELIVERED] / slots;
	ret = retired / slots;
	bad = (issued - retired + w * rc) / slots;
	be = 1 - fe - (issued + w * rc) / slots;
	put(out, &set, TD_CAT_RETIRING, ret);
	put(out, &set, TD_CAT_BAD_SPECULATION, bad);
	put(out, &set, TD_CAT_FRONTEND_BOUND, fe);
	put(out, &set, TD_CAT_BACKEND_BOUND, be);
	if (model->level >= 2) {
		double heavy = (retired + v[TD_EV_MACRO_FUSED] - v[TD_EV_INST_RETIRED]) / slots;
		double brm = branch_mispredicts(v, bad), fl = w * v[TD_EV_IDQ_0_UOPS_CYCLES] / slots;
		double mb = memory_bound(v, ret, be);

		put_pair(out, &set, TD_CAT_HEAVY_OPERATIONS, TD_CAT_LIGHT_OPERATIONS, heavy, ret);
		put_pair(out, &set, TD_CAT_BRANCH_MISPREDICTS, TD_CAT_MACHINE_CLEARS, brm, bad);
		put_pair(out, &set, TD_CAT_FETCH_LATENCY, TD_CAT_FETCH_BANDWIDTH, fl, fe);
		put_pair(out, &set, TD_CAT_MEMORY_BOUND, TD_CAT_CORE_BOUND, mb, be);
	}
	return finish(out, &set);
}

static int gracemont(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double cycles = v[TD_EV_CYCLES], slots = model->width * cycles;
	double fe, be, ret, all;
	struct tally set = { 0, 0 };

	if (slots <= 0)
		return -ENODATA;
	out->slots = slots;
	fe = v[TD_EV_ATOM_FE_BOUND] / slots;
	be = v[TD_EV_ATOM_BE_BOUND] / slots;
	ret = v[TD_EV_ATOM_RETIRING] / slots;
	all = v[TD_EV_ATOM_FE_BOUND] + v[TD_EV_ATOM_BE_BOUND] + v[TD_EV_ATOM_RETIRING];
	put(out, &set, TD_CAT_RETIRING, ret);
	put(out, &set, TD_CAT_BAD_SPECULATION, (slots - all) / slots);
	put(out, &set, TD_CAT_FRONTEND_BOUND, fe);
	put(out, &set, TD_CAT_BACKEND_BOUND, be);
	if (model->level >= 2) {
		/* tma_store_bound = tma_mem_scheduler * (ST_BUF / ALL) */
		double store_bound = v[TD_EV_ATOM_MEM_SCHEDULER] / slots *
				     divide(v[TD_EV_MEM_SCHED_ST_BUF], v[TD_EV_MEM_SCHED_ALL]);
		double mb = min2(be, v[TD_EV_LD_HEAD_ANY_AT_RET] / cycles + store_bound);

		put(out, &set, TD_CAT_MS_UOPS, v[TD_EV_UOPS_RETIRED_MS] / slots);
		put(out, &set, TD_CAT_BASE, (v[TD_EV_ATOM_RETIRING] - v[TD_EV_UOPS_RETIRED_MS]) / slots);
		put(out, &set, TD_CAT_BRANCH_MISPREDICTS, v[TD_EV_ATOM_MISPREDICT] / slots);
		put(out, &set, TD_CAT_MACHINE_CLEARS, v[TD_EV_ATOM_MACHINE_CLEARS] / slots);
		put(out, &set, TD_CAT_FETCH_LATENCY, v[TD_EV_ATOM_FE_LATENCY] / slots);
		put(out, &set, TD_CAT_FETCH_BANDWIDTH, v[TD_EV_ATOM_FE_BANDWIDTH] / slots);
		put(out, &set, TD_CAT_MEMORY_BOUND, mb);
		put(out, &set, TD_CAT_CORE_BOUND, max0(be - mb));
	}
	return finish(out, &set);
}

static int crestmont(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double slots = model->width * v[TD_EV_CYCLES], be;
	struct tally set = { 0, 0 };

	if (slots <= 0)
		return -ENODATA;
	out->slots = slots;
	be = v[TD_EV_ATOM_BE_BOUND] / slots;
	put(out, &set, TD_CAT_RETIRING, v[TD_EV_ATOM_RETIRING] / slots);
	put(out, &set, TD_CAT_BAD_SPECULATION, v[TD_EV_ATOM_BAD_SPEC] / slots);
	put(out, &set, TD_CAT_FRONTEND_BOUND, v[TD_EV_ATOM_FE_BOUND] / slots);
	put(out, &set, TD_CAT_BACKEND_BOUND, be);
	if (model->level >= 2) {
		double core = v[TD_EV_ATOM_ALLOC_RESTRICTIONS] / slots;

		put(out, &set, TD_CAT_BRANCH_MISPREDICTS, v[TD_EV_ATOM_MISPREDICT] / slots);
		put(out, &set, TD_CAT_MACHINE_CLEARS, v[TD_EV_ATOM_MACHINE_CLEARS] / slots);
		put(out, &set, TD_CAT_IFETCH_LATENCY, v[TD_EV_ATOM_FE_LATENCY] / slots);
		put(out, &set, TD_CAT_IFETCH_BANDWIDTH, v[TD_EV_ATOM_FE_BANDWIDTH] / slots);
		put(out, &set, TD_CAT_CORE_BOUND, core);
		put(out, &set, TD_CAT_RESOURCE_BOUND, be - core);
	}
	return finish(out, &set);
}

static int zen(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double w = model->width, slots = w * v[TD_EV_CYCLES];
	double retired = v[TD_EV_ZEN_OPS_RETIRED], ret, bad, be;
	struct tally set = { 0, 0 };

	/* perf's d_ratio would print 0 for every category of a halted
	 * thread: no figures instead. */
	if (slots <= 0)
		return -ENODATA;
	out->slots = slots;
	ret = retired / slots;
	bad = (v[TD_EV_ZEN_OPS_DISPATCHED] - retired) / slots;
	be = v[TD_EV_ZEN_BACKEND_STALLS] / slots;
	put(out, &set, TD_CAT_RETIRING, ret);
	put(out, &set, TD_CAT_BAD_SPECULATION, bad);
	put(out, &set, TD_CAT_FRONTEND_BOUND, v[TD_EV_ZEN_NO_OPS_FRONTEND] / slots);
	put(out, &set, TD_CAT_BACKEND_BOUND, be);
	put(out, &set, TD_CAT_SMT_CONTENTION, v[TD_EV_ZEN_SMT_CONTENTION] / slots);
	if (model->level >= 2) {
		double misp = v[TD_EV_ZEN_BRANCH_MISP], resyncs = v[TD_EV_ZEN_RESYNCS];
		double latency = w * v[TD_EV_ZEN_FRONTEND_CYCLES];
		double ucode = d_ratio(v[TD_EV_ZEN_UCODE_OPS], retired);
		double memory = d_ratio(v[TD_EV_ZEN_LOAD_NOT_COMPLETE], v[TD_EV_ZEN_NOT_COMPLETE]);

		put(out, &set, TD_CAT_RETIRING_MICROCODE, ret * ucode);
		put(out, &set, TD_CAT_RETIRING_FASTPATH, ret * (1 - ucode));
		put(out, &set, TD_CAT_BAD_SPECULATION_MISPREDICTS, d_ratio(bad * misp, misp + resyncs));
		put(out, &set, TD_CAT_BAD_SPECULATION_PIPELINE_RESTARTS, d_ratio(bad * resyncs, misp + resyncs));
		put(out, &set, TD_CAT_FRONTEND_BOUND_LATENCY, latency / slots);
		put(out, &set, TD_CAT_FRONTEND_BOUND_BANDWIDTH,
		    (v[TD_EV_ZEN_NO_OPS_FRONTEND] - latency) / slots);
		put(out, &set, TD_CAT_BACKEND_BOUND_MEMORY, be * memory);
		put(out, &set, TD_CAT_BACKEND_BOUND_CPU, be * (1 - memory));
	}
	return finish(out, &set);
}

static int neoverse(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double cycles = v[TD_EV_CYCLES], slots = model->slots_per_cycle * cycles;
	double fix = model->stall_minus_cycles ? cycles : 0;
	double stall = v[TD_EV_ARM_STALL_SLOT] - fix, stall_fe = v[TD_EV_ARM_STALL_SLOT_FRONTEND] - fix;
	double r, b, be, ret;
	struct tally set = { 0, 0 };

	if (!(slots > 0))
		return -ENODATA;
	out->slots = slots;
	r = divide(v[TD_EV_ARM_OP_RETIRED], v[TD_EV_ARM_OP_SPEC]);
	b = v[TD_EV_ARM_BR_MIS_PRED] / cycles;
	be = v[TD_EV_ARM_STALL_SLOT_BACKEND] / slots;
	ret = r * (1 - stall / slots);
	put(out, &set, TD_CAT_RETIRING, ret);
	if (model->formulas == UA_FORMULAS_NEOVERSE_V3N3) {
		/* perf 7.2's neoverse-v3/n3 metrics.json: the width is the
		 * core's constant (10, 5), the flush recovery cycles move
		 * from frontend to bad speculation. */
		double wide = model->width * cycles, flush = v[TD_EV_ARM_STALL_FRONTEND_FLUSH] / cycles;

		put(out, &set, TD_CAT_BAD_SPECULATION, (1 - stall / wide) * (1 - r) + flush);
		put(out, &set, TD_CAT_FRONTEND_BOUND, stall_fe / wide - flush);
		put(out, &set, TD_CAT_BACKEND_BOUND, be);
	} else if (model->formulas == UA_FORMULAS_NEOVERSE_V1) {
		double wide = model->width * cycles; /* V1's own 8 slots per cycle */

		put(out, &set, TD_CAT_BAD_SPECULATION, (1 - r) * (1 - stall / wide) + 4 * b);
		put(out, &set, TD_CAT_FRONTEND_BOUND, stall_fe / wide - 4 * b);
		put(out, &set, TD_CAT_BACKEND_BOUND, be);
	} else {
		put(out, &set, TD_CAT_BAD_SPECULATION, (1 - r) * (1 - stall / slots) + 4 * b);
		put(out, &set, TD_CAT_FRONTEND_BOUND, stall_fe / slots - b);
		put(out, &set, TD_CAT_BACKEND_BOUND, be - 3 * b);
	}
	return finish(out, &set);
}

/* AmpereOne and AmpereOne M (perf 7.2's ampere/ampereone(x)/metrics.json
 * with sbsa.json's backend_bound): retired_fraction and
 * slots_lost_misspeculation_fraction over #slots x CPU_CYCLES, and
 * frontend bound what the three others leave.  Level 2 (TopdownL2): the
 * branch mispredictions' share of the flushes (divide(): perf has no value
 * without a flush), the frontend's stall cycles beyond those its stalled
 * slots account for, the backend's cache and TLB stall cycles; each
 * sibling what its parent leaves.  Stall cycles over cycles are not a
 * share of the slots, so any of them may be below 0 (perf prints it so). */
static int ampereone(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double cycles = v[TD_EV_CYCLES], slots = model->slots_per_cycle * cycles;
	double ret, bad, be, fe;
	struct tally set = { 0, 0 };

	if (!(slots > 0))
		return -ENODATA;
	out->slots = slots;
	ret = v[TD_EV_ARM_OP_RETIRED] / slots;
	bad = (v[TD_EV_ARM_OP_SPEC] - v[TD_EV_ARM_OP_RETIRED]) / slots;
	be = v[TD_EV_ARM_STALL_SLOT_BACKEND] / slots;
	fe = 1 - (ret + bad + be);
	put(out, &set, TD_CAT_RETIRING, ret);
	put(out, &set, TD_CAT_BAD_SPECULATION, bad);
	put(out, &set, TD_CAT_BACKEND_BOUND, be);
	put(out, &set, TD_CAT_FRONTEND_BOUND, fe);
	if (model->level >= 2) {
		double brm = divide(v[TD_EV_ARM_BR_MIS_PRED_RETIRED], v[TD_EV_ARM_GPC_FLUSH]) * bad;
		double w = model->slots_per_cycle;
		double lat = (v[TD_EV_ARM_STALL_FRONTEND] - (v[TD_EV_ARM_STALL_SLOT_FRONTEND] - fe * cycles * w) / w) /
			     cycles;
		double mem = (v[TD_EV_ARM_STALL_BACKEND_TLB] + v[TD_EV_ARM_STALL_BACKEND_CACHE]) / cycles;

		put_pair(out, &set, TD_CAT_BRANCH_MISPREDICTS, TD_CAT_MACHINE_CLEARS, brm, bad);
		put_pair(out, &set, TD_CAT_FETCH_LATENCY, TD_CAT_FETCH_BANDWIDTH, lat, fe);
		put_pair(out, &set, TD_CAT_MEMORY_BOUND, TD_CAT_CORE_BOUND, mem, be);
	}
	return finish(out, &set);
}

/* NVIDIA Olympus (perf 7.2's nvidia/t410/metrics.json): the slots are an
 * event of their own, CPU_SLOT; frontend bound leaves out the slots lost
 * to mispredictions, which bad speculation, the rest, takes. */
static int nvidia_t410(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double slots = v[TD_EV_ARM_CPU_SLOT];
	double fe, be, ret;
	struct tally set = { 0, 0 };

	(void)model;
	if (!(slots > 0))
		return -ENODATA;
	out->slots = slots;
	fe = v[TD_EV_ARM_STALL_SLOT_FE_NOMISPRED] / slots;
	be = v[TD_EV_ARM_STALL_SLOT_BACKEND] / slots;
	ret = divide(v[TD_EV_ARM_OP_RETIRED], v[TD_EV_ARM_OP_SPEC]) * (1 - v[TD_EV_ARM_STALL_SLOT] / slots);
	put(out, &set, TD_CAT_FRONTEND_BOUND, fe);
	put(out, &set, TD_CAT_BACKEND_BOUND, be);
	put(out, &set, TD_CAT_RETIRING, ret);
	put(out, &set, TD_CAT_BAD_SPECULATION, 1 - (fe + ret + be));
	return finish(out, &set);
}

/* Level 1 of Intel's alternate TMA formulas (PerfSpect's *_alt_tma_metrics.json,
 * for a core without PERF_METRICS, a virtual machine's): every category
 * over TOPDOWN.SLOTS_P.  Ice Lake's bad speculation also leaves out width
 * slots per clear (INT_MISC.CLEARS_COUNT), which its backend bound's
 * children count and backend bound itself does not; on Golden Cove that
 * event is not counted, and be_clears is backend bound. */
struct alt_l1 {
	double slots, fe, be, be_clears, ret, bad;
};

static int alt_level1(const struct tma_model *model, const double *v, struct tma_result *out,
		      struct tally *set, struct alt_l1 *l1)
{
	l1->slots = v[TD_EV_SLOTS_P];
	if (l1->slots <= 0)
		return -ENODATA;
	out->slots = l1->slots;
	l1->fe = (v[TD_EV_IDQ_NOT_DELIVERED] - v[TD_EV_UOP_DROPPING]) / l1->slots;
	l1->be = v[TD_EV_BE_BOUND_SLOTS] / l1->slots;
	l1->be_clears = (v[TD_EV_BE_BOUND_SLOTS] + model->width * v[TD_EV_RECOVERY_CYCLES]) / l1->slots;
	l1->ret = v[TD_EV_UOPS_RETIRED_SLOTS] / l1->slots;
	l1->bad = max0(1 - (l1->fe + l1->be_clears + l1->ret));
	put(out, set, TD_CAT_RETIRING, l1->ret);
	put(out, set, TD_CAT_BAD_SPECULATION, l1->bad);
	put(out, set, TD_CAT_FRONTEND_BOUND, l1->fe);
	put(out, set, TD_CAT_BACKEND_BOUND, l1->be);
	if (model->level >= 2) {
		/* The cycles with no uop delivered count width slots. */
		double lat = (model->width * v[TD_EV_IDQ_0_UOPS_CYCLES] - v[TD_EV_UOP_DROPPING]) / l1->slots;

		put(out, set, TD_CAT_FETCH_LATENCY, lat);
		put(out, set, TD_CAT_FETCH_BANDWIDTH, max0(l1->fe - lat));
	}
	return 0;
}

/* The level-2 nodes under bad speculation, backend bound and retiring,
 * from their three measures. */
static void alt_level2(struct tma_result *out, struct tally *set, const struct alt_l1 *l1, double mis,
		       double mem, double heavy)
{
	put(out, set, TD_CAT_HEAVY_OPERATIONS, heavy);
	put(out, set, TD_CAT_LIGHT_OPERATIONS, max0(l1->ret - heavy));
	put(out, set, TD_CAT_BRANCH_MISPREDICTS, mis);
	put(out, set, TD_CAT_MACHINE_CLEARS, max0(l1->bad - mis));
	put(out, set, TD_CAT_MEMORY_BOUND, mem);
	put(out, set, TD_CAT_CORE_BOUND, max0(l1->be_clears - mem));
}

/* Golden Cove (spr_alt_tma_metrics.json): each level-2 node has its own
 * slots event. */
static int glc_alt(const struct tma_model *model, const double *v, struct tma_result *out)
{
	struct alt_l1 l1;
	struct tally set = { 0, 0 };

	if (alt_level1(model, v, out, &set, &l1) < 0)
		return -ENODATA;
	if (model->level >= 2)
		alt_level2(out, &set, &l1, v[TD_EV_BR_MISPREDICT_SLOTS] / l1.slots,
			   v[TD_EV_MEM_BOUND_SLOTS] / l1.slots, v[TD_EV_UOPS_RETIRED_HEAVY] / l1.slots);
	return finish(out, &set);
}

/* Ice Lake (icx_alt_tma_metrics.json): level 2 from Ice Lake's stall,
 * port, branch and decoder events, as its PERF_METRICS formulas. */
static int icl_alt(const struct tma_model *model, const double *v, struct tma_result *out)
{
	struct alt_l1 l1;
	struct tally set = { 0, 0 };

	if (alt_level1(model, v, out, &set, &l1) < 0)
		return -ENODATA;
	if (model->level >= 2) {
		double mis = divide(v[TD_EV_BR_MISP_RETIRED], v[TD_EV_BR_MISP_RETIRED] + v[TD_EV_MACHINE_CLEARS]) *
			     l1.bad;
		double mem = divide(v[TD_EV_STALLS_MEM_ANY] + v[TD_EV_BOUND_ON_STORES],
				    v[TD_EV_STALLS_TOTAL] + (v[TD_EV_PORTS_UTIL_1] + l1.ret * v[TD_EV_PORTS_UTIL_2]) +
					    v[TD_EV_BOUND_ON_STORES]) * l1.be_clears;
		double heavy = divide(v[TD_EV_UOPS_RETIRED_SLOTS], v[TD_EV_UOPS_ISSUED]) * v[TD_EV_IDQ_MS_UOPS] / l1.slots +
			       l1.ret * divide(v[TD_EV_DEC0] - v[TD_EV_DEC0_CYCLES], v[TD_EV_IDQ_MITE_UOPS]);

		alt_level2(out, &set, &l1, mis, mem, heavy);
	}
	return finish(out, &set);
}

/* perf's PERF_METRICS level 1 (Sapphire Rapids' expressions, without the
 * model's refinement term) over the architectural events' counts: the four
 * partition the slots, so their sum is the slots.  The tables give these
 * entries level 1 only. */
static int arch_events(const struct tma_model *model, const double *v, struct tma_result *out)
{
	assert(model->level <= 1);
	return metrics_over(model, v, v[TD_EV_RETIRING] + v[TD_EV_BAD_SPEC] + v[TD_EV_FE_BOUND] +
				      v[TD_EV_BE_BOUND], out, false, false, false);
}

/* One row per set of formulas (enum ua_formulas): its arithmetic, and
 * whether its counts are PERF_METRICS' (slots and the topdown-* events
 * share fixed counter 3, which the planner must know).  A new family
 * whose formulas are new is one row here, its function above and its
 * uarch table entry. */
static const struct {
	int (*compute)(const struct tma_model *model, const double *v, struct tma_result *out);
	bool perf_metrics;
} formulas[] = {
	[UA_FORMULAS_GLC] = { perf_metrics, true },
	[UA_FORMULAS_ICL] = { perf_metrics, true },
	[UA_FORMULAS_METRICS] = { perf_metrics, true },
	[UA_FORMULAS_SKL] = { skylake, false },
	[UA_FORMULAS_GRT] = { gracemont, false },
	[UA_FORMULAS_CMT] = { crestmont, false },
	[UA_FORMULAS_ZEN] = { zen, false },
	[UA_FORMULAS_NEOVERSE_V1] = { neoverse, false },
	[UA_FORMULAS_NEOVERSE_N2V2] = { neoverse, false },
	[UA_FORMULAS_NEOVERSE_V3N3] = { neoverse, false },
	[UA_FORMULAS_AMPEREONE] = { ampereone, false },
	[UA_FORMULAS_NVIDIA_T410] = { nvidia_t410, false },
	[UA_FORMULAS_GLC_ALT] = { glc_alt, false },
	[UA_FORMULAS_ICL_ALT] = { icl_alt, false },
	[UA_FORMULAS_ARCH] = { arch_events, false },
};
TABLE_COVERS(formulas, UA_FORMULAS_COUNT);

bool tma_uses_perf_metrics(enum ua_formulas f)
{
	return (unsigned)f < UA_FORMULAS_COUNT && formulas[f].perf_metrics;
}

void tma_model_prepare(struct tma_model *model)
{
	model->eval = (unsigned)model->formulas < UA_FORMULAS_COUNT ? formulas[model->formulas].compute : NULL;
	if (model->eval == perf_metrics && model->formulas != UA_FORMULAS_ICL && model->level >= 2)
		model->eval = metrics_refine(model) ? perf_metrics_l2_refine : perf_metrics_l2;
}

int tma_evaluate_unprepared(const struct tma_model *model, const struct tma_input *in, struct tma_result *out)
{
	out->cats = 0;
	out->slots = 0;
	out->departures = 0;
	out->departure_size = 0;
	if ((unsigned)model->formulas >= UA_FORMULAS_COUNT)
		return -EINVAL;
	return formulas[model->formulas].compute(model, in->v, out);
}

int tma_compute(const struct tma_model *model, const struct tma_input *in,
		struct tma_result *out)
{
	/* Stores, not memset(): GCC makes that a rep stos, counted an
	 * instruction per word. */
	VEC_ZERO(out->frac, TD_CAT_COUNT);
	return tma_evaluate(model, in, out);
}

const char *tma_departure_name(enum tma_departure d)
{
	static const char *const names[] = {
		[TMA_DEP_NEGATIVE] = "negative",
		[TMA_DEP_NO_VALUE] = "no_value",
	};
	TABLE_COVERS(names, TMA_DEP_COUNT);

	return (unsigned)d < TMA_DEP_COUNT ? names[d] : "?";
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
