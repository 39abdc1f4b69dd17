/* SPDX-License-Identifier: MIT */
/* cgattr: per-cgroup TopDown (cgattr.h). */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgattr.h"
#include "cgbpf.h"
#include "cgroups.h"
#include "log.h"
#include "tma.h"

/* The snapshot keeps a pod's labels whole. */
static_assert(SNAP_POD_UID == KUBE_UID_MAX && SNAP_CONTAINER_ID == KUBE_CONTAINER_MAX,
	      "a snapshot's pod and container IDs are kubepath's");

/* The guard trips after this many intervals over budget in a row: one
 * burst of switches (a deploy) does not end attribution. */
#define OVER_BUDGET_INTERVALS 3

struct bucket {
	/* What its per-CPU accumulators summed to at the last read, per core
	 * PMU (event positions differ between P- and E-cores). */
	struct cga_bucket last[PMU_CORE_MAX];
	struct snap_counts c;
};

struct cgattr {
	struct cgattr_params p;
	td_catset cats;
	struct collector *coll;
	struct cgroups *groups;
	struct cgbpf *bpf;
	bool attributing;
	bool attached; /* the trigger is on: CPUs (re)opened later attach anew */
	const char *trigger;
	char reason[SNAP_REASON];
	unsigned n_events; /* per CPU in the BPF arrays */
	unsigned n_bcpus;  /* the kernel's possible CPUs */
	struct cga_bucket *percpu;
	uint64_t *opened;  /* per CPU: the collector's open count fed in */
	unsigned *fed;     /* per CPU: events in the program's array */
	int *pmu_of;       /* per CPU: its core PMU this interval, -1 if none */
	unsigned *online;  /* CPUs with a group, this interval */
	struct bucket *buckets; /* cap + 1: other, then the slots' */
	unsigned dropped;
	unsigned too_long;
	/* The guard. */
	uint64_t guard_ns, guard_run_ns, guard_runs;
	unsigned over;
	double switches, bpf_seconds;
};

double cgattr_cost(uint64_t run_ns, uint64_t window_ns, unsigned n_cpus)
{
	if (!window_ns || !n_cpus)
		return 0;
	return (double)run_ns / ((double)window_ns * n_cpus);
}

