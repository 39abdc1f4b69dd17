/* perf.c: the emulated kernel.  Owns fake events and groups: attribute
 * validation with the kernel's errno for each violation
 * (perf_event_open, perf_copy_attr, intel_pmu_hw_config, x86 group
 * validation), the counting model (SLOTS and PERF_METRICS accumulate per
 * group and are folded into the event counts on every read, reset, disable
 * and close, like intel_update_topdown_event + icl_get_metrics_event_value),
 * read() layouts (perf_read_group / perf_read_one), ioctls and hotplug
 * detach (perf_event_exit_cpu_context).  Everything runs under the global
 * lock taken by interpose.c. */
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "fakepmu.h"

/* x86 event select bits (arch/x86/include/asm/perf_event.h). */
#define CFG_EVENT	0x00000000000000ffULL
#define CFG_EVENT_UMASK	0x000000000000ffffULL
#define CFG_EDGE	(1ULL << 18)
#define CFG_PC		(1ULL << 19)
#define CFG_ANY		(1ULL << 21)
#define CFG_INV		(1ULL << 23)
#define CFG_CMASK	(0xffULL << 24)
#define CFG_IN_TX	(1ULL << 32)
#define CFG_IN_TX_CP	(1ULL << 33)
/* X86_ALL_EVENT_FLAGS: filters slots and metric events reject. */
#define CFG_ALL_FLAGS	(CFG_EDGE | CFG_PC | CFG_ANY | CFG_INV | CFG_CMASK | \
			 CFG_IN_TX | CFG_IN_TX_CP)

#define SLOTS_CONFIG		0x0400ULL	/* event 0x00, umask 0x04 */
#define METRIC_RETIRING		0x8000ULL	/* event 0x00, umask 0x80..0x87 */
#define UOP_DROPPING_CONFIG	0x100dULL	/* INT_MISC.UOP_DROPPING */
#define RECOVERY_CYCLES_CONFIG	0x010dULL	/* INT_MISC.RECOVERY_CYCLES */

#define FORMAT_ALL	((uint64_t)PERF_FORMAT_MAX - 1)
#define MAX_READ_SIZE	(16 * 1024)	/* perf_event_validate_size() */
#define FIRST_ID	1000

struct fev {
	int fd, cpu;
	int cls;			/* EC_* */
	const struct pmu *pmu;
	uint64_t id, read_format;
	bool sampling;
	bool enabled;			/* not PERF_EVENT_STATE_OFF by ioctl/attr.disabled */
	bool detached;			/* CPU went offline: frozen for good */
	bool error;			/* PERF_EVENT_STATE_ERROR: read() returns 0 */
	struct fev *leader;		/* self for a leader or singleton */
	struct fev **sib;		/* leader only: members in open order */
	int nsib, capsib;
	struct fev *cpu_prev, *cpu_next; /* attached leaders of this CPU */

	uint64_t count;			/* the software count read() reports */
	double carry;			/* refinement events: fraction not yet counted */
	uint64_t t_enabled;
	double t_running;

	/* Leader only: group clock and the pending hardware registers. */
	uint64_t last_ns;
	double hw_w;			/* SLOTS since the last fold (real-valued) */
	double hw_wf[NMETRIC];		/* slot-weighted category sums */
	double hw_carry;		/* fraction of a slot not yet counted */
	int hw_phase;			/* the only phase seen, -1 none, -2 several */
};

static struct fev **cpu_leaders;	/* [ncpus] */
static uint64_t next_id = FIRST_ID;

