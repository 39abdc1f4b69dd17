/* SPDX-License-Identifier: MIT */
/* depth: perf's TopDown nodes below level 2, compiled for one PMU
 * (depth.h says what it is). */
#include "depth.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr.h"
#include "util.h"

#define DEPTH_METRICS_MAX 256

/* Metrics one expression may read. */
#define DEPTH_REFS_MAX 32

struct metric {
	const char *name, *expr;
	/* The variables of the metrics its expression reads. */
	unsigned n_refs;
	unsigned refs[DEPTH_REFS_MAX];
	bool node;
	unsigned level;        /* a node's */
	unsigned node_index;   /* into t->nodes */
	int state;             /* 0 not compiled, 1 compiling, 2 compiled, -1 failed */
	unsigned var;
	struct depth_set events;
};

struct prog {
	struct expr *e;
	unsigned var;
	unsigned n_refs;
	const unsigned *refs; /* its metric's */
};

struct depth {
	const struct dt_table *t;
	unsigned level;
	unsigned n_nodes;
	unsigned node_metric[DEPTH_NODES_MAX]; /* into metrics[] */
	double node_scale[DEPTH_NODES_MAX];    /* its table entry's scale */
	int parent[DEPTH_NODES_MAX];
	unsigned n_events;
	struct depth_event ev[DEPTH_EVENTS_MAX];
	unsigned n_prog;
	struct prog prog[DEPTH_METRICS_MAX];
	unsigned n_vars;
	unsigned n_metrics;
	/* The nodes of the levels asked that cannot be computed here, in
	 * the table's order, each with why. */
	unsigned n_left;
	struct {
		const char *name;
		char why[PMU_REASON_MAX];
	} left[DEPTH_NODES_MAX];
	struct metric metrics[DEPTH_METRICS_MAX];
	/* The level-1/2 variables the expressions read. */
	unsigned n_main;
	enum td_event main[32];
};

/* Compilation: the metric being compiled collects the events it reads. */
struct ctx {
	struct depth *d;
	const struct pmu_formats *formats;
	const struct depth_main *main;
	unsigned stack[EXPR_DEPTH_MAX];
	unsigned depth;
	char why[PMU_REASON_MAX];
};

const struct dt_table *depth_table_of(const char *uarch_id, const char *pmu)
{
	for (unsigned i = 0; uarch_id && i < depth_tables_count; i++)
		if (strcmp(depth_tables[i].uarch, uarch_id) == 0 &&
		    (!depth_tables[i].unit || (pmu && strcmp(depth_tables[i].unit, pmu) == 0)))
			return &depth_tables[i];
	return NULL;
}

unsigned depth_table_levels(const struct dt_table *t)
{
	unsigned max = 0;

	for (unsigned i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].level > max)
			max = t->nodes[i].level;
	return max;
}

static void set_add(struct depth_set *s, unsigned i)
{
	s->w[i / 64] |= UINT64_C(1) << (i % 64);
}

static void set_or(struct depth_set *s, const struct depth_set *o)
{
	for (unsigned k = 0; k < DEPTH_EVENTS_MAX / 64; k++)
		s->w[k] |= o->w[k];
}

static struct metric *find_metric(struct depth *d, const char *name)
{
	for (unsigned i = 0; i < d->n_metrics; i++)
		if (strcmp(d->metrics[i].name, name) == 0)
			return &d->metrics[i];
	return NULL;
}

/* The table's counter list: "0,1,2,3" allows counters 0-3 (4), "Fixed
 * counter N" a fixed counter, which the kernel gives the real_event()
 * encodings of the cycles (0x3c) and the instructions (0xc0), else any
 * general-purpose counter (arch/x86/events/intel/core.c: the fixed
 * counters' constraints are FIXED_EVENT_CONSTRAINT, the general-purpose
 * ones open). */
