/* SPDX-License-Identifier: MIT */
/* deep: the TopDown tree below level 2 (issue 42) on the counters the
 * level-1/2 group leaves, per CPU, core, package and host.
 *
 * The nodes' events (hw/depth.c: perf's expressions, perf's encodings)
 * are packed in groups that fit beside the level-1/2 group.  Every group
 * is opened disabled on every CPU, and one is enabled per interval, the
 * same on every CPU, the next one at each collection: the kernel never
 * rotates them against the level-1/2 group, which keeps its counters and
 * its running time whole ("level 1 and 2 never lose").  Each event's
 * count per running nanosecond is kept from the last interval its group
 * ran; a CPU's node values in an interval are perf's expressions on the
 * level-1/2 counts of the interval and the depth events' rates times the
 * interval, once every group has run within the last rotation.  A node's
 * value then is what perf's multiplexed counts give over a rotation: the
 * same on a steady workload; its measured seconds say how much of the
 * interval its own events were counted.  Domains sum their CPUs' counts,
 * as perf aggregates, and a domain's nodes are perf's expressions on the
 * sums.
 *
 * With [collect] drilldown only the subtree under each package's
 * bottleneck is counted (the CPUs of no known package follow the host's):
 * each subtree's nodes have groups of their own, fewer, so that its values
 * come back sooner; the bottleneck is the largest level-2 category with
 * nodes (not retiring's children), and another one takes over once it led
 * by DRILL_MARGIN for DRILL_VOTES intervals in a row (hysteresis: a package
 * near a tie does not flip every interval).  Nodes outside a package's
 * subtree have no value there; the host has values when every package
 * drills the same subtree.
 *
 * A CPU whose depth groups do not run whole (another user's events), or
 * whose level-1/2 grouping is not the plan's (it gave counters back),
 * counts no depth until its next retry: depth takes only what nobody
 * else wants.
 *
 * Where the level-1/2 events rotate in several groups already (Ice Lake,
 * Skylake-SP, E-cores), only with [collect] depth_multiplex: the enabled
 * depth group joins their rotation, on every general-purpose counter, as
 * perf stat -M TopdownL3 does; its events' rates are per running
 * nanosecond as before, its measured seconds its share of the interval,
 * and that share counts with the level-1/2 groups' when the CPU asks
 * whether another user takes counters (coll_share). */
#include "collector_internal.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "perfev.h"
#include "util.h"

#define DEEP_READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
			  PERF_FORMAT_TOTAL_TIME_RUNNING)
/* A CPU whose depth groups could not run is tried again after this. */
#define DEEP_RETRY_NS (60 * UINT64_C(1000000000))

/* Why a CPU counted no node in an interval, as the tree's reason says. */
enum without {
	WITHOUT_HELD,       /* another user's pinned events hold its counters */
	WITHOUT_WAITING,    /* gave its groups up, retrying after DEEP_RETRY_NS */
	WITHOUT_REGROUPED,  /* its level-1/2 grouping is not the plan's */
	WITHOUT_STARTING,   /* its groups have not all had a turn yet */
	WITHOUT_UNDECIDED,  /* the drill-down has no subtree for it yet */
	WITHOUT_NO_FIGURES, /* its level-1/2 figures of the interval are missing */
	WITHOUT_COUNT
};

static const char *const without_said[WITHOUT_COUNT] = {
	[WITHOUT_HELD] = "whose counters another user's pinned events hold",
	[WITHOUT_WAITING] = "retrying their groups 60 s after they could not run whole (or be opened or switched)",
	[WITHOUT_REGROUPED] = "whose level-1/2 groups gave counters back",
	[WITHOUT_STARTING] = "whose groups have not all had their turn yet",
	[WITHOUT_UNDECIDED] = "whose package's drill-down has not chosen a subtree yet",
	[WITHOUT_NO_FIGURES] = "without level-1/2 figures (not read, or not trusted)",
};
/* The drill-down's hysteresis: another subtree takes over once its
 * level-2 category led the current one's by this share of the slots for
 * this many intervals in a row. */
#define DRILL_MARGIN 0.02
#define DRILL_VOTES 3

/* Groups taking turns, one per interval, and the nodes they give values
 * to: every node's (fixed depth), or one level-2 category's subtree. */
struct rot {
	const char *subtree;  /* perf's name of the category, NULL: every node */
	int cat;              /* its td_cat, -1: none */
	unsigned n_groups, n_events;
	struct depth_group groups[DEPTH_GROUPS_MAX];
	bool node_in[DEPTH_NODES_MAX];
};

/* What the CPUs of a package (the last: of no known package) count. */
struct drill {
	int rot;         /* into rots[], -1 before the first choice */
	unsigned cur;    /* its group counting since the last collection */
	int cand;        /* the rotation that would take over, and for how many */
	unsigned votes;  /* intervals in a row */
};

struct cdeep {
	struct depth *d;
	unsigned n_rots;
	struct rot rots[TD_CAT_COUNT + 1];
	bool drilldown;
	struct drill *drills; /* n_cpus + 1: every package that can be, then none */
	unsigned n_events;
	unsigned n_vars;
	double *vars;            /* depth_eval's variables */
	unsigned n_nodes;
	unsigned node_n_events[DEPTH_NODES_MAX];
	/* A row's counts, compact: the level-1/2 variables the expressions
	 * read, then the depth events (n_in in all). */
	unsigned n_main, n_in;
	enum td_event main[33];
	char reason[SNAP_REASON];
	/* The events that are retire latencies (DEPTH_EV_RETLAT). */
	unsigned n_lat;
	uint8_t lat[DEPTH_EVENTS_MAX];
	/* CPUs of the PMU that counted no depth this interval, by why. */
	unsigned without[WITHOUT_COUNT];
	bool multiplex;          /* [collect] depth_multiplex: in the level-1/2 rotation */
};

