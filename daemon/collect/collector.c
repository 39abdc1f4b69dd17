/* SPDX-License-Identifier: MIT */
/* collector: perf groups, interval reads, fault isolation, hotplug. */
#include "collector.h"
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
#include "tma.h"
#include "util.h"

#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID | \
		     PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
/* A failed CPU (permission, fd limit...) is tried again this often. */
#define RETRY_NS (30 * UINT64_C(1000000000))
/* Reads failing this many intervals in a row make a CPU failed (its group
 * stays open and is read every interval; the first good read brings it
 * back, its delta covering the whole gap). */
#define PATH_MAX_LEN 256
#define READ_FAILURES_FAILED 3
#define EINTR_RETRIES 3
/* Transient refusals (EBUSY, EOPNOTSUPP) back off up to this. */
#define RETRY_MAX_NS (600 * UINT64_C(1000000000))
/* A group enabled this long (and RUN_READS reads in a row) that never ran:
 * another user holds counters it needs. */
#define NORUN_NS (1000 * UINT64_C(1000000))
#define NORUN_READS 3
/* Time a fresh plan's groups are given to show they run (collector_probe,
 * collector_start): 15 of the kernel's 4 ms mux slices. */
#define SETTLE_NS 60000000L

static struct log_ratelimit read_rl = LOG_RATELIMIT_INIT(60 * UINT64_C(1000000000), 10);
static struct log_ratelimit open_rl = LOG_RATELIMIT_INIT(60 * UINT64_C(1000000000), 10);

/* ---- layout: CPUs to cores and packages ---- */

static int core_cmp(const void *a, const void *b)
{
	const struct layout_core *x = a, *y = b;

	if (x->package != y->package)
		return x->package < y->package ? -1 : 1;
	if (x->die != y->die)
		return x->die < y->die ? -1 : 1;
	return x->core_id < y->core_id ? -1 : x->core_id > y->core_id;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static int find_core(const struct collector *c, const struct topo_cpu *t)
{
	for (unsigned i = 0; i < c->n_cores; i++)
		if (c->cores[i].package == t->package && c->cores[i].die == t->die &&
		    c->cores[i].core_id == t->core_id)
			return (int)i;
	return -1;
}

static int find_pkg(const struct collector *c, int package)
{
	for (unsigned i = 0; i < c->n_pkgs; i++)
		if (c->pkgs[i] == package)
			return (int)i;
	return -1;
}

/* Sorted cores and packages of every CPU whose topology is known.  Runs
 * at start and when a CPU of unknown topology comes online. */
static void build_layout(struct collector *c)
{
	c->n_cores = 0;
	c->n_pkgs = 0;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		const struct topo_cpu *t = topo_cpu(c->topo, (unsigned)c->cpus[i].cpu);

		c->cpus[i].known = t && t->known;
		if (!c->cpus[i].known)
			continue;
		if (find_core(c, t) < 0)
			c->cores[c->n_cores++] = (struct layout_core){ t->package, t->die, t->core_id };
		if (find_pkg(c, t->package) < 0)
			c->pkgs[c->n_pkgs++] = t->package;
	}
	qsort(c->cores, c->n_cores, sizeof(*c->cores), core_cmp);
	qsort(c->pkgs, c->n_pkgs, sizeof(*c->pkgs), int_cmp);
	for (unsigned i = 0; i < c->n_cpus; i++) {
		const struct topo_cpu *t = topo_cpu(c->topo, (unsigned)c->cpus[i].cpu);

		c->cpus[i].core_idx = c->cpus[i].known ? find_core(c, t) : -1;
		c->cpus[i].pkg_idx = c->cpus[i].known ? find_pkg(c, t->package) : -1;
	}
	c->layout++;
	c->gen++;
}

/* ---- groups ---- */

static void close_group(struct collector *c, struct ccpu *cc)
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

static const char *event_name(const struct cpmu *pm, unsigned pos)
{
	return pm->pp->ua->events[pm->events[pos]].name;
}

/* Replays the packer's placement of group @g up to position @upto (not
 * included): how many of its events took a general-purpose counter, and
 * whether one sits on fixed counter 1. */
static unsigned group_gp(const struct cpmu *pm, unsigned g, unsigned upto, bool *on_fixed1)
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

static unsigned group_of(const struct cpmu *pm, unsigned pos)
{
	unsigned g = 0;

	while (g + 1 < pm->n_groups && pos >= pm->group_start[g + 1])
		g++;
	return g;
}

/* Who holds perf events besides us, as far as /proc shows (it needs the
 * permission to read other processes' descriptors): "perf (pid 1234)".
 * Only called on evidence, never per interval. */
static void perf_holders(char *buf, size_t len)
{
	char path[64], link[64], comm[64];
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
		str_printf(buf + strlen(buf), len - strlen(buf), "%s%s (pid %ld)", n ? ", " : "",
			   comm[0] ? comm : "?", pid);
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
				close_group(c, cc);
				return r;
			}
			cc->fd[i] = r;
			c->fds_open++;
			r = perfev_id(cc->fd[i], &cc->id[i]);
			if (r < 0) {
				*failed = i;
				close_group(c, cc);
				return r;
			}
		}
	}
	for (unsigned g = 0; g < pm->n_groups; g++) {
		r = perfev_enable_group(cc->fd[pm->group_start[g]]);
		if (r < 0) {
			*failed = pm->group_start[g];
			close_group(c, cc);
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
static bool group_open(const struct ccpu *cc)
{
	return cc->fd[0] >= 0 &&
	       (cc->state == CPU_STATE_MONITORED || cc->state == CPU_STATE_FAILED);
}

/* n_waiting counts the CPUs worth revisiting: offline or failed. */
static void set_state(struct collector *c, struct ccpu *cc, enum cpu_state state)
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
	g = group_of(pm, failed);
	before = group_gp(pm, g, failed, NULL);
	if (before == 0 || group_gp(pm, g, failed + 1, NULL) == before)
		return false;	/* the first GP member, or not a GP one */
	if (!pm->evidence_pending) {
		pm->evidence_pending = true;
		pm->evidence = (struct budget_evidence){
			.kind = BUDGET_TOO_BIG, .pmu = pm->core_idx, .cpu = cc->cpu, .group = g,
			.gp_in_group = group_gp(pm, g, pm->group_start[g + 1], NULL), .gp_fit = before,
		};
	}
	return true;
}

/* A hybrid PMU's CPUs as sysfs shows them now: the kernel removes a CPU
 * that goes offline from its PMU's cpus and adds it back when it returns
 * (arch/x86/events/intel/core.c: intel_pmu_cpu_dead, init_hybrid_pmu). */
static void refresh_covered(struct collector *c)
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
	refresh_covered(c);
	return !cpuset_test(&c->pmus[cc->pmu].covered, (unsigned)cc->cpu);
}

