/* SPDX-License-Identifier: MIT */
/* Unit tests of plan: what is monitored on each fixture under various
 * configurations. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"

#include "plan.h"

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
	plan_make(&e->pmu, e->topo, &e->cfg, NULL, &e->plan);
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
	assert_string_equal(cpus_text(&e->plan.selected), "0-15");
	assert_string_equal(cpus_text(&e->plan.monitor), "0-15");
	assert_string_equal(cpus_text(&e->plan.unsupported), "");
	assert_string_equal(e->plan.unsupported_reason, "");
	assert_string_equal(cpus_text(&e->plan.nonexistent), "");
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

/* Ice Lake: level 1 from PERF_METRICS, level 2 from 13 general-purpose
 * events beside it, two refinement events: 15 on 8 counters, 2 groups. */
static void test_icx_default(void **state)
{
	struct env *e = load("icx-1s");
	const struct plan_pmu *pp;

	(void)state;
	make(e);
	pp = &e->plan.pmu[0];
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.level, 2);
	assert_string_equal(pp->level_note, "");
	assert_int_equal(pp->ua->formulas, UA_FORMULAS_ICL);
	assert_int_equal(pp->model, MODEL_PERF);
	assert_int_equal(pp->n_events, 20);
	assert_int_equal(pp->n_core, 18);
	assert_int_equal(pp->gp_available, 8);
	assert_int_equal(pp->gp_needed, 15);
	/* Three: the events perf's table keeps on counters 0-3 go in a group
	 * of at most four (plan_pack). */
	assert_int_equal(pp->n_groups, 3);
	/* slots leads the first group, with the metrics and 8 more. */
	assert_int_equal(pp->ua->events[pp->events[0]].var, TD_EV_SLOTS);
	assert_int_equal(pp->group_start[1], 13);
	/* The refinement events close the last group. */
	assert_int_equal(pp->ua->events[pp->events[18]].var, TD_EV_UOP_DROPPING);
	assert_int_equal(pp->ua->events[pp->events[19]].var, TD_EV_RECOVERY_CYCLES);
	assert_true(pp->cats == (TD_CATSET_L1 | TD_CATSET_L2_INTEL));
	assert_string_equal(pp->group_note,
			    "3 groups rotate: 15 general-purpose counters needed, 8 per CPU; events perf's tables keep on counters 0-3 (IDQ.MS_UOPS) go in groups of at most 4; each group is scaled to the interval by its running time, as perf does");
	assert_string_equal(cpus_text(&e->plan.monitor), "0-7");
	assert_string_equal(cpus_text(&e->plan.unsupported), "");
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
	const struct plan_pmu *atom;

	(void)state;
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.level, 2);
	assert_int_equal(e->plan.n_pmus, 2);
	assert_int_equal(e->plan.pmu[0].ua->formulas, UA_FORMULAS_GLC);
	assert_events(&e->plan.pmu[0], spr_events, 10, 9);
	atom = &e->plan.pmu[1];
	assert_string_equal(atom->core->name, "cpu_atom");
	assert_int_equal(atom->ua->formulas, UA_FORMULAS_GRT);
	assert_int_equal(atom->level, 2);
	assert_int_equal(atom->model, MODEL_PERF);
	assert_string_equal(atom->model_note, "");
	assert_false(atom->core_share);
	/* 12 general-purpose events on 6 counters, cycles on fixed counter 1 */
	assert_int_equal(atom->gp_needed, 12);
	assert_int_equal(atom->gp_available, 6);
	assert_int_equal(atom->n_groups, 2);
	assert_true(atom->cats == (TD_CATSET_L1 | (1u << TD_CAT_BASE) | (1u << TD_CAT_MS_UOPS) |
				   (1u << TD_CAT_BRANCH_MISPREDICTS) | (1u << TD_CAT_MACHINE_CLEARS) |
				   (1u << TD_CAT_FETCH_LATENCY) | (1u << TD_CAT_FETCH_BANDWIDTH) |
				   (1u << TD_CAT_MEMORY_BOUND) | (1u << TD_CAT_CORE_BOUND)));
	assert_ptr_equal(plan_pmu_of(&e->plan, 12), atom);
	assert_string_equal(cpus_text(&e->plan.selected), "0-15");
	assert_string_equal(cpus_text(&e->plan.monitor), "0-15");
	assert_string_equal(cpus_text(&e->plan.unsupported), "");
	assert_string_equal(e->plan.reason, "");
	unload(e);
}