struct deep_cpu {
	bool open, have_main;
	int rot;                                /* the rotation its open groups are of */
	uint64_t retry_at_ns;
	int fd[DEPTH_EVENTS_MAX];
	uint64_t prev[DEPTH_EVENTS_MAX];
	double rate[DEPTH_EVENTS_MAX];          /* counts per running ns */
	uint64_t g_enabled[DEPTH_GROUPS_MAX], g_running[DEPTH_GROUPS_MAX];
	uint64_t g_seq[DEPTH_GROUPS_MAX];       /* the interval it last ran whole, 0: never */
	double span_ns;                         /* the level-1/2 group's interval */
	double share;                           /* its group's running share, last interval */
	double main_v[TD_EV_COUNT];
};

/* ---- plan ---- */

static void deep_free_pmu(struct cpmu *pm)
{
	if (!pm->deep)
		return;
	depth_free(pm->deep->d);
	free(pm->deep->vars);
	free(pm->deep->drills);
	free(pm->deep);
	pm->deep = NULL;
}

/* The counters the level-1/2 grouping @lay leaves: general-purpose ones
 * (*@gp), and the fixed counters (plan_depth_main()'s mask, returned)
 * nothing of it takes. */
static unsigned left_by(const struct cpmu *pm, unsigned *gp, struct depth_main *main)
{
	const struct clayout *lay = &pm->full;
	bool on_fixed1 = false;
	unsigned used, taken = 0;

	if (pm->pp->depth_multiplex) {
		/* A group of the rotation: every counter while it runs. */
		*gp = pm->pp->gp_available;
		return plan_depth_main(pm->pp, 0, main);
	}
	used = coll_group_gp(pm, lay, 0, lay->group_start[1], &on_fixed1);
	/* The SMT split's group beside it (smt.c). */
	if (pm->pp->smt)
		used += UA_SMT_EVENTS - 1;

	*gp = pm->pp->gp_available > used ? pm->pp->gp_available - used : 0;
	if (on_fixed1)
		taken |= DEPTH_FIXED(1);
	for (unsigned i = 0; i < lay->n_events; i++) {
		int f = ua_event_fixed(&pm->pp->ua->events[lay->events[i]]);

		if (f >= 0 && f <= 2 && f != 1)
			taken |= DEPTH_FIXED(f);
	}
	return plan_depth_main(pm->pp, taken, main);
}

/* The level-2 category perf calls @name ("tma_memory_bound"), or -1. */
static int cat_of(const char *name)
{
	for (int k = 0; k < TD_CAT_COUNT; k++)
		if (td_cat[k].level == 2 && strcmp(td_cat[k].name, depth_short(name)) == 0)
			return k;
	return -1;
}

static int pack_rot(struct cdeep *dp, struct rot *r, const char *subtree, unsigned gp, unsigned fixed)
{
	int n = depth_pack_subtree(dp->d, subtree, gp, fixed, r->groups, DEPTH_GROUPS_MAX);

	if (n <= 0)
		return -ENOSPC;
	r->subtree = subtree;
	r->cat = subtree ? cat_of(subtree) : -1;
	r->n_groups = (unsigned)n;
	r->n_events = 0;
	for (int g = 0; g < n; g++)
		r->n_events += r->groups[g].n;
	for (unsigned i = 0; i < depth_n_nodes(dp->d); i++)
		r->node_in[i] = !subtree || strcmp(depth_node_subtree(dp->d, i), subtree) == 0;
	return 0;
}

/* The rotations: every node's, or one per level-2 category with nodes
 * (drill-down).  0 or -ENOSPC. */
static int make_rots(struct cdeep *dp, unsigned gp, unsigned fixed)
{
	dp->n_rots = 0;
	if (!dp->drilldown) {
		dp->n_rots = 1;
		return pack_rot(dp, &dp->rots[0], NULL, gp, fixed);
	}
	for (unsigned i = 0; i < depth_n_nodes(dp->d); i++) {
		const char *sub = depth_node_subtree(dp->d, i);
		bool seen = false;

		for (unsigned k = 0; k < dp->n_rots; k++)
			seen |= strcmp(dp->rots[k].subtree, sub) == 0;
		if (seen || cat_of(sub) < 0)
			continue;
		if (pack_rot(dp, &dp->rots[dp->n_rots], sub, gp, fixed) < 0)
			return -ENOSPC;
		dp->n_rots++;
	}
	return dp->n_rots ? 0 : -ENOSPC;
}

static unsigned rots_min(const struct cdeep *dp)
{
	unsigned m = UINT32_MAX;

	for (unsigned k = 0; k < dp->n_rots; k++)
		if (dp->rots[k].n_groups < m)
			m = dp->rots[k].n_groups;
	return m;
}

static unsigned rots_max(const struct cdeep *dp)
{
	unsigned m = 0;

	for (unsigned k = 0; k < dp->n_rots; k++)
		if (dp->rots[k].n_groups > m)
			m = dp->rots[k].n_groups;
	return m;
}

