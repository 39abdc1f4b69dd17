/* SPDX-License-Identifier: MIT */
/* hw/perfexpr: perf's expressions of a model's categories on counts perf
 * prints (--compare-perf's events mode).  The expected values are perf's
 * expressions worked by hand on round counts. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfexpr.h"
#include "uarch.h"

static const struct uarch *find(const char *id)
{
	for (size_t i = 0; i < ua_count(); i++)
		if (strcmp(ua_get(i)->id, id) == 0)
			return ua_get(i);
	for (size_t i = 0; i < ua_guest_count(); i++)
		if (strcmp(ua_guest_get(i)->id, id) == 0)
			return ua_guest_get(i);
	return NULL;
}

static td_catset all_cats(const struct uarch *ua)
{
	td_catset s = 0;

	for (unsigned i = 0; i < ua->n_metrics; i++)
		s |= 1u << ua->metrics[i].cat;
	return s;
}

/* @counts by event name, in the order perfexpr asks for them. */
struct named {
	const char *name;
	double v;
};

static void eval(const struct perfexpr *x, const struct named *in, size_t n, double *frac)
{
	double counts[PERFEXPR_EVENTS_MAX];

	for (unsigned i = 0; i < perfexpr_n_events(x); i++) {
		const char *name = perfexpr_event(x, i)->name;

		counts[i] = NAN;
		for (size_t k = 0; k < n; k++)
			if (strcmp(in[k].name, name) == 0)
				counts[i] = in[k].v;
		assert_false(isnan(counts[i]));
	}
	perfexpr_eval(x, counts, frac);
}

/* @id's categories compiled for @env. */
static struct perfexpr *compiled(const char *id, const struct perfexpr_env *env)
{
	const struct uarch *ua = find(id);
	struct perfexpr *x = NULL;
	char why[256] = "";

	assert_non_null(ua);
	assert_int_equal(perfexpr_new(ua, all_cats(ua), env, &x, why, sizeof(why)), 0);
	return x;
}

#define EVAL(x, in, f) eval((x), (in), sizeof(in) / sizeof((in)[0]), (f))

static void test_same_event(void **state)
{
	(void)state;
	assert_true(perfexpr_same_event("cpu@INT_MISC.RECOVERY_CYCLES,cmask=1,edge@",
					"INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1"));
	assert_true(perfexpr_same_event("INT_MISC.RECOVERY_CYCLES,edge=1,cmask=1",
					"INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1"));
	assert_true(perfexpr_same_event("cpu@de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6@",
					"de_no_dispatch_per_slot.no_ops_from_frontend,cmask=6"));
	assert_true(perfexpr_same_event("stall_slot_backend", "STALL_SLOT_BACKEND"));
	assert_true(perfexpr_same_event("slots", "TOPDOWN.SLOTS"));
	assert_true(perfexpr_same_event("cpu_core@topdown-retiring@", "topdown-retiring"));
	assert_false(perfexpr_same_event("INT_MISC.RECOVERY_CYCLES,cmask=2,edge=1",
					 "INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1"));
	assert_false(perfexpr_same_event("INT_MISC.RECOVERY_CYCLES", "INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1"));
	assert_false(perfexpr_same_event("INT_MISC.RECOVERY_CYCLES,cmask=x", "INT_MISC.RECOVERY_CYCLES,cmask=1"));
	assert_false(perfexpr_same_event("CPU_CYCLES", "CPU_CYCLES_P"));
}

/* Emerald Rapids (perf's emr-metrics.json): PERF_METRICS' events over
 * their sum, less INT_MISC.UOP_DROPPING over the slots in the frontend;
 * bad speculation and the other level-2 nodes are perf's max() of the
 * differences. */
static void test_emeraldrapids(void **state)
{
	const struct uarch *ua = find("emeraldrapids");
	struct perfexpr_env env = { .smt_on = true, .core_wide = true };
	struct named in[] = {
		{ "TOPDOWN.SLOTS", 1000 }, { "topdown-retiring", 300 }, { "topdown-fe-bound", 200 },
		{ "topdown-bad-spec", 100 }, { "topdown-be-bound", 400 }, { "topdown-heavy-ops", 50 },
		{ "topdown-br-mispredict", 60 }, { "topdown-fetch-lat", 120 }, { "topdown-mem-bound", 250 },
		{ "INT_MISC.UOP_DROPPING", 10 },
	};
	struct perfexpr *x = compiled("emeraldrapids", &env);
	double f[TD_CAT_COUNT];

	(void)state;
	assert_int_equal(perfexpr_n_events(x), 10);
	assert_int_equal(perfexpr_cats(x), all_cats(ua));
	EVAL(x, in, f);
	assert_float_equal(f[TD_CAT_RETIRING], 0.30, 1e-12);
	assert_float_equal(f[TD_CAT_FRONTEND_BOUND], 0.19, 1e-12);
	assert_float_equal(f[TD_CAT_BACKEND_BOUND], 0.40, 1e-12);
	assert_float_equal(f[TD_CAT_BAD_SPECULATION], 0.11, 1e-12);
	assert_float_equal(f[TD_CAT_HEAVY_OPERATIONS], 0.05, 1e-12);
	assert_float_equal(f[TD_CAT_LIGHT_OPERATIONS], 0.25, 1e-12);
	assert_float_equal(f[TD_CAT_BRANCH_MISPREDICTS], 0.06, 1e-12);
	assert_float_equal(f[TD_CAT_MACHINE_CLEARS], 0.05, 1e-12);
	assert_float_equal(f[TD_CAT_FETCH_LATENCY], 0.11, 1e-12);
	assert_float_equal(f[TD_CAT_FETCH_BANDWIDTH], 0.08, 1e-12);
	assert_float_equal(f[TD_CAT_MEMORY_BOUND], 0.25, 1e-12);
	assert_float_equal(f[TD_CAT_CORE_BOUND], 0.15, 1e-12);
	/* Nothing counted: perf's 0 / 0, no value, where the expression divides. */
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		in[i].v = 0;
	EVAL(x, in, f);
	assert_true(isnan(f[TD_CAT_RETIRING]));
	/* perf's max(1 - (NaN), 0): expr.y's "$3 > $5 ? $3 : $5" is 0. */
	assert_float_equal(f[TD_CAT_BAD_SPECULATION], 0, 0);
	perfexpr_free(x);
}

