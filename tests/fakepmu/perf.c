/* SPDX-License-Identifier: MIT */
/* perf.c: the emulated kernel.  Owns fake events and groups: attribute
 * validation with the kernel's errno for each violation (perf_event_open,
 * perf_copy_attr, intel_pmu_hw_config, x86 group validation), the per-CPU
 * scheduling of groups onto counters (ctx_sched_in, merge_sched_in,
 * perf_rotate_context), the counting model (SLOTS and PERF_METRICS saved
 * and restored across schedule-out/in and folded into the event counts the
 * way intel_update_topdown_event and __icl_update_topdown_event do),
 * read() layouts (perf_read_group / perf_read_one), ioctls and hotplug
 * detach (perf_event_exit_cpu_context).  Everything runs under the global
 * lock taken by interpose.c. */
#include <errno.h>
#include <stdarg.h>
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
/* FIXED_EVENT_FLAGS (arch/x86/events/perf_event.h): the filters that keep
 * an event off the fixed counters; AnyThread and pc are not among them. */
#define CFG_FIXED_FLAGS	(CFG_EDGE | CFG_INV | CFG_CMASK | CFG_IN_TX | CFG_IN_TX_CP)

#define SLOTS_CONFIG		0x0400ULL	/* event 0x00, umask 0x04 */
#define METRIC_RETIRING		0x8000ULL	/* event 0x00, umask 0x80..0x87 */

#define FORMAT_ALL	((uint64_t)PERF_FORMAT_MAX - 1)
#define MAX_READ_SIZE	(16 * 1024)	/* perf_event_validate_size() */
#define FIRST_ID	1000
#define FIXED_MAX	7		/* fixed counters 0..6 (4-6: Skymont's) */
#define MAX_GP_EVENTS	64		/* general-purpose events of one group considered */

struct fev {
	int fd, cpu;
	int cls;			/* EC_* */
	int sid;			/* scenario event (fp_scen names), -1: counts 0 */
	int fixed;			/* fixed counter it prefers, -1: none */
	int smtk;			/* a reference clock of the scenario's "smt" (SK_*), 0 */
	bool gp_ok;			/* may take a general-purpose counter */
	uint32_t gp_mask;		/* the ones it may take (perf's table), 0: any */
	char name[128];			/* perf's name for a hardware event, "" */
	const struct pmu *pmu;		/* NULL for software events */
	uint64_t id, read_format;
	bool sampling, pinned;
	bool enabled;			/* not PERF_EVENT_STATE_OFF by ioctl/attr.disabled */
	bool detached;			/* CPU went offline: frozen for good */
	bool error;			/* PERF_EVENT_STATE_ERROR: read() returns 0 */
	struct fev *leader;		/* self for a leader or singleton */
	struct fev **sib;		/* leader only: members in open order */
	int nsib, capsib;
	struct fev *cpu_prev, *cpu_next; /* leaders of this CPU, in list order */

	uint64_t reads;			/* read() calls answered (FAKEPMU_CLOCK_STEP) */
	uint64_t count;			/* the software count read() reports */
	double carry;			/* events not yet counted (< 1) */
	uint64_t t_enabled, t_running;

	/* Leader only: scheduling and the topdown registers. */
	bool in;			/* scheduled on the counters */
	bool want;			/* place(): stays or goes on */
	double hw_s;			/* SLOTS register (real-valued) */
	double hw_wf[NMETRIC];		/* slot-weighted fractions behind PERF_METRICS */
	int hw_phase;			/* the only phase in the registers, -1 none, -2 several */
	uint64_t saved_slots;		/* hw->saved_slots / saved_metric */
	uint8_t saved_bytes[NMETRIC];
	double saved_frac;		/* the part of a slot below the saved count */
	int saved_phase;
};

struct ctx {
	struct fev *head, *tail;	/* leaders in rotation order */
	uint64_t last_ns;		/* settled up to here */
	bool rotate_necessary;		/* a flexible group did not fit */
	/* The scenario's flexible holders: each a group of our own making
	 * (fd -1), in the rotation while the holder is there. */
	struct fev *holder[HOLDERS_MAX];
};

static struct ctx *ctxs;		/* [ncpus] */
static uint64_t next_id = FIRST_ID;

