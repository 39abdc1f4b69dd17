/* SPDX-License-Identifier: MIT */
/* Unit tests of perfev on the real kernel's software events (these
 * machines have no hardware PMU, but perf_event_open(2), groups, ids,
 * enabling and group reads are the kernel's own for software events):
 * the attributes built, close-on-exec, a group read back with its ids,
 * the kernel's refusal passed on as -errno.  Run as root (make check), as
 * system-wide events on CPU 0 need CAP_PERFMON. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfev.h"

#define FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
		PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

static void test_attr(void **state)
{
	static const uint64_t config[3] = { 0x1c0, 0x2, 0x3 };
	struct perf_event_attr a;

	(void)state;
	perfev_attr(&a, 4, config, false, false, FORMAT, true);
	assert_int_equal(a.type, 4);
	assert_int_equal(a.size, sizeof(a));
	assert_int_equal(a.config, 0x1c0);
	assert_int_equal(a.config1, 2);
	assert_int_equal(a.config2, 3);
	assert_int_equal(a.read_format, FORMAT);
	assert_true(a.disabled);
	assert_true(a.exclude_kernel);
	assert_true(a.exclude_guest);
	assert_false(a.exclude_user);
	assert_int_equal(a.sample_period, 0);
	perfev_attr(&a, 4, config, true, true, 0, false);
	assert_false(a.disabled);
	assert_false(a.exclude_kernel);
	assert_false(a.exclude_guest);
}

/* The kernel is reached (not under qemu-user, which has no
 * perf_event_open: the arm64 pass runs these tests there). */
static int open_or_skip(struct perf_event_attr *a, int cpu, int group)
{
	int fd = perfev_open(a, cpu, group);

	if (fd == -ENOSYS)
		skip();
	return fd;
}

static void test_group_on_the_kernel(void **state)
{
	static const uint64_t clock[3] = { PERF_COUNT_SW_CPU_CLOCK, 0, 0 };
	static const uint64_t faults[3] = { PERF_COUNT_SW_PAGE_FAULTS, 0, 0 };
	struct perf_event_attr a;
	uint64_t id[2], buf[3 + 2 * 2];
	int lead, member;
	ssize_t n;

	(void)state;
	perfev_attr(&a, PERF_TYPE_SOFTWARE, clock, true, false, FORMAT, true);
	lead = open_or_skip(&a, 0, -1);
	assert_true(lead >= 0);
	assert_true(fcntl(lead, F_GETFD) & FD_CLOEXEC);
	perfev_attr(&a, PERF_TYPE_SOFTWARE, faults, true, false, FORMAT, false);
	member = perfev_open(&a, 0, lead);
	assert_true(member >= 0);
	assert_true(fcntl(member, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(perfev_id(lead, &id[0]), 0);
	assert_int_equal(perfev_id(member, &id[1]), 0);
	assert_true(id[0] != id[1]);
	/* Disabled until enabled: nothing has run. */
	n = perfev_read(lead, buf, sizeof(buf));
	assert_int_equal(n, sizeof(buf));
	assert_int_equal(buf[0], 2);
	assert_int_equal(buf[1], 0);
	assert_int_equal(perfev_enable_group(lead), 0);
	/* Read until CPU 0's clock has advanced: the group runs. */
	do
		n = perfev_read(lead, buf, sizeof(buf));
	while (n == (ssize_t)sizeof(buf) && buf[3] == 0);
	assert_int_equal(n, sizeof(buf));
	assert_true(buf[1] > 0 && buf[2] > 0);
	assert_int_equal(buf[4], id[0]);
	assert_int_equal(buf[6], id[1]);
	/* Too small a buffer for the group: the kernel's ENOSPC. */
	assert_int_equal(perfev_read(lead, buf, 2 * sizeof(uint64_t)), -ENOSPC);
	close(member);
	close(lead);
}

static void test_refusals(void **state)
{
	static const uint64_t bogus[3] = { 0xffff, 0, 0 };
	struct perf_event_attr a;

	(void)state;
	/* No PMU of that type: ENOENT (kernel/events/core.c: perf_init_event). */
	perfev_attr(&a, 0x7ffffff0, bogus, false, false, 0, false);
	assert_int_equal(open_or_skip(&a, 0, -1), -ENOENT);
	/* A software event the kernel does not have: ENOENT
	 * (perf_swevent_init). */
	perfev_attr(&a, PERF_TYPE_SOFTWARE, bogus, false, false, 0, false);
	assert_int_equal(perfev_open(&a, 0, -1), -ENOENT);
	assert_int_equal(perfev_id(-1, &(uint64_t){ 0 }), -EBADF);
	assert_int_equal(perfev_enable_group(-1), -EBADF);
	assert_int_equal(perfev_read(-1, &(uint64_t){ 0 }, 8), -EBADF);
}

/* The SMT split's elapsed time (collect/smt.c): the msr PMU's TSC, a
 * software context's event, in a group on CPU 0 on the real kernel, with
 * the attributes the split opens it with (no exclude flag: the kernel's
 * msr PMU refuses any, PERF_PMU_CAP_NO_EXCLUDE).  It counts at the TSC's
 * rate for the group's enabled time. */
static void test_msr_tsc(void **state)
{
	static const uint64_t clock[3] = { PERF_COUNT_SW_CPU_CLOCK, 0, 0 };
	static const uint64_t tsc[3] = { 0, 0, 0 };
	struct perf_event_attr a;
	uint64_t buf[3 + 2 * 2], before[2];
	char text[32] = "";
	uint32_t type;
	int lead, member, fd;
	ssize_t n;

	(void)state;
	perfev_attr(&a, PERF_TYPE_SOFTWARE, clock, true, true, FORMAT, true);
	lead = open_or_skip(&a, 0, -1);
	assert_true(lead >= 0);
	fd = open("/sys/bus/event_source/devices/msr/type", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0); /* an x86 kernel has it (arch/x86/events/msr.c) */
	assert_true(read(fd, text, sizeof(text) - 1) > 0);
	close(fd);
	type = (uint32_t)strtoul(text, NULL, 10);
	perfev_attr(&a, type, tsc, false, true, FORMAT, false);
	assert_int_equal(perfev_open(&a, 0, lead), -EINVAL);
	perfev_attr(&a, type, tsc, true, true, FORMAT, false);
	member = perfev_open(&a, 0, lead);
	assert_true(member >= 0);
	assert_int_equal(perfev_enable_group(lead), 0);
	n = perfev_read(lead, buf, sizeof(buf));
	assert_int_equal(n, sizeof(buf));
	before[0] = buf[1];
	before[1] = buf[5];
	do
		n = perfev_read(lead, buf, sizeof(buf));
	while (n == (ssize_t)sizeof(buf) && buf[1] - before[0] < 20000000);
	assert_int_equal(n, sizeof(buf));
	/* Between 100 MHz and 10 GHz over 20 ms or more of enabled time. */
	{
		double hz = (double)(buf[5] - before[1]) / ((double)(buf[1] - before[0]) / 1e9);

		if (!(hz > 1e8 && hz < 1e10))
			fail_msg("msr/tsc counted %.0f Hz (%llu over %llu ns)", hz, (unsigned long long)(buf[5] - before[1]), (unsigned long long)(buf[1] - before[0]));
	}
	close(member);
	close(lead);
}

static void test_cgroup_switches(void **state)
{
	int fd;

	(void)state;
	fd = perfev_open_cgroup_switches(0);
	if (fd == -ENOSYS)
		skip();
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attr),
		cmocka_unit_test(test_group_on_the_kernel),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_msr_tsc),
		cmocka_unit_test(test_cgroup_switches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
