/* Excerpt, verbatim, of torvalds/linux arch/x86/events/intel/core.c
 * (SPDX-License-Identifier: GPL-2.0-only) as changed by "perf/x86/intel:
 * Support Arrow Lake-H" (Kan Liang): the topdown-* attributes of Arrow
 * Lake-H's three core PMUs (intel_pmu_init(): case INTEL_ARROWLAKE_H,
 * td_attr = arl_h_hybrid_events_attrs, name = "arrowlake_h_hybrid"); each
 * string in PMU index order: cpu_atom's, cpu_core's, then cpu_lowpower's
 * (hybrid_tiny, intel_hybrid_pmu_type_map). */

/* The event string must be in PMU IDX order. */
EVENT_ATTR_STR_HYBRID(topdown-retiring,
		      td_retiring_arl_h,
		      "event=0xc2,umask=0x02;event=0x00,umask=0x80;event=0xc2,umask=0x0",
		      hybrid_big_small_tiny);
EVENT_ATTR_STR_HYBRID(topdown-bad-spec,
		      td_bad_spec_arl_h,
		      "event=0x73,umask=0x0;event=0x00,umask=0x81;event=0x73,umask=0x0",
		      hybrid_big_small_tiny);
EVENT_ATTR_STR_HYBRID(topdown-fe-bound,
		      td_fe_bound_arl_h,
		      "event=0x9c,umask=0x01;event=0x00,umask=0x82;event=0x71,umask=0x0",
		      hybrid_big_small_tiny);
EVENT_ATTR_STR_HYBRID(topdown-be-bound,
		      td_be_bound_arl_h,
		      "event=0xa4,umask=0x02;event=0x00,umask=0x83;event=0x74,umask=0x0",
		      hybrid_big_small_tiny);
