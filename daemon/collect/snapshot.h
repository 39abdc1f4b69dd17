/* SPDX-License-Identifier: MIT */
/* snapshot: one interval's complete, consistent view of every CPU, core,
 * package and the host, and the ring that hands it from the collector to
 * readers (the HTTP threads, --once) without either waiting for the other.
 *
 * The collector writes each CPU's figures into a free buffer of the ring,
 * then publishes it; readers acquire the latest published buffer, use it,
 * release it.  The collector never waits: if readers hold every shared
 * buffer, it writes into one of its own and that interval is not
 * published (the next one is, with totals that include it).  The
 * collector writes cores, packages and the host too: perf's expressions on
 * their CPUs' summed counts (collector.c, aggregate). */
#ifndef TOPDOWND_SNAPSHOT_H
#define TOPDOWND_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "depth.h"
#include "tma.h"
#include "topdown.h"

/* Layout of a counter vector: slots, the enabled/running nanoseconds,
 * and the slots of each category (enum td_cat).  Cumulative vectors only
 * grow. */
enum {
	TD_C_SLOTS = 0,
	TD_C_ENABLED,
	TD_C_RUNNING,
	TD_C_CAT,
	TD_C_COUNT = TD_C_CAT + TD_CAT_COUNT,
};

enum cpu_state {
	CPU_STATE_MONITORED,
	CPU_STATE_FAILED,
	CPU_STATE_OFFLINE,
	CPU_STATE_UNSUPPORTED,
	/* Another user holds every counter a group of one would need. */
	CPU_STATE_HELD,
	/* Its counters given back to another user that wanted them
	 * ([collect] pmu_sharing = yield), no grouping on the fixed
	 * counters alone left to count with, until it takes them again. */
	CPU_STATE_YIELDED,
	/* Its PMU's events count nothing while cycles count (a hypervisor's
	 * filter, an event the CPU does not implement): no figures.  As
	 * published: the collector keeps such a CPU's groups open (it would
	 * see the events count again) and calls it monitored. */
	CPU_STATE_SILENCED,
	/* isolcpus or nohz_full, and [collect] cpus does not list it: not
	 * read, so that its latency-critical tenant pays for no IPI. */
	CPU_STATE_ISOLATED,
	CPU_STATE_COUNT,
};

enum coll_error {
	COLL_ERR_PERMISSION,  /* EACCES/EPERM at open */
	COLL_ERR_UNSUPPORTED, /* ENOENT/EINVAL/EOPNOTSUPP at open */
	COLL_ERR_OFFLINE,     /* ENODEV at open, or the CPU went offline */
	COLL_ERR_FD_LIMIT,    /* EMFILE/ENFILE */
	COLL_ERR_OPEN,        /* any other open failure */
	COLL_ERR_READ,        /* read() failed (after EINTR retries) */
	COLL_ERR_SHORT_READ,  /* read() returned a partial or malformed record */
	COLL_ERR_COUNT,
};

/* CPU_STATE_COUNT and COLL_ERR_COUNT long (no size here: the
 * definitions' initialisers give it, which TABLE_COVERS checks). */
extern const char *const cpu_state_name[];
extern const char *const coll_error_name[];

struct snap_counts {
	double total[TD_C_COUNT]; /* since start */
	double last[TD_C_COUNT];  /* the last interval */
	/* The categories its CPUs' microarchitectures yield (on a hybrid
	 * part a P-core and an E-core differ); 0: the snapshot's. */
	td_catset cats;
	/* Its CPUs topdownd is to measure (selected, on a PMU with TopDown,
	 * not isolated), and those with figures in the last interval: a
	 * domain's figures are over the latter (a CPU another user holds,
	 * or that yielded its counters, has none). */
	unsigned cpus, measured;
};

/* perf's SMT mode metrics (issue 44, collect/smtmode.c: NVIDIA
 * Olympus): a row's cycles in ST mode (its thread alone on the core) and
 * in SMT mode, perf's cpu_cycles_in_st_mode and cpu_cycles_in_smt_mode,
 * each interval's on that interval's CPU_SLOT and CPU_CYCLES (a core's,
 * package's, host's: its CPUs' counts summed, as perf sums them). */
enum smt_mode_kind {
	SMT_MODE_ST,
	SMT_MODE_SMT,
	SMT_MODE_COUNT,
};

extern const char *const smt_mode_name[];

struct snap_mode {
	double fraction;              /* perf's cpu_cycles_fraction_in_st_mode of the last interval; NaN: none */
	double last[SMT_MODE_COUNT];  /* its cycles in each mode (0: none) */
	double total[SMT_MODE_COUNT]; /* since start */
	/* The last interval has values; some interval had (totals exist). */
	bool valid, ever;
};

