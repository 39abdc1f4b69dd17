/* SPDX-License-Identifier: MIT */
/* uarch_atom: Intel E-cores, whose TopDown comes from slot-counting
 * general-purpose events (TOPDOWN_*_BOUND) over a fixed number of slots
 * per cycle: Gracemont (the cpu_atom PMU of Alder Lake and Raptor Lake)
 * and Crestmont (Sierra Forest, Grand Ridge).  No SMT on these cores.
 *
 * Gracemont follows the upstream alderlake tables (reference/perf-tables):
 * perf 6.1 cannot compute TopDown on a hybrid part at all (its -M crashes)
 * and names two of the same expressions tma_frontend_latency and
 * tma_load_store_bound; later perf renamed them tma_fetch_latency and
 * tma_memory_bound, the names of the P-cores, which lets a hybrid host add
 * the two core types up.  Its tma_resource_bound is tma_backend_bound
 * itself (an auxiliary tree), so it is not a child here.  Sierra Forest
 * and Grand Ridge are not in perf 6.1: the upstream tables are the only source.
 *
 * Every level-2 node perf reports is counted with perf's own event,
 * TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH and
 * TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS included: on hardware they need
 * not add up to their .ALL parent with their sibling, and perf's value is
 * the event's, not the parent's remainder. */
#include "uarch_tables.h"

#define ADL_PIPE "perf-tables/x86/alderlake/pipeline.json"
#define ADL_MEM "perf-tables/x86/alderlake/memory.json"
#define ADL_CACHE_61 "perf-tables-6.1/x86/alderlake/cache.json"
#define ADL_METRICS "perf-tables/x86/alderlake/adl-metrics.json"
#define SRF_PIPE "perf-tables/x86/sierraforest/pipeline.json"
#define SRF_METRICS "perf-tables/x86/sierraforest/srf-metrics.json"
#define GRR_PIPE "perf-tables/x86/grandridge/pipeline.json"
#define GRR_METRICS "perf-tables/x86/grandridge/grr-metrics.json"

#define GP6 "0,1,2,3,4,5"


/* ---- Gracemont: Alder Lake / Raptor Lake E-cores (cpu_atom) ---- */

static const struct ua_event adl_atom_events[] = {
	UA_EV(TD_EV_CYCLES, "CPU_CLK_UNHALTED.CORE", "event=0x3c", ADL_PIPE, "Fixed counter 1", 1),
	UA_EV(TD_EV_ATOM_FE_BOUND, "TOPDOWN_FE_BOUND.ALL", "event=0x71", ADL_PIPE, GP6, 1),
	UA_EV(TD_EV_ATOM_BE_BOUND, "TOPDOWN_BE_BOUND.ALL", "event=0x74", ADL_PIPE, GP6, 1),
	UA_EV(TD_EV_ATOM_RETIRING, "TOPDOWN_RETIRING.ALL", "event=0xc2", ADL_PIPE, GP6, 1),
	UA_EV(TD_EV_ATOM_FE_LATENCY, "TOPDOWN_FE_BOUND.FRONTEND_LATENCY", "event=0x71,umask=0x72", ADL_PIPE, GP6, 2),
	UA_EV(TD_EV_ATOM_FE_BANDWIDTH, "TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH", "event=0x71,umask=0x8d", ADL_PIPE, GP6, 2),
	UA_EV(TD_EV_ATOM_MISPREDICT, "TOPDOWN_BAD_SPECULATION.MISPREDICT", "event=0x73,umask=0x04", ADL_PIPE, GP6, 2),
	UA_EV(TD_EV_ATOM_MACHINE_CLEARS, "TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS", "event=0x73,umask=0x03", ADL_PIPE, GP6, 2),
	UA_EV(TD_EV_ATOM_MEM_SCHEDULER, "TOPDOWN_BE_BOUND.MEM_SCHEDULER", "event=0x74,umask=0x02", ADL_PIPE, GP6, 2),
	/* memory.json here gives no Counter; perf 6.1's lists 0-5 */
	UA_EV(TD_EV_LD_HEAD_ANY_AT_RET, "LD_HEAD.ANY_AT_RET", "event=0x05,umask=0xff", ADL_MEM, NULL, 2),
	/* not in the upstream copy's files: perf 6.1's cache.json */
	UA_EV(TD_EV_MEM_SCHED_ST_BUF, "MEM_SCHEDULER_BLOCK.ST_BUF", "event=0x04,umask=0x01", ADL_CACHE_61, GP6, 2),
	UA_EV(TD_EV_MEM_SCHED_ALL, "MEM_SCHEDULER_BLOCK.ALL", "event=0x04,umask=0x07", ADL_CACHE_61, GP6, 2),
	UA_EV(TD_EV_UOPS_RETIRED_MS, "UOPS_RETIRED.MS", "event=0xc2,umask=0x01", ADL_PIPE, GP6, 2),
};

