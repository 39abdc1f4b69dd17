/* SPDX-License-Identifier: MIT */
/* api: JSON document and query parsing. */
#include "api.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "tma.h"
#include "util.h"

int api_parse_query(const char *scope, const char *level, const char *cpu, const char *window,
		    struct api_query *q, char *err, size_t errlen)
{
	static const char *const scopes[] = { "host", "package", "core", "cpu" };
	bool cgroup = scope && strcmp(scope, "cgroup") == 0;
	char sub[160];

	memset(q, 0, sizeof(*q));
	q->scope = API_SCOPE_HOST;
	/* Everything the daemon computes: level 2, and the nodes below it
	 * when [collect] level asks for them. */
	q->level = DEPTH_LEVEL_MAX;
	if (cgroup) {
		/* The host, and the buckets of per-cgroup attribution. */
		q->cgroups = true;
	} else if (scope) {
		size_t i;

		for (i = 0; i < 4; i++)
			if (strcmp(scope, scopes[i]) == 0)
				break;
		if (i == 4) {
			snprintf(err, errlen, "invalid scope \"%.64s\": expected host, package, core, cpu or cgroup",
				 scope);
			return -EINVAL;
		}
		q->scope = (enum api_scope)i;
	}
	if (level) {
		if (level[0] < '1' || level[0] > '0' + DEPTH_LEVEL_MAX || level[1]) {
			snprintf(err, errlen, "invalid level \"%.64s\": expected 1 to %d", level, DEPTH_LEVEL_MAX);
			return -EINVAL;
		}
		q->level = (unsigned)(level[0] - '0');
	}
	if (cpu) {
		if (cpuset_parse(cpu, &q->cpus, sub, sizeof(sub)) < 0 || cpuset_empty(&q->cpus)) {
			snprintf(err, errlen, "invalid cpu \"%.64s\": expected a CPU list like 0-3,8",
				 cpu);
			return -EINVAL;
		}
		q->has_cpus = true;
		/* Asking for CPUs means wanting to see them. */
		if (!scope)
			q->scope = API_SCOPE_CPU;
	}
	if (window) {
		if (parse_duration(window, &q->window_ns, sub, sizeof(sub)) < 0 || q->window_ns == 0) {
			snprintf(err, errlen, "invalid window \"%.64s\": expected a duration like 30s, 5m or 1h",
				 window);
			return -EINVAL;
		}
	}
	return 0;
}

int api_check_query(const struct snapshot *snap, const struct api_query *q, uint64_t history_ns,
		    char *err, size_t errlen)
{
	if (q->has_cpus) {
		struct cpuset have, missing;
		char list[128], all[128];

		cpuset_zero(&have);
		for (unsigned i = 0; i < snap->n_cpus; i++)
			cpuset_set(&have, (unsigned)snap->cpus[i].cpu);
		cpuset_andnot(&missing, &q->cpus, &have);
		if (!cpuset_empty(&missing)) {
			cpuset_format(&missing, list, sizeof(list));
			cpuset_format(&have, all, sizeof(all));
			snprintf(err, errlen, "invalid cpu: %s %s not exist on this host (its CPUs are %s)",
				 list, cpuset_count(&missing) == 1 ? "does" : "do", all);
			return -EINVAL;
		}
	}
	if (q->window_ns) {
		char have[32], want[32];

		if (q->cgroups) {
			snprintf(err, errlen, "window covers scope=host and scope=package (the history keeps "
				 "no cgroups); difference the slots of two scope=cgroup requests");
			return -EINVAL;
		}
		if (q->scope > API_SCOPE_PACKAGE || q->has_cpus) {
			snprintf(err, errlen, "window covers scope=host and scope=package (the history keeps "
				 "nothing finer); for CPUs, difference the *_slots_total of two requests");
			return -EINVAL;
		}
		if (q->window_ns > history_ns) {
			format_duration(q->window_ns, want, sizeof(want));
			format_duration(history_ns, have, sizeof(have));
			snprintf(err, errlen, "window %s is longer than the history kept ([collect] history = %s)",
				 want, have);
			return -EINVAL;
		}
	}
	return 0;
}

/* Ratios to 6 decimals: more would only show the 8-bit quantisation. */
static json_t *ratio(double v)
{
	return json_real(round(v * 1e6) / 1e6);
}

