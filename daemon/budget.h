/* SPDX-License-Identifier: MIT */
/* budget: the hardware counters the running kernel lets topdownd use, as
 * plan needs them to split events into groups that can be scheduled:
 *   - the general-purpose counters of each core PMU, probed by opening
 *     groups of one event until the kernel refuses (validate_group()
 *     sees what CPUID says for this SMT setting, and the counter that
 *     allow_tsx_force_abort=0 takes away);
 *   - fixed counter 1, which the NMI watchdog holds with a pinned cycles
 *     event when /proc/sys/kernel/nmi_watchdog is 1 (no group validation
 *     sees it: a group counting on it would validate and never run);
 *   - whether SMT is on (devices/system/cpu/smt/active).
 * Opens events only in budget_probe(); budget_table() is the fallback
 * from perf's tables when probing is not possible. */
#ifndef TOPDOWND_BUDGET_H
#define TOPDOWND_BUDGET_H

#include <stdbool.h>

#include "pmu.h"
#include "sysfs.h"
#include "topo.h"

#define BUDGET_SOURCE_MAX 128

struct budget_pmu {
	unsigned gp;                      /* general-purpose counters per CPU */
	char source[BUDGET_SOURCE_MAX];   /* how gp was found, for --probe */
};

struct budget {
	bool known;           /* filled by budget_probe() or budget_table() */
	bool watchdog;        /* the NMI watchdog holds fixed counter 1 */
	bool smt;             /* SMT is on */
	struct budget_pmu pmu[PMU_CORE_MAX]; /* indexed like pmu_info.core[] */
};

/* From perf's tables alone: the highest general-purpose counter any event
 * of the core's microarchitecture may use, plus one; SMT from sysfs
 * (@sysfs may be NULL: from the topology alone). */
void budget_table(const struct pmu_info *pmu, const struct topo *topo,
		  const struct sysfs *sysfs, struct budget *out);

/* As budget_table(), then probes each core PMU with general-purpose
 * events on its first online CPU and reads the NMI watchdog setting from
 * @watchdog_path (/proc/sys/kernel/nmi_watchdog).  Never fails: what it
 * cannot probe keeps the table's figure, and source says so. */
void budget_probe(const struct pmu_info *pmu, const struct topo *topo,
		  const struct sysfs *sysfs, const char *watchdog_path, bool count_kernel,
		  struct budget *out);

/* "1\n" -> true; anything else (0, absent, unreadable) -> false. */
bool budget_parse_watchdog(const char *text);

#endif
