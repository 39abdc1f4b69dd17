/* SPDX-License-Identifier: MIT */
/* cgsim: per-cgroup TopDown's arithmetic under the fake PMU, with a
 * simulated backend in place of the BPF program (which the fake cannot
 * run).  Run under LD_PRELOAD=libfakepmu.so with FAKEPMU_CLOCK_FILE:
 *
 *   cgsim FIXTURE SCENARIO CLOCK_FILE
 *
 * Opens the daemon's groups with its own modules (discovery, plan,
 * collector), then walks the scenario's time line: each CPU's phases name
 * the cgroup running ("cgroup"); at every phase boundary it sets the fake
 * clock there and, for each CPU whose phase ends, reads the CPU's events
 * and charges the slice to that cgroup with the accounting core the BPF
 * program uses (cgacct.h), as the program does at a cgroup switch.  Then
 * each cgroup's counts go through the daemon's per-cgroup arithmetic
 * (cgattr_compute) and the collector reads the host once.  Prints JSON:
 * {"cgroups": {NAME: {"slots": S, "frac": {CATEGORY: F}}}, "host_slots": S,
 *  "bucket_slots": S, "slices": N}. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cgacct.h"
#include "cgattr.h"
#include "collector.h"
#include "config.h"
#include "cpuset.h"
#include "plan.h"
#include "pmu.h"
#include "snapshot.h"
#include "sysfs.h"
#include "topo.h"

#define MAX_CPUS 256
#define MAX_PHASES 4096
#define MAX_GROUPS 32

struct timeline {
	unsigned n;
	double end[MAX_PHASES];
	int cgroup[MAX_PHASES];
};

static const char *clock_path;
static char names[MAX_GROUPS][64];
static unsigned n_names;
static struct timeline tl[MAX_CPUS];
static struct cga_prev prev[MAX_CPUS];
static struct cga_bucket acc[MAX_GROUPS][PMU_CORE_MAX];

static void die(const char *what)
{
	fprintf(stderr, "cgsim: %s\n", what);
	exit(2);
}

static void set_clock(double t)
{
	FILE *f = fopen(clock_path, "w");

	if (!f || fprintf(f, "%.9f\n", t) < 0 || fclose(f) != 0)
		die("cannot write the clock file");
}

static int cgroup_index(const char *name)
{
	for (unsigned i = 0; i < n_names; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	if (n_names == MAX_GROUPS || strlen(name) >= sizeof(names[0]))
		die("too many cgroups, or a name too long");
	strcpy(names[n_names], name);
	return (int)n_names++;
}

/* Each CPU's phases (tl[i] for the collector's CPU i, numbered
 * numbers[i]): its own key (a CPU list holding it) or "default". */
static void load_timelines(const char *path, unsigned n_cpus, const int *numbers)
{
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err), *cpus;
	const char *key;
	json_t *val;

	if (!root || !(cpus = json_object_get(root, "cpus")))
		die("cannot read the scenario's cpus");
	for (unsigned i = 0; i < n_cpus && i < MAX_CPUS; i++) {
		json_t *spec = json_object_get(cpus, "default"), *phases, *ph;
		double t = 0;
		size_t k;

		json_object_foreach(cpus, key, val) {
			struct cpuset set;
			char e[64];

			if (strcmp(key, "default") != 0 && cpuset_parse(key, &set, e, sizeof(e)) == 0 &&
			    numbers[i] >= 0 && cpuset_test(&set, (unsigned)numbers[i]))
				spec = val;
		}
		if (!spec || !(phases = json_object_get(spec, "phases")))
			continue;
		json_array_foreach(phases, k, ph) {
			json_t *secs = json_object_get(ph, "seconds"), *cg = json_object_get(ph, "cgroup");

			if (!json_is_number(secs) || !json_is_string(cg))
				die("every phase needs seconds and cgroup");
			if (tl[i].n == MAX_PHASES)
				die("too many phases");
			t += json_number_value(secs);
			tl[i].end[tl[i].n] = t;
			tl[i].cgroup[tl[i].n++] = cgroup_index(json_string_value(cg));
		}
	}
	json_decref(root);
}

/* What the BPF program reads at a switch: each of the CPU's events (its
 * groups are consecutive in plan order: each leader's read gives its
 * members, the next leader follows). */
