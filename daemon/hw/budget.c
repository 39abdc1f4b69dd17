/* SPDX-License-Identifier: MIT */
/* budget: general-purpose counters by probing, the NMI watchdog, SMT. */
#include "budget.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfev.h"
#include "util.h"

/* More than any core PMU has (Intel's architectural limit is 32 with
 * PEBS; 16 is beyond every part in the tables). */
#define PROBE_MAX 16

static bool parse_watchdog(const char *text)
{
	return text && text[0] == '1' && (text[1] == '\0' || text[1] == '\n');
}

bool budget_watchdog(const char *text, bool writable, bool arm64, const char *cmdline,
		     char *why, size_t whylen)
{
	if (!text) {
		str_printf(why, whylen, "no hard-lockup detector (no kernel.nmi_watchdog)");
		return false;
	}
	if (!parse_watchdog(text)) {
		str_printf(why, whylen, "kernel.nmi_watchdog = 0");
		return false;
	}
	if (!writable) {
		/* Read-only: the kernel found no detector to run, whatever the
		 * value says. */
		str_printf(why, whylen, "kernel.nmi_watchdog reads 1 but is read-only: no hard-lockup detector runs");
		return false;
	}
	if (arm64 && !(cmdline && strstr(cmdline, "irqchip.gicv3_pseudo_nmi=1"))) {
		str_printf(why, whylen, "kernel.nmi_watchdog = 1 without pseudo-NMIs: the buddy detector, which holds no counter");
		return false;
	}
	str_printf(why, whylen, "kernel.nmi_watchdog = 1: the perf hard-lockup detector holds a %s",
		   arm64 ? "the cycle counter" : "cycles counter");
	return true;
}

bool budget_learn(struct budget *b, const struct budget_evidence *ev, unsigned gp_in_use)
{
	struct budget_pmu *bp = &b->pmu[ev->pmu];
	unsigned cap = ev->gp_fit < gp_in_use ? ev->gp_fit : gp_in_use - 1;

	if (gp_in_use <= 1 || cap == 0)
		return false;
	bp->group_max = cap;
	str_printf(bp->learned, sizeof(bp->learned),
		   "the kernel refused a group of %u general-purpose events on CPU %d (EINVAL past "
		   "member %u): groups of at most %u",
		   ev->gp_in_group, ev->cpu, ev->gp_fit, cap);
	return true;
}

static bool smt_from_topology(const struct topo *topo)
{
	CPUSET_FOREACH(a, topo_online(topo)) {
		CPUSET_FOREACH(b, topo_online(topo)) {
			if (b > a && topo_same_core(topo_cpu(topo, (unsigned)a), topo_cpu(topo, (unsigned)b)))
				return true;
		}
	}
	return false;
}

void budget_table(const struct pmu_info *pmu, const struct topo *topo,
		  const struct sysfs *sysfs, struct budget *out)
{
	long active;

	memset(out, 0, sizeof(*out));
	out->known = true;
	if (sysfs && sysfs_read_int(sysfs, "devices/system/cpu/smt/active", &active) == 0)
		out->smt = active == 1;
	else
		out->smt = smt_from_topology(topo);
	for (unsigned i = 0; i < pmu->n_cores; i++) {
		const struct pmu_core *core = &pmu->core[i];

		out->pmu[i].gp = core->ua ? ua_gp_counters(core->ua) : 0;
		if (core->ua && core->ua->gp_source)
			str_printf(out->pmu[i].source, sizeof(out->pmu[i].source), "the kernel's driver: %s",
				   core->ua->gp_source);
		else
			str_printf(out->pmu[i].source, sizeof(out->pmu[i].source),
				   "perf's tables (Counter fields of %s)", core->ua ? core->ua->id : "no table");
	}
}

/* Encodings (event | umask << 8) the Intel perf driver may place on a
 * fixed counter (arch/x86/events/intel/core.c: FIXED_EVENT_CONSTRAINT of
 * its event-constraint tables, reference/kernel/intel-fixed-constraints.c;
 * tests/unit/test_budget.c checks the list against that file).  perf's
 * tables list INST_RETIRED.ANY_P (0x00c0) on the general-purpose counters
 * only, but the kernel counts it on fixed counter 0 too: a probe with it
 * found one counter more than a guest has. */
const uint16_t budget_x86_fixed_codes[BUDGET_X86_FIXED_CODES] = {
	0x00c0, 0x01c0, 0x0100, 0x003c, 0x0300, 0x0400, 0x013c, 0x0073, 0x019c, 0x02c2,
};

/* Whether the kernel may count event @i of @core on something else than
 * a general-purpose counter: one of the fixed-counter encodings above,
 * or on arm64 CPU_CYCLES (0x11), which takes the cycle counter when free
 * (drivers/perf/arm_pmuv3.c: armv8pmu_get_event_idx). */
