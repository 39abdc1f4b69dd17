/* SPDX-License-Identifier: MIT */
/* report: --probe and --once text output. */
#include "report.h"

#include <math.h>
#include <string.h>

#include "tma.h"
#include "util.h"

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

/* A list of event names after @label, wrapped at 79 columns. */
static void print_events(FILE *out, const char *label, const struct plan_pmu *pp,
			 unsigned from, unsigned to)
{
	size_t col = 14;

	fprintf(out, "%-13s ", label);
	for (unsigned i = from; i < to; i++) {
		const char *name = pp->ua->events[pp->events[i]].name;
		size_t len = strlen(name) + (i + 1 < to ? 1 : 0);

		if (i > from && col + 1 + len > 79) {
			fprintf(out, "\n%-13s ", "");
			col = 14;
		} else if (i > from) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%s%s", name, i + 1 < to ? "," : "");
		col += len;
	}
	fputc('\n', out);
}

static void print_wrapped(FILE *out, const char *label, const char *text);

/* Below level 2: what [collect] level 3 to 6 counts, or why not; each
 * node left out, and why. */
static void print_depth(FILE *out, const struct plan_pmu *pp)
{
	const char *line = pp->depth_left;

	if (pp->depth)
		fprintf(out, "%-13s levels 3 to %u: %u nodes from %s, %u events in %u groups taking turns, "
			"one per interval, on %u general-purpose counter%s%s\n", "Below L2:", pp->depth,
			pp->depth_nodes, pp->depth_table->source, pp->depth_events, pp->depth_groups, pp->depth_gp,
			pp->depth_gp == 1 ? "" : "s",
			pp->depth_fixed1 && pp->depth_fixed2 ? " and fixed counters 1 and 2"
			: pp->depth_fixed1 ? " and fixed counter 1" : pp->depth_fixed2 ? " and fixed counter 2" : "");
	if (pp->depth && pp->depth_multiplex)
		fprintf(out, "%-13s [collect] depth_multiplex: each of them joins the %u level-1/2 groups' rotation "
			"while it takes its turn, which then run 1/%u of the time each, not 1/%u\n", "",
			pp->n_groups, pp->n_groups + 1, pp->n_groups);
	if (pp->depth_note[0])
		fprintf(out, "%-13s %s\n", pp->depth ? "" : "Below L2:", pp->depth_note);
	for (const char *label = "Left out:"; pp->depth && *line; label = "") {
		size_t len = strcspn(line, "\n");
		char one[PLAN_REASON_MAX + 64];

		str_printf(one, sizeof(one), "%.*s", (int)len, line);
		print_wrapped(out, label, one);
		line += len + (line[len] == '\n');
	}
}

