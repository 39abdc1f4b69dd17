/* SPDX-License-Identifier: MIT */
/* uarch_arm: Arm Neoverse V1, N2, V2, V3 and N3, whose TopDown is perf's
 * TopdownL1 (arm64/sbsa.json: slots from STALL_SLOT* over #slots x
 * CPU_CYCLES) with each core's overrides, and Neoverse N1, which perf has
 * no TopDown for.  V3 and N3 are perf 7.2's (reference/perf-tables-7.2).
 *
 * Linux perf 6.1 does not know these metrics, so the upstream files are
 * the truth (reference/perf-tables/README.md, which says why sbsa.json and
 * the N2/V2 file are the generation the V1 file belongs to).  Event
 * encodings are the PMUv3 common events of arm64/common-and-microarch.json;
 * the tables list no counters: CPU_CYCLES may take the dedicated cycle
 * counter, every other event one of the event counters (6 on these cores;
 * virtual machines may have fewer, which the probe finds). */
#include "uarch_tables.h"

#define COMMON "perf-tables/arm64/common-and-microarch.json"
#define SBSA "perf-tables/arm64/sbsa.json"
#define V1_METRICS "perf-tables/arm64/arm/neoverse-v1/metrics.json"
#define N2V2_METRICS "perf-tables/arm64/arm/neoverse-n2-v2/metrics.json"
#define COMMON72 "perf-tables-7.2/arm64/common-and-microarch.json"
#define SBSA72 "perf-tables-7.2/arm64/sbsa.json"
#define V3_METRICS "perf-tables-7.2/arm64/arm/neoverse-v3/metrics.json"
#define N3_METRICS "perf-tables-7.2/arm64/arm/neoverse-n3/metrics.json"

#define EV(var_, name_, terms_, counter_)                                                 \
	{ .var = (var_), .name = (name_), .terms = (terms_), .table = COMMON, .level = 1,   \
	  .counter = (counter_) }

/* Every event the TopdownL1 expressions of V1, N2 and V2 read. */
static const struct ua_event neoverse_events[] = {
	EV(TD_EV_CYCLES, "CPU_CYCLES", "event=0x11", "Cycle counter"),
	EV(TD_EV_ARM_STALL_SLOT_FRONTEND, "STALL_SLOT_FRONTEND", "event=0x3e", NULL),
	EV(TD_EV_ARM_STALL_SLOT_BACKEND, "STALL_SLOT_BACKEND", "event=0x3d", NULL),
	EV(TD_EV_ARM_STALL_SLOT, "STALL_SLOT", "event=0x3f", NULL),
	EV(TD_EV_ARM_OP_RETIRED, "OP_RETIRED", "event=0x3a", NULL),
	EV(TD_EV_ARM_OP_SPEC, "OP_SPEC", "event=0x3b", NULL),
	EV(TD_EV_ARM_BR_MIS_PRED, "BR_MIS_PRED", "event=0x10", NULL),
};

#define NEOVERSE_GP 6
#define NEOVERSE_GP_SOURCE "the event counters of Neoverse V1/N2/V2 (PMCR_EL0.N); fewer in some virtual machines"

/* ---- Neoverse V1 (AWS Graviton3) ---- */

/* V1 overrides frontend_bound and bad_speculation with an 8-wide
 * constant; backend_bound and retiring are sbsa.json's, over #slots. */
static const struct ua_metric v1_metrics[] = {
	{ TD_CAT_FRONTEND_BOUND, "frontend_bound",
	  "(100 * ((STALL_SLOT_FRONTEND / (CPU_CYCLES * 8)) - ((BR_MIS_PRED * 4) / CPU_CYCLES)))", V1_METRICS },
	{ TD_CAT_BAD_SPECULATION, "bad_speculation",
	  "(100 * (((1 - (OP_RETIRED / OP_SPEC)) * (1 - (STALL_SLOT / (CPU_CYCLES * 8)))) + ((BR_MIS_PRED * 4) / CPU_CYCLES)))",
	  V1_METRICS },
	{ TD_CAT_BACKEND_BOUND, "backend_bound", "100 * (stall_slot_backend / (#slots * cpu_cycles))", SBSA },
	{ TD_CAT_RETIRING, "retiring", "100 * ((op_retired / op_spec) * (1 - stall_slot / (#slots * cpu_cycles)))",
	  SBSA },
};

