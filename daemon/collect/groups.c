/* SPDX-License-Identifier: MIT */
/* groups: opening each CPU's perf groups as the plan says, and what a
 * refusal means (permission, a CPU gone, the fd limit, counters another
 * user holds, the refinement events), with retries and backoff; the
 * budget probe's settling of a fresh plan (the collector's,
 * collector_internal.h). */
#include "collector_internal.h"

#include <dirent.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "log.h"
#include "perfev.h"
#include "util.h"

static struct log_ratelimit open_rl = LOG_RATELIMIT_INIT(60 * UINT64_C(1000000000), 10);

/* ---- groups ---- */

void coll_close_group(struct collector *c, struct ccpu *cc)
{
	coll_deep_close(c, cc);
	coll_smt_close(c, cc);
	/* Members first, the leaders last, as perf does. */
	for (int i = UA_EVENTS_MAX - 1; i >= 0; i--) {
		if (cc->fd[i] >= 0) {
			close(cc->fd[i]);
			c->fds_open--;
		}
		cc->fd[i] = -1;
		cc->cfd[i] = -1;
	}
	cc->read_failures = 0;
}

const char *coll_event_name(const struct cpmu *pm, const struct clayout *lay, unsigned pos)
{
	return pm->pp->ua->events[lay->events[pos]].name;
}

/* Replays the packer's placement of group @g up to position @upto (not
 * included): how many of its events took a general-purpose counter, and
 * whether one sits on fixed counter 1. */
unsigned coll_group_gp(const struct cpmu *pm, const struct clayout *lay, unsigned g, unsigned upto,
		       bool *on_fixed1)
{
	/* Fixed counters 0 to 6 (Skymont's 4-6: intel_skt_event_constraints),
	 * as the packer's (plan.c place()). */
	bool busy[UA_FIXED_MAX] = { false };
	unsigned n = 0;

	busy[1] = lay->fixed1_busy;
	if (on_fixed1)
		*on_fixed1 = false;
	for (unsigned i = lay->group_start[g]; i < upto && i < lay->group_start[g + 1]; i++) {
		int fixed = ua_event_fixed(&pm->pp->ua->events[lay->events[i]]);

		if (fixed == 3)
			continue;
		assert(fixed < UA_FIXED_MAX);
		if (fixed >= 0 && !busy[fixed]) {
			busy[fixed] = true;
			if (fixed == 1 && on_fixed1)
				*on_fixed1 = true;
			continue;
		}
		n++;
	}
	return n;
}

/* Who holds perf events besides us, as far as /proc shows (it needs the
 * permission to read other processes' descriptors): "perf (pid 1234)".
 * Only called on evidence, never per interval. */
void coll_perf_holders(char *buf, size_t len)
{
	char path[64], link[64], comm[64], clean[4 * 64];
	pid_t self = getpid();
	unsigned n = 0;
	struct dirent *d;
	DIR *proc;

	buf[0] = '\0';
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((d = readdir(proc)) && n < 3) {
		long pid = strtol(d->d_name, NULL, 10);
		bool holds = false;
		struct dirent *f;
		DIR *fds;

		if (pid <= 0 || pid == self)
			continue;
		str_printf(path, sizeof(path), "/proc/%ld/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!holds && (f = readdir(fds))) {
			char fdpath[128];
			ssize_t r;

			str_printf(fdpath, sizeof(fdpath), "%s/%s", path, f->d_name);
			r = readlink(fdpath, link, sizeof(link) - 1);
			holds = r > 0 && (link[r] = '\0', strcmp(link, "anon_inode:[perf_event]") == 0);
		}
		closedir(fds);
		if (!holds)
			continue;
		str_printf(path, sizeof(path), "/proc/%ld/comm", pid);
		comm[0] = '\0';
		{
			FILE *f2 = fopen(path, "re");

			if (f2) {
				if (!fgets(comm, sizeof(comm), f2))
					comm[0] = '\0';
				fclose(f2);
			}
		}
		comm[strcspn(comm, "\n")] = '\0';
		/* A process names itself (prctl): its name goes into the
		 * reason label as text any reader takes. */
		str_escape(clean, sizeof(clean), comm);
		str_printf(buf + strlen(buf), len - strlen(buf), "%s%s (pid %ld)", n ? ", " : "",
			   clean[0] ? clean : "?", pid);
		n++;
	}
	closedir(proc);
}

