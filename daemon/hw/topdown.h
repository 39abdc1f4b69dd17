/* SPDX-License-Identifier: MIT */
/* topdown: the vocabulary shared by every module: the variables of the
 * TopDown formulas (what each counted event stands for, whatever its
 * encoding on a given microarchitecture) and the categories of the
 * bottleneck tree with their levels and parents. */
#ifndef TOPDOWND_TOPDOWN_H
#define TOPDOWND_TOPDOWN_H

#include <assert.h>

/* Formula variables.  Which of them a CPU counts, and with which event,
 * is the microarchitecture's business (uarch.c). */
enum td_event {
	/* PERF_METRICS (Ice Lake and later P-cores) */
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
	TD_EV_RECOVERY_CYCLES,  /* INT_MISC.RECOVERY_CYCLES, cmask=1, edge=1 (CLEARS_COUNT) */
	/* general-purpose and fixed counters, P-cores */
	TD_EV_CYCLES,           /* CPU_CLK_UNHALTED.THREAD (.CORE on E-cores) */
	TD_EV_CYCLES_ANY,       /* CPU_CLK_UNHALTED.THREAD_ANY: the core's cycles */
	TD_EV_ONE_THREAD_ACTIVE,/* CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE */
	TD_EV_REF_XCLK,         /* CPU_CLK_UNHALTED.REF_XCLK */
	TD_EV_INST_RETIRED,     /* INST_RETIRED.ANY */
	TD_EV_UOPS_ISSUED,      /* UOPS_ISSUED.ANY */
	TD_EV_RETIRE_SLOTS,     /* UOPS_RETIRED.RETIRE_SLOTS */
	TD_EV_MACRO_FUSED,      /* UOPS_RETIRED.MACRO_FUSED */
	TD_EV_IDQ_NOT_DELIVERED,/* IDQ_UOPS_NOT_DELIVERED.CORE */
	TD_EV_IDQ_0_UOPS_CYCLES,/* IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE */
	TD_EV_RECOVERY_THREAD,  /* INT_MISC.RECOVERY_CYCLES (Skylake) */
	TD_EV_RECOVERY_ANY,     /* INT_MISC.RECOVERY_CYCLES_ANY */
	TD_EV_BR_MISP_RETIRED,  /* BR_MISP_RETIRED.ALL_BRANCHES */
	TD_EV_MACHINE_CLEARS,   /* MACHINE_CLEARS.COUNT */
	TD_EV_STALLS_MEM_ANY,   /* CYCLE_ACTIVITY.STALLS_MEM_ANY */
	TD_EV_STALLS_TOTAL,     /* CYCLE_ACTIVITY.STALLS_TOTAL */
	TD_EV_BOUND_ON_STORES,  /* EXE_ACTIVITY.BOUND_ON_STORES */
	TD_EV_PORTS_UTIL_1,     /* EXE_ACTIVITY.1_PORTS_UTIL */
	TD_EV_PORTS_UTIL_2,     /* EXE_ACTIVITY.2_PORTS_UTIL */
	TD_EV_IDQ_MS_UOPS,      /* IDQ.MS_UOPS */
	TD_EV_IDQ_MITE_UOPS,    /* IDQ.MITE_UOPS */
	TD_EV_DEC0,             /* UOPS_DECODED.DEC0 */
	TD_EV_DEC0_CYCLES,      /* UOPS_DECODED.DEC0, cmask=1 */
	/* E-cores (Gracemont, Crestmont): slot-based TopDown events */
	TD_EV_ATOM_FE_BOUND,    /* TOPDOWN_FE_BOUND.ALL (.ALL_P) */
	TD_EV_ATOM_BE_BOUND,    /* TOPDOWN_BE_BOUND.ALL (.ALL_P) */
	TD_EV_ATOM_RETIRING,    /* TOPDOWN_RETIRING.ALL (.ALL_P) */
	TD_EV_ATOM_BAD_SPEC,    /* TOPDOWN_BAD_SPECULATION.ALL_P */
	TD_EV_ATOM_FE_LATENCY,  /* TOPDOWN_FE_BOUND.FRONTEND_LATENCY */
	TD_EV_ATOM_FE_BANDWIDTH,/* TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH */
	TD_EV_ATOM_MISPREDICT,  /* TOPDOWN_BAD_SPECULATION.MISPREDICT */
	TD_EV_ATOM_MACHINE_CLEARS, /* TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS */
	TD_EV_ATOM_ALLOC_RESTRICTIONS, /* TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS */
	TD_EV_ATOM_MEM_SCHEDULER, /* TOPDOWN_BE_BOUND.MEM_SCHEDULER */
	TD_EV_LD_HEAD_ANY_AT_RET, /* LD_HEAD.ANY_AT_RET */
	TD_EV_MEM_SCHED_ST_BUF, /* MEM_SCHEDULER_BLOCK.ST_BUF */
	TD_EV_MEM_SCHED_ALL,    /* MEM_SCHEDULER_BLOCK.ALL */
	TD_EV_UOPS_RETIRED_MS,  /* UOPS_RETIRED.MS */
	/* Golden Cove without PERF_METRICS (a virtual machine): Intel's
	 * alternate TMA events on general-purpose counters (the frontend's
	 * are TD_EV_IDQ_NOT_DELIVERED and TD_EV_IDQ_0_UOPS_CYCLES, as
	 * IDQ_BUBBLES.CORE and .CYCLES_0_UOPS_DELIV.CORE) */
	TD_EV_SLOTS_P,          /* TOPDOWN.SLOTS_P */
	TD_EV_BE_BOUND_SLOTS,   /* TOPDOWN.BACKEND_BOUND_SLOTS */
	TD_EV_BR_MISPREDICT_SLOTS, /* TOPDOWN.BR_MISPREDICT_SLOTS */
	TD_EV_MEM_BOUND_SLOTS,  /* TOPDOWN.MEMORY_BOUND_SLOTS */
	TD_EV_UOPS_RETIRED_SLOTS, /* UOPS_RETIRED.SLOTS */
	TD_EV_UOPS_RETIRED_HEAVY, /* UOPS_RETIRED.HEAVY */
	/* AMD Zen 4 and later: dispatch slots (cycles are TD_EV_CYCLES,
	 * ls_not_halted_cyc) */
	TD_EV_ZEN_NO_OPS_FRONTEND, /* de_no_dispatch_per_slot.no_ops_from_frontend */
	TD_EV_ZEN_FRONTEND_CYCLES, /* the same with cmask = width: cycles with no op from the frontend */
	TD_EV_ZEN_BACKEND_STALLS,  /* de_no_dispatch_per_slot.backend_stalls */
	TD_EV_ZEN_SMT_CONTENTION,  /* de_no_dispatch_per_slot.smt_contention */
	TD_EV_ZEN_OPS_DISPATCHED,  /* de_src_op_disp.all */
	TD_EV_ZEN_OPS_RETIRED,     /* ex_ret_ops */
	TD_EV_ZEN_BRANCH_MISP,     /* ex_ret_brn_misp */
	TD_EV_ZEN_RESYNCS,         /* resyncs_or_nc_redirects (Zen 4), bp_redirects.resync (Zen 5) */
	TD_EV_ZEN_NOT_COMPLETE,    /* ex_no_retire.not_complete */
	TD_EV_ZEN_LOAD_NOT_COMPLETE, /* ex_no_retire.load_not_complete */
	TD_EV_ZEN_UCODE_OPS,       /* ex_ret_ucode_ops */
	/* Arm Neoverse (PMUv3 common events; cycles are TD_EV_CYCLES, CPU_CYCLES) */
	TD_EV_ARM_STALL_SLOT,      /* STALL_SLOT */
	TD_EV_ARM_STALL_SLOT_FRONTEND, /* STALL_SLOT_FRONTEND */
	TD_EV_ARM_STALL_SLOT_BACKEND,  /* STALL_SLOT_BACKEND */
	TD_EV_ARM_OP_RETIRED,      /* OP_RETIRED */
	TD_EV_ARM_OP_SPEC,         /* OP_SPEC */
	TD_EV_ARM_BR_MIS_PRED,     /* BR_MIS_PRED */
	TD_EV_ARM_STALL_FRONTEND_FLUSH, /* STALL_FRONTEND_FLUSH (Neoverse V3, N3) */
	TD_EV_ARM_CPU_SLOT,        /* CPU_SLOT (NVIDIA Olympus: the slots, counted) */
	TD_EV_ARM_STALL_SLOT_FE_NOMISPRED, /* STALL_SLOT_FRONTEND_WITHOUT_MISPRED (Olympus) */
	/* AmpereOne's level 2 */
	TD_EV_ARM_STALL_FRONTEND,  /* STALL_FRONTEND: cycles */
	TD_EV_ARM_BR_MIS_PRED_RETIRED, /* BR_MIS_PRED_RETIRED */
	TD_EV_ARM_GPC_FLUSH,       /* GPC_FLUSH: flushes */
	TD_EV_ARM_STALL_BACKEND_TLB,   /* STALL_BACKEND_TLB: cycles */
	TD_EV_ARM_STALL_BACKEND_CACHE, /* STALL_BACKEND_CACHE: cycles */
	TD_EV_COUNT,
};

