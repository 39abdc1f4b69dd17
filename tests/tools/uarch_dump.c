/* SPDX-License-Identifier: MIT */
/* uarch_dump: topdownd's per-microarchitecture tables and arithmetic, as
 * JSON, for tests/oracle/uarch_check.py to check against perf's tables.
 *
 *   uarch_dump tables     every microarchitecture: models, events (perf's
 *                         name, encoding terms, table), metrics
 *   uarch_dump arm_slots  arm64: the published slot widths (guests' caps/slots 0)
 *   uarch_dump perfexpr   every microarchitecture's categories compiled as
 *                         --compare-perf's events mode compiles them
 *   uarch_dump pxeval     eval's requests, evaluated as the events mode does
 *                         -> {"frac": {CATEGORY: F or null}}
 *   uarch_dump smtmode    {"uarch": ID, "slots": S, "cycles": C} per line: perf's
 *                         SMT mode metrics as the collector evaluates them
 *                         -> {"values": [FRACTION, ST, SMT] (null: none)}
 *   uarch_dump eval       one JSON object per stdin line
 *                         {"uarch": ID, "level": L, "refine": B, "counts": {NAME: N}}
 *                         -> {"slots": S, "frac": {CATEGORY: F}, "negative": B,
 *                             "no_value": B} or {"nodata": true} */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "perfexpr.h"
#include "smtmode.h"
#include "tma.h"
#include "uarch.h"

static const char *const formulas_name[] = {
	[UA_FORMULAS_GLC] = "glc", [UA_FORMULAS_ICL] = "icl", [UA_FORMULAS_METRICS] = "metrics",
	[UA_FORMULAS_SKL] = "skl", [UA_FORMULAS_GRT] = "grt", [UA_FORMULAS_CMT] = "cmt",
	[UA_FORMULAS_ZEN] = "zen", [UA_FORMULAS_NEOVERSE_V1] = "neoverse_v1",
	[UA_FORMULAS_NEOVERSE_N2V2] = "neoverse_n2v2", [UA_FORMULAS_NEOVERSE_V3N3] = "neoverse_v3n3",
	[UA_FORMULAS_AMPEREONE] = "ampereone", [UA_FORMULAS_NVIDIA_T410] = "nvidia_t410", [UA_FORMULAS_GLC_ALT] = "glc_alt", [UA_FORMULAS_ICL_ALT] = "icl_alt",
	[UA_FORMULAS_ARCH] = "arch",
};

static json_t *modes_json(unsigned modes)
{
	json_t *a = json_array();

	if (!modes || (modes & UA_MODE_NOSMT))
		json_array_append_new(a, json_string("nosmt"));
	if (!modes || (modes & UA_MODE_SMT))
		json_array_append_new(a, json_string("smt"));
	if (!modes || (modes & UA_MODE_EBS))
		json_array_append_new(a, json_string("ebs"));
	return a;
}

static json_t *event_json(const struct ua_event *e)
{
	return json_pack("{s:s, s:o, s:o, s:s, s:i, s:b, s:o, s:o, s:o}", "name", e->name,
			 "sysfs", e->sysfs ? json_string(e->sysfs) : json_null(),
			 "terms", e->terms ? json_string(e->terms) : json_null(),
			 "table", e->table, "level", e->level, "refine", e->refine,
			 "counter", e->counter ? json_string(e->counter) : json_null(),
			 "counter_htoff", e->counter_htoff ? json_string(e->counter_htoff) : json_null(),
			 "modes", modes_json(e->modes));
}

/* The SMT activity events and perf's metric (issue 43), or null. */
static json_t *smt_json(const struct ua_smt *smt)
{
	json_t *events;

	if (!smt)
		return json_null();
	events = json_array();
	for (unsigned i = 0; i < UA_SMT_EVENTS; i++)
		json_array_append_new(events, event_json(&smt->events[i]));
	return json_pack("{s:s, s:o, s:s, s:s, s:s}", "any",
			 smt->any == UA_SMT_DISTRIBUTED ? "distributed" : "xclk_any", "events", events,
			 "metric", smt->metric, "expr", smt->expr, "table", smt->table);
}