static void counters_of(const char *list, struct depth_event *ev)
{
	ev->fixed = -1;
	ev->counters = 0;
	if (!list)
		return;
	if (strncmp(list, "Fixed counter ", 14) == 0) {
		ev->fixed = atoi(list + 14);
		return;
	}
	for (const char *p = list; *p;) {
		char *end;
		long c = strtol(p, &end, 10);

		if (end == p)
			break;
		if ((unsigned)c + 1 > ev->counters)
			ev->counters = (unsigned)c + 1;
		p = *end == ',' ? end + 1 : end;
	}
}

/* The shared register a term programs (the kernel's extra registers,
 * arch/x86/events/intel/core.c intel_*_extra_regs). */
static void msr_of(const char *terms, struct depth_event *ev)
{
	static const struct {
		const char *term;
		unsigned msr;
	} regs[] = { { "frontend=", 0x3F7 }, { "offcore_rsp=", 0x1A6 }, { "ldlat=", 0x3F6 } };

	ev->msr = 0;
	for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		const char *p = strstr(terms, regs[i].term);

		if (p) {
			ev->msr = regs[i].msr;
			ev->msr_value = strtoull(p + strlen(regs[i].term), NULL, 0);
		}
	}
}

/* The msr PMU's TSC as perf's tables write it: msr@tsc@, or on a hybrid
 * part msr@tsc,cpu=cpu_core@ (perf 7.2's Lunar and Arrow Lake): the TSC
 * on the CPUs of that core PMU (perf's cpu term naming a PMU, commit
 * bd741d80dc65 "perf parse-events: Allow the cpu term to be a PMU or CPU
 * range"), on a CPU of table @t's PMU the same count. */
static bool is_tsc(const struct dt_table *t, const char *name)
{
	static const char prefix[] = "msr@tsc,cpu=";
	size_t len;

	if (strcmp(name, "msr@tsc@") == 0)
		return true;
	if (!t->unit || strncmp(name, prefix, sizeof(prefix) - 1) != 0)
		return false;
	name += sizeof(prefix) - 1;
	len = strlen(t->unit);
	return strncmp(name, t->unit, len) == 0 && strcmp(name + len, "@") == 0;
}

static int add_event(struct ctx *x, const char *name, unsigned *index)
{
	struct depth *d = x->d;
	const struct dt_event *te = NULL;
	struct depth_event *ev;
	char err[160];

	for (unsigned i = 0; i < d->n_events; i++)
		if (strcmp(d->ev[i].name, name) == 0) {
			*index = i;
			return 0;
		}
	for (unsigned i = 0; i < d->t->n_events && !te; i++)
		if (strcmp(d->t->events[i].name, name) == 0)
			te = &d->t->events[i];
	if (d->n_events == DEPTH_EVENTS_MAX) {
		str_printf(x->why, sizeof(x->why), "more than topdownd's %d events below level 2 (a lower "
			   "[collect] level takes fewer)", DEPTH_EVENTS_MAX);
		return -E2BIG;
	}
	ev = &d->ev[d->n_events];
	memset(ev, 0, sizeof(*ev));
	ev->fixed = -1;
	if (te && strcmp(name, "duration_time") == 0) {
		ev->name = te->name;
		ev->kind = DEPTH_EV_TIME;
		*index = d->n_events++;
		return 0;
	}
	if (te && is_tsc(d->t, name)) {
		if (!x->main->msr_type) {
			str_printf(x->why, sizeof(x->why), "%s: the kernel has no msr PMU with a tsc event "
				   "(/sys/bus/event_source/devices/msr/events/tsc)", name);
			return -ENOENT;
		}
		ev->name = te->name;
		ev->kind = DEPTH_EV_MSR;
		ev->type = x->main->msr_type;
		ev->enc.config[0] = x->main->msr_tsc;
		*index = d->n_events++;
		return 0;
	}
	if (te && te->retire_latency) {
		/* perf stat's value for it when it does not sample it:
		 * rint() of the mean, each interval on each CPU
		 * (util/intel-tpebs.c, evsel__tpebs_read()). */
		ev->name = te->name;
		ev->file = te->file;
		ev->kind = DEPTH_EV_RETLAT;
		ev->value = rint(strtod(te->retire_latency, NULL));
		*index = d->n_events++;
		return 0;
	}
	if (!te || !te->terms) {
		size_t len = strlen(name);

		/* Said by what perf's syntax makes them. */
		if (len > 2 && (strcmp(name + len - 2, ":R") == 0 || strcmp(name + len - 2, "@R") == 0)) {
			/* A retire latency: perf stat samples it
			 * (--record-tpebs); topdownd reads the table's
			 * mean, where the table gives one. */
			str_printf(x->why, sizeof(x->why), "%s is a retire latency (perf's R modifier) whose "
				   "RetirementLatencyMean perf's table does not give", name);
			return -ENOENT;
		}
		str_printf(x->why, sizeof(x->why), "%s is not a core event topdownd counts%s%s", name,
			   te && te->file ? " (" : "", te && te->file ? te->file : "");
		if (te && te->file)
			str_printf(x->why + strlen(x->why), sizeof(x->why) - strlen(x->why), ")");
		return -ENOENT;
	}
	if (pmu_encode_terms(x->formats, te->terms, &ev->enc, err, sizeof(err)) < 0) {
		str_printf(x->why, sizeof(x->why), "cannot encode %s (\"%s\"): %s", name, te->terms, err);
		return -EINVAL;
	}
	ev->name = te->name;
	ev->terms = te->terms;
	ev->file = te->file;
	counters_of(te->counter, ev);
	msr_of(te->terms, ev);
	if (ev->fixed == 2 && x->main->fixed2_taken) {
		str_printf(x->why, sizeof(x->why), "%s counts on fixed counter 2 only, which the SMT split takes",
			   name);
		return -ENOENT;
	}
	*index = d->n_events++;
	return 0;
}

