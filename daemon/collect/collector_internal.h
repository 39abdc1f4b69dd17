/* SPDX-License-Identifier: MIT */
/* collector_internal: the collector's state, shared by its files (private
 * to collect/): collector.c (groups, plans, reads, the snapshot) and
 * aggregate.c (cores, packages and the host from the CPUs' counts). */
#ifndef TOPDOWND_COLLECTOR_INTERNAL_H
#define TOPDOWND_COLLECTOR_INTERNAL_H

#include <string.h>

#include "collector.h"
#include "tma.h"
#include "vec.h"

#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID | \
		     PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
/* A failed CPU (permission, fd limit...) is tried again this often. */
#define RETRY_NS (30 * UINT64_C(1000000000))
/* No core event counts more than this many a nanosecond (the slots, the
 * fastest, count a few a cycle at a few GHz: tens a nanosecond): over
 * less enabled time than DELTA_SMALL_NS none of a group's deltas reaches
 * 2^52, where vec_small_to_d2() converts them exactly (75 minutes). */
#define COUNTS_PER_NS_MAX 1000
#define DELTA_SMALL_NS ((UINT64_C(1) << 52) / COUNTS_PER_NS_MAX)
/* Reads failing this many intervals in a row make a CPU failed (its group
 * stays open and is read every interval; the first good read brings it
 * back, its delta covering the whole gap). */
#define PATH_MAX_LEN 256
#define READ_FAILURES_FAILED 3
#define EINTR_RETRIES 3
/* Transient refusals (EBUSY, EOPNOTSUPP) back off up to this. */
#define RETRY_MAX_NS (600 * UINT64_C(1000000000))
/* A PMU's events that count nothing while cycles count: after this long
 * and this many reads in a row, its figures are not served (silent). */
#define NORUN_NS (1000 * UINT64_C(1000000))
#define NORUN_READS 3

/* One grouping of a PMU's events on one CPU (plan_layout): the plan's,
 * a smaller one for the counters another user leaves this CPU, or the
 * fixed counters' alone (the CPU gave its general-purpose counters back).
 * Every grouping holds the same variables as the plan's (canonical) one,
 * or fewer: canon[] maps each position to the canonical one. */
struct clayout {
	unsigned n_events;
	uint8_t events[UA_EVENTS_MAX];    /* indexes into ua->events */
	enum td_event var[UA_EVENTS_MAX]; /* the variable of each position */
	uint8_t canon[UA_EVENTS_MAX];     /* its position in the canonical grouping */
	unsigned n_groups;
	uint8_t group_start[PLAN_GROUPS_MAX + 1];
	uint8_t group_of[UA_EVENTS_MAX]; /* the group of each position */
	int cycles_pos;                   /* the cycles, -1 when none */
	/* What it was packed for. */
	unsigned gp;
	bool fixed1_busy, fixed_only, refine;
	uint32_t work; /* positions of events that count work (check_work) */
};