static void test_adl_only_atoms(void **state)
{
	struct env *e = load("adl-hybrid");

	(void)state;
	configure(e, "[collect]\ncpus = 8-15\n");
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.n_pmus, 1);
	assert_string_equal(e->plan.pmu[0].core->name, "cpu_atom");
	assert_string_equal(cpus_text(&e->plan.monitor), "8-15");
	assert_string_equal(cpus_text(&e->plan.unsupported), "");
	unload(e);
}

static void test_adl_some_atoms(void **state)
{
	struct env *e = load("adl-hybrid");

	(void)state;
	configure(e, "[collect]\ncpus = 6-9\n");
	make(e);
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.n_pmus, 2);
	assert_string_equal(cpus_text(&e->plan.pmu[0].monitor), "6-7");
	assert_string_equal(cpus_text(&e->plan.pmu[1].monitor), "8-9");
	assert_string_equal(cpus_text(&e->plan.monitor), "6-9");
	assert_string_equal(cpus_text(&e->plan.unsupported), "");
	unload(e);
}

static void test_vm(void **state)
{
	static const char reason[] =
		"no core PMU registered by the kernel (bus/event_source/devices has no cpu, cpu_core or armv8_pmuv3): a virtual machine without a virtual PMU, or a CPU the perf driver does not support";
	struct env *e = load("vm-nopmu");

	(void)state;
	make(e);
	assert_false(e->plan.usable);
	assert_int_equal(e->plan.level, 0);
	assert_string_equal(e->plan.reason, reason);
	assert_string_equal(e->plan.unsupported_reason, reason);
	assert_string_equal(cpus_text(&e->plan.selected), "0-3");
	assert_string_equal(cpus_text(&e->plan.monitor), "");
	assert_string_equal(cpus_text(&e->plan.unsupported), "0-3");
	assert_int_equal(e->plan.n_pmus, 0);
	unload(e);
}

static const enum td_event skx_group1[] = {
	TD_EV_UOPS_ISSUED, TD_EV_RETIRE_SLOTS, TD_EV_IDQ_NOT_DELIVERED, TD_EV_RECOVERY_ANY,
	TD_EV_CYCLES_ANY, TD_EV_INST_RETIRED,
};

static void assert_group(const struct plan_pmu *pp, unsigned g, const enum td_event *want, unsigned n)
{
	assert_int_equal(pp->group_start[g + 1] - pp->group_start[g], n);
	for (unsigned i = 0; i < n; i++)
		if (pp->ua->events[pp->events[pp->group_start[g] + i]].var != want[i])
			fail_msg("group %u event %u = %s, expected variable %d", g, i,
				 pp->ua->events[pp->events[pp->group_start[g] + i]].name, want[i]);
}

/* Skylake-SP with SMT, every thread counted: AnyThread clocks and
 * recovery, level 1 in the first group (4 general-purpose counters and
 * fixed counters 0 and 1), level 2 in three more. */
static void test_skx(void **state)
{
	struct env *e = load("skx-1s");
	const struct plan_pmu *pp;

	(void)state;
	make(e);
	pp = &e->plan.pmu[0];
	assert_true(e->plan.usable);
	assert_int_equal(e->plan.level, 2);
	assert_string_equal(pp->ua->id, "skylakex");
	assert_int_equal(pp->ua->formulas, UA_FORMULAS_SKL);
	assert_int_equal(pp->mode, UA_MODE_SMT);
	assert_true(pp->core_share);
	assert_int_equal(pp->model, MODEL_PERF);
	assert_string_equal(pp->model_note, "");
	assert_int_equal(pp->n_events, 15);
	assert_int_equal(pp->gp_available, 4);
	assert_int_equal(pp->gp_needed, 13);
	assert_int_equal(pp->n_groups, 4);
	assert_group(pp, 0, skx_group1, 6);
	assert_string_equal(cpus_text(&e->plan.monitor), "0-7");
	unload(e);
}

/* Only some threads of a core: perf's per-thread estimate of the core's
 * clocks (#core_wide is false), which needs two more events. */
