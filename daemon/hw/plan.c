/* SPDX-License-Identifier: MIT */
/* plan: from discovery + topology + config to the groups to open. */
#include "plan.h"
#include "depth.h"
#include "tma.h"
#include "util.h"

#include <assert.h>
#include <errno.h>
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

/* ---- groups ---- */

struct pgroup {
	unsigned gp_used;
	unsigned gp_cap;  /* the fewest counters a member's list allows, or 0 */
	bool fixed_busy[UA_FIXED_MAX];
	unsigned n;
	uint8_t ev[UA_EVENTS_MAX];
};

/* Places event @e in @g if the counters allow; true when it did.
 *
 * An event that perf's table restricts to counters 0..k-1 ("Counter":
 * "0,1,2,3"; CounterHTOff with SMT off) goes only in a group of at most k
 * general-purpose events.  The kernel schedules by its own constraint
 * tables (arch/x86/events/core.c: x86_schedule_events, the events of
 * fewest allowed counters first, each on the lowest free one), which
 * may not restrict that event; with at most k events every one it sees
 * as unconstrained lands on a counter below k. */
static bool place(const struct uarch *ua, struct pgroup *g, uint8_t e, unsigned gp, bool fixed1_busy,
		  enum ua_mode mode)
{
	const struct ua_event *ev = &ua->events[e];
	int fixed = ua_event_fixed(ev);
	unsigned allowed = ua_event_counters(ev, mode), cap = g->gp_cap ? g->gp_cap : gp;

	if (fixed == 3) {
		/* Slots and the metrics share fixed counter 3. */
		g->ev[g->n++] = e;
		return true;
	}
	assert(fixed < UA_FIXED_MAX);
	if (fixed >= 0 && !g->fixed_busy[fixed] && !(fixed == 1 && fixed1_busy)) {
		g->fixed_busy[fixed] = true;
		g->ev[g->n++] = e;
		return true;
	}
	if (allowed < cap)
		cap = allowed;
	if (!ua_event_gp_ok(ev) || g->gp_used >= gp || g->gp_used >= cap)
		return false;
	g->gp_used++;
	g->gp_cap = cap;
	g->ev[g->n++] = e;
	return true;
}

int plan_pack(const struct uarch *ua, const uint8_t *events, unsigned n, unsigned n_core,
	      unsigned gp, bool fixed1_busy, enum ua_mode mode, uint8_t *out, uint8_t *group_start)
{
	struct pgroup g[PLAN_GROUPS_MAX];
	unsigned n_groups = 0, last_core = 0, k = 0;

	memset(g, 0, sizeof(g));
	for (unsigned i = 0; i < n; i++) {
		uint8_t e = events[i];
		bool refine = i >= n_core, done = false;
		unsigned from = refine ? last_core : 0;

		if (ua_event_fixed(&ua->events[e]) == 3) {
			/* The PERF_METRICS group is the first. */
			if (n_groups == 0)
				n_groups = 1;
			done = place(ua, &g[0], e, gp, fixed1_busy, mode);
		}
		for (unsigned j = from; j < n_groups && !done; j++)
			if (place(ua, &g[j], e, gp, fixed1_busy, mode)) {
				done = true;
				if (!refine && j > last_core)
					last_core = j;
			}
		if (!done) {
			if (n_groups == PLAN_GROUPS_MAX || !place(ua, &g[n_groups], e, gp, fixed1_busy, mode))
				return -ENOSPC;
			if (!refine)
				last_core = n_groups;
			n_groups++;
		}
	}
	/* Within a group: the kernel's events first (slots leads), then the
	 * others in order; the order of events[] already has the refinement
	 * events last. */
	for (unsigned j = 0; j < n_groups; j++) {
		group_start[j] = (uint8_t)k;
		for (unsigned pass = 0; pass < 2; pass++)
			for (unsigned i = 0; i < g[j].n; i++)
				if ((ua_event_fixed(&ua->events[g[j].ev[i]]) == 3) == (pass == 0))
					out[k++] = g[j].ev[i];
	}
	group_start[n_groups] = (uint8_t)k;
	return (int)n_groups;
}

