/* SPDX-License-Identifier: MIT */
/* collector: the collector's lifecycle, plans taken and reloaded, each
 * interval's reads (scaling, hotplug, groups that did not run, filtered
 * events), and the snapshot; the groups are opened by groups.c, the
 * domains summed by aggregate.c, the descriptions filled by fill.c. */
#include "collector.h"
#include "collector_internal.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "perfev.h"
#include "tma.h"
#include "util.h"
#include "vec.h"

static struct log_ratelimit read_rl = LOG_RATELIMIT_INIT(60 * UINT64_C(1000000000), 10);

/* ---- layout: CPUs to cores and packages ---- */

static int core_cmp(const void *a, const void *b)
{
	const struct layout_core *x = a, *y = b;

	if (x->package != y->package)
		return x->package < y->package ? -1 : 1;
	if (x->die != y->die)
		return x->die < y->die ? -1 : 1;
	return x->core_id < y->core_id ? -1 : x->core_id > y->core_id;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static int find_core(const struct collector *c, const struct topo_cpu *t)
{
	for (unsigned i = 0; i < c->n_cores; i++)
		if (c->cores[i].package == t->package && c->cores[i].die == t->die &&
		    c->cores[i].core_id == t->core_id)
			return (int)i;
	return -1;
}

static int find_pkg(const struct collector *c, int package)
{
	for (unsigned i = 0; i < c->n_pkgs; i++)
		if (c->pkgs[i] == package)
			return (int)i;
	return -1;
}

/* Sorted cores and packages of every CPU whose topology is known.  Runs
 * at start and when a CPU of unknown topology comes online. */
static void build_layout(struct collector *c)
{
	c->n_cores = 0;
	c->n_pkgs = 0;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		const struct topo_cpu *t = topo_cpu(c->topo, (unsigned)c->cpus[i].cpu);

		c->cpus[i].known = t && t->known;
		if (!c->cpus[i].known)
			continue;
		if (find_core(c, t) < 0)
			c->cores[c->n_cores++] = (struct layout_core){ t->package, t->die, t->core_id, -1,
								       .desc_gen = UINT64_MAX };
		if (find_pkg(c, t->package) < 0)
			c->pkgs[c->n_pkgs++] = t->package;
	}
	qsort(c->cores, c->n_cores, sizeof(*c->cores), core_cmp);
	qsort(c->pkgs, c->n_pkgs, sizeof(*c->pkgs), int_cmp);
	for (unsigned i = 0; i < c->n_cpus; i++) {
		const struct topo_cpu *t = topo_cpu(c->topo, (unsigned)c->cpus[i].cpu);

		c->cpus[i].core_idx = c->cpus[i].known ? find_core(c, t) : -1;
		c->cpus[i].pkg_idx = c->cpus[i].known ? find_pkg(c, t->package) : -1;
	}
	for (unsigned i = 0; i < c->n_cores; i++)
		c->cores[i].pkg_idx = find_pkg(c, c->cores[i].package);
	/* The reading order: core by core (a counting sort, each core's CPUs
	 * in their order), then the CPUs of no known core. */
	memset(c->core_start, 0, (c->n_cores + 2) * sizeof(*c->core_start));
	for (unsigned i = 0; i < c->n_cpus; i++) {
		int k = c->cpus[i].core_idx;

		c->core_start[(k >= 0 ? (unsigned)k : c->n_cores) + 1]++;
	}
	for (unsigned k = 0; k <= c->n_cores; k++)
		c->core_start[k + 1] += c->core_start[k];
	{
		unsigned next[c->n_cores + 1];

		memcpy(next, c->core_start, sizeof(next));
		for (unsigned i = 0; i < c->n_cpus; i++) {
			int k = c->cpus[i].core_idx;

			c->order[next[k >= 0 ? (unsigned)k : c->n_cores]++] = i;
		}
	}
	c->layout++;
	c->gen++;
	coll_smt_drop(c);
}

/* Events that count work a running CPU cannot help doing: ops issued or
 * retired.  One of them counting nothing over a second in which cycles
 * counted is not a workload but an event the CPU does not implement, or a
 * hypervisor filters (both open and count 0): the figures built on it would
 * look right and be wrong.  The architectural retiring event counts too;
 * PERF_METRICS' topdown-retiring is a share of the slots rounded to 1/255,
 * which may read 0 on a working CPU. */
static bool counts_work(const struct cpmu *pm, enum td_event v)
{
	switch (v) {
	case TD_EV_RETIRING:
		return pm->pp->core->ua->formulas == UA_FORMULAS_ARCH;
	case TD_EV_ARM_OP_SPEC:
	case TD_EV_ARM_OP_RETIRED:
	case TD_EV_UOPS_ISSUED:
	case TD_EV_RETIRE_SLOTS:
	case TD_EV_ZEN_OPS_DISPATCHED:
	case TD_EV_ZEN_OPS_RETIRED:
	case TD_EV_ATOM_RETIRING:
	case TD_EV_UOPS_RETIRED_SLOTS:
	case TD_EV_SLOTS_P:
		return true;
	default:
		return false;
	}
}

/* What a PMU's reason says while nothing is wrong: the plan's note. */
static const char *plan_note(const struct plan_pmu *pp)
{
	return pp->level_note[0] ? pp->level_note : pp->model_note[0] ? pp->model_note : pp->group_note;
}

/* A monitored PMU's reason: where its slot width came from when not from
 * the PMU (a guest's: pmu.h slots_published), then the plan's note. */
static void plan_reason(const struct plan_pmu *pp, char *buf, size_t len)
{
	const char *note = plan_note(pp);
	char slots[PMU_REASON_MAX];

	pmu_guest_note(pp->core, slots, sizeof(slots));
	str_printf(buf, len, "%s%s%s", slots, slots[0] && note[0] ? "; " : "", note);
}

/* The variables of @lay's positions, its cycles, and each position's
 * place in @full (itself for the canonical grouping). */
static void lay_vars(const struct cpmu *pm, struct clayout *lay, const struct clayout *full)
{
	const struct uarch *ua = pm->pp->ua;

	for (unsigned g = 0, i = 0; i < lay->n_events; i++) {
		while (g + 1 < lay->n_groups && i >= lay->group_start[g + 1])
			g++;
		lay->group_of[i] = (uint8_t)g;
	}

	static_assert(UA_EVENTS_MAX <= 32, "a position set is 32 bits");
	lay->cycles_pos = -1;
	lay->work = 0;
	for (unsigned i = 0; i < lay->n_events; i++) {
		lay->var[i] = ua->events[lay->events[i]].var;
		if (counts_work(pm, lay->var[i]))
			lay->work |= 1u << i;
		/* What runs while the CPU runs: its cycles (NVIDIA Olympus: its
		 * slots, counted). */
		if (lay->cycles_pos < 0 && (lay->var[i] == TD_EV_CYCLES || lay->var[i] == TD_EV_CYCLES_ANY ||
					    lay->var[i] == TD_EV_ARM_CPU_SLOT))
			lay->cycles_pos = (int)i;
		lay->canon[i] = (uint8_t)i;
		for (unsigned k = 0; full && k < full->n_events; k++)
			if (full->events[k] == lay->events[i])
				lay->canon[i] = (uint8_t)k;
	}
}