void fp_cpus_init(void)
{
	cpu_leaders = calloc((size_t)fp_fix.ncpus, sizeof(*cpu_leaders));
	if (!cpu_leaders)
		fp_fatal("fakepmu: out of memory");
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static bool is_metric_cls(int cls)
{
	return cls >= EC_METRIC0 && cls < EC_METRIC0 + NMETRIC;
}

static bool is_topdown_cls(int cls)
{
	return cls == EC_SLOTS || is_metric_cls(cls);
}

/* is_slots_event / is_metric_event (arch/x86/events/perf_event.h) plus
 * the two refinement events the scenario drives. */
static int classify(uint64_t config)
{
	uint64_t eu = config & CFG_EVENT_UMASK;

	if (eu == SLOTS_CONFIG)
		return EC_SLOTS;
	if ((config & CFG_EVENT) == 0 && eu >= METRIC_RETIRING &&
	    eu <= METRIC_RETIRING + ((NMETRIC - 1) << 8))
		return EC_METRIC0 + (int)((eu - METRIC_RETIRING) >> 8);
	if (eu == UOP_DROPPING_CONFIG && !(config & CFG_ALL_FLAGS))
		return EC_UOP_DROPPING;
	if (eu == RECOVERY_CYCLES_CONFIG && (config & CFG_CMASK) == (1ULL << 24) &&
	    (config & CFG_EDGE) && !(config & (CFG_ALL_FLAGS & ~(CFG_CMASK | CFG_EDGE))))
		return EC_RECOVERY_CYCLES;
	return EC_OTHER;
}

static bool active(const struct fev *ev)
{
	return ev->enabled && !ev->detached && !ev->error && ev->leader->enabled;
}

/* Members of a group: index 0 is the leader, 1..nsib the siblings. */
static struct fev *member(struct fev *l, int i)
{
	return i == 0 ? l : l->sib[i - 1];
}

static struct fev *group_slots(struct fev *l)
{
	for (int i = 0; i <= l->nsib; i++)
		if (member(l, i)->cls == EC_SLOTS)
			return member(l, i);
	return NULL;
}

static bool uses_fixed3(struct fev *l)
{
	struct fev *s = group_slots(l);

	return s && active(s);
}

/* Groups on a CPU that hold fixed counter 3 share it: each gets 1/n of the
 * time the scenario's "running" allows (a fair stand-in for rotation). */
static int fixed3_users(int cpu)
{
	int n = 0;

	for (struct fev *l = cpu_leaders[cpu]; l; l = l->cpu_next)
		if (uses_fixed3(l))
			n++;
	return n;
}

static const struct phase *phase_at(const struct cpucfg *c, uint64_t t)
{
	for (int p = 0; p < c->nphases; p++)
		if (t < c->phases[p].end_ns)
			return &c->phases[p];
	return &c->phases[c->nphases - 1];
}

/* Slots (w) and slot-weighted fractions (wf) over [a, b), integrating
 * piecewise over the phases; *marker tracks which phases were touched. */
static void integrate(const struct cpucfg *c, uint64_t a, uint64_t b, double rate,
		      double *w, double wf[FR_COUNT], int *marker)
{
	for (int p = 0; p < c->nphases; p++) {
		const struct phase *ph = &c->phases[p];
		uint64_t lo = a > ph->start_ns ? a : ph->start_ns;
		uint64_t hi = b < ph->end_ns ? b : ph->end_ns;
		double wp;

		if (lo >= hi)
			continue;
		wp = rate * (double)(hi - lo);
		*w += wp;
		for (int k = 0; k < FR_COUNT; k++)
			wf[k] += wp * ph->f[k];
		*marker = *marker == -1 ? p : -2;
	}
}

static void add_events(struct fev *ev, double real)
{
	double whole;

	ev->carry += real;
	whole = floor(ev->carry);
	ev->count += (uint64_t)whole;
	ev->carry -= whole;
}

/* Runs a group's clock up to t: times, refinement counts and the pending
 * SLOTS/PERF_METRICS registers.  Callers make sure nothing that changes
 * fixed3_users() happened since the group's last_ns (see cpu_sync). */
static void advance(struct fev *l, uint64_t t)
{
	const struct cpucfg *cfg = fp_scen.cpu[l->cpu];
	uint64_t a = l->last_ns, dt;
	double r, w = 0, wf[FR_COUNT] = {0};
	int marker = -1;
	bool need = false;

	if (t <= a)
		return;
	l->last_ns = t;
	if (!l->enabled || l->detached || l->error)
		return;
	dt = t - a;
	r = cfg->running;
	if (uses_fixed3(l))
		r /= fixed3_users(l->cpu);
	for (int i = 0; i <= l->nsib; i++) {
		struct fev *ev = member(l, i);

		if (!active(ev))
			continue;
		ev->t_enabled += dt;
		ev->t_running += (double)dt * r;
		need |= ev->cls == EC_SLOTS || ev->cls == EC_UOP_DROPPING ||
			ev->cls == EC_RECOVERY_CYCLES;
	}
	if (!need)
		return;
	integrate(cfg, a, t, cfg->slots_per_ns * r, &w, wf, &marker);
	for (int i = 0; i <= l->nsib; i++) {
		struct fev *ev = member(l, i);

		if (!active(ev))
			continue;
		if (ev->cls == EC_SLOTS) {
			l->hw_w += w;
			for (int k = 0; k < NMETRIC; k++)
				l->hw_wf[k] += wf[k];
			if (marker != -1)
				l->hw_phase = l->hw_phase == -1 || l->hw_phase == marker ? marker : -2;
		} else if (ev->cls == EC_UOP_DROPPING) {
			add_events(ev, wf[FR_UOP_DROPPING]);
		} else if (ev->cls == EC_RECOVERY_CYCLES) {
			add_events(ev, wf[FR_RECOVERY_CYCLES]);
		}
	}
}

/* The kernel's fold of the hardware into the counts: the integer SLOTS
 * count goes to the slots event, slots * byte / 0xff (truncated, like
 * mul_u64_u32_div) to each metric event, then both registers are zeroed. */
static void fold(struct fev *l)
{
	const struct cpucfg *cfg = fp_scen.cpu[l->cpu];
	struct fev *s = group_slots(l);
	uint8_t bytes[NMETRIC];
	double real, whole;
	uint64_t slots;

	if (!s)
		return;
	real = l->hw_w + l->hw_carry;
	whole = floor(real);
	slots = (uint64_t)whole;
	l->hw_carry = real - whole;
	if (l->hw_phase >= 0) {
		/* One phase: its own fractions, bit for bit (no averaging noise). */
		memcpy(bytes, cfg->phases[l->hw_phase].bytes, NMETRIC);
	} else if (l->hw_w > 0) {
		double f[NMETRIC];

		for (int k = 0; k < NMETRIC; k++)
			f[k] = l->hw_wf[k] / l->hw_w;
		fp_quantise(f, bytes);
	} else {
		memcpy(bytes, phase_at(cfg, l->last_ns)->bytes, NMETRIC);
	}
	s->count += slots;
	for (int i = 0; i <= l->nsib; i++) {
		struct fev *ev = member(l, i);

		if (is_metric_cls(ev->cls) && active(ev))
			ev->count += (uint64_t)((unsigned __int128)slots *
						bytes[ev->cls - EC_METRIC0] / 0xff);
	}
	l->hw_w = 0;
	memset(l->hw_wf, 0, sizeof(l->hw_wf));
	l->hw_phase = -1;
}

static void cpu_sync(int cpu, uint64_t t)
{
	for (struct fev *l = cpu_leaders[cpu]; l; l = l->cpu_next)
		advance(l, t);
}

static void cpu_link(struct fev *l)
{
	l->cpu_prev = NULL;
	l->cpu_next = cpu_leaders[l->cpu];
	if (l->cpu_next)
		l->cpu_next->cpu_prev = l;
	cpu_leaders[l->cpu] = l;
}

static void cpu_unlink(struct fev *l)
{
	if (l->cpu_prev)
		l->cpu_prev->cpu_next = l->cpu_next;
	else
		cpu_leaders[l->cpu] = l->cpu_next;
	if (l->cpu_next)
		l->cpu_next->cpu_prev = l->cpu_prev;
	l->cpu_prev = l->cpu_next = NULL;
}

/* perf_group_detach(): metric siblings cannot live alone
 * (PERF_EV_CAP_SIBLING) and go to ERROR; the others become singletons.
 * The caller has folded the group. */
static void promote_siblings(struct fev *l, uint64_t t)
{
	for (int i = 0; i < l->nsib; i++) {
		struct fev *ev = l->sib[i];

		ev->leader = ev;
		ev->last_ns = t;
		ev->hw_phase = -1;
		if (is_metric_cls(ev->cls))
			ev->error = true;
		else if (!ev->detached)
			cpu_link(ev);
	}
	l->nsib = 0;
}

/* CPU hotplug (perf_event_exit_cpu_context): every event of the CPU is
 * folded and frozen at the moment it went offline, groups are broken up,
 * and nothing reattaches them when the CPU returns. */
static void detach_cpu(int cpu, int64_t since, uint64_t now)
{
	struct fev *l;

	for (l = cpu_leaders[cpu]; l; l = l->cpu_next) {
		uint64_t t = now;

		if (!fp_fake_clock() && since >= 0 && (uint64_t)since < now)
			t = (uint64_t)since;
		if (t < l->last_ns)
			t = l->last_ns;
		advance(l, t);
	}
	while ((l = cpu_leaders[cpu]) != NULL) {
		fold(l);
		cpu_unlink(l);
		for (int i = 0; i <= l->nsib; i++)
			member(l, i)->detached = true;
		promote_siblings(l, l->last_ns);
	}
}

/* Notices a CPU that went offline (lazily, see fixture.c) before any
 * operation on it. */
static bool check_cpu(int cpu, uint64_t now)
{
	int64_t since;

	if (fp_cpu_online(cpu, &since))
		return true;
	if (cpu_leaders[cpu])
		detach_cpu(cpu, since, now);
	return false;
}

static size_t read_size(uint64_t rf, int nr)
{
	size_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	size_t head = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		      !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & PERF_FORMAT_GROUP)
		return 8 * (1 + head + (size_t)nr * per);
	return 8 * (head + per);
}