static void stop(struct cgattr *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void stop(struct cgattr *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
	va_end(ap);
	if (a->bpf) {
		char why[SNAP_REASON];

		cgbpf_detach(a->bpf);
		/* The array holds each event's file (kernel/bpf/arraymap.c:
		 * perf_event_fd_array_get_ptr): left there, a group the
		 * collector closes later stays alive and enabled, competing
		 * for the counters with its successor.  Emptied now. */
		for (unsigned cpu = 0; cpu < a->n_bcpus; cpu++) {
			for (unsigned ev = 0; ev < a->fed[cpu]; ev++)
				if (cgbpf_set_event(a->bpf, cpu, ev, -1, why, sizeof(why)) < 0)
					log_warning("Per-cgroup attribution: cannot empty the event array: %s", why);
			a->fed[cpu] = 0;
		}
	}
	a->attributing = false;
}

/* The events of every CPU whose groups were (re)opened since the last
 * interval go into the program's array. */
static int feed_events(struct cgattr *a, unsigned *n_online)
{
	unsigned n = collector_cpus(a->coll);
	char why[SNAP_REASON];

	*n_online = 0;
	for (unsigned i = 0; i < n; i++) {
		const int *fds;
		uint64_t opened;
		int pmu, number;
		unsigned k = collector_cpu_events(a->coll, i, &number, &fds, &pmu, &opened), cpu;
		bool reopened;

		/* The kernel's possible CPUs are the BPF arrays' (a sysfs root
		 * that says otherwise is not this kernel's). */
		if (number < 0 || (unsigned)number >= a->n_bcpus)
			continue;
		cpu = (unsigned)number;
		reopened = opened != a->opened[cpu];
		a->pmu_of[cpu] = k ? pmu : -1;
		if (k)
			a->online[(*n_online)++] = cpu;
		/* Closed groups leave the array (it would keep them alive). */
		if (!reopened && !(k == 0 && a->fed[cpu]))
			continue;
		if (k > a->n_events) {
			stop(a, "per-cgroup attribution is off: CPU %u now has %u events, attribution was set up "
			     "for %u (a reload changed [collect] level or model); restart topdownd", cpu, k,
			     a->n_events);
			return -E2BIG;
		}
		for (unsigned ev = 0; ev < a->n_events; ev++) {
			int r = cgbpf_set_event(a->bpf, cpu, ev, ev < k ? fds[ev] : -1, why, sizeof(why));

			if (r < 0) {
				stop(a, "per-cgroup attribution is off: %s", why);
				return r;
			}
		}
		a->fed[cpu] = k;
		/* A CPU back from offline needs its trigger again (not at start:
		 * cgbpf_attach does all of them). */
		if (reopened && k && a->attached && cgbpf_attach_cpu(a->bpf, cpu, why, sizeof(why)) < 0)
			log_warning("Per-cgroup attribution on CPU %u: %s; its slices are charged at each interval "
				    "only", cpu, why);
		a->opened[cpu] = opened;
	}
	return 0;
}

static void reset_bucket(struct cgattr *a, unsigned bucket)
{
	memset(&a->buckets[bucket], 0, sizeof(a->buckets[bucket]));
	a->buckets[bucket].c.cats = a->cats;
}

static struct log_ratelimit dropped_rl = LOG_RATELIMIT_INIT(600 * UINT64_C(1000000000), 1);

static void apply_changes(struct cgattr *a, const struct cgroups_change *ch)
{
	for (unsigned i = 0; i < ch->n_gone; i++)
		cgbpf_untrack(a->bpf, cgroups_get(a->groups, ch->gone[i])->id);
	for (unsigned i = 0; i < ch->n_added; i++) {
		const struct cgroup_entry *e = cgroups_get(a->groups, ch->added[i]);

		reset_bucket(a, e->bucket);
		if (cgbpf_zero(a->bpf, e->bucket) < 0 || cgbpf_track(a->bpf, e->id, e->bucket) < 0)
			log_warning("Failed to track cgroup %s; its slices count as other", e->path);
	}
	/* When it starts, at most every 10 minutes: under churn the count
	 * leaves and comes back to 0 every few seconds (1,800 lines an hour
	 * seen); topdown_cgroups{state="dropped"} follows it. */
	if (ch->dropped > ch->too_long && !a->dropped)
		log_ratelimited(&dropped_rl, LOG_LEVEL_WARNING, 0,
				"%u cgroups match [cgroups] track beyond max_cgroups=%u; their slices count as "
				"other (raise max_cgroups or narrow track)",
				ch->dropped - ch->too_long, a->p.cap);
	if (ch->too_long && !a->too_long)
		log_warning("%u cgroups match [cgroups] track with a path longer than %d bytes; their slices "
			    "count as other (topdown_cgroups{state=\"dropped\"})",
			    ch->too_long, CGROUPS_PATH_MAX - 1);
	a->too_long = ch->too_long;
	a->dropped = ch->dropped;
}

void cgattr_compute(const struct tma_model *model, const enum td_event *var, unsigned n_events,
		    const struct cga_bucket *delta, double *slots, double frac_slots[TD_CAT_COUNT])
{
	struct tma_input in;
	struct tma_result res;

	memset(&in, 0, sizeof(in));
	*slots = 0;
	for (unsigned k = 0; k < TD_CAT_COUNT; k++)
		frac_slots[k] = 0;
	for (unsigned ev = 0; ev < n_events && ev < CGA_EVENTS_MAX; ev++) {
		double dr = (double)delta->running[ev];

		/* Scaled for multiplexing as a CPU's read is. */
		in.v[var[ev]] = dr > 0 ? (double)delta->value[ev] * (double)delta->enabled[ev] / dr : 0;
	}
	if (!n_events || tma_compute(model, &in, &res) < 0)
		return;
	*slots = res.slots;
	for (unsigned k = 0; k < TD_CAT_COUNT; k++)
		frac_slots[k] = res.frac[k] * res.slots;
}

/* At debug level, what a bucket's slices counted on one core PMU since
 * the last interval, scaled, as a CPU's read logs it (collector). */
static void log_bucket(const struct cgattr *a, const char *name, unsigned pmu, unsigned n,
		       const struct cga_bucket *delta)
{
	char line[LOG_LINE_MAX];
	int len;

	if (!log_level_enabled(LOG_LEVEL_DEBUG))
		return;
	len = snprintf(line, sizeof(line), "cgroup %s counts (PMU %u): enabled %.6f s, running %.6f s:", name, pmu,
		       (double)delta->enabled[0] / 1e9, (double)delta->running[0] / 1e9);
	for (unsigned ev = 0; ev < n && ev < CGA_EVENTS_MAX && len > 0 && (size_t)len < sizeof(line); ev++) {
		double dr = (double)delta->running[ev];

		len += snprintf(line + len, sizeof(line) - (size_t)len, " %s=%.0f",
				collector_pmu_event_name(a->coll, pmu, ev),
				dr > 0 ? (double)delta->value[ev] * (double)delta->enabled[ev] / dr : 0);
	}
	log_debug("%s", line);
}

/* Adds one bucket's counts since its last read to its totals. */
static void account_bucket(struct cgattr *a, unsigned bucket, const char *name)
{
	struct bucket *bk = &a->buckets[bucket];
	struct cga_bucket now[PMU_CORE_MAX];
	double slots = 0, frac_slots[TD_CAT_COUNT] = { 0 }, enabled = 0, running = 0;

	memset(now, 0, sizeof(now));
	if (cgbpf_read(a->bpf, bucket, a->percpu) < 0)
		return;
	for (unsigned cpu = 0; cpu < a->n_bcpus; cpu++) {
		int pmu = a->pmu_of[cpu];

		if (pmu < 0 || pmu >= PMU_CORE_MAX)
			continue;
		for (unsigned ev = 0; ev < a->n_events; ev++) {
			now[pmu].value[ev] += a->percpu[cpu].value[ev];
			now[pmu].enabled[ev] += a->percpu[cpu].enabled[ev];
			now[pmu].running[ev] += a->percpu[cpu].running[ev];
		}
	}
	for (unsigned pmu = 0; pmu < collector_pmus(a->coll) && pmu < PMU_CORE_MAX; pmu++) {
		const struct tma_model *model;
		const enum td_event *var;
		unsigned n = collector_pmu_arith(a->coll, pmu, &model, &var);
		struct cga_bucket delta;
		double s, fs[TD_CAT_COUNT];

		memset(&delta, 0, sizeof(delta));
		for (unsigned ev = 0; ev < n && ev < a->n_events; ev++) {
			delta.value[ev] = now[pmu].value[ev] - bk->last[pmu].value[ev];
			delta.enabled[ev] = now[pmu].enabled[ev] - bk->last[pmu].enabled[ev];
			delta.running[ev] = now[pmu].running[ev] - bk->last[pmu].running[ev];
		}
		bk->last[pmu] = now[pmu];
		if (!n)
			continue;
		log_bucket(a, name, pmu, n, &delta);
		enabled += (double)delta.enabled[0];
		running += (double)delta.running[0];
		cgattr_compute(model, var, n, &delta, &s, fs);
		slots += s;
		for (unsigned k = 0; k < TD_CAT_COUNT; k++)
			frac_slots[k] += fs[k];
	}
	bk->c.last[TD_C_SLOTS] = slots;
	bk->c.last[TD_C_ENABLED] = enabled;
	bk->c.last[TD_C_RUNNING] = running;
	for (unsigned k = 0; k < TD_CAT_COUNT; k++)
		bk->c.last[TD_C_CAT + k] = td_catset_has(a->cats, k) ? frac_slots[k] : 0;
	for (unsigned k = 0; k < TD_C_COUNT; k++)
		bk->c.total[k] += bk->c.last[k];
}

static void guard(struct cgattr *a, uint64_t now_ns, unsigned n_online)
{
	uint64_t run_ns, runs;
	double cost;

	if (cgbpf_stats(a->bpf, &run_ns, &runs) < 0)
		return;
	a->switches += (double)(runs - a->guard_runs);
	a->bpf_seconds += (double)(run_ns - a->guard_run_ns) / 1e9;
	cost = cgattr_cost(run_ns - a->guard_run_ns, now_ns - a->guard_ns, n_online);
	if (cost > a->p.budget && ++a->over >= OVER_BUDGET_INTERVALS) {
		double secs = (double)(now_ns - a->guard_ns) / 1e9;
		double rate = secs > 0 ? (double)(runs - a->guard_runs) / secs / n_online : 0;
		double per = runs > a->guard_runs ? (double)(run_ns - a->guard_run_ns) /
						    (double)(runs - a->guard_runs) / 1e3 : 0;

		stop(a, "per-cgroup attribution stopped: it cost %.2f%% of each CPU (%.0f switches/s per CPU "
		     "x %.2f us), over the budget of %.2f%% ([cgroups] budget)", cost * 100, rate, per,
		     a->p.budget * 100);
		log_warning("%s; per-host figures go on", a->reason);
	} else if (cost <= a->p.budget) {
		a->over = 0;
	}
	a->guard_ns = now_ns;
	a->guard_run_ns = run_ns;
	a->guard_runs = runs;
}

static struct log_ratelimit scan_rl = LOG_RATELIMIT_INIT(60 * UINT64_C(1000000000), 1);

void cgattr_collect(struct cgattr *a, uint64_t now_ns, struct snapshot *snap)
{
	struct cgroups_change ch;
	unsigned n_online;
	int r;

	if (a->attributing && feed_events(a, &n_online) == 0) {
		if (!a->guard_ns)
			a->guard_ns = now_ns;
		r = cgroups_scan(a->groups, &ch);
		if (r == 0)
			apply_changes(a, &ch);
		else
			log_ratelimited(&scan_rl, LOG_LEVEL_WARNING, r,
					"Failed to read the cgroup tree under %s: %m; the cgroups tracked so far "
					"stay tracked", a->p.root);
		for (unsigned i = 0; i < n_online; i++)
			cgbpf_flush(a->bpf, a->online[i]);
		account_bucket(a, CGA_OTHER, "other");
		for (unsigned s = 0; s < cgroups_slots(a->groups); s++)
			if (cgroups_live(a->groups, s))
				account_bucket(a, cgroups_get(a->groups, s)->bucket, cgroups_get(a->groups, s)->path);
		guard(a, now_ns, n_online);
	}
	cgattr_fill(a, snap);
}

void cgattr_fill(const struct cgattr *a, struct snapshot *snap)
{
	struct snap_cgstat *cg = &snap->cg;

	memset(cg, 0, sizeof(*cg));
	cg->enabled = true;
	cg->attributing = a->attributing;
	cg->level = a->p.level;
	snprintf(cg->trigger, sizeof(cg->trigger), "%s", a->trigger ? a->trigger : "");
	snprintf(cg->reason, sizeof(cg->reason), "%s", a->reason);
	cg->switches = a->switches;
	cg->bpf_seconds = a->bpf_seconds;
	snap->n_cgroups = 0;
	if (!a->attributing)
		return;
	cg->tracked = cgroups_tracked(a->groups);
	cg->dropped = a->dropped;
	snap->cgroups[0] = (struct snap_cgroup){ .name = "other", .c = a->buckets[CGA_OTHER].c };
	snap->n_cgroups = 1;
	for (unsigned s = 0; s < cgroups_slots(a->groups); s++) {
		const struct cgroup_entry *e = cgroups_get(a->groups, s);
		struct snap_cgroup *out;

		if (!cgroups_live(a->groups, s))
			continue;
		out = &snap->cgroups[snap->n_cgroups++];
		memcpy(out->name, e->path, SNAP_CGROUP_NAME);
		memcpy(out->pod_uid, e->kube.pod_uid, SNAP_POD_UID);
		memcpy(out->container_id, e->kube.container_id, SNAP_CONTAINER_ID);
		out->qos_class = e->is_pod ? e->kube.qos_class : NULL;
		out->c = a->buckets[e->bucket].c;
	}
}

const char *cgattr_reason(const struct cgattr *a)
{
	return a->reason;
}

const char *cgattr_trigger(const struct cgattr *a)
{
	return a->trigger ? a->trigger : "";
}

static unsigned max_events(struct collector *coll)
{
	unsigned n = 0;

	for (unsigned pmu = 0; pmu < collector_pmus(coll); pmu++) {
		const struct tma_model *model;
		const enum td_event *var;
		unsigned k = collector_pmu_arith(coll, pmu, &model, &var);

		if (k > n)
			n = k;
	}
	return n;
}

static void start(struct cgattr *a)
{
	struct cgroups_change ch;
	unsigned n_online, n_buckets = a->p.cap + 1;
	char why[SNAP_REASON];
	int r;

	a->n_events = max_events(a->coll);
	if (!a->n_events) {
		stop(a, "per-cgroup attribution is off: no core PMU with TopDown is monitored");
		return;
	}
	if (!a->p.root[0]) {
		stop(a, "per-cgroup attribution is off: no cgroup v2 hierarchy is mounted; mount one "
		     "(mount -t cgroup2 none /sys/fs/cgroup) or set [cgroups] root");
		return;
	}
	r = cgroups_new(a->p.root, a->p.globs, a->p.n_globs, a->p.cap, &a->groups);
	if (r < 0) {
		stop(a, "per-cgroup attribution is off: cannot use the cgroup root %s (%s)", a->p.root,
		     strerror(-r));
		return;
	}
	r = cgbpf_new(a->n_events, n_buckets, a->p.cap, why, sizeof(why), &a->bpf);
	if (r < 0) {
		stop(a, "per-cgroup attribution is off: %s", why);
		return;
	}
	a->n_bcpus = cgbpf_cpus(a->bpf);
	a->percpu = calloc(a->n_bcpus, sizeof(*a->percpu));
	a->opened = calloc(a->n_bcpus, sizeof(*a->opened));
	a->fed = calloc(a->n_bcpus, sizeof(*a->fed));
	a->pmu_of = calloc(a->n_bcpus, sizeof(*a->pmu_of));
	a->online = calloc(a->n_bcpus, sizeof(*a->online));
	if (!a->percpu || !a->opened || !a->fed || !a->pmu_of || !a->online) {
		stop(a, "per-cgroup attribution is off: out of memory");
		return;
	}
	for (unsigned cpu = 0; cpu < a->n_bcpus; cpu++)
		a->pmu_of[cpu] = -1;
	a->attributing = true;
	if (feed_events(a, &n_online) < 0)
		return;
	if (cgroups_scan(a->groups, &ch) == 0)
		apply_changes(a, &ch);
	r = cgbpf_attach(a->bpf, a->online, n_online, !a->p.sched_switch, &a->trigger, why, sizeof(why));
	if (r < 0) {
		stop(a, "per-cgroup attribution is off: %s", why);
		return;
	}
	a->attached = true;
	/* The first run on each CPU only sets its baseline. */
	for (unsigned i = 0; i < n_online; i++)
		cgbpf_flush(a->bpf, a->online[i]);
}

int cgattr_new(const struct cgattr_params *p, struct cgattr **ret)
{
	struct cgattr *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->p = *p;
	a->coll = p->collector;
	a->cats = td_catset_level(p->cats, 1) | (p->level >= 2 ? td_catset_level(p->cats, 2) : 0);
	a->buckets = calloc(p->cap + 1, sizeof(*a->buckets));
	if (!a->buckets) {
		free(a);
		return -ENOMEM;
	}
	for (unsigned b = 0; b <= p->cap; b++)
		reset_bucket(a, b);
	start(a);
	*ret = a;
	return 0;
}

void cgattr_free(struct cgattr *a)
{
	if (!a)
		return;
	cgbpf_free(a->bpf);
	cgroups_free(a->groups);
	free(a->percpu);
	free(a->opened);
	free(a->fed);
	free(a->pmu_of);
	free(a->online);
	free(a->buckets);
	free(a);
}
