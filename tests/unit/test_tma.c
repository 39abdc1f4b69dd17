/* SPDX-License-Identifier: MIT */
/* Unit tests of tma: perf's TopDown formulas on hand-computed vectors,
 * the two departures from perf (a negative node is 0, a level-2 node perf
 * has no value for is 0) with their flags and sizes, properties over many
 * pseudo-random inputs, and the bottleneck. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan.h"
#include "tma.h"
#include "uarch.h"

#define assert_near(a, b, eps)                                                        \
	do {                                                                          \
		double a_ = (a), b_ = (b);                                            \
		if (!(fabs(a_ - b_) <= (eps)))                                        \
			fail_msg("%s = %.17g, expected %.17g (+-%g)", #a, a_, b_,     \
				 (double)(eps));                                      \
	} while (0)

static const struct tma_model SPR_HW = { .formulas = UA_FORMULAS_GLC, .refine = false, .level = 2, .width = 0 };
static const struct tma_model SPR_PERF = { .formulas = UA_FORMULAS_GLC, .refine = true, .level = 2, .width = 0 };
static const struct tma_model ICL_HW = { .formulas = UA_FORMULAS_ICL, .refine = false, .level = 2, .width = 5 };
static const struct tma_model ICL_PERF = { .formulas = UA_FORMULAS_ICL, .refine = true, .level = 2, .width = 5 };

/* What the kernel adds to a metric event on a read: slots * byte / 0xff,
 * in u64 with truncation (reference page, "Reading"). */
static uint64_t kmetric(uint64_t slots, unsigned byte)
{
	return slots * byte / 0xff;
}

/* Deltas of one interval from a PERF_METRICS register. */
static struct tma_input from_bytes(uint64_t slots, unsigned ret, unsigned bad, unsigned fe,
				   unsigned be, unsigned heavy, unsigned brm, unsigned fl,
				   unsigned mb)
{
	struct tma_input in;

	memset(&in, 0, sizeof(in));
	in.v[TD_EV_SLOTS] = slots;
	in.v[TD_EV_RETIRING] = kmetric(slots, ret);
	in.v[TD_EV_BAD_SPEC] = kmetric(slots, bad);
	in.v[TD_EV_FE_BOUND] = kmetric(slots, fe);
	in.v[TD_EV_BE_BOUND] = kmetric(slots, be);
	in.v[TD_EV_HEAVY_OPS] = kmetric(slots, heavy);
	in.v[TD_EV_BR_MISPREDICT] = kmetric(slots, brm);
	in.v[TD_EV_FETCH_LAT] = kmetric(slots, fl);
	in.v[TD_EV_MEM_BOUND] = kmetric(slots, mb);
	return in;
}

static void compute_ok(const struct tma_model *m, const struct tma_input *in,
		       struct tma_result *out)
{
	int r;

	memset(out, 0xff, sizeof(*out)); /* NaN everywhere: all must be written */
	r = tma_compute(m, in, out);
	if (r != 0)
		fail_msg("tma_compute = %d, expected 0", r);
}

/* ---- the seed document's decoding ---- */

/* PERF_METRICS bytes: retiring 0x3b (59), bad_spec 0x1a (26), fe 0x4c (76),
 * be 0x5e (94): 59 + 26 + 76 + 94 = 255 = 0xff.  L2 bytes: heavy 0x10 (16)
 * <= 59, br_mispredict 0x14 (20) <= 26, fetch_lat 0x30 (48) <= 76,
 * mem_bound 0x40 (64) <= 94.  SLOTS = 1,000,000,000.
 *
 * Kernel deltas (1e9 * byte / 255, truncated):
 *   ret   = 59e9/255 = 231372549.019..  -> 231372549
 *   bad   = 26e9/255 = 101960784.313..  -> 101960784
 *   fe    = 76e9/255 = 298039215.686..  -> 298039215
 *   be    = 94e9/255 = 368627450.980..  -> 368627450
 *   S     = 999999998 (2 slots lost to truncation)
 *   heavy = 16e9/255 =  62745098.039..  ->  62745098
 *   brm   = 20e9/255 =  78431372.549..  ->  78431372
 *   fl    = 48e9/255 = 188235294.117..  -> 188235294
 *   mb    = 64e9/255 = 250980392.156..  -> 250980392
 * Ratios, S = 999999998:
 *   retiring 0.2313725494..  (59/255 = 0.2313725490..)
 *   bad      0.1019607843..  (26/255 = 0.1019607843..)
 *   frontend 0.2980392158..  (76/255 = 0.2980392156..)
 *   backend  0.3686274514..  (94/255 = 0.3686274509..)
 *   heavy 0.0627450982, light = 0.2313725494 - 0.0627450982 = 0.1686274512
 *   brm   0.0784313721, clears = 0.1019607843 - 0.0784313721 = 0.0235294122
 *   fl    0.1882352944, bw     = 0.2980392158 - 0.1882352944 = 0.1098039214
 *   mb    0.2509803927, core   = 0.3686274514 - 0.2509803927 = 0.1176470587 */