static json_t *count(double v)
{
	/* Counters beyond 2^63 (a big host after weeks) stay exact enough
	 * as reals; below, integers print exactly. */
	if (v < 9.2e18)
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* The cumulative counts of a level's categories, integers. */
static json_t *totals_of(const struct snap_counts *c, unsigned level, td_catset cats)
{
	json_t *o = json_object();

	for (int i = 0; i < TD_CAT_COUNT; i++)
		if (td_catset_has(cats, (enum td_cat)i) && td_cat[i].level == level)
			json_object_set_new(o, td_cat[i].name, count(c->total[TD_C_CAT + i]));
	return o;
}

/* Fields shared by the host, a package, a core, a CPU and a selection:
 * the last interval's ratios (or the window's, whose counts are in
 * c->last), and the cumulative counts a client can difference itself. */
static int add_counts(json_t *obj, const struct snap_counts *c, unsigned level, td_catset cats)
{
	/* The entity's own categories: an E-core has no heavy_operations. */
	if (c->cats)
		cats = c->cats;
	const double *last = c->last;
	double slots = last[TD_C_SLOTS];
	json_t *l1 = NULL, *l2 = NULL, *tree = NULL;
	char bottleneck[80];

	json_object_set_new(obj, "slots", count(slots));
	json_object_set_new(obj, "slots_total", count(c->total[TD_C_SLOTS]));
	json_object_set_new(obj, "level1_slots_total", totals_of(c, 1, cats));
	if (level >= 2)
		json_object_set_new(obj, "level2_slots_total", totals_of(c, 2, cats));
	json_object_set_new(obj, "enabled_seconds_total", json_real(round(c->total[TD_C_ENABLED] / 1e6) / 1e3));
	json_object_set_new(obj, "running_seconds_total", json_real(round(c->total[TD_C_RUNNING] / 1e6) / 1e3));
	json_object_set_new(obj, "running_ratio",
			    last[TD_C_ENABLED] > 0 ? ratio(last[TD_C_RUNNING] / last[TD_C_ENABLED])
						   : json_null());
	/* The figures are over the CPUs measured in the last interval: a
	 * partly measured package says so. */
	json_object_set_new(obj, "cpus_expected", json_integer(c->cpus));
	json_object_set_new(obj, "cpus_measured", json_integer(c->measured));
	if (slots <= 0) {
		json_object_set_new(obj, "level1", json_null());
		if (level >= 2) {
			json_object_set_new(obj, "level2", json_null());
			json_object_set_new(obj, "level2_by_parent", json_null());
		}
		json_object_set_new(obj, "bottleneck", json_null());
		return 0;
	}
	l1 = json_object();
	l2 = json_object();
	tree = json_object();
	for (int i = 0; i < TD_CAT_COUNT; i++) {
		if (!td_catset_has(cats, (enum td_cat)i) || td_cat[i].level > level)
			continue;
		json_object_set_new(td_cat[i].level == 1 ? l1 : l2, td_cat[i].name,
				    ratio(last[TD_C_CAT + i] / slots));
		if (td_cat[i].level == 2) {
			const char *parent = td_cat[td_cat[i].parent].name;
			json_t *children = json_object_get(tree, parent);

			if (!children) {
				children = json_object();
				json_object_set_new(tree, parent, children);
			}
			json_object_set_new(children, td_cat[i].name, ratio(last[TD_C_CAT + i] / slots));
		}
	}
	json_object_set_new(obj, "level1", l1);
	if (level >= 2) {
		json_object_set_new(obj, "level2", l2);
		json_object_set_new(obj, "level2_by_parent", tree);
	} else {
		json_decref(l2);
		json_decref(tree);
	}
	tma_bottleneck(&last[TD_C_CAT], cats, level >= 2, bottleneck, sizeof(bottleneck));
	json_object_set_new(obj, "bottleneck", bottleneck[0] ? json_string(bottleneck) : json_null());
	return 0;
}

/* Counts over a window: what was added since @then. */
static void windowed(const struct snap_counts *now, const double *then, struct snap_counts *out)
{
	for (int k = 0; k < TD_C_COUNT; k++) {
		out->total[k] = now->total[k];
		out->last[k] = then && now->total[k] >= then[k] ? now->total[k] - then[k] : 0;
	}
	out->cats = now->cats;
}

static const double *pkg_then(const struct history_sample *then, int package)
{
	for (unsigned p = 0; then && p < then->n_pkgs; p++)
		if (then->pkg_ids[p] == package)
			return then->pkgs[p];
	return NULL;
}

static bool pkg_selected(const struct snapshot *snap, const struct api_query *q, unsigned pkg)
{
	if (!snap->pkgs[pkg].covered)
		return false;
	if (!q->has_cpus)
		return true;
	for (unsigned i = 0; i < snap->n_cpus; i++)
		if (snap->cpus[i].pkg_idx == (int)pkg && cpuset_test(&q->cpus, (unsigned)snap->cpus[i].cpu))
			return true;
	return false;
}

static bool core_selected(const struct snapshot *snap, const struct api_query *q, unsigned core)
{
	if (!snap->cores[core].covered)
		return false;
	if (!q->has_cpus)
		return true;
	for (unsigned i = 0; i < snap->n_cpus; i++)
		if (snap->cpus[i].core_idx == (int)core && cpuset_test(&q->cpus, (unsigned)snap->cpus[i].cpu))
			return true;
	return false;
}

/* A string from outside (a cgroup's name, sysfs, the hostname): jansson
 * refuses one that is not UTF-8 (json_string() is NULL, and the key would
 * be left out), so such bytes and control characters but newlines are
 * written as the text \xNN, as /metrics writes them (str_escape_text). */
static json_t *ext_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	json_t *j;
	char *clean;
	size_t n;

	for (; *p; p += n) {
		n = utf8_len(p);
		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f) && *p != '\n'))
			break;
	}
	if (!*p)
		return json_string(s);
	n = 4 * strlen(s) + 1;
	clean = malloc(n);
	if (!clean)
		return NULL;
	str_escape_text(clean, n, s);
	j = json_string(clean);
	free(clean);
	return j;
}

