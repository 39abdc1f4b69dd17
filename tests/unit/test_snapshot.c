/* SPDX-License-Identifier: MIT */
/* Unit tests of snapshot: slot-weighted aggregation into cores, packages
 * and the host, snapshot_copy, and the publication ring's buffer rules
 * and sums when read. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>

#include "snapfix.h"
#include "snapshot.h"
#include "testlib.h"

/* A hand-built host:
 *   cpu 0, 1: package 0, core 0 (cores[0]), monitored
 *   cpu 2:    package 0, core 1 (cores[1]), unsupported (only CPU of its core)
 *   cpu 3:    package 1, core 0 (cores[2]), monitored
 *   cpu 4:    package 1, core 0 (cores[2]), failed (no counts)
 *   cpu 5:    topology unknown (core_idx = pkg_idx = -1), monitored
 *   pkgs[0] = package 0, pkgs[1] = package 1, pkgs[2] = package 7 (no CPU)
 */
#define N_CPUS 6
#define N_CORES 3
#define N_PKGS 3

struct fixture {
	struct snapshot snap;
	struct snap_cpu cpus[N_CPUS];
	struct snap_core cores[N_CORES];
	struct snap_pkg pkgs[N_PKGS];
};

/* Counts of one CPU: slots, retiring slots, the other three L1 in equal
 * shares, L2 halves, enabled/running; last = total / 10. */
static void set_counts(struct snap_counts *c, double slots, double retiring, double enabled,
		       double running)
{
	double rest = (slots - retiring) / 3;

	memset(c, 0, sizeof(*c));
	c->total[TD_C_SLOTS] = slots;
	c->total[TD_C_CAT + TD_CAT_RETIRING] = retiring;
	c->total[TD_C_CAT + TD_CAT_BAD_SPECULATION] = rest;
	c->total[TD_C_CAT + TD_CAT_FRONTEND_BOUND] = rest;
	c->total[TD_C_CAT + TD_CAT_BACKEND_BOUND] = rest;
	for (int k = TD_CAT_HEAVY_OPERATIONS; k < TD_CAT_COUNT; k++)
		c->total[TD_C_CAT + k] = c->total[TD_C_CAT + td_cat[k].parent] / 2;
	c->total[TD_C_ENABLED] = enabled;
	c->total[TD_C_RUNNING] = running;
	for (int i = 0; i < TD_C_COUNT; i++)
		c->last[i] = c->total[i] / 10;
}

static struct fixture *fixture_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));
	/* cpu, known, selected, core_id, package, core_idx, pkg_idx, state */
	static const struct snapfix_cpu layout[N_CPUS] = {
		{ 0, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED },
		{ 1, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED },
		{ 2, true, true, 1, 0, 1, 0, CPU_STATE_UNSUPPORTED },
		{ 3, true, true, 0, 1, 2, 1, CPU_STATE_MONITORED },
		{ 4, true, true, 0, 1, 2, 1, CPU_STATE_FAILED },
		{ 5, false, true, -1, -1, -1, -1, CPU_STATE_MONITORED },
	};

	assert_non_null(f);
	snap_wire(&f->snap, f->cpus, f->cores, f->pkgs);
	snapfix_cpus(&f->snap, layout, N_CPUS);
	f->snap.n_cores = N_CORES;
	f->snap.n_pkgs = N_PKGS;
	f->snap.level = 2;
	f->cores[0] = (struct snap_core){ .core_id = 0, .package = 0 };
	f->cores[1] = (struct snap_core){ .core_id = 1, .package = 0 };
	f->cores[2] = (struct snap_core){ .core_id = 0, .package = 1 };
	f->pkgs[0].package = 0;
	f->pkgs[1].package = 1;
	f->pkgs[2].package = 7;
	/*          slots    retiring  enabled  running */
	set_counts(&f->cpus[0].c, 1000, 900, 2e9, 2e9);  /* retiring 0.9 */
	set_counts(&f->cpus[1].c, 3000, 300, 2e9, 1e9);  /* retiring 0.1 */
	set_counts(&f->cpus[3].c, 6000, 1800, 2e9, 2e9); /* retiring 0.3 */
	set_counts(&f->cpus[5].c, 30, 3, 1e9, 1e9);      /* retiring 0.1 */
	/* cpus 2 (unsupported) and 4 (failed) count nothing. */
	return f;
}

