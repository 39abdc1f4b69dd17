/* SPDX-License-Identifier: MIT */
/* share: the PMU is shared.  What other users of the counters (the NMI
 * watchdog, a pinned profiler, perf stat -a, another agent) leave each
 * CPU, learned from the kernel while running, CPU by CPU: a pinned probe
 * (perfev_pinned_fits) says how many general-purpose counters, and
 * whether fixed counter 1 (arm64: the cycle counter) and fixed counter 3
 * (SLOTS), are free of other users' pinned events; the CPU's events are
 * grouped for what it has (plan_layout), probed again when one of its
 * groups stops running and every few intervals while it has less than
 * the PMU, so that it steps down when a holder arrives and back up when
 * it leaves.  With [collect] pmu_sharing = yield, a CPU whose groups run
 * less than their share (another user's flexible events rotate with
 * them) gives its general-purpose counters back, counting on the fixed
 * counters alone where they give the plan's figures, and takes them
 * again later (the collector's, collector_internal.h). */
#include "collector_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "perfev.h"
#include "util.h"

/* The shortest window anything is concluded from. */
#define WINDOW_MIN_NS (100 * UINT64_C(1000000))
/* How often a CPU with less than the PMU's counters, or none, is probed
 * for more: every this many intervals, at least every STEP_MIN_NS. */
#define STEP_INTERVALS 10
#define STEP_MIN_NS (1000 * UINT64_C(1000000))
/* A CPU that yielded takes its counters again after this many intervals
 * (at least STEP_MIN_NS), doubling while the other user stays, at most
 * RECLAIM_MAX_NS. */
#define RECLAIM_MAX_NS (300 * UINT64_C(1000000000))

static struct log_ratelimit share_rl = LOG_RATELIMIT_INIT(60 * UINT64_C(1000000000), 20);

/* The kernel's multiplexing period of @pm's PMU (its sysfs
 * perf_event_mux_interval_ms; 4 ms when unreadable, the kernel's
 * default: PERF_CPU_HRTIMER). */
static uint64_t read_mux(const struct collector *c, const struct cpmu *pm)
{
	char path[PATH_MAX_LEN];
	long ms;

	str_printf(path, sizeof(path), "bus/event_source/devices/%s/perf_event_mux_interval_ms",
		   pm->pp->core->name);
	if (sysfs_read_int(c->sysfs, path, &ms) < 0 || ms < 1 || ms > 60000)
		ms = 4;
	return (uint64_t)ms * 1000000;
}

/* What a conclusion about @cc's groups waits for: several rotations of
 * the kernel's multiplexing through all of them, never less than
 * WINDOW_MIN_NS (a rotation at 125 ms, as PerfSpect sets it, of 4
 * groups: 2.5 s). */
static uint64_t window_ns(const struct cpmu *pm, const struct ccpu *cc)
{
	uint64_t w = 4 * pm->mux_ns * (cc->lay.n_groups + 1);

	return w > WINDOW_MIN_NS ? w : WINDOW_MIN_NS;
}

static uint64_t step_ns(const struct collector *c)
{
	uint64_t s = STEP_INTERVALS * c->interval_ns;

	return s > STEP_MIN_NS ? s : STEP_MIN_NS;
}

/* coll_learn has something to do for a CPU at @t. */
static void learn_at(struct collector *c, uint64_t t)
{
	if (t < c->learn_at_ns)
		c->learn_at_ns = t;
}

void coll_lay_clear(const struct cpmu *pm, const struct clayout *lay, struct tma_input *in)
{
	for (unsigned k = 0; k < pm->n_vars; k++) {
		bool read = false;

		for (unsigned i = 0; i < lay->n_events && !read; i++)
			read = lay->var[i] == pm->vars[k];
		if (!read)
			in->v[pm->vars[k]] = 0;
	}
}

/* The general-purpose counters @cc's groups may take: what is free, in
 * groups no larger than the kernel accepted. */
static unsigned budget_gp(const struct cpmu *pm, const struct ccpu *cc)
{
	return pm->pp->group_max && cc->gp_free > pm->pp->group_max ? pm->pp->group_max : cc->gp_free;
}

/* @n groups rotate on @cc's CPU: the kernel gives each its turn every
 * perf_event_mux_interval_ms, so an interval shorter than a whole
 * rotation has groups that did not run, and no figures.  Said once per
 * PMU, with the fix. */
