/* SPDX-License-Identifier: MIT */
/* hw/depth: perf's nodes below level 2 compiled for a Sapphire Rapids
 * fixture's core PMU, their events encoded as perf 6.1 encodes them,
 * grouped on the counters left free, and evaluated. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "depth.h"
#include "pmu.h"
#include "sysfs.h"
#include "testlib.h"

static struct pmu_info *spr;

static int setup(void **state)
{
	struct sysfs *sysfs;
	char root[1024];

	(void)state;
	spr = calloc(1, sizeof(*spr));
	snprintf(root, sizeof(root), "%s/spr-2s", fixtures());
	if (!spr || sysfs_new(root, &sysfs) < 0 || pmu_discover(sysfs, spr) < 0)
		return -1;
	sysfs_free(sysfs);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(spr);
	return 0;
}

/* The level-1/2 group's events as the collector's plan has them. */
static void main_of(const struct pmu_core *core, struct depth_main *m)
{
	m->n = 0;
	for (unsigned i = 0; i < core->ua->n_events; i++) {
		m->names[m->n] = core->ua->events[i].name;
		m->vars[m->n++] = core->ua->events[i].var;
	}
}

static struct depth *compile(unsigned level, char *why, size_t len)
{
	const struct pmu_core *core = &spr->core[0];
	const struct dt_table *t = depth_table_of(core->ua->id, core->name);
	struct depth_main m;
	struct depth *d = NULL;

	assert_non_null(t);
	main_of(core, &m);
	assert_int_equal(depth_new(t, level, &core->formats, &m, &d, why, len), 0);
	return d;
}

static int node_index(const struct depth *d, const char *name)
{
	for (unsigned i = 0; i < depth_n_nodes(d); i++)
		if (strcmp(depth_node(d, i)->name, name) == 0)
			return (int)i;
	return -1;
}

static int event_index(const struct depth *d, const char *name)
{
	for (unsigned i = 0; i < depth_n_events(d); i++)
		if (strcmp(depth_event(d, i)->name, name) == 0)
			return (int)i;
	return -1;
}

/* perf 6.1's TopdownL3 on Sapphire Rapids: 25 nodes, each under its
 * level-2 category; level 4 adds 34 under them. */
static void test_nodes(void **state)
{
	char why[512];
	struct depth *d = compile(3, why, sizeof(why));
	int i;

	(void)state;
	assert_string_equal(depth_table_of("sapphirerapids", "cpu")->source,
			    "reference/perf-tables-6.1/x86/sapphirerapids/spr-metrics.json");
	assert_int_equal(depth_table_levels(depth_table_of("sapphirerapids", "cpu")), 6);
	assert_int_equal(depth_n_nodes(d), 25);
	assert_string_equal(why, "");
	i = node_index(d, "tma_l1_bound");
	assert_true(i >= 0);
	assert_int_equal(depth_node(d, (unsigned)i)->level, 3);
	assert_string_equal(depth_node(d, (unsigned)i)->parent, "tma_memory_bound");
	assert_int_equal(depth_node_parent(d, (unsigned)i), -1);
	/* Level 4's tma_x87_use is read by tma_fp_arith, not shown at 3. */
	assert_int_equal(node_index(d, "tma_x87_use"), -1);
	assert_true(event_index(d, "UOPS_EXECUTED.X87") >= 0);
	depth_free(d);

	d = compile(4, why, sizeof(why));
	/* Four of level 4 read msr@tsc@ or duration_time (the core's
	 * frequency): not core events, left out and said. */
	assert_int_equal(depth_n_nodes(d), 25 + 34 - 4);
	assert_non_null(strstr(why, "4 nodes left out, first tma_contested_accesses"));
	assert_non_null(strstr(why, "msr@tsc@ is not a core event"));
	i = node_index(d, "tma_x87_use");
	assert_true(i >= 0);
	assert_int_equal(depth_node_parent(d, (unsigned)i), node_index(d, "tma_fp_arith"));
	depth_free(d);
}

/* Encodings as perf 6.1 opens them (a FAKEPMU_TRACE of perf stat -e
 * 'cpu/EXE_ACTIVITY.3_PORTS_UTIL,umask=0x80/,cpu/AMX_OPS_RETIRED.BF16,
 * cmask=1/,cpu/EXE_ACTIVITY.2_PORTS_UTIL,umask=0xc/': config=0x88a6,
 * 0x10002ce, 0xca6): the user's terms OR-ed into the table's. */
static void test_encodings(void **state)
{
	struct depth *d = compile(4, NULL, 0);
	static const struct {
		const char *name;
		uint64_t config, config1;
	} want[] = {
		{ "cpu@EXE_ACTIVITY.3_PORTS_UTIL,umask=0x80@", 0x88a6, 0 },
		{ "cpu@AMX_OPS_RETIRED.BF16,cmask=1@", 0x10002ce, 0 },
		{ "cpu@EXE_ACTIVITY.2_PORTS_UTIL,umask=0xc@", 0xca6, 0 },
		{ "CPU_CLK_UNHALTED.THREAD", 0x3c, 0 },
		{ "INT_MISC.UNKNOWN_BRANCH_CYCLES", 0x40ad, 0x7 },
		{ "IDQ.MS_SWITCHES", (1u << 24) | (1u << 18) | 0x2079, 0 }, /* cmask=1,edge */
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		int i = event_index(d, want[k].name);

		if (i < 0)
			fail_msg("%s not among the events", want[k].name);
		assert_int_equal(depth_event(d, (unsigned)i)->enc.config[0], want[k].config);
		assert_int_equal(depth_event(d, (unsigned)i)->enc.config[1], want[k].config1);
	}
	/* The level-1/2 group's events are its variables, not depth events. */
	assert_int_equal(event_index(d, "TOPDOWN.SLOTS"), -1);
	assert_int_equal(event_index(d, "topdown-retiring"), -1);
	assert_int_equal(event_index(d, "INT_MISC.UOP_DROPPING"), -1);
	depth_free(d);
}

