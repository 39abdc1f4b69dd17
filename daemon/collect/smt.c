/* SPDX-License-Identifier: MIT */
/* smt: which threads of each core ran when (issue 43), John McCalpin's
 * four-way split of a core's time (seeds/003): neither thread running,
 * only its first, only its second, both.
 *
 * Every CPU of a PMU whose plan has it (plan_smt) counts one group: the
 * thread's unhalted time at the TSC's rate (CPU_CLK_UNHALTED.REF_TSC,
 * fixed counter 2), the core crystal cycles it ran alone
 * (ONE_THREAD_ACTIVE), the core's any-thread crystal clock
 * (REF_DISTRIBUTED, the core's active cycles shared between its active
 * threads; before Ice Lake REF_XCLK_ANY, the core's active cycles on each
 * thread), and the elapsed TSC (the msr PMU's, a software context's event
 * in the same group, so that all four cover the same time).  Per core,
 * with both threads counted in the interval, in crystal cycles:
 *
 *     any   = dist_0 + dist_1           (or (xany_0 + xany_1) / 2)
 *     only0 = one_0,  only1 = one_1,  both = any - only0 - only1
 *
 * the threads' unhalted time is only0 + only1 + 2 * both crystal cycles
 * and ref_0 + ref_1 TSC cycles: their ratio turns crystal cycles into TSC
 * cycles (no crystal frequency needed), and the elapsed TSC over the
 * group's enabled time turns those into seconds; neither is what is left
 * of the interval.  perf's tma_info_system_smt_2t_utilization on the same
 * counts is both / (only0 + only1 + both).
 *
 * Like the tree below level 2, the group takes only what nobody else
 * wants: beside a single level-1/2 group it must run whole, or the CPU
 * gives it up for SMT_RETRY_NS; in the level-1/2 groups' rotation
 * ([collect] smt = on) its counts are scaled by its running share, as
 * perf scales, and that share counts with theirs (coll_share). */
#include "collector_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "perfev.h"
#include "util.h"
#include "vec.h"

#define SMT_READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
			 PERF_FORMAT_TOTAL_TIME_RUNNING)
#define SMT_RETRY_NS (60 * UINT64_C(1000000000))

/* The group's events: ua->smt's, then the msr PMU's TSC. */
enum { EV_REF_TSC, EV_ONE, EV_ANY, EV_TSC, SMT_NEV };
static_assert(SMT_NEV == UA_SMT_EVENTS + 1, "the msr PMU's TSC follows the model's events");

const char *const smt_state_name[] = {
	[SMT_NEITHER] = "neither",
	[SMT_FIRST_ONLY] = "first_only",
	[SMT_SECOND_ONLY] = "second_only",
	[SMT_BOTH] = "both",
};
TABLE_COVERS(smt_state_name, SMT_STATE_COUNT);

struct smt_cpu {
	int fd[SMT_NEV];
	bool open;
	uint64_t prev[SMT_NEV], prev_enabled, prev_running;
	double d[SMT_NEV];    /* the last interval's counts, scaled to its enabled time */
	double enabled_ns;
	bool have;            /* counts of this interval */
	double share;         /* its running share in the last interval */
	uint64_t retry_at_ns;
	int err;              /* why it was given up: -errno, or 0 (it did not run whole) */
};

unsigned coll_smt_events(const struct cpmu *pm)
{
	return pm->pp && pm->pp->smt ? SMT_NEV : 0;
}

void coll_smt_close(struct collector *c, struct ccpu *cc)
{
	struct smt_cpu *sc = c->scpu ? &c->scpu[cc - c->cpus] : NULL;

	if (!sc || !sc->open)
		return;
	for (int i = SMT_NEV - 1; i >= 0; i--)
		if (sc->fd[i] >= 0) {
			close(sc->fd[i]);
			c->fds_open--;
			sc->fd[i] = -1;
		}
	sc->open = false;
	sc->have = false;
	sc->share = 0;
}