static void test_seed_decoding(void **state)
{
	struct tma_input in = from_bytes(1000000000, 0x3b, 0x1a, 0x4c, 0x5e, 0x10, 0x14, 0x30, 0x40);
	struct tma_result r;
	const double S = 999999998.0;

	(void)state;
	assert_int_equal(in.v[TD_EV_RETIRING], 231372549);
	assert_int_equal(in.v[TD_EV_BAD_SPEC], 101960784);
	assert_int_equal(in.v[TD_EV_FE_BOUND], 298039215);
	assert_int_equal(in.v[TD_EV_BE_BOUND], 368627450);
	assert_int_equal(in.v[TD_EV_HEAVY_OPS], 62745098);
	assert_int_equal(in.v[TD_EV_BR_MISPREDICT], 78431372);
	assert_int_equal(in.v[TD_EV_FETCH_LAT], 188235294);
	assert_int_equal(in.v[TD_EV_MEM_BOUND], 250980392);

	compute_ok(&SPR_HW, &in, &r);
	/* L1 = byte / 255 (the truncation moves them by < 1e-8). */
	assert_near(r.frac[TD_CAT_RETIRING], 59.0 / 255, 1e-6);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 26.0 / 255, 1e-6);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 76.0 / 255, 1e-6);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 94.0 / 255, 1e-6);
	/* And exactly the delta / S the formulas define. */
	assert_near(r.frac[TD_CAT_RETIRING], 231372549 / S, 1e-12);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 298039215 / S, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 368627450 / S, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 101960784 / S, 1e-12);
	assert_near(r.frac[TD_CAT_RETIRING], 0.2313725494, 1e-9);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.1019607843, 1e-9);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.2980392158, 1e-9);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.3686274514, 1e-9);

	/* L2 measured children: byte / 255; derived: parent - child. */
	assert_near(r.frac[TD_CAT_HEAVY_OPERATIONS], 16.0 / 255, 1e-6);
	assert_near(r.frac[TD_CAT_BRANCH_MISPREDICTS], 20.0 / 255, 1e-6);
	assert_near(r.frac[TD_CAT_FETCH_LATENCY], 48.0 / 255, 1e-6);
	assert_near(r.frac[TD_CAT_MEMORY_BOUND], 64.0 / 255, 1e-6);
	assert_near(r.frac[TD_CAT_LIGHT_OPERATIONS], (59.0 - 16) / 255, 1e-6);
	assert_near(r.frac[TD_CAT_MACHINE_CLEARS], (26.0 - 20) / 255, 1e-6);
	assert_near(r.frac[TD_CAT_FETCH_BANDWIDTH], (76.0 - 48) / 255, 1e-6);
	assert_near(r.frac[TD_CAT_CORE_BOUND], (94.0 - 64) / 255, 1e-6);
	assert_near(r.frac[TD_CAT_HEAVY_OPERATIONS], 0.0627450982, 1e-9);
	assert_near(r.frac[TD_CAT_LIGHT_OPERATIONS], 0.1686274512, 1e-9);
	assert_near(r.frac[TD_CAT_BRANCH_MISPREDICTS], 0.0784313721, 1e-9);
	assert_near(r.frac[TD_CAT_MACHINE_CLEARS], 0.0235294122, 1e-9);
	assert_near(r.frac[TD_CAT_FETCH_LATENCY], 0.1882352944, 1e-9);
	assert_near(r.frac[TD_CAT_FETCH_BANDWIDTH], 0.1098039214, 1e-9);
	assert_near(r.frac[TD_CAT_MEMORY_BOUND], 0.2509803927, 1e-9);
	assert_near(r.frac[TD_CAT_CORE_BOUND], 0.1176470587, 1e-9);

	/* Without refinement the ICL formulas are the same. */
	{
		struct tma_result r2;

		compute_ok(&ICL_HW, &in, &r2);
		for (int i = 0; i < 4; i++)
			assert_near(r2.frac[i], r.frac[i], 1e-15);
	}
}

/* Model perf ignores nothing it should not: the refinement events are
 * unused when refine is false. */
static void test_refine_off_ignores_ud_rc(void **state)
{
	struct tma_input in = from_bytes(1000000000, 0x3b, 0x1a, 0x4c, 0x5e, 0x10, 0x14, 0x30, 0x40);
	struct tma_result a, b;

	(void)state;
	compute_ok(&SPR_HW, &in, &a);
	in.v[TD_EV_UOP_DROPPING] = 50000000;
	in.v[TD_EV_RECOVERY_CYCLES] = 10000000;
	compute_ok(&SPR_HW, &in, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	/* Ice Lake's level 2 comes from general-purpose events, not the
	 * metric bytes: only level 1 compares. */
	compute_ok(&ICL_HW, &in, &b);
	assert_memory_equal(a.frac, b.frac, 4 * sizeof(a.frac[0]));
}

/* ---- Sapphire Rapids, model perf ----
 * SLOTS = 1,000,000; ret 200,000, bad 40,000, fe 160,000, be 400,000, so
 * S = 800,000 (!= SLOTS: UD is divided by SLOTS, the metrics by S).
 * UD = 50,000 -> UD/SLOTS = 0.05.  RC = 30,000 (unused on SPR).
 *   retiring        = 200000/800000            = 0.25
 *   backend_bound   = 400000/800000            = 0.5
 *   frontend_bound  = 160000/800000 - 0.05     = 0.2 - 0.05 = 0.15
 *   bad_speculation = 1 - (0.15 + 0.5 + 0.25)  = 0.1
 *   heavy 40,000/S  = 0.05;   light = 0.25 - 0.05 = 0.2
 *   brm   24,000/S  = 0.03;   clears = 0.1 - 0.03 = 0.07
 *   fl   120,000/S - 0.05 = 0.15 - 0.05 = 0.1;  bandwidth = 0.15 - 0.1 = 0.05
 *   mb   240,000/S  = 0.3;    core = 0.5 - 0.3 = 0.2 */
static struct tma_input spr_perf_input(void)
{
	struct tma_input in;

	memset(&in, 0, sizeof(in));
	in.v[TD_EV_SLOTS] = 1000000;
	in.v[TD_EV_RETIRING] = 200000;
	in.v[TD_EV_BAD_SPEC] = 40000;
	in.v[TD_EV_FE_BOUND] = 160000;
	in.v[TD_EV_BE_BOUND] = 400000;
	in.v[TD_EV_HEAVY_OPS] = 40000;
	in.v[TD_EV_BR_MISPREDICT] = 24000;
	in.v[TD_EV_FETCH_LAT] = 120000;
	in.v[TD_EV_MEM_BOUND] = 240000;
	in.v[TD_EV_UOP_DROPPING] = 50000;
	in.v[TD_EV_RECOVERY_CYCLES] = 30000;
	return in;
}

static void test_spr_perf(void **state)
{
	struct tma_input in = spr_perf_input();
	struct tma_result r;

	(void)state;
	compute_ok(&SPR_PERF, &in, &r);
	assert_near(r.frac[TD_CAT_RETIRING], 0.25, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.5, 1e-12);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.15, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.1, 1e-12);
	assert_near(r.frac[TD_CAT_HEAVY_OPERATIONS], 0.05, 1e-12);
	assert_near(r.frac[TD_CAT_LIGHT_OPERATIONS], 0.2, 1e-12);
	assert_near(r.frac[TD_CAT_BRANCH_MISPREDICTS], 0.03, 1e-12);
	assert_near(r.frac[TD_CAT_MACHINE_CLEARS], 0.07, 1e-12);
	assert_near(r.frac[TD_CAT_FETCH_LATENCY], 0.1, 1e-12);
	assert_near(r.frac[TD_CAT_FETCH_BANDWIDTH], 0.05, 1e-12);
	assert_near(r.frac[TD_CAT_MEMORY_BOUND], 0.3, 1e-12);
	assert_near(r.frac[TD_CAT_CORE_BOUND], 0.2, 1e-12);

	/* The same deltas without refinement: fe = 0.2, bad = 40000/S = 0.05,
	 * fetch_latency = 0.15, bandwidth = 0.05. */
	compute_ok(&SPR_HW, &in, &r);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.2, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.05, 1e-12);
	assert_near(r.frac[TD_CAT_FETCH_LATENCY], 0.15, 1e-12);
	assert_near(r.frac[TD_CAT_FETCH_BANDWIDTH], 0.05, 1e-12);
	assert_near(r.frac[TD_CAT_MACHINE_CLEARS], 0.02, 1e-12);
}

