/* SPDX-License-Identifier: MIT */
/* history: samples a resolution step apart, the one a window starts at,
 * the ring wrapping, a new length. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "history.h"

#define S 1000000000ULL

static struct snap_pkg pkgs[2];
static struct snapshot snap = { .n_pkgs = 2, .pkgs = pkgs };

/* The wall clock's offset from the monotonic one (stepped by a test). */
static double wall_offset;

/* An interval ending at @t monotonic seconds: the host has counted
 * t * 1000 slots. */
static void at(struct history *h, double t)
{
	snap.seq++;
	snap.collected_ns = (uint64_t)(t * 1e9 + 0.5);
	snap.timestamp = t + wall_offset;
	snap.host.total[TD_C_SLOTS] = t * 1000;
	pkgs[0].package = 0;
	pkgs[1].package = 7;
	pkgs[1].c.total[TD_C_SLOTS] = t * 10;
	history_record(h, &snap);
}

static void test_window_start(void **state)
{
	struct history_sample s;
	struct history *h;

	(void)state;
	/* 900 s of history: a sample a second. */
	assert_int_equal(history_new(900 * S, 2, ~(td_catset)0, &h), 0);
	assert_int_equal(history_length_ns(h), 900 * S);
	assert_int_equal(history_at(h, 100, &s), -ENOENT);
	/* Before the first interval: nothing to start at. */
	snap.seq = 0;
	snap.timestamp = 0;
	snap.collected_ns = 0;
	history_record(h, &snap);
	assert_int_equal(history_at(h, 100, &s), -ENOENT);
	/* Intervals every 0.25 s from t = 1000: one kept a second. */
	for (double t = 1000; t <= 1010; t += 0.25)
		at(h, t);
	assert_int_equal(history_at(h, 1005.5, &s), 0);
	assert_true(s.mono == 1005);
	assert_true(s.host[TD_C_SLOTS] == 1005000);
	assert_int_equal(s.n_pkgs, 2);
	assert_int_equal(s.pkg_ids[1], 7);
	assert_true(s.pkgs[1][TD_C_SLOTS] == 10050);
	/* A window longer than the history: its oldest sample. */
	assert_int_equal(history_at(h, 10, &s), 0);
	assert_true(s.mono == 1000);
	/* The ring keeps the newest 900 samples. */
	for (double t = 1011; t < 3000; t += 1)
		at(h, t);
	assert_int_equal(history_at(h, 0, &s), 0);
	assert_true(s.mono == 3000 - 900);
	/* A new length drops what was kept. */
	history_set_length(h, 60 * S);
	assert_int_equal(history_at(h, 5000, &s), -ENOENT);
	at(h, 4000);
	at(h, 4000.05); /* within the step (60 s / 900): not kept */
	at(h, 4000.1);
	assert_int_equal(history_at(h, 4000.09, &s), 0);
	assert_true(s.mono == 4000);
	assert_int_equal(history_at(h, 4001, &s), 0);
	assert_true(s.mono == 4000.1);
	assert_true(history_bytes(h) > 900 * 3 * TD_C_COUNT * sizeof(double));
	history_free(h);
	history_free(NULL);
}

/* The series a page or the history API reads: every sample kept after a
 * time, with the one before (its steps end after that time). */
static void test_series(void **state)
{
	struct history_series *s = NULL;
	struct history *h;

	(void)state;
	snap.seq = 0;
	assert_int_equal(history_new(900 * S, 2, ~(td_catset)0, &h), 0);
	assert_int_equal(history_series(h, 0, snapshot_mono_s(&snap), snap.timestamp, &s), 0);
	assert_int_equal(s->n, 0);
	history_series_free(s);
	for (double t = 2000; t <= 2010; t += 0.5)
		at(h, t);
	/* One sample a second: 2000 .. 2010. */
	assert_int_equal(history_series(h, 0, snapshot_mono_s(&snap), snap.timestamp, &s), 0);
	assert_int_equal(s->n, 11);
	assert_int_equal(s->n_pkgs, 2);
	assert_int_equal(s->pkg_ids[1], 7);
	assert_true(s->step_s == 1.0);
	assert_true(s->ts[0] == 2000 && s->ts[10] == 2010);
	/* [sample][host, package 0, package 7][column] */
	assert_true(s->totals[(3 * 3 + 0) * TD_C_COUNT + TD_C_SLOTS] == 2003000);
	assert_true(s->totals[(3 * 3 + 2) * TD_C_COUNT + TD_C_SLOTS] == 20030);
	history_series_free(s);
	/* After 2007.5: 2007 (where the step to 2008 starts) and later. */
	assert_int_equal(history_series(h, 2007.5, snapshot_mono_s(&snap), snap.timestamp, &s), 0);
	assert_int_equal(s->n, 4);
	assert_true(s->ts[0] == 2007 && s->ts[3] == 2010);
	history_series_free(s);
	/* Nothing newer than the last: no sample, no step. */
	assert_int_equal(history_series(h, 2010, snapshot_mono_s(&snap), snap.timestamp, &s), 0);
	assert_int_equal(s->n, 0);
	history_series_free(s);
	history_series_free(NULL);
	history_free(h);
}

