/* SPDX-License-Identifier: MIT */
/* topdown: the category table. */
#include "topdown.h"

#include "util.h"

const struct td_cat_info td_cat[] = {
	[TD_CAT_RETIRING] = { "retiring", 1, TD_CAT_RETIRING },
	[TD_CAT_BAD_SPECULATION] = { "bad_speculation", 1, TD_CAT_BAD_SPECULATION },
	[TD_CAT_FRONTEND_BOUND] = { "frontend_bound", 1, TD_CAT_FRONTEND_BOUND },
	[TD_CAT_BACKEND_BOUND] = { "backend_bound", 1, TD_CAT_BACKEND_BOUND },
	[TD_CAT_HEAVY_OPERATIONS] = { "heavy_operations", 2, TD_CAT_RETIRING },
	[TD_CAT_LIGHT_OPERATIONS] = { "light_operations", 2, TD_CAT_RETIRING },
	[TD_CAT_BRANCH_MISPREDICTS] = { "branch_mispredicts", 2, TD_CAT_BAD_SPECULATION },
	[TD_CAT_MACHINE_CLEARS] = { "machine_clears", 2, TD_CAT_BAD_SPECULATION },
	[TD_CAT_FETCH_LATENCY] = { "fetch_latency", 2, TD_CAT_FRONTEND_BOUND },
	[TD_CAT_FETCH_BANDWIDTH] = { "fetch_bandwidth", 2, TD_CAT_FRONTEND_BOUND },
	[TD_CAT_MEMORY_BOUND] = { "memory_bound", 2, TD_CAT_BACKEND_BOUND },
	[TD_CAT_CORE_BOUND] = { "core_bound", 2, TD_CAT_BACKEND_BOUND },
	[TD_CAT_BASE] = { "base", 2, TD_CAT_RETIRING },
	[TD_CAT_MS_UOPS] = { "ms_uops", 2, TD_CAT_RETIRING },
	[TD_CAT_IFETCH_LATENCY] = { "ifetch_latency", 2, TD_CAT_FRONTEND_BOUND },
	[TD_CAT_IFETCH_BANDWIDTH] = { "ifetch_bandwidth", 2, TD_CAT_FRONTEND_BOUND },
	[TD_CAT_RESOURCE_BOUND] = { "resource_bound", 2, TD_CAT_BACKEND_BOUND },
	[TD_CAT_SMT_CONTENTION] = { "smt_contention", 1, TD_CAT_SMT_CONTENTION },
	[TD_CAT_RETIRING_FASTPATH] = { "retiring_fastpath", 2, TD_CAT_RETIRING },
	[TD_CAT_RETIRING_MICROCODE] = { "retiring_microcode", 2, TD_CAT_RETIRING },
	[TD_CAT_BAD_SPECULATION_MISPREDICTS] = { "bad_speculation_mispredicts", 2, TD_CAT_BAD_SPECULATION },
	[TD_CAT_BAD_SPECULATION_PIPELINE_RESTARTS] = { "bad_speculation_pipeline_restarts", 2,
							TD_CAT_BAD_SPECULATION },
	[TD_CAT_FRONTEND_BOUND_LATENCY] = { "frontend_bound_latency", 2, TD_CAT_FRONTEND_BOUND },
	[TD_CAT_FRONTEND_BOUND_BANDWIDTH] = { "frontend_bound_bandwidth", 2, TD_CAT_FRONTEND_BOUND },
	[TD_CAT_BACKEND_BOUND_MEMORY] = { "backend_bound_memory", 2, TD_CAT_BACKEND_BOUND },
	[TD_CAT_BACKEND_BOUND_CPU] = { "backend_bound_cpu", 2, TD_CAT_BACKEND_BOUND },
};
TABLE_COVERS(td_cat, TD_CAT_COUNT);

td_catset td_catset_level(td_catset set, unsigned level)
{
	td_catset out = 0;

	for (int c = 0; c < TD_CAT_COUNT; c++)
		if (td_catset_has(set, (enum td_cat)c) && td_cat[c].level == level)
			out |= 1u << c;
	return out;
}
