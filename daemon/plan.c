/* SPDX-License-Identifier: MIT */
/* plan: from discovery + topology + config to the groups to open. */
#include "plan.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

td_catset plan_cats(const struct uarch *ua, unsigned level)
{
	td_catset set = 0;

	for (unsigned i = 0; i < ua->n_metrics; i++)
		if (td_cat[ua->metrics[i].cat].level <= level)
			set |= 1u << ua->metrics[i].cat;
	/* A table without metrics (PERF_METRICS alone) yields Intel's tree. */
	if (!set)
		set = level >= 2 ? TD_CATSET_L1 | TD_CATSET_L2_INTEL : TD_CATSET_L1;
	return set;
}

static void plan_one(const struct pmu_core *core, const struct config *cfg,
		     const struct cpuset *selected, struct plan_pmu *pp)
{
	const struct uarch *ua = core->ua;
	bool refine_ok = true;

	memset(pp, 0, sizeof(*pp));
	pp->core = core;
	pp->ua = ua;
	pp->model = cfg->model;
	if (core->has_cpus)
		cpuset_and(&pp->monitor, selected, &core->cpus);
	else
		pp->monitor = *selected;

	pp->level = cfg->level < core->level ? cfg->level : core->level;
	if (pp->level < cfg->level)
		str_printf(pp->level_note, sizeof(pp->level_note),
			   "level %u requested but %s (%s, pmu_name %s) offers level %u; using level %u",
			   cfg->level, core->name, ua->name, core->pmu_name[0] ? core->pmu_name : "unknown",
			   core->level, pp->level);

	for (unsigned i = 0; i < ua->n_events; i++)
		if (!ua->events[i].refine && ua->events[i].level <= pp->level && core->have[i])
			pp->events[pp->n_events++] = (uint8_t)i;
	pp->n_core = pp->n_events;
	if (cfg->model == MODEL_PERF) {
		unsigned n_refine = 0;

		for (unsigned i = 0; i < ua->n_events; i++) {
			if (!ua->events[i].refine || ua->events[i].level > pp->level)
				continue;
			n_refine++;
			refine_ok &= core->have[i];
		}
		if (n_refine == 0 || !refine_ok) {
			pp->model = MODEL_HARDWARE;
			str_printf(pp->model_note, sizeof(pp->model_note),
				   n_refine == 0 ? "%s has no refinement events in topdownd's tables; using model hardware"
						 : "the refinement events cannot be encoded with %s's format files; using model hardware",
				   n_refine == 0 ? ua->name : core->name);
		} else {
			for (unsigned i = 0; i < ua->n_events; i++)
				if (ua->events[i].refine && ua->events[i].level <= pp->level)
					pp->events[pp->n_events++] = (uint8_t)i;
		}
	}
	/* PERF_METRICS: one slots-led group holds everything. */
	pp->n_groups = 1;
	pp->group_start[0] = 0;
	pp->group_start[1] = (uint8_t)pp->n_events;
	pp->cats = plan_cats(ua, pp->level);
}

void plan_make(const struct pmu_info *pmu, const struct topo *topo,
	       const struct config *cfg, struct plan *plan)
{
	const struct cpuset *possible = topo_possible(topo);

	memset(plan, 0, sizeof(*plan));
	if (cfg->cpus_all) {
		plan->selected = *possible;
	} else {
		cpuset_and(&plan->selected, &cfg->cpus, possible);
		cpuset_andnot(&plan->nonexistent, &cfg->cpus, possible);
	}

	for (unsigned i = 0; i < pmu->n_cores; i++) {
		const struct pmu_core *core = &pmu->core[i];
		struct plan_pmu *pp;

		if (core->level == 0) {
			if (!plan->unsupported_reason[0])
				str_printf(plan->unsupported_reason, sizeof(plan->unsupported_reason),
					   "%s", core->reason);
			continue;
		}
		pp = &plan->pmu[plan->n_pmus];
		plan_one(core, cfg, &plan->selected, pp);
		if (cpuset_empty(&pp->monitor))
			continue;
		plan->n_pmus++;
		cpuset_or(&plan->monitor, &plan->monitor, &pp->monitor);
		if (pp->level > plan->level)
			plan->level = pp->level;
		plan->cats |= pp->cats;
	}
	cpuset_andnot(&plan->unsupported, &plan->selected, &plan->monitor);
	if (!cpuset_empty(&plan->unsupported) && !plan->unsupported_reason[0])
		str_printf(plan->unsupported_reason, sizeof(plan->unsupported_reason), "%s",
			   pmu->n_cores ? "not covered by the core PMU" : pmu->reason);

	if (plan->n_pmus > 0) {
		plan->usable = true;
		return;
	}
	plan->level = 0;
	if (pmu->n_cores == 0)
		str_printf(plan->reason, sizeof(plan->reason), "%s", pmu->reason);
	else if (cpuset_empty(&plan->selected))
		str_printf(plan->reason, sizeof(plan->reason), "none of the configured CPUs exist");
	else if (plan->unsupported_reason[0] && !cfg->cpus_all)
		str_printf(plan->reason, sizeof(plan->reason),
			   "none of the configured CPUs is covered by a core PMU with TopDown: %s",
			   plan->unsupported_reason);
	else
		str_printf(plan->reason, sizeof(plan->reason), "%s",
			   plan->unsupported_reason[0] ? plan->unsupported_reason : pmu->reason);
}

const struct plan_pmu *plan_pmu_of(const struct plan *plan, unsigned cpu)
{
	for (unsigned i = 0; i < plan->n_pmus; i++)
		if (cpuset_test(&plan->pmu[i].monitor, cpu))
			return &plan->pmu[i];
	return NULL;
}