void fp_cpus_init(void)
{
	ctxs = calloc((size_t)fp_fix.ncpus, sizeof(*ctxs));
	if (!ctxs)
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

static bool is_sw_cls(int cls)
{
	return cls == EC_SW_CLOCK || cls == EC_SW_OTHER || cls == EC_MSR_TSC;
}

/* The reference clocks a core's thread activity drives, as perf's tables
 * describe them (their PublicDescription, the SDM's words):
 * CPU_CLK_UNHALTED.REF_TSC "reference cycles when the core is not in a
 * halt state", at the TSC's rate (this thread unhalted); ONE_THREAD_ACTIVE
 * "core crystal clock cycles when this thread is unhalted and the other
 * thread is halted"; REF_XCLK "core crystal clock cycles when the thread is
 * unhalted"; REF_XCLK_ANY "... when at least one thread on the physical
 * core is unhalted"; REF_DISTRIBUTED "distributes core crystal clock cycle
 * counts between active hyperthreads ... if one thread is active in a core,
 * all counts are attributed to this hyperthread". */
enum { SK_NONE, SK_REF_TSC, SK_ONE_THREAD, SK_REF_XCLK, SK_REF_XCLK_ANY, SK_REF_DISTRIBUTED };

static int smt_kind(const char *name)
{
	static const struct {
		const char *name;
		int kind;
	} k[] = {
		{ "CPU_CLK_UNHALTED.REF_TSC", SK_REF_TSC },
		{ "CPU_CLK_UNHALTED.REF_TSC_P", SK_REF_TSC },
		{ "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", SK_ONE_THREAD },
		{ "CPU_CLK_THREAD_UNHALTED.ONE_THREAD_ACTIVE", SK_ONE_THREAD },
		{ "CPU_CLK_UNHALTED.REF_XCLK", SK_REF_XCLK },
		{ "CPU_CLK_THREAD_UNHALTED.REF_XCLK", SK_REF_XCLK },
		{ "CPU_CLK_UNHALTED.REF_XCLK_ANY", SK_REF_XCLK_ANY },
		{ "CPU_CLK_THREAD_UNHALTED.REF_XCLK_ANY", SK_REF_XCLK_ANY },
		{ "CPU_CLK_UNHALTED.REF_DISTRIBUTED", SK_REF_DISTRIBUTED },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (strcmp(k[i].name, name) == 0)
			return k[i].kind;
	return SK_NONE;
}

/* Counts of clock @kind on @cpu over [a, b) from its core's activity. */
static double smt_count(int cpu, int kind, uint64_t a, uint64_t b)
{
	const struct smtline *line = fp_scen.smt[cpu];
	bool first = fp_fix.thread_of[cpu] == 0;
	double n = 0;

	for (int p = 0; p < line->n; p++) {
		const struct smtphase *ph = &line->ph[p];
		uint64_t lo = a > ph->start_ns ? a : ph->start_ns;
		uint64_t hi = b < ph->end_ns ? b : ph->end_ns;
		double alone = first ? ph->first : ph->second, s;

		if (lo >= hi)
			continue;
		s = (double)(hi - lo) / 1e9;
		switch (kind) {
		case SK_REF_TSC:
			n += s * fp_scen.tsc_hz * (alone + ph->both);
			break;
		case SK_ONE_THREAD:
			n += s * fp_scen.crystal_hz * alone;
			break;
		case SK_REF_XCLK:
			n += s * fp_scen.crystal_hz * (alone + ph->both);
			break;
		case SK_REF_XCLK_ANY:
			n += s * fp_scen.crystal_hz * (ph->first + ph->second + ph->both);
			break;
		case SK_REF_DISTRIBUTED:
			n += s * fp_scen.crystal_hz * (alone + ph->both / 2);
			break;
		}
	}
	return n;
}

/* is_slots_event / is_metric_event (arch/x86/events/perf_event.h). */
static int classify_topdown(uint64_t config)
{
	uint64_t eu = config & CFG_EVENT_UMASK;

	if (eu == SLOTS_CONFIG)
		return EC_SLOTS;
	if ((config & CFG_EVENT) == 0 && eu >= METRIC_RETIRING &&
	    eu <= METRIC_RETIRING + ((NMETRIC - 1) << 8))
		return EC_METRIC0 + (int)((eu - METRIC_RETIRING) >> 8);
	return EC_HW;
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

static bool group_is_software(struct fev *l)
{
	for (int i = 0; i <= l->nsib; i++)
		if (!is_sw_cls(member(l, i)->cls))
			return false;
	return true;
}

/* ---- counters: what a group needs and whether it fits ---- */

#define MAX_PLACED 64

struct counters {
	/* The general-purpose counters, a bit each; free after the events
	 * placed so far, as the last assignment left them. */
	uint32_t gp_all, gp_free;
	/* The counters each placed general-purpose event may take: the
	 * kernel assigns them all again, from scratch, whenever a group is
	 * added (x86_schedule_events over every collected event), so an
	 * event placed earlier moves to make room for a constrained one. */
	uint32_t placed[MAX_PLACED];
	int n_placed;
	bool fixed_busy[FIXED_MAX];
};

static int popcount(uint32_t m)
{
	return __builtin_popcount(m);
}

/* @n counters, all free. */
static uint32_t all_counters(int n)
{
	return n >= 32 ? UINT32_MAX : (1u << n) - 1;
}

/* Assigns @n events that may take the counters @want[i] out of @all as
 * perf_assign_events() does: fewest allowed counters first, each on the
 * lowest free one.  The counters left free, or -1 when one does not fit. */
static int64_t assign(const uint32_t *want, int n, uint32_t all)
{
	uint32_t free_mask = all;

	for (int w = 1; w <= 32 && n; w++)
		for (int i = 0; i < n; i++) {
			uint32_t ok;

			if (popcount(want[i]) != w && !(w == 32 && popcount(want[i]) >= 32))
				continue;
			ok = want[i] & free_mask;
			if (!ok)
				return -1;
			free_mask &= ~(ok & -ok);
		}
	return free_mask;
}

/* @c with @gp general-purpose counters, none taken. */
static void counters_init(struct counters *c, int gp)
{
	memset(c, 0, sizeof(*c));
	c->gp_all = c->gp_free = all_counters(gp);
}

/* Another user's pinned events take @n general-purpose counters, any of
 * them, before any of ours (ctx_sched_in: pinned first). */
static void take_any(struct counters *c, int n)
{
	while (n-- > 0 && c->n_placed < MAX_PLACED && popcount(c->gp_free) > 0) {
		c->placed[c->n_placed++] = UINT32_MAX;
		c->gp_free = (uint32_t)assign(c->placed, c->n_placed, c->gp_all);
	}
}

static int gp_counters(const struct pmu *p)
{
	if (fp_scen.gp_counters > 0)
		return fp_scen.gp_counters;
	return p && p->gp_counters > 0 ? p->gp_counters : 8;
}

/* Which members a group validation counts (@new is the event being
 * opened, not yet a member).  x86 (arch/x86/events/core.c: validate_group
 * -> collect_events): the leader always, a sibling only when its state is
 * above PERF_EVENT_STATE_OFF (`event->state <= PERF_EVENT_STATE_OFF` is
 * skipped), the new event always (collected on its own, dogrp false).
 * Arm (drivers/perf/arm_pmu.c: validate_group -> validate_event): any
 * event in state OFF without enable_on_exec is accepted without a
 * counter, the leader and the new event included.  A disabled attribute
 * makes the state OFF before the PMU's event_init runs
 * (kernel/events/core.c: perf_event_alloc -> perf_event__state_init). */
static bool validation_counts(const struct fev *l, const struct fev *ev, const struct fev *new_ev)
{
	if (ev->error || ev->detached)
		return false;
	if (fp_fix.arm)
		return ev->enabled;
	return ev == l || ev == new_ev || ev->enabled;
}

/* x86_schedule_events() reduced to what the fake needs: slots and the
 * metrics share fixed counter 3, an event with a fixed counter takes it
 * when free, otherwise (if it may) a general-purpose counter like every
 * other event, each within the counters perf's table lists for it (the
 * kernel's constraint tables; where they differ the table's is the
 * fake's rule).  The general-purpose events are placed as
 * perf_assign_events() does: fewest allowed counters first, each on the
 * lowest free one.  Commits to @c only when the whole group fits.  With
 * @new_ev (group validation) the members validation counts, otherwise
 * (scheduling) the active ones. */
static bool fits(struct fev *l, struct counters *c, const struct fev *new_ev)
{
	struct counters t = *c;
	bool topdown = false;
	uint32_t want[MAX_GP_EVENTS];
	int n_gp = 0;

	for (int i = 0; i <= l->nsib; i++) {
		struct fev *ev = member(l, i);

		if (is_sw_cls(ev->cls) || (new_ev ? !validation_counts(l, ev, new_ev) : !active(ev)))
			continue;
		if (is_topdown_cls(ev->cls)) {
			topdown = true;
			continue;
		}
		if (ev->fixed >= 0 && ev->fixed < FIXED_MAX && !t.fixed_busy[ev->fixed]) {
			t.fixed_busy[ev->fixed] = true;
			continue;
		}
		if (!ev->gp_ok || n_gp == MAX_GP_EVENTS)
			return false;
		want[n_gp++] = ev->gp_mask ? ev->gp_mask : UINT32_MAX;
	}
	if (n_gp) {
		int64_t left;

		if (t.n_placed + n_gp > MAX_PLACED)
			return false;
		memcpy(t.placed + t.n_placed, want, (size_t)n_gp * sizeof(want[0]));
		t.n_placed += n_gp;
		left = assign(t.placed, t.n_placed, t.gp_all);
		if (left < 0)
			return false;
		t.gp_free = (uint32_t)left;
	}
	if (topdown) {
		if (t.fixed_busy[3])
			return false;
		t.fixed_busy[3] = true;
	}
	*c = t;
	return true;
}

/* ---- time, phases and the topdown registers ---- */

/* Slots (w), slot-weighted fractions (wf) and scenario events (we) over
 * [a, b), integrated piecewise over the phases; *marker tracks which
 * phases were touched. */
static void integrate(const struct cpucfg *c, uint64_t a, uint64_t b, double *w,
		      double wf[FR_COUNT], double *we, int *marker)
{
	for (int p = 0; p < c->nphases; p++) {
		const struct phase *ph = &c->phases[p];
		uint64_t lo = a > ph->start_ns ? a : ph->start_ns;
		uint64_t hi = b < ph->end_ns ? b : ph->end_ns;
		double wp;

		if (lo >= hi)
			continue;
		wp = c->slots_per_ns * (double)(hi - lo);
		*w += wp;
		for (int k = 0; k < FR_COUNT; k++)
			wf[k] += wp * ph->f[k];
		for (int k = 0; k < fp_scen.nevents; k++)
			we[k] += wp * ph->ev[k];
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

/* PERF_METRICS as the hardware reports it for what the registers hold. */
static void current_bytes(struct fev *l, uint8_t bytes[NMETRIC])
{
	const struct cpucfg *cfg = fp_scen.cpu[l->cpu];

	if (l->hw_phase >= 0) {
		/* One phase: its own fractions, bit for bit (no averaging noise). */
		memcpy(bytes, cfg->phases[l->hw_phase].bytes, NMETRIC);
	} else if (l->hw_s > 0) {
		double f[NMETRIC];

		for (int k = 0; k < NMETRIC; k++)
			f[k] = l->hw_wf[k] / l->hw_s;
		fp_quantise(f, bytes);
	} else {
		memset(bytes, 0, NMETRIC);
	}
}

/* icl_get_topdown_value(): slots itself, or slots * byte / 0xff (u64
 * truncation, mul_u64_u32_div) for a metric. */
static uint64_t topdown_value(int cls, uint64_t slots, const uint8_t bytes[NMETRIC])
{
	if (cls == EC_SLOTS)
		return slots;
	return (uint64_t)((unsigned __int128)slots * bytes[cls - EC_METRIC0] / 0xff);
}

/* intel_update_topdown_event() for the group of @l: every topdown member
 * gains value(now) - value(saved) when that is positive
 * (__icl_update_topdown_event).  With @reset (a read while scheduled) both
 * registers are zeroed and the saved values cleared; without (the group
 * is scheduled out) the registers are saved for the next schedule-in. */
static void topdown_update(struct fev *l, bool reset)
{
	uint8_t bytes[NMETRIC];
	uint64_t slots = (uint64_t)floor(l->hw_s);

	if (slots == 0)
		return;		/* "if (!slots) return 0": nothing, not even saved */
	current_bytes(l, bytes);
	for (int i = 0; i <= l->nsib; i++) {
		struct fev *ev = member(l, i);
		uint64_t now, last = 0;

		if (!is_topdown_cls(ev->cls) || !active(ev))
			continue;
		now = topdown_value(ev->cls, slots, bytes);
		if (l->saved_slots)
			last = topdown_value(ev->cls, l->saved_slots, l->saved_bytes);
		if (now > last)
			ev->count += now - last;
	}
	if (reset) {
		l->hw_s -= (double)slots;	/* the fraction of a slot stays */
		memset(l->hw_wf, 0, sizeof(l->hw_wf));
		l->hw_phase = -1;
		l->saved_slots = 0;
		l->saved_frac = 0;
		l->saved_phase = -1;
	} else {
		l->saved_slots = slots;
		l->saved_frac = l->hw_s - (double)slots;
		memcpy(l->saved_bytes, bytes, NMETRIC);
		l->saved_phase = l->hw_phase;
	}
}

/* icl_set_topdown_event_period(), run at every schedule-in
 * (x86_pmu_start with PERF_EF_RELOAD): a counting event's period_left is
 * max_period (x86_setup_perfctr) and topdown events never change it, so
 * `left == x86_pmu.max_period` always holds and both registers start from
 * zero, the saved values cleared; the write-back of saved values below
 * that test never runs for a counting group.  The fraction of a slot not
 * yet counted stays with the hardware's counter. */
static void sched_in(struct fev *l)
{
	l->in = true;
	l->hw_s = l->saved_frac;
	memset(l->hw_wf, 0, sizeof(l->hw_wf));
	l->hw_phase = -1;
	l->saved_slots = 0;
	l->saved_phase = -1;
}

static void sched_out(struct fev *l)
{
	if (!l->in)
		return;
	topdown_update(l, false);
	l->in = false;
}

/* Runs @l's counts over [a, b): times for every enabled member, counts
 * while the group is scheduled. */
static void run_group(struct fev *l, uint64_t a, uint64_t b)
{
	const struct cpucfg *cfg = fp_scen.cpu[l->cpu];
	double w = 0, wf[FR_COUNT] = { 0 }, we[FP_EVENTS_MAX] = { 0 };
	uint64_t dt = b - a;
	int marker = -1;
	bool need = false;

	if (b <= a || !l->enabled || l->detached || l->error)
		return;
	for (int i = 0; i <= l->nsib; i++) {
		struct fev *ev = member(l, i);

		if (!active(ev))
			continue;
		ev->t_enabled += dt;
		if (!l->in)
			continue;
		ev->t_running += dt;
		if (ev->cls == EC_SW_CLOCK)
			ev->count += dt;
		else if (ev->cls == EC_MSR_TSC)
			add_events(ev, (double)dt / 1e9 * fp_scen.tsc_hz);
		else if (ev->smtk)
			add_events(ev, smt_count(ev->cpu, ev->smtk, a, b));
		need |= is_topdown_cls(ev->cls) || (ev->sid >= 0 && !ev->smtk);
	}
	if (!l->in || !need)
		return;
	integrate(cfg, a, b, &w, wf, we, &marker);
	for (int i = 0; i <= l->nsib; i++) {
		struct fev *ev = member(l, i);

		if (!active(ev))
			continue;
		if (ev->cls == EC_SLOTS) {
			l->hw_s += w;
			for (int k = 0; k < NMETRIC; k++)
				l->hw_wf[k] += wf[k];
			if (marker != -1)
				l->hw_phase = l->hw_phase == -1 || l->hw_phase == marker ? marker : -2;
		} else if (ev->sid >= 0 && !ev->smtk) {
			add_events(ev, we[ev->sid]);
		}
	}
}

/* ---- scheduling (ctx_sched_in, perf_rotate_context) ---- */

/* An outside user of the PMU (the scenario's "running" < 1) holds every
 * counter in some mux slices: slice k is taken when the running share
 * steps over a whole slice, so over n slices it takes floor(n * (1 -
 * running)) of them.  Our groups are all off then, and their rotation
 * waits (like counters lent to a guest: our context is not running). */
static bool phantom_slice(const struct cpucfg *cfg, uint64_t k)
{
	double busy = 1.0 - cfg->running;

	return busy > 0 && floor((double)(k + 1) * busy) > floor((double)k * busy);
}

static uint64_t slice_of(uint64_t t)
{
	return t / fp_fix.mux_ns;
}

static bool holder_there(const struct holder *h, uint64_t t)
{
	return t >= h->from_ns && t < h->to_ns;
}

/* The first time after @t at which a holder of @cfg comes or goes, or
 * UINT64_MAX. */
static uint64_t next_holder_change(const struct cpucfg *cfg, uint64_t t)
{
	uint64_t next = UINT64_MAX;

	for (int h = 0; h < cfg->nholders; h++) {
		const struct holder *ho = &cfg->holders[h];

		if (ho->from_ns > t && ho->from_ns < next)
			next = ho->from_ns;
		if (ho->to_ns > t && ho->to_ns < next)
			next = ho->to_ns;
	}
	return next;
}

/* Places the groups of @cpu for slice @k: pinned groups first, then the
 * flexible ones in list order until one does not fit (merge_sched_in:
 * can_add_hw drops to 0, and rotation becomes necessary); a pinned group
 * that does not fit goes to ERROR.  Groups that leave are scheduled out
 * before any arrives (ctx_sched_out, then ctx_sched_in). */
static void place(int cpu, uint64_t k, uint64_t now)
{
	struct ctx *c = &ctxs[cpu];
	const struct cpucfg *cfg = fp_scen.cpu[cpu];
	bool phantom = phantom_slice(cfg, k), can_add = true;
	struct counters cnt = { 0 };
	struct fev *l;

	counters_init(&cnt, gp_counters(fp_core_pmu_for_cpu(cpu)));
	/* The NMI watchdog's pinned cycles event (kernel/watchdog_perf.c)
	 * holds a counter on every CPU before any of ours: fixed counter 1
	 * (arm64: the cycle counter), or on AMD, which has no fixed counters,
	 * a general-purpose one.  Pinned groups are placed first
	 * (ctx_sched_in: EVENT_PINNED before EVENT_FLEXIBLE), and group
	 * validation never sees them. */
	if (fp_fix.amd)
		take_any(&cnt, fp_fix.watchdog);
	else
		cnt.fixed_busy[1] = fp_fix.watchdog;
	/* The scenario's pinned holders there in this slice: before any
	 * flexible group, on the lowest free counters. */
	for (int h = 0; h < cfg->nholders; h++) {
		const struct holder *ho = &cfg->holders[h];

		if (!ho->pinned || !holder_there(ho, now))
			continue;
		take_any(&cnt, ho->gp);
		for (size_t f = 0; f < sizeof(ho->fixed) / sizeof(ho->fixed[0]); f++)
			cnt.fixed_busy[f] |= ho->fixed[f];
	}
	c->rotate_necessary = false;
	for (int pass = 0; pass < 2; pass++) {
		for (l = c->head; l; l = l->cpu_next) {
			if (l->pinned != (pass == 0))
				continue;
			l->want = false;
			if (!l->enabled || l->error || l->detached)
				continue;
			if (group_is_software(l)) {
				l->want = true;
				continue;
			}
			/* The outside user of "running" is a flexible one: a
			 * pinned group goes before it (ctx_sched_in: pinned
			 * first), in its slices too. */
			if (l->pinned) {
				if (fits(l, &cnt, NULL)) {
					l->want = true;
				} else {
					sched_out(l);
					l->error = true;
				}
				continue;
			}
			/* While the outside user holds the PMU nothing of ours
			 * is on, and the rotation does not move either. */
			if (phantom)
				continue;
			if (can_add && fits(l, &cnt, NULL)) {
				l->want = true;
				continue;
			}
			can_add = false;
			c->rotate_necessary = true;
		}
	}
	for (l = c->head; l; l = l->cpu_next)
		if (l->in && !l->want) {
			sched_out(l);
			if (l->fd < 0)
				fp_trace("holder cpu=%d out %llu", cpu, (unsigned long long)(k * fp_fix.mux_ns));
		}
	for (l = c->head; l; l = l->cpu_next)
		if (!l->in && l->want) {
			sched_in(l);
			if (l->fd < 0)
				fp_trace("holder cpu=%d in %llu", cpu, (unsigned long long)(k * fp_fix.mux_ns));
		}
}

/* perf_rotate_context(): ctx_event_to_rotate() picks the first active
 * flexible group (flexible_active, in the order they went in: list
 * order), or the first flexible one when none is active, and
 * rotate_ctx() puts it at the end of the list (kernel/events/core.c).  A
 * disabled group is never active, so it never takes a turn, and groups
 * opened disabled do not slow the rotation of the others. */
static void rotate(int cpu)
{
	struct ctx *c = &ctxs[cpu];
	struct fev *l = c->head;

	while (l && (l->pinned || !l->in))
		l = l->cpu_next;
	if (!l)
		for (l = c->head; l && l->pinned;)
			l = l->cpu_next;
	if (!l || l == c->tail)
		return;
	if (l->cpu_prev)
		l->cpu_prev->cpu_next = l->cpu_next;
	else
		c->head = l->cpu_next;
	l->cpu_next->cpu_prev = l->cpu_prev;
	l->cpu_prev = c->tail;
	l->cpu_next = NULL;
	c->tail->cpu_next = l;
	c->tail = l;
}

static void cpu_link(struct fev *l);
static void cpu_unlink(struct fev *l);
static int grow_siblings(struct fev *l);

/* A flexible holder's group: its general-purpose events and its fixed
 * counters' (fixed counter 3 as slots), counting nothing. */
static struct fev *holder_group(int cpu, const struct holder *h)
{
	struct fev *l = NULL;
	int n = h->gp + h->fixed[0] + h->fixed[1] + h->fixed[2] + h->fixed[3];

	for (int i = 0, f = 0; i < n; i++) {
		struct fev *ev = calloc(1, sizeof(*ev));

		if (!ev)
			fp_fatal("fakepmu: out of memory");
		ev->fd = -1;
		ev->cpu = cpu;
		ev->sid = -1;
		ev->fixed = -1;
		ev->gp_ok = true;
		ev->cls = EC_HW;
		ev->enabled = true;
		ev->pmu = fp_core_pmu_for_cpu(cpu);
		if (i >= h->gp) {
			while (!h->fixed[f])
				f++;
			if (f == 3) {
				ev->cls = EC_SLOTS;
			} else {
				ev->fixed = f;
				ev->gp_ok = false;
			}
			f++;
		}
		if (!l) {
			l = ev;
			ev->leader = ev;
			ev->hw_phase = ev->saved_phase = -1;
			continue;
		}
		ev->leader = l;
		if (grow_siblings(l))
			fp_fatal("fakepmu: out of memory");
		l->sib[l->nsib++] = ev;
	}
	return l;
}

static void holder_free(struct fev *l)
{
	for (int i = 0; i < l->nsib; i++)
		free(l->sib[i]);
	free(l->sib);
	free(l);
}

/* The flexible holders of @cpu at @t: those arriving join the rotation
 * at its end, those leaving go (their groups are kept for a return). */
static void holders_at(int cpu, uint64_t t)
{
	const struct cpucfg *cfg = fp_scen.cpu[cpu];
	struct ctx *c = &ctxs[cpu];

	for (int h = 0; h < cfg->nholders; h++) {
		const struct holder *ho = &cfg->holders[h];
		struct fev *l = c->holder[h];
		bool there = holder_there(ho, t);

		if (ho->pinned)
			continue;
		if (there && !l) {
			l = c->holder[h] = holder_group(cpu, ho);
			cpu_link(l);
			fp_trace("holder cpu=%d arrives %llu", cpu, (unsigned long long)t);
		} else if (!there && l) {
			sched_out(l);
			cpu_unlink(l);
			fp_trace("holder cpu=%d out %llu", cpu, (unsigned long long)t);
			fp_trace("holder cpu=%d leaves %llu", cpu, (unsigned long long)t);
			c->holder[h] = NULL;
			holder_free(l);
		}
	}
}

/* Settles every group of @cpu up to @t: counts over each mux slice, and
 * at every slice boundary the rotation (when a flexible group was left
 * out) and the new placement.  Another user's events arriving or leaving
 * reschedule at that instant, in list order, without rotating (the
 * kernel's perf_install_in_context and perf_remove_from_context:
 * ctx_resched).  When no rotation is due and no outside user comes and
 * goes, nothing changes at the boundaries: one step. */
static void cpu_advance(int cpu, uint64_t t)
{
	struct ctx *c = &ctxs[cpu];
	const struct cpucfg *cfg = fp_scen.cpu[cpu];

	while (c->last_ns < t) {
		uint64_t change = next_holder_change(cfg, c->last_ns);
		bool steady = !c->rotate_necessary && cfg->running >= 1.0 && change > t;
		uint64_t boundary = (slice_of(c->last_ns) + 1) * fp_fix.mux_ns;
		uint64_t end = t;

		if (!steady) {
			end = boundary < end ? boundary : end;
			end = change < end ? change : end;
		}
		for (struct fev *l = c->head; l; l = l->cpu_next)
			run_group(l, c->last_ns, end);
		c->last_ns = end;
		if (steady)
			continue;
		if (end == boundary && c->rotate_necessary)
			rotate(cpu);
		if (end == boundary || end == change) {
			holders_at(cpu, end);
			place(cpu, slice_of(end), end);
		}
	}
}

/* After a change (open, close, enable, disable): settle to now, then place
 * again in list order (ctx_resched). */
static void resched(int cpu, uint64_t now)
{
	cpu_advance(cpu, now);
	holders_at(cpu, now);
	place(cpu, slice_of(now), now);
}

static void cpu_link(struct fev *l)
{
	struct ctx *c = &ctxs[l->cpu];

	l->cpu_next = NULL;
	l->cpu_prev = c->tail;
	if (c->tail)
		c->tail->cpu_next = l;
	else
		c->head = l;
	c->tail = l;
}

static void cpu_unlink(struct fev *l)
{
	struct ctx *c = &ctxs[l->cpu];

	if (l->cpu_prev)
		l->cpu_prev->cpu_next = l->cpu_next;
	else
		c->head = l->cpu_next;
	if (l->cpu_next)
		l->cpu_next->cpu_prev = l->cpu_prev;
	else
		c->tail = l->cpu_prev;
	l->cpu_prev = l->cpu_next = NULL;
}

/* perf_group_detach(): metric siblings cannot live alone
 * (PERF_EV_CAP_SIBLING) and go to ERROR; the others become singletons. */
static void promote_siblings(struct fev *l)
{
	for (int i = 0; i < l->nsib; i++) {
		struct fev *ev = l->sib[i];

		ev->leader = ev;
		ev->in = false;
		ev->hw_phase = -1;
		ev->saved_phase = -1;
		if (is_metric_cls(ev->cls))
			ev->error = true;
		else if (!ev->detached)
			cpu_link(ev);
	}
	l->nsib = 0;
}

/* CPU hotplug (perf_event_exit_cpu_context): every group of the CPU is
 * scheduled out at the moment it went offline, frozen, and broken up;
 * nothing reattaches when the CPU returns. */
static void detach_cpu(int cpu, int64_t since, uint64_t now)
{
	struct ctx *c = &ctxs[cpu];
	uint64_t t = now;
	struct fev *l;

	if (!fp_fake_clock() && since >= 0 && (uint64_t)since < now)
		t = (uint64_t)since;
	if (t < c->last_ns)
		t = c->last_ns;
	cpu_advance(cpu, t);
	/* The holders' groups go too (they come back with the CPU). */
	for (int h = 0; h < HOLDERS_MAX; h++) {
		struct fev *g = c->holder[h];

		if (!g)
			continue;
		sched_out(g);
		cpu_unlink(g);
		holder_free(g);
		c->holder[h] = NULL;
	}
	while ((l = c->head) != NULL) {
		sched_out(l);
		cpu_unlink(l);
		for (int i = 0; i <= l->nsib; i++)
			member(l, i)->detached = true;
		promote_siblings(l);
	}
}

/* Notices a CPU that went offline (lazily, see fixture.c) before any
 * operation on it. */
static bool check_cpu(int cpu, uint64_t now)
{
	int64_t since;

	if (fp_cpu_online(cpu, &since))
		return true;
	if (ctxs[cpu].head)
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

/* Resolves attr.type to a PMU (perf_init_event); returns an errno or 0.
 * *out is NULL for the software PMU. */
static int resolve_pmu(const struct perf_event_attr *a, int cpu, const struct pmu **out)
{
	const struct pmu *p;

	*out = NULL;
	if (a->type == PERF_TYPE_SOFTWARE) {
		/* perf_swevent_init / cpu_clock_event_init / task_clock_event_init */
		if (a->config >= PERF_COUNT_SW_MAX)
			return ENOENT;
		return 0;
	}
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
		/* msr_event_init() (arch/x86/events/msr.c): no sampling, a
		 * config below PERF_MSR_EVENT_MAX that the CPU has (msr_mask:
		 * the fake's CPU has the TSC, config 0, only), and
		 * perf_try_init_event() refuses any exclude_* flag of a
		 * PERF_PMU_CAP_NO_EXCLUDE PMU.  A software context's event:
		 * it joins any group. */
		if (p->msr) {
			if (a->sample_period || a->config != 0 || a->exclude_user || a->exclude_kernel ||
			    a->exclude_hv || a->exclude_idle || a->exclude_host || a->exclude_guest)
				return EINVAL;
			*out = NULL;
			return 0;
		}
		/* Tracepoint, uncore... PMUs exist but are not emulated. */
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
static int check_group(struct fev *l, int cpu, struct fev *ev)
{
	struct counters cnt = { 0 };

	if (l->leader != l || l->detached || l->error)
		return EINVAL;
	if (l->cpu != cpu)
		return EINVAL;
	if (is_topdown_cls(ev->cls)) {
		int metrics = 0;

		for (int i = 0; i <= l->nsib; i++) {
			int c = member(l, i)->cls;

			if (c == ev->cls)
				return EINVAL;	/* one counter per metric, one fixed counter 3 */
			metrics += is_metric_cls(c);
		}
		if (is_metric_cls(ev->cls) && metrics >= NMETRIC)
			return EINVAL;
	}
	/* validate_group(): the group with the new event must fit an empty
	 * PMU, or it could never be scheduled. */
	if (!is_sw_cls(ev->cls)) {
		bool ok;

		counters_init(&cnt, gp_counters(ev->pmu));
		l->sib[l->nsib] = ev;	/* room was made by the caller */
		l->nsib++;
		ok = fits(l, &cnt, ev);
		l->nsib--;
		if (!ok)
			return EINVAL;
	}
	return 0;
}

static int grow_siblings(struct fev *l)
{
	if (l->nsib + 1 >= l->capsib) {
		int cap = l->capsib ? l->capsib * 2 : 16;
		struct fev **s = realloc(l->sib, (size_t)cap * sizeof(*s));

		if (!s)
			return ENOMEM;
		l->sib = s;
		l->capsib = cap;
	}
	return 0;
}

/* What the fake counts for a hardware event that is not slots or a
 * metric: the scenario's rate of the event perf's tables name for its
 * config, or nothing. */
static void classify_hw(struct fev *ev, const struct perf_event_attr *a)
{
	struct fp_enc enc;

	ev->sid = -1;
	ev->fixed = -1;
	ev->gp_ok = true;
	if (a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE)
		return;
	fp_decode(a->config, a->config1, &enc);
	ev->gp_mask = fp_tables_gp_mask(ev->pmu->name, &enc, fp_fix.smt_off);
	if (!fp_tables_name(ev->pmu->name, &enc, ev->name, sizeof(ev->name)))
		return;
	/* arm64: a PMUv3 common event (0x0000-0x003f, 0x4000-0x403f) the
	 * fixture's events/ leaves out is one the CPU does not implement
	 * (PMCEID): the kernel still opens it (armpmu_map_raw_event checks
	 * nothing) and it counts 0.  The driver has no attribute for any
	 * other (armv8pmu_event_attr_is_visible, drivers/perf/arm_pmuv3.c):
	 * an IMPLEMENTATION DEFINED event (0x8162, STALL_FRONTEND_FLUSH) is
	 * never listed, and counts what the model's tables name it. */
	if (fp_fix.arm && (enc.event < 0x40 || (enc.event >= 0x4000 && enc.event < 0x4040)) &&
	    !fp_arm_event_listed(ev->pmu->name, ev->name))
		return;
	/* A hypervisor's PMU event filter: the event opens and counts 0. */
	for (int i = 0; i < fp_scen.nfiltered; i++)
		if (strcmp(fp_scen.filtered[i], ev->name) == 0)
			return;
	ev->sid = fp_scenario_event(ev->pmu, ev->name);
	/* A core whose thread activity the scenario states: its reference
	 * clocks follow it (and not a rate per slot). */
	if (fp_scen.smt && fp_scen.smt[ev->cpu])
		ev->smtk = smt_kind(ev->name);
}

/* The fixed counters of Intel cores (FIXED_EVENT_CONSTRAINT in
 * arch/x86/events/intel/core.c): INST_RETIRED.ANY 0x00c0 on fixed counter
 * 0, CPU_CLK_UNHALTED.THREAD 0x003c on 1, the reference cycles pseudo-event
 * 0x0300 on 2 (only there); slots (0x0400) is fixed counter 3, handled as
 * topdown.  Skymont's intel_skt_event_constraints adds TOPDOWN_BAD_SPECULATION
 * 0x0073 on 4, TOPDOWN_FE_BOUND 0x019c on 5 and TOPDOWN_RETIRING 0x02c2 on
 * 6 (reference/kernel/intel-fixed-constraints.c).  An encoding that is not
 * a pseudo-encoding (its event byte not 0) may also take a
 * general-purpose counter (intel_pmu_check_event_constraints,
 * use_fixed_pseudo_encoding): all but 0x0300. */
static void fixed_counter(struct fev *ev, const struct perf_event_attr *a)
{
	uint64_t code = a->config & (CFG_EVENT_UMASK | CFG_FIXED_FLAGS);

	if (fp_fix.amd || (a->type != PERF_TYPE_RAW && a->type != ev->pmu->type))
		return;
	/* arm64's dedicated cycle counter (PMCCNTR_EL0) takes CPU_CYCLES
	 * (0x11) when free (armv8pmu_get_event_idx): fixed counter 1's part,
	 * which the NMI watchdog's cycles event holds as well. */
	if (fp_fix.arm) {
		if ((a->config & 0xffff) == 0x11)
			ev->fixed = 1;
		return;
	}
	if (code == 0x00c0)
		ev->fixed = 0;
	else if (code == 0x003c)
		ev->fixed = 1;
	else if (code == 0x0300) {
		ev->fixed = 2;
		ev->gp_ok = false;
	} else if (ev->pmu->skt_fixed && code == 0x0073)
		ev->fixed = 4;
	else if (ev->pmu->skt_fixed && code == 0x019c)
		ev->fixed = 5;
	else if (ev->pmu->skt_fixed && code == 0x02c2)
		ev->fixed = 6;
}

/* One line appended to FAKEPMU_TRACE, if set (a test's record of what a
 * tool asked of the kernel). */
void fp_trace(const char *fmt, ...)
{
	const char *path = getenv("FAKEPMU_TRACE");
	char line[256];
	va_list ap;
	int fd, n;

	if (!path || !*path)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	fp_real_close(fd);
}

int fp_perf_event_open(void *uattr, long pid, long cpu_l, long group_fd, unsigned long flags)
{
	struct perf_event_attr a;
	const struct pmu *pmu = NULL;
	struct fev *leader = NULL, *ev = NULL;
	const struct fault *f;
	uint32_t size;
	int cpu = (int)cpu_l, cls = EC_HW, fd, err;
	uint64_t now;
	char name[128] = "";

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
	if (pmu && pmu->core) {
		struct fp_enc enc;

		cls = fp_fix.arm ? EC_HW : classify_topdown(a.config);
		fp_decode(a.config, a.config1, &enc);
		if (cls == EC_HW && !fp_tables_name(pmu->name, &enc, name, sizeof(name)))
			name[0] = '\0';
	}
	f = fp_fault_fire(FO_OPEN, cpu, cls, pmu, name);
	pmu = NULL;
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
	now = fp_now_ns();
	/* A hybrid PMU's event_init refuses a CPU outside its cpus with
	 * ENOENT (x86_pmu_event_init), and the kernel takes a CPU out of its
	 * PMU's cpus when it goes offline (intel_pmu_cpu_dead): an offline
	 * hybrid CPU is ENOENT, before any ENODEV.  For a per-CPU event this
	 * comes before the check of a mixed cpu_core/cpu_atom group
	 * (validate_group), which is reached only when the masks overlap.
	 * Arm's event_init refuses a CPU outside its PMU's supported_cpus
	 * with ENOENT too (armpmu_event_init), but that mask never changes
	 * with hotplug (arm_perf_teardown_cpu leaves it): an offline Arm CPU
	 * is ENODEV, as the arm64 guest of tests/kernel shows. */
	if (!err && pmu && pmu->cpus && (!pmu->cpus[cpu] || (!fp_fix.arm && !check_cpu(cpu, now))))
		err = ENOENT;
	/* Software events may join any group. */
	if (!err && leader && pmu && leader->pmu && leader->pmu != pmu)
		err = EINVAL;
	cls = !pmu ? (a.type != PERF_TYPE_SOFTWARE ? EC_MSR_TSC
		      : a.config == PERF_COUNT_SW_CPU_CLOCK || a.config == PERF_COUNT_SW_TASK_CLOCK
			      ? EC_SW_CLOCK : EC_SW_OTHER)
		   : EC_HW;
	if (!err && pmu && a.type != PERF_TYPE_HARDWARE && a.type != PERF_TYPE_HW_CACHE && !fp_fix.arm) {
		cls = classify_topdown(a.config);
		if (is_topdown_cls(cls))
			err = check_topdown(&a, pmu, cls, leader);
	}
	if (!err) {
		ev = calloc(1, sizeof(*ev));
		if (!ev)
			err = ENOMEM;
	}
	if (!err) {
		ev->fd = fd;
		ev->cpu = cpu;
		ev->cls = cls;
		ev->pmu = pmu;
		ev->read_format = a.read_format;
		ev->sampling = a.sample_period != 0;
		ev->pinned = a.pinned && !leader;
		ev->enabled = !a.disabled;
		ev->hw_phase = -1;
		ev->saved_phase = -1;
		ev->sid = -1;
		ev->fixed = -1;
		if (cls == EC_HW) {
			classify_hw(ev, &a);
			fixed_counter(ev, &a);
		}
		if (leader)
			err = grow_siblings(leader);
		if (!err && leader)
			err = check_group(leader, cpu, ev);
		/* perf_event_open(): perf_event_validate_size(), then whether
		 * the CPU is online. */
		if (!err && leader &&
		    read_size(ev->read_format | PERF_FORMAT_GROUP, leader->nsib + 2) > MAX_READ_SIZE)
			err = E2BIG;
		if (!err && !check_cpu(cpu, now))
			err = ENODEV;
		/* The mediated vPMU (a kernel option of the scenario): an event
		 * that would count guests is refused while a mediated VM runs
		 * (mediated_pmu_account_event). */
		if (!err && !is_sw_cls(cls) && fp_scen.mediated_vpmu && !a.exclude_guest)
			err = EOPNOTSUPP;
	}
	if (err) {
		free(ev);
		fp_real_close(fd);
		return fail(err);
	}
	ev->id = next_id++;
	/* Whatever is counting on this CPU is settled before the new event
	 * can change what is scheduled. */
	cpu_advance(cpu, now);
	if (leader) {
		/* A member joining a scheduled group shares its registers
		 * from the last reset on (what the kernel does when, as
		 * usual, nothing was saved since). */
		leader->sib[leader->nsib++] = ev;
		ev->leader = leader;
	} else {
		ev->leader = ev;
		cpu_link(ev);
	}
	resched(cpu, now);
	if (fp_fd_set(fd, ev) < 0) {
		fp_close(ev);
		return fail(ENFILE);
	}
	/* What was asked, for tests of the attributes a tool sets. */
	fp_trace("open fd=%d cpu=%d group_fd=%ld type=%u config=%#llx config1=%#llx disabled=%d exclude_user=%d "
		   "exclude_kernel=%d exclude_hv=%d exclude_guest=%d exclude_host=%d pinned=%d",
		   fd, cpu, group_fd, a.type, (unsigned long long)a.config, (unsigned long long)a.config1,
		   (int)a.disabled,
		   (int)a.exclude_user, (int)a.exclude_kernel, (int)a.exclude_hv, (int)a.exclude_guest,
		   (int)a.exclude_host, (int)a.pinned);
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
	uint64_t rf = ev->read_format;
	struct fev *paced = (rf & PERF_FORMAT_GROUP) ? ev->leader : ev;
	const struct fault *f;
	struct fev *l, *timer;
	unsigned char *p = buf;
	uint64_t now;
	size_t size;

	fp_clock_read(++paced->reads);
	now = fp_now_ns();
	f = fp_fault_fire(FO_READ, ev->cpu, ev->cls, ev->pmu, ev->name);

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
		cpu_advance(l->cpu, now);
		/* Reading a topdown event or the group of a scheduled group
		 * reads and resets SLOTS and PERF_METRICS; a group that is
		 * scheduled out reports what it had at schedule-out. */
		if (l->in && ((rf & PERF_FORMAT_GROUP) || is_topdown_cls(ev->cls)))
			topdown_update(l, true);
	}
	timer = (rf & PERF_FORMAT_GROUP) ? l : ev;
	if (rf & PERF_FORMAT_GROUP)
		put64(&p, (uint64_t)l->nsib + 1);
	else
		put64(&p, ev->count);
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		put64(&p, timer->t_enabled);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		put64(&p, timer->t_running);
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

/* FAKEPMU_TRACE=FILE: the fake time (ns since load) of the first
 * PERF_EVENT_IOC_ENABLE and the wall clock then, "enable NS REALTIME_NS",
 * so that a test can place a tool's intervals on the scenario's time line
 * (by the tool's own wall-clock timestamps, when it prints them). */
static void trace_first_enable(uint64_t now)
{
	static bool done;
	struct timespec wall;

	if (done)
		return;
	done = true;
	clock_gettime(CLOCK_REALTIME, &wall);
	fp_trace("enable %llu %llu", (unsigned long long)now,
		   (unsigned long long)wall.tv_sec * 1000000000ULL + (unsigned long long)wall.tv_nsec);
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
		cpu_advance(ev->cpu, now);
		/* A reset reads the registers first (perf_event_reset ->
		 * event->pmu->read); a disable schedules the events out. */
		if (req == PERF_EVENT_IOC_RESET && l->in)
			topdown_update(l, true);
		if (req == PERF_EVENT_IOC_DISABLE && (group || ev == l))
			sched_out(l);
		else if (req == PERF_EVENT_IOC_DISABLE && l->in && is_topdown_cls(ev->cls))
			topdown_update(l, false);
	}
	/* PERF_IOC_FLAG_GROUP acts on the whole group, whichever member is
	 * named (perf_event_for_each). */
	n = group ? l->nsib + 1 : 1;
	for (int i = 0; i < n; i++) {
		struct fev *t = group ? member(l, i) : ev;

		if (req == PERF_EVENT_IOC_RESET) {
			t->count = 0;	/* enabled/running times are not reset */
			t->carry = 0;
		} else if (!t->detached && !t->error) {
			t->enabled = req == PERF_EVENT_IOC_ENABLE;
		}
	}
	if (!l->detached && req != PERF_EVENT_IOC_RESET)
		resched(ev->cpu, now);
	if (req == PERF_EVENT_IOC_ENABLE)
		trace_first_enable(now);
	return 0;
}

int fp_close(struct fev *ev)
{
	uint64_t now = fp_now_ns();
	struct fev *l;
	int fd = ev->fd;

	check_cpu(ev->cpu, now);
	l = ev->leader;		/* after a possible hotplug detach */
	/* perf_remove_from_context() whatever the state: an event in error
	 * (a pinned group that did not fit, a metric whose leader went)
	 * leaves its context too. */
	if (!ev->detached) {
		cpu_advance(ev->cpu, now);
		if (l == ev) {
			struct ctx *c = &ctxs[ev->cpu];

			sched_out(ev);
			if (c->head == ev || ev->cpu_prev || ev->cpu_next)
				cpu_unlink(ev);
			promote_siblings(ev);
		} else {
			/* event_sched_out() of one member: the group's
			 * topdown events are updated and saved. */
			if (l->in && !ev->error)
				topdown_update(l, false);
			for (int i = 0; i < l->nsib; i++) {
				if (l->sib[i] != ev)
					continue;
				memmove(&l->sib[i], &l->sib[i + 1],
					(size_t)(l->nsib - i - 1) * sizeof(*l->sib));
				l->nsib--;
				break;
			}
		}
		resched(ev->cpu, now);
	}
	fp_fd_set(fd, NULL);
	free(ev->sib);
	free(ev);
	fp_trace("close fd=%d", fd);
	return fp_real_close(fd);
}