struct ccpu {
	int cpu;
	enum cpu_state state;
	bool selected; /* in [collect] cpus; others keep their totals only */
	bool known;
	int core_idx, pkg_idx;
	int pmu;       /* into collector.pmus, -1 when no monitored PMU covers it */
	struct clayout lay;    /* its grouping, when pmu >= 0 */
	int fd[UA_EVENTS_MAX]; /* in group order, -1 when closed */
	int cfd[UA_EVENTS_MAX]; /* the same in the canonical order, -1 for none */
	uint64_t id[UA_EVENTS_MAX];
	uint64_t prev[UA_EVENTS_MAX];
	uint64_t prev_enabled[PLAN_GROUPS_MAX], prev_running[PLAN_GROUPS_MAX];
	/* The start of the collection that last read each group (read_group). */
	uint64_t read_at[PLAN_GROUPS_MAX];
	uint64_t retry_at_ns;
	uint64_t backoff_ns;    /* the next retry's wait after a transient error */
	unsigned read_failures; /* in a row */
	uint64_t opened; /* successful opens of its groups */
	/* Per group: enabled time and reads in a row in which it did not run
	 * (another user holds what it needs: share.c learns what). */
	uint64_t norun_ns[PLAN_GROUPS_MAX];
	unsigned norun_reads[PLAN_GROUPS_MAX];
	/* The counters this CPU leaves topdownd, as last learned (share.c):
	 * general-purpose ones, whether fixed counter 1 (arm64: the cycle
	 * counter) and fixed counter 3 (SLOTS) are another user's. */
	unsigned gp_free;
	bool fixed1_held, slots_held;
	/* [collect] pmu_sharing = yield: this CPU gave its general-purpose
	 * counters back to another user (its groups ran less than their
	 * share), until reclaim_at_ns; its running share so far. */
	bool yielded;
	uint64_t reclaim_at_ns, reclaim_wait_ns;
	uint64_t contended_ns;
	unsigned contended_reads;
	double contended_share; /* the sum of its groups' shares, last time */
	bool yield_due;
	/* Its counters were probed since it took its grouping; when they are
	 * probed next (UINT64_MAX: only when a group stops running). */
	bool probed;
	uint64_t probe_at_ns;
	bool measured;          /* it has figures this interval */
	/* Whether it is one to measure (coll_to_measure) and counts for its
	 * domains' coverage (not unsupported): kept by coll_refresh whenever
	 * its state, selection or PMU changes, read every interval. */
	bool to_measure, covers;
	/* Closed to be opened again with another grouping (share.c), not
	 * after a failure: its reopening is not news. */
	bool regrouped;
	/* Enabled time and intervals in a row in which its PMU's work event
	 * counted nothing while its cycles counted (silent_work). */
	uint64_t silent_ns;
	unsigned silent_reads;
};

/* The groups opened on the CPUs of one core PMU, after any fallback to
 * model hardware. */
struct cpmu {
	const struct plan_pmu *pp;
	/* Another group of ours takes turns with the level-1/2 ones (the
	 * nodes below level 2, the SMT split): its running share counts
	 * with theirs (coll_share). */
	bool extra_share;
	/* Its CPUs give perf's SMT mode metrics (smtmode.c). */
	bool smt_mode;
	/* The plan's grouping (the canonical order: per-cgroup attribution
	 * and the aggregates count by it), after any fallback to model
	 * hardware. */
	struct clayout full;
	/* The variables it reads, each once; the runs of variables the
	 * domains' sums add, [run_lo, run_hi), covering them (and a few
	 * variables between them, which are 0). */
	unsigned n_vars;
	enum td_event vars[UA_EVENTS_MAX];
	unsigned n_runs;
	uint8_t run_lo[UA_EVENTS_MAX], run_hi[UA_EVENTS_MAX];
	/* Or the first of at most COLL_WINDOW variables that hold them all
	 * (-1 when none does) and their number's pairs (coll_runs_add). */
	int window;
	unsigned window_pairs;
	struct tma_model model;
	/* The model of a CPU counting on the fixed counters alone. */
	struct tma_model model_fixed;
	/* The counter columns of its categories (snapshot.h), the slots and
	 * times aside: a commit writes those itself. */
	struct snap_cols cols;
	/* The formula variables of one CPU's read: only this PMU's are ever
	 * written (each read overwrites all of them), the others stay 0. */
	struct tma_input input;
	/* The sums of the core being read, by kind (AGG_KINDS), as perf's
	 * variables: 0 but for the runs (coll_agg_add). */
	struct tma_input core_in[2];
	char reason[SNAP_REASON];
	unsigned core_idx;    /* into pmu_info.core[] */
	struct cpuset covered; /* CPUs its sysfs cpus lists now (hybrid) */
	/* Evidence against the plan, for the budget (collector_take_evidence);
	 * while one is pending the PMU's CPUs wait for the new plan. */
	bool evidence_pending, evidence_taken;
	bool fresh;           /* groups of a new plan, not yet seen to run */
	/* Once an event that counts work (counts_work) is found counting
	 * nothing while cycles count, the PMU's figures are not served. */
	bool silent;
	/* CPU intervals whose figures departed from perf's (tma.h). */
	uint64_t departures[TMA_DEP_COUNT];
	/* The tree below level 2 on its CPUs, or NULL (deep.c). */
	struct cdeep *deep;
	/* The kernel's multiplexing period of its PMU (share.c). */
	uint64_t mux_ns;
	/* What share.c learned of several CPUs alike, one line for them all
	 * (coll_learned_flush). */
	char learned[SNAP_REASON];
	struct cpuset learned_cpus;
	/* Said once: its groups' rotation is longer than the interval. */
	bool rotation_warned;
	/* No smaller plan runs (collector_give_up): the reason says so until
	 * a CPU's groups all run again. */
	bool gave_up;
	struct budget_evidence evidence;
	/* What the plan asked for: a reload only reopens groups if it changes. */
	unsigned planned_n_events;
	uint8_t planned_events[UA_EVENTS_MAX];
	uint8_t planned_group_start[PLAN_GROUPS_MAX + 1];
	unsigned planned_n_groups;
};

