/* SPDX-License-Identifier: MIT */
/* test_faults.c: injected faults (the scenario's "faults" list), on the
 * fake clock.  The scenario written by tests/integration/00-fakepmu.t:
 *   0-3   open, any event, EACCES (forever)
 *   5     open uop_dropping EINVAL; read EINTR count 1
 *   6     read short count 2
 *   7     read EIO after_seconds 1
 *   8-9   open slots EBUSY count 1 (per CPU)
 *   10    open EMFILE count 2 after_seconds 0.5 */
#include "testlib.h"

static int open_err(uint64_t config, int cpu, int group_fd)
{
	struct perf_event_attr a;

	t_attr(&a, PERF_TYPE_RAW, config, RF_ALL);
	return t_open_errno(&a, cpu, group_fd);
}

static void open_eacces_listed_cpus(void **state)
{
	int fds[MAXEV], n;

	(void)state;
	for (int cpu = 0; cpu < 4; cpu++) {
		for (int i = 0; i < 3; i++)	/* no count: fires every time */
			assert_int_equal(open_err(SLOTS, cpu, -1), EACCES);
		assert_int_equal(open_err(CYCLES_RAW, cpu, -1), EACCES);
		assert_int_equal(open_err(METRIC(0), cpu, -1), EACCES);
	}
	n = t_open_group(4, 8, 1, fds);
	t_close_all(fds, n);
}

static void open_event_specific(void **state)
{
	int s;

	(void)state;
	s = t_open(PERF_TYPE_RAW, SLOTS, 5, -1);
	assert_true(s >= 0);
	assert_int_equal(open_err(METRIC(0), 5, s), 0);
	assert_int_equal(open_err(UOP_DROPPING, 5, s), EINVAL);
	assert_int_equal(open_err(UOP_DROPPING, 5, s), EINVAL);
	assert_int_equal(open_err(RECOVERY_CYCLES, 5, s), 0);
	close(s);
	s = t_open(PERF_TYPE_RAW, SLOTS, 11, -1);
	assert_int_equal(open_err(UOP_DROPPING, 11, s), 0);
	close(s);
}

static void read_eintr_once(void **state)
{
	uint64_t buf[64];
	int fds[MAXEV], n;
	struct gread g;

	(void)state;
	n = t_open_group(5, 8, 0, fds);
	t_clock(0.1);
	assert_int_equal(read(fds[0], buf, sizeof(buf)), -1);
	assert_int_equal(errno, EINTR);
	t_read_group(fds[0], &g);
	assert_int_equal(g.nr, 9);
	assert_true(g.val[0] > 0);
	t_read_group(fds[0], &g);
	t_close_all(fds, n);
}

static void read_short(void **state)
{
	uint64_t buf[64];
	int fds[MAXEV], n;
	struct gread g;
	size_t full = 8 * (3 + 2 * 9);

	(void)state;
	n = t_open_group(6, 8, 0, fds);
	t_clock(0.1);
	for (int i = 0; i < 2; i++) {
		ssize_t r = read(fds[0], buf, sizeof(buf));

		assert_true(r > 0 && (size_t)r < full);
		assert_int_equal(r, (ssize_t)(full / 2) & ~7);
		assert_int_equal(buf[0], 9);	/* valid-looking prefix */
		assert_int_equal(buf[4], t_id(fds[0]));
	}
	t_read_group(fds[0], &g);
	assert_int_equal(g.nr, 9);
	t_close_all(fds, n);
}

static void read_after_seconds(void **state)
{
	uint64_t buf[64];
	int fds[MAXEV], n;
	struct gread g;

	(void)state;
	n = t_open_group(7, 4, 0, fds);
	t_clock(0.5);
	t_read_group(fds[0], &g);
	t_clock(1.0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(read(fds[0], buf, sizeof(buf)), -1);
		assert_int_equal(errno, EIO);
		assert_int_equal(read(fds[1], buf, sizeof(buf)), -1);
		assert_int_equal(errno, EIO);
	}
	t_close_all(fds, n);
}

static void open_count_per_cpu(void **state)
{
	(void)state;
	assert_int_equal(open_err(CYCLES_RAW, 8, -1), 0);	/* only slots */
	assert_int_equal(open_err(SLOTS, 8, -1), EBUSY);
	assert_int_equal(open_err(SLOTS, 8, -1), 0);
	assert_int_equal(open_err(SLOTS, 8, -1), 0);
	assert_int_equal(open_err(SLOTS, 9, -1), EBUSY);
	assert_int_equal(open_err(SLOTS, 9, -1), 0);
}

static void open_after_seconds_count(void **state)
{
	(void)state;
	t_clock(0.1);
	assert_int_equal(open_err(SLOTS, 10, -1), 0);
	t_clock(0.6);
	assert_int_equal(open_err(SLOTS, 10, -1), EMFILE);
	assert_int_equal(open_err(CYCLES_RAW, 10, -1), EMFILE);
	assert_int_equal(open_err(SLOTS, 10, -1), 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(open_eacces_listed_cpus),
	cmocka_unit_test(open_event_specific),
	cmocka_unit_test(read_eintr_once),
	cmocka_unit_test(read_short),
	cmocka_unit_test(read_after_seconds),
	cmocka_unit_test(open_count_per_cpu),
	cmocka_unit_test(open_after_seconds_count),
};

T_MAIN("fakepmu-faults", tests)