/* ---- Ice Lake, model perf ----
 * SLOTS = S = 1,000,000; ret 300,000, bad 100,000, fe 200,000, be 400,000.
 * (a) RC = 10,000, UD = 20,000:
 *     frontend = 0.2 - 20000/1e6 = 0.18
 *     backend  = 0.4 + 5*10000/1e6 = 0.45
 *     retiring = 0.3;  bad = 1 - (0.18 + 0.45 + 0.3) = 0.07
 * (b) RC = 40,000, UD = 0: backend = 0.4 + 0.2 = 0.6, ret + fe + be = 1.1 > 1:
 *     perf prints backend 0.6 and bad_speculation max(1 - 1.1, 0) = 0, 110 %
 *     in total; so does topdownd (no departure: perf's max). */
static struct tma_input icl_input(uint64_t ud, uint64_t rc)
{
	struct tma_input in;

	memset(&in, 0, sizeof(in));
	in.v[TD_EV_SLOTS] = 1000000;
	in.v[TD_EV_RETIRING] = 300000;
	in.v[TD_EV_BAD_SPEC] = 100000;
	in.v[TD_EV_FE_BOUND] = 200000;
	in.v[TD_EV_BE_BOUND] = 400000;
	in.v[TD_EV_UOP_DROPPING] = ud;
	in.v[TD_EV_RECOVERY_CYCLES] = rc;
	return in;
}

static void test_icl_perf(void **state)
{
	const struct tma_model l1 = { .formulas = UA_FORMULAS_ICL, .refine = true, .level = 1, .width = 5 };
	struct tma_input in = icl_input(20000, 10000);
	struct tma_result r;

	(void)state;
	compute_ok(&l1, &in, &r);
	assert_near(r.frac[TD_CAT_RETIRING], 0.3, 1e-12);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.18, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.45, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.07, 1e-12);

	/* SPR formulas ignore RC: backend stays 0.4, bad = 1 - 0.88 = 0.12. */
	compute_ok(&SPR_PERF, &in, &r);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.4, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.12, 1e-12);

	in = icl_input(0, 40000);
	compute_ok(&l1, &in, &r);
	assert_near(r.frac[TD_CAT_RETIRING], 0.3, 1e-12);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.2, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.6, 1e-12);
	assert_true(r.frac[TD_CAT_BAD_SPECULATION] == 0);
	assert_near(r.frac[0] + r.frac[1] + r.frac[2] + r.frac[3], 1.1, 1e-12);
	assert_int_equal(r.departures, 0);
}

/* Ice Lake when retiring + frontend already fill the slots: retiring
 * 0x2b (43), frontend 0xd4 (212), bad = be = 0; SLOTS = 255e6 so ret =
 * 43e6, fe = 212e6, S = SLOTS.  RC = 1000: perf's backend is 5 * 1000 /
 * 255e6 (no cap), bad_speculation max(1 - (1 + backend), 0) = 0, and
 * memory_bound (no stall counts: 0 / 0) has no value in perf: 0 here,
 * flagged, core_bound too (it reads memory_bound). */
static void test_icl_backend_not_capped(void **state)
{
	struct tma_input in = from_bytes(255000000, 0x2b, 0, 0xd4, 0, 0x10, 0, 0x40, 0);
	struct tma_result r;

	(void)state;
	in.v[TD_EV_RECOVERY_CYCLES] = 1000;
	compute_ok(&ICL_PERF, &in, &r);
	assert_near(r.frac[TD_CAT_RETIRING], 43.0 / 255, 1e-15);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 212.0 / 255, 1e-15);
	assert_true(r.frac[TD_CAT_BAD_SPECULATION] == 0);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 5000.0 / 255e6, 1e-18);
	assert_true(r.frac[TD_CAT_MEMORY_BOUND] == 0);
	assert_true(r.frac[TD_CAT_CORE_BOUND] == 0);
	assert_int_equal(r.departures, 1u << TMA_DEP_NO_VALUE);
	/* With stall counts, perf's memory_bound and core_bound (and the
	 * other ratios' denominators counted: every node has a value). */
	in.v[TD_EV_STALLS_MEM_ANY] = 300;
	in.v[TD_EV_STALLS_TOTAL] = 1000;
	in.v[TD_EV_UOPS_ISSUED] = in.v[TD_EV_IDQ_MITE_UOPS] = in.v[TD_EV_BR_MISP_RETIRED] = 1000;
	compute_ok(&ICL_PERF, &in, &r);
	assert_near(r.frac[TD_CAT_MEMORY_BOUND], 0.3 * 5000.0 / 255e6, 1e-18);
	assert_near(r.frac[TD_CAT_CORE_BOUND], 0.7 * 5000.0 / 255e6, 1e-18);
	assert_int_equal(r.departures, 0);
}

/* ---- children that disagree with their parent ---- */

