/* SPDX-License-Identifier: MIT */
/* aggregate: a core's, a package's and the host's counts and figures from
 * their CPUs' (the collector's, collector_internal.h). */
#include "collector_internal.h"
#include "vec.h"

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

/* Row @key into row @to (each interval's sums go up the tree: a CPU
 * into its core, a core into its package, a package into the host; each
 * CPU's counts are added once, not once per domain). */
static void agg_fold(struct collector *c, unsigned n_vars, unsigned key, unsigned to)
{
	const double *restrict row = &c->agg[(size_t)key * UA_EVENTS_MAX];
	double *restrict dst = &c->agg[(size_t)to * UA_EVENTS_MAX];

	if (!c->agg_used[to]) {
		memcpy(dst, row, n_vars * sizeof(*row));
		c->agg_used[to] = true;
		return;
	}
	vec_add(dst, row, n_vars);
}

/* The domain a CPU's or a domain's sums go to first: its core, or (its
 * topology unknown) the host; a core's and a package's parents. */
static unsigned agg_parent(const struct collector *c, unsigned dom)
{
	if (dom < c->n_cpus) {
		int p = c->cores[dom].pkg_idx;

		return p >= 0 ? agg_dom_pkg(c, (unsigned)p) : agg_dom_host(c);
	}
	return agg_dom_host(c);
}

/* A CPU with figures this interval: its counts into its core's row (the
 * package's and the host's get them from there, agg_compute). */
void coll_agg_add(struct collector *c, const struct ccpu *cc)
{
	const struct cpmu *pm = &c->pmus[cc->pmu];
	unsigned dom = cc->core_idx >= 0 ? (unsigned)cc->core_idx : agg_dom_host(c);
	unsigned key = agg_key(c, (unsigned)cc->pmu, !cc->lay.refine && pm->model.refine, dom);
	double *restrict row = &c->agg[(size_t)key * UA_EVENTS_MAX];
	const double *restrict v = pm->input.v;
	const enum td_event *restrict vars = pm->vars;
	unsigned n = pm->n_vars;

	/* By variable: each CPU groups the events its own way. */
	if (!c->agg_used[key]) {
		for (unsigned k = 0; k < n; k++)
			row[k] = v[vars[k]];
		c->agg_used[key] = true;
		return;
	}
	for (unsigned k = 0; k < n; k++)
		row[k] += v[vars[k]];
}

/* v[vars[k]] = row[k] */
static void scatter(double *restrict v, const double *restrict row, const enum td_event *restrict vars,
		    unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		v[vars[k]] = row[k];
}

/* Row @dom's figures of the interval added into @out->last, its sums
 * into its parent's rows (none for the host); the rows are emptied for
 * the next interval. */