struct snap_cpu {
	int cpu;
	int pmu_idx;   /* into pmus[], -1 when no core PMU with TopDown covers it */
	bool selected; /* in [collect] cpus; others only add their past totals */
	bool known;    /* topology known: core/package/die/node valid */
	int core_id, package, die, node;
	enum cpu_state state;
	int core_idx, pkg_idx; /* into cores[]/pkgs[], -1 when !known */
	/* The counters another user's pinned events leave it, as last
	 * probed (collect/share.c); whether it counts on the fixed counters
	 * alone, its general-purpose ones given back ([collect]
	 * pmu_sharing = yield). */
	unsigned gp_free;
	bool fixed1_held, slots_held, yielded;
	struct snap_counts c;
	struct snap_mode mode;
};

/* Which threads of a core ran when (issue 43, collect/smt.c): the
 * core's time split four ways, in seconds, since start and in the last
 * interval.  The first thread is the core's lowest-numbered CPU. */
enum smt_state {
	SMT_NEITHER,
	SMT_FIRST_ONLY,
	SMT_SECOND_ONLY,
	SMT_BOTH,
	SMT_STATE_COUNT,
};

extern const char *const smt_state_name[];

struct snap_smt {
	double total[SMT_STATE_COUNT];
	double last[SMT_STATE_COUNT];
	/* Whether the last interval was split (both threads counted), and
	 * whether it ever was (the totals mean something). */
	bool valid, ever;
	/* Its cores split in the last interval (a package's, the host's). */
	unsigned cores;
};

struct snap_core {
	int core_id, package, die;
	int pmu_idx; /* its CPUs' core PMU, into pmus[]; -1: none */
	bool covered; /* holds a CPU that is not unsupported */
	struct snap_counts c;
	/* Its threads: CPU numbers, -1 where it has fewer. */
	int first_cpu, second_cpu;
	struct snap_smt smt;
	struct snap_mode mode;
};

#define SNAP_STR 64
#define SNAP_REASON 512
#define SNAP_PMUS 3

struct snap_pkg {
	int package;
	bool covered;
	struct snap_counts c;
	struct snap_smt smt;
	struct snap_mode mode;
	/* Below level 2 with [collect] drilldown: the level-2 category whose
	 * subtree it counts in each tree (perf's name, static), or NULL. */
	const char *drill[SNAP_PMUS];
};

/* A core PMU: what it runs and why anything is missing. */
struct snap_pmu {
	char name[SNAP_STR];     /* cpu, cpu_core, cpu_atom */
	char pmu_name[SNAP_STR]; /* caps/pmu_name */
	char uarch[SNAP_STR];    /* perf's table directory, "" when unsupported */
	unsigned level;          /* 0 when unsupported */
	char model[SNAP_STR];    /* "perf" or "hardware" after any fallback; "" */
	/* A CPU's figures are its thread's share of its core (SMT on,
	 * Skylake-family AnyThread counts), not the thread's own. */
	bool core_share;
	char reason[SNAP_REASON];
	/* CPU intervals whose figures departed from perf's values, by
	 * departure (tma.h), since start. */
	uint64_t departures[TMA_DEP_COUNT];
};

#define SNAP_CGROUP_NAME 256

/* One per-cgroup bucket: a tracked cgroup ("/system.slice/x.service") or
 * "other" (every slice of an untracked cgroup). */
#define SNAP_POD_UID 37      /* a pod UID's 36 characters */
#define SNAP_CONTAINER_ID 65 /* a runtime's 64 hex digits */

struct snap_cgroup {
	char name[SNAP_CGROUP_NAME];
	/* A Kubernetes pod's or container's cgroup: the labels Prometheus
	 * joins on (kube-state-metrics, cAdvisor); qos_class NULL for any
	 * other cgroup, container_id "" for a pod's own. */
	char pod_uid[SNAP_POD_UID];
	char container_id[SNAP_CONTAINER_ID];
	const char *qos_class; /* a static string */
	struct snap_counts c;
};

/* Per-cgroup attribution: whether it runs, and why not. */
struct snap_cgstat {
	bool enabled;     /* [cgroups] enabled */
	bool attributing; /* the BPF program charges slices now */
	unsigned level;
	char trigger[24]; /* "cgroup-switches" or "sched_switch" */
	char reason[SNAP_REASON]; /* why it does not attribute, or "" */
	unsigned tracked, dropped;
	double switches, bpf_seconds; /* program runs and their run time, in total */
};