int coll_layout(const struct cpmu *pm, unsigned gp, bool fixed1_busy, bool fixed_only,
		struct clayout *lay)
{
	const struct plan_pmu *pp = pm->pp;
	struct plan_layout pl;
	bool refine = pm->model.refine && !fixed_only;
	int r;

	if (!fixed_only && gp == pp->gp_available && fixed1_busy == pp->fixed1_busy) {
		*lay = pm->full;
		return 0;
	}
	r = plan_layout(pp, gp, fixed1_busy, fixed_only, refine, &pl);
	/* What it can still count with less: without the refinement events
	 * (model hardware), then on the fixed counters alone. */
	if (r < 0 && refine) {
		refine = false;
		r = plan_layout(pp, gp, fixed1_busy, fixed_only, false, &pl);
	}
	if (r < 0 && !fixed_only && plan_fixed_only(pp)) {
		fixed_only = true;
		r = plan_layout(pp, 0, fixed1_busy, true, false, &pl);
	}
	if (r < 0)
		return r;
	memset(lay, 0, sizeof(*lay));
	lay->n_events = pl.n_events;
	memcpy(lay->events, pl.events, sizeof(lay->events));
	lay->n_groups = pl.n_groups;
	memcpy(lay->group_start, pl.group_start, sizeof(lay->group_start));
	lay->gp = gp;
	lay->fixed1_busy = fixed1_busy;
	lay->fixed_only = fixed_only;
	lay->refine = refine;
	lay_vars(pm, lay, &pm->full);
	return 0;
}

/* The runs of variables that cover @pm's: a gap of up to RUN_GAP
 * variables is summed over (their 0s cost less than another run). */
#define RUN_GAP 3
static void pmu_runs(struct cpmu *pm)
{
	bool has[TD_EV_COUNT] = { false };

	for (unsigned k = 0; k < pm->n_vars; k++)
		has[pm->vars[k]] = true;
	pm->n_runs = 0;
	for (unsigned v = 0; v < TD_EV_COUNT; v++) {
		if (!has[v])
			continue;
		if (pm->n_runs && v - pm->run_hi[pm->n_runs - 1] <= RUN_GAP) {
			pm->run_hi[pm->n_runs - 1] = (uint8_t)(v + 1);
			continue;
		}
		pm->run_lo[pm->n_runs] = (uint8_t)v;
		pm->run_hi[pm->n_runs++] = (uint8_t)(v + 1);
	}
	pm->window = -1;
	if (pm->n_runs && pm->run_hi[pm->n_runs - 1] - pm->run_lo[0] <= COLL_WINDOW) {
		/* Whole pairs, within the variables. */
		unsigned pairs = (pm->run_hi[pm->n_runs - 1] - pm->run_lo[0] + 1) / 2;

		pm->window = pm->run_lo[0] + 2 * pairs <= TD_EV_COUNT ? pm->run_lo[0] : TD_EV_COUNT - 2 * (int)pairs;
		pm->window_pairs = pairs;
	}
}

/* The variables the domains sum: each of the canonical grouping's once. */
static void pmu_vars(struct cpmu *pm)
{
	pm->n_vars = 0;
	for (unsigned i = 0; i < pm->full.n_events; i++) {
		bool seen = false;

		for (unsigned k = 0; k < pm->n_vars && !seen; k++)
			seen = pm->vars[k] == pm->full.var[i];
		if (!seen)
			pm->vars[pm->n_vars++] = pm->full.var[i];
	}
	pmu_runs(pm);
}

/* The columns of categories @cats, without the slots and times (which
 * every commit writes itself). */
static void cat_cols(td_catset cats, struct snap_cols *out)
{
	struct snap_cols all;

	snap_cols_of(cats, &all);
	out->n = 0;
	for (unsigned r = 0; r < all.n; r++) {
		unsigned lo = all.lo[r] < TD_C_CAT ? TD_C_CAT : all.lo[r];

		if (lo < all.hi[r]) {
			out->lo[out->n] = (uint8_t)lo;
			out->hi[out->n++] = all.hi[r];
		}
	}
}

static void plan_to_pmu(const struct collector *c, struct cpmu *pm, const struct plan_pmu *pp)
{
	pm->pp = pp;
	pm->core_idx = (unsigned)(pp->core - c->pmu->core);
	pm->covered = pp->core->cpus;
	pm->evidence_pending = pm->evidence_taken = false;
	pm->fresh = true;
	pm->planned_n_events = pp->n_events;
	memcpy(pm->planned_events, pp->events, sizeof(pm->planned_events));
	memcpy(pm->planned_group_start, pp->group_start, sizeof(pm->planned_group_start));
	pm->planned_n_groups = pp->n_groups;
	memset(&pm->full, 0, sizeof(pm->full));
	pm->full.n_events = pp->n_events;
	memcpy(pm->full.events, pp->events, sizeof(pm->full.events));
	pm->full.n_groups = pp->n_groups;
	memcpy(pm->full.group_start, pp->group_start, sizeof(pm->full.group_start));
	pm->full.gp = pp->gp_available;
	pm->full.fixed1_busy = pp->fixed1_busy;
	pm->full.refine = pp->model == MODEL_PERF;
	lay_vars(pm, &pm->full, NULL);
	pmu_vars(pm);
	pm->model = (struct tma_model){ .formulas = pp->ua->formulas,
					.refine = pp->model == MODEL_PERF,
					.level = pp->level,
					.width = pp->ua->width,
					.mode = pp->mode,
					.slots_per_cycle = pp->core->slots,
					.stall_minus_cycles = pp->core->stall_minus_cycles };
	pm->model_fixed = pm->model;
	pm->model_fixed.refine = false;
	tma_model_prepare(&pm->model);
	tma_model_prepare(&pm->model_fixed);
	cat_cols(pp->cats, &pm->cols);
	memset(&pm->input, 0, sizeof(pm->input));
	memset(pm->core_in, 0, sizeof(pm->core_in));
	plan_reason(pp, pm->reason, sizeof(pm->reason));
	pm->silent = false;
	pm->gave_up = false;
}

static bool same_groups(const struct cpmu *pm, const struct plan_pmu *pp)
{
	return pm->pp && pm->pp->core == pp->core && pm->planned_n_events == pp->n_events &&
	       memcmp(pm->planned_events, pp->events, pp->n_events) == 0 &&
	       pm->planned_n_groups == pp->n_groups &&
	       memcmp(pm->planned_group_start, pp->group_start, pp->n_groups + 1) == 0;
}

