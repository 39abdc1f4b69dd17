/* SPDX-License-Identifier: MIT */
/* history: the ring of host and package totals. */
#include "history.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PKGS 64

struct history {
	pthread_mutex_t lock;
	uint64_t length_ns;
	double step_s;       /* resolution */
	unsigned max_pkgs;
	unsigned head, count;
	/* Per sample: monotonic seconds, package count, then host and
	 * packages. */
	double *ts;
	unsigned *n_pkgs;
	int *pkg_ids;        /* [HISTORY_SAMPLES][max_pkgs] */
	/* Only the columns the categories collected use (a Sapphire Rapids
	 * at level 2: 15 of TD_C_COUNT), packed: @width of them. */
	td_catset cats;
	struct snap_cols cols;
	unsigned width, cap_width;
	double *totals;      /* [HISTORY_SAMPLES][1 + max_pkgs][width] */
	/* Below level 2: per sample the depth plan and layout its nodes
	 * belong to (no nodes: has false), and the nodes of the current
	 * plan's size, @n_nodes + 1 per entity. */
	bool *deep_has;
	uint64_t *deep_gen, *deep_layout;
	unsigned n_nodes;
	size_t deep_cap;     /* doubles of @deep */
	double *deep;        /* [HISTORY_SAMPLES][1 + max_pkgs][n_nodes + 1] */
};

static unsigned width_of(const struct snap_cols *cols)
{
	unsigned w = 0;

	for (unsigned r = 0; r < cols->n; r++)
		w += cols->hi[r] - cols->lo[r];
	return w;
}

/* Room for @width columns, written now so that the history is in the
 * resident memory from the start (what the RSS budget counts) rather than
 * creeping in over its length. */
static double *totals_new(unsigned max_pkgs, unsigned width)
{
	size_t bytes = (size_t)HISTORY_SAMPLES * (1 + max_pkgs) * width * sizeof(double);
	double *t = malloc(bytes ? bytes : 1);

	/* Not memset: a compiler may turn malloc + memset into calloc. */
	if (t)
		explicit_bzero(t, bytes);
	return t;
}

static void set_cats(struct history *h, td_catset cats)
{
	h->cats = cats;
	snap_cols_of(cats, &h->cols);
	h->width = width_of(&h->cols);
}

int history_new(uint64_t length_ns, unsigned max_pkgs, td_catset cats, struct history **ret)
{
	struct history *h;

	if (max_pkgs > MAX_PKGS)
		max_pkgs = MAX_PKGS;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->length_ns = length_ns;
	h->step_s = (double)length_ns / 1e9 / HISTORY_SAMPLES;
	h->max_pkgs = max_pkgs;
	h->ts = calloc(HISTORY_SAMPLES, sizeof(*h->ts));
	h->n_pkgs = calloc(HISTORY_SAMPLES, sizeof(*h->n_pkgs));
	h->pkg_ids = calloc((size_t)HISTORY_SAMPLES * (max_pkgs ? max_pkgs : 1), sizeof(*h->pkg_ids));
	h->deep_has = calloc(HISTORY_SAMPLES, sizeof(*h->deep_has));
	h->deep_gen = calloc(HISTORY_SAMPLES, sizeof(*h->deep_gen));
	h->deep_layout = calloc(HISTORY_SAMPLES, sizeof(*h->deep_layout));
	set_cats(h, cats);
	h->cap_width = h->width;
	h->totals = totals_new(max_pkgs, h->width);
	if (!h->ts || !h->n_pkgs || !h->pkg_ids || !h->totals || !h->deep_has || !h->deep_gen ||
	    !h->deep_layout) {
		history_free(h);
		return -ENOMEM;
	}
	pthread_mutex_init(&h->lock, NULL);
	*ret = h;
	return 0;
}