static void assert_counts_equal(const struct snap_counts *got, const struct snap_counts *want)
{
	for (int i = 0; i < TD_C_COUNT; i++) {
		if (got->total[i] != want->total[i])
			fail_msg("total[%d] = %.17g, expected %.17g", i, got->total[i], want->total[i]);
		if (got->last[i] != want->last[i])
			fail_msg("last[%d] = %.17g, expected %.17g", i, got->last[i], want->last[i]);
	}
}

static void sum_into(struct snap_counts *dst, const struct snap_counts *a)
{
	for (int i = 0; i < TD_C_COUNT; i++) {
		dst->total[i] += a->total[i];
		dst->last[i] += a->last[i];
	}
}

/* The columns a set of categories uses: slots and the times, then each
 * run of consecutive categories. */
static void test_cols(void **state)
{
	struct snap_cols c;
	td_catset amd = TD_CATSET_L1 | (1u << TD_CAT_SMT_CONTENTION) | (1u << TD_CAT_RETIRING_FASTPATH) |
			(1u << TD_CAT_RETIRING_MICROCODE) | (1u << TD_CAT_BACKEND_BOUND_CPU);

	(void)state;
	snap_cols_of(TD_CATSET_L1 | TD_CATSET_L2_INTEL, &c);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.lo[0], 0);
	assert_int_equal(c.hi[0], TD_C_CAT + TD_CAT_CORE_BOUND + 1);
	snap_cols_of(amd, &c);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.hi[0], TD_C_CAT + 4);
	assert_int_equal(c.lo[1], TD_C_CAT + TD_CAT_SMT_CONTENTION);
	assert_int_equal(c.hi[1], TD_C_CAT + TD_CAT_RETIRING_MICROCODE + 1);
	assert_int_equal(c.lo[2], TD_C_CAT + TD_CAT_BACKEND_BOUND_CPU);
	assert_int_equal(c.hi[2], TD_C_CAT + TD_CAT_BACKEND_BOUND_CPU + 1);
	snap_cols_of(0, &c);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.hi[0], TD_C_CAT);
}

/* A snapshot's categories bound the aggregation: the columns of the
 * others are not added (no CPU of it has them). */
static void test_aggregate_cols(void **state)
{
	struct fixture *f = fixture_new();
	struct snapshot *s = &f->snap;

	(void)state;
	s->cats = TD_CATSET_L1;
	f->cpus[0].c.total[TD_C_CAT + TD_CAT_MEMORY_BOUND] = 77;
	snapshot_aggregate(s);
	assert_true(s->host.total[TD_C_CAT + TD_CAT_MEMORY_BOUND] == 0);
	assert_true(s->host.total[TD_C_SLOTS] > 0);
	s->cats = TD_CATSET_L1 | TD_CATSET_L2_INTEL;
	snapshot_aggregate(s);
	{
		double want = 0;

		for (int i = 0; i < N_CPUS; i++)
			want += f->cpus[i].c.total[TD_C_CAT + TD_CAT_MEMORY_BOUND];
		assert_true(want >= 77);
		assert_true(s->host.total[TD_C_CAT + TD_CAT_MEMORY_BOUND] == want);
	}
	free(f);
}