static int deep_plan_pmu(struct collector *c, struct cpmu *pm)
{
	const struct plan_pmu *pp = pm->pp;
	struct depth_main main = { 0 };
	struct cdeep *dp;
	char why[PMU_REASON_MAX];
	unsigned gp, fixed, n_opened;
	const char *fixed_said;
	int r, n;

	if (!pp->depth_table || pp->depth < 3)
		return 0;
	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return -ENOMEM;
	for (unsigned i = 0; i < pm->full.n_events && main.n < 32; i++) {
		main.names[main.n] = coll_event_name(pm, &pm->full, i);
		main.vars[main.n++] = pm->full.var[i];
	}
	fixed = left_by(pm, &gp, &main);
	r = depth_new(pp->depth_table, pp->depth, &pp->core->formats, &main, &dp->d, why, sizeof(why));
	if (r < 0) {
		log_warning("%s: no TopDown node below level 2: %s", pp->core->name, why);
		free(dp);
		return r;
	}
	dp->drilldown = pp->drilldown;
	dp->multiplex = pp->depth_multiplex;
	n = make_rots(dp, gp, fixed);
	if (n < 0) {
		log_warning("%s: the events below level 2 do not fit the %u general-purpose counters the "
			    "level-1/2 group leaves; no TopDown node below level 2", pp->core->name, gp);
		depth_free(dp->d);
		free(dp);
		return -ENOSPC;
	}
	dp->drills = calloc((size_t)c->n_cpus + 1, sizeof(*dp->drills));
	if (!dp->drills) {
		depth_free(dp->d);
		free(dp);
		return -ENOMEM;
	}
	for (unsigned i = 0; i <= c->n_cpus; i++)
		dp->drills[i] = (struct drill){ .rot = dp->drilldown ? -1 : 0, .cand = -1 };
	dp->n_events = depth_n_events(dp->d);
	dp->n_vars = depth_n_vars(dp->d);
	dp->n_nodes = depth_n_nodes(dp->d);
	{
		const enum td_event *mv;
		bool slots = false;

		dp->n_main = depth_main_vars(dp->d, &mv);
		memcpy(dp->main, mv, dp->n_main * sizeof(*mv));
		/* The slots weigh a row's nodes, read or not. */
		for (unsigned k = 0; k < dp->n_main; k++)
			slots |= dp->main[k] == TD_EV_SLOTS;
		if (!slots)
			dp->main[dp->n_main++] = TD_EV_SLOTS;
	}
	dp->n_in = dp->n_main + dp->n_events;
	static_assert(DEPTH_EVENTS_MAX <= 256, "event indexes fit cdeep.lat");
	for (unsigned e = 0; e < dp->n_events; e++)
		if (depth_event(dp->d, e)->kind == DEPTH_EV_RETLAT)
			dp->lat[dp->n_lat++] = (uint8_t)e;
	dp->vars = calloc(dp->n_vars, sizeof(double));
	if (!dp->vars) {
		depth_free(dp->d);
		free(dp->drills);
		free(dp);
		return -ENOMEM;
	}
	/* A node's events in groups (duration_time is in none). */
	for (unsigned i = 0; i < dp->n_nodes; i++)
		for (unsigned e = 0; e < dp->n_events; e++)
			dp->node_n_events[i] += depth_set_has(depth_node_events(dp->d, i), e) &&
						(depth_event(dp->d, e)->kind == DEPTH_EV_CORE ||
						 depth_event(dp->d, e)->kind == DEPTH_EV_MSR);
	{
		bool on1 = false, on2 = false;

		for (unsigned e = 0; e < dp->n_events; e++) {
			on1 |= depth_event(dp->d, e)->fixed == 1 && (fixed & DEPTH_FIXED(1));
			on2 |= depth_event(dp->d, e)->fixed == 2;
		}
		n_opened = depth_n_opened(dp->d);
		fixed_said = on1 && on2 ? " and fixed counters 1 and 2" : on1 ? " and fixed counter 1"
			   : on2 ? " and fixed counter 2" : "";
	}
	str_printf(dp->reason, sizeof(dp->reason), "%s", why);
	if (dp->drilldown)
		log_info("%s: %u TopDown nodes of levels 3 to %u from %s under %u level-2 categories, each "
			 "package drilling into its bottleneck's (%u to %u groups on %u general-purpose "
			 "counter%s%s, one per interval)%s%s", pp->core->name, dp->n_nodes, pp->depth,
			 pp->depth_table->source, dp->n_rots, rots_min(dp), rots_max(dp), gp, gp == 1 ? "" : "s",
			 fixed_said, why[0] ? "; " : "", why);
	else
		log_info("%s: %u TopDown nodes of levels 3 to %u from %s, %u events in %u groups on %u "
			 "general-purpose counter%s%s, one group per interval%s%s", pp->core->name, dp->n_nodes,
			 pp->depth, pp->depth_table->source, n_opened, dp->rots[0].n_groups, gp, gp == 1 ? "" : "s",
			 fixed_said, why[0] ? "; " : "", why);
	pm->deep = dp;
	return 0;
}

void coll_deep_close(struct collector *c, struct ccpu *cc)
{
	struct deep_cpu *dc = c->dcpu ? &c->dcpu[cc - c->cpus] : NULL;

	if (!dc || !dc->open)
		return;
	for (int i = DEPTH_EVENTS_MAX - 1; i >= 0; i--)
		if (dc->fd[i] >= 0) {
			close(dc->fd[i]);
			c->fds_open--;
			dc->fd[i] = -1;
		}
	dc->open = false;
	dc->have_main = false;
	memset(dc->g_seq, 0, sizeof(dc->g_seq));
}

void coll_deep_drop(struct collector *c)
{
	for (unsigned i = 0; c->dcpu && i < c->n_cpus; i++)
		coll_deep_close(c, &c->cpus[i]);
	for (unsigned p = 0; p < PMU_CORE_MAX; p++)
		deep_free_pmu(&c->pmus[p]);
}