/* Records an open failure on @cc: state, error counter, one log line. */
static void open_failed(struct collector *c, struct ccpu *cc, int r, unsigned failed,
			uint64_t now)
{
	const struct cpmu *pm = &c->pmus[cc->pmu];
	const char *ev = event_name(pm, failed);
	unsigned n_events = 0, n_monitor = cpuset_count(&c->plan->monitor);

	for (unsigned i = 0; i < c->n_pmus; i++)
		if (c->pmus[i].n_events > n_events)
			n_events = c->pmus[i].n_events;

	switch (-r) {
	case EACCES:
	case EPERM:
		c->errors[COLL_ERR_PERMISSION]++;
		set_state(c, cc, CPU_STATE_FAILED);
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
			set_state(c, cc, CPU_STATE_OFFLINE);
			log_debug("CPU %d is offline (its PMU no longer lists it); monitored once it comes back",
				  cc->cpu);
			break;
		}
		/* fall through */
	case EINVAL:
		c->errors[COLL_ERR_UNSUPPORTED]++;
		set_state(c, cc, CPU_STATE_UNSUPPORTED);
		log_ratelimited(&open_rl, LOG_LEVEL_WARNING, r,
				"CPU %d does not support %s (%m); not monitoring it", cc->cpu, ev);
		break;
	case EOPNOTSUPP:
	case EBUSY:
		/* Transient: a mediated vPMU refuses events while a VM holds
		 * the PMU (EOPNOTSUPP), an exclusive user (EBUSY).  Retried,
		 * ever less often, never given up. */
		c->errors[COLL_ERR_OPEN]++;
		set_state(c, cc, CPU_STATE_FAILED);
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
		set_state(c, cc, CPU_STATE_OFFLINE);
		log_debug("CPU %d is offline; it will be monitored once it comes online", cc->cpu);
		break;
	case EMFILE:
	case ENFILE:
		c->errors[COLL_ERR_FD_LIMIT]++;
		set_state(c, cc, CPU_STATE_FAILED);
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
		set_state(c, cc, CPU_STATE_FAILED);
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
	const char *ev = event_name(pm, failed);

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
		set_state(c, cc, CPU_STATE_FAILED);
	cc->retry_at_ns = now;
}

/* Opens one CPU's groups; returns true if it is monitored afterwards. */
static bool try_open(struct collector *c, struct ccpu *cc, uint64_t now)
{
	unsigned failed = 0;
	int r;

	if (c->pmus[cc->pmu].evidence_pending) {
		wait_for_plan(c, cc, now);
		return false;
	}
	r = open_group(c, cc, &failed);
	if (r == 0) {
		set_state(c, cc, CPU_STATE_MONITORED);
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
static void raise_fd_limit(struct collector *c)
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
static void open_pending(struct collector *c, uint64_t now)
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
					close_group(c, &c->cpus[j]);
			wait_for_plan(c, cc, now);
			continue;
		}
		if (r < 0 && refinement_refused(&c->pmus[cc->pmu], r, failed)) {
			use_hardware_model(&c->pmus[cc->pmu], cc->cpu, failed, r);
			for (unsigned j = 0; j < c->n_cpus; j++)
				if (c->cpus[j].pmu == cc->pmu && c->cpus[j].fd[0] >= 0)
					close_group(c, &c->cpus[j]);
			goto restart;
		}
		if (r == 0) {
			set_state(c, cc, CPU_STATE_MONITORED);
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
				.gp_in_group = group_gp(pm, g, pm->group_start[g + 1], &on_fixed1),
				.seconds = (double)c->buf[1] / 1e9,
			};
			pm->evidence.uses_fixed1 = on_fixed1;
			perf_holders(pm->evidence.holders, sizeof(pm->evidence.holders));
			return -EAGAIN;
		}
	}
	return 0;
}

