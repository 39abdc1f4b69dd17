/* SPDX-License-Identifier: MIT */
/* depth: the TopDown tree below level 2 for one core PMU (issue 42),
 * compiled from perf's tables (depth_tables.h): the nodes down to a level,
 * the events they read with their encodings on the PMU, how those events
 * are grouped on the counters the level-1/2 group leaves, and the
 * evaluation of every node on a domain's counts.  Pure: the collector
 * opens, rotates and reads the groups (collect/deep.c).
 *
 * Variables of an evaluation: the level-1/2 group's (enum td_event, what
 * the collector's tma_input holds), then the depth events' (depth_event
 * order), then one per metric computed (helpers and nodes, in dependency
 * order).  A node's expression is perf's, evaluated as perf evaluates it
 * (hw/expr.h): NaN where perf has no value. */
#ifndef TOPDOWND_DEPTH_H
#define TOPDOWND_DEPTH_H

#include <stdbool.h>
#include <stdint.h>

#include "depth_tables.h"
#include "pmu.h"
#include "topdown.h"

#define DEPTH_EVENTS_MAX 192
#define DEPTH_NODES_MAX 128
#define DEPTH_GROUPS_MAX 32
#define DEPTH_GROUP_EVENTS 16
#define DEPTH_LEVEL_MAX 6

/* A set of depth events, bit per event. */
struct depth_set {
	uint64_t w[DEPTH_EVENTS_MAX / 64];
};

/* What a depth event is: a core PMU event on a counter; the msr PMU's
 * TSC (perf's msr@tsc@: a member of a group that takes no counter,
 * arch/x86/events/msr.c); perf's duration_time (no event: the interval's
 * seconds, as perf's metrics read it, util/stat-shadow.c scaling the
 * tool event's nanoseconds by 1e-9); a retire latency (perf's EVENT:R: no
 * event, the table's mean rounded, what perf stat reads for it each
 * interval when it does not sample it, util/intel-tpebs.c). */
enum depth_kind {
	DEPTH_EV_CORE,
	DEPTH_EV_MSR,
	DEPTH_EV_TIME,
	DEPTH_EV_RETLAT,
};

/* Fixed counter @k usable by the depth groups, in depth_pack()'s mask. */
#define DEPTH_FIXED(k) (1u << (k))

struct depth_event {
	const char *name;       /* as the expressions read it */
	enum depth_kind kind;
	double value;           /* a DEPTH_EV_RETLAT's cycles */
	uint32_t type;          /* a DEPTH_EV_MSR's PMU type (the core PMU's: 0) */
	const char *terms;      /* perf's encoding, and the table file */
	const char *file;
	struct pmu_encoding enc;
	/* The general-purpose counters its table allows, as a count k (it
	 * may use counters 0..k-1; 0: every one). */
	unsigned counters;
	int fixed;              /* the fixed counter it may (0, 1) or must (2) take, or -1 */
	/* The shared register its terms program (frontend=: 0x3F7,
	 * offcore_rsp=: 0x1A6, ldlat=: 0x3F6), 0: none; and the value. */
	unsigned msr;
	uint64_t msr_value;
};

/* One group of depth events, the first its leader. */
struct depth_group {
	unsigned n;
	uint8_t ev[DEPTH_GROUP_EVENTS];
};

struct depth;

/* What the level-1/2 group of the PMU counts: an expression's event of
 * one of these names (perf's, compared without case) is that group's
 * variable, not a depth event. */
struct depth_main {
	unsigned n;
	const char *names[32];
	enum td_event vars[32];
	/* perf's #SMT_on (SMT active) and #core_wide (every thread of each
	 * core counted: util/smt.c) for the expressions that read them. */
	bool smt_on, core_wide;
	/* perf's #has_pmem: the firmware has an NFIT table (persistent
	 * memory: util/expr.c has_pmem()). */
	bool has_pmem;
	/* The msr PMU's type and its tsc event's config, for msr@tsc@ (0:
	 * no msr PMU, and the nodes reading it are left out). */
	uint32_t msr_type;
	uint64_t msr_tsc;
	/* Fixed counter 2 taken (by the SMT split's group, or the level-1/2
	 * group): the nodes reading the reference cycles are left out. */
	bool fixed2_taken;
};