static void check_rotation(struct collector *c, struct cpmu *pm, const struct ccpu *cc, unsigned n)
{
	if (n < 2 || pm->rotation_warned || (uint64_t)n * pm->mux_ns <= c->interval_ns)
		return;
	pm->rotation_warned = true;
	log_warning("%s: CPU %d's %u groups rotate every %.0f ms: %.2f s until each has run, longer than the "
		    "%.2f s interval; intervals in which a group did not run have no figures (a [collect] "
		    "interval of %.1f s or more covers a rotation)", pm->pp->core->name, cc->cpu, n,
		    (double)pm->mux_ns / 1e6, (double)n * (double)pm->mux_ns / 1e9, (double)c->interval_ns / 1e9,
		    ceil(2.0 * (double)n * (double)pm->mux_ns / 1e8) / 10.0);
}

void coll_reset_budget(struct collector *c, struct ccpu *cc, int pmu)
{
	struct cpmu *pm = &c->pmus[pmu];

	if (!pm->mux_ns)
		pm->mux_ns = read_mux(c, pm);
	cc->lay = pm->full;
	check_rotation(c, pm, cc, cc->lay.n_groups);
	cc->gp_free = pm->pp->gp_available;
	cc->fixed1_held = cc->slots_held = false;
	cc->yielded = false;
	cc->reclaim_at_ns = cc->reclaim_wait_ns = 0;
	cc->contended_ns = 0;
	cc->contended_reads = 0;
	cc->yield_due = false;
	cc->probed = false; /* probed before its groups are made */
	cc->probe_at_ns = UINT64_MAX;
	memset(cc->norun_ns, 0, sizeof(cc->norun_ns));
	memset(cc->norun_reads, 0, sizeof(cc->norun_reads));
	if (cc->state == CPU_STATE_HELD || cc->state == CPU_STATE_YIELDED)
		coll_set_state(c, cc, CPU_STATE_FAILED);
}

/* ---- probing ---- */

/* The event of @pm's canonical grouping on fixed counter @fixed, or -1. */
static int fixed_event(const struct cpmu *pm, int fixed)
{
	for (unsigned i = 0; i < pm->full.n_events; i++)
		if (ua_event_fixed(&pm->pp->ua->events[pm->full.events[i]]) == fixed)
			return pm->full.events[i];
	return -1;
}

/* A pinned group on @cc's CPU of @lead (an event index, -1: none) and
 * @n_gp general-purpose probe events @gp: 1 fits, 0 not, -errno. */
static int fits(const struct collector *c, const struct ccpu *cc, int lead, int gp, unsigned n_gp)
{
	const struct pmu_core *core = c->pmus[cc->pmu].pp->core;
	uint64_t configs[16][3];
	unsigned n = 0;

	if (lead >= 0)
		memcpy(configs[n++], core->enc[lead].config, sizeof(configs[0]));
	for (unsigned i = 0; i < n_gp && n < 16; i++)
		memcpy(configs[n++], core->enc[gp].config, sizeof(configs[0]));
	if (n == 0)
		return 1;
	return perfev_pinned_fits(core->type, (const uint64_t (*)[3])configs, n, c->count_kernel,
				  c->count_guest, cc->cpu);
}

/* The largest number of general-purpose counters, at most @max, a
 * pinned group of probe events @gp takes on @cc's CPU: -errno when the
 * kernel will not say. */
static int free_gp(const struct collector *c, const struct ccpu *cc, int gp, unsigned max)
{
	unsigned lo = 0, hi = max;
	int r = fits(c, cc, -1, gp, max);

	if (r != 0)
		return r < 0 ? r : (int)max;
	/* lo fits, hi does not. */
	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;

		r = fits(c, cc, -1, gp, mid);
		if (r < 0)
			return r;
		if (r)
			lo = mid;
		else
			hi = mid;
	}
	return (int)lo;
}

/* What was learned on @cpu: held back until coll_learned_flush() (or a
 * different finding on the same PMU) so that the CPUs that learned the
 * same make one line. */