void history_free(struct history *h)
{
	if (!h)
		return;
	if (h->ts && h->n_pkgs && h->pkg_ids && h->totals && h->deep_has && h->deep_gen && h->deep_layout)
		pthread_mutex_destroy(&h->lock);
	free(h->ts);
	free(h->n_pkgs);
	free(h->pkg_ids);
	free(h->totals);
	free(h->deep_has);
	free(h->deep_gen);
	free(h->deep_layout);
	free(h->deep);
	free(h);
}

uint64_t history_length_ns(struct history *h)
{
	uint64_t n;

	pthread_mutex_lock(&h->lock);
	n = h->length_ns;
	pthread_mutex_unlock(&h->lock);
	return n;
}

void history_set_length(struct history *h, uint64_t length_ns)
{
	pthread_mutex_lock(&h->lock);
	if (length_ns != h->length_ns) {
		h->length_ns = length_ns;
		h->step_s = (double)length_ns / 1e9 / HISTORY_SAMPLES;
		h->head = h->count = 0;
	}
	pthread_mutex_unlock(&h->lock);
}

size_t history_bytes(struct history *h)
{
	size_t n;

	pthread_mutex_lock(&h->lock);
	n = sizeof(*h) + HISTORY_SAMPLES * (sizeof(double) + sizeof(unsigned) + sizeof(bool) +
					    2 * sizeof(uint64_t) + h->max_pkgs * sizeof(int) +
					    (1 + h->max_pkgs) * h->cap_width * sizeof(double)) +
	    h->deep_cap * sizeof(double);
	pthread_mutex_unlock(&h->lock);
	return n;
}

static double *slot(struct history *h, unsigned i, unsigned entity)
{
	return &h->totals[((size_t)i * (1 + h->max_pkgs) + entity) * h->width];
}

static void pack(const struct history *h, double *dst, const double src[TD_C_COUNT])
{
	for (unsigned r = 0; r < h->cols.n; r++) {
		memcpy(dst, &src[h->cols.lo[r]], (h->cols.hi[r] - h->cols.lo[r]) * sizeof(double));
		dst += h->cols.hi[r] - h->cols.lo[r];
	}
}

/* Into a whole counter vector: the columns not kept are 0. */
static void unpack(const struct history *h, double dst[TD_C_COUNT], const double *src)
{
	memset(dst, 0, TD_C_COUNT * sizeof(double));
	for (unsigned r = 0; r < h->cols.n; r++) {
		memcpy(&dst[h->cols.lo[r]], src, (h->cols.hi[r] - h->cols.lo[r]) * sizeof(double));
		src += h->cols.hi[r] - h->cols.lo[r];
	}
}

/* The categories collected changed (a reload to another level, a CPU of
 * another kind online): the samples kept so far stop, as on a new length.
 * On the history worker; false when the room could not be made. */
static bool follow_cats(struct history *h, td_catset cats)
{
	struct snap_cols cols;
	unsigned width;

	if (cats == h->cats)
		return true;
	snap_cols_of(cats, &cols);
	width = width_of(&cols);
	if (width > h->cap_width) {
		double *t = totals_new(h->max_pkgs, width);

		if (!t)
			return false;
		free(h->totals);
		h->totals = t;
		h->cap_width = width;
	}
	set_cats(h, cats);
	h->head = h->count = 0;
	return true;
}

static double *deep_slot(struct history *h, unsigned i, unsigned entity)
{
	return &h->deep[((size_t)i * (1 + h->max_pkgs) + entity) * (h->n_nodes + 1)];
}

/* Room for @n_nodes nodes per entity: the samples kept with another
 * number of nodes lose theirs (another plan: they could not be compared
 * anyway).  False when the room could not be made. */
static bool follow_nodes(struct history *h, unsigned n_nodes)
{
	size_t need = (size_t)HISTORY_SAMPLES * (1 + h->max_pkgs) * (n_nodes + 1);

	if (n_nodes == h->n_nodes && h->deep)
		return true;
	if (need > h->deep_cap) {
		double *d = malloc(need * sizeof(double));

		if (!d)
			return false;
		free(h->deep);
		h->deep = d;
		h->deep_cap = need;
	}
	h->n_nodes = n_nodes;
	memset(h->deep_has, 0, HISTORY_SAMPLES * sizeof(*h->deep_has));
	return true;
}

