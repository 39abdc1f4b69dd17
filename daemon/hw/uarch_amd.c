/* SPDX-License-Identifier: MIT */
/* uarch_amd: AMD Zen 4, Zen 5 and Zen 6, whose TopDown is perf's PipelineL1 and
 * PipelineL2 (dispatch slots: W per cycle of the thread, five level-1
 * categories with smt_contention), and the Zen parts perf has no TopDown
 * metrics for.
 *
 * Linux perf 6.1 does not know these metrics, so the upstream files are
 * the truth (reference/perf-tables/README.md): every entry cites the file
 * it comes from.  Zen 5 and Zen 6 are perf 7.2's (reference/perf-tables-7.2),
 * whose mapfile.csv splits family 0x1A between them.  AMD's tables have no Counter fields; the core PMU's six
 * counters are the kernel driver's (gp_source). */
#include "uarch_tables.h"

#define Z4 "perf-tables/x86/amdzen4/"
#define Z5 "perf-tables-7.2/x86/amdzen5/"
#define Z6 "perf-tables-7.2/x86/amdzen6/"

#define EV(var_, name_, terms_, table_, level_)                                          \
	{ .var = (var_), .name = (name_), .terms = (terms_), .table = (table_),          \
	  .level = (level_) }

/* Core PMUs of family 17h and later have six counters (AMD64_NUM_COUNTERS_CORE
 * with X86_FEATURE_PERFCTR_CORE; on PerfMonV2 parts CPUID 0x80000022 EBX
 * says 6 on Genoa and Turin), and no fixed counter. */
#define ZEN_GP_COUNTERS 6
#define ZEN_GP_SOURCE "arch/x86/events/amd/core.c (AMD64_NUM_COUNTERS_CORE, CPUID 0x80000022)"

/* The events of PipelineL1 and PipelineL2, the same on Zen 4 and Zen 5 but
 * for the files that define them, the cycle mask of the frontend-latency
 * term (the dispatch width) and the resync event. */