static void note(const char *what)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "fakepmu: %s is not emulated (EINVAL)\n", what);

	if (n > 0 && write(2, buf, (size_t)n) < 0)
		return;
}

/* Resolves attr.type to a PMU (perf_init_event); returns an errno or 0. */
static int resolve_pmu(const struct perf_event_attr *a, int cpu, const struct pmu **out)
{
	const struct pmu *p;

	if (a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE) {
		uint32_t ext = (uint32_t)(a->config >> PERF_PMU_TYPE_SHIFT);

		p = ext ? fp_pmu_by_type(ext) : fp_core_pmu_for_cpu(cpu);
		if (!p || !p->core)
			return ENOENT;
		if (a->type == PERF_TYPE_HARDWARE &&
		    (a->config & 0xffffffffULL) >= PERF_COUNT_HW_MAX)
			return EINVAL;
	} else {
		p = fp_pmu_by_type(a->type);
		if (!p)
			return ENOENT;
		/* Software, tracepoint, uncore... PMUs exist but are not emulated. */
		if (!p->core)
			return EOPNOTSUPP;
	}
	*out = p;
	return 0;
}

/* intel_pmu_hw_config() for slots and metric events; 0 or an errno. */
static int check_topdown(const struct perf_event_attr *a, const struct pmu *p, int cls,
			 const struct fev *leader)
{
	if (!p->has_slots)
		return EINVAL;		/* cpu_atom, pre-Ice Lake: no fixed counter 3 */
	if (a->config1 || a->config2)
		return EINVAL;
	if (a->config & CFG_ALL_FLAGS)
		return EINVAL;
	if (!is_metric_cls(cls))
		return 0;
	if (cls - EC_METRIC0 >= p->nmetrics)
		return EINVAL;		/* L2 metric on a 4-metric PMU */
	if (a->sample_period)
		return EINVAL;
	if (!leader || leader->cls != EC_SLOTS)
		return EINVAL;
	if (leader->sampling)
		return EINVAL;
	return 0;
}

