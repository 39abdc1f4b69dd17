// SPDX-License-Identifier: (MIT OR GPL-2.0)
/* cgattr: charges each CPU's TopDown counts to the cgroup that used them.
 *
 * Runs on the per-CPU cgroup-switches software event (or sched_switch,
 * where that event does not fire), in the outgoing task's context: reads
 * the CPU's events from the daemon's own per-CPU groups (the `events`
 * array, index event * n_cpus + cpu) and charges the deltas since the
 * previous read on this CPU to the deepest tracked cgroup of the task,
 * else to bucket 0 (other).  The `flush` twin is only ever run by user
 * space on each CPU (BPF_PROG_TEST_RUN) to close the slice running there
 * before it reads the accumulators.  GPL-compatible licence: the
 * bpf_perf_event_read_value() helper requires it. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "../cgacct.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u32 n_cpus = 1;
const volatile __u32 n_events = 1;

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(int));
	__uint(max_entries, 1); /* n_events * n_cpus, set at load */
} events SEC(".maps");

/* cgroup id -> bucket, kept by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, __u32);
	__uint(max_entries, 1); /* the cap, set at load */
} bucket_of SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct cga_bucket);
	__uint(max_entries, 1); /* the cap + 1, set at load */
} acc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct cga_prev);
	__uint(max_entries, 1);
} prev SEC(".maps");

/* The read in progress (too large for the 512-byte stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct cga_read);
	__uint(max_entries, 1);
} scratch SEC(".maps");

static __always_inline int attribute(void)
{
	__u32 zero = 0, cpu = bpf_get_smp_processor_id(), bucket = CGA_OTHER;
	struct cga_read *r = bpf_map_lookup_elem(&scratch, &zero);
	struct cga_prev *p = bpf_map_lookup_elem(&prev, &zero);
	struct cga_bucket *b;

	if (!r || !p)
		return 0;
	r->ok = 0;
	for (__u32 i = 0; i < CGA_EVENTS_MAX; i++) {
		struct bpf_perf_event_value v;

		if (i >= n_events)
			break;
		if (bpf_perf_event_read_value(&events, i * n_cpus + cpu, &v, sizeof(v)))
			continue;
		r->value[i] = v.counter;
		r->enabled[i] = v.enabled;
		r->running[i] = v.running;
		r->ok |= 1u << i;
	}
	/* Root first: the last tracked level seen is the deepest. */
	for (int level = 0; level < CGA_LEVELS; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);
		__u32 *found;

		if (!id)
			break;
		found = bpf_map_lookup_elem(&bucket_of, &id);
		if (found)
			bucket = *found;
	}
	b = bpf_map_lookup_elem(&acc, &bucket);
	if (!b)
		b = bpf_map_lookup_elem(&acc, &zero);
	if (!b)
		return 0;
	cga_account(p, r, b, n_events);
	return 0;
}

/* cppcheck knows not libbpf's section macro. */
// cppcheck-suppress unknownMacro
SEC("perf_event")
int on_switch(void *ctx)
{
	return attribute();
}

SEC("raw_tp/sched_switch")
int on_sched_switch(void *ctx)
{
	return attribute();
}

SEC("raw_tp/sched_switch")
int flush(void *ctx)
{
	return attribute();
}
