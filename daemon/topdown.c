/* topdown: name tables of the shared vocabulary. */
#include "topdown.h"

const char *const td_event_name[TD_EV_COUNT] = {
	[TD_EV_SLOTS] = "slots",
	[TD_EV_RETIRING] = "topdown-retiring",
	[TD_EV_BAD_SPEC] = "topdown-bad-spec",
	[TD_EV_FE_BOUND] = "topdown-fe-bound",
	[TD_EV_BE_BOUND] = "topdown-be-bound",
	[TD_EV_HEAVY_OPS] = "topdown-heavy-ops",
	[TD_EV_BR_MISPREDICT] = "topdown-br-mispredict",
	[TD_EV_FETCH_LAT] = "topdown-fetch-lat",
	[TD_EV_MEM_BOUND] = "topdown-mem-bound",
	[TD_EV_UOP_DROPPING] = "INT_MISC.UOP_DROPPING",
	[TD_EV_RECOVERY_CYCLES] = "INT_MISC.RECOVERY_CYCLES:c1:e1",
};

const char *const td_l1_name[TD_L1_COUNT] = {
	[TD_RETIRING] = "retiring",
	[TD_BAD_SPECULATION] = "bad_speculation",
	[TD_FRONTEND_BOUND] = "frontend_bound",
	[TD_BACKEND_BOUND] = "backend_bound",
};

const char *const td_l2_name[TD_L2_COUNT] = {
	[TD_HEAVY_OPERATIONS] = "heavy_operations",
	[TD_LIGHT_OPERATIONS] = "light_operations",
	[TD_BRANCH_MISPREDICTS] = "branch_mispredicts",
	[TD_MACHINE_CLEARS] = "machine_clears",
	[TD_FETCH_LATENCY] = "fetch_latency",
	[TD_FETCH_BANDWIDTH] = "fetch_bandwidth",
	[TD_MEMORY_BOUND] = "memory_bound",
	[TD_CORE_BOUND] = "core_bound",
};

const enum td_l1 td_l2_parent[TD_L2_COUNT] = {
	[TD_HEAVY_OPERATIONS] = TD_RETIRING,
	[TD_LIGHT_OPERATIONS] = TD_RETIRING,
	[TD_BRANCH_MISPREDICTS] = TD_BAD_SPECULATION,
	[TD_MACHINE_CLEARS] = TD_BAD_SPECULATION,
	[TD_FETCH_LATENCY] = TD_FRONTEND_BOUND,
	[TD_FETCH_BANDWIDTH] = TD_FRONTEND_BOUND,
	[TD_MEMORY_BOUND] = TD_BACKEND_BOUND,
	[TD_CORE_BOUND] = TD_BACKEND_BOUND,
};
