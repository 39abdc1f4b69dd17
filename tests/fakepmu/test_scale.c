/* SPDX-License-Identifier: MIT */
/* test_scale.c: the fake PMU at daemon scale: every CPU of a generated
 * 1024-CPU fixture with a 12-event group (12,288 fake fds, real fds
 * underneath), read once per CPU, then closed. */
#include <sys/resource.h>

#include "testlib.h"

#define NCPU 1024
#define PER_CPU 12

static void many_fds(void **state)
{
	static int fds[NCPU][PER_CPU];
	struct rlimit rl;
	struct gread g;
	double t0, per;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < NCPU * PER_CPU + 64) {
		print_message("# RLIMIT_NOFILE hard limit %lu too low (skipped)\n",
			      (unsigned long)rl.rlim_max);
		skip();
	}
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? NCPU * PER_CPU + 64 : rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	for (int c = 0; c < NCPU; c++) {
		int n = t_open_group(c, 8, 1, fds[c]);

		fds[c][n] = t_open(PERF_TYPE_RAW, CYCLES_RAW, c, fds[c][0]);
		assert_true(fds[c][n] >= 0);
		assert_int_equal(n + 1, PER_CPU);
	}
	t_sleep(0.02);
	t0 = t_mono();
	for (int c = 0; c < NCPU; c++) {
		t_read_group(fds[c][0], &g);
		assert_int_equal(g.nr, PER_CPU);
		assert_true(g.val[0] > 0);
	}
	per = (t_mono() - t0) / NCPU * 1e6;
	print_message("# %d CPUs x %d events: %.2f us per group read\n", NCPU, PER_CPU, per);
	for (int c = 0; c < NCPU; c++)
		t_close_all(fds[c], PER_CPU);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(many_fds),
};

T_MAIN("fakepmu-scale", tests)
