/* SPDX-License-Identifier: MIT */
/* smtmode: perf's SMT mode metrics where a thread's CPU_SLOT tells its
 * mode (issue 44: NVIDIA Olympus, perf's nvidia/t410 metrics.json).
 * CPU_SLOT counts the core's whole width a cycle while the thread has the
 * core to itself (ST mode) and half of it while both threads share it
 * (SMT mode), so perf's cpu_cycles_fraction_in_st_mode, from CPU_SLOT
 * over CPU_CYCLES, splits a thread's cycles into cpu_cycles_in_st_mode
 * and cpu_cycles_in_smt_mode.  Both events are in the level-1 group
 * (CPU_CYCLES on the cycle counter): nothing more is opened.
 *
 * Each CPU's row is perf's metrics on its counts; a core's, package's
 * and the host's on its CPUs' counts summed, as perf stat --per-core,
 * --per-socket and -a sum them.  Rows accumulate each interval's cycles,
 * so that a rate over any window of topdown_smt_mode_cycles_total gives
 * the share of cycles in each mode over it. */
#include "collector_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "smtmode.h"
#include "util.h"

const char *const smt_mode_name[] = {
	[SMT_MODE_ST] = "st",
	[SMT_MODE_SMT] = "smt",
};
TABLE_COVERS(smt_mode_name, SMT_MODE_COUNT);

int coll_mode_plan(struct collector *c)
{
	bool any = false;

	for (unsigned p = 0; p < PMU_CORE_MAX; p++) {
		smtmode_free(c->mode[p]);
		c->mode[p] = NULL;
		c->pmus[p].smt_mode = false;
	}
	for (unsigned p = 0; p < c->n_pmus; p++) {
		const struct plan_pmu *pp = c->pmus[p].pp;
		char err[256];
		int r;

		if (!pp->smt_mode)
			continue;
		r = smtmode_new(pp->ua->smt_mode, &c->mode[p], err, sizeof(err));
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			log_warning("perf's SMT metrics of %s not counted: %s", pp->ua->name, err);
		any |= r == 0;
	}
	if (any && !c->mode_in)
		c->mode_in = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->mode_in));
	if (any && !c->mode_in)
		return -ENOMEM;
	for (unsigned p = 0; p < c->n_pmus; p++)
		c->pmus[p].smt_mode = c->mode[p] != NULL;
	return 0;
}

void coll_mode_free(struct collector *c)
{
	for (unsigned p = 0; p < PMU_CORE_MAX; p++) {
		smtmode_free(c->mode[p]);
		c->mode[p] = NULL;
	}
	free(c->mode_in);
	c->mode_in = NULL;
}

/* An entity's counts of the interval, summed. */
struct sum {
	double slots, cycles;
	bool have;
};

static void add(struct sum *s, double slots, double cycles)
{
	s->slots += slots;
	s->cycles += cycles;
	s->have = true;
}

/* @row carries on from @was (NULL: from 0), with perf's metrics on @s
 * (by @x; none when @s has no counts, or perf has no value for them). */
static void commit(struct snap_mode *row, const struct snap_mode *was, const struct smtmode *x, const struct sum *s)
{
	static const struct snap_mode zero;
	double v[UA_SMT_MODE_METRICS];

	*row = was ? *was : zero;
	row->valid = false;
	row->fraction = NAN;
	memset(row->last, 0, sizeof(row->last));
	if (!s->have || !x)
		return;
	smtmode_eval(x, s->slots, s->cycles, v);
	if (isnan(v[UA_SMT_MODE_ST]) || isnan(v[UA_SMT_MODE_SMT]))
		return;
	row->valid = row->ever = true;
	row->fraction = v[UA_SMT_MODE_FRACTION];
	row->last[SMT_MODE_ST] = v[UA_SMT_MODE_ST];
	row->last[SMT_MODE_SMT] = v[UA_SMT_MODE_SMT];
	row->total[SMT_MODE_ST] += row->last[SMT_MODE_ST];
	row->total[SMT_MODE_SMT] += row->last[SMT_MODE_SMT];
}