static int compile_metric(struct ctx *x, struct metric *m);

/* Whether perf's @name in an expression is the level-1/2 event @main:
 * as it is ("TOPDOWN.SLOTS"), or with a PMU and no terms of its own
 * ("cpu_core@TOPDOWN.SLOTS@", "cpu_core@topdown\-retiring@": perf 7.2's
 * hybrid tables write their events so), compared without the escapes. */
static bool is_main_name(const char *main, const char *name)
{
	const char *at = strchr(name, '@');
	size_t len;

	if (strcasecmp(main, name) == 0)
		return true;
	if (!at || at == name || (len = strlen(at + 1)) < 2 || at[len] != '@')
		return false;
	for (const char *p = at + 1; p < at + len; p++) {
		if (*p == '\\' && p + 1 < at + len)
			p++;
		else if (*p == ',' || *p == '=' || *p == '@')
			return false;
		if (tolower((unsigned char)*p) != tolower((unsigned char)*main++))
			return false;
	}
	return *main == '\0';
}

static int variable(void *arg, const char *name, unsigned *index)
{
	struct ctx *x = arg;
	struct depth *d = x->d;
	struct metric *m = find_metric(d, name), *cur = &d->metrics[x->stack[x->depth - 1]];
	unsigned e;
	int r;

	if (m) {
		for (unsigned i = 0; i < d->n_left; i++)
			if (strcmp(d->left[i].name, name) == 0) {
				str_printf(x->why, sizeof(x->why), "it reads %s", name);
				return -ENOENT;
			}
		r = compile_metric(x, m);
		if (r < 0)
			return r;
		set_or(&cur->events, &m->events);
		for (unsigned i = 0; i < cur->n_refs; i++)
			if (cur->refs[i] == m->var) {
				*index = m->var;
				return 0;
			}
		if (cur->n_refs == DEPTH_REFS_MAX) {
			str_printf(x->why, sizeof(x->why), "%s reads more than %d metrics", cur->name,
				   DEPTH_REFS_MAX);
			return -E2BIG;
		}
		cur->refs[cur->n_refs++] = m->var;
		*index = m->var;
		return 0;
	}
	for (unsigned i = 0; i < x->main->n; i++)
		if (is_main_name(x->main->names[i], name)) {
			bool seen = false;

			for (unsigned k = 0; k < d->n_main; k++)
				seen |= d->main[k] == x->main->vars[i];
			if (!seen && d->n_main < 32)
				d->main[d->n_main++] = x->main->vars[i];
			*index = x->main->vars[i];
			return 0;
		}
	r = add_event(x, name, &e);
	if (r < 0)
		return r;
	set_add(&cur->events, e);
	*index = TD_EV_COUNT + e;
	return 0;
}

