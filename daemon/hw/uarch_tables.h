/* SPDX-License-Identifier: MIT */
/* uarch_tables: the per-vendor tables behind uarch.c (private to the
 * uarch module). */
#ifndef TOPDOWND_UARCH_TABLES_H
#define TOPDOWND_UARCH_TABLES_H

#include <stddef.h>

#include "uarch.h"

/* A perf-table event: perf's name, its encoding, the table file, the
 * table's Counter field (NULL where the table gives none) and the TopDown
 * level it is counted from. */
#define UA_EV(var_, name_, terms_, table_, counter_, level_)                              \
	{ .var = (var_), .name = (name_), .terms = (terms_), .table = (table_),          \
	  .counter = (counter_), .level = (level_) }
/* The SMT activity events of a model (struct ua_smt): REF_TSC on fixed
 * counter 2, ONE_THREAD_ACTIVE and REF_DISTRIBUTED (Ice Lake on) as
 * perf's tables encode them, each table's Counter (NULL where it gives
 * none), and perf's metric verbatim. */
#define UA_SMT_EV(name_, terms_, table_, counter_) \
	{ .name = (name_), .terms = (terms_), .table = (table_), .counter = (counter_) }
#define UA_SMT_DIST(pipe_, gp_, fixed2_, metric_, expr_, metrics_)                                 \
	{ .any = UA_SMT_DISTRIBUTED,                                                                  \
	  .events = { UA_SMT_EV("CPU_CLK_UNHALTED.REF_TSC", "umask=0x3", pipe_, fixed2_),              \
		      UA_SMT_EV("CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", "event=0x3c,umask=0x2", pipe_, gp_), \
		      UA_SMT_EV("CPU_CLK_UNHALTED.REF_DISTRIBUTED", "event=0x3c,umask=0x8", pipe_, gp_) }, \
	  .metric = (metric_), .expr = (expr_), .table = (metrics_) }
/* The tables' most common Counter fields. */
#define GP4 "0,1,2,3"
#define GP8 "0,1,2,3,4,5,6,7"

/* uarch_intel.c: P-cores with PERF_METRICS (Ice Lake and later) */
extern const struct uarch *const ua_intel[];
extern const size_t ua_intel_count;
extern const struct uarch ua_intel_metrics_only;
extern const struct uarch ua_intel_arch_events;
/* ... and their entries for guests without PERF_METRICS (uarch.h guest_alt) */
extern const struct uarch *const ua_intel_guest[];
extern const size_t ua_intel_guest_count;
/* ... and the models perf has events but no TopDown metrics for, counted
 * with what the kernel exposes (uarch.h ua_lookup_no_reference) */
extern const struct ua_without ua_intel_no_reference[];
extern const size_t ua_intel_no_reference_count;
/* uarch_skl.c: Skylake to Cascade Lake */
extern const struct uarch *const ua_skl[];
extern const size_t ua_skl_count;
/* uarch_atom.c: E-cores */
extern const struct uarch *const ua_atom[];
extern const size_t ua_atom_count;

/* uarch_amd.c: AMD Zen 4 and later, and the Zen parts without TopDown */
extern const struct uarch *const ua_amd[];
extern const size_t ua_amd_count;
extern const struct ua_without ua_amd_without[];
extern const size_t ua_amd_without_count;

/* uarch_arm.c: Arm Neoverse */
extern const struct uarch *const ua_arm[];
extern const size_t ua_arm_count;
extern const struct ua_without ua_arm_without[];
extern const size_t ua_arm_without_count;
extern const struct ua_arm_slots ua_arm_slots_published[];
extern const size_t ua_arm_slots_published_count;

#endif
