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

/* The row of PMU @pmu's CPUs of model @kind in package or host domain
 * @dom: their sums as perf's variables, 0 but for the PMU's runs. */
static unsigned agg_key(const struct collector *c, unsigned pmu, unsigned kind, unsigned dom)
{
	assert(dom >= c->n_cpus);
	return (pmu * AGG_KINDS + kind) * c->agg_doms + (dom - c->n_cpus);
}

/* @sum into row @key (each interval's sums go up the tree: a CPU into
 * its core, a core into its package, a package into the host; each CPU's
 * counts are added once, not once per domain). */
static inline __attribute__((always_inline)) void agg_fold(struct collector *c, const struct cpmu *pm,
							 const double *sum, unsigned key)
{
	coll_runs_add(pm, c->agg[key].v, sum, !c->agg_used[key]);
	c->agg_used[key] = true;
}

/* The domain a core's or a package's sums go to: its package, or (its
 * package unknown) the host. */
static unsigned agg_parent(const struct collector *c, unsigned dom)
{
	if (dom < c->n_cpus) {
		int p = c->cores[dom].pkg_idx;

		return p >= 0 ? agg_dom_pkg(c, (unsigned)p) : agg_dom_host(c);
	}
	return agg_dom_host(c);
}

void coll_agg_add_odd(struct collector *c, const struct ccpu *cc)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	unsigned kind = coll_agg_kind(pm, cc);

	if (cc->core_idx >= 0) {
		/* A core of one CPU: into its package's row. */
		agg_fold(c, pm, pm->input.v, agg_key(c, (unsigned)cc->pmu, kind, agg_parent(c, (unsigned)cc->core_idx)));
		c->acc.keys |= 1u << ((unsigned)cc->pmu * AGG_KINDS + kind);
		return;
	}
	agg_fold(c, pm, pm->input.v, agg_key(c, (unsigned)cc->pmu, kind, agg_dom_host(c)));
}

/* @res's categories times its slots added into @last over the category
 * columns @cols. */
static void add_figures(double *restrict last, const struct snap_cols *cols, const struct tma_result *res)
{
	last[TD_C_SLOTS] += res->slots;
	for (unsigned q = 0; q < cols->n; q++)
		vec_add_scaled(last + cols->lo[q], res->frac + (cols->lo[q] - TD_C_CAT), res->slots,
			       cols->hi[q] - cols->lo[q]);
}

/* Row @dom's figures of the interval added into @out->last, its sums
 * into its parent's rows (none for the host); the rows are emptied for
 * the next interval. */
