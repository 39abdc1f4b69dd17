/* SPDX-License-Identifier: MIT */
/* test_open.c: perf_event_open() validation under the fake PMU, one test
 * per errno rule (the fixture each needs is chosen by
 * tests/integration/00-fakepmu.t), plus fd-level behaviour: real fds,
 * CLOEXEC, EMFILE, ids, ioctl errors and syscall pass-through. */
#include <stdbool.h>
#include <sys/resource.h>

#include "testlib.h"

/* errno of opening (type, config) on cpu in group_fd's group. */
static int open_err(uint32_t type, uint64_t config, int cpu, int group_fd)
{
	struct perf_event_attr a;

	t_attr(&a, type, config, RF_ALL);
	return t_open_errno(&a, cpu, group_fd);
}

static void full_group_opens(void **state)
{
	int fds[MAXEV], n;

	(void)state;
	n = t_open_group(3, 8, 1, fds);
	assert_int_equal(n, 11);
	/* Non-topdown events may join a slots-led group too. */
	fds[n] = t_open(PERF_TYPE_RAW, CYCLES_RAW, 3, fds[0]);
	assert_true(fds[n] >= 0);
	n++;
	fds[n] = t_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 3, fds[0]);
	assert_true(fds[n] >= 0);
	n++;
	t_close_all(fds, n);
}

static void metric_without_slots_leader(void **state)
{
	int cyc;

	(void)state;
	/* No group at all. */
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(0), 0, -1), EINVAL);
	/* A group led by something else than slots. */
	cyc = t_open(PERF_TYPE_RAW, CYCLES_RAW, 0, -1);
	assert_true(cyc >= 0);
	for (int m = 0; m < 8; m++)
		assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(m), 0, cyc), EINVAL);
	close(cyc);
}

static void metric_sampling(void **state)
{
	struct perf_event_attr a;
	int s;

	(void)state;
	s = t_open(PERF_TYPE_RAW, SLOTS, 0, -1);
	assert_true(s >= 0);
	t_attr(&a, PERF_TYPE_RAW, METRIC(0), RF_ALL);
	a.sample_period = 100000;
	assert_int_equal(t_open_errno(&a, 0, s), EINVAL);
	t_attr(&a, PERF_TYPE_RAW, METRIC(1), RF_ALL);
	a.freq = 1;
	a.sample_freq = 1000;
	assert_int_equal(t_open_errno(&a, 0, s), EINVAL);
	/* The same metrics without sampling are fine. */
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(0), 0, s), 0);
	close(s);
}

static void slots_leader_sampling(void **state)
{
	struct perf_event_attr a;
	int s;

	(void)state;
	t_attr(&a, PERF_TYPE_RAW, SLOTS, RF_ALL);
	a.sample_period = 1000000;
	s = t_open_attr(&a, 0, -1);
	assert_true(s >= 0);	/* a sampling slots event alone is fine */
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(0), 0, s), EINVAL);
	/* ... and a non-metric member is still allowed. */
	assert_int_equal(open_err(PERF_TYPE_RAW, UOP_DROPPING, 0, s), 0);
	close(s);
}

static void topdown_config1_config2(void **state)
{
	struct perf_event_attr a;
	int s;

	(void)state;
	t_attr(&a, PERF_TYPE_RAW, SLOTS, RF_ALL);
	a.config1 = 1;
	assert_int_equal(t_open_errno(&a, 0, -1), EINVAL);
	s = t_open(PERF_TYPE_RAW, SLOTS, 0, -1);
	assert_true(s >= 0);
	t_attr(&a, PERF_TYPE_RAW, METRIC(2), RF_ALL);
	a.config1 = 0x10;
	assert_int_equal(t_open_errno(&a, 0, s), EINVAL);
	t_attr(&a, PERF_TYPE_RAW, METRIC(2), RF_ALL);
	a.config2 = 1;
	assert_int_equal(t_open_errno(&a, 0, s), EINVAL);
	/* config1 on an ordinary event is not the topdown rule's business. */
	t_attr(&a, PERF_TYPE_RAW, CYCLES_RAW, RF_ALL);
	a.config1 = 1;
	assert_int_equal(t_open_errno(&a, 0, s), 0);
	close(s);
}

