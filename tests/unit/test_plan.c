/* SPDX-License-Identifier: MIT */
/* Unit tests of plan: what is monitored on each fixture under various
 * configurations. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan.h"

static const char *fixtures(void)
{
	const char *f = getenv("FIXTURES");

	return f && *f ? f : "tests/fixtures";
}

struct env {
	struct sysfs *sysfs;
	struct topo *topo;
	struct pmu_info pmu;
	struct config cfg;
	struct plan plan;
};

static struct env *load(const char *fixture)
{
	struct env *e = calloc(1, sizeof(*e));
	char root[1024];

	assert_non_null(e);
	snprintf(root, sizeof(root), "%s/%s", fixtures(), fixture);
	if (sysfs_new(root, &e->sysfs) < 0)
		fail_msg("cannot open fixture %s", root);
	assert_int_equal(topo_new(e->sysfs, &e->topo), 0);
	assert_int_equal(pmu_discover(e->sysfs, &e->pmu), 0);
	config_defaults(&e->cfg);
	return e;
}

static void unload(struct env *e)
{
	topo_free(e->topo);
	sysfs_free(e->sysfs);
	free(e);
}

/* Sets config keys from INI text over the current config. */
static void configure(struct env *e, const char *ini)
{
	struct config_diag diag = { 0 };

	if (config_parse("test", ini, strlen(ini), &e->cfg, &diag) != 0)
		fail_msg("bad test config: %s", diag.n ? diag.entries[0].text : "?");
}

static void make(struct env *e)
{
	memset(&e->plan, 0x5a, sizeof(e->plan));
	plan_make(&e->pmu, e->topo, &e->cfg, &e->plan);
}

static const char *list(const struct cpuset *set)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	cpuset_format(set, buf[i], sizeof(buf[i]));
	return buf[i];
}

/* The events of the PMU's group, by formula variable. */
static void assert_events(const struct plan_pmu *pp, const enum td_event *want, unsigned n,
			  unsigned n_core)
{
	if (pp->n_events != n)
		fail_msg("n_events = %u, expected %u", pp->n_events, n);
	assert_int_equal(pp->n_core, n_core);
	assert_int_equal(pp->n_groups, 1);
	assert_int_equal(pp->group_start[0], 0);
	assert_int_equal(pp->group_start[1], n);
	for (unsigned i = 0; i < n; i++)
		if (pp->ua->events[pp->events[i]].var != want[i])
			fail_msg("events[%u] = %s, expected variable %d", i,
				 pp->ua->events[pp->events[i]].name, want[i]);
}

/* Pretends the core PMU could not encode the event of @var. */
static void drop_event(struct pmu_core *core, enum td_event var)
{
	for (unsigned i = 0; i < core->ua->n_events; i++)
		if (core->ua->events[i].var == var)
			core->have[i] = false;
}

static const enum td_event spr_events[] = {
	TD_EV_SLOTS, TD_EV_RETIRING, TD_EV_BAD_SPEC, TD_EV_FE_BOUND, TD_EV_BE_BOUND,
	TD_EV_HEAVY_OPS, TD_EV_BR_MISPREDICT, TD_EV_FETCH_LAT, TD_EV_MEM_BOUND,
	TD_EV_UOP_DROPPING,
};

static const enum td_event icl_events[] = {
	TD_EV_SLOTS, TD_EV_RETIRING, TD_EV_BAD_SPEC, TD_EV_FE_BOUND, TD_EV_BE_BOUND,
	TD_EV_UOP_DROPPING, TD_EV_RECOVERY_CYCLES,
};

