/* SPDX-License-Identifier: MIT */
/* test_count.c: the fake PMU's counting model.  Tests named clk_* run with
 * FAKEPMU_CLOCK_FILE (time moves only when the test says so, so every count
 * is asserted exactly); tests named rt_* run on the real clock and assert
 * only quantities that do not depend on scheduling (bytes, ratios, ids).
 * The expected values come from the scenario file itself (t_scenario) and
 * an independent implementation of the quantisation (t_expect_bytes). */
#include <pthread.h>

#include "testlib.h"

static struct gread g_prev;

/* Expected bytes of one phase of a CPU. */
static void phase_bytes(const struct t_cpu *c, int p, unsigned bytes[8])
{
	t_expect_bytes(c->f[p], bytes);
}

/* Slots a group alone on its CPU counts over [a, b) since load: the slot
 * rate over the time it runs (the README's multiplexing rule). */
static uint64_t expect_slots_between(const struct t_cpu *c, double a, double b)
{
	return (uint64_t)floor(c->sps * (double)(t_running_ns(c->running, b) -
						 t_running_ns(c->running, a)) / 1e9);
}

static uint64_t expect_slots(const struct t_cpu *c, double seconds)
{
	return expect_slots_between(c, 0, seconds);
}

static void assert_near_u64(uint64_t got, uint64_t want, uint64_t tol)
{
	uint64_t d = got > want ? got - want : want - got;

	if (d > tol)
		fail_msg("got %llu, want %llu (+-%llu)", (unsigned long long)got,
			 (unsigned long long)want, (unsigned long long)tol);
}

/* Checks one interval of a slots + nm metrics group that was scheduled in
 * @periods times in it: each scheduling period starts the registers from
 * zero and ends with its own truncation (slots_i * byte / 255), so each
 * metric delta is slots_delta * byte / 255 truncated less at most
 * periods - 1, and the L1 deltas sum to the slots delta minus at most
 * 4 per period. */
static void assert_interval_n(const struct gread *a, const struct gread *b, int nm,
			      const unsigned bytes[8], uint64_t periods)
{
	uint64_t ds = b->val[0] - a->val[0], l1 = 0;

	for (int m = 0; m < nm; m++) {
		uint64_t dm = b->val[1 + m] - a->val[1 + m], want = t_scaled(ds, bytes[m]);

		if (dm > want || dm + (periods - 1) < want)
			fail_msg("metric %d: delta %llu, want %llu * %u / 255 = %llu (less at most %llu)", m,
				 (unsigned long long)dm, (unsigned long long)ds, bytes[m],
				 (unsigned long long)want, (unsigned long long)(periods - 1));
		if (m < 4)
			l1 += dm;
	}
	if (nm >= 4) {
		assert_true(l1 <= ds);
		assert_true(l1 + 4 * periods >= ds);
	}
}

static void assert_interval(const struct gread *a, const struct gread *b, int nm,
			    const unsigned bytes[8])
{
	assert_interval_n(a, b, nm, bytes, 1);
}

/* Scheduling periods in @seconds of 4 ms mux slices: at most one a slice. */
static uint64_t slices(double seconds)
{
	return (uint64_t)(seconds / 0.004) + 1;
}

/* ---- exact tests on the fake clock ---- */

static void clk_group_read(void **state)
{
	struct t_cpu c = t_scenario(0);
	struct gread g;
	unsigned bytes[8];
	int fds[MAXEV], n;
	uint64_t slots;

	(void)state;
	n = t_open_group(0, 8, 1, fds);
	t_clock(0.1);
	t_read_group(fds[0], &g);
	assert_int_equal(g.nr, 11);
	for (int i = 0; i < n; i++)
		assert_int_equal(g.id[i], t_id(fds[i]));
	assert_int_equal(g.enabled, 100000000);
	assert_int_equal(g.running, 100000000);
	slots = g.val[0];
	assert_near_u64(slots, expect_slots(&c, 0.1), 1);
	phase_bytes(&c, 0, bytes);
	memset(&g_prev, 0, sizeof(g_prev));
	assert_interval(&g_prev, &g, 8, bytes);
	assert_near_u64(g.val[9], (uint64_t)(c.f[0][8] * (double)slots), 1);
	assert_near_u64(g.val[10], (uint64_t)(c.f[0][9] * (double)slots), 1);
	t_close_all(fds, n);
}

/* Every read folds and zeroes SLOTS/PERF_METRICS: each interval carries
 * the bytes of its own period only, including right after a period that
 * straddled a phase change. */
static void clk_reset_on_read(void **state)
{
	static const double at[] = {0.1, 0.2, 0.5, 0.9, 1.1, 1.3, 1.7};
	struct t_cpu c = t_scenario(0);
	struct gread prev, g;
	int fds[MAXEV], n;
	double t_prev = 0;

	(void)state;
	assert_int_equal(c.nphases, 2);
	assert_true(c.seconds[0] == 1.0);
	n = t_open_group(0, 8, 1, fds);
	memset(&prev, 0, sizeof(prev));
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		unsigned bytes[8];
		double f[10];

		t_clock(at[i]);
		t_read_group(fds[0], &g);
		/* Slot-weighted mean of the phases over [t_prev, at[i]). */
		for (int k = 0; k < 10; k++) {
			double a = t_prev < 1.0 ? (at[i] < 1.0 ? at[i] : 1.0) - t_prev : 0;
			double b = at[i] > 1.0 ? at[i] - (t_prev > 1.0 ? t_prev : 1.0) : 0;

			f[k] = (a * c.f[0][k] + b * c.f[1][k]) / (a + b);
			if (a == 0 || b == 0)
				f[k] = a ? c.f[0][k] : c.f[1][k];
		}
		t_expect_bytes(f, bytes);
		assert_near_u64(g.val[0] - prev.val[0], expect_slots(&c, at[i] - t_prev), 1);
		assert_interval(&prev, &g, 8, bytes);
		assert_int_equal(g.enabled, (uint64_t)llround(at[i] * 1e9));
		prev = g;
		t_prev = at[i];
	}
	t_close_all(fds, n);
}