void coll_smt_drop(struct collector *c)
{
	for (unsigned i = 0; c->scpu && i < c->n_cpus; i++)
		coll_smt_close(c, &c->cpus[i]);
}

int coll_smt_plan(struct collector *c)
{
	bool any = false;

	for (unsigned p = 0; p < c->n_pmus; p++)
		any |= c->pmus[p].pp->smt;
	if (!any || c->scpu)
		return 0;
	c->scpu = calloc(c->n_cpus ? c->n_cpus : 1, sizeof(*c->scpu));
	if (!c->scpu)
		return -ENOMEM;
	for (unsigned i = 0; i < c->n_cpus; i++)
		for (unsigned e = 0; e < SMT_NEV; e++)
			c->scpu[i].fd[e] = -1;
	return 0;
}

void coll_smt_free(struct collector *c)
{
	coll_smt_drop(c);
	free(c->scpu);
	c->scpu = NULL;
}

double coll_smt_share(const struct collector *c, const struct ccpu *cc)
{
	const struct smt_cpu *sc = c->scpu ? &c->scpu[cc - c->cpus] : NULL;

	return sc && sc->open && c->pmus[cc->pmu].pp->smt_multiplex ? sc->share : 0;
}

static void give_up(struct collector *c, struct ccpu *cc, struct smt_cpu *sc, uint64_t now, int err)
{
	coll_smt_close(c, cc);
	sc->retry_at_ns = now + SMT_RETRY_NS;
	sc->err = err;
	log_debug("CPU %d: no SMT split for %llu s: its group %s%s%s", cc->cpu,
		  (unsigned long long)(SMT_RETRY_NS / 1000000000),
		  err ? "could not be opened" : "did not run whole", err ? ": " : "", err ? strerror(-err) : "");
}

/* Opens @cc's group and enables it, as perf opens these events: the kernel
 * counted (a thread running it is running, whatever [collect]
 * count_kernel says of TopDown). */
static int open_smt(struct collector *c, const struct plan_pmu *pp, struct ccpu *cc, struct smt_cpu *sc)
{
	if (c->warned_fds || c->fds_open + SMT_NEV > c->fd_budget)
		return -EMFILE;
	for (unsigned k = 0; k < SMT_NEV; k++) {
		struct perf_event_attr attr;
		int fd;

		/* Guests as the TopDown groups count them ([collect]
		 * count_guest; perf's exclude_guest); the msr PMU takes
		 * no exclude flag at all. */
		perfev_attr(&attr, k == EV_TSC ? pp->smt_msr_type : pp->core->type, pp->smt_config[k], true,
			    k == EV_TSC || c->count_guest, SMT_READ_FORMAT, k == 0);
		fd = perfev_open(&attr, cc->cpu, k == 0 ? -1 : sc->fd[0]);
		if (fd < 0) {
			sc->open = true;
			coll_smt_close(c, cc);
			return fd;
		}
		sc->fd[k] = fd;
		c->fds_open++;
	}
	/* Enabled whole once every member is in, as perf does: on the real
	 * kernel a msr/tsc member that joins an enabled group counts
	 * nothing (tests/unit/test_perfev.c, test_msr_tsc). */
	sc->open = true;
	{
		int r = perfev_enable_group(sc->fd[0]);

		if (r < 0) {
			coll_smt_close(c, cc);
			return r;
		}
	}
	sc->have = false;
	sc->prev_enabled = sc->prev_running = 0;
	memset(sc->prev, 0, sizeof(sc->prev));
	return 0;
}