/* The wall clock stepped (NTP, date -s): a day forward, then an hour
 * back.  Samples stay a step apart on the monotonic clock, a window
 * starts where it should, and a series read now has times that only go
 * forward, in the frame of the wall clock now. */
static void test_wall_steps(void **state)
{
	struct history_series *s = NULL;
	struct history_sample at10;
	struct history *h;

	(void)state;
	snap.seq = 0;
	wall_offset = 1.7e9;
	assert_int_equal(history_new(900 * S, 2, ~(td_catset)0, &h), 0);
	for (double t = 5000; t <= 5030; t += 0.5) {
		if (t == 5010)
			wall_offset += 86400;
		if (t == 5020)
			wall_offset -= 3600;
		at(h, t);
	}
	/* One sample a second, 31 of them: no step dropped or doubled. */
	assert_int_equal(history_series(h, 0, snapshot_mono_s(&snap), snap.timestamp, &s), 0);
	assert_int_equal(s->n, 31);
	for (unsigned i = 1; i < s->n; i++)
		assert_true(s->ts[i] - s->ts[i - 1] > 0.999 && s->ts[i] - s->ts[i - 1] < 1.001);
	/* Each in the frame of now: the last is now's wall time. */
	assert_true(s->ts[s->n - 1] == snap.timestamp);
	assert_true(s->ts[0] == snap.timestamp - 30);
	history_series_free(s);
	/* "?window=10s" from 5030: the sample at 5020 (before the steps
	 * the wall clock said 86,404 s or -3,593.5 s). */
	assert_int_equal(history_at(h, snapshot_mono_s(&snap) - 10, &at10), 0);
	assert_true(at10.mono == 5020);
	assert_true(at10.host[TD_C_SLOTS] == 5020000);
	/* Since a time in this frame: the samples after it. */
	assert_int_equal(history_series(h, snap.timestamp - 2.5, snapshot_mono_s(&snap), snap.timestamp, &s), 0);
	assert_int_equal(s->n, 4);
	history_series_free(s);
	wall_offset = 0;
	history_free(h);
}

/* Only the collected categories' columns are kept; a change of them
 * starts the history over. */
static void test_categories(void **state)
{
	td_catset l1 = (1u << TD_CAT_RETIRING) | (1u << TD_CAT_BAD_SPECULATION) |
		       (1u << TD_CAT_FRONTEND_BOUND) | (1u << TD_CAT_BACKEND_BOUND);
	struct history *h, *all;
	struct history_sample s;

	(void)state;
	assert_int_equal(history_new(900 * S, 2, l1, &h), 0);
	assert_int_equal(history_new(900 * S, 2, ~(td_catset)0, &all), 0);
	/* 900 samples x 3 entities x (3 + 4) columns, against 3 + every category. */
	assert_true(history_bytes(h) < history_bytes(all));
	assert_true(history_bytes(h) >= 900 * 3 * 7 * sizeof(double));
	/* (and per sample its time, package ids and nodes' plan: 37 bytes) */
	assert_true(history_bytes(h) < 900 * 3 * 8 * sizeof(double) + 900 * 48);
	snap.seq = 0;
	snap.cats = l1;
	snap.host.total[TD_C_RUNNING] = 5;
	snap.host.total[TD_C_CAT + TD_CAT_BACKEND_BOUND] = 42;
	snap.host.total[TD_C_CAT + TD_CAT_MEMORY_BOUND] = 17; /* not collected */
	pkgs[1].c.total[TD_C_CAT + TD_CAT_RETIRING] = 3;
	at(h, 100);
	assert_int_equal(history_at(h, 100, &s), 0);
	assert_true(s.host[TD_C_SLOTS] == 100000 && s.host[TD_C_RUNNING] == 5);
	assert_true(s.host[TD_C_CAT + TD_CAT_BACKEND_BOUND] == 42);
	assert_true(s.host[TD_C_CAT + TD_CAT_MEMORY_BOUND] == 0);
	assert_true(s.pkgs[1][TD_C_CAT + TD_CAT_RETIRING] == 3);
	/* Level 2 from now on: the level-1 samples go. */
	snap.cats = l1 | (1u << TD_CAT_MEMORY_BOUND) | (1u << TD_CAT_CORE_BOUND);
	at(h, 101);
	assert_int_equal(history_at(h, 100, &s), 0);
	assert_true(s.mono == 101);
	assert_true(s.host[TD_C_CAT + TD_CAT_MEMORY_BOUND] == 17);
	assert_true(s.host[TD_C_CAT + TD_CAT_BACKEND_BOUND] == 42);
	snap.cats = 0;
	memset(&snap.host, 0, sizeof(snap.host));
	memset(&pkgs[1].c, 0, sizeof(pkgs[1].c));
	history_free(h);
	history_free(all);
}