int collector_probe(struct collector *c, char *done, size_t donelen, char *why, size_t whylen)
{
	const struct cpuset *online = topo_online(c->topo);

	done[0] = why[0] = '\0';
	raise_fd_limit(c);
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
		close_group(c, cc);
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
			str_printf(why, whylen, "opening %s on CPU %d (%s) failed: %s%s%s", event_name(pm, failed),
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
static void settle_fresh(struct collector *c)
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
	raise_fd_limit(c);
	open_pending(c, mono_ns());
	settle_fresh(c);
	return 0;
}

/* Events that count work a running CPU cannot help doing: ops issued or
 * retired.  One of them counting nothing over a second in which cycles
 * counted is not a workload but an event the CPU does not implement, or a
 * hypervisor filters (both open and count 0): the figures built on it would
 * look right and be wrong. */
static bool counts_work(enum td_event v)
{
	switch (v) {
	case TD_EV_ARM_OP_SPEC:
	case TD_EV_ARM_OP_RETIRED:
	case TD_EV_UOPS_ISSUED:
	case TD_EV_RETIRE_SLOTS:
	case TD_EV_ZEN_OPS_DISPATCHED:
	case TD_EV_ZEN_OPS_RETIRED:
	case TD_EV_ATOM_RETIRING:
	case TD_EV_UOPS_RETIRED_SLOTS:
	case TD_EV_SLOTS_P:
		return true;
	default:
		return false;
	}
}

/* What a PMU's reason says while nothing is wrong: the plan's note. */
static const char *plan_note(const struct plan_pmu *pp)
{
	return pp->level_note[0] ? pp->level_note : pp->model_note[0] ? pp->model_note : pp->group_note;
}

/* A monitored PMU's reason: where its slot width came from when not from
 * the PMU (a guest's: pmu.h slots_published), then the plan's note. */
static void plan_reason(const struct plan_pmu *pp, char *buf, size_t len)
{
	const char *note = plan_note(pp);
	char slots[PMU_REASON_MAX];

	pmu_guest_note(pp->core, slots, sizeof(slots));
	str_printf(buf, len, "%s%s%s", slots, slots[0] && note[0] ? "; " : "", note);
}

static void plan_to_pmu(const struct collector *c, struct cpmu *pm, const struct plan_pmu *pp)
{
	pm->pp = pp;
	pm->core_idx = (unsigned)(pp->core - c->pmu->core);
	pm->covered = pp->core->cpus;
	pm->evidence_pending = pm->evidence_taken = false;
	pm->fresh = true;
	pm->planned_n_events = pp->n_events;
	memcpy(pm->planned_events, pp->events, sizeof(pm->planned_events));
	memcpy(pm->planned_group_start, pp->group_start, sizeof(pm->planned_group_start));
	pm->planned_n_groups = pp->n_groups;
	pm->n_events = pp->n_events;
	memcpy(pm->events, pp->events, sizeof(pm->events));
	for (unsigned i = 0; i < pm->n_events; i++)
		pm->var[i] = pp->ua->events[pp->events[i]].var;
	pm->n_groups = pp->n_groups;
	memcpy(pm->group_start, pp->group_start, sizeof(pm->group_start));
	pm->model = (struct tma_model){ .formulas = pp->ua->formulas,
					.refine = pp->model == MODEL_PERF,
					.level = pp->level,
					.width = pp->ua->width,
					.mode = pp->mode,
					.slots_per_cycle = pp->core->slots,
					.stall_minus_cycles = pp->core->stall_minus_cycles };
	snap_cols_of(pp->cats, &pm->cols);
	memset(&pm->input, 0, sizeof(pm->input));
	plan_reason(pp, pm->reason, sizeof(pm->reason));
	pm->silent = false;
	pm->gave_up = false;
	pm->cycles_pos = -1;
	for (unsigned i = 0; i < pm->n_events && pm->cycles_pos < 0; i++)
		if (pm->var[i] == TD_EV_CYCLES || pm->var[i] == TD_EV_CYCLES_ANY)
			pm->cycles_pos = (int)i;
}

static bool same_groups(const struct cpmu *pm, const struct plan_pmu *pp)
{
	return pm->pp && pm->pp->core == pp->core && pm->planned_n_events == pp->n_events &&
	       memcmp(pm->planned_events, pp->events, pp->n_events) == 0 &&
	       pm->planned_n_groups == pp->n_groups &&
	       memcmp(pm->planned_group_start, pp->group_start, pp->n_groups + 1) == 0;
}

/* Takes the plan's choices: group composition, model, notes, and which
 * CPUs are selected and covered.  Closes the groups that must change. */
static void apply_plan(struct collector *c, bool reopen_all)
{
	const struct plan *plan = c->plan;
	bool reopen[PMU_CORE_MAX] = { false };
	struct cpmu old[PMU_CORE_MAX];
	unsigned n_old = c->n_pmus;

	memcpy(old, c->pmus, sizeof(old));
	/* Groups that stay open keep the composition they were opened with,
	 * fallback to model hardware included. */
	for (unsigned i = 0; i < plan->n_pmus; i++) {
		const struct plan_pmu *pp = &plan->pmu[i];
		int keep = -1;

		for (unsigned j = 0; j < n_old && !reopen_all; j++)
			if (same_groups(&old[j], pp))
				keep = (int)j;
		if (keep >= 0) {
			c->pmus[i] = old[keep];
			c->pmus[i].pp = pp;
		} else {
			plan_to_pmu(c, &c->pmus[i], pp);
			reopen[i] = true;
		}
	}
	c->n_pmus = plan->n_pmus;
	/* The next snapshot starts afresh: the last interval's figures of
	 * the old plan are not carried over. */
	c->gen++;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct ccpu *cc = &c->cpus[i];
		bool want = cpuset_test(&plan->selected, (unsigned)cc->cpu);
		int pmu = -1;

		for (unsigned k = 0; k < plan->n_pmus && want; k++)
			if (cpuset_test(&plan->pmu[k].monitor, (unsigned)cc->cpu))
				pmu = (int)k;
		/* A CPU whose PMU changed, or whose groups change, reopens. */
		if (cc->fd[0] >= 0 && (pmu < 0 || reopen[pmu] || pmu != cc->pmu))
			close_group(c, cc);
		cc->pmu = pmu;
		cc->selected = want;
		memset(cc->norun_ns, 0, sizeof(cc->norun_ns));
		memset(cc->norun_reads, 0, sizeof(cc->norun_reads));
		/* A hybrid CPU no PMU listed when the plan was made (it was
		 * offline): it waits, and is given the PMU that lists it once
		 * it is online (assign_pmu). */
		if (pmu < 0 && want && cpuset_test(&plan->unlisted, (unsigned)cc->cpu))
			set_state(c, cc, CPU_STATE_OFFLINE);
		else if (pmu < 0)
			set_state(c, cc, CPU_STATE_UNSUPPORTED);
		else if (cc->fd[0] < 0)
			set_state(c, cc, CPU_STATE_OFFLINE); /* opened by open_pending */
	}
}