/* ---- below level 2 ---- */

unsigned plan_depth_main(const struct plan_pmu *pp, unsigned taken, struct depth_main *main)
{
	/* Fixed counter 1 not where another user holds it, 2 not where the
	 * SMT split's group counts the reference cycles on it. */
	unsigned fixed = DEPTH_FIXED(0) | (pp->fixed1_busy ? 0 : DEPTH_FIXED(1)) | (pp->smt ? 0 : DEPTH_FIXED(2));

	/* In the kernel's rotation ([collect] depth_multiplex) the depth
	 * group has the counters to itself while it runs; beside the
	 * level-1/2 group, what that group leaves. */
	if (!pp->depth_multiplex)
		fixed &= ~taken;
	main->smt_on = pp->mode != UA_MODE_NOSMT;
	main->core_wide = pp->mode != UA_MODE_EBS;
	main->has_pmem = pp->depth_has_pmem;
	main->msr_type = pp->depth_msr_type;
	main->msr_tsc = pp->depth_msr_tsc;
	main->fixed2_taken = !(fixed & DEPTH_FIXED(2));
	return fixed;
}

/* Each node @d leaves out, and why, into pp->depth_left. */
static void left_out(struct plan_pmu *pp, const struct depth *d)
{
	size_t at = 0;

	pp->depth_left[0] = '\0';
	for (unsigned i = 0; i < depth_n_left(d) && at < sizeof(pp->depth_left); i++) {
		const char *why, *name = depth_left(d, i, &why);
		int n = snprintf(pp->depth_left + at, sizeof(pp->depth_left) - at, "%s: %s\n", name, why);

		if (n < 0 || (size_t)n >= sizeof(pp->depth_left) - at) {
			/* Cut at the last whole line. */
			pp->depth_left[at] = '\0';
			break;
		}
		at += (size_t)n;
	}
}

/* The counters the level-1/2 events leave @pp and the depth of @t on
 * them: its nodes compiled, their events packed (what --probe shows);
 * 0, or -errno with the depth note saying why there is none. */
static int depth_plan(struct plan_pmu *pp, const struct dt_table *t)
{
	struct depth_main main = { 0 };
	struct depth_group groups[DEPTH_GROUPS_MAX];
	struct depth *d;
	char why[PMU_REASON_MAX];
	unsigned taken = 0, fixed;
	int r, n;

	for (unsigned i = 0; i < pp->n_events && main.n < 32; i++) {
		const struct ua_event *ev = &pp->ua->events[pp->events[i]];
		int f = ua_event_fixed(ev);

		main.names[main.n] = ev->name;
		main.vars[main.n++] = ev->var;
		if (f >= 0 && f <= 2)
			taken |= DEPTH_FIXED(f);
	}
	fixed = plan_depth_main(pp, taken, &main);
	if (pp->depth_multiplex) {
		pp->depth_gp = pp->gp_available;
	} else {
		unsigned used = pp->gp_needed + (pp->smt && !pp->smt_multiplex ? 2 : 0);

		pp->depth_gp = pp->gp_available > used ? pp->gp_available - used : 0;
	}
	pp->depth_fixed1 = fixed & DEPTH_FIXED(1);
	r = depth_new(t, pp->depth, &pp->core->formats, &main, &d, why, sizeof(why));
	if (r < 0) {
		str_printf(pp->depth_note, sizeof(pp->depth_note), "no TopDown node below level 2: %s", why);
		return r;
	}
	n = depth_pack(d, pp->depth_gp, fixed, groups, DEPTH_GROUPS_MAX);
	if (n <= 0) {
		str_printf(pp->depth_note, sizeof(pp->depth_note),
			   "no TopDown node below level 2: its events do not fit the %u general-purpose counters "
			   "the level-1/2 events leave", pp->depth_gp);
		depth_free(d);
		return -ENOSPC;
	}
	/* Fixed counter 2 said only where an event takes it. */
	pp->depth_fixed2 = false;
	for (unsigned i = 0; i < depth_n_events(d); i++)
		pp->depth_fixed2 |= depth_event(d, i)->fixed == 2;
	pp->depth_nodes = depth_n_nodes(d);
	pp->depth_events = depth_n_opened(d);
	left_out(pp, d);
	pp->depth_groups = (unsigned)n;
	/* --probe lists the nodes left out; "N left out, first ..." is for
	 * the log and the document. */
	if (why[0] && !pp->depth_note[0] && !pp->depth_left[0])
		str_printf(pp->depth_note, sizeof(pp->depth_note), "%s", why);
	depth_free(d);
	return 0;
}