static void agg_compute(struct collector *c, unsigned dom, struct snap_counts *out)
{
	bool up = dom != agg_dom_host(c);
	unsigned parent = up ? agg_parent(c, dom) : 0;

	for (unsigned p = 0; p < c->n_pmus; p++) {
		const struct cpmu *pm = &c->pmus[p];

		for (unsigned kind = 0; kind < AGG_KINDS; kind++) {
			unsigned key = agg_key(c, p, kind, dom);
			const struct tma_input *in = &c->agg[key];
			struct tma_result res;

			if (!c->agg_used[key])
				continue;
			c->agg_used[key] = false;
			if (up)
				agg_fold(c, pm, in->v, agg_key(c, p, kind, parent));
			if (tma_evaluate(kind ? &pm->model_fixed : &pm->model, in, &res) == 0)
				add_figures(out->last, &pm->cols, &res);
		}
	}
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

/* Whether a CPU counts for its domains' coverage (as ccpu.covers). */
static bool cpu_covers(const struct snap_cpu *cpu)
{
	return cpu->selected && cpu->state != CPU_STATE_UNSUPPORTED;
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

/* Core @k's description from its CPUs' (layout_core), at the generation
 * of theirs: once, not every interval. */
static void core_describe(struct collector *c, unsigned k)
{
	struct layout_core *lc = &c->cores[k];

	lc->cpus = 0;
	lc->covered = false;
	lc->pmus = 0;
	for (unsigned j = c->core_start[k]; j < c->core_start[k + 1]; j++) {
		const struct ccpu *cc = &c->cpus[c->order[j]];

		lc->cpus += cc->to_measure;
		lc->covered |= cc->covers;
		lc->pmus |= cc->pmu >= 0 ? 1u << cc->pmu : 0;
	}
	/* Its CPUs' PMU, -1 for none, -2 for more than one (a hybrid core
	 * nothing makes); the categories of each. */
	lc->pmu = lc->pmus ? (lc->pmus & (lc->pmus - 1) ? -2 : __builtin_ctz(lc->pmus)) : -1;
	lc->cats = 0;
	for (uint32_t left = lc->pmus; left; left &= left - 1)
		lc->cats |= c->pmus[__builtin_ctz(left)].pp->cats;
	lc->desc_gen = c->gen;
}

void coll_core_done(struct collector *c, unsigned k, struct snapshot *snap, const double *base)
{
	struct coll_core_acc *acc = &c->acc;
	struct layout_core *lc = &c->cores[k];
	struct snap_core *core = &snap->cores[k];
	struct snap_counts *out = &core->c;
	unsigned parent = agg_parent(c, k);
	uint32_t keys = acc->keys;
	struct tma_result res;
	double was[TD_C_COUNT];
	int pmu;

	/* Its CPUs' reads may have changed their descriptions (a CPU gone
	 * offline): the generation says. */
	if (lc->desc_gen != c->gen)
		core_describe(c, k);
	pmu = lc->pmu;
	out->cats = lc->cats;
	core->covered = lc->covered;
	out->cpus = lc->cpus;
	out->measured = acc->measured;
	if (base == out->total) {
		/* After a change of layout: the sums of its CPUs' totals. */
		memcpy(was, base, sizeof(was));
		base = was;
	}
	if (pmu >= 0 && !(keys & (keys - 1)) && (!keys || (unsigned)__builtin_ctz(keys) / AGG_KINDS == (unsigned)pmu)) {
		/* The common case: the CPUs of one PMU, one model.  Only its
		 * columns change; the others stay as the generation left them
		 * (catch_up). */
		struct cpmu *pm = &c->pmus[pmu];
		unsigned kind = keys ? (unsigned)__builtin_ctz(keys) % AGG_KINDS : 0;
		const struct tma_input *in = &pm->core_in[kind];

		if (keys && !acc->single)
			agg_fold(c, pm, in->v, agg_key(c, (unsigned)pmu, kind, parent));
		if (acc->added == 1) {
			/* One CPU's sums are its counts, and its figures the
			 * core's (SMT off, an E-core, a sibling idle). */
			const double *l = acc->added_last;

			coll_commit(out, base, &pm->cols, acc->enabled, acc->running, l[TD_C_SLOTS], l + TD_C_CAT, 1);
		} else {
			bool ok = keys && tma_evaluate(kind ? &pm->model_fixed : &pm->model, in, &res) == 0;

			coll_commit(out, base, &pm->cols, acc->enabled, acc->running, ok ? res.slots : 0,
				    ok ? res.frac : NULL, ok ? res.slots : 0);
		}
	} else {
		/* CPUs of several PMUs or models, or of none: every column a
		 * PMU writes. */
		VEC_ZERO(out->last, TD_C_COUNT);
		out->last[TD_C_ENABLED] = acc->enabled;
		out->last[TD_C_RUNNING] = acc->running;
		for (uint32_t left = keys; left; left &= left - 1) {
			unsigned bit = (unsigned)__builtin_ctz(left), kind = bit % AGG_KINDS;
			struct cpmu *pm = &c->pmus[bit / AGG_KINDS];
			const struct tma_input *in = &pm->core_in[kind];

			/* A core of one CPU has one PMU and model: above. */
			assert(!acc->single);
			agg_fold(c, pm, in->v, agg_key(c, bit / AGG_KINDS, kind, parent));
			if (tma_evaluate(kind ? &pm->model_fixed : &pm->model, in, &res) == 0)
				add_figures(out->last, &pm->cols, &res);
		}
		for (unsigned q = 0; q < c->dom_cols.n; q++)
			for (unsigned i = c->dom_cols.lo[q]; i < c->dom_cols.hi[q]; i++)
				out->total[i] = base[i] + out->last[i];
	}
	acc->keys = 0;
	acc->added = 0;
	{
		bool *up_covered;
		struct snap_counts *up = dom_of(c, snap, parent, &up_covered);

		dom_fold(out, lc->covered, up, up_covered);
	}
}

void coll_agg_begin(struct collector *c, struct snapshot *snap, bool same)
{
	struct snap_counts *dom;
	unsigned pos, agg;
	bool *dom_covered;

	if (!same)
		snapshot_aggregate(snap);
	for (pos = snap->n_cores; (dom = dom_next(c, snap, &pos, &dom_covered, &agg));)
		dom_reset(dom, dom_covered);
}

void coll_aggregate(struct collector *c, struct snapshot *snap, enum agg_mode mode)
{
	struct snap_counts *dom;
	unsigned pos, agg;
	bool *dom_covered;

	const struct snapshot *prev = c->prev;
	bool same = prev && prev->layout == c->layout;

	assert(prev != snap);
	/* After a change of layout every domain's totals restart from its
	 * CPUs' (an interval's: coll_agg_begin did it before the reads). */
	if (!same && mode != AGG_INTERVAL)
		snapshot_aggregate(snap);
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
	if (mode == AGG_CATCH_UP) {
		for (pos = 0; (dom = dom_next(c, snap, &pos, &dom_covered, &agg));)
			dom_reset(dom, dom_covered);
		for (unsigned i = 0; i < snap->n_cpus; i++) {
			const struct snap_cpu *cpu = &snap->cpus[i];

			if (cpu->core_idx < 0)
				dom_fold(&cpu->c, cpu_covers(cpu), &snap->host, NULL);
			else
				dom_fold(&cpu->c, cpu_covers(cpu), &snap->cores[cpu->core_idx].c,
					 &snap->cores[cpu->core_idx].covered);
		}
	} else {
		/* The cores were done as their CPUs were read, and passed
		 * their times, categories and coverage on (coll_core_done);
		 * the CPUs of no known core go to the host. */
		for (unsigned j = c->core_start[c->n_cores]; j < c->core_start[c->n_cores + 1]; j++) {
			const struct snap_cpu *cpu = &snap->cpus[c->order[j]];

			dom_fold(&cpu->c, cpu_covers(cpu), &snap->host, NULL);
		}
	}
	/* Children before parents: cores, packages, the host. */
	for (pos = mode == AGG_INTERVAL ? snap->n_cores : 0;
	     (dom = dom_next(c, snap, &pos, &dom_covered, &agg));) {
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
