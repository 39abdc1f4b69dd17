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

#include "config.h"
#include "cpuset.h"
#include "pmu.h"
#include "topdown.h"
#include "topo.h"
#include "uarch.h"

#define PLAN_REASON_MAX 512
#define PLAN_GROUPS_MAX 4

/* The monitoring of one core PMU. */
struct plan_pmu {
	const struct pmu_core *core;
	const struct uarch *ua;
	unsigned level;            /* effective: 1 or 2 */
	char level_note[PLAN_REASON_MAX]; /* why lower than configured */
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
};

struct plan {
	bool usable;              /* TopDown can be collected on some CPU */
	char reason[PLAN_REASON_MAX]; /* why not usable */
	unsigned level;           /* the highest effective level: 0, 1 or 2 */
	td_catset cats;           /* every category some CPU yields */
	unsigned n_pmus;
	struct plan_pmu pmu[PMU_CORE_MAX];

	struct cpuset selected;     /* configured CPUs that exist */
	struct cpuset monitor;      /* selected and covered by a monitored PMU */
	struct cpuset unsupported;  /* selected but not covered */
	char unsupported_reason[PMU_REASON_MAX];
	struct cpuset nonexistent;  /* configured but not possible */
};

void plan_make(const struct pmu_info *pmu, const struct topo *topo,
	       const struct config *cfg, struct plan *plan);

/* The plan of the PMU monitoring @cpu, or NULL. */
const struct plan_pmu *plan_pmu_of(const struct plan *plan, unsigned cpu);

/* Categories @ua yields at @level. */
td_catset plan_cats(const struct uarch *ua, unsigned level);

#endif
