/* SPDX-License-Identifier: MIT */
/* expr_eval: topdownd's compiler of perf's metric expressions (hw/expr.c)
 * over a table's metrics, for tests/oracle/expr_check.py to compare with
 * the independent evaluator (perfexpr.py).
 *
 *   expr_eval ids METRICS.json
 *       METRICS.json: {NAME: EXPR}.  Prints {NAME: {"events": [...],
 *       "literals": [...], "functions": [...]}} or {NAME: {"error": MSG}}:
 *       the names an expression reads (unescaped, as perf's lexer gives
 *       them), other metrics of the file followed.
 *   expr_eval eval METRICS.json SAMPLES.json
 *       SAMPLES.json: [{"events": {NAME: N}, "literals": {NAME: N},
 *       "functions": {"fn(NAME)": N}}, ...].  Prints {NAME: [VALUE or
 *       null, ...]} per sample (null: no value). */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "expr.h"

#define VARS_MAX 4096

/* One run over a metrics file: every name numbered, every metric compiled
 * on demand (its references first). */
struct table {
	json_t *exprs;            /* {NAME: EXPR} */
	json_t *sample;           /* the sample being evaluated, or NULL (ids) */
	char *names[VARS_MAX];
	int metric[VARS_MAX];     /* index into order[] of a metric name, -1 an event */
	unsigned n;
	/* Metrics compiled, in dependency order. */
	struct expr *code[VARS_MAX];
	unsigned var_of[VARS_MAX];
	unsigned n_metrics;
	unsigned compiling[64];
	unsigned depth;
	json_t *events, *literals, *functions; /* what the one being compiled reads */
};

static int compile(struct table *t, const char *name, unsigned *var, char *err, size_t errlen);

static int number(struct table *t, const char *name)
{
	for (unsigned i = 0; i < t->n; i++)
		if (!strcmp(t->names[i], name))
			return (int)i;
	if (t->n == VARS_MAX)
		return -E2BIG;
	t->names[t->n] = strdup(name);
	t->metric[t->n] = -1;
	return (int)t->n++;
}

static int variable(void *arg, const char *name, unsigned *index)
{
	struct table *t = arg;
	char err[512];
	int r;

	if (json_object_get(t->exprs, name)) {
		r = compile(t, name, index, err, sizeof(err));
		if (r < 0)
			fprintf(stderr, "expr_eval: %s: %s\n", name, err);
		return r;
	}
	r = number(t, name);
	if (r < 0)
		return r;
	*index = (unsigned)r;
	if (t->events && t->depth == 1) {
		size_t k;
		json_t *e;

		json_array_foreach(t->events, k, e)
			if (!strcmp(json_string_value(e), name))
				return 0;
		json_array_append_new(t->events, json_string(name));
	}
	return 0;
}

static double sample_value(const struct table *t, const char *kind, const char *name, int *found)
{
	json_t *v = t->sample ? json_object_get(json_object_get(t->sample, kind), name) : NULL;

	*found = v != NULL;
	return v ? json_number_value(v) : 0;
}

static int literal(void *arg, const char *name, double *value)
{
	struct table *t = arg;
	int found;

	if (t->literals && t->depth == 1)
		json_array_append_new(t->literals, json_string(name));
	*value = sample_value(t, "literals", name, &found);
	return found || !t->sample ? 0 : -ENOENT;
}

static int function(void *arg, const char *fn, const char *name, double *value)
{
	struct table *t = arg;
	char key[EXPR_NAME_MAX + 32];
	int found;

	snprintf(key, sizeof(key), "%s(%s)", fn, name);
	if (t->functions && t->depth == 1)
		json_array_append_new(t->functions, json_string(key));
	*value = sample_value(t, "functions", key, &found);
	return found || !t->sample ? 0 : -ENOENT;
}

static int compile(struct table *t, const char *name, unsigned *var, char *err, size_t errlen)
{
	struct expr_names names = { variable, literal, function, t };
	const char *text = json_string_value(json_object_get(t->exprs, name));
	struct expr *e;
	int slot = number(t, name), r;

	if (slot < 0)
		return slot;
	if (t->metric[slot] >= 0) {
		*var = (unsigned)slot;
		return 0;
	}
	for (unsigned i = 0; i < t->depth; i++)
		if (t->compiling[i] == (unsigned)slot) {
			snprintf(err, errlen, "%s refers to itself", name);
			return -ELOOP;
		}
	if (!text || t->depth == 64) {
		snprintf(err, errlen, "%s: no expression", name);
		return -ENOENT;
	}
	t->compiling[t->depth++] = (unsigned)slot;
	r = expr_compile(text, &names, &e, err, errlen);
	t->depth--;
	if (r < 0)
		return r;
	t->metric[slot] = (int)t->n_metrics;
	t->code[t->n_metrics] = e;
	t->var_of[t->n_metrics++] = (unsigned)slot;
	*var = (unsigned)slot;
	return 0;
}

