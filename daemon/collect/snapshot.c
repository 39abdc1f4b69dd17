/* SPDX-License-Identifier: MIT */
/* snapshot: aggregation and the publication ring. */
#include "snapshot.h"

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *const cpu_state_name[] = {
	[CPU_STATE_MONITORED] = "monitored",
	[CPU_STATE_FAILED] = "failed",
	[CPU_STATE_OFFLINE] = "offline",
	[CPU_STATE_UNSUPPORTED] = "unsupported",
	[CPU_STATE_HELD] = "held",
	[CPU_STATE_YIELDED] = "yielded",
	[CPU_STATE_SILENCED] = "silenced",
	[CPU_STATE_ISOLATED] = "isolated",
};
TABLE_COVERS(cpu_state_name, CPU_STATE_COUNT);

const char *const coll_error_name[] = {
	[COLL_ERR_PERMISSION] = "permission",
	[COLL_ERR_UNSUPPORTED] = "unsupported",
	[COLL_ERR_OFFLINE] = "offline",
	[COLL_ERR_FD_LIMIT] = "fd_limit",
	[COLL_ERR_OPEN] = "open",
	[COLL_ERR_READ] = "read",
	[COLL_ERR_SHORT_READ] = "short_read",
};
TABLE_COVERS(coll_error_name, COLL_ERR_COUNT);

void snap_cols_of(td_catset cats, struct snap_cols *out)
{
	unsigned col = 0;

	out->n = 0;
	/* Slots and the times always; then each run of categories. */
	while (col < TD_C_COUNT) {
		unsigned lo = col;

		while (col < TD_C_COUNT && (col < TD_C_CAT || td_catset_has(cats, (enum td_cat)(col - TD_C_CAT))))
			col++;
		if (col > lo) {
			out->lo[out->n] = (uint8_t)lo;
			out->hi[out->n++] = (uint8_t)col;
		}
		col++;
	}
}

/* The columns of @cols only: the others are never read. */
static void add_counts(struct snap_counts *restrict dst, const struct snap_counts *restrict src,
		       const struct snap_cols *restrict cols)
{
	for (unsigned r = 0; r < cols->n; r++)
		for (unsigned i = cols->lo[r]; i < cols->hi[r]; i++) {
			dst->total[i] += src->total[i];
			dst->last[i] += src->last[i];
		}
	dst->cats |= src->cats;
	dst->cpus += src->cpus;
	dst->measured += src->measured;
}

/* A CPU's counts go once into its package (its core does not stand
 * between them) and once into its core.  Always in the same order:
 * floating-point sums taken in a fixed order of non-decreasing terms never
 * decrease, so aggregates stay monotonic.  A CPU whose package is unknown
 * goes straight to the host. */
static void sum_packages(struct snapshot *snap)
{
	struct snap_cols cols;

	/* Columns of categories no CPU yields are 0 everywhere: skipped (a
	 * snapshot that names none gets them all). */
	snap_cols_of(snap->cats ? snap->cats : ~(td_catset)0, &cols);
	for (unsigned i = 0; i < snap->n_pkgs; i++) {
		memset(&snap->pkgs[i].c, 0, sizeof(snap->pkgs[i].c));
		snap->pkgs[i].covered = false;
	}
	memset(&snap->host, 0, sizeof(snap->host));
	for (unsigned i = 0; i < snap->n_cpus; i++) {
		const struct snap_cpu *cpu = &snap->cpus[i];

		if (cpu->pkg_idx >= 0) {
			add_counts(&snap->pkgs[cpu->pkg_idx].c, &cpu->c, &cols);
			snap->pkgs[cpu->pkg_idx].covered |= cpu->selected && cpu->state != CPU_STATE_UNSUPPORTED;
		} else {
			add_counts(&snap->host, &cpu->c, &cols);
		}
	}
	for (unsigned i = 0; i < snap->n_pkgs; i++)
		add_counts(&snap->host, &snap->pkgs[i].c, &cols);
}


static void sum_cores(struct snapshot *snap)
{
	struct snap_cols cols;

	snap_cols_of(snap->cats ? snap->cats : ~(td_catset)0, &cols);
	for (unsigned i = 0; i < snap->n_cores; i++) {
		memset(&snap->cores[i].c, 0, sizeof(snap->cores[i].c));
		snap->cores[i].covered = false;
	}
	for (unsigned i = 0; i < snap->n_cpus; i++) {
		const struct snap_cpu *cpu = &snap->cpus[i];

		if (cpu->core_idx >= 0) {
			add_counts(&snap->cores[cpu->core_idx].c, &cpu->c, &cols);
			snap->cores[cpu->core_idx].covered |= cpu->selected && cpu->state != CPU_STATE_UNSUPPORTED;
		}
	}
}