int coll_deep_plan(struct collector *c)
{
	bool any = false;
	int r = 0;

	for (unsigned p = 0; p < c->n_pmus; p++) {
		int rp = deep_plan_pmu(c, &c->pmus[p]);

		if (rp == -ENOMEM)
			r = rp;
		any |= c->pmus[p].deep != NULL;
	}
	if (any && !c->dcpu) {
		size_t rows = DEEP_ROWS(c);

		c->dcpu = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->dcpu));
		c->deep_rows = calloc(rows * DEEP_ROW_LEN, sizeof(double));
		c->deep_used = calloc(rows, sizeof(bool));
		c->deep_rot = calloc(rows, sizeof(int));
		c->deep_cur = calloc(rows, sizeof(unsigned));
		if (!c->dcpu || !c->deep_rows || !c->deep_used || !c->deep_rot || !c->deep_cur) {
			free(c->dcpu);
			free(c->deep_rows);
			free(c->deep_used);
			free(c->deep_rot);
			free(c->deep_cur);
			c->dcpu = NULL;
			c->deep_rows = NULL;
			c->deep_used = NULL;
			c->deep_rot = NULL;
			c->deep_cur = NULL;
			for (unsigned p = 0; p < PMU_CORE_MAX; p++)
				deep_free_pmu(&c->pmus[p]);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < c->n_cpus; i++)
			for (unsigned e = 0; e < DEPTH_EVENTS_MAX; e++)
				c->dcpu[i].fd[e] = -1;
	}
	c->deep_gen++;
	return r;
}

void coll_deep_free(struct collector *c)
{
	coll_deep_drop(c);
	free(c->deep_rows);
	free(c->deep_used);
	free(c->deep_rot);
	free(c->deep_cur);
	free(c->dcpu);
}

/* ---- per CPU ---- */

unsigned coll_deep_events(const struct cpmu *pm)
{
	unsigned n = 0;

	for (unsigned k = 0; pm->deep && k < pm->deep->n_rots; k++)
		if (pm->deep->rots[k].n_events > n)
			n = pm->deep->rots[k].n_events;
	return n;
}

double coll_deep_share(const struct collector *c, const struct ccpu *cc)
{
	const struct cpmu *pm = &c->pmus[cc->pmu];
	const struct deep_cpu *dc = c->dcpu ? &c->dcpu[cc - c->cpus] : NULL;

	return pm->deep && pm->deep->multiplex && dc && dc->open ? dc->share : 0;
}

void coll_deep_keep(struct collector *c, const struct ccpu *cc, const struct tma_input *in, double span_ns)
{
	struct deep_cpu *dc = &c->dcpu[cc - c->cpus];

	memcpy(dc->main_v, in->v, sizeof(dc->main_v));
	dc->span_ns = span_ns;
	dc->have_main = true;
}

/* Opens @rot's groups on @cc, every one disabled. */
static int open_deep(struct collector *c, const struct cpmu *pm, const struct rot *rot, struct ccpu *cc,
		     struct deep_cpu *dc)
{
	if (c->warned_fds || c->deep_fds_short || c->fds_open + rot->n_events > c->fd_budget)
		return -EMFILE;
	for (unsigned g = 0; g < rot->n_groups; g++) {
		const struct depth_group *grp = &rot->groups[g];

		for (unsigned k = 0; k < grp->n; k++) {
			const struct depth_event *ev = depth_event(pm->deep->d, grp->ev[k]);
			struct perf_event_attr attr;
			int fd;

			/* The msr PMU takes no exclude flag (its TSC counts
			 * wall time): as the SMT split opens it (smt.c). */
			if (ev->kind == DEPTH_EV_MSR)
				perfev_attr(&attr, ev->type, ev->enc.config, true, true, DEEP_READ_FORMAT, false);
			else
				perfev_attr(&attr, pm->pp->core->type, ev->enc.config, c->count_kernel,
					    c->count_guest, DEEP_READ_FORMAT, k == 0);
			fd = perfev_open(&attr, cc->cpu, k == 0 ? -1 : dc->fd[grp->ev[0]]);
			if (fd < 0) {
				dc->open = true;
				coll_deep_close(c, cc);
				return fd;
			}
			dc->fd[grp->ev[k]] = fd;
			c->fds_open++;
		}
		dc->g_enabled[g] = dc->g_running[g] = 0;
	}
	memset(dc->prev, 0, sizeof(dc->prev));
	memset(dc->g_seq, 0, sizeof(dc->g_seq));
	/* duration_time: one nanosecond is 1e-9 of its seconds, whatever
	 * runs (vars_of: rate times the interval). */
	for (unsigned e = 0; e < pm->deep->n_events; e++)
		if (depth_event(pm->deep->d, e)->kind == DEPTH_EV_TIME)
			dc->rate[e] = 1e-9;
	dc->rot = (int)(rot - pm->deep->rots);
	dc->open = true;
	return 0;
}

/* Whether @cc has the counters the plan's depth groups were packed for,
 * as share.c last learned them (its pinned probe): every general-purpose
 * counter of the plan, and fixed counter 1 where the groups take it.
 * Where another user's pinned events hold some, a depth group could not
 * go on, and a flexible group that cannot go on stops the kernel from
 * scheduling those after it until the next rotation (merge_sched_in(),
 * kernel/events/core.c): the level-1/2 group would lose its turns (12 %
 * of an interval run under the fake, 7 of 8 counters held).  Such a CPU
 * counts no depth until they are free: share.c probes it again every few
 * intervals. */
static bool deep_fits(const struct cpmu *pm, const struct ccpu *cc)
{
	if (cc->gp_free < pm->pp->gp_available)
		return false;
	if (cc->fixed1_held)
		for (unsigned e = 0; e < pm->deep->n_events; e++)
			if (depth_event(pm->deep->d, e)->fixed == 1)
				return false;
	return true;
}

/* Why @cc, of @pm, counts no node this interval (@rot: its package's
 * rotation, NULL while the drill-down has none). */