/* tma_info_core_slots = 5 * tma_info_core_clks, tma_info_core_clks =
 * cpu_atom@CPU_CLK_UNHALTED.CORE@, tma_store_bound = tma_mem_scheduler *
 * (MEM_SCHEDULER_BLOCK.ST_BUF / .ALL), tma_mem_scheduler =
 * TOPDOWN_BE_BOUND.MEM_SCHEDULER / tma_info_core_slots: same file. */
static const struct ua_metric adl_atom_metrics[] = {
	{ TD_CAT_RETIRING, "tma_retiring", "TOPDOWN_RETIRING.ALL / tma_info_core_slots", ADL_METRICS },
	{ TD_CAT_BAD_SPECULATION, "tma_bad_speculation",
	  "(tma_info_core_slots - (cpu_atom@TOPDOWN_FE_BOUND.ALL@ + cpu_atom@TOPDOWN_BE_BOUND.ALL@ + cpu_atom@TOPDOWN_RETIRING.ALL@)) / tma_info_core_slots",
	  ADL_METRICS },
	{ TD_CAT_FRONTEND_BOUND, "tma_frontend_bound", "TOPDOWN_FE_BOUND.ALL / tma_info_core_slots", ADL_METRICS },
	{ TD_CAT_BACKEND_BOUND, "tma_backend_bound", "TOPDOWN_BE_BOUND.ALL / tma_info_core_slots", ADL_METRICS },
	{ TD_CAT_BASE, "tma_base",
	  "(cpu_atom@TOPDOWN_RETIRING.ALL@ - cpu_atom@UOPS_RETIRED.MS@) / tma_info_core_slots", ADL_METRICS },
	{ TD_CAT_MS_UOPS, "tma_ms_uops", "UOPS_RETIRED.MS / tma_info_core_slots", ADL_METRICS },
	{ TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts",
	  "TOPDOWN_BAD_SPECULATION.MISPREDICT / tma_info_core_slots", ADL_METRICS },
	{ TD_CAT_MACHINE_CLEARS, "tma_machine_clears",
	  "TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS / tma_info_core_slots", ADL_METRICS },
	{ TD_CAT_FETCH_LATENCY, "tma_fetch_latency",
	  "TOPDOWN_FE_BOUND.FRONTEND_LATENCY / tma_info_core_slots", ADL_METRICS },
	{ TD_CAT_FETCH_BANDWIDTH, "tma_fetch_bandwidth",
	  "TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH / tma_info_core_slots", ADL_METRICS },
	{ TD_CAT_MEMORY_BOUND, "tma_memory_bound",
	  "min(cpu_atom@TOPDOWN_BE_BOUND.ALL@ / tma_info_core_slots, cpu_atom@LD_HEAD.ANY_AT_RET@ / tma_info_core_clks + tma_store_bound)",
	  ADL_METRICS },
	{ TD_CAT_CORE_BOUND, "tma_core_bound", "max(0, tma_backend_bound - tma_memory_bound)", ADL_METRICS },
};

static const struct uarch adl_atom = {
	.id = "alderlake",
	.name = "Alder Lake / Raptor Lake E-core (Gracemont)",
	.vendor = "GenuineIntel",
	.family = 6,
	.n_models = 5,
	.models = { 0x97, 0x9A, 0xB7, 0xBA, 0xBF },  /* mapfile.csv: GenuineIntel-6-(97|9A|B7|BA|BF) */
	.pmu = "cpu_atom",
	.formulas = UA_FORMULAS_GRT,
	.width = 5,
	.width_source = "tma_info_core_slots = 5 * tma_info_core_clks, " ADL_METRICS,
	.max_level = 2,
	.n_events = sizeof(adl_atom_events) / sizeof(adl_atom_events[0]),
	.events = adl_atom_events,
	.n_metrics = sizeof(adl_atom_metrics) / sizeof(adl_atom_metrics[0]),
	.metrics = adl_atom_metrics,
};