static void test_aggregate_sums(void **state)
{
	struct fixture *f = fixture_new();
	struct snapshot *s = &f->snap;
	struct snap_counts want;

	(void)state;
	/* Stale values must be overwritten, not added to. */
	f->cores[1].covered = true;
	f->pkgs[2].covered = true;
	set_counts(&f->pkgs[2].c, 5, 5, 5, 5);
	set_counts(&f->cores[0].c, 5, 5, 5, 5);
	set_counts(&s->host, 123, 1, 1, 1);
	snapshot_aggregate(s);

	/* core 0 of package 0 = cpus 0 + 1: slots 4000, retiring 1200. */
	memset(&want, 0, sizeof(want));
	sum_into(&want, &f->cpus[0].c);
	sum_into(&want, &f->cpus[1].c);
	assert_counts_equal(&f->cores[0].c, &want);
	assert_true(f->cores[0].c.total[TD_C_SLOTS] == 4000);
	assert_true(f->cores[0].c.total[TD_C_CAT + TD_CAT_RETIRING] == 1200);
	assert_true(f->cores[0].c.last[TD_C_SLOTS] == 400);
	assert_true(f->cores[0].c.total[TD_C_ENABLED] == 4e9);
	assert_true(f->cores[0].c.total[TD_C_RUNNING] == 3e9);
	assert_true(f->cores[0].covered);

	/* core 1 of package 0: only the unsupported cpu 2: zero, not covered. */
	memset(&want, 0, sizeof(want));
	assert_counts_equal(&f->cores[1].c, &want);
	assert_false(f->cores[1].covered);

	/* core 0 of package 1 = cpu 3 + the failed cpu 4: covered (a failed
	 * CPU is not unsupported). */
	assert_counts_equal(&f->cores[2].c, &f->cpus[3].c);
	assert_true(f->cores[2].covered);

	/* package 0 = cpus 0, 1, 2; package 1 = cpus 3, 4; package 7 empty. */
	memset(&want, 0, sizeof(want));
	sum_into(&want, &f->cpus[0].c);
	sum_into(&want, &f->cpus[1].c);
	assert_counts_equal(&f->pkgs[0].c, &want);
	assert_true(f->pkgs[0].covered);
	assert_counts_equal(&f->pkgs[1].c, &f->cpus[3].c);
	assert_true(f->pkgs[1].covered);
	memset(&want, 0, sizeof(want));
	assert_counts_equal(&f->pkgs[2].c, &want);
	assert_false(f->pkgs[2].covered);

	/* host = every CPU, including cpu 5 of unknown topology:
	 * slots 1000 + 3000 + 6000 + 30 = 10030. */
	assert_true(s->host.total[TD_C_SLOTS] == 10030);
	assert_true(s->host.last[TD_C_SLOTS] == 1003);
	assert_true(s->host.total[TD_C_CAT + TD_CAT_RETIRING] == 900 + 300 + 1800 + 3);
	assert_true(s->host.total[TD_C_ENABLED] == 7e9);
	/* cpu 5 is in no core and no package: cores + packages miss its 30. */
	assert_true(f->pkgs[0].c.total[TD_C_SLOTS] + f->pkgs[1].c.total[TD_C_SLOTS] == 10000);
	assert_true(f->cores[0].c.total[TD_C_SLOTS] + f->cores[2].c.total[TD_C_SLOTS] == 10000);

	/* A core whose only non-unsupported CPU failed is still covered. */
	f->cpus[3].state = CPU_STATE_UNSUPPORTED;
	snapshot_aggregate(s);
	assert_true(f->cores[2].covered);
	assert_true(f->pkgs[1].covered);
	f->cpus[4].state = CPU_STATE_UNSUPPORTED;
	snapshot_aggregate(s);
	assert_false(f->cores[2].covered);
	assert_false(f->pkgs[1].covered);
	f->cpus[3].state = CPU_STATE_MONITORED;
	f->cpus[4].state = CPU_STATE_FAILED;
	snapshot_aggregate(s);

	/* Aggregating again gives the same numbers (no accumulation). */
	memcpy(&want, &s->host, sizeof(want));
	snapshot_aggregate(s);
	assert_counts_equal(&s->host, &want);
	free(f);
}

/* Slot-weighted, never averaged: core 0 has cpu 0 at retiring 0.9 over
 * 100 slots (last interval) and cpu 1 at 0.1 over 300 slots.  The
 * average of the ratios would be 0.5; the core's ratio is
 * (90 + 30) / (100 + 300) = 0.3.  Host: (90 + 30 + 180 + 0.3) / 1003. */
