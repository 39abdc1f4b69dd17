/* SPDX-License-Identifier: MIT */
/* collector: the per-CPU perf groups and the interval reads.
 *
 * Opens the groups of every monitored CPU as the plan of its core PMU
 * says (for PERF_METRICS parts one slots-led group: metric events and, in
 * model perf, the refinement events), reads each group once per interval,
 * turns deltas into slot counters with the tma module, and keeps every
 * failure confined to its CPU: permission, unsupported, offline (reopened
 * when the CPU returns), fd limits, interrupted and short reads.  Writes
 * each CPU's figures into the snapshots for the readers.  Single-threaded;
 * no heap allocation per interval. */
#ifndef TOPDOWND_COLLECTOR_H
#define TOPDOWND_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"
#include "pmu.h"
#include "snapshot.h"
#include "tma.h"
#include "sysfs.h"
#include "topo.h"

struct collector_params {
	const struct sysfs *sysfs;
	struct topo *topo;          /* refreshed by the collector on hotplug */
	const struct pmu_info *pmu;
	const struct plan *plan;
	bool count_kernel;
	bool count_guest;           /* exclude_guest 0: a KVM host's guests count too */
	enum config_sharing sharing; /* [collect] pmu_sharing (collect/share.c) */
	bool oneshot;               /* --once, --watch: nothing is retried later */
	uint64_t interval_ns;
	/* Descriptors for everything but the perf groups (HTTP connections,
	 * the daemon's own): what it would like, and what it must keep even
	 * when RLIMIT_NOFILE cannot be raised far enough for every CPU. */
	unsigned fd_others_want, fd_others_min;
};

struct collector;

int collector_new(const struct collector_params *params, struct collector **ret);
/* Closes every group. */
void collector_free(struct collector *c);

/* Raises RLIMIT_NOFILE and opens the groups, falling back to model
 * hardware on a core PMU whose refinement events are refused.  When the
 * limit cannot be raised enough, opens as many groups as leave
 * fd_others_min descriptors free, says so once with the numbers, and
 * marks the other CPUs failed.  Per-CPU failures are logged and recorded,
 * not returned: returns 0 or -ENOMEM. */
int collector_start(struct collector *c);
/* --probe's proof: probes what other users leave every online CPU (into
 * @avail: a line per core PMU), then on one online CPU of each core PMU
 * with TopDown opens the group the daemon would open, reads it once and
 * closes it (with the same fallback to model hardware).  0, or -errno
 * with @why saying what failed and what to do; @done lists what counted
 * ("cpu on CPU 0"). */
int collector_probe(struct collector *c, char *done, size_t donelen, char *avail, size_t availlen,
		    char *why, size_t whylen);

/* Descriptors the perf groups hold now. */
unsigned collector_fds(const struct collector *c);

/* Takes a new plan (SIGHUP): groups whose composition does not change stay
 * open; CPUs no longer selected keep their totals, so cores, packages and
 * the host never decrease.  @plan must outlive the collector. */
int collector_reload(struct collector *c, const struct plan *plan, bool count_kernel,
		     bool count_guest, uint64_t interval_ns, enum config_sharing sharing);

/* Evidence against the plan the collector was given (budget.h): a group
 * the kernel refused as too big, or one that never runs because another
 * user holds counters.  Its PMU's CPUs wait (failed) for the plan the
 * caller makes from the budget that learned it (collector_reload); one per
 * PMU at a time.  Returns false when there is none. */
bool collector_take_evidence(struct collector *c, struct budget_evidence *ev);
/* The budget could not give anything up for the evidence of core PMU
 * @core_idx: its waiting CPUs fail for good, as the kernel answered. */
void collector_give_up(struct collector *c, unsigned core_idx, uint64_t now, const char *why);

/* Reads every group once and writes the interval into @snap (whose arrays
 * hold at least collector_capacity() entries): each CPU's totals continue
 * those of the snapshot the collector wrote before, which must still be
 * intact (the ring's current one).  Cores, packages and the host are left
 * for readers to sum.  @now_ns is CLOCK_MONOTONIC. */
void collector_collect(struct collector *c, uint64_t now_ns, struct snapshot *snap);

/* Writes the current state into @snap without reading (after a reload):
 * the same totals and last interval as the snapshot written before. */
void collector_fill(struct collector *c, struct snapshot *snap);
unsigned collector_capacity(const struct collector *c);
/* Packages in the current layout. */
unsigned collector_packages(const struct collector *c);

/* For per-cgroup attribution (cgattr).  Possible CPU @i (below
 * collector_cpus(), in CPU order; CPU numbers may have holes): its number,
 * the descriptors of its events in its PMU's plan order (the count is
 * returned; 0 when none is open), its PMU (into collector_pmu_arith, -1
 * when none) and how many times its groups were opened (so a reopen is
 * noticed). */
unsigned collector_cpu_events(const struct collector *c, unsigned i, int *cpu, const int **fds,
			      int *pmu, uint64_t *opened);
/* PMU @pmu's arithmetic: its model and each event position's formula
 * variable; returns its events. */
unsigned collector_pmu_arith(const struct collector *c, unsigned pmu, const struct tma_model **model,
			     const enum td_event **var);
/* The name of the event at @pos of @pmu's plan (perf's), for logs. */
const char *collector_pmu_event_name(const struct collector *c, unsigned pmu, unsigned pos);
unsigned collector_pmus(const struct collector *c);
/* Possible CPUs (collector_cpu_events' indexes). */
unsigned collector_cpus(const struct collector *c);

bool collector_up(const struct collector *c);
/* "perf" or "hardware": the model in effect on the first monitored core
 * PMU after any fallback; "" when nothing is monitored. */
const char *collector_model(const struct collector *c);
unsigned collector_count(const struct collector *c, enum cpu_state state);

#endif
