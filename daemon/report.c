/* report: --probe and --once text output. */
#include "report.h"

#include <string.h>

#include "tma.h"

static const char *formulas_name(enum td_formulas f)
{
	return f == TD_FORMULAS_ICL ? "icelake" : "sapphire_rapids";
}

static void print_cpus(FILE *out, const char *label, const struct cpuset *set,
		       const char *why)
{
	char list[4096];
	unsigned n = cpuset_count(set);

	if (n == 0) {
		fprintf(out, "%-13s none\n", label);
		return;
	}
	cpuset_format(set, list, sizeof(list));
	fprintf(out, "%-13s %u CPU%s (%s)%s%s\n", label, n, n == 1 ? "" : "s", list,
		why ? ": " : "", why ? why : "");
}

/* Counts distinct packages and cores among @set's CPUs of known topology. */
static void count_topology(const struct topo *topo, const struct cpuset *set, int package,
			   unsigned *n_packages, unsigned *n_cores)
{
	struct cpuset seen_pkg, first_of_core;

	cpuset_zero(&seen_pkg);
	cpuset_zero(&first_of_core);
	*n_packages = 0;
	*n_cores = 0;
	CPUSET_FOREACH(cpu, set) {
		const struct topo_cpu *c = topo_cpu(topo, (unsigned)cpu);
		bool dup = false;

		if (!c || !c->known || (package >= 0 && c->package != package))
			continue;
		if (!cpuset_test(&seen_pkg, (unsigned)c->package)) {
			cpuset_set(&seen_pkg, (unsigned)c->package);
			(*n_packages)++;
		}
		CPUSET_FOREACH(other, &first_of_core) {
			const struct topo_cpu *o = topo_cpu(topo, (unsigned)other);

			if (o->package == c->package && o->die == c->die &&
			    o->core_id == c->core_id) {
				dup = true;
				break;
			}
		}
		if (!dup) {
			cpuset_set(&first_of_core, (unsigned)cpu);
			(*n_cores)++;
		}
	}
}

void report_probe(FILE *out, const struct pmu_info *pmu, const struct topo *topo,
		  const struct plan *plan)
{
	struct cpuset offline, online_monitor, pkgs;
	unsigned n_pkg, n_core;
	char list[4096];

	if (pmu->name[0])
		fprintf(out, "%-13s %s (type %u)\n", "PMU:", pmu->name, pmu->type);
	else
		fprintf(out, "%-13s none\n", "PMU:");
	if (pmu->name[0])
		fprintf(out, "%-13s %s\n", "pmu_name:", pmu->pmu_name[0] ? pmu->pmu_name : "unknown");
	fprintf(out, "%-13s %u\n", "Level:", plan->level);
	if (plan->level_note[0])
		fprintf(out, "%-13s %s\n", "", plan->level_note);
	if (plan->usable) {
		fprintf(out, "%-13s %s\n", "Formulas:", formulas_name(plan->formulas));
		if (plan->model == MODEL_PERF)
			fprintf(out, "%-13s perf (refinement events: %s%s)\n", "Model:",
				td_event_name[TD_EV_UOP_DROPPING],
				plan->formulas == TD_FORMULAS_ICL ? ", INT_MISC.RECOVERY_CYCLES:c1:e1" : "");
		else
			fprintf(out, "%-13s hardware (metric events only)%s%s\n", "Model:",
				plan->model_note[0] ? ": " : "", plan->model_note);
	}

	if (!plan->usable) {
		print_cpus(out, "Unsupported:", &plan->unsupported, NULL);
		fprintf(out, "%-13s not usable: %s\n", "TopDown:", plan->reason);
		return;
	}
	cpuset_and(&online_monitor, &plan->monitor, topo_online(topo));
	cpuset_andnot(&offline, &plan->monitor, topo_online(topo));
	count_topology(topo, &online_monitor, -1, &n_pkg, &n_core);
	cpuset_format(&plan->monitor, list, sizeof(list));
	fprintf(out, "%-13s %u CPUs on %u package%s, %u cores (%s)\n", "Monitored:",
		cpuset_count(&plan->monitor), n_pkg, n_pkg == 1 ? "" : "s", n_core,
		cpuset_empty(&plan->monitor) ? "none" : list);
	cpuset_zero(&pkgs);
	CPUSET_FOREACH(cpu, &online_monitor) {
		const struct topo_cpu *c = topo_cpu(topo, (unsigned)cpu);

		if (c && c->known)
			cpuset_set(&pkgs, (unsigned)c->package);
	}
	CPUSET_FOREACH(pkg, &pkgs) {
		struct cpuset in_pkg;
		char name[32];

		cpuset_zero(&in_pkg);
		CPUSET_FOREACH(cpu, &online_monitor) {
			const struct topo_cpu *c = topo_cpu(topo, (unsigned)cpu);

			if (c && c->known && c->package == pkg)
				cpuset_set(&in_pkg, (unsigned)cpu);
		}
		count_topology(topo, &in_pkg, pkg, &n_pkg, &n_core);
		cpuset_format(&in_pkg, list, sizeof(list));
		snprintf(name, sizeof(name), "  package %d:", pkg);
		fprintf(out, "%-13s %u CPUs, %u cores (%s)\n", name, cpuset_count(&in_pkg),
			n_core, list);
	}
	print_cpus(out, "Offline:", &offline,
		   cpuset_empty(&offline) ? NULL : "monitored once they come online");
	print_cpus(out, "Unsupported:", &plan->unsupported,
		   plan->unsupported_reason[0] ? plan->unsupported_reason : NULL);
	if (!cpuset_empty(&plan->nonexistent))
		print_cpus(out, "Ignored:", &plan->nonexistent,
			   "configured in [collect] cpus but not present on this machine");
	fprintf(out, "%-13s usable\n", "TopDown:");
}