/* Takes the plan's choices: group composition, model, notes, and which
 * CPUs are selected and covered.  Closes the groups that must change. */
static void apply_plan(struct collector *c, bool reopen_all)
{
	const struct plan *plan = c->plan;
	bool reopen[PMU_CORE_MAX] = { false };
	struct cpmu old[PMU_CORE_MAX];
	unsigned n_old = c->n_pmus;

	coll_deep_drop(c);
	coll_smt_drop(c);
	memcpy(old, c->pmus, sizeof(old));
	/* Groups that stay open keep the composition they were opened with,
	 * fallback to model hardware included. */
	for (unsigned i = 0; i < plan->n_pmus; i++) {
		const struct plan_pmu *pp = &plan->pmu[i];
		int keep = -1;

		for (unsigned j = 0; j < n_old && !reopen_all; j++)
			if (same_groups(&old[j], pp))
				keep = (int)j;
		if (keep >= 0) {
			c->pmus[i] = old[keep];
			c->pmus[i].pp = pp;
		} else {
			plan_to_pmu(c, &c->pmus[i], pp);
			reopen[i] = true;
		}
	}
	c->n_pmus = plan->n_pmus;
	/* The domains' rows are 0 outside their PMU's runs (aggregate.c):
	 * a PMU's index or runs may change. */
	for (unsigned key = 0; key < PMU_CORE_MAX * AGG_KINDS; key++) {
		struct tma_input *rows = &c->agg[(size_t)key * c->agg_doms];

		memset(rows, 0, c->n_pkgs * sizeof(*rows));
		memset(&rows[c->n_cpus], 0, sizeof(*rows));
	}
	{
		td_catset cats = 0;

		for (unsigned i = 0; i < c->n_pmus; i++)
			cats |= c->pmus[i].pp->cats;
		snap_cols_of(cats, &c->dom_cols);
	}
	/* The next snapshot starts afresh: the last interval's figures of
	 * the old plan are not carried over. */
	c->gen++;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct ccpu *cc = &c->cpus[i];
		bool want = cpuset_test(&plan->selected, (unsigned)cc->cpu);
		int pmu = -1;

		for (unsigned k = 0; k < plan->n_pmus && want; k++)
			if (cpuset_test(&plan->pmu[k].monitor, (unsigned)cc->cpu))
				pmu = (int)k;
		/* A CPU whose PMU changed, or whose groups change, reopens,
		 * with the plan's grouping (what it learned about other users
		 * is learned again: coll_learn). */
		if (pmu >= 0 && (reopen[pmu] || pmu != cc->pmu)) {
			if (cc->fd[0] >= 0)
				coll_close_group(c, cc);
			coll_reset_budget(c, cc, pmu);
		} else if (cc->fd[0] >= 0 && pmu < 0) {
			coll_close_group(c, cc);
		}
		cc->pmu = pmu;
		cc->selected = want;
		memset(cc->norun_ns, 0, sizeof(cc->norun_ns));
		memset(cc->norun_reads, 0, sizeof(cc->norun_reads));
		/* A hybrid CPU no PMU listed when the plan was made (it was
		 * offline): it waits, and is given the PMU that lists it once
		 * it is online (assign_pmu). */
		if (cpuset_test(&plan->isolated, (unsigned)cc->cpu)) {
			/* Shown, never read. */
			cc->selected = true;
			coll_set_state(c, cc, CPU_STATE_ISOLATED);
		} else if (pmu < 0 && want && cpuset_test(&plan->unlisted, (unsigned)cc->cpu))
			coll_set_state(c, cc, CPU_STATE_OFFLINE);
		else if (pmu < 0)
			coll_set_state(c, cc, CPU_STATE_UNSUPPORTED);
		else if (cc->fd[0] < 0)
			coll_set_state(c, cc, CPU_STATE_OFFLINE); /* opened by open_pending */
		coll_refresh(cc);
	}
	if (coll_deep_plan(c) < 0)
		log_warning("Out of memory for the TopDown nodes below level 2; counting levels 1 and 2");
	if (coll_smt_plan(c) < 0)
		log_warning("Out of memory for the SMT split; counting TopDown only");
	if (coll_mode_plan(c) < 0)
		log_warning("Out of memory for perf's SMT metrics; counting TopDown only");
	for (unsigned p = 0; p < c->n_pmus; p++)
		c->pmus[p].extra_share = c->pmus[p].deep || c->pmus[p].pp->smt_multiplex;
}

int collector_reload(struct collector *c, const struct plan *plan, bool count_kernel,
		     bool count_guest, uint64_t interval_ns, enum config_sharing sharing)
{
	bool reopen_all = count_kernel != c->count_kernel || count_guest != c->count_guest;

	c->plan = plan;
	c->count_kernel = count_kernel;
	c->count_guest = count_guest;
	c->interval_ns = interval_ns;
	c->sharing = sharing;
	apply_plan(c, reopen_all);
	if (plan->usable) {
		coll_raise_fd_limit(c);
		coll_open_pending(c, mono_ns());
	}
	return 0;
}

/* ---- reading ---- */

static void went_offline(struct collector *c, struct ccpu *cc, uint64_t now)
{
	coll_close_group(c, cc);
	c->errors[COLL_ERR_OFFLINE]++;
	coll_set_state(c, cc, CPU_STATE_OFFLINE);
	cc->retry_at_ns = now;
	log_info("CPU %d went offline; monitoring it again when it comes back", cc->cpu);
}

/* group_deltas() of a group enabled less than DELTA_SMALL_NS: two at a
 * time in vectors, converted from their bits (SSE2 converts no 64-bit
 * integer), 9 instructions an event where scalars take 12.  A delta
 * below 0 converts to garbage: the read is not used (the OR's sign). */
static __attribute__((noinline)) int64_t deltas_small(const uint64_t *restrict vals, uint64_t *restrict prev,
						      double *restrict v, const enum td_event *restrict var,
						      unsigned n, double scale)
{
	vec_l2 anyv = { 0, 0 };
	vec_d2 k = { scale, scale };
	size_t i = 0;
	int64_t any;

	for (; i + 2 <= n; i += 2) {
		vec_l2 x = { (long long)vals[2 * i], (long long)vals[2 * i + 2] };
		vec_l2 d = x - vec_load_l2(prev + i);
		vec_d2 f;

		vec_store_l2(prev + i, x);
		anyv |= d;
		f = vec_small_to_d2(d) * k;
		v[var[i]] = f[0];
		v[var[i + 1]] = f[1];
	}
	any = anyv[0] | anyv[1];
	if (i < n) {
		int64_t d = (int64_t)(vals[2 * i] - prev[i]);

		prev[i] = vals[2 * i];
		any |= d;
		v[var[i]] = (double)d * scale;
	}
	return any;
}