struct layout_core {
	int package, die, core_id;
	int pkg_idx; /* its package's index in pkgs[] */
	/* What its CPUs' descriptions make of it, as of generation
	 * desc_gen (coll_core_done): its CPUs to measure and whether one
	 * counts for its coverage; their PMUs (bit by index) and the PMU
	 * (-1 for none, -2 for several), the categories of these PMUs. */
	uint64_t desc_gen;
	unsigned cpus;
	bool covered;
	uint32_t pmus;
	int pmu;
	td_catset cats;
};

/* Rows by PMU and model: a CPU counting on the fixed counters alone
 * (share.c: it gave its general-purpose counters back) has the model
 * without refinement, and its counts are summed apart, as another core
 * type's are. */
#define AGG_KINDS 2

/* What a core's CPUs give it while they are read, before its figures are
 * computed (coll_core_done). */
struct coll_core_acc {
	double enabled, running;
	unsigned measured;
	uint32_t keys; /* the core_in[] with sums, bit pmu * AGG_KINDS + kind */
	unsigned added;            /* CPUs whose counts it sums */
	/* A core of one CPU: its counts go straight to the package's row,
	 * without sums of its own. */
	bool single;
	const double *added_last;  /* the last one's figures (snap_counts.last) */
};

struct collector {
	const struct sysfs *sysfs;
	struct topo *topo;
	const struct pmu_info *pmu;
	const struct plan *plan;
	bool count_kernel;
	bool count_guest;
	enum config_sharing sharing;
	uint64_t mux_at_ns; /* when the PMUs' multiplexing periods are read again */
	uint64_t learn_at_ns; /* when coll_learn has a CPU to look at, at the earliest */
	bool oneshot;
	/* Debug logging is on this interval (read once per interval: each
	 * CPU's read asks). */
	bool debug;
	uint64_t interval_ns;
	unsigned fd_others_want, fd_others_min;
	unsigned fd_budget; /* descriptors the groups may hold */
	unsigned fds_open;

	unsigned n_pmus;
	struct cpmu pmus[PMU_CORE_MAX];

	unsigned n_cpus;
	struct ccpu *cpus;
	unsigned n_cores, n_pkgs;
	struct layout_core *cores;
	int *pkgs; /* package ids */
	/* The CPUs core by core (core k's from core_start[k]), then those of
	 * no known core (from core_start[n_cores] to core_start[n_cores + 1]):
	 * each core's figures are computed as soon as its CPUs are read. */
	unsigned *order, *core_start;
	uint64_t layout;
	/* A CPU's topology became known: the layout is made again before the
	 * next interval's reads (never between an interval's reads and its
	 * aggregates). */
	bool relayout_due;
	struct coll_core_acc acc; /* the core being read */
	/* This interval's scaled counts summed over each package's and the
	 * host's CPUs, by PMU, model and domain (aggregate.c agg_key), as
	 * perf's variables, and which rows hold any: their figures are perf's
	 * expressions on them. */
	struct tma_input *agg;
	bool *agg_used;
	unsigned agg_doms;
	struct snap_cols dom_cols; /* the columns any PMU's categories write */

	uint64_t errors[COLL_ERR_COUNT];
	/* The snapshot written last, whose totals the next one continues, and
	 * the generation of the CPU descriptions a snapshot must hold (bumped
	 * by any change of topology, state, selection or categories). */
	const struct snapshot *prev;
	uint64_t gen;
	struct snap_cols base_cols; /* a CPU without a PMU: no category columns */
	unsigned n_waiting; /* CPUs offline or failed, worth retrying */
	bool warned_permission, warned_fds;
	double duration_s;
	double timestamp;
	uint64_t collected_ns; /* monotonic, at the end of the last collection */
	uint64_t started_ns;   /* monotonic, at the start of the last collection */
	double last_interval_s;
	uint64_t seq;
	unsigned measured_last; /* CPUs with figures in the last interval */