/* perf's nodes of levels 3 to @level, where its tables define them and the
 * level-1/2 events leave room (hw/depth.c, collect/deep.c). */
static void plan_depth(struct plan_pmu *pp, unsigned level, bool multiplex, const struct pmu_info *info)
{
	const struct dt_table *t = depth_table_of(pp->ua->id, pp->core->name);
	unsigned deepest = t ? depth_table_levels(t) : 0;

	if (!t) {
		str_printf(pp->depth_note, sizeof(pp->depth_note),
			   "level %u requested: topdownd has no TopDown node below level 2 for %s (perf's tables "
			   "it reads define none); using level %u", level, pp->ua->name, pp->level);
		return;
	}
	if (pp->level < 2) {
		str_printf(pp->depth_note, sizeof(pp->depth_note),
			   "level %u requested: the nodes below level 2 read level 2, which %s does not count here",
			   level, pp->core->name);
		return;
	}
	/* The nodes' groups take turns beside the level-1/2 group, which
	 * must hold all of its events at once; where those rotate already,
	 * only if asked: one more group in the rotation costs them running
	 * time (n/(n+1) of it). */
	if (pp->n_groups != 1 && !multiplex) {
		str_printf(pp->depth_note, sizeof(pp->depth_note),
			   "level %u requested: %s's level-1/2 events rotate in %u groups here, and the nodes below "
			   "level 2 would take running time from them (each would run 1/%u of the time instead of "
			   "1/%u): set [collect] depth_multiplex = true to count them anyway; using level %u",
			   level, pp->ua->name, pp->n_groups, pp->n_groups + 1, pp->n_groups, pp->level);
		return;
	}
	pp->depth_multiplex = pp->n_groups != 1;
	pp->depth = level < deepest ? level : deepest;
	pp->depth_msr_type = info->msr_type;
	pp->depth_msr_tsc = info->msr_tsc;
	pp->depth_has_pmem = info->has_pmem;
	if (pp->depth < level)
		str_printf(pp->depth_note, sizeof(pp->depth_note),
			   "level %u requested but perf's tables for %s (%s) go down to level %u; using level %u",
			   level, pp->ua->name, t->source, deepest, deepest);
	if (depth_plan(pp, t) == 0)
		pp->depth_table = t;
	else
		pp->depth = 0;
}

/* ---- SMT ---- */

static bool siblings_selected(const struct topo *topo, const struct cpuset *set)
{
	CPUSET_FOREACH(a, set) {
		CPUSET_FOREACH(b, topo_online(topo)) {
			if (!cpuset_test(set, (unsigned)b) &&
			    topo_same_core(topo_cpu(topo, (unsigned)a), topo_cpu(topo, (unsigned)b)))
				return false;
		}
	}
	return true;
}

/* perf's #SMT_on and #core_wide: AnyThread counts need every thread of a
 * core counted (a system-wide run, or a CPU list holding whole cores). */
static enum ua_mode smt_mode(const struct budget *budget, const struct topo *topo,
			     const struct config *cfg, const struct cpuset *monitor)
{
	if (!budget->smt)
		return UA_MODE_NOSMT;
	return cfg->cpus_all || siblings_selected(topo, monitor) ? UA_MODE_SMT : UA_MODE_EBS;
}