/* Opens @cc's groups with the events of its PMU.  On failure returns
 * -errno and the position of the event that failed in @failed. */
static int open_group(struct collector *c, struct ccpu *cc, unsigned *failed)
{
	const struct cpmu *pm = &c->pmus[cc->pmu];
	const struct clayout *lay = &cc->lay;
	const struct pmu_core *core = pm->pp->core;
	int r;

	/* Past the budget the descriptors belong to HTTP: as if the limit
	 * were reached, without reaching it. */
	if (c->fds_open + lay->n_events > c->fd_budget) {
		*failed = 0;
		return -EMFILE;
	}
	for (unsigned g = 0; g < lay->n_groups; g++) {
		unsigned lead = lay->group_start[g];

		for (unsigned i = lead; i < lay->group_start[g + 1]; i++) {
			struct perf_event_attr attr;

			/* Each group starts at once, as perf does: its leader
			 * disabled until the group is enabled. */
			perfev_attr(&attr, core->type, core->enc[lay->events[i]].config, c->count_kernel,
				    c->count_guest, READ_FORMAT, i == lead);
			r = perfev_open(&attr, cc->cpu, i == lead ? -1 : cc->fd[lead]);
			if (r < 0) {
				*failed = i;
				coll_close_group(c, cc);
				return r;
			}
			cc->fd[i] = r;
			c->fds_open++;
			r = perfev_id(cc->fd[i], &cc->id[i]);
			if (r < 0) {
				*failed = i;
				coll_close_group(c, cc);
				return r;
			}
		}
	}
	for (unsigned g = 0; g < lay->n_groups; g++) {
		r = perfev_enable_group(cc->fd[lay->group_start[g]]);
		if (r < 0) {
			*failed = lay->group_start[g];
			coll_close_group(c, cc);
			return r;
		}
	}
	for (unsigned i = 0; i < UA_EVENTS_MAX; i++)
		cc->cfd[i] = -1;
	for (unsigned i = 0; i < lay->n_events; i++)
		cc->cfd[lay->canon[i]] = cc->fd[i];
	cc->opened++;
	/* Counts and times start at 0 when a group is created: the first
	 * read is a full delta, nothing is lost after a reopen. */
	memset(cc->prev, 0, sizeof(cc->prev));
	memset(cc->prev_enabled, 0, sizeof(cc->prev_enabled));
	memset(cc->read_at, 0, sizeof(cc->read_at));
	memset(cc->prev_running, 0, sizeof(cc->prev_running));
	return 0;
}


/* n_waiting counts the CPUs worth revisiting: offline or failed. */
void coll_set_state(struct collector *c, struct ccpu *cc, enum cpu_state state)
{
	bool was = cc->state == CPU_STATE_OFFLINE || cc->state == CPU_STATE_FAILED;
	bool is = state == CPU_STATE_OFFLINE || state == CPU_STATE_FAILED;

	c->n_waiting = c->n_waiting + (unsigned)is - (unsigned)was;
	cc->state = state;
	coll_refresh(cc);
	c->gen++;
}

/* CAP_PERFMON or CAP_SYS_ADMIN in the effective set. */
static bool has_perf_capability(void)
{
	return caps_effective(CAP_PERFMON) || caps_effective(CAP_SYS_ADMIN);
}

/* Says which of the two ways to be allowed is missing. */
static void describe_permission(char *buf, size_t len)
{
	char text[16] = "";
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	bool cap = has_perf_capability();
	long paranoid = 99;

	if (f) {
		if (fgets(text, sizeof(text), f))
			paranoid = strtol(text, NULL, 10);
		fclose(f);
	}
	if (cap)
		str_printf(buf, len, "the process has CAP_PERFMON, so a security module (SELinux, AppArmor, "
			   "lockdown) or a seccomp filter denies perf_event_open");
	else if (!f)
		str_printf(buf, len, "the process lacks CAP_PERFMON and kernel.perf_event_paranoid cannot be read: "
			   "grant CAP_PERFMON (" CAPS_HOW_TO_GRANT ") or set kernel.perf_event_paranoid=0");
	else
		str_printf(buf, len, "the process lacks CAP_PERFMON and kernel.perf_event_paranoid is %ld: "
			   "grant CAP_PERFMON (" CAPS_HOW_TO_GRANT ") or run sysctl kernel.perf_event_paranoid=0",
			   paranoid);
}

