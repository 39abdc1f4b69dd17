/* SPDX-License-Identifier: MIT */
/* expo: Prometheus text and OpenMetrics rendering. */
#include "expo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"

const unsigned expo_http_codes[] = {
	200, 400, 401, 403, 404, 405, 406, 408, 413, 414, 429, 431, 500, 503, 0,
};
TABLE_COVERS(expo_http_codes, EXPO_CODE_COUNT);

const char *const expo_endpoint_name[] = {
	[EXPO_EP_METRICS] = "metrics",
	[EXPO_EP_API] = "api",
	[EXPO_EP_INDEX] = "index",
	[EXPO_EP_HEALTHY] = "healthy",
	[EXPO_EP_READY] = "ready",
	[EXPO_EP_OTHER] = "other",
};
TABLE_COVERS(expo_endpoint_name, EXPO_EP_COUNT);

const char *const expo_reject_name[] = {
	[EXPO_REJ_UNAUTHORIZED] = "unauthorized",
	[EXPO_REJ_METHOD] = "method",
	[EXPO_REJ_NOT_FOUND] = "not_found",
	[EXPO_REJ_BAD_REQUEST] = "bad_request",
	[EXPO_REJ_TOO_LARGE] = "too_large",
	[EXPO_REJ_THROTTLED] = "throttled",
	[EXPO_REJ_BUSY] = "busy",
	[EXPO_REJ_TIMEOUT] = "timeout",
	[EXPO_REJ_CLIENT_LIMIT] = "client_limit",
	[EXPO_REJ_EVICTED] = "evicted",
};
TABLE_COVERS(expo_reject_name, EXPO_REJ_COUNT);

unsigned expo_http_code_index(unsigned code)
{
	for (unsigned i = 0; i + 1 < EXPO_CODE_COUNT; i++)
		if (expo_http_codes[i] == code)
			return i;
	return EXPO_CODE_COUNT - 1;
}

/* An entity of the granularity with something to count: its counts and
 * its label prefix in struct render's labels. */
struct ent {
	const struct snap_counts *c;
	size_t off, len;
	unsigned row; /* its row of the snapshot's nodes below level 2 */
	const struct snap_mode *mode; /* perf's SMT mode metrics */
};

struct render {
	const struct snapshot *snap;
	const struct expo_options *opt;
	enum expo_format format;
	struct buf *out;
	/* Built once per render, used by every per-entity family. */
	struct buf labels;
	struct ent *ents;
	unsigned n_ents;
};

/* Label values may hold anything: a PMU's reason text, a cgroup's name
 * (which any tenant allowed to make a cgroup chooses), a name from sysfs.
 * Both formats want \, " and newlines escaped and the rest UTF-8: a byte
 * that is not, or a control character, would make Prometheus refuse the
 * whole scrape, so it is written as the text \xNN (its backslash escaped),
 * as the JSON output writes it (str_escape_text). */
static void put_label_value(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	while (*s) {
		unsigned char c = (unsigned char)*s;
		const char *esc = c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" : NULL;
		size_t n = c < 0x80 ? 1 : utf8_len((const unsigned char *)s);

		if (!esc && n && c >= 0x20 && c != 0x7f) {
			s += n;
			continue;
		}
		buf_add(b, run, (size_t)(s - run));
		if (esc) {
			buf_puts(b, esc);
		} else {
			char x[6] = { '\\', '\\', 'x', hex[c >> 4], hex[c & 15], '\0' };

			buf_puts(b, x);
		}
		run = ++s;
	}
	buf_add(b, run, (size_t)(s - run));
}

static void put_label(struct buf *b, bool *first, const char *name, const char *value)
{
	buf_putc(b, *first ? '{' : ',');
	*first = false;
	buf_puts(b, name);
	buf_puts(b, "=\"");
	put_label_value(b, value);
	buf_putc(b, '"');
}

static void put_int_label(struct buf *b, bool *first, const char *name, long long value)
{
	buf_putc(b, *first ? '{' : ',');
	*first = false;
	buf_puts(b, name);
	buf_puts(b, "=\"");
	buf_i64(b, value);
	buf_putc(b, '"');
}

