/* Excerpt, verbatim, of arch/x86/events/intel/core.c as changed by
 * "perf/x86/intel: Add core PMU support for Novalake" (Dapeng Mi;
 * tip perf/core commit c847a208f43bfeb56943f2ca6fe2baf1db9dee7a, Link:
 * https://patch.msgid.link/20260114011750.350569-6-dapeng1.mi@linux.intel.com;
 * SPDX-License-Identifier: GPL-2.0-only): Nova Lake names its PMUs
 * novalake_hybrid and gives cpu_atom (Arctic Wolf) intel_arw_event_constraints,
 * whose fixed counters 4-6 take the codes Skymont's do, and Lunar Lake's
 * topdown-* attributes (lnl_hybrid_events_attrs). */

static struct event_constraint intel_arw_event_constraints[] __read_mostly = {
	FIXED_EVENT_CONSTRAINT(0x00c0, 0), /* INST_RETIRED.ANY */
	FIXED_EVENT_CONSTRAINT(0x003c, 1), /* CPU_CLK_UNHALTED.CORE */
	FIXED_EVENT_CONSTRAINT(0x0300, 2), /* pseudo CPU_CLK_UNHALTED.REF */
	FIXED_EVENT_CONSTRAINT(0x013c, 2), /* CPU_CLK_UNHALTED.REF_TSC_P */
	FIXED_EVENT_CONSTRAINT(0x0073, 4), /* TOPDOWN_BAD_SPECULATION.ALL */
	FIXED_EVENT_CONSTRAINT(0x019c, 5), /* TOPDOWN_FE_BOUND.ALL */
	FIXED_EVENT_CONSTRAINT(0x02c2, 6), /* TOPDOWN_RETIRING.ALL */
	INTEL_UEVENT_CONSTRAINT(0x01b7, 0x1),
	INTEL_UEVENT_CONSTRAINT(0x02b7, 0x2),
	INTEL_UEVENT_CONSTRAINT(0x04b7, 0x4),
	INTEL_UEVENT_CONSTRAINT(0x08b7, 0x8),
	INTEL_UEVENT_CONSTRAINT(0x01d4, 0x1),
	INTEL_UEVENT_CONSTRAINT(0x02d4, 0x2),
	INTEL_UEVENT_CONSTRAINT(0x04d4, 0x4),
	INTEL_UEVENT_CONSTRAINT(0x08d4, 0x8),
	INTEL_UEVENT_CONSTRAINT(0x0175, 0x1),
	INTEL_UEVENT_CONSTRAINT(0x0275, 0x2),
	INTEL_UEVENT_CONSTRAINT(0x21d3, 0x1),
	INTEL_UEVENT_CONSTRAINT(0x22d3, 0x1),
	EVENT_CONSTRAINT_END
};

static __always_inline void intel_pmu_init_arw(struct pmu *pmu)
{
	intel_pmu_init_grt(pmu);
	x86_pmu.flags &= ~PMU_FL_HAS_RSP_1;
	x86_pmu.flags |= PMU_FL_HAS_OMR;
	memcpy(hybrid_var(pmu, hw_cache_extra_regs),
	       arw_hw_cache_extra_regs, sizeof(hw_cache_extra_regs));
	hybrid(pmu, event_constraints) = intel_arw_event_constraints;
	hybrid(pmu, pebs_constraints) = intel_arw_pebs_event_constraints;
	hybrid(pmu, extra_regs) = intel_arw_extra_regs;
	static_call_update(intel_pmu_enable_acr_event, intel_pmu_enable_acr);
}

	case INTEL_NOVALAKE:
	case INTEL_NOVALAKE_L:
		pr_cont("Novalake Hybrid events, ");
		name = "novalake_hybrid";
		intel_pmu_init_hybrid(hybrid_big_small);

		x86_pmu.pebs_latency_data = nvl_latency_data;
		x86_pmu.get_event_constraints = mtl_get_event_constraints;
		x86_pmu.hw_config = adl_hw_config;

		td_attr = lnl_hybrid_events_attrs;
		mem_attr = mtl_hybrid_mem_attrs;
		tsx_attr = adl_hybrid_tsx_attrs;
		extra_attr = boot_cpu_has(X86_FEATURE_RTM) ?
			mtl_hybrid_extra_attr_rtm : mtl_hybrid_extra_attr;

		/* Initialize big core specific PerfMon capabilities.*/
		pmu = &x86_pmu.hybrid_pmu[X86_HYBRID_PMU_CORE_IDX];
		intel_pmu_init_pnc(&pmu->pmu);

		/* Initialize Atom core specific PerfMon capabilities.*/
		pmu = &x86_pmu.hybrid_pmu[X86_HYBRID_PMU_ATOM_IDX];
		intel_pmu_init_arw(&pmu->pmu);

		intel_pmu_pebs_data_source_lnl();
		break;