/* EINVAL past the first general-purpose member of a group: validation
 * found the group too big for the counters (validate_group), not the
 * event unknown.  Records the evidence for the budget; true when it did. */
static bool too_big(struct collector *c, struct ccpu *cc, int r, unsigned failed)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	const struct clayout *lay = &cc->lay;
	unsigned g, before;

	/* Refinement events have their own fallback (model hardware). */
	if (r != -EINVAL || failed >= lay->n_events || failed >= pm->pp->n_core)
		return false;
	g = coll_group_of(lay, failed);
	before = coll_group_gp(pm, lay, g, failed, NULL);
	if (before == 0 || coll_group_gp(pm, lay, g, failed + 1, NULL) == before)
		return false;	/* the first GP member, or not a GP one */
	if (!pm->evidence_pending) {
		pm->evidence_pending = true;
		pm->evidence = (struct budget_evidence){
			.pmu = pm->core_idx, .cpu = cc->cpu, .group = g,
			.gp_in_group = coll_group_gp(pm, lay, g, lay->group_start[g + 1], NULL), .gp_fit = before,
		};
	}
	return true;
}

/* A hybrid PMU's CPUs as sysfs shows them now: the kernel removes a CPU
 * that goes offline from its PMU's cpus and adds it back when it returns
 * (arch/x86/events/intel/core.c: intel_pmu_cpu_dead, init_hybrid_pmu). */
void coll_refresh_covered(struct collector *c)
{
	for (unsigned i = 0; i < c->n_pmus; i++) {
		struct cpmu *pm = &c->pmus[i];
		char path[PATH_MAX_LEN], text[4096], err[128];

		if (!pm->pp->core->has_cpus)
			continue;
		str_printf(path, sizeof(path), "bus/event_source/devices/%s/cpus", pm->pp->core->name);
		if (sysfs_read(c->sysfs, path, text, sizeof(text)) >= 0)
			cpuset_parse(text, &pm->covered, err, sizeof(err));
	}
}

/* Whether @cc's CPU is offline, or no longer listed by its hybrid PMU. */
static bool cpu_gone(struct collector *c, struct ccpu *cc)
{
	topo_refresh_online(c->topo, c->sysfs);
	if (!cpuset_test(topo_online(c->topo), (unsigned)cc->cpu))
		return true;
	if (cc->pmu < 0 || !c->pmus[cc->pmu].pp->core->has_cpus)
		return false;
	coll_refresh_covered(c);
	return !cpuset_test(&c->pmus[cc->pmu].covered, (unsigned)cc->cpu);
}

