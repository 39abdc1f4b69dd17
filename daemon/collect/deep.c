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
 * A CPU whose depth groups do not run whole (another user's events), or
 * whose level-1/2 grouping is not the plan's (it gave counters back),
 * counts no depth until its next retry: depth takes only what nobody
 * else wants. */
#include "collector_internal.h"

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

struct cdeep {
	struct depth *d;
	unsigned n_groups;
	struct depth_group groups[DEPTH_GROUPS_MAX];
	unsigned cur;            /* the group counting since the last collection */
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
	unsigned cpus_without;   /* CPUs of the PMU that counted no depth this interval */
};

struct deep_cpu {
	bool open, have_main;
	uint64_t retry_at_ns;
	int fd[DEPTH_EVENTS_MAX];
	uint64_t prev[DEPTH_EVENTS_MAX];
	double rate[DEPTH_EVENTS_MAX];          /* counts per running ns */
	uint64_t g_enabled[DEPTH_GROUPS_MAX], g_running[DEPTH_GROUPS_MAX];
	uint64_t g_seq[DEPTH_GROUPS_MAX];       /* the interval it last ran whole, 0: never */
	double span_ns;                         /* the level-1/2 group's interval */
	double main_v[TD_EV_COUNT];
};

/* ---- plan ---- */

static void deep_free_pmu(struct cpmu *pm)
{
	if (!pm->deep)
		return;
	depth_free(pm->deep->d);
	free(pm->deep->vars);
	free(pm->deep);
	pm->deep = NULL;
}

/* The counters the level-1/2 grouping @lay leaves: general-purpose ones,
 * and fixed counters 0 and 1 when nothing of it takes them. */
static void left_by(const struct cpmu *pm, unsigned *gp, bool *fixed0, bool *fixed1)
{
	const struct clayout *lay = &pm->full;
	bool on_fixed1 = false;
	unsigned used = coll_group_gp(pm, lay, 0, lay->group_start[1], &on_fixed1);

	*gp = pm->pp->gp_available > used ? pm->pp->gp_available - used : 0;
	*fixed1 = !on_fixed1 && !pm->pp->fixed1_busy;
	*fixed0 = true;
	for (unsigned i = 0; i < lay->n_events; i++)
		if (ua_event_fixed(&pm->pp->ua->events[lay->events[i]]) == 0)
			*fixed0 = false;
}

static int deep_plan_pmu(struct collector *c, struct cpmu *pm)
{
	const struct plan_pmu *pp = pm->pp;
	struct depth_main main = { 0 };
	struct cdeep *dp;
	char why[PMU_REASON_MAX];
	unsigned gp;
	bool f0, f1;
	int r, n;

	(void)c;
	if (!pp->depth_table || pp->depth < 3)
		return 0;
	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return -ENOMEM;
	for (unsigned i = 0; i < pm->full.n_events && main.n < 32; i++) {
		main.names[main.n] = coll_event_name(pm, &pm->full, i);
		main.vars[main.n++] = pm->full.var[i];
	}
	r = depth_new(pp->depth_table, pp->depth, &pp->core->formats, &main, &dp->d, why, sizeof(why));
	if (r < 0) {
		log_warning("%s: no TopDown node below level 2: %s", pp->core->name, why);
		free(dp);
		return r;
	}
	left_by(pm, &gp, &f0, &f1);
	n = depth_pack(dp->d, gp, f0, f1, dp->groups, DEPTH_GROUPS_MAX);
	if (n <= 0) {
		log_warning("%s: the events below level 2 do not fit the %u general-purpose counters the "
			    "level-1/2 group leaves; no TopDown node below level 2", pp->core->name, gp);
		depth_free(dp->d);
		free(dp);
		return -ENOSPC;
	}
	dp->n_groups = (unsigned)n;
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
	dp->vars = calloc(dp->n_vars, sizeof(double));
	if (!dp->vars) {
		depth_free(dp->d);
		free(dp);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < dp->n_nodes; i++)
		for (unsigned e = 0; e < dp->n_events; e++)
			dp->node_n_events[i] += depth_set_has(depth_node_events(dp->d, i), e);
	str_printf(dp->reason, sizeof(dp->reason), "%s", why);
	log_info("%s: %u TopDown nodes of levels 3 to %u from %s, %u events in %u groups on %u "
		 "general-purpose counters%s, one group per interval%s%s", pp->core->name, dp->n_nodes,
		 pp->depth, pp->depth_table->source, dp->n_events, dp->n_groups, gp,
		 f1 ? " and fixed counter 1" : "", why[0] ? "; " : "", why);
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
		if (!c->dcpu || !c->deep_rows || !c->deep_used) {
			free(c->dcpu);
			free(c->deep_rows);
			free(c->deep_used);
			c->dcpu = NULL;
			c->deep_rows = NULL;
			c->deep_used = NULL;
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
	free(c->dcpu);
}

/* ---- per CPU ---- */

unsigned coll_deep_events(const struct cpmu *pm)
{
	return pm->deep ? pm->deep->n_events : 0;
}

void coll_deep_keep(struct collector *c, const struct ccpu *cc, const struct tma_input *in, double span_ns)
{
	struct deep_cpu *dc = &c->dcpu[cc - c->cpus];

	memcpy(dc->main_v, in->v, sizeof(dc->main_v));
	dc->span_ns = span_ns;
	dc->have_main = true;
}

static int open_deep(struct collector *c, const struct cpmu *pm, struct ccpu *cc, struct deep_cpu *dc)
{
	const struct cdeep *dp = pm->deep;

	if (c->warned_fds || c->deep_fds_short || c->fds_open + dp->n_events > c->fd_budget)
		return -EMFILE;
	for (unsigned g = 0; g < dp->n_groups; g++) {
		const struct depth_group *grp = &dp->groups[g];

		for (unsigned k = 0; k < grp->n; k++) {
			const struct depth_event *ev = depth_event(dp->d, grp->ev[k]);
			struct perf_event_attr attr;
			int fd;

			perfev_attr(&attr, pm->pp->core->type, ev->enc.config, c->count_kernel, c->count_guest,
				    DEEP_READ_FORMAT, k == 0);
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
	dc->open = true;
	return 0;
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
 * rate.  False when it did not run whole (another user wants counters). */
static bool read_deep(struct collector *c, const struct cdeep *dp, struct deep_cpu *dc, unsigned g)
{
	const struct depth_group *grp = &dp->groups[g];
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
	if (enabled == 0)
		return true; /* opened since: nothing to read yet */
	/* Whole or nothing: a group the kernel rotated shares its counters
	 * with someone, and depth gives them up. */
	if (running < enabled)
		return false;
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

/* Whether every group of @dc ran within the last rotation. */
static bool complete(const struct collector *c, const struct cdeep *dp, const struct deep_cpu *dc)
{
	for (unsigned g = 0; g < dp->n_groups; g++)
		if (!dc->g_seq[g] || c->seq - dc->g_seq[g] >= dp->n_groups)
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

/* A CPU's counts of the interval, compact (cdeep.n_in). */
static void vars_of(const struct cdeep *dp, const struct deep_cpu *dc, double *v)
{
	for (unsigned k = 0; k < dp->n_main; k++)
		v[k] = dc->main_v[dp->main[k]];
	for (unsigned e = 0; e < dp->n_events; e++)
		v[dp->n_main + e] = dc->rate[e] * dc->span_ns;
}

/* The nodes of row @r from counts @v into @snap: the last interval's
 * values and the totals continuing @was (NULL: from 0). */
static void commit_row(struct cdeep *dp, struct snapshot *snap, const struct snapshot *was, unsigned r,
		       const double *v, bool have, const double *frac, double interval_s)
{
	struct snap_deep *sd = &snap->deep;
	size_t base = (size_t)r * sd->n_nodes;
	double slots = 0, nodes[DEPTH_NODES_MAX];

	if (have) {
		for (unsigned k = 0; k < dp->n_main; k++)
			dp->vars[dp->main[k]] = v[k];
		memcpy(dp->vars + TD_EV_COUNT, v + dp->n_main, dp->n_events * sizeof(double));
		depth_eval(dp->d, dp->vars, nodes);
		slots = dp->vars[TD_EV_SLOTS];
	}
	sd->row_slots_total[r] = (was ? was->deep.row_slots_total[r] : 0);
	for (unsigned i = 0; i < sd->n_nodes; i++) {
		double s = was ? was->deep.slots_total[base + i] : 0, t = was ? was->deep.measured_ns_total[base + i] : 0;
		bool ok = have && isfinite(nodes[i]);

		sd->last[base + i] = ok ? nodes[i] : NAN;
		sd->slots_total[base + i] = s + (ok ? nodes[i] * slots : 0);
		sd->measured_ns_total[base + i] = t + (ok ? frac[i] * interval_s * 1e9 : 0);
	}
	if (have)
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

static void describe(const struct collector *c, const struct cpmu *pm, struct snapshot *snap)
{
	const struct cdeep *dp = pm->deep;
	struct snap_deep *sd = &snap->deep;

	sd->n_nodes = dp->n_nodes;
	sd->gen = c->deep_gen;
	sd->level = depth_level(dp->d);
	sd->n_groups = dp->n_groups;
	sd->source = pm->pp->depth_table->source;
	str_printf(sd->pmu, sizeof(sd->pmu), "%s", pm->pp->core->name);
	for (unsigned i = 0; i < dp->n_nodes; i++) {
		sd->node[i] = depth_node(dp->d, i);
		sd->parent[i] = depth_node_parent(dp->d, i);
	}
	if (c->deep_fds_short)
		str_printf(sd->reason, sizeof(sd->reason), "RLIMIT_NOFILE leaves no room for the %u descriptors "
			   "per CPU the nodes below level 2 take: raise LimitNOFILE (the log says to what)%s%s",
			   dp->n_events, dp->reason[0] ? "; " : "", dp->reason);
	else if (dp->cpus_without)
		str_printf(sd->reason, sizeof(sd->reason), "%u CPUs counted no node below level 2 in the last "
			   "interval (another user wants their counters, or their groups are not the plan's)%s%s",
			   dp->cpus_without, dp->reason[0] ? "; " : "", dp->reason);
	else
		str_printf(sd->reason, sizeof(sd->reason), "%s", dp->reason);
}

void coll_deep_collect(struct collector *c, struct snapshot *snap, uint64_t now)
{
	struct cpmu *pm = NULL;
	struct cdeep *dp;
	const struct snapshot *was = c->prev;
	unsigned rows = snap->n_cpus + snap->n_cores + snap->n_pkgs + 1, n_dom, host, pmu;
	double frac[DEPTH_NODES_MAX], interval_s = (double)c->interval_ns / 1e9;
	double *v;

	snap->deep.n_nodes = 0;
	snap->deep.reason[0] = '\0';
	for (unsigned p = 0; p < c->n_pmus && !pm; p++)
		if (c->pmus[p].deep)
			pm = &c->pmus[p];
	if (!pm || snapshot_deep_reserve(snap, rows, pm->deep->n_nodes) < 0)
		return;
	dp = pm->deep;
	pmu = (unsigned)(pm - c->pmus);
	describe(c, pm, snap);
	snap->deep.rows = rows;
	/* Totals continue the previous snapshot's when it has the same rows
	 * and nodes. */
	if (was && (was == snap || was->deep.rows != rows || was->deep.n_nodes != dp->n_nodes ||
		    was->deep.gen != c->deep_gen || was->layout != snap->layout))
		was = NULL;
	if (c->last_interval_s > 0)
		interval_s = c->last_interval_s;
	/* The share of each node's events counted in this interval. */
	for (unsigned i = 0; i < dp->n_nodes; i++) {
		const struct depth_group *grp = &dp->groups[dp->cur];
		unsigned n = 0;

		for (unsigned k = 0; k < grp->n; k++)
			n += depth_set_has(depth_node_events(dp->d, i), grp->ev[k]);
		frac[i] = dp->node_n_events[i] ? (double)n / dp->node_n_events[i] : 1;
	}
	n_dom = snap->n_cores + snap->n_pkgs + 1;
	host = snap->n_cores + snap->n_pkgs;
	memset(c->deep_used, 0, n_dom * sizeof(bool));
	v = row(c, DEEP_ROWS(c) - 1);
	dp->cpus_without = 0;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct ccpu *cc = &c->cpus[i];
		struct deep_cpu *dc = &c->dcpu[i];
		bool have = false;

		if (cc->pmu != (int)pmu || !coll_group_open(cc) || cc->lay.n_events != pm->full.n_events ||
		    cc->lay.refine != pm->full.refine) {
			/* Not counting, or not with the plan's grouping (it
			 * gave counters back): no depth. */
			coll_deep_close(c, cc);
		} else if (dc->open) {
			if (!read_deep(c, dp, dc, dp->cur))
				give_up(c, cc, dc, now, "its group did not run whole", 0);
			else if (dp->n_groups > 1 &&
				 (perfev_disable_group(dc->fd[dp->groups[dp->cur].ev[0]]) < 0 ||
				  perfev_enable_group(dc->fd[dp->groups[(dp->cur + 1) % dp->n_groups].ev[0]]) < 0))
				give_up(c, cc, dc, now, "its groups could not be switched", 0);
		} else if (now >= dc->retry_at_ns && cc->state == CPU_STATE_MONITORED) {
			int r = open_deep(c, pm, cc, dc);

			if (r == 0)
				r = perfev_enable_group(dc->fd[dp->groups[(dp->cur + 1) % dp->n_groups].ev[0]]);
			if (r < 0)
				give_up(c, cc, dc, now, "its groups could not be opened", r);
		}
		if (dc->open && cc->measured && dc->have_main && complete(c, dp, dc)) {
			have = true;
			vars_of(dp, dc, v);
		} else if (cc->to_measure && cc->pmu == (int)pmu) {
			dp->cpus_without++;
		}
		dc->have_main = false;
		commit_row(dp, snap, was, snap_deep_row_cpu(snap, i), v, have, frac, interval_s);
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
				add(row(c, doms[j]), v, dp->n_in, !c->deep_used[doms[j]]);
				c->deep_used[doms[j]] = true;
			}
		}
	}
	for (unsigned j = 0; j < n_dom; j++)
		commit_row(dp, snap, was, snap->n_cpus + j, row(c, j), c->deep_used[j], frac, interval_s);
	/* Said again for the CPUs counted. */
	describe(c, pm, snap);
	dp->cur = (dp->cur + 1) % dp->n_groups;
}

void coll_deep_fill(struct collector *c, struct snapshot *snap)
{
	const struct snapshot *was = c->prev;

	if (!was || was == snap || !was->deep.n_nodes || was->layout != snap->layout ||
	    snapshot_deep_reserve(snap, was->deep.rows, was->deep.n_nodes) < 0) {
		if (!was || was != snap)
			snap->deep.n_nodes = 0;
		return;
	}
	{
		size_t n = (size_t)was->deep.rows * was->deep.n_nodes;
		double *last = snap->deep.last, *slots = snap->deep.slots_total, *secs = snap->deep.measured_ns_total;
		double *rs = snap->deep.row_slots_total;
		size_t cap = snap->deep.cap, row_cap = snap->deep.row_cap;

		snap->deep = was->deep;
		snap->deep.last = last;
		snap->deep.slots_total = slots;
		snap->deep.measured_ns_total = secs;
		snap->deep.row_slots_total = rs;
		snap->deep.cap = cap;
		snap->deep.row_cap = row_cap;
		memcpy(last, was->deep.last, n * sizeof(double));
		memcpy(slots, was->deep.slots_total, n * sizeof(double));
		memcpy(secs, was->deep.measured_ns_total, n * sizeof(double));
		memcpy(rs, was->deep.row_slots_total, was->deep.rows * sizeof(double));
	}
}
