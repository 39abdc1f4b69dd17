/* SPDX-License-Identifier: MIT */
/* uarch_tables: the per-vendor tables behind uarch.c (private to the
 * uarch module). */
#ifndef TOPDOWND_UARCH_TABLES_H
#define TOPDOWND_UARCH_TABLES_H

#include <stddef.h>

#include "uarch.h"

/* uarch_intel.c: P-cores with PERF_METRICS (Ice Lake and later) */
extern const struct uarch *const ua_intel[];
extern const size_t ua_intel_count;
extern const struct uarch ua_intel_metrics_only;
extern const struct uarch ua_intel_arch_events;
/* ... and their entries for guests without PERF_METRICS (uarch.h guest_alt) */
extern const struct uarch *const ua_intel_guest[];
extern const size_t ua_intel_guest_count;
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