/* ---- Crestmont: Sierra Forest and Grand Ridge ----
 *
 * The two parts share the core, and their tables give the same encodings
 * and expressions; each entry names its own part's file. */

/* Level 2 of Crestmont and Skymont: the same encodings in each part's
 * pipeline.json (PIPE). */
#define CMT_L2_EVENTS(PIPE)                                                                       \
	UA_EV(TD_EV_ATOM_FE_LATENCY, "TOPDOWN_FE_BOUND.FRONTEND_LATENCY", "event=0x71,umask=0x72", PIPE, GP8, 2), \
	UA_EV(TD_EV_ATOM_FE_BANDWIDTH, "TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH", "event=0x71,umask=0x8d", PIPE, GP8, 2), \
	UA_EV(TD_EV_ATOM_MISPREDICT, "TOPDOWN_BAD_SPECULATION.MISPREDICT", "event=0x73,umask=0x04", PIPE, GP8, 2), \
	UA_EV(TD_EV_ATOM_MACHINE_CLEARS, "TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS", "event=0x73,umask=0x03", PIPE, GP8, 2), \
	UA_EV(TD_EV_ATOM_ALLOC_RESTRICTIONS, "TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS", "event=0x74,umask=0x01", PIPE, GP8, 2)

#define CMT_EVENTS(PIPE)                                                                          \
	UA_EV(TD_EV_CYCLES, "CPU_CLK_UNHALTED.CORE", "event=0x3c", PIPE, "Fixed counter 1", 1),       \
	UA_EV(TD_EV_ATOM_FE_BOUND, "TOPDOWN_FE_BOUND.ALL_P", "event=0x71", PIPE, GP8, 1),             \
	UA_EV(TD_EV_ATOM_BE_BOUND, "TOPDOWN_BE_BOUND.ALL_P", "event=0x74", PIPE, GP8, 1),             \
	UA_EV(TD_EV_ATOM_RETIRING, "TOPDOWN_RETIRING.ALL_P", "event=0x72", PIPE, GP8, 1),             \
	UA_EV(TD_EV_ATOM_BAD_SPEC, "TOPDOWN_BAD_SPECULATION.ALL_P", "event=0x73", PIPE, GP8, 1),      \
	CMT_L2_EVENTS(PIPE)