static void agg_compute(struct collector *c, unsigned dom, struct snap_counts *out)
{
	bool up = dom != agg_dom_host(c);
	unsigned parent = up ? agg_parent(c, dom) : 0;

	for (unsigned p = 0; p < c->n_pmus; p++) {
		struct cpmu *pm = &c->pmus[p];
		struct tma_input *in = &pm->agg_in;

		for (unsigned kind = 0; kind < AGG_KINDS; kind++) {
			unsigned key = agg_key(c, p, kind, dom);
			const double *row = &c->agg[(size_t)key * UA_EVENTS_MAX];
			struct tma_result res;
			int r;

			if (!c->agg_used[key])
				continue;
			c->agg_used[key] = false;
			if (up)
				agg_fold(c, pm->n_vars, key, agg_key(c, p, kind, parent));
			scatter(in->v, row, pm->vars, pm->n_vars);
			r = tma_compute(kind ? &pm->model_fixed : &pm->model, in, &res);
			if (r < 0)
				continue;
			out->last[TD_C_SLOTS] += res.slots;
			for (unsigned q = 0; q < pm->cols.n; q++) {
				unsigned k = pm->cols.lo[q] < TD_C_CAT ? TD_C_CAT : pm->cols.lo[q];

				if (k < pm->cols.hi[q])
					vec_add_scaled(out->last + k, res.frac + (k - TD_C_CAT), res.slots,
						       pm->cols.hi[q] - k);
			}
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
	VEC_ZERO(sc->last, TD_C_COUNT);
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

/* A domain's times, categories and coverage into its parent's. */
static void dom_fold(const struct snap_counts *from, bool covered, struct snap_counts *to, bool *to_covered)
{
	to->last[TD_C_ENABLED] += from->last[TD_C_ENABLED];
	to->last[TD_C_RUNNING] += from->last[TD_C_RUNNING];
	to->cats |= from->cats;
	to->cpus += from->cpus;
	to->measured += from->measured;
	if (to_covered)
		*to_covered |= covered;
}

/* The snapshot's domain of aggregation row @agg (a core, a package, the
 * host) and its coverage flag (NULL for the host). */
static struct snap_counts *dom_of(const struct collector *c, struct snapshot *snap, unsigned agg,
				  bool **covered)
{
	if (agg == agg_dom_host(c)) {
		*covered = NULL;
		return &snap->host;
	}
	if (agg >= c->n_cpus) {
		*covered = &snap->pkgs[agg - c->n_cpus].covered;
		return &snap->pkgs[agg - c->n_cpus].c;
	}
	*covered = &snap->cores[agg].covered;
	return &snap->cores[agg].c;
}

/* The previous snapshot's totals of row @agg's domain (same layout). */
static const double *dom_base(const struct collector *c, const struct snapshot *prev, unsigned agg)
{
	if (agg == agg_dom_host(c))
		return prev->host.total;
	if (agg >= c->n_cpus)
		return prev->pkgs[agg - c->n_cpus].c.total;
	return prev->cores[agg].c.total;
}

void coll_aggregate(struct collector *c, struct snapshot *snap, enum agg_mode mode)
{
	struct snap_counts *dom;
	unsigned pos, agg;
	bool *dom_covered;

	const struct snapshot *prev = c->prev;
	bool same = prev && prev->layout == c->layout;

	assert(prev != snap);
	if (!same) {
		snapshot_aggregate(snap);
		if (mode == AGG_INTERVAL)
			/* Sums of the CPUs' totals before this interval. */
			for (pos = 0; (dom = dom_next(c, snap, &pos, &dom_covered, &agg));)
				counts_shift(dom, -1);
	}
	if (mode == AGG_REPUBLISH) {
		if (same) {
			for (unsigned i = 0; i < c->n_cores; i++)
				snap->cores[i].c = prev->cores[i].c;
			for (unsigned i = 0; i < c->n_pkgs; i++)
				snap->pkgs[i].c = prev->pkgs[i].c;
			snap->host = prev->host;
		}
		return;
	}
	for (pos = 0; (dom = dom_next(c, snap, &pos, &dom_covered, &agg));)
		dom_reset(dom, dom_covered);
	/* The CPUs' times, categories and coverage into their cores (or the
	 * host); each domain passes them to its parent below. */
	for (unsigned i = 0; i < snap->n_cpus; i++) {
		const struct snap_cpu *cpu = &snap->cpus[i];
		bool covered = cpu->selected && cpu->state != CPU_STATE_UNSUPPORTED;

		if (cpu->core_idx >= 0)
			dom_fold(&cpu->c, covered, &snap->cores[cpu->core_idx].c, &snap->cores[cpu->core_idx].covered);
		else
			dom_fold(&cpu->c, covered, &snap->host, NULL);
	}
	/* Children before parents: cores, packages, the host. */
	for (pos = 0; (dom = dom_next(c, snap, &pos, &dom_covered, &agg));) {
		const double *base = same ? dom_base(c, prev, agg) : dom->total;
		bool covered = dom_covered && *dom_covered;

		if (agg != agg_dom_host(c)) {
			bool *up_covered;
			struct snap_counts *up = dom_of(c, snap, agg_parent(c, agg), &up_covered);

			dom_fold(dom, covered, up, up_covered);
		}
		if (mode == AGG_CATCH_UP) {
			/* No interval: the times too are 0, as the CPUs' are. */
			memset(dom->last, 0, sizeof(dom->last));
		} else {
			agg_compute(c, agg, dom);
		}
		/* The other columns' last are 0: they keep their totals. */
		if (base != dom->total)
			VEC_COPY(dom->total, base, TD_C_COUNT);
		for (unsigned q = 0; q < c->dom_cols.n; q++)
			vec_add(dom->total + c->dom_cols.lo[q], dom->last + c->dom_cols.lo[q],
				c->dom_cols.hi[q] - c->dom_cols.lo[q]);
	}
}