static void test_spr_default(void **state)
{
	struct env *e = load("spr-2s");

	(void)state;
	make(e);
	assert_true(e->plan.usable);
	assert_string_equal(e->plan.reason, "");
	assert_int_equal(e->plan.level, 2);
	assert_int_equal(e->plan.n_pmus, 1);
	assert_string_equal(e->plan.pmu[0].core->name, "cpu");
	assert_string_equal(e->plan.pmu[0].ua->id, "sapphirerapids");
	assert_int_equal(e->plan.pmu[0].level, 2);
	assert_int_equal(e->plan.cats, TD_CATSET_L1 | TD_CATSET_L2_INTEL);
	assert_ptr_equal(plan_pmu_of(&e->plan, 3), &e->plan.pmu[0]);
	assert_string_equal(e->plan.pmu[0].level_note, "");
	assert_int_equal(e->plan.pmu[0].model, MODEL_PERF);
	assert_string_equal(e->plan.pmu[0].model_note, "");
	assert_int_equal(e->plan.pmu[0].ua->formulas, UA_FORMULAS_GLC);
	/* slots + 4 L1 + 4 L2 + INT_MISC.UOP_DROPPING */
	assert_events(&e->plan.pmu[0], spr_events, 10, 9);
	assert_string_equal(list(&e->plan.selected), "0-15");
	assert_string_equal(list(&e->plan.monitor), "0-15");
	assert_string_equal(list(&e->plan.unsupported), "");
	assert_string_equal(e->plan.unsupported_reason, "");
	assert_string_equal(list(&e->plan.nonexistent), "");
	unload(e);
}

static void test_spr_level1(void **state)
{
	static const enum td_event want[] = {
		TD_EV_SLOTS, TD_EV_RETIRING, TD_EV_BAD_SPEC, TD_EV_FE_BOUND, TD_EV_BE_BOUND,
		TD_EV_UOP_DROPPING,
	};
	struct env *e = load("spr-2s");

	(void)state;
	configure(e, "[collect]\nlevel = 1\n");
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.level, 1);
	/* Lowered by configuration, not by the hardware: no note. */
	assert_string_equal(e->plan.pmu[0].level_note, "");
	/* Still the Sapphire Rapids formulas: the PMU decides them. */
	assert_int_equal(e->plan.pmu[0].ua->formulas, UA_FORMULAS_GLC);
	assert_events(&e->plan.pmu[0], want, 6, 5);
	unload(e);
}

static void test_spr_model_hardware(void **state)
{
	struct env *e = load("spr-2s");

	(void)state;
	configure(e, "[collect]\nmodel = hardware\n");
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.pmu[0].model, MODEL_HARDWARE);
	assert_string_equal(e->plan.pmu[0].model_note, "");
	assert_events(&e->plan.pmu[0], spr_events, 9, 9);
	unload(e);
}

static void test_icx_default(void **state)
{
	struct env *e = load("icx-1s");

	(void)state;
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.level, 1);
	assert_string_equal(e->plan.pmu[0].level_note,
			    "level 2 requested but cpu (Ice Lake server, pmu_name icelake) offers level 1; using level 1");
	assert_int_equal(e->plan.pmu[0].ua->formulas, UA_FORMULAS_ICL);
	assert_int_equal(e->plan.pmu[0].model, MODEL_PERF);
	assert_events(&e->plan.pmu[0], icl_events, 7, 5);
	assert_string_equal(list(&e->plan.monitor), "0-7");
	assert_string_equal(list(&e->plan.unsupported), "");
	unload(e);
}

static void test_icx_level1_hardware(void **state)
{
	struct env *e = load("icx-1s");

	(void)state;
	configure(e, "[collect]\nlevel = 1\nmodel = hardware\n");
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.level, 1);
	assert_string_equal(e->plan.pmu[0].level_note, "");
	assert_int_equal(e->plan.pmu[0].model, MODEL_HARDWARE);
	assert_events(&e->plan.pmu[0], icl_events, 5, 5);
	unload(e);
}