/* What other users leave a CPU (collect/share.c): its general-purpose
 * counters free of their pinned events, whether they hold fixed counter
 * 1 (arm64: the cycle counter) or fixed counter 3 (SLOTS), and whether it
 * gave its general-purpose counters back ([collect] pmu_sharing). */
static json_t *cpu_counters(const struct snap_cpu *c)
{
	return json_pack("{s:i,s:b,s:b,s:b}", "general_purpose_free", (int)c->gp_free, "fixed1_held",
			 c->fixed1_held, "slots_held", c->slots_held, "yielded", c->yielded);
}

static json_t *str_or_null(const char *s)
{
	return s && s[0] ? ext_string(s) : json_null();
}

static json_t *pmu_object(const struct snapshot *snap, const struct snap_pmu *p)
{
	json_t *o = json_object();

	(void)snap;
	json_object_set_new(o, "name", str_or_null(p ? p->name : NULL));
	json_object_set_new(o, "pmu_name", str_or_null(p ? p->pmu_name : NULL));
	json_object_set_new(o, "uarch", str_or_null(p ? p->uarch : NULL));
	json_object_set_new(o, "level", json_integer(p ? p->level : 0));
	json_object_set_new(o, "model", str_or_null(p ? p->model : NULL));
	json_object_set_new(o, "per_cpu", json_string(p && p->core_share ? "core_share" : "thread"));
	if (p && p->reason[0])
		json_object_set_new(o, "reason", ext_string(p->reason));
	if (p && p->level) {
		json_t *d = json_object();

		for (int k = 0; k < TMA_DEP_COUNT; k++)
			json_object_set_new(d, tma_departure_name((enum tma_departure)k),
					    json_integer((json_int_t)p->departures[k]));
		json_object_set_new(o, "departures", d);
	}
	return o;
}

/* Per-cgroup attribution: its state, and each bucket by slots. */
static void add_cgroups(json_t *doc, const struct snapshot *snap, unsigned level)
{
	const struct snap_cgstat *cg = &snap->cg;
	json_t *state = json_object(), *arr = json_array();
	unsigned order[snap->n_cgroups ? snap->n_cgroups : 1];

	json_object_set_new(state, "enabled", json_boolean(cg->enabled));
	json_object_set_new(state, "attributing", json_boolean(cg->attributing));
	json_object_set_new(state, "trigger", str_or_null(cg->trigger));
	json_object_set_new(state, "reason", str_or_null(cg->reason));
	json_object_set_new(state, "level", json_integer(cg->level));
	json_object_set_new(state, "tracked", json_integer(cg->tracked));
	json_object_set_new(state, "dropped", json_integer(cg->dropped));
	json_object_set_new(state, "switches", count(cg->switches));
	json_object_set_new(state, "bpf_seconds", json_real(cg->bpf_seconds));
	json_object_set_new(doc, "cgroup_attribution", state);
	snapshot_cgroups_by_slots(snap, false, order);
	for (unsigned i = 0; i < snap->n_cgroups; i++) {
		const struct snap_cgroup *c = &snap->cgroups[order[i]];
		json_t *o = json_object();

		json_object_set_new(o, "cgroup", ext_string(c->name));
		if (c->qos_class) {
			json_object_set_new(o, "pod_uid", ext_string(c->pod_uid));
			json_object_set_new(o, "container_id", str_or_null(c->container_id));
			json_object_set_new(o, "qos_class", ext_string(c->qos_class));
		}
		add_counts(o, &c->c, level < cg->level ? level : cg->level, c->c.cats);
		/* A cgroup runs on whichever CPUs: the host says which were
		 * measured. */
		json_object_del(o, "cpus_expected");
		json_object_del(o, "cpus_measured");
		json_array_append_new(arr, o);
	}
	json_object_set_new(doc, "cgroups", arr);
}