/* Group validation (x86 collect_events/validate_group and
 * perf_event_open's own checks); 0 or an errno. */
static int check_group(struct fev *l, int cpu, int cls,
		       uint64_t rf)
{
	if (l->leader != l || l->detached || l->error)
		return EINVAL;
	if (l->cpu != cpu)
		return EINVAL;
	if (read_size(rf | PERF_FORMAT_GROUP, l->nsib + 2) > MAX_READ_SIZE)
		return EINVAL;
	if (is_topdown_cls(cls)) {
		int metrics = 0;

		for (int i = 0; i <= l->nsib; i++) {
			int c = member(l, i)->cls;

			if (c == cls)
				return EINVAL;	/* one counter per metric, one fixed counter 3 */
			metrics += is_metric_cls(c);
		}
		if (is_metric_cls(cls) && metrics >= NMETRIC)
			return EINVAL;
	}
	return 0;
}

int fp_perf_event_open(void *uattr, long pid, long cpu_l, long group_fd, unsigned long flags)
{
	struct perf_event_attr a;
	const struct pmu *pmu = NULL;
	struct fev *leader = NULL, *ev;
	const struct fault *f;
	uint32_t size;
	int cpu = (int)cpu_l, cls = EC_OTHER, fd, err;
	uint64_t now;

	/* perf_copy_attr() */
	if (!uattr)
		return fail(EFAULT);
	memcpy(&size, (char *)uattr + offsetof(struct perf_event_attr, size), sizeof(size));
	if (size == 0)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > 4096)
		goto e2big;
	memset(&a, 0, sizeof(a));
	memcpy(&a, uattr, size < sizeof(a) ? size : sizeof(a));
	for (uint32_t i = sizeof(a); i < size; i++)
		if (((const unsigned char *)uattr)[i])
			goto e2big;
	a.size = size;
	if (a.__reserved_1 || a.__reserved_2)
		return fail(EINVAL);
	if (a.read_format & ~FORMAT_ALL)
		return fail(EINVAL);

	/* perf_event_open() */
	if (flags & ~(PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT | PERF_FLAG_PID_CGROUP |
		      PERF_FLAG_FD_CLOEXEC))
		return fail(EINVAL);
	if (flags & (PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT | PERF_FLAG_PID_CGROUP)) {
		note("PERF_FLAG_FD_NO_GROUP/FD_OUTPUT/PID_CGROUP");
		return fail(EINVAL);
	}
	if (pid != -1) {
		note("pid != -1 (only CPU-wide events, pid = -1)");
		return fail(EINVAL);
	}
	if (cpu < 0 || cpu >= fp_fix.ncpus)
		return fail(EINVAL);
	/* Injected faults stand where the kernel checks permissions. */
	pmu = fp_pmu_by_type(a.type);
	if (pmu && pmu->core)
		cls = classify(a.config);
	pmu = NULL;
	f = fp_fault_fire(FO_OPEN, cpu, cls);
	if (f)
		return fail(f->err);

	/* A real fd, so RLIMIT_NOFILE and EMFILE are real. */
	fd = open("/dev/null", O_RDONLY | ((flags & PERF_FLAG_FD_CLOEXEC) ? O_CLOEXEC : 0));
	if (fd < 0)
		return -1;
	err = 0;
	if (group_fd != -1) {
		leader = fp_fd_lookup((int)group_fd);
		if (!leader)
			err = EBADF;
		else if (leader->leader != leader)
			err = EINVAL;
	}
	if (!err)
		err = resolve_pmu(&a, cpu, &pmu);
	/* Mixed hybrid groups are refused before the CPU mask is looked at,
	 * so the row is reachable on a fixture whose PMUs have disjoint cpus. */
	if (!err && leader && leader->pmu != pmu)
		err = EINVAL;
	if (!err && pmu->cpus && !pmu->cpus[cpu])
		err = ENOENT;
	cls = EC_OTHER;
	if (!err && a.type != PERF_TYPE_HARDWARE && a.type != PERF_TYPE_HW_CACHE) {
		cls = classify(a.config);
		if (is_topdown_cls(cls))
			err = check_topdown(&a, pmu, cls, leader);
	}
	now = fp_now_ns();
	if (!err && !check_cpu(cpu, now))
		err = ENODEV;
	if (!err && leader)
		err = check_group(leader, cpu, cls, a.read_format);
	if (!err) {
		ev = calloc(1, sizeof(*ev));
		if (!ev)
			err = ENOMEM;
	}
	if (err) {
		fp_real_close(fd);
		return fail(err);
	}
	ev->fd = fd;
	ev->cpu = cpu;
	ev->cls = cls;
	ev->pmu = pmu;
	ev->id = next_id++;
	ev->read_format = a.read_format;
	ev->sampling = a.sample_period != 0;
	ev->enabled = !a.disabled;
	ev->hw_phase = -1;
	/* Whatever is counting on this CPU is settled before the new event can
	 * change how fixed counter 3 is shared. */
	cpu_sync(cpu, now);
	if (leader) {
		if (leader->nsib == leader->capsib) {
			int cap = leader->capsib ? leader->capsib * 2 : 16;
			struct fev **s = realloc(leader->sib, (size_t)cap * sizeof(*s));

			if (!s) {
				free(ev);
				fp_real_close(fd);
				return fail(ENOMEM);
			}
			leader->sib = s;
			leader->capsib = cap;
		}
		leader->sib[leader->nsib++] = ev;
		ev->leader = leader;
	} else {
		ev->leader = ev;
		ev->last_ns = now;
		cpu_link(ev);
	}
	if (fp_fd_set(fd, ev) < 0) {
		fp_close(ev);
		return fail(ENFILE);
	}
	return fd;