static bool counted_in(const struct ua_event *ev, enum ua_mode mode)
{
	return ev->modes == 0 || (ev->modes & mode);
}

static void plan_groups(const struct budget *budget, unsigned idx, struct plan_pmu *pp)
{
	const struct uarch *ua = pp->ua;
	const struct budget_pmu *bp = &budget->pmu[idx];
	uint8_t events[UA_EVENTS_MAX];
	char restricted[160];
	int n;

	/* Where the NMI watchdog's pinned cycles event goes: fixed counter 1,
	 * or on a PMU without fixed counters one of the general-purpose ones
	 * (no group validation sees it there either).  What other users hold
	 * CPU by CPU the collector learns (collect/share.c, plan_layout). */
	bool fixed1_busy = budget->watchdog && !ua->watchdog_takes_gp;

	pp->gp_available = bp->gp ? bp->gp : ua_gp_counters(ua);
	pp->gp_total = pp->gp_available;
	pp->group_max = bp->group_max;
	str_printf(pp->gp_source, sizeof(pp->gp_source), "%s",
		   bp->source[0] ? bp->source : "perf's tables");
	pp->watchdog = budget->watchdog;
	if (budget->watchdog && ua->watchdog_takes_gp && pp->gp_available > 1)
		pp->gp_available--;
	if (bp->group_max && bp->group_max < pp->gp_available)
		pp->gp_available = bp->group_max;
	pp->fixed1_busy = fixed1_busy;
	memcpy(pp->order, pp->events, sizeof(pp->order));
	pp->gp_needed = 0;
	for (unsigned i = 0; i < pp->n_events; i++) {
		const struct ua_event *ev = &ua->events[pp->events[i]];
		int fixed = ua_event_fixed(ev);

		if (fixed < 0 || (fixed == 1 && fixed1_busy))
			pp->gp_needed++;
	}
	memcpy(events, pp->events, sizeof(events));
	n = plan_pack(ua, events, pp->n_events, pp->n_core, pp->gp_available, fixed1_busy, pp->mode,
		      pp->events, pp->group_start);
	if (n < 0) {
		/* Cannot happen with a table's own counters; one group, as the
		 * kernel will then say what it refuses. */
		memcpy(pp->events, events, sizeof(events));
		n = 1;
		pp->group_start[0] = 0;
		pp->group_start[1] = (uint8_t)pp->n_events;
	}
	pp->n_groups = (unsigned)n;
	/* Events perf's table keeps on fewer counters than the PMU has. */
	restricted[0] = '\0';
	for (unsigned i = 0, fewest = pp->gp_available; i < pp->n_events; i++) {
		const struct ua_event *ev = &ua->events[pp->events[i]];

		if (ua_event_counters(ev, pp->mode) < fewest) {
			fewest = ua_event_counters(ev, pp->mode);
			str_printf(restricted, sizeof(restricted),
				   "; events perf's tables keep on counters 0-%u (%s) go in groups of at most %u",
				   fewest - 1, ev->name, fewest);
		}
	}
	if (pp->n_groups > 1)
		str_printf(pp->group_note, sizeof(pp->group_note),
			   "%u groups rotate: %u general-purpose counters needed, %u per CPU%s%s%s%s; each group is scaled to the interval by its running time, as perf does",
			   pp->n_groups, pp->gp_needed, pp->gp_available,
			   !pp->watchdog ? "" :
			   ua->watchdog_takes_gp ? " (the NMI watchdog holds one more)" :
			   " (the NMI watchdog holds fixed counter 1: cycles take one of them)",
			   restricted, bp->learned[0] ? "; re-planned: " : "", bp->learned);
	else if (bp->learned[0])
		str_printf(pp->group_note, sizeof(pp->group_note), "re-planned: %s", bp->learned);
}

