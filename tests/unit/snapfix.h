/* SPDX-License-Identifier: MIT */
/* snapfix: what the hand-built snapshots of the unit tests and the fuzzers
 * share: the one-PMU Sapphire Rapids header at level 2, and the CPUs from a
 * table of where each is.  No cmocka here: the fuzzers include it too. */
#ifndef TOPDOWND_TEST_SNAPFIX_H
#define TOPDOWND_TEST_SNAPFIX_H

#include <stdbool.h>
#include <string.h>

#include "snapshot.h"

/* One CPU of a fixture: where it is, whether it is known and selected, its
 * state.  Its die is 0 and its NUMA node its package when its topology is
 * known, -1 otherwise. */
struct snapfix_cpu {
	int cpu;
	bool known, selected;
	int core_id, package, core_idx, pkg_idx;
	enum cpu_state state;
};

/* @s->cpus[0..n) from @rows, and the count of each state. */
static inline void snapfix_cpus(struct snapshot *s, const struct snapfix_cpu *rows, unsigned n)
{
	s->n_cpus = n;
	for (unsigned i = 0; i < n; i++) {
		struct snap_cpu *c = &s->cpus[i];

		c->cpu = rows[i].cpu;
		c->known = rows[i].known;
		c->selected = rows[i].selected;
		c->core_id = rows[i].core_id;
		c->package = rows[i].package;
		c->die = rows[i].known ? 0 : -1;
		c->node = rows[i].known ? rows[i].package : -1;
		c->core_idx = rows[i].core_idx;
		c->pkg_idx = rows[i].pkg_idx;
		c->state = rows[i].state;
		s->cpus_by_state[c->state]++;
	}
}

/* The header every Sapphire Rapids fixture has: one PMU "cpu"
 * (sapphire_rapids, perf's sapphirerapids tables) at level 2, model perf,
 * level 1 and Intel's level 2 categories, up. */
static inline void snapfix_spr(struct snapshot *s)
{
	s->n_pmus = 1;
	strcpy(s->pmus[0].name, "cpu");
	strcpy(s->pmus[0].pmu_name, "sapphire_rapids");
	strcpy(s->pmus[0].uarch, "sapphirerapids");
	strcpy(s->pmus[0].model, "perf");
	s->pmus[0].level = 2;
	s->level = 2;
	s->cats = TD_CATSET_L1 | TD_CATSET_L2_INTEL;
	s->up = true;
}

#endif
