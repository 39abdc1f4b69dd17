/* SPDX-License-Identifier: MIT */
/* perfprobe: asks the perf ABI the questions topdownd depends on, the same
 * way under the fake PMU and on a real kernel, and prints the answers one
 * per line, so that a test can hold them side by side.  It shares nothing
 * with the daemon (no header, no table): raw perf_event_open(2).
 *
 *   perfprobe groups TYPE CONFIG CPU [MAX]
 *       For each way of disabling (all members disabled; the leader
 *       disabled and the members enabled; all enabled), how many copies
 *       of event CONFIG on PMU TYPE open as one group on CPU before the
 *       kernel refuses, and with what errno:
 *           groups all_disabled N ERRNO
 *           groups leader_disabled N ERRNO
 *           groups all_enabled N ERRNO
 *       (N = MAX, 20 by default, and ERRNO "none" when nothing refused.)
 *   perfprobe run TYPE CONFIG CPU N MS
 *       A group of N copies, built with the leader disabled and enabled
 *       whole, read after MS milliseconds:
 *           run N enabled_ns running_ns counts_nonzero
 *   perfprobe hold TYPE CONFIG K SECONDS CPU...
 *       Holds K pinned copies of the event on each CPU for SECONDS (or
 *       until killed), printing "holding" once they are open: another
 *       user of the counters, as the NMI watchdog is.
 *   perfprobe pair TYPE CONFIG CPU N1 N2 MS
 *       Two groups of N1 and N2 copies on CPU: their running fractions
 *       after MS milliseconds (rotation):
 *           pair running1/enabled1 running2/enabled2
 *
 *   perfprobe count TYPE CPU MS CONFIG...
 *       Each event alone (its own group), enabled together, read after MS
 *       milliseconds: what the PMU counts for it:
 *           count CONFIG VALUE ENABLED_NS RUNNING_NS
 *   perfprobe hotplug TYPE CONFIG CPU N
 *       A group of N copies on CPU, running; then CPU taken offline by
 *       writing 0 to SYSFS_ROOT/devices/system/cpu/cpuCPU/online, and
 *       online again; what the group reads and what a new open gets:
 *           hotplug online NR RUNNING(0/1)
 *           hotplug offline NR FROZEN(0/1)    (times unchanged over 50 ms)
 *           hotplug open_offline ERRNO
 *           hotplug back NR FROZEN(0/1)
 *           hotplug reopen ERRNO RUNNING(0/1)
 *
 * TYPE is a number or a PMU name under /sys/bus/event_source/devices
 * (SYSFS_ROOT overrides /sys); CONFIG is a number (0x...). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXN 64
#define RF (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

static uint32_t type_of(const char *s)
{
	char path[512], buf[32];
	const char *root = getenv("SYSFS_ROOT");
	FILE *f;

	if (s[0] >= '0' && s[0] <= '9')
		return (uint32_t)strtoul(s, NULL, 0);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/type", root ? root : "/sys", s);
	f = fopen(path, "re");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		fprintf(stderr, "perfprobe: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	return (uint32_t)strtoul(buf, NULL, 10);
}

static int open_one(uint32_t type, uint64_t config, int cpu, int group, int disabled, int pinned)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.read_format = RF;
	a.disabled = disabled;
	a.pinned = pinned;
	a.exclude_guest = 1;
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static void close_all(int *fd, int n)
{
	while (n > 0)
		close(fd[--n]);
}

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "none";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EBUSY: return "EBUSY";
	case E2BIG: return "E2BIG";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EMFILE: return "EMFILE";
	default: return strerror(e);
	}
}

/* Opens up to @max copies as one group; returns how many opened. */
static int group_of(uint32_t type, uint64_t config, int cpu, int max, int lead_off, int memb_off,
		    int *fd, int *err)
{
	int n;

	*err = 0;
	for (n = 0; n < max; n++) {
		fd[n] = open_one(type, config, cpu, n ? fd[0] : -1, n ? memb_off : lead_off, 0);
		if (fd[n] < 0) {
			*err = errno;
			break;
		}
	}
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int read_group(int fd, uint64_t *buf, size_t words)
{
	ssize_t r = read(fd, buf, words * sizeof(uint64_t));

	return r >= (ssize_t)(3 * sizeof(uint64_t)) ? 0 : -1;
}

static int cmd_groups(uint32_t type, uint64_t config, int cpu, int max)
{
	static const char *const names[3] = { "all_disabled", "leader_disabled", "all_enabled" };
	static const int mode[3][2] = { { 1, 1 }, { 1, 0 }, { 0, 0 } };
	int fd[MAXN], err;

	for (int m = 0; m < 3; m++) {
		int n = group_of(type, config, cpu, max, mode[m][0], mode[m][1], fd, &err);

		printf("groups %s %d %s\n", names[m], n, err_name(err));
		close_all(fd, n);
	}
	return 0;
}

static int cmd_run(uint32_t type, uint64_t config, int cpu, int n, long ms)
{
	uint64_t buf[3 + MAXN];
	int fd[MAXN], err, got, nonzero = 0;

	got = group_of(type, config, cpu, n, 1, 0, fd, &err);
	if (got < n) {
		printf("run %d open_failed %s\n", n, err_name(err));
		close_all(fd, got);
		return 0;
	}
	ioctl(fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	sleep_ms(ms);
	if (read_group(fd[0], buf, 3 + MAXN) < 0) {
		printf("run %d read_failed %s\n", n, err_name(errno));
		close_all(fd, n);
		return 0;
	}
	for (uint64_t i = 0; i < buf[0] && i < MAXN; i++)
		nonzero += buf[3 + i] != 0;
	printf("run %d %llu %llu %d\n", n, (unsigned long long)buf[1], (unsigned long long)buf[2], nonzero);
	close_all(fd, n);
	return 0;
}

static int cmd_pair(uint32_t type, uint64_t config, int cpu, int n1, int n2, long ms)
{
	uint64_t b1[3 + MAXN], b2[3 + MAXN];
	int f1[MAXN], f2[MAXN], e1, e2, g1, g2;

	g1 = group_of(type, config, cpu, n1, 1, 0, f1, &e1);
	g2 = group_of(type, config, cpu, n2, 1, 0, f2, &e2);
	if (g1 < n1 || g2 < n2) {
		printf("pair open_failed %s\n", err_name(g1 < n1 ? e1 : e2));
		close_all(f1, g1);
		close_all(f2, g2);
		return 0;
	}
	ioctl(f1[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	ioctl(f2[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	sleep_ms(ms);
	if (read_group(f1[0], b1, 3 + MAXN) < 0 || read_group(f2[0], b2, 3 + MAXN) < 0) {
		printf("pair read_failed\n");
	} else {
		printf("pair %.3f %.3f\n", b1[1] ? (double)b1[2] / (double)b1[1] : 0,
		       b2[1] ? (double)b2[2] / (double)b2[1] : 0);
	}
	close_all(f1, g1);
	close_all(f2, g2);
	return 0;
}

static int cmd_hold(uint32_t type, uint64_t config, int k, double seconds, char **cpus, int ncpus)
{
	int *fd = calloc((size_t)(k * ncpus), sizeof(int)), n = 0;

	if (!fd)
		return 1;
	for (int c = 0; c < ncpus; c++)
		for (int i = 0; i < k; i++) {
			/* Each its own pinned singleton: like the NMI watchdog's
			 * cycles event, placed before any flexible group. */
			fd[n] = open_one(type, config, atoi(cpus[c]), -1, 0, 1);
			if (fd[n] < 0) {
				printf("hold open_failed %s\n", err_name(errno));
				return 1;
			}
			n++;
		}
	printf("holding\n");
	fflush(stdout);
	sleep_ms((long)(seconds * 1000));
	close_all(fd, n);
	free(fd);
	return 0;
}

static int cmd_count(uint32_t type, int cpu, long ms, char **cfg, int n)
{
	uint64_t buf[3 + MAXN];
	int fd[MAXN];

	if (n > MAXN)
		n = MAXN;
	for (int i = 0; i < n; i++)
		fd[i] = open_one(type, strtoull(cfg[i], NULL, 0), cpu, -1, 1, 0);
	for (int i = 0; i < n; i++)
		if (fd[i] >= 0)
			ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0);
	sleep_ms(ms);
	for (int i = 0; i < n; i++) {
		if (fd[i] < 0)
			printf("count %s open_failed\n", cfg[i]);
		else if (read_group(fd[i], buf, 4) < 0)
			printf("count %s read_failed\n", cfg[i]);
		else
			printf("count %s %llu %llu %llu\n", cfg[i], (unsigned long long)buf[3],
			       (unsigned long long)buf[1], (unsigned long long)buf[2]);
	}
	for (int i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return 0;
}

static int set_online(int cpu, int on)
{
	char path[512];
	const char *root = getenv("SYSFS_ROOT");
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/online", root ? root : "/sys", cpu);
	f = fopen(path, "we");
	if (!f)
		return -1;
	r = fprintf(f, "%d\n", on) < 0;
	return fclose(f) || r ? -1 : 0;
}

/* Two reads 50 ms apart with the same enabled and running times: the
 * group no longer counts (detached). */
static int frozen(int fd, uint64_t *nr)
{
	uint64_t a[3 + MAXN], b[3 + MAXN];

	if (read_group(fd, a, 3 + MAXN) < 0)
		return -1;
	sleep_ms(50);
	if (read_group(fd, b, 3 + MAXN) < 0)
		return -1;
	*nr = b[0];
	return a[1] == b[1] && a[2] == b[2];
}

static int cmd_hotplug(uint32_t type, uint64_t config, int cpu, int n)
{
	uint64_t buf[3 + MAXN], nr = 0;
	int fd[MAXN], f2[MAXN], err, got, z;

	got = group_of(type, config, cpu, n, 0, 0, fd, &err);
	if (got < n) {
		printf("hotplug open_failed %s\n", err_name(err));
		close_all(fd, got);
		return 0;
	}
	sleep_ms(50);
	if (read_group(fd[0], buf, 3 + MAXN) < 0)
		return printf("hotplug read_failed\n"), 0;
	printf("hotplug online %llu %d\n", (unsigned long long)buf[0], buf[2] > 0);
	if (set_online(cpu, 0) < 0)
		return printf("hotplug offline_failed %s\n", err_name(errno)), 1;
	sleep_ms(50);
	z = frozen(fd[0], &nr);
	printf("hotplug offline %llu %d\n", (unsigned long long)nr, z);
	f2[0] = open_one(type, config, cpu, -1, 0, 0);
	printf("hotplug open_offline %s\n", err_name(f2[0] < 0 ? errno : 0));
	if (f2[0] >= 0)
		close(f2[0]);
	if (set_online(cpu, 1) < 0)
		return printf("hotplug online_failed %s\n", err_name(errno)), 1;
	sleep_ms(50);
	z = frozen(fd[0], &nr);
	printf("hotplug back %llu %d\n", (unsigned long long)nr, z);
	close_all(fd, n);
	got = group_of(type, config, cpu, n, 0, 0, f2, &err);
	if (got == n) {
		sleep_ms(50);
		z = read_group(f2[0], buf, 3 + MAXN) == 0 && buf[2] > 0;
	} else {
		z = 0;
	}
	printf("hotplug reopen %s %d\n", err_name(err), z);
	close_all(f2, got);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "groups"))
		return cmd_groups(type_of(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]),
				  argc > 5 ? atoi(argv[5]) : 20);
	if (argc == 7 && !strcmp(argv[1], "run"))
		return cmd_run(type_of(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]), atoi(argv[5]),
			       atol(argv[6]));
	if (argc == 8 && !strcmp(argv[1], "pair"))
		return cmd_pair(type_of(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]), atoi(argv[5]),
				atoi(argv[6]), atol(argv[7]));
	if (argc >= 7 && !strcmp(argv[1], "hold"))
		return cmd_hold(type_of(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]), atof(argv[5]),
				argv + 6, argc - 6);
	if (argc >= 6 && !strcmp(argv[1], "count"))
		return cmd_count(type_of(argv[2]), atoi(argv[3]), atol(argv[4]), argv + 5, argc - 5);
	if (argc == 6 && !strcmp(argv[1], "hotplug"))
		return cmd_hotplug(type_of(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]), atoi(argv[5]));
	fprintf(stderr, "usage: perfprobe groups|run|pair|hold|count|hotplug ... (see the source)\n");
	return 2;
}
