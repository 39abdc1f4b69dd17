/* SPDX-License-Identifier: MIT */
/* plan: what topdownd will monitor, decided from discovery, topology and
 * configuration: per core PMU the microarchitecture, the effective level
 * and model, the events of its groups and its CPUs; which CPUs are not
 * monitored and why.  A pure function; --probe prints it and the
 * collector executes it. */
#ifndef TOPDOWND_PLAN_H
#define TOPDOWND_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "budget.h"
#include "config.h"
#include "cpuset.h"
#include "depth.h"
#include "depth_tables.h"
#include "pmu.h"
#include "topdown.h"
#include "topo.h"
#include "uarch.h"

#define PLAN_REASON_MAX 512
#define PLAN_LEFT_MAX 8192
/* As many groups as events: with one general-purpose counter left by
 * other users each event still counts, in a group of its own. */
#define PLAN_GROUPS_MAX UA_EVENTS_MAX

/* The monitoring of one core PMU. */
struct plan_pmu {
	const struct pmu_core *core;
	const struct uarch *ua;
	unsigned level;            /* effective: 1 or 2 */
	char level_note[PLAN_REASON_MAX]; /* why lower than configured */
	/* Below level 2 ([collect] level 3 to 6): the deepest level of
	 * perf's nodes counted (0: none) and their table; why not deeper. */
	unsigned depth;
	const struct dt_table *depth_table;
	char depth_note[PLAN_REASON_MAX];
	/* The nodes of those levels left out, a line each: "name: why". */
	char depth_left[PLAN_LEFT_MAX];
	/* What depth takes, as planned (the collector makes the same from
	 * the grouping it opens): its nodes and events, the groups they take
	 * turns in, one per interval, on the general-purpose counters the
	 * level-1/2 group leaves (and fixed counter 1 when free). */
	unsigned depth_nodes, depth_events, depth_groups, depth_gp;
	bool depth_fixed1;
	/* Fixed counter 2 free for the reference cycles (not the SMT
	 * split's); the msr PMU's TSC and perf's #has_pmem, for the nodes
	 * that read them. */
	bool depth_fixed2;
	uint32_t depth_msr_type;
	uint64_t depth_msr_tsc;
	bool depth_has_pmem;
	/* [collect] depth_multiplex where the level-1/2 events rotate in
	 * several groups: the depth group joins their rotation, on all the
	 * general-purpose counters, instead of running beside one group. */
	bool depth_multiplex;
	bool drilldown;            /* [collect] drilldown: the bottleneck's subtree only */
	/* Which threads of each core ran when ([collect] smt, collect/smt.c):
	 * whether its CPUs count it, in the level-1/2 groups' rotation or
	 * beside their one group; the events' encodings (ua->smt's, then the
	 * msr PMU's TSC) and why not. */
	bool smt, smt_multiplex;
	uint32_t smt_msr_type;
	uint64_t smt_config[UA_SMT_EVENTS + 1][3];
	char smt_note[PLAN_REASON_MAX];
	/* perf's SMT mode metrics (ua->smt_mode, collect/smtmode.c), from
	 * the level-1 group's own counts: whether its CPUs give them. */
	bool smt_mode;
	enum config_model model;   /* requested; the collector may fall back */
	char model_note[PLAN_REASON_MAX]; /* why model perf was not possible */
	/* Events of the group, as indexes into ua->events, leader first.
	 * The first n_core are needed in any model; the refinement events
	 * of model perf follow. */
	unsigned n_events, n_core;
	uint8_t events[UA_EVENTS_MAX];
	/* Groups: group g holds events[group_start[g] .. group_start[g+1]),
	 * its first event the leader. */
	unsigned n_groups;
	uint8_t group_start[PLAN_GROUPS_MAX + 1];
	td_catset cats;            /* the categories it yields */
	struct cpuset monitor;     /* selected CPUs it covers */
	/* How SMT threads are counted (Skylake family: which clock and
	 * recovery events, perf's #SMT_on and #core_wide). */
	enum ua_mode mode;
	/* A CPU's figures are its share of its core (SMT on, AnyThread or
	 * perf's per-thread estimate of the core's clocks). */
	bool core_share;
	/* The events before packing (needed ones first, then refinement):
	 * what plan_pack() took. */
	uint8_t order[UA_EVENTS_MAX];
	bool fixed1_busy;          /* fixed counter 1 held by someone else */
	unsigned gp_available;     /* general-purpose counters per CPU */
	/* The PMU's general-purpose counters per CPU as group validation
	 * takes them (other users' pinned events aside), and the largest
	 * group the kernel accepted (0: no limit seen): what a CPU's own
	 * probe of what is free starts from (collect/share.c). */
	unsigned gp_total, group_max;
	char gp_source[BUDGET_SOURCE_MAX]; /* how gp_available was found */
	unsigned gp_needed;        /* general-purpose counters the events take */
	bool watchdog;             /* the NMI watchdog holds a counter (fixed 1, or a
				    * general-purpose one: ua->watchdog_takes_gp) */
	char group_note[PLAN_REASON_MAX]; /* why the events rotate, or "" */
};

