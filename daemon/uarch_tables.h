/* SPDX-License-Identifier: MIT */
/* uarch_tables: the per-vendor tables behind uarch.c (private to the
 * uarch module). */
#ifndef TOPDOWND_UARCH_TABLES_H
#define TOPDOWND_UARCH_TABLES_H

#include <stddef.h>

#include "uarch.h"

extern const struct uarch *const ua_intel[];
extern const size_t ua_intel_count;
extern const struct uarch ua_intel_metrics_only;

#endif