/* Records an open failure on @cc: state, error counter, one log line. */
static void open_failed(struct collector *c, struct ccpu *cc, int r, unsigned failed,
			uint64_t now)
{
	const struct cpmu *pm = &c->pmus[cc->pmu];
	const char *ev = coll_event_name(pm, &cc->lay, failed);
	unsigned n_events = 0, n_monitor = cpuset_count(&c->plan->monitor);

	for (unsigned i = 0; i < c->n_pmus; i++)
		if (c->pmus[i].full.n_events > n_events)
			n_events = c->pmus[i].full.n_events;

	switch (-r) {
	case EACCES:
	case EPERM:
		c->errors[COLL_ERR_PERMISSION]++;
		coll_set_state(c, cc, CPU_STATE_FAILED);
		if (!c->warned_permission) {
			char why[300];

			c->warned_permission = true;
			describe_permission(why, sizeof(why));
			log_error_errno(r, "Failed to open the TopDown group on CPU %d: %m. Counting on every CPU "
					"needs CAP_PERFMON (or CAP_SYS_ADMIN) or kernel.perf_event_paranoid <= 0; %s%s",
					cc->cpu, why, c->oneshot ? "" : ". Retrying every 30s");
		}
		break;
	case ENOENT:
		/* A hybrid PMU leaves an offline CPU out of its cpus and answers
		 * ENOENT there (intel_pmu_cpu_dead, x86_pmu_event_init): offline,
		 * not unsupported. */
		if (cpu_gone(c, cc)) {
			c->errors[COLL_ERR_OFFLINE]++;
			coll_set_state(c, cc, CPU_STATE_OFFLINE);
			log_debug("CPU %d is offline (its PMU no longer lists it); monitored once it comes back",
				  cc->cpu);
			break;
		}
		/* fall through */
	case EINVAL:
		c->errors[COLL_ERR_UNSUPPORTED]++;
		coll_set_state(c, cc, CPU_STATE_UNSUPPORTED);
		log_ratelimited(&open_rl, LOG_LEVEL_WARNING, r,
				"CPU %d does not support %s (%m); not monitoring it", cc->cpu, ev);
		break;
	case EOPNOTSUPP:
	case EBUSY:
		/* Transient: a mediated vPMU refuses events while a VM holds
		 * the PMU (EOPNOTSUPP), an exclusive user (EBUSY).  Retried,
		 * ever less often, never given up. */
		c->errors[COLL_ERR_OPEN]++;
		coll_set_state(c, cc, CPU_STATE_FAILED);
		cc->backoff_ns = cc->backoff_ns ? cc->backoff_ns * 2 : RETRY_NS;
		if (cc->backoff_ns > RETRY_MAX_NS)
			cc->backoff_ns = RETRY_MAX_NS;
		log_ratelimited(&open_rl, LOG_LEVEL_WARNING, r,
				"Failed to open %s on CPU %d: %m (another user of the PMU: a virtual machine "
				"with a mediated vPMU, an exclusive profiler); retrying in %llu s",
				ev, cc->cpu, (unsigned long long)(cc->backoff_ns / NSEC_PER_SEC));
		cc->retry_at_ns = now + cc->backoff_ns;
		return;
	case ENODEV:
		c->errors[COLL_ERR_OFFLINE]++;
		coll_set_state(c, cc, CPU_STATE_OFFLINE);
		log_debug("CPU %d is offline; it will be monitored once it comes online", cc->cpu);
		break;
	case EMFILE:
	case ENFILE:
		c->errors[COLL_ERR_FD_LIMIT]++;
		coll_set_state(c, cc, CPU_STATE_FAILED);
		if (!c->warned_fds) {
			struct rlimit rl = { 0 };

			c->warned_fds = true;
			getrlimit(RLIMIT_NOFILE, &rl);
			log_error_errno(r, "Failed to open the TopDown group on CPU %d: %m. %u CPUs x %u events need "
					"%u file descriptors and %u more are kept for HTTP and the daemon; the limit is %llu: "
					"raise LimitNOFILE= (or ulimit -n)",
					cc->cpu, n_monitor, n_events, n_monitor * n_events, c->fd_others_min,
					(unsigned long long)rl.rlim_cur);
		}
		break;
	default:
		c->errors[COLL_ERR_OPEN]++;
		coll_set_state(c, cc, CPU_STATE_FAILED);
		log_ratelimited(&open_rl, LOG_LEVEL_ERROR, r, "Failed to open %s on CPU %d: %m",
				ev, cc->cpu);
		break;
	}
	cc->retry_at_ns = now + RETRY_NS;
}

/* The packer puts the refinement events after every needed one, in
 * any grouping (plan_pack): positions n_core and later. */
static bool refinement_refused(const struct cpmu *pm, const struct clayout *lay, int r, unsigned failed)
{
	return failed >= pm->pp->n_core && failed < lay->n_events &&
	       (r == -EINVAL || r == -ENOENT || r == -EOPNOTSUPP);
}

/* Drops the refinement events of @pm (they sit after the others, at the
 * end of the last group) on every CPU: their groupings follow. */
static void use_hardware_model(struct collector *c, struct cpmu *pm, const struct ccpu *at, unsigned failed,
			       int r)
{
	const char *ev = coll_event_name(pm, &at->lay, failed);
	struct clayout *full = &pm->full;

	log_warning_errno(r, "Failed to open %s on CPU %d: %m; using model hardware "
			  "(metric events only, no refinement) on all CPUs of %s", ev, at->cpu,
			  pm->pp->core->name);
	str_printf(pm->reason, sizeof(pm->reason),
		   "model perf unavailable: %s refused on CPU %d (%s); using model hardware",
		   ev, at->cpu, strerror(-r));
	full->n_events = pm->pp->n_core;
	for (unsigned g = 0; g <= full->n_groups; g++)
		if (full->group_start[g] > full->n_events)
			full->group_start[g] = (uint8_t)full->n_events;
	while (full->n_groups > 1 && full->group_start[full->n_groups - 1] == full->n_events)
		full->n_groups--;
	full->refine = false;
	pm->model.refine = false;
	tma_model_prepare(&pm->model);
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct ccpu *cc = &c->cpus[i];

		if (cc->pmu != (int)(pm - c->pmus))
			continue;
		if (cc->fd[0] >= 0)
			coll_close_group(c, cc);
		if (coll_layout(pm, cc->lay.gp, cc->lay.fixed1_busy, cc->lay.fixed_only, &cc->lay) < 0)
			cc->lay = *full;
	}
}

