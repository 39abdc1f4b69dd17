/* SPDX-License-Identifier: MIT */
/* uarch_skl: Skylake to Cascade Lake, the last Intel P-cores without
 * PERF_METRICS: TopDown from general-purpose and fixed counters, 4 slots
 * per cycle, core-scoped with SMT (perf's AnyThread forms).
 *
 * Linux perf 6.1 knows these models, so its compiled-in tables are the
 * truth (reference/perf-tables/README.md): every entry cites the perf 6.1
 * file it comes from (reference/perf-tables-6.1, Debian's linux-source-6.1
 * 6.1.187).  Skylake-SP and Cascade Lake-SP are one model (0x55) that perf
 * tells apart by stepping; their events and metrics are identical, which
 * tests/integration/12-uarch-tables.t checks against both directories. */
#include "uarch_tables.h"

#define SKX_PIPE "perf-tables-6.1/x86/skylakex/pipeline.json"
#define SKX_FE "perf-tables-6.1/x86/skylakex/frontend.json"
#define SKX_METRICS "perf-tables-6.1/x86/skylakex/skx-metrics.json"
#define SKL_PIPE "perf-tables-6.1/x86/skylake/pipeline.json"
#define SKL_FE "perf-tables-6.1/x86/skylake/frontend.json"
#define SKL_METRICS_FILE "perf-tables-6.1/x86/skylake/skl-metrics.json"

#define NOSMT UA_MODE_NOSMT
#define SMT UA_MODE_SMT
#define EBS UA_MODE_EBS

/* GP4, GP8: Counter with SMT on; CounterHTOff with it off. */

#define EV(var_, name_, terms_, table_, counter_, htoff_, level_, modes_)              \
	{ .var = (var_), .name = (name_), .terms = (terms_), .table = (table_),          \
	  .counter = (counter_), .counter_htoff = (htoff_), .level = (level_), .modes = (modes_) }

/* The events of perf's TopdownL1 and TopdownL2 on these parts.  Clocks:
 * with SMT and every thread counted (#core_wide), CORE_CLKS is
 * CPU_CLK_UNHALTED.THREAD_ANY / 2; with SMT and a thread left out, perf's
 * estimate from THREAD, ONE_THREAD_ACTIVE and REF_XCLK; without SMT,
 * THREAD.  The recovery term takes the AnyThread form whenever SMT is on. */
#define SKL_EVENTS(PIPE, FE)                                                                      \
	EV(TD_EV_UOPS_ISSUED, "UOPS_ISSUED.ANY", "event=0x0e,umask=0x01", PIPE, GP4, GP8, 1, 0),        \
	EV(TD_EV_RETIRE_SLOTS, "UOPS_RETIRED.RETIRE_SLOTS", "event=0xc2,umask=0x02", PIPE, GP4, GP8, 1, 0), \
	EV(TD_EV_IDQ_NOT_DELIVERED, "IDQ_UOPS_NOT_DELIVERED.CORE", "event=0x9c,umask=0x01", FE, GP4, GP8, 1, 0), \
	EV(TD_EV_RECOVERY_THREAD, "INT_MISC.RECOVERY_CYCLES", "event=0x0d,umask=0x01", PIPE, GP4, GP8, 1, NOSMT), \
	EV(TD_EV_RECOVERY_ANY, "INT_MISC.RECOVERY_CYCLES_ANY", "event=0x0d,umask=0x01,any=1", PIPE, GP4, GP8, 1, SMT | EBS), \
	EV(TD_EV_CYCLES, "CPU_CLK_UNHALTED.THREAD", "event=0x3c", PIPE, "Fixed counter 1", NULL, 1, NOSMT | EBS), \
	EV(TD_EV_CYCLES_ANY, "CPU_CLK_UNHALTED.THREAD_ANY", "event=0x3c,any=1", PIPE, "Fixed counter 1", NULL, 1, SMT), \
	EV(TD_EV_ONE_THREAD_ACTIVE, "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", "event=0x3c,umask=0x02", PIPE, GP4, GP8, 1, EBS), \
	EV(TD_EV_REF_XCLK, "CPU_CLK_UNHALTED.REF_XCLK", "event=0x3c,umask=0x01", PIPE, GP4, GP8, 1, EBS), \
	EV(TD_EV_IDQ_0_UOPS_CYCLES, "IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE",            \
	   "event=0x9c,umask=0x01,cmask=4", FE, GP4, GP8, 2, 0),                                         \
	EV(TD_EV_BR_MISP_RETIRED, "BR_MISP_RETIRED.ALL_BRANCHES", "event=0xc5", PIPE, GP4, GP8, 2, 0),    \
	EV(TD_EV_MACHINE_CLEARS, "MACHINE_CLEARS.COUNT", "event=0xc3,umask=0x01,cmask=1,edge=1", PIPE, GP4, GP8, 2, 0), \
	EV(TD_EV_STALLS_MEM_ANY, "CYCLE_ACTIVITY.STALLS_MEM_ANY", "event=0xa3,umask=0x14,cmask=20", PIPE, GP4, NULL, 2, 0), \
	EV(TD_EV_STALLS_TOTAL, "CYCLE_ACTIVITY.STALLS_TOTAL", "event=0xa3,umask=0x04,cmask=4", PIPE, GP4, GP8, 2, 0), \
	EV(TD_EV_BOUND_ON_STORES, "EXE_ACTIVITY.BOUND_ON_STORES", "event=0xa6,umask=0x40", PIPE, GP4, GP8, 2, 0), \
	EV(TD_EV_PORTS_UTIL_1, "EXE_ACTIVITY.1_PORTS_UTIL", "event=0xa6,umask=0x02", PIPE, GP4, GP8, 2, 0), \
	EV(TD_EV_PORTS_UTIL_2, "EXE_ACTIVITY.2_PORTS_UTIL", "event=0xa6,umask=0x04", PIPE, GP4, GP8, 2, 0), \
	EV(TD_EV_MACRO_FUSED, "UOPS_RETIRED.MACRO_FUSED", "event=0xc2,umask=0x04", PIPE, GP4, GP8, 2, 0), \
	EV(TD_EV_INST_RETIRED, "INST_RETIRED.ANY", "event=0xc0", PIPE, "Fixed counter 0", NULL, 2, 0)