	uint64_t *buf;
	size_t buf_words;

	/* The tree below level 2 (deep.c): each CPU's groups and rates, the
	 * domains' summed counts (DEEP_ROWS rows of DEEP_ROW_LEN), and which
	 * domains have any this interval; the generation of its plan. */
	struct deep_cpu *dcpu;
	double *deep_rows;
	bool *deep_used;
	int *deep_rot;        /* a domain's CPUs' rotation, -1 when they differ */
	unsigned *deep_cur;   /* and the group it read */
	uint64_t deep_gen;
	/* RLIMIT_NOFILE leaves no room for the depth groups (groups.c). */
	bool deep_fds_short;
	/* Each CPU's SMT activity group (smt.c), NULL when no PMU has one. */
	struct smt_cpu *scpu;
	/* perf's SMT mode metrics (smtmode.c): each PMU's, compiled, NULL
	 * where its plan has none; each CPU's counts of the interval, NULL
	 * when no plan ever had them. */
	struct smtmode *mode[PMU_CORE_MAX];
	struct mode_in *mode_in;
};

/* ... and, last, the sum of its CPUs' depth-group running shares and
 * their number (DEEP_SHARE, DEEP_NCPU). */
#define DEEP_ROW_LEN (TD_EV_COUNT + DEPTH_EVENTS_MAX + 2)
#define DEEP_SHARE (DEEP_ROW_LEN - 2)
#define DEEP_NCPU (DEEP_ROW_LEN - 1)
#define DEEP_ROWS(c) (2 * (size_t)(c)->n_cpus + 2)

enum agg_mode {
	AGG_INTERVAL,  /* a collection: perf's figures on this interval's sums */
	AGG_REPUBLISH, /* no reads: the last interval's figures stay */
	AGG_CATCH_UP,  /* no reads, new CPU descriptions: no last interval */
};

/* ---- groups.c: opening the groups, and what their failures mean ---- */

/* Closes every group of @cc. */
void coll_close_group(struct collector *c, struct ccpu *cc);

/* The name of the event at position @pos of @lay (a grouping of @pm's). */
const char *coll_event_name(const struct cpmu *pm, const struct clayout *lay, unsigned pos);

/* General-purpose counters group @g of @lay takes for its events before
 * @upto; *@on_fixed1 whether its cycles may take fixed counter 1. */
unsigned coll_group_gp(const struct cpmu *pm, const struct clayout *lay, unsigned g, unsigned upto,
		       bool *on_fixed1);

/* The group of the event at position @pos (every interval: inline, kept
 * by lay_vars). */
static inline unsigned coll_group_of(const struct clayout *lay, unsigned pos)
{
	return lay->group_of[pos];
}

/* @pm's events grouped for @gp general-purpose counters (fixed counter
 * 1 another user's: @fixed1_busy), or on the fixed counters alone: 0, or
 * -ENOSPC (collector.c). */
int coll_layout(const struct cpmu *pm, unsigned gp, bool fixed1_busy, bool fixed_only,
		struct clayout *lay);
/* Zeroes the variables of @pm a CPU on @lay does not read. */
void coll_lay_clear(const struct cpmu *pm, const struct clayout *lay, struct tma_input *in);

/* Which other processes hold perf events (for a reason), or "". */
void coll_perf_holders(char *buf, size_t len);

/* Whether @cc's groups are open.  A group that is open is read every
 * interval: the CPU is monitored, or failed because its reads fail. */
static inline bool coll_group_open(const struct ccpu *cc)
{
	return cc->fd[0] >= 0 && (cc->state == CPU_STATE_MONITORED || cc->state == CPU_STATE_FAILED);
}

/* @cc's state, counted in c->n_waiting and the generation. */
void coll_set_state(struct collector *c, struct ccpu *cc, enum cpu_state state);

/* Each PMU's CPUs as its sysfs cpus lists them now (hybrid). */
void coll_refresh_covered(struct collector *c);

/* Opens @cc's groups if it is due; whether they are open. */
bool coll_try_open(struct collector *c, struct ccpu *cc, uint64_t now);

/* Raises RLIMIT_NOFILE towards what the groups need. */
void coll_raise_fd_limit(struct collector *c);