/* perf's SMT mode metrics (issue 44), or null. */
static json_t *smt_mode_json(const struct ua_smt_mode *m)
{
	json_t *metrics;

	if (!m)
		return json_null();
	metrics = json_array();
	for (unsigned i = 0; i < UA_SMT_MODE_METRICS; i++)
		json_array_append_new(metrics, json_pack("{s:s, s:s}", "perf_name", m->metric[i], "expr", m->expr[i]));
	return json_pack("{s:o, s:s}", "metrics", metrics, "table", m->table);
}

static json_t *uarch_json(const struct uarch *ua)
{
	json_t *o = json_object(), *models = json_array(), *events = json_array(),
	       *metrics = json_array();

	json_object_set_new(o, "id", json_string(ua->id));
	json_object_set_new(o, "name", json_string(ua->name));
	json_object_set_new(o, "vendor", json_string(ua->vendor));
	json_object_set_new(o, "family", json_integer(ua->family));
	for (unsigned i = 0; i < ua->n_models; i++)
		json_array_append_new(models, json_integer(ua->models[i]));
	json_object_set_new(o, "models", models);
	json_object_set_new(o, "cpuid_pattern", ua->cpuid_pattern ? json_string(ua->cpuid_pattern) : json_null());
	json_object_set_new(o, "gp_counters", json_integer(ua->gp_counters));
	json_object_set_new(o, "watchdog_takes_gp", json_boolean(ua->watchdog_takes_gp));
	json_object_set_new(o, "arch", json_string(ua->arch ? ua->arch : "x86"));
	{
		json_t *midrs = json_array();

		for (unsigned i = 0; i < UA_MIDRS_MAX && ua->midrs[i]; i++)
			json_array_append_new(midrs, json_string(ua->midrs[i]));
		json_object_set_new(o, "midrs", midrs);
	}
	json_object_set_new(o, "slots_from_caps", json_boolean(ua->slots_from_caps));
	json_object_set_new(o, "stall_fix_midr", ua->stall_fix_midr ? json_string(ua->stall_fix_midr) : json_null());
	json_object_set_new(o, "pmu", ua->pmu ? json_string(ua->pmu) : json_null());
	json_object_set_new(o, "formulas", json_string(formulas_name[ua->formulas]));
	json_object_set_new(o, "max_level", json_integer(ua->max_level));
	json_object_set_new(o, "width", json_integer(ua->width));
	json_object_set_new(o, "width_source", ua->width_source ? json_string(ua->width_source) : json_null());
	json_object_set_new(o, "core_scoped", json_boolean(ua->core_scoped));
	json_object_set_new(o, "alt_of", ua->alt_of ? json_string(ua->alt_of->id) : json_null());
	json_object_set_new(o, "guest_alt", ua->guest_alt ? json_string(ua->guest_alt->id) : json_null());
	{
		json_t *also = json_array();

		for (unsigned i = 0; i < UA_DIRS_MAX && ua->also[i]; i++)
			json_array_append_new(also, json_string(ua->also[i]));
		json_object_set_new(o, "also", also);
	}
	for (unsigned i = 0; i < ua->n_events; i++) {
		json_array_append_new(events, event_json(&ua->events[i]));
	}
	json_object_set_new(o, "events", events);
	json_object_set_new(o, "smt", smt_json(ua->smt));
	json_object_set_new(o, "smt_mode", smt_mode_json(ua->smt_mode));
	for (unsigned i = 0; i < ua->n_metrics; i++) {
		const struct ua_metric *m = &ua->metrics[i];

		json_array_append_new(metrics,
				      json_pack("{s:s, s:s, s:s, s:s}", "category", td_cat[m->cat].name,
						"perf_name", m->perf_name, "expr", m->expr, "table", m->table));
	}
	json_object_set_new(o, "metrics", metrics);
	return o;
}