void coll_smt_opened(struct collector *c, struct ccpu *cc, uint64_t now)
{
	struct smt_cpu *sc = c->scpu ? &c->scpu[cc - c->cpus] : NULL;
	const struct cpmu *pm = &c->pmus[cc->pmu];
	int k = cc->core_idx;

	if (!sc || sc->open || !pm->pp->smt || k < 0 || c->core_start[k + 1] - c->core_start[k] != 2 || cc->lay.n_events != pm->full.n_events ||
	    now < sc->retry_at_ns)
		return;
	if (open_smt(c, pm->pp, cc, sc) < 0)
		sc->open = false; /* tried again with the next collection, which says why */
}

/* Reads @sc's group: the interval's counts scaled to its enabled time.
 * False when the group must be given up (it did not run whole beside a
 * single level-1/2 group, or the read is not a group's). */
static inline __attribute__((always_inline)) bool read_smt(struct collector *c, const struct plan_pmu *pp, struct smt_cpu *sc)
{
	uint64_t *b = c->buf, enabled, running;
	ssize_t r = perfev_read(sc->fd[0], b, c->buf_words * sizeof(uint64_t));
	double scale;
	int64_t any = 0;

	sc->have = false;
	if (r != (ssize_t)((3 + SMT_NEV) * sizeof(uint64_t)) || b[0] != SMT_NEV)
		return false;
	enabled = b[1] - sc->prev_enabled;
	running = b[2] - sc->prev_running;
	sc->prev_enabled = b[1];
	sc->prev_running = b[2];
	/* Opened since the last collection: counts from then on (its
	 * seconds are its enabled time's). */
	if (enabled == 0)
		return true;
	if (running < enabled && !pp->smt_multiplex)
		return false;
	/* Whole, as beside a single level-1/2 group: nothing to scale. */
	sc->share = running == enabled ? 1 : (double)running / (double)enabled;
	scale = running == enabled ? 1 : running ? (double)enabled / (double)running : 0;
	/* A count gone back (the sign of the deltas' OR) is no interval's:
	 * the group is given up.  Its values follow each other in the read
	 * (PERF_FORMAT_GROUP without ids): two at a time in vectors,
	 * converted from their bits below DELTA_SMALL_NS of enabled time
	 * (as collector.c's group_deltas). */
	static_assert(SMT_NEV % 2 == 0, "the events go in pairs");
	if (enabled < DELTA_SMALL_NS) {
		vec_l2 anyv = { 0, 0 };
		vec_d2 k2 = { scale, scale };

		for (unsigned k = 0; k < SMT_NEV; k += 2) {
			vec_l2 x = vec_load_l2(b + 3 + k), d = x - vec_load_l2(sc->prev + k);

			vec_store_l2(sc->prev + k, x);
			anyv |= d;
			vec_store(sc->d + k, vec_small_to_d2(d) * k2);
		}
		any = anyv[0] | anyv[1];
	} else {
		for (unsigned k = 0; k < SMT_NEV; k++) {
			int64_t delta = (int64_t)(b[3 + k] - sc->prev[k]);

			any |= delta;
			sc->prev[k] = b[3 + k];
			sc->d[k] = (double)delta * scale;
		}
	}
	if (any < 0)
		return false;
	sc->enabled_ns = (double)enabled;
	sc->have = running > 0;
	return true;
}

/* Core @k's split of the interval from its threads' counts, in seconds;
 * false when it has none (a thread not counted, or a PMU that counts no
 * TSC). */