/* perf's literals: #SMT_on, #core_wide and #has_pmem as the plan has
 * them; a node reading another is left out, saying which. */
static int literal(void *arg, const char *name, double *value)
{
	struct ctx *x = arg;

	if (strcmp(name, "#SMT_on") == 0) {
		*value = x->main->smt_on;
		return 0;
	}
	if (strcmp(name, "#core_wide") == 0) {
		*value = x->main->core_wide;
		return 0;
	}
	if (strcmp(name, "#has_pmem") == 0) {
		*value = x->main->has_pmem;
		return 0;
	}
	str_printf(x->why, sizeof(x->why), "literal %s is not known here", name);
	return -ENOENT;
}

static int function(void *arg, const char *fn, const char *name, double *value)
{
	struct ctx *x = arg;

	(void)value;
	str_printf(x->why, sizeof(x->why), "%s(%s) is not known here", fn, name);
	return -ENOENT;
}

static int compile_metric(struct ctx *x, struct metric *m)
{
	struct depth *d = x->d;
	struct expr_names names = { variable, literal, function, x };
	char err[256];
	struct expr *e;
	int r;

	if (m->state == 2)
		return 0;
	if (m->state == -1)
		return -ENOENT;
	if (m->state == 1) {
		str_printf(x->why, sizeof(x->why), "%s refers to itself", m->name);
		return -ELOOP;
	}
	if (x->depth == EXPR_DEPTH_MAX || d->n_prog == DEPTH_METRICS_MAX)
		return -E2BIG;
	m->state = 1;
	x->stack[x->depth++] = (unsigned)(m - d->metrics);
	r = expr_compile(m->expr, &names, &e, err, sizeof(err));
	x->depth--;
	if (r < 0) {
		/* A reason a name it reads gave (an event that cannot be
		 * encoded, a metric left out) is kept: the parser's "not
		 * known here" says less.  Its own syntax error is said of
		 * the node itself, or of the metric it reads. */
		if (r == -EINVAL && !x->why[0])
			str_printf(x->why, sizeof(x->why), "%s%s%s", x->depth ? m->name : "", x->depth ? ": " : "",
				   err);
		m->state = -1;
		return r;
	}
	m->var = TD_EV_COUNT + DEPTH_EVENTS_MAX + d->n_prog;
	d->prog[d->n_prog] = (struct prog){ .e = e, .var = m->var, .n_refs = m->n_refs, .refs = m->refs };
	d->n_prog++;
	m->state = 2;
	return 0;
}

static void reset(struct depth *d)
{
	for (unsigned i = 0; i < d->n_prog; i++)
		expr_free(d->prog[i].e);
	d->n_prog = d->n_events = d->n_nodes = d->n_main = 0;
	for (unsigned i = 0; i < d->n_metrics; i++) {
		d->metrics[i].state = 0;
		d->metrics[i].n_refs = 0;
		memset(&d->metrics[i].events, 0, sizeof(d->metrics[i].events));
	}
}

/* One attempt: every node of the levels asked, except those left out;
 * -EAGAIN naming the first node that cannot be computed (added to the
 * nodes left out, d->left). */