/* By table directory and, where two share one (Alder Lake's P- and
 * E-cores), by core PMU. */
static const struct uarch *find(const char *id, const char *pmu)
{
	for (size_t i = 0; i < ua_count(); i++)
		if (strcmp(ua_get(i)->id, id) == 0 &&
		    (!pmu || !ua_get(i)->pmu || strcmp(ua_get(i)->pmu, pmu) == 0))
			return ua_get(i);
	for (size_t i = 0; i < ua_guest_count(); i++)
		if (strcmp(ua_guest_get(i)->id, id) == 0)
			return ua_guest_get(i);
	if (strcmp(ua_metrics_only()->id, id) == 0)
		return ua_metrics_only();
	if (strcmp(ua_intel_arch()->id, id) == 0)
		return ua_intel_arch();
	return NULL;
}

/* Every category of @ua's metrics. */
static td_catset metric_cats(const struct uarch *ua)
{
	td_catset all = 0;

	for (unsigned i = 0; i < ua->n_metrics; i++)
		all |= 1u << ua->metrics[i].cat;
	return all;
}

/* "eval": tma.c's figures for request @in. */
static json_t *eval_request(json_t *in, const struct uarch *ua)
{
	json_t *counts, *out, *frac;
	struct tma_model model;
	struct tma_input input;
	struct tma_result res;
	const char *name;
	json_t *v;

	model = (struct tma_model){ .formulas = ua->formulas,
				    .refine = json_is_true(json_object_get(in, "refine")),
				    .level = (unsigned)json_integer_value(json_object_get(in, "level")),
				    .width = ua->width };
	/* arm64: the PMU's caps/slots and the CPU's MIDR, as discovery
	 * takes them. */
	model.slots_per_cycle = (unsigned)json_integer_value(json_object_get(in, "slots"));
	if (json_is_string(json_object_get(in, "midr")))
		model.stall_minus_cycles =
			ua_stall_minus_cycles(ua, strtoull(json_string_value(json_object_get(in, "midr")), NULL, 16));
	{
		const char *mode = json_string_value(json_object_get(in, "mode"));

		model.mode = !mode || strcmp(mode, "nosmt") == 0 ? UA_MODE_NOSMT :
			     strcmp(mode, "smt") == 0 ? UA_MODE_SMT : UA_MODE_EBS;
	}
	memset(&input, 0, sizeof(input));
	counts = json_object_get(in, "counts");
	json_object_foreach(counts, name, v) {
		for (unsigned i = 0; i < ua->n_events; i++)
			if (strcmp(ua->events[i].name, name) == 0)
				input.v[ua->events[i].var] = json_number_value(v);
	}
	if (tma_compute(&model, &input, &res) < 0) {
		out = json_pack("{s:b}", "nodata", 1);
	} else {
		frac = json_object();
		for (int c = 0; c < TD_CAT_COUNT; c++)
			json_object_set_new(frac, td_cat[c].name, json_real(res.frac[c]));
		out = json_pack("{s:f, s:o, s:b, s:b}", "slots", res.slots, "frac", frac, "negative",
				(res.departures >> TMA_DEP_NEGATIVE) & 1, "no_value",
				(res.departures >> TMA_DEP_NO_VALUE) & 1);
	}
	return out;
}

/* perf's expressions of every microarchitecture's categories as
 * --compare-perf compiles them where perf does not know the model (an SMT
 * machine counted whole, #slots the published width or 5, the first MIDR
 * perf maps): the events perf would count, or why it cannot. */
