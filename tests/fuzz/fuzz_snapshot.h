/* SPDX-License-Identifier: MIT */
/* A small static snapshot for the api and expo harnesses: 2 packages,
 * 4 cores, 9 CPU slots with a hole (cpu 7 absent), SMT siblings, a failed,
 * an offline-unknown, an unsupported and a deselected CPU, one idle core;
 * counters made up but consistent (categories sum to slots). */
#ifndef TOPDOWND_FUZZ_SNAPSHOT_H
#define TOPDOWND_FUZZ_SNAPSHOT_H

#include <string.h>

#include "../unit/snapfix.h"

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
	/* cpu, known, selected, core_id, package, core_idx, pkg_idx, state */
	static const struct snapfix_cpu cpus[9] = {
		{ 0, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED },
		{ 1, true, true, 1, 0, 1, 0, CPU_STATE_MONITORED },
		{ 2, true, true, 0, 1, 2, 1, CPU_STATE_MONITORED },
		{ 3, true, true, 1, 1, 3, 1, CPU_STATE_FAILED },
		{ 4, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED },
		{ 5, true, false, 1, 0, 1, 0, CPU_STATE_MONITORED },
		{ 6, false, true, -1, -1, -1, -1, CPU_STATE_OFFLINE },
		{ 8, true, true, 1, 1, 3, 1, CPU_STATE_UNSUPPORTED },
		{ 9, true, true, 0, 1, 2, 1, CPU_STATE_MONITORED },
	};
	static const double slots[9] = { 1000, 2000, 4000, 0, 500, 0, 0, 0, 3000 };
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
	snapfix_spr(s);
	snapfix_cpus(s, cpus, 9);
	s->n_cores = 4;
	s->n_pkgs = 2;
	for (int i = 0; i < 9; i++)
		fuzz_counts(&f->cpus[i].c, slots[i], 3600);
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