static void topdown_filter_bits(void **state)
{
	static const uint64_t flags[] = {F_EDGE, F_INV, F_CMASK1, F_ANY, 0xff000000ULL};
	int s;

	(void)state;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS | flags[i], 0, -1), EINVAL);
	s = t_open(PERF_TYPE_RAW, SLOTS, 0, -1);
	assert_true(s >= 0);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		for (int m = 0; m < 8; m++)
			assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(m) | flags[i], 0, s),
					 EINVAL);
	close(s);
}

static void too_many_or_duplicate_metrics(void **state)
{
	int fds[MAXEV], n;
	int s;

	(void)state;
	/* Same metric twice. */
	s = t_open(PERF_TYPE_RAW, SLOTS, 1, -1);
	assert_true(s >= 0);
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(3), 1, s), 0);
	fds[0] = t_open(PERF_TYPE_RAW, METRIC(3), 1, s);
	assert_true(fds[0] >= 0);
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(3), 1, s), EINVAL);
	close(fds[0]);
	close(s);
	/* Eight metrics fill the group: a ninth (necessarily a repeat) fails. */
	n = t_open_group(1, 8, 0, fds);
	for (int m = 0; m < 8; m++)
		assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(m), 1, fds[0]), EINVAL);
	/* Two slots events cannot share fixed counter 3. */
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 1, fds[0]), EINVAL);
	t_close_all(fds, n);
}

static void cpu_out_of_range(void **state)
{
	(void)state;
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, -1, -1), EINVAL);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 16, -1), EINVAL);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 100000, -1), EINVAL);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 15, -1), 0);
}

static void pid_not_supported(void **state)
{
	struct perf_event_attr a;

	(void)state;
	t_attr(&a, PERF_TYPE_RAW, SLOTS, RF_ALL);
	assert_int_equal(syscall(SYS_perf_event_open, &a, 0, 0, -1, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(syscall(SYS_perf_event_open, &a, getpid(), -1, -1, 0), -1);
	assert_int_equal(errno, EINVAL);
}

static void read_format_unknown_bits(void **state)
{
	struct perf_event_attr a;

	(void)state;
	t_attr(&a, PERF_TYPE_RAW, SLOTS, RF_ALL | (1ULL << 5));
	assert_int_equal(t_open_errno(&a, 0, -1), EINVAL);
	t_attr(&a, PERF_TYPE_RAW, SLOTS, 1ULL << 63);
	assert_int_equal(t_open_errno(&a, 0, -1), EINVAL);
	/* PERF_FORMAT_LOST is a known bit. */
	t_attr(&a, PERF_TYPE_RAW, SLOTS, RF_ALL | PERF_FORMAT_LOST);
	assert_int_equal(t_open_errno(&a, 0, -1), 0);
}

static void group_fd_not_fake(void **state)
{
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 0, p[0]), EBADF);
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(0), 0, p[0]), EBADF);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 0, 987654), EBADF);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 0, -2), EBADF);
	close(p[0]);
	close(p[1]);
}

static void group_fd_not_leader(void **state)
{
	int s, m;

	(void)state;
	s = t_open(PERF_TYPE_RAW, SLOTS, 0, -1);
	m = t_open(PERF_TYPE_RAW, METRIC(0), 0, s);
	assert_true(s >= 0 && m >= 0);
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(1), 0, m), EINVAL);
	assert_int_equal(open_err(PERF_TYPE_RAW, CYCLES_RAW, 0, m), EINVAL);
	close(m);
	close(s);
}

static void leader_on_other_cpu(void **state)
{
	int s;

	(void)state;
	s = t_open(PERF_TYPE_RAW, SLOTS, 2, -1);
	assert_true(s >= 0);
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(0), 3, s), EINVAL);
	assert_int_equal(open_err(PERF_TYPE_RAW, CYCLES_RAW, 3, s), EINVAL);
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(0), 2, s), 0);
	close(s);
}

/* perf_copy_attr(): too small is E2BIG (not EINVAL) with the kernel's size
 * written back; 0 means PERF_ATTR_SIZE_VER0; larger is fine if the tail
 * is zero. */