static enum without why_without(const struct cpmu *pm, const struct ccpu *cc, const struct deep_cpu *dc,
				const struct rot *rot, uint64_t now)
{
	if (!rot)
		return WITHOUT_UNDECIDED;
	if (cc->lay.n_events != pm->full.n_events || cc->lay.refine != pm->full.refine)
		return WITHOUT_REGROUPED;
	/* Open, measured, and not complete (or opened after this interval's
	 * level-1/2 read: no have_main). */
	if (dc->open)
		return cc->measured ? WITHOUT_STARTING : WITHOUT_NO_FIGURES;
	if (!deep_fits(pm, cc))
		return WITHOUT_HELD;
	if (now < dc->retry_at_ns)
		return WITHOUT_WAITING;
	return WITHOUT_NO_FIGURES;
}

/* "N CPUs counted no node ...: n why, ..." into @buf; false (and
 * nothing written) when every CPU counted. */
static bool without(const struct cdeep *dp, char *buf, size_t len)
{
	unsigned total = 0;
	size_t at;

	for (unsigned k = 0; k < WITHOUT_COUNT; k++)
		total += dp->without[k];
	if (!total)
		return false;
	str_printf(buf, len, "%u CPU%s counted no node below level 2 in the last interval:", total,
		   total == 1 ? "" : "s");
	for (unsigned k = 0, first = 1; k < WITHOUT_COUNT; k++) {
		if (!dp->without[k])
			continue;
		at = strlen(buf);
		str_printf(buf + at, len - at, "%s %u %s", first ? "" : ",", dp->without[k], without_said[k]);
		first = 0;
	}
	return true;
}

static void give_up(struct collector *c, struct ccpu *cc, struct deep_cpu *dc, uint64_t now, const char *why,
		    int err)
{
	coll_deep_close(c, cc);
	dc->retry_at_ns = now + DEEP_RETRY_NS;
	log_debug("CPU %d: no TopDown node below level 2 for %llu s: %s%s%s", cc->cpu,
		  (unsigned long long)(DEEP_RETRY_NS / 1000000000), why, err ? ": " : "",
		  err ? strerror(-err) : "");
}

/* Reads group @g of @cc (enabled since the last collection): each event's
 * rate.  False when it did not run whole (another user wants counters);
 * with depth_multiplex it runs its turns of the rotation, and has no
 * rates when it had none. */
static bool read_deep(struct collector *c, const struct cdeep *dp, const struct rot *rot, struct deep_cpu *dc,
		      unsigned g)
{
	const struct depth_group *grp = &rot->groups[g];
	uint64_t *b = c->buf;
	uint64_t enabled, running;
	double run;
	ssize_t r;

	r = perfev_read(dc->fd[grp->ev[0]], b, c->buf_words * sizeof(uint64_t));
	if (r != (ssize_t)((3 + grp->n) * sizeof(uint64_t)) || b[0] != grp->n)
		return false;
	enabled = b[1] - dc->g_enabled[g];
	running = b[2] - dc->g_running[g];
	dc->g_enabled[g] = b[1];
	dc->g_running[g] = b[2];
	dc->share = 0;
	if (enabled == 0)
		return true; /* opened since: nothing to read yet */
	/* Whole or nothing: a group the kernel rotated shares its counters
	 * with someone, and depth gives them up. */
	if (running < enabled && !dp->multiplex)
		return false;
	dc->share = (double)running / (double)enabled;
	if (running == 0)
		return true; /* no turn in the rotation this interval */
	run = (double)running;
	for (unsigned k = 0; k < grp->n; k++) {
		unsigned e = grp->ev[k];
		int64_t delta = (int64_t)(b[3 + k] - dc->prev[e]);

		if (delta < 0)
			return false;
		dc->prev[e] = b[3 + k];
		dc->rate[e] = (double)delta / run;
	}
	dc->g_seq[g] = c->seq;
	return true;
}

/* Whether every group of @rot ran on @dc within its last rotation. */
static bool complete(const struct collector *c, const struct rot *rot, const struct deep_cpu *dc)
{
	for (unsigned g = 0; g < rot->n_groups; g++)
		if (!dc->g_seq[g] || c->seq - dc->g_seq[g] >= rot->n_groups)
			return false;
	return true;
}

/* ---- rows ---- */

/* The counts of domain row @i (the cores, then the packages, then the
 * host; the last one a CPU's), DEEP_ROW_LEN each. */
static double *row(struct collector *c, unsigned i)
{
	return c->deep_rows + (size_t)i * DEEP_ROW_LEN;
}

/* The retire latencies (perf's EVENT:R) of counts @v: the table's,
 * whatever the row. */
static void latencies(const struct cdeep *dp, double *v)
{
	for (unsigned k = 0; k < dp->n_lat; k++)
		v[dp->n_main + dp->lat[k]] = depth_event(dp->d, dp->lat[k])->value;
}

/* A CPU's counts of the interval, compact (cdeep.n_in).  Its slots weigh
 * its nodes in the totals (and a domain's, summed): on a core without a
 * slots event (Skylake-SP, the E-cores: perf's slots are cycles times
 * the width) the interval's slots of its level-1/2 figures, @slots. */
static void vars_of(const struct cdeep *dp, const struct deep_cpu *dc, double slots, double *v)
{
	for (unsigned k = 0; k < dp->n_main; k++) {
		v[k] = dc->main_v[dp->main[k]];
		if (dp->main[k] == TD_EV_SLOTS && !(v[k] > 0))
			v[k] = slots;
	}
	for (unsigned e = 0; e < dp->n_events; e++)
		v[dp->n_main + e] = dc->rate[e] * dc->span_ns;
	latencies(dp, v);
}

/* The share of node @i's events in group @cur of @rot: how much of the
 * interval its own events were counted. */
