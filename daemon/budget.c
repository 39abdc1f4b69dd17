/* SPDX-License-Identifier: MIT */
/* budget: general-purpose counters by probing, the NMI watchdog, SMT. */
#include "budget.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* More than any core PMU has (Intel's architectural limit is 32 with
 * PEBS; 16 is beyond every part in the tables). */
#define PROBE_MAX 16

bool budget_parse_watchdog(const char *text)
{
	return text && text[0] == '1' && (text[1] == '\0' || text[1] == '\n');
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

/* The first general-purpose-only event of @core that could be encoded. */
static int probe_event(const struct pmu_core *core)
{
	for (unsigned i = 0; i < core->ua->n_events; i++)
		if (core->have[i] && ua_event_fixed(&core->ua->events[i]) < 0)
			return (int)i;
	return -1;
}

static int probe_cpu(const struct pmu_core *core, const struct topo *topo)
{
	CPUSET_FOREACH(cpu, topo_online(topo))
		if (!core->has_cpus || cpuset_test(&core->cpus, (unsigned)cpu))
			return cpu;
	return -1;
}

/* Opens @event k times as one disabled group on @cpu until the kernel's
 * group validation refuses: the count that fits.  -errno when even one
 * does not open (no permission, no PMU). */
static int probe_gp(const struct pmu_core *core, int event, int cpu, bool count_kernel)
{
	int fd[PROBE_MAX], n = 0, r = 0;

	for (; n < PROBE_MAX; n++) {
		struct perf_event_attr attr;
		long f;

		memset(&attr, 0, sizeof(attr));
		attr.type = core->type;
		attr.size = sizeof(attr);
		attr.config = core->enc[event].config[0];
		attr.config1 = core->enc[event].config[1];
		attr.config2 = core->enc[event].config[2];
		attr.disabled = 1;
		attr.exclude_kernel = !count_kernel;
		f = syscall(SYS_perf_event_open, &attr, -1, cpu, n ? fd[0] : -1, PERF_FLAG_FD_CLOEXEC);
		if (f < 0) {
			r = -errno;
			break;
		}
		fd[n] = (int)f;
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

		text[n > 0 ? n : 0] = '\0';
		out->watchdog = budget_parse_watchdog(text);
		close(fd);
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