static void test_skx_some_threads(void **state)
{
	struct env *e = load("skx-1s");
	const struct plan_pmu *pp;
	bool one_thread = false;

	(void)state;
	configure(e, "[collect]\ncpus = 0-1\nlevel = 1\n");
	make(e);
	pp = &e->plan.pmu[0];
	assert_int_equal(pp->mode, UA_MODE_EBS);
	assert_true(pp->core_share);
	for (unsigned i = 0; i < pp->n_events; i++) {
		enum td_event v = pp->ua->events[pp->events[i]].var;

		one_thread |= v == TD_EV_ONE_THREAD_ACTIVE;
		assert_true(v != TD_EV_CYCLES_ANY);
	}
	assert_true(one_thread);
	/* CYCLES on fixed counter 1, six general-purpose events on four. */
	assert_int_equal(pp->gp_needed, 6);
	assert_int_equal(pp->n_groups, 2);
	/* Both threads of cores 0 and 1 (CPUs 0, 4 and 1, 5): AnyThread. */
	configure(e, "[collect]\ncpus = 0-1,4-5\n");
	make(e);
	assert_int_equal(e->plan.pmu[0].mode, UA_MODE_SMT);
	unload(e);
}

/* The NMI watchdog holds fixed counter 1: the clock event takes a
 * general-purpose counter, and level 1 no longer fits one group. */
static void test_skx_watchdog(void **state)
{
	struct env *e = load("skx-1s");
	struct budget b;
	const struct plan_pmu *pp;

	(void)state;
	configure(e, "[collect]\nlevel = 1\n");
	budget_table(&e->pmu, e->topo, e->sysfs, &b);
	b.watchdog = true;
	memset(&e->plan, 0x5a, sizeof(e->plan));
	plan_make(&e->pmu, e->topo, &e->cfg, &b, &e->plan);
	pp = &e->plan.pmu[0];
	assert_true(pp->watchdog);
	assert_int_equal(pp->gp_needed, 5);
	assert_int_equal(pp->n_groups, 2);
	assert_string_equal(pp->group_note,
			    "2 groups rotate: 5 general-purpose counters needed, 4 per CPU (the NMI watchdog holds fixed counter 1: cycles take one of them); each group is scaled to the interval by its running time, as perf does");
	/* Without it, level 1 is one group. */
	b.watchdog = false;
	plan_make(&e->pmu, e->topo, &e->cfg, &b, &e->plan);
	assert_int_equal(e->plan.pmu[0].n_groups, 1);
	/* allow_tsx_force_abort=0 (the probe finds 3): two groups again. */
	b.pmu[0].gp = 3;
	plan_make(&e->pmu, e->topo, &e->cfg, &b, &e->plan);
	assert_int_equal(e->plan.pmu[0].n_groups, 2);
	unload(e);
}

/* AMD Zen 4: six counters from the driver's figure, level 1 in one group
 * of six, level 2 in a second; the NMI watchdog takes a general-purpose
 * counter (no fixed counters), so level 1 then needs two groups. */
static void test_zen4(void **state)
{
	struct env *e = load("genoa-2s");
	struct budget b;
	const struct plan_pmu *pp;

	(void)state;
	budget_table(&e->pmu, e->topo, e->sysfs, &b);
	assert_true(b.smt);
	assert_int_equal(b.pmu[0].gp, 6);
	assert_string_equal(b.pmu[0].source,
			    "the kernel's driver: arch/x86/events/amd/core.c (AMD64_NUM_COUNTERS_CORE, CPUID 0x80000022)");
	memset(&e->plan, 0x5a, sizeof(e->plan));
	plan_make(&e->pmu, e->topo, &e->cfg, &b, &e->plan);
	pp = &e->plan.pmu[0];
	assert_false(pp->core_share);
	assert_int_equal(pp->level, 2);
	assert_int_equal(pp->gp_needed, 12);
	assert_int_equal(pp->gp_available, 6);
	assert_int_equal(pp->n_groups, 2);
	assert_int_equal(pp->group_start[1], 6);
	assert_true(td_catset_has(pp->cats, TD_CAT_SMT_CONTENTION));
	assert_true(td_catset_has(pp->cats, TD_CAT_BACKEND_BOUND_MEMORY));
	assert_false(td_catset_has(pp->cats, TD_CAT_MEMORY_BOUND));

	configure(e, "[collect]\nlevel = 1\n");
	plan_make(&e->pmu, e->topo, &e->cfg, &b, &e->plan);
	assert_int_equal(e->plan.pmu[0].n_groups, 1);
	b.watchdog = true;
	plan_make(&e->pmu, e->topo, &e->cfg, &b, &e->plan);
	pp = &e->plan.pmu[0];
	assert_int_equal(pp->gp_available, 5);
	assert_int_equal(pp->gp_needed, 6);
	assert_int_equal(pp->n_groups, 2);
	assert_string_equal(pp->group_note,
			    "2 groups rotate: 6 general-purpose counters needed, 5 per CPU (the NMI watchdog holds one more); each group is scaled to the interval by its running time, as perf does");
	unload(e);
}