/* retiring byte 0x20 (32), heavy byte 0x21 (33) > retiring; the rest of L1:
 * bad 0x10 (16), fe 0x40 (64), be 0x8f (143): 32+16+64+143 = 255.
 * SLOTS = 255,000,000 so every delta is byte * 1,000,000 exactly, S = SLOTS.
 *   heavy/S = 33/255 > retiring = 32/255: perf prints both, and
 *   light_operations = max(0, 32/255 - 33/255) = 0 (perf's own max: no
 *   departure). */
static void test_heavy_above_retiring(void **state)
{
	struct tma_input in = from_bytes(255000000, 0x20, 0x10, 0x40, 0x8f, 0x21, 0x08, 0x20, 0x50);
	struct tma_result r;

	(void)state;
	assert_int_equal(in.v[TD_EV_HEAVY_OPS], 33000000);
	compute_ok(&SPR_HW, &in, &r);
	assert_near(r.frac[TD_CAT_RETIRING], 32.0 / 255, 1e-15);
	assert_near(r.frac[TD_CAT_HEAVY_OPERATIONS], 33.0 / 255, 1e-15);
	assert_true(r.frac[TD_CAT_LIGHT_OPERATIONS] == 0);
	assert_int_equal(r.departures, 0);
	/* The other pairs: 8/255 + 8/255, 32/255 + 32/255, 80/255 + 63/255. */
	assert_near(r.frac[TD_CAT_BRANCH_MISPREDICTS], 8.0 / 255, 1e-12);
	assert_near(r.frac[TD_CAT_MACHINE_CLEARS], 8.0 / 255, 1e-12);
	assert_near(r.frac[TD_CAT_FETCH_BANDWIDTH], 32.0 / 255, 1e-12);
	assert_near(r.frac[TD_CAT_CORE_BOUND], 63.0 / 255, 1e-12);
}

/* br_mispredict 0x11 (17) > bad_spec 0x10 (16); mem_bound 0x90 (144) >
 * be 0x8f (143): perf's values as they are, the others max(0, ...) = 0. */
static void test_children_above_parent(void **state)
{
	struct tma_input in = from_bytes(255000000, 0x20, 0x10, 0x40, 0x8f, 0x10, 0x11, 0x20, 0x90);
	struct tma_result r;

	(void)state;
	compute_ok(&SPR_HW, &in, &r);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 16.0 / 255, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 143.0 / 255, 1e-12);
	assert_near(r.frac[TD_CAT_BRANCH_MISPREDICTS], 17.0 / 255, 1e-12);
	assert_true(r.frac[TD_CAT_MACHINE_CLEARS] == 0);
	assert_near(r.frac[TD_CAT_MEMORY_BOUND], 144.0 / 255, 1e-12);
	assert_true(r.frac[TD_CAT_CORE_BOUND] == 0);
	assert_near(r.frac[TD_CAT_LIGHT_OPERATIONS], 16.0 / 255, 1e-12);
	assert_int_equal(r.departures, 0);
}

/* fetch_lat 0x08 (8) -> 8/255 = 0.0314; UD/SLOTS = 10,200,000/255,000,000 =
 * 0.04 > 0.0314: perf's fetch_latency = 8/255 - 0.04 = -0.00862745... is
 * a departure (0, flagged, its size); perf's fetch_bandwidth =
 * max(0, fe - fetch_latency) reads perf's negative value:
 * 64/255 - 0.04 - (8/255 - 0.04) = 56/255. */
static void test_negative_fetch_latency(void **state)
{
	struct tma_input in = from_bytes(255000000, 0x20, 0x10, 0x40, 0x8f, 0x10, 0x08, 0x08, 0x50);
	struct tma_result r;

	(void)state;
	in.v[TD_EV_UOP_DROPPING] = 10200000;
	compute_ok(&SPR_PERF, &in, &r);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 64.0 / 255 - 0.04, 1e-12);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.2109803921, 1e-9);
	assert_true(r.frac[TD_CAT_FETCH_LATENCY] == 0);
	assert_near(r.frac[TD_CAT_FETCH_BANDWIDTH], 56.0 / 255, 1e-12);
	assert_int_equal(r.departures, 1u << TMA_DEP_NEGATIVE);
	assert_near(r.departure_size, 0.04 - 8.0 / 255, 1e-12);
	/* bad = 1 - (32 + 143)/255 - (64/255 - 0.04) = 16/255 + 0.04 */
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 16.0 / 255 + 0.04, 1e-12);
}

/* UD larger than the whole frontend metric: perf's frontend_bound is
 * 64/255 - 0.392156... = -0.141176...: 0 here, flagged; bad_speculation
 * reads perf's negative value: 1 - (32 + 143)/255 + 0.141176... =
 * 80/255 + 0.141176... (perf's own figure). */
static void test_negative_frontend(void **state)
{
	struct tma_input in = from_bytes(255000000, 0x20, 0x10, 0x40, 0x8f, 0x10, 0x08, 0x30, 0x50);
	struct tma_result r;
	double fe = 64.0 / 255 - 100.0 / 255;

	(void)state;
	in.v[TD_EV_UOP_DROPPING] = 100000000; /* 0.392 > 64/255 = 0.251 */
	compute_ok(&SPR_PERF, &in, &r);
	assert_true(r.frac[TD_CAT_FRONTEND_BOUND] == 0);
	assert_true(r.frac[TD_CAT_FETCH_LATENCY] == 0);
	/* fetch_bandwidth = max(0, fe - (48/255 - 100/255)) = max(0, 16/255 - ...) */
	assert_near(r.frac[TD_CAT_FETCH_BANDWIDTH], 16.0 / 255, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 80.0 / 255 - fe, 1e-12);
	assert_int_equal(r.departures, 1u << TMA_DEP_NEGATIVE);
	/* The largest replaced: fetch_latency, 48/255 - 100/255 (fe: -36/255). */
	assert_near(fe, -36.0 / 255, 1e-12);
	assert_near(r.departure_size, 52.0 / 255, 1e-12);
}

/* ---- invariants ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static unsigned rnd_below(unsigned n)
{
	return n ? (unsigned)(rnd() % n) : 0;
}

/* A byte near @parent: often 0, often equal, sometimes 1-2 above (the
 * independent rounding of L2 bytes). */