static void learned(struct collector *c, struct cpmu *pm, int cpu, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void flush_pmu(struct collector *c, struct cpmu *pm)
{
	char cpus[256];
	unsigned n = cpuset_count(&pm->learned_cpus);

	if (!pm->learned[0])
		return;
	if (cpuset_format(&pm->learned_cpus, cpus, sizeof(cpus)) >= sizeof(cpus))
		str_printf(cpus, sizeof(cpus), "%u of them", n);
	str_printf(pm->reason, sizeof(pm->reason), "CPU%s %s: %s", n == 1 ? "" : "s", cpus, pm->learned);
	log_ratelimited(&share_rl, LOG_LEVEL_INFO, 0, "%s: %s", pm->pp->core->name, pm->reason);
	pm->learned[0] = '\0';
	cpuset_zero(&pm->learned_cpus);
	c->gen++;
}

static void learned(struct collector *c, struct cpmu *pm, int cpu, const char *fmt, ...)
{
	char text[SNAP_REASON];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (strcmp(text, pm->learned) != 0) {
		flush_pmu(c, pm);
		str_printf(pm->learned, sizeof(pm->learned), "%s", text);
	}
	cpuset_set(&pm->learned_cpus, (unsigned)cpu);
}

void coll_learned_flush(struct collector *c)
{
	for (unsigned p = 0; p < c->n_pmus; p++)
		flush_pmu(c, &c->pmus[p]);
}

/* Groups @cc for what it has now: the plan's grouping, a smaller one,
 * the fixed counters' alone (yielded), or none (held, yielded). */
static void regroup(struct collector *c, struct ccpu *cc, unsigned gp, bool fixed1_busy, bool fixed_only)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	struct clayout lay;
	bool none = cc->slots_held && fixed_event(pm, 3) >= 0;

	if (!none && coll_layout(pm, gp, fixed1_busy, fixed_only, &lay) < 0)
		none = true;
	if (none) {
		if (cc->fd[0] >= 0)
			coll_close_group(c, cc);
		coll_set_state(c, cc, cc->yielded ? CPU_STATE_YIELDED : CPU_STATE_HELD);
		return;
	}
	if (cc->state == CPU_STATE_HELD || cc->state == CPU_STATE_YIELDED ||
	    lay.n_events != cc->lay.n_events || lay.n_groups != cc->lay.n_groups ||
	    memcmp(lay.events, cc->lay.events, lay.n_events) != 0 ||
	    memcmp(lay.group_start, cc->lay.group_start, lay.n_groups + 1) != 0) {
		bool was_open = cc->fd[0] >= 0;

		if (was_open)
			coll_close_group(c, cc);
		cc->lay = lay;
		check_rotation(c, pm, cc, lay.n_groups);
		/* Opened again at once (the collector's revisit, or the
		 * opening it is in the middle of); its totals go on. */
		if (was_open || cc->state == CPU_STATE_HELD || cc->state == CPU_STATE_YIELDED) {
			coll_set_state(c, cc, CPU_STATE_FAILED);
			cc->retry_at_ns = 0;
			cc->regrouped = true;
		}
	} else {
		cc->lay.gp = lay.gp;
		cc->lay.fixed1_busy = lay.fixed1_busy;
	}
	memset(cc->norun_ns, 0, sizeof(cc->norun_ns));
	memset(cc->norun_reads, 0, sizeof(cc->norun_reads));
	cc->contended_ns = 0;
	cc->contended_reads = 0;
}