static void attr_size(void **state)
{
	unsigned char big[sizeof(struct perf_event_attr) + 64];
	struct perf_event_attr a, *b = (struct perf_event_attr *)big;

	(void)state;
	t_attr(&a, PERF_TYPE_RAW, SLOTS, RF_ALL);
	a.size = 32;
	assert_int_equal(t_open_errno(&a, 0, -1), E2BIG);
	assert_int_equal(a.size, sizeof(struct perf_event_attr));
	a.size = 0;
	assert_int_equal(t_open_errno(&a, 0, -1), 0);
	a.size = PERF_ATTR_SIZE_VER0;
	assert_int_equal(t_open_errno(&a, 0, -1), 0);
	memset(big, 0, sizeof(big));
	t_attr(b, PERF_TYPE_RAW, SLOTS, RF_ALL);
	b->size = sizeof(big);
	assert_int_equal(t_open_errno(b, 0, -1), 0);
	big[sizeof(big) - 1] = 1;
	assert_int_equal(t_open_errno(b, 0, -1), E2BIG);
}

static void pmu_types(void **state)
{
	struct perf_event_attr a;

	(void)state;
	/* No fixture PMU has these types. */
	assert_int_equal(open_err(99, SLOTS, 0, -1), ENOENT);
	assert_int_equal(open_err(3000, 0, 0, -1), ENOENT);
	/* Software events are emulated (perf adds cpu-clock, task-clock);
	 * an unknown software config is ENOENT (perf_swevent_init). */
	assert_int_equal(open_err(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, -1), 0);
	assert_int_equal(open_err(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, -1), 0);
	assert_int_equal(open_err(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, -1), 0);
	assert_int_equal(open_err(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_MAX, 0, -1), ENOENT);
	/* Other known non-core PMUs (tracepoint, uncore...) are not
	 * emulated. */
	assert_int_equal(open_err(PERF_TYPE_TRACEPOINT, 1, 0, -1), EOPNOTSUPP);
	/* msr's TSC is (msr_event_init, arch/x86/events/msr.c): config 0;
	 * another MSR the fake's CPU lacks (msr_mask), EINVAL; so is any
	 * exclude_* flag (PERF_PMU_CAP_NO_EXCLUDE, perf_try_init_event),
	 * as the real kernel of these machines answers perf stat -e
	 * msr/tsc/u ("not supported"). */
	assert_int_equal(open_err(t_pmu_type("msr"), 0, 0, -1), 0);
	assert_int_equal(open_err(t_pmu_type("msr"), 1, 0, -1), EINVAL);
	t_attr(&a, t_pmu_type("msr"), 0, RF_ALL);
	a.exclude_kernel = 1;
	assert_int_equal(t_open_errno(&a, 0, -1), EINVAL);
	/* Generic hardware events go to the core PMU. */
	assert_int_equal(open_err(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, -1), 0);
	assert_int_equal(open_err(PERF_TYPE_HW_CACHE, 0, 0, -1), 0);
	assert_int_equal(open_err(PERF_TYPE_HARDWARE, PERF_COUNT_HW_MAX, 0, -1), EINVAL);
	t_attr(&a, PERF_TYPE_HARDWARE, 3000ULL << 32, RF_ALL);
	assert_int_equal(t_open_errno(&a, 0, -1), ENOENT);
}

/* validate_group(): a group that could never be scheduled is refused.
 * Sapphire Rapids has 8 general-purpose counters (the table's events list
 * counters 0-7) and fixed counters: slots and the metrics share fixed
 * counter 3, cycles (0x3c) takes fixed counter 1 first, then a
 * general-purpose one. */