int collector_reload(struct collector *c, const struct plan *plan, bool count_kernel,
		     bool count_guest, uint64_t interval_ns)
{
	bool reopen_all = count_kernel != c->count_kernel || count_guest != c->count_guest;

	c->plan = plan;
	c->count_kernel = count_kernel;
	c->count_guest = count_guest;
	c->interval_ns = interval_ns;
	apply_plan(c, reopen_all);
	if (plan->usable) {
		raise_fd_limit(c);
		open_pending(c, mono_ns());
		settle_fresh(c);
	}
	return 0;
}

/* ---- reading ---- */

static void went_offline(struct collector *c, struct ccpu *cc, uint64_t now)
{
	close_group(c, cc);
	c->errors[COLL_ERR_OFFLINE]++;
	set_state(c, cc, CPU_STATE_OFFLINE);
	cc->retry_at_ns = now;
	log_info("CPU %d went offline; monitoring it again when it comes back", cc->cpu);
}

/* Group @g of @cc was enabled @enabled_ns without running: after NORUN_NS
 * and NORUN_READS reads in a row, another user holds what it needs (the
 * NMI watchdog, a pinned profiler): evidence for the budget. */
static void did_not_run(struct collector *c, struct ccpu *cc, unsigned g, uint64_t enabled_ns)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	bool on_fixed1;

	cc->norun_ns[g] += enabled_ns;
	cc->norun_reads[g]++;
	if (cc->norun_ns[g] < NORUN_NS || cc->norun_reads[g] < NORUN_READS || pm->evidence_pending ||
	    pm->evidence_taken)
		return;
	pm->evidence_pending = true;
	pm->evidence = (struct budget_evidence){
		.kind = BUDGET_NEVER_RAN, .pmu = pm->core_idx, .cpu = cc->cpu, .group = g,
		.gp_in_group = group_gp(pm, g, pm->group_start[g + 1], &on_fixed1),
		.seconds = (double)cc->norun_ns[g] / 1e9,
	};
	pm->evidence.uses_fixed1 = on_fixed1;
	perf_holders(pm->evidence.holders, sizeof(pm->evidence.holders));
}

/* Reads group @g of @cc, adding its scaled deltas to @in; false when the
 * CPU has nothing to report this interval (the reason is counted). */
static bool read_group(struct collector *c, struct ccpu *cc, unsigned g, uint64_t now,
		       struct tma_input *in, double *enabled_ns, double *running_ns,
		       bool *read_error)
{
	const struct cpmu *pm = &c->pmus[cc->pmu];
	unsigned lead = pm->group_start[g], n = pm->group_start[g + 1] - lead;
	const size_t want = (3 + 2 * (size_t)n) * sizeof(uint64_t);
	uint64_t *b = c->buf, enabled, running;
	double scale, span_ns;
	ssize_t r;
	int tries = 0;
	bool bad = false, norun, counted = false;

	do {
		r = perfev_read(cc->fd[lead], b, c->buf_words * sizeof(uint64_t));
	} while (r == -EINTR && ++tries < EINTR_RETRIES);
	if (r < 0) {
		c->errors[COLL_ERR_READ]++;
		*read_error = true;
		log_ratelimited(&read_rl, LOG_LEVEL_WARNING, (int)r,
				"Failed to read the group of CPU %d: %m; skipping this interval for it",
				cc->cpu);
		return false;
	}
	/* A detached group (its CPU went offline) reads back as the leader
	 * alone with frozen counts; nothing reattaches it. */
	if ((size_t)r >= 3 * sizeof(uint64_t) && b[0] == 1 && n > 1) {
		went_offline(c, cc, now);
		return false;
	}
	if ((size_t)r != want || b[0] != n) {
		c->errors[COLL_ERR_SHORT_READ]++;
		*read_error = true;
		log_ratelimited(&read_rl, LOG_LEVEL_WARNING, 0,
				"Short read from the group of CPU %d (%zd of %zu bytes, %llu values); skipping this interval for it",
				cc->cpu, r, want, (unsigned long long)b[0]);
		return false;
	}
	enabled = b[1];
	running = b[2];
	if (enabled == cc->prev_enabled[g]) {
		/* time_enabled stands still for a group whose CPU went away; the
		 * online list confirms it.  Otherwise no time passed for the
		 * group: nothing to count this interval. */
		topo_refresh_online(c->topo, c->sysfs);
		if (!cpuset_test(topo_online(c->topo), (unsigned)cc->cpu))
			went_offline(c, cc, now);
		return false;
	}
	if (enabled < cc->prev_enabled[g] || running < cc->prev_running[g]) {
		c->errors[COLL_ERR_SHORT_READ]++;
		return false;
	}
	*enabled_ns = (double)(enabled - cc->prev_enabled[g]);
	*running_ns = (double)(running - cc->prev_running[g]);
	/* Since the collection that last read it: the same for every group
	 * read then (0 for a group opened since, which counted only since). */
	span_ns = cc->read_at[g] && now > cc->read_at[g] ? (double)(now - cc->read_at[g]) : 0;
	cc->prev_enabled[g] = enabled;
	cc->prev_running[g] = running;
	cc->read_at[g] = now;
	/* A group that did not run has no numbers: no running time, or a
	 * sliver of it with nothing counted (arm64 reports one for a group
	 * that cannot be scheduled; scaled, it would be garbage). */
	norun = *running_ns == 0 || *running_ns * 100 < *enabled_ns;
	/* Each group's counts stand for span_ns, the time between the starts
	 * of the two collections that read it, the same for every group of
	 * every CPU read in both, or its own enabled time (span_ns 0).  perf
	 * scales by each group's own enabled/running; the two agree when the
	 * reads are taken together.  Where the reader is preempted between two
	 * reads (a loaded machine), each group's own enabled time spans a
	 * different stretch: a ratio of two groups' counts moves by the
	 * preemption's share of the interval (1.6 % seen), and so does a CPU's
	 * weight in its core, package and host (19 % seen); counts per
	 * running second times one span do not. */
	scale = *running_ns > 0 ? (span_ns > 0 ? span_ns : *enabled_ns) / *running_ns : 0;
	/* One pass over the values: the kernel returns them in group order
	 * (the ids say so), each at least its previous value.  A read that
	 * breaks either is counted and skipped; its values become the new
	 * baseline. */
	for (unsigned i = 0; i < n; i++) {
		uint64_t value = b[3 + 2 * i], id = b[4 + 2 * i];
		unsigned pos = lead + i;

		bad |= (id != cc->id[pos]) | (value < cc->prev[pos]);
		counted |= value != cc->prev[pos];
		/* Each variable is one event's (uarch.h), so assigned, not
		 * added: a CPU's read overwrites all of its PMU's, and only
		 * a read of every group computes.  Through int64_t: one
		 * instruction where uint64_t takes several on x86-64; a delta
		 * of 2^63 counts is not one interval's. */
		in->v[pm->var[pos]] = (double)(int64_t)(value - cc->prev[pos]) * scale;
		cc->prev[pos] = value;
	}
	if (bad) {
		c->errors[COLL_ERR_SHORT_READ]++;
		*read_error = true;
		log_ratelimited(&read_rl, LOG_LEVEL_WARNING, 0,
				"Unexpected values from the group of CPU %d; skipping this interval for it",
				cc->cpu);
		return false;
	}
	if (norun && (*running_ns == 0 || !counted)) {
		*running_ns = 0;
		did_not_run(c, cc, g, (uint64_t)*enabled_ns);
		return false;
	}
	cc->norun_ns[g] = 0;
	cc->norun_reads[g] = 0;
	return true;
}