bool coll_probe_cpu(struct collector *c, struct ccpu *cc, uint64_t now)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	const struct plan_pmu *pp = pm->pp;
	int gp_ev = budget_gp_event(pp->core, pp->mode), cycles = fixed_event(pm, 1), slots = fixed_event(pm, 3);
	unsigned max = pp->gp_total < 15 ? pp->gp_total : 15, gp;
	bool fixed1_held = false, slots_held = false, changed;
	char holders[200] = "";
	int n;

	cc->probed = true;
	cc->probe_at_ns = UINT64_MAX;
	if (gp_ev < 0 || max == 0)
		return false;	/* nothing to probe with: the plan's figures stand */
	n = free_gp(c, cc, gp_ev, max);
	if (n < 0) {
		log_ratelimited(&share_rl, LOG_LEVEL_DEBUG, n, "CPU %d: the counter probe failed: %m", cc->cpu);
		return false;
	}
	/* Fixed counter 1 is free when the cycles take it beside every free
	 * general-purpose counter (the kernel puts them on a general-purpose
	 * one otherwise, which is not there). */
	if (cycles >= 0 && !pp->fixed1_busy)
		fixed1_held = fits(c, cc, cycles, gp_ev, (unsigned)n) == 0;
	if (slots >= 0)
		slots_held = fits(c, cc, slots, gp_ev, 0) == 0;
	gp = (unsigned)n;
	if (pp->group_max && gp > pp->group_max)
		gp = pp->group_max;
	changed = (unsigned)n != cc->gp_free || fixed1_held != cc->fixed1_held || slots_held != cc->slots_held;
	if (changed && ((unsigned)n < pp->gp_total || fixed1_held || slots_held))
		coll_perf_holders(holders, sizeof(holders));
	if (changed) {
		if (slots_held)
			learned(c, pm, cc->cpu, "another user holds fixed counter 3 (SLOTS)%s%s%s: no TopDown there "
				"while it does", holders[0] ? " (" : "", holders, holders[0] ? ")" : "");
		else if ((unsigned)n < pp->gp_total)
			learned(c, pm, cc->cpu, "another user holds %u of %u general-purpose counters%s%s%s%s; %u left",
				pp->gp_total - (unsigned)n, pp->gp_total,
				fixed1_held ? (pp->ua->arch ? " and the cycle counter" : " and fixed counter 1") : "",
				holders[0] ? " (" : "", holders, holders[0] ? ")" : "", (unsigned)n);
		else if (fixed1_held)
			learned(c, pm, cc->cpu, "another user holds %s%s%s%s; every general-purpose counter is free "
				"(%u), the cycles counted on one of them",
				pp->ua->arch ? "the cycle counter" : "fixed counter 1 (the cycles)",
				holders[0] ? " (" : "", holders, holders[0] ? ")" : "", (unsigned)n);
		else
			learned(c, pm, cc->cpu, "every counter is free again (%u general-purpose)", (unsigned)n);
	}
	cc->gp_free = (unsigned)n;
	cc->fixed1_held = fixed1_held;
	cc->slots_held = slots_held;
	regroup(c, cc, gp, pp->fixed1_busy || fixed1_held, cc->yielded);
	/* Less than the PMU: looked at again, to take more when it is there. */
	if ((unsigned)n < pp->gp_total || fixed1_held || slots_held) {
		cc->probe_at_ns = now + step_ns(c);
		learn_at(c, cc->probe_at_ns);
	}
	return changed;
}

/* ---- evidence from the reads ---- */

void coll_norun(struct collector *c, struct ccpu *cc, unsigned g, uint64_t enabled_ns, uint64_t now)
{
	struct cpmu *pm = &c->pmus[cc->pmu];

	cc->norun_ns[g] += enabled_ns;
	cc->norun_reads[g]++;
	if (cc->norun_ns[g] < window_ns(pm, cc) || cc->norun_reads[g] < 2)
		return;
	/* A group of its own kept off the counters for several rotations:
	 * another user's pinned events; the probe says which counters. */
	cc->norun_ns[g] = 0;
	cc->norun_reads[g] = 0;
	cc->probe_at_ns = now;
	learn_at(c, now);
}

/* [collect] pmu_sharing = yield: @cc gives its general-purpose counters
 * back (the fixed counters alone where they give the plan's figures). */
static void yield(struct collector *c, struct ccpu *cc, uint64_t now)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	uint64_t first = step_ns(c);

	cc->yielded = true;
	cc->reclaim_wait_ns = cc->reclaim_wait_ns ? 2 * cc->reclaim_wait_ns : first;
	if (cc->reclaim_wait_ns > RECLAIM_MAX_NS)
		cc->reclaim_wait_ns = RECLAIM_MAX_NS;
	cc->reclaim_at_ns = now + cc->reclaim_wait_ns;
	learn_at(c, cc->reclaim_at_ns);
	regroup(c, cc, cc->lay.gp, cc->lay.fixed1_busy, true);
	learned(c, pm, cc->cpu, "another user's events wanted the counters (topdownd's ran %.0f%% of the time); "
		"%s, for %.0f s ([collect] pmu_sharing = yield)",
		100.0 * cc->contended_share,
		cc->state == CPU_STATE_YIELDED ? "its groups are closed"
					       : "counting on the fixed counters alone, model hardware",
		(double)cc->reclaim_wait_ns / 1e9);
}

void coll_share_changed(struct collector *c, struct ccpu *cc, double share, uint64_t enabled_ns, uint64_t now)
{
	struct cpmu *pm = &c->pmus[cc->pmu];

	if (share >= COLL_SHARE_MIN) {
		cc->contended_ns = 0;
		cc->contended_reads = 0;
		return;
	}
	cc->contended_ns += enabled_ns;
	cc->contended_reads++;
	cc->contended_share = share;
	if (cc->contended_ns >= window_ns(pm, cc) && cc->contended_reads >= 2) {
		cc->yield_due = true;
		learn_at(c, now);
	}
}