/* SMT off: the thread's own clocks, 8 counters (Cascade Lake fixture). */
static void test_clx_nosmt(void **state)
{
	struct env *e = load("clx-2s");
	struct budget b;
	const struct plan_pmu *pp;

	(void)state;
	budget_table(&e->pmu, e->topo, e->sysfs, &b);
	assert_false(b.smt);
	b.pmu[0].gp = 8;
	memset(&e->plan, 0x5a, sizeof(e->plan));
	plan_make(&e->pmu, e->topo, &e->cfg, &b, &e->plan);
	pp = &e->plan.pmu[0];
	assert_int_equal(pp->mode, UA_MODE_NOSMT);
	assert_false(pp->core_share);
	assert_int_equal(pp->gp_needed, 13);
	/* Eight counters without SMT, but CYCLE_ACTIVITY.STALLS_MEM_ANY stays
	 * on 0-3 (CounterHTOff "0,1,2,3"): its group holds four. */
	assert_int_equal(pp->n_groups, 3);
	unload(e);
}

/* Sierra Forest: Crestmont, 9 general-purpose events (perf's own for
 * every level-2 node) on 8 counters: two groups. */
static void test_srf(void **state)
{
	struct env *e = load("srf-2s");
	const struct plan_pmu *pp;

	(void)state;
	make(e);
	pp = &e->plan.pmu[0];
	assert_true(e->plan.usable);
	assert_string_equal(pp->ua->id, "sierraforest");
	assert_int_equal(pp->ua->formulas, UA_FORMULAS_CMT);
	assert_int_equal(pp->level, 2);
	assert_int_equal(pp->n_groups, 2);
	assert_int_equal(pp->gp_needed, 9);
	assert_true(pp->cats == (TD_CATSET_L1 | (1u << TD_CAT_BRANCH_MISPREDICTS) |
				 (1u << TD_CAT_MACHINE_CLEARS) | (1u << TD_CAT_IFETCH_LATENCY) |
				 (1u << TD_CAT_IFETCH_BANDWIDTH) | (1u << TD_CAT_CORE_BOUND) |
				 (1u << TD_CAT_RESOURCE_BOUND)));
	unload(e);
}

/* plan_pack alone: first fit keeps level 1 together, refinement events
 * stay last, an event no counter can take is refused. */
/* Every group's general-purpose events fit the narrowest counter list
 * among them (the packer's rule). */
static bool restricted_groups_fit(const struct uarch *ua, const uint8_t *ev, const uint8_t *start,
				  unsigned groups, enum ua_mode mode)
{
	for (unsigned g = 0; g < groups; g++) {
		unsigned gp = 0, cap = UINT_MAX;
		bool busy[4] = { false, false, false, false };

		for (unsigned i = start[g]; i < start[g + 1]; i++) {
			const struct ua_event *e = &ua->events[ev[i]];
			int fixed = ua_event_fixed(e);

			if (fixed == 3 || (fixed >= 0 && !busy[fixed])) {
				if (fixed >= 0)
					busy[fixed] = true;
				continue;
			}
			gp++;
			if (ua_event_counters(e, mode) < cap)
				cap = ua_event_counters(e, mode);
		}
		if (gp > cap)
			return false;
	}
	return true;
}