static void test_aggregate_slot_weighted(void **state)
{
	struct fixture *f = fixture_new();
	struct snapshot *s = &f->snap;
	double core_ratio, host_ratio;

	(void)state;
	snapshot_aggregate(s);
	core_ratio = f->cores[0].c.last[TD_C_CAT + TD_CAT_RETIRING] / f->cores[0].c.last[TD_C_SLOTS];
	assert_true(fabs(core_ratio - 0.3) < 1e-12);
	assert_true(fabs(core_ratio - 0.5) > 0.1);
	host_ratio = s->host.last[TD_C_CAT + TD_CAT_RETIRING] / s->host.last[TD_C_SLOTS];
	assert_true(fabs(host_ratio - 300.3 / 1003) < 1e-12);
	/* Mean of the monitored CPUs' ratios (0.9, 0.1, 0.3, 0.1) = 0.35. */
	assert_true(fabs(host_ratio - 0.35) > 0.04);
	/* The L1 categories still partition the host's slots. */
	{
		double sum = 0;

		for (int k = 0; k < TD_CAT_COUNT; k++)
			if (td_cat[k].level == 1)
				sum += s->host.total[TD_C_CAT + k];
		assert_true(fabs(sum - s->host.total[TD_C_SLOTS]) < 1e-9);
	}
	free(f);
}

/* A snapshot without CPUs: everything zero. */
static void test_aggregate_empty(void **state)
{
	struct fixture *f = fixture_new();
	struct snap_counts zero;

	(void)state;
	f->snap.n_cpus = 0;
	set_counts(&f->snap.host, 1, 1, 1, 1);
	f->pkgs[0].covered = true;
	snapshot_aggregate(&f->snap);
	memset(&zero, 0, sizeof(zero));
	assert_counts_equal(&f->snap.host, &zero);
	assert_counts_equal(&f->pkgs[0].c, &zero);
	assert_false(f->pkgs[0].covered);
	free(f);
}

static void test_copy(void **state)
{
	struct fixture *src = fixture_new(), *dst = calloc(1, sizeof(*dst));

	(void)state;
	assert_non_null(dst);
	dst->snap.cpus = dst->cpus;
	dst->snap.cores = dst->cores;
	dst->snap.pkgs = dst->pkgs;
	src->snap.seq = 42;
	src->snap.layout = 7;
	src->snap.timestamp = 1700000000.5;
	src->snap.up = true;
	strcpy(src->snap.pmus[0].name, "cpu");
	src->snap.n_pmus = 1;
	strcpy(src->snap.reason, "why not");
	src->snap.cpus_by_state[CPU_STATE_FAILED] = 1;
	src->snap.errors[COLL_ERR_READ] = 3;
	snapshot_aggregate(&src->snap);

	snapshot_copy(&dst->snap, &src->snap);
	/* The destination keeps its own storage... */
	assert_ptr_equal(dst->snap.cpus, dst->cpus);
	assert_ptr_equal(dst->snap.cores, dst->cores);
	assert_ptr_equal(dst->snap.pkgs, dst->pkgs);
	/* ...holding a copy of everything. */
	assert_memory_equal(dst->cpus, src->cpus, sizeof(src->cpus));
	assert_memory_equal(dst->cores, src->cores, sizeof(src->cores));
	assert_memory_equal(dst->pkgs, src->pkgs, sizeof(src->pkgs));
	assert_int_equal(dst->snap.seq, 42);
	assert_int_equal(dst->snap.layout, 7);
	assert_true(dst->snap.timestamp == 1700000000.5);
	assert_true(dst->snap.up);
	assert_int_equal(dst->snap.n_cpus, N_CPUS);
	assert_int_equal(dst->snap.n_cores, N_CORES);
	assert_int_equal(dst->snap.n_pkgs, N_PKGS);
	assert_string_equal(dst->snap.pmus[0].name, "cpu");
	assert_int_equal(dst->snap.n_pmus, 1);
	assert_string_equal(dst->snap.reason, "why not");
	assert_int_equal(dst->snap.cpus_by_state[CPU_STATE_FAILED], 1);
	assert_int_equal(dst->snap.errors[COLL_ERR_READ], 3);
	assert_memory_equal(&dst->snap.host, &src->snap.host, sizeof(src->snap.host));
	/* Independent afterwards. */
	src->cpus[0].c.total[TD_C_SLOTS] = 1;
	assert_true(dst->cpus[0].c.total[TD_C_SLOTS] == 1000);
	free(src);
	free(dst);
}

/* ---- snapring ---- */

/* Writes to every slot of a buffer's arrays: ASan catches short ones. */
static void fill(struct snapshot *s, unsigned capacity, uint64_t seq)
{
	assert_non_null(s);
	s->seq = seq;
	s->n_cpus = s->n_cores = s->n_pkgs = capacity;
	for (unsigned i = 0; i < capacity; i++) {
		s->cpus[i].cpu = (int)i;
		s->cores[i].core_id = (int)i;
		s->pkgs[i].package = (int)i;
	}
}