/* When coll_learn has something to do for @cc: a yield, a reclaim, a
 * probe (UINT64_MAX: nothing). */
static uint64_t due_at(const struct ccpu *cc, uint64_t now)
{
	uint64_t t = cc->probe_at_ns;

	if (cc->yield_due)
		return now;
	if (cc->yielded && cc->reclaim_at_ns < t)
		t = cc->reclaim_at_ns;
	return t;
}

void coll_learn(struct collector *c, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	if (now >= c->mux_at_ns) {
		for (unsigned p = 0; p < c->n_pmus; p++)
			c->pmus[p].mux_ns = read_mux(c, &c->pmus[p]);
		c->mux_at_ns = now + 10 * step_ns(c);
	}
	/* Nothing due before learn_at_ns (learn_at keeps it at the earliest
	 * of every CPU's due_at): no walk over the CPUs every interval. */
	if (now < c->learn_at_ns)
		return;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct ccpu *cc = &c->cpus[i];

		if (cc->pmu < 0)
			continue;
		if (cc->selected && cc->state != CPU_STATE_UNSUPPORTED && cc->state != CPU_STATE_OFFLINE &&
		    cc->state != CPU_STATE_ISOLATED && cc->probed) {
			if (cc->yield_due) {
				cc->yield_due = false;
				yield(c, cc, now);
			} else if (cc->yielded && now >= cc->reclaim_at_ns) {
				/* Takes its counters again: if the other user
				 * is still there, its groups run less than
				 * their share again. */
				struct cpmu *pm = &c->pmus[cc->pmu];

				cc->yielded = false;
				regroup(c, cc, budget_gp(pm, cc), pm->pp->fixed1_busy || cc->fixed1_held, false);
				learned(c, pm, cc->cpu, "takes its general-purpose counters back");
			}
			if (now >= cc->probe_at_ns)
				coll_probe_cpu(c, cc, now);
		}
		/* A CPU not to look at now is looked at again when it is due,
		 * in case it is then. */
		if (due_at(cc, now) < next)
			next = due_at(cc, now);
	}
	c->learn_at_ns = next;
}

/* One kind of CPU for coll_describe_free: what other users leave it. */
static bool same_free(const struct ccpu *a, const struct ccpu *b)
{
	return a->gp_free == b->gp_free && a->fixed1_held == b->fixed1_held && a->slots_held == b->slots_held;
}

void coll_describe_free(const struct collector *c, unsigned p, char *buf, size_t len)
{
	const struct cpmu *pm = &c->pmus[p];
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < c->n_cpus; i++) {
		const struct ccpu *a = &c->cpus[i];
		struct cpuset same;
		char cpus[256];
		bool first = true;

		if (a->pmu != (int)p || !a->probed)
			continue;
		/* The first CPU of its kind describes it. */
		for (unsigned j = 0; j < i && first; j++)
			first = !(c->cpus[j].pmu == (int)p && c->cpus[j].probed && same_free(&c->cpus[j], a));
		if (!first)
			continue;
		cpuset_zero(&same);
		for (unsigned j = i; j < c->n_cpus; j++)
			if (c->cpus[j].pmu == (int)p && c->cpus[j].probed && same_free(&c->cpus[j], a))
				cpuset_set(&same, (unsigned)c->cpus[j].cpu);
		cpuset_format(&same, cpus, sizeof(cpus));
		if (pm->pp->gp_total == 0) {
			/* Nothing to learn of counters it does not use. */
			at += (size_t)snprintf(buf + at, at < len ? len - at : 0,
					       "%sno general-purpose counter used%s%s on CPU%s %s", at ? "; " : "",
					       a->fixed1_held ? ", fixed counter 1 held" : "",
					       a->slots_held ? ", SLOTS held" : "", cpuset_count(&same) == 1 ? "" : "s",
					       cpus);
			continue;
		}
		at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%u of %u general-purpose%s%s on CPU%s %s",
				       at ? "; " : "", a->gp_free, pm->pp->gp_total,
				       a->fixed1_held ? (pm->pp->ua->arch ? ", the cycle counter held" :
						 ", fixed counter 1 held") : "",
				       a->slots_held ? ", SLOTS held" : "",
				       cpuset_count(&same) == 1 ? "" : "s", cpus);
	}
	if (at >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