/* @text after @label, wrapped at 79 columns under the labels' column. */
static void print_wrapped(FILE *out, const char *label, const char *text)
{
	size_t col = 14;

	fprintf(out, "%-13s", label);
	while (*text) {
		size_t len = strcspn(text, " ");

		if (col > 14 && col + 1 + len > 79) {
			fprintf(out, "\n%-13s", "");
			col = 14;
		}
		fprintf(out, " %.*s", (int)len, text);
		col += 1 + len;
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

/* Which threads of each core ran when ([collect] smt): its events, or
 * why not. */
static void print_smt(FILE *out, const struct plan_pmu *pp)
{
	const struct ua_smt *smt = pp->ua->smt;
	char text[PLAN_REASON_MAX];

	if (pp->smt) {
		str_printf(text, sizeof(text), "each core's time four ways (neither thread, first only, second only, "
			   "both) from %s, %s, %s (fixed counter 2) and msr/tsc, a group on each CPU%s",
			   smt->events[UA_SMT_ONE_THREAD].name, smt->events[UA_SMT_ANY].name,
			   smt->events[UA_SMT_REF_TSC].name, pp->smt_multiplex ? "" : " beside the level-1/2 group");
		print_wrapped(out, "SMT split:", text);
	}
	if (pp->smt_note[0])
		print_wrapped(out, pp->smt ? "" : "SMT split:", pp->smt_note);
}

static void probe_pmu(FILE *out, const struct pmu_info *pmu, const struct pmu_core *core,
		      const struct plan *plan)
{
	const struct plan_pmu *pp = NULL;
	char cpuid[64] = "", list[4096];

	for (unsigned i = 0; i < plan->n_pmus; i++)
		if (plan->pmu[i].core == core)
			pp = &plan->pmu[i];
	if (core->have_cpuid)
		ua_cpuid_format(&core->cpuid, cpuid, sizeof(cpuid));
	fprintf(out, "%-13s %s (type %u)\n", "PMU:", core->name, core->type);
	fprintf(out, "%-13s %s\n", "pmu_name:", core->pmu_name[0] ? core->pmu_name : "unknown");
	if (core->ua)
		fprintf(out, "%-13s %s%s%s%s\n", "Uarch:", core->ua->name, cpuid[0] ? " (" : "",
			cpuid, cpuid[0] ? ")" : "");
	else
		fprintf(out, "%-13s none%s%s%s\n", "Uarch:", cpuid[0] ? " (" : "", cpuid,
			cpuid[0] ? ")" : "");
	if (pmu->n_cores > 1 && core->has_cpus) {
		cpuset_format(&core->cpus, list, sizeof(list));
		fprintf(out, "%-13s %u (%s)\n", "CPUs:", cpuset_count(&core->cpus), list);
	}
	fprintf(out, "%-13s %u\n", "Level:", pp ? pp->level : 0);
	if (!pp) {
		if (core->reason[0])
			fprintf(out, "%-13s %s\n", "", core->reason);
		return;
	}
	if (pp->level_note[0])
		fprintf(out, "%-13s %s\n", "", pp->level_note);
	if (pp->ua->alt_of) {
		char note[PMU_REASON_MAX];

		pmu_guest_note(pp->core, note, sizeof(note));
		fprintf(out, "%-13s %s (%s), events from perf's x86/%s tables\n", "Formulas:", pp->ua->id,
			pp->ua->metrics[0].table, pp->ua->alt_of->id);
		fprintf(out, "%-13s %s\n", "", note);
	} else if (pp->ua == ua_intel_arch()) {
		char note[PMU_REASON_MAX];

		pmu_guest_note(pp->core, note, sizeof(note));
		fprintf(out, "%-13s %s (%s)\n", "Formulas:", pp->ua->id, pp->ua->events[0].table);
		fprintf(out, "%-13s %s\n", "", note);
	} else if (pp->ua->n_metrics)
		fprintf(out, "%-13s %s (perf's %s/%s tables)\n", "Formulas:", pp->ua->id,
			pp->ua->arch ? pp->ua->arch : "x86", pp->ua->id);
	else {
		char note[PMU_REASON_MAX];

		pmu_guest_note(pp->core, note, sizeof(note));
		fprintf(out, "%-13s PERF_METRICS only (no perf table for this model in topdownd)\n",
			"Formulas:");
		if (note[0])
			fprintf(out, "%-13s %s\n", "", note);
	}
	if (pp->ua->slots_from_caps) {
		const char *stall = pp->core->stall_minus_cycles ?
			"; STALL_SLOT and STALL_SLOT_FRONTEND less CPU_CYCLES (this revision counts a slot per cycle too many, as perf corrects)" :
			"";

		char note[PMU_REASON_MAX];

		pmu_guest_note(pp->core, note, sizeof(note));
		if (note[0])
			fprintf(out, "%-13s %u per cycle; %s%s\n", "Slots:", pp->core->slots, note, stall);
		else
			fprintf(out, "%-13s %u per cycle (caps/slots)%s\n", "Slots:", pp->core->slots, stall);
	}
	if (pp->model == MODEL_PERF && pp->n_core == pp->n_events) {
		fprintf(out, "%-13s perf (perf's formulas on %s: nothing to refine)\n", "Model:",
			tma_uses_perf_metrics(pp->ua->formulas) ? "PERF_METRICS, without a refinement term"
								: "general-purpose counters");
	} else if (pp->model == MODEL_PERF) {
		fprintf(out, "%-13s perf (refinement events: ", "Model:");
		for (unsigned i = pp->n_core; i < pp->n_events; i++)
			fprintf(out, "%s%s", i > pp->n_core ? ", " : "", pp->ua->events[pp->events[i]].name);
		fprintf(out, ")\n");
	} else {
		fprintf(out, "%-13s hardware (metric events only)%s%s\n", "Model:",
			pp->model_note[0] ? ": " : "", pp->model_note);
	}
	if (td_catset_has(pp->cats, TD_CAT_SMT_CONTENTION))
		fprintf(out, "%-13s %s\n", "SMT:",
			pp->mode == UA_MODE_NOSMT ? "off: each CPU is a core" :
			"on: each CPU's dispatch slots are its own; the slots the other thread took are smt_contention");
	else if (pp->ua->core_scoped)
		fprintf(out, "%-13s %s\n", "SMT:",
			pp->mode == UA_MODE_NOSMT ? "off: each CPU is a core" :
			pp->mode == UA_MODE_SMT ? "on, every thread of each core counted: a CPU's figures are its share of its core (AnyThread counts / 2)" :
			"on, some threads of a core not counted: a CPU's figures are its share of its core, from perf's per-thread estimate of the core's clocks");
	if (pp->gp_needed == 0 && pp->gp_available == 0)
		/* PERF_METRICS of a model without tables: how many
		 * general-purpose counters there are is not known, and none
		 * is used. */
		fprintf(out, "%-13s fixed counters alone, no general-purpose one used%s\n", "Counters:",
			!pp->watchdog ? "" : "; fixed counter 1 held by the NMI watchdog");
	else
		fprintf(out, "%-13s %u general-purpose needed, %u per CPU (%s)%s\n", "Counters:",
			pp->gp_needed, pp->gp_available, pp->gp_source,
			!pp->watchdog ? "" :
			pp->ua->watchdog_takes_gp ? "; one more held by the NMI watchdog" :
			"; fixed counter 1 held by the NMI watchdog");
	if (pp->n_groups == 1) {
		print_events(out, "Events:", pp, 0, pp->n_events);
		print_depth(out, pp);
		print_smt(out, pp);
		return;
	}
	for (unsigned g = 0; g < pp->n_groups; g++) {
		char label[24];

		snprintf(label, sizeof(label), "Group %u:", g + 1);
		print_events(out, label, pp, pp->group_start[g], pp->group_start[g + 1]);
	}
	fprintf(out, "%-13s %s\n", "", pp->group_note);
	print_depth(out, pp);
	print_smt(out, pp);
}

void report_probe(FILE *out, const struct pmu_info *pmu, const struct topo *topo,
		  const struct plan *plan, const char *counted, const char *avail, const char *failure,
		  const char *privileges)
{
	struct cpuset offline, online_monitor, pkgs;
	unsigned n_pkg, n_core;
	char list[4096];

	if (pmu->n_cores == 0) {
		fprintf(out, "%-13s none\n", "PMU:");
		fprintf(out, "%-13s 0\n", "Level:");
	}
	for (unsigned i = 0; i < pmu->n_cores; i++)
		probe_pmu(out, pmu, &pmu->core[i], plan);
	if (privileges)
		fprintf(out, "%-13s %s\n", "Privileges:", privileges);

	if (!plan->usable) {
		print_cpus(out, "Unsupported:", &plan->unsupported, NULL);
		fprintf(out, "%-13s not usable: %s\n", "TopDown:", plan->reason);
		return;
	}
	/* Monitored counts what is counting now: the package lines add up
	 * to it, offline CPUs are listed apart. */
	cpuset_and(&online_monitor, &plan->monitor, topo_online(topo));
	cpuset_andnot(&offline, &plan->monitor, topo_online(topo));
	count_topology(topo, &online_monitor, -1, &n_pkg, &n_core);
	cpuset_format(&online_monitor, list, sizeof(list));
	fprintf(out, "%-13s %u CPU%s on %u package%s, %u cores (%s)\n", "Monitored:",
		cpuset_count(&online_monitor), cpuset_count(&online_monitor) == 1 ? "" : "s",
		n_pkg, n_pkg == 1 ? "" : "s", n_core,
		cpuset_empty(&online_monitor) ? "none" : list);
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
		fprintf(out, "%-13s %u CPU%s, %u cores (%s)\n", name, cpuset_count(&in_pkg),
			cpuset_count(&in_pkg) == 1 ? "" : "s", n_core, list);
	}
	print_cpus(out, "Offline:", &offline,
		   cpuset_empty(&offline) ? NULL : "monitored once they come online");
	print_cpus(out, "Unsupported:", &plan->unsupported,
		   plan->unsupported_reason[0] ? plan->unsupported_reason : NULL);
	if (!cpuset_empty(&plan->isolated))
		print_cpus(out, "Isolated:", &plan->isolated,
			   "isolcpus= or nohz_full=: not read unless [collect] cpus lists them");
	if (!cpuset_empty(&plan->nonexistent))
		print_cpus(out, "Ignored:", &plan->nonexistent,
			   "configured in [collect] cpus but not present on this machine");
	/* What other users' pinned events leave each CPU now (share.c). */
	for (const char *line = avail; line && *line;) {
		const char *end = strchr(line, '\n');
		int n = end ? (int)(end - line) : (int)strlen(line);

		fprintf(out, "%-13s %.*s\n", line == avail ? "Free now:" : "", n, line);
		line = end ? end + 1 : NULL;
	}
	if (failure) {
		fprintf(out, "%-13s not usable: %s\n", "TopDown:", failure);
		return;
	}
	fprintf(out, "%-13s %s\n", "Counted:", counted && counted[0] ? counted : "nothing");
	fprintf(out, "%-13s usable\n", "TopDown:");
}

#define ONCE_MAX_COLUMNS 64

static void cell(FILE *out, const struct snap_counts *c, int cat, const char *bottleneck)
{
	double slots = c->last[TD_C_SLOTS];
	const char *name = td_cat[cat].name, *parent = td_cat[td_cat[cat].parent].name;
	char mark = ' ';
	size_t plen;

	if (slots <= 0) {
		fprintf(out, " %11s", "-");
		return;
	}
	/* bottleneck is "parent" or "parent.child". */
	plen = strlen(td_cat[cat].level == 1 ? name : parent);
	if (td_cat[cat].level == 1 && strncmp(bottleneck, name, plen) == 0 &&
	    (bottleneck[plen] == '\0' || bottleneck[plen] == '.'))
		mark = '*';
	if (td_cat[cat].level == 2 && strncmp(bottleneck, parent, plen) == 0 &&
	    bottleneck[plen] == '.' && strcmp(bottleneck + plen + 1, name) == 0)
		mark = '*';
	fprintf(out, " %10.1f%%%c", 100.0 * c->last[TD_C_CAT + cat] / slots, mark);
}

/* Per-cgroup attribution: one row per bucket, most slots first: its share
 * of the host's slots and its level-1 breakdown. */
static void report_cgroups(FILE *out, const struct snapshot *snap)
{
	unsigned order[snap->n_cgroups ? snap->n_cgroups : 1];
	double host = snap->host.last[TD_C_SLOTS];

	if (!snap->cg.enabled)
		return;
	if (!snap->cg.attributing) {
		fprintf(out, "\nper-cgroup: %s\n", snap->cg.reason);
		return;
	}
	fprintf(out, "\n%-40s %8s", "cgroup", "slots");
	for (int k = 0; k < TD_CAT_COUNT; k++)
		if (td_catset_has(snap->cats, (enum td_cat)k) && td_cat[k].level == 1)
			fprintf(out, " %15s", td_cat[k].name);
	fputc('\n', out);
	snapshot_cgroups_by_slots(snap, true, order);
	for (unsigned i = 0; i < snap->n_cgroups; i++) {
		const struct snap_cgroup *cg = &snap->cgroups[order[i]];
		double slots = cg->c.last[TD_C_SLOTS];
		char name[4 * SNAP_CGROUP_NAME];
		size_t len;

		/* Whatever bytes a tenant named it with, none reaches the
		 * terminal raw. */
		str_escape(name, sizeof(name), cg->name);
		len = strlen(name);
		/* The end of a long path names the service. */
		fprintf(out, "%s%-*s", len > 40 ? "..." : "", len > 40 ? 37 : 40,
			len > 40 ? name + len - 37 : name);
		if (host > 0)
			fprintf(out, " %7.1f%%", 100.0 * slots / host);
		else
			fprintf(out, " %8s", "-");
		for (int k = 0; k < TD_CAT_COUNT; k++) {
			if (!td_catset_has(snap->cats, (enum td_cat)k) || td_cat[k].level != 1)
				continue;
			if (slots > 0)
				fprintf(out, " %14.1f%%", 100.0 * cg->c.last[TD_C_CAT + k] / slots);
			else
				fprintf(out, " %15s", "-");
		}
		fputc('\n', out);
	}
	if (snap->cg.dropped)
		fprintf(out, "(%u more cgroups match [cgroups] track beyond max_cgroups: counted as other)\n",
			snap->cg.dropped);
}

void report_down(FILE *out, const struct snapshot *snap)
{
	const char *sep = "";

	fprintf(out, "# no figures this interval; CPUs: ");
	for (unsigned k = 0; k < CPU_STATE_COUNT; k++)
		if (snap->cpus_by_state[k]) {
			fprintf(out, "%s%u %s", sep, snap->cpus_by_state[k], cpu_state_name[k]);
			sep = ", ";
		}
	fprintf(out, "%s\n", sep[0] ? "" : "none");
	for (unsigned i = 0; i < snap->n_pmus; i++)
		if (snap->pmus[i].reason[0])
			fprintf(out, "# %s: %s\n", snap->pmus[i].name, snap->pmus[i].reason);
}

/* Below level 2: the nodes under level-2 category @l2 (or under node
 * @parent), each indented under its parent, in each column's row. */
static void print_nodes(FILE *out, const struct snap_deep *d, enum td_cat l2, int parent, unsigned indent,
			int name_w, const unsigned *rows, unsigned n)
{

	for (unsigned i = 0; i < d->n_nodes; i++) {
		bool child = parent >= 0 ? d->parent[i] == parent
					 : d->parent[i] < 0 && !strcmp(depth_short(d->node[i]->parent), td_cat[l2].name);

		if (!child)
			continue;
		fprintf(out, "%*s%-*s", (int)indent, "", name_w - (int)indent, depth_short(d->node[i]->name));
		for (unsigned k = 0; k < n; k++) {
			double v = rows[k] < d->rows ? d->last[(size_t)rows[k] * d->n_nodes + i] : NAN;

			if (isfinite(v))
				fprintf(out, " %10.1f%% ", 100.0 * v);
			else
				fprintf(out, " %11s ", "-");
		}
		fputc('\n', out);
		print_nodes(out, d, l2, (int)i, indent + 2, name_w, rows, n);
	}
}

/* Whether some tree has nodes right under level-2 category @l2. */
static bool has_nodes_under(const struct snapshot *snap, enum td_cat l2)
{
	for (unsigned t = 0; t < snap->n_deep; t++)
		for (unsigned i = 0; i < snap->deep[t].n_nodes; i++)
			if (snap->deep[t].parent[i] < 0 &&
			    !strcmp(depth_short(snap->deep[t].node[i]->parent), td_cat[l2].name))
				return true;
	return false;
}

/* Below level-2 category @l2: each tree's nodes, under a line naming
 * its core PMU where there are several (a hybrid part's P-cores and
 * E-cores: each column over that core type's CPUs). */
static void print_trees(FILE *out, const struct snapshot *snap, enum td_cat l2, int name_w, const unsigned *rows,
			unsigned n)
{
	for (unsigned t = 0; t < snap->n_deep; t++) {
		const struct snap_deep *d = &snap->deep[t];
		bool any = false;

		for (unsigned i = 0; i < d->n_nodes && !any; i++)
			any = d->parent[i] < 0 && !strcmp(depth_short(d->node[i]->parent), td_cat[l2].name);
		if (!any)
			continue;
		if (snap->n_deep > 1)
			fprintf(out, "    %s:\n", d->pmu);
		print_nodes(out, d, l2, -1, snap->n_deep > 1 ? 6 : 4, name_w, rows, n);
	}
}

/* The SMT split of the last interval, host and packages as the columns
 * above: each state's share of the cores' time ("-" where none was
 * split). */
static void print_smt_rows(FILE *out, const struct snapshot *snap, int name_w, unsigned n)
{
	static const char *const label[SMT_STATE_COUNT] = {
		[SMT_NEITHER] = "smt: neither thread", [SMT_FIRST_ONLY] = "smt: first only",
		[SMT_SECOND_ONLY] = "smt: second only", [SMT_BOTH] = "smt: both threads",
	};

	/* Where a core was ever split: nothing to show otherwise (the
	 * document's smt.reason says why). */
	if (!snap->smt_host.ever)
		return;
	for (unsigned st = 0; st < SMT_STATE_COUNT; st++) {
		fprintf(out, "%-*s", name_w, label[st]);
		for (unsigned k = 0; k < n; k++) {
			const struct snap_smt *row = k == 0 ? &snap->smt_host : &snap->pkgs[k - 1].smt;
			double span = 0;

			for (unsigned j = 0; j < SMT_STATE_COUNT; j++)
				span += row->last[j];
			if (row->valid && span > 0)
				fprintf(out, " %10.1f%% ", 100.0 * row->last[st] / span);
			else
				fprintf(out, " %11s", "-");
		}
		fputc('\n', out);
	}
}

/* perf's SMT mode metrics of the last interval (NVIDIA Olympus), host
 * and packages as the columns above: the share of cycles in ST mode. */
static void print_mode_row(FILE *out, const struct snapshot *snap, int name_w, unsigned n)
{
	if (!snap->mode_host.ever)
		return;
	fprintf(out, "%-*s", name_w, "smt: cycles in ST mode");
	for (unsigned k = 0; k < n; k++) {
		const struct snap_mode *row = k == 0 ? &snap->mode_host : &snap->pkgs[k - 1].mode;

		if (row->valid)
			fprintf(out, " %10.1f%% ", 100.0 * row->fraction);
		else
			fprintf(out, " %11s", "-");
	}
	fputc('\n', out);
}

void report_once(FILE *out, const struct snapshot *snap)
{
	unsigned rows[ONCE_MAX_COLUMNS];
	const struct snap_counts *cols[ONCE_MAX_COLUMNS];
	char bottlenecks[ONCE_MAX_COLUMNS][80];
	const struct snap_pmu *p = snap->n_pmus ? &snap->pmus[0] : NULL;
	unsigned n = 0;
	int name_w = 22;

	fprintf(out, "# %u CPUs monitored on %u package%s, %s (%s, %s), level %u, model %s, interval %.3f s\n",
		snap->cpus_by_state[CPU_STATE_MONITORED], snap->n_pkgs, snap->n_pkgs == 1 ? "" : "s",
		p ? p->name : "none", p && p->pmu_name[0] ? p->pmu_name : "unknown",
		p && p->uarch[0] ? p->uarch : "no TopDown", snap->level,
		p && p->model[0] ? p->model : "none", snap->interval_s);
	/* Hybrid parts: the other core PMU, counted beside the first. */
	for (unsigned i = 1; i < snap->n_pmus; i++)
		fprintf(out, "# and %s (%s, %s), level %u, model %s\n", snap->pmus[i].name,
			snap->pmus[i].pmu_name[0] ? snap->pmus[i].pmu_name : "unknown",
			snap->pmus[i].uarch[0] ? snap->pmus[i].uarch : "no TopDown", snap->pmus[i].level,
			snap->pmus[i].model[0] ? snap->pmus[i].model : "none");
	for (unsigned i = 0; i < snap->n_pmus; i++)
		if (snap->pmus[i].core_share)
			fprintf(out, "# %s: SMT on, a CPU's figures are its share of its core (cores and packages add them up)\n",
				snap->pmus[i].name);
	/* The name column fits the longest category shown (AMD's level 2
	 * names are long). */
	for (int c = 0; c < TD_CAT_COUNT; c++)
		if (td_catset_has(snap->cats, (enum td_cat)c) && td_cat[c].level <= snap->level) {
			int len = (int)strlen(td_cat[c].name) + (td_cat[c].level == 2 ? 2 : 0);

			if (len > name_w)
				name_w = len;
		}
	/* And every node below level 2, indented two by level. */
	for (unsigned t = 0; t < snap->n_deep; t++)
		for (unsigned i = 0; i < snap->deep[t].n_nodes; i++) {
			const struct dt_node *nd = snap->deep[t].node[i];
			int len = (int)strlen(depth_short(nd->name)) + 2 * (int)(nd->level - 1) +
				  (snap->n_deep > 1 ? 2 : 0);

			if (len > name_w)
				name_w = len;
		}
	fprintf(out, "%-*s %12s", name_w, "", "host");
	rows[n] = snap_deep_row_host(snap);
	cols[n++] = &snap->host;
	for (unsigned i = 0; i < snap->n_pkgs && n < ONCE_MAX_COLUMNS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "package %d", snap->pkgs[i].package);
		fprintf(out, " %12s", name);
		rows[n] = snap_deep_row_pkg(snap, i);
		cols[n++] = &snap->pkgs[i].c;
	}
	fputc('\n', out);
	for (unsigned k = 0; k < n; k++)
		tma_bottleneck(&cols[k]->last[TD_C_CAT], snap->cats, snap->level >= 2,
			       bottlenecks[k], sizeof(bottlenecks[k]));
	for (int l1 = 0; l1 < TD_CAT_COUNT; l1++) {
		if (!td_catset_has(snap->cats, (enum td_cat)l1) || td_cat[l1].level != 1)
			continue;
		fprintf(out, "%-*s", name_w, td_cat[l1].name);
		for (unsigned k = 0; k < n; k++)
			cell(out, cols[k], l1, bottlenecks[k]);
		fputc('\n', out);
		if (snap->level < 2)
			continue;
		for (int l2 = 0; l2 < TD_CAT_COUNT; l2++) {
			if (!td_catset_has(snap->cats, (enum td_cat)l2) || td_cat[l2].level != 2 ||
			    td_cat[l2].parent != (enum td_cat)l1)
				continue;
			fprintf(out, "  %-*s", name_w - 2, td_cat[l2].name);
			for (unsigned k = 0; k < n; k++)
				cell(out, cols[k], l2, bottlenecks[k]);
			fputc('\n', out);
			print_trees(out, snap, (enum td_cat)l2, name_w, rows, n);
		}
		/* Nodes under a level-2 node of perf's that topdownd does not
		 * count as a category (Gracemont's tma_resource_bound, which is
		 * tma_backend_bound itself): under its name, without a value. */
		for (int l2 = 0; l2 < TD_CAT_COUNT && snap->level >= 2; l2++) {
			if (td_catset_has(snap->cats, (enum td_cat)l2) || td_cat[l2].level != 2 ||
			    td_cat[l2].parent != (enum td_cat)l1 || !has_nodes_under(snap, (enum td_cat)l2))
				continue;
			fprintf(out, "  %-*s", name_w - 2, td_cat[l2].name);
			for (unsigned k = 0; k < n; k++)
				fprintf(out, " %11s ", "-");
			fputc('\n', out);
			print_trees(out, snap, (enum td_cat)l2, name_w, rows, n);
		}
	}
	fprintf(out, "%-*s", name_w, "running");
	for (unsigned k = 0; k < n; k++) {
		const double *last = cols[k]->last;

		if (last[TD_C_ENABLED] > 0)
			fprintf(out, " %10.1f%% ", 100.0 * last[TD_C_RUNNING] / last[TD_C_ENABLED]);
		else
			fprintf(out, " %11s", "-");
	}
	fputc('\n', out);
	print_smt_rows(out, snap, name_w, n);
	print_mode_row(out, snap, name_w, n);
	fprintf(out, "\n* bottleneck: host %s\n", bottlenecks[0][0] ? bottlenecks[0] : "none (no slots counted)");
	/* perf stat prints the same fraction after each count; a running
	 * topdownd under a perf session (or the other way round) halves it. */
	if (snap->host.last[TD_C_ENABLED] > 0 &&
	    snap->host.last[TD_C_RUNNING] < 0.995 * snap->host.last[TD_C_ENABLED])
		fprintf(out, "note: the counters ran %.1f%% of the time: another user of the PMU shares "
			     "them (perf, a second topdownd) or the groups rotate; figures are scaled to "
			     "the whole interval, as perf does\n",
			100.0 * snap->host.last[TD_C_RUNNING] / snap->host.last[TD_C_ENABLED]);
	report_cgroups(out, snap);
}