static double frac_of(const struct cdeep *dp, const struct rot *rot, unsigned cur, unsigned i)
{
	const struct depth_group *grp = &rot->groups[cur];
	unsigned n = 0;

	for (unsigned k = 0; k < grp->n; k++)
		n += depth_set_has(depth_node_events(dp->d, i), grp->ev[k]);
	return dp->node_n_events[i] ? (double)n / dp->node_n_events[i] : 1;
}

/* The nodes of row @r from counts @v (none without @rot) into @snap: the
 * last interval's values of @rot's nodes, whose group @cur ran @share of
 * the interval, and the totals continuing @was (NULL: from 0). */
static void commit_row(struct cdeep *dp, struct snap_deep *sd, const struct snap_deep *was, unsigned r,
		       const double *v, const struct rot *rot, unsigned cur, double share, double interval_s)
{
	size_t base = (size_t)r * sd->n_nodes;
	double slots = 0, nodes[DEPTH_NODES_MAX];

	if (rot) {
		for (unsigned k = 0; k < dp->n_main; k++)
			dp->vars[dp->main[k]] = v[k];
		memcpy(dp->vars + TD_EV_COUNT, v + dp->n_main, dp->n_events * sizeof(double));
		depth_eval(dp->d, dp->vars, nodes);
		slots = dp->vars[TD_EV_SLOTS];
	}
	sd->row_slots_total[r] = (was ? was->row_slots_total[r] : 0);
	for (unsigned i = 0; i < sd->n_nodes; i++) {
		double s = was ? was->slots_total[base + i] : 0, t = was ? was->measured_ns_total[base + i] : 0;
		bool ok = rot && rot->node_in[i] && isfinite(nodes[i]);

		sd->last[base + i] = ok ? nodes[i] : NAN;
		sd->slots_total[base + i] = s + (ok ? nodes[i] * slots : 0);
		sd->measured_ns_total[base + i] = t + (ok ? frac_of(dp, rot, cur, i) * share * interval_s * 1e9 : 0);
	}
	if (rot)
		sd->row_slots_total[r] += slots;
}

static void add(double *dst, const double *src, size_t n, bool first)
{
	if (first)
		memcpy(dst, src, n * sizeof(double));
	else
		for (size_t i = 0; i < n; i++)
			dst[i] += src[i];
}

/* ---- an interval ---- */

static void describe(const struct collector *c, const struct cpmu *pm, struct snapshot *snap, unsigned t)
{
	const struct cdeep *dp = pm->deep;
	struct snap_deep *sd = &snap->deep[t];

	sd->n_nodes = dp->n_nodes;
	sd->gen = c->deep_gen;
	sd->level = depth_level(dp->d);
	sd->n_groups = dp->rots[0].n_groups;
	sd->drilldown = dp->drilldown;
	for (unsigned p = 0; p < snap->n_pkgs; p++) {
		int r = dp->drills[p].rot;

		snap->pkgs[p].drill[t] = dp->drilldown && r >= 0 ? dp->rots[r].subtree : NULL;
	}
	sd->host_drill = NULL;
	if (dp->drilldown) {
		int r = dp->drills[c->n_cpus].rot;

		/* The host's subtree: its packages', when they agree. */
		for (unsigned p = 0; p < snap->n_pkgs; p++)
			if (dp->drills[p].rot != dp->drills[0].rot)
				r = -1;
		if (snap->n_pkgs)
			r = r >= 0 ? dp->drills[0].rot : -1;
		sd->host_drill = r >= 0 ? dp->rots[r].subtree : NULL;
	}
	sd->source = pm->pp->depth_table->source;
	str_printf(sd->pmu, sizeof(sd->pmu), "%s", pm->pp->core->name);
	sd->pmu_idx = -1;
	for (unsigned p = 0; p < snap->n_pmus; p++)
		if (!strcmp(snap->pmus[p].name, sd->pmu))
			sd->pmu_idx = (int)p;
	for (unsigned i = 0; i < dp->n_nodes; i++) {
		sd->node[i] = depth_node(dp->d, i);
		sd->parent[i] = depth_node_parent(dp->d, i);
	}
	if (c->deep_fds_short)
		str_printf(sd->reason, sizeof(sd->reason), "RLIMIT_NOFILE leaves no room for the %u descriptors "
			   "per CPU the nodes below level 2 take: raise LimitNOFILE (the log says to what)%s%s",
			   coll_deep_events(pm), dp->reason[0] ? "; " : "", dp->reason);
	else if (without(dp, sd->reason, sizeof(sd->reason)))
		str_printf(sd->reason + strlen(sd->reason), sizeof(sd->reason) - strlen(sd->reason), "%s%s",
			   dp->reason[0] ? "; " : "", dp->reason);
	else
		str_printf(sd->reason, sizeof(sd->reason), "%s", dp->reason);
}

/* The drill-down's choice for one package (@c its last interval's
 * counts): the largest level-2 category with nodes, retiring's children
 * last; another takes over once it led by DRILL_MARGIN for DRILL_VOTES
 * intervals in a row.  True when the choice changed. */
