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
#include <stdlib.h>
#include <string.h>

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
	struct depth_main m = { 0 };
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
	/* Four of level 4 read msr@tsc@ and duration_time (the core's
	 * frequency): without the msr PMU (compile() gives none) left out
	 * and said (test_frequency has them). */
	assert_int_equal(depth_n_nodes(d), 25 + 34 - 4);
	assert_non_null(strstr(why, "4 nodes left out (--probe says why each), first tma_contested_accesses"));
	assert_non_null(strstr(why, "msr@tsc@: the kernel has no msr PMU"));
	/* Each of the four with its reason, in the table's order (perf's
	 * spr-metrics.json's order of those reading Average_Frequency). */
	{
		static const char *const left[] = { "tma_contested_accesses", "tma_data_sharing",
						    "tma_l3_hit_latency", "tma_false_sharing" };
		const char *because;

		assert_int_equal(depth_n_left(d), 4);
		for (unsigned k = 0; k < 4; k++) {
			assert_string_equal(depth_left(d, k, &because), left[k]);
			assert_non_null(strstr(because, "msr@tsc@: the kernel has no msr PMU"));
		}
	}
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
	int n = depth_pack(d, 7, DEPTH_FIXED(0) | DEPTH_FIXED(1) | DEPTH_FIXED(2), g, DEPTH_GROUPS_MAX);
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
	assert_true(depth_pack(d, 3, DEPTH_FIXED(0) | DEPTH_FIXED(1) | DEPTH_FIXED(2), g, DEPTH_GROUPS_MAX) > n);
	assert_int_equal(depth_pack(d, 0, DEPTH_FIXED(0) | DEPTH_FIXED(1) | DEPTH_FIXED(2), g, DEPTH_GROUPS_MAX), -ENOSPC);
	assert_int_equal(depth_pack(d, 7, DEPTH_FIXED(0) | DEPTH_FIXED(1) | DEPTH_FIXED(2), g, 1), -ENOSPC);
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

/* The core's frequency (perf 6.1's Average_Frequency: Turbo_Utilization *
 * msr@tsc@ / 1e9 / duration_time): without the msr PMU its 7 nodes are
 * left out, saying why; with it msr@tsc@ is the msr PMU's TSC, a member
 * after a group's core events on no counter, duration_time in no group,
 * and the reference cycles on fixed counter 2 only: without it (the SMT
 * split's), the nodes are left out again. */