/* group_deltas() of any group, as scalars. */
static __attribute__((noinline)) int64_t deltas_scattered(const uint64_t *restrict vals, uint64_t *restrict prev,
							  double *restrict v, const enum td_event *restrict var,
							  unsigned n, double scale)
{
	int64_t any = 0;
	size_t i = 0;

	for (; i + 2 <= n; i += 2) {
		uint64_t x0 = vals[2 * i], x1 = vals[2 * i + 2];
		int64_t d0 = (int64_t)(x0 - prev[i]), d1 = (int64_t)(x1 - prev[i + 1]);

		prev[i] = x0;
		prev[i + 1] = x1;
		any |= d0 | d1;
		v[var[i]] = (double)d0 * scale;
		v[var[i + 1]] = (double)d1 * scale;
	}
	if (i < n) {
		uint64_t x = vals[2 * i];
		int64_t d = (int64_t)(x - prev[i]);

		prev[i] = x;
		any |= d;
		v[var[i]] = (double)d * scale;
	}
	return any;
}

/* The @n values of @cc's group at position @lead, just read into c->buf
 * (each followed by its id), less their previous ones (updated), times
 * @scale, into its PMU's input at their variables.  Returns the OR of the
 * deltas: below 0 when a counter went back, 0 when none counted.  Each
 * variable is one event's (uarch.h), so assigned, not added: a CPU's read
 * overwrites all of its PMU's, and only a read of every group computes.
 * Through int64_t: one instruction where uint64_t takes several on
 * x86-64; a delta of 2^63 counts is not one interval's, and one below 0
 * is a counter gone back (the sign of their OR).  @enabled_ns: the
 * group's enabled time, which says whether its deltas can be converted
 * from their bits (DELTA_SMALL_NS).  The loops are not inlined: in
 * read_cpu GCC -O2 neither unrolls them nor keeps their pointers in
 * registers. */
static inline int64_t group_deltas(struct collector *c, struct ccpu *cc, unsigned lead, unsigned n, double scale,
				   double enabled_ns)
{
	double *v = c->pmus[cc->pmu].input.v;

	if (enabled_ns < (double)DELTA_SMALL_NS)
		return deltas_small(c->buf + 3, &cc->prev[lead], v, &cc->lay.var[lead], n, scale);
	return deltas_scattered(c->buf + 3, &cc->prev[lead], v, &cc->lay.var[lead], n, scale);
}

/* A group's values out of order, or one gone back: counted, skipped;
 * they are the new baseline. */
static void read_unexpected(struct collector *c, const struct ccpu *cc)
{
	c->errors[COLL_ERR_SHORT_READ]++;
	log_ratelimited(&read_rl, LOG_LEVEL_WARNING, 0,
			"Unexpected values from the group of CPU %d; skipping this interval for it", cc->cpu);
}

/* The common case of group @g's read (@r, its values in c->buf), every
 * group of every CPU every interval: the group read before, time passed,
 * its counters ran, its values as many as it has.  Checked in one test
 * before anything changes.  1: its deltas are in, its enabled and running
 * time in *@enabled and *@running; 0: its values were unexpected (counted,
 * logged); -1: not the common case, nothing changed (read_group's). */
static inline int group_common(struct collector *c, struct ccpu *cc, unsigned g, uint64_t now, ssize_t r,
			       double *enabled, double *running)
{
	unsigned lead = cc->lay.group_start[g], n = cc->lay.group_start[g + 1] - lead;
	const uint64_t *b = c->buf;
	uint64_t pe = cc->prev_enabled[g], pr = cc->prev_running[g], at = cc->read_at[g];
	double e, ru;

	if (r != (ssize_t)((3 + 2 * (size_t)n) * sizeof(uint64_t)) || b[0] != n || b[1] <= pe || b[2] < pr ||
	    !at || now <= at)
		return -1;
	e = (double)(b[1] - pe);
	ru = (double)(b[2] - pr);
	/* A group that did not run, or a sliver of it (read_group). */
	if (ru == 0 || ru * 100 < e)
		return -1;
	cc->prev_enabled[g] = b[1];
	cc->prev_running[g] = b[2];
	cc->read_at[g] = now;
	if (group_deltas(c, cc, lead, n, (double)(now - at) / ru, e) < 0) {
		read_unexpected(c, cc);
		return 0;
	}
	cc->norun_ns[g] = 0;
	cc->norun_reads[g] = 0;
	*enabled = e;
	*running = ru;
	return 1;
}

/* read_group() of a read that is not the common case (group_common):
 * every check, in turn. */
