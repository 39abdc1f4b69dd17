/* topdown: the vocabulary shared by every module: the perf events a group
 * holds, the level-1 and level-2 categories and their names. */
#ifndef TOPDOWND_TOPDOWN_H
#define TOPDOWND_TOPDOWN_H

/* Events of one per-CPU group, in group order (slots is the leader). */
enum td_event {
	TD_EV_SLOTS,
	TD_EV_RETIRING,
	TD_EV_BAD_SPEC,
	TD_EV_FE_BOUND,
	TD_EV_BE_BOUND,
	TD_EV_HEAVY_OPS,
	TD_EV_BR_MISPREDICT,
	TD_EV_FETCH_LAT,
	TD_EV_MEM_BOUND,
	TD_EV_UOP_DROPPING,     /* INT_MISC.UOP_DROPPING */
	TD_EV_RECOVERY_CYCLES,  /* INT_MISC.RECOVERY_CYCLES, cmask=1, edge=1 */
	TD_EV_COUNT,
};

enum td_l1 {
	TD_RETIRING,
	TD_BAD_SPECULATION,
	TD_FRONTEND_BOUND,
	TD_BACKEND_BOUND,
	TD_L1_COUNT,
};

/* Pairs under each L1 parent: the measured child first, then the derived. */
enum td_l2 {
	TD_HEAVY_OPERATIONS,
	TD_LIGHT_OPERATIONS,
	TD_BRANCH_MISPREDICTS,
	TD_MACHINE_CLEARS,
	TD_FETCH_LATENCY,
	TD_FETCH_BANDWIDTH,
	TD_MEMORY_BOUND,
	TD_CORE_BOUND,
	TD_L2_COUNT,
};

/* Which perf metric-table formulas apply (reference page, "Formulas"). */
enum td_formulas {
	TD_FORMULAS_SPR, /* Sapphire/Emerald/Granite Rapids, Alder Lake P-cores */
	TD_FORMULAS_ICL, /* Ice Lake client and server, Tiger/Rocket Lake */
};

extern const char *const td_event_name[TD_EV_COUNT];     /* sysfs-ish names */
extern const char *const td_l1_name[TD_L1_COUNT];       /* "retiring", ... */
extern const char *const td_l2_name[TD_L2_COUNT];       /* "heavy_operations", ... */
extern const enum td_l1 td_l2_parent[TD_L2_COUNT];

static inline int td_event_is_metric(enum td_event ev)
{
	return ev >= TD_EV_RETIRING && ev <= TD_EV_MEM_BOUND;
}

#endif