/* HELP and TYPE.  OpenMetrics names a counter family without its _total
 * suffix; the 0.0.4 text format names it like its samples. */
static void family(struct render *r, enum metric_id id)
{
	const struct metric *m = metric_get(id);
	struct buf *b = r->out;
	size_t len = strlen(m->name);
	bool counter = strcmp(m->type, "counter") == 0;

	if (counter && r->format == EXPO_OPENMETRICS)
		len -= strlen("_total");
	buf_puts(b, "# HELP ");
	buf_add(b, m->name, len);
	buf_putc(b, ' ');
	buf_puts(b, m->help);
	buf_puts(b, "\n# TYPE ");
	buf_add(b, m->name, len);
	buf_putc(b, ' ');
	buf_puts(b, m->type);
	buf_putc(b, '\n');
}

/* A sample's name. */
static void sample(struct render *r, enum metric_id id)
{
	buf_puts(r->out, metric_get(id)->name);
}

/* A family of one unlabelled sample: its header, then "NAME ", then the
 * caller writes the value. */
static struct buf *single(struct render *r, enum metric_id id)
{
	family(r, id);
	sample(r, id);
	buf_putc(r->out, ' ');
	return r->out;
}

/* ---- entities of the configured granularity ---- */

/* The label prefix of entity @i ("{cpu=\"3\",core=\"1\",package=\"0\""),
 * or false to skip it.  Entities that only contain unsupported CPUs have
 * nothing to count and are left out. */
static bool entity(const struct render *r, unsigned i, struct buf *labels,
		   const struct snap_counts **counts)
{
	const struct snapshot *s = r->snap;
	bool first = true;

	buf_reset(labels);
	switch (r->opt->granularity) {
	case GRAN_CPU: {
		const struct snap_cpu *c = &s->cpus[i];

		if (!c->selected || !c->known || c->state == CPU_STATE_UNSUPPORTED)
			return false;
		put_int_label(labels, &first, "cpu", c->cpu);
		put_int_label(labels, &first, "core", c->core_id);
		put_int_label(labels, &first, "package", c->package);
		*counts = &c->c;
		return true;
	}
	case GRAN_CORE:
		if (!s->cores[i].covered)
			return false;
		put_int_label(labels, &first, "core", s->cores[i].core_id);
		put_int_label(labels, &first, "package", s->cores[i].package);
		*counts = &s->cores[i].c;
		return true;
	case GRAN_PACKAGE:
		if (!s->pkgs[i].covered)
			return false;
		put_int_label(labels, &first, "package", s->pkgs[i].package);
		*counts = &s->pkgs[i].c;
		return true;
	case GRAN_SYSTEM:
		if (!s->up && s->host.total[TD_C_SLOTS] == 0)
			return false;
		*counts = &s->host;
		return true;
	case GRAN_COUNT:
		break;
	}
	return false;
}

/* Entity @i's row of the nodes below level 2 (snapshot.h). */
static unsigned entity_row(const struct render *r, unsigned i)
{
	switch (r->opt->granularity) {
	case GRAN_CPU:
		return snap_deep_row_cpu(r->snap, i);
	case GRAN_CORE:
		return snap_deep_row_core(r->snap, i);
	case GRAN_PACKAGE:
		return snap_deep_row_pkg(r->snap, i);
	case GRAN_SYSTEM:
	case GRAN_COUNT:
		break;
	}
	return snap_deep_row_host(r->snap);
}

static unsigned n_entities(const struct render *r)
{
	switch (r->opt->granularity) {
	case GRAN_CPU:
		return r->snap->n_cpus;
	case GRAN_CORE:
		return r->snap->n_cores;
	case GRAN_PACKAGE:
		return r->snap->n_pkgs;
	case GRAN_SYSTEM:
		return 1;
	case GRAN_COUNT:
		break;
	}
	return 0;
}

/* Entity @i's perf SMT mode metrics (snapshot.h). */
static const struct snap_mode *entity_mode(const struct render *r, unsigned i)
{
	switch (r->opt->granularity) {
	case GRAN_CPU:
		return &r->snap->cpus[i].mode;
	case GRAN_CORE:
		return &r->snap->cores[i].mode;
	case GRAN_PACKAGE:
		return &r->snap->pkgs[i].mode;
	case GRAN_SYSTEM:
	case GRAN_COUNT:
		break;
	}
	return &r->snap->mode_host;
}