static json_t *perfexpr_json(const struct uarch *ua)
{
	struct perfexpr_env env = { .smt_on = true, .core_wide = true, .slots = ua->width ? ua->width : 5 };
	struct perfexpr *x = NULL;
	char why[256] = "";
	json_t *events = json_array(), *o;
	int r;

	if (ua->midrs[0]) {
		env.have_midr = true;
		env.midr = strtoull(ua->midrs[0], NULL, 16);
	}
	r = perfexpr_new(ua, metric_cats(ua), &env, &x, why, sizeof(why));
	for (unsigned i = 0; r == 0 && i < perfexpr_n_events(x); i++)
		json_array_append_new(events, json_string(perfexpr_event(x, i)->name));
	o = json_pack("{s:s, s:s?, s:i, s:i, s:o, s:s?}", "uarch", ua->id, "pmu", ua->pmu, "metrics",
		      (int)ua->n_metrics, "compiled", r == 0 ? (int)__builtin_popcount(perfexpr_cats(x)) : 0,
		      "events", events, "error", r < 0 ? why : NULL);
	perfexpr_free(x);
	return o;
}

/* "pxeval": the request eval takes; perf's expressions as
 * --compare-perf's events mode evaluates them on the counts (by topdownd's
 * event names) -> {"frac": {CATEGORY: F or null}} or {"error": WHY}. */
static json_t *pxeval_request(json_t *in, const struct uarch *ua)
{
	json_t *out, *frac, *counts;
	struct perfexpr_env env = { 0 };
	struct perfexpr *x = NULL;
	double c[PERFEXPR_EVENTS_MAX], f[TD_CAT_COUNT];
	const char *mode;
	char why[256] = "";

	mode = json_string_value(json_object_get(in, "mode"));
	env.smt_on = mode && strcmp(mode, "nosmt") != 0;
	env.core_wide = !mode || strcmp(mode, "ebs") != 0;
	env.slots = (unsigned)json_integer_value(json_object_get(in, "slots"));
	if (json_is_string(json_object_get(in, "midr"))) {
		env.have_midr = true;
		env.midr = strtoull(json_string_value(json_object_get(in, "midr")), NULL, 16);
	}
	if (perfexpr_new(ua, metric_cats(ua), &env, &x, why, sizeof(why)) < 0) {
		out = json_pack("{s:s}", "error", why);
	} else {
		counts = json_object_get(in, "counts");
		for (unsigned i = 0; i < perfexpr_n_events(x); i++)
			c[i] = json_number_value(json_object_get(counts, perfexpr_event(x, i)->name));
		perfexpr_eval(x, c, f);
		frac = json_object();
		for (int k = 0; k < TD_CAT_COUNT; k++)
			if (td_catset_has(perfexpr_cats(x), (enum td_cat)k))
				json_object_set_new(frac, td_cat[k].name, isnan(f[k]) ? json_null() : json_real(f[k]));
		out = json_pack("{s:o}", "frac", frac);
	}
	perfexpr_free(x);
	return out;
}

/* "smtmode": perf's SMT mode metrics on {"slots", "cycles"} as the
 * collector evaluates them (hw/smtmode) -> {"values": [...]} or
 * {"error": WHY}. */
static json_t *smtmode_request(json_t *in, const struct uarch *ua)
{
	struct smtmode *x = NULL;
	double v[UA_SMT_MODE_METRICS];
	char why[256] = "no SMT mode metrics";
	json_t *out, *values;

	if (!ua->smt_mode || smtmode_new(ua->smt_mode, &x, why, sizeof(why)) < 0)
		return json_pack("{s:s}", "error", why);
	smtmode_eval(x, json_number_value(json_object_get(in, "slots")), json_number_value(json_object_get(in, "cycles")),
		     v);
	values = json_array();
	for (unsigned i = 0; i < UA_SMT_MODE_METRICS; i++)
		json_array_append_new(values, isnan(v[i]) ? json_null() : json_real(v[i]));
	out = json_pack("{s:o}", "values", values);
	smtmode_free(x);
	return out;
}