static bool split(enum ua_smt_any how, const struct smt_cpu *t0, const struct smt_cpu *t1, bool ran_slots,
		  double out[SMT_STATE_COUNT])
{
	double any = how == UA_SMT_DISTRIBUTED ? t0->d[EV_ANY] + t1->d[EV_ANY]
					       : (t0->d[EV_ANY] + t1->d[EV_ANY]) / 2;
	double one0 = t0->d[EV_ONE], one1 = t1->d[EV_ONE];
	double both = any > one0 + one1 ? any - one0 - one1 : 0;
	double ran = one0 + one1 + 2 * both, ref = t0->d[EV_REF_TSC] + t1->d[EV_REF_TSC];
	double tsc = t0->d[EV_TSC] + t1->d[EV_TSC], ns = t0->enabled_ns + t1->enabled_ns;
	double interval = ns / 2 / 1e9, to_s;

	if (!(tsc > 0) || !(ns > 0))
		return false;
	memset(out, 0, SMT_STATE_COUNT * sizeof(*out));
	if (ran > 0 && ref > 0) {
		/* crystal cycles -> TSC cycles -> seconds */
		to_s = ref / ran / (tsc / ns) / 1e9;
		out[SMT_FIRST_ONLY] = one0 * to_s;
		out[SMT_SECOND_ONLY] = one1 * to_s;
		out[SMT_BOTH] = both * to_s;
	} else if (ran > 0 || ref > 0 || ran_slots) {
		/* One clock counts and the other not, or none while the
		 * TopDown counters say a thread ran (a hypervisor filtering
		 * them): no split, rather than a core that never ran. */
		return false;
	}
	out[SMT_NEITHER] = interval - out[SMT_FIRST_ONLY] - out[SMT_SECOND_ONLY] - out[SMT_BOTH];
	if (out[SMT_NEITHER] < 0)
		out[SMT_NEITHER] = 0;
	return true;
}

/* @row carries on from @was (the previous snapshot's, NULL: from 0),
 * with @last (NULL: not split this interval) added. */
static void commit(struct snap_smt *row, const struct snap_smt *was, const double *last)
{
	static const struct snap_smt zero;

	*row = was ? *was : zero;
	row->valid = last != NULL;
	row->cores = last != NULL;
	if (!last) {
		memset(row->last, 0, sizeof(row->last));
		return;
	}
	row->ever = true;
	for (unsigned s = 0; s < SMT_STATE_COUNT; s++) {
		row->last[s] = last[s];
		row->total[s] += last[s];
	}
}

/* A core's split into its package's or the host's sums of the interval. */
static void add_last(double *sum, unsigned *cores, const double *last)
{
	for (unsigned s = 0; s < SMT_STATE_COUNT; s++)
		sum[s] += last[s];
	(*cores)++;
}

/* What an interval's split covered, and why a core was not split. */
struct tally {
	unsigned cores;    /* cores of two threads on a PMU with the split */
	unsigned split;    /* of them, split */
	unsigned held;     /* a thread counting fewer events: another user holds counters */
	unsigned given_up; /* a thread's group did not run whole, or could not be opened */
	unsigned lonely;   /* cores with one thread online (or selected) on such a PMU */
	unsigned silent;   /* counted, but the clocks count nothing while a thread ran */
	int err;           /* the last open's failure, -errno */
};

/* @text appended to @buf, after "; " when it holds anything. */
static void append(char *buf, size_t len, const char *text)
{
	size_t n = strlen(buf);

	if (n + 2 < len)
		str_printf(buf + n, len - n, "%s%s", n ? "; " : "", text);
}

/* What is counted, and what is missing, for the page, the API and
 * --probe. */