/* Below level 2: the entity's nodes (row @row of the snapshot's), down
 * to @level: the last interval's values (null: none) and the cumulative
 * counts.  Over a window (@window), the values are what the counts gained
 * since @then (the entity's history sample: the nodes' slots_total, then
 * the base slots), as a rate() of /metrics' counters gives them; null
 * without a sample of the same depth plan (nodes_then). */
static void add_nodes(json_t *obj, const struct snap_deep *d, unsigned row, unsigned level, bool window,
		      const double *then)
{
	json_t *last, *slots, *measured;
	double base = 0;

	if (!d->n_nodes || level < 3 || row >= d->rows)
		return;
	if (then)
		base = d->row_slots_total[row] - then[d->n_nodes];
	last = json_object();
	slots = json_object();
	measured = json_object();
	for (unsigned k = 0; k < d->n_nodes; k++) {
		size_t at = (size_t)row * d->n_nodes + k;
		const char *name = depth_short(d->node[k]->name);
		double v = d->last[at];

		if (d->node[k]->level > level)
			continue;
		if (window) {
			double gained = then ? d->slots_total[at] - then[k] : -1;

			v = base > 0 && gained >= 0 ? gained / base : NAN;
		}
		json_object_set_new(last, name, isfinite(v) ? ratio(v) : json_null());
		json_object_set_new(slots, name, count(d->slots_total[at]));
		json_object_set_new(measured, name, json_real(round(d->measured_ns_total[at] / 1e6) / 1e3));
	}
	json_object_set_new(obj, "nodes", last);
	json_object_set_new(obj, "nodes_slots_total", slots);
	json_object_set_new(obj, "nodes_measured_seconds_total", measured);
	json_object_set_new(obj, "nodes_base_slots_total", count(d->row_slots_total[row]));
}

/* A window's start for the nodes of the host (@pkg -1) or a package (its
 * id): NULL when the sample has no nodes or other ones (a reload to
 * another level, CPUs gone or come back since: their totals restarted). */
static const double *nodes_then(const struct snapshot *snap, const struct history_sample *then, int pkg)
{
	unsigned width = snapshot_deep_width(snap);

	if (!then || !width || then->deep_gen != snap->deep[0].gen || then->layout != snap->layout ||
	    then->n_nodes + 1 != width)
		return NULL;
	return history_sample_nodes(then, pkg);
}

/* With [collect] drilldown, the subtree a package (the host) counts:
 * the level-2 category's name, null before the first choice (or, for
 * the host, while its packages differ). */
static void add_drill(json_t *obj, const struct snap_deep *d, const char *drill, unsigned level)
{
	if (d->n_nodes && d->drilldown && level >= 3)
		json_object_set_new(obj, "drilldown", drill ? json_string(depth_short(drill)) : json_null());
}

/* An entity's nodes below level 2 (its row @row in each tree): in the
 * entity itself those of the first tree that has the row (a CPU's or a
 * core's: its core type's), and on a hybrid part (trees of two core
 * PMUs, whose nodes share names) every tree's with the row under
 * "nodes_by_pmu", by PMU.  @drill: the entity's subtree in each tree
 * (NULL: none shown); @then: its history sample's nodes for a window. */
static void add_trees(json_t *obj, const struct snapshot *snap, unsigned row, unsigned level, bool window,
		      const double *then, const char *const *drill)
{
	json_t *by = NULL;
	bool first = true;
	unsigned n = 0;

	for (unsigned t = 0; t < snap->n_deep; t++)
		n += snap->deep[t].n_nodes && row < snap->deep[t].rows && snap_deep_covers(snap, &snap->deep[t], row);
	for (unsigned t = 0; t < snap->n_deep; t++) {
		const struct snap_deep *d = &snap->deep[t];
		const double *tt = then ? then + snapshot_deep_offset(snap, t) : NULL;

		if (!d->n_nodes || level < 3 || row >= d->rows || !snap_deep_covers(snap, d, row))
			continue;
		if (first) {
			first = false;
			add_nodes(obj, d, row, level, window, tt);
			if (drill)
				add_drill(obj, d, drill[t], level);
		}
		if (n < 2)
			continue;
		if (!by)
			by = json_object();
		{
			json_t *o = json_object();

			add_nodes(o, d, row, level, window, tt);
			if (drill)
				add_drill(o, d, drill[t], level);
			json_object_set_new(by, d->pmu, o);
		}
	}
	if (by)
		json_object_set_new(obj, "nodes_by_pmu", by);
}

/* The tree below level 2 itself, once: what each node is. */
/* A core's, package's or host's SMT split: seconds since start by state,
 * and the last interval's shares (null when it was not split). */