static __attribute__((noinline)) bool read_group_odd(struct collector *c, struct ccpu *cc, unsigned g,
						     uint64_t now, ssize_t r, double *enabled_ns,
						     double *running_ns, bool *read_error)
{
	const struct clayout *lay = &cc->lay;
	unsigned lead = lay->group_start[g], n = lay->group_start[g + 1] - lead;
	const size_t want = (3 + 2 * (size_t)n) * sizeof(uint64_t);
	uint64_t *b = c->buf, enabled, running;
	const uint64_t *vals = b + 3;
	double scale, span_ns;
	int tries = 0;
	bool bad = false, norun, counted = false, first = cc->read_at[g] == 0;

	while (r == -EINTR && ++tries < EINTR_RETRIES)
		r = perfev_read(cc->fd[lead], b, c->buf_words * sizeof(uint64_t));
	if (r < 0) {
		c->errors[COLL_ERR_READ]++;
		*read_error = true;
		log_ratelimited(&read_rl, LOG_LEVEL_WARNING, (int)r,
				"Failed to read the group of CPU %d: %m; skipping this interval for it",
				cc->cpu);
		return false;
	}
	/* A detached group (its CPU went offline) reads back as the leader
	 * alone with frozen counts; nothing reattaches it. */
	if ((size_t)r >= 3 * sizeof(uint64_t) && b[0] == 1 && n > 1) {
		went_offline(c, cc, now);
		return false;
	}
	if ((size_t)r != want || b[0] != n) {
		c->errors[COLL_ERR_SHORT_READ]++;
		*read_error = true;
		log_ratelimited(&read_rl, LOG_LEVEL_WARNING, 0,
				"Short read from the group of CPU %d (%zd of %zu bytes, %llu values); skipping this interval for it",
				cc->cpu, r, want, (unsigned long long)b[0]);
		return false;
	}
	enabled = b[1];
	running = b[2];
	if (enabled == cc->prev_enabled[g]) {
		/* time_enabled stands still for a group whose CPU went away; the
		 * online list confirms it.  Otherwise no time passed for the
		 * group: nothing to count this interval. */
		topo_refresh_online(c->topo, c->sysfs);
		if (!cpuset_test(topo_online(c->topo), (unsigned)cc->cpu))
			went_offline(c, cc, now);
		return false;
	}
	if (enabled < cc->prev_enabled[g] || running < cc->prev_running[g]) {
		c->errors[COLL_ERR_SHORT_READ]++;
		return false;
	}
	*enabled_ns = (double)(enabled - cc->prev_enabled[g]);
	*running_ns = (double)(running - cc->prev_running[g]);
	/* Since the collection that last read it: the same for every group
	 * read then (0 for a group opened since, which counted only since). */
	span_ns = cc->read_at[g] && now > cc->read_at[g] ? (double)(now - cc->read_at[g]) : 0;
	cc->prev_enabled[g] = enabled;
	cc->prev_running[g] = running;
	cc->read_at[g] = now;
	/* A group that did not run has no numbers: no running time, or a
	 * sliver of it with nothing counted (arm64 reports one for a group
	 * that cannot be scheduled; scaled, it would be garbage). */
	norun = *running_ns == 0 || *running_ns * 100 < *enabled_ns;
	/* Each group's counts stand for span_ns, the time between the starts
	 * of the two collections that read it, the same for every group of
	 * every CPU read in both, or its own enabled time (span_ns 0).  perf
	 * scales by each group's own enabled/running; the two agree when the
	 * reads are taken together.  Where the reader is preempted between two
	 * reads (a loaded machine), each group's own enabled time spans a
	 * different stretch: a ratio of two groups' counts moves by the
	 * preemption's share of the interval (1.6 % seen), and so does a CPU's
	 * weight in its core, package and host (19 % seen); counts per
	 * running second times one span do not. */
	scale = *running_ns > 0 ? (span_ns > 0 ? span_ns : *enabled_ns) / *running_ns : 0;
	/* One pass over the values: the kernel returns them in group order
	 * (the ids say so), each at least its previous value.  A read that
	 * breaks either is counted and skipped; its values become the new
	 * baseline. */
	/* The order of a group's values is fixed when it is made (the
	 * leader's sibling list): its ids are checked on its first read. */
	for (unsigned i = 0; first && i < n; i++)
		bad |= vals[2 * i + 1] != cc->id[lead + i];
	{
		int64_t any = group_deltas(c, cc, lead, n, scale, *enabled_ns);

		bad |= any < 0;
		counted = any != 0;
	}
	if (bad) {
		read_unexpected(c, cc);
		*read_error = true;
		return false;
	}
	if (norun && (*running_ns == 0 || !counted)) {
		*running_ns = 0;
		coll_norun(c, cc, g, (uint64_t)*enabled_ns, now);
		return false;
	}
	cc->norun_ns[g] = 0;
	cc->norun_reads[g] = 0;
	return true;
}

/* Reads group @g of @cc, its scaled deltas into its PMU's input; false when the
 * CPU has nothing to report this interval (the reason is counted).  @pre:
 * read already (read_plain: not the common case), into c->buf. */
static bool read_group(struct collector *c, struct ccpu *cc, unsigned g, uint64_t now,
		       double *enabled_ns, double *running_ns, bool *read_error, const ssize_t *pre)
{
	ssize_t r = pre ? *pre : perfev_read(cc->fd[cc->lay.group_start[g]], c->buf, c->buf_words * sizeof(uint64_t));

	switch (group_common(c, cc, g, now, r, enabled_ns, running_ns)) {
	case 1:
		return true;
	case 0:
		*read_error = true;
		return false;
	default:
		return read_group_odd(c, cc, g, now, r, enabled_ns, running_ns, read_error);
	}
}

/* After a CPU's reads: whether its figures of the interval can be
 * trusted.  Not when one of its PMU's work events counted nothing while its
 * cycles counted, with the work event's group running: no CPU runs cycles
 * without issuing or retiring anything, so the formulas would divide
 * nothing by nothing (a "100 % bad speculation" from OP_RETIRED / OP_SPEC
 * = 0 / 0).  After NORUN_NS and NORUN_READS such intervals in a row the
 * PMU is silent: no figures, its CPUs reported silenced, until one of them
 * counts work again (a hypervisor's filter lifted).  Its groups stay open:
 * that is how it would know, and what other users leave is still
 * learned (share.c). */
static inline __attribute__((always_inline)) bool check_work(struct collector *c, struct ccpu *cc, const double *ran,
							     uint64_t enabled)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	const struct clayout *lay = &cc->lay;
	const struct tma_input *in = &pm->input;
	int quiet = -1;

	if (lay->cycles_pos < 0 || !(in->v[lay->var[lay->cycles_pos]] > 0))
		return !pm->silent;
	for (uint32_t w = lay->work; w && quiet < 0; w &= w - 1) {
		unsigned i = (unsigned)__builtin_ctz(w);

		if (ran[coll_group_of(lay, i)] > 0 && in->v[lay->var[i]] == 0)
			quiet = (int)i;
	}
	if (quiet < 0) {
		cc->silent_ns = 0;
		cc->silent_reads = 0;
		if (pm->silent) {
			pm->silent = false;
			str_printf(pm->reason, sizeof(pm->reason), "CPU %d counts work again: TopDown figures "
				   "from %s again", cc->cpu, pm->pp->core->name);
			log_info("%s", pm->reason);
			c->gen++;
		}
		return true;
	}
	if (pm->silent)
		return false;
	cc->silent_ns += enabled;
	if (++cc->silent_reads < NORUN_READS || cc->silent_ns < NORUN_NS)
		return false;
	pm->silent = true;
	str_printf(pm->reason, sizeof(pm->reason),
		   "%s counts nothing while cycles count (CPU %d, %.1f s): the CPU does not implement it or a "
		   "hypervisor filters it; no TopDown figures from %s",
		   coll_event_name(pm, lay, (unsigned)quiet), cc->cpu, (double)cc->silent_ns / 1e9, pm->pp->core->name);
	log_warning("%s", pm->reason);
	c->gen++;
	return false;
}

/* At debug level, each CPU's read: the scaled counts its figures come
 * from, as perf stat -v prints them, so that a figure can be traced to its
 * events (an event that counts nothing, a group that did not run). */
static void log_counts(const struct collector *c, const struct cpmu *pm, const struct ccpu *cc, bool ok,
		       double enabled, double running_share)
{
	const struct clayout *lay = &cc->lay;
	char line[LOG_LINE_MAX];
	int n;

	if (!c->debug)
		return;
	n = snprintf(line, sizeof(line), "CPU %d counts: enabled %.6f s, running %.1f %%%s:", cc->cpu,
		     enabled / 1e9, running_share * 100, ok ? "" : " (a group did not run)");
	for (unsigned i = 0; i < lay->n_events && n > 0 && (size_t)n < sizeof(line); i++) {
		bool seen = false;

		/* An event some groups share (cycles) is one variable. */
		for (unsigned j = 0; j < i && !seen; j++)
			seen = lay->var[j] == lay->var[i];
		if (!seen)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %s=%.0f", coll_event_name(pm, lay, i),
				      pm->input.v[lay->var[i]]);
	}
	log_debug("%s", line);
}