static bool drill_choose(struct cdeep *dp, struct drill *dr, const struct snap_counts *c)
{
	double slots = c->last[TD_C_SLOTS], best_share = -1, cur_share = 0;
	int best = -1;

	if (slots <= 0)
		return false;
	for (unsigned k = 0; k < dp->n_rots; k++) {
		int cat = dp->rots[k].cat;
		double share = c->last[TD_C_CAT + cat] / slots;

		/* A useful retiring is no bottleneck to drill into. */
		if (td_cat[cat].parent == TD_CAT_RETIRING)
			share -= 1;
		if (share > best_share) {
			best_share = share;
			best = (int)k;
		}
		if ((int)k == dr->rot)
			cur_share = share;
	}
	if (best < 0 || best == dr->rot) {
		dr->votes = 0;
		return false;
	}
	if (dr->rot >= 0 && best_share < cur_share + DRILL_MARGIN) {
		dr->votes = 0;
		return false;
	}
	dr->votes = best == dr->cand ? dr->votes + 1 : 1;
	dr->cand = best;
	if (dr->rot >= 0 && dr->votes < DRILL_VOTES)
		return false;
	dr->rot = best;
	dr->votes = 0;
	/* Opened now, the rotation's first group runs next interval. */
	dr->cur = dp->rots[best].n_groups - 1;
	return true;
}

/* The drill of CPU @cc: its package's, or the last (no known package). */
static struct drill *drill_of(const struct collector *c, struct cdeep *dp, const struct ccpu *cc)
{
	return &dp->drills[cc->pkg_idx >= 0 ? (unsigned)cc->pkg_idx : c->n_cpus];
}

/* The level-2 figures the drill of package @p (-1: the host) chooses
 * from for PMU @pmu's tree: the package's, or on a hybrid part those of
 * its CPUs of that core type only (each type drills into its own
 * bottleneck), summed into @buf. */
static const struct snap_counts *drill_counts(const struct collector *c, const struct snapshot *snap,
					      unsigned pmu, int p, struct snap_counts *buf)
{
	if (c->n_pmus < 2)
		return p < 0 ? &snap->host : &snap->pkgs[p].c;
	memset(buf, 0, sizeof(*buf));
	for (unsigned i = 0; i < c->n_cpus && i < snap->n_cpus; i++) {
		const struct ccpu *cc = &c->cpus[i];

		if (cc->pmu != (int)pmu || (p >= 0 && cc->pkg_idx != p))
			continue;
		for (unsigned k = 0; k < TD_C_COUNT; k++)
			buf->last[k] += snap->cpus[i].c.last[k];
	}
	return buf;
}

/* Whether CPU @cc counts PMU @pm's groups below level 2 as planned. */
static bool planned(const struct cpmu *pm, unsigned pmu, const struct ccpu *cc)
{
	return cc->pmu == (int)pmu && coll_group_open(cc) && cc->lay.n_events == pm->full.n_events &&
	       cc->lay.refine == pm->full.refine;
}

/* One PMU's tree (@t, in snap->deep) for an interval: each of its CPUs'
 * groups read and switched, opened where they can be, the rows of its
 * CPUs and of the domains over them committed. */