/* The TopDown tree below level 2 (issue 42) of one core PMU, when
 * [collect] level asks for it: perf's nodes, per row (the CPUs by number,
 * then the cores, the packages, the host: snap_deep_row; a row's figures
 * are of that PMU's CPUs only, so a hybrid part's package has one row in
 * each PMU's tree).  Node descriptions point into the
 * static tables (depth_tables.c); the arrays are the buffer's own,
 * reserved by the collector (snapshot_deep_reserve) and freed with the
 * ring. */
struct snap_deep {
	unsigned n_nodes;          /* 0: no depth */
	uint64_t gen;              /* the collector's depth plan: totals continue within one */
	unsigned level;            /* the deepest level shown */
	unsigned n_groups;         /* groups the depth events rotate in, one per interval */
	const char *source;        /* perf's metrics file (static) */
	/* [collect] drilldown: each package's subtree is in snap_pkg.drill
	 * (at the tree's index); the host's when its packages agree (perf's
	 * name of the level-2 category, static), or NULL. */
	bool drilldown;
	const char *host_drill;
	char pmu[SNAP_STR];        /* the core PMU it counts on */
	int pmu_idx;               /* that PMU in snapshot.pmus[], -1: none */
	char reason[SNAP_REASON];  /* what is missing (nodes left out, CPUs without depth), or "" */
	const struct dt_node *node[DEPTH_NODES_MAX];
	int parent[DEPTH_NODES_MAX]; /* index of the parent node, -1: a level-2 category */
	unsigned rows;
	/* rows x n_nodes: the last interval's value (NaN: none), and since
	 * start the value times the row's slots and the nanoseconds the
	 * node's events were counted (the share of its events whose group
	 * ran, times the interval), over intervals with a value. */
	double *last, *slots_total, *measured_ns_total;
	/* rows: the slots of the intervals with values (the denominator of
	 * a node's slots_total). */
	double *row_slots_total;
	size_t cap; /* rows x nodes the arrays hold */
	size_t row_cap;
};

struct snapshot {
	uint64_t seq;       /* intervals collected, 1 for the first interval */
	uint64_t intervals_missed; /* intervals the timer fired again before
				    * collection got to them (merged) */
	uint64_t published; /* publication number: changes with every
			     * publication, also one without a new interval
			     * (a reload), so caches keyed on it never go stale */
	uint64_t layout;    /* changes whenever CPUs/cores/packages change */
	double timestamp;   /* CLOCK_REALTIME seconds at the end of collection */
	uint64_t collected_ns; /* CLOCK_MONOTONIC at the end of the last collection, 0: none */
	double interval_s;  /* configured interval */
	double last_interval_s; /* measured: from the previous collection's start to this one's, 0: none */
	double duration_s;  /* time the last collection took */

	/* What is being collected: the core PMUs (the first is the one
	 * monitored, if any), the highest level and every category some CPU
	 * yields. */
	unsigned n_pmus;
	struct snap_pmu pmus[SNAP_PMUS];
	unsigned level;
	td_catset cats;
	/* Why nothing is monitored (no core PMU, no configured CPU...). */
	char reason[SNAP_REASON];
	bool up;

	unsigned n_cpus, n_cores, n_pkgs;
	struct snap_cpu *cpus;   /* every possible CPU, by CPU number */
	struct snap_core *cores; /* sorted by package, die, core */
	struct snap_pkg *pkgs;   /* sorted by package */
	struct snap_counts host;

	struct snap_cgstat cg;
	unsigned n_cgroups; /* other first, then the tracked */
	struct snap_cgroup *cgroups;

	unsigned cpus_by_state[CPU_STATE_COUNT];
	uint64_t errors[COLL_ERR_COUNT];

	/* The configuration: whether the last reload worked, and when the
	 * configuration in force was loaded (start or reload). */
	bool config_ok;
	double config_loaded_at;

	/* The collector's: which generation of its CPU descriptions
	 * (topology, states, categories) the buffer holds. */
	uint64_t fill_gen;

	/* One tree per core PMU counting nodes below level 2, in the order
	 * of pmus[] (a hybrid part's P-cores first). */
	unsigned n_deep;
	struct snap_deep deep[SNAP_PMUS];

	/* The SMT split (collect/smt.c): the host's, whether any PMU counts
	 * it, how, and what is missing. */
	struct snap_smt smt_host;
	bool smt_on;
	char smt_method[160];         /* its events, "CPU_CLK_UNHALTED.REF_TSC, ..." */
	char smt_reason[SNAP_REASON]; /* why not (or not everywhere), or "" */
	/* perf's SMT mode metrics (collect/smtmode.c): the host's, whether
	 * any PMU counts them, and from what. */
	struct snap_mode mode_host;
	bool mode_on;
	char mode_method[192];
};

