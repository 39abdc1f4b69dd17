/* SPDX-License-Identifier: MIT */
/* collector_internal: the collector's state, shared by its files (private
 * to collect/): collector.c (groups, plans, reads, the snapshot) and
 * aggregate.c (cores, packages and the host from the CPUs' counts). */
#ifndef TOPDOWND_COLLECTOR_INTERNAL_H
#define TOPDOWND_COLLECTOR_INTERNAL_H

#include "collector.h"
#include "tma.h"

struct ccpu {
	int cpu;
	enum cpu_state state;
	bool selected; /* in [collect] cpus; others keep their totals only */
	bool known;
	int core_idx, pkg_idx;
	int pmu;       /* into collector.pmus, -1 when no monitored PMU covers it */
	int fd[UA_EVENTS_MAX]; /* in group order, -1 when closed */
	uint64_t id[UA_EVENTS_MAX];
	uint64_t prev[UA_EVENTS_MAX];
	uint64_t prev_enabled[PLAN_GROUPS_MAX], prev_running[PLAN_GROUPS_MAX];
	/* The start of the collection that last read each group (read_group). */
	uint64_t read_at[PLAN_GROUPS_MAX];
	uint64_t retry_at_ns;
	uint64_t backoff_ns;    /* the next retry's wait after a transient error */
	unsigned read_failures; /* in a row */
	uint64_t opened; /* successful opens of its groups */
	/* Per group: enabled time and reads in a row in which it did not run
	 * (another user holds what it needs; budget_evidence). */
	uint64_t norun_ns[PLAN_GROUPS_MAX];
	unsigned norun_reads[PLAN_GROUPS_MAX];
	/* Enabled time and intervals in a row in which its PMU's work event
	 * counted nothing while its cycles counted (silent_work). */
	uint64_t silent_ns;
	unsigned silent_reads;
};

/* The groups opened on the CPUs of one core PMU, after any fallback to
 * model hardware. */
struct cpmu {
	const struct plan_pmu *pp;
	unsigned n_events;
	uint8_t events[UA_EVENTS_MAX];       /* indexes into ua->events */
	enum td_event var[UA_EVENTS_MAX];    /* the variable of each position */
	unsigned n_groups;
	uint8_t group_start[PLAN_GROUPS_MAX + 1];
	struct tma_model model;
	/* The counter columns its categories use (snapshot.h). */
	struct snap_cols cols;
	/* The formula variables of one CPU's read: only this PMU's are ever
	 * written (each read overwrites all of them), the others stay 0. */
	struct tma_input input;
	char reason[SNAP_REASON];
	unsigned core_idx;    /* into pmu_info.core[] */
	struct cpuset covered; /* CPUs its sysfs cpus lists now (hybrid) */
	/* Evidence against the plan, for the budget (collector_take_evidence);
	 * while one is pending the PMU's CPUs wait for the new plan. */
	bool evidence_pending, evidence_taken;
	bool fresh;           /* groups of a new plan, not yet seen to run */
	/* The position of the cycles, -1 when the plan has none; once an event
	 * that counts work (counts_work) is found counting nothing while
	 * cycles count, the PMU's figures are not served (silent). */
	int cycles_pos;
	bool silent;
	/* CPU intervals whose figures departed from perf's (tma.h). */
	uint64_t departures[TMA_DEP_COUNT];
	/* No smaller plan runs (collector_give_up): the reason says so until
	 * a CPU's groups all run again. */
	bool gave_up;
	struct budget_evidence evidence;
	/* What the plan asked for: a reload only reopens groups if it changes. */
	unsigned planned_n_events;
	uint8_t planned_events[UA_EVENTS_MAX];
	uint8_t planned_group_start[PLAN_GROUPS_MAX + 1];
	unsigned planned_n_groups;
};

struct layout_core {
	int package, die, core_id;
};

struct collector {
	const struct sysfs *sysfs;
	struct topo *topo;
	const struct pmu_info *pmu;
	const struct plan *plan;
	bool count_kernel;
	bool count_guest;
	bool oneshot;
	uint64_t interval_ns;
	unsigned fd_others_want, fd_others_min;
	unsigned fd_budget; /* descriptors the groups may hold */
	unsigned fds_open;

	unsigned n_pmus;
	struct cpmu pmus[PMU_CORE_MAX];

	unsigned n_cpus;
	struct ccpu *cpus;
	unsigned n_cores, n_pkgs;
	struct layout_core *cores;
	int *pkgs; /* package ids */
	uint64_t layout;
	/* This interval's scaled counts summed over each domain's CPUs, by
	 * PMU, domain row and event position, and which rows hold any: a
	 * core's, package's and the host's figures are perf's expressions on
	 * them (aggregate). */
	double *agg;
	bool *agg_used;
	unsigned agg_doms;

	uint64_t errors[COLL_ERR_COUNT];
	/* The snapshot written last, whose totals the next one continues, and
	 * the generation of the CPU descriptions a snapshot must hold (bumped
	 * by any change of topology, state, selection or categories). */
	const struct snapshot *prev;
	uint64_t gen;
	struct snap_cols base_cols; /* a CPU without a PMU: slots and times */
	unsigned n_waiting; /* CPUs offline or failed, worth retrying */
	bool warned_permission, warned_fds;
	double duration_s;
	double timestamp;
	uint64_t collected_ns; /* monotonic, at the end of the last collection */
	uint64_t started_ns;   /* monotonic, at the start of the last collection */
	double last_interval_s;
	uint64_t seq;

	uint64_t *buf;
	size_t buf_words;
};

enum agg_mode {
	AGG_INTERVAL,  /* a collection: perf's figures on this interval's sums */
	AGG_REPUBLISH, /* no reads: the last interval's figures stay */
	AGG_CATCH_UP,  /* no reads, new CPU descriptions: no last interval */
};

/* Adds @cc's scaled counts of this interval to its core's, package's and
 * the host's rows (aggregate.c). */
void coll_agg_add(struct collector *c, const struct ccpu *cc);

/* Every core's, package's and the host's counts and figures of @snap
 * (aggregate.c). */
void coll_aggregate(struct collector *c, struct snapshot *snap, enum agg_mode mode);

#endif
