/* SPDX-License-Identifier: MIT */
/* aggregate: a core's, a package's and the host's counts and figures from
 * their CPUs' (the collector's, collector_internal.h). */
#include "collector_internal.h"

#include <assert.h>
#include <string.h>

/* ---- cores, packages and the host ----
 *
 * As perf's --per-core, --per-socket and -a: a domain's counts are the
 * sums of its CPUs' (those with figures this interval), and its figures
 * perf's expressions on those sums; a hybrid domain adds its PMUs' slots.
 * A ratio of summed counts is not the slot-weighted mean of the CPUs'
 * ratios (2.5 pp apart on AMD), and a CPU's departure (a value below 0
 * made 0) is not its domain's. */

/* Rows: core i, package i after the n_cpus cores' rows, the host last. */
static unsigned agg_dom_pkg(const struct collector *c, unsigned i)
{
	return c->n_cpus + i;
}

static unsigned agg_dom_host(const struct collector *c)
{
	return 2 * c->n_cpus;
}

/* Rows by PMU and model: a CPU counting on the fixed counters alone
 * (share.c: it gave its general-purpose counters back) has the model
 * without refinement, and its counts are summed apart, as another core
 * type's are. */
#define AGG_KINDS 2

static unsigned agg_key(const struct collector *c, unsigned pmu, unsigned kind, unsigned dom)
{
	return (pmu * AGG_KINDS + kind) * c->agg_doms + dom;
}

static void agg_add_to(struct collector *c, const struct ccpu *cc, unsigned dom)
{
	const struct cpmu *pm = &c->pmus[cc->pmu];
	unsigned key = agg_key(c, (unsigned)cc->pmu, !cc->lay.refine && pm->model.refine, dom);
	double *row = &c->agg[(size_t)key * UA_EVENTS_MAX];

	if (!c->agg_used[key]) {
		memset(row, 0, pm->n_vars * sizeof(*row));
		c->agg_used[key] = true;
	}
	/* By variable: each CPU groups the events its own way. */
	for (unsigned k = 0; k < pm->n_vars; k++)
		row[k] += pm->input.v[pm->vars[k]];
}

/* A CPU with figures this interval: its counts into its domains. */
void coll_agg_add(struct collector *c, const struct ccpu *cc)
{
	if (cc->core_idx >= 0)
		agg_add_to(c, cc, (unsigned)cc->core_idx);
	if (cc->pkg_idx >= 0)
		agg_add_to(c, cc, agg_dom_pkg(c, (unsigned)cc->pkg_idx));
	agg_add_to(c, cc, agg_dom_host(c));
}

/* Row @dom's figures of the interval into @out->last (zeroed but for the
 * times); the rows are emptied for the next interval. */
static void agg_compute(struct collector *c, unsigned dom, struct snap_counts *out)
{
	for (unsigned p = 0; p < c->n_pmus; p++) {
		const struct cpmu *pm = &c->pmus[p];

		for (unsigned kind = 0; kind < AGG_KINDS; kind++) {
			unsigned key = agg_key(c, p, kind, dom);
			const double *row = &c->agg[(size_t)key * UA_EVENTS_MAX];
			struct tma_input in;
			struct tma_result res;

			if (!c->agg_used[key])
				continue;
			c->agg_used[key] = false;
			memset(&in, 0, sizeof(in));
			for (unsigned k = 0; k < pm->n_vars; k++)
				in.v[pm->vars[k]] = row[k];
			if (tma_compute(kind ? &pm->model_fixed : &pm->model, &in, &res) < 0)
				continue;
			out->last[TD_C_SLOTS] += res.slots;
			for (int k = 0; k < TD_CAT_COUNT; k++)
				out->last[TD_C_CAT + k] += res.frac[k] * res.slots;
		}
	}
}

static void counts_shift(struct snap_counts *sc, double sign)
{
	for (int k = 0; k < TD_C_COUNT; k++)
		sc->total[k] += sign * sc->last[k];
}

/* Clears a domain's last interval (its totals stay) and what its CPUs
 * give it afresh. */