void snapshot_aggregate(struct snapshot *snap)
{
	sum_packages(snap);
	sum_cores(snap);
}

struct slots_key {
	const struct snap_cgroup *cgroups;
	bool last;
};

static int more_slots(const void *a, const void *b, void *arg)
{
	const struct slots_key *k = arg;
	const struct snap_counts *x = &k->cgroups[*(const unsigned *)a].c;
	const struct snap_counts *y = &k->cgroups[*(const unsigned *)b].c;
	double sx = k->last ? x->last[TD_C_SLOTS] : x->total[TD_C_SLOTS];
	double sy = k->last ? y->last[TD_C_SLOTS] : y->total[TD_C_SLOTS];

	return sx < sy ? 1 : sx > sy ? -1 : 0;
}

void snapshot_cgroups_by_slots(const struct snapshot *snap, bool last, unsigned *order)
{
	struct slots_key key = { snap->cgroups, last };

	for (unsigned i = 0; i < snap->n_cgroups; i++)
		order[i] = i;
	if (snap->n_cgroups)
		qsort_r(order, snap->n_cgroups, sizeof(order[0]), more_slots, &key);
}

int snapshot_deep_reserve(struct snap_deep *d, unsigned rows, unsigned nodes)
{
	size_t need = (size_t)rows * nodes;

	if (need > d->cap) {
		double *last = realloc(d->last, need * sizeof(double));
		double *slots = last ? realloc(d->slots_total, need * sizeof(double)) : NULL;
		double *secs = slots ? realloc(d->measured_ns_total, need * sizeof(double)) : NULL;

		if (last)
			d->last = last;
		if (slots)
			d->slots_total = slots;
		if (!secs)
			return -ENOMEM;
		d->measured_ns_total = secs;
		d->cap = need;
	}
	if (rows > d->row_cap) {
		double *rs = realloc(d->row_slots_total, rows * sizeof(double));

		if (!rs)
			return -ENOMEM;
		d->row_slots_total = rs;
		d->row_cap = rows;
	}
	return 0;
}

static void deep_free(struct snap_deep *d)
{
	free(d->last);
	free(d->slots_total);
	free(d->measured_ns_total);
	free(d->row_slots_total);
}

/* @dst's tree from @src's: the arrays stay the destination's, with
 * @src's contents when they hold them, else no tree. */
void snapshot_deep_copy(struct snap_deep *dst, const struct snap_deep *src)
{
	struct snap_deep keep = *dst;
	size_t n = (size_t)src->rows * src->n_nodes;

	*dst = *src;
	dst->last = keep.last;
	dst->slots_total = keep.slots_total;
	dst->measured_ns_total = keep.measured_ns_total;
	dst->row_slots_total = keep.row_slots_total;
	dst->cap = keep.cap;
	dst->row_cap = keep.row_cap;
	if (n && n <= keep.cap && src->rows <= keep.row_cap) {
		memcpy(dst->last, src->last, n * sizeof(double));
		memcpy(dst->slots_total, src->slots_total, n * sizeof(double));
		memcpy(dst->measured_ns_total, src->measured_ns_total, n * sizeof(double));
		memcpy(dst->row_slots_total, src->row_slots_total, src->rows * sizeof(double));
	} else {
		dst->n_nodes = 0;
	}
}

void snapshot_copy(struct snapshot *dst, const struct snapshot *src)
{
	struct snap_cpu *cpus = dst->cpus;
	struct snap_core *cores = dst->cores;
	struct snap_pkg *pkgs = dst->pkgs;
	struct snap_cgroup *cgroups = dst->cgroups;
	struct snap_deep deep[SNAP_PMUS];

	memcpy(deep, dst->deep, sizeof(deep));
	*dst = *src;
	dst->cpus = cpus;
	dst->cores = cores;
	dst->pkgs = pkgs;
	dst->cgroups = cgroups;
	memcpy(dst->deep, deep, sizeof(deep));
	for (unsigned k = 0; k < SNAP_PMUS; k++)
		snapshot_deep_copy(&dst->deep[k], &src->deep[k]);
	/* A snapshot without per-cgroup buckets may have no array at all. */
	if (src->n_cgroups)
		memcpy(cgroups, src->cgroups, src->n_cgroups * sizeof(*cgroups));
	memcpy(cpus, src->cpus, src->n_cpus * sizeof(*cpus));
	memcpy(cores, src->cores, src->n_cores * sizeof(*cores));
	memcpy(pkgs, src->pkgs, src->n_pkgs * sizeof(*pkgs));
}