/* Categories of the bottleneck tree: Intel's level 1, then its level 2
 * grouped by parent, then the categories of other cores, each family's
 * after the last: the order of every output. */
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
	/* E-cores only, after the P-core tree so that its order stays. */
	TD_CAT_BASE,             /* Gracemont: retiring not from the microcode sequencer */
	TD_CAT_MS_UOPS,          /* Gracemont: retiring from the microcode sequencer */
	TD_CAT_IFETCH_LATENCY,   /* Crestmont */
	TD_CAT_IFETCH_BANDWIDTH, /* Crestmont */
	TD_CAT_RESOURCE_BOUND,   /* Crestmont */
	/* AMD Zen 4 and later (perf's PipelineL1/L2 names; Zen 5's tables
	 * spell the level-2 ones frontend_bound_by_latency, ...). */
	TD_CAT_SMT_CONTENTION,   /* level 1: slots the other thread of the core took */
	TD_CAT_RETIRING_FASTPATH,
	TD_CAT_RETIRING_MICROCODE,
	TD_CAT_BAD_SPECULATION_MISPREDICTS,
	TD_CAT_BAD_SPECULATION_PIPELINE_RESTARTS,
	TD_CAT_FRONTEND_BOUND_LATENCY,
	TD_CAT_FRONTEND_BOUND_BANDWIDTH,
	TD_CAT_BACKEND_BOUND_MEMORY,
	TD_CAT_BACKEND_BOUND_CPU,
	TD_CAT_COUNT,
};