static int compile_all(struct ctx *x)
{
	struct depth *d = x->d;

	reset(d);
	for (unsigned i = 0; i < d->n_metrics; i++) {
		struct metric *m = &d->metrics[i];
		bool excluded = false;
		int r;

		if (!m->node || m->level > d->level)
			continue;
		for (unsigned k = 0; k < d->n_left; k++)
			excluded |= strcmp(d->left[k].name, m->name) == 0;
		if (excluded)
			continue;
		if (d->t->nodes[m->node_index].unsure) {
			str_printf(x->why, sizeof(x->why), "%s", d->t->nodes[m->node_index].unsure);
			r = -ENOENT;
		} else {
			x->why[0] = '\0';
			r = compile_metric(x, m);
		}
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			if (d->n_left == DEPTH_NODES_MAX)
				return -E2BIG;
			d->left[d->n_left].name = m->name;
			str_printf(d->left[d->n_left++].why, sizeof(d->left[0].why), "%s", x->why);
			return -EAGAIN;
		}
		d->node_scale[d->n_nodes] = d->t->nodes[m->node_index].scale;
		d->node_metric[d->n_nodes++] = i;
	}
	return 0;
}

int depth_new(const struct dt_table *t, unsigned level, const struct pmu_formats *formats,
	      const struct depth_main *main, struct depth **ret, char *why, size_t whylen)
{
	struct depth *d = calloc(1, sizeof(*d));
	struct ctx x = { .d = d, .formats = formats, .main = main };
	char first[PMU_REASON_MAX] = "";
	int r;

	if (why && whylen)
		why[0] = '\0';
	if (!d)
		return -ENOMEM;
	d->t = t;
	d->level = level;
	for (unsigned i = 0; i < t->n_nodes && d->n_metrics < DEPTH_METRICS_MAX; i++)
		d->metrics[d->n_metrics++] = (struct metric){ .name = t->nodes[i].name, .expr = t->nodes[i].expr,
							       .node = true, .level = t->nodes[i].level,
							       .node_index = i };
	for (unsigned i = 0; i < t->n_helpers && d->n_metrics < DEPTH_METRICS_MAX; i++)
		d->metrics[d->n_metrics++] = (struct metric){ .name = t->helpers[i].name,
							       .expr = t->helpers[i].expr };
	while ((r = compile_all(&x)) == -EAGAIN)
		if (!first[0])
			str_printf(first, sizeof(first), "%s: %s", d->left[d->n_left - 1].name, x.why);
	if (r == 0 && d->n_nodes == 0) {
		str_printf(first, sizeof(first), "no node of levels 3 to %u in %s", level, t->source);
		r = -ENOENT;
	}
	if (why && whylen && first[0]) {
		if (d->n_left > 1)
			str_printf(why, whylen, "%u nodes left out (--probe says why each), first %s",
				   d->n_left, first);
		else
			str_printf(why, whylen, "%s", first);
	}
	if (r < 0) {
		depth_free(d);
		return r;
	}
	for (unsigned i = 0; i < d->n_nodes; i++) {
		const struct dt_node *n = &t->nodes[d->metrics[d->node_metric[i]].node_index];

		d->parent[i] = -1;
		for (unsigned k = 0; k < i; k++)
			if (strcmp(t->nodes[d->metrics[d->node_metric[k]].node_index].name, n->parent) == 0)
				d->parent[i] = (int)k;
	}
	d->n_vars = TD_EV_COUNT + DEPTH_EVENTS_MAX + d->n_prog;
	*ret = d;
	return 0;
}

void depth_free(struct depth *d)
{
	if (!d)
		return;
	reset(d);
	free(d);
}

unsigned depth_level(const struct depth *d)
{
	return d->level;
}

unsigned depth_n_nodes(const struct depth *d)
{
	return d->n_nodes;
}

const struct dt_node *depth_node(const struct depth *d, unsigned i)
{
	return &d->t->nodes[d->metrics[d->node_metric[i]].node_index];
}

int depth_node_parent(const struct depth *d, unsigned i)
{
	return d->parent[i];
}

const struct depth_set *depth_node_events(const struct depth *d, unsigned i)
{
	return &d->metrics[d->node_metric[i]].events;
}

unsigned depth_n_events(const struct depth *d)
{
	return d->n_events;
}

unsigned depth_n_left(const struct depth *d)
{
	return d->n_left;
}

