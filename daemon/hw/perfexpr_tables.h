/* SPDX-License-Identifier: MIT */
/* perfexpr_tables: perf's level-1 and level-2 metrics and every metric
 * they read, per metrics file of perf's tables (reference/), verbatim:
 * what --compare-perf evaluates on perf's counts where the installed perf
 * does not know the model (hw/perfexpr.h).  perfexpr_tables.c is written
 * by build-aux/gen-perfexpr and checked by make lint; nothing in it is
 * typed. */
#ifndef TOPDOWND_PERFEXPR_TABLES_H
#define TOPDOWND_PERFEXPR_TABLES_H

struct px_metric {
	const char *name;  /* perf's: "tma_frontend_bound" */
	const char *unit;  /* its core type on a hybrid part ("cpu_core"), or NULL */
	const char *scale; /* its ScaleUnit ("100%", "1percent of slots"), or NULL */
	const char *expr;  /* its MetricExpr */
};

struct px_file {
	const char *file;  /* under reference/, as ua_metric.table names it */
	const struct px_metric *metrics;
	unsigned n;
};

extern const struct px_file perfexpr_files[];
extern const unsigned perfexpr_files_count;

#endif