/* Which threads of each core ran when (issue 43, collect/smt.c): a group
 * of REF_TSC (fixed counter 2), ONE_THREAD_ACTIVE, the core's any-thread
 * clock and the msr PMU's TSC on every CPU, where the model has them
 * (ua->smt), SMT is on and the kernel has the TSC.  Its two
 * general-purpose events run beside the level-1/2 group where that is
 * one group and leaves them room; where the level-1/2 events rotate it
 * would be one more group in their rotation, taking running time from
 * them: only with [collect] smt = on. */
static void plan_smt(struct plan_pmu *pp, const struct config *cfg, const struct pmu_info *info)
{
	const struct ua_smt *smt = pp->ua->smt;
	char err[128];

	if (cfg->smt == SMT_OFF) {
		str_printf(pp->smt_note, sizeof(pp->smt_note), "off ([collect] smt = off)");
		return;
	}
	/* A thread's CPU_SLOT tells its mode (NVIDIA Olympus): perf's SMT
	 * metrics come from the level-1 group's counts, on every CPU that
	 * has them.  The four-way split would need each thread's unhalted
	 * time at a constant rate (CNT_CYCLES) on a counter of its own, and
	 * the level-1 group takes every event counter. */
	if (pp->ua->smt_mode) {
		pp->smt_mode = true;
		str_printf(pp->smt_note, sizeof(pp->smt_note),
			   "perf's SMT metrics instead (%s, %s: each thread's cycles in ST and SMT mode, from the "
			   "level-1 group's CPU_SLOT and CPU_CYCLES); the four-way split needs each thread's "
			   "unhalted time at a constant rate, on a counter the level-1 group leaves none of",
			   pp->ua->smt_mode->metric[UA_SMT_MODE_ST], pp->ua->smt_mode->metric[UA_SMT_MODE_SMT]);
		return;
	}
	if (pp->mode == UA_MODE_NOSMT) {
		str_printf(pp->smt_note, sizeof(pp->smt_note),
			   "each core runs one thread (SMT off or absent): nothing to split");
		return;
	}
	if (!smt && strcmp(pp->core->name, "cpu_atom") == 0) {
		str_printf(pp->smt_note, sizeof(pp->smt_note), "%s's cores run one thread each: nothing to split",
			   pp->ua->name);
		return;
	}
	if (!smt) {
		str_printf(pp->smt_note, sizeof(pp->smt_note),
			   "%s has no events telling which threads of a core ran (perf's tables give no "
			   "smt_2t_utilization for it)", pp->ua->name);
		return;
	}
	if (!info->msr_type) {
		str_printf(pp->smt_note, sizeof(pp->smt_note),
			   "the kernel has no msr PMU with a tsc event (%s/msr/events/tsc): the split needs "
			   "the elapsed TSC", "/sys/bus/event_source/devices");
		return;
	}
	for (unsigned i = 0; i < UA_SMT_EVENTS; i++) {
		struct pmu_encoding enc;

		if (pmu_encode_terms(&pp->core->formats, smt->events[i].terms, &enc, err, sizeof(err)) < 0) {
			str_printf(pp->smt_note, sizeof(pp->smt_note), "cannot encode %s (\"%s\"): %s",
				   smt->events[i].name, smt->events[i].terms, err);
			return;
		}
		memcpy(pp->smt_config[i], enc.config, sizeof(enc.config));
	}
	pp->smt_config[UA_SMT_EVENTS][0] = info->msr_tsc;
	pp->smt_msr_type = info->msr_type;
	/* The kernel's time counted: msr/tsc counts it whatever the flags
	 * (the msr PMU takes none), and a thread in the kernel is running. */
	if (!cfg->count_kernel) {
		str_printf(pp->smt_note, sizeof(pp->smt_note),
			   "[collect] count_kernel = false: the split counts the threads' kernel time, which is "
			   "not to be counted");
		return;
	}
	/* The nodes below level 2 asked for: the counters the level-1/2
	 * group leaves are theirs, unless the split is asked for too. */
	if (cfg->level >= 3 && cfg->smt != SMT_ON) {
		str_printf(pp->smt_note, sizeof(pp->smt_note),
			   "[collect] level %u: the counters the level-1/2 group leaves go to the nodes below level 2; "
			   "set [collect] smt = on to count the split too (2 of them, the nodes taking turns in more "
			   "groups)", cfg->level);
		return;
	}
	if (pp->n_groups != 1 && cfg->smt != SMT_ON) {
		str_printf(pp->smt_note, sizeof(pp->smt_note),
			   "%s's level-1/2 events rotate in %u groups here: the split would take running time "
			   "from them (each would run 1/%u of the time instead of 1/%u); set [collect] smt = on "
			   "to count it anyway", pp->ua->name, pp->n_groups, pp->n_groups + 1, pp->n_groups);
		return;
	}
	if (pp->n_groups == 1 && pp->gp_available < pp->gp_needed + 2) {
		str_printf(pp->smt_note, sizeof(pp->smt_note),
			   "its 2 general-purpose events do not fit the %u counters the level-1/2 group leaves",
			   pp->gp_available > pp->gp_needed ? pp->gp_available - pp->gp_needed : 0);
		return;
	}
	pp->smt = true;
	pp->smt_multiplex = pp->n_groups != 1;
	if (pp->smt_multiplex)
		str_printf(pp->smt_note, sizeof(pp->smt_note),
			   "[collect] smt = on: its group joins the %u level-1/2 groups' rotation (each runs 1/%u "
			   "of the time instead of 1/%u)", pp->n_groups, pp->n_groups + 1, pp->n_groups);
}