#define ONCE_MAX_COLUMNS 64

static void cell(FILE *out, const struct snap_counts *c, int idx, const char *bottleneck,
		 const char *name, const char *parent)
{
	double slots = c->last[TD_C_SLOTS];
	char mark = ' ';
	size_t plen;

	if (slots <= 0) {
		fprintf(out, " %11s", "-");
		return;
	}
	/* bottleneck is "parent" or "parent.child". */
	plen = strlen(parent ? parent : name);
	if (!parent && strncmp(bottleneck, name, plen) == 0 &&
	    (bottleneck[plen] == '\0' || bottleneck[plen] == '.'))
		mark = '*';
	if (parent && strncmp(bottleneck, parent, plen) == 0 && bottleneck[plen] == '.' &&
	    strcmp(bottleneck + plen + 1, name) == 0)
		mark = '*';
	fprintf(out, " %10.1f%%%c", 100.0 * c->last[idx] / slots, mark);
}

void report_once(FILE *out, const struct snapshot *snap)
{
	const struct snap_counts *cols[ONCE_MAX_COLUMNS];
	char bottlenecks[ONCE_MAX_COLUMNS][80];
	unsigned n = 0;

	fprintf(out, "# %u CPUs monitored on %u package%s, %s (%s), level %u, model %s, interval %.3f s\n",
		snap->cpus_by_state[CPU_STATE_MONITORED], snap->n_pkgs, snap->n_pkgs == 1 ? "" : "s",
		snap->pmu, snap->pmu_name[0] ? snap->pmu_name : "unknown", snap->level, snap->model,
		snap->interval_s);
	fprintf(out, "%-22s %12s", "", "host");
	cols[n++] = &snap->host;
	for (unsigned i = 0; i < snap->n_pkgs && n < ONCE_MAX_COLUMNS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "package %d", snap->pkgs[i].package);
		fprintf(out, " %12s", name);
		cols[n++] = &snap->pkgs[i].c;
	}
	fputc('\n', out);
	for (unsigned k = 0; k < n; k++)
		tma_bottleneck(&cols[k]->last[TD_C_L1], &cols[k]->last[TD_C_L2], snap->level >= 2,
			       bottlenecks[k], sizeof(bottlenecks[k]));
	for (int l1 = 0; l1 < TD_L1_COUNT; l1++) {
		fprintf(out, "%-22s", td_l1_name[l1]);
		for (unsigned k = 0; k < n; k++)
			cell(out, cols[k], TD_C_L1 + l1, bottlenecks[k], td_l1_name[l1], NULL);
		fputc('\n', out);
		if (snap->level < 2)
			continue;
		for (int l2 = 0; l2 < TD_L2_COUNT; l2++) {
			if (td_l2_parent[l2] != (enum td_l1)l1)
				continue;
			fprintf(out, "  %-20s", td_l2_name[l2]);
			for (unsigned k = 0; k < n; k++)
				cell(out, cols[k], TD_C_L2 + l2, bottlenecks[k], td_l2_name[l2],
				     td_l1_name[l1]);
			fputc('\n', out);
		}
	}
	fprintf(out, "%-22s", "running");
	for (unsigned k = 0; k < n; k++) {
		const double *last = cols[k]->last;

		if (last[TD_C_ENABLED] > 0)
			fprintf(out, " %10.1f%% ", 100.0 * last[TD_C_RUNNING] / last[TD_C_ENABLED]);
		else
			fprintf(out, " %11s", "-");
	}
	fputc('\n', out);
	fprintf(out, "\n* bottleneck: host %s\n", bottlenecks[0][0] ? bottlenecks[0] : "none (no slots counted)");
}