/* A CPU's figures of this interval into @out, whose totals continue
 * @before's.  Only the columns of @cols are written: the others never
 * change while the CPU descriptions stay the same (their generation). */
static void commit(struct snap_counts *restrict out, const struct snap_counts *restrict before,
		   const struct snap_cols *restrict cols, double enabled, double running,
		   const struct tma_result *restrict res)
{
	double *restrict last = out->last, *restrict total = out->total;
	const double *restrict was = before->total;
	const double slots = res ? res->slots : 0;

	last[TD_C_SLOTS] = slots;
	last[TD_C_ENABLED] = enabled;
	last[TD_C_RUNNING] = running;
	total[TD_C_SLOTS] = was[TD_C_SLOTS] + slots;
	total[TD_C_ENABLED] = was[TD_C_ENABLED] + enabled;
	total[TD_C_RUNNING] = was[TD_C_RUNNING] + running;
	/* Slots weigh each fraction: the categories then partition the
	 * slots counter exactly and aggregate by plain addition. */
	for (unsigned r = 0; r < cols->n; r++) {
		unsigned k = cols->lo[r] < TD_C_CAT ? TD_C_CAT : cols->lo[r], hi = cols->hi[r];

		if (res) {
			const double *restrict frac = res->frac;

			for (; k < hi; k++) {
				last[k] = frac[k - TD_C_CAT] * slots;
				total[k] = was[k] + last[k];
			}
		} else {
			for (; k < hi; k++) {
				last[k] = 0;
				total[k] = was[k];
			}
		}
	}
}

/* After a CPU's reads: whether its figures of the interval can be
 * trusted.  Not when one of its PMU's work events counted nothing while its
 * cycles counted, with the work event's group running: no CPU runs cycles
 * without issuing or retiring anything, so the formulas would divide
 * nothing by nothing (a "100 % bad speculation" from OP_RETIRED / OP_SPEC
 * = 0 / 0).  After NORUN_NS and NORUN_READS such intervals in a row the
 * PMU is silent (no figures) and says why. */
static bool check_work(struct collector *c, struct ccpu *cc, const double *ran, uint64_t enabled)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	const struct tma_input *in = &pm->input;
	int quiet = -1;

	if (pm->silent)
		return false;
	if (pm->cycles_pos < 0 || !(in->v[pm->var[pm->cycles_pos]] > 0))
		return true;
	for (unsigned i = 0; i < pm->n_events && quiet < 0; i++)
		if (counts_work(pm->var[i]) && ran[group_of(pm, i)] > 0 && in->v[pm->var[i]] == 0)
			quiet = (int)i;
	if (quiet < 0) {
		cc->silent_ns = 0;
		cc->silent_reads = 0;
		return true;
	}
	cc->silent_ns += enabled;
	if (++cc->silent_reads < NORUN_READS || cc->silent_ns < NORUN_NS)
		return false;
	pm->silent = true;
	str_printf(pm->reason, sizeof(pm->reason),
		   "%s counts nothing while cycles count (CPU %d, %.1f s): the CPU does not implement it or a "
		   "hypervisor filters it; no TopDown figures from %s",
		   event_name(pm, (unsigned)quiet), cc->cpu, (double)cc->silent_ns / 1e9, pm->pp->core->name);
	log_warning("%s", pm->reason);
	c->gen++;
	return false;
}

/* At debug level, each CPU's read: the scaled counts its figures come
 * from, as perf stat -v prints them, so that a figure can be traced to its
 * events (an event that counts nothing, a group that did not run). */
