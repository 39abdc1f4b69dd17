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
 * Beyond perf, so that slot counters partition the slots exactly (the L1
 * categories sum to 1 and every L2 pair sums to its parent):
 *   - PERF_METRICS: frontend_bound and fetch_latency are clamped at 0 (the
 *     refinement term can exceed the 8-bit metric); on Ice Lake, when the
 *     recovery-cycles term pushes frontend + backend + retiring above 1,
 *     backend_bound is capped at 1 - retiring - frontend (perf would print
 *     more than 100% in total);
 *   - general-purpose formulas: a negative level-1 category (perf prints
 *     one when counts disagree) is 0, and the four (five on AMD) are
 *     scaled to sum to 1 (on Crestmont, AMD and Arm, whose categories are
 *     measured independently, always);
 *   - the measured L2 child is clamped to [0, parent] before the other
 *     child is taken as parent - child (8-bit rounding can make
 *     topdown-heavy-ops exceed topdown-retiring by 1/255; independent
 *     events can disagree with their parent); a ratio whose denominator is
 *     0 (no branch mispredicts or machine clears, no uops from the legacy
 *     decoders) makes its child 0.
 * These only act where perf's output is itself inconsistent. */
#include "tma.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static double ratio(double num, double den)
{
	return den > 0 ? num / den : 0;
}

/* Level 1 of the general-purpose formulas: negatives to 0, then scaled to
 * a sum of 1.  @smt is AMD's fifth category (0 elsewhere). */
static void level1_smt(double *f, double ret, double bad, double fe, double be, double smt)
{
	double sum;

	ret = ret > 0 ? ret : 0;
	bad = bad > 0 ? bad : 0;
	fe = fe > 0 ? fe : 0;
	be = be > 0 ? be : 0;
	smt = smt > 0 ? smt : 0;
	sum = ret + bad + fe + be + smt;
	if (sum <= 0) {
		/* Nothing attributed: the slots were all backend stalls as far
		 * as anything can tell; keep the sum at 1. */
		be = sum = 1;
	}
	f[TD_CAT_RETIRING] = ret / sum;
	f[TD_CAT_BAD_SPECULATION] = bad / sum;
	f[TD_CAT_FRONTEND_BOUND] = fe / sum;
	f[TD_CAT_BACKEND_BOUND] = be / sum;
	f[TD_CAT_SMT_CONTENTION] = smt / sum;
}

static void level1(double *f, double ret, double bad, double fe, double be)
{
	level1_smt(f, ret, bad, fe, be, 0);
}

/* A level-2 pair: @child measured, @other = parent - child. */
static void split(double *f, enum td_cat parent, enum td_cat child, enum td_cat other, double value)
{
	double p = f[parent], c = clamp(value, 0, p);

	f[child] = c;
	f[other] = p - c;
}

/* perf's tma_memory_bound of Skylake and Ice Lake. */
static double memory_bound(const double *v, double retiring, double backend)
{
	double stalls = v[TD_EV_STALLS_MEM_ANY] + v[TD_EV_BOUND_ON_STORES];
	double den = v[TD_EV_STALLS_TOTAL] + v[TD_EV_PORTS_UTIL_1] +
		     retiring * v[TD_EV_PORTS_UTIL_2] + v[TD_EV_BOUND_ON_STORES];

	return ratio(stalls, den) * backend;
}