static void plan_one(const struct pmu_core *core, const struct config *cfg, const struct topo *topo,
		     const struct budget *budget, unsigned idx, const struct cpuset *selected,
		     const struct pmu_info *info, struct plan_pmu *pp)
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
	pp->mode = smt_mode(budget, topo, cfg, &pp->monitor);
	pp->core_share = ua->core_scoped && pp->mode != UA_MODE_NOSMT;

	{
		unsigned want = cfg->level > 2 ? 2 : cfg->level;

		pp->level = want < core->level ? want : core->level;
		if (pp->level < want)
			str_printf(pp->level_note, sizeof(pp->level_note),
				   "level %u requested but %s (%s, pmu_name %s) offers level %u; using level %u",
				   cfg->level, core->name, ua->name, core->pmu_name[0] ? core->pmu_name : "unknown",
				   core->level, pp->level);
	}

	for (unsigned i = 0; i < ua->n_events; i++)
		if (!ua->events[i].refine && ua->events[i].level <= pp->level && core->have[i] &&
		    counted_in(&ua->events[i], pp->mode))
			pp->events[pp->n_events++] = (uint8_t)i;
	pp->n_core = pp->n_events;
	if (cfg->model == MODEL_PERF) {
		unsigned n_refine = 0;

		for (unsigned i = 0; i < ua->n_events; i++) {
			if (!ua->events[i].refine || ua->events[i].level > pp->level ||
			    !counted_in(&ua->events[i], pp->mode))
				continue;
			n_refine++;
			refine_ok &= core->have[i];
		}
		if (n_refine == 0 && (!tma_uses_perf_metrics(ua->formulas) || ua->n_metrics)) {
			/* Formulas of general-purpose events are perf's
			 * whatever the model, and so are the PERF_METRICS
			 * ones of a table without a refinement term (Lunar
			 * Lake's): nothing to refine. */
		} else if (n_refine == 0 || !refine_ok) {
			pp->model = MODEL_HARDWARE;
			str_printf(pp->model_note, sizeof(pp->model_note),
				   n_refine == 0 ? "%s has no refinement events in topdownd's tables; using model hardware"
						 : "the refinement events cannot be encoded with %s's format files; using model hardware",
				   n_refine == 0 ? ua->name : core->name);
		} else {
			for (unsigned i = 0; i < ua->n_events; i++)
				if (ua->events[i].refine && ua->events[i].level <= pp->level &&
				    counted_in(&ua->events[i], pp->mode))
					pp->events[pp->n_events++] = (uint8_t)i;
		}
	}
	plan_groups(budget, idx, pp);
	pp->cats = plan_cats(ua, pp->level);
	plan_smt(pp, cfg, info);
	if (cfg->level >= 3) {
		plan_depth(pp, cfg->level, cfg->depth_multiplex, info);
		pp->drilldown = pp->depth && cfg->drilldown;
	}
}