/* Sample @i's nodes: the host's and the first @n packages' rows of
 * @snap's trees below level 2, if it has any: each tree's nodes then its
 * base slots, one tree after the other (snapshot_deep_width). */
static void record_nodes(struct history *h, unsigned i, const struct snapshot *snap, unsigned n)
{
	unsigned width = snapshot_deep_width(snap);

	h->deep_has[i] = false;
	if (!width || snap_deep_row_host(snap) >= snap->deep[0].rows || !follow_nodes(h, width - 1))
		return;
	for (unsigned e = 0; e <= n; e++) {
		double *dst = deep_slot(h, i, e);

		for (unsigned t = 0; t < snap->n_deep; t++) {
			const struct snap_deep *d = &snap->deep[t];
			unsigned row = e == 0 ? snap_deep_row_host(snap) : snap_deep_row_pkg(snap, e - 1);

			if (d->n_nodes && row < d->rows) {
				memcpy(dst, &d->slots_total[(size_t)row * d->n_nodes], d->n_nodes * sizeof(double));
				dst[d->n_nodes] = d->row_slots_total[row];
			} else {
				dst[d->n_nodes] = NAN;
			}
			dst += d->n_nodes + 1;
		}
	}
	h->deep_gen[i] = snap->deep[0].gen;
	h->deep_layout[i] = snap->layout;
	h->deep_has[i] = true;
}

static bool due(const struct history *h, double mono_s)
{
	unsigned last = (h->head + HISTORY_SAMPLES - 1) % HISTORY_SAMPLES;

	return !h->count || mono_s - h->ts[last] >= h->step_s;
}

bool history_due(struct history *h, double mono_s)
{
	bool r;

	pthread_mutex_lock(&h->lock);
	r = due(h, mono_s);
	pthread_mutex_unlock(&h->lock);
	return r;
}

void history_record(struct history *h, const struct snapshot *snap)
{
	unsigned i, n = snap->n_pkgs < h->max_pkgs ? snap->n_pkgs : h->max_pkgs;

	/* Before the first interval there is nothing to start a window at. */
	if (snap->seq == 0)
		return;
	pthread_mutex_lock(&h->lock);
	if (!due(h, snapshot_mono_s(snap))) {
		pthread_mutex_unlock(&h->lock);
		return;
	}
	if (!follow_cats(h, snap->cats)) {
		pthread_mutex_unlock(&h->lock);
		return;
	}
	i = h->head;
	h->ts[i] = snapshot_mono_s(snap);
	h->n_pkgs[i] = n;
	pack(h, slot(h, i, 0), snap->host.total);
	for (unsigned p = 0; p < n; p++) {
		h->pkg_ids[(size_t)i * h->max_pkgs + p] = snap->pkgs[p].package;
		pack(h, slot(h, i, 1 + p), snap->pkgs[p].c.total);
	}
	record_nodes(h, i, snap, n);
	h->head = (h->head + 1) % HISTORY_SAMPLES;
	if (h->count < HISTORY_SAMPLES)
		h->count++;
	pthread_mutex_unlock(&h->lock);
}

int history_series(struct history *h, double since, double ref_mono, double ref_wall,
		   struct history_series **ret)
{
	struct history_series *s = calloc(1, sizeof(*s));
	unsigned oldest, n = 0;