static void group_capacity(void **state)
{
	int fds[MAXEV], n = 0;

	(void)state;
	fds[n++] = t_open(PERF_TYPE_RAW, SLOTS, 0, -1);
	for (int m = 0; m < 8; m++)
		fds[n++] = t_open(PERF_TYPE_RAW, METRIC(m), 0, fds[0]);
	fds[n++] = t_open(PERF_TYPE_RAW, CYCLES_RAW, 0, fds[0]);	/* fixed counter 1 */
	for (int i = 0; i < 8; i++)
		fds[n++] = t_open(PERF_TYPE_RAW, 0x00c5ULL, 0, fds[0]);
	for (int i = 0; i < n; i++)
		assert_true(fds[i] >= 0);
	assert_int_equal(open_err(PERF_TYPE_RAW, 0x00c5ULL, 0, fds[0]), EINVAL);
	assert_int_equal(open_err(PERF_TYPE_RAW, CYCLES_RAW, 0, fds[0]), EINVAL);
	/* Software events take no counter. */
	assert_int_equal(open_err(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, fds[0]), 0);
	t_close_all(fds, n);
}

static void ioctl_errors(void **state)
{
	int s;

	(void)state;
	s = t_open(PERF_TYPE_RAW, SLOTS, 0, -1);
	assert_true(s >= 0);
	assert_int_equal(ioctl(s, PERF_EVENT_IOC_ID, NULL), -1);
	assert_int_equal(errno, EFAULT);
	assert_int_equal(ioctl(s, PERF_EVENT_IOC_REFRESH, 1), -1);
	assert_int_equal(errno, ENOTTY);
	assert_int_equal(ioctl(s, 0x5401 /* TCGETS */, NULL), -1);
	assert_int_equal(errno, ENOTTY);
	close(s);
}

static void fd_flags(void **state)
{
	struct perf_event_attr a;
	int fd;

	(void)state;
	t_attr(&a, PERF_TYPE_RAW, SLOTS, RF_ALL);
	fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
	assert_true(fd >= 0);
	assert_false(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	assert_int_equal(syscall(SYS_perf_event_open, &a, -1, 0, -1, 1UL << 4), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_NO_GROUP), -1);
	assert_int_equal(errno, EINVAL);
	/* After close the fd number is an ordinary fd again. */
	assert_int_equal(close(fd), -1);
	assert_int_equal(errno, EBADF);
}

static void ids_unique(void **state)
{
	int fds[MAXEV], n;
	uint64_t prev = 0;

	(void)state;
	n = t_open_group(0, 8, 1, fds);
	for (int i = 0; i < n; i++) {
		uint64_t id = t_id(fds[i]);

		assert_true(id >= 1000);
		assert_true(id > prev);
		prev = id;
	}
	t_close_all(fds, n);
}

static void emfile(void **state)
{
	struct rlimit old, low;
	int fds[256], n = 0, fd, used = 0;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	for (int i = 0; i < 64; i++)
		used += fcntl(i, F_GETFD) >= 0;
	low = old;
	low.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	fds[n++] = t_open(PERF_TYPE_RAW, SLOTS, 0, -1);
	assert_true(fds[0] >= 0);
	while ((fd = t_open(PERF_TYPE_RAW, CYCLES_RAW, 0, -1)) >= 0) {
		assert_true(n < 256);
		fds[n++] = fd;
	}
	assert_int_equal(errno, EMFILE);
	assert_int_equal(n, 64 - used);
	/* A failed open leaks nothing; closing one makes room for one. */
	close(fds[--n]);
	fds[n] = t_open(PERF_TYPE_RAW, METRIC(0), 0, fds[0]);
	assert_true(fds[n] >= 0);
	n++;
	assert_int_equal(t_open(PERF_TYPE_RAW, METRIC(1), 0, fds[0]), -1);
	assert_int_equal(errno, EMFILE);
	t_close_all(fds, n);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

static void passthrough(void **state)
{
	char buf[16];
	int p[2];

	(void)state;
	assert_int_equal(syscall(SYS_getpid), getpid());
	assert_int_equal(syscall(SYS_gettid), gettid());
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "hello", 5), 5);
	assert_int_equal(read(p[0], buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(close(p[0]), 0);
	assert_int_equal(close(p[1]), 0);
	assert_int_equal(read(p[0], buf, 1), -1);
	assert_int_equal(errno, EBADF);
}

/* icx-1s: Ice Lake has 4 metrics. */
static void l2_on_icelake(void **state)
{
	int fds[MAXEV], n;

	(void)state;
	n = t_open_group(0, 4, 1, fds);
	for (int m = 4; m < 8; m++)
		assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(m), 0, fds[0]), EINVAL);
	t_close_all(fds, n);
}