static void reset(struct table *t)
{
	for (unsigned i = 0; i < t->n_metrics; i++)
		expr_free(t->code[i]);
	for (unsigned i = 0; i < t->n; i++)
		free(t->names[i]);
	t->n = t->n_metrics = t->depth = 0;
}

static json_t *load(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);

	if (!j) {
		fprintf(stderr, "expr_eval: %s:%d: %s\n", path, je.line, je.text);
		exit(2);
	}
	return j;
}

static int ids(struct table *t)
{
	json_t *out = json_object(), *v;
	const char *name;

	json_object_foreach(t->exprs, name, v) {
		json_t *m = json_object();
		char err[512];
		unsigned var;
		int r;

		(void)v;
		reset(t);
		t->events = json_array();
		t->literals = json_array();
		t->functions = json_array();
		r = compile(t, name, &var, err, sizeof(err));
		if (r < 0) {
			json_object_set_new(m, "error", json_string(err));
			json_decref(t->events);
			json_decref(t->literals);
			json_decref(t->functions);
		} else {
			/* Referenced metrics' reads are the file's too. */
			for (unsigned i = 0; i < t->n; i++) {
				bool listed = false;
				size_t k;
				json_t *e;

				if (t->metric[i] >= 0)
					continue;
				json_array_foreach(t->events, k, e)
					listed |= !strcmp(json_string_value(e), t->names[i]);
				if (!listed)
					json_array_append_new(t->events, json_string(t->names[i]));
			}
			json_object_set_new(m, "events", t->events);
			json_object_set_new(m, "literals", t->literals);
			json_object_set_new(m, "functions", t->functions);
		}
		t->events = t->literals = t->functions = NULL;
		json_object_set_new(out, name, m);
	}
	json_dumpf(out, stdout, JSON_COMPACT | JSON_SORT_KEYS);
	putchar('\n');
	json_decref(out);
	return 0;
}

static int eval(struct table *t, json_t *samples)
{
	json_t *out = json_object(), *v;
	const char *name;
	static double vars[VARS_MAX];

	json_object_foreach(t->exprs, name, v) {
		json_t *vals = json_array(), *sample;
		size_t s;

		(void)v;
		json_array_foreach(samples, s, sample) {
			char err[512];
			unsigned var;

			reset(t);
			t->sample = sample;
			if (compile(t, name, &var, err, sizeof(err)) < 0) {
				json_array_append_new(vals, json_string(err));
				continue;
			}
			for (unsigned i = 0; i < t->n; i++) {
				int found;

				vars[i] = t->metric[i] < 0 ? sample_value(t, "events", t->names[i], &found) : NAN;
			}
			/* References before the metrics that read them. */
			for (unsigned m = 0; m < t->n_metrics; m++)
				vars[t->var_of[m]] = expr_eval(t->code[m], vars);
			json_array_append_new(vals, isnan(vars[var]) ? json_null() : json_real(vars[var]));
		}
		json_object_set_new(out, name, vals);
	}
	json_dumpf(out, stdout, JSON_COMPACT | JSON_SORT_KEYS);
	putchar('\n');
	json_decref(out);
	return 0;
}

int main(int argc, char **argv)
{
	static struct table t;
	int r;

	if (argc == 3 && !strcmp(argv[1], "ids")) {
		t.exprs = load(argv[2]);
		r = ids(&t);
	} else if (argc == 4 && !strcmp(argv[1], "eval")) {
		json_t *samples = load(argv[3]);

		t.exprs = load(argv[2]);
		r = eval(&t, samples);
		json_decref(samples);
	} else {
		fprintf(stderr, "usage: expr_eval ids METRICS.json | expr_eval eval METRICS.json SAMPLES.json\n");
		return 2;
	}
	reset(&t);
	json_decref(t.exprs);
	return r < 0 ? 1 : 0;
}