/* A CPU whose PMU's plan is being made again: failed for now, tried
 * again with the next plan (or at once if none comes). */
static void wait_for_plan(struct collector *c, struct ccpu *cc, uint64_t now)
{
	if (cc->state != CPU_STATE_FAILED)
		coll_set_state(c, cc, CPU_STATE_FAILED);
	cc->retry_at_ns = now;
}

static bool wants_groups(const struct ccpu *cc);

/* Opens one CPU's groups; returns true if it is monitored afterwards. */
bool coll_try_open(struct collector *c, struct ccpu *cc, uint64_t now)
{
	unsigned failed = 0;
	int r;

	if (c->pmus[cc->pmu].evidence_pending) {
		wait_for_plan(c, cc, now);
		return false;
	}
	if (!cc->probed) {
		coll_probe_cpu(c, cc, now);
		if (!wants_groups(cc))
			return false;
	}
	r = open_group(c, cc, &failed);
	if (r == 0) {
		coll_set_state(c, cc, CPU_STATE_MONITORED);
		cc->backoff_ns = 0;
		coll_smt_opened(c, cc, now);
		return true;
	}
	if (too_big(c, cc, r, failed)) {
		wait_for_plan(c, cc, now);
		return false;
	}
	open_failed(c, cc, r, failed, now);
	return false;
}

/* Raises RLIMIT_NOFILE to what the groups and the rest of the daemon
 * want and sets the groups' budget.  When the hard limit is too low and
 * cannot be raised (that needs CAP_SYS_RESOURCE), the rest keeps its
 * minimum and the groups get what is left. */
void coll_raise_fd_limit(struct collector *c)
{
	rlim_t perf = 0, deep = 0, want;
	unsigned n_events = 0, n_monitor = 0, n_deep = 0;
	struct rlimit rl;

	for (unsigned i = 0; i < c->n_pmus; i++) {
		unsigned n = cpuset_count(&c->pmus[i].pp->monitor);

		perf += (rlim_t)n * c->pmus[i].full.n_events;
		deep += (rlim_t)n * (coll_deep_events(&c->pmus[i]) + coll_smt_events(&c->pmus[i]));
		n_monitor += n;
		if (c->pmus[i].full.n_events > n_events)
			n_events = c->pmus[i].full.n_events;
		if (coll_deep_events(&c->pmus[i]) > n_deep)
			n_deep = coll_deep_events(&c->pmus[i]);
	}
	/* Hybrid CPUs that join a PMU later, with the largest groups. */
	n_monitor += cpuset_count(&c->plan->unlisted);
	perf += (rlim_t)cpuset_count(&c->plan->unlisted) * n_events;
	want = perf + deep + c->fd_others_want;
	c->fd_budget = (unsigned)(perf + deep);
	c->deep_fds_short = false;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < want) {
		struct rlimit raised = { want, rl.rlim_max > want ? rl.rlim_max : want };

		/* A higher hard limit needs CAP_SYS_RESOURCE: try, then take
		 * what the hard limit allows. */
		if (setrlimit(RLIMIT_NOFILE, &raised) < 0) {
			raised.rlim_cur = rl.rlim_max;
			raised.rlim_max = rl.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &raised) < 0)
				log_warning_errno(-errno, "Failed to raise RLIMIT_NOFILE to %llu: %m",
						  (unsigned long long)raised.rlim_cur);
		}
		if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
			return;
	}
	if (rl.rlim_cur >= want)
		return;
	/* Levels 1 and 2 first: the nodes below level 2 only with every
	 * descriptor they need. */
	if (deep) {
		c->deep_fds_short = true;
		log_warning("RLIMIT_NOFILE is %llu and cannot be raised (raising the hard limit needs CAP_SYS_RESOURCE): "
			    "the nodes below level 2 need %u descriptors per CPU more than levels 1 and 2; counting "
			    "levels 1 and 2 only. Set LimitNOFILE=%llu (or ulimit -n) to count them",
			    (unsigned long long)rl.rlim_cur, n_deep, (unsigned long long)want);
		want -= deep;
	}
	c->fd_budget = rl.rlim_cur >= want ? (unsigned)perf :
		       rl.rlim_cur > c->fd_others_min + perf ? (unsigned)perf :
		       rl.rlim_cur > c->fd_others_min ? (unsigned)(rl.rlim_cur - c->fd_others_min) : 0;
	if (c->fd_budget < perf && n_events)
		log_warning("RLIMIT_NOFILE is %llu and cannot be raised (raising the hard limit needs CAP_SYS_RESOURCE): "
			    "%u of the %u CPUs to monitor fit (%u descriptors each), keeping %u for HTTP and the daemon. "
			    "Set LimitNOFILE=%llu (or ulimit -n) to monitor every CPU",
			    (unsigned long long)rl.rlim_cur, c->fd_budget / n_events, n_monitor, n_events,
			    c->fd_others_min, (unsigned long long)want);
	/* The CPUs left out say so in their state; the line above says why. */
	c->warned_fds = c->fd_budget < perf;
}