/* Below level 2: each sample keeps the host's and the packages' node
 * totals and base slots, of the depth plan and layout they continue in;
 * samples without nodes have none, and a plan with another number of
 * nodes drops the nodes kept before it. */
static void test_nodes(void **state)
{
	double last[6], slots[6], ns[6], base[3];
	struct history_sample s;
	const double *n;
	struct history *h;
	size_t before;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(history_new(900 * S, 2, ~(td_catset)0, &h), 0);
	before = history_bytes(h);
	snap.seq = 0;
	at(h, 100);
	assert_int_equal(history_at(h, 100, &s), 0);
	assert_null(s.nodes);
	assert_null(history_sample_nodes(&s, -1));
	/* Two nodes in three rows: packages 0 and 7 (rows 0 and 1), the host
	 * (row 2), as snap_deep_row_* count them without CPUs or cores. */
	snap.n_deep = 1;
	snap.deep[0] = (struct snap_deep){ .n_nodes = 2, .gen = 3, .rows = 3, .last = last, .slots_total = slots,
					.measured_ns_total = ns, .row_slots_total = base };
	snap.layout = 9;
	for (unsigned r = 0; r < 3; r++) {
		slots[2 * r] = 10 * r + 1;
		slots[2 * r + 1] = 10 * r + 2;
		base[r] = 100 * (r + 1);
	}
	at(h, 101);
	assert_int_equal(history_at(h, 101, &s), 0);
	assert_non_null(s.nodes);
	assert_int_equal(s.n_nodes, 2);
	assert_true(s.deep_gen == 3 && s.layout == 9);
	n = history_sample_nodes(&s, -1);
	assert_true(n[0] == 21 && n[1] == 22 && n[2] == 300);
	n = history_sample_nodes(&s, 7);
	assert_true(n[0] == 11 && n[1] == 12 && n[2] == 200);
	n = history_sample_nodes(&s, 0);
	assert_true(n[0] == 1 && n[1] == 2 && n[2] == 100);
	assert_null(history_sample_nodes(&s, 5));
	history_sample_release(&s);
	assert_null(s.nodes);
	/* Resident once nodes are kept: 900 x 3 entities x 3. */
	assert_true(history_bytes(h) >= before + 900 * 3 * 3 * sizeof(double));
	/* The sample before the nodes still has none. */
	assert_int_equal(history_at(h, 100, &s), 0);
	assert_null(s.nodes);
	/* Three nodes (a reload to a deeper level): the earlier samples'
	 * nodes go, their counts stay. */
	snap.deep[0].n_nodes = 1;
	snap.deep[0].gen = 4;
	at(h, 102);
	assert_int_equal(history_at(h, 101, &s), 0);
	assert_null(s.nodes);
	assert_true(s.host[TD_C_SLOTS] == 101000);
	assert_int_equal(history_at(h, 102, &s), 0);
	assert_int_equal(s.n_nodes, 1);
	assert_true(s.deep_gen == 4);
	n = history_sample_nodes(&s, -1);
	assert_true(n[0] == 11 && n[1] == 300);
	history_sample_release(&s);
	history_sample_release(NULL);
	snap.deep[0] = (struct snap_deep){ .n_nodes = 0 };
	snap.layout = 0;
	history_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_start),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_wall_steps),
		cmocka_unit_test(test_categories),
		cmocka_unit_test(test_nodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