#define ZEN_EVENTS(CYC, DE, EX, BR, W, RESYNC, RESYNC_TERMS, RESYNC_FILE)                         \
	EV(TD_EV_CYCLES, "ls_not_halted_cyc", "event=0x76", CYC, 1),                                 \
	EV(TD_EV_ZEN_NO_OPS_FRONTEND, "de_no_dispatch_per_slot.no_ops_from_frontend",                \
	   "event=0x1a0,umask=0x01", DE, 1),                                                          \
	EV(TD_EV_ZEN_BACKEND_STALLS, "de_no_dispatch_per_slot.backend_stalls", "event=0x1a0,umask=0x1e", DE, 1), \
	EV(TD_EV_ZEN_SMT_CONTENTION, "de_no_dispatch_per_slot.smt_contention", "event=0x1a0,umask=0x60", DE, 1), \
	EV(TD_EV_ZEN_OPS_DISPATCHED, "de_src_op_disp.all", "event=0xaa,umask=0x07", DE, 1),          \
	EV(TD_EV_ZEN_OPS_RETIRED, "ex_ret_ops", "event=0xc1", EX, 1),                                \
	EV(TD_EV_ZEN_FRONTEND_CYCLES, "de_no_dispatch_per_slot.no_ops_from_frontend,cmask=" #W,     \
	   "event=0x1a0,umask=0x01,cmask=" #W, DE, 2),                                                \
	EV(TD_EV_ZEN_BRANCH_MISP, "ex_ret_brn_misp", "event=0xc3", BR, 2),                           \
	EV(TD_EV_ZEN_RESYNCS, RESYNC, RESYNC_TERMS, RESYNC_FILE, 2),                                 \
	EV(TD_EV_ZEN_NOT_COMPLETE, "ex_no_retire.not_complete", "event=0xd6,umask=0x02", EX, 2),    \
	EV(TD_EV_ZEN_LOAD_NOT_COMPLETE, "ex_no_retire.load_not_complete", "event=0xd6,umask=0xa2", EX, 2), \
	EV(TD_EV_ZEN_UCODE_OPS, "ex_ret_ucode_ops", "event=0x1c2", EX, 2)

/* ---- Zen 4: Genoa, Bergamo, Siena, Raphael (family 0x19 but Zen 3's models) ---- */

static const struct ua_event zen4_events[] = {
	ZEN_EVENTS(Z4 "core.json", Z4 "other.json", Z4 "core.json", Z4 "branch.json", 6,
		   "resyncs_or_nc_redirects", "event=0x96", Z4 "other.json"),
};

#define Z4_METRICS Z4 "pipeline.json"

static const struct ua_metric zen4_metrics[] = {
	{ TD_CAT_FRONTEND_BOUND, "frontend_bound",
	  "d_ratio(de_no_dispatch_per_slot.no_ops_from_frontend, total_dispatch_slots)", Z4_METRICS },
	{ TD_CAT_BAD_SPECULATION, "bad_speculation",
	  "d_ratio(de_src_op_disp.all - ex_ret_ops, total_dispatch_slots)", Z4_METRICS },
	{ TD_CAT_BACKEND_BOUND, "backend_bound",
	  "d_ratio(de_no_dispatch_per_slot.backend_stalls, total_dispatch_slots)", Z4_METRICS },
	{ TD_CAT_SMT_CONTENTION, "smt_contention",
	  "d_ratio(de_no_dispatch_per_slot.smt_contention, total_dispatch_slots)", Z4_METRICS },
	{ TD_CAT_RETIRING, "retiring", "d_ratio(ex_ret_ops, total_dispatch_slots)", Z4_METRICS },
	{ TD_CAT_FRONTEND_BOUND_LATENCY, "frontend_bound_latency",
	  "d_ratio((6 * cpu@de_no_dispatch_per_slot.no_ops_from_frontend\\,cmask\\=0x6@), total_dispatch_slots)",
	  Z4_METRICS },
	{ TD_CAT_FRONTEND_BOUND_BANDWIDTH, "frontend_bound_bandwidth",
	  "d_ratio(de_no_dispatch_per_slot.no_ops_from_frontend - (6 * cpu@de_no_dispatch_per_slot.no_ops_from_frontend\\,cmask\\=0x6@), total_dispatch_slots)",
	  Z4_METRICS },
	{ TD_CAT_BAD_SPECULATION_MISPREDICTS, "bad_speculation_mispredicts",
	  "d_ratio(bad_speculation * ex_ret_brn_misp, ex_ret_brn_misp + resyncs_or_nc_redirects)", Z4_METRICS },
	{ TD_CAT_BAD_SPECULATION_PIPELINE_RESTARTS, "bad_speculation_pipeline_restarts",
	  "d_ratio(bad_speculation * resyncs_or_nc_redirects, ex_ret_brn_misp + resyncs_or_nc_redirects)",
	  Z4_METRICS },
	{ TD_CAT_BACKEND_BOUND_MEMORY, "backend_bound_memory",
	  "backend_bound * d_ratio(ex_no_retire.load_not_complete, ex_no_retire.not_complete)", Z4_METRICS },
	{ TD_CAT_BACKEND_BOUND_CPU, "backend_bound_cpu",
	  "backend_bound * (1 - d_ratio(ex_no_retire.load_not_complete, ex_no_retire.not_complete))",
	  Z4_METRICS },
	{ TD_CAT_RETIRING_FASTPATH, "retiring_fastpath", "retiring * (1 - d_ratio(ex_ret_ucode_ops, ex_ret_ops))",
	  Z4_METRICS },
	{ TD_CAT_RETIRING_MICROCODE, "retiring_microcode", "retiring * d_ratio(ex_ret_ucode_ops, ex_ret_ops)",
	  Z4_METRICS },
};

static const struct uarch zen4 = {
	.id = "amdzen4",
	.name = "AMD Zen 4",
	.vendor = "AuthenticAMD",
	.family = 0x19,
	.cpuid_pattern = "AuthenticAMD-25-[[:xdigit:]]+", /* x86/mapfile.csv, amdzen4 */
	.pmu = "cpu",
	.formulas = UA_FORMULAS_ZEN,
	.width = 6,
	.width_source = "total_dispatch_slots = 6 * ls_not_halted_cyc, " Z4_METRICS,
	.max_level = 2,
	.n_events = sizeof(zen4_events) / sizeof(zen4_events[0]),
	.events = zen4_events,
	.n_metrics = sizeof(zen4_metrics) / sizeof(zen4_metrics[0]),
	.metrics = zen4_metrics,
	.gp_counters = ZEN_GP_COUNTERS,
	.gp_source = ZEN_GP_SOURCE,
	.watchdog_takes_gp = true,
};

/* ---- Zen 5: Turin, Granite Ridge, Strix Point (family 0x1a) ---- */

static const struct ua_event zen5_events[] = {
	ZEN_EVENTS(Z5 "load-store.json", Z5 "decode.json", Z5 "execution.json", Z5 "execution.json", 8,
		   "bp_redirects.resync", "event=0x9f,umask=0x01", Z5 "branch-prediction.json"),
};

#define Z5_METRICS Z5 "pipeline.json"

/* Zen 5's and Zen 6's PipelineL1/L2 (their pipeline.json, FILE), the same
 * expressions but for the resync event's name.  Zen 5's level-2 metrics
 * are named frontend_bound_by_latency, ...: exported under Zen 4's
 * category names, so that one query covers both. */
#define ZEN5_METRICS(FILE, RESYNC) \
	{ TD_CAT_FRONTEND_BOUND, "frontend_bound", \
	  "d_ratio(de_no_dispatch_per_slot.no_ops_from_frontend, total_dispatch_slots)", FILE }, \
	{ TD_CAT_BAD_SPECULATION, "bad_speculation", \
	  "d_ratio(de_src_op_disp.all - ex_ret_ops, total_dispatch_slots)", FILE }, \
	{ TD_CAT_BACKEND_BOUND, "backend_bound", \
	  "d_ratio(de_no_dispatch_per_slot.backend_stalls, total_dispatch_slots)", FILE }, \
	{ TD_CAT_SMT_CONTENTION, "smt_contention", \
	  "d_ratio(de_no_dispatch_per_slot.smt_contention, total_dispatch_slots)", FILE }, \
	{ TD_CAT_RETIRING, "retiring", "d_ratio(ex_ret_ops, total_dispatch_slots)", FILE }, \
	{ TD_CAT_FRONTEND_BOUND_LATENCY, "frontend_bound_by_latency", \
	  "d_ratio((8 * cpu@de_no_dispatch_per_slot.no_ops_from_frontend\\,cmask\\=0x8@), total_dispatch_slots)", \
	  FILE }, \
	{ TD_CAT_FRONTEND_BOUND_BANDWIDTH, "frontend_bound_by_bandwidth", \
	  "d_ratio(de_no_dispatch_per_slot.no_ops_from_frontend - (8 * cpu@de_no_dispatch_per_slot.no_ops_from_frontend\\,cmask\\=0x8@), total_dispatch_slots)", \
	  FILE }, \
	{ TD_CAT_BAD_SPECULATION_MISPREDICTS, "bad_speculation_from_mispredicts", \
	  "d_ratio(bad_speculation * ex_ret_brn_misp, ex_ret_brn_misp + " RESYNC ")", FILE }, \
	{ TD_CAT_BAD_SPECULATION_PIPELINE_RESTARTS, "bad_speculation_from_pipeline_restarts", \
	  "d_ratio(bad_speculation * " RESYNC ", ex_ret_brn_misp + " RESYNC ")", FILE }, \
	{ TD_CAT_BACKEND_BOUND_MEMORY, "backend_bound_by_memory", \
	  "backend_bound * d_ratio(ex_no_retire.load_not_complete, ex_no_retire.not_complete)", FILE }, \
	{ TD_CAT_BACKEND_BOUND_CPU, "backend_bound_by_cpu", \
	  "backend_bound * (1 - d_ratio(ex_no_retire.load_not_complete, ex_no_retire.not_complete))", \
	  FILE }, \
	{ TD_CAT_RETIRING_FASTPATH, "retiring_from_fastpath", \
	  "retiring * (1 - d_ratio(ex_ret_ucode_ops, ex_ret_ops))", FILE }, \
	{ TD_CAT_RETIRING_MICROCODE, "retiring_from_microcode", "retiring * d_ratio(ex_ret_ucode_ops, ex_ret_ops)", \
	  FILE },

static const struct ua_metric zen5_metrics[] = { ZEN5_METRICS(Z5_METRICS, "bp_redirects.resync") };

static const struct uarch zen5 = {
	.id = "amdzen5",
	.name = "AMD Zen 5",
	.vendor = "AuthenticAMD",
	.family = 0x1a,
	/* perf 7.2's x86/mapfile.csv, amdzen5: Zen 6 has the other models
	 * (arch/x86/kernel/cpu/amd.c, bsp_init_amd()). */
	.cpuid_pattern = "AuthenticAMD-26-([12467][[:xdigit:]]|[[:xdigit:]])",
	.pmu = "cpu",
	.formulas = UA_FORMULAS_ZEN,
	.width = 8,
	.width_source = "total_dispatch_slots = 8 * ls_not_halted_cyc, " Z5_METRICS,
	.max_level = 2,
	.n_events = sizeof(zen5_events) / sizeof(zen5_events[0]),
	.events = zen5_events,
	.n_metrics = sizeof(zen5_metrics) / sizeof(zen5_metrics[0]),
	.metrics = zen5_metrics,
	.gp_counters = ZEN_GP_COUNTERS,
	.gp_source = ZEN_GP_SOURCE,
	.watchdog_takes_gp = true,
};

/* ---- Zen 6: family 0x1a, models 0x50-0x5f, 0x80-0xaf, 0xc0-0xef ---- */

/* Zen 5's events and formulas; the resync event is bp_fe_redir.resync
 * (Zen 5's bp_redirects.resync renamed, the same encoding). */
static const struct ua_event zen6_events[] = {
	ZEN_EVENTS(Z6 "load-store.json", Z6 "decode.json", Z6 "execution.json", Z6 "execution.json", 8,
		   "bp_fe_redir.resync", "event=0x9f,umask=0x01", Z6 "branch-prediction.json"),
};

#define Z6_METRICS Z6 "pipeline.json"

static const struct ua_metric zen6_metrics[] = { ZEN5_METRICS(Z6_METRICS, "bp_fe_redir.resync") };

static const struct uarch zen6 = {
	.id = "amdzen6",
	.name = "AMD Zen 6",
	.vendor = "AuthenticAMD",
	.family = 0x1a,
	.cpuid_pattern = "AuthenticAMD-26-[[:xdigit:]]+", /* perf 7.2's x86/mapfile.csv, amdzen6 */
	.pmu = "cpu",
	.formulas = UA_FORMULAS_ZEN,
	.width = 8,
	.width_source = "total_dispatch_slots = 8 * ls_not_halted_cyc, " Z6_METRICS,
	.max_level = 2,
	.n_events = sizeof(zen6_events) / sizeof(zen6_events[0]),
	.events = zen6_events,
	.n_metrics = sizeof(zen6_metrics) / sizeof(zen6_metrics[0]),
	.metrics = zen6_metrics,
	.gp_counters = ZEN_GP_COUNTERS,
	.gp_source = ZEN_GP_SOURCE,
	.watchdog_takes_gp = true,
};

/* In perf's mapfile.csv order: Zen 5's pattern before Zen 6's, which
 * matches every family 0x1A model. */
const struct uarch *const ua_amd[] = { &zen4, &zen5, &zen6 };
const size_t ua_amd_count = sizeof(ua_amd) / sizeof(ua_amd[0]);

/* In x86/mapfile.csv order, which decides: Zen 3's pattern comes before
 * Zen 4's, which would match Zen 3's models too. */
#define NO_PIPELINE "perf has no TopDown (PipelineL1) metrics for it: they need the per-slot dispatch events (PMCx1A0) of Zen 4 and later"

const struct ua_without ua_amd_without[] = {
	{ "AuthenticAMD", NULL, "AuthenticAMD-23-([12][0-9A-F]|[0-9A-F])", "amdzen1", "AMD Zen 1", NO_PIPELINE, NULL },
	{ "AuthenticAMD", NULL, "AuthenticAMD-23-[[:xdigit:]]+", "amdzen2", "AMD Zen 2", NO_PIPELINE, NULL },
	{ "AuthenticAMD", NULL, "AuthenticAMD-25-([245][[:xdigit:]]|[[:xdigit:]])", "amdzen3", "AMD Zen 3", NO_PIPELINE, NULL },
};
const size_t ua_amd_without_count = sizeof(ua_amd_without) / sizeof(ua_amd_without[0]);