static void add_smt(json_t *obj, const struct snap_smt *row, const struct snap_core *core)
{
	json_t *o, *tot, *last;
	double span = 0;

	if (!row->ever)
		return;
	o = json_object();
	tot = json_object();
	last = row->valid ? json_object() : json_null();
	for (unsigned s = 0; s < SMT_STATE_COUNT; s++)
		span += row->last[s];
	for (unsigned s = 0; s < SMT_STATE_COUNT; s++) {
		json_object_set_new(tot, smt_state_name[s], json_real(round(row->total[s] * 1e9) / 1e9));
		if (row->valid)
			json_object_set_new(last, smt_state_name[s], ratio(span > 0 ? row->last[s] / span : 0));
	}
	json_object_set_new(o, "seconds_total", tot);
	json_object_set_new(o, "last", last);
	if (core) {
		json_object_set_new(o, "first_cpu", json_integer(core->first_cpu));
		json_object_set_new(o, "second_cpu", json_integer(core->second_cpu));
	} else {
		json_object_set_new(o, "cores", json_integer(row->cores));
	}
	json_object_set_new(obj, "smt", o);
}

/* An entity's perf SMT mode metrics (NVIDIA Olympus): its cycles in each
 * mode since start, and the last interval's share in ST mode (null: none). */
static void add_mode(json_t *obj, const struct snap_mode *row)
{
	json_t *o, *tot;

	if (!row->ever)
		return;
	o = json_object();
	tot = json_object();
	for (unsigned m = 0; m < SMT_MODE_COUNT; m++)
		json_object_set_new(tot, smt_mode_name[m], count(row->total[m]));
	json_object_set_new(o, "cycles_total", tot);
	json_object_set_new(o, "st_fraction", row->valid ? ratio(row->fraction) : json_null());
	json_object_set_new(obj, "smt_mode", o);
}

static json_t *tree_object(const struct snap_deep *d, unsigned level)
{
	json_t *o = json_object(), *nodes = json_array();

	json_object_set_new(o, "pmu", ext_string(d->pmu));
	json_object_set_new(o, "level", json_integer(d->level < level ? d->level : level));
	json_object_set_new(o, "groups", json_integer(d->n_groups));
	json_object_set_new(o, "drilldown", json_boolean(d->drilldown));
	json_object_set_new(o, "source", json_string(d->source));
	json_object_set_new(o, "reason", str_or_null(d->reason));
	for (unsigned k = 0; k < d->n_nodes; k++) {
		json_t *n;

		if (d->node[k]->level > level)
			continue;
		n = json_object();
		json_object_set_new(n, "node", json_string(depth_short(d->node[k]->name)));
		json_object_set_new(n, "level", json_integer(d->node[k]->level));
		json_object_set_new(n, "parent", json_string(depth_short(d->node[k]->parent)));
		json_object_set_new(n, "perf_metric", json_string(d->node[k]->name));
		json_object_set_new(n, "description", json_string(d->node[k]->brief));
		json_array_append_new(nodes, n);
	}
	json_object_set_new(o, "nodes", nodes);
	return o;
}