static void log_counts(const struct cpmu *pm, const struct ccpu *cc, bool ok, double enabled,
		       double running_share)
{
	char line[LOG_LINE_MAX];
	int n;

	if (!log_level_enabled(LOG_LEVEL_DEBUG))
		return;
	n = snprintf(line, sizeof(line), "CPU %d counts: enabled %.6f s, running %.1f %%%s:", cc->cpu,
		     enabled / 1e9, running_share * 100, ok ? "" : " (a group did not run)");
	for (unsigned i = 0; i < pm->n_events && n > 0 && (size_t)n < sizeof(line); i++) {
		bool seen = false;

		/* An event some groups share (cycles) is one variable. */
		for (unsigned j = 0; j < i && !seen; j++)
			seen = pm->var[j] == pm->var[i];
		if (!seen)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %s=%.0f", event_name(pm, i),
				      pm->input.v[pm->var[i]]);
	}
	log_debug("%s", line);
}

static void read_cpu(struct collector *c, struct ccpu *cc, uint64_t now, struct snap_counts *out,
		     const struct snap_counts *before)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	struct tma_input *in = &pm->input;
	struct tma_result res;
	double enabled = 0, running_share = 1, ran[PLAN_GROUPS_MAX] = { 0 };
	bool ok = true, read_error = false;

	for (unsigned g = 0; g < pm->n_groups && group_open(cc); g++) {
		double e = 0, r = 0;
		if (!read_group(c, cc, g, now, in, &e, &r, &read_error)) {
			ok = false;
			if (e <= 0)
				continue;
		}
		ran[g] = r;
		/* The CPU runs as much as its least scheduled group. */
		if (g == 0)
			enabled = e;
		if (e > 0 && r / e < running_share)
			running_share = r / e;
	}
	if (!group_open(cc) || read_error) {
		commit(out, before, &pm->cols, 0, 0, NULL);
		if (read_error && group_open(cc) && ++cc->read_failures == READ_FAILURES_FAILED) {
			set_state(c, cc, CPU_STATE_FAILED);
			log_warning("Reads of the group of CPU %d failed %u intervals in a row: CPU %d is failed "
				    "until a read works again (it is read every interval)",
				    cc->cpu, READ_FAILURES_FAILED, cc->cpu);
		}
		return;
	}
	if (cc->read_failures >= READ_FAILURES_FAILED && cc->state == CPU_STATE_FAILED) {
		set_state(c, cc, CPU_STATE_MONITORED);
		log_info("Reads of the group of CPU %d work again after %u failed intervals; monitoring it",
			 cc->cpu, cc->read_failures);
	}
	cc->read_failures = 0;
	log_counts(pm, cc, ok, enabled, running_share);
	if (ok && pm->gave_up) {
		/* The other user let go: what the plan says again. */
		pm->gave_up = false;
		plan_reason(pm->pp, pm->reason, sizeof(pm->reason));
		log_info("%s: every group runs on CPU %d again", pm->pp->core->name, cc->cpu);
		c->gen++;
	}
	ok = ok && check_work(c, cc, ran, (uint64_t)enabled) && tma_compute(&pm->model, in, &res) == 0;
	if (ok) {
		for (unsigned d = 0; d < TMA_DEP_COUNT; d++)
			pm->departures[d] += (res.departures >> d) & 1;
		coll_agg_add(c, cc);
	}
	commit(out, before, &pm->cols, enabled, enabled * running_share, ok ? &res : NULL);
}

/* A hybrid CPU that was offline when the plan was made: the PMU whose
 * cpus lists it now, if any.  False (and unsupported) when none does. */
static bool assign_pmu(struct collector *c, struct ccpu *cc)
{
	refresh_covered(c);
	for (unsigned k = 0; k < c->n_pmus; k++)
		if (c->pmus[k].pp->core->has_cpus && cpuset_test(&c->pmus[k].covered, (unsigned)cc->cpu)) {
			cc->pmu = (int)k;
			c->gen++;
			log_info("CPU %d is online and %s lists it now", cc->cpu, c->pmus[k].pp->core->name);
			return true;
		}
	set_state(c, cc, CPU_STATE_UNSUPPORTED);
	log_warning("CPU %d is online but no core PMU lists it in its cpus; not monitoring it", cc->cpu);
	return false;
}

/* Offline CPUs come back through the online list; failed ones are tried
 * again every RETRY_NS. */
static void revisit_waiting(struct collector *c, uint64_t now)
{
	bool online_read = false, relayout = false;

	for (unsigned i = 0; i < c->n_cpus && c->n_waiting; i++) {
		struct ccpu *cc = &c->cpus[i];

		if (cc->state == CPU_STATE_OFFLINE) {
			if (!online_read) {
				topo_refresh_online(c->topo, c->sysfs);
				online_read = true;
			}
			if (!cpuset_test(topo_online(c->topo), (unsigned)cc->cpu))
				continue;
			if (!cc->known && topo_read_cpu(c->topo, c->sysfs, (unsigned)cc->cpu) == 0)
				relayout = true;
			if (cc->pmu < 0 && !assign_pmu(c, cc))
				continue;
			if (try_open(c, cc, now))
				log_info("CPU %d is online; monitoring it again", cc->cpu);
		} else if (cc->state == CPU_STATE_FAILED && cc->fd[0] < 0 && now >= cc->retry_at_ns) {
			if (try_open(c, cc, now))
				log_info("CPU %d: TopDown group opened after an earlier failure", cc->cpu);
		}
	}
	if (relayout)
		build_layout(c);
}

static const struct snap_counts zero_counts;

static const struct snap_counts *before_of(const struct collector *c, unsigned i)
{
	return c->prev ? &c->prev->cpus[i].c : &zero_counts;
}

static const struct snap_cols *cols_of(const struct collector *c, const struct ccpu *cc)
{
	return cc->pmu >= 0 ? &c->pmus[cc->pmu].cols : &c->base_cols;
}