static int read_cpu(struct collector *c, unsigned index, struct cga_read *r, int *pmu)
{
	uint64_t buf[3 + 2 * CGA_EVENTS_MAX], opened;
	const int *fds;
	int cpu;
	unsigned n = collector_cpu_events(c, index, &cpu, &fds, pmu, &opened);

	if (!n)
		return -ENOENT;
	memset(r, 0, sizeof(*r));
	for (unsigned lead = 0; lead < n;) {
		ssize_t got = read(fds[lead], buf, sizeof(buf));

		if (got < (ssize_t)(3 * sizeof(uint64_t)) || buf[0] == 0 || lead + buf[0] > n)
			return -EIO;
		for (unsigned i = 0; i < buf[0]; i++) {
			r->value[lead + i] = buf[3 + 2 * i];
			r->enabled[lead + i] = buf[1];
			r->running[lead + i] = buf[2];
			r->ok |= 1u << (lead + i);
		}
		lead += (unsigned)buf[0];
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct config cfg;
	static struct pmu_info pmu;
	static struct plan plan;
	struct collector_params params = { 0 };
	struct cga_bucket scratch;
	struct collector *coll;
	struct snapring *ring;
	struct snapshot *snap;
	struct sysfs *sysfs;
	struct topo *topo;
	static int numbers[MAX_CPUS];
	unsigned n_cpus, slices = 0;
	double now = 0, bucket_slots = 0;
	json_t *out, *groups;

	if (argc != 4)
		die("usage: cgsim FIXTURE SCENARIO CLOCK_FILE");
	clock_path = argv[3];
	set_clock(0);
	config_defaults(&cfg);
	if (sysfs_new(argv[1], &sysfs) < 0 || topo_new(sysfs, &topo) < 0 || pmu_discover(sysfs, &pmu) < 0)
		die("cannot read the fixture");
	/* perf's tables give the counters: no probe, whose reads would see a
	 * clock standing still. */
	plan_make(&pmu, topo, &cfg, NULL, &plan);
	params.sysfs = sysfs;
	params.topo = topo;
	params.pmu = &pmu;
	params.plan = &plan;
	params.count_kernel = cfg.count_kernel;
	params.count_guest = cfg.count_guest;
	params.oneshot = true;
	params.interval_ns = cfg.interval_ns;
	params.fd_others_want = params.fd_others_min = 64;
	if (collector_new(&params, &coll) < 0 || collector_start(coll) < 0 ||
	    snapring_new(collector_capacity(coll), 0, &ring) < 0)
		die("cannot open the groups");
	n_cpus = collector_cpus(coll);
	for (unsigned i = 0; i < n_cpus && i < MAX_CPUS; i++) {
		const int *fds;
		uint64_t opened;
		int p;

		collector_cpu_events(coll, i, &numbers[i], &fds, &p, &opened);
	}
	load_timelines(argv[2], n_cpus, numbers);

	/* The baseline: the first read on each CPU, as right after attach. */
	for (unsigned i = 0; i < n_cpus && i < MAX_CPUS; i++) {
		struct cga_read r;
		int p;

		if (read_cpu(coll, i, &r, &p) == 0)
			cga_account(&prev[i], &r, &scratch, CGA_EVENTS_MAX);
	}
	/* Every boundary, in time order: the CPUs whose phase ends there. */
	for (;;) {
		double next = -1;

		for (unsigned i = 0; i < n_cpus && i < MAX_CPUS; i++)
			for (unsigned k = 0; k < tl[i].n; k++)
				if (tl[i].end[k] > now + 1e-12) {
					if (next < 0 || tl[i].end[k] < next)
						next = tl[i].end[k];
					break;
				}
		if (next < 0)
			break;
		now = next;
		set_clock(now);
		for (unsigned i = 0; i < n_cpus && i < MAX_CPUS; i++)
			for (unsigned k = 0; k < tl[i].n; k++) {
				struct cga_read r;
				int p;

				if (tl[i].end[k] < now - 1e-12 || tl[i].end[k] > now + 1e-12)
					continue;
				if (read_cpu(coll, i, &r, &p) == 0 && p >= 0 && p < PMU_CORE_MAX) {
					cga_account(&prev[i], &r, &acc[tl[i].cgroup[k]][p], CGA_EVENTS_MAX);
					slices++;
				}
			}
	}

	out = json_object();
	groups = json_object();
	for (unsigned g = 0; g < n_names; g++) {
		double slots = 0, frac[TD_CAT_COUNT] = { 0 };
		json_t *o = json_object(), *f = json_object();

		for (unsigned p = 0; p < collector_pmus(coll) && p < PMU_CORE_MAX; p++) {
			const struct tma_model *model;
			const enum td_event *var;
			unsigned n = collector_pmu_arith(coll, p, &model, &var);
			double s, fs[TD_CAT_COUNT];

			cgattr_compute(model, var, n, &acc[g][p], &s, fs);
			slots += s;
			for (unsigned k = 0; k < TD_CAT_COUNT; k++)
				frac[k] += fs[k];
		}
		bucket_slots += slots;
		for (unsigned k = 0; k < TD_CAT_COUNT; k++)
			if (td_catset_has(plan.cats, (enum td_cat)k))
				json_object_set_new(f, td_cat[k].name, json_real(slots > 0 ? frac[k] / slots : 0));
		json_object_set_new(o, "slots", json_real(slots));
		json_object_set_new(o, "frac", f);
		json_object_set_new(groups, names[g], o);
	}
	/* The host as the daemon reads it, over the same counters. */
	snap = snapring_begin(ring);
	collector_collect(coll, (uint64_t)(now * 1e9), snap);
	snapshot_aggregate(snap);
	json_object_set_new(out, "cgroups", groups);
	json_object_set_new(out, "host_slots", json_real(snap->host.total[TD_C_SLOTS]));
	json_object_set_new(out, "bucket_slots", json_real(bucket_slots));
	json_object_set_new(out, "slices", json_integer(slices));
	json_dumpf(out, stdout, JSON_INDENT(1) | JSON_SORT_KEYS);
	putchar('\n');
	json_decref(out);
	snapring_free(ring);
	collector_free(coll);
	topo_free(topo);
	sysfs_free(sysfs);
	return 0;
}