static void test_pack(void **state)
{
	const struct uarch *icx = NULL, *skx = NULL;
	uint8_t in[UA_EVENTS_MAX], out[UA_EVENTS_MAX], start[PLAN_GROUPS_MAX + 1];
	unsigned n = 0;

	(void)state;
	for (size_t i = 0; i < ua_count(); i++) {
		if (strcmp(ua_get(i)->id, "icelakex") == 0)
			icx = ua_get(i);
		if (strcmp(ua_get(i)->id, "skylakex") == 0)
			skx = ua_get(i);
	}
	assert_non_null(icx);
	assert_non_null(skx);
	/* Ice Lake: refinement events first in the input stay behind the rest. */
	for (unsigned i = 0; i < icx->n_events; i++)
		if (!icx->events[i].refine)
			in[n++] = (uint8_t)i;
	for (unsigned i = 0; i < icx->n_events; i++)
		if (icx->events[i].refine)
			in[n++] = (uint8_t)i;
	assert_int_equal(plan_pack(icx, in, n, n - 2, 8, false, UA_MODE_SMT, out, start), 3);
	assert_true(icx->events[out[n - 1]].refine && icx->events[out[n - 2]].refine);
	assert_int_equal(ua_event_fixed(&icx->events[out[0]]), 3);
	/* The four events perf's table keeps on counters 0-3 (IDQ.MS_UOPS,
	 * IDQ.MITE_UOPS, UOPS_DECODED.DEC0 and its cmask form) share a group
	 * of at most four general-purpose events, so none can land on 4-7. */
	assert_true(restricted_groups_fit(icx, out, start, 3, UA_MODE_SMT));
	/* No general-purpose counter at all: nothing fits. */
	assert_int_equal(plan_pack(icx, in, n, n - 2, 0, false, UA_MODE_SMT, out, start), -ENOSPC);
	/* Skylake: 4 counters, fixed counter 1 free: UOPS_ISSUED...THREAD_ANY in one. */
	n = 0;
	for (unsigned i = 0; i < skx->n_events; i++)
		if (skx->events[i].level == 1 &&
		    (skx->events[i].modes == 0 || (skx->events[i].modes & UA_MODE_SMT)))
			in[n++] = (uint8_t)i;
	assert_int_equal(n, 5);
	assert_int_equal(plan_pack(skx, in, n, n, 4, false, UA_MODE_SMT, out, start), 1);
	assert_int_equal(plan_pack(skx, in, n, n, 4, true, UA_MODE_SMT, out, start), 2);
	/* Skylake-SP without SMT: 8 counters (CounterHTOff) except
	 * CYCLE_ACTIVITY.STALLS_MEM_ANY, which stays on 0-3 (its CounterHTOff
	 * too): its group holds at most four. */
	n = 0;
	for (unsigned i = 0; i < skx->n_events; i++)
		if (skx->events[i].modes == 0 || (skx->events[i].modes & UA_MODE_NOSMT))
			in[n++] = (uint8_t)i;
	{
		int groups = plan_pack(skx, in, n, n, 8, false, UA_MODE_NOSMT, out, start);

		assert_true(groups >= 2);
		assert_true(restricted_groups_fit(skx, out, start, (unsigned)groups, UA_MODE_NOSMT));
	}
}

static void test_watchdog_parse(void **state)
{
	char why[160];

	(void)state;
	/* x86: 1 in a writable file is the perf detector. */
	assert_true(budget_watchdog("1\n", true, false, NULL, why, sizeof(why)));
	assert_string_equal(why, "kernel.nmi_watchdog = 1: the perf hard-lockup detector holds a cycles counter");
	assert_true(budget_watchdog("1", true, false, "", why, sizeof(why)));
	assert_false(budget_watchdog("0\n", true, false, NULL, why, sizeof(why)));
	assert_string_equal(why, "kernel.nmi_watchdog = 0");
	assert_false(budget_watchdog("10\n", true, false, NULL, why, sizeof(why)));
	assert_false(budget_watchdog("", true, false, NULL, why, sizeof(why)));
	assert_false(budget_watchdog(NULL, false, false, NULL, why, sizeof(why)));
	assert_string_equal(why, "no hard-lockup detector (no kernel.nmi_watchdog)");
	/* Read-only (0444): no detector available, whatever it reads. */
	assert_false(budget_watchdog("1\n", false, false, NULL, why, sizeof(why)));
	assert_string_equal(why, "kernel.nmi_watchdog reads 1 but is read-only: no hard-lockup detector runs");
	/* arm64: the perf detector only with pseudo-NMIs. */
	assert_false(budget_watchdog("1\n", true, true, "BOOT_IMAGE=/vmlinuz root=/dev/vda1\n", why, sizeof(why)));
	assert_string_equal(why, "kernel.nmi_watchdog = 1 without pseudo-NMIs: the buddy detector, which holds no counter");
	assert_true(budget_watchdog("1\n", true, true, "root=/dev/vda1 irqchip.gicv3_pseudo_nmi=1\n", why, sizeof(why)));
}