static bool kernel_may_fix(const struct pmu_core *core, unsigned i)
{
	uint64_t config = core->enc[i].config[0];

	if (core->ua->arch && strcmp(core->ua->arch, "arm64") == 0)
		return (config & 0xffff) == 0x11;
	if (core->ua->vendor && strcmp(core->ua->vendor, "GenuineIntel") == 0)
		for (unsigned k = 0; k < BUDGET_X86_FIXED_CODES; k++)
			if ((config & 0xffff) == budget_x86_fixed_codes[k])
				return true;
	return false;
}

int budget_gp_event(const struct pmu_core *core, enum ua_mode mode)
{
	unsigned gp = ua_gp_counters(core->ua);

	for (unsigned i = 0; i < core->ua->n_events; i++) {
		const struct ua_event *ev = &core->ua->events[i];

		if (core->have[i] && ua_event_fixed(ev) < 0 && ua_event_gp_ok(ev) &&
		    ua_event_counters(ev, mode) >= gp && !kernel_may_fix(core, i))
			return (int)i;
	}
	return -1;
}

/* The event the counter probe uses: budget_gp_event() in the SMT mode
 * of the machine. */
static int probe_event(const struct pmu_core *core)
{
	return budget_gp_event(core, UA_MODE_SMT);
}

static int probe_cpu(const struct pmu_core *core, const struct topo *topo)
{
	CPUSET_FOREACH(cpu, topo_online(topo))
		if (!core->has_cpus || cpuset_test(&core->cpus, (unsigned)cpu))
			return cpu;
	return -1;
}

/* Opens @event k times as one group on @cpu until the kernel's group
 * validation refuses: the count that fits.  -errno when even one does not
 * open (no permission, no PMU).
 *
 * Every member is enabled.  Validation leaves out what is disabled: on
 * x86 every sibling in state OFF (arch/x86/events/core.c: collect_events,
 * `event->state <= PERF_EVENT_STATE_OFF`), on Arm any OFF event, the
 * leader and the new one included (drivers/perf/arm_pmu.c:
 * validate_event); attr.disabled makes that state at open
 * (kernel/events/core.c: perf_event__state_init).  A group of disabled
 * members is therefore accepted at any size and says nothing.  Enabled,
 * the group is briefly scheduled: it is closed at once. */
static int probe_gp(const struct pmu_core *core, int event, int cpu, bool count_kernel)
{
	int fd[PROBE_MAX], n = 0, r = 0;

	for (; n < PROBE_MAX; n++) {
		struct perf_event_attr attr;
		int f;

		perfev_attr(&attr, core->type, core->enc[event].config, count_kernel, false, 0, false);
		f = perfev_open(&attr, cpu, n ? fd[0] : -1);
		if (f < 0) {
			r = f;
			break;
		}
		fd[n] = f;
	}
	for (int i = 0; i < n; i++)
		close(fd[i]);
	if (n == 0)
		return r < 0 ? r : -EINVAL;
	/* validate_group() answers EINVAL when the group no longer fits;
	 * anything else is not an answer about counters. */
	if (n < PROBE_MAX && r != -EINVAL)
		return r;
	return n;
}

void budget_probe(const struct pmu_info *pmu, const struct topo *topo,
		  const struct sysfs *sysfs, const char *watchdog_path, bool count_kernel,
		  struct budget *out)
{
	char text[16];
	int fd;

	budget_table(pmu, topo, sysfs, out);
	fd = open(watchdog_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, text, sizeof(text) - 1);
		struct stat st;
		char *cmdline = NULL;
		size_t len;
		bool writable = fstat(fd, &st) == 0 && (st.st_mode & 0222);

		text[n > 0 ? n : 0] = '\0';
		close(fd);
		if (read_file("/proc/cmdline", 1 << 16, &cmdline, &len) < 0)
			cmdline = NULL;
		out->watchdog = budget_watchdog(text, writable, pmu->have_cpuid && pmu->cpuid.arm, cmdline,
						out->watchdog_why, sizeof(out->watchdog_why));
		free(cmdline);
	} else {
		out->watchdog = budget_watchdog(NULL, false, false, NULL, out->watchdog_why,
						sizeof(out->watchdog_why));
	}
	for (unsigned i = 0; i < pmu->n_cores; i++) {
		const struct pmu_core *core = &pmu->core[i];
		int event, cpu, n;

		if (!core->ua || core->level == 0)
			continue;
		event = probe_event(core);
		cpu = probe_cpu(core, topo);
		if (event < 0 || cpu < 0)
			continue;
		n = probe_gp(core, event, cpu, count_kernel);
		if (n > 0) {
			out->pmu[i].gp = (unsigned)n;
			str_printf(out->pmu[i].source, sizeof(out->pmu[i].source),
				   "probed on CPU %d with %s", cpu, core->ua->events[event].name);
		} else {
			str_printf(out->pmu[i].source + strlen(out->pmu[i].source),
				   sizeof(out->pmu[i].source) - strlen(out->pmu[i].source),
				   "; probing on CPU %d failed: %s", cpu, strerror(-n));
		}
	}
}