/* Opens the groups of every CPU waiting for them. */
void coll_open_pending(struct collector *c, uint64_t now);


/* Whether @cc is one topdownd is to measure: selected, on a PMU with
 * TopDown, not isolated (collector.c). */
unsigned coll_to_measure(const struct ccpu *cc);

/* @cc's cached to_measure and covers, after a change of its state,
 * selection or PMU. */
static inline void coll_refresh(struct ccpu *cc)
{
	cc->to_measure = coll_to_measure(cc);
	cc->covers = cc->selected && cc->state != CPU_STATE_UNSUPPORTED;
}

/* ---- share.c: the counters other users leave each CPU ---- */

/* @cc starts afresh on PMU @pmu: the plan's grouping, the plan's
 * counters, nothing yielded. */
void coll_reset_budget(struct collector *c, struct ccpu *cc, int pmu);
/* Group @g of @cc did not run over @enabled_ns of this interval. */
void coll_norun(struct collector *c, struct ccpu *cc, unsigned g, uint64_t enabled_ns, uint64_t now);
/* A CPU whose groups, summed, run less than this share of their enabled
 * time shares its counters with another user's flexible events. */
#define COLL_SHARE_MIN 0.9
/* coll_share() when the CPU's share may change what is known: below
 * COLL_SHARE_MIN, or back above it. */
void coll_share_changed(struct collector *c, struct ccpu *cc, double share, uint64_t enabled_ns, uint64_t now);
/* @cc's groups ran @share (the sum of each group's running over enabled
 * time; -1 when a group could not be read) of @enabled_ns.  Inline: every
 * CPU every interval, nothing to do in the common case (no other user). */
static inline void coll_share(struct collector *c, struct ccpu *cc, double share, uint64_t enabled_ns,
			      uint64_t now)
{
	if (c->sharing != SHARING_YIELD || share < 0 || cc->yielded || cc->lay.fixed_only)
		return;
	/* Contended reads are counted in a row: none so far, none now. */
	if (share >= COLL_SHARE_MIN && !cc->contended_reads)
		return;
	coll_share_changed(c, cc, share, enabled_ns, now);
}
/* After an interval's reads: probes and regroups the CPUs whose
 * counters changed, yields and reclaims (share.c). */
void coll_learn(struct collector *c, uint64_t now);
/* Probes @cc's counters with pinned groups (what other users' pinned
 * events leave: the kernel schedules pinned groups before any flexible
 * one, and one that does not fit is in error at once) and sets its
 * budget; true when it changed. */
bool coll_probe_cpu(struct collector *c, struct ccpu *cc, uint64_t now);
/* Logs what was learned since the last call, one line per PMU and
 * finding with the CPUs it concerns, and makes it the PMU's reason. */
void coll_learned_flush(struct collector *c);
/* What other users leave the probed CPUs of PMU @p, CPUs alike together
 * ("8 of 8 general-purpose on CPUs 0-3; 5 of 8 general-purpose, fixed
 * counter 1 held on CPU 4"). */
void coll_describe_free(const struct collector *c, unsigned p, char *buf, size_t len);

/* ---- deep.c: the tree below level 2 ---- */

/* Before a plan is applied: every CPU's depth groups closed, every PMU's
 * depth dropped; after: the depth of each PMU for the plan in force, its
 * nodes compiled and grouped (the groups open at the next collection).
 * 0 or -ENOMEM. */
void coll_deep_drop(struct collector *c);
int coll_deep_plan(struct collector *c);
void coll_deep_free(struct collector *c);
/* The descriptors a CPU of @pm's depth groups take. */
unsigned coll_deep_events(const struct cpmu *pm);
/* The running share of @cc's depth group in the level-1/2 rotation
 * ([collect] depth_multiplex) in the last interval; 0 otherwise. */
double coll_deep_share(const struct collector *c, const struct ccpu *cc);
/* @cc's level-1/2 counts of this interval (@in), scaled to @span_ns (the
 * span read_group scales them to), for its nodes (read_cpu, when its PMU
 * has depth): the depth events' rates are scaled to the same span. */
void coll_deep_keep(struct collector *c, const struct ccpu *cc, const struct tma_input *in, double span_ns);
/* Closes @cc's depth groups (with its level-1/2 groups). */
void coll_deep_close(struct collector *c, struct ccpu *cc);
/* After an interval's reads: each CPU's depth group read and the next
 * one enabled, and every CPU's, core's, package's and the host's nodes
 * into @snap. */