/* adl-hybrid: cpu_core 0-7 (type 4), cpu_atom 8-15. */
static void hybrid_cpu_not_in_pmu(void **state)
{
	uint32_t atom = t_pmu_type("cpu_atom");

	(void)state;
	assert_int_equal(t_pmu_type("cpu_core"), PERF_TYPE_RAW);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 8, -1), ENOENT);
	assert_int_equal(open_err(PERF_TYPE_RAW, CYCLES_RAW, 15, -1), ENOENT);
	assert_int_equal(open_err(atom, CYCLES_RAW, 0, -1), ENOENT);
	assert_int_equal(open_err(atom, CYCLES_RAW, 7, -1), ENOENT);
	assert_int_equal(open_err(atom, CYCLES_RAW, 8, -1), 0);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 7, -1), 0);
}

/* For per-CPU events one of the two PMUs never covers the CPU, and its
 * event_init answers first (x86_pmu_event_init: ENOENT), before the mixed
 * group check of validate_group. */
static void hybrid_mixed_group(void **state)
{
	uint32_t atom = t_pmu_type("cpu_atom");
	int s, c;

	(void)state;
	s = t_open(PERF_TYPE_RAW, SLOTS, 0, -1);
	assert_true(s >= 0);
	assert_int_equal(open_err(atom, CYCLES_RAW, 0, s), ENOENT);
	close(s);
	c = t_open(atom, CYCLES_RAW, 8, -1);
	assert_true(c >= 0);
	assert_int_equal(open_err(PERF_TYPE_RAW, CYCLES_RAW, 8, c), ENOENT);
	close(c);
}

/* A group of one general-purpose event, opened @n times with the leader
 * and the members disabled or not: how many opens succeed (at most 20). */
static int group_size(uint32_t type, uint64_t config, bool leader_disabled, bool members_disabled)
{
	struct perf_event_attr a;
	int fds[24], n = 0;

	for (; n < 20; n++) {
		t_attr(&a, type, config, RF_ALL);
		a.disabled = n == 0 ? leader_disabled : members_disabled;
		fds[n] = t_open_attr(&a, 0, n ? fds[0] : -1);
		if (fds[n] < 0) {
			assert_int_equal(errno, EINVAL);
			break;
		}
	}
	t_close_all(fds, n);
	return n;
}

/* x86 (arch/x86/events/core.c: validate_group -> collect_events): the
 * leader and the new event always count, a sibling only above
 * PERF_EVENT_STATE_OFF.  So a group of disabled members fits at any size;
 * spr-2s has 8 general-purpose counters. */
static void validation_skips_off_siblings(void **state)
{
	(void)state;
	assert_int_equal(group_size(PERF_TYPE_RAW, 0x00c5ULL, true, true), 20);
	assert_int_equal(group_size(PERF_TYPE_RAW, 0x00c5ULL, true, false), 8);
	assert_int_equal(group_size(PERF_TYPE_RAW, 0x00c5ULL, false, false), 8);
	assert_int_equal(group_size(PERF_TYPE_RAW, 0x00c5ULL, false, true), 20);
}

/* arm64 (drivers/perf/arm_pmu.c: validate_event): an event in state OFF
 * takes no counter, the leader and the new event included; neoverse-v2-64
 * has 6 event counters (INST_RETIRED 0x08 never takes the cycle counter). */
static void validation_arm_skips_off(void **state)
{
	uint32_t arm = t_pmu_type("armv8_pmuv3_0");

	(void)state;
	assert_int_equal(group_size(arm, 0x08ULL, true, true), 20);
	assert_int_equal(group_size(arm, 0x08ULL, true, false), 7);
	assert_int_equal(group_size(arm, 0x08ULL, false, false), 6);
}

/* A pinned holder the scenario sets (one general-purpose counter of
 * genoa-2s's six, like the NMI watchdog on AMD) is invisible to
 * validation: a group of six opens and never runs; five run. */
