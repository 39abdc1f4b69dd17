/* SPDX-License-Identifier: MIT */
/* perfev: the perf_event ABI, and the only module that calls it:
 * perf_event_open(2) (every descriptor close-on-exec), the ioctls a group
 * needs (its events' ids, enabling it) and its reads.  The collector,
 * the counter-budget probe and per-cgroup attribution's cgroup-switches
 * events all open through here, so the attributes the daemon gives the
 * kernel are built in one place. */
#ifndef TOPDOWND_PERFEV_H
#define TOPDOWND_PERFEV_H

#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

/* A counting event of PMU @type with @config (config, config1, config2),
 * user space counted, the kernel with @count_kernel, guests with
 * @count_guest; @read_format as given; @disabled for a group leader that
 * PERF_EVENT_IOC_ENABLE starts with its group (as perf does). */
void perfev_attr(struct perf_event_attr *attr, uint32_t type, const uint64_t config[3],
		 bool count_kernel, bool count_guest, uint64_t read_format, bool disabled);

/* perf_event_open(2) on @cpu (every task), in @group_fd's group (-1: a new
 * group), close-on-exec.  The descriptor, or -errno. */
int perfev_open(struct perf_event_attr *attr, int cpu, int group_fd);

/* The kernel's id of @fd's event (PERF_FORMAT_ID records carry it).  0 or
 * -errno. */
int perfev_id(int fd, uint64_t *id);

/* Starts the group @leader leads.  0 or -errno. */
int perfev_enable_group(int leader);
/* Stops it: its counts and times stand still until it is enabled again
 * (the tree below level 2 enables one group per interval).  0 or -errno. */
int perfev_disable_group(int leader);

/* One read(2) of @fd into @buf: the bytes read, or -errno (-EINTR
 * included: the caller decides whether to retry).  Inline: every group
 * of every CPU every interval. */
static inline ssize_t perfev_read(int fd, void *buf, size_t len)
{
	ssize_t r = read(fd, buf, len);

	return r < 0 ? -errno : r;
}

/* Whether a pinned group of the @n events @configs[] of PMU @type fits
 * on @cpu now: 1, 0, or -errno.  The kernel schedules pinned groups
 * before every flexible one (kernel/events/core.c: perf_event_sched_in:
 * cpu pinned, task pinned, cpu flexible, task flexible), so what it
 * measures is the counters other users' pinned events (a watchdog, a
 * pinned profiler) leave; one that does not fit goes to
 * PERF_EVENT_STATE_ERROR when the group is enabled (merge_sched_in) and
 * read() then returns 0 (perf_read).  The group is opened with its
 * leader disabled, enabled whole, read once and closed: flexible groups
 * lose their counters for those microseconds.  At most 16 events. */
int perfev_pinned_fits(uint32_t type, const uint64_t (*configs)[3], unsigned n, bool count_kernel,
		       bool count_guest, int cpu);

/* A disabled software cgroup-switches event on @cpu sampling every switch
 * (per-cgroup attribution attaches its BPF program to it).  The
 * descriptor, or -errno. */
int perfev_open_cgroup_switches(unsigned cpu);

#endif