static void test_adl_hybrid(void **state)
{
	struct env *e = load("adl-hybrid");

	(void)state;
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.level, 2);
	assert_int_equal(e->plan.pmu[0].ua->formulas, UA_FORMULAS_GLC);
	assert_events(&e->plan.pmu[0], spr_events, 10, 9);
	assert_string_equal(list(&e->plan.selected), "0-15");
	assert_string_equal(list(&e->plan.monitor), "0-7");
	assert_string_equal(list(&e->plan.unsupported), "8-15");
	assert_string_equal(e->plan.unsupported_reason,
			    "cpu_atom (E-core): no SLOTS counter or PERF_METRICS");
	assert_string_equal(e->plan.reason, "");
	unload(e);
}

static void test_adl_only_atoms(void **state)
{
	struct env *e = load("adl-hybrid");

	(void)state;
	configure(e, "[collect]\ncpus = 8-15\n");
	make(e);
	assert_false(e->plan.usable);
	assert_int_equal(e->plan.level, 0);
	assert_string_equal(list(&e->plan.monitor), "");
	assert_string_equal(list(&e->plan.unsupported), "8-15");
	assert_string_equal(e->plan.reason,
			    "none of the configured CPUs is covered by a core PMU with TopDown: cpu_atom (E-core): no SLOTS counter or PERF_METRICS");
	unload(e);
}

static void test_adl_some_atoms(void **state)
{
	struct env *e = load("adl-hybrid");

	(void)state;
	configure(e, "[collect]\ncpus = 6-9\n");
	make(e);
	assert_true(e->plan.usable);
	assert_string_equal(list(&e->plan.monitor), "6-7");
	assert_string_equal(list(&e->plan.unsupported), "8-9");
	unload(e);
}

static void test_vm(void **state)
{
	static const char reason[] =
		"no core PMU registered by the kernel (bus/event_source/devices has no cpu or cpu_core): a virtual machine without a virtual PMU, or a CPU the perf driver does not support";
	struct env *e = load("vm-nopmu");

	(void)state;
	make(e);
	assert_false(e->plan.usable);
	assert_int_equal(e->plan.level, 0);
	assert_string_equal(e->plan.reason, reason);
	assert_string_equal(e->plan.unsupported_reason, reason);
	assert_string_equal(list(&e->plan.selected), "0-3");
	assert_string_equal(list(&e->plan.monitor), "");
	assert_string_equal(list(&e->plan.unsupported), "0-3");
	assert_int_equal(e->plan.n_pmus, 0);
	unload(e);
}

static void test_skx(void **state)
{
	struct env *e = load("skx-1s");

	(void)state;
	make(e);
	assert_false(e->plan.usable);
	assert_int_equal(e->plan.level, 0);
	assert_string_equal(e->plan.reason,
			    "pre-Ice Lake CPU (pmu_name skylake): no SLOTS counter or PERF_METRICS, TopDown metrics need Ice Lake or later");
	assert_string_equal(list(&e->plan.unsupported), "0-7");
	assert_string_equal(list(&e->plan.monitor), "");
	assert_int_equal(e->plan.n_pmus, 0);
	unload(e);
}

static void test_spr_holes(void **state)
{
	struct env *e = load("spr-holes");

	(void)state;
	make(e);
	assert_true(e->plan.usable);
	/* Offline CPUs are monitored once they come online. */
	assert_string_equal(list(&e->plan.monitor), "0-7");
	assert_string_equal(list(&e->plan.unsupported), "");
	unload(e);
}

static void test_cpus_nonexistent(void **state)
{
	struct env *e = load("spr-2s");

	(void)state;
	configure(e, "[collect]\ncpus = 0-3,99\n");
	make(e);
	assert_true(e->plan.usable);
	assert_string_equal(list(&e->plan.selected), "0-3");
	assert_string_equal(list(&e->plan.monitor), "0-3");
	assert_string_equal(list(&e->plan.nonexistent), "99");
	assert_string_equal(list(&e->plan.unsupported), "");
	assert_int_equal(e->plan.level, 2);
	unload(e);
}