/* Every entity's labels, once: the families then copy them. */
static int build_entities(struct render *r)
{
	unsigned n = n_entities(r);
	struct buf one;

	r->ents = calloc(n ? n : 1, sizeof(*r->ents));
	if (!r->ents)
		return -ENOMEM;
	buf_init(&one);
	for (unsigned i = 0; i < n; i++) {
		const struct snap_counts *c;

		if (!entity(r, i, &one, &c))
			continue;
		r->ents[r->n_ents++] = (struct ent){ c, r->labels.len, one.len, entity_row(r, i), entity_mode(r, i) };
		buf_add(&r->labels, one.data, one.len);
	}
	r->labels.failed |= one.failed;
	buf_free(&one);
	return 0;
}

/* One sample of a per-entity family: @name, the entity's labels, @suffix
 * (what closes the labels), then its value, with a single reservation:
 * at a thousand CPUs this runs some 15,000 times per render. */
static void put_sample(struct render *r, const char *name, size_t name_len, const struct ent *e,
		       const char *suffix, size_t suffix_len, double value, bool seconds)
{
	struct buf *b = r->out;
	char *p;

	if (!buf_reserve(b, name_len + e->len + suffix_len + 24))
		return;
	p = b->data + b->len;
	memcpy(p, name, name_len);
	p += name_len;
	if (e->len) /* the host's: none, and the labels may be empty */
		memcpy(p, r->labels.data + e->off, e->len);
	p += e->len;
	memcpy(p, suffix, suffix_len);
	b->len += name_len + e->len + suffix_len;
	if (seconds)
		buf_double(b, value / 1e9);
	else
		buf_count(b, value);
	buf_putc(b, '\n');
}

/* A label-set-wide counter family: one sample per entity. */
static void counter_family(struct render *r, enum metric_id id, int column, bool seconds)
{
	const char *name = metric_get(id)->name;
	size_t name_len = strlen(name);

	family(r, id);
	for (unsigned i = 0; i < r->n_ents; i++) {
		const struct ent *e = &r->ents[i];

		put_sample(r, name, name_len, e, e->len ? "} " : " ", e->len ? 2 : 1,
			   e->c->total[column], seconds);
	}
}

/* A gauge of each entity's CPUs: those to measure, or those measured. */
static void cpus_family(struct render *r, enum metric_id id, bool measured)
{
	const char *name = metric_get(id)->name;
	size_t name_len = strlen(name);

	family(r, id);
	for (unsigned i = 0; i < r->n_ents; i++) {
		const struct ent *e = &r->ents[i];

		put_sample(r, name, name_len, e, e->len ? "} " : " ", e->len ? 2 : 1,
			   measured ? e->c->measured : e->c->cpus, false);
	}
}

/* An entity's own categories (a hybrid part's E-cores have other level-2
 * children than its P-cores), or the snapshot's. */
static td_catset entity_cats(const struct render *r, const struct snap_counts *c)
{
	return c->cats ? c->cats : r->snap->cats;
}

/* What follows the entity's labels in a category's sample:
 * ,category="NAME"} (with parent="..." at level 2); a label set of its
 * own when the entity has no labels (the host). */
struct cat_suffix {
	char text[96];
	size_t len;
};

static void cat_suffixes(bool open, struct cat_suffix *out)
{
	for (int k = 0; k < TD_CAT_COUNT; k++) {
		int n;

		if (td_cat[k].level == 2)
			n = snprintf(out[k].text, sizeof(out[k].text), "%scategory=\"%s\",parent=\"%s\"} ",
				     open ? "," : "{", td_cat[k].name, td_cat[td_cat[k].parent].name);
		else
			n = snprintf(out[k].text, sizeof(out[k].text), "%scategory=\"%s\"} ",
				     open ? "," : "{", td_cat[k].name);
		out[k].len = n > 0 && (size_t)n < sizeof(out[k].text) ? (size_t)n : 0;
	}
}