static void test_frequency(void **state)
{
	const struct pmu_core *core = &spr->core[0];
	const struct dt_table *t = depth_table_of(core->ua->id, core->name);
	struct depth_main m = { 0 };
	struct depth_group g[DEPTH_GROUPS_MAX];
	struct depth *d = NULL;
	char why[512];
	int n, lat, tsc, dur, ref;

	(void)state;
	main_of(core, &m);
	assert_int_equal(depth_new(t, 5, &core->formats, &m, &d, why, sizeof(why)), 0);
	assert_int_equal(node_index(d, "tma_l3_hit_latency"), -1);
	assert_non_null(strstr(why, "msr@tsc@: the kernel has no msr PMU with a tsc event"));
	depth_free(d);

	m.msr_type = spr->msr_type;
	m.msr_tsc = spr->msr_tsc;
	assert_true(m.msr_type > 0);
	assert_int_equal(depth_new(t, 5, &core->formats, &m, &d, why, sizeof(why)), 0);
	lat = node_index(d, "tma_l3_hit_latency");
	assert_true(lat >= 0);
	tsc = event_index(d, "msr@tsc@");
	dur = event_index(d, "duration_time");
	ref = event_index(d, "CPU_CLK_UNHALTED.REF_TSC");
	assert_int_equal(depth_event(d, (unsigned)tsc)->kind, DEPTH_EV_MSR);
	assert_int_equal(depth_event(d, (unsigned)tsc)->type, spr->msr_type);
	assert_int_equal(depth_event(d, (unsigned)dur)->kind, DEPTH_EV_TIME);
	assert_int_equal(depth_event(d, (unsigned)ref)->fixed, 2);
	n = depth_pack(d, 7, DEPTH_FIXED(0) | DEPTH_FIXED(1) | DEPTH_FIXED(2), g, DEPTH_GROUPS_MAX);
	assert_true(n > 0);
	{
		unsigned where_tsc = 0, where_dur = 0, where_ref = 0;

		for (int j = 0; j < n; j++) {
			bool msr_seen = false;

			assert_int_not_equal(depth_event(d, g[j].ev[0])->kind, DEPTH_EV_MSR);
			for (unsigned k = 0; k < g[j].n; k++) {
				const struct depth_event *ev = depth_event(d, g[j].ev[k]);

				/* Core events, then the msr PMU's. */
				if (ev->kind == DEPTH_EV_MSR)
					msr_seen = true;
				else
					assert_false(msr_seen);
				where_tsc += (int)g[j].ev[k] == tsc;
				where_dur += (int)g[j].ev[k] == dur;
				where_ref += (int)g[j].ev[k] == ref;
			}
		}
		assert_int_equal(where_tsc, 1);
		assert_int_equal(where_dur, 0);
		assert_int_equal(where_ref, 1);
	}
	/* Fixed counter 2 not in the mask: the reference cycles fit nowhere. */
	assert_int_equal(depth_pack(d, 7, DEPTH_FIXED(0) | DEPTH_FIXED(1), g, DEPTH_GROUPS_MAX), -ENOSPC);
	/* 9 * Average_Frequency * L3_HIT * (1 + FB_HIT / L1_MISS / 2) / CLKS:
	 * 2 s of a 2.1 GHz TSC, CLKS / REF_TSC = 1.25: 2.625 GHz. */
	{
		double *vars = calloc(depth_n_vars(d), sizeof(double)), out[DEPTH_NODES_MAX];

		assert_non_null(vars);
		vars[TD_EV_COUNT + event_index(d, "CPU_CLK_UNHALTED.THREAD")] = 1e6;
		vars[TD_EV_COUNT + ref] = 8e5;
		vars[TD_EV_COUNT + tsc] = 4.2e9;
		vars[TD_EV_COUNT + dur] = 2;
		vars[TD_EV_COUNT + event_index(d, "MEM_LOAD_RETIRED.L3_HIT")] = 10;
		vars[TD_EV_COUNT + event_index(d, "MEM_LOAD_RETIRED.FB_HIT")] = 20;
		vars[TD_EV_COUNT + event_index(d, "MEM_LOAD_RETIRED.L1_MISS")] = 40;
		depth_eval(d, vars, out);
		assert_float_equal(out[lat], 9 * 2.625 * 10 * 1.25 / 1e6, 1e-15);
		free(vars);
	}
	depth_free(d);

	m.fixed2_taken = true;
	assert_int_equal(depth_new(t, 5, &core->formats, &m, &d, why, sizeof(why)), 0);
	assert_int_equal(node_index(d, "tma_l3_hit_latency"), -1);
	assert_non_null(strstr(why, "CPU_CLK_UNHALTED.REF_TSC counts on fixed counter 2 only"));
	depth_free(d);
}

/* perf resolves a metric an expression reads by evaluating it, and a
 * division by zero there leaves the reader no value either, even where
 * the reader would not use it (tools/perf/util/expr.c expr__resolve_id):
 * a table of one node reading a helper in the branch it does not take. */
static void test_reference_fails(void **state)
{
	static const struct dt_node nodes[] = {
		{ "tma_n", 3, "tma_memory_bound", 1.0, "5 if 1 > 0 else tma_h", "", NULL },
		{ "tma_m", 3, "tma_memory_bound", 1.0, "EV_A / EV_B", "", NULL },
	};
	static const struct dt_metric helpers[] = { { "tma_h", "EV_A / EV_B" } };
	static const struct dt_event events[] = {
		{ "EV_A", "event=0xd1,umask=0x1", "0,1,2,3", "test", NULL },
		{ "EV_B", "event=0xd1,umask=0x2", "0,1,2,3", "test", NULL },
	};
	static const struct dt_table t = { "test", NULL, "test", nodes, 2, helpers, 1, events, 2 };
	const struct pmu_core *core = &spr->core[0];
	struct depth_main m = { 0 };
	struct depth *d = NULL;
	double vars[TD_EV_COUNT + DEPTH_EVENTS_MAX + 8] = { 0 }, out[DEPTH_NODES_MAX];

	(void)state;
	assert_int_equal(depth_new(&t, 3, &core->formats, &m, &d, NULL, 0), 0);
	assert_true(depth_n_vars(d) <= sizeof(vars) / sizeof(vars[0]));
	vars[TD_EV_COUNT + event_index(d, "EV_A")] = 3;
	vars[TD_EV_COUNT + event_index(d, "EV_B")] = 2;
	depth_eval(d, vars, out);
	assert_float_equal(out[node_index(d, "tma_n")], 5, 0);
	assert_float_equal(out[node_index(d, "tma_m")], 1.5, 0);
	vars[TD_EV_COUNT + event_index(d, "EV_B")] = 0;
	depth_eval(d, vars, out);
	assert_true(isnan(out[node_index(d, "tma_m")]));
	assert_true(isnan(out[node_index(d, "tma_n")]));
	depth_free(d);
}