#define CMT_METRICS(FILE)                                                                         \
	{ TD_CAT_RETIRING, "tma_retiring", "TOPDOWN_RETIRING.ALL_P / (6 * CPU_CLK_UNHALTED.CORE)", FILE }, \
	{ TD_CAT_BAD_SPECULATION, "tma_bad_speculation",                                            \
	  "TOPDOWN_BAD_SPECULATION.ALL_P / (6 * CPU_CLK_UNHALTED.CORE)", FILE },                    \
	{ TD_CAT_FRONTEND_BOUND, "tma_frontend_bound", "TOPDOWN_FE_BOUND.ALL_P / (6 * CPU_CLK_UNHALTED.CORE)", FILE }, \
	{ TD_CAT_BACKEND_BOUND, "tma_backend_bound", "TOPDOWN_BE_BOUND.ALL_P / (6 * CPU_CLK_UNHALTED.CORE)", FILE }, \
	{ TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts",                                      \
	  "TOPDOWN_BAD_SPECULATION.MISPREDICT / (6 * CPU_CLK_UNHALTED.CORE)", FILE },               \
	{ TD_CAT_MACHINE_CLEARS, "tma_machine_clears",                                              \
	  "TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS / (6 * CPU_CLK_UNHALTED.CORE)", FILE },           \
	{ TD_CAT_IFETCH_LATENCY, "tma_ifetch_latency",                                              \
	  "TOPDOWN_FE_BOUND.FRONTEND_LATENCY / (6 * CPU_CLK_UNHALTED.CORE)", FILE },                \
	{ TD_CAT_IFETCH_BANDWIDTH, "tma_ifetch_bandwidth",                                          \
	  "TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH / (6 * CPU_CLK_UNHALTED.CORE)", FILE },              \
	{ TD_CAT_CORE_BOUND, "tma_core_bound",                                                      \
	  "TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS / (6 * CPU_CLK_UNHALTED.CORE)", FILE },              \
	{ TD_CAT_RESOURCE_BOUND, "tma_resource_bound", "tma_backend_bound - tma_core_bound", FILE }

#define CMT_UARCH(id_, name_, model_, events_, metrics_, file_)                                   \
	{ .id = (id_), .name = (name_), .vendor = "GenuineIntel", .family = 6, .n_models = 1,        \
	  .models = { (model_) }, .pmu = "cpu", .formulas = UA_FORMULAS_CMT, .width = 6,            \
	  .width_source = "tma_retiring = TOPDOWN_RETIRING.ALL_P / (6 * CPU_CLK_UNHALTED.CORE), " file_, \
	  .max_level = 2, .n_events = sizeof(events_) / sizeof(events_[0]), .events = (events_),    \
	  .n_metrics = sizeof(metrics_) / sizeof(metrics_[0]), .metrics = (metrics_) }

static const struct ua_event srf_events[] = { CMT_EVENTS(SRF_PIPE) };
static const struct ua_metric srf_metrics[] = { CMT_METRICS(SRF_METRICS) };
/* mapfile.csv: GenuineIntel-6-AF */
static const struct uarch srf = CMT_UARCH("sierraforest", "Sierra Forest (Crestmont)", 0xAF, srf_events,
					  srf_metrics, SRF_METRICS);

static const struct ua_event grr_events[] = { CMT_EVENTS(GRR_PIPE) };
static const struct ua_metric grr_metrics[] = { CMT_METRICS(GRR_METRICS) };
/* mapfile.csv: GenuineIntel-6-B6 */
static const struct uarch grr = CMT_UARCH("grandridge", "Grand Ridge (Crestmont)", 0xB6, grr_events,
					  grr_metrics, GRR_METRICS);

/* ---- Skymont: Lunar Lake and Arrow Lake E-cores (cpu_atom) ----
 *
 * Crestmont's tree over 8 slots per cycle (perf 7.2's lunarlake and
 * arrowlake tables, the same expressions).  Their retiring and frontend
 * bound read TOPDOWN_RETIRING.ALL and TOPDOWN_FE_BOUND.ALL, which the
 * tables put on fixed counters 6 and 5 under pseudo-encodings (no
 * EventCode); the kernel's own events/ of cpu_atom count them,
 * topdown-retiring and topdown-fe-bound (lnl_hybrid_events_attrs), whose
 * codes intel_skt_event_constraints places on those fixed counters, or on
 * a general-purpose one (reference/kernel/intel-fixed-constraints.c):
 * counted from there.  The two others and level 2 are general-purpose
 * events of the tables. */
#define LNL_PIPE "perf-tables-7.2/x86/lunarlake/pipeline.json"
#define LNL_METRICS "perf-tables-7.2/x86/lunarlake/lnl-metrics.json"
#define ARL_PIPE "perf-tables-7.2/x86/arrowlake/pipeline.json"
#define ARL_METRICS "perf-tables-7.2/x86/arrowlake/arl-metrics.json"
#define KERNEL_EVENTS "kernel: events/ of the core PMU"

/* An event the kernel's events/ encodes, on the fixed counter perf's
 * table names for it (its Counter) or a general-purpose one. */
#define KEV_FIXED(var_, name_, sysfs_, counter_)                                                 \
	{ .var = (var_), .name = (name_), .sysfs = (sysfs_), .table = KERNEL_EVENTS,           \
	  .counter = (counter_), .level = 1 }

#define SKT_EVENTS(PIPE)                                                                           \
	UA_EV(TD_EV_CYCLES, "CPU_CLK_UNHALTED.CORE", "event=0x3c", PIPE, "Fixed counter 1", 1),       \
	KEV_FIXED(TD_EV_ATOM_FE_BOUND, "TOPDOWN_FE_BOUND.ALL", "topdown-fe-bound", "Fixed counter 5"),                   \
	UA_EV(TD_EV_ATOM_BE_BOUND, "TOPDOWN_BE_BOUND.ALL_P", "event=0xa4,umask=0x02", PIPE, GP8, 1),  \
	KEV_FIXED(TD_EV_ATOM_RETIRING, "TOPDOWN_RETIRING.ALL", "topdown-retiring", "Fixed counter 6"),                   \
	UA_EV(TD_EV_ATOM_BAD_SPEC, "TOPDOWN_BAD_SPECULATION.ALL_P", "event=0x73", PIPE, GP8, 1),      \
	CMT_L2_EVENTS(PIPE)

#define SKT_M(cat_, name_, ev_, FILE) \
	{ cat_, name_, "cpu_atom@" ev_ "@ / (8 * cpu_atom@CPU_CLK_UNHALTED.CORE@)", FILE }
#define SKT_METRICS(FILE)                                                                       \
	SKT_M(TD_CAT_RETIRING, "tma_retiring", "TOPDOWN_RETIRING.ALL", FILE),                     \
	SKT_M(TD_CAT_BAD_SPECULATION, "tma_bad_speculation", "TOPDOWN_BAD_SPECULATION.ALL_P", FILE), \
	SKT_M(TD_CAT_FRONTEND_BOUND, "tma_frontend_bound", "TOPDOWN_FE_BOUND.ALL", FILE),         \
	SKT_M(TD_CAT_BACKEND_BOUND, "tma_backend_bound", "TOPDOWN_BE_BOUND.ALL_P", FILE),         \
	SKT_M(TD_CAT_BRANCH_MISPREDICTS, "tma_branch_mispredicts", "TOPDOWN_BAD_SPECULATION.MISPREDICT", FILE), \
	SKT_M(TD_CAT_MACHINE_CLEARS, "tma_machine_clears", "TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS", FILE), \
	SKT_M(TD_CAT_IFETCH_LATENCY, "tma_ifetch_latency", "TOPDOWN_FE_BOUND.FRONTEND_LATENCY", FILE), \
	SKT_M(TD_CAT_IFETCH_BANDWIDTH, "tma_ifetch_bandwidth", "TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH", FILE), \
	SKT_M(TD_CAT_CORE_BOUND, "tma_core_bound", "TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS", FILE),  \
	{ TD_CAT_RESOURCE_BOUND, "tma_resource_bound", "tma_backend_bound - tma_core_bound", FILE }

#define SKT_UARCH(id_, name_, events_, metrics_, file_, n_, ...)                                  \
	{ .id = (id_), .name = (name_), .vendor = "GenuineIntel", .family = 6, .n_models = (n_),     \
	  .models = { __VA_ARGS__ }, .pmu = "cpu_atom", .formulas = UA_FORMULAS_CMT, .width = 8,    \
	  .width_source = "tma_retiring = cpu_atom@TOPDOWN_RETIRING.ALL@ / (8 * cpu_atom@CPU_CLK_UNHALTED.CORE@), " file_, \
	  .max_level = 2, .n_events = sizeof(events_) / sizeof(events_[0]), .events = (events_),    \
	  .n_metrics = sizeof(metrics_) / sizeof(metrics_[0]), .metrics = (metrics_) }

static const struct ua_event lnl_atom_events[] = { SKT_EVENTS(LNL_PIPE) };
static const struct ua_metric lnl_atom_metrics[] = { SKT_METRICS(LNL_METRICS) };
static const struct ua_event arl_atom_events[] = { SKT_EVENTS(ARL_PIPE) };
static const struct ua_metric arl_atom_metrics[] = { SKT_METRICS(ARL_METRICS) };
/* mapfile.csv: GenuineIntel-6-BD (lunarlake), GenuineIntel-6-C[56] (arrowlake) */
static const struct uarch lnl_atom = SKT_UARCH("lunarlake", "Lunar Lake E-core (Skymont)", lnl_atom_events,
					       lnl_atom_metrics, LNL_METRICS, 1, 0xBD);
static const struct uarch arl_atom = SKT_UARCH("arrowlake", "Arrow Lake E-core (Skymont)", arl_atom_events,
					       arl_atom_metrics, ARL_METRICS, 2, 0xC5, 0xC6);

const struct uarch *const ua_atom[] = { &adl_atom, &srf, &grr, &lnl_atom, &arl_atom };
const size_t ua_atom_count = sizeof(ua_atom) / sizeof(ua_atom[0]);