static void test_ring_basic(void **state)
{
	struct snapring *ring = NULL;
	struct snapshot *w1, *w2;
	const struct snapshot *r1, *r2;

	(void)state;
	assert_int_equal(snapring_new(4, 0, &ring), 0);
	assert_non_null(ring);
	assert_null(snapring_acquire(ring));

	w1 = snapring_begin(ring);
	fill(w1, 4, 1);
	/* Not published yet: readers still see nothing. */
	assert_null(snapring_acquire(ring));
	snapring_publish(ring, w1);
	r1 = snapring_acquire(ring);
	assert_ptr_equal(r1, w1);
	assert_int_equal(r1->seq, 1);
	assert_int_equal(r1->cpus[3].cpu, 3);
	snapring_release(ring, r1);

	/* The next buffer is never the published one. */
	w2 = snapring_begin(ring);
	assert_non_null(w2);
	assert_ptr_not_equal(w2, w1);
	fill(w2, 4, 2);
	/* Until published, readers get the previous one. */
	r1 = snapring_acquire(ring);
	assert_ptr_equal(r1, w1);
	assert_int_equal(r1->seq, 1);
	snapring_release(ring, r1);
	snapring_publish(ring, w2);
	r2 = snapring_acquire(ring);
	assert_ptr_equal(r2, w2);
	assert_int_equal(r2->seq, 2);
	snapring_release(ring, r2);
	snapring_release(ring, NULL); /* no-op */

	/* With no reader, the writer cycles through the two free buffers. */
	for (uint64_t seq = 3; seq < 20; seq++) {
		const struct snapshot *cur = snapring_acquire(ring);
		struct snapshot *w;

		snapring_release(ring, cur);
		w = snapring_begin(ring);
		assert_non_null(w);
		assert_ptr_not_equal(w, cur);
		fill(w, 4, seq);
		snapring_publish(ring, w);
		cur = snapring_acquire(ring);
		assert_int_equal(cur->seq, seq);
		snapring_release(ring, cur);
	}
	snapring_free(ring);
	snapring_free(NULL);
}

static void test_ring_held(void **state)
{
	struct snapring *ring = NULL;
	struct snapshot *a, *b, *c, *w, *p, *p2;
	const struct snapshot *ra, *rb, *rb2, *rc;

	(void)state;
	assert_int_equal(snapring_new(2, 0, &ring), 0);
	a = snapring_begin(ring);
	fill(a, 2, 1);
	snapring_publish(ring, a);
	ra = snapring_acquire(ring); /* a slow reader holds a */
	assert_ptr_equal(ra, a);

	b = snapring_begin(ring);
	assert_non_null(b);
	assert_ptr_not_equal(b, a);
	fill(b, 2, 2);
	snapring_publish(ring, b);
	rb = snapring_acquire(ring); /* two readers hold b */
	rb2 = snapring_acquire(ring);
	assert_ptr_equal(rb, b);
	assert_ptr_equal(rb2, b);

	/* a held, b held and current: the third buffer. */
	c = snapring_begin(ring);
	assert_non_null(c);
	assert_ptr_not_equal(c, a);
	assert_ptr_not_equal(c, b);
	fill(c, 2, 3);
	snapring_publish(ring, c);
	rc = snapring_acquire(ring);
	assert_ptr_equal(rc, c);

	/* All three held: the writer goes on in one of its own, which is
	 * not published. */
	p = snapring_begin(ring);
	assert_non_null(p);
	assert_true(p != a && p != b && p != c);
	fill(p, 2, 4);
	assert_false(snapring_publish(ring, p));
	assert_int_equal(snapring_private_uses(ring), 1);
	/* Readers keep getting the current one meanwhile. */
	{
		const struct snapshot *x = snapring_acquire(ring);

		assert_ptr_equal(x, c);
		assert_int_equal(x->seq, 3);
		snapring_release(ring, x);
	}
	/* One of b's two readers leaves: b is still held.  The next interval
	 * goes into the other private buffer: it continues p. */
	snapring_release(ring, rb);
	p2 = snapring_begin(ring);
	assert_true(p2 != a && p2 != b && p2 != c && p2 != p);
	assert_int_equal(p->seq, 4);
	assert_false(snapring_publish(ring, p2));
	/* The reader of the current buffer leaving frees nothing: current. */
	snapring_release(ring, rc);
	assert_ptr_equal(snapring_begin(ring), p);
	assert_int_equal(snapring_private_uses(ring), 3);
	/* The slow reader of a leaves: a is the only free buffer. */
	snapring_release(ring, ra);
	w = snapring_begin(ring);
	assert_ptr_equal(w, a);
	/* Data a reader still holds is intact while the writer works. */
	assert_int_equal(rb2->seq, 2);
	fill(w, 2, 4);
	snapring_publish(ring, w);
	assert_int_equal(rb2->seq, 2);
	snapring_release(ring, rb2);
	/* Now a is current; b and c are free. */
	w = snapring_begin(ring);
	assert_non_null(w);
	assert_ptr_not_equal(w, a);
	snapring_free(ring);
}

