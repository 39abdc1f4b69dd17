/* SPDX-License-Identifier: MIT */
/* topo: CPU lists and per-CPU topology from devices/system/{cpu,node}. */
#include "topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU_DIR "devices/system/cpu"
#define NODE_DIR "devices/system/node"

struct topo {
	struct cpuset possible;
	struct cpuset present;
	struct cpuset online;
	struct cpuset isolated; /* isolcpus= or nohz_full= */
	unsigned n_slots;      /* last possible CPU + 1 */
	struct topo_cpu *cpus; /* indexed by CPU number */
	int *node_of;          /* from nodeN/cpulist, -1 if unlisted */
	char *listbuf;         /* LIST_MAX bytes, reused: no allocation per refresh */
};

/* Large enough for "0-8191" lists with holes on big machines. */
#define LIST_MAX 65536

static int read_cpulist(const struct sysfs *sysfs, const char *path, char *buf,
			struct cpuset *out)
{
	char err[128];
	int r;

	r = sysfs_read(sysfs, path, buf, LIST_MAX);
	if (r >= 0)
		r = cpuset_parse(buf, out, err, sizeof(err));
	return r < 0 ? r : 0;
}

struct node_ctx {
	const struct sysfs *sysfs;
	struct topo *topo;
};

static int add_node(const char *name, void *userdata)
{
	struct node_ctx *ctx = userdata;
	struct cpuset cpus;
	char path[128], *end;
	long node;

	if (strncmp(name, "node", 4) != 0)
		return 0;
	node = strtol(name + 4, &end, 10);
	if (end == name + 4 || *end || node < 0)
		return 0;
	snprintf(path, sizeof(path), NODE_DIR "/%s/cpulist", name);
	if (read_cpulist(ctx->sysfs, path, ctx->topo->listbuf, &cpus) < 0)
		return 0;
	CPUSET_FOREACH(cpu, &cpus)
		if ((unsigned)cpu < ctx->topo->n_slots)
			ctx->topo->node_of[cpu] = (int)node;
	return 0;
}

static int find_cpu_node(const char *name, void *userdata)
{
	int *node = userdata;
	char *end;
	long v;

	if (strncmp(name, "node", 4) != 0)
		return 0;
	v = strtol(name + 4, &end, 10);
	if (end == name + 4 || *end || v < 0)
		return 0;
	*node = (int)v;
	return 1;
}

int topo_read_cpu(struct topo *topo, const struct sysfs *sysfs, unsigned cpu)
{
	struct topo_cpu *c;
	char path[128];
	long core, pkg, die = 0;
	int node = -1, r;

	if (cpu >= topo->n_slots || !cpuset_test(&topo->possible, cpu))
		return -EINVAL;
	c = &topo->cpus[cpu];
	snprintf(path, sizeof(path), CPU_DIR "/cpu%u/topology/core_id", cpu);
	r = sysfs_read_int(sysfs, path, &core);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), CPU_DIR "/cpu%u/topology/physical_package_id", cpu);
	r = sysfs_read_int(sysfs, path, &pkg);
	if (r < 0)
		return r;
	/* die_id appeared in Linux 5.2; older kernels mean one die. */
	snprintf(path, sizeof(path), CPU_DIR "/cpu%u/topology/die_id", cpu);
	if (sysfs_read_int(sysfs, path, &die) < 0)
		die = 0;
	/* Node cpulists skip offline CPUs, the cpuN/nodeM link does not. */
	node = topo->node_of[cpu];
	if (node < 0) {
		snprintf(path, sizeof(path), CPU_DIR "/cpu%u", cpu);
		sysfs_foreach(sysfs, path, find_cpu_node, &node);
	}
	c->core_id = (int)core;
	c->package = (int)pkg;
	c->die = (int)die;
	/* Kernels without NUMA have one implicit node 0. */
	c->node = node < 0 ? 0 : node;
	c->known = true;
	return 0;
}

int topo_new(const struct sysfs *sysfs, struct topo **ret)
{
	struct node_ctx nctx;
	struct topo *t;
	int last, r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->listbuf = malloc(LIST_MAX);
	if (!t->listbuf) {
		r = -ENOMEM;
		goto fail;
	}
	r = read_cpulist(sysfs, CPU_DIR "/possible", t->listbuf, &t->possible);
	if (r < 0)
		goto fail;
	if (read_cpulist(sysfs, CPU_DIR "/present", t->listbuf, &t->present) < 0)
		t->present = t->possible;
	r = read_cpulist(sysfs, CPU_DIR "/online", t->listbuf, &t->online);
	if (r < 0)
		goto fail;
	/* The kernel's lists of CPUs kept for latency-critical work
	 * (drivers/base/cpu.c: isolated, nohz_full; an empty list, or
	 * "(null)" from older kernels, or none at all: no CPU). */
	{
		struct cpuset nohz;

		if (read_cpulist(sysfs, CPU_DIR "/isolated", t->listbuf, &t->isolated) < 0)
			cpuset_zero(&t->isolated);
		if (read_cpulist(sysfs, CPU_DIR "/nohz_full", t->listbuf, &nohz) == 0)
			cpuset_or(&t->isolated, &t->isolated, &nohz);
	}
	last = cpuset_last(&t->possible);
	if (last < 0) {
		r = -ENODEV;
		goto fail;
	}
	t->n_slots = (unsigned)last + 1;
	t->cpus = calloc(t->n_slots, sizeof(*t->cpus));
	t->node_of = malloc(t->n_slots * sizeof(*t->node_of));
	if (!t->cpus || !t->node_of) {
		r = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < t->n_slots; i++) {
		t->node_of[i] = -1;
		t->cpus[i] = (struct topo_cpu){ .cpu = (int)i, .core_id = -1,
						.package = -1, .die = -1, .node = -1 };
	}
	nctx = (struct node_ctx){ sysfs, t };
	sysfs_foreach(sysfs, NODE_DIR, add_node, &nctx);
	CPUSET_FOREACH(cpu, &t->online)
		topo_read_cpu(t, sysfs, (unsigned)cpu);
	*ret = t;
	return 0;
fail:
	topo_free(t);
	return r;
}

void topo_free(struct topo *topo)
{
	if (!topo)
		return;
	free(topo->cpus);
	free(topo->node_of);
	free(topo->listbuf);
	free(topo);
}

const struct cpuset *topo_isolated(const struct topo *topo)
{
	return &topo->isolated;
}

const struct cpuset *topo_possible(const struct topo *topo)
{
	return &topo->possible;
}

const struct cpuset *topo_present(const struct topo *topo)
{
	return &topo->present;
}

const struct cpuset *topo_online(const struct topo *topo)
{
	return &topo->online;
}

const struct topo_cpu *topo_cpu(const struct topo *topo, unsigned cpu)
{
	if (cpu >= topo->n_slots || !cpuset_test(&topo->possible, cpu))
		return NULL;
	return &topo->cpus[cpu];
}

int topo_refresh_online(struct topo *topo, const struct sysfs *sysfs)
{
	struct cpuset now;
	int r;

	r = read_cpulist(sysfs, CPU_DIR "/online", topo->listbuf, &now);
	if (r < 0)
		return r;
	if (cpuset_equal(&now, &topo->online))
		return 0;
	topo->online = now;
	return 1;
}

bool topo_same_core(const struct topo_cpu *a, const struct topo_cpu *b)
{
	return a && b && a->known && b->known && a->package == b->package && a->die == b->die &&
	       a->core_id == b->core_id;
}
