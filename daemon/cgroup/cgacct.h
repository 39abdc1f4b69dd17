/* SPDX-License-Identifier: MIT */
/* cgacct: the per-cgroup slice accounting, compiled both into the BPF
 * program (bpf/cgattr.bpf.c) and into user space (tests replay schedules
 * through it).  A CPU's events are read at every cgroup switch; the
 * deltas since the previous read on that CPU go to exactly one bucket,
 * so the buckets partition the CPU's counts.  Plain arrays, no helpers,
 * no libc: the verifier and the host compiler both take it. */
#ifndef TOPDOWND_CGACCT_H
#define TOPDOWND_CGACCT_H

#include <linux/types.h>

/* Events attributed per CPU (a core PMU's whole plan must fit). */
#define CGA_EVENTS_MAX 24u
/* Cgroup levels walked from the root for the deepest tracked one. */
#define CGA_LEVELS 16
/* Bucket 0: every slice whose cgroup is not tracked. */
#define CGA_OTHER 0

/* One read of a CPU's events at a slice boundary; bit i of ok: event i
 * was read (an event not open on that CPU is not). */
struct cga_read {
	__u64 value[CGA_EVENTS_MAX];
	__u64 enabled[CGA_EVENTS_MAX];
	__u64 running[CGA_EVENTS_MAX];
	__u32 ok;
};

/* The previous read of one CPU. */
struct cga_prev {
	__u64 value[CGA_EVENTS_MAX];
	__u64 enabled[CGA_EVENTS_MAX];
	__u64 running[CGA_EVENTS_MAX];
	__u32 primed; /* bit i: value[i] holds a read */
};

/* What one bucket accumulated on one CPU since the bucket was zeroed. */
struct cga_bucket {
	__u64 value[CGA_EVENTS_MAX];
	__u64 enabled[CGA_EVENTS_MAX];
	__u64 running[CGA_EVENTS_MAX];
	__u64 slices;
};

/* Charges the slice that ends with read @r to bucket @b.  An event read
 * for the first time only sets its baseline; one that went backwards was
 * reopened (hotplug, reload), and its new count is the new baseline: at
 * most that one slice is lost, never a negative delta.  Returns the
 * events charged. */
static inline __u32 cga_account(struct cga_prev *p, const struct cga_read *r,
				struct cga_bucket *b, __u32 n_events)
{
	__u32 charged = 0;

	for (__u32 i = 0; i < CGA_EVENTS_MAX; i++) {
		__u32 bit = 1u << i;

		if (i >= n_events)
			break;
		if (!(r->ok & bit))
			continue;
		if ((p->primed & bit) && r->value[i] >= p->value[i] &&
		    r->enabled[i] >= p->enabled[i] && r->running[i] >= p->running[i]) {
			b->value[i] += r->value[i] - p->value[i];
			b->enabled[i] += r->enabled[i] - p->enabled[i];
			b->running[i] += r->running[i] - p->running[i];
			charged++;
		}
		p->value[i] = r->value[i];
		p->enabled[i] = r->enabled[i];
		p->running[i] = r->running[i];
		p->primed |= bit;
	}
	b->slices++;
	return charged;
}

#endif
