/* SPDX-License-Identifier: MIT */
/* perfev: perf_event_open(2), its ioctls and reads (see perfev.h). */
#include "perfev.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void perfev_attr(struct perf_event_attr *attr, uint32_t type, const uint64_t config[3],
		 bool count_kernel, bool count_guest, uint64_t read_format, bool disabled)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = type;
	attr->size = sizeof(*attr);
	attr->config = config[0];
	attr->config1 = config[1];
	attr->config2 = config[2];
	attr->read_format = read_format;
	attr->disabled = disabled;
	/* Fixed counter 3 takes its privilege filter from the leader: the
	 * same bits on every event of a group. */
	attr->exclude_kernel = !count_kernel;
	/* As perf does (tools/perf/util/util.c: event_attr_init): a KVM
	 * host's figures are its own, and a mediated vPMU refuses events
	 * that would count guests. */
	attr->exclude_guest = !count_guest;
}

int perfev_open(struct perf_event_attr *attr, int cpu, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

int perfev_id(int fd, uint64_t *id)
{
	return ioctl(fd, PERF_EVENT_IOC_ID, id) < 0 ? -errno : 0;
}

int perfev_enable_group(int leader)
{
	return ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0 ? -errno : 0;
}

int perfev_disable_group(int leader)
{
	return ioctl(leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) < 0 ? -errno : 0;
}

int perfev_open_cgroup_switches(unsigned cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CGROUP_SWITCHES,
		.sample_period = 1,
		.disabled = 1,
	};

	return perfev_open(&attr, (int)cpu, -1);
}

int perfev_pinned_fits(uint32_t type, const uint64_t (*configs)[3], unsigned n, bool count_kernel,
		       bool count_guest, int cpu)
{
	uint64_t buf[1 + 16];
	int fd[16], r = 1;
	unsigned k = 0;
	ssize_t got;

	if (n == 0 || n > 16)
		return -EINVAL;
	for (; k < n; k++) {
		struct perf_event_attr attr;

		perfev_attr(&attr, type, configs[k], count_kernel, count_guest, PERF_FORMAT_GROUP, k == 0);
		attr.pinned = k == 0;
		fd[k] = perfev_open(&attr, cpu, k ? fd[0] : -1);
		if (fd[k] < 0) {
			r = fd[k];
			break;
		}
	}
	if (r == 1)
		r = perfev_enable_group(fd[0]);
	if (r >= 0) {
		do
			got = perfev_read(fd[0], buf, sizeof(buf));
		while (got == -EINTR);
		r = got < 0 ? (int)got : got > 0;
	}
	/* Members first, the leader last, as perf does. */
	while (k-- > 0)
		close(fd[k]);
	return r;
}