/* A CPU whose groups are closed (@read_error: or could not be read)
 * has no figures this interval; reads failing READ_FAILURES_FAILED
 * intervals in a row make it failed. */
static bool read_failed(struct collector *c, struct ccpu *cc, struct snap_counts *out, const double *before,
			bool read_error)
{
	coll_commit(out, before, &c->pmus[cc->pmu].cols, 0, 0, 0, NULL, 0);
	if (read_error && coll_group_open(cc) && ++cc->read_failures == READ_FAILURES_FAILED) {
		coll_set_state(c, cc, CPU_STATE_FAILED);
		log_warning("Reads of the group of CPU %d failed %u intervals in a row: CPU %d is failed "
			    "until a read works again (it is read every interval)",
			    cc->cpu, READ_FAILURES_FAILED, cc->cpu);
	}
	return false;
}

/* After @cc's reads (@ok: every group's counts are in its PMU's input):
 * what its groups ran, its figures into @out and its counts into its
 * core's sums; whether it has figures.  @span_ns: the span its first
 * group's counts are scaled to (read_group), for the nodes below level 2;
 * @ran each group's running time.  read_plain and read_cpu each have
 * their copy, as they have of check_work and coll_agg_add (GCC would call
 * the one it made of each: a tenth of a CPU's instructions). */
static inline __attribute__((always_inline)) bool cpu_figures(struct collector *c, struct ccpu *cc, uint64_t now,
							       struct snap_counts *out, const double *before, bool ok,
							       double enabled, double running_share, double share_sum,
							       const double *ran, double span_ns)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	struct tma_input *in = &pm->input;
	struct tma_result res;

	/* A depth group in the rotation ([collect] depth_multiplex) took
	 * its turns (of the last interval: read after this one's).  Only
	 * what other users leave needs the sum (share.c). */
	if (c->sharing == SHARING_YIELD)
		coll_share(c, cc, !ok ? -1 : pm->extra_share ? share_sum + coll_deep_share(c, cc) + coll_smt_share(c, cc)
						    : share_sum, (uint64_t)enabled, now);
	if (ok && pm->deep)
		coll_deep_keep(c, cc, in, span_ns);
	ok = ok && check_work(c, cc, ran, (uint64_t)enabled);
	/* Measured: its counters were read and can be trusted, whether or
	 * not it ran (a halted CPU adds no slots, and has no figures). */
	cc->measured = ok;
	ok = ok && tma_evaluate(cc->lay.refine ? &pm->model : &pm->model_fixed, in, &res) == 0;
	if (ok) {
		for (unsigned d = 0; res.departures && d < TMA_DEP_COUNT; d++)
			pm->departures[d] += (res.departures >> d) & 1;
		coll_agg_add(c, cc);
		if (pm->smt_mode)
			coll_mode_keep(c, cc, in);
	}
	coll_commit(out, before, &pm->cols, enabled, enabled * running_share, ok ? res.slots : 0,
		    ok ? res.frac : NULL, ok ? res.slots : 0);
	return ok;
}

/* Whether @cc's read is, as far as can be told before it, the common
 * case: one group, the plan's grouping, monitored, its reads not
 * failing, its PMU counting as planned, nothing to log at debug level
 * (read_plain; group_common asks the rest). */
static inline bool read_is_plain(const struct collector *c, const struct ccpu *cc)
{
	const struct cpmu *pm = &c->pmus[cc->pmu];

	return cc->lay.n_groups == 1 && !cc->read_failures && cc->state == CPU_STATE_MONITORED && !pm->gave_up &&
	       !c->debug && cc->lay.n_events == pm->full.n_events;
}

/* read_cpu() of a CPU whose read is plain (read_is_plain), every CPU
 * every interval: its group read the common way (group_common), then its
 * figures, none of the general path's bookkeeping.  -1 when the read
 * turns out not to be the common case: nothing changed, the read's result
 * in *@pre and its values in c->buf, for read_cpu.  Apart from read_cpu,
 * with its own copy of the tail (cpu_figures): together GCC keeps
 * neither's variables in registers. */
static __attribute__((noinline)) int read_plain(struct collector *c, struct ccpu *cc, uint64_t now,
						struct snap_counts *out, const double *before, ssize_t *pre)
{
	uint64_t read0 = cc->read_at[0];
	double enabled, running, share;

	*pre = perfev_read(cc->fd[0], c->buf, c->buf_words * sizeof(uint64_t));
	switch (group_common(c, cc, 0, now, *pre, &enabled, &running)) {
	case 1:
		break;
	case 0:
		return read_failed(c, cc, out, before, true);
	default:
		return -1;
	}
	share = running / enabled;
	return cpu_figures(c, cc, now, out, before, true, enabled, share < 1 ? share : 1, share, &running,
			   (double)(now - read0));
}

/* CPU @cc's reads into @out; whether it has figures (its counts went to
 * its core's sums).  @pre: its first group read already (read_plain). */
static bool read_cpu(struct collector *c, struct ccpu *cc, uint64_t now, struct snap_counts *out,
		     const double *before, const ssize_t *pre)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	double enabled = 0, running_share = 1, share_sum = 0, ran[PLAN_GROUPS_MAX];
	bool ok = true, read_error = false;
	/* The span the first group's counts are scaled to (read_group): the
	 * nodes below level 2 scale theirs the same. */
	uint64_t read0 = cc->read_at[0];

	/* The variables a smaller grouping does not read (the refinement
	 * events of the fixed counters' one) are another CPU's: none here. */
	if (cc->lay.n_events != pm->full.n_events)
		coll_lay_clear(pm, &cc->lay, &pm->input);
	for (unsigned g = 0; g < cc->lay.n_groups && coll_group_open(cc); g++) {
		double e = 0, r = 0;

		ran[g] = 0;
		if (!read_group(c, cc, g, now, &e, &r, &read_error, g ? NULL : pre)) {
			ok = false;
			if (e <= 0)
				continue;
		}
		ran[g] = r;
		/* The CPU runs as much as its least scheduled group. */
		if (g == 0)
			enabled = e;
		if (e > 0) {
			double share = r / e;

			if (share < running_share)
				running_share = share;
			share_sum += share;
		}
	}
	if (!coll_group_open(cc) || read_error)
		return read_failed(c, cc, out, before, read_error);
	if (cc->read_failures >= READ_FAILURES_FAILED && cc->state == CPU_STATE_FAILED) {
		coll_set_state(c, cc, CPU_STATE_MONITORED);
		log_info("Reads of the group of CPU %d work again after %u failed intervals; monitoring it",
			 cc->cpu, cc->read_failures);
	}
	cc->read_failures = 0;
	log_counts(c, pm, cc, ok, enabled, running_share);
	if (ok && pm->gave_up) {
		/* The other user let go: what the plan says again. */
		pm->gave_up = false;
		plan_reason(pm->pp, pm->reason, sizeof(pm->reason));
		log_info("%s: every group runs on CPU %d again", pm->pp->core->name, cc->cpu);
		c->gen++;
	}
	return cpu_figures(c, cc, now, out, before, ok, enabled, running_share, share_sum, ran,
			   read0 && now > read0 ? (double)(now - read0) : enabled);
}