/* One request line for eval, pxeval or smtmode: its answer on a line of stdout. */
static int answer_line(const char *line, json_t *(*fn)(json_t *, const struct uarch *))
{
	json_error_t err;
	json_t *in = json_loads(line, 0, &err), *out;
	const struct uarch *ua;
	char *text;

	if (!in) {
		fprintf(stderr, "uarch_dump: bad input: %s\n", err.text);
		return -1;
	}
	ua = find(json_string_value(json_object_get(in, "uarch")), json_string_value(json_object_get(in, "pmu")));
	if (!ua) {
		fprintf(stderr, "uarch_dump: unknown uarch\n");
		json_decref(in);
		return -1;
	}
	out = fn(in, ua);
	text = json_dumps(out, JSON_COMPACT | JSON_REAL_PRECISION(17));
	printf("%s\n", text);
	free(text);
	json_decref(out);
	json_decref(in);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "tables") == 0) {
		json_t *all = json_array();
		char *text;

		for (size_t i = 0; i < ua_count(); i++)
			json_array_append_new(all, uarch_json(ua_get(i)));
		for (size_t i = 0; i < ua_guest_count(); i++)
			json_array_append_new(all, uarch_json(ua_guest_get(i)));
		json_array_append_new(all, uarch_json(ua_metrics_only()));
		json_array_append_new(all, uarch_json(ua_intel_arch()));
		text = json_dumps(all, JSON_INDENT(1));
		printf("%s\n", text);
		free(text);
		json_decref(all);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "perfexpr") == 0) {
		json_t *all = json_array();
		char *text;

		for (size_t i = 0; i < ua_count(); i++)
			json_array_append_new(all, perfexpr_json(ua_get(i)));
		text = json_dumps(all, JSON_INDENT(1));
		printf("%s\n", text);
		free(text);
		json_decref(all);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "without") == 0) {
		json_t *all = json_array();
		char *text;

		for (size_t i = 0; i < ua_without_count(); i++) {
			const struct ua_without *w = ua_without_get(i);

			json_array_append_new(all, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "vendor", w->vendor,
							     "arch", w->arch ? w->arch : "x86", "cpuid_pattern",
							     w->cpuid_pattern, "table", w->table, "name", w->name,
							     "why", w->why));
		}
		text = json_dumps(all, JSON_INDENT(1));
		printf("%s\n", text);
		free(text);
		json_decref(all);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "no_reference") == 0) {
		json_t *all = json_array();
		char *text;

		for (size_t i = 0; i < ua_no_reference_count(); i++) {
			const struct ua_without *w = ua_no_reference_get(i);

			json_array_append_new(all, json_pack("{s:s, s:s, s:s?, s:s, s:s?}", "vendor", w->vendor,
							     "cpuid_pattern", w->cpuid_pattern, "table", w->table, "name",
							     w->name, "pmu", w->pmu));
		}
		text = json_dumps(all, JSON_INDENT(1));
		printf("%s\n", text);
		free(text);
		json_decref(all);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "arm_slots") == 0) {
		json_t *all = json_array();
		size_t n;
		const struct ua_arm_slots *t = ua_arm_slots_table(&n);
		char *text;

		for (size_t i = 0; i < n; i++)
			json_array_append_new(all, json_pack("{s:i, s:i, s:i, s:s, s:s}", "implementer",
							     (int)t[i].implementer, "part", (int)t[i].part,
							     "slots", (int)t[i].slots, "name", t[i].name,
							     "source", t[i].source));
		text = json_dumps(all, JSON_INDENT(1));
		printf("%s\n", text);
		free(text);
		json_decref(all);
		return 0;
	}
	if (argc == 2 && (strcmp(argv[1], "eval") == 0 || strcmp(argv[1], "pxeval") == 0 ||
			  strcmp(argv[1], "smtmode") == 0)) {
		json_t *(*fn)(json_t *, const struct uarch *) = argv[1][0] == 'e' ? eval_request
							       : argv[1][0] == 'p' ? pxeval_request : smtmode_request;
		char *line = NULL;
		size_t cap = 0;

		while (getline(&line, &cap, stdin) > 0) {
			if (answer_line(line, fn) < 0)
				return 1;
			fflush(stdout);
		}
		free(line);
		return 0;
	}
	fprintf(stderr, "usage: uarch_dump tables | perfexpr | without | no_reference | arm_slots | eval | pxeval | smtmode\n");
	return 64;
}
