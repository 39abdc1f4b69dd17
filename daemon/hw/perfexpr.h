/* SPDX-License-Identifier: MIT */
/* perfexpr: perf's expressions of one core PMU's TopDown categories,
 * evaluated on counts perf prints of the events they read: what
 * --compare-perf computes where the installed perf does not know the
 * model (it has no metrics for it), so that perf still counts and perf's
 * expressions, not topdownd's formulas (tma.c), give the values compared.
 *
 * Each category's expression is its ua_metric's, verbatim; the metrics it
 * reads come from perf's same files (perfexpr_tables.c), the events by
 * their names in the microarchitecture's table (ua->events: perf's name
 * and encoding), perf's literals (#slots, #SMT_on, #core_wide) and
 * strcmp_cpuid_str() from the machine (@env).  The value of a category is
 * perf's printed value over its ScaleUnit ("100%": the expression is a
 * fraction; "1percent of slots": a percentage), as a fraction; NaN where
 * perf has none (a division by 0).  Pure. */
#ifndef TOPDOWND_PERFEXPR_H
#define TOPDOWND_PERFEXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "topdown.h"
#include "uarch.h"

#define PERFEXPR_EVENTS_MAX 32

struct perfexpr;

/* What perf's literals and functions read on this machine. */
struct perfexpr_env {
	bool smt_on;     /* #SMT_on: devices/system/cpu/smt/active */
	bool core_wide;  /* #core_wide: every thread of each core counted (perf stat -a) */
	unsigned slots;  /* #slots (arm64: caps/slots or Arm's published width), 0: none */
	bool have_midr;  /* arm64: strcmp_cpuid_str() compares @midr */
	unsigned long long midr;
};

/* Compiles the expressions of @ua's categories in @cats.  0 and *@ret, or
 * -ENOENT / -EINVAL / -E2BIG with why in @why (the metric and the name it
 * cannot resolve), or -ENOMEM. */
int perfexpr_new(const struct uarch *ua, td_catset cats, const struct perfexpr_env *env, struct perfexpr **ret,
		 char *why, size_t whylen);
void perfexpr_free(struct perfexpr *x);

/* The events perf is to count, in the order perfexpr_eval() takes their
 * counts. */
unsigned perfexpr_n_events(const struct perfexpr *x);
const struct ua_event *perfexpr_event(const struct perfexpr *x, unsigned i);

/* The categories compiled (those of @cats that have a metric). */
td_catset perfexpr_cats(const struct perfexpr *x);

/* Each category's value for @counts (perfexpr_event(i)'s count at i) into
 * @frac, indexed by enum td_cat: a fraction, NaN where perf has none; the
 * categories not compiled are NaN. */
void perfexpr_eval(const struct perfexpr *x, const double *counts, double *frac);

/* Whether @a (an expression's event name, perf's escapes removed:
 * "cpu@INT_MISC.RECOVERY_CYCLES,cmask=1,edge@") names the event @b (a
 * table's: "INT_MISC.RECOVERY_CYCLES,cmask=1,edge=1"): the same event
 * (without case; slots and TOPDOWN.SLOTS are one) with the same terms in
 * any order, a bare term being 1. */
bool perfexpr_same_event(const char *a, const char *b);

#endif
