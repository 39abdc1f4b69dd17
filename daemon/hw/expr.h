/* SPDX-License-Identifier: MIT */
/* expr: Linux perf's metric expressions (the MetricExpr of its tables),
 * compiled once and evaluated every interval.  The language is perf's
 * (tools/perf/util/expr.l and expr.y): numbers (1e9 too), event names
 * with perf's escapes (topdown\-fe\-bound, cpu@INT_MISC.RECOVERY_CYCLES\,
 * cmask\=1\,edge@), literals (#slots, #SMT_on), + - * / %, < > <= >= ==,
 * | ^ & on the values cast to long, unary -, "A if COND else B" (the
 * loosest), min, max, d_ratio, source_count, has_event and
 * strcmp_cpuid_str.  Names, literals and the three functions of a name
 * are resolved at compile time by the caller, which numbers the
 * variables.
 *
 * Evaluation is perf's: every subexpression is evaluated (bison runs each
 * rule's action as it reduces it, both branches of an "if" included), a
 * division or modulo by 0 anywhere makes the whole expression valueless
 * (perf aborts the parse: NaN here), a NaN variable (a metric the
 * expression refers to that had no value) flows through arithmetic and
 * comparisons, min and max are C's "a < b ? a : b", a condition is true
 * unless it is exactly 0, d_ratio(a, 0) is 0.  Pure: no I/O, and no
 * allocation after compilation. */
#ifndef TOPDOWND_EXPR_H
#define TOPDOWND_EXPR_H

#include <stddef.h>

struct expr;

/* What a name of an expression is.  Each callback gets the name with
 * perf's escapes removed ("cpu@INT_MISC.RECOVERY_CYCLES,cmask=1,edge@"),
 * returns 0 with its answer or a negative errno (the expression then does
 * not compile, naming it). */
struct expr_names {
	/* An event or another metric: its variable index. */
	int (*variable)(void *arg, const char *name, unsigned *index);
	/* A literal ("#slots", "#SMT_on"): its value. */
	int (*literal)(void *arg, const char *name, double *value);
	/* source_count(name), has_event(name), strcmp_cpuid_str(name): their
	 * value, which does not change while the expression is used. */
	int (*function)(void *arg, const char *function, const char *name, double *value);
	void *arg;
};

/* Limits: longer or deeper text is refused, not truncated. */
#define EXPR_TEXT_MAX 8192
#define EXPR_NAME_MAX 256
#define EXPR_DEPTH_MAX 64

/* Compiles @text: 0 and *@ret (free with expr_free), or -EINVAL with a
 * message in @err (where, and what was expected), -ENOMEM, or a
 * callback's error. */
int expr_compile(const char *text, const struct expr_names *names, struct expr **ret, char *err,
		 size_t errlen);

/* The value for the variables @vars (indexed as the callback numbered
 * them); NaN when the expression has none (a division by zero). */
double expr_eval(const struct expr *e, const double *vars);

/* The largest variable index the expression reads, plus one (0: none). */
unsigned expr_variables(const struct expr *e);

void expr_free(struct expr *e);

#endif