/* Whether @cc should have groups open: selected, on a PMU, and not kept
 * from counting on purpose (unsupported, isolated, yielded without a
 * fixed-counter grouping, every counter held, a PMU that counts
 * nothing). */
static bool wants_groups(const struct ccpu *cc)
{
	return cc->selected && cc->pmu >= 0 &&
	       (cc->state == CPU_STATE_MONITORED || cc->state == CPU_STATE_FAILED ||
		cc->state == CPU_STATE_OFFLINE);
}

/* Opens the groups of every CPU that wants them and has none, each
 * grouped for the counters its probe finds free (share.c), falling back
 * to model hardware (on every CPU of the PMU: one model per core type) as
 * soon as a refinement event is refused. */
void coll_open_pending(struct collector *c, uint64_t now)
{
restart:
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct ccpu *cc = &c->cpus[i];
		unsigned failed = 0;
		int r;

		if (!wants_groups(cc) || cc->fd[0] >= 0)
			continue;
		if (c->pmus[cc->pmu].evidence_pending) {
			wait_for_plan(c, cc, now);
			continue;
		}
		/* What other users' pinned events leave this CPU, before its
		 * groups are made. */
		if (!cc->probed) {
			coll_probe_cpu(c, cc, now);
			if (!wants_groups(cc))
				continue;
		}
		r = open_group(c, cc, &failed);
		if (r < 0 && too_big(c, cc, r, failed)) {
			/* Every CPU of the PMU would fail alike: they wait for the
			 * plan the evidence brings (collector_take_evidence). */
			for (unsigned j = 0; j < c->n_cpus; j++)
				if (c->cpus[j].pmu == cc->pmu && c->cpus[j].fd[0] >= 0)
					coll_close_group(c, &c->cpus[j]);
			wait_for_plan(c, cc, now);
			continue;
		}
		if (r < 0 && refinement_refused(&c->pmus[cc->pmu], &cc->lay, r, failed)) {
			use_hardware_model(c, &c->pmus[cc->pmu], cc, failed, r);
			goto restart;
		}
		if (r == 0) {
			coll_set_state(c, cc, CPU_STATE_MONITORED);
			cc->backoff_ns = 0;
			coll_smt_opened(c, cc, now);
		} else {
			open_failed(c, cc, r, failed, now);
		}
	}
	coll_learned_flush(c);
}

bool collector_take_evidence(struct collector *c, struct budget_evidence *ev)
{
	for (unsigned i = 0; i < c->n_pmus; i++) {
		struct cpmu *pm = &c->pmus[i];

		if (!pm->evidence_pending || pm->evidence_taken)
			continue;
		*ev = pm->evidence;
		pm->evidence_taken = true;
		return true;
	}
	return false;
}

void collector_give_up(struct collector *c, unsigned core_idx, uint64_t now, const char *why)
{
	assert(core_idx < PMU_CORE_MAX); /* the budget's evidence names a core PMU */
	for (unsigned i = 0; i < c->n_pmus; i++) {
		struct cpmu *pm = &c->pmus[i];

		if (pm->core_idx != core_idx || !pm->evidence_pending)
			continue;
		str_printf(pm->reason, sizeof(pm->reason), "%s", why);
		pm->gave_up = true;
		c->gen++;
		/* Nothing left to give up: the CPUs that waited for a new plan
		 * fail as the kernel answered. */
		pm->evidence_pending = false;
		for (unsigned j = 0; j < c->n_cpus; j++) {
			struct ccpu *cc = &c->cpus[j];

			if (cc->pmu == (int)i && cc->fd[0] < 0 && cc->state == CPU_STATE_FAILED)
				open_failed(c, cc, -EINVAL, cc->lay.group_start[pm->evidence.group], now);
		}
	}
}