static void describe(const struct collector *c, struct snapshot *snap, const struct smtmode *x)
{
	const struct plan_pmu *pp = NULL;

	for (unsigned p = 0; p < c->n_pmus && !pp; p++)
		if (c->mode[p])
			pp = c->pmus[p].pp;
	snap->mode_on = x != NULL;
	snap->mode_method[0] = '\0';
	if (pp)
		str_printf(snap->mode_method, sizeof(snap->mode_method), "%s, %s (%s), from CPU_SLOT and CPU_CYCLES",
			   pp->ua->smt_mode->metric[UA_SMT_MODE_ST], pp->ua->smt_mode->metric[UA_SMT_MODE_SMT],
			   pp->ua->smt_mode->table);
}

void coll_mode_collect(struct collector *c, struct snapshot *snap)
{
	const struct snapshot *was = c->prev;
	const struct smtmode *x = NULL;
	struct sum host = { 0 };
	struct sum pkg[snap->n_pkgs ? snap->n_pkgs : 1];

	for (unsigned p = 0; p < c->n_pmus && !x; p++)
		x = c->mode[p];
	describe(c, snap, x);
	/* No plan has ever had them: the rows are the snapshots' zeros. */
	if (!c->mode_in)
		return;
	if (was == snap)
		was = NULL;
	memset(pkg, 0, sizeof(pkg));
	/* Core by core (then the CPUs of no known core): each CPU's row,
	 * its counts into its core's. */
	for (unsigned k = 0; k <= c->n_cores; k++) {
		struct sum core = { 0 };

		for (unsigned j = c->core_start[k]; j < c->core_start[k + 1]; j++) {
			unsigned i = c->order[j];
			const struct ccpu *cc = &c->cpus[i];
			struct mode_in *m = &c->mode_in[i];
			struct sum one = { 0 };

			if (m->have && cc->pmu >= 0 && c->mode[cc->pmu]) {
				add(&one, m->slots, m->cycles);
				add(&core, m->slots, m->cycles);
			}
			m->have = false;
			commit(&snap->cpus[i].mode, was ? &was->cpus[i].mode : NULL,
			       cc->pmu >= 0 ? c->mode[cc->pmu] : NULL, &one);
		}
		if (core.have) {
			add(&host, core.slots, core.cycles);
			if (k < c->n_cores && c->cores[k].pkg_idx >= 0)
				add(&pkg[c->cores[k].pkg_idx], core.slots, core.cycles);
		}
		if (k < c->n_cores)
			commit(&snap->cores[k].mode,
			       was && was->layout == snap->layout ? &was->cores[k].mode : NULL, x, &core);
	}
	for (unsigned p = 0; p < snap->n_pkgs; p++)
		commit(&snap->pkgs[p].mode, was && was->layout == snap->layout ? &was->pkgs[p].mode : NULL, x,
		       &pkg[p]);
	commit(&snap->mode_host, was ? &was->mode_host : NULL, x, &host);
}

void coll_mode_fill(const struct collector *c, struct snapshot *snap)
{
	const struct snapshot *was = c->prev;
	bool same;

	if (!was || was == snap || !c->mode_in)
		return;
	same = was->layout == snap->layout;
	for (unsigned i = 0; i < snap->n_cpus; i++)
		snap->cpus[i].mode = was->cpus[i].mode;
	for (unsigned k = 0; k < snap->n_cores; k++)
		if (same)
			snap->cores[k].mode = was->cores[k].mode;
		else
			memset(&snap->cores[k].mode, 0, sizeof(snap->cores[k].mode));
	for (unsigned p = 0; p < snap->n_pkgs; p++)
		if (same)
			snap->pkgs[p].mode = was->pkgs[p].mode;
		else
			memset(&snap->pkgs[p].mode, 0, sizeof(snap->pkgs[p].mode));
	snap->mode_host = was->mode_host;
	snap->mode_on = was->mode_on;
	memcpy(snap->mode_method, was->mode_method, sizeof(snap->mode_method));
}
