/* SPDX-License-Identifier: MIT */
/* A small static snapshot for the api and expo harnesses: 2 packages,
 * 4 cores, 9 CPU slots with a hole (cpu 7 absent), SMT siblings, a failed,
 * an offline-unknown, an unsupported and a deselected CPU, one idle core;
 * counters made up but consistent (categories sum to slots). */
#ifndef TOPDOWND_FUZZ_SNAPSHOT_H
#define TOPDOWND_FUZZ_SNAPSHOT_H

#include <string.h>

#include "snapshot.h"

struct fuzz_snap {
	struct snapshot snap;
	struct snap_cpu cpus[9];
	struct snap_core cores[4];
	struct snap_pkg pkgs[2];
};

static inline void fuzz_counts(struct snap_counts *c, double slots, double scale)
{
	/* L1: 40/10/20/30 %; L2 halves of each parent. */
	static const double l1[4] = { 0.4, 0.1, 0.2, 0.3 };

	memset(c, 0, sizeof(*c));
	c->last[TD_C_SLOTS] = slots;
	c->total[TD_C_SLOTS] = slots * scale;
	for (int i = 0; i < 4; i++) {
		const int l2 = TD_C_CAT + TD_CAT_HEAVY_OPERATIONS + 2 * i;

		c->last[TD_C_CAT + i] = slots * l1[i];
		c->total[TD_C_CAT + i] = slots * l1[i] * scale;
		c->last[l2] = c->last[l2 + 1] = slots * l1[i] / 2;
		c->total[l2] = c->total[l2 + 1] = slots * l1[i] * scale / 2;
	}
	c->last[TD_C_ENABLED] = 1e9;
	c->last[TD_C_RUNNING] = slots > 0 ? 1e9 : 0;
	c->total[TD_C_ENABLED] = 1e9 * scale;
	c->total[TD_C_RUNNING] = slots > 0 ? 1e9 * scale : 0;
}

static inline void fuzz_snapshot_init(struct fuzz_snap *f)
{
	/* cpu, known, selected, core_id, package, die, node, state, core_idx, pkg_idx, slots */
	static const struct {
		int cpu;
		bool known, selected;
		int core_id, package, core_idx, pkg_idx;
		enum cpu_state state;
		double slots;
	} cpus[9] = {
		{ 0, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED, 1000 },
		{ 1, true, true, 1, 0, 1, 0, CPU_STATE_MONITORED, 2000 },
		{ 2, true, true, 0, 1, 2, 1, CPU_STATE_MONITORED, 4000 },
		{ 3, true, true, 1, 1, 3, 1, CPU_STATE_FAILED, 0 },
		{ 4, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED, 500 },
		{ 5, true, false, 1, 0, 1, 0, CPU_STATE_MONITORED, 0 },
		{ 6, false, true, -1, -1, -1, -1, CPU_STATE_OFFLINE, 0 },
		{ 8, true, true, 1, 1, 3, 1, CPU_STATE_UNSUPPORTED, 0 },
		{ 9, true, true, 0, 1, 2, 1, CPU_STATE_MONITORED, 3000 },
	};
	struct snapshot *s = &f->snap;

	memset(f, 0, sizeof(*f));
	s->cpus = f->cpus;
	s->cores = f->cores;
	s->pkgs = f->pkgs;
	s->seq = 42;
	s->layout = 1;
	s->timestamp = 1700000000.25;
	s->interval_s = 1;
	s->duration_s = 0.0015;
	s->n_pmus = 1;
	strcpy(s->pmus[0].name, "cpu");
	strcpy(s->pmus[0].pmu_name, "sapphire_rapids");
	strcpy(s->pmus[0].uarch, "sapphirerapids");
	strcpy(s->pmus[0].model, "perf");
	s->pmus[0].level = 2;
	s->level = 2;
	s->cats = TD_CATSET_L1 | TD_CATSET_L2_INTEL;
	s->up = true;
	s->n_cpus = 9;
	s->n_cores = 4;
	s->n_pkgs = 2;
	for (int i = 0; i < 9; i++) {
		struct snap_cpu *c = &f->cpus[i];

		c->cpu = cpus[i].cpu;
		c->known = cpus[i].known;
		c->selected = cpus[i].selected;
		c->core_id = cpus[i].core_id;
		c->package = cpus[i].package;
		c->die = cpus[i].known ? 0 : -1;
		c->node = cpus[i].known ? cpus[i].package : -1;
		c->state = cpus[i].state;
		c->core_idx = cpus[i].core_idx;
		c->pkg_idx = cpus[i].pkg_idx;
		fuzz_counts(&c->c, cpus[i].slots, 3600);
		s->cpus_by_state[c->state]++;
	}
	for (int i = 0; i < 4; i++) {
		f->cores[i].core_id = i % 2;
		f->cores[i].package = i / 2;
		f->cores[i].die = 0;
	}
	for (int i = 0; i < 2; i++)
		f->pkgs[i].package = i;
	s->errors[COLL_ERR_OPEN] = 1;
	snapshot_aggregate(s);
}

#endif