json_t *api_document(const struct snapshot *snap, const struct api_query *q,
		     const struct history_sample *then, const char *hostname, const char *version)
{
	unsigned level = q->level < snap->level ? q->level : snap->level;
	json_t *doc = json_object(), *pmu, *host, *states, *arr, *errors, *config;
	bool window = q->window_ns && then;
	struct snap_counts wc;

	if (!doc)
		return NULL;
	json_object_set_new(doc, "api_version", json_string(API_VERSION));
	json_object_set_new(doc, "version", json_string(version));
	json_object_set_new(doc, "hostname", ext_string(hostname));
	json_object_set_new(doc, "timestamp", json_real(round(snap->timestamp * 1e3) / 1e3));
	json_object_set_new(doc, "interval_seconds", json_real(snap->interval_s));
	/* The configured interval above; the last one as it happened (a
	 * stopped or overloaded daemon makes it longer). */
	json_object_set_new(doc, "last_interval_seconds",
			    snap->last_interval_s > 0 ? json_real(round(snap->last_interval_s * 1e3) / 1e3)
						     : json_null());
	json_object_set_new(doc, "intervals", json_integer((json_int_t)snap->seq));
	json_object_set_new(doc, "intervals_missed", json_integer((json_int_t)snap->intervals_missed));
	/* How long the last interval's reads took: every CPU's figures were
	 * read between timestamp - collection_seconds and timestamp. */
	json_object_set_new(doc, "collection_seconds", json_real(round(snap->duration_s * 1e6) / 1e6));
	json_object_set_new(doc, "up", json_boolean(snap->up));
	errors = json_object();
	for (int k = 0; k < COLL_ERR_COUNT; k++)
		json_object_set_new(errors, coll_error_name[k], json_integer((json_int_t)snap->errors[k]));
	json_object_set_new(doc, "collection_errors", errors);
	config = json_object();
	json_object_set_new(config, "last_reload_successful", json_boolean(snap->config_ok));
	json_object_set_new(config, "loaded_timestamp", json_real(round(snap->config_loaded_at * 1e3) / 1e3));
	json_object_set_new(doc, "config", config);

	/* "pmu" is the first core PMU (the one monitored on a hybrid part);
	 * "pmus" lists every core PMU. */
	pmu = pmu_object(snap, snap->n_pmus ? &snap->pmus[0] : NULL);
	if (!snap->n_pmus)
		json_object_set_new(pmu, "level", json_integer(snap->level));
	if (snap->reason[0] && !json_object_get(pmu, "reason"))
		json_object_set_new(pmu, "reason", ext_string(snap->reason));
	json_object_set_new(doc, "pmu", pmu);
	arr = json_array();
	for (unsigned i = 0; i < snap->n_pmus; i++)
		json_array_append_new(arr, pmu_object(snap, &snap->pmus[i]));
	json_object_set_new(doc, "pmus", arr);

	states = json_object();
	for (int s = 0; s < CPU_STATE_COUNT; s++)
		json_object_set_new(states, cpu_state_name[s], json_integer(snap->cpus_by_state[s]));
	json_object_set_new(doc, "cpus_by_state", states);

	if (window) {
		json_t *w = json_object();

		/* The window actually covered: from the sample the history
		 * has, to this interval, on the monotonic clock; its start
		 * shown on this interval's wall clock. */
		double seconds = snapshot_mono_s(snap) - then->mono;

		json_object_set_new(w, "requested_seconds", json_real((double)q->window_ns / 1e9));
		json_object_set_new(w, "seconds", json_real(round(seconds * 1e3) / 1e3));
		json_object_set_new(w, "start", json_real(round((snap->timestamp - seconds) * 1e3) / 1e3));
		json_object_set_new(doc, "window", w);
	}
	host = json_object();
	if (window) {
		windowed(&snap->host, then->host, &wc);
		add_counts(host, &wc, level, snap->cats);
		add_trees(host, snap, snap_deep_row_host(snap), q->level, true, nodes_then(snap, then, -1), NULL);
	} else {
		const char *drill[SNAP_PMUS];

		add_counts(host, &snap->host, level, snap->cats);
		for (unsigned t = 0; t < SNAP_PMUS; t++)
			drill[t] = snap->deep[t].host_drill;
		add_trees(host, snap, snap_deep_row_host(snap), q->level, false, NULL, drill);
		add_smt(host, &snap->smt_host, NULL);
		add_mode(host, &snap->mode_host);
	}
	json_object_set_new(doc, "host", host);
	{
		json_t *smt = json_object();

		json_object_set_new(smt, "counted", json_boolean(snap->smt_on));
		json_object_set_new(smt, "events", snap->smt_method[0] ? json_string(snap->smt_method) : json_null());
		json_object_set_new(smt, "reason", snap->smt_reason[0] ? ext_string(snap->smt_reason) : json_null());
		json_object_set_new(doc, "smt", smt);
	}
	if (snap->mode_on || snap->mode_host.ever) {
		json_t *mode = json_object();

		json_object_set_new(mode, "counted", json_boolean(snap->mode_on));
		json_object_set_new(mode, "metrics", json_string(snap->mode_method));
		json_object_set_new(doc, "smt_mode", mode);
	}
	/* "tree" is the first core PMU's (the P-cores' on a hybrid part),
	 * "trees" every core PMU's. */
	if (snap->n_deep && snap->deep[0].n_nodes && q->level >= 3) {
		json_t *trees = json_array();

		json_object_set_new(doc, "tree", tree_object(&snap->deep[0], q->level));
		for (unsigned t = 0; t < snap->n_deep; t++)
			if (snap->deep[t].n_nodes)
				json_array_append_new(trees, tree_object(&snap->deep[t], q->level));
		json_object_set_new(doc, "trees", trees);
	}
	if (q->has_cpus) {
		json_t *sel = json_object(), *cpus = json_array();
		struct snap_counts sum;

		/* Slot-weighted over exactly these CPUs: their counters added. */
		memset(&sum, 0, sizeof(sum));
		for (unsigned i = 0; i < snap->n_cpus; i++) {
			const struct snap_cpu *c = &snap->cpus[i];

			if (!cpuset_test(&q->cpus, (unsigned)c->cpu))
				continue;
			json_array_append_new(cpus, json_integer(c->cpu));
			for (int k = 0; k < TD_C_COUNT; k++) {
				sum.total[k] += c->c.total[k];
				sum.last[k] += c->c.last[k];
			}
			sum.cats |= c->c.cats;
			sum.cpus += c->c.cpus;
			sum.measured += c->c.measured;
		}
		json_object_set_new(sel, "cpus", cpus);
		add_counts(sel, &sum, level, snap->cats);
		json_object_set_new(doc, "selection", sel);
	}

	if (q->scope >= API_SCOPE_PACKAGE) {
		arr = json_array();
		for (unsigned i = 0; i < snap->n_pkgs; i++) {
			json_t *o;

			if (!pkg_selected(snap, q, i))
				continue;
			o = json_object();
			json_object_set_new(o, "package", json_integer(snap->pkgs[i].package));
			if (window) {
				windowed(&snap->pkgs[i].c, pkg_then(then, snap->pkgs[i].package), &wc);
				add_counts(o, &wc, level, snap->cats);
				add_trees(o, snap, snap_deep_row_pkg(snap, i), q->level, true,
					  nodes_then(snap, then, snap->pkgs[i].package), NULL);
			} else {
				add_counts(o, &snap->pkgs[i].c, level, snap->cats);
				add_trees(o, snap, snap_deep_row_pkg(snap, i), q->level, false, NULL,
					  snap->pkgs[i].drill);
				add_smt(o, &snap->pkgs[i].smt, NULL);
				add_mode(o, &snap->pkgs[i].mode);
			}
			json_array_append_new(arr, o);
		}
		json_object_set_new(doc, "packages", arr);
	}
	if (q->scope >= API_SCOPE_CORE) {
		arr = json_array();
		for (unsigned i = 0; i < snap->n_cores; i++) {
			json_t *o, *cpus;

			if (!core_selected(snap, q, i))
				continue;
			o = json_object();
			json_object_set_new(o, "core", json_integer(snap->cores[i].core_id));
			json_object_set_new(o, "package", json_integer(snap->cores[i].package));
			json_object_set_new(o, "die", json_integer(snap->cores[i].die));
			cpus = json_array();
			for (unsigned k = 0; k < snap->n_cpus; k++)
				if (snap->cpus[k].core_idx == (int)i && snap->cpus[k].selected)
					json_array_append_new(cpus, json_integer(snap->cpus[k].cpu));
			json_object_set_new(o, "cpus", cpus);
			add_counts(o, &snap->cores[i].c, level, snap->cats);
			if (!window) {
				add_trees(o, snap, snap_deep_row_core(snap, i), q->level, false, NULL, NULL);
				add_smt(o, &snap->cores[i].smt, &snap->cores[i]);
				add_mode(o, &snap->cores[i].mode);
			}
			json_array_append_new(arr, o);
		}
		json_object_set_new(doc, "cores", arr);
	}
	if (q->scope >= API_SCOPE_CPU) {
		arr = json_array();
		for (unsigned i = 0; i < snap->n_cpus; i++) {
			const struct snap_cpu *c = &snap->cpus[i];
			json_t *o;

			if (!c->selected || (q->has_cpus && !cpuset_test(&q->cpus, (unsigned)c->cpu)))
				continue;
			o = json_object();
			json_object_set_new(o, "cpu", json_integer(c->cpu));
			json_object_set_new(o, "core", c->known ? json_integer(c->core_id) : json_null());
			json_object_set_new(o, "package", c->known ? json_integer(c->package) : json_null());
			json_object_set_new(o, "die", c->known ? json_integer(c->die) : json_null());
			json_object_set_new(o, "node", c->known ? json_integer(c->node) : json_null());
			json_object_set_new(o, "state", json_string(cpu_state_name[c->state]));
			if (c->pmu_idx >= 0 && (unsigned)c->pmu_idx < snap->n_pmus) {
				const struct snap_pmu *p = &snap->pmus[c->pmu_idx];

				/* Which microarchitecture and level each CPU runs
				 * (they differ on a hybrid part). */
				json_object_set_new(o, "pmu", ext_string(p->name));
				json_object_set_new(o, "uarch", ext_string(p->uarch));
				json_object_set_new(o, "level", json_integer(p->level));
				json_object_set_new(o, "per_cpu", json_string(p->core_share ? "core_share" : "thread"));
				json_object_set_new(o, "counters", cpu_counters(c));
			}
			add_counts(o, &c->c, level, snap->cats);
			if (!window) {
				add_trees(o, snap, snap_deep_row_cpu(snap, i), q->level, false, NULL, NULL);
				add_mode(o, &c->mode);
			}
			json_array_append_new(arr, o);
		}
		json_object_set_new(doc, "cpus", arr);
	}
	if (q->cgroups)
		add_cgroups(doc, snap, level);
	return doc;
}