static void category_family(struct render *r, const struct cat_suffix *suffix, unsigned level)
{
	const char *name = metric_get(level == 1 ? MET_LEVEL1_SLOTS : MET_LEVEL2_SLOTS)->name;
	size_t name_len = strlen(name);

	for (unsigned i = 0; i < r->n_ents; i++) {
		const struct ent *e = &r->ents[i];
		td_catset cats = entity_cats(r, e->c);

		for (int k = 0; k < TD_CAT_COUNT; k++)
			if (td_catset_has(cats, (enum td_cat)k) && td_cat[k].level == level)
				put_sample(r, name, name_len, e, suffix[k].text, suffix[k].len,
					   e->c->total[TD_C_CAT + k], false);
	}
}

static void category_families(struct render *r)
{
	struct cat_suffix suffix[TD_CAT_COUNT];

	/* Entities have labels, or none does (the system granularity). */
	cat_suffixes(r->n_ents && r->ents[0].len, suffix);
	family(r, MET_LEVEL1_SLOTS);
	category_family(r, suffix, 1);
	if (r->snap->level < 2 || !td_catset_level(r->snap->cats, 2))
		return;
	family(r, MET_LEVEL2_SLOTS);
	category_family(r, suffix, 2);
}

/* Below level 2: each node's slots and measured time, and the base, of
 * every core PMU's tree (label pmu: a hybrid part's two trees share node
 * names); a CPU or a core only in its own core type's tree. */
static void node_families(struct render *r)
{
	const struct snapshot *s = r->snap;
	bool open = r->n_ents && r->ents[0].len;
	static const enum metric_id ids[] = { MET_NODE_SLOTS, MET_NODE_SECONDS };
	bool any = false;

	for (unsigned t = 0; t < s->n_deep; t++)
		any |= s->deep[t].n_nodes > 0;
	if (!any)
		return;
	for (unsigned f = 0; f < 2; f++) {
		const char *name = metric_get(ids[f])->name;
		size_t name_len = strlen(name);

		family(r, ids[f]);
		for (unsigned t = 0; t < s->n_deep; t++) {
			const struct snap_deep *d = &s->deep[t];

			for (unsigned k = 0; k < d->n_nodes; k++) {
				const struct dt_node *n = d->node[k];
				char suffix[224];
				int len = snprintf(suffix, sizeof(suffix),
						   "%snode=\"%s\",level=\"%u\",parent=\"%s\",pmu=\"%s\"} ",
						   open ? "," : "{", depth_short(n->name), n->level,
						   depth_short(n->parent), d->pmu);

				if (len <= 0 || (size_t)len >= sizeof(suffix))
					continue;
				for (unsigned i = 0; i < r->n_ents; i++) {
					const struct ent *e = &r->ents[i];
					const double *a = f == 0 ? d->slots_total : d->measured_ns_total;

					if (e->row < d->rows && snap_deep_covers(s, d, e->row))
						put_sample(r, name, name_len, e, suffix, (size_t)len,
							   a[(size_t)e->row * d->n_nodes + k], f == 1);
				}
			}
		}
	}
	{
		const char *name = metric_get(MET_NODE_BASE_SLOTS)->name;

		family(r, MET_NODE_BASE_SLOTS);
		for (unsigned t = 0; t < s->n_deep; t++) {
			const struct snap_deep *d = &s->deep[t];
			char suffix[96];
			int len = snprintf(suffix, sizeof(suffix), "%spmu=\"%s\"} ", open ? "," : "{", d->pmu);

			if (!d->n_nodes || len <= 0 || (size_t)len >= sizeof(suffix))
				continue;
			for (unsigned i = 0; i < r->n_ents; i++) {
				const struct ent *e = &r->ents[i];

				if (e->row < d->rows && snap_deep_covers(s, d, e->row))
					put_sample(r, name, strlen(name), e, suffix, (size_t)len,
						   d->row_slots_total[e->row], false);
			}
		}
	}
}

/* Which threads of each SMT core ran when: per core at cpu and core
 * granularity (a CPU has no split of its own), else per package or for
 * the host.  Only rows that were ever split: no invented zeros. */