e2big:
	size = sizeof(a);
	memcpy((char *)uattr + offsetof(struct perf_event_attr, size), &size, sizeof(size));
	return fail(E2BIG);
}

static void put64(unsigned char **p, uint64_t v)
{
	memcpy(*p, &v, sizeof(v));
	*p += sizeof(v);
}

ssize_t fp_read(struct fev *ev, void *buf, size_t len)
{
	uint64_t now = fp_now_ns();
	uint64_t rf = ev->read_format;
	const struct fault *f = fp_fault_fire(FO_READ, ev->cpu, ev->cls);
	struct fev *l, *timer;
	unsigned char *p = buf;
	size_t size;

	if (f && f->delay_ms) {
		/* A read stuck in the kernel (an IPI to a wedged CPU): the
		 * counts are those of when it returns. */
		struct timespec ts = { (time_t)(f->delay_ms / 1000), (long)(f->delay_ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		now = fp_now_ns();
		f = NULL;
	}
	if (f && !f->short_read)
		return fail(f->err);
	check_cpu(ev->cpu, now);
	if (ev->error)
		return 0;	/* __perf_read(): EOF on an event in ERROR state */
	l = ev->leader;
	size = read_size(rf, l->nsib + 1);
	if (len < size)
		return fail(ENOSPC);
	if (!l->detached) {
		advance(l, now);
		/* Reading a topdown event or the group reads PERF_METRICS. */
		if ((rf & PERF_FORMAT_GROUP) || is_topdown_cls(ev->cls))
			fold(l);
	}
	timer = (rf & PERF_FORMAT_GROUP) ? l : ev;
	if (rf & PERF_FORMAT_GROUP)
		put64(&p, (uint64_t)l->nsib + 1);
	else
		put64(&p, ev->count);
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		put64(&p, timer->t_enabled);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		put64(&p, (uint64_t)timer->t_running);
	for (int i = 0; i <= ((rf & PERF_FORMAT_GROUP) ? l->nsib : 0); i++) {
		struct fev *m = (rf & PERF_FORMAT_GROUP) ? member(l, i) : ev;

		if (rf & PERF_FORMAT_GROUP)
			put64(&p, m->count);
		if (rf & PERF_FORMAT_ID)
			put64(&p, m->id);
		if (rf & PERF_FORMAT_LOST)
			put64(&p, 0);
	}
	if (f) {
		/* Injected short read: a valid-looking prefix of the record. */
		size_t half = (size / 2) & ~(size_t)7;

		return (ssize_t)(half ? half : size / 2);
	}
	return (ssize_t)size;
}

int fp_ioctl(struct fev *ev, unsigned long req, void *arg)
{
	uint64_t now = fp_now_ns();
	bool group = ((unsigned long)arg & PERF_IOC_FLAG_GROUP) != 0;
	struct fev *l;
	int n;

	switch (req) {
	case PERF_EVENT_IOC_ID:
		if (!arg)
			return fail(EFAULT);
		memcpy(arg, &ev->id, sizeof(ev->id));
		return 0;
	case PERF_EVENT_IOC_ENABLE:
	case PERF_EVENT_IOC_DISABLE:
	case PERF_EVENT_IOC_RESET:
		break;
	default:
		return fail(ENOTTY);
	}
	check_cpu(ev->cpu, now);
	l = ev->leader;		/* after a possible hotplug detach */
	if (!l->detached) {
		/* Settle every group of the CPU: enabling or disabling changes
		 * how fixed counter 3 is shared; disable and reset fold. */
		cpu_sync(ev->cpu, now);
		if (req != PERF_EVENT_IOC_ENABLE)
			fold(l);
	}
	/* PERF_IOC_FLAG_GROUP acts on the whole group, whichever member is
	 * named (perf_event_for_each). */
	n = group ? l->nsib + 1 : 1;
	for (int i = 0; i < n; i++) {
		struct fev *t = group ? member(l, i) : ev;

		if (req == PERF_EVENT_IOC_RESET)
			t->count = 0;	/* enabled/running times are not reset */
		else if (!t->detached && !t->error)
			t->enabled = req == PERF_EVENT_IOC_ENABLE;
	}
	return 0;
}

int fp_close(struct fev *ev)
{
	uint64_t now = fp_now_ns();
	struct fev *l;
	int fd = ev->fd;

	check_cpu(ev->cpu, now);
	l = ev->leader;		/* after a possible hotplug detach */
	if (!ev->detached && !ev->error) {
		cpu_sync(ev->cpu, now);
		fold(l);
		if (l == ev) {
			cpu_unlink(ev);
			promote_siblings(ev, now);
		} else {
			for (int i = 0; i < l->nsib; i++) {
				if (l->sib[i] != ev)
					continue;
				memmove(&l->sib[i], &l->sib[i + 1],
					(size_t)(l->nsib - i - 1) * sizeof(*l->sib));
				l->nsib--;
				break;
			}
		}
	}
	fp_fd_set(fd, NULL);
	free(ev->sib);
	free(ev);
	return fp_real_close(fd);
}
