/* SPDX-License-Identifier: MIT */
/* test_hotplug.c: CPU hotplug under the fake PMU, driven by the fixture's
 * online files on a scratch copy (SET_ONLINE = tests/fixtures/set-online).
 * Real clock: the moment a CPU went offline is the online file's mtime. */
#include "testlib.h"

/* A group whose CPU goes offline is detached: reads give nr = 1 with the
 * leader's count and times frozen at the moment it went offline, metric
 * members read as EOF, and coming back online reattaches nothing.  A new
 * group opened afterwards counts normally. */
static void offline_midrun(void **state)
{
	struct t_cpu c = t_scenario(5);
	struct gread g1, g2, g3, g4, zero;
	unsigned bytes[8];
	int fds[MAXEV], nfd, n2;
	int fresh[MAXEV];
	uint64_t buf[64];
	double t_start, t_opened, t_before, t_after;

	(void)state;
	memset(&zero, 0, sizeof(zero));
	t_expect_bytes(c.f[0], bytes);
	t_start = t_mono();
	nfd = t_open_group(5, 8, 1, fds);
	t_opened = t_mono();
	t_sleep(0.05);
	t_read_group(fds[0], &g1);
	assert_int_equal(g1.nr, 11);
	t_sleep(0.05);
	t_before = t_mono();
	t_set_online(5, 0);
	t_after = t_mono();
	t_sleep(0.2);
	t_read_group(fds[0], &g2);
	assert_int_equal(g2.nr, 1);
	assert_int_equal(g2.id[0], t_id(fds[0]));
	assert_true(g2.val[0] > g1.val[0]);
	/* Frozen when the online file changed (its mtime), not 200 ms later
	 * when the fake noticed; 30 ms of slack for coarse file timestamps. */
	assert_true((double)g2.enabled / 1e9 <= t_after - t_start + 0.03);
	assert_true((double)g2.enabled / 1e9 >= t_before - t_opened - 0.03);
	assert_int_equal(g2.running, g2.enabled);
	/* Up to the freeze the slots count kept up with time. */
	assert_true(fabs((double)g2.val[0] / ((double)g2.running / 1e9) / c.sps - 1) < 0.01);
	/* Metric members are in ERROR state: read() returns 0 bytes. */
	assert_int_equal(read(fds[1], buf, sizeof(buf)), 0);
	/* A non-metric member became a frozen singleton. */
	t_read_group(fds[9], &g3);
	assert_int_equal(g3.nr, 1);
	t_sleep(0.05);
	t_read_group(fds[0], &g3);
	assert_memory_equal(&g2, &g3, sizeof(g2));
	/* Opening on the offline CPU fails. */
	assert_int_equal(t_open(PERF_TYPE_RAW, SLOTS, 5, -1), -1);
	assert_int_equal(errno, ENODEV);
	/* Back online: the old group stays detached and frozen... */
	t_set_online(5, 1);
	t_sleep(0.05);
	t_read_group(fds[0], &g4);
	assert_memory_equal(&g2, &g4, sizeof(g2));
	assert_int_equal(ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	t_sleep(0.02);
	t_read_group(fds[0], &g4);
	assert_memory_equal(&g2, &g4, sizeof(g2));
	/* ...and a new group counts normally. */
	n2 = t_open_group(5, 8, 1, fresh);
	t_sleep(0.05);
	t_read_group(fresh[0], &g3);
	assert_int_equal(g3.nr, 11);
	assert_true(g3.val[0] > 0);
	assert_int_equal(g3.running, g3.enabled);
	{
		uint64_t l1 = 0;

		for (int m = 0; m < 8; m++) {
			assert_int_equal(g3.val[1 + m], t_scaled(g3.val[0], bytes[m]));
			if (m < 4)
				l1 += g3.val[1 + m];
		}
		assert_true(l1 <= g3.val[0] && l1 + 4 >= g3.val[0]);
	}
	t_close_all(fresh, n2);
	t_close_all(fds, nfd);
}

static void offline_enodev_then_online(void **state)
{
	int fd;

	(void)state;
	fd = t_open(PERF_TYPE_RAW, SLOTS, 6, -1);
	assert_true(fd >= 0);
	close(fd);
	t_set_online(6, 0);
	t_sleep(0.01);
	assert_int_equal(t_open(PERF_TYPE_RAW, SLOTS, 6, -1), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(t_open(PERF_TYPE_RAW, CYCLES_RAW, 6, -1), -1);
	assert_int_equal(errno, ENODEV);
	t_set_online(6, 1);
	t_sleep(0.01);
	fd = t_open(PERF_TYPE_RAW, SLOTS, 6, -1);
	assert_true(fd >= 0);
	close(fd);
}

/* A CPU is offline if either devices/system/cpu/online or cpuN/online
 * says so; here only cpu7/online changes. */
static void cpu_online_file_alone(void **state)
{
	char path[4096], tmp[4200];
	struct gread g1, g2;
	int fds[MAXEV], n;
	FILE *f;

	(void)state;
	n = t_open_group(7, 4, 0, fds);
	t_sleep(0.02);
	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu7/online", getenv("FAKEPMU_SYSFS"));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fputs("0\n", f);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0);
	t_sleep(0.02);
	t_read_group(fds[0], &g1);
	assert_int_equal(g1.nr, 1);
	t_sleep(0.02);
	t_read_group(fds[0], &g2);
	assert_memory_equal(&g1, &g2, sizeof(g1));
	assert_int_equal(t_open(PERF_TYPE_RAW, SLOTS, 7, -1), -1);
	assert_int_equal(errno, ENODEV);
	/* Nothing else on the CPU list changed. */
	assert_int_equal(t_open_errno(&(struct perf_event_attr){.size = sizeof(struct perf_event_attr),
				      .type = PERF_TYPE_RAW, .config = SLOTS}, 6, -1), 0);
	t_close_all(fds, n);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(offline_midrun),
	cmocka_unit_test(offline_enodev_then_online),
	cmocka_unit_test(cpu_online_file_alone),
};

T_MAIN("fakepmu-hotplug", tests)