const char *depth_left(const struct depth *d, unsigned i, const char **why)
{
	*why = d->left[i].why;
	return d->left[i].name;
}

unsigned depth_n_opened(const struct depth *d)
{
	unsigned n = 0;

	for (unsigned i = 0; i < d->n_events; i++)
		n += d->ev[i].kind == DEPTH_EV_CORE || d->ev[i].kind == DEPTH_EV_MSR;
	return n;
}

const struct depth_event *depth_event(const struct depth *d, unsigned i)
{
	return &d->ev[i];
}

unsigned depth_n_vars(const struct depth *d)
{
	return d->n_vars;
}

unsigned depth_main_vars(const struct depth *d, const enum td_event **vars)
{
	*vars = d->main;
	return d->n_main;
}

/* ---- groups ---- */

struct pgroup {
	unsigned n, gp_used, gp_cap;
	bool fixed[3];
	unsigned msr[4];
	uint64_t msr_value[4];
	unsigned n_msr;
	uint8_t ev[DEPTH_GROUP_EVENTS];
};

/* Places event @i in @g if it fits, by the rules plan.c packs the level-1/2
 * events with (an event its table restricts to counters 0..k-1 only in a
 * group of at most k general-purpose events: the kernel schedules the
 * events of fewest allowed counters first, each on the lowest free one,
 * arch/x86/events/core.c x86_schedule_events), and one value per shared
 * register in a group (the kernel refuses a group whose events program
 * one register with two values: __intel_shared_reg_get_constraints()). */
static bool place(const struct depth_event *ev, unsigned i, struct pgroup *g, unsigned gp, unsigned fixed)
{
	unsigned cap = g->gp_cap ? g->gp_cap : gp;

	if (ev->kind == DEPTH_EV_TIME || ev->kind == DEPTH_EV_RETLAT)
		return true; /* in no group */
	if (g->n == DEPTH_GROUP_EVENTS)
		return false;
	if (ev->kind == DEPTH_EV_MSR) {
		g->ev[g->n++] = (uint8_t)i;
		return true;
	}
	if (ev->msr) {
		for (unsigned k = 0; k < g->n_msr; k++)
			if (g->msr[k] == ev->msr && g->msr_value[k] != ev->msr_value)
				return false;
	}
	if (ev->fixed >= 0 && ev->fixed <= 2) {
		if ((fixed & DEPTH_FIXED(ev->fixed)) && !g->fixed[ev->fixed]) {
			g->fixed[ev->fixed] = true;
			g->ev[g->n++] = (uint8_t)i;
			return true;
		}
		/* The reference cycles' pseudo-encoding (0x0300) counts on
		 * fixed counter 2 only (FIXED_EVENT_CONSTRAINT(0x0300, 2),
		 * arch/x86/events/intel/core.c). */
		if (ev->fixed == 2)
			return false;
	} else if (ev->fixed >= 0) {
		return false;
	}
	if (ev->counters && ev->counters < cap)
		cap = ev->counters;
	if (g->gp_used >= gp || g->gp_used >= cap)
		return false;
	if (ev->msr && g->n_msr < 4) {
		g->msr[g->n_msr] = ev->msr;
		g->msr_value[g->n_msr++] = ev->msr_value;
	}
	g->gp_used++;
	g->gp_cap = cap;
	g->ev[g->n++] = (uint8_t)i;
	return true;
}

int depth_pack(const struct depth *d, unsigned gp, unsigned fixed, struct depth_group *out, unsigned max)
{
	return depth_pack_subtree(d, NULL, gp, fixed, out, max);
}

/* The table's node called @name, counted or not (left out, or deeper
 * than the level), or NULL: a level-2 category. */
static const struct dt_node *table_node(const struct dt_table *t, const char *name)
{
	for (unsigned k = 0; k < t->n_nodes; k++)
		if (strcmp(t->nodes[k].name, name) == 0)
			return &t->nodes[k];
	return NULL;
}