void coll_deep_collect(struct collector *c, struct snapshot *snap, uint64_t now);
/* A publication without reads: the previous snapshot's nodes. */
void coll_deep_fill(struct collector *c, struct snapshot *snap);

/* ---- smt.c: which threads of each core ran when ---- */

/* Before a plan is applied: every CPU's group closed; after: room for
 * them where a PMU's plan has the split (they open at the next
 * collection).  0 or -ENOMEM. */
void coll_smt_drop(struct collector *c);
int coll_smt_plan(struct collector *c);
/* A new layout (build_layout) closes every group too: their cores may
 * have changed; they open again with the next collection. */
void coll_smt_free(struct collector *c);
/* The descriptors a CPU of @pm takes for it. */
unsigned coll_smt_events(const struct cpmu *pm);
/* Its group's running share in the level-1/2 rotation ([collect] smt =
 * on) in the last interval; 0 otherwise. */
double coll_smt_share(const struct collector *c, const struct ccpu *cc);
/* Closes @cc's group (with its level-1/2 groups). */
void coll_smt_close(struct collector *c, struct ccpu *cc);
/* @cc's level-1/2 groups are open: its group too, where it counts the
 * split, so that the first interval has it. */
void coll_smt_opened(struct collector *c, struct ccpu *cc, uint64_t now);
/* After an interval's reads: each CPU's group read (opened, given up),
 * every core's split, summed per package and for the host, into @snap. */
void coll_smt_collect(struct collector *c, struct snapshot *snap, uint64_t now);
/* A publication without reads: the previous snapshot's. */
void coll_smt_fill(const struct collector *c, struct snapshot *snap);

/* ---- smtmode.c: perf's SMT mode metrics (NVIDIA Olympus) ---- */

struct mode_in {
	double slots, cycles;
	bool have;
};

/* After a plan is applied: each PMU's metrics compiled where its plan
 * has them.  0 or -ENOMEM (none counted then). */
int coll_mode_plan(struct collector *c);
void coll_mode_free(struct collector *c);
/* @cc's reads of the interval, from its PMU's input: a CPU with figures
 * (its CPU_SLOT counted something), whose row coll_mode_collect makes. */
static inline void coll_mode_keep(struct collector *c, const struct ccpu *cc, const struct tma_input *in)
{
	struct mode_in *m = &c->mode_in[cc - c->cpus];

	/* A smaller grouping (counters given back) counts no CPU_SLOT. */
	m->have = cc->lay.n_events == c->pmus[cc->pmu].full.n_events;
	m->slots = in->v[TD_EV_ARM_CPU_SLOT];
	m->cycles = in->v[TD_EV_CYCLES];
}
/* After an interval's reads: every CPU's, core's, package's and the
 * host's row into @snap. */
void coll_mode_collect(struct collector *c, struct snapshot *snap);
/* A publication without reads: the previous snapshot's. */
void coll_mode_fill(const struct collector *c, struct snapshot *snap);

/* ---- aggregate.c ---- */

/* dst (+)= src over @pm's variables (@first: =).  Every other variable
 * is 0 in both.  Inline: a CPU's counts go into its core's sums and a
 * core's into its package's every interval.  Where a PMU's variables lie
 * within COLL_WINDOW of each other (Intel's level 1-2 events and AMD's
 * do), their window is added whole, by pairs without a loop, its 0s with
 * the rest: a loop over runs costs as much as the additions (80
 * instructions for a dozen, 25 this way; Skylake's 15 lie within 24). */
#define COLL_WINDOW (2 * VEC_PAIRS_MAX)
static_assert(COLL_WINDOW <= TD_EV_COUNT, "a window fits the variables");
static inline __attribute__((always_inline)) void coll_runs_add(const struct cpmu *pm, double *restrict dst,
								 const double *restrict src, bool first)
{
	if (pm->window >= 0) {
		if (first)
			vec_copy_pairs(dst + pm->window, src + pm->window, pm->window_pairs);
		else
			vec_add_pairs(dst + pm->window, src + pm->window, pm->window_pairs);
		return;
	}
	for (unsigned r = 0; r < pm->n_runs; r++) {
		unsigned lo = pm->run_lo[r], n = pm->run_hi[r] - lo;

		if (first)
			vec_copy(dst + lo, src + lo, n);
		else
			vec_add(dst + lo, src + lo, n);
	}
}