static unsigned child_byte(unsigned parent)
{
	switch (rnd_below(8)) {
	case 0:
		return 0;
	case 1:
		return parent;
	case 2:
		return parent + 1 > 255 ? 255 : parent + 1;
	case 3:
		return parent + 2 > 255 ? 255 : parent + 2;
	default:
		return rnd_below(parent + 1);
	}
}

/* What holds for any PERF_METRICS counts: every fraction is a finite
 * share (at least 0); without refinement (SPR_HW, ICL_HW) the level-1
 * fractions are the metric bytes' shares and sum to 1; each level-2 pair
 * of the metric bytes is perf's "child, max(0, parent - child)"; a
 * negative departure is flagged exactly when perf's frontend_bound or
 * fetch_latency (the two nodes that subtract UOP_DROPPING) is below 0;
 * Ice Lake's level 2, from general-purpose events that are all 0 here,
 * has no value in perf (0 / 0), all 0 and flagged, but fetch_bandwidth
 * (no division). */
static void check_invariants(const struct tma_model *m, const struct tma_input *in, int n)
{
	const double *v = in->v;
	double s = v[TD_EV_RETIRING] + v[TD_EV_BAD_SPEC] + v[TD_EV_FE_BOUND] + v[TD_EV_BE_BOUND];
	double ud = m->refine ? v[TD_EV_UOP_DROPPING] / v[TD_EV_SLOTS] : 0;
	bool icl = m->formulas == UA_FORMULAS_ICL, negative;
	struct tma_result r;
	double sum = 0, fe, fl;

	compute_ok(m, in, &r);
	for (int i = 0; i < TD_CAT_COUNT; i++)
		if (!(r.frac[i] >= 0 && isfinite(r.frac[i])))
			fail_msg("case %d (formulas %d refine %d): %s = %.17g", n, m->formulas, m->refine,
				 td_cat[i].name, r.frac[i]);
	for (int i = 0; i < 4; i++)
		sum += r.frac[i];
	if (!m->refine && !(fabs(sum - 1) <= 1e-9))
		fail_msg("case %d: L1 sum %.17g", n, sum);
	/* Ice Lake's fetch_latency: 5 * IDQ_0_UOPS_CYCLES (0 here) / SLOTS - UD. */
	fl = icl ? -ud : v[TD_EV_FETCH_LAT] / s - ud;
	fe = v[TD_EV_FE_BOUND] / s - ud;
	negative = fe < 0 || fl < 0;
	if (((r.departures >> TMA_DEP_NEGATIVE) & 1) != negative)
		fail_msg("case %d (formulas %d refine %d): departures %#x, perf negative %d", n, m->formulas,
			 m->refine, r.departures, negative);
	if (icl) {
		assert_true(r.departures & (1u << TMA_DEP_NO_VALUE));
		for (int i = 0; i < 8; i++)
			if (TD_CAT_HEAVY_OPERATIONS + i != TD_CAT_FETCH_BANDWIDTH)
				assert_true(r.frac[TD_CAT_HEAVY_OPERATIONS + i] == 0);
		assert_near(r.frac[TD_CAT_FETCH_BANDWIDTH], fmax(0, fe - fl), 1e-12);
		return;
	}
	assert_false(r.departures & (1u << TMA_DEP_NO_VALUE));
	for (int i = 0; i < 8; i += 2) {
		enum td_cat c = TD_CAT_HEAVY_OPERATIONS + i, o = c + 1, p = td_cat[c].parent;
		double want = r.frac[c] <= r.frac[p] ? r.frac[p] - r.frac[c] : 0;

		/* fetch_latency departed (0): perf's bandwidth read its
		 * negative value, more than frontend_bound - 0. */
		if (c == TD_CAT_FETCH_LATENCY && v[TD_EV_FETCH_LAT] / s - ud < 0)
			want = r.frac[p] - (v[TD_EV_FETCH_LAT] / s - ud);
		if (c == TD_CAT_FETCH_LATENCY && v[TD_EV_FE_BOUND] / s - ud < 0)
			want = fmax(0, v[TD_EV_FE_BOUND] / s - v[TD_EV_FETCH_LAT] / s);
		if (!(fabs(r.frac[o] - want) <= 1e-9))
			fail_msg("case %d: %s = %.17g, want %.17g (%s %.17g, %s %.17g)", n, td_cat[o].name,
				 r.frac[o], want, td_cat[c].name, r.frac[c], td_cat[p].name, r.frac[p]);
	}
}

static void test_invariants_random(void **state)
{
	const struct tma_model *models[] = { &SPR_HW, &SPR_PERF, &ICL_HW, &ICL_PERF };

	(void)state;
	rng_state = 0x9e3779b97f4a7c15ull;
	for (int n = 0; n < 10000; n++) {
		unsigned b[4], left = 255;
		uint64_t slots = 1000 + (rnd() % (1ull << 40));
		struct tma_input in;

		/* Four L1 bytes summing to 0xff, zeros included, in a random
		 * order. */
		for (int i = 0; i < 3; i++) {
			b[i] = rnd_below(4) == 0 ? 0 : rnd_below(left + 1);
			left -= b[i];
		}
		b[3] = left;
		for (int i = 0; i < 4; i++) {
			unsigned j = rnd_below(4), t = b[i];

			b[i] = b[j];
			b[j] = t;
		}
		in = from_bytes(slots, b[0], b[1], b[2], b[3], child_byte(b[0]), child_byte(b[1]),
				child_byte(b[2]), child_byte(b[3]));
		/* Refinement terms from nothing to more than the slots' share
		 * the metrics have. */
		in.v[TD_EV_UOP_DROPPING] = rnd_below(3) == 0 ? 0 : rnd() % (slots / 2 + 1);
		in.v[TD_EV_RECOVERY_CYCLES] = rnd_below(3) == 0 ? 0 : rnd() % (slots / 8 + 1);
		for (unsigned k = 0; k < 4; k++)
			check_invariants(models[k], &in, n);
	}
}

/* ---- errors and level 1 ---- */