static void held_counter_never_runs(void **state)
{
	struct gread g;
	int fds[8], n;

	(void)state;
	for (int size = 6; size >= 5; size--) {
		/* Built disabled, then enabled whole, as perf and topdownd do. */
		for (n = 0; n < size; n++) {
			struct perf_event_attr a;

			t_attr(&a, PERF_TYPE_RAW, 0x0076ULL, RF_ALL);
			a.disabled = n == 0;
			fds[n] = t_open_attr(&a, 0, n ? fds[0] : -1);
			assert_true(fds[n] >= 0);
		}
		assert_int_equal(ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
		t_sleep(0.05);
		t_read_group(fds[0], &g);
		assert_true(g.enabled > 0);
		if (size == 6)
			assert_int_equal(g.running, 0);
		else
			assert_int_equal(g.running, g.enabled);
		t_close_all(fds, n);
	}
}

/* perf_event_open -> perf_event_validate_size: a group read over 16 KiB
 * is E2BIG (software events take no counter, so only the size stops it). */
static void oversized_group_e2big(void **state)
{
	struct rlimit rl = { 4096, 4096 };
	int *fds = calloc(1100, sizeof(int)), n, err = 0;

	(void)state;
	assert_non_null(fds);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	for (n = 0; n < 1100; n++) {
		fds[n] = t_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, n ? fds[0] : -1);
		if (fds[n] < 0) {
			err = errno;
			break;
		}
	}
	/* RF_ALL: 3 words, and 2 per member: 1 + 2 + 2n words <= 2048. */
	assert_int_equal(n, 1022);
	assert_int_equal(err, E2BIG);
	t_close_all(fds, n);
	free(fds);
}

/* The mediated vPMU: while its VM runs, an event that would count guests
 * is refused (EOPNOTSUPP); exclude_guest opens. */
static void mediated_vpmu(void **state)
{
	struct perf_event_attr a;

	(void)state;
	t_attr(&a, PERF_TYPE_RAW, 0x00c5ULL, RF_ALL);
	assert_int_equal(t_open_errno(&a, 0, -1), EOPNOTSUPP);
	a.exclude_guest = 1;
	assert_int_equal(t_open_errno(&a, 0, -1), 0);
}

/* arm64: an event the PMU's events/ leaves out (the CPU does not
 * implement it, PMCEID) opens all the same and counts 0; a listed one
 * counts.  The fixture copy lacks events/stall_slot. */
static void arm_hidden_event_counts_zero(void **state)
{
	uint32_t arm = t_pmu_type("armv8_pmuv3_0");
	uint64_t hidden = 0x3f, listed = 0x3e;	/* STALL_SLOT, STALL_SLOT_FRONTEND */
	struct gread g;
	int fd[2];

	(void)state;
	fd[0] = t_open(arm, hidden, 0, -1);
	fd[1] = t_open(arm, listed, 0, fd[0]);
	assert_true(fd[0] >= 0 && fd[1] >= 0);
	t_sleep(0.05);
	t_read_group(fd[0], &g);
	assert_true(g.running > 0);
	assert_int_equal(g.val[0], 0);
	assert_true(g.val[1] > 0);
	t_close_all(fd, 2);
}

/* arm64: the driver lists only PMUv3 common events (0x0000-0x003f,
 * 0x4000-0x403f: armv8pmu_event_attr_is_visible); an IMPLEMENTATION
 * DEFINED one (Neoverse N3's STALL_FRONTEND_FLUSH, 0x8162) is never in
 * events/ and counts all the same, by the scenario's rate; a common event
 * events/ leaves out (0x4005, STALL_BACKEND_MEM) counts 0. */