/* Per-CPU keys override "default" and inherit what they omit. */
static void clk_per_cpu_keys(void **state)
{
	static const int cpus[] = {1, 3, 9, 15};
	int fds[4][MAXEV], n = 0;

	(void)state;
	for (int i = 0; i < 4; i++)
		n = t_open_group(cpus[i], 8, 0, fds[i]);
	t_clock(0.2);
	for (int i = 0; i < 4; i++) {
		struct t_cpu c = t_scenario(cpus[i]);
		unsigned bytes[8];
		struct gread g, zero;

		memset(&zero, 0, sizeof(zero));
		t_read_group(fds[i][0], &g);
		phase_bytes(&c, 0, bytes);
		assert_near_u64(g.val[0], expect_slots(&c, 0.2), 1);
		assert_int_equal(g.enabled, 200000000);
		assert_int_equal(g.running, t_running_ns(c.running, 0.2));
		assert_interval_n(&zero, &g, 8, bytes, c.running < 1 ? slices(0.2) : 1);
		if (cpus[i] == 1) {
			/* 0.3/0.3/0.3/0.1: all remainders .5, ties go to the lower
			 * metric; L2 0.3 and 0.1 round up and are clamped to the
			 * parents 76 and 25. */
			static const unsigned want[8] = {77, 77, 76, 25, 0, 0, 76, 25};

			assert_memory_equal(bytes, want, sizeof(want));
		}
		t_close_all(fds[i], n);
	}
}

/* running 0.5: the counters are taken away in every other 4 ms mux slice
 * (slices 1, 3, 5...).  Each schedule-out folds the registers into the
 * counts and each schedule-in starts them from zero
 * (icl_set_topdown_event_period: a counting event's period_left is always
 * max_period): every scheduling period is its own measurement, truncated
 * on its own.  A read while scheduled out reports what the group had at
 * schedule-out; enabled time goes on. */
static void clk_multiplex(void **state)
{
	struct t_cpu c = t_scenario(2);
	struct gread g, h, zero;
	unsigned bytes[8];
	int fds[MAXEV], n;

	(void)state;
	assert_true(c.running == 0.5);
	memset(&zero, 0, sizeof(zero));
	phase_bytes(&c, 0, bytes);
	n = t_open_group(2, 8, 0, fds);
	/* 0.1 s = slices 0..24, 13 of them free; slice 25 is taken. */
	t_clock(0.1);
	t_read_group(fds[0], &g);
	assert_int_equal(g.enabled, 100000000);
	assert_int_equal(g.running, 52000000);
	assert_near_u64(g.val[0], expect_slots(&c, 0.1), 1);
	assert_interval_n(&zero, &g, 8, bytes, slices(0.1));
	/* Still scheduled out at 0.103: the same counts, more enabled time. */
	t_clock(0.103);
	t_read_group(fds[0], &h);
	assert_int_equal(h.enabled, 103000000);
	assert_int_equal(h.running, 52000000);
	assert_memory_equal(h.val, g.val, sizeof(g.val));
	/* Back in slice 26 from zero, then a read resets the registers (the
	 * next interval starts from zero too). */
	t_clock(0.106);
	t_read_group(fds[0], &g);
	assert_int_equal(g.running, 54000000);
	assert_near_u64(g.val[0], expect_slots(&c, 0.106), 1);
	assert_interval_n(&zero, &g, 8, bytes, slices(0.106));
	t_clock(0.2);
	t_read_group(fds[0], &h);
	assert_int_equal(h.running, t_running_ns(0.5, 0.2));
	assert_interval_n(&g, &h, 8, bytes, slices(0.1));
	t_close_all(fds, n);
}

/* Groups that need fixed counter 3 take turns (perf_rotate_context): at
 * every 4 ms tick where a flexible group was left out, the first group of
 * the list goes to its end; groups are placed in list order until one
 * does not fit, and then no further group is tried (merge_sched_in's
 * can_add_hw).  On CPU 4, list [a, b, cyc] (two slots groups and a cycles
 * event):
 *   slice 3k:   [a, b, cyc]  a in, b does not fit, cyc not tried
 *   slice 3k+1: [b, cyc, a]  b, cyc in, a does not fit
 *   slice 3k+2: [cyc, a, b]  cyc, a in, b does not fit
 * so over slices 0..24 a runs 17 slices (68 ms), b 8 (32 ms), cyc 16
 * (64 ms).  Disabled, b leaves room: a and cyc run all the time.  Enabled
 * again at slice 50 with the list [b, cyc, a], the cycle restarts there. */