int api_parse_history_query(const char *since, const char *level, double *since_out,
			    unsigned *level_out, char *err, size_t errlen)
{
	char *end;

	*since_out = 0;
	*level_out = 2;
	if (since) {
		errno = 0;
		*since_out = strtod(since, &end);
		if (!*since || *end || errno || !(*since_out >= 0) || *since_out > 1e12) {
			snprintf(err, errlen, "invalid since \"%.64s\": expected a timestamp in seconds "
				 "(a sample's \"end\")", since);
			return -EINVAL;
		}
	}
	if (level) {
		if (strcmp(level, "1") != 0 && strcmp(level, "2") != 0) {
			snprintf(err, errlen, "invalid level \"%.64s\": expected 1 or 2", level);
			return -EINVAL;
		}
		*level_out = (unsigned)(level[0] - '0');
	}
	return 0;
}

/* One entity over one step: its slots and the ratios of its categories,
 * to 4 decimals (900 steps of a few entities stay small). */
static json_t *step_object(const double *now, const double *before, td_catset cats, unsigned level)
{
	json_t *o = json_object(), *l1 = NULL, *l2 = NULL;
	double slots = now[TD_C_SLOTS] - before[TD_C_SLOTS];

	json_object_set_new(o, "slots", count(slots > 0 ? slots : 0));
	if (!(slots > 0)) {
		json_object_set_new(o, "level1", json_null());
		return o;
	}
	l1 = json_object();
	if (level >= 2)
		l2 = json_object();
	for (int i = 0; i < TD_CAT_COUNT; i++) {
		double d;

		if (!td_catset_has(cats, (enum td_cat)i) || td_cat[i].level > level)
			continue;
		d = now[TD_C_CAT + i] - before[TD_C_CAT + i];
		json_object_set_new(td_cat[i].level == 1 ? l1 : l2, td_cat[i].name,
				    json_real(round((d > 0 ? d / slots : 0) * 1e4) / 1e4));
	}
	json_object_set_new(o, "level1", l1);
	if (l2)
		json_object_set_new(o, "level2", l2);
	if (now[TD_C_ENABLED] > before[TD_C_ENABLED])
		json_object_set_new(o, "running_ratio",
				    ratio((now[TD_C_RUNNING] - before[TD_C_RUNNING]) /
					  (now[TD_C_ENABLED] - before[TD_C_ENABLED])));
	return o;
}

