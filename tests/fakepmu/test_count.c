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

static uint64_t expect_slots(const struct t_cpu *c, double seconds)
{
	return (uint64_t)floor(c->sps * c->running * seconds);
}

static void assert_near_u64(uint64_t got, uint64_t want, uint64_t tol)
{
	uint64_t d = got > want ? got - want : want - got;

	if (d > tol)
		fail_msg("got %llu, want %llu (+-%llu)", (unsigned long long)got,
			 (unsigned long long)want, (unsigned long long)tol);
}

/* Checks one interval of a slots + nm metrics group: each metric delta is
 * exactly slots_delta * byte / 255 truncated, and the L1 deltas sum to the
 * slots delta minus at most 4 (one truncation each). */
static void assert_interval(const struct gread *a, const struct gread *b, int nm,
			    const unsigned bytes[8])
{
	uint64_t ds = b->val[0] - a->val[0], l1 = 0;

	for (int m = 0; m < nm; m++) {
		uint64_t dm = b->val[1 + m] - a->val[1 + m];

		if (dm != t_scaled(ds, bytes[m]))
			fail_msg("metric %d: delta %llu, want %llu * %u / 255 = %llu", m,
				 (unsigned long long)dm, (unsigned long long)ds, bytes[m],
				 (unsigned long long)t_scaled(ds, bytes[m]));
		if (m < 4)
			l1 += dm;
	}
	if (nm >= 4) {
		assert_true(l1 <= ds);
		assert_true(l1 + 4 >= ds);
	}
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
		assert_near_u64(g.running, (uint64_t)(2e8 * c.running), 1);
		assert_interval(&zero, &g, 8, bytes);
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

static void clk_multiplex(void **state)
{
	struct t_cpu c = t_scenario(2);
	struct gread g, zero;
	unsigned bytes[8];
	int fds[MAXEV], n;

	(void)state;
	assert_true(c.running == 0.5);
	n = t_open_group(2, 8, 0, fds);
	t_clock(0.1);
	t_read_group(fds[0], &g);
	assert_int_equal(g.enabled, 100000000);
	assert_int_equal(g.running, 50000000);
	assert_near_u64(g.val[0], expect_slots(&c, 0.1), 1);
	memset(&zero, 0, sizeof(zero));
	phase_bytes(&c, 0, bytes);
	assert_interval(&zero, &g, 8, bytes);
	t_close_all(fds, n);
}

/* Groups with slots on one CPU share fixed counter 3: n enabled groups each
 * run running/n of the time.  Groups without slots are not affected. */
static void clk_fixed_counter_sharing(void **state)
{
	struct t_cpu c = t_scenario(4);
	int a[MAXEV], b[MAXEV], na, nb, cyc;
	struct gread ga, gb, gc;

	(void)state;
	na = t_open_group(4, 4, 0, a);
	nb = t_open_group(4, 4, 0, b);
	cyc = t_open(PERF_TYPE_RAW, CYCLES_RAW, 4, -1);
	assert_true(cyc >= 0);
	t_clock(0.1);
	t_read_group(a[0], &ga);
	t_read_group(b[0], &gb);
	assert_int_equal(ga.running, 50000000);
	assert_int_equal(gb.running, 50000000);
	assert_near_u64(ga.val[0], expect_slots(&c, 0.05), 1);
	assert_int_equal(ioctl(b[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);
	t_clock(0.2);
	t_read_group(a[0], &ga);
	t_read_group(b[0], &gb);
	assert_int_equal(ga.running, 150000000);
	assert_int_equal(gb.enabled, 100000000);
	assert_int_equal(gb.running, 50000000);
	assert_int_equal(ioctl(b[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	t_clock(0.3);
	t_read_group(a[0], &ga);
	t_read_group(b[0], &gb);
	t_read_group(cyc, &gc);
	assert_int_equal(ga.running, 200000000);
	assert_int_equal(gb.running, 100000000);
	assert_int_equal(gc.running, 300000000);
	assert_int_equal(gc.val[0], 0);
	close(cyc);
	t_close_all(b, nb);
	t_close_all(a, na);
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
	assert_interval(&zero, &g, 8, bytes);	/* disable folded the hardware */
	t_clock(0.3);
	t_read_group(fds[0], &h);
	assert_memory_equal(&g, &h, sizeof(g));	/* nothing moves while disabled */
	assert_int_equal(ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	t_clock(0.4);
	t_read_group(fds[0], &h);
	assert_int_equal(h.enabled, 200000000);
	assert_near_u64(h.val[0] - g.val[0], expect_slots(&c, 0.1), 1);
	assert_interval(&g, &h, 8, bytes);
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

/* UOP_DROPPING and RECOVERY_CYCLES(cmask=1,edge) count fraction x slots;
 * any other encoding of them, or any other event, counts 0. */
static void clk_refinement_events(void **state)
{
	static const uint64_t zero_configs[] = {
		0x010dULL,				/* RECOVERY_CYCLES, no cmask/edge */
		0x010dULL | F_CMASK1,			/* no edge */
		0x010dULL | F_EDGE,			/* no cmask */
		RECOVERY_CYCLES | F_INV,
		UOP_DROPPING | F_CMASK1,
		UOP_DROPPING | F_EDGE,
		CYCLES_RAW, 0x00c0ULL, 0x0300ULL,
	};
	struct t_cpu c = t_scenario(12);
	int fds[MAXEV], n, nz = (int)(sizeof(zero_configs) / sizeof(zero_configs[0]));
	struct gread g, h;
	double ud = 0, rc = 0;

	(void)state;
	n = t_open_group(12, 8, 1, fds);
	for (int i = 0; i < nz; i++) {
		fds[n] = t_open(PERF_TYPE_RAW, zero_configs[i], 12, fds[0]);
		assert_true(fds[n] >= 0);
		n++;
	}
	fds[n] = t_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 12, fds[0]);
	assert_true(fds[n] >= 0);
	n++;
	t_clock(0.7);
	t_read_group(fds[0], &g);
	assert_int_equal(g.nr, (uint64_t)n);
	assert_near_u64(g.val[9], (uint64_t)(c.f[0][8] * (double)g.val[0]), 1);
	assert_near_u64(g.val[10], (uint64_t)(c.f[0][9] * (double)g.val[0]), 1);
	for (int i = 11; i < n; i++)
		assert_int_equal(g.val[i], 0);
	/* Across the phase change the counts integrate piecewise. */
	t_clock(1.5);
	t_read_group(fds[0], &h);
	ud = c.f[0][8] * c.sps * 0.3 + c.f[1][8] * c.sps * 0.5;
	rc = c.f[0][9] * c.sps * 0.3 + c.f[1][9] * c.sps * 0.5;
	assert_near_u64(h.val[9] - g.val[9], (uint64_t)ud, 2);
	assert_near_u64(h.val[10] - g.val[10], (uint64_t)rc, 2);
	for (int i = 11; i < n; i++)
		assert_int_equal(h.val[i], 0);
	t_close_all(fds, n);
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
	struct t_cpu c = t_scenario(14);
	int fds[MAXEV], n;
	uint64_t buf[64];
	struct gread g, h;

	(void)state;
	n = t_open_group(14, 8, 1, fds);
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
	t_sleep(0.06);
	t_read_group(fds[0], &g);
	assert_true(fabs((double)g.running / (double)g.enabled - c.running) < 1e-6);
	assert_true(fabs((double)g.val[0] / (c.running * c.sps * (double)g.enabled / 1e9) - 1) <
		    0.01);
	t_close_all(fds, n);
}

/* CPU 5's first phase is short: reads before and after the switch carry
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
	if (t_mono() - t0 < c.seconds[0] - 0.1)
		assert_interval(&g0, &g1, 8, a);
	else
		print_message("# machine too slow to check phase 1 (skipped)\n");
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

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(clk_group_read),
	cmocka_unit_test(clk_reset_on_read),
	cmocka_unit_test(clk_per_cpu_keys),
	cmocka_unit_test(clk_multiplex),
	cmocka_unit_test(clk_fixed_counter_sharing),
	cmocka_unit_test(clk_ioc_reset),
	cmocka_unit_test(clk_ioc_disable_enable),
	cmocka_unit_test(clk_start_disabled),
	cmocka_unit_test(clk_refinement_events),
	cmocka_unit_test(clk_read_formats),
	cmocka_unit_test(clk_close_leader),
	cmocka_unit_test(rt_group_read),
	cmocka_unit_test(rt_multiplex),
	cmocka_unit_test(rt_phases),
	cmocka_unit_test(rt_threads_and_cost),
	cmocka_unit_test(rt_read_chk),
};

T_MAIN("fakepmu-count", tests)