/* Why a node is left out: the reason a name it reads gives, not the
 * parser's "not known here" over it.  A unit mask above 0xff (Lunar
 * Lake's BR_MISP_RETIRED.COND_TAKEN_BWD_COST, umask 0x8001) does not fit
 * Sapphire Rapids' umask format (config:8-15) and fits Lunar Lake's
 * cpu_core (config:8-15,40-47: the low byte at 8, the high at 40); a
 * syntax error is said once, of the node or of the metric it reads. */
static void test_left_out_reasons(void **state)
{
	static const struct dt_node nodes[] = {
		{ "tma_wide", 3, "tma_memory_bound", 1.0, "EV_WIDE / EV_B", "", NULL },
		{ "tma_bad", 3, "tma_memory_bound", 1.0, "EV_B * * 2", "", NULL },
		{ "tma_via", 3, "tma_memory_bound", 1.0, "tma_h / EV_B", "", NULL },
		{ "tma_ok", 3, "tma_memory_bound", 1.0, "EV_B / 2", "", NULL },
	};
	static const struct dt_metric helpers[] = { { "tma_h", "EV_B +" } };
	static const struct dt_event events[] = {
		{ "EV_WIDE", "event=0xc5,umask=0x8001", "0,1,2,3", "test", NULL },
		{ "EV_B", "event=0xd1,umask=0x2", "0,1,2,3", "test", NULL },
	};
	static const struct dt_table t = { "test", NULL, "test", nodes, 4, helpers, 1, events, 2 };
	const struct dt_table *t2;
	struct pmu_info *lnl = calloc(1, sizeof(*lnl));
	const struct pmu_core *core = &spr->core[0];
	struct depth_main m = { 0 };
	struct depth *d = NULL;
	struct sysfs *sysfs;
	const char *because;
	char root[1024];
	int e;

	(void)state;
	assert_int_equal(depth_new(&t, 3, &core->formats, &m, &d, NULL, 0), 0);
	assert_int_equal(depth_n_nodes(d), 1);
	assert_int_equal(depth_n_left(d), 3);
	assert_string_equal(depth_left(d, 0, &because), "tma_wide");
	assert_string_equal(because, "cannot encode EV_WIDE (\"event=0xc5,umask=0x8001\"): value 0x8001 does not "
				     "fit format umask");
	assert_string_equal(depth_left(d, 1, &because), "tma_bad");
	assert_string_equal(because, "at 8: expected a value, found '*'");
	assert_string_equal(depth_left(d, 2, &because), "tma_via");
	assert_string_equal(because, "tma_h: at 7: expected a value, found 'the end'");
	depth_free(d);

	snprintf(root, sizeof(root), "%s/lnl-hybrid", fixtures());
	assert_non_null(lnl);
	assert_int_equal(sysfs_new(root, &sysfs), 0);
	assert_int_equal(pmu_discover(sysfs, lnl), 0);
	sysfs_free(sysfs);
	assert_string_equal(lnl->core[0].name, "cpu_core");
	assert_int_equal(depth_new(&t, 3, &lnl->core[0].formats, &m, &d, NULL, 0), 0);
	assert_int_equal(depth_n_nodes(d), 2);
	e = event_index(d, "EV_WIDE");
	assert_true(e >= 0);
	assert_int_equal(depth_event(d, (unsigned)e)->enc.config[0], 0x8000000001c5ULL);
	depth_free(d);

	/* perf 7.2's Lunar Lake writes the TSC of the P-cores' CPUs
	 * msr@tsc\,cpu=cpu_core@ (tma_false_sharing, through
	 * tma_info_system_core_frequency): the msr PMU's TSC on a cpu_core
	 * CPU, as msr@tsc@ is; left out, saying so, without the msr PMU. */
	t2 = depth_table_of(lnl->core[0].ua->id, lnl->core[0].name);
	assert_non_null(t2);
	main_of(&lnl->core[0], &m);
	assert_int_equal(depth_new(t2, 4, &lnl->core[0].formats, &m, &d, NULL, 0), 0);
	assert_int_equal(node_index(d, "tma_false_sharing"), -1);
	e = -1;
	for (unsigned k = 0; k < depth_n_left(d); k++)
		if (strcmp(depth_left(d, k, &because), "tma_false_sharing") == 0)
			e = (int)k;
	assert_true(e >= 0);
	depth_left(d, (unsigned)e, &because);
	assert_string_equal(because, "msr@tsc,cpu=cpu_core@: the kernel has no msr PMU with a tsc event "
				     "(/sys/bus/event_source/devices/msr/events/tsc)");
	depth_free(d);
	m.msr_type = lnl->msr_type;
	m.msr_tsc = lnl->msr_tsc;
	assert_true(m.msr_type > 0);
	assert_int_equal(depth_new(t2, 4, &lnl->core[0].formats, &m, &d, NULL, 0), 0);
	assert_true(node_index(d, "tma_false_sharing") >= 0);
	e = event_index(d, "msr@tsc,cpu=cpu_core@");
	assert_true(e >= 0);
	assert_int_equal(depth_event(d, (unsigned)e)->kind, DEPTH_EV_MSR);
	assert_int_equal(depth_event(d, (unsigned)e)->type, lnl->msr_type);
	depth_free(d);
	free(lnl);
}