static void arm_impdef_event_counts(void **state)
{
	uint32_t arm = t_pmu_type("armv8_pmuv3_0");
	struct perf_event_attr a;
	struct gread g;
	int fd[3];

	(void)state;
	/* Opened disabled and enabled whole, so that its members count over
	 * the same time: a member added to a running group counts from when
	 * it is added, and on a loaded machine the opens lie milliseconds
	 * apart (the ratio below was 20 % off once). */
	t_attr(&a, arm, 0x3e, RF_ALL);	/* STALL_SLOT_FRONTEND, listed */
	a.disabled = 1;
	fd[0] = t_open_attr(&a, 0, -1);
	fd[1] = t_open(arm, 0x8162, 0, fd[0]);	/* STALL_FRONTEND_FLUSH, never listed */
	fd[2] = t_open(arm, 0x4005, 0, fd[0]);	/* STALL_BACKEND_MEM, a common event not listed */
	assert_true(fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0);
	assert_int_equal(ioctl(fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	t_sleep(0.05);
	t_read_group(fd[0], &g);
	assert_true(g.running > 0);
	assert_true(g.val[0] > 0);
	assert_true(g.val[1] > 0);
	/* The scenario's 0.01 against 0.2 per slot: a twentieth. */
	assert_true(g.val[1] * 20 > g.val[0] * 99 / 100 && g.val[1] * 20 < g.val[0] * 101 / 100);
	assert_int_equal(g.val[2], 0);
	t_close_all(fd, 3);
}

/* An offline hybrid CPU is out of its PMU's cpus (intel_pmu_cpu_dead):
 * ENOENT, not ENODEV; back online it opens. */
static void hybrid_offline_enoent(void **state)
{
	(void)state;
	t_set_online(2, 0);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 2, -1), ENOENT);
	t_set_online(2, 1);
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 2, -1), 0);
}

static void hybrid_atom_no_slots(void **state)
{
	uint32_t atom = t_pmu_type("cpu_atom");
	int c;

	(void)state;
	assert_int_equal(open_err(atom, SLOTS, 8, -1), EINVAL);
	assert_int_equal(open_err(atom, METRIC(0), 8, -1), EINVAL);
	c = t_open(atom, CYCLES_RAW, 8, -1);
	assert_true(c >= 0);
	assert_int_equal(open_err(atom, METRIC(0), 8, c), EINVAL);
	close(c);
	/* Generic events follow the CPU to its PMU, or the extended type. */
	assert_int_equal(open_err(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 8, -1), 0);
	assert_int_equal(open_err(PERF_TYPE_HARDWARE, ((uint64_t)atom << 32), 8, -1), 0);
	assert_int_equal(open_err(PERF_TYPE_HARDWARE, ((uint64_t)atom << 32), 0, -1), ENOENT);
}

/* lnl-hybrid (CPU 4, a Skymont E-core) and adl-hybrid (CPU 8, a
 * Gracemont one): intel_skt_event_constraints puts 0x0073, 0x019c and
 * 0x02c2 on fixed counters 4, 5 and 6 (and, their event byte not 0, on a
 * general-purpose counter when the fixed one is taken): a group of cycles,
 * those three and 8 other events fits Skymont's 8 counters and no more;
 * Gracemont has neither those fixed counters nor the rule. */
static void skymont_fixed_counters(void **state)
{
	uint32_t atom = t_pmu_type("cpu_atom");
	bool skymont = getenv("FAKEPMU_TEST_SKYMONT") != NULL;
	int cpu = skymont ? 4 : 8, fds[MAXEV], n = 0;
	static const uint64_t fixed[] = { 0x0073, 0x019c, 0x02c2 };

	(void)state;
	fds[n++] = t_open(atom, CYCLES_RAW, cpu, -1);
	for (unsigned i = 0; i < 3; i++)
		fds[n++] = t_open(atom, fixed[i], cpu, fds[0]);
	for (int i = 0; i < (skymont ? 8 : 3); i++)
		fds[n++] = t_open(atom, 0x00c5ULL, cpu, fds[0]);
	for (int i = 0; i < n; i++)
		assert_true(fds[i] >= 0);
	/* Every counter taken: one more event does not fit. */
	assert_int_equal(open_err(atom, 0x00c5ULL, cpu, fds[0]), EINVAL);
	/* A second TOPDOWN_RETIRING goes to no fixed counter: none is free,
	 * and no general-purpose one either. */
	assert_int_equal(open_err(atom, 0x02c2ULL, cpu, fds[0]), EINVAL);
	t_close_all(fds, n);
	if (!skymont)
		return;
	/* With one general-purpose counter left, the three fixed-counter
	 * codes and a second copy of one fit: the copy takes it. */
	n = 0;
	fds[n++] = t_open(atom, CYCLES_RAW, cpu, -1);
	for (unsigned i = 0; i < 3; i++)
		fds[n++] = t_open(atom, fixed[i], cpu, fds[0]);
	for (int i = 0; i < 7; i++)
		fds[n++] = t_open(atom, 0x00c5ULL, cpu, fds[0]);
	fds[n++] = t_open(atom, 0x02c2ULL, cpu, fds[0]);
	for (int i = 0; i < n; i++)
		assert_true(fds[i] >= 0);
	assert_int_equal(open_err(atom, 0x019cULL, cpu, fds[0]), EINVAL);
	t_close_all(fds, n);
}