static void describe(const struct collector *c, struct snapshot *snap);
static void stamp(struct collector *c, struct snapshot *snap);

/* A snapshot holding older CPU descriptions takes the previous one's
 * counts whole, its last interval cleared: columns no CPU writes any more
 * (a category of an earlier plan) then stay what they were. */
static void catch_up(const struct collector *c, struct snapshot *snap)
{
	if (snap->fill_gen == c->gen)
		return;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct snap_counts *out = &snap->cpus[i].c;

		memcpy(out->total, before_of(c, i)->total, sizeof(out->total));
		memset(out->last, 0, sizeof(out->last));
	}
	describe(c, snap);
}

void collector_collect(struct collector *c, uint64_t now_ns, struct snapshot *snap)
{
	struct timespec wall;

	catch_up(c, snap);
	for (unsigned i = 0; i < c->n_cpus; i++) {
		struct ccpu *cc = &c->cpus[i];

		if (group_open(cc))
			read_cpu(c, cc, now_ns, &snap->cpus[i].c, before_of(c, i));
		else
			commit(&snap->cpus[i].c, before_of(c, i), cols_of(c, cc), 0, 0, NULL);
	}
	/* After the reads: a group reopened now is first read next interval. */
	if (c->n_waiting)
		revisit_waiting(c, now_ns);
	c->last_interval_s = c->started_ns && now_ns > c->started_ns ? (double)(now_ns - c->started_ns) / 1e9 : 0;
	c->started_ns = now_ns;
	c->collected_ns = mono_ns();
	c->duration_s = (double)(c->collected_ns - now_ns) / 1e9;
	clock_gettime(CLOCK_REALTIME, &wall);
	c->timestamp = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
	c->seq++;
	/* States changed by this interval's reads. */
	if (snap->fill_gen != c->gen)
		describe(c, snap);
	coll_aggregate(c, snap, AGG_INTERVAL);
	stamp(c, snap);
}

/* ---- lifecycle and views ---- */

int collector_new(const struct collector_params *p, struct collector **ret)
{
	const struct cpuset *possible = topo_possible(p->topo);
	struct collector *c;
	unsigned n = 0;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sysfs = p->sysfs;
	c->topo = p->topo;
	c->pmu = p->pmu;
	c->plan = p->plan;
	c->count_kernel = p->count_kernel;
	c->count_guest = p->count_guest;
	c->interval_ns = p->interval_ns;
	c->oneshot = p->oneshot;
	c->fd_others_want = p->fd_others_want;
	c->fd_others_min = p->fd_others_min;
	c->gen = 1; /* a fresh snapshot holds generation 0 */
	snap_cols_of(0, &c->base_cols);

	/* Every possible CPU, selected or not: a reload may select it, and a
	 * CPU deselected by a reload keeps its totals in the aggregates. */
	c->n_cpus = cpuset_count(possible);
	c->cpus = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->cpus));
	c->cores = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->cores));
	c->pkgs = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->pkgs));
	c->buf_words = 3 + 2 * UA_EVENTS_MAX;
	c->buf = calloc(c->buf_words, sizeof(uint64_t));
	c->agg_doms = 2 * c->n_cpus + 1;
	c->agg = calloc((size_t)PMU_CORE_MAX * c->agg_doms * UA_EVENTS_MAX, sizeof(*c->agg));
	c->agg_used = calloc((size_t)PMU_CORE_MAX * c->agg_doms, sizeof(*c->agg_used));
	if (!c->cpus || !c->cores || !c->pkgs || !c->buf || !c->agg || !c->agg_used) {
		collector_free(c);
		return -ENOMEM;
	}
	CPUSET_FOREACH(cpu, possible) {
		struct ccpu *cc = &c->cpus[n++];

		cc->cpu = cpu;
		cc->state = CPU_STATE_UNSUPPORTED;
		cc->pmu = -1;
		for (int i = 0; i < UA_EVENTS_MAX; i++)
			cc->fd[i] = -1;
	}
	apply_plan(c, false);
	build_layout(c);
	*ret = c;
	return 0;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	for (unsigned i = 0; c->cpus && i < c->n_cpus; i++)
		close_group(c, &c->cpus[i]);
	free(c->cpus);
	free(c->cores);
	free(c->pkgs);
	free(c->buf);
	free(c->agg);
	free(c->agg_used);
	free(c);
}

unsigned collector_capacity(const struct collector *c)
{
	return c->n_cpus ? c->n_cpus : 1;
}

unsigned collector_cpu_events(const struct collector *c, unsigned i, int *cpu, const int **fds,
			      int *pmu, uint64_t *opened)
{
	const struct ccpu *cc = &c->cpus[i];

	*cpu = cc->cpu;
	*opened = cc->opened;
	*pmu = cc->pmu;
	*fds = cc->fd;
	if (cc->pmu < 0 || !group_open(cc))
		return 0;
	return c->pmus[cc->pmu].n_events;
}

unsigned collector_pmu_arith(const struct collector *c, unsigned pmu, const struct tma_model **model,
			     const enum td_event **var)
{
	if (pmu >= c->n_pmus)
		return 0;
	*model = &c->pmus[pmu].model;
	*var = c->pmus[pmu].var;
	return c->pmus[pmu].n_events;
}

const char *collector_pmu_event_name(const struct collector *c, unsigned pmu, unsigned pos)
{
	return pmu < c->n_pmus && pos < c->pmus[pmu].n_events ? event_name(&c->pmus[pmu], pos) : "?";
}

unsigned collector_pmus(const struct collector *c)
{
	return c->n_pmus;
}

unsigned collector_cpus(const struct collector *c)
{
	return c->n_cpus;
}

bool collector_up(const struct collector *c)
{
	return collector_count(c, CPU_STATE_MONITORED) > 0;
}

