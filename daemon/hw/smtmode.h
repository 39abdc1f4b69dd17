/* SPDX-License-Identifier: MIT */
/* smtmode: perf's SMT mode metrics of a core whose CPU_SLOT tells its
 * mode (ua->smt_mode: NVIDIA Olympus), evaluated as perf evaluates them
 * on one entity's counts of CPU_SLOT and CPU_CYCLES (a CPU's, or a core's,
 * package's, host's summed, as perf's --per-core, --per-socket and -a
 * sum counts).  The expressions are the table's, verbatim, compiled once
 * by hw/expr.  Pure. */
#ifndef TOPDOWND_SMTMODE_H
#define TOPDOWND_SMTMODE_H

#include <stddef.h>

#include "uarch.h"

struct smtmode;

/* Compiles @m's metrics: 0 and *@ret, or -EINVAL with why in @err (the
 * metric and the name it cannot resolve), or -ENOMEM. */
int smtmode_new(const struct ua_smt_mode *m, struct smtmode **ret, char *err, size_t errlen);
void smtmode_free(struct smtmode *x);

/* The three metrics (UA_SMT_MODE_FRACTION: a fraction of the cycles;
 * _ST, _SMT: cycles) for @slots and @cycles; NaN where perf has none (no
 * cycles: a division by zero). */
void smtmode_eval(const struct smtmode *x, double slots, double cycles, double out[UA_SMT_MODE_METRICS]);

#endif