/* A retire latency (perf's EVENT:R, Granite Rapids' perf 7.2 tables): no
 * event opened, in no group, the table's RetirementLatencyMean rounded
 * as perf stat reads it when it does not sample it (util/intel-tpebs.c:
 * rint(6.11) is 6, rint(137.41) 137). */
static void test_retire_latency(void **state)
{
	struct pmu_info *gnr = calloc(1, sizeof(*gnr));
	const struct dt_table *t;
	struct depth_main m = { 0 };
	struct depth_group g[DEPTH_GROUPS_MAX];
	struct depth *d = NULL;
	struct sysfs *sysfs;
	char root[1024];
	double *vars, out[DEPTH_NODES_MAX];
	int lat, n, node;

	(void)state;
	snprintf(root, sizeof(root), "%s/gnr-2s", fixtures());
	assert_non_null(gnr);
	assert_int_equal(sysfs_new(root, &sysfs), 0);
	assert_int_equal(pmu_discover(sysfs, gnr), 0);
	sysfs_free(sysfs);
	t = depth_table_of(gnr->core[0].ua->id, gnr->core[0].name);
	assert_non_null(t);
	assert_int_equal(depth_new(t, 6, &gnr->core[0].formats, &m, &d, NULL, 0), 0);
	lat = event_index(d, "FRONTEND_RETIRED.L2_MISS:R");
	assert_true(lat >= 0);
	assert_int_equal(depth_event(d, (unsigned)lat)->kind, DEPTH_EV_RETLAT);
	assert_float_equal(depth_event(d, (unsigned)lat)->value, 137, 0);
	assert_string_equal(depth_event(d, (unsigned)lat)->file, "frontend.json");
	lat = event_index(d, "BR_MISP_RETIRED.COND_NTAKEN_COST:R");
	assert_true(lat >= 0);
	assert_float_equal(depth_event(d, (unsigned)lat)->value, 6, 0);
	/* Not opened, in no group. */
	assert_true(depth_n_opened(d) < depth_n_events(d));
	n = depth_pack(d, 8, DEPTH_FIXED(0) | DEPTH_FIXED(1) | DEPTH_FIXED(2), g, DEPTH_GROUPS_MAX);
	assert_true(n > 0);
	for (int j = 0; j < n; j++)
		for (unsigned k = 0; k < g[j].n; k++)
			assert_int_not_equal(depth_event(d, g[j].ev[k])->kind, DEPTH_EV_RETLAT);
	/* The count times the latency over the cycles. */
	node = node_index(d, "tma_cond_nt_mispredicts");
	assert_true(node >= 0);
	vars = calloc(depth_n_vars(d), sizeof(double));
	assert_non_null(vars);
	vars[TD_EV_COUNT + event_index(d, "BR_MISP_RETIRED.COND_NTAKEN_COST")] = 1100;
	vars[TD_EV_COUNT + lat] = 6;
	vars[TD_EV_COUNT + event_index(d, "CPU_CLK_UNHALTED.THREAD")] = 1e6;
	depth_eval(d, vars, out);
	assert_float_equal(out[node], 1100.0 * 6 / 1e6, 1e-15);
	free(vars);
	depth_free(d);
	free(gnr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_retire_latency),
		cmocka_unit_test(test_encodings),
		cmocka_unit_test(test_pack),
		cmocka_unit_test(test_eval),
		cmocka_unit_test(test_frequency),
		cmocka_unit_test(test_reference_fails),
		cmocka_unit_test(test_left_out_reasons),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
