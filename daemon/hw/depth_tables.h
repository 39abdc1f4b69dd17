/* SPDX-License-Identifier: MIT */
/* depth_tables: the TopDown tree below level 2 as Linux perf's tables
 * define it (issue 42), per microarchitecture: its nodes with their
 * level, parent and expression, the other metrics those expressions read,
 * and every event they read with perf's encoding.  depth_tables.c is
 * written by build-aux/gen-depth from reference/ (its comment says how)
 * and checked by make lint; nothing in it is typed. */
#ifndef TOPDOWND_DEPTH_TABLES_H
#define TOPDOWND_DEPTH_TABLES_H

/* A node: a metric of TopdownL3 or deeper. */
struct dt_node {
	const char *name;   /* perf's: "tma_l1_bound" */
	unsigned level;     /* 3 ... 6 */
	const char *parent; /* the node (or level-2 category) above: "tma_memory_bound" */
	double scale;       /* its ScaleUnit over 100%: 0.01 for "1%" (the
			     * expression is a percentage); its value is
			     * expr times this */
	const char *expr;   /* its MetricExpr, verbatim */
	const char *brief;  /* its BriefDescription */
	const char *unsure; /* NULL, or why it is left out: perf's tables for
			     * another model topdownd cannot tell from this one
			     * disagree on it (build-aux/gen-depth's TWINS) */
};

/* Another metric a node's expression reads (CLKS, tma_retiring, ...). */
struct dt_metric {
	const char *name;
	const char *expr;
};

/* An event an expression reads, by the name the expression gives it
 * (perf's escapes removed): its terms as perf encodes it and the
 * general-purpose counters it may use (the table's Counter), the file it
 * comes from; terms NULL for the kernel's events the level-1/2 group
 * counts (TOPDOWN.SLOTS, topdown-*), and for what is not a core event
 * (msr@tsc@, duration_time: the file is then the reason). */
struct dt_event {
	const char *name;
	const char *terms;
	const char *counter;
	const char *file;
	/* A retire latency (perf's EVENT:R): the event's RetirementLatencyMean
	 * as its file writes it, which perf stat reads when it does not
	 * sample it (--record-tpebs); NULL for every other event. */
	const char *retire_latency;
};

struct dt_table {
	const char *uarch;  /* uarch.id it serves */
	const char *unit;   /* on a hybrid part the core PMU it serves (cpu_core), or NULL */
	const char *source; /* the metrics file, under reference/ */
	const struct dt_node *nodes;
	unsigned n_nodes;
	const struct dt_metric *helpers;
	unsigned n_helpers;
	const struct dt_event *events;
	unsigned n_events;
};

extern const struct dt_table depth_tables[];
extern const unsigned depth_tables_count;

#endif