json_t *api_history(const struct snapshot *snap, const struct history_series *s, unsigned level,
		    const char *hostname, const char *version)
{
	json_t *doc = json_object(), *cats = json_array(), *samples = json_array();
	size_t stride = (size_t)(1 + s->n_pkgs) * TD_C_COUNT;

	if (level > snap->level)
		level = snap->level;
	json_object_set_new(doc, "api_version", json_string(API_VERSION));
	json_object_set_new(doc, "version", json_string(version));
	json_object_set_new(doc, "hostname", ext_string(hostname));
	json_object_set_new(doc, "interval_seconds", json_real(snap->interval_s));
	json_object_set_new(doc, "step_seconds", json_real(round(s->step_s * 1e3) / 1e3));
	json_object_set_new(doc, "level", json_integer(level));
	for (int i = 0; i < TD_CAT_COUNT; i++) {
		json_t *c;

		if (!td_catset_has(snap->cats, (enum td_cat)i) || td_cat[i].level > level)
			continue;
		c = json_object();
		json_object_set_new(c, "name", json_string(td_cat[i].name));
		json_object_set_new(c, "level", json_integer(td_cat[i].level));
		json_object_set_new(c, "parent", td_cat[i].level == 2 ? json_string(td_cat[td_cat[i].parent].name)
								     : json_null());
		json_array_append_new(cats, c);
	}
	json_object_set_new(doc, "categories", cats);
	/* A step per pair of consecutive samples. */
	for (unsigned n = 1; n < s->n; n++) {
		const double *now = &s->totals[n * stride], *before = &s->totals[(n - 1) * stride];
		json_t *sample = json_object(), *pkgs = json_object();

		json_object_set_new(sample, "start", json_real(round(s->ts[n - 1] * 1e3) / 1e3));
		json_object_set_new(sample, "end", json_real(round(s->ts[n] * 1e3) / 1e3));
		json_object_set_new(sample, "host", step_object(now, before, snap->cats, level));
		for (unsigned p = 0; p < s->n_pkgs; p++) {
			char id[16];

			snprintf(id, sizeof(id), "%d", s->pkg_ids[p]);
			json_object_set_new(pkgs, id,
					    step_object(now + (1 + p) * TD_C_COUNT,
							before + (1 + p) * TD_C_COUNT, snap->cats, level));
		}
		json_object_set_new(sample, "packages", pkgs);
		json_array_append_new(samples, sample);
	}
	json_object_set_new(doc, "samples", samples);
	return doc;
}

char *api_dump(const json_t *doc, bool pretty)
{
	return json_dumps(doc, JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER |
				       (pretty ? JSON_INDENT(2) : JSON_COMPACT));
}
