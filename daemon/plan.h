/* plan: what topdownd will monitor, decided from discovery, topology and
 * configuration: the effective level, the events of each group, which CPUs
 * are monitored and why the others are not.  A pure function; --probe
 * prints it and the collector executes it. */
#ifndef TOPDOWND_PLAN_H
#define TOPDOWND_PLAN_H

#include <stdbool.h>

#include "config.h"
#include "cpuset.h"
#include "pmu.h"
#include "topdown.h"
#include "topo.h"

#define PLAN_REASON_MAX 512

struct plan {
	bool usable;              /* TopDown can be collected on some CPU */
	char reason[PLAN_REASON_MAX]; /* why not usable */
	unsigned level;           /* effective level: 0, 1 or 2 */
	char level_note[PLAN_REASON_MAX]; /* why lower than configured */
	enum config_model model;  /* requested; the collector may fall back */
	char model_note[PLAN_REASON_MAX]; /* why model perf was not possible */
	enum td_formulas formulas;
	/* Events of the group, leader first.  n_core are slots and metrics;
	 * the refinement events (model perf) follow. */
	unsigned n_events, n_core;
	enum td_event events[TD_EV_COUNT];

	struct cpuset selected;     /* configured CPUs that exist */
	struct cpuset monitor;      /* selected and covered by the core PMU */
	struct cpuset unsupported;  /* selected but not covered */
	char unsupported_reason[PMU_REASON_MAX];
	struct cpuset nonexistent;  /* configured but not possible */
};

void plan_make(const struct pmu_info *pmu, const struct topo *topo,
	       const struct config *cfg, struct plan *plan);

#endif
