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
#include <stddef.h>
#include <stdint.h>

#include "pmu.h"
#include "sysfs.h"
#include "topo.h"

#define BUDGET_SOURCE_MAX 128

#define BUDGET_NOTE_MAX 400

struct budget_pmu {
	unsigned gp;                      /* general-purpose counters per CPU */
	char source[BUDGET_SOURCE_MAX];   /* how gp was found, for --probe */
	/* Learned while running (budget_learn): the largest group of
	 * general-purpose events the kernel took.  What other users hold is
	 * learned per CPU, by the collector (collect/share.c). */
	unsigned group_max;               /* 0: no limit seen */
	char learned[BUDGET_NOTE_MAX];    /* what was learned and why, or "" */
};

struct budget {
	bool known;           /* filled by budget_probe() or budget_table() */
	bool watchdog;        /* the NMI watchdog holds a counter (budget_watchdog) */
	char watchdog_why[160]; /* why we think it does or does not */
	bool smt;             /* SMT is on */
	struct budget_pmu pmu[PMU_CORE_MAX]; /* indexed like pmu_info.core[] */
};

/* What the collector saw that the budget did not foresee: a group
 * refused with EINVAL past its first general-purpose member (the kernel's
 * validate_group found it too big for the counters). */
struct budget_evidence {
	unsigned pmu;        /* index into pmu_info.core[] */
	int cpu;
	unsigned group;      /* 0-based */
	unsigned gp_in_group;/* general-purpose events of the group */
	unsigned gp_fit;     /* the members that were accepted */
};

/* The encodings the Intel perf driver may put on a fixed counter. */
#define BUDGET_X86_FIXED_CODES 10
extern const uint16_t budget_x86_fixed_codes[BUDGET_X86_FIXED_CODES];

/* An event of @core the kernel counts on a general-purpose counter only,
 * on any of them (its table restricts it to none; in SMT mode @mode): for
 * probing how many there are.  Its index into ua->events, or -1. */
int budget_gp_event(const struct pmu_core *core, enum ua_mode mode);

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

/* Whether the NMI watchdog holds a hardware counter.  /proc/sys/kernel/
 * nmi_watchdog reads 1 whenever the kernel has a hard-lockup detector
 * enabled, but the file is writable (mode 0644) only when one is
 * available (kernel/watchdog.c: watchdog_sysctl_init), and only the perf
 * detector holds a counter: on x86 it is the one used; on arm64 it needs
 * pseudo-NMIs (arch_perf_nmi_is_available: irqchip.gicv3_pseudo_nmi=1 on
 * the command line), otherwise the buddy detector runs, which holds none.
 * @text: the file's content (NULL: absent); @writable: its mode has a
 * write bit; @arm64: the machine; @cmdline: /proc/cmdline (may be NULL).
 * Writes the reason to @why. */
bool budget_watchdog(const char *text, bool writable, bool arm64, const char *cmdline,
		     char *why, size_t whylen);

/* Takes @ev into @b (pmu index ev->pmu): the group size is capped at
 * what was accepted (one fewer if that is no smaller).  Returns true when
 * the budget changed (the plan must be made again), false when nothing is
 * left to give up. */
bool budget_learn(struct budget *b, const struct budget_evidence *ev, unsigned gp_in_use);

#endif