int collector_probe(struct collector *c, char *done, size_t donelen, char *avail, size_t availlen,
		    char *why, size_t whylen)
{
	const struct cpuset *online = topo_online(c->topo);

	done[0] = why[0] = avail[0] = '\0';
	coll_raise_fd_limit(c);
	for (unsigned p = 0; p < c->n_pmus; p++) {
		struct cpmu *pm = &c->pmus[p];
		struct ccpu *cc = NULL;
		unsigned failed = 0;
		int r;

		/* The counters every CPU leaves, as the daemon would find them. */
		for (unsigned i = 0; i < c->n_cpus; i++)
			if (c->cpus[i].pmu == (int)p && cpuset_test(&pm->pp->monitor, (unsigned)c->cpus[i].cpu) &&
			    cpuset_test(online, (unsigned)c->cpus[i].cpu))
				coll_probe_cpu(c, &c->cpus[i], mono_ns());
		if (availlen > strlen(avail) + 1) {
			size_t at = strlen(avail);

			at += (size_t)snprintf(avail + at, availlen - at, "%s%s: ", at ? "\n" : "", pm->pp->core->name);
			if (at < availlen)
				coll_describe_free(c, p, avail + at, availlen - at);
		}
		/* The groups themselves, on the first CPU that counts. */
		for (unsigned i = 0; i < c->n_cpus && !cc; i++)
			if (c->cpus[i].pmu == (int)p && cpuset_test(&pm->pp->monitor, (unsigned)c->cpus[i].cpu) &&
			    cpuset_test(online, (unsigned)c->cpus[i].cpu) && wants_groups(&c->cpus[i]))
				cc = &c->cpus[i];
		if (!cc) {
			if (!why[0])
				str_printf(why, whylen, "another user holds what TopDown needs on every CPU of %s "
					   "(Free now); the daemon waits for it and counts once it is free",
					   pm->pp->core->name);
			continue;
		}
		r = open_group(c, cc, &failed);
		if (r < 0 && too_big(c, cc, r, failed))
			return -EAGAIN;	/* the caller makes the plan again */
		if (r < 0 && refinement_refused(pm, &cc->lay, r, failed)) {
			use_hardware_model(c, pm, cc, failed, r);
			r = open_group(c, cc, &failed);
		}
		if (r == 0) {
			ssize_t got = perfev_read(cc->fd[0], c->buf, c->buf_words * sizeof(uint64_t));

			r = got < 0 ? (int)got : 0;
			failed = 0;
		}
		coll_close_group(c, cc);
		if (r < 0) {
			char fix[300] = "";

			if (r == -EACCES || r == -EPERM)
				describe_permission(fix, sizeof(fix));
			else if (r == -EMFILE || r == -ENFILE)
				str_printf(fix, sizeof(fix), "raise LimitNOFILE= (or ulimit -n)");
			else if (r == -ENOENT || r == -EINVAL || r == -EOPNOTSUPP)
				str_printf(fix, sizeof(fix), "the kernel's perf driver does not count this "
					   "event on this CPU (with --sysfs-root: is that tree this machine?)");
			str_printf(why, whylen, "opening %s on CPU %d (%s) failed: %s%s%s",
				   coll_event_name(pm, &cc->lay, failed), cc->cpu, pm->pp->core->name, strerror(-r),
				   fix[0] ? "; " : "", fix);
			return r;
		}
		str_printf(done + strlen(done), donelen - strlen(done), "%s%s on CPU %d, model %s",
			   done[0] ? ", " : "", pm->pp->core->name, cc->cpu,
			   pm->model.refine ? "perf" : "hardware");
	}
	if (!done[0]) {
		if (!why[0])
			str_printf(why, whylen, "no online CPU to count on");
		return -ENODEV;
	}
	return 0;
}

unsigned collector_packages(const struct collector *c)
{
	return c->n_pkgs;
}

unsigned collector_fds(const struct collector *c)
{
	return c->fds_open;
}

int collector_start(struct collector *c)
{
	if (!c->plan->usable)
		return 0;
	coll_raise_fd_limit(c);
	coll_open_pending(c, mono_ns());
	return 0;
}