/* Groups on the 7 general-purpose counters the level-1/2 group leaves
 * (INT_MISC.UOP_DROPPING takes one) and fixed counter 1: every event in
 * one group, no group beyond the counters or the counters its events
 * allow, no shared register programmed twice. */
static void test_pack(void **state)
{
	struct depth *d = compile(3, NULL, 0);
	struct depth_group g[DEPTH_GROUPS_MAX];
	int n = depth_pack(d, 7, true, true, g, DEPTH_GROUPS_MAX);
	unsigned seen[DEPTH_EVENTS_MAX] = { 0 };

	(void)state;
	assert_true(n > 0);
	for (int j = 0; j < n; j++) {
		unsigned gp = 0, cap = 7, fixed1 = 0;

		for (unsigned k = 0; k < g[j].n; k++) {
			const struct depth_event *ev = depth_event(d, g[j].ev[k]);

			seen[g[j].ev[k]]++;
			if (ev->fixed == 1 && fixed1++ == 0)
				continue;
			gp++;
			if (ev->counters && ev->counters < cap)
				cap = ev->counters;
			for (unsigned o = 0; o < k; o++) {
				const struct depth_event *other = depth_event(d, g[j].ev[o]);

				if (ev->msr && other->msr == ev->msr)
					assert_true(other->msr_value == ev->msr_value);
			}
		}
		assert_true(gp <= cap);
	}
	for (unsigned i = 0; i < depth_n_events(d); i++)
		assert_int_equal(seen[i], 1);
	/* frontend=0x7 and frontend=0x8 program MSR_PEBS_FRONTEND apart. */
	for (int j = 0; j < n; j++) {
		bool a = false, b = false;

		for (unsigned k = 0; k < g[j].n; k++) {
			a |= strcmp(depth_event(d, g[j].ev[k])->name, "INT_MISC.UNKNOWN_BRANCH_CYCLES") == 0;
			b |= strcmp(depth_event(d, g[j].ev[k])->name, "UOPS_RETIRED.MS") == 0;
		}
		assert_false(a && b);
	}
	/* With fewer counters, more groups; with none, no group at all. */
	assert_true(depth_pack(d, 3, true, true, g, DEPTH_GROUPS_MAX) > n);
	assert_int_equal(depth_pack(d, 0, true, true, g, DEPTH_GROUPS_MAX), -ENOSPC);
	assert_int_equal(depth_pack(d, 7, true, true, g, 1), -ENOSPC);
	depth_free(d);
}

/* perf's expressions on chosen counts: tma_l2_bound =
 * (MEMORY_ACTIVITY.STALLS_L1D_MISS - MEMORY_ACTIVITY.STALLS_L2_MISS) /
 * CLKS; tma_l1_bound's max(..., 0); a node with no value (its
 * denominator 0) is NaN. */
static void test_eval(void **state)
{
	struct depth *d = compile(3, NULL, 0);
	double *vars = calloc(depth_n_vars(d), sizeof(double)), out[DEPTH_NODES_MAX];
	int l1 = node_index(d, "tma_l1_bound"), l2 = node_index(d, "tma_l2_bound");

	(void)state;
	assert_non_null(vars);
	vars[TD_EV_COUNT + event_index(d, "CPU_CLK_UNHALTED.THREAD")] = 1000;
	vars[TD_EV_COUNT + event_index(d, "MEMORY_ACTIVITY.STALLS_L1D_MISS")] = 300;
	vars[TD_EV_COUNT + event_index(d, "MEMORY_ACTIVITY.STALLS_L2_MISS")] = 120;
	vars[TD_EV_COUNT + event_index(d, "EXE_ACTIVITY.BOUND_ON_LOADS")] = 250;
	depth_eval(d, vars, out);
	assert_float_equal(out[l2], 0.18, 1e-12);
	assert_float_equal(out[l1], 0, 0); /* max(250 - 300, 0) / 1000 */
	vars[TD_EV_COUNT + event_index(d, "EXE_ACTIVITY.BOUND_ON_LOADS")] = 450;
	depth_eval(d, vars, out);
	assert_float_equal(out[l1], 0.15, 1e-12);
	vars[TD_EV_COUNT + event_index(d, "CPU_CLK_UNHALTED.THREAD")] = 0;
	depth_eval(d, vars, out);
	assert_true(isnan(out[l2]));
	free(vars);
	depth_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_encodings),
		cmocka_unit_test(test_pack),
		cmocka_unit_test(test_eval),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