struct plan {
	bool usable;              /* TopDown can be collected on some CPU */
	char reason[PLAN_REASON_MAX]; /* why not usable */
	unsigned level;           /* the highest effective level: 0, 1 or 2 */
	td_catset cats;           /* every category some CPU yields */
	unsigned n_pmus;
	struct plan_pmu pmu[PMU_CORE_MAX];

	struct cpuset selected;     /* configured CPUs that exist */
	/* isolcpus or nohz_full CPUs [collect] cpus does not list by number
	 * (cpus = all): not read, so that their latency-critical tenants
	 * pay for no IPI (not in selected). */
	struct cpuset isolated;
	struct cpuset monitor;      /* selected and covered by a monitored PMU */
	struct cpuset unsupported;  /* selected but not covered */
	/* Selected CPUs no hybrid PMU listed in its cpus at discovery: the
	 * kernel leaves offline CPUs out (intel_pmu_cpu_dead), so these wait
	 * for a PMU to list them (not unsupported). */
	struct cpuset unlisted;
	char unsupported_reason[PMU_REASON_MAX];
	struct cpuset nonexistent;  /* configured but not possible */
};

/* @budget may be NULL (or not known): perf's tables give the counters. */
void plan_make(const struct pmu_info *pmu, const struct topo *topo,
	       const struct config *cfg, const struct budget *budget, struct plan *plan);

/* Splits @n events of @ua (indexes into ua->events; the first @n_core
 * needed in any model, the refinement events after them) into groups
 * that fit @gp general-purpose counters and the fixed counters (fixed
 * counter 1 not when @fixed1_busy), honouring each event's counter list
 * for SMT @mode, first fit in order, so that level 1
 * stays in the first group whenever it fits.  The kernel's PERF_METRICS
 * events all go to the first group, slots leading.  Refinement events
 * only go to the last group holding other events or later ones, after
 * those: dropping them keeps the other groups whole.  Writes the events
 * in group order to @out and the groups' starts to @group_start; returns
 * the number of groups, or -ENOSPC when an event fits no group (no
 * general-purpose counter for it) or more than PLAN_GROUPS_MAX are
 * needed. */
int plan_pack(const struct uarch *ua, const uint8_t *events, unsigned n, unsigned n_core,
	      unsigned gp, bool fixed1_busy, enum ua_mode mode, uint8_t *out, uint8_t *group_start);

/* One grouping of a plan's events for one CPU: the plan's own, or a
 * smaller one where another user holds counters of that CPU (the
 * collector learns them per CPU), or the fixed counters' alone. */
struct plan_layout {
	unsigned n_events;
	uint8_t events[UA_EVENTS_MAX];   /* indexes into ua->events, group order */
	unsigned n_groups;
	uint8_t group_start[PLAN_GROUPS_MAX + 1];
};

/* Packs @pp's events for a CPU with @gp general-purpose counters free
 * (fixed counter 1 not when @fixed1_busy): its needed events, and with
 * @refine the refinement events after them.  With @fixed_only, the
 * needed events alone on the fixed counters (none may need a
 * general-purpose counter: -ENOSPC otherwise, see plan_fixed_only).
 * -ENOSPC when the events cannot be grouped so. */
int plan_layout(const struct plan_pmu *pp, unsigned gp, bool fixed1_busy, bool fixed_only, bool refine,
		struct plan_layout *out);

/* Whether @pp's needed events all count on fixed counters (PERF_METRICS'
 * slots and metric events): then a CPU that gives its general-purpose
 * counters back to another user keeps the plan's categories, without
 * refinement (model hardware). */
bool plan_fixed_only(const struct plan_pmu *pp);

/* What depth on @pp reads of the machine (perf's #SMT_on, #core_wide,
 * #has_pmem, the msr PMU) into @main, and the fixed counters it may take
 * (DEPTH_FIXED(k) mask) where the level-1/2 events take those of @taken:
 * one rule for --probe's plan and the collector's groups. */
unsigned plan_depth_main(const struct plan_pmu *pp, unsigned taken, struct depth_main *main);

/* The plan of the PMU monitoring @cpu, or NULL. */
const struct plan_pmu *plan_pmu_of(const struct plan *plan, unsigned cpu);

/* Categories @ua yields at @level. */
td_catset plan_cats(const struct uarch *ua, unsigned level);

#endif