static void describe(const struct collector *c, struct snapshot *snap, const struct tally *t)
{
	const struct plan_pmu *pp = NULL;
	char line[SNAP_REASON];

	snap->smt_on = false;
	snap->smt_method[0] = '\0';
	snap->smt_reason[0] = '\0';
	for (unsigned p = 0; p < c->n_pmus; p++) {
		const struct plan_pmu *q = c->pmus[p].pp;

		if (q->smt && !pp) {
			pp = q;
		} else if (!q->smt && q->smt_note[0]) {
			str_printf(line, sizeof(line), "%s: %s", q->core->name, q->smt_note);
			append(snap->smt_reason, sizeof(snap->smt_reason), line);
		}
	}
	if (!pp)
		return;
	snap->smt_on = true;
	str_printf(snap->smt_method, sizeof(snap->smt_method), "%s, %s, %s",
		   pp->ua->smt->events[UA_SMT_REF_TSC].name, pp->ua->smt->events[UA_SMT_ONE_THREAD].name,
		   pp->ua->smt->events[UA_SMT_ANY].name);
	if (pp->smt_multiplex)
		append(snap->smt_reason, sizeof(snap->smt_reason), pp->smt_note);
	if (t->split < t->cores) {
		char held[96] = "", given[160] = "";

		if (t->held)
			str_printf(held, sizeof(held), "; %u with a thread whose counters another user holds", t->held);
		if (t->given_up)
			str_printf(given, sizeof(given), "; %u with a thread whose group %s (tried again every minute)",
				   t->given_up, t->err ? "could not be opened" : "did not run whole: another user holds counters");
		char silent[128] = "";

		if (t->silent)
			str_printf(silent, sizeof(silent), "; %u whose reference clocks count nothing while its "
				   "threads run (a hypervisor filtering them)", t->silent);
		str_printf(line, sizeof(line), "%u of %u cores with two threads split in the last interval%s%s%s",
			   t->split, t->cores, held, given, silent);
		append(snap->smt_reason, sizeof(snap->smt_reason), line);
	}
	if (t->lonely) {
		str_printf(line, sizeof(line), "%u %s one thread online or selected: nothing to split there", t->lonely,
			   t->lonely == 1 ? "core has" : "cores have");
		append(snap->smt_reason, sizeof(snap->smt_reason), line);
	}
}

/* Why a thread has no counts of this interval. */
enum why { HAVE, NONE, HELD, GIVEN_UP };

/* CPU @i's group, read (or opened, or given up). */
static inline __attribute__((always_inline)) enum why counts_of(struct collector *c, unsigned i, uint64_t now, int *err)
{
	struct ccpu *cc = &c->cpus[i];
	struct smt_cpu *sc = &c->scpu[i];
	const struct cpmu *pm = &c->pmus[cc->pmu];

	/* Counting with the plan's grouping (not given back to another
	 * user), or no split. */
	if (cc->state != CPU_STATE_MONITORED || !coll_group_open(cc) || cc->lay.n_events != pm->full.n_events) {
		coll_smt_close(c, cc);
		return cc->state == CPU_STATE_MONITORED || cc->state == CPU_STATE_HELD ||
		       cc->state == CPU_STATE_YIELDED ? HELD : NONE;
	}
	sc->have = false;
	if (sc->open && !read_smt(c, pm->pp, sc))
		give_up(c, cc, sc, now, 0);
	if (!sc->open && now >= sc->retry_at_ns) {
		int r = open_smt(c, pm->pp, cc, sc);

		if (r < 0)
			give_up(c, cc, sc, now, r);
		else
			sc->err = 0;
	}
	if (!sc->open) {
		if (sc->err)
			*err = sc->err;
		return GIVEN_UP;
	}
	return sc->have ? HAVE : NONE;
}