/* Three shared buffers: one being written, one published, one still read
 * by a slow reader of the previous interval; and the writer's two private
 * ones for when readers hold all three.
 *
 * Lock-free: the writer (one thread) only takes a buffer that is neither
 * published nor referenced; a reader increments the published buffer's
 * count, then checks it is still the published one, else lets go and
 * tries again.  The writer never waits; a reader only retries if a
 * publication happened between its two loads. */
#define RING_SIZE 3
/* The writer's own, never published: when readers hold every shared
 * buffer, collection goes on in these (two, as each interval continues the
 * one written before).  Their pages are touched only if ever used. */
#define PRIVATE 2

struct snapring {
	struct snapshot bufs[RING_SIZE + PRIVATE];
	atomic_uint refs[RING_SIZE];
	atomic_int current; /* published index, -1 before the first */
	uint64_t published; /* publications so far (the writer's only) */
	int last_written;   /* the writer's only */
	uint64_t private_uses;
};

int snapring_new(unsigned capacity, unsigned cg_capacity, struct snapring **ret)
{
	struct snapring *ring = calloc(1, sizeof(*ring));

	if (!ring)
		return -ENOMEM;
	atomic_init(&ring->current, -1);
	ring->last_written = -1;
	for (int i = 0; i < RING_SIZE; i++)
		atomic_init(&ring->refs[i], 0);
	for (int i = 0; i < RING_SIZE + PRIVATE; i++) {
		struct snapshot *s = &ring->bufs[i];

		s->cpus = calloc(capacity ? capacity : 1, sizeof(*s->cpus));
		s->cores = calloc(capacity ? capacity : 1, sizeof(*s->cores));
		s->pkgs = calloc(capacity ? capacity : 1, sizeof(*s->pkgs));
		s->cgroups = calloc(cg_capacity ? cg_capacity : 1, sizeof(*s->cgroups));
		if (!s->cpus || !s->cores || !s->pkgs || !s->cgroups) {
			snapring_free(ring);
			return -ENOMEM;
		}
	}
	*ret = ring;
	return 0;
}

void snapring_free(struct snapring *ring)
{
	if (!ring)
		return;
	for (int i = 0; i < RING_SIZE + PRIVATE; i++) {
		free(ring->bufs[i].cpus);
		free(ring->bufs[i].cores);
		free(ring->bufs[i].pkgs);
		free(ring->bufs[i].cgroups);
		for (unsigned k = 0; k < SNAP_PMUS; k++)
			deep_free(&ring->bufs[i].deep[k]);
	}
	free(ring);
}

struct snapshot *snapring_begin(struct snapring *ring)
{
	int current = atomic_load(&ring->current);

	for (int i = 0; i < RING_SIZE; i++)
		if (i != current && atomic_load(&ring->refs[i]) == 0)
			return &ring->bufs[(ring->last_written = i)];
	/* Not the one written last, which the next interval continues. */
	ring->private_uses++;
	ring->last_written = ring->last_written == RING_SIZE ? RING_SIZE + 1 : RING_SIZE;
	return &ring->bufs[ring->last_written];
}

bool snapring_publish(struct snapring *ring, struct snapshot *snap)
{
	int i = (int)(snap - ring->bufs);

	if (i >= RING_SIZE)
		return false;
	snap->published = ++ring->published;
	/* Sequentially consistent: the buffer's contents before the index. */
	atomic_store(&ring->current, i);
	return true;
}

uint64_t snapring_private_uses(const struct snapring *ring)
{
	return ring->private_uses;
}

const struct snapshot *snapring_acquire(struct snapring *ring)
{
	for (;;) {
		int i = atomic_load(&ring->current);

		if (i < 0)
			return NULL;
		atomic_fetch_add(&ring->refs[i], 1);
		if (atomic_load(&ring->current) == i)
			return &ring->bufs[i];
		/* Published over meanwhile: the writer may be reusing it. */
		atomic_fetch_sub(&ring->refs[i], 1);
	}
}

void snapring_release(struct snapring *ring, const struct snapshot *snap)
{
	if (!snap)
		return;
	/* Only a snapshot this ring handed out, once: anything else would
	 * free a buffer the collector then overwrites while it is read. */
	assert(snap >= ring->bufs && snap < ring->bufs + RING_SIZE);
	assert(atomic_load(&ring->refs[snap - ring->bufs]) > 0);
	atomic_fetch_sub(&ring->refs[snap - ring->bufs], 1);
}