const char *depth_node_subtree(const struct depth *d, unsigned i)
{
	/* Up the table's tree, not the counted nodes': a node whose parent
	 * is left out (it reads a retire latency) is still under the same
	 * level-2 category. */
	const struct dt_node *n = depth_node(d, i), *up;
	unsigned hops = 0;

	while ((up = table_node(d->t, n->parent)) && hops++ < d->t->n_nodes)
		n = up;
	return n->parent;
}

int depth_pack_subtree(const struct depth *d, const char *subtree, unsigned gp, unsigned fixed,
		       struct depth_group *out, unsigned max)
{
	struct pgroup g[DEPTH_GROUPS_MAX];
	bool placed[DEPTH_EVENTS_MAX] = { false };
	unsigned n = 0;

	if (max > DEPTH_GROUPS_MAX)
		max = DEPTH_GROUPS_MAX;
	memset(g, 0, sizeof(g));
	for (unsigned k = 0; k < d->n_nodes; k++) {
		const struct depth_set *s = depth_node_events(d, k);

		if (subtree && strcmp(depth_node_subtree(d, k), subtree) != 0)
			continue;
		bool together = false;

		/* The node's events not placed yet: together in the first group
		 * they all fit (a new one if none), so that its value comes
		 * from one interval's counts; else one by one, first fit. */
		for (unsigned j = 0; j <= n && j < max && !together; j++) {
			struct pgroup trial = j < n ? g[j] : (struct pgroup){ 0 };
			bool fits = true;

			for (unsigned i = 0; i < d->n_events && fits; i++)
				if (depth_set_has(s, i) && !placed[i])
					fits = place(&d->ev[i], i, &trial, gp, fixed);
			if (!fits)
				continue;
			together = true;
			if (j == n && trial.n == 0)
				break; /* nothing of its own to place */
			if (j == n)
				n++;
			g[j] = trial;
		}
		for (unsigned i = 0; i < d->n_events; i++) {
			bool done = together;

			if (!depth_set_has(s, i) || placed[i])
				continue;
			placed[i] = true;
			for (unsigned j = 0; j < n && !done; j++)
				done = place(&d->ev[i], i, &g[j], gp, fixed);
			if (done)
				continue;
			if (n == max)
				return -ENOSPC;
			memset(&g[n], 0, sizeof(g[n]));
			if (!place(&d->ev[i], i, &g[n], gp, fixed))
				return -ENOSPC;
			n++;
		}
	}
	for (unsigned j = 0; j < n; j++) {
		unsigned k = 0;

		/* The core PMU's events first: the leader is one of them, and
		 * the msr PMU's TSC a member (as perf orders a metric's
		 * group; a group needs a hardware event to go on the PMU). */
		for (unsigned pass = 0; pass < 2; pass++)
			for (unsigned e = 0; e < g[j].n; e++)
				if ((d->ev[g[j].ev[e]].kind == DEPTH_EV_MSR) == (pass == 1))
					out[j].ev[k++] = g[j].ev[e];
		out[j].n = k;
		if (k && d->ev[out[j].ev[0]].kind == DEPTH_EV_MSR)
			return -ENOSPC;
	}
	return (int)n;
}

void depth_eval(const struct depth *d, double *vars, double *out)
{
	for (unsigned i = 0; i < d->n_prog; i++) {
		const struct prog *p = &d->prog[i];
		bool failed = false;

		/* perf resolves a metric it reads by parsing that metric's
		 * expression, and a parse that failed (a division by zero:
		 * no value) fails the reader's too (util/expr.c
		 * expr__resolve_id), whether or not its value is used (an
		 * untaken branch, min, max). */
		for (unsigned k = 0; k < p->n_refs && !failed; k++)
			failed = isnan(vars[p->refs[k]]);
		vars[p->var] = failed ? NAN : expr_eval(p->e, vars);
	}
	/* Scaled on the way out only: another expression reads a node as
	 * perf's does, unscaled. */
	for (unsigned i = 0; i < d->n_nodes; i++)
		out[i] = vars[d->metrics[d->node_metric[i]].var] * d->node_scale[i];
}
