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

#include "log.h"
#include "perfev.h"
#include "util.h"

static struct log_ratelimit open_rl = LOG_RATELIMIT_INIT(60 * UINT64_C(1000000000), 10);

/* ---- groups ---- */

void coll_close_group(struct collector *c, struct ccpu *cc)
{
	/* Members first, the leaders last, as perf does. */
	for (int i = UA_EVENTS_MAX - 1; i >= 0; i--) {
		if (cc->fd[i] >= 0) {
			close(cc->fd[i]);
			c->fds_open--;
		}
		cc->fd[i] = -1;
	}
	cc->read_failures = 0;
}

const char *coll_event_name(const struct cpmu *pm, unsigned pos)
{
	return pm->pp->ua->events[pm->events[pos]].name;
}

/* Replays the packer's placement of group @g up to position @upto (not
 * included): how many of its events took a general-purpose counter, and
 * whether one sits on fixed counter 1. */
unsigned coll_group_gp(const struct cpmu *pm, unsigned g, unsigned upto, bool *on_fixed1)
{
	bool busy[4] = { false, false, false, false };
	unsigned n = 0;

	busy[1] = pm->pp->fixed1_busy;
	if (on_fixed1)
		*on_fixed1 = false;
	for (unsigned i = pm->group_start[g]; i < upto && i < pm->group_start[g + 1]; i++) {
		int fixed = ua_event_fixed(&pm->pp->ua->events[pm->events[i]]);

		if (fixed == 3)
			continue;
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

unsigned coll_group_of(const struct cpmu *pm, unsigned pos)
{
	unsigned g = 0;

	while (g + 1 < pm->n_groups && pos >= pm->group_start[g + 1])
		g++;
	return g;
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
	const struct pmu_core *core = pm->pp->core;
	int r;

	/* Past the budget the descriptors belong to HTTP: as if the limit
	 * were reached, without reaching it. */
	if (c->fds_open + pm->n_events > c->fd_budget) {
		*failed = 0;
		return -EMFILE;
	}
	for (unsigned g = 0; g < pm->n_groups; g++) {
		unsigned lead = pm->group_start[g];

		for (unsigned i = lead; i < pm->group_start[g + 1]; i++) {
			struct perf_event_attr attr;

			/* Each group starts at once, as perf does: its leader
			 * disabled until the group is enabled. */
			perfev_attr(&attr, core->type, core->enc[pm->events[i]].config, c->count_kernel,
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
	for (unsigned g = 0; g < pm->n_groups; g++) {
		r = perfev_enable_group(cc->fd[pm->group_start[g]]);
		if (r < 0) {
			*failed = pm->group_start[g];
			coll_close_group(c, cc);
			return r;
		}
	}
	cc->opened++;
	/* Counts and times start at 0 when a group is created: the first
	 * read is a full delta, nothing is lost after a reopen. */
	memset(cc->prev, 0, sizeof(cc->prev));
	memset(cc->prev_enabled, 0, sizeof(cc->prev_enabled));
	memset(cc->read_at, 0, sizeof(cc->read_at));
	memset(cc->prev_running, 0, sizeof(cc->prev_running));
	return 0;
}

/* A group that is open is read every interval: the CPU is monitored, or
 * failed because its reads fail. */
bool coll_group_open(const struct ccpu *cc)
{
	return cc->fd[0] >= 0 &&
	       (cc->state == CPU_STATE_MONITORED || cc->state == CPU_STATE_FAILED);
}

/* n_waiting counts the CPUs worth revisiting: offline or failed. */
void coll_set_state(struct collector *c, struct ccpu *cc, enum cpu_state state)
{
	bool was = cc->state == CPU_STATE_OFFLINE || cc->state == CPU_STATE_FAILED;
	bool is = state == CPU_STATE_OFFLINE || state == CPU_STATE_FAILED;

	c->n_waiting = c->n_waiting + (unsigned)is - (unsigned)was;
	cc->state = state;
	c->gen++;
}

/* CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in the effective set. */
static bool has_perf_capability(void)
{
	char line[256];
	bool has = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long eff;

		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			has = (eff >> 38) & 1 || (eff >> 21) & 1;
			break;
		}
	}
	fclose(f);
	return has;
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
			   "grant CAP_PERFMON (AmbientCapabilities=CAP_PERFMON) or set kernel.perf_event_paranoid=0");
	else
		str_printf(buf, len, "the process lacks CAP_PERFMON and kernel.perf_event_paranoid is %ld: "
			   "grant CAP_PERFMON (AmbientCapabilities=CAP_PERFMON) or run sysctl kernel.perf_event_paranoid=0",
			   paranoid);
}

/* EINVAL past the first general-purpose member of a group: validation
 * found the group too big for the counters (validate_group), not the
 * event unknown.  Records the evidence for the budget; true when it did. */
static bool too_big(struct collector *c, struct ccpu *cc, int r, unsigned failed)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	unsigned g, before;

	/* Refinement events have their own fallback (model hardware). */
	if (r != -EINVAL || failed >= pm->n_events || failed >= pm->pp->n_core)
		return false;
	g = coll_group_of(pm, failed);
	before = coll_group_gp(pm, g, failed, NULL);
	if (before == 0 || coll_group_gp(pm, g, failed + 1, NULL) == before)
		return false;	/* the first GP member, or not a GP one */
	if (!pm->evidence_pending) {
		pm->evidence_pending = true;
		pm->evidence = (struct budget_evidence){
			.kind = BUDGET_TOO_BIG, .pmu = pm->core_idx, .cpu = cc->cpu, .group = g,
			.gp_in_group = coll_group_gp(pm, g, pm->group_start[g + 1], NULL), .gp_fit = before,
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
	const char *ev = coll_event_name(pm, failed);
	unsigned n_events = 0, n_monitor = cpuset_count(&c->plan->monitor);

	for (unsigned i = 0; i < c->n_pmus; i++)
		if (c->pmus[i].n_events > n_events)
			n_events = c->pmus[i].n_events;

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

static bool refinement_refused(const struct cpmu *pm, int r, unsigned failed)
{
	return failed >= pm->pp->n_core && failed < pm->n_events &&
	       (r == -EINVAL || r == -ENOENT || r == -EOPNOTSUPP);
}

/* Drops the refinement events of @pm (they sit after the others, at the
 * end of the last group). */
static void use_hardware_model(struct cpmu *pm, int cpu, unsigned failed, int r)
{
	const char *ev = coll_event_name(pm, failed);

	log_warning_errno(r, "Failed to open %s on CPU %d: %m; using model hardware "
			  "(metric events only, no refinement) on all CPUs of %s", ev, cpu,
			  pm->pp->core->name);
	str_printf(pm->reason, sizeof(pm->reason),
		   "model perf unavailable: %s refused on CPU %d (%s); using model hardware",
		   ev, cpu, strerror(-r));
	pm->n_events = pm->pp->n_core;
	for (unsigned g = 0; g <= pm->n_groups; g++)
		if (pm->group_start[g] > pm->n_events)
			pm->group_start[g] = (uint8_t)pm->n_events;
	while (pm->n_groups > 1 && pm->group_start[pm->n_groups - 1] == pm->n_events)
		pm->n_groups--;
	pm->model.refine = false;
}

/* A CPU whose PMU's plan is being made again: failed for now, tried
 * again with the next plan (or at once if none comes). */
static void wait_for_plan(struct collector *c, struct ccpu *cc, uint64_t now)
{
	if (cc->state != CPU_STATE_FAILED)
		coll_set_state(c, cc, CPU_STATE_FAILED);
	cc->retry_at_ns = now;
}

/* Opens one CPU's groups; returns true if it is monitored afterwards. */
bool coll_try_open(struct collector *c, struct ccpu *cc, uint64_t now)
{
	unsigned failed = 0;
	int r;

	if (c->pmus[cc->pmu].evidence_pending) {
		wait_for_plan(c, cc, now);
		return false;
	}
	r = open_group(c, cc, &failed);
	if (r == 0) {
		coll_set_state(c, cc, CPU_STATE_MONITORED);
		cc->backoff_ns = 0;
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
	rlim_t perf = 0, want;
	unsigned n_events = 0, n_monitor = 0;
	struct rlimit rl;

	for (unsigned i = 0; i < c->n_pmus; i++) {
		unsigned n = cpuset_count(&c->pmus[i].pp->monitor);

		perf += (rlim_t)n * c->pmus[i].n_events;
		n_monitor += n;
		if (c->pmus[i].n_events > n_events)
			n_events = c->pmus[i].n_events;
	}
	/* Hybrid CPUs that join a PMU later, with the largest groups. */
	n_monitor += cpuset_count(&c->plan->unlisted);
	perf += (rlim_t)cpuset_count(&c->plan->unlisted) * n_events;
	want = perf + c->fd_others_want;
	c->fd_budget = (unsigned)perf;
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
	c->fd_budget = rl.rlim_cur > c->fd_others_min + perf ? (unsigned)perf :
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

/* Opens the groups of every selected, covered CPU that has none, falling
 * back to model hardware (on every CPU of the PMU: one model per core
 * type) as soon as a refinement event is refused. */
void coll_open_pending(struct collector *c, uint64_t now)
{
restart:
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct ccpu *cc = &c->cpus[i];
		unsigned failed = 0;
		int r;

		if (!cc->selected || cc->pmu < 0 || cc->state == CPU_STATE_UNSUPPORTED ||
		    cc->fd[0] >= 0)
			continue;
		if (c->pmus[cc->pmu].evidence_pending) {
			wait_for_plan(c, cc, now);
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
		if (r < 0 && refinement_refused(&c->pmus[cc->pmu], r, failed)) {
			use_hardware_model(&c->pmus[cc->pmu], cc->cpu, failed, r);
			for (unsigned j = 0; j < c->n_cpus; j++)
				if (c->cpus[j].pmu == cc->pmu && c->cpus[j].fd[0] >= 0)
					coll_close_group(c, &c->cpus[j]);
			goto restart;
		}
		if (r == 0) {
			coll_set_state(c, cc, CPU_STATE_MONITORED);
			cc->backoff_ns = 0;
		} else {
			open_failed(c, cc, r, failed, now);
		}
	}
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
		 * fail as the kernel answered; groups that never run stay open
		 * and report no numbers. */
		pm->evidence_pending = false;
		for (unsigned j = 0; j < c->n_cpus; j++) {
			struct ccpu *cc = &c->cpus[j];

			if (cc->pmu == (int)i && cc->fd[0] < 0 && cc->state == CPU_STATE_FAILED)
				open_failed(c, cc, -EINVAL, pm->group_start[pm->evidence.group], now);
		}
	}
}

/* Every group of @cc, just opened, runs: after SETTLE_NS (enough mux
 * slices for PLAN_GROUPS_MAX groups to take their turn) each has running
 * time, or another user holds what it needs (evidence, -EAGAIN).  -errno
 * when a read fails.  Time that does not pass (a fake clock) proves
 * nothing either way: 0. */
static int settle(struct collector *c, struct ccpu *cc)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	struct timespec ts = { 0, SETTLE_NS };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	for (unsigned g = 0; g < pm->n_groups; g++) {
		ssize_t r;

		r = perfev_read(cc->fd[pm->group_start[g]], c->buf, c->buf_words * sizeof(uint64_t));
		if (r < (ssize_t)(3 * sizeof(uint64_t)))
			return r < 0 ? (int)r : -EIO;
		if (c->buf[1] > 0 && c->buf[2] == 0) {
			bool on_fixed1;

			if (pm->evidence_taken)
				return 0;	/* given up: it stays without numbers */
			pm->evidence_pending = true;
			pm->evidence = (struct budget_evidence){
				.kind = BUDGET_NEVER_RAN, .pmu = pm->core_idx, .cpu = cc->cpu, .group = g,
				.gp_in_group = coll_group_gp(pm, g, pm->group_start[g + 1], &on_fixed1),
				.seconds = (double)c->buf[1] / 1e9,
			};
			pm->evidence.uses_fixed1 = on_fixed1;
			coll_perf_holders(pm->evidence.holders, sizeof(pm->evidence.holders));
			return -EAGAIN;
		}
	}
	return 0;
}

int collector_probe(struct collector *c, char *done, size_t donelen, char *why, size_t whylen)
{
	const struct cpuset *online = topo_online(c->topo);

	done[0] = why[0] = '\0';
	coll_raise_fd_limit(c);
	for (unsigned p = 0; p < c->n_pmus; p++) {
		struct cpmu *pm = &c->pmus[p];
		struct ccpu *cc = NULL;
		unsigned failed = 0;
		int r;

		for (unsigned i = 0; i < c->n_cpus && !cc; i++)
			if (c->cpus[i].pmu == (int)p && cpuset_test(&pm->pp->monitor, (unsigned)c->cpus[i].cpu) &&
			    cpuset_test(online, (unsigned)c->cpus[i].cpu))
				cc = &c->cpus[i];
		if (!cc)
			continue;
		r = open_group(c, cc, &failed);
		if (r < 0 && too_big(c, cc, r, failed))
			return -EAGAIN;	/* the caller makes the plan again */
		if (r < 0 && refinement_refused(pm, r, failed)) {
			use_hardware_model(pm, cc->cpu, failed, r);
			r = open_group(c, cc, &failed);
		}
		if (r == 0) {
			r = settle(c, cc);
			failed = 0;
		}
		coll_close_group(c, cc);
		if (r == -EAGAIN)
			return r;
		if (r < 0) {
			char fix[300] = "";

			if (r == -EACCES || r == -EPERM)
				describe_permission(fix, sizeof(fix));
			else if (r == -EMFILE || r == -ENFILE)
				str_printf(fix, sizeof(fix), "raise LimitNOFILE= (or ulimit -n)");
			else if (r == -ENOENT || r == -EINVAL || r == -EOPNOTSUPP)
				str_printf(fix, sizeof(fix), "the kernel's perf driver does not count this "
					   "event on this CPU (with --sysfs-root: is that tree this machine?)");
			str_printf(why, whylen, "opening %s on CPU %d (%s) failed: %s%s%s", coll_event_name(pm, failed),
				   cc->cpu, pm->pp->core->name, strerror(-r), fix[0] ? "; " : "", fix);
			return r;
		}
		str_printf(done + strlen(done), donelen - strlen(done), "%s%s on CPU %d, model %s",
			   done[0] ? ", " : "", pm->pp->core->name, cc->cpu,
			   pm->model.refine ? "perf" : "hardware");
	}
	if (!done[0]) {
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

/* The settle check on one CPU of each PMU whose groups were just made. */
void coll_settle_fresh(struct collector *c)
{
	for (unsigned p = 0; p < c->n_pmus; p++) {
		struct cpmu *pm = &c->pmus[p];

		if (!pm->fresh || pm->evidence_pending)
			continue;
		pm->fresh = false;
		for (unsigned i = 0; i < c->n_cpus; i++)
			if (c->cpus[i].pmu == (int)p && c->cpus[i].state == CPU_STATE_MONITORED &&
			    c->cpus[i].fd[0] >= 0) {
				settle(c, &c->cpus[i]);
				break;
			}
	}
}

int collector_start(struct collector *c)
{
	if (!c->plan->usable)
		return 0;
	coll_raise_fd_limit(c);
	coll_open_pending(c, mono_ns());
	coll_settle_fresh(c);
	return 0;
}