/* A hybrid CPU that was offline when the plan was made: the PMU whose
 * cpus lists it now, if any.  False (and unsupported) when none does. */
static bool assign_pmu(struct collector *c, struct ccpu *cc)
{
	coll_refresh_covered(c);
	for (unsigned k = 0; k < c->n_pmus; k++)
		if (c->pmus[k].pp->core->has_cpus && cpuset_test(&c->pmus[k].covered, (unsigned)cc->cpu)) {
			cc->pmu = (int)k;
			coll_refresh(cc);
			c->gen++;
			log_info("CPU %d is online and %s lists it now", cc->cpu, c->pmus[k].pp->core->name);
			return true;
		}
	coll_set_state(c, cc, CPU_STATE_UNSUPPORTED);
	log_warning("CPU %d is online but no core PMU lists it in its cpus; not monitoring it", cc->cpu);
	return false;
}

/* Offline CPUs come back through the online list; failed ones are tried
 * again every RETRY_NS. */
static void revisit_waiting(struct collector *c, uint64_t now)
{
	bool online_read = false, relayout = false;

	for (unsigned i = 0; i < c->n_cpus && c->n_waiting; i++) {
		struct ccpu *cc = &c->cpus[i];

		if (cc->state == CPU_STATE_OFFLINE) {
			if (!online_read) {
				topo_refresh_online(c->topo, c->sysfs);
				online_read = true;
			}
			if (!cpuset_test(topo_online(c->topo), (unsigned)cc->cpu))
				continue;
			if (!cc->known && topo_read_cpu(c->topo, c->sysfs, (unsigned)cc->cpu) == 0)
				relayout = true;
			if (cc->pmu < 0 && !assign_pmu(c, cc))
				continue;
			if (coll_try_open(c, cc, now))
				log_info("CPU %d is online; monitoring it again", cc->cpu);
		} else if (cc->state == CPU_STATE_FAILED && cc->fd[0] < 0 && now >= cc->retry_at_ns) {
			bool quiet = cc->regrouped;

			cc->regrouped = false;
			if (coll_try_open(c, cc, now) && !quiet)
				log_info("CPU %d: TopDown group opened after an earlier failure", cc->cpu);
		}
	}
	if (relayout)
		c->relayout_due = true;
}

static const struct snap_counts zero_counts;

unsigned coll_to_measure(const struct ccpu *cc)
{
	return cc->selected && cc->pmu >= 0 && cc->state != CPU_STATE_UNSUPPORTED &&
	       cc->state != CPU_STATE_ISOLATED;
}

static const double *before_of(const struct collector *c, unsigned i)
{
	return c->prev ? c->prev->cpus[i].c.total : zero_counts.total;
}

static const struct snap_cols *cols_of(const struct collector *c, const struct ccpu *cc)
{
	return cc->pmu >= 0 ? &c->pmus[cc->pmu].cols : &c->base_cols;
}


/* A snapshot holding older CPU descriptions (or, @force, another layout)
 * takes the previous one's counts whole, its last interval cleared:
 * columns no CPU writes any more (a category of an earlier plan) then stay
 * what they were; so do the cores' of the same layout. */
static void catch_up(const struct collector *c, struct snapshot *snap, bool force)
{
	if (snap->fill_gen == c->gen && !force)
		return;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct snap_counts *out = &snap->cpus[i].c;

		memcpy(out->total, before_of(c, i), sizeof(out->total));
		memset(out->last, 0, sizeof(out->last));
	}
	for (unsigned k = 0; !force && k < c->n_cores; k++) {
		struct snap_counts *out = &snap->cores[k].c;

		memcpy(out->total, c->prev->cores[k].c.total, sizeof(out->total));
		memset(out->last, 0, sizeof(out->last));
	}
	coll_describe(c, snap);
}

/* CPU @i's reads into @snap, and what it gives its core (c->acc, when
 * @core); whether it has figures. */
static inline __attribute__((always_inline)) bool collect_cpu(struct collector *c, unsigned i, uint64_t now_ns,
								 struct snapshot *snap, bool core)
{
	struct ccpu *cc = &c->cpus[i];
	struct snap_counts *out = &snap->cpus[i].c;

	cc->measured = false;
	if (coll_group_open(cc)) {
		const double *before = before_of(c, i);
		ssize_t pre;
		int q;

		/* The common case, or its read not the common case's. */
		if (read_is_plain(c, cc)) {
			q = read_plain(c, cc, now_ns, out, before, &pre);
			if (q < 0)
				q = read_cpu(c, cc, now_ns, out, before, &pre);
		} else {
			q = read_cpu(c, cc, now_ns, out, before, NULL);
		}
		if (q && core) {
			c->acc.added++;
			c->acc.added_last = out->last;
		}
	} else {
		coll_commit(out, before_of(c, i), cols_of(c, cc), 0, 0, 0, NULL, 0);
	}
	out->cpus = cc->to_measure;
	out->measured = cc->measured;
	if (core) {
		struct coll_core_acc *acc = &c->acc;

		/* Its CPUs, coverage and PMUs are the core's description,
		 * kept by generation (coll_core_done). */
		acc->enabled += out->last[TD_C_ENABLED];
		acc->running += out->last[TD_C_RUNNING];
		acc->measured += out->measured;
	}
	return cc->measured;
}