/* The rows a CPU's counts go to: by its model (AGG_KINDS). */
static inline unsigned coll_agg_kind(const struct cpmu *pm, const struct ccpu *cc)
{
	return !cc->lay.refine && pm->model.refine;
}

/* A CPU of no known core, or a core's only one: its counts into the
 * host's or its package's row (aggregate.c). */
void coll_agg_add_odd(struct collector *c, const struct ccpu *cc);

/* Adds @cc's scaled counts of this interval to its core's sums (or, of
 * no known core, the host's row; a core of one CPU: its package's). */
static inline __attribute__((always_inline)) void coll_agg_add(struct collector *c, const struct ccpu *cc)
{
	struct cpmu *pm = &c->pmus[cc->pmu];
	unsigned kind = coll_agg_kind(pm, cc), bit = 1u << ((unsigned)cc->pmu * AGG_KINDS + kind);

	if (cc->core_idx < 0 || c->acc.single) {
		coll_agg_add_odd(c, cc);
		return;
	}
	coll_runs_add(pm, pm->core_in[kind].v, pm->input.v, !(c->acc.keys & bit));
	c->acc.keys |= bit;
}

/* Core @k's figures of the interval into @snap from its CPUs' sums
 * (c->acc), its totals continuing @base; its sums into its package's row. */
void coll_core_done(struct collector *c, unsigned k, struct snapshot *snap, const double *base);

/* A CPU's or a core's figures of this interval into @out, whose totals
 * continue @was: only the columns of @cols (the others never change while
 * the CPU descriptions stay the same: their generation); each category's
 * slots are cat[category] times @weight (a share times the slots, or
 * slots already: 1), none when @cat is NULL.  Inline: every CPU and core
 * every interval, where a call's arguments cost a fifth of its work. */
static inline __attribute__((always_inline)) void coll_commit(struct snap_counts *restrict out, const double *restrict was,
			       const struct snap_cols *restrict cols, double enabled, double running,
			       double slots, const double *restrict cat, double weight)
{
	double *restrict last = out->last, *restrict total = out->total;

	last[TD_C_SLOTS] = slots;
	last[TD_C_ENABLED] = enabled;
	last[TD_C_RUNNING] = running;
	total[TD_C_SLOTS] = was[TD_C_SLOTS] + slots;
	total[TD_C_ENABLED] = was[TD_C_ENABLED] + enabled;
	total[TD_C_RUNNING] = was[TD_C_RUNNING] + running;
	/* Slots weigh each fraction: the categories then partition the
	 * slots counter exactly and aggregate by plain addition.  One run of
	 * columns (every core PMU's but Gracemont's and AMD's) without the
	 * loop. */
	if (cols->n == 1 && cat) {
		unsigned k = cols->lo[0];

		vec_commit(last + k, total + k, was + k, cat + (k - TD_C_CAT), weight, cols->hi[0] - k);
		return;
	}
	for (unsigned r = 0; r < cols->n; r++) {
		unsigned k = cols->lo[r], n = cols->hi[r] - k;

		if (cat) {
			vec_commit(last + k, total + k, was + k, cat + (k - TD_C_CAT), weight, n);
		} else {
			memset(last + k, 0, n * sizeof(*last));
			memcpy(total + k, was + k, n * sizeof(*total));
		}
	}
}

/* Before an interval's reads: the packages and the host emptied for
 * them, and after a change of layout (not @same) every domain's totals
 * the sums of its CPUs' (aggregate.c). */
void coll_agg_begin(struct collector *c, struct snapshot *snap, bool same);

/* The packages' and the host's counts and figures of @snap, and in modes
 * other than AGG_INTERVAL the cores' (aggregate.c). */
void coll_aggregate(struct collector *c, struct snapshot *snap, enum agg_mode mode);

/* The CPUs' descriptions and the PMUs' rows of @snap, for generation
 * c->gen (fill.c). */
void coll_describe(const struct collector *c, struct snapshot *snap);

/* The collection's stamp on @snap: its time, sequence, counts by state
 * (fill.c). */
void coll_stamp(struct collector *c, struct snapshot *snap);

#endif