static void test_cpus_none_exist(void **state)
{
	struct env *e = load("spr-2s");

	(void)state;
	configure(e, "[collect]\ncpus = 16-31,99\n");
	make(e);
	assert_false(e->plan.usable);
	assert_int_equal(e->plan.level, 0);
	assert_string_equal(e->plan.reason, "none of the configured CPUs exist");
	assert_string_equal(list(&e->plan.selected), "");
	assert_string_equal(list(&e->plan.nonexistent), "16-31,99");
	unload(e);
}

static void test_vm_nonexistent(void **state)
{
	struct env *e = load("vm-nopmu");

	(void)state;
	configure(e, "[collect]\ncpus = 2-5\n");
	make(e);
	assert_false(e->plan.usable);
	assert_string_equal(list(&e->plan.selected), "2-3");
	assert_string_equal(list(&e->plan.unsupported), "2-3");
	assert_string_equal(list(&e->plan.nonexistent), "4-5");
	unload(e);
}

/* The refinement events cannot be encoded: model perf falls back. */
static void test_refinement_unavailable(void **state)
{
	struct env *e = load("spr-2s");

	(void)state;
	drop_event(&e->pmu.core[0], TD_EV_UOP_DROPPING);
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.pmu[0].model, MODEL_HARDWARE);
	assert_string_equal(e->plan.pmu[0].model_note,
			    "the refinement events cannot be encoded with cpu's format files; using model hardware");
	assert_events(&e->plan.pmu[0], spr_events, 9, 9);
	unload(e);

	/* Ice Lake needs both refinement events. */
	e = load("icx-1s");
	drop_event(&e->pmu.core[0], TD_EV_RECOVERY_CYCLES);
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.pmu[0].model, MODEL_HARDWARE);
	assert_events(&e->plan.pmu[0], icl_events, 5, 5);
	unload(e);

	/* Sapphire Rapids does not need RECOVERY_CYCLES. */
	e = load("spr-2s");
	drop_event(&e->pmu.core[0], TD_EV_RECOVERY_CYCLES);
	make(e);
	assert_int_equal(e->plan.pmu[0].model, MODEL_PERF);
	assert_events(&e->plan.pmu[0], spr_events, 10, 9);
	unload(e);
}

/* A core PMU without a cpus file covers every possible CPU. */
static void test_no_cpus_file(void **state)
{
	struct env *e = load("adl-hybrid");

	(void)state;
	e->pmu.core[0].has_cpus = false;
	e->pmu.core[1].reason[0] = '\0';
	make(e);
	assert_string_equal(list(&e->plan.monitor), "0-15");
	assert_string_equal(list(&e->plan.unsupported), "");
	unload(e);

	/* Not covered, no hybrid reason: a generic one. */
	e = load("adl-hybrid");
	e->pmu.core[1].reason[0] = '\0';
	make(e);
	assert_string_equal(list(&e->plan.unsupported), "8-15");
	assert_string_equal(e->plan.unsupported_reason, "not covered by the core PMU");
	unload(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spr_default),
		cmocka_unit_test(test_spr_level1),
		cmocka_unit_test(test_spr_model_hardware),
		cmocka_unit_test(test_icx_default),
		cmocka_unit_test(test_icx_level1_hardware),
		cmocka_unit_test(test_adl_hybrid),
		cmocka_unit_test(test_adl_only_atoms),
		cmocka_unit_test(test_adl_some_atoms),
		cmocka_unit_test(test_vm),
		cmocka_unit_test(test_skx),
		cmocka_unit_test(test_spr_holes),
		cmocka_unit_test(test_cpus_nonexistent),
		cmocka_unit_test(test_cpus_none_exist),
		cmocka_unit_test(test_vm_nonexistent),
		cmocka_unit_test(test_refinement_unavailable),
		cmocka_unit_test(test_no_cpus_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