void collector_collect(struct collector *c, uint64_t now_ns, struct snapshot *snap)
{
	struct timespec wall;
	unsigned measured = 0;
	bool same;

	/* A CPU's topology learned last interval: the layout only changes
	 * between intervals, with the snapshots' (catch_up). */
	if (c->relayout_due) {
		c->relayout_due = false;
		build_layout(c);
	}
	c->debug = log_level_enabled(LOG_LEVEL_DEBUG);
	same = c->prev && c->prev->layout == c->layout;
	catch_up(c, snap, !same);
	coll_agg_begin(c, snap, same);
	/* Core by core: each core's figures as soon as its CPUs are read,
	 * from their sums while they are at hand. */
	for (unsigned k = 0; k < c->n_cores; k++) {
		c->acc = (struct coll_core_acc){ .single = c->core_start[k + 1] - c->core_start[k] == 1 };
		for (unsigned j = c->core_start[k]; j < c->core_start[k + 1]; j++)
			measured += collect_cpu(c, c->order[j], now_ns, snap, true);
		coll_core_done(c, k, snap, same ? c->prev->cores[k].c.total : snap->cores[k].c.total);
	}
	for (unsigned j = c->core_start[c->n_cores]; j < c->core_start[c->n_cores + 1]; j++)
		measured += collect_cpu(c, c->order[j], now_ns, snap, false);
	c->measured_last = measured;
	/* After the reads: what other users left each CPU (probes, groups
	 * made again, yields); a group reopened now is first read next
	 * interval. */
	coll_learn(c, now_ns);
	if (c->n_waiting)
		revisit_waiting(c, now_ns);
	coll_learned_flush(c);
	c->last_interval_s = c->started_ns && now_ns > c->started_ns ? (double)(now_ns - c->started_ns) / 1e9 : 0;
	c->started_ns = now_ns;
	c->collected_ns = mono_ns();
	c->duration_s = (double)(c->collected_ns - now_ns) / 1e9;
	clock_gettime(CLOCK_REALTIME, &wall);
	c->timestamp = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
	c->seq++;
	/* States changed by this interval's reads. */
	if (snap->fill_gen != c->gen)
		coll_describe(c, snap);
	coll_aggregate(c, snap, AGG_INTERVAL);
	coll_deep_collect(c, snap, now_ns);
	coll_smt_collect(c, snap, now_ns);
	coll_mode_collect(c, snap);
	coll_stamp(c, snap);
}

/* ---- lifecycle and views ---- */

int collector_new(const struct collector_params *p, struct collector **ret)
{
	const struct cpuset *possible = topo_possible(p->topo);
	struct collector *c;
	unsigned n = 0;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sysfs = p->sysfs;
	c->topo = p->topo;
	c->pmu = p->pmu;
	c->plan = p->plan;
	c->count_kernel = p->count_kernel;
	c->count_guest = p->count_guest;
	c->sharing = p->sharing;
	c->interval_ns = p->interval_ns;
	c->oneshot = p->oneshot;
	c->fd_others_want = p->fd_others_want;
	c->fd_others_min = p->fd_others_min;
	c->gen = 1; /* a fresh snapshot holds generation 0 */
	cat_cols(0, &c->base_cols);

	/* Every possible CPU, selected or not: a reload may select it, and a
	 * CPU deselected by a reload keeps its totals in the aggregates. */
	c->n_cpus = cpuset_count(possible);
	c->cpus = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->cpus));
	c->cores = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->cores));
	c->pkgs = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->pkgs));
	c->order = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->order));
	c->core_start = calloc(c->n_cpus + 2, sizeof(*c->core_start));
	c->buf_words = 3 + 2 * UA_EVENTS_MAX;
	c->buf = calloc(c->buf_words, sizeof(uint64_t));
	/* Rows by PMU, model and domain: every package (no more than the
	 * CPUs), then the host. */
	c->agg_doms = c->n_cpus + 1;
	c->agg = calloc((size_t)PMU_CORE_MAX * AGG_KINDS * c->agg_doms, sizeof(*c->agg));
	c->agg_used = calloc((size_t)PMU_CORE_MAX * AGG_KINDS * c->agg_doms, sizeof(*c->agg_used));
	if (!c->cpus || !c->cores || !c->pkgs || !c->order || !c->core_start || !c->buf || !c->agg || !c->agg_used) {
		collector_free(c);
		return -ENOMEM;
	}
	CPUSET_FOREACH(cpu, possible) {
		struct ccpu *cc = &c->cpus[n++];

		cc->cpu = cpu;
		cc->state = CPU_STATE_UNSUPPORTED;
		cc->pmu = -1;
		coll_refresh(cc);
		for (int i = 0; i < UA_EVENTS_MAX; i++)
			cc->fd[i] = -1;
	}
	apply_plan(c, false);
	build_layout(c);
	*ret = c;
	return 0;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	for (unsigned i = 0; c->cpus && i < c->n_cpus; i++)
		coll_close_group(c, &c->cpus[i]);
	coll_deep_free(c);
	coll_smt_free(c);
	coll_mode_free(c);
	free(c->cpus);
	free(c->cores);
	free(c->pkgs);
	free(c->order);
	free(c->core_start);
	free(c->buf);
	free(c->agg);
	free(c->agg_used);
	free(c);
}

unsigned collector_capacity(const struct collector *c)
{
	return c->n_cpus ? c->n_cpus : 1;
}

unsigned collector_cpu_events(const struct collector *c, unsigned i, int *cpu, const int **fds,
			      int *pmu, uint64_t *opened)
{
	const struct ccpu *cc = &c->cpus[i];

	*cpu = cc->cpu;
	*opened = cc->opened;
	*pmu = cc->pmu;
	*fds = cc->cfd;
	if (cc->pmu < 0 || !coll_group_open(cc))
		return 0;
	return c->pmus[cc->pmu].full.n_events;
}

unsigned collector_pmu_arith(const struct collector *c, unsigned pmu, const struct tma_model **model,
			     const enum td_event **var)
{
	if (pmu >= c->n_pmus)
		return 0;
	*model = &c->pmus[pmu].model;
	*var = c->pmus[pmu].full.var;
	return c->pmus[pmu].full.n_events;
}

const char *collector_pmu_event_name(const struct collector *c, unsigned pmu, unsigned pos)
{
	return pmu < c->n_pmus && pos < c->pmus[pmu].full.n_events
		       ? coll_event_name(&c->pmus[pmu], &c->pmus[pmu].full, pos)
		       : "?";
}

unsigned collector_pmus(const struct collector *c)
{
	return c->n_pmus;
}

unsigned collector_cpus(const struct collector *c)
{
	return c->n_cpus;
}

bool collector_up(const struct collector *c)
{
	return collector_count(c, CPU_STATE_MONITORED) > 0;
}

const char *collector_model(const struct collector *c)
{
	if (!c->plan->usable || c->n_pmus == 0)
		return "";
	return c->pmus[0].model.refine ? "perf" : "hardware";
}

void collector_fill(struct collector *c, struct snapshot *snap)
{
	/* No reads: the last interval's figures stay, unless the CPU
	 * descriptions changed (catch_up). */
	if (snap != c->prev && c->prev && snap->fill_gen == c->gen) {
		for (unsigned i = 0; i < c->n_cpus; i++)
			snap->cpus[i].c = c->prev->cpus[i].c;
		coll_aggregate(c, snap, AGG_REPUBLISH);
	} else if (snap != c->prev) {
		catch_up(c, snap, !c->prev || c->prev->layout != c->layout);
		coll_aggregate(c, snap, AGG_CATCH_UP);
	}
	coll_deep_fill(c, snap);
	coll_smt_fill(c, snap);
	coll_mode_fill(c, snap);
	coll_stamp(c, snap);
}