static void smt_family(struct render *r)
{
	const struct snapshot *s = r->snap;
	enum config_granularity g = r->opt->granularity;
	struct buf *b = r->out;
	unsigned n = g == GRAN_SYSTEM ? 1 : g == GRAN_PACKAGE ? s->n_pkgs : s->n_cores;

	if (!s->smt_on && !s->smt_host.ever)
		return;
	family(r, MET_SMT_SECONDS);
	for (unsigned i = 0; i < n; i++) {
		const struct snap_smt *row = g == GRAN_SYSTEM ? &s->smt_host
					     : g == GRAN_PACKAGE ? &s->pkgs[i].smt : &s->cores[i].smt;

		if (!row->ever)
			continue;
		for (unsigned st = 0; st < SMT_STATE_COUNT; st++) {
			bool first = true;

			sample(r, MET_SMT_SECONDS);
			if (g == GRAN_CPU || g == GRAN_CORE) {
				put_int_label(b, &first, "core", s->cores[i].core_id);
				put_int_label(b, &first, "package", s->cores[i].package);
			} else if (g == GRAN_PACKAGE) {
				put_int_label(b, &first, "package", s->pkgs[i].package);
			}
			put_label(b, &first, "state", smt_state_name[st]);
			buf_puts(b, "} ");
			buf_double(b, row->total[st]);
			buf_putc(b, '\n');
		}
	}
}

/* perf's SMT mode metrics (NVIDIA Olympus): each entity's cycles in ST
 * and SMT mode, where it ever had them. */
static void smt_mode_family(struct render *r)
{
	static const char *const suffix[SMT_MODE_COUNT][2] = {
		[SMT_MODE_ST] = { ",mode=\"st\"} ", "{mode=\"st\"} " },
		[SMT_MODE_SMT] = { ",mode=\"smt\"} ", "{mode=\"smt\"} " },
	};
	const char *name = metric_get(MET_SMT_MODE_CYCLES)->name;
	size_t name_len = strlen(name);

	if (!r->snap->mode_on && !r->snap->mode_host.ever)
		return;
	family(r, MET_SMT_MODE_CYCLES);
	for (unsigned i = 0; i < r->n_ents; i++) {
		const struct ent *e = &r->ents[i];

		if (!e->mode->ever)
			continue;
		for (unsigned m = 0; m < SMT_MODE_COUNT; m++) {
			const char *sfx = suffix[m][e->len ? 0 : 1];

			put_sample(r, name, name_len, e, sfx, strlen(sfx), e->mode->total[m], false);
		}
	}
}

static void ratio_families(struct render *r)
{
	const double *last = r->snap->host.last;
	double slots = last[TD_C_SLOTS];
	struct buf *b = r->out;

	if (!r->opt->ratios || slots <= 0)
		return;
	family(r, MET_LEVEL1_RATIO);
	for (int k = 0; k < TD_CAT_COUNT; k++) {
		if (!td_catset_has(r->snap->cats, (enum td_cat)k) || td_cat[k].level != 1)
			continue;
		sample(r, MET_LEVEL1_RATIO);
		buf_puts(b, "{category=\"");
		buf_puts(b, td_cat[k].name);
		buf_puts(b, "\"} ");
		buf_double(b, last[TD_C_CAT + k] / slots);
		buf_putc(b, '\n');
	}
	if (r->snap->level < 2 || !td_catset_level(r->snap->cats, 2))
		return;
	family(r, MET_LEVEL2_RATIO);
	for (int k = 0; k < TD_CAT_COUNT; k++) {
		if (!td_catset_has(r->snap->cats, (enum td_cat)k) || td_cat[k].level != 2)
			continue;
		sample(r, MET_LEVEL2_RATIO);
		buf_puts(b, "{category=\"");
		buf_puts(b, td_cat[k].name);
		buf_puts(b, "\",parent=\"");
		buf_puts(b, td_cat[td_cat[k].parent].name);
		buf_puts(b, "\"} ");
		buf_double(b, last[TD_C_CAT + k] / slots);
		buf_putc(b, '\n');
	}
}

/* A PMU's reason, and why per-cgroup attribution is off when it is. */
static void put_reason(struct buf *b, bool *first, const char *reason, const char *cg_reason)
{
	char both[2 * SNAP_REASON + 2];

	snprintf(both, sizeof(both), "%s%s%s", reason, reason[0] && cg_reason[0] ? "; " : "", cg_reason);
	put_label(b, first, "reason", both);
}