static void test_no_data(void **state)
{
	struct tma_input in = spr_perf_input();
	struct tma_result r;

	(void)state;
	in.v[TD_EV_SLOTS] = 0;
	assert_int_equal(tma_compute(&SPR_PERF, &in, &r), -ENODATA);
	assert_int_equal(tma_compute(&ICL_HW, &in, &r), -ENODATA);

	/* Slots counted but no metric: S = 0. */
	in = spr_perf_input();
	in.v[TD_EV_RETIRING] = in.v[TD_EV_BAD_SPEC] = 0;
	in.v[TD_EV_FE_BOUND] = in.v[TD_EV_BE_BOUND] = 0;
	assert_int_equal(tma_compute(&SPR_PERF, &in, &r), -ENODATA);
	assert_int_equal(tma_compute(&ICL_PERF, &in, &r), -ENODATA);

	/* 2 slots: 2 * byte < 0xff for every byte below 0x80, so the kernel
	 * adds 0 to each metric. */
	in = from_bytes(2, 0x3b, 0x1a, 0x4c, 0x5e, 0, 0, 0, 0);
	assert_int_equal(in.v[TD_EV_RETIRING] + in.v[TD_EV_BAD_SPEC] +
				 in.v[TD_EV_FE_BOUND] + in.v[TD_EV_BE_BOUND], 0);
	assert_int_equal(tma_compute(&SPR_HW, &in, &r), -ENODATA);
}

static void test_level1(void **state)
{
	const struct tma_model m = { .formulas = UA_FORMULAS_GLC, .refine = true, .level = 1, .width = 0 };
	struct tma_input in = spr_perf_input();
	struct tma_result r;

	(void)state;
	compute_ok(&m, &in, &r);
	for (int i = 0; i < 8; i++)
		assert_true(r.frac[TD_CAT_HEAVY_OPERATIONS + i] == 0);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.15, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.1, 1e-12);
}

/* ---- Intel's architectural TopDown events (a model not in the tables) ---- */

static void test_arch_events(void **state)
{
	const struct tma_model m = { .formulas = UA_FORMULAS_ARCH, .level = 1 };
	struct tma_input in = { 0 };
	struct tma_result r;

	(void)state;
	/* Counts that over-fill the slots by 4 % (they are counted
	 * independently): each is its share of their sum, bad speculation
	 * what the other three leave, as perf's expressions give. */
	in.v[TD_EV_CYCLES] = 1000;
	in.v[TD_EV_RETIRING] = 3100;
	in.v[TD_EV_BAD_SPEC] = 1300;
	in.v[TD_EV_FE_BOUND] = 2100;
	in.v[TD_EV_BE_BOUND] = 3900;
	compute_ok(&m, &in, &r);
	assert_near(r.slots, 10400, 1e-9);
	assert_near(r.frac[TD_CAT_RETIRING], 3100.0 / 10400, 1e-12);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 2100.0 / 10400, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 3900.0 / 10400, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 1300.0 / 10400, 1e-12);
	assert_true(r.frac[TD_CAT_HEAVY_OPERATIONS] == 0);
	/* Nothing counted: no figure, not 0 %. */
	memset(&in, 0, sizeof(in));
	in.v[TD_EV_CYCLES] = 1000;
	assert_int_equal(tma_compute(&m, &in, &r), -ENODATA);
}

/* ---- AMD Zen 4 (PipelineL1/L2, perf's amdzen4/pipeline.json) ---- */

static const struct tma_model ZEN4 = { .formulas = UA_FORMULAS_ZEN, .level = 2, .width = 6 };

/* 1000 cycles, 6000 dispatch slots: frontend 0.2, backend 0.3, SMT
 * contention 0.1, 2400 ops dispatched of which 1920 retired. */
static struct tma_input zen_input(void)
{
	struct tma_input in = { 0 };

	in.v[TD_EV_CYCLES] = 1000;
	in.v[TD_EV_ZEN_NO_OPS_FRONTEND] = 1200;
	in.v[TD_EV_ZEN_FRONTEND_CYCLES] = 120;
	in.v[TD_EV_ZEN_BACKEND_STALLS] = 1800;
	in.v[TD_EV_ZEN_SMT_CONTENTION] = 600;
	in.v[TD_EV_ZEN_OPS_DISPATCHED] = 2400;
	in.v[TD_EV_ZEN_OPS_RETIRED] = 1920;
	in.v[TD_EV_ZEN_BRANCH_MISP] = 36;
	in.v[TD_EV_ZEN_RESYNCS] = 12;
	in.v[TD_EV_ZEN_NOT_COMPLETE] = 300;
	in.v[TD_EV_ZEN_LOAD_NOT_COMPLETE] = 180;
	in.v[TD_EV_ZEN_UCODE_OPS] = 240;
	return in;
}

