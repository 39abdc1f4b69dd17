/* SPDX-License-Identifier: MIT */
/* perfexpr: perf's expressions on perf's counts (perfexpr.h). */
#include "perfexpr.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr.h"
#include "perfexpr_tables.h"
#include "util.h"

#define METRICS_MAX 64
#define TERMS_MAX 8

/* A metric an expression reads (a category's, or one perf's files give
 * it), compiled once. */
struct metric {
	const char *name, *expr, *file;
	int state;      /* 0 not yet, 1 compiling, 2 compiled, -1 failed */
	unsigned var;
	struct expr *e;
};

struct perfexpr {
	const struct uarch *ua;
	struct perfexpr_env env;
	unsigned n_events;
	const struct ua_event *ev[PERFEXPR_EVENTS_MAX];
	unsigned n_metrics;
	struct metric m[METRICS_MAX];
	/* The compiled metrics in dependency order (each after what it reads). */
	unsigned n_prog;
	unsigned prog[METRICS_MAX];
	td_catset cats;
	unsigned cat_var[TD_CAT_COUNT];
	double cat_mult[TD_CAT_COUNT];  /* value to fraction: ScaleUnit over 100 % */
	char why[256];
	unsigned depth;
	unsigned stack[EXPR_DEPTH_MAX];
};

/* ---- event names ---- */

struct canon {
	char base[EXPR_NAME_MAX];
	unsigned n;
	char key[TERMS_MAX][16];
	unsigned long long val[TERMS_MAX];
};

/* "cpu@BASE,k=v,k@" or "BASE,k=v" into its base and terms; false for a
 * term that is not a number. */
