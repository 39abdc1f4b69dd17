/* plan: from discovery + topology + config to the set of groups to open. */
#include "plan.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

void plan_make(const struct pmu_info *pmu, const struct topo *topo,
	       const struct config *cfg, struct plan *plan)
{
	const struct cpuset *possible = topo_possible(topo);

	memset(plan, 0, sizeof(*plan));
	plan->model = cfg->model;
	plan->formulas = pmu->formulas;
	if (cfg->cpus_all) {
		plan->selected = *possible;
	} else {
		cpuset_and(&plan->selected, &cfg->cpus, possible);
		cpuset_andnot(&plan->nonexistent, &cfg->cpus, possible);
	}

	if (pmu->level == 0) {
		plan->unsupported = plan->selected;
		str_printf(plan->reason, sizeof(plan->reason), "%s", pmu->reason);
		str_printf(plan->unsupported_reason, sizeof(plan->unsupported_reason), "%s",
			 pmu->reason);
		return;
	}

	if (pmu->has_cpus)
		cpuset_and(&plan->monitor, &plan->selected, &pmu->cpus);
	else
		plan->monitor = plan->selected;
	cpuset_andnot(&plan->unsupported, &plan->selected, &plan->monitor);
	if (!cpuset_empty(&plan->unsupported))
		str_printf(plan->unsupported_reason, sizeof(plan->unsupported_reason), "%s",
			 pmu->other_reason[0] ? pmu->other_reason
					      : "not covered by the core PMU");

	plan->level = cfg->level < pmu->level ? cfg->level : pmu->level;
	if (plan->level < cfg->level)
		str_printf(plan->level_note, sizeof(plan->level_note),
			 "level %u requested but %s (pmu_name %s) has only the level-1 metric events; using level 1",
			 cfg->level, pmu->name, pmu->pmu_name[0] ? pmu->pmu_name : "unknown");

	plan->events[plan->n_events++] = TD_EV_SLOTS;
	for (int ev = TD_EV_RETIRING; ev <= TD_EV_BE_BOUND; ev++)
		plan->events[plan->n_events++] = (enum td_event)ev;
	if (plan->level >= 2)
		for (int ev = TD_EV_HEAVY_OPS; ev <= TD_EV_MEM_BOUND; ev++)
			plan->events[plan->n_events++] = (enum td_event)ev;
	plan->n_core = plan->n_events;
	/* The refinement events each formula family uses (reference page). */
	if (cfg->model == MODEL_PERF) {
		bool icl = plan->formulas == TD_FORMULAS_ICL;

		if (pmu->have[TD_EV_UOP_DROPPING] && (!icl || pmu->have[TD_EV_RECOVERY_CYCLES])) {
			plan->events[plan->n_events++] = TD_EV_UOP_DROPPING;
			if (icl)
				plan->events[plan->n_events++] = TD_EV_RECOVERY_CYCLES;
		} else {
			plan->model = MODEL_HARDWARE;
			str_printf(plan->model_note, sizeof(plan->model_note),
				 "the refinement events cannot be encoded with %s's format files; using model hardware",
				 pmu->name);
		}
	}

	if (cpuset_empty(&plan->monitor)) {
		if (cpuset_empty(&plan->selected))
			str_printf(plan->reason, sizeof(plan->reason),
				 "none of the configured CPUs exist");
		else
			str_printf(plan->reason, sizeof(plan->reason),
				 "none of the configured CPUs is covered by %s: %s", pmu->name,
				 plan->unsupported_reason);
		plan->level = 0;
		return;
	}
	plan->usable = true;
}
