/* SPDX-License-Identifier: MIT */
/* cgattr: per-cgroup TopDown.  Wires the collector's per-CPU groups into
 * the BPF program (cgbpf), keeps the tracked cgroups' buckets in step with
 * discovery (cgroups), and every interval flushes each CPU, turns each
 * bucket's counts into slots per category with the same arithmetic as a
 * CPU's (tma), and guards the program's cost: past the budget it stops
 * attributing and says why; the per-host figures never depend on it. */
#ifndef TOPDOWND_CGATTR_H
#define TOPDOWND_CGATTR_H

#include <stdint.h>

#include "cgacct.h"
#include "collector.h"
#include "snapshot.h"
#include "topdown.h"

struct cgattr_params {
	const char *root;           /* the cgroup v2 mount */
	const char *const *globs;
	unsigned n_globs;
	unsigned cap;               /* tracked cgroups */
	unsigned level;             /* 1, or 2 for level 2 too */
	double budget;              /* the program's share of each CPU it may use */
	bool sched_switch;          /* run on every context switch, not cgroup-switches */
	struct collector *collector;
	td_catset cats;             /* the plan's */
};

struct cgattr;

/* Never fails for want of BPF, permission or cgroup v2: the bucket table
 * is empty and snap->cg.reason says why (and the fix).  -ENOMEM only. */
int cgattr_new(const struct cgattr_params *p, struct cgattr **ret);
void cgattr_free(struct cgattr *a);
/* Why it is not attributing ("" when it is). */
const char *cgattr_reason(const struct cgattr *a);

/* "cgroup-switches" or "sched_switch" once attached, else "". */
const char *cgattr_trigger(const struct cgattr *a);

/* One interval, after collector_collect(): @now_ns is CLOCK_MONOTONIC. */
void cgattr_collect(struct cgattr *a, uint64_t now_ns, struct snapshot *snap);
/* The state and totals so far, without reading. */
void cgattr_fill(const struct cgattr *a, struct snapshot *snap);

/* One bucket's counts on the CPUs of one core PMU over a period (@delta:
 * the sums of their deltas, per event position): its slots and each
 * category's slots, with the arithmetic of a CPU's read (multiplexing
 * scaling, then tma_compute with the PMU's model).  Pure. */
void cgattr_compute(const struct tma_model *model, const enum td_event *var, unsigned n_events,
		    const struct cga_bucket *delta, double *slots, double frac_slots[TD_CAT_COUNT]);

/* The guard's test, pure: the program's share of each CPU over a window
 * (@run_ns of run time on @n_cpus CPUs in @window_ns). */
double cgattr_cost(uint64_t run_ns, uint64_t window_ns, unsigned n_cpus);

#endif
