/* Excerpts, verbatim, of torvalds/linux arch/x86/events/intel/core.c
 * (SPDX-License-Identifier: GPL-2.0-only): the perf driver's events/
 * attributes of the Lunar Lake and Arrow Lake core PMUs, as added by
 * "perf/x86: Add Lunar Lake and Arrow Lake support" (Kan Liang, Link:
 * https://lkml.kernel.org/r/20240626143545.480761-4-kan.liang@linux.intel.com),
 * with the Alder Lake attributes they reuse (as added by "perf/x86: Add
 * structures for the attributes of Hybrid PMUs"); intel_pmu_init() gives
 * both models these (case INTEL_LUNARLAKE_M: case INTEL_ARROWLAKE:
 * td_attr = lnl_hybrid_events_attrs; name = "lunarlake_hybrid").  A hybrid
 * attribute's strings are in PMU index order: cpu_atom's first, then
 * cpu_core's; hybrid_big is cpu_core's alone. */

EVENT_ATTR_STR_HYBRID(slots,                 slots_adl,        "event=0x00,umask=0x4",                       hybrid_big);
EVENT_ATTR_STR_HYBRID(topdown-bad-spec,      td_bad_spec_adl,  "event=0x73,umask=0x0;event=0x00,umask=0x81", hybrid_big_small);

EVENT_ATTR_STR_HYBRID(topdown-retiring,      td_retiring_lnl,  "event=0xc2,umask=0x02;event=0x00,umask=0x80", hybrid_big_small);
EVENT_ATTR_STR_HYBRID(topdown-fe-bound,      td_fe_bound_lnl,  "event=0x9c,umask=0x01;event=0x00,umask=0x82", hybrid_big_small);
EVENT_ATTR_STR_HYBRID(topdown-be-bound,      td_be_bound_lnl,  "event=0xa4,umask=0x02;event=0x00,umask=0x83", hybrid_big_small);

static struct attribute *lnl_hybrid_events_attrs[] = {
	EVENT_PTR(slots_adl),
	EVENT_PTR(td_retiring_lnl),
	EVENT_PTR(td_bad_spec_adl),
	EVENT_PTR(td_fe_bound_lnl),
	EVENT_PTR(td_be_bound_lnl),
	EVENT_PTR(td_heavy_ops_adl),
	EVENT_PTR(td_br_mis_adl),
	EVENT_PTR(td_fetch_lat_adl),
	EVENT_PTR(td_mem_bound_adl),
	NULL
};