/* vm-nopmu: no core PMU at all. */
static void vm_no_core_pmu(void **state)
{
	(void)state;
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 0, -1), ENOENT);
	assert_int_equal(open_err(PERF_TYPE_RAW, CYCLES_RAW, 0, -1), ENOENT);
	assert_int_equal(open_err(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, -1), ENOENT);
	assert_int_equal(open_err(PERF_TYPE_HW_CACHE, 0, 0, -1), ENOENT);
}

/* spr-holes: CPUs 3 and 4 offline. */
static void offline_cpu_enodev(void **state)
{
	int fds[MAXEV], n;

	(void)state;
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 3, -1), ENODEV);
	assert_int_equal(open_err(PERF_TYPE_RAW, CYCLES_RAW, 4, -1), ENODEV);
	n = t_open_group(2, 8, 1, fds);
	t_close_all(fds, n);
	n = t_open_group(5, 8, 1, fds);
	t_close_all(fds, n);
}

/* skx-1s: pre-Ice Lake, no events/slots. */
static void skx_no_slots(void **state)
{
	(void)state;
	assert_int_equal(open_err(PERF_TYPE_RAW, SLOTS, 0, -1), EINVAL);
	assert_int_equal(open_err(PERF_TYPE_RAW, METRIC(0), 0, -1), EINVAL);
	assert_int_equal(open_err(PERF_TYPE_RAW, CYCLES_RAW, 0, -1), 0);
}

static void noop(void **state)
{
	(void)state;
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(full_group_opens),
	cmocka_unit_test(metric_without_slots_leader),
	cmocka_unit_test(metric_sampling),
	cmocka_unit_test(slots_leader_sampling),
	cmocka_unit_test(topdown_config1_config2),
	cmocka_unit_test(topdown_filter_bits),
	cmocka_unit_test(too_many_or_duplicate_metrics),
	cmocka_unit_test(cpu_out_of_range),
	cmocka_unit_test(pid_not_supported),
	cmocka_unit_test(read_format_unknown_bits),
	cmocka_unit_test(group_fd_not_fake),
	cmocka_unit_test(group_fd_not_leader),
	cmocka_unit_test(leader_on_other_cpu),
	cmocka_unit_test(attr_size),
	cmocka_unit_test(pmu_types),
	cmocka_unit_test(group_capacity),
	cmocka_unit_test(ioctl_errors),
	cmocka_unit_test(fd_flags),
	cmocka_unit_test(ids_unique),
	cmocka_unit_test(emfile),
	cmocka_unit_test(passthrough),
	cmocka_unit_test(l2_on_icelake),
	cmocka_unit_test(hybrid_cpu_not_in_pmu),
	cmocka_unit_test(hybrid_mixed_group),
	cmocka_unit_test(validation_skips_off_siblings),
	cmocka_unit_test(validation_arm_skips_off),
	cmocka_unit_test(held_counter_never_runs),
	cmocka_unit_test(oversized_group_e2big),
	cmocka_unit_test(mediated_vpmu),
	cmocka_unit_test(hybrid_offline_enoent),
	cmocka_unit_test(arm_hidden_event_counts_zero),
	cmocka_unit_test(arm_impdef_event_counts),
	cmocka_unit_test(hybrid_atom_no_slots),
	cmocka_unit_test(skymont_fixed_counters),
	cmocka_unit_test(vm_no_core_pmu),
	cmocka_unit_test(offline_cpu_enodev),
	cmocka_unit_test(skx_no_slots),
	cmocka_unit_test(noop),
};

T_MAIN("fakepmu-open", tests)