	if (!s)
		return -ENOMEM;
	pthread_mutex_lock(&h->lock);
	oldest = (h->head + HISTORY_SAMPLES - h->count) % HISTORY_SAMPLES;
	s->n_pkgs = 0;
	s->step_s = h->step_s;
	for (unsigned k = 0; k < h->count; k++) {
		unsigned i = (oldest + k) % HISTORY_SAMPLES;

		if (h->n_pkgs[i] > s->n_pkgs) {
			s->n_pkgs = h->n_pkgs[i];
			memcpy(s->pkg_ids, &h->pkg_ids[(size_t)i * h->max_pkgs],
			       s->n_pkgs * sizeof(*s->pkg_ids));
		}
	}
	s->ts = malloc((h->count ? h->count : 1) * sizeof(*s->ts));
	s->totals = calloc((size_t)(h->count ? h->count : 1) * (1 + s->n_pkgs), TD_C_COUNT * sizeof(double));
	if (!s->ts || !s->totals) {
		pthread_mutex_unlock(&h->lock);
		history_series_free(s);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < h->count; k++) {
		unsigned i = (oldest + k) % HISTORY_SAMPLES;
		unsigned next = (i + 1) % HISTORY_SAMPLES;
		double wall = ref_wall - (ref_mono - h->ts[i]);
		double wall_next = ref_wall - (ref_mono - h->ts[next]);

		/* The samples after @since, and the one before them: the first
		 * step ending after @since starts there.  To the millisecond,
		 * as documents print them. */
		if (round(wall * 1e3) / 1e3 <= since &&
		    (k + 1 == h->count || round(wall_next * 1e3) / 1e3 <= since))
			continue;
		s->ts[n] = wall;
		for (unsigned e = 0; e <= h->n_pkgs[i]; e++)
			unpack(h, &s->totals[((size_t)n * (1 + s->n_pkgs) + e) * TD_C_COUNT], slot(h, i, e));
		n++;
	}
	s->n = n;
	pthread_mutex_unlock(&h->lock);
	*ret = s;
	return 0;
}

void history_series_free(struct history_series *s)
{
	if (!s)
		return;
	free(s->ts);
	free(s->totals);
	free(s);
}

int history_at(struct history *h, double mono_s, struct history_sample *out)
{
	unsigned oldest, pick;

	out->nodes = NULL;
	out->n_nodes = 0;
	pthread_mutex_lock(&h->lock);
	if (h->count == 0) {
		pthread_mutex_unlock(&h->lock);
		return -ENOENT;
	}
	oldest = (h->head + HISTORY_SAMPLES - h->count) % HISTORY_SAMPLES;
	pick = oldest;
	/* Newest first: the latest sample not after @mono_s. */
	for (unsigned k = 0; k < h->count; k++) {
		unsigned i = (h->head + HISTORY_SAMPLES - 1 - k) % HISTORY_SAMPLES;

		if (h->ts[i] <= mono_s) {
			pick = i;
			break;
		}
	}
	out->mono = h->ts[pick];
	out->n_pkgs = h->n_pkgs[pick];
	unpack(h, out->host, slot(h, pick, 0));
	for (unsigned p = 0; p < out->n_pkgs; p++) {
		out->pkg_ids[p] = h->pkg_ids[(size_t)pick * h->max_pkgs + p];
		unpack(h, out->pkgs[p], slot(h, pick, 1 + p));
	}
	if (h->deep_has[pick]) {
		size_t n = (size_t)(1 + out->n_pkgs) * (h->n_nodes + 1);

		out->nodes = malloc(n * sizeof(double));
		if (!out->nodes) {
			pthread_mutex_unlock(&h->lock);
			return -ENOMEM;
		}
		memcpy(out->nodes, deep_slot(h, pick, 0), n * sizeof(double));
		out->n_nodes = h->n_nodes;
		out->deep_gen = h->deep_gen[pick];
		out->layout = h->deep_layout[pick];
	}
	pthread_mutex_unlock(&h->lock);
	return 0;
}

void history_sample_release(struct history_sample *s)
{
	if (!s)
		return;
	free(s->nodes);
	s->nodes = NULL;
	s->n_nodes = 0;
}

const double *history_sample_nodes(const struct history_sample *s, int pkg)
{
	if (!s || !s->nodes)
		return NULL;
	if (pkg < 0)
		return s->nodes;
	for (unsigned p = 0; p < s->n_pkgs; p++)
		if (s->pkg_ids[p] == pkg)
			return &s->nodes[(size_t)(1 + p) * (s->n_nodes + 1)];
	return NULL;
}
