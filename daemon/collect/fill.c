/* SPDX-License-Identifier: MIT */
/* fill: what a snapshot says besides the counts: each CPU's description
 * and state, each PMU's row (its reason, departures, events), and the
 * stamp of the collection (the collector's, collector_internal.h). */
#include "collector_internal.h"

#include <assert.h>
#include <string.h>

#include "util.h"

/* One row per core PMU, in discovery order: what it runs, or why not.
 * pmu_row[k]: the row of the collector's PMU k, -1 for none. */
static void fill_pmus(const struct collector *c, struct snapshot *snap, int pmu_row[PMU_CORE_MAX])
{
	/* Every core PMU discovered has its row (Arrow Lake-H's three). */
	static_assert(SNAP_PMUS >= PMU_CORE_MAX, "a snapshot row per core PMU");
	assert(c->n_pmus <= PMU_CORE_MAX);
	for (unsigned k = 0; k < PMU_CORE_MAX; k++)
		pmu_row[k] = -1;
	snap->n_pmus = 0;
	for (unsigned i = 0; i < c->pmu->n_cores && i < SNAP_PMUS; i++) {
		const struct pmu_core *core = &c->pmu->core[i];
		struct snap_pmu *row = &snap->pmus[snap->n_pmus++];
		const struct cpmu *pm = NULL;

		for (unsigned k = 0; k < c->n_pmus; k++)
			if (c->pmus[k].pp->core == core) {
				pm = &c->pmus[k];
				pmu_row[k] = (int)i;
			}
		str_copy(row->name, sizeof(row->name), core->name);
		str_copy(row->pmu_name, sizeof(row->pmu_name), core->pmu_name);
		str_copy(row->uarch, sizeof(row->uarch), pm || core->level ? core->ua->id : "");
		if (pm) {
			row->level = pm->pp->level;
			row->core_share = pm->pp->core_share;
			str_copy(row->model, sizeof(row->model), pm->model.refine ? "perf" : "hardware");
			str_copy(row->reason, sizeof(row->reason), pm->reason);
			memcpy(row->departures, pm->departures, sizeof(row->departures));
		} else {
			memset(row->departures, 0, sizeof(row->departures));
			row->level = 0;
			row->core_share = false;
			row->model[0] = '\0';
			str_copy(row->reason, sizeof(row->reason),
				 core->level ? "none of its CPUs is selected by [collect] cpus" : core->reason);
		}
	}
}

unsigned collector_count(const struct collector *c, enum cpu_state state)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->n_cpus; i++)
		n += c->cpus[i].selected && c->cpus[i].state == state;
	return n;
}

/* The CPU descriptions, cores and packages: written when they change. */
void coll_describe(const struct collector *c, struct snapshot *snap)
{
	int pmu_row[PMU_CORE_MAX];

	fill_pmus(c, snap, pmu_row); /* for pmu_row; stamp() writes them again */
	memset(snap->cpus_by_state, 0, sizeof(snap->cpus_by_state));
	snap->n_cpus = c->n_cpus;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		const struct ccpu *cc = &c->cpus[i];
		const struct topo_cpu *t = topo_cpu(c->topo, (unsigned)cc->cpu);
		struct snap_cpu *s = &snap->cpus[i];

		s->cpu = cc->cpu;
		s->pmu_idx = cc->pmu >= 0 ? pmu_row[cc->pmu] : -1;
		s->selected = cc->selected;
		s->known = cc->known;
		s->core_id = t ? t->core_id : -1;
		s->package = t ? t->package : -1;
		s->die = t ? t->die : -1;
		s->node = t ? t->node : -1;
		/* A PMU that counts nothing: its CPUs count, with no figures. */
		s->state = cc->state == CPU_STATE_MONITORED && cc->pmu >= 0 && c->pmus[cc->pmu].silent ?
			   CPU_STATE_SILENCED : cc->state;
		s->core_idx = cc->core_idx;
		s->pkg_idx = cc->pkg_idx;
		s->c.cats = cc->pmu >= 0 && c->pmus[cc->pmu].pp ? c->pmus[cc->pmu].pp->cats : 0;
		s->gp_free = cc->pmu >= 0 ? cc->gp_free : 0;
		s->fixed1_held = cc->fixed1_held;
		s->slots_held = cc->slots_held;
		s->yielded = cc->yielded;
		if (cc->selected)
			snap->cpus_by_state[s->state]++;
	}
	snap->up = snap->cpus_by_state[CPU_STATE_MONITORED] > 0;
	snap->n_cores = c->n_cores;
	for (unsigned i = 0; i < c->n_cores; i++) {
		snap->cores[i].core_id = c->cores[i].core_id;
		snap->cores[i].package = c->cores[i].package;
		snap->cores[i].die = c->cores[i].die;
		snap->cores[i].pmu_idx = -1;
	}
	/* A core's type: its CPUs' core PMU (a core's threads are of one). */
	for (unsigned i = 0; i < c->n_cpus; i++)
		if (snap->cpus[i].core_idx >= 0 && (unsigned)snap->cpus[i].core_idx < c->n_cores &&
		    snap->cores[snap->cpus[i].core_idx].pmu_idx < 0)
			snap->cores[snap->cpus[i].core_idx].pmu_idx = snap->cpus[i].pmu_idx;
	snap->n_pkgs = c->n_pkgs;
	for (unsigned i = 0; i < c->n_pkgs; i++)
		snap->pkgs[i].package = c->pkgs[i];
	snap->fill_gen = c->gen;
}

/* Everything but the CPUs, every publication. */
void coll_stamp(struct collector *c, struct snapshot *snap)
{
	int pmu_row[PMU_CORE_MAX];

	fill_pmus(c, snap, pmu_row);
	snap->level = c->plan->level;
	snap->cats = c->plan->cats;
	str_copy(snap->reason, sizeof(snap->reason), c->plan->usable ? "" : c->plan->reason);
	/* Once an interval is in: whether any CPU had figures in the last
	 * one (a PMU that counts nothing, every counter held or yielded:
	 * down, whatever the states say). */
	snap->up = snap->cpus_by_state[CPU_STATE_MONITORED] > 0 && (c->seq == 0 || c->measured_last > 0);
	snap->seq = c->seq;
	snap->layout = c->layout;
	snap->timestamp = c->timestamp;
	snap->collected_ns = c->collected_ns;
	snap->last_interval_s = c->last_interval_s;
	snap->interval_s = (double)c->interval_ns / 1e9;
	snap->duration_s = c->duration_s;
	memcpy(snap->errors, c->errors, sizeof(snap->errors));
	c->prev = snap;
}