static void test_zen(void **state)
{
	struct tma_input in = zen_input();
	struct tma_result r;

	(void)state;
	compute_ok(&ZEN4, &in, &r);
	assert_near(r.slots, 6000, 1e-9);
	assert_near(r.frac[TD_CAT_RETIRING], 0.32, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.08, 1e-12);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.2, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.3, 1e-12);
	assert_near(r.frac[TD_CAT_SMT_CONTENTION], 0.1, 1e-12);
	/* 6 * 120 / 6000; 0.08 * 36 / 48; 0.3 * 180 / 300; 0.32 * 240 / 1920 */
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND_LATENCY], 0.12, 1e-12);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND_BANDWIDTH], 0.08, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION_MISPREDICTS], 0.06, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION_PIPELINE_RESTARTS], 0.02, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND_MEMORY], 0.18, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND_CPU], 0.12, 1e-12);
	assert_near(r.frac[TD_CAT_RETIRING_MICROCODE], 0.04, 1e-12);
	assert_near(r.frac[TD_CAT_RETIRING_FASTPATH], 0.28, 1e-12);
	/* Intel's level 2 stays empty. */
	assert_true(r.frac[TD_CAT_MEMORY_BOUND] == 0 && r.frac[TD_CAT_HEAVY_OPERATIONS] == 0);

	assert_int_equal(r.departures, 0);

	/* Counts that do not partition the slots: perf prints 110 % in
	 * total, and so does topdownd; children read perf's parent. */
	in.v[TD_EV_ZEN_BACKEND_STALLS] = 2400;
	compute_ok(&ZEN4, &in, &r);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.4, 1e-12);
	assert_near(r.frac[TD_CAT_RETIRING] + r.frac[TD_CAT_BAD_SPECULATION] + r.frac[TD_CAT_FRONTEND_BOUND] +
			    r.frac[TD_CAT_BACKEND_BOUND] + r.frac[TD_CAT_SMT_CONTENTION],
		    1.1, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND_MEMORY], 0.6 * 0.4, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND_CPU], 0.4 * 0.4, 1e-12);
	assert_int_equal(r.departures, 0);

	/* More ops retired than dispatched: perf's bad speculation is
	 * (2400 - 2500) / 6000 < 0, and so are its two children: 0 here,
	 * flagged, the largest replaced 100 / 6000. */
	in = zen_input();
	in.v[TD_EV_ZEN_OPS_RETIRED] = 2500;
	compute_ok(&ZEN4, &in, &r);
	assert_true(r.frac[TD_CAT_BAD_SPECULATION] == 0);
	assert_true(r.frac[TD_CAT_BAD_SPECULATION_MISPREDICTS] == 0);
	assert_true(r.frac[TD_CAT_BAD_SPECULATION_PIPELINE_RESTARTS] == 0);
	assert_int_equal(r.departures, 1u << TMA_DEP_NEGATIVE);
	assert_near(r.departure_size, 100.0 / 6000, 1e-12);

	/* No mispredicts nor resyncs: d_ratio gives 0 (perf's own). */
	in = zen_input();
	in.v[TD_EV_ZEN_BRANCH_MISP] = in.v[TD_EV_ZEN_RESYNCS] = 0;
	compute_ok(&ZEN4, &in, &r);
	assert_true(r.frac[TD_CAT_BAD_SPECULATION_MISPREDICTS] == 0);
	assert_true(r.frac[TD_CAT_BAD_SPECULATION_PIPELINE_RESTARTS] == 0);
	assert_int_equal(r.departures, 0);

	/* A halted thread: no cycles, no data. */
	in.v[TD_EV_CYCLES] = 0;
	assert_int_equal(tma_compute(&ZEN4, &in, &r), -ENODATA);
}

/* ---- Arm Neoverse (perf's arm64 sbsa.json with the cores' overrides) ---- */

static struct tma_input arm_input(double cycles, double slots_per_cycle, double extra)
{
	struct tma_input in = { 0 };
	double slots = cycles * slots_per_cycle;

	/* frontend 0.2, backend 0.35 of the slots; 80 % of speculated ops
	 * retire; 8 mispredicts per 1000 cycles. */
	in.v[TD_EV_CYCLES] = cycles;
	in.v[TD_EV_ARM_STALL_SLOT_FRONTEND] = 0.2 * slots + extra;
	in.v[TD_EV_ARM_STALL_SLOT_BACKEND] = 0.35 * slots;
	in.v[TD_EV_ARM_STALL_SLOT] = 0.55 * slots + extra;
	in.v[TD_EV_ARM_OP_SPEC] = 0.5 * slots;
	in.v[TD_EV_ARM_OP_RETIRED] = 0.4 * slots;
	in.v[TD_EV_ARM_BR_MIS_PRED] = 8 * cycles / 1000;
	return in;
}

static void test_neoverse(void **state)
{
	struct tma_model v2 = { .formulas = UA_FORMULAS_NEOVERSE_N2V2, .level = 1, .slots_per_cycle = 8 };
	struct tma_model v1 = { .formulas = UA_FORMULAS_NEOVERSE_V1, .level = 1, .width = 8,
				.slots_per_cycle = 8 };
	struct tma_model n2 = { .formulas = UA_FORMULAS_NEOVERSE_N2V2, .level = 1, .slots_per_cycle = 5,
				.stall_minus_cycles = true };
	struct tma_input in = arm_input(1000, 8, 0);
	struct tma_result r;

	(void)state;
	/* N2/V2: frontend 0.2 - B, bad (1 - r)(1 - 0.55) + 4B, backend
	 * 0.35 - 3B, retiring r(1 - 0.55), B = 0.008, r = 0.8. */
	compute_ok(&v2, &in, &r);
	assert_near(r.slots, 8000, 1e-9);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.192, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.122, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.326, 1e-12);
	assert_near(r.frac[TD_CAT_RETIRING], 0.36, 1e-12);
	/* V1: frontend 0.2 - 4B over its own 8 slots, backend from sbsa. */
	compute_ok(&v1, &in, &r);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.168, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.122, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.35, 1e-12);
	assert_near(r.frac[TD_CAT_RETIRING], 0.36, 1e-12);
	/* N2 before r0p3 counts a slot per cycle more in STALL_SLOT and
	 * STALL_SLOT_FRONTEND: corrected, the same figures at 5 wide. */
	in = arm_input(1000, 5, 1000);
	compute_ok(&n2, &in, &r);
	assert_near(r.slots, 5000, 1e-9);
	assert_near(r.frac[TD_CAT_FRONTEND_BOUND], 0.192, 1e-12);
	assert_near(r.frac[TD_CAT_BAD_SPECULATION], 0.122, 1e-12);
	assert_near(r.frac[TD_CAT_BACKEND_BOUND], 0.326, 1e-12);
	assert_near(r.frac[TD_CAT_RETIRING], 0.36, 1e-12);
	/* No caps/slots (0): no data rather than a division by zero. */
	v2.slots_per_cycle = 0;
	assert_int_equal(tma_compute(&v2, &in, &r), -ENODATA);
}

/* ---- tma_bottleneck ---- */

/* Level-1 values in l1[], level-2 ones in l2[] (in enum order). */
static void bottleneck_v(const double l1[4], const double l2[8], double v[TD_CAT_COUNT])
{
	memset(v, 0, TD_CAT_COUNT * sizeof(double));
	memcpy(v, l1, 4 * sizeof(double));
	memcpy(v + TD_CAT_HEAVY_OPERATIONS, l2, 8 * sizeof(double));
}