void plan_make(const struct pmu_info *pmu, const struct topo *topo,
	       const struct config *cfg, const struct budget *budget, struct plan *plan)
{
	const struct cpuset *possible = topo_possible(topo);
	struct budget table;

	memset(plan, 0, sizeof(*plan));
	if (!budget || !budget->known) {
		budget_table(pmu, topo, NULL, &table);
		budget = &table;
	}
	if (cfg->cpus_all) {
		cpuset_and(&plan->isolated, possible, topo_isolated(topo));
		cpuset_andnot(&plan->selected, possible, &plan->isolated);
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
		plan_one(core, cfg, topo, budget, i, &plan->selected, pmu, pp);
		if (cpuset_empty(&pp->monitor))
			continue;
		plan->n_pmus++;
		cpuset_or(&plan->monitor, &plan->monitor, &pp->monitor);
		if (pp->level > plan->level)
			plan->level = pp->level;
		plan->cats |= pp->cats;
	}
	cpuset_andnot(&plan->unsupported, &plan->selected, &plan->monitor);
	for (unsigned i = 0; i < pmu->n_cores; i++)
		if (pmu->core[i].has_cpus && pmu->core[i].level) {
			struct cpuset listed = { 0 }, other;

			for (unsigned k = 0; k < pmu->n_cores; k++)
				if (pmu->core[k].has_cpus)
					cpuset_or(&listed, &listed, &pmu->core[k].cpus);
			/* Not listed: an offline CPU waits for a PMU to list
			 * it; an online one is of another core type, which no
			 * core PMU topdownd counts covers. */
			cpuset_andnot(&other, &plan->unsupported, &listed);
			cpuset_andnot(&plan->unlisted, &other, topo_online(topo));
			cpuset_andnot(&plan->unsupported, &plan->unsupported, &plan->unlisted);
			cpuset_and(&other, &other, topo_online(topo));
			if (!cpuset_empty(&other) && !plan->unsupported_reason[0])
				str_printf(plan->unsupported_reason, sizeof(plan->unsupported_reason), "%s",
					   "online and in the cpus of no core PMU topdownd counts: a core type "
					   "it does not know");
			break;
		}
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

bool plan_fixed_only(const struct plan_pmu *pp)
{
	for (unsigned i = 0; i < pp->n_core; i++) {
		int fixed = ua_event_fixed(&pp->ua->events[pp->order[i]]);

		if (fixed < 0 || (fixed == 1 && pp->fixed1_busy))
			return false;
	}
	return pp->n_core > 0;
}

int plan_layout(const struct plan_pmu *pp, unsigned gp, bool fixed1_busy, bool fixed_only, bool refine,
		struct plan_layout *out)
{
	unsigned n = fixed_only || !refine ? pp->n_core : pp->n_events;
	int r;

	memset(out, 0, sizeof(*out));
	if (fixed_only && !plan_fixed_only(pp))
		return -ENOSPC;
	r = plan_pack(pp->ua, pp->order, n, pp->n_core, fixed_only ? 0 : gp, fixed1_busy, pp->mode,
		      out->events, out->group_start);
	if (r < 0)
		return r;
	out->n_events = n;
	out->n_groups = (unsigned)r;
	return 0;
}

const struct plan_pmu *plan_pmu_of(const struct plan *plan, unsigned cpu)
{
	for (unsigned i = 0; i < plan->n_pmus; i++)
		if (cpuset_test(&plan->pmu[i].monitor, cpu))
			return &plan->pmu[i];
	return NULL;
}
