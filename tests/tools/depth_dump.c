/* SPDX-License-Identifier: MIT */
/* depth_dump: topdownd's nodes below level 2 for a fixture's core PMU
 * (hw/depth.c), for tests that check them against perf.
 *
 *   depth_dump FIXTURE LEVEL
 *       One line per depth event, in its order: NAME CONFIG CONFIG1 (hex),
 *       NAME as perf's expressions spell it (msr@tsc@: the msr PMU's;
 *       duration_time: no event, 0 0); then one line per group:
 *       "group N: NAME,NAME,..." packed for the counters the plan of the
 *       fixture's first core PMU leaves (8 general-purpose less the
 *       level-1/2 group's, fixed counters 1 and 2 free); then one line per
 *       level-2 category with nodes: "subtree CATEGORY: N nodes, G groups",
 *       the drill-down's rotation under it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depth.h"
#include "pmu.h"
#include "sysfs.h"

int main(int argc, char **argv)
{
	struct pmu_info *info = calloc(1, sizeof(*info));
	const struct pmu_core *core;
	const struct dt_table *t;
	struct depth_main m = { 0 };
	struct depth_group g[DEPTH_GROUPS_MAX];
	struct depth *d;
	struct sysfs *sysfs;
	char why[512];
	unsigned gp = 8;
	int n;

	if (argc != 3 || !info) {
		fprintf(stderr, "usage: depth_dump FIXTURE LEVEL\n");
		return 2;
	}
	if (sysfs_new(argv[1], &sysfs) < 0 || pmu_discover(sysfs, info) < 0 || !info->n_cores) {
		fprintf(stderr, "depth_dump: no core PMU in %s\n", argv[1]);
		return 1;
	}
	core = &info->core[0];
	t = core->ua ? depth_table_of(core->ua->id, core->name) : NULL;
	if (!t) {
		fprintf(stderr, "depth_dump: no nodes below level 2 for %s\n", core->ua ? core->ua->id : "?");
		return 1;
	}
	for (unsigned i = 0; i < core->ua->n_events && m.n < 32; i++) {
		if (core->ua->events[i].level > 2)
			continue;
		m.names[m.n] = core->ua->events[i].name;
		m.vars[m.n++] = core->ua->events[i].var;
		if (core->ua->events[i].terms && gp)
			gp--;
	}
	m.msr_type = info->msr_type;
	m.msr_tsc = info->msr_tsc;
	m.has_pmem = info->has_pmem;
	if (depth_new(t, (unsigned)atoi(argv[2]), &core->formats, &m, &d, why, sizeof(why)) < 0) {
		fprintf(stderr, "depth_dump: %s\n", why);
		return 1;
	}
	for (unsigned i = 0; i < depth_n_events(d); i++)
		printf("%s 0x%llx 0x%llx\n", depth_event(d, i)->name,
		       (unsigned long long)depth_event(d, i)->enc.config[0],
		       (unsigned long long)depth_event(d, i)->enc.config[1]);
	n = depth_pack(d, gp, DEPTH_FIXED(0) | DEPTH_FIXED(1) | DEPTH_FIXED(2), g, DEPTH_GROUPS_MAX);
	for (int j = 0; j < n; j++) {
		printf("group %d:", j + 1);
		for (unsigned k = 0; k < g[j].n; k++)
			printf("%s%s", k ? "," : " ", depth_event(d, g[j].ev[k])->name);
		printf("\n");
	}
	for (unsigned i = 0; i < depth_n_nodes(d); i++) {
		const char *sub = depth_node_subtree(d, i);
		unsigned nodes = 0;
		bool seen = false;

		for (unsigned k = 0; k < i; k++)
			seen |= strcmp(depth_node_subtree(d, k), sub) == 0;
		if (seen)
			continue;
		for (unsigned k = 0; k < depth_n_nodes(d); k++)
			nodes += strcmp(depth_node_subtree(d, k), sub) == 0;
		printf("subtree %s: %u nodes, %d groups\n", sub, nodes,
		       depth_pack_subtree(d, sub, gp, DEPTH_FIXED(0) | DEPTH_FIXED(1) | DEPTH_FIXED(2), g,
					  DEPTH_GROUPS_MAX));
	}
	depth_free(d);
	sysfs_free(sysfs);
	free(info);
	return n > 0 ? 0 : 1;
}
