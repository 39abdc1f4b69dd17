/* SPDX-License-Identifier: MIT */
/* topo: the CPUs of the machine and where each one sits: core, die,
 * package, NUMA node; which are possible, present and online. */
#ifndef TOPDOWND_TOPO_H
#define TOPDOWND_TOPO_H

#include <stdbool.h>

#include "cpuset.h"
#include "sysfs.h"

struct topo_cpu {
	int cpu;
	bool known; /* topology files were readable (the CPU was online) */
	int core_id;
	int package;
	int die;
	int node;
};

struct topo;

/* Reads possible/present/online CPUs and the topology of online CPUs. */
int topo_new(const struct sysfs *sysfs, struct topo **ret);
void topo_free(struct topo *topo);

const struct cpuset *topo_possible(const struct topo *topo);
const struct cpuset *topo_present(const struct topo *topo);
const struct cpuset *topo_online(const struct topo *topo);
/* CPUs the kernel keeps for latency-critical work: isolcpus= or
 * nohz_full= (devices/system/cpu/isolated, nohz_full). */
const struct cpuset *topo_isolated(const struct topo *topo);
/* NULL for a CPU that is not possible. */
const struct topo_cpu *topo_cpu(const struct topo *topo, unsigned cpu);

/* Two known CPUs that are threads of one core (same package, die and
 * core id): SMT siblings, or the same CPU. */
bool topo_same_core(const struct topo_cpu *a, const struct topo_cpu *b);

/* Re-reads the online list; returns 1 if it changed, 0 if not, -errno. */
int topo_refresh_online(struct topo *topo, const struct sysfs *sysfs);
/* Re-reads one CPU's topology (it came online).  -ENOENT if unavailable. */
int topo_read_cpu(struct topo *topo, const struct sysfs *sysfs, unsigned cpu);

#endif