static const struct uarch neoverse_v1 = {
	.id = "arm/neoverse-v1",
	.arch = "arm64",
	.name = "Arm Neoverse V1",
	.vendor = "ARM",
	.midrs = { "0x00000000410fd400" }, /* arm64/mapfile.csv */
	.pmu = NULL,
	.formulas = UA_FORMULAS_NEOVERSE_V1,
	.width = 8,
	.width_source = "STALL_SLOT_FRONTEND / (CPU_CYCLES * 8), " V1_METRICS,
	.slots_from_caps = true,
	.max_level = 1,
	.n_events = sizeof(neoverse_events) / sizeof(neoverse_events[0]),
	.events = neoverse_events,
	.n_metrics = sizeof(v1_metrics) / sizeof(v1_metrics[0]),
	.metrics = v1_metrics,
	.gp_counters = NEOVERSE_GP,
	.gp_source = NEOVERSE_GP_SOURCE,
};

/* ---- Neoverse N2 and V2 (AWS Graviton4, Google Axion, NVIDIA Grace) ---- */

/* N2 before r0p3 counts one slot per cycle too many in STALL_SLOT and
 * STALL_SLOT_FRONTEND: perf subtracts CPU_CYCLES unless the CPU is N2
 * r0p3 or later, or no N2 at all. */
#define N2V2_STALL "((STALL_SLOT) if (strcmp_cpuid_str(0x410fd493) | strcmp_cpuid_str(0x410fd490) ^ 1) else (STALL_SLOT - CPU_CYCLES))"

static const struct ua_metric n2v2_metrics[] = {
	{ TD_CAT_FRONTEND_BOUND, "frontend_bound",
	  "(100 * ((((STALL_SLOT_FRONTEND) if (strcmp_cpuid_str(0x410fd493) | strcmp_cpuid_str(0x410fd490) ^ 1) else (STALL_SLOT_FRONTEND - CPU_CYCLES)) / (CPU_CYCLES * #slots)) - (BR_MIS_PRED / CPU_CYCLES)))",
	  N2V2_METRICS },
	{ TD_CAT_BAD_SPECULATION, "bad_speculation",
	  "(100 * (((1 - (OP_RETIRED / OP_SPEC)) * (1 - (" N2V2_STALL " / (CPU_CYCLES * #slots)))) + ((BR_MIS_PRED * 4) / CPU_CYCLES)))",
	  N2V2_METRICS },
	{ TD_CAT_BACKEND_BOUND, "backend_bound",
	  "(100 * ((STALL_SLOT_BACKEND / (CPU_CYCLES * #slots)) - ((BR_MIS_PRED * 3) / CPU_CYCLES)))", N2V2_METRICS },
	{ TD_CAT_RETIRING, "retiring",
	  "(100 * ((OP_RETIRED / OP_SPEC) * (1 - (" N2V2_STALL " / (CPU_CYCLES * #slots)))))", N2V2_METRICS },
};

static const struct uarch neoverse_n2v2 = {
	.id = "arm/neoverse-n2-v2",
	.arch = "arm64",
	.name = "Arm Neoverse N2 / V2",
	.vendor = "ARM",
	.midrs = { "0x00000000410fd490", "0x00000000410fd4f0" }, /* arm64/mapfile.csv */
	.pmu = NULL,
	.formulas = UA_FORMULAS_NEOVERSE_N2V2,
	.width = 0,
	.width_source = NULL,
	.slots_from_caps = true,
	.stall_fix_midr = "0x410fd493",
	.max_level = 1,
	.n_events = sizeof(neoverse_events) / sizeof(neoverse_events[0]),
	.events = neoverse_events,
	.n_metrics = sizeof(n2v2_metrics) / sizeof(n2v2_metrics[0]),
	.metrics = n2v2_metrics,
	.gp_counters = NEOVERSE_GP,
	.gp_source = NEOVERSE_GP_SOURCE,
};

/* ---- Neoverse V3 and N3 ---- */

#define EV72(var_, name_, terms_, counter_)                                               \
	{ .var = (var_), .name = (name_), .terms = (terms_), .table = COMMON72, .level = 1, \
	  .counter = (counter_) }

/* TopdownL1's events, and STALL_FRONTEND_FLUSH (0x8162): an
 * IMPLEMENTATION DEFINED event, which the kernel never lists in events/
 * (pmu.c). */
