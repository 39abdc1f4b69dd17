/* SPDX-License-Identifier: MIT */
/* uarch_intel: Intel microarchitectures with PERF_METRICS (Ice Lake and
 * later).  Models from perf's x86/mapfile.csv; events and metrics from the
 * perf table files named next to each entry.  The slots and topdown-*
 * events are the kernel's (events/ in sysfs, arch/x86/events/intel/core.c)
 * and are encoded from there at run time. */
#include "uarch_tables.h"

/* Slots and the eight metric events of PERF_METRICS, as the kernel names
 * them in sysfs; level 2 needs the second four (Golden Cove and later). */
#define KERNEL "kernel: events/ of the core PMU"
#define KEV(var_, name_, sysfs_, level_)                                                  \
	{ .var = (var_), .name = (name_), .sysfs = (sysfs_), .table = KERNEL, .level = (level_) }
/* A refinement event of model perf, from a perf table. */
#define REV(var_, name_, terms_, table_, counter_)                                        \
	{ .var = (var_), .name = (name_), .terms = (terms_), .table = (table_),          \
	  .counter = (counter_), .level = 1, .refine = true }
/* A general-purpose event of level 2 (Ice Lake). */
#define GEV(var_, name_, terms_, table_, counter_)                                        \
	{ .var = (var_), .name = (name_), .terms = (terms_), .table = (table_),          \
	  .counter = (counter_), .level = 2 }
#define PERF_METRICS_EVENTS                                                              \
	KEV(TD_EV_SLOTS, "TOPDOWN.SLOTS", "slots", 1),                                   \
	KEV(TD_EV_RETIRING, "topdown-retiring", "topdown-retiring", 1),                  \
	KEV(TD_EV_BAD_SPEC, "topdown-bad-spec", "topdown-bad-spec", 1),                  \
	KEV(TD_EV_FE_BOUND, "topdown-fe-bound", "topdown-fe-bound", 1),                  \
	KEV(TD_EV_BE_BOUND, "topdown-be-bound", "topdown-be-bound", 1)
#define PERF_METRICS_L2_EVENTS                                                           \
	KEV(TD_EV_HEAVY_OPS, "topdown-heavy-ops", "topdown-heavy-ops", 2),               \
	KEV(TD_EV_BR_MISPREDICT, "topdown-br-mispredict", "topdown-br-mispredict", 2),   \
	KEV(TD_EV_FETCH_LAT, "topdown-fetch-lat", "topdown-fetch-lat", 2),               \
	KEV(TD_EV_MEM_BOUND, "topdown-mem-bound", "topdown-mem-bound", 2)

/* ---- Sapphire Rapids ---- */

static const struct ua_event spr_events[] = {
	PERF_METRICS_EVENTS,
	PERF_METRICS_L2_EVENTS,
	REV(TD_EV_UOP_DROPPING, "INT_MISC.UOP_DROPPING", "event=0xad,umask=0x10",
	    "perf-tables/x86/sapphirerapids/pipeline.json", NULL),
};