/* The table for microarchitecture @uarch_id on core PMU @pmu (a hybrid
 * part's tables are per core type), or NULL. */
const struct dt_table *depth_table_of(const char *uarch_id, const char *pmu);

/* Its deepest level (3 ... 6). */
unsigned depth_table_levels(const struct dt_table *t);

/* Compiles @t's nodes of levels 3 to @level for a PMU whose events encode
 * with @formats and whose level-1/2 group counts @main.  A node whose
 * expression reads what cannot be counted here (an event the PMU has no
 * format for, msr@tsc@ without the msr PMU, a retire latency) is left
 * out, and @why says which
 * (one line, "" when none is).  0, -ENOENT (no node can be computed, @why
 * says why) or -ENOMEM. */
int depth_new(const struct dt_table *t, unsigned level, const struct pmu_formats *formats,
	      const struct depth_main *main, struct depth **ret, char *why, size_t whylen);
void depth_free(struct depth *d);

unsigned depth_level(const struct depth *d);
unsigned depth_n_nodes(const struct depth *d);
const struct dt_node *depth_node(const struct depth *d, unsigned i);
/* The index of node @i's parent among the nodes, -1 when it is a
 * level-2 category's child (dt_node.parent names it). */
int depth_node_parent(const struct depth *d, unsigned i);
/* The depth events node @i reads, through every metric it reads. */
const struct depth_set *depth_node_events(const struct depth *d, unsigned i);
unsigned depth_n_events(const struct depth *d);
/* The nodes of the levels asked that cannot be computed here (perf's
 * names, in the order found: a node reading one left out comes after
 * it), and *@why each. */
unsigned depth_n_left(const struct depth *d);
const char *depth_left(const struct depth *d, unsigned i, const char **why);
/* The events opened: duration_time and retire latencies are none. */
unsigned depth_n_opened(const struct depth *d);
const struct depth_event *depth_event(const struct depth *d, unsigned i);
/* Variables an evaluation needs (depth_eval's @vars). */
unsigned depth_n_vars(const struct depth *d);
/* The level-1/2 variables the expressions read (the others are never
 * read): their number, and *@vars. */
unsigned depth_main_vars(const struct depth *d, const enum td_event **vars);

/* The depth events grouped for @gp general-purpose counters and the
 * fixed counters of mask @fixed (DEPTH_FIXED(k) for counter k): each
 * node's events
 * together in the first group they fit (in node order), so that its value
 * comes from one interval's counts; a node reading more events than a
 * group holds spans several, first fit.  Returns the number of groups
 * written to @out (at most @max), or -ENOSPC when an event fits no group
 * (no general-purpose counter for it, or its fixed counter not usable).
 * msr@tsc@ takes no counter and comes after a group's core events (a
 * leader of the core PMU); duration_time is in no group. */
int depth_pack(const struct depth *d, unsigned gp, unsigned fixed, struct depth_group *out, unsigned max);

/* The level-2 category node @i is under (perf's name of it, the parent of
 * its level-3 ancestor: "tma_memory_bound"). */
const char *depth_node_subtree(const struct depth *d, unsigned i);

/* depth_pack() for the nodes under level-2 category @subtree only (perf's
 * name; NULL: every node): the drill-down's groups. */
int depth_pack_subtree(const struct depth *d, const char *subtree, unsigned gp, unsigned fixed,
		       struct depth_group *out, unsigned max);

/* Evaluates every node: @vars holds the level-1/2 variables and the depth
 * events' counts (the rest is written), @out gets each node's value (NaN:
 * none). */
void depth_eval(const struct depth *d, double *vars, double *out);

/* A node's or category's name without perf's "tma_" prefix, as
 * topdownd's outputs name them ("l1_bound", "memory_bound"). */
static inline const char *depth_short(const char *name)
{
	return name[0] == 't' && name[1] == 'm' && name[2] == 'a' && name[3] == '_' ? name + 4 : name;
}

static inline bool depth_set_has(const struct depth_set *s, unsigned i)
{
	return (s->w[i / 64] >> (i % 64)) & 1;
}

#endif