void coll_smt_collect(struct collector *c, struct snapshot *snap, uint64_t now)
{
	const struct snapshot *was = c->prev;
	struct tally t = { 0 };
	unsigned host_cores = 0;
	unsigned pkg_cores[snap->n_pkgs ? snap->n_pkgs : 1];
	double pkg_last[snap->n_pkgs ? snap->n_pkgs : 1][SMT_STATE_COUNT], host_last[SMT_STATE_COUNT] = { 0 };

	/* No PMU has ever counted it: its rows are the snapshots' zeros. */
	if (!c->scpu) {
		describe(c, snap, &t);
		return;
	}
	if (was && (was == snap || was->layout != snap->layout))
		was = NULL;
	memset(pkg_cores, 0, sizeof(pkg_cores));
	memset(pkg_last, 0, sizeof(pkg_last));
	for (unsigned k = 0; k < c->n_cores; k++) {
		struct snap_core *core = &snap->cores[k];
		unsigned lo = c->core_start[k], hi = c->core_start[k + 1];
		unsigned i0 = hi > lo ? c->order[lo] : 0, i1 = hi > lo + 1 ? c->order[lo + 1] : 0;
		struct ccpu *t0 = hi > lo ? &c->cpus[i0] : NULL;
		struct ccpu *t1 = hi > lo + 1 ? &c->cpus[i1] : NULL;
		double last[SMT_STATE_COUNT];
		bool ok = false;

		core->first_cpu = t0 ? t0->cpu : -1;
		core->second_cpu = t1 ? t1->cpu : -1;
		if (c->scpu && t0 && t0->pmu >= 0 && c->pmus[t0->pmu].pp->smt && hi - lo == 1 && t0->to_measure) {
			t.lonely++;
		} else if (c->scpu && hi - lo == 2 && t0->pmu >= 0 && t0->pmu == t1->pmu && c->pmus[t0->pmu].pp->smt) {
			/* Both threads read, whatever the first gives. */
			enum why w0 = counts_of(c, i0, now, &t.err), w1 = counts_of(c, i1, now, &t.err);

			t.cores++;
			bool ran = snap->cpus[i0].c.last[TD_C_SLOTS] > 0 || snap->cpus[i1].c.last[TD_C_SLOTS] > 0;

			ok = w0 == HAVE && w1 == HAVE &&
			     split(c->pmus[t0->pmu].pp->ua->smt->any, &c->scpu[i0], &c->scpu[i1], ran, last);
			t.silent += w0 == HAVE && w1 == HAVE && !ok;
			t.held += w0 == HELD || w1 == HELD;
			t.given_up += (w0 == GIVEN_UP || w1 == GIVEN_UP) && w0 != HELD && w1 != HELD;
		}
		commit(&core->smt, was ? &was->cores[k].smt : NULL, ok ? last : NULL);
		if (!ok)
			continue;
		t.split++;
		if (c->cores[k].pkg_idx >= 0)
			add_last(pkg_last[c->cores[k].pkg_idx], &pkg_cores[c->cores[k].pkg_idx], last);
		add_last(host_last, &host_cores, last);
	}
	for (unsigned p = 0; p < snap->n_pkgs; p++) {
		commit(&snap->pkgs[p].smt, was ? &was->pkgs[p].smt : NULL, pkg_cores[p] ? pkg_last[p] : NULL);
		snap->pkgs[p].smt.cores = pkg_cores[p];
	}
	commit(&snap->smt_host, was ? &was->smt_host : NULL, host_cores ? host_last : NULL);
	snap->smt_host.cores = host_cores;
	describe(c, snap, &t);
}

void coll_smt_fill(const struct collector *c, struct snapshot *snap)
{
	const struct snapshot *was = c->prev;

	if (!was || was == snap)
		return;
	if (was->layout != snap->layout) {
		for (unsigned k = 0; k < snap->n_cores; k++)
			memset(&snap->cores[k].smt, 0, sizeof(snap->cores[k].smt));
		for (unsigned p = 0; p < snap->n_pkgs; p++)
			memset(&snap->pkgs[p].smt, 0, sizeof(snap->pkgs[p].smt));
		memset(&snap->smt_host, 0, sizeof(snap->smt_host));
		return;
	}
	for (unsigned k = 0; k < snap->n_cores; k++) {
		snap->cores[k].smt = was->cores[k].smt;
		snap->cores[k].first_cpu = was->cores[k].first_cpu;
		snap->cores[k].second_cpu = was->cores[k].second_cpu;
	}
	for (unsigned p = 0; p < snap->n_pkgs; p++)
		snap->pkgs[p].smt = was->pkgs[p].smt;
	snap->smt_host = was->smt_host;
	snap->smt_on = was->smt_on;
	memcpy(snap->smt_method, was->smt_method, sizeof(snap->smt_method));
	memcpy(snap->smt_reason, was->smt_reason, sizeof(snap->smt_reason));
}