const char *collector_model(const struct collector *c)
{
	if (!c->plan->usable || c->n_pmus == 0)
		return "";
	return c->pmus[0].model.refine ? "perf" : "hardware";
}

/* One row per core PMU, in discovery order: what it runs, or why not.
 * pmu_row[k]: the row of the collector's PMU k, -1 for none. */
static void fill_pmus(const struct collector *c, struct snapshot *snap, int pmu_row[PMU_CORE_MAX])
{
	assert(c->n_pmus <= PMU_CORE_MAX);
	for (unsigned k = 0; k < PMU_CORE_MAX; k++)
		pmu_row[k] = -1;
	snap->n_pmus = 0;
	for (unsigned i = 0; i < c->pmu->n_cores && i < SNAP_PMUS; i++) {
		const struct pmu_core *core = &c->pmu->core[i];
		struct snap_pmu *row = &snap->pmus[snap->n_pmus++];
		const struct cpmu *pm = NULL;

		for (unsigned k = 0; k < c->n_pmus; k++)
			if (c->pmus[k].pp->core == core) {
				pm = &c->pmus[k];
				pmu_row[k] = (int)i;
			}
		str_printf(row->name, sizeof(row->name), "%s", core->name);
		str_printf(row->pmu_name, sizeof(row->pmu_name), "%s", core->pmu_name);
		str_printf(row->uarch, sizeof(row->uarch), "%s",
			   pm || core->level ? core->ua->id : "");
		if (pm) {
			row->level = pm->pp->level;
			row->core_share = pm->pp->core_share;
			str_printf(row->model, sizeof(row->model), "%s",
				   pm->model.refine ? "perf" : "hardware");
			str_printf(row->reason, sizeof(row->reason), "%s", pm->reason);
			memcpy(row->departures, pm->departures, sizeof(row->departures));
		} else {
			memset(row->departures, 0, sizeof(row->departures));
			row->level = 0;
			row->core_share = false;
			row->model[0] = '\0';
			str_printf(row->reason, sizeof(row->reason), "%s",
				   core->level ? "none of its CPUs is selected by [collect] cpus"
					       : core->reason);
		}
	}
}

unsigned collector_count(const struct collector *c, enum cpu_state state)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->n_cpus; i++)
		n += c->cpus[i].selected && c->cpus[i].state == state;
	return n;
}

/* The CPU descriptions, cores and packages: written when they change. */
static void describe(const struct collector *c, struct snapshot *snap)
{
	int pmu_row[PMU_CORE_MAX];

	fill_pmus(c, snap, pmu_row); /* for pmu_row; stamp() writes them again */
	memset(snap->cpus_by_state, 0, sizeof(snap->cpus_by_state));
	snap->n_cpus = c->n_cpus;
	for (unsigned i = 0; i < c->n_cpus; i++) {
		const struct ccpu *cc = &c->cpus[i];
		const struct topo_cpu *t = topo_cpu(c->topo, (unsigned)cc->cpu);
		struct snap_cpu *s = &snap->cpus[i];

		s->cpu = cc->cpu;
		s->pmu_idx = cc->pmu >= 0 ? pmu_row[cc->pmu] : -1;
		s->selected = cc->selected;
		s->known = cc->known;
		s->core_id = t ? t->core_id : -1;
		s->package = t ? t->package : -1;
		s->die = t ? t->die : -1;
		s->node = t ? t->node : -1;
		s->state = cc->state;
		s->core_idx = cc->core_idx;
		s->pkg_idx = cc->pkg_idx;
		s->c.cats = cc->pmu >= 0 && c->pmus[cc->pmu].pp ? c->pmus[cc->pmu].pp->cats : 0;
		if (cc->selected)
			snap->cpus_by_state[cc->state]++;
	}
	snap->up = snap->cpus_by_state[CPU_STATE_MONITORED] > 0;
	snap->n_cores = c->n_cores;
	for (unsigned i = 0; i < c->n_cores; i++) {
		snap->cores[i].core_id = c->cores[i].core_id;
		snap->cores[i].package = c->cores[i].package;
		snap->cores[i].die = c->cores[i].die;
	}
	snap->n_pkgs = c->n_pkgs;
	for (unsigned i = 0; i < c->n_pkgs; i++)
		snap->pkgs[i].package = c->pkgs[i];
	snap->fill_gen = c->gen;
}

/* Everything but the CPUs, every publication. */
static void stamp(struct collector *c, struct snapshot *snap)
{
	int pmu_row[PMU_CORE_MAX];

	fill_pmus(c, snap, pmu_row);
	snap->level = c->plan->level;
	snap->cats = c->plan->cats;
	str_printf(snap->reason, sizeof(snap->reason), "%s",
		   c->plan->usable ? "" : c->plan->reason);
	snap->seq = c->seq;
	snap->layout = c->layout;
	snap->timestamp = c->timestamp;
	snap->collected_ns = c->collected_ns;
	snap->last_interval_s = c->last_interval_s;
	snap->interval_s = (double)c->interval_ns / 1e9;
	snap->duration_s = c->duration_s;
	memcpy(snap->errors, c->errors, sizeof(snap->errors));
	c->prev = snap;
}

void collector_fill(struct collector *c, struct snapshot *snap)
{
	/* No reads: the last interval's figures stay, unless the CPU
	 * descriptions changed (catch_up). */
	if (snap != c->prev && c->prev && snap->fill_gen == c->gen) {
		for (unsigned i = 0; i < c->n_cpus; i++)
			snap->cpus[i].c = c->prev->cpus[i].c;
		coll_aggregate(c, snap, AGG_REPUBLISH);
	} else if (snap != c->prev) {
		catch_up(c, snap);
		coll_aggregate(c, snap, AGG_CATCH_UP);
	}
	stamp(c, snap);
}