/* perf 6.1's tma_* metrics of the category tree, verbatim.  SLOTS is
 * "4 * CORE_CLKS" and CORE_CLKS the clock expression above, in the same
 * file. */
#define SKL_METRICS(FILE)                                                                          \
	{ TD_CAT_RETIRING, "tma_retiring", "UOPS_RETIRED.RETIRE_SLOTS / SLOTS", FILE },              \
	{ TD_CAT_BAD_SPECULATION, "tma_bad_speculation",                                             \
	  "(UOPS_ISSUED.ANY - UOPS_RETIRED.RETIRE_SLOTS + 4 * ((INT_MISC.RECOVERY_CYCLES_ANY / 2) if #SMT_on else INT_MISC.RECOVERY_CYCLES)) / SLOTS", \
	  FILE },                                                                                     \
	{ TD_CAT_FRONTEND_BOUND, "tma_frontend_bound", "IDQ_UOPS_NOT_DELIVERED.CORE / SLOTS", FILE }, \
	{ TD_CAT_BACKEND_BOUND, "tma_backend_bound",                                                 \
	  "1 - tma_frontend_bound - (UOPS_ISSUED.ANY + 4 * ((INT_MISC.RECOVERY_CYCLES_ANY / 2) if #SMT_on else INT_MISC.RECOVERY_CYCLES)) / SLOTS", \
	  FILE },                                                                                     \
	{ TD_CAT_HEAVY_OPERATIONS, "tma_heavy_operations",                                           \
	  "(UOPS_RETIRED.RETIRE_SLOTS + UOPS_RETIRED.MACRO_FUSED - INST_RETIRED.ANY) / SLOTS", FILE }, \
	{ TD_CAT_LIGHT_OPERATIONS, "tma_light_operations", "tma_retiring - tma_heavy_operations", FILE }, \
	{ TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts",                                       \
	  "(BR_MISP_RETIRED.ALL_BRANCHES / (BR_MISP_RETIRED.ALL_BRANCHES + MACHINE_CLEARS.COUNT)) * tma_bad_speculation", \
	  FILE },                                                                                     \
	{ TD_CAT_MACHINE_CLEARS, "tma_machine_clears", "tma_bad_speculation - tma_branch_mispredicts", FILE }, \
	{ TD_CAT_FETCH_LATENCY, "tma_fetch_latency",                                                 \
	  "4 * IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE / SLOTS", FILE },                      \
	{ TD_CAT_FETCH_BANDWIDTH, "tma_fetch_bandwidth", "tma_frontend_bound - tma_fetch_latency", FILE }, \
	{ TD_CAT_MEMORY_BOUND, "tma_memory_bound",                                                   \
	  "((CYCLE_ACTIVITY.STALLS_MEM_ANY + EXE_ACTIVITY.BOUND_ON_STORES) / (CYCLE_ACTIVITY.STALLS_TOTAL + (EXE_ACTIVITY.1_PORTS_UTIL + tma_retiring * EXE_ACTIVITY.2_PORTS_UTIL) + EXE_ACTIVITY.BOUND_ON_STORES)) * tma_backend_bound", \
	  FILE },                                                                                     \
	{ TD_CAT_CORE_BOUND, "tma_core_bound", "tma_backend_bound - tma_memory_bound", FILE }

/* ---- Skylake-SP, Cascade Lake-SP, Cooper Lake (model 0x55) ---- */

static const struct ua_event skx_events[] = { SKL_EVENTS(SKX_PIPE, SKX_FE) };
static const struct ua_metric skx_metrics[] = { SKL_METRICS(SKX_METRICS) };

/* Before Ice Lake the core's active crystal cycles are REF_XCLK_ANY
 * (AnyThread), on each thread; perf 6.1's SMT_2T_Utilization halves their
 * sum.  The same events and metric on the server and client parts. */
#define SKL_SMT(PIPE, METRICS)                                                                       \
	{ .any = UA_SMT_XCLK_ANY,                                                                     \
	  .events = { UA_SMT_EV("CPU_CLK_UNHALTED.REF_TSC", "umask=0x3", PIPE, "Fixed counter 2"),     \
		      { .name = "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", .terms = "event=0x3c,umask=0x2",    \
			.table = PIPE, .counter = GP4, .counter_htoff = GP8 },                            \
		      { .name = "CPU_CLK_UNHALTED.REF_XCLK_ANY", .terms = "event=0x3c,umask=0x1,any=1",   \
			.table = PIPE, .counter = GP4, .counter_htoff = GP8 } },                          \
	  .metric = "SMT_2T_Utilization",                                                             \
	  .expr = "1 - CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE / (CPU_CLK_UNHALTED.REF_XCLK_ANY / 2) if #SMT_on else 0", \
	  .table = (METRICS) }

static const struct ua_smt skx_smt = SKL_SMT(SKX_PIPE, SKX_METRICS);

static const struct uarch skx = {
	.id = "skylakex",
	/* mapfile.csv: GenuineIntel-6-55-[01234] skylakex,
	 * GenuineIntel-6-55-[56789ABCDEF] cascadelakex: the stepping, which
	 * sysfs does not give, picks the directory. */
	.also = { "cascadelakex" },
	.name = "Skylake-SP / Cascade Lake-SP",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 1,
	.models = { 0x55 },
	.pmu = "cpu",
	.formulas = UA_FORMULAS_SKL,
	.width = 4,
	.width_source = "SLOTS = 4 * CORE_CLKS, " SKX_METRICS,
	.core_scoped = true,
	.max_level = 2,
	.n_events = sizeof(skx_events) / sizeof(skx_events[0]),
	.events = skx_events,
	.n_metrics = sizeof(skx_metrics) / sizeof(skx_metrics[0]),
	.metrics = skx_metrics,
	.smt = &skx_smt,
};

/* ---- Skylake, Kaby Lake, Coffee Lake, Comet Lake client ---- */

static const struct ua_event skl_events[] = { SKL_EVENTS(SKL_PIPE, SKL_FE) };
static const struct ua_metric skl_metrics[] = { SKL_METRICS(SKL_METRICS_FILE) };
static const struct ua_smt skl_smt = SKL_SMT(SKL_PIPE, SKL_METRICS_FILE);

static const struct uarch skl = {
	.id = "skylake",
	.name = "Skylake / Kaby Lake / Coffee Lake / Comet Lake",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 6,
	.models = { 0x4E, 0x5E, 0x8E, 0x9E, 0xA5, 0xA6 }, /* mapfile.csv: GenuineIntel-6-(4E|5E|8E|9E|A5|A6) */
	.pmu = "cpu",
	.formulas = UA_FORMULAS_SKL,
	.width = 4,
	.width_source = "SLOTS = 4 * CORE_CLKS, " SKL_METRICS_FILE,
	.core_scoped = true,
	.max_level = 2,
	.n_events = sizeof(skl_events) / sizeof(skl_events[0]),
	.events = skl_events,
	.n_metrics = sizeof(skl_metrics) / sizeof(skl_metrics[0]),
	.metrics = skl_metrics,
	.smt = &skl_smt,
};

const struct uarch *const ua_skl[] = { &skx, &skl };
const size_t ua_skl_count = sizeof(ua_skl) / sizeof(ua_skl[0]);