static const struct ua_metric spr_metrics[] = {
	{ TD_CAT_RETIRING, "tma_retiring",
	  "topdown\\-retiring / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_BAD_SPECULATION, "tma_bad_speculation",
	  "max(1 - (tma_frontend_bound + tma_backend_bound + tma_retiring), 0)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_FRONTEND_BOUND, "tma_frontend_bound",
	  "topdown\\-fe\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) - INT_MISC.UOP_DROPPING / tma_info_thread_slots",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_BACKEND_BOUND, "tma_backend_bound",
	  "topdown\\-be\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_HEAVY_OPERATIONS, "tma_heavy_operations",
	  "topdown\\-heavy\\-ops / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_LIGHT_OPERATIONS, "tma_light_operations",
	  "max(0, tma_retiring - tma_heavy_operations)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts",
	  "topdown\\-br\\-mispredict / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_MACHINE_CLEARS, "tma_machine_clears",
	  "max(0, tma_bad_speculation - tma_branch_mispredicts)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_FETCH_LATENCY, "tma_fetch_latency",
	  "topdown\\-fetch\\-lat / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) - INT_MISC.UOP_DROPPING / tma_info_thread_slots",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_FETCH_BANDWIDTH, "tma_fetch_bandwidth",
	  "max(0, tma_frontend_bound - tma_fetch_latency)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_MEMORY_BOUND, "tma_memory_bound",
	  "topdown\\-mem\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
	{ TD_CAT_CORE_BOUND, "tma_core_bound",
	  "max(0, tma_backend_bound - tma_memory_bound)",
	  "perf-tables/x86/sapphirerapids/spr-metrics.json" },
};

/* ---- Sapphire Rapids without PERF_METRICS (a virtual machine) ----
 * KVM gives a guest the architectural and model events but not
 * PERF_METRICS: Intel's alternate TMA formulas count the same tree on
 * general-purpose counters (PerfSpect ships them for such guests,
 * reference/perfspect).  The events are perf's Sapphire Rapids ones. */
#define SPR_ALT "perfspect/spr_alt_tma_metrics.json"
#define SPR_PIPE "perf-tables/x86/sapphirerapids/pipeline.json"
#define SPR_FE "perf-tables/x86/sapphirerapids/frontend.json"
/* The events of Golden Cove's alternate tree (Sapphire, Emerald and
 * Granite Rapids: the same encodings), as each model's perf tables name
 * and place them: pipe_ and fe_ the pipeline and frontend files, fe_name_
 * the frontend event's name there, pc_ the pipeline events' Counter (NULL
 * where the table gives none) and bc_ TOPDOWN.BR_MISPREDICT_SLOTS's.  The
 * cycles (architectural, CPUID leaf 0AH's first event) are no formula's:
 * they are the clock of the check that a hypervisor does not filter the
 * model events (a filtered event opens and counts 0). */
#define GLC_ALT_EVENTS(pipe_, fe_, fe_name_, pc_, bc_)                                               \
	UA_EV(TD_EV_CYCLES, "CPU_CLK_UNHALTED.THREAD_P", "event=0x3c", pipe_, pc_, 1),                 \
	UA_EV(TD_EV_SLOTS_P, "TOPDOWN.SLOTS_P", "event=0xa4,umask=0x1", pipe_, pc_, 1),                \
	UA_EV(TD_EV_IDQ_NOT_DELIVERED, fe_name_, "event=0x9c,umask=0x1", fe_, GP8, 1),                 \
	UA_EV(TD_EV_UOP_DROPPING, "INT_MISC.UOP_DROPPING", "event=0xad,umask=0x10", pipe_, pc_, 1),    \
	UA_EV(TD_EV_BE_BOUND_SLOTS, "TOPDOWN.BACKEND_BOUND_SLOTS", "event=0xa4,umask=0x2", pipe_, pc_, 1), \
	UA_EV(TD_EV_UOPS_RETIRED_SLOTS, "UOPS_RETIRED.SLOTS", "event=0xc2,umask=0x2", pipe_, pc_, 1),  \
	UA_EV(TD_EV_IDQ_0_UOPS_CYCLES, "IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE",                        \
	      "event=0x9c,umask=0x1,cmask=6", fe_, GP8, 2),                                             \
	UA_EV(TD_EV_BR_MISPREDICT_SLOTS, "TOPDOWN.BR_MISPREDICT_SLOTS", "event=0xa4,umask=0x8", pipe_, \
	      bc_, 2),                                                                                  \
	UA_EV(TD_EV_MEM_BOUND_SLOTS, "TOPDOWN.MEMORY_BOUND_SLOTS", "event=0xa4,umask=0x10", pipe_, pc_, 2), \
	UA_EV(TD_EV_UOPS_RETIRED_HEAVY, "UOPS_RETIRED.HEAVY", "event=0xc2,umask=0x1", pipe_, pc_, 2)

static const struct ua_event spr_alt_events[] = {
	GLC_ALT_EVENTS(SPR_PIPE, SPR_FE, "IDQ_BUBBLES.CORE", NULL, NULL),
};

/* PerfSpect's "Formula" of each metric, verbatim (its events by alias, in
 * the order of its "Events"). */
static const struct ua_metric spr_alt_metrics[] = {
	{ TD_CAT_FRONTEND_BOUND, "Frontend_Bound", "100 * ( ( a - b ) / c )", SPR_ALT },
	{ TD_CAT_FETCH_LATENCY, "Fetch_Latency", "100 * ( ( a * ( 6 ) - b ) / c )", SPR_ALT },
	{ TD_CAT_FETCH_BANDWIDTH, "Fetch_Bandwidth",
	  "100 * ( max( 0 , ( ( a - b ) / ( c ) ) - ( ( d * ( 6 ) - b ) / ( c ) ) ) )", SPR_ALT },
	{ TD_CAT_BAD_SPECULATION, "Bad_Speculation",
	  "100 * ( max( 1 - ( ( ( a - b ) / c ) + ( d / c ) + ( e / c ) ) , 0 ) )", SPR_ALT },
	{ TD_CAT_BRANCH_MISPREDICTS, "Branch_Mispredicts", "100 * ( a / ( b ) )", SPR_ALT },
	{ TD_CAT_MACHINE_CLEARS, "Machine_Clears",
	  "100 * ( max( 0 , ( max( 1 - ( ( ( a - b ) / ( c ) ) + ( d / ( c ) ) + ( e / ( c ) ) ) , 0 ) ) - ( f / ( c ) ) ) )",
	  SPR_ALT },
	{ TD_CAT_BACKEND_BOUND, "Backend_Bound", "100 * ( a / b )", SPR_ALT },
	{ TD_CAT_MEMORY_BOUND, "Memory_Bound", "100 * ( a / b )", SPR_ALT },
	{ TD_CAT_CORE_BOUND, "Core_Bound", "100 * ( max( 0 , ( a / ( b ) ) - ( c / ( b ) ) ) )", SPR_ALT },
	{ TD_CAT_RETIRING, "Retiring", "100 * ( a / b )", SPR_ALT },
	{ TD_CAT_LIGHT_OPERATIONS, "Light_Operations", "100 * ( max( 0 , ( a / ( b ) ) - ( c / ( b ) ) ) )", SPR_ALT },
	{ TD_CAT_HEAVY_OPERATIONS, "Heavy_Operations", "100 * ( a / b )", SPR_ALT },
};

static const struct uarch spr;

static const struct uarch spr_alt = {
	.id = "sapphirerapids-alt",
	.name = "Sapphire Rapids without PERF_METRICS",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 1,
	.models = { 0x8F },
	.pmu = "cpu",
	.formulas = UA_FORMULAS_GLC_ALT,
	.width = 6,
	.width_source = "IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE * ( 6 ), " SPR_ALT " Fetch_Latency",
	.max_level = 2,
	.n_events = sizeof(spr_alt_events) / sizeof(spr_alt_events[0]),
	.events = spr_alt_events,
	.n_metrics = sizeof(spr_alt_metrics) / sizeof(spr_alt_metrics[0]),
	.metrics = spr_alt_metrics,
	.alt_of = &spr,
};

static const struct ua_smt spr_smt = UA_SMT_DIST(SPR_PIPE, NULL, NULL, "tma_info_system_smt_2t_utilization",
	"(1 - CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE / CPU_CLK_UNHALTED.REF_DISTRIBUTED if #SMT_on else 0)",
	"perf-tables/x86/sapphirerapids/spr-metrics.json");
static const struct uarch spr = {
	.id = "sapphirerapids",
	.name = "Sapphire Rapids",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 1,
	.models = { 0x8F },  /* mapfile.csv: GenuineIntel-6-8F */
	.pmu = "cpu",
	.formulas = UA_FORMULAS_GLC,
	.max_level = 2,
	.n_events = sizeof(spr_events) / sizeof(spr_events[0]),
	.events = spr_events,
	.n_metrics = sizeof(spr_metrics) / sizeof(spr_metrics[0]),
	.metrics = spr_metrics,
	.guest_alt = &spr_alt,
	.smt = &spr_smt,
};

/* ---- Emerald Rapids (the kernel names its PMU sapphire_rapids) ---- */

static const struct ua_event emr_events[] = {
	PERF_METRICS_EVENTS,
	PERF_METRICS_L2_EVENTS,
	REV(TD_EV_UOP_DROPPING, "INT_MISC.UOP_DROPPING", "event=0xad,umask=0x10",
	    "perf-tables/x86/emeraldrapids/pipeline.json", NULL),
};

static const struct ua_metric emr_metrics[] = {
	{ TD_CAT_RETIRING, "tma_retiring",
	  "topdown\\-retiring / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_BAD_SPECULATION, "tma_bad_speculation",
	  "max(1 - (tma_frontend_bound + tma_backend_bound + tma_retiring), 0)",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_FRONTEND_BOUND, "tma_frontend_bound",
	  "topdown\\-fe\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) - INT_MISC.UOP_DROPPING / tma_info_thread_slots",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_BACKEND_BOUND, "tma_backend_bound",
	  "topdown\\-be\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_HEAVY_OPERATIONS, "tma_heavy_operations",
	  "topdown\\-heavy\\-ops / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_LIGHT_OPERATIONS, "tma_light_operations",
	  "max(0, tma_retiring - tma_heavy_operations)",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts",
	  "topdown\\-br\\-mispredict / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_MACHINE_CLEARS, "tma_machine_clears",
	  "max(0, tma_bad_speculation - tma_branch_mispredicts)",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_FETCH_LATENCY, "tma_fetch_latency",
	  "topdown\\-fetch\\-lat / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) - INT_MISC.UOP_DROPPING / tma_info_thread_slots",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_FETCH_BANDWIDTH, "tma_fetch_bandwidth",
	  "max(0, tma_frontend_bound - tma_fetch_latency)",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_MEMORY_BOUND, "tma_memory_bound",
	  "topdown\\-mem\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
	{ TD_CAT_CORE_BOUND, "tma_core_bound",
	  "max(0, tma_backend_bound - tma_memory_bound)",
	  "perf-tables/x86/emeraldrapids/emr-metrics.json" },
};

/* ---- Emerald Rapids without PERF_METRICS (a virtual machine) ----
 * PerfSpect's "nofixedtma" formulas for Emerald Rapids
 * (reference/perfspect/emr_nofixedtma.json): Sapphire Rapids' alternate
 * tree over the same events, its frontend event spelled by the older alias
 * IDQ_UOPS_NOT_DELIVERED.CORE (IDQ_BUBBLES.CORE's encoding). */
#define EMR_ALT "perfspect/emr_nofixedtma.json"
#define EMR_PIPE "perf-tables/x86/emeraldrapids/pipeline.json"
#define EMR_FE "perf-tables/x86/emeraldrapids/frontend.json"

static const struct ua_event emr_alt_events[] = {
	GLC_ALT_EVENTS(EMR_PIPE, EMR_FE, "IDQ_UOPS_NOT_DELIVERED.CORE", NULL, NULL),
};

/* Each entry's "expression", verbatim. */
static const struct ua_metric emr_alt_metrics[] = {
	{ TD_CAT_FRONTEND_BOUND, "metric_TMA_Frontend_Bound(%)",
	  "100 * ( ( [IDQ_UOPS_NOT_DELIVERED.CORE] - [INT_MISC.UOP_DROPPING] ) / ( [TOPDOWN.SLOTS_P] ) )", EMR_ALT },
	{ TD_CAT_FETCH_LATENCY, "metric_TMA_..Fetch_Latency(%)",
	  "100 * ( ( [IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE] * ( 6 ) - [INT_MISC.UOP_DROPPING] ) / ( [TOPDOWN.SLOTS_P] ) )",
	  EMR_ALT },
	{ TD_CAT_FETCH_BANDWIDTH, "metric_TMA_..Fetch_Bandwidth(%)",
	  "100 * ( max( 0 , ( ( [IDQ_UOPS_NOT_DELIVERED.CORE] - [INT_MISC.UOP_DROPPING] ) / ( [TOPDOWN.SLOTS_P] ) ) - ( ( [IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE] * ( 6 ) - [INT_MISC.UOP_DROPPING] ) / ( [TOPDOWN.SLOTS_P] ) ) ) )",
	  EMR_ALT },
	{ TD_CAT_BAD_SPECULATION, "metric_TMA_Bad_Speculation(%)",
	  "100 * ( max( 1 - ( ( ( [IDQ_UOPS_NOT_DELIVERED.CORE] - [INT_MISC.UOP_DROPPING] ) / ( [TOPDOWN.SLOTS_P] ) ) + ( [TOPDOWN.BACKEND_BOUND_SLOTS] / ( [TOPDOWN.SLOTS_P] ) ) + ( [UOPS_RETIRED.SLOTS] / ( [TOPDOWN.SLOTS_P] ) ) ) , 0 ) )",
	  EMR_ALT },
	{ TD_CAT_BRANCH_MISPREDICTS, "metric_TMA_..Branch_Mispredicts(%)",
	  "100 * ( [TOPDOWN.BR_MISPREDICT_SLOTS] / ( [TOPDOWN.SLOTS_P] ) )", EMR_ALT },
	{ TD_CAT_MACHINE_CLEARS, "metric_TMA_..Machine_Clears(%)",
	  "100 * ( max( 0 , ( max( 1 - ( ( ( [IDQ_UOPS_NOT_DELIVERED.CORE] - [INT_MISC.UOP_DROPPING] ) / ( [TOPDOWN.SLOTS_P] ) ) + ( [TOPDOWN.BACKEND_BOUND_SLOTS] / ( [TOPDOWN.SLOTS_P] ) ) + ( [UOPS_RETIRED.SLOTS] / ( [TOPDOWN.SLOTS_P] ) ) ) , 0 ) ) - ( [TOPDOWN.BR_MISPREDICT_SLOTS] / ( [TOPDOWN.SLOTS_P] ) ) ) )",
	  EMR_ALT },
	{ TD_CAT_BACKEND_BOUND, "metric_TMA_Backend_Bound(%)",
	  "100 * ( [TOPDOWN.BACKEND_BOUND_SLOTS] / ( [TOPDOWN.SLOTS_P] ) )", EMR_ALT },
	{ TD_CAT_MEMORY_BOUND, "metric_TMA_..Memory_Bound(%)",
	  "100 * ( [TOPDOWN.MEMORY_BOUND_SLOTS] / ( [TOPDOWN.SLOTS_P] ) )", EMR_ALT },
	{ TD_CAT_CORE_BOUND, "metric_TMA_..Core_Bound(%)",
	  "100 * ( max( 0 , ( [TOPDOWN.BACKEND_BOUND_SLOTS] / ( [TOPDOWN.SLOTS_P] ) ) - ( [TOPDOWN.MEMORY_BOUND_SLOTS] / ( [TOPDOWN.SLOTS_P] ) ) ) )",
	  EMR_ALT },
	{ TD_CAT_RETIRING, "metric_TMA_Retiring(%)", "100 * ( [UOPS_RETIRED.SLOTS] / ( [TOPDOWN.SLOTS_P] ) )",
	  EMR_ALT },
	{ TD_CAT_LIGHT_OPERATIONS, "metric_TMA_..Light_Operations(%)",
	  "100 * ( max( 0 , ( [UOPS_RETIRED.SLOTS] / ( [TOPDOWN.SLOTS_P] ) ) - ( [UOPS_RETIRED.HEAVY] / ( [TOPDOWN.SLOTS_P] ) ) ) )",
	  EMR_ALT },
	{ TD_CAT_HEAVY_OPERATIONS, "metric_TMA_..Heavy_Operations(%)",
	  "100 * ( [UOPS_RETIRED.HEAVY] / ( [TOPDOWN.SLOTS_P] ) )", EMR_ALT },
};

static const struct uarch emr;

static const struct uarch emr_alt = {
	.id = "emeraldrapids-alt",
	.name = "Emerald Rapids without PERF_METRICS",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 1,
	.models = { 0xCF },
	.pmu = "cpu",
	.formulas = UA_FORMULAS_GLC_ALT,
	.width = 6,
	.width_source = "[IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE] * ( 6 ), " EMR_ALT " metric_TMA_..Fetch_Latency(%)",
	.max_level = 2,
	.n_events = sizeof(emr_alt_events) / sizeof(emr_alt_events[0]),
	.events = emr_alt_events,
	.n_metrics = sizeof(emr_alt_metrics) / sizeof(emr_alt_metrics[0]),
	.metrics = emr_alt_metrics,
	.alt_of = &emr,
};

static const struct ua_smt emr_smt = UA_SMT_DIST(EMR_PIPE, NULL, NULL, "tma_info_system_smt_2t_utilization",
	"(1 - CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE / CPU_CLK_UNHALTED.REF_DISTRIBUTED if #SMT_on else 0)",
	"perf-tables/x86/emeraldrapids/emr-metrics.json");
static const struct uarch emr = {
	.id = "emeraldrapids",
	.name = "Emerald Rapids",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 1,
	.models = { 0xCF },  /* mapfile.csv: GenuineIntel-6-CF */
	.pmu = "cpu",
	.formulas = UA_FORMULAS_GLC,
	.max_level = 2,
	.n_events = sizeof(emr_events) / sizeof(emr_events[0]),
	.events = emr_events,
	.n_metrics = sizeof(emr_metrics) / sizeof(emr_metrics[0]),
	.metrics = emr_metrics,
	.guest_alt = &emr_alt,
	.smt = &emr_smt,
};

/* ---- Granite Rapids ---- */

static const struct ua_event gnr_events[] = {
	PERF_METRICS_EVENTS,
	PERF_METRICS_L2_EVENTS,
	REV(TD_EV_UOP_DROPPING, "INT_MISC.UOP_DROPPING", "event=0xad,umask=0x10",
	    "perf-tables/x86/graniterapids/pipeline.json", GP8),
};

static const struct ua_metric gnr_metrics[] = {
	{ TD_CAT_RETIRING, "tma_retiring",
	  "topdown\\-retiring / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * slots",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_BAD_SPECULATION, "tma_bad_speculation",
	  "max(1 - (tma_frontend_bound + tma_backend_bound + tma_retiring), 0)",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_FRONTEND_BOUND, "tma_frontend_bound",
	  "topdown\\-fe\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) - INT_MISC.UOP_DROPPING / tma_info_thread_slots",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_BACKEND_BOUND, "tma_backend_bound",
	  "topdown\\-be\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * slots",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_HEAVY_OPERATIONS, "tma_heavy_operations",
	  "topdown\\-heavy\\-ops / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * slots",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_LIGHT_OPERATIONS, "tma_light_operations",
	  "max(0, tma_retiring - tma_heavy_operations)",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts",
	  "topdown\\-br\\-mispredict / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * slots",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_MACHINE_CLEARS, "tma_machine_clears",
	  "max(0, tma_bad_speculation - tma_branch_mispredicts)",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_FETCH_LATENCY, "tma_fetch_latency",
	  "topdown\\-fetch\\-lat / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) - INT_MISC.UOP_DROPPING / tma_info_thread_slots",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_FETCH_BANDWIDTH, "tma_fetch_bandwidth",
	  "max(0, tma_frontend_bound - tma_fetch_latency)",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_MEMORY_BOUND, "tma_memory_bound",
	  "topdown\\-mem\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound) + 0 * slots",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
	{ TD_CAT_CORE_BOUND, "tma_core_bound",
	  "max(0, tma_backend_bound - tma_memory_bound)",
	  "perf-tables/x86/graniterapids/gnr-metrics.json" },
};

/* ---- Granite Rapids without PERF_METRICS (a virtual machine) ----
 * PerfSpect's "nofixedtma" formulas for Granite Rapids
 * (reference/perfspect/gnr_nofixedtma.json): Sapphire Rapids' alternate
 * tree; perf's Granite Rapids tables put TOPDOWN.BR_MISPREDICT_SLOTS on
 * counter 0 only. */
#define GNR_ALT "perfspect/gnr_nofixedtma.json"
#define GNR_PIPE "perf-tables/x86/graniterapids/pipeline.json"
#define GNR_FE "perf-tables/x86/graniterapids/frontend.json"

static const struct ua_event gnr_alt_events[] = {
	GLC_ALT_EVENTS(GNR_PIPE, GNR_FE, "IDQ_BUBBLES.CORE", GP8, "0"),
};

static const struct ua_metric gnr_alt_metrics[] = {
	{ TD_CAT_FRONTEND_BOUND, "TMA_Frontend_Bound(%)",
	  "100 * ( ( [IDQ_BUBBLES.CORE] - [INT_MISC.UOP_DROPPING] ) / [TOPDOWN.SLOTS_P] )", GNR_ALT },
	{ TD_CAT_FETCH_LATENCY, "TMA_..Fetch_Latency(%)",
	  "100 * ( ( [IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE] * ( 6 ) - [INT_MISC.UOP_DROPPING] ) / [TOPDOWN.SLOTS_P] )",
	  GNR_ALT },
	{ TD_CAT_FETCH_BANDWIDTH, "TMA_..Fetch_Bandwidth(%)",
	  "100 * ( max( 0 , ( ( [IDQ_BUBBLES.CORE] - [INT_MISC.UOP_DROPPING] ) / [TOPDOWN.SLOTS_P] ) - ( ( [IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE] * ( 6 ) - [INT_MISC.UOP_DROPPING] ) / [TOPDOWN.SLOTS_P] ) ) )",
	  GNR_ALT },
	{ TD_CAT_BAD_SPECULATION, "TMA_Bad_Speculation(%)",
	  "100 * ( max( 1 - ( ( ( [IDQ_BUBBLES.CORE] - [INT_MISC.UOP_DROPPING] ) / [TOPDOWN.SLOTS_P] ) + ( [TOPDOWN.BACKEND_BOUND_SLOTS] / [TOPDOWN.SLOTS_P] ) + ( [UOPS_RETIRED.SLOTS] / [TOPDOWN.SLOTS_P] ) ) , 0 ) )",
	  GNR_ALT },
	{ TD_CAT_BRANCH_MISPREDICTS, "TMA_..Branch_Mispredicts(%)",
	  "100 * ( [TOPDOWN.BR_MISPREDICT_SLOTS] / [TOPDOWN.SLOTS_P] )", GNR_ALT },
	{ TD_CAT_MACHINE_CLEARS, "TMA_..Machine_Clears(%)",
	  "100 * ( max( 0 , ( max( 1 - ( ( ( [IDQ_BUBBLES.CORE] - [INT_MISC.UOP_DROPPING] ) / [TOPDOWN.SLOTS_P] ) + ( [TOPDOWN.BACKEND_BOUND_SLOTS] / [TOPDOWN.SLOTS_P] ) + ( [UOPS_RETIRED.SLOTS] / [TOPDOWN.SLOTS_P] ) ) , 0 ) ) - ( [TOPDOWN.BR_MISPREDICT_SLOTS] / [TOPDOWN.SLOTS_P] ) ) )",
	  GNR_ALT },
	{ TD_CAT_BACKEND_BOUND, "TMA_Backend_Bound(%)", "100 * ( [TOPDOWN.BACKEND_BOUND_SLOTS] / [TOPDOWN.SLOTS_P] )",
	  GNR_ALT },
	{ TD_CAT_MEMORY_BOUND, "TMA_..Memory_Bound(%)", "100 * ( [TOPDOWN.MEMORY_BOUND_SLOTS] / [TOPDOWN.SLOTS_P] )",
	  GNR_ALT },
	{ TD_CAT_CORE_BOUND, "TMA_..Core_Bound(%)",
	  "100 * max( 0 , ( [TOPDOWN.BACKEND_BOUND_SLOTS] / [TOPDOWN.SLOTS_P] ) - ( [TOPDOWN.MEMORY_BOUND_SLOTS] / [TOPDOWN.SLOTS_P] ) )",
	  GNR_ALT },
	{ TD_CAT_RETIRING, "TMA_Retiring(%)", "100 * ( [UOPS_RETIRED.SLOTS] / [TOPDOWN.SLOTS_P] )", GNR_ALT },
	{ TD_CAT_LIGHT_OPERATIONS, "TMA_..Light_Operations(%)",
	  "100 * ( max( 0 , ( [UOPS_RETIRED.SLOTS] / ( [TOPDOWN.SLOTS_P] ) ) - ( [UOPS_RETIRED.HEAVY] / ( [TOPDOWN.SLOTS_P] ) ) ) )",
	  GNR_ALT },
	{ TD_CAT_HEAVY_OPERATIONS, "TMA_..Heavy_Operations(%)", "100 * ( [UOPS_RETIRED.HEAVY] / [TOPDOWN.SLOTS_P] )",
	  GNR_ALT },
};

static const struct uarch gnr;

static const struct uarch gnr_alt = {
	.id = "graniterapids-alt",
	.name = "Granite Rapids without PERF_METRICS",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 2,
	.models = { 0xAD, 0xAE },
	.pmu = "cpu",
	.formulas = UA_FORMULAS_GLC_ALT,
	.width = 6,
	.width_source = "[IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE] * ( 6 ), " GNR_ALT " TMA_..Fetch_Latency(%)",
	.max_level = 2,
	.n_events = sizeof(gnr_alt_events) / sizeof(gnr_alt_events[0]),
	.events = gnr_alt_events,
	.n_metrics = sizeof(gnr_alt_metrics) / sizeof(gnr_alt_metrics[0]),
	.metrics = gnr_alt_metrics,
	.alt_of = &gnr,
};

static const struct ua_smt gnr_smt = UA_SMT_DIST(GNR_PIPE, "0,1,2,3,4,5,6,7", "Fixed counter 2",
	"tma_info_system_smt_2t_utilization",
	"(1 - CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE / CPU_CLK_UNHALTED.REF_DISTRIBUTED if #SMT_on else 0)",
	"perf-tables/x86/graniterapids/gnr-metrics.json");
static const struct uarch gnr = {
	.id = "graniterapids",
	.name = "Granite Rapids",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 2,
	.models = { 0xAD, 0xAE },  /* mapfile.csv: GenuineIntel-6-A[DE] */
	.pmu = "cpu",
	.formulas = UA_FORMULAS_GLC,
	.max_level = 2,
	.n_events = sizeof(gnr_events) / sizeof(gnr_events[0]),
	.events = gnr_events,
	.n_metrics = sizeof(gnr_metrics) / sizeof(gnr_metrics[0]),
	.metrics = gnr_metrics,
	.guest_alt = &gnr_alt,
	.smt = &gnr_smt,
};

/* ---- Alder Lake and Raptor Lake P-cores (cpu_core) ---- */

static const struct ua_event adl_core_events[] = {
	PERF_METRICS_EVENTS,
	PERF_METRICS_L2_EVENTS,
	REV(TD_EV_UOP_DROPPING, "INT_MISC.UOP_DROPPING", "event=0xad,umask=0x10",
	    "perf-tables/x86/alderlake/pipeline.json", GP8),
};

static const struct ua_metric adl_core_metrics[] = {
	{ TD_CAT_RETIRING, "tma_retiring",
	  "cpu_core@topdown\\-retiring@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_BAD_SPECULATION, "tma_bad_speculation",
	  "max(1 - (tma_frontend_bound + tma_backend_bound + tma_retiring), 0)",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_FRONTEND_BOUND, "tma_frontend_bound",
	  "cpu_core@topdown\\-fe\\-bound@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@) - cpu_core@INT_MISC.UOP_DROPPING@ / tma_info_thread_slots",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_BACKEND_BOUND, "tma_backend_bound",
	  "cpu_core@topdown\\-be\\-bound@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_HEAVY_OPERATIONS, "tma_heavy_operations",
	  "cpu_core@topdown\\-heavy\\-ops@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_LIGHT_OPERATIONS, "tma_light_operations",
	  "max(0, tma_retiring - tma_heavy_operations)",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts",
	  "cpu_core@topdown\\-br\\-mispredict@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_MACHINE_CLEARS, "tma_machine_clears",
	  "max(0, tma_bad_speculation - tma_branch_mispredicts)",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_FETCH_LATENCY, "tma_fetch_latency",
	  "cpu_core@topdown\\-fetch\\-lat@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@) - cpu_core@INT_MISC.UOP_DROPPING@ / tma_info_thread_slots",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_FETCH_BANDWIDTH, "tma_fetch_bandwidth",
	  "max(0, tma_frontend_bound - tma_fetch_latency)",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_MEMORY_BOUND, "tma_memory_bound",
	  "cpu_core@topdown\\-mem\\-bound@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@) + 0 * tma_info_thread_slots",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
	{ TD_CAT_CORE_BOUND, "tma_core_bound",
	  "max(0, tma_backend_bound - tma_memory_bound)",
	  "perf-tables/x86/alderlake/adl-metrics.json" },
};

static const struct ua_smt adl_core_smt = UA_SMT_DIST("perf-tables/x86/alderlake/pipeline.json", "0,1,2,3,4,5,6,7",
	"Fixed counter 2", "tma_info_system_smt_2t_utilization",
	"(1 - cpu_core@CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE@ / cpu_core@CPU_CLK_UNHALTED.REF_DISTRIBUTED@ if #SMT_on else 0)",
	"perf-tables/x86/alderlake/adl-metrics.json");
static const struct uarch adl_core = {
	.id = "alderlake",
	.name = "Alder Lake / Raptor Lake P-core",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 5,
	.models = { 0x97, 0x9A, 0xB7, 0xBA, 0xBF },  /* mapfile.csv: GenuineIntel-6-(97|9A|B7|BA|BF) */
	.pmu = "cpu_core",
	.formulas = UA_FORMULAS_GLC,
	.max_level = 2,
	.n_events = sizeof(adl_core_events) / sizeof(adl_core_events[0]),
	.events = adl_core_events,
	.n_metrics = sizeof(adl_core_metrics) / sizeof(adl_core_metrics[0]),
	.metrics = adl_core_metrics,
	.smt = &adl_core_smt,
};

/* ---- Ice Lake (server and client) ----
 * Level 1 from PERF_METRICS with two refinement events, level 2 from
 * general-purpose events beside them.  perf 6.1 knows both models: its
 * tables (reference/perf-tables-6.1) are the truth.  Newer tables call
 * INT_MISC.RECOVERY_CYCLES with cmask=1,edge=1 INT_MISC.CLEARS_COUNT: the
 * same encoding. */

#define ICL_EVENTS(PIPE, FE)                                                                       \
	PERF_METRICS_EVENTS,                                                                       \
	REV(TD_EV_UOP_DROPPING, "INT_MISC.UOP_DROPPING", "event=0x0d,umask=0x10", PIPE, GP8),      \
	REV(TD_EV_RECOVERY_CYCLES, "INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1",                      \
	    "event=0x0d,umask=0x01,cmask=1,edge=1", PIPE, GP8),                                    \
	GEV(TD_EV_IDQ_0_UOPS_CYCLES, "IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE",            \
	    "event=0x9c,umask=0x01,cmask=5", FE, GP8),                                             \
	GEV(TD_EV_BR_MISP_RETIRED, "BR_MISP_RETIRED.ALL_BRANCHES", "event=0xc5", PIPE, GP8),       \
	GEV(TD_EV_MACHINE_CLEARS, "MACHINE_CLEARS.COUNT", "event=0xc3,umask=0x01,cmask=1,edge=1", PIPE, GP8), \
	GEV(TD_EV_STALLS_MEM_ANY, "CYCLE_ACTIVITY.STALLS_MEM_ANY", "event=0xa3,umask=0x14,cmask=20", PIPE, GP8), \
	GEV(TD_EV_STALLS_TOTAL, "CYCLE_ACTIVITY.STALLS_TOTAL", "event=0xa3,umask=0x04,cmask=4", PIPE, GP8), \
	GEV(TD_EV_BOUND_ON_STORES, "EXE_ACTIVITY.BOUND_ON_STORES", "event=0xa6,umask=0x40,cmask=2", PIPE, GP8), \
	GEV(TD_EV_PORTS_UTIL_1, "EXE_ACTIVITY.1_PORTS_UTIL", "event=0xa6,umask=0x02", PIPE, GP8),  \
	GEV(TD_EV_PORTS_UTIL_2, "EXE_ACTIVITY.2_PORTS_UTIL", "event=0xa6,umask=0x04", PIPE, GP8),  \
	GEV(TD_EV_UOPS_ISSUED, "UOPS_ISSUED.ANY", "event=0x0e,umask=0x01", PIPE, GP8),             \
	GEV(TD_EV_IDQ_MS_UOPS, "IDQ.MS_UOPS", "event=0x79,umask=0x30", FE, GP4),                   \
	GEV(TD_EV_IDQ_MITE_UOPS, "IDQ.MITE_UOPS", "event=0x79,umask=0x04", FE, GP4),               \
	GEV(TD_EV_DEC0, "UOPS_DECODED.DEC0", "event=0x56,umask=0x01", PIPE, GP4),                  \
	GEV(TD_EV_DEC0_CYCLES, "UOPS_DECODED.DEC0,cmask=1", "event=0x56,umask=0x01,cmask=1", PIPE, GP4)

#define TD_SUM "(topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound)"
#define ICL_METRICS(FILE)                                                                          \
	{ TD_CAT_RETIRING, "tma_retiring", "topdown\\-retiring / " TD_SUM " + 0*SLOTS", FILE },     \
	{ TD_CAT_BAD_SPECULATION, "tma_bad_speculation",                                             \
	  "max(1 - (tma_frontend_bound + tma_backend_bound + tma_retiring), 0)", FILE },              \
	{ TD_CAT_FRONTEND_BOUND, "tma_frontend_bound",                                               \
	  "topdown\\-fe\\-bound / " TD_SUM " - INT_MISC.UOP_DROPPING / SLOTS", FILE },                \
	{ TD_CAT_BACKEND_BOUND, "tma_backend_bound",                                                 \
	  "topdown\\-be\\-bound / " TD_SUM " + (5 * cpu@INT_MISC.RECOVERY_CYCLES\\,cmask\\=1\\,edge@) / SLOTS", FILE }, \
	{ TD_CAT_HEAVY_OPERATIONS, "tma_heavy_operations",                                           \
	  "tma_microcode_sequencer + tma_retiring * (UOPS_DECODED.DEC0 - cpu@UOPS_DECODED.DEC0\\,cmask\\=1@) / IDQ.MITE_UOPS", \
	  FILE },                                                                                     \
	{ TD_CAT_LIGHT_OPERATIONS, "tma_light_operations", "max(0, tma_retiring - tma_heavy_operations)", FILE }, \
	{ TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts",                                       \
	  "(BR_MISP_RETIRED.ALL_BRANCHES / (BR_MISP_RETIRED.ALL_BRANCHES + MACHINE_CLEARS.COUNT)) * tma_bad_speculation", \
	  FILE },                                                                                     \
	{ TD_CAT_MACHINE_CLEARS, "tma_machine_clears", "max(0, tma_bad_speculation - tma_branch_mispredicts)", FILE }, \
	{ TD_CAT_FETCH_LATENCY, "tma_fetch_latency",                                                 \
	  "(5 * IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE - INT_MISC.UOP_DROPPING) / SLOTS", FILE }, \
	{ TD_CAT_FETCH_BANDWIDTH, "tma_fetch_bandwidth", "max(0, tma_frontend_bound - tma_fetch_latency)", FILE }, \
	{ TD_CAT_MEMORY_BOUND, "tma_memory_bound",                                                   \
	  "((CYCLE_ACTIVITY.STALLS_MEM_ANY + EXE_ACTIVITY.BOUND_ON_STORES) / (CYCLE_ACTIVITY.STALLS_TOTAL + (EXE_ACTIVITY.1_PORTS_UTIL + tma_retiring * EXE_ACTIVITY.2_PORTS_UTIL) + EXE_ACTIVITY.BOUND_ON_STORES)) * tma_backend_bound", \
	  FILE },                                                                                     \
	{ TD_CAT_CORE_BOUND, "tma_core_bound", "max(0, tma_backend_bound - tma_memory_bound)", FILE }

#define ICX_PIPE "perf-tables-6.1/x86/icelakex/pipeline.json"
#define ICX_FE "perf-tables-6.1/x86/icelakex/frontend.json"
#define ICX_METRICS "perf-tables-6.1/x86/icelakex/icx-metrics.json"
#define ICL_PIPE "perf-tables-6.1/x86/icelake/pipeline.json"
#define ICL_FE "perf-tables-6.1/x86/icelake/frontend.json"
#define ICL_METRICS_FILE "perf-tables-6.1/x86/icelake/icl-metrics.json"

/* Ice Lake server without PERF_METRICS (a virtual machine): Intel's
 * alternate TMA formulas (reference/perfspect) on perf 6.1's events. */
#define ICX_ALT "perfspect/icx_alt_tma_metrics.json"

static const struct ua_event icx_alt_events[] = {
	UA_EV(TD_EV_CYCLES, "CPU_CLK_UNHALTED.THREAD_P", "event=0x3c", ICX_PIPE, GP8, 1),
	UA_EV(TD_EV_SLOTS_P, "TOPDOWN.SLOTS_P", "event=0xa4,umask=0x1", ICX_PIPE, GP8, 1),
	UA_EV(TD_EV_IDQ_NOT_DELIVERED, "IDQ_UOPS_NOT_DELIVERED.CORE", "event=0x9c,umask=0x1", ICX_FE, GP8, 1),
	UA_EV(TD_EV_UOP_DROPPING, "INT_MISC.UOP_DROPPING", "event=0x0d,umask=0x10", ICX_PIPE, GP8, 1),
	UA_EV(TD_EV_BE_BOUND_SLOTS, "TOPDOWN.BACKEND_BOUND_SLOTS", "event=0xa4,umask=0x2", ICX_PIPE, GP8, 1),
	UA_EV(TD_EV_RECOVERY_CYCLES, "INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1", "event=0x0d,umask=0x01,cmask=1,edge=1",
	    ICX_PIPE, GP8, 1),
	UA_EV(TD_EV_UOPS_RETIRED_SLOTS, "UOPS_RETIRED.SLOTS", "event=0xc2,umask=0x2", ICX_PIPE, GP8, 1),
	GEV(TD_EV_IDQ_0_UOPS_CYCLES, "IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE", "event=0x9c,umask=0x01,cmask=5",
	    ICX_FE, GP8),
	GEV(TD_EV_BR_MISP_RETIRED, "BR_MISP_RETIRED.ALL_BRANCHES", "event=0xc5", ICX_PIPE, GP8),
	GEV(TD_EV_MACHINE_CLEARS, "MACHINE_CLEARS.COUNT", "event=0xc3,umask=0x01,cmask=1,edge=1", ICX_PIPE, GP8),
	GEV(TD_EV_STALLS_MEM_ANY, "CYCLE_ACTIVITY.STALLS_MEM_ANY", "event=0xa3,umask=0x14,cmask=20", ICX_PIPE, GP8),
	GEV(TD_EV_STALLS_TOTAL, "CYCLE_ACTIVITY.STALLS_TOTAL", "event=0xa3,umask=0x04,cmask=4", ICX_PIPE, GP8),
	GEV(TD_EV_BOUND_ON_STORES, "EXE_ACTIVITY.BOUND_ON_STORES", "event=0xa6,umask=0x40,cmask=2", ICX_PIPE, GP8),
	GEV(TD_EV_PORTS_UTIL_1, "EXE_ACTIVITY.1_PORTS_UTIL", "event=0xa6,umask=0x02", ICX_PIPE, GP8),
	GEV(TD_EV_PORTS_UTIL_2, "EXE_ACTIVITY.2_PORTS_UTIL", "event=0xa6,umask=0x04", ICX_PIPE, GP8),
	GEV(TD_EV_UOPS_ISSUED, "UOPS_ISSUED.ANY", "event=0x0e,umask=0x01", ICX_PIPE, GP8),
	GEV(TD_EV_IDQ_MS_UOPS, "IDQ.MS_UOPS", "event=0x79,umask=0x30", ICX_FE, GP4),
	GEV(TD_EV_IDQ_MITE_UOPS, "IDQ.MITE_UOPS", "event=0x79,umask=0x04", ICX_FE, GP4),
	GEV(TD_EV_DEC0, "UOPS_DECODED.DEC0", "event=0x56,umask=0x01", ICX_PIPE, GP4),
	GEV(TD_EV_DEC0_CYCLES, "UOPS_DECODED.DEC0,cmask=1", "event=0x56,umask=0x01,cmask=1", ICX_PIPE, GP4),
};

/* PerfSpect's "Formula" of each metric, verbatim. */
#define ICX_ALT_BAD "max( 1 - ( ( ( a - b ) / ( c ) ) + ( ( d + ( 5 ) * e ) / ( c ) ) + ( f / ( c ) ) ) , 0 )"
static const struct ua_metric icx_alt_metrics[] = {
	{ TD_CAT_FRONTEND_BOUND, "Frontend_Bound", "100 * ( ( a - b ) / c )", ICX_ALT },
	{ TD_CAT_FETCH_LATENCY, "Fetch_Latency", "100 * ( ( ( 5 ) * a - b ) / ( c ) )", ICX_ALT },
	{ TD_CAT_FETCH_BANDWIDTH, "Fetch_Bandwidth",
	  "100 * ( max( 0 , ( ( a - b ) / ( c ) ) - ( ( ( 5 ) * d - b ) / ( c ) ) ) )", ICX_ALT },
	{ TD_CAT_BAD_SPECULATION, "Bad_Speculation", "100 * ( " ICX_ALT_BAD " )", ICX_ALT },
	{ TD_CAT_BRANCH_MISPREDICTS, "Branch_Mispredicts",
	  "100 * ( ( a / ( a + b ) ) * ( max( 1 - ( ( ( c - d ) / ( e ) ) + ( ( f + ( 5 ) * g ) / ( e ) ) + ( h / ( e ) ) ) , 0 ) ) )",
	  ICX_ALT },
	{ TD_CAT_MACHINE_CLEARS, "Machine_Clears",
	  "100 * ( max( 0 , ( " ICX_ALT_BAD " ) - ( ( g / ( g + h ) ) * ( " ICX_ALT_BAD " ) ) ) )", ICX_ALT },
	{ TD_CAT_BACKEND_BOUND, "Backend_Bound", "100 * ( a / b )", ICX_ALT },
	{ TD_CAT_MEMORY_BOUND, "Memory_Bound",
	  "100 * ( ( ( a + b ) / ( c + ( d + ( e / ( f ) ) * g ) + b ) ) * ( ( h + ( 5 ) * i ) / ( f ) ) )", ICX_ALT },
	{ TD_CAT_CORE_BOUND, "Core_Bound",
	  "100 * ( max( 0 , ( ( a + ( 5 ) * b ) / ( c ) ) - ( ( ( d + e ) / ( f + ( g + ( h / ( c ) ) * i ) + e ) ) * ( ( a + ( 5 ) * b ) / ( c ) ) ) ) )",
	  ICX_ALT },
	{ TD_CAT_RETIRING, "Retiring", "100 * ( a / b )", ICX_ALT },
	{ TD_CAT_LIGHT_OPERATIONS, "Light_Operations",
	  "100 * ( max( 0 , ( a / ( b ) ) - ( ( ( a / c ) * d / ( e ) ) + ( f / ( e ) ) * ( g - h ) / i ) ) )", ICX_ALT },
	{ TD_CAT_HEAVY_OPERATIONS, "Heavy_Operations",
	  "100 * ( ( ( a / b ) * c / ( d ) ) + ( a / ( d ) ) * ( e - f ) / g )", ICX_ALT },
};

static const struct uarch icx;

static const struct uarch icx_alt = {
	.id = "icelakex-alt",
	.name = "Ice Lake server without PERF_METRICS",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 2,
	.models = { 0x6A, 0x6C },
	.pmu = "cpu",
	.formulas = UA_FORMULAS_ICL_ALT,
	.width = 5,
	.width_source = "( 5 ) * IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE, " ICX_ALT " Fetch_Latency",
	.max_level = 2,
	.n_events = sizeof(icx_alt_events) / sizeof(icx_alt_events[0]),
	.events = icx_alt_events,
	.n_metrics = sizeof(icx_alt_metrics) / sizeof(icx_alt_metrics[0]),
	.metrics = icx_alt_metrics,
	.alt_of = &icx,
};

static const struct ua_event icx_events[] = { ICL_EVENTS(ICX_PIPE, ICX_FE) };
static const struct ua_metric icx_metrics[] = { ICL_METRICS(ICX_METRICS) };

static const struct ua_smt icx_smt = UA_SMT_DIST(ICX_PIPE, "0,1,2,3,4,5,6,7", "Fixed counter 2", "SMT_2T_Utilization",
	"1 - CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE / CPU_CLK_UNHALTED.REF_DISTRIBUTED if #SMT_on else 0", ICX_METRICS);
static const struct uarch icx = {
	.id = "icelakex",
	.name = "Ice Lake server",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 2,
	.models = { 0x6A, 0x6C },  /* mapfile.csv: GenuineIntel-6-6[AC] */
	.pmu = "cpu",
	.formulas = UA_FORMULAS_ICL,
	.width = 5,
	.width_source = "tma_fetch_latency = (5 * IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE - ...), " ICX_METRICS,
	.max_level = 2,
	.n_events = sizeof(icx_events) / sizeof(icx_events[0]),
	.events = icx_events,
	.n_metrics = sizeof(icx_metrics) / sizeof(icx_metrics[0]),
	.metrics = icx_metrics,
	.guest_alt = &icx_alt,
	.smt = &icx_smt,
};

static const struct ua_event icl_events[] = { ICL_EVENTS(ICL_PIPE, ICL_FE) };
static const struct ua_metric icl_metrics[] = { ICL_METRICS(ICL_METRICS_FILE) };

static const struct ua_smt icl_smt = UA_SMT_DIST(ICL_PIPE, "0,1,2,3,4,5,6,7", "Fixed counter 2", "SMT_2T_Utilization",
	"1 - CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE / CPU_CLK_UNHALTED.REF_DISTRIBUTED if #SMT_on else 0", ICL_METRICS_FILE);
static const struct uarch icl = {
	.id = "icelake",
	.name = "Ice Lake",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 2,
	.models = { 0x7D, 0x7E },  /* mapfile.csv: GenuineIntel-6-7[DE] */
	.pmu = "cpu",
	.formulas = UA_FORMULAS_ICL,
	.width = 5,
	.width_source = "tma_fetch_latency = (5 * IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE - ...), " ICL_METRICS_FILE,
	.max_level = 2,
	.n_events = sizeof(icl_events) / sizeof(icl_events[0]),
	.events = icl_events,
	.n_metrics = sizeof(icl_metrics) / sizeof(icl_metrics[0]),
	.metrics = icl_metrics,
	.smt = &icl_smt,
};

/* ---- Lunar Lake and Arrow Lake P-cores (Lion Cove, cpu_core) ----
 * perf 7.2's lunarlake and arrowlake tables (perf 6.1 knows neither; their
 * TopdownL1 and L2 are the same expressions): the eight PERF_METRICS
 * metrics over the sum of the four level-1 ones, no refinement event (the
 * kernel's events/, lnl_hybrid_events_attrs); bad speculation is its own
 * metric there, not what the others leave, which over that sum is the
 * same value.  No SMT on these parts: no split. */
#define LNL_METRICS_FILE "perf-tables-7.2/x86/lunarlake/lnl-metrics.json"
#define ARL_METRICS_FILE "perf-tables-7.2/x86/arrowlake/arl-metrics.json"

#define LNC_METRICS(FILE) \
	{ TD_CAT_RETIRING, "tma_retiring", \
	  "cpu_core@topdown\\-retiring@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@)", FILE }, \
	{ TD_CAT_BAD_SPECULATION, "tma_bad_speculation", \
	  "cpu_core@topdown\\-bad\\-spec@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@)", FILE }, \
	{ TD_CAT_FRONTEND_BOUND, "tma_frontend_bound", \
	  "cpu_core@topdown\\-fe\\-bound@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@)", FILE }, \
	{ TD_CAT_BACKEND_BOUND, "tma_backend_bound", \
	  "cpu_core@topdown\\-be\\-bound@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@)", FILE }, \
	{ TD_CAT_HEAVY_OPERATIONS, "tma_heavy_operations", \
	  "cpu_core@topdown\\-heavy\\-ops@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@)", FILE }, \
	{ TD_CAT_LIGHT_OPERATIONS, "tma_light_operations", \
	  "max(0, tma_retiring - tma_heavy_operations)", FILE }, \
	{ TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts", \
	  "cpu_core@topdown\\-br\\-mispredict@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@)", FILE }, \
	{ TD_CAT_MACHINE_CLEARS, "tma_machine_clears", \
	  "max(0, tma_bad_speculation - tma_branch_mispredicts)", FILE }, \
	{ TD_CAT_FETCH_LATENCY, "tma_fetch_latency", \
	  "cpu_core@topdown\\-fetch\\-lat@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@)", FILE }, \
	{ TD_CAT_FETCH_BANDWIDTH, "tma_fetch_bandwidth", \
	  "max(0, tma_frontend_bound - tma_fetch_latency)", FILE }, \
	{ TD_CAT_MEMORY_BOUND, "tma_memory_bound", \
	  "cpu_core@topdown\\-mem\\-bound@ / (cpu_core@topdown\\-fe\\-bound@ + cpu_core@topdown\\-bad\\-spec@ + cpu_core@topdown\\-retiring@ + cpu_core@topdown\\-be\\-bound@)", FILE }, \
	{ TD_CAT_CORE_BOUND, "tma_core_bound", \
	  "max(0, tma_backend_bound - tma_memory_bound)", FILE }

static const struct ua_event lnc_events[] = {
	PERF_METRICS_EVENTS,
	PERF_METRICS_L2_EVENTS,
};
static const struct ua_metric lnl_core_metrics[] = { LNC_METRICS(LNL_METRICS_FILE) };
static const struct ua_metric arl_core_metrics[] = { LNC_METRICS(ARL_METRICS_FILE) };

#define LNC_UARCH(id_, name_, metrics_, n_, ...)                                               \
	{ .id = (id_), .name = (name_), .vendor = "GenuineIntel", .family = 6, .n_models = (n_),   \
	  .models = { __VA_ARGS__ }, .pmu = "cpu_core", .formulas = UA_FORMULAS_METRICS, .max_level = 2,  \
	  .n_events = sizeof(lnc_events) / sizeof(lnc_events[0]), .events = lnc_events,           \
	  .n_metrics = sizeof(metrics_) / sizeof(metrics_[0]), .metrics = (metrics_),               \
	  .gp_counters = 10, .gp_source = "the Counter fields of perf 7.2's " id_ " cpu_core events: 0-9" }

/* mapfile.csv: GenuineIntel-6-BD (lunarlake), GenuineIntel-6-C[56] (arrowlake) */
static const struct uarch lnl_core =
	LNC_UARCH("lunarlake", "Lunar Lake P-core (Lion Cove)", lnl_core_metrics, 1, 0xBD);
static const struct uarch arl_core =
	LNC_UARCH("arrowlake", "Arrow Lake P-core (Lion Cove)", arl_core_metrics, 2, 0xC5, 0xC6);

/* ---- any other core PMU with slots: PERF_METRICS alone ---- */

static const struct ua_event metrics_only_events[] = {
	PERF_METRICS_EVENTS,
	PERF_METRICS_L2_EVENTS,
};

const struct uarch ua_intel_metrics_only = {
	.id = "perf_metrics",
	.name = "PERF_METRICS (model not in topdownd's tables)",
	.vendor = "GenuineIntel",
	.family = 6,
	.pmu = NULL,
	.formulas = UA_FORMULAS_METRICS,
	.max_level = 2,
	.n_events = sizeof(metrics_only_events) / sizeof(metrics_only_events[0]),
	.events = metrics_only_events,
};

/* ---- any Intel core PMU showing the architectural TopDown events ----
 * Intel's SDM defines four TopDown level-1 events as architectural
 * (CPUID leaf 0AH EBX bits 8-11, "Pre-defined Architectural Performance
 * Events"), each counting slots: the kernel's KVM selftests give their
 * encodings (reference/kernel/kvm-x86-pmu.h), and the perf driver shows
 * them as the core PMU's topdown-* events where the CPU has them
 * (Darkmont, Clearwater Forest: skt_events_attrs,
 * reference/kernel/intel-core-skt-events.c).  They take general-purpose
 * counters, and a hypervisor passes them as architectural events.  Level 1
 * is perf's PERF_METRICS expressions over the kernel's topdown-* events
 * (Sapphire Rapids' tma_retiring, tma_backend_bound, tma_bad_speculation,
 * and tma_frontend_bound without its model's refinement term, as for
 * PERF_METRICS alone): each over the sum of the four, which is the slots.
 * The cycles (architectural event 0) are the clock of the filtered-event
 * check. */
#define ARCH_PMU_H "kernel/kvm-x86-pmu.h"
static const struct ua_event arch_events[] = {
	UA_EV(TD_EV_CYCLES, "cpu-cycles", "event=0x3c,umask=0x00", ARCH_PMU_H, NULL, 1),
	UA_EV(TD_EV_RETIRING, "topdown-retiring", "event=0xc2,umask=0x02", ARCH_PMU_H, NULL, 1),
	UA_EV(TD_EV_BAD_SPEC, "topdown-bad-spec", "event=0x73,umask=0x00", ARCH_PMU_H, NULL, 1),
	UA_EV(TD_EV_FE_BOUND, "topdown-fe-bound", "event=0x9c,umask=0x01", ARCH_PMU_H, NULL, 1),
	UA_EV(TD_EV_BE_BOUND, "topdown-be-bound", "event=0xa4,umask=0x02", ARCH_PMU_H, NULL, 1),
};

const struct uarch ua_intel_arch_events = {
	.id = "intel_arch",
	.name = "Intel architectural TopDown events (model not in topdownd's tables)",
	.vendor = "GenuineIntel",
	.family = 6,
	.pmu = NULL,
	.formulas = UA_FORMULAS_ARCH,
	.max_level = 1,
	.n_events = sizeof(arch_events) / sizeof(arch_events[0]),
	.events = arch_events,
};

const struct uarch *const ua_intel[] = { &spr, &emr, &gnr, &adl_core, &lnl_core, &arl_core, &icx, &icl };
const size_t ua_intel_count = sizeof(ua_intel) / sizeof(ua_intel[0]);

const struct uarch *const ua_intel_guest[] = { &spr_alt, &emr_alt, &gnr_alt, &icx_alt };
const size_t ua_intel_guest_count = sizeof(ua_intel_guest) / sizeof(ua_intel_guest[0]);

/* ---- models perf knows without TopDown metrics ----
 * perf 7.2's x86/mapfile.csv lists them with their events and no metrics
 * file (reference/perf-tables-7.2): no perf reference for their TopDown.
 * Counted with what the kernel exposes, and said so (pmu_guest_note). */
#define NO_METRICS "perf 7.2's tables have its events and no TopDown metrics"

const struct ua_without ua_intel_no_reference[] = {
	{ "GenuineIntel", NULL, "GenuineIntel-6-(CC|D5)", "pantherlake", "Panther Lake", NO_METRICS, NULL },
	{ "GenuineIntel", NULL, "GenuineIntel-6-DD", "clearwaterforest", "Clearwater Forest (Darkmont)", NO_METRICS, NULL },
	/* The kernel's INTEL_NOVALAKE and INTEL_NOVALAKE_L, IFM(18, 0x01) and
	 * IFM(18, 0x03) (arch/x86/include/asm/intel-family.h): perf 7.2 has
	 * no tables for them at all (table NULL). */
	{ "GenuineIntel", NULL, "GenuineIntel-18-(1|3)", NULL, "Nova Lake",
	  "perf 7.2's x86/mapfile.csv lists no family-18 model", NULL },
	/* Arrow Lake-H's third core type: perf 7.2's arrowlake tables have
	 * events of Unit cpu_lowpower and no metric of it. */
	{ "GenuineIntel", NULL, "GenuineIntel-6-C[56]", "arrowlake", "Arrow Lake-H low-power E-core",
	  "perf 7.2's tables have its events (Unit cpu_lowpower) and no TopDown metrics for it", "cpu_lowpower" },
};
const size_t ua_intel_no_reference_count = sizeof(ua_intel_no_reference) / sizeof(ua_intel_no_reference[0]);