/* Neoverse N2 (perf's neoverse-n2-v2 metrics.json): a percentage of
 * #slots * CPU_CYCLES ("1percent of slots"), and strcmp_cpuid_str():
 * before r0p3 STALL_SLOT_FRONTEND counts a slot per cycle too many. */
static void test_neoverse_n2(void **state)
{
	const struct uarch *ua = find("arm/neoverse-n2-v2");
	struct perfexpr_env env = { .core_wide = true, .slots = 5, .have_midr = true, .midr = 0x410fd490 };
	const struct named in[] = {
		{ "CPU_CYCLES", 1000 }, { "STALL_SLOT_FRONTEND", 2000 }, { "STALL_SLOT_BACKEND", 1500 },
		{ "STALL_SLOT", 3500 }, { "OP_RETIRED", 900 }, { "OP_SPEC", 1000 }, { "BR_MIS_PRED", 10 },
	};
	struct perfexpr *x = compiled("arm/neoverse-n2-v2", &env);
	double f[TD_CAT_COUNT];
	char why[256] = "";

	(void)state;
	EVAL(x, in, f);
	/* (2000 - 1000) / (1000 * 5) - 10 / 1000 */
	assert_float_equal(f[TD_CAT_FRONTEND_BOUND], 0.19, 1e-12);
	/* 1500 / 5000 - 3 * 10 / 1000 */
	assert_float_equal(f[TD_CAT_BACKEND_BOUND], 0.27, 1e-12);
	perfexpr_free(x);
	env.midr = 0x410fd493;
	x = compiled("arm/neoverse-n2-v2", &env);
	EVAL(x, in, f);
	assert_float_equal(f[TD_CAT_FRONTEND_BOUND], 0.39, 1e-12);
	perfexpr_free(x);
	/* A guest without caps/slots and no published width: #slots unknown. */
	env.slots = 0;
	assert_int_equal(perfexpr_new(ua, all_cats(ua), &env, &x, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "frontend_bound reads #slots, which is not known here");
}

/* Zen 4 (perf's amdzen4 pipeline.json): total_dispatch_slots, a metric
 * the categories read, is perf's, from the same file. */
static void test_zen4(void **state)
{
	struct perfexpr_env env = { .smt_on = true, .core_wide = true };
	const struct named in[] = {
		{ "ls_not_halted_cyc", 1000 },
		{ "de_no_dispatch_per_slot.no_ops_from_frontend", 1200 },
		{ "de_no_dispatch_per_slot.backend_stalls", 2400 },
		{ "de_no_dispatch_per_slot.smt_contention", 600 },
		{ "de_src_op_disp.all", 2000 },
		{ "ex_ret_ops", 1800 },
		{ "de_no_dispatch_per_slot.no_ops_from_frontend,cmask=6", 100 },
		{ "ex_ret_brn_misp", 30 }, { "resyncs_or_nc_redirects", 10 },
		{ "ex_no_retire.not_complete", 400 }, { "ex_no_retire.load_not_complete", 100 },
		{ "ex_ret_ucode_ops", 180 },
	};
	struct perfexpr *x = compiled("amdzen4", &env);
	double f[TD_CAT_COUNT];

	(void)state;
	EVAL(x, in, f);
	assert_float_equal(f[TD_CAT_FRONTEND_BOUND], 0.2, 1e-12);    /* 1200 / 6000 */
	assert_float_equal(f[TD_CAT_BAD_SPECULATION], 0.2 / 6, 1e-12); /* 200 / 6000 */
	assert_float_equal(f[TD_CAT_RETIRING], 0.3, 1e-12);
	assert_float_equal(f[TD_CAT_FRONTEND_BOUND_LATENCY], 0.1, 1e-12); /* 6 * 100 / 6000 */
	assert_float_equal(f[TD_CAT_BACKEND_BOUND_MEMORY], 0.4 * 0.25, 1e-12);
	assert_float_equal(f[TD_CAT_RETIRING_MICROCODE], 0.3 * 0.1, 1e-12);
	perfexpr_free(x);
}

/* A model counted with formulas perf's tables do not have. */
static void test_not_perfs(void **state)
{
	const struct uarch *ua = find("sapphirerapids-alt");
	struct perfexpr_env env = { .core_wide = true };
	struct perfexpr *x = NULL;
	char why[256] = "";

	(void)state;
	assert_non_null(ua);
	assert_int_equal(perfexpr_new(ua, all_cats(ua), &env, &x, why, sizeof(why)), -ENOENT);
	assert_null(x);
	assert_non_null(strstr(why, "is not from perf's tables (perfspect/"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_event),
		cmocka_unit_test(test_emeraldrapids),
		cmocka_unit_test(test_neoverse_n2),
		cmocka_unit_test(test_zen4),
		cmocka_unit_test(test_not_perfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