static void dom_reset(struct snap_counts *sc, bool *covered)
{
	memset(sc->last, 0, sizeof(sc->last));
	sc->cats = 0;
	sc->cpus = sc->measured = 0;
	if (covered)
		*covered = false;
}


/* The cores, packages and host of @snap.  Their totals continue the
 * previous snapshot's (after a change of layout: the sums of their CPUs'
 * totals until then). */
/* The aggregates of @snap in one walk, from position *@pos (start at 0):
 * the cores, the packages, then the host.  *@covered is the domain's
 * coverage flag (NULL for the host); *@agg its index among the collector's
 * aggregation domains.  NULL after the host. */
static struct snap_counts *dom_next(const struct collector *c, struct snapshot *snap, unsigned *pos,
				    bool **covered, unsigned *agg)
{
	unsigned k = (*pos)++;

	if (k < snap->n_cores) {
		*covered = &snap->cores[k].covered;
		*agg = k;
		return &snap->cores[k].c;
	}
	k -= snap->n_cores;
	if (k < snap->n_pkgs) {
		*covered = &snap->pkgs[k].covered;
		*agg = agg_dom_pkg(c, k);
		return &snap->pkgs[k].c;
	}
	if (k == snap->n_pkgs) {
		*covered = NULL;
		*agg = agg_dom_host(c);
		return &snap->host;
	}
	return NULL;
}

void coll_aggregate(struct collector *c, struct snapshot *snap, enum agg_mode mode)
{
	struct snap_counts *dom;
	unsigned pos, agg;
	bool *dom_covered;

	const struct snapshot *prev = c->prev;
	bool same = prev && prev->layout == c->layout;

	assert(prev != snap);
	if (same) {
		for (unsigned i = 0; i < c->n_cores; i++)
			snap->cores[i].c = prev->cores[i].c;
		for (unsigned i = 0; i < c->n_pkgs; i++)
			snap->pkgs[i].c = prev->pkgs[i].c;
		snap->host = prev->host;
	} else {
		snapshot_aggregate(snap);
	}
	if (mode == AGG_INTERVAL && !same)
		/* Sums of the CPUs' totals before this interval. */
		for (pos = 0; (dom = dom_next(c, snap, &pos, &dom_covered, &agg));)
			counts_shift(dom, -1);
	if (mode == AGG_REPUBLISH)
		return;
	for (pos = 0; (dom = dom_next(c, snap, &pos, &dom_covered, &agg));)
		dom_reset(dom, dom_covered);
	/* The CPUs' times, categories and coverage. */
	for (unsigned i = 0; i < snap->n_cpus; i++) {
		const struct snap_cpu *cpu = &snap->cpus[i];
		bool covered = cpu->selected && cpu->state != CPU_STATE_UNSUPPORTED;
		struct snap_counts *doms[3] = {
			cpu->core_idx >= 0 ? &snap->cores[cpu->core_idx].c : NULL,
			cpu->pkg_idx >= 0 ? &snap->pkgs[cpu->pkg_idx].c : NULL,
			&snap->host,
		};

		for (int d = 0; d < 3; d++) {
			if (!doms[d])
				continue;
			doms[d]->last[TD_C_ENABLED] += cpu->c.last[TD_C_ENABLED];
			doms[d]->last[TD_C_RUNNING] += cpu->c.last[TD_C_RUNNING];
			doms[d]->cats |= cpu->c.cats;
			doms[d]->cpus += cpu->c.cpus;
			doms[d]->measured += cpu->c.measured;
		}
		if (cpu->core_idx >= 0)
			snap->cores[cpu->core_idx].covered |= covered;
		if (cpu->pkg_idx >= 0)
			snap->pkgs[cpu->pkg_idx].covered |= covered;
	}
	for (pos = 0; (dom = dom_next(c, snap, &pos, &dom_covered, &agg));) {
		if (mode == AGG_CATCH_UP) {
			/* No interval: the times too are 0, as the CPUs' are. */
			memset(dom->last, 0, sizeof(dom->last));
			continue;
		}
		agg_compute(c, agg, dom);
		counts_shift(dom, 1);
	}
}