/* What the collector saw goes into the budget, and the plan follows. */
static void test_budget_learn(void **state)
{
	struct budget b;
	struct budget_evidence ev = { .pmu = 0, .cpu = 0, .gp_in_group = 8, .gp_fit = 6 };

	(void)state;
	memset(&b, 0, sizeof(b));
	b.pmu[0].gp = 8;
	assert_true(budget_learn(&b, &ev, 8));
	assert_int_equal(b.pmu[0].group_max, 6);
	assert_string_equal(b.pmu[0].learned, "the kernel refused a group of 8 general-purpose events on CPU 0 (EINVAL past member 6): groups of at most 6");
	/* No smaller than what is in use already: one fewer. */
	ev.gp_fit = 6;
	assert_true(budget_learn(&b, &ev, 6));
	assert_int_equal(b.pmu[0].group_max, 5);
	/* Nothing left to give up. */
	ev.gp_fit = 1;
	assert_false(budget_learn(&b, &ev, 1));
}

static void test_spr_holes(void **state)
{
	struct env *e = load("spr-holes");

	(void)state;
	make(e);
	assert_true(e->plan.usable);
	/* Offline CPUs are monitored once they come online. */
	assert_string_equal(cpus_text(&e->plan.monitor), "0-7");
	assert_string_equal(cpus_text(&e->plan.unsupported), "");
	unload(e);
}

static void test_cpus_nonexistent(void **state)
{
	struct env *e = load("spr-2s");

	(void)state;
	configure(e, "[collect]\ncpus = 0-3,99\n");
	make(e);
	assert_true(e->plan.usable);
	assert_string_equal(cpus_text(&e->plan.selected), "0-3");
	assert_string_equal(cpus_text(&e->plan.monitor), "0-3");
	assert_string_equal(cpus_text(&e->plan.nonexistent), "99");
	assert_string_equal(cpus_text(&e->plan.unsupported), "");
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
	assert_string_equal(cpus_text(&e->plan.selected), "");
	assert_string_equal(cpus_text(&e->plan.nonexistent), "16-31,99");
	unload(e);
}

static void test_vm_nonexistent(void **state)
{
	struct env *e = load("vm-nopmu");

	(void)state;
	configure(e, "[collect]\ncpus = 2-5\n");
	make(e);
	assert_false(e->plan.usable);
	assert_string_equal(cpus_text(&e->plan.selected), "2-3");
	assert_string_equal(cpus_text(&e->plan.unsupported), "2-3");
	assert_string_equal(cpus_text(&e->plan.nonexistent), "4-5");
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
	/* Level 2's general-purpose events stay: they are not refinements. */
	assert_int_equal(e->plan.pmu[0].n_events, 18);
	assert_int_equal(e->plan.pmu[0].n_core, 18);
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
	assert_string_equal(cpus_text(&e->plan.monitor), "0-15");
	assert_string_equal(cpus_text(&e->plan.unsupported), "");
	unload(e);

	/* Not covered, no reason from its PMU: a generic one. */
	e = load("adl-hybrid");
	e->pmu.core[1].level = 0;
	e->pmu.core[1].reason[0] = '\0';
	make(e);
	assert_string_equal(cpus_text(&e->plan.unsupported), "8-15");
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
		cmocka_unit_test(test_skx_some_threads),
		cmocka_unit_test(test_skx_watchdog),
		cmocka_unit_test(test_zen4),
		cmocka_unit_test(test_clx_nosmt),
		cmocka_unit_test(test_srf),
		cmocka_unit_test(test_pack),
		cmocka_unit_test(test_watchdog_parse),
		cmocka_unit_test(test_budget_learn),
		cmocka_unit_test(test_spr_holes),
		cmocka_unit_test(test_cpus_nonexistent),
		cmocka_unit_test(test_cpus_none_exist),
		cmocka_unit_test(test_vm_nonexistent),
		cmocka_unit_test(test_refinement_unavailable),
		cmocka_unit_test(test_no_cpus_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