static void clk_fixed_counter_sharing(void **state)
{
	struct t_cpu c = t_scenario(4);
	int a[MAXEV], b[MAXEV], na, nb, cyc;
	struct gread ga, gb, gc;
	unsigned bytes[8];

	(void)state;
	phase_bytes(&c, 0, bytes);
	na = t_open_group(4, 4, 0, a);
	nb = t_open_group(4, 4, 0, b);
	cyc = t_open(PERF_TYPE_RAW, CYCLES_RAW, 4, -1);
	assert_true(cyc >= 0);
	t_clock(0.1);
	t_read_group(a[0], &ga);
	t_read_group(b[0], &gb);
	t_read_group(cyc, &gc);
	assert_int_equal(ga.running, 68000000);
	assert_int_equal(gb.running, 32000000);
	assert_int_equal(gc.running, 64000000);
	assert_int_equal(ga.enabled, 100000000);
	assert_near_u64(ga.val[0], (uint64_t)(c.sps * 0.068), 1);
	assert_near_u64(gb.val[0], (uint64_t)(c.sps * 0.032), 1);
	assert_int_equal(ioctl(b[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
	t_clock(0.2);
	t_read_group(a[0], &ga);
	t_read_group(b[0], &gb);
	assert_int_equal(ga.running, 168000000);
	assert_int_equal(gb.enabled, 100000000);
	assert_int_equal(gb.running, 32000000);
	assert_int_equal(ioctl(b[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	t_clock(0.3);
	t_read_group(a[0], &ga);
	t_read_group(b[0], &gb);
	t_read_group(cyc, &gc);
	assert_int_equal(ga.running, 232000000);
	assert_int_equal(gb.running, 68000000);
	assert_int_equal(gc.running, 232000000);
	/* Cycles are not in the scenario: counted as 0. */
	assert_int_equal(gc.val[0], 0);
	close(cyc);
	t_close_all(b, nb);
	t_close_all(a, na);
}

/* A disabled group never takes a turn: the rotation moves the first
 * active flexible group (ctx_event_to_rotate(): flexible_active's first,
 * kernel/events/core.c), not the list's first.  On CPU 4, list [a, d, b]
 * (d disabled; a and b both need fixed counter 3): a and b alternate,
 * slice by slice, a in slices 0, 2, ..., 24 of 0.1 s (13 slices, 52 ms),
 * b in the 12 others (48 ms); rotating the list's first (d) would give b
 * two slices in three.  Opened disabled and never enabled, d counts
 * nothing. */
static void clk_rotate_active_only(void **state)
{
	struct perf_event_attr at;
	int a[MAXEV], b[MAXEV], na, nb, d;
	struct gread ga, gb, gd;

	(void)state;
	na = t_open_group(4, 4, 0, a);
	t_attr(&at, PERF_TYPE_RAW, SLOTS, RF_ALL);
	at.disabled = 1;
	d = t_open_attr(&at, 4, -1);
	assert_true(d >= 0);
	nb = t_open_group(4, 4, 0, b);
	t_clock(0.1);
	t_read_group(a[0], &ga);
	t_read_group(b[0], &gb);
	t_read_group(d, &gd);
	assert_int_equal(ga.running, 52000000);
	assert_int_equal(gb.running, 48000000);
	assert_int_equal(gd.enabled, 0);
	assert_int_equal(gd.running, 0);
	close(d);
	t_close_all(b, nb);
	t_close_all(a, na);
}

/* The kernel adds to a metric event value(now) - value(saved) only when
 * that is positive (__icl_update_topdown_event).  CPU 14 spends its first
 * 0.1 s with bad_speculation at exactly 1/255 (byte 1), then 0.  Disabled
 * and enabled at 0.1 (schedule-out saves SLOTS and the byte 1, schedule-in
 * writes them back), then read at 1.1: bad speculation's fraction of the
 * registers is now 1/(11*255), byte 0, value 0 < the saved value: it keeps
 * what it had, while slots and the other metrics go on. */
static void clk_positive_only(void **state)
{
	struct t_cpu c = t_scenario(14);
	struct gread g, h;
	int fds[MAXEV], n;

	(void)state;
	assert_int_equal(c.nphases, 2);
	n = t_open_group(14, 4, 0, fds);
	t_clock(0.1);
	assert_int_equal(ioctl(fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
	assert_int_equal(ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	t_read_group(fds[0], &g);
	assert_near_u64(g.val[0], (uint64_t)(c.sps * 0.1), 1);
	assert_int_equal(g.val[2], t_scaled(g.val[0], 1));	/* bad_spec: byte 1 */
	t_clock(1.1);
	t_read_group(fds[0], &h);
	assert_near_u64(h.val[0], (uint64_t)(c.sps * 1.1), 1);
	assert_int_equal(h.val[2], g.val[2]);	/* not decreased, not wrapped */
	assert_true(h.val[1] > g.val[1]);
	/* The registers were reset by the read: phase 2 alone from now on. */
	t_clock(1.2);
	t_read_group(fds[0], &g);
	assert_int_equal(g.val[2], h.val[2]);
	t_close_all(fds, n);
}

static void clk_ioc_reset(void **state)
{
	struct t_cpu c = t_scenario(5);
	struct gread g, h, zero;
	unsigned bytes[8];
	int fds[MAXEV], n;

	(void)state;
	memset(&zero, 0, sizeof(zero));
	phase_bytes(&c, 0, bytes);
	n = t_open_group(5, 8, 1, fds);
	t_clock(0.1);
	t_read_group(fds[0], &g);
	assert_true(g.val[0] > 0);
	assert_int_equal(ioctl(fds[3], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP), 0);
	t_read_group(fds[0], &h);
	for (int i = 0; i < n; i++)
		assert_int_equal(h.val[i], 0);
	assert_int_equal(h.enabled, 100000000);	/* times are not reset */
	assert_int_equal(h.running, 100000000);
	t_clock(0.2);
	t_read_group(fds[0], &g);
	assert_near_u64(g.val[0], expect_slots(&c, 0.1), 1);
	assert_interval(&zero, &g, 8, bytes);
	/* Resetting one event folds the pending hardware first, then zeroes
	 * that event only. */
	t_clock(0.3);
	assert_int_equal(ioctl(fds[1], PERF_EVENT_IOC_RESET, 0), 0);
	t_read_group(fds[0], &h);
	assert_int_equal(h.val[1], 0);
	assert_near_u64(h.val[0], expect_slots(&c, 0.2), 1);
	assert_int_equal(h.val[2] - g.val[2], t_scaled(h.val[0] - g.val[0], bytes[1]));
	t_close_all(fds, n);
}

static void clk_ioc_disable_enable(void **state)
{
	struct t_cpu c = t_scenario(6);
	struct gread g, h, zero;
	unsigned bytes[8];
	int fds[MAXEV], n;

	(void)state;
	memset(&zero, 0, sizeof(zero));
	phase_bytes(&c, 0, bytes);
	n = t_open_group(6, 8, 1, fds);
	t_clock(0.1);
	assert_int_equal(ioctl(fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
	t_read_group(fds[0], &g);
	assert_near_u64(g.val[0], expect_slots(&c, 0.1), 1);
	assert_interval(&zero, &g, 8, bytes);	/* disable updated the counts */
	t_clock(0.3);
	t_read_group(fds[0], &h);
	assert_memory_equal(&g, &h, sizeof(g));	/* nothing moves while disabled */
	assert_int_equal(ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	t_clock(0.4);
	t_read_group(fds[0], &h);
	assert_int_equal(h.enabled, 200000000);
	assert_near_u64(h.val[0] - g.val[0], expect_slots(&c, 0.1), 1);
	/* Disable folded the registers into the counts, enable started them
	 * from zero: two periods, each truncated. */
	assert_interval_n(&zero, &h, 8, bytes, 2);
	t_close_all(fds, n);
}

/* attr.disabled: nothing counts until PERF_EVENT_IOC_ENABLE; enabling the
 * leader alone starts the members opened enabled, not the disabled one. */
static void clk_start_disabled(void **state)
{
	struct t_cpu c = t_scenario(7);
	struct perf_event_attr a;
	struct gread g;
	int s, m0, m1;

	(void)state;
	t_attr(&a, PERF_TYPE_RAW, SLOTS, RF_ALL);
	a.disabled = 1;
	s = t_open_attr(&a, 7, -1);
	m0 = t_open(PERF_TYPE_RAW, METRIC(0), 7, s);
	t_attr(&a, PERF_TYPE_RAW, METRIC(1), RF_ALL);
	a.disabled = 1;
	m1 = t_open_attr(&a, 7, s);
	assert_true(s >= 0 && m0 >= 0 && m1 >= 0);
	t_clock(0.1);
	t_read_group(s, &g);
	assert_int_equal(g.nr, 3);
	assert_int_equal(g.enabled, 0);
	assert_int_equal(g.running, 0);
	assert_int_equal(g.val[0] + g.val[1] + g.val[2], 0);
	assert_int_equal(ioctl(s, PERF_EVENT_IOC_ENABLE, 0), 0);
	t_clock(0.2);
	t_read_group(s, &g);
	assert_int_equal(g.enabled, 100000000);
	assert_near_u64(g.val[0], expect_slots(&c, 0.1), 1);
	assert_true(g.val[1] > 0);
	assert_int_equal(g.val[2], 0);
	assert_int_equal(ioctl(m1, PERF_EVENT_IOC_ENABLE, 0), 0);
	t_clock(0.3);
	t_read_group(s, &g);
	assert_true(g.val[2] > 0);
	close(m1);
	close(m0);
	close(s);
}

/* UOP_DROPPING and RECOVERY_CYCLES(cmask=1,edge) count fraction x slots
 * with the encodings of the fixture's own perf table; any other encoding
 * of them (Ice Lake's event 0x0d on this Sapphire Rapids fixture, other
 * filter bits), or any event the scenario gives no rate, counts 0. */
static void clk_refinement_events(void **state)
{
	static const uint64_t zero_configs[] = {
		ICL_UOP_DROPPING,			/* Ice Lake's INT_MISC.UOP_DROPPING */
		0x01adULL,				/* RECOVERY_CYCLES, no cmask/edge */
		0x01adULL | F_CMASK1,			/* no edge */
		0x01adULL | F_EDGE,			/* no cmask */
		RECOVERY_CYCLES | F_INV,
		UOP_DROPPING | F_CMASK1,
		UOP_DROPPING | F_EDGE,
		CYCLES_RAW, 0x00c0ULL, 0x0300ULL,
	};
	enum { NZ = sizeof(zero_configs) / sizeof(zero_configs[0]) };
	struct t_cpu c = t_scenario(12);
	int fds[MAXEV], z[NZ + 1], n;
	struct gread g, h, q;
	double ud = 0, rc = 0;

	(void)state;
	n = t_open_group(12, 8, 1, fds);
	/* One group could not hold them all (8 general-purpose counters):
	 * each on its own. */
	for (int i = 0; i < NZ; i++) {
		z[i] = t_open(PERF_TYPE_RAW, zero_configs[i], 12, -1);
		assert_true(z[i] >= 0);
	}
	z[NZ] = t_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 12, -1);
	assert_true(z[NZ] >= 0);
	t_clock(0.7);
	t_read_group(fds[0], &g);
	assert_int_equal(g.nr, (uint64_t)n);
	assert_near_u64(g.val[9], (uint64_t)(c.f[0][8] * (double)g.val[0]), 1);
	assert_near_u64(g.val[10], (uint64_t)(c.f[0][9] * (double)g.val[0]), 1);
	for (int i = 0; i <= NZ; i++) {
		t_read_group(z[i], &q);
		assert_int_equal(q.nr, 1);
		assert_true(q.running > 0);
		assert_int_equal(q.val[0], 0);
		close(z[i]);
	}
	/* Across the phase change the counts integrate piecewise (the group
	 * alone now, never scheduled out). */
	t_clock(1.5);
	t_read_group(fds[0], &h);
	ud = c.f[0][8] * c.sps * 0.3 + c.f[1][8] * c.sps * 0.5;
	rc = c.f[0][9] * c.sps * 0.3 + c.f[1][9] * c.sps * 0.5;
	assert_near_u64(h.val[9] - g.val[9], (uint64_t)ud, 2);
	assert_near_u64(h.val[10] - g.val[10], (uint64_t)rc, 2);
	assert_int_equal(h.running - g.running, 800000000);
	t_close_all(fds, n);
}

/* General-purpose events count the scenario's rate (events per slot) of
 * the event perf's table names for their encoding: BR_MISP_RETIRED.ALL_BRANCHES
 * is 0xc5 and MACHINE_CLEARS.COUNT 0xc3/0x01 with CounterMask 1 and
 * EdgeDetect on Sapphire Rapids (x86/sapphirerapids/pipeline.json);
 * INST_RETIRED.ANY (0xc0, as perf's jevents encodes it) has no rate: 0. */
static void clk_table_events(void **state)
{
	struct t_cpu c = t_scenario(0);
	double br = t_event_rate(0, 0, "BR_MISP_RETIRED.ALL_BRANCHES");
	double mc = t_event_rate(0, 0, "MACHINE_CLEARS.COUNT");
	int fds[4];
	struct gread g;

	(void)state;
	assert_true(br > 0 && mc > 0);
	fds[0] = t_open(PERF_TYPE_RAW, SLOTS, 0, -1);
	fds[1] = t_open(PERF_TYPE_RAW, 0x00c5ULL, 0, fds[0]);
	fds[2] = t_open(PERF_TYPE_RAW, 0x01c3ULL | F_CMASK1 | F_EDGE, 0, fds[0]);
	fds[3] = t_open(PERF_TYPE_RAW, 0x00c0ULL, 0, fds[0]);
	for (int i = 0; i < 4; i++)
		assert_true(fds[i] >= 0);
	t_clock(0.1);
	t_read_group(fds[0], &g);
	assert_near_u64(g.val[0], expect_slots(&c, 0.1), 1);
	assert_near_u64(g.val[1], (uint64_t)(br * (double)g.val[0]), 1);
	assert_near_u64(g.val[2], (uint64_t)(mc * (double)g.val[0]), 1);
	assert_int_equal(g.val[3], 0);
	t_close_all(fds, 4);
}

/* A hybrid part's two tables name one encoding differently: perf encodes
 * CPU_CLK_UNHALTED.THREAD and .CORE as 0x3c (jevents.py real_event()), and
 * Alder Lake's cpu_atom table lists CORE first, cpu_core's THREAD
 * (x86/alderlake/pipeline.json).  The scenario's CPU_CLK_UNHALTED.THREAD
 * counts on both PMUs (it counted only on cpu_atom, the first to know the
 * name, and cpu_core's cycles read 0). */
static void clk_hybrid_table_names(void **state)
{
	struct t_cpu c = t_scenario(0), a = t_scenario(8);
	double thr = t_event_rate(0, 0, "CPU_CLK_UNHALTED.THREAD");
	uint32_t atom = t_pmu_type("cpu_atom");
	const struct {
		uint32_t type;
		int cpu;
		const struct t_cpu *c;
	} ev[] = {
		{ PERF_TYPE_RAW, 0, &c },
		{ atom, 8, &a },
	};
	int fds[2];

	(void)state;
	assert_true(thr > 0 && c.sps != a.sps);
	assert_true(atom != PERF_TYPE_RAW);
	for (int i = 0; i < 2; i++) {
		fds[i] = t_open(ev[i].type, CYCLES_RAW, ev[i].cpu, -1);
		assert_true(fds[i] >= 0);
	}
	t_clock(0.1);
	for (int i = 0; i < 2; i++) {
		struct gread g;

		t_read_group(fds[i], &g);
		assert_int_equal(g.nr, 1);
		assert_true(g.val[0] > 0);
		assert_near_u64(g.val[0], (uint64_t)(thr * (double)expect_slots(ev[i].c, 0.1)), 1);
	}
	t_close_all(fds, 2);
}

/* cpu-clock and task-clock count nanoseconds while they run; a software
 * event in a hardware group runs with the group, a software-only group is
 * never taken off (CPU 2 loses every other slice to the scenario's
 * outside user). */
static void clk_software_events(void **state)
{
	int s, g0, m, t;
	struct gread a, b, d;

	(void)state;
	s = t_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 2, -1);
	t = t_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 2, -1);
	g0 = t_open(PERF_TYPE_RAW, SLOTS, 2, -1);
	m = t_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 2, g0);
	assert_true(s >= 0 && t >= 0 && g0 >= 0 && m >= 0);
	t_clock(0.1);
	t_read_group(s, &a);
	assert_int_equal(a.enabled, 100000000);
	assert_int_equal(a.running, 100000000);
	assert_int_equal(a.val[0], 100000000);
	t_read_group(t, &d);
	assert_int_equal(d.val[0], 100000000);
	t_read_group(g0, &b);
	assert_int_equal(b.nr, 2);
	assert_int_equal(b.running, t_running_ns(0.5, 0.1));
	assert_int_equal(b.val[1], t_running_ns(0.5, 0.1));
	close(m);
	close(g0);
	close(t);
	close(s);
}

/* A core's thread activity ("smt" in 00-fakepmu.t's smt.json: CPUs 0 and 8
 * are one core of spr-2s; 0.1 s with both threads 0.5, CPU 0 alone 0.2,
 * CPU 8 alone 0.1, then both 0.25 and CPU 8 alone 0.5; TSC 2 GHz, crystal
 * 25 MHz): each thread's reference clocks as the SDM defines them, the
 * TSC of msr/tsc/ in the same group, and the McCalpin split recovered. */
static void clk_smt_activity(void **state)
{
	static const int cpus[2] = { 0, 8 };
	/* REF_TSC, ONE_THREAD_ACTIVE, REF_DISTRIBUTED, msr/tsc per CPU. */
	static const double want[2][4] = {
		{ 2e9 * (0.1 * 0.7 + 0.1 * 0.25), 2.5e7 * 0.1 * 0.2,
		  2.5e7 * (0.1 * (0.2 + 0.25) + 0.1 * 0.125), 2e9 * 0.2 },
		{ 2e9 * (0.1 * 0.6 + 0.1 * 0.75), 2.5e7 * (0.1 * 0.1 + 0.1 * 0.5),
		  2.5e7 * (0.1 * (0.1 + 0.25) + 0.1 * (0.5 + 0.125)), 2e9 * 0.2 },
	};
	int fds[2][4];
	struct gread g[2];
	double dist = 0, one = 0;

	(void)state;
	for (int k = 0; k < 2; k++) {
		fds[k][0] = t_open(PERF_TYPE_RAW, 0x0300, cpus[k], -1);
		fds[k][1] = t_open(PERF_TYPE_RAW, 0x023c, cpus[k], fds[k][0]);
		fds[k][2] = t_open(PERF_TYPE_RAW, 0x083c, cpus[k], fds[k][0]);
		fds[k][3] = t_open(t_pmu_type("msr"), 0, cpus[k], fds[k][0]);
		for (int i = 0; i < 4; i++)
			assert_true(fds[k][i] >= 0);
	}
	t_clock(0.2);
	for (int k = 0; k < 2; k++) {
		t_read_group(fds[k][0], &g[k]);
		assert_int_equal(g[k].nr, 4);
		assert_int_equal(g[k].running, g[k].enabled);
		for (int i = 0; i < 4; i++)
			assert_near_u64(g[k].val[i], (uint64_t)want[k][i], 1);
		one += (double)g[k].val[1];
		dist += (double)g[k].val[2];
	}
	/* perf's tma_info_system_smt_2t_utilization on the core's sums:
	 * the share of the time any thread ran that both did, 0.075 of
	 * 0.155 s (within a count of each). */
	assert_true(fabs((1 - one / dist) - 0.075 / 0.155) < 1e-5);
	for (int k = 0; k < 2; k++)
		t_close_all(fds[k], 4);
}

/* read() layouts: non-group reads, GROUP through a member, optional
 * fields, PERF_FORMAT_LOST, ENOSPC. */
static void clk_read_formats(void **state)
{
	struct perf_event_attr a;
	uint64_t buf[64];
	struct gread g;
	int s, m, u, x;

	(void)state;
	t_attr(&a, PERF_TYPE_RAW, SLOTS, PERF_FORMAT_TOTAL_TIME_ENABLED |
	       PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID);
	s = t_open_attr(&a, 13, -1);
	t_attr(&a, PERF_TYPE_RAW, METRIC(0), PERF_FORMAT_ID);
	m = t_open_attr(&a, 13, s);
	u = t_open(PERF_TYPE_RAW, UOP_DROPPING, 13, s);		/* RF_ALL */
	t_attr(&a, PERF_TYPE_RAW, CYCLES_RAW, PERF_FORMAT_GROUP | PERF_FORMAT_LOST);
	x = t_open_attr(&a, 13, s);
	assert_true(s >= 0 && m >= 0 && u >= 0 && x >= 0);
	t_clock(0.1);
	/* leader, no GROUP: {value, enabled, running, id} */
	assert_int_equal(read(s, buf, sizeof(buf)), 32);
	assert_true(buf[0] > 0);
	assert_int_equal(buf[1], 100000000);
	assert_int_equal(buf[2], 100000000);
	assert_int_equal(buf[3], t_id(s));
	/* member, no GROUP: {value, id} */
	assert_int_equal(read(m, buf, sizeof(buf)), 16);
	assert_true(buf[0] > 0);
	assert_int_equal(buf[1], t_id(m));
	/* GROUP through a member reads the leader's group */
	t_read_group(u, &g);
	assert_int_equal(g.nr, 4);
	assert_int_equal(g.id[0], t_id(s));
	assert_int_equal(g.id[3], t_id(x));
	/* GROUP|LOST: {nr, {value, lost} x nr} */
	assert_int_equal(read(x, buf, sizeof(buf)), 8 * (1 + 2 * 4));
	assert_int_equal(buf[0], 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(buf[2 + 2 * i], 0);
	/* ENOSPC below the record size, exact size fine. */
	assert_int_equal(read(u, buf, 8 * (3 + 2 * 4) - 1), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(read(u, buf, 8 * (3 + 2 * 4)), 8 * (3 + 2 * 4));
	assert_int_equal(read(s, buf, 31), -1);
	assert_int_equal(errno, ENOSPC);
	close(x);
	close(u);
	close(m);
	close(s);
}

/* Closing the leader: metric members go to ERROR (read returns 0, as for a
 * kernel event in ERROR state); other members become singletons and go on
 * counting.  Closing a member just shrinks the group. */
static void clk_close_leader(void **state)
{
	struct t_cpu c = t_scenario(13);
	int fds[MAXEV], n;
	uint64_t buf[64];
	struct gread g, h;

	(void)state;
	n = t_open_group(13, 8, 1, fds);
	assert_int_equal(n, 11);
	t_clock(0.1);
	assert_int_equal(close(fds[10]), 0);	/* RECOVERY_CYCLES */
	t_read_group(fds[0], &g);
	assert_int_equal(g.nr, 10);
	assert_int_equal(close(fds[0]), 0);
	assert_int_equal(read(fds[1], buf, sizeof(buf)), 0);
	assert_int_equal(ioctl(fds[1], PERF_EVENT_IOC_ENABLE, 0), 0);
	assert_int_equal(read(fds[1], buf, sizeof(buf)), 0);
	t_read_group(fds[9], &g);
	assert_int_equal(g.nr, 1);
	t_clock(0.3);
	t_read_group(fds[9], &h);
	assert_int_equal(h.nr, 1);
	assert_int_equal(h.enabled, 300000000);
	assert_near_u64(h.val[0] - g.val[0], (uint64_t)(c.f[0][8] * c.sps * 0.2), 2);
	for (int i = 1; i < 10; i++)
		assert_int_equal(close(fds[i]), 0);
}

/* ---- real-clock tests ---- */

static void rt_group_read(void **state)
{
	struct t_cpu c = t_scenario(0);
	struct gread g0, g1, g2;
	unsigned bytes[8];
	int fds[MAXEV], n;

	(void)state;
	phase_bytes(&c, 0, bytes);
	memset(&g0, 0, sizeof(g0));
	n = t_open_group(0, 8, 0, fds);
	t_sleep(0.08);
	t_read_group(fds[0], &g1);
	assert_int_equal(g1.nr, 9);
	for (int i = 0; i < n; i++)
		assert_int_equal(g1.id[i], t_id(fds[i]));
	assert_int_equal(g1.running, g1.enabled);
	assert_true(g1.enabled >= 80000000);
	assert_true(fabs((double)g1.val[0] / ((double)g1.running / 1e9) / c.sps - 1) < 0.01);
	assert_interval(&g0, &g1, 8, bytes);
	t_sleep(0.05);
	t_read_group(fds[0], &g2);
	assert_interval(&g1, &g2, 8, bytes);
	assert_true(fabs((double)(g2.val[0] - g1.val[0]) /
			 ((double)(g2.running - g1.running) / 1e9) / c.sps - 1) < 0.01);
	t_close_all(fds, n);
}

static void rt_multiplex(void **state)
{
	struct t_cpu c = t_scenario(2);
	struct gread g;
	int fds[MAXEV], n;

	(void)state;
	n = t_open_group(2, 8, 0, fds);
	t_sleep(0.2);
	t_read_group(fds[0], &g);
	/* Whole 4 ms slices: within one slice of half the enabled time. */
	assert_true(fabs((double)g.running - 0.5 * (double)g.enabled) <= 4e6 + 1);
	assert_true(fabs((double)g.val[0] / (c.sps * (double)g.running / 1e9) - 1) < 0.01);
	t_close_all(fds, n);
}

/* CPU 5's first phase is 1.5 s: reads before and after the switch carry
 * each phase's bytes. */
static void rt_phases(void **state)
{
	struct t_cpu c = t_scenario(5);
	double t0 = t_mono();
	struct gread g0, g1, g2, g3;
	unsigned a[8], b[8];
	int fds[MAXEV], n;

	(void)state;
	assert_int_equal(c.nphases, 2);
	phase_bytes(&c, 0, a);
	phase_bytes(&c, 1, b);
	memset(&g0, 0, sizeof(g0));
	n = t_open_group(5, 8, 0, fds);
	t_sleep(0.05);
	t_read_group(fds[0], &g1);
	/* The fake's clock starts at its load, before t0: 0.1 s of the first
	 * phase is left for that.  A read 1.35 s late is a stalled machine,
	 * not a loaded one; the switch itself is checked to the nanosecond on
	 * the test's clock (clk_reset_on_read). */
	if (t_mono() - t0 >= c.seconds[0] - 0.1)
		fail_msg("the first read came %.2f s after the start, past the first phase's %.2f s",
			 t_mono() - t0, c.seconds[0] - 0.1);
	assert_interval(&g0, &g1, 8, a);
	t_sleep(c.seconds[0] + 0.1 - (t_mono() - t0));
	t_read_group(fds[0], &g2);	/* straddles the switch */
	t_sleep(0.05);
	t_read_group(fds[0], &g3);
	assert_interval(&g2, &g3, 8, b);
	t_close_all(fds, n);
}

struct pipe_job {
	int rfd, wfd;
	int ok;
};

static void *pipe_worker(void *arg)
{
	struct pipe_job *j = arg;

	j->ok = 1;
	for (int i = 0; i < 20000; i++) {
		uint32_t v = (uint32_t)i, r = 0;

		if (write(j->wfd, &v, sizeof(v)) != sizeof(v) ||
		    read(j->rfd, &r, sizeof(r)) != sizeof(r) || r != v) {
			j->ok = 0;
			break;
		}
	}
	return NULL;
}

/* Another thread's ordinary I/O goes through the interposers untouched
 * while fake fds are read; also reports the cost of a 10-event read. */
static void rt_threads_and_cost(void **state)
{
	struct pipe_job job;
	pthread_t th;
	int p[2], fds[MAXEV], n;
	struct gread g;
	double t0, per;

	(void)state;
	assert_int_equal(pipe(p), 0);
	job.rfd = p[0];
	job.wfd = p[1];
	n = t_open_group(0, 8, 1, fds);
	assert_int_equal(n, 10 + 1);
	close(fds[--n]);	/* the daemon's SPR group: 10 events */
	assert_int_equal(pthread_create(&th, NULL, pipe_worker, &job), 0);
	t0 = t_mono();
	for (int i = 0; i < 20000; i++)
		t_read_group(fds[0], &g);
	per = (t_mono() - t0) / 20000 * 1e6;
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(job.ok);
	assert_int_equal(g.nr, 10);
	/* Reported, not asserted: timing is make bench's business. */
	print_message("# 10-event group read: %.2f us each (with a concurrent pipe thread)\n", per);
	t_close_all(fds, n);
	close(p[0]);
	close(p[1]);
}

/* FAKEPMU_CLOCK_STEP=0.25: the time moves only at reads, an event's
 * (a group's leader's) nth read seeing n steps, whatever the real clock
 * does between them; another event's first read later does not move it
 * back or on. */
static void step_paced_reads(void **state)
{
	struct t_cpu c = t_scenario(0);
	struct gread g1, g2, g3, s;
	int fds[MAXEV], n, sw;

	(void)state;
	n = t_open_group(0, 4, 0, fds);
	sw = t_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1, -1);
	assert_true(sw >= 0);
	t_read_group(fds[0], &g1);
	t_sleep(0.05);	/* real time passes: the fake's does not */
	t_read_group(fds[0], &g2);
	t_read_group(sw, &s);
	t_read_group(fds[0], &g3);
	assert_int_equal(g1.enabled, 250000000);
	assert_int_equal(g2.enabled, 500000000);
	assert_int_equal(s.enabled, 500000000);
	assert_int_equal(s.val[0], 500000000);
	assert_int_equal(g3.enabled, 750000000);
	assert_near_u64(g1.val[0], expect_slots(&c, 0.25), 1);
	assert_near_u64(g3.val[0] - g2.val[0], expect_slots_between(&c, 0.5, 0.75), 2);
	assert_int_equal(close(sw), 0);
	t_close_all(fds, n);
}

ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);

static void rt_read_chk(void **state)
{
	uint64_t buf[32];
	int fds[MAXEV], n;

	(void)state;
	n = t_open_group(0, 4, 0, fds);
	assert_int_equal(__read_chk(fds[0], buf, sizeof(buf), sizeof(buf)), 8 * (3 + 2 * 5));
	assert_int_equal(buf[0], 5);
	t_close_all(fds, n);
}

/* Other users of the PMU that come and go (the scenario's "holders"): on
 * CPU 0 a flexible one of 6 general-purpose events from 0 to 0.2 s; our
 * group of 4 (BR_INST_RETIRED.ALL_BRANCHES, any counter) and it do not fit
 * together on 8 counters, so they take turns, one 4 ms slice each, the
 * kernel's rotation: ours runs 25 of the 50 slices, then alone.  On CPU 1
 * a pinned one of 6 from 0.1 to 0.3 s: our group does not fit beside it
 * and runs only outside that window. */
static void clk_holders(void **state)
{
	int a[4], b[4];
	struct gread g;

	(void)state;
	for (int i = 0; i < 4; i++) {
		a[i] = t_open(PERF_TYPE_RAW, 0x00c4, 0, i ? a[0] : -1);
		b[i] = t_open(PERF_TYPE_RAW, 0x00c4, 1, i ? b[0] : -1);
		assert_true(a[i] >= 0 && b[i] >= 0);
	}
	t_clock(0.2);
	t_read_group(a[0], &g);
	assert_int_equal(g.enabled, 200000000);
	assert_int_equal(g.running, 100000000);
	t_read_group(b[0], &g);
	assert_int_equal(g.running, 100000000);
	t_clock(0.4);
	t_read_group(a[0], &g);
	assert_int_equal(g.running, 300000000);
	t_read_group(b[0], &g);
	assert_int_equal(g.enabled, 400000000);
	assert_int_equal(g.running, 200000000);
	t_close_all(b, 4);
	t_close_all(a, 4);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(clk_group_read),
	cmocka_unit_test(clk_smt_activity),
	cmocka_unit_test(clk_reset_on_read),
	cmocka_unit_test(clk_per_cpu_keys),
	cmocka_unit_test(clk_multiplex),
	cmocka_unit_test(clk_fixed_counter_sharing),
	cmocka_unit_test(clk_rotate_active_only),
	cmocka_unit_test(clk_positive_only),
	cmocka_unit_test(clk_ioc_reset),
	cmocka_unit_test(clk_ioc_disable_enable),
	cmocka_unit_test(clk_start_disabled),
	cmocka_unit_test(clk_refinement_events),
	cmocka_unit_test(clk_table_events),
	cmocka_unit_test(clk_hybrid_table_names),
	cmocka_unit_test(clk_software_events),
	cmocka_unit_test(clk_read_formats),
	cmocka_unit_test(clk_close_leader),
	cmocka_unit_test(clk_holders),
	cmocka_unit_test(step_paced_reads),
	cmocka_unit_test(rt_group_read),
	cmocka_unit_test(rt_multiplex),
	cmocka_unit_test(rt_phases),
	cmocka_unit_test(rt_threads_and_cost),
	cmocka_unit_test(rt_read_chk),
};

T_MAIN("fakepmu-count", tests)
