/* SPDX-License-Identifier: MIT */
/* cgbpf: the kernel side of per-cgroup attribution.  Loads the embedded
 * BPF object (bpf/cgattr.bpf.c, a libbpf skeleton), puts the daemon's
 * per-CPU event descriptors in its perf event array, triggers it on every
 * CPU's cgroup switches (the cgroup-switches software event, else the
 * sched_switch tracepoint), keeps its cgroup-to-bucket map, flushes the
 * slice running on a CPU, reads the per-CPU accumulators and the kernel's
 * run-time statistics of the program.  Library-like: logs at debug only;
 * failures come back as -errno with a sentence for the operator. */
#ifndef TOPDOWND_CGBPF_H
#define TOPDOWND_CGBPF_H

#include <stddef.h>
#include <stdint.h>

#include "cgacct.h"

struct cgbpf;

/* @n_events (<= CGA_EVENTS_MAX) per CPU, @n_buckets (bucket 0 is other)
 * and @max_tracked cgroup ids.  @why says what failed and what to do. */
int cgbpf_new(unsigned n_events, unsigned n_buckets, unsigned max_tracked, char *why,
	      size_t whylen, struct cgbpf **ret);
void cgbpf_free(struct cgbpf *b);

/* The CPUs the accumulators hold (the kernel's possible CPUs). */
unsigned cgbpf_cpus(const struct cgbpf *b);

/* Event @ev of @cpu reads from @fd (an open perf event, not inherited);
 * @fd < 0 removes it. */
int cgbpf_set_event(struct cgbpf *b, unsigned cpu, unsigned ev, int fd, char *why,
		    size_t whylen);

/* Starts charging on @cpus (n of them): cgroup-switches when @prefer_switches
 * and the kernel has it, else sched_switch.  Returns the trigger used
 * through @trigger ("cgroup-switches" or "sched_switch"). */
int cgbpf_attach(struct cgbpf *b, const unsigned *cpus, unsigned n, int prefer_switches,
		 const char **trigger, char *why, size_t whylen);
/* Attaches the trigger to @cpu anew (its events were reopened: it went
 * offline and came back); nothing to do under sched_switch. */
int cgbpf_attach_cpu(struct cgbpf *b, unsigned cpu, char *why, size_t whylen);
/* Stops charging (the accumulators stay readable). */
void cgbpf_detach(struct cgbpf *b);

int cgbpf_track(struct cgbpf *b, uint64_t cgroup_id, unsigned bucket);
int cgbpf_untrack(struct cgbpf *b, uint64_t cgroup_id);
/* Zeroes @bucket on every CPU (before it is given to another cgroup). */
int cgbpf_zero(struct cgbpf *b, unsigned bucket);

/* Closes the slice running on @cpu now (charging it). */
int cgbpf_flush(struct cgbpf *b, unsigned cpu);
/* @bucket on every CPU: @out holds cgbpf_cpus() entries. */
int cgbpf_read(struct cgbpf *b, unsigned bucket, struct cga_bucket *out);

/* The kernel's statistics of the program since cgbpf_attach (the
 * trigger's runs, not the flushes): nanoseconds run and runs. */
int cgbpf_stats(struct cgbpf *b, uint64_t *run_ns, uint64_t *runs);

#endif