static const struct ua_event v3n3_events[] = {
	EV72(TD_EV_CYCLES, "CPU_CYCLES", "event=0x11", "Cycle counter"),
	EV72(TD_EV_ARM_STALL_SLOT_FRONTEND, "STALL_SLOT_FRONTEND", "event=0x3e", NULL),
	EV72(TD_EV_ARM_STALL_SLOT_BACKEND, "STALL_SLOT_BACKEND", "event=0x3d", NULL),
	EV72(TD_EV_ARM_STALL_SLOT, "STALL_SLOT", "event=0x3f", NULL),
	EV72(TD_EV_ARM_OP_RETIRED, "OP_RETIRED", "event=0x3a", NULL),
	EV72(TD_EV_ARM_OP_SPEC, "OP_SPEC", "event=0x3b", NULL),
	EV72(TD_EV_ARM_STALL_FRONTEND_FLUSH, "STALL_FRONTEND_FLUSH", "event=0x8162", NULL),
};

/* Frontend bound and bad speculation are the core's own (its width a
 * constant in them, the flush recovery cycles moved to bad
 * speculation); backend bound and retiring are sbsa.json's over #slots. */
#define V3N3_METRICS(W, FILE)                                                                           \
	{ TD_CAT_FRONTEND_BOUND, "frontend_bound",                                                       \
	  "(STALL_SLOT_FRONTEND / (" #W " * CPU_CYCLES) - STALL_FRONTEND_FLUSH / CPU_CYCLES) * 100", FILE }, \
	{ TD_CAT_BAD_SPECULATION, "bad_speculation",                                                     \
	  "(1 - STALL_SLOT / (" #W " * CPU_CYCLES)) * (1 - OP_RETIRED / OP_SPEC) * 100 + STALL_FRONTEND_FLUSH / CPU_CYCLES * 100", \
	  FILE },                                                                                         \
	{ TD_CAT_BACKEND_BOUND, "backend_bound", "100 * (stall_slot_backend / (#slots * cpu_cycles))", SBSA72 }, \
	{ TD_CAT_RETIRING, "retiring", "100 * ((op_retired / op_spec) * (1 - stall_slot / (#slots * cpu_cycles)))", \
	  SBSA72 }

static const struct ua_metric v3_metrics[] = { V3N3_METRICS(10, V3_METRICS) };
static const struct ua_metric n3_metrics[] = { V3N3_METRICS(5, N3_METRICS) };

/* V3 and N3: the same events and formulas over their own width. */
#define V3N3_UARCH(id_, name_, midr_, width_, metrics_, file_)                                     \
	{ .id = (id_), .arch = "arm64", .name = (name_), .vendor = "ARM", .midrs = { (midr_) },         \
	  .formulas = UA_FORMULAS_NEOVERSE_V3N3, .width = (width_),                                     \
	  .width_source = "STALL_SLOT_FRONTEND / (" #width_ " * CPU_CYCLES), " file_,                   \
	  .slots_from_caps = true, .max_level = 1,                                                     \
	  .n_events = sizeof(v3n3_events) / sizeof(v3n3_events[0]), .events = v3n3_events,             \
	  .n_metrics = sizeof(metrics_) / sizeof(metrics_[0]), .metrics = (metrics_),                  \
	  .gp_counters = NEOVERSE_GP, .gp_source = NEOVERSE_GP_SOURCE }

/* Neoverse V3: perf 7.2's arm64/mapfile.csv gives neoverse-v3 to MIDR
 * 0x410fd830, part 0xd83 (the kernel's cputype.h: NEOVERSE_V3AE; V3 is
 * 0xd84, which perf 7.2 does not list): recognised as perf does. */
static const struct uarch neoverse_v3 =
	V3N3_UARCH("arm/neoverse-v3", "Arm Neoverse V3", "0x00000000410fd830", 10, v3_metrics, V3_METRICS);
/* perf 7.2's arm64/mapfile.csv */
static const struct uarch neoverse_n3 =
	V3N3_UARCH("arm/neoverse-n3", "Arm Neoverse N3", "0x00000000410fd8e0", 5, n3_metrics, N3_METRICS);

/* ---- AmpereOne and AmpereOne M ---- */

#define A1_METRICS "perf-tables-7.2/arm64/ampere/ampereone/metrics.json"
#define A1X_METRICS "perf-tables-7.2/arm64/ampere/ampereonex/metrics.json"

#define A1_IMPDEF "perf-tables-7.2/arm64/ampere/ampereone/core-imp-def.json"
#define A1X_IMPDEF "perf-tables-7.2/arm64/ampere/ampereonex/core-imp-def.json"
#define A1X_PIPELINE "perf-tables-7.2/arm64/ampere/ampereonex/pipeline.json"

#define EVX(var_, name_, terms_, table_, level_) \
	{ .var = (var_), .name = (name_), .terms = (terms_), .table = (table_), .level = (level_) }

/* TopdownL1's events; TopdownL2's (level 2): BR_MIS_PRED_RETIRED,
 * STALL_FRONTEND and STALL_SLOT_FRONTEND are common events, GPC_FLUSH and
 * STALL_BACKEND_CACHE the cores' IMPLEMENTATION DEFINED ones (never in
 * events/, pmu.c), and STALL_BACKEND_TLB each model's own (AmpereOne's
 * 0xd20e; AmpereOne M's 0x8167, the common event's code, in its
 * pipeline.json). */
#define AMPERE_EVENTS(TLB_TERMS, TLB_TABLE, IMPDEF)                                                  \
	EV72(TD_EV_CYCLES, "CPU_CYCLES", "event=0x11", "Cycle counter"),                             \
	EV72(TD_EV_ARM_STALL_SLOT_BACKEND, "STALL_SLOT_BACKEND", "event=0x3d", NULL),                \
	EV72(TD_EV_ARM_OP_RETIRED, "OP_RETIRED", "event=0x3a", NULL),                                \
	EV72(TD_EV_ARM_OP_SPEC, "OP_SPEC", "event=0x3b", NULL),                                      \
	EVX(TD_EV_ARM_BR_MIS_PRED_RETIRED, "BR_MIS_PRED_RETIRED", "event=0x22", COMMON72, 2),        \
	EVX(TD_EV_ARM_GPC_FLUSH, "GPC_FLUSH", "event=0x120", IMPDEF, 2),                             \
	EVX(TD_EV_ARM_STALL_FRONTEND, "STALL_FRONTEND", "event=0x23", COMMON72, 2),                  \
	EVX(TD_EV_ARM_STALL_SLOT_FRONTEND, "STALL_SLOT_FRONTEND", "event=0x3e", COMMON72, 2),        \
	EVX(TD_EV_ARM_STALL_BACKEND_TLB, "STALL_BACKEND_TLB", TLB_TERMS, TLB_TABLE, 2),              \
	EVX(TD_EV_ARM_STALL_BACKEND_CACHE, "STALL_BACKEND_CACHE", "event=0xd20d", IMPDEF, 2)

static const struct ua_event a1_events[] = { AMPERE_EVENTS("event=0xd20e", A1_IMPDEF, A1_IMPDEF) };
static const struct ua_event a1x_events[] = { AMPERE_EVENTS("event=0x8167", A1X_PIPELINE, A1X_IMPDEF) };

/* perf's TopdownL1 here: the model's retired_fraction and
 * slots_lost_misspeculation_fraction, sbsa.json's backend_bound, and the
 * model's frontend_bound, the rest.  TopdownL2 splits each but retiring
 * (its pipe_utilization is of the execute slots, not a share of the
 * retiring ones): the mispredicted branches' share of the flushes, the
 * frontend's stall cycles beyond the slots frontend bound explains, the
 * backend's cache and TLB stall cycles. */
#define AMPERE_METRICS(RET, BAD, FE_LAT, FE_BW, FILE)                                                   \
	{ TD_CAT_RETIRING, "retired_fraction", RET, FILE },                                              \
	{ TD_CAT_BAD_SPECULATION, "slots_lost_misspeculation_fraction", BAD, FILE },                     \
	{ TD_CAT_BACKEND_BOUND, "backend_bound", "100 * (stall_slot_backend / (#slots * cpu_cycles))", SBSA72 }, \
	{ TD_CAT_FRONTEND_BOUND, "frontend_bound",                                                       \
	  "100 - (retired_fraction + slots_lost_misspeculation_fraction + backend_bound)", FILE },        \
	{ TD_CAT_BRANCH_MISPREDICTS, "branch_mispredict",                                                \
	  "(BR_MIS_PRED_RETIRED / GPC_FLUSH) * slots_lost_misspeculation_fraction", FILE },             \
	{ TD_CAT_MACHINE_CLEARS, "other_miss_pred", "slots_lost_misspeculation_fraction - branch_mispredict", \
	  FILE },                                                                                         \
	{ TD_CAT_FETCH_LATENCY, "frontend_latency", FE_LAT, FILE },                                      \
	{ TD_CAT_FETCH_BANDWIDTH, "frontend_bandwidth", FE_BW, FILE },                                   \
	{ TD_CAT_MEMORY_BOUND, "backend_memory", "(STALL_BACKEND_TLB + STALL_BACKEND_CACHE) / CPU_CYCLES", FILE }, \
	{ TD_CAT_CORE_BOUND, "backend_core", "(backend_bound / 100) - backend_memory", FILE }

static const struct ua_metric a1_metrics[] = {
	AMPERE_METRICS("100 * (OP_RETIRED / (CPU_CYCLES * #slots))",
		       "100 * ((OP_SPEC - OP_RETIRED) / (CPU_CYCLES * #slots))",
		       "((STALL_FRONTEND - ((STALL_SLOT_FRONTEND - ((frontend_bound / 100) * CPU_CYCLES * #slots)) / #slots)) / CPU_CYCLES) * 100",
		       "frontend_bound - frontend_latency", A1_METRICS)
};
static const struct ua_metric a1x_metrics[] = {
	AMPERE_METRICS("100 * OP_RETIRED / (CPU_CYCLES * #slots)",
		       "100 * (OP_SPEC - OP_RETIRED) / (CPU_CYCLES * #slots)",
		       "(STALL_FRONTEND - ((STALL_SLOT_FRONTEND - ((frontend_bound / 100) * CPU_CYCLES * #slots)) / #slots)) / CPU_CYCLES",
		       "frontend_bound - 100 * frontend_latency", A1X_METRICS)
};

#define PMCR_GP_SOURCE "PMCR_EL0.N of the machine (the probe finds it); 6 assumed until then"

#define AMPERE_UARCH(id_, name_, midr_, events_, metrics_)                                         \
	{ .id = (id_), .arch = "arm64", .name = (name_), .vendor = "Ampere", .midrs = { (midr_) },      \
	  .formulas = UA_FORMULAS_AMPEREONE, .slots_from_caps = true, .max_level = 2,                 \
	  .n_events = sizeof(events_) / sizeof(events_[0]), .events = (events_),                      \
	  .n_metrics = sizeof(metrics_) / sizeof(metrics_[0]), .metrics = (metrics_),                  \
	  .gp_counters = NEOVERSE_GP, .gp_source = PMCR_GP_SOURCE }

/* MIDRs: perf 7.2's arm64/mapfile.csv */
static const struct uarch ampereone =
	AMPERE_UARCH("ampere/ampereone", "AmpereOne", "0x00000000c00fac30", a1_events, a1_metrics);
static const struct uarch ampereonex =
	AMPERE_UARCH("ampere/ampereonex", "AmpereOne M", "0x00000000c00fac40", a1x_events, a1x_metrics);

/* ---- NVIDIA Olympus (Vera) ---- */

#define T410 "perf-tables-7.2/arm64/nvidia/t410/"
#define T410_METRICS T410 "metrics.json"

/* CPU_SLOT and STALL_SLOT_FRONTEND_WITHOUT_MISPRED are the core's own
 * (IMPLEMENTATION DEFINED: never in events/, pmu.c).  CPU_CYCLES, on the
 * cycle counter, is read by perf's SMT metrics only (t410_smt_mode). */
static const struct ua_event t410_events[] = {
	EV72(TD_EV_CYCLES, "CPU_CYCLES", "event=0x11", "Cycle counter"),
	{ .var = TD_EV_ARM_CPU_SLOT, .name = "CPU_SLOT", .terms = "event=0x01e1", .table = T410 "general.json",
	  .level = 1 },
	{ .var = TD_EV_ARM_STALL_SLOT_FE_NOMISPRED, .name = "STALL_SLOT_FRONTEND_WITHOUT_MISPRED",
	  .terms = "event=0x01e2", .table = T410 "stall.json", .level = 1 },
	EV72(TD_EV_ARM_STALL_SLOT_BACKEND, "STALL_SLOT_BACKEND", "event=0x3d", NULL),
	EV72(TD_EV_ARM_STALL_SLOT, "STALL_SLOT", "event=0x3f", NULL),
	EV72(TD_EV_ARM_OP_RETIRED, "OP_RETIRED", "event=0x3a", NULL),
	EV72(TD_EV_ARM_OP_SPEC, "OP_SPEC", "event=0x3b", NULL),
};

static const struct ua_metric t410_metrics[] = {
	{ TD_CAT_FRONTEND_BOUND, "frontend_bound", "100 * (STALL_SLOT_FRONTEND_WITHOUT_MISPRED / CPU_SLOT)",
	  T410_METRICS },
	{ TD_CAT_BACKEND_BOUND, "backend_bound", "100 * (STALL_SLOT_BACKEND / CPU_SLOT)", T410_METRICS },
	{ TD_CAT_RETIRING, "retiring", "100 * ((OP_RETIRED/OP_SPEC) * (1 - (STALL_SLOT/CPU_SLOT)))", T410_METRICS },
	{ TD_CAT_BAD_SPECULATION, "bad_speculation", "100 - (frontend_bound + retiring + backend_bound)",
	  T410_METRICS },
};

/* perf's SMT metric group: a thread's cycles in ST mode (the core's
 * whole width its own) and in SMT mode (half of it). */
static const struct ua_smt_mode t410_smt_mode = {
	.metric = { "cpu_cycles_fraction_in_st_mode", "cpu_cycles_in_st_mode", "cpu_cycles_in_smt_mode" },
	.expr = { "((CPU_SLOT/CPU_CYCLES) - 5) / 5", "cpu_cycles_fraction_in_st_mode * CPU_CYCLES",
		  "(1 - cpu_cycles_fraction_in_st_mode) * CPU_CYCLES" },
	.table = T410_METRICS,
};

static const struct uarch nvidia_t410 = {
	.id = "nvidia/t410",
	.arch = "arm64",
	.name = "NVIDIA Olympus",
	.vendor = "NVIDIA",
	.midrs = { "0x000000004e0f0100" }, /* perf 7.2's arm64/mapfile.csv */
	.pmu = NULL,
	.formulas = UA_FORMULAS_NVIDIA_T410,
	.max_level = 1,
	.n_events = sizeof(t410_events) / sizeof(t410_events[0]),
	.events = t410_events,
	.n_metrics = sizeof(t410_metrics) / sizeof(t410_metrics[0]),
	.metrics = t410_metrics,
	.gp_counters = NEOVERSE_GP,
	.gp_source = PMCR_GP_SOURCE,
	.smt_mode = &t410_smt_mode,
};

/* ---- published slot widths, for guests whose caps/slots is 0 ---- */

#define ARM_TELEMETRY "ARM-software/telemetry-solution data/pmu/cpu/neoverse/"

const struct ua_arm_slots ua_arm_slots_published[] = {
	{ 0x41, 0xd40, 8, "Neoverse V1", ARM_TELEMETRY "neoverse-v1.json" },
	{ 0x41, 0xd49, 5, "Neoverse N2", ARM_TELEMETRY "neoverse-n2-r0p3.json" },
	{ 0x41, 0xd4f, 8, "Neoverse V2", ARM_TELEMETRY "neoverse-v2.json" },
	{ 0x41, 0xd8e, 5, "Neoverse N3", ARM_TELEMETRY "neoverse-n3.json" },
};
const size_t ua_arm_slots_published_count =
	sizeof(ua_arm_slots_published) / sizeof(ua_arm_slots_published[0]);

const struct uarch *const ua_arm[] = { &neoverse_v1, &neoverse_n2v2, &neoverse_v3, &neoverse_n3, &ampereone,
				       &ampereonex, &nvidia_t410 };
const size_t ua_arm_count = sizeof(ua_arm) / sizeof(ua_arm[0]);

const struct ua_without ua_arm_without[] = {
	{ "ARM", "arm64", "0x00000000410fd0c0", "arm/neoverse-n1", "Arm Neoverse N1",
	  "perf has no TopdownL1 for it: its metrics.json defines none, only cycle accounting from stalled cycles (STALL_FRONTEND, STALL_BACKEND)", NULL },
};
const size_t ua_arm_without_count = sizeof(ua_arm_without) / sizeof(ua_arm_without[0]);