static double branch_mispredicts(const double *v, double bad)
{
	return ratio(v[TD_EV_BR_MISP_RETIRED], v[TD_EV_BR_MISP_RETIRED] + v[TD_EV_MACHINE_CLEARS]) * bad;
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
			rc = model->width * v[TD_EV_RECOVERY_CYCLES] / slots;
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

	if (model->formulas == UA_FORMULAS_ICL) {
		double ms = ratio(ret * v[TD_EV_IDQ_MS_UOPS], v[TD_EV_UOPS_ISSUED]);
		double dec = ratio(v[TD_EV_DEC0] - v[TD_EV_DEC0_CYCLES], v[TD_EV_IDQ_MITE_UOPS]);

		split(f, TD_CAT_RETIRING, TD_CAT_HEAVY_OPERATIONS, TD_CAT_LIGHT_OPERATIONS, ms + ret * dec);
		split(f, TD_CAT_BAD_SPECULATION, TD_CAT_BRANCH_MISPREDICTS, TD_CAT_MACHINE_CLEARS,
		      branch_mispredicts(v, bad));
		split(f, TD_CAT_FRONTEND_BOUND, TD_CAT_FETCH_LATENCY, TD_CAT_FETCH_BANDWIDTH,
		      model->width * v[TD_EV_IDQ_0_UOPS_CYCLES] / slots - ud);
		split(f, TD_CAT_BACKEND_BOUND, TD_CAT_MEMORY_BOUND, TD_CAT_CORE_BOUND,
		      memory_bound(v, ret, be));
		return 0;
	}
	split(f, TD_CAT_RETIRING, TD_CAT_HEAVY_OPERATIONS, TD_CAT_LIGHT_OPERATIONS, v[TD_EV_HEAVY_OPS] / s);
	split(f, TD_CAT_BAD_SPECULATION, TD_CAT_BRANCH_MISPREDICTS, TD_CAT_MACHINE_CLEARS,
	      v[TD_EV_BR_MISPREDICT] / s);
	split(f, TD_CAT_FRONTEND_BOUND, TD_CAT_FETCH_LATENCY, TD_CAT_FETCH_BANDWIDTH,
	      v[TD_EV_FETCH_LAT] / s - ud);
	split(f, TD_CAT_BACKEND_BOUND, TD_CAT_MEMORY_BOUND, TD_CAT_CORE_BOUND, v[TD_EV_MEM_BOUND] / s);
	return 0;
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
		*clks = v[TD_EV_CYCLES] / 2 * (1 + ratio(v[TD_EV_ONE_THREAD_ACTIVE], v[TD_EV_REF_XCLK]));
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
	double clks, rc, slots, w = model->width, *f = out->frac;
	double fe, ret, issued = v[TD_EV_UOPS_ISSUED], retired = v[TD_EV_RETIRE_SLOTS];

	skl_clocks(model, v, &clks, &rc);
	slots = w * clks;
	if (slots <= 0)
		return -ENODATA;
	out->slots = slots;
	fe = v[TD_EV_IDQ_NOT_DELIVERED] / slots;
	ret = retired / slots;
	level1(f, ret, (issued - retired + w * rc) / slots, fe, 1 - fe - (issued + w * rc) / slots);
	if (model->level < 2)
		return 0;
	/* memory_bound weighs port utilisation by perf's own retiring (ret),
	 * and scales topdownd's backend_bound. */
	split(f, TD_CAT_RETIRING, TD_CAT_HEAVY_OPERATIONS, TD_CAT_LIGHT_OPERATIONS,
	      (retired + v[TD_EV_MACRO_FUSED] - v[TD_EV_INST_RETIRED]) / slots);
	split(f, TD_CAT_BAD_SPECULATION, TD_CAT_BRANCH_MISPREDICTS, TD_CAT_MACHINE_CLEARS,
	      branch_mispredicts(v, f[TD_CAT_BAD_SPECULATION]));
	split(f, TD_CAT_FRONTEND_BOUND, TD_CAT_FETCH_LATENCY, TD_CAT_FETCH_BANDWIDTH,
	      w * v[TD_EV_IDQ_0_UOPS_CYCLES] / slots);
	split(f, TD_CAT_BACKEND_BOUND, TD_CAT_MEMORY_BOUND, TD_CAT_CORE_BOUND,
	      memory_bound(v, ret, f[TD_CAT_BACKEND_BOUND]));
	return 0;
}

static int gracemont(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double cycles = v[TD_EV_CYCLES], slots = model->width * cycles, *f = out->frac;
	double fe, be, ret, store_bound;

	if (slots <= 0)
		return -ENODATA;
	out->slots = slots;
	fe = v[TD_EV_ATOM_FE_BOUND] / slots;
	be = v[TD_EV_ATOM_BE_BOUND] / slots;
	ret = v[TD_EV_ATOM_RETIRING] / slots;
	level1(f, ret, 1 - (fe + be + ret), fe, be);
	if (model->level < 2)
		return 0;
	split(f, TD_CAT_RETIRING, TD_CAT_MS_UOPS, TD_CAT_BASE, v[TD_EV_UOPS_RETIRED_MS] / slots);
	split(f, TD_CAT_BAD_SPECULATION, TD_CAT_BRANCH_MISPREDICTS, TD_CAT_MACHINE_CLEARS,
	      v[TD_EV_ATOM_MISPREDICT] / slots);
	split(f, TD_CAT_FRONTEND_BOUND, TD_CAT_FETCH_LATENCY, TD_CAT_FETCH_BANDWIDTH,
	      v[TD_EV_ATOM_FE_LATENCY] / slots);
	store_bound = v[TD_EV_ATOM_MEM_SCHEDULER] / slots *
		      ratio(v[TD_EV_MEM_SCHED_ST_BUF], v[TD_EV_MEM_SCHED_ALL]);
	split(f, TD_CAT_BACKEND_BOUND, TD_CAT_MEMORY_BOUND, TD_CAT_CORE_BOUND,
	      v[TD_EV_LD_HEAD_ANY_AT_RET] / cycles + store_bound);
	return 0;
}