static void info_families(struct render *r)
{
	const struct snapshot *s = r->snap;
	struct buf *b = r->out;
	bool first, any = false;

	buf_puts(single(r, MET_UP), s->up ? "1\n" : "0\n");

	family(r, MET_PMU_INFO);
	for (unsigned i = 0; i < s->n_pmus || (i == 0 && s->n_pmus == 0); i++) {
		const struct snap_pmu *p = s->n_pmus ? &s->pmus[i] : NULL;

		sample(r, MET_PMU_INFO);
		first = true;
		put_label(b, &first, "pmu", p ? p->name : "");
		put_label(b, &first, "pmu_name", p ? p->pmu_name : "");
		put_label(b, &first, "uarch", p ? p->uarch : "");
		put_int_label(b, &first, "level", p ? p->level : 0);
		put_label(b, &first, "model", p ? p->model : "");
		put_label(b, &first, "per_cpu", p && p->core_share ? "core_share" : "thread");
		put_reason(b, &first, p && p->reason[0] ? p->reason : s->reason, s->cg.reason);
		buf_puts(b, "} 1\n");
	}

	family(r, MET_BUILD_INFO);
	sample(r, MET_BUILD_INFO);
	first = true;
	put_label(b, &first, "version", r->opt->version);
	put_label(b, &first, "revision", r->opt->revision);
	buf_puts(b, "} 1\n");

	family(r, MET_CPUS);
	for (int k = 0; k < CPU_STATE_COUNT; k++) {
		sample(r, MET_CPUS);
		buf_puts(b, "{state=\"");
		buf_puts(b, cpu_state_name[k]);
		buf_puts(b, "\"} ");
		buf_u64(b, s->cpus_by_state[k]);
		buf_putc(b, '\n');
	}

	for (unsigned i = 0; i < s->n_cpus && !any; i++)
		any = s->cpus[i].selected && s->cpus[i].known;
	if (!any)
		return;
	/* One series per CPU: only where the counters are per CPU or core,
	 * so that package and system granularity stay the same size on any
	 * host. */
	if (r->opt->granularity != GRAN_CPU && r->opt->granularity != GRAN_CORE)
		return;
	family(r, MET_CPU_INFO);
	for (unsigned i = 0; i < s->n_cpus; i++) {
		const struct snap_cpu *c = &s->cpus[i];

		if (!c->selected || !c->known)
			continue;
		sample(r, MET_CPU_INFO);
		first = true;
		put_int_label(b, &first, "cpu", c->cpu);
		put_int_label(b, &first, "core", c->core_id);
		put_int_label(b, &first, "package", c->package);
		put_int_label(b, &first, "die", c->die);
		put_int_label(b, &first, "node", c->node);
		buf_puts(b, "} 1\n");
	}
}

/* One sample per bucket: NAME{cgroup="..."[,pod_uid=...,container_id=...,qos_class=...]SUFFIX VALUE. */
static void put_cgroup(struct buf *b, enum metric_id id, const struct snap_cgroup *cg,
		       const char *suffix, double value)
{
	bool first = true;

	buf_puts(b, metric_get(id)->name);
	put_label(b, &first, "cgroup", cg->name);
	if (cg->qos_class) {
		put_label(b, &first, "pod_uid", cg->pod_uid);
		if (cg->container_id[0])
			put_label(b, &first, "container_id", cg->container_id);
		put_label(b, &first, "qos_class", cg->qos_class);
	}
	buf_puts(b, suffix);
	buf_count(b, value);
	buf_putc(b, '\n');
}

static void cgroup_category_family(struct render *r, unsigned level)
{
	enum metric_id id = level == 1 ? MET_CGROUP_LEVEL1_SLOTS : MET_CGROUP_LEVEL2_SLOTS;
	const struct snapshot *s = r->snap;
	struct cat_suffix suffix[TD_CAT_COUNT];

	cat_suffixes(true, suffix);
	family(r, id);
	for (unsigned i = 0; i < s->n_cgroups; i++) {
		const struct snap_cgroup *cg = &s->cgroups[i];

		for (int k = 0; k < TD_CAT_COUNT; k++)
			if (td_catset_has(cg->c.cats, (enum td_cat)k) && td_cat[k].level == level)
				put_cgroup(r->out, id, cg, suffix[k].text,
					   cg->c.total[TD_C_CAT + k]);
	}
}