static void collect_tree(struct collector *c, struct cpmu *pm, struct snapshot *snap, unsigned t, uint64_t now)
{
	struct cdeep *dp = pm->deep;
	struct snap_deep *sd = &snap->deep[t];
	const struct snap_deep *was = c->prev ? &c->prev->deep[t] : NULL;
	unsigned rows = snap->n_cpus + snap->n_cores + snap->n_pkgs + 1, n_dom, host;
	unsigned pmu = (unsigned)(pm - c->pmus);
	double interval_s = (double)c->interval_ns / 1e9;
	double *v;

	describe(c, pm, snap, t);
	sd->rows = rows;
	/* Totals continue the previous snapshot's when it has the same rows
	 * and nodes (and this tree at the same place). */
	if (was && (c->prev == snap || was->rows != rows || was->n_nodes != dp->n_nodes ||
		    was->gen != c->deep_gen || c->prev->layout != snap->layout || strcmp(was->pmu, sd->pmu)))
		was = NULL;
	if (c->last_interval_s > 0)
		interval_s = c->last_interval_s;
	/* Each package's subtree, from its level-2 figures of this
	 * interval (computed before: coll_aggregate). */
	if (dp->drilldown) {
		struct snap_counts buf;

		for (unsigned p = 0; p < snap->n_pkgs; p++)
			drill_choose(dp, &dp->drills[p], drill_counts(c, snap, pmu, (int)p, &buf));
		drill_choose(dp, &dp->drills[c->n_cpus], drill_counts(c, snap, pmu, -1, &buf));
	}
	n_dom = snap->n_cores + snap->n_pkgs + 1;
	host = snap->n_cores + snap->n_pkgs;
	memset(c->deep_used, 0, n_dom * sizeof(bool));
	v = row(c, DEEP_ROWS(c) - 1);
	memset(dp->without, 0, sizeof(dp->without));
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct ccpu *cc = &c->cpus[i];
		struct deep_cpu *dc = &c->dcpu[i];
		struct drill *dr = drill_of(c, dp, cc);
		const struct rot *rot = dr->rot >= 0 ? &dp->rots[dr->rot] : NULL, *have = NULL;

		if (cc->pmu != (int)pmu) {
			/* Another core type's CPU: no row in this tree. */
			commit_row(dp, sd, was, snap_deep_row_cpu(snap, i), v, NULL, 0, 0, interval_s);
			continue;
		}
		if (!planned(pm, pmu, cc) || !rot) {
			/* Not counting, or not with the plan's grouping (it
			 * gave counters back), or no subtree chosen yet: no
			 * depth. */
			coll_deep_close(c, cc);
		} else if (dc->open && dc->rot != dr->rot) {
			/* Its package drills into another subtree now. */
			coll_deep_close(c, cc);
			dc->retry_at_ns = 0;
		} else if (dc->open) {
			if (!read_deep(c, dp, rot, dc, dr->cur))
				give_up(c, cc, dc, now, "its group did not run whole", 0);
			else if (rot->n_groups > 1 &&
				 (perfev_disable_group(dc->fd[rot->groups[dr->cur].ev[0]]) < 0 ||
				  perfev_enable_group(dc->fd[rot->groups[(dr->cur + 1) % rot->n_groups].ev[0]]) < 0))
				give_up(c, cc, dc, now, "its groups could not be switched", 0);
		}
		if (!dc->open && rot && now >= dc->retry_at_ns && cc->state == CPU_STATE_MONITORED &&
		    planned(pm, pmu, cc) && deep_fits(pm, cc)) {
			int r = open_deep(c, pm, rot, cc, dc);

			if (r == 0)
				r = perfev_enable_group(dc->fd[rot->groups[(dr->cur + 1) % rot->n_groups].ev[0]]);
			if (r < 0)
				give_up(c, cc, dc, now, "its groups could not be opened", r);
		}
		if (dc->open && cc->measured && dc->have_main && complete(c, rot, dc)) {
			have = rot;
			vars_of(dp, dc, snap->cpus[i].c.last[TD_C_SLOTS], v);
		} else if (cc->to_measure) {
			dp->without[why_without(pm, cc, dc, rot, now)]++;
		}
		dc->have_main = false;
		commit_row(dp, sd, was, snap_deep_row_cpu(snap, i), v, have, dr->cur, dc->share, interval_s);
		if (!have)
			continue;
		{
			int k = cc->core_idx, pk = cc->pkg_idx;
			unsigned doms[3], nd = 0;

			if (k >= 0)
				doms[nd++] = (unsigned)k;
			if (pk >= 0)
				doms[nd++] = snap->n_cores + (unsigned)pk;
			doms[nd++] = host;
			for (unsigned j = 0; j < nd; j++) {
				unsigned d = doms[j];

				double *rw = row(c, d);

				add(rw, v, dp->n_in, !c->deep_used[d]);
				rw[DEEP_SHARE] = (c->deep_used[d] ? rw[DEEP_SHARE] : 0) + dc->share;
				rw[DEEP_NCPU] = (c->deep_used[d] ? rw[DEEP_NCPU] : 0) + 1;
				/* A domain whose CPUs drill into different
				 * subtrees has no node. */
				if (!c->deep_used[d])
					c->deep_rot[d] = dr->rot, c->deep_cur[d] = dr->cur;
				else if (c->deep_rot[d] != dr->rot)
					c->deep_rot[d] = -1;
				c->deep_used[d] = true;
			}
		}
	}
	for (unsigned j = 0; j < n_dom; j++) {
		bool ok = c->deep_used[j] && c->deep_rot[j] >= 0;
		double *rw = row(c, j);

		if (ok)
			latencies(dp, rw);

		/* A domain's nodes were measured its CPUs' mean share; a retire
		 * latency is the latency, not the sum of its CPUs'. */
		commit_row(dp, sd, was, snap->n_cpus + j, rw, ok ? &dp->rots[c->deep_rot[j]] : NULL,
			   ok ? c->deep_cur[j] : 0, ok ? rw[DEEP_SHARE] / rw[DEEP_NCPU] : 0, interval_s);
	}
	/* Said again with the CPUs counted. */
	describe(c, pm, snap, t);
	for (unsigned p = 0; p <= c->n_cpus; p++)
		if (dp->drills[p].rot >= 0)
			dp->drills[p].cur = (dp->drills[p].cur + 1) % dp->rots[dp->drills[p].rot].n_groups;
}

void coll_deep_collect(struct collector *c, struct snapshot *snap, uint64_t now)
{
	unsigned rows = snap->n_cpus + snap->n_cores + snap->n_pkgs + 1;

	for (unsigned t = 0; t < SNAP_PMUS; t++) {
		snap->deep[t].n_nodes = 0;
		snap->deep[t].reason[0] = '\0';
	}
	snap->n_deep = 0;
	for (unsigned p = 0; p < snap->n_pkgs; p++)
		memset(snap->pkgs[p].drill, 0, sizeof(snap->pkgs[p].drill));
	/* A CPU whose core PMU counts no tree holds no groups below level 2
	 * (its PMU's plan changed). */
	for (unsigned i = 0; c->dcpu && i < c->n_cpus; i++) {
		int pmu = c->cpus[i].pmu;

		if (pmu < 0 || (unsigned)pmu >= c->n_pmus || !c->pmus[pmu].deep)
			coll_deep_close(c, &c->cpus[i]);
	}
	for (unsigned p = 0; p < c->n_pmus && snap->n_deep < SNAP_PMUS; p++) {
		struct cpmu *pm = &c->pmus[p];
		unsigned t = snap->n_deep;

		if (!pm->deep || snapshot_deep_reserve(&snap->deep[t], rows, pm->deep->n_nodes) < 0)
			continue;
		collect_tree(c, pm, snap, t, now);
		snap->n_deep++;
	}
}

void coll_deep_fill(struct collector *c, struct snapshot *snap)
{
	const struct snapshot *was = c->prev;

	if (was == snap)
		return;
	snap->n_deep = 0;
	if (!was || was->layout != snap->layout) {
		for (unsigned t = 0; t < SNAP_PMUS; t++)
			snap->deep[t].n_nodes = 0;
		return;
	}
	for (unsigned t = 0; t < was->n_deep; t++) {
		const struct snap_deep *w = &was->deep[t];
		struct snap_deep *d = &snap->deep[t];

		if (!w->n_nodes || snapshot_deep_reserve(d, w->rows, w->n_nodes) < 0)
			d->n_nodes = 0;
		else
			snapshot_deep_copy(d, w);
	}
	snap->n_deep = was->n_deep;
	for (unsigned p = 0; p < snap->n_pkgs && p < was->n_pkgs; p++)
		memcpy(snap->pkgs[p].drill, was->pkgs[p].drill, sizeof(snap->pkgs[p].drill));
}