static bool canon_of(const char *name, struct canon *c)
{
	char buf[EXPR_NAME_MAX], *save = NULL, *t;
	const char *at = strchr(name, '@');
	size_t len = strlen(name);

	memset(c, 0, sizeof(*c));
	/* perf's PMU@EVENT@ form: the PMU is the one counted anyway. */
	if (at && len > 1 && name[len - 1] == '@' && at != name + len - 1)
		str_printf(buf, sizeof(buf), "%.*s", (int)(name + len - 1 - at - 1), at + 1);
	else
		str_copy(buf, sizeof(buf), name);
	t = strtok_r(buf, ",", &save);
	if (!t)
		return false;
	str_copy(c->base, sizeof(c->base), t);
	if (strcasecmp(c->base, "slots") == 0)
		str_copy(c->base, sizeof(c->base), "TOPDOWN.SLOTS");
	while ((t = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(t, '='), *end;

		if (c->n == TERMS_MAX)
			return false;
		if (eq)
			*eq = '\0';
		str_copy(c->key[c->n], sizeof(c->key[0]), t);
		c->val[c->n] = 1;
		if (eq) {
			c->val[c->n] = strtoull(eq + 1, &end, 0);
			if (end == eq + 1 || *end)
				return false;
		}
		c->n++;
	}
	return true;
}

bool perfexpr_same_event(const char *a, const char *b)
{
	struct canon x, y;

	if (!canon_of(a, &x) || !canon_of(b, &y) || strcasecmp(x.base, y.base) != 0 || x.n != y.n)
		return false;
	for (unsigned i = 0; i < x.n; i++) {
		bool found = false;

		for (unsigned j = 0; j < y.n && !found; j++)
			found = strcasecmp(x.key[i], y.key[j]) == 0 && x.val[i] == y.val[j];
		if (!found)
			return false;
	}
	return true;
}

/* ---- resolving names ---- */

/* The metric perf's files of @ua give @name: the file of the metric
 * reading it first (@file), then the files of @ua's other metrics; a
 * hybrid core type's own or of none. */
static const struct px_metric *px_find(const struct uarch *ua, const char *file, const char *name,
				       const char **in)
{
	for (int pass = 0; pass < 2; pass++)
		for (unsigned f = 0; f < perfexpr_files_count; f++) {
			const struct px_file *pf = &perfexpr_files[f];
			bool mine = false;

			if (pass == 0 && !(file && strcmp(pf->file, file) == 0))
				continue;
			for (unsigned i = 0; i < ua->n_metrics && !mine; i++)
				mine = strcmp(ua->metrics[i].table, pf->file) == 0;
			if (!mine)
				continue;
			for (unsigned i = 0; i < pf->n; i++)
				if (strcmp(pf->metrics[i].name, name) == 0 &&
				    (!pf->metrics[i].unit || (ua->pmu && strcmp(pf->metrics[i].unit, ua->pmu) == 0))) {
					*in = pf->file;
					return &pf->metrics[i];
				}
		}
	return NULL;
}

static struct metric *metric_add(struct perfexpr *x, const char *name, const char *expr, const char *file)
{
	struct metric *m;

	for (unsigned i = 0; i < x->n_metrics; i++)
		if (strcmp(x->m[i].name, name) == 0)
			return &x->m[i];
	if (x->n_metrics == METRICS_MAX)
		return NULL;
	m = &x->m[x->n_metrics++];
	memset(m, 0, sizeof(*m));
	m->name = name;
	m->expr = expr;
	m->file = file;
	return m;
}

/* The metric @name is, or NULL: a category's of @ua, or one of its files. */
static struct metric *metric_of(struct perfexpr *x, const char *name, const char *file)
{
	const struct px_metric *pm;
	const char *in;

	for (unsigned i = 0; i < x->ua->n_metrics; i++)
		if (strcmp(x->ua->metrics[i].perf_name, name) == 0)
			return metric_add(x, x->ua->metrics[i].perf_name, x->ua->metrics[i].expr,
					  x->ua->metrics[i].table);
	pm = px_find(x->ua, file, name, &in);
	return pm ? metric_add(x, pm->name, pm->expr, in) : NULL;
}

/* The event of @ua's table that @name names, or NULL. */
static const struct ua_event *event_find(const struct uarch *ua, const char *name)
{
	for (unsigned i = 0; i < ua->n_events; i++)
		if (perfexpr_same_event(name, ua->events[i].name) ||
		    (ua->events[i].sysfs && perfexpr_same_event(name, ua->events[i].sysfs)))
			return &ua->events[i];
	return NULL;
}

/* @name's variable: an event perf is to count. */
static int event_of(struct perfexpr *x, const char *name, unsigned *index)
{
	const struct ua_event *ev = event_find(x->ua, name);

	if (!ev)
		return -ENOENT;
	for (unsigned i = 0; i < x->n_events; i++)
		if (x->ev[i] == ev) {
			*index = i;
			return 0;
		}
	if (x->n_events == PERFEXPR_EVENTS_MAX)
		return -E2BIG;
	x->ev[x->n_events] = ev;
	*index = x->n_events++;
	return 0;
}

static int compile(struct perfexpr *x, struct metric *m);

static int variable(void *arg, const char *name, unsigned *index)
{
	struct perfexpr *x = arg;
	struct metric *cur = &x->m[x->stack[x->depth - 1]], *m = metric_of(x, name, cur->file);
	int r;

	if (m) {
		r = compile(x, m);
		if (r == 0)
			*index = m->var;
		return r;
	}
	r = event_of(x, name, index);
	if (r == -ENOENT)
		str_printf(x->why, sizeof(x->why), "%s reads %s, neither a metric of perf's %s nor an event of "
			   "topdownd's %s table", cur->name, name, cur->file, x->ua->name);
	else if (r == -E2BIG)
		str_printf(x->why, sizeof(x->why), "more than %d events", PERFEXPR_EVENTS_MAX);
	return r;
}

static int literal(void *arg, const char *name, double *value)
{
	struct perfexpr *x = arg;

	if (strcmp(name, "#SMT_on") == 0 || strcmp(name, "#smt_on") == 0) {
		*value = x->env.smt_on;
		return 0;
	}
	if (strcmp(name, "#core_wide") == 0) {
		*value = x->env.core_wide;
		return 0;
	}
	if (strcmp(name, "#slots") == 0 && x->env.slots) {
		*value = x->env.slots;
		return 0;
	}
	str_printf(x->why, sizeof(x->why), "%s reads %s, which is not known here",
		   x->m[x->stack[x->depth - 1]].name, name);
	return -ENOENT;
}

static int function(void *arg, const char *fn, const char *name, double *value)
{
	struct perfexpr *x = arg;

	if (strcmp(fn, "strcmp_cpuid_str") == 0 && x->env.have_midr) {
		/* perf: 1 where the CPU is the part named, at its variant and
		 * revision or later. */
		*value = ua_midr_matches(name, x->env.midr);
		return 0;
	}
	if (strcmp(fn, "has_event") == 0) {
		/* Whether it can be counted here; counting it is the
		 * expression's business if it reads it. */
		*value = event_find(x->ua, name) != NULL;
		return 0;
	}
	str_printf(x->why, sizeof(x->why), "%s reads %s(%s), which is not known here",
		   x->m[x->stack[x->depth - 1]].name, fn, name);
	return -ENOENT;
}

static int compile(struct perfexpr *x, struct metric *m)
{
	struct expr_names names = { variable, literal, function, x };
	char err[200];
	int r;

	if (m->state == 2)
		return 0;
	if (m->state == -1)
		return -ENOENT;
	if (m->state == 1) {
		str_printf(x->why, sizeof(x->why), "%s reads itself", m->name);
		return -ELOOP;
	}
	if (x->depth == EXPR_DEPTH_MAX)
		return -E2BIG;
	m->state = 1;
	x->stack[x->depth++] = (unsigned)(m - x->m);
	r = expr_compile(m->expr, &names, &m->e, err, sizeof(err));
	x->depth--;
	if (r < 0) {
		if (r == -EINVAL)
			str_printf(x->why, sizeof(x->why), "%s: %s", m->name, err);
		m->state = -1;
		return r;
	}
	m->var = PERFEXPR_EVENTS_MAX + (unsigned)(m - x->m);
	x->prog[x->n_prog++] = (unsigned)(m - x->m);
	m->state = 2;
	return 0;
}

/* perf prints a metric times its ScaleUnit; "100%" or "1percent of
 * slots" make a percentage of it: the fraction is the value times the
 * number over 100.  0 where the unit is not a percentage. */
static double scale_mult(const char *scale)
{
	char *end;
	double k;

	if (!scale)
		return 0;
	k = strtod(scale, &end);
	if (end == scale || !(k > 0))
		return 0;
	while (*end == ' ')
		end++;
	return *end == '%' || strncmp(end, "percent", 7) == 0 ? k / 100 : 0;
}

int perfexpr_new(const struct uarch *ua, td_catset cats, const struct perfexpr_env *env, struct perfexpr **ret,
		 char *why, size_t whylen)
{
	struct perfexpr *x = calloc(1, sizeof(*x));
	int r = 0;

	if (!x)
		return -ENOMEM;
	x->ua = ua;
	x->env = *env;
	for (unsigned i = 0; i < ua->n_metrics && r == 0; i++) {
		const struct ua_metric *um = &ua->metrics[i];
		const struct px_metric *pm;
		const char *in;
		struct metric *m;

		if (!td_catset_has(cats, um->cat) || td_catset_has(x->cats, um->cat))
			continue;
		pm = px_find(ua, um->table, um->perf_name, &in);
		if (!pm) {
			str_printf(x->why, sizeof(x->why), "%s's %s is not from perf's tables (%s)", ua->name,
				   um->perf_name, um->table);
			r = -ENOENT;
			break;
		}
		x->cat_mult[um->cat] = scale_mult(pm->scale);
		if (!x->cat_mult[um->cat]) {
			str_printf(x->why, sizeof(x->why), "perf's %s (%s) is not a percentage of the slots (ScaleUnit %s)",
				   um->perf_name, um->table, pm->scale ? pm->scale : "none");
			r = -EINVAL;
			break;
		}
		m = metric_of(x, um->perf_name, um->table);
		r = m ? compile(x, m) : -E2BIG;
		if (r == 0) {
			x->cat_var[um->cat] = m->var;
			x->cats |= 1u << um->cat;
		}
	}
	if (r == 0 && !x->cats) {
		str_printf(x->why, sizeof(x->why), "perf's tables name no metric for %s's categories", ua->name);
		r = -ENOENT;
	}
	if (r < 0) {
		str_copy(why, whylen, x->why[0] ? x->why : strerror(-r));
		perfexpr_free(x);
		return r;
	}
	*ret = x;
	return 0;
}

void perfexpr_free(struct perfexpr *x)
{
	if (!x)
		return;
	for (unsigned i = 0; i < x->n_metrics; i++)
		expr_free(x->m[i].e);
	free(x);
}

unsigned perfexpr_n_events(const struct perfexpr *x)
{
	return x->n_events;
}

const struct ua_event *perfexpr_event(const struct perfexpr *x, unsigned i)
{
	return i < x->n_events ? x->ev[i] : NULL;
}

td_catset perfexpr_cats(const struct perfexpr *x)
{
	return x->cats;
}

void perfexpr_eval(const struct perfexpr *x, const double *counts, double *frac)
{
	double vars[PERFEXPR_EVENTS_MAX + METRICS_MAX];

	for (unsigned i = 0; i < PERFEXPR_EVENTS_MAX + METRICS_MAX; i++)
		vars[i] = i < x->n_events ? counts[i] : NAN;
	for (unsigned i = 0; i < x->n_prog; i++) {
		const struct metric *m = &x->m[x->prog[i]];

		vars[m->var] = expr_eval(m->e, vars);
	}
	for (unsigned c = 0; c < TD_CAT_COUNT; c++)
		frac[c] = td_catset_has(x->cats, (enum td_cat)c) ? vars[x->cat_var[c]] * x->cat_mult[c] : NAN;
}