static void cgroup_families(struct render *r)
{
	const struct snapshot *s = r->snap;
	struct buf *b = r->out;
	bool l2 = false;

	if (!s->cg.enabled)
		return;
	family(r, MET_CGROUPS);
	sample(r, MET_CGROUPS);
	buf_puts(b, "{state=\"tracked\"} ");
	buf_u64(b, s->cg.tracked);
	buf_putc(b, '\n');
	sample(r, MET_CGROUPS);
	buf_puts(b, "{state=\"dropped\"} ");
	buf_u64(b, s->cg.dropped);
	buf_putc(b, '\n');
	single(r, MET_CGROUP_SWITCHES);
	buf_count(b, s->cg.switches);
	buf_putc(b, '\n');
	single(r, MET_CGROUP_BPF_SECONDS);
	buf_double(b, s->cg.bpf_seconds);
	buf_putc(b, '\n');
	if (!s->n_cgroups)
		return;
	family(r, MET_CGROUP_SLOTS);
	for (unsigned i = 0; i < s->n_cgroups; i++)
		put_cgroup(b, MET_CGROUP_SLOTS, &s->cgroups[i], "} ",
			   s->cgroups[i].c.total[TD_C_SLOTS]);
	cgroup_category_family(r, 1);
	for (unsigned i = 0; i < s->n_cgroups && !l2; i++)
		l2 = td_catset_level(s->cgroups[i].c.cats, 2) != 0;
	if (l2)
		cgroup_category_family(r, 2);
}

static void self_families(struct render *r)
{
	const struct snapshot *s = r->snap;
	struct buf *b = r->out;

	family(r, MET_COLLECTION_ERRORS);
	for (int k = 0; k < COLL_ERR_COUNT; k++) {
		sample(r, MET_COLLECTION_ERRORS);
		buf_puts(b, "{reason=\"");
		buf_puts(b, coll_error_name[k]);
		buf_puts(b, "\"} ");
		buf_u64(b, s->errors[k]);
		buf_putc(b, '\n');
	}
	family(r, MET_DEPARTURES);
	for (unsigned i = 0; i < s->n_pmus; i++)
		for (int d = 0; d < TMA_DEP_COUNT; d++) {
			bool first = true;

			sample(r, MET_DEPARTURES);
			put_label(b, &first, "pmu", s->pmus[i].name);
			put_label(b, &first, "reason", tma_departure_name((enum tma_departure)d));
			buf_puts(b, "} ");
			buf_u64(b, s->pmus[i].departures[d]);
			buf_putc(b, '\n');
		}
	single(r, MET_INTERVAL_SECONDS);
	buf_double(b, s->interval_s);
	buf_putc(b, '\n');
	buf_puts(single(r, MET_RELOAD_SUCCESSFUL), s->config_ok ? "1\n" : "0\n");
	single(r, MET_RELOAD_TIMESTAMP);
	buf_double(b, s->config_loaded_at);
	buf_putc(b, '\n');
	single(r, MET_COLLECTIONS);
	buf_u64(b, s->seq);
	buf_putc(b, '\n');
	single(r, MET_INTERVALS_MISSED);
	buf_u64(b, s->intervals_missed);
	buf_putc(b, '\n');
	if (s->seq == 0)
		return;
	single(r, MET_COLLECTION_DURATION);
	buf_double(b, s->duration_s);
	buf_putc(b, '\n');
	single(r, MET_LAST_COLLECTION);
	buf_double(b, s->timestamp);
	buf_putc(b, '\n');
}