/* Row of a CPU, core, package, the host in snap_deep's arrays. */
static inline unsigned snap_deep_row_cpu(const struct snapshot *s, unsigned cpu)
{
	(void)s;
	return cpu;
}
static inline unsigned snap_deep_row_core(const struct snapshot *s, unsigned k)
{
	return s->n_cpus + k;
}
static inline unsigned snap_deep_row_pkg(const struct snapshot *s, unsigned p)
{
	return s->n_cpus + s->n_cores + p;
}
static inline unsigned snap_deep_row_host(const struct snapshot *s)
{
	return s->n_cpus + s->n_cores + s->n_pkgs;
}

/* Whether row @row of tree @d is of its core PMU: a CPU's or a core's
 * row is of the PMU of that CPU (of the core's CPUs); a package's and the
 * host's rows are in every tree (over that PMU's CPUs there). */
static inline bool snap_deep_covers(const struct snapshot *s, const struct snap_deep *d, unsigned row)
{
	int p = row < s->n_cpus ? s->cpus[row].pmu_idx
		: row < s->n_cpus + s->n_cores ? s->cores[row - s->n_cpus].pmu_idx : -2;

	return p == -2 || (d->pmu_idx >= 0 && p == d->pmu_idx);
}

/* The doubles a history sample keeps per entity for @snap's trees: each
 * tree's nodes and its base slots (0: no tree).  Tree @t's start among
 * them is snapshot_deep_offset(). */
static inline unsigned snapshot_deep_offset(const struct snapshot *s, unsigned t)
{
	unsigned w = 0;

	for (unsigned k = 0; k < t && k < s->n_deep; k++)
		w += s->deep[k].n_nodes + 1;
	return w;
}
static inline unsigned snapshot_deep_width(const struct snapshot *s)
{
	return s->n_deep && s->deep[0].n_nodes ? snapshot_deep_offset(s, s->n_deep) : 0;
}

/* Room in tree @d's arrays for @rows rows of @nodes nodes (the
 * collector's, on a buffer no reader holds): 0 or -ENOMEM.  Allocates
 * only when they grow: a depth configured, a larger layout. */
int snapshot_deep_reserve(struct snap_deep *d, unsigned rows, unsigned nodes);
/* @dst's tree from @src's, into @dst's own arrays: no tree (n_nodes 0)
 * where they cannot hold it (snapshot_deep_reserve() first). */
void snapshot_deep_copy(struct snap_deep *dst, const struct snap_deep *src);

/* When @snap's collection ended, in seconds of CLOCK_MONOTONIC: what
 * durations (windows, the history) are measured on; timestamp (the wall
 * clock) is only shown. */
static inline double snapshot_mono_s(const struct snapshot *snap)
{
	return (double)snap->collected_ns / 1e9;
}

/* Sums the CPUs' counts into cores, packages and the host, with their
 * coverage: the domains' starting totals after a change of layout (the
 * collector computes their intervals from summed events). */
void snapshot_aggregate(struct snapshot *snap);

/* The columns of a counter vector that categories @cats use, with slots
 * and the times, as runs of consecutive columns: work on a counter vector
 * touches these only (a Sapphire Rapids CPU 15 of TD_C_COUNT). */
struct snap_cols {
	unsigned n;
	uint8_t lo[TD_CAT_COUNT + 1], hi[TD_CAT_COUNT + 1]; /* [lo, hi) */
};

void snap_cols_of(td_catset cats, struct snap_cols *out);

/* @order (n_cgroups entries) gets the indexes of @snap's cgroups, most
 * slots first: over the last interval (@last) or since start. */
void snapshot_cgroups_by_slots(const struct snapshot *snap, bool last, unsigned *order);

/* Copies everything but the arrays' storage (which must have room). */
void snapshot_copy(struct snapshot *dst, const struct snapshot *src);

struct snapring;

/* @capacity: room for that many CPUs (cores and packages alike);
 * @cg_capacity per-cgroup buckets. */
int snapring_new(unsigned capacity, unsigned cg_capacity, struct snapring **ret);
void snapring_free(struct snapring *ring);

/* Writer side (one writer).  Returns a buffer no reader holds: a shared
 * one, or when readers hold them all one of the writer's own, which
 * snapring_publish() does not publish (false; readers keep the previous
 * interval).  Never NULL. */
struct snapshot *snapring_begin(struct snapring *ring);
bool snapring_publish(struct snapring *ring, struct snapshot *snap);
/* Intervals written into a private buffer so far (the writer's thread). */
uint64_t snapring_private_uses(const struct snapring *ring);

/* Reader side (any thread).  NULL before the first publication. */
const struct snapshot *snapring_acquire(struct snapring *ring);
void snapring_release(struct snapring *ring, const struct snapshot *snap);

#endif