struct td_cat_info {
	const char *name;   /* "retiring", "memory_bound", ... */
	unsigned level;     /* 1 or 2 */
	enum td_cat parent; /* level 2: its level-1 parent; level 1: itself */
};

/* TD_CAT_COUNT long (no size here: the definition's initialiser gives
 * it, which TABLE_COVERS checks). */
extern const struct td_cat_info td_cat[];

/* A set of categories, one bit per enum td_cat. */
typedef unsigned td_catset;
static_assert(TD_CAT_COUNT <= 32, "a td_catset holds every category");

static inline int td_catset_has(td_catset set, enum td_cat c)
{
	return (set >> c) & 1u;
}

/* The four categories every microarchitecture has at level 1 (AMD adds
 * smt_contention). */
#define TD_CATSET_L1 ((1u << TD_CAT_RETIRING) | (1u << TD_CAT_BAD_SPECULATION) | \
		      (1u << TD_CAT_FRONTEND_BOUND) | (1u << TD_CAT_BACKEND_BOUND))
/* Level 2 of the P-cores. */
#define TD_CATSET_L2_INTEL ((1u << TD_CAT_HEAVY_OPERATIONS) | (1u << TD_CAT_LIGHT_OPERATIONS) | \
			    (1u << TD_CAT_BRANCH_MISPREDICTS) | (1u << TD_CAT_MACHINE_CLEARS) | \
			    (1u << TD_CAT_FETCH_LATENCY) | (1u << TD_CAT_FETCH_BANDWIDTH) | \
			    (1u << TD_CAT_MEMORY_BOUND) | (1u << TD_CAT_CORE_BOUND))

/* The categories of @set at @level. */
td_catset td_catset_level(td_catset set, unsigned level);

#endif
