/* Excerpt, verbatim, of torvalds/linux arch/x86/events/intel/core.c as
 * changed by "perf/x86/intel: Add PMU support for Clearwater Forest"
 * (Dapeng Mi, Link:
 * https://lkml.kernel.org/r/20250415114428.341182-3-dapeng1.mi@linux.intel.com;
 * SPDX-License-Identifier: GPL-2.0-only): the events/ files the perf driver
 * gives the core PMU of Darkmont (Clearwater Forest), its topdown-* events
 * being the architectural TopDown events (kvm-x86-pmu.h beside this file),
 * and the Crestmont attribute it reuses for bad speculation. */

EVENT_ATTR_STR(topdown-retiring,       td_retiring_cmt,        "event=0x72,umask=0x0");
EVENT_ATTR_STR(topdown-bad-spec,       td_bad_spec_cmt,        "event=0x73,umask=0x0");

EVENT_ATTR_STR(topdown-fe-bound,       td_fe_bound_skt,        "event=0x9c,umask=0x01");
EVENT_ATTR_STR(topdown-retiring,       td_retiring_skt,        "event=0xc2,umask=0x02");
EVENT_ATTR_STR(topdown-be-bound,       td_be_bound_skt,        "event=0xa4,umask=0x02");

static struct attribute *skt_events_attrs[] = {
	EVENT_PTR(td_fe_bound_skt),
	EVENT_PTR(td_retiring_skt),
	EVENT_PTR(td_bad_spec_cmt),
	EVENT_PTR(td_be_bound_skt),
	NULL,
};

	case INTEL_ATOM_DARKMONT_X:
		intel_pmu_init_skt(NULL);
		intel_pmu_pebs_data_source_cmt();
		x86_pmu.pebs_latency_data = cmt_latency_data;
		x86_pmu.get_event_constraints = cmt_get_event_constraints;
		td_attr = skt_events_attrs;
		mem_attr = grt_mem_attrs;
		extra_attr = cmt_format_attr;
		pr_cont("Darkmont events, ");
		name = "darkmont";
		break;