static void bottleneck_is(const double l1[4], const double l2[8], bool with_l2, const char *want)
{
	double v[TD_CAT_COUNT];
	char buf[80];

	bottleneck_v(l1, l2, v);
	memset(buf, 'X', sizeof(buf));
	tma_bottleneck(v, TD_CATSET_L1 | TD_CATSET_L2_INTEL, with_l2, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void test_bottleneck(void **state)
{
	double l1[4] = { 0.3, 0.1, 0.2, 0.4 };
	double l2[8] = { 0.1, 0.2, 0.06, 0.04, 0.15, 0.05, 0.1, 0.3 };
	double z1[4] = { 0 }, z2[8] = { 0 }, v[TD_CAT_COUNT];
	char small[8];

	(void)state;
	bottleneck_is(l1, l2, true, "backend_bound.core_bound");
	bottleneck_is(l1, l2, false, "backend_bound");
	l2[TD_CAT_MEMORY_BOUND - TD_CAT_HEAVY_OPERATIONS] = 0.35;
	l2[TD_CAT_CORE_BOUND - TD_CAT_HEAVY_OPERATIONS] = 0.05;
	bottleneck_is(l1, l2, true, "backend_bound.memory_bound");

	/* Retiring is never the bottleneck, however large. */
	l1[TD_CAT_RETIRING] = 0.7;
	l1[TD_CAT_BACKEND_BOUND] = 0.05;
	l1[TD_CAT_BAD_SPECULATION] = 0.1;
	l1[TD_CAT_FRONTEND_BOUND] = 0.15;
	bottleneck_is(l1, l2, true, "frontend_bound.fetch_latency");
	l1[TD_CAT_BAD_SPECULATION] = 0.2;
	bottleneck_is(l1, l2, true, "bad_speculation.branch_mispredicts");
	l2[TD_CAT_MACHINE_CLEARS - TD_CAT_HEAVY_OPERATIONS] = 0.14;
	bottleneck_is(l1, l2, true, "bad_speculation.machine_clears");

	/* Ties: the first category in order wins, and the first child. */
	l1[TD_CAT_BAD_SPECULATION] = l1[TD_CAT_FRONTEND_BOUND] = l1[TD_CAT_BACKEND_BOUND] = 0.1;
	l2[TD_CAT_BRANCH_MISPREDICTS - TD_CAT_HEAVY_OPERATIONS] = l2[TD_CAT_MACHINE_CLEARS - TD_CAT_HEAVY_OPERATIONS] = 0.05;
	bottleneck_is(l1, l2, true, "bad_speculation.branch_mispredicts");
	l1[TD_CAT_BAD_SPECULATION] = 0;
	l2[TD_CAT_FETCH_LATENCY - TD_CAT_HEAVY_OPERATIONS] = l2[TD_CAT_FETCH_BANDWIDTH - TD_CAT_HEAVY_OPERATIONS] = 0.05;
	bottleneck_is(l1, l2, true, "frontend_bound.fetch_latency");

	/* A parent whose children are all 0 (level 1 data): the parent only. */
	bottleneck_is(l1, z2, true, "frontend_bound");

	/* Nothing but retiring, or nothing at all: empty. */
	bottleneck_is(z1, z2, true, "");
	z1[TD_CAT_RETIRING] = 1;
	bottleneck_is(z1, z2, false, "");

	/* Truncated to the buffer, always terminated. */
	l1[TD_CAT_BACKEND_BOUND] = 0.5;
	bottleneck_v(l1, l2, v);
	tma_bottleneck(v, TD_CATSET_L1 | TD_CATSET_L2_INTEL, true, small, sizeof(small));
	assert_string_equal(small, "backend");
	tma_bottleneck(v, TD_CATSET_L1 | TD_CATSET_L2_INTEL, true, small, 0); /* must not write */
}

/* tma_evaluate leaves the categories it does not write as they were: the
 * collector reads only those the plan gives the PMU (plan_cats), so every
 * table entry's formulas must write each of them, at every level, refined
 * or not, guests' entries too. */
static void check_writes_plan_cats(const struct uarch *ua)
{
	struct tma_input in;
	struct tma_result res;

	for (unsigned i = 0; i < TD_EV_COUNT; i++)
		in.v[i] = 1e6 + 1e4 * i;
	for (unsigned level = 1; level <= ua->max_level; level++)
		for (int refine = 0; refine < 2; refine++) {
			struct tma_model m = { .formulas = ua->formulas, .refine = refine, .level = level,
					       .width = ua->width, .slots_per_cycle = 8 };
			td_catset want = plan_cats(ua, level);

			memset(&res, 0, sizeof(res));
			if (tma_evaluate(&m, &in, &res) < 0)
				fail_msg("%s level %u refine %d: no value on every counter at 1e6", ua->id, level, refine);
			if ((res.cats & want) != want)
				fail_msg("%s level %u refine %d: writes %#x of the plan's %#x", ua->id, level, refine,
					 (unsigned)res.cats, (unsigned)want);
		}
}

static void test_formulas_write_plan_cats(void **state)
{
	(void)state;
	for (size_t i = 0; i < ua_count(); i++)
		if (ua_get(i)->max_level)
			check_writes_plan_cats(ua_get(i));
	for (size_t i = 0; i < ua_guest_count(); i++)
		if (ua_guest_get(i)->max_level)
			check_writes_plan_cats(ua_guest_get(i));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_decoding),
		cmocka_unit_test(test_refine_off_ignores_ud_rc),
		cmocka_unit_test(test_spr_perf),
		cmocka_unit_test(test_icl_perf),
		cmocka_unit_test(test_icl_backend_not_capped),
		cmocka_unit_test(test_heavy_above_retiring),
		cmocka_unit_test(test_children_above_parent),
		cmocka_unit_test(test_negative_fetch_latency),
		cmocka_unit_test(test_negative_frontend),
		cmocka_unit_test(test_invariants_random),
		cmocka_unit_test(test_no_data),
		cmocka_unit_test(test_level1),
		cmocka_unit_test(test_arch_events),
		cmocka_unit_test(test_zen),
		cmocka_unit_test(test_neoverse),
		cmocka_unit_test(test_bottleneck),
		cmocka_unit_test(test_formulas_write_plan_cats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
