/* SPDX-License-Identifier: MIT */
/* topdown: the vocabulary shared by every module: the variables of the
 * TopDown formulas (what each counted event stands for, whatever its
 * encoding on a given microarchitecture) and the categories of the
 * bottleneck tree with their levels and parents. */
#ifndef TOPDOWND_TOPDOWN_H
#define TOPDOWND_TOPDOWN_H

/* Formula variables.  Which of them a CPU counts, and with which event,
 * is the microarchitecture's business (uarch.c). */
enum td_event {
	TD_EV_SLOTS,            /* TOPDOWN.SLOTS, the leader of a PERF_METRICS group */
	TD_EV_RETIRING,         /* topdown-retiring ... */
	TD_EV_BAD_SPEC,
	TD_EV_FE_BOUND,
	TD_EV_BE_BOUND,
	TD_EV_HEAVY_OPS,
	TD_EV_BR_MISPREDICT,
	TD_EV_FETCH_LAT,
	TD_EV_MEM_BOUND,        /* ... topdown-mem-bound */
	TD_EV_UOP_DROPPING,     /* INT_MISC.UOP_DROPPING */
	TD_EV_RECOVERY_CYCLES,  /* INT_MISC.RECOVERY_CYCLES, cmask=1, edge=1 */
	TD_EV_COUNT,
};

/* Categories of the bottleneck tree, level 1 first, then level 2 grouped
 * by parent: the order of every output. */
enum td_cat {
	TD_CAT_RETIRING,
	TD_CAT_BAD_SPECULATION,
	TD_CAT_FRONTEND_BOUND,
	TD_CAT_BACKEND_BOUND,
	TD_CAT_HEAVY_OPERATIONS,
	TD_CAT_LIGHT_OPERATIONS,
	TD_CAT_BRANCH_MISPREDICTS,
	TD_CAT_MACHINE_CLEARS,
	TD_CAT_FETCH_LATENCY,
	TD_CAT_FETCH_BANDWIDTH,
	TD_CAT_MEMORY_BOUND,
	TD_CAT_CORE_BOUND,
	TD_CAT_COUNT,
};

struct td_cat_info {
	const char *name;   /* "retiring", "memory_bound", ... */
	unsigned level;     /* 1 or 2 */
	enum td_cat parent; /* level 2: its level-1 parent; level 1: itself */
};

extern const struct td_cat_info td_cat[TD_CAT_COUNT];

/* A set of categories, one bit per enum td_cat. */
typedef unsigned td_catset;

static inline int td_catset_has(td_catset set, enum td_cat c)
{
	return (set >> c) & 1u;
}

#define TD_CATSET_L1 ((1u << TD_CAT_RETIRING) | (1u << TD_CAT_BAD_SPECULATION) | \
		      (1u << TD_CAT_FRONTEND_BOUND) | (1u << TD_CAT_BACKEND_BOUND))
#define TD_CATSET_L2_INTEL ((1u << TD_CAT_HEAVY_OPERATIONS) | (1u << TD_CAT_LIGHT_OPERATIONS) | \
			    (1u << TD_CAT_BRANCH_MISPREDICTS) | (1u << TD_CAT_MACHINE_CLEARS) | \
			    (1u << TD_CAT_FETCH_LATENCY) | (1u << TD_CAT_FETCH_BANDWIDTH) | \
			    (1u << TD_CAT_MEMORY_BOUND) | (1u << TD_CAT_CORE_BOUND))

/* The categories of @set at @level. */
td_catset td_catset_level(td_catset set, unsigned level);

#endif