/* Capacity 0 still gives usable buffers (room for one). */
static void test_ring_capacity_zero(void **state)
{
	struct snapring *ring = NULL;
	struct snapshot *w;

	(void)state;
	assert_int_equal(snapring_new(0, 0, &ring), 0);
	w = snapring_begin(ring);
	fill(w, 1, 1);
	snapring_publish(ring, w);
	assert_ptr_equal(snapring_acquire(ring), w);
	snapring_release(ring, w);
	snapring_free(ring);
}

/* One writer publishing as fast as it can, readers checking that every
 * buffer they hold is whole: all its CPUs carry the buffer's seq, and it
 * does not change while held (the writer never reuses a held buffer). */
#define STRESS_CPUS 64

struct stress {
	struct snapring *ring;
	atomic_bool stop;
	atomic_ulong reads, torn;
};

static void *stress_reader(void *arg)
{
	struct stress *st = arg;

	while (!atomic_load(&st->stop)) {
		const struct snapshot *s = snapring_acquire(st->ring);
		uint64_t seq;

		if (!s)
			continue;
		seq = s->seq;
		for (int i = 0; i < STRESS_CPUS; i++)
			if (s->cpus[i].c.total[TD_C_SLOTS] != (double)seq)
				atomic_fetch_add(&st->torn, 1);
		if (s->seq != seq)
			atomic_fetch_add(&st->torn, 1);
		snapring_release(st->ring, s);
		atomic_fetch_add(&st->reads, 1);
	}
	return NULL;
}

static void test_ring_stress(void **state)
{
	struct stress st = { 0 };
	pthread_t readers[3];
	uint64_t published = 0, skipped = 0;

	(void)state;
	assert_int_equal(snapring_new(STRESS_CPUS, 0, &st.ring), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&readers[i], NULL, stress_reader, &st), 0);
	for (uint64_t k = 1; k <= 200000; k++) {
		struct snapshot *s = snapring_begin(st.ring);

		s->seq = k;
		s->n_cpus = STRESS_CPUS;
		for (int i = 0; i < STRESS_CPUS; i++)
			s->cpus[i].c.total[TD_C_SLOTS] = (double)k;
		if (snapring_publish(st.ring, s))
			published++;
		else
			skipped++;
	}
	atomic_store(&st.stop, true);
	for (int i = 0; i < 3; i++)
		pthread_join(readers[i], NULL);
	print_message("ring: %llu published, %llu skipped, %lu reads\n", (unsigned long long)published,
		      (unsigned long long)skipped, atomic_load(&st.reads));
	assert_int_equal(atomic_load(&st.torn), 0);
	assert_true(published > 0);
	assert_int_equal(snapring_private_uses(st.ring), skipped);
	snapring_free(st.ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_stress),
		cmocka_unit_test(test_cols),
		cmocka_unit_test(test_aggregate_cols),
		cmocka_unit_test(test_aggregate_sums),
		cmocka_unit_test(test_aggregate_slot_weighted),
		cmocka_unit_test(test_aggregate_empty),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_ring_basic),
		cmocka_unit_test(test_ring_held),
		cmocka_unit_test(test_ring_capacity_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