/* The exporter convention (the Prometheus client libraries). */
static void process_families(struct render *r)
{
	const struct procstat *p = r->opt->proc;

	if (!p || !p->valid)
		return;
	buf_double(single(r, MET_PROCESS_CPU_SECONDS), p->cpu_seconds);
	buf_putc(r->out, '\n');
	buf_u64(single(r, MET_PROCESS_OPEN_FDS), p->open_fds);
	buf_putc(r->out, '\n');
	if (p->max_fds) {
		buf_u64(single(r, MET_PROCESS_MAX_FDS), p->max_fds);
		buf_putc(r->out, '\n');
	}
	buf_count(single(r, MET_PROCESS_VIRTUAL_BYTES), p->virtual_bytes);
	buf_putc(r->out, '\n');
	buf_count(single(r, MET_PROCESS_RESIDENT_BYTES), p->resident_bytes);
	buf_putc(r->out, '\n');
	if (p->start_time > 0) {
		buf_double(single(r, MET_PROCESS_START_TIME), p->start_time);
		buf_putc(r->out, '\n');
	}
}

static void http_families(struct render *r)
{
	const struct expo_http *h = r->opt->http;
	struct buf *b = r->out;
	bool any = false;

	if (!h)
		return;
	for (int e = 0; e < EXPO_EP_COUNT; e++)
		for (int c = 0; c < EXPO_CODE_COUNT; c++)
			any |= h->requests[e][c] > 0;
	if (any) {
		family(r, MET_HTTP_REQUESTS);
		for (int e = 0; e < EXPO_EP_COUNT; e++) {
			for (int c = 0; c < EXPO_CODE_COUNT; c++) {
				if (!h->requests[e][c])
					continue;
				sample(r, MET_HTTP_REQUESTS);
				buf_puts(b, "{endpoint=\"");
				buf_puts(b, expo_endpoint_name[e]);
				buf_puts(b, "\",code=\"");
				if (expo_http_codes[c])
					buf_u64(b, expo_http_codes[c]);
				else
					buf_puts(b, "other");
				buf_puts(b, "\"} ");
				buf_u64(b, h->requests[e][c]);
				buf_putc(b, '\n');
			}
		}
	}
	family(r, MET_HTTP_REJECTED);
	for (int k = 0; k < EXPO_REJ_COUNT; k++) {
		sample(r, MET_HTTP_REJECTED);
		buf_puts(b, "{reason=\"");
		buf_puts(b, expo_reject_name[k]);
		buf_puts(b, "\"} ");
		buf_u64(b, h->rejected[k]);
		buf_putc(b, '\n');
	}
	single(r, MET_HTTP_CONNECTIONS);
	buf_u64(b, h->connections);
	buf_putc(b, '\n');
	single(r, MET_HTTP_API_RENDERS);
	buf_u64(b, h->api_renders);
	buf_putc(b, '\n');
	single(r, MET_HTTP_API_QUEUED);
	buf_u64(b, h->api_queued);
	buf_putc(b, '\n');
	if (!h->auth)
		return;
	single(r, MET_HTTP_PASSWORD_CHECKS);
	buf_u64(b, h->password_checks);
	buf_putc(b, '\n');
}

int expo_render(const struct snapshot *snap, const struct expo_options *opt,
		enum expo_format format, struct buf *out)
{
	struct render r = { snap, opt, format, out, .n_ents = 0 };
	bool failed;

	buf_init(&r.labels);
	if (build_entities(&r) < 0)
		return -ENOMEM;
	info_families(&r);
	if (r.n_ents) {
		counter_family(&r, MET_SLOTS, TD_C_SLOTS, false);
		category_families(&r);
		counter_family(&r, MET_ENABLED_SECONDS, TD_C_ENABLED, true);
		counter_family(&r, MET_RUNNING_SECONDS, TD_C_RUNNING, true);
		cpus_family(&r, MET_EXPECTED_CPUS, false);
		cpus_family(&r, MET_MEASURED_CPUS, true);
		node_families(&r);
		smt_mode_family(&r);
	}
	smt_family(&r);
	ratio_families(&r);
	cgroup_families(&r);
	self_families(&r);
	process_families(&r);
	http_families(&r);
	if (format == EXPO_OPENMETRICS)
		buf_puts(out, "# EOF\n");
	failed = buf_failed(out) || buf_failed(&r.labels);
	buf_free(&r.labels);
	free(r.ents);
	return failed ? -ENOMEM : 0;
}