static int crestmont(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double slots = model->width * v[TD_EV_CYCLES], *f = out->frac;

	if (slots <= 0)
		return -ENODATA;
	out->slots = slots;
	level1(f, v[TD_EV_ATOM_RETIRING] / slots, v[TD_EV_ATOM_BAD_SPEC] / slots,
	       v[TD_EV_ATOM_FE_BOUND] / slots, v[TD_EV_ATOM_BE_BOUND] / slots);
	if (model->level < 2)
		return 0;
	split(f, TD_CAT_BAD_SPECULATION, TD_CAT_BRANCH_MISPREDICTS, TD_CAT_MACHINE_CLEARS,
	      v[TD_EV_ATOM_MISPREDICT] / slots);
	split(f, TD_CAT_FRONTEND_BOUND, TD_CAT_IFETCH_LATENCY, TD_CAT_IFETCH_BANDWIDTH,
	      v[TD_EV_ATOM_FE_LATENCY] / slots);
	split(f, TD_CAT_BACKEND_BOUND, TD_CAT_CORE_BOUND, TD_CAT_RESOURCE_BOUND,
	      v[TD_EV_ATOM_ALLOC_RESTRICTIONS] / slots);
	return 0;
}

static int zen(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double w = model->width, slots = w * v[TD_EV_CYCLES], *f = out->frac;
	double retired = v[TD_EV_ZEN_OPS_RETIRED];

	if (slots <= 0)
		return -ENODATA;
	out->slots = slots;
	level1_smt(f, retired / slots, (v[TD_EV_ZEN_OPS_DISPATCHED] - retired) / slots,
		   v[TD_EV_ZEN_NO_OPS_FRONTEND] / slots, v[TD_EV_ZEN_BACKEND_STALLS] / slots,
		   v[TD_EV_ZEN_SMT_CONTENTION] / slots);
	if (model->level < 2)
		return 0;
	/* perf's children are ratios of events times perf's parent: here
	 * times topdownd's (the same unless level 1 was rescaled). */
	split(f, TD_CAT_RETIRING, TD_CAT_RETIRING_MICROCODE, TD_CAT_RETIRING_FASTPATH,
	      f[TD_CAT_RETIRING] * ratio(v[TD_EV_ZEN_UCODE_OPS], retired));
	split(f, TD_CAT_BAD_SPECULATION, TD_CAT_BAD_SPECULATION_MISPREDICTS,
	      TD_CAT_BAD_SPECULATION_PIPELINE_RESTARTS,
	      f[TD_CAT_BAD_SPECULATION] *
		      ratio(v[TD_EV_ZEN_BRANCH_MISP], v[TD_EV_ZEN_BRANCH_MISP] + v[TD_EV_ZEN_RESYNCS]));
	split(f, TD_CAT_FRONTEND_BOUND, TD_CAT_FRONTEND_BOUND_LATENCY, TD_CAT_FRONTEND_BOUND_BANDWIDTH,
	      w * v[TD_EV_ZEN_FRONTEND_CYCLES] / slots);
	split(f, TD_CAT_BACKEND_BOUND, TD_CAT_BACKEND_BOUND_MEMORY, TD_CAT_BACKEND_BOUND_CPU,
	      f[TD_CAT_BACKEND_BOUND] *
		      ratio(v[TD_EV_ZEN_LOAD_NOT_COMPLETE], v[TD_EV_ZEN_NOT_COMPLETE]));
	return 0;
}

static int neoverse(const struct tma_model *model, const double *v, struct tma_result *out)
{
	double cycles = v[TD_EV_CYCLES], slots = model->slots_per_cycle * cycles;
	double fix = model->stall_minus_cycles ? cycles : 0;
	double stall = v[TD_EV_ARM_STALL_SLOT] - fix, stall_fe = v[TD_EV_ARM_STALL_SLOT_FRONTEND] - fix;
	double r = ratio(v[TD_EV_ARM_OP_RETIRED], v[TD_EV_ARM_OP_SPEC]);
	double b = ratio(v[TD_EV_ARM_BR_MIS_PRED], cycles);
	double be = ratio(v[TD_EV_ARM_STALL_SLOT_BACKEND], slots), ret = r * (1 - ratio(stall, slots));
	double *f = out->frac;

	if (slots <= 0)
		return -ENODATA;
	out->slots = slots;
	if (model->formulas == UA_FORMULAS_NEOVERSE_V1) {
		double wide = model->width * cycles; /* V1's own 8 slots per cycle */

		level1(f, ret, (1 - r) * (1 - ratio(stall, wide)) + 4 * b, ratio(stall_fe, wide) - 4 * b, be);
		return 0;
	}
	level1(f, ret, (1 - r) * (1 - ratio(stall, slots)) + 4 * b, ratio(stall_fe, slots) - b, be - 3 * b);
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
	case UA_FORMULAS_SKL:
		return skylake(model, in->v, out);
	case UA_FORMULAS_GRT:
		return gracemont(model, in->v, out);
	case UA_FORMULAS_CMT:
		return crestmont(model, in->v, out);
	case UA_FORMULAS_ZEN:
		return zen(model, in->v, out);
	case UA_FORMULAS_NEOVERSE_V1:
	case UA_FORMULAS_NEOVERSE_N2V2:
		return neoverse(model, in->v, out);
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
