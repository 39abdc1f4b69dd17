/* Excerpt, verbatim, of torvalds/linux
 * tools/testing/selftests/kvm/include/x86/pmu.h at commit
 * 2922b595886575ebef46e65a0d4c8a857c5cd464 (SPDX-License-Identifier:
 * GPL-2.0-only; Copyright (C) 2023, Tencent, Inc.): the encoding macro and
 * the Intel architectural events with their CPUID.0AH EBX bit order.  The
 * five events after INTEL_ARCH_TOPDOWN_SLOTS came with the commit "KVM:
 * selftests: Validate more arch-events in pmu_counters_test" (Dapeng Mi,
 * 2025): "4 topdown level 1 metrics events and LBR inserts event that will
 * first show up in Intel's Clearwater Forest CPUs.  Detailed info about the
 * new events can be found in SDM section 21.2.7 "Pre-defined Architectural
 * Performance Events"." */

/*
 * Encode an eventsel+umask pair into event-select MSR format.  Note, this is
 * technically AMD's format, as Intel's format only supports 8 bits for the
 * event selector, i.e. doesn't use bits 24:16 for the selector.  But, OR-ing
 * in '0' is a nop and won't clobber the CMASK.
 */
#define RAW_EVENT(eventsel, umask) (((eventsel & 0xf00UL) << 24) |	\
				    ((eventsel) & 0xff) |		\
				    ((umask) & 0xff) << 8)

#define	INTEL_ARCH_CPU_CYCLES			RAW_EVENT(0x3c, 0x00)
#define	INTEL_ARCH_INSTRUCTIONS_RETIRED		RAW_EVENT(0xc0, 0x00)
#define	INTEL_ARCH_REFERENCE_CYCLES		RAW_EVENT(0x3c, 0x01)
#define	INTEL_ARCH_LLC_REFERENCES		RAW_EVENT(0x2e, 0x4f)
#define	INTEL_ARCH_LLC_MISSES			RAW_EVENT(0x2e, 0x41)
#define	INTEL_ARCH_BRANCHES_RETIRED		RAW_EVENT(0xc4, 0x00)
#define	INTEL_ARCH_BRANCHES_MISPREDICTED	RAW_EVENT(0xc5, 0x00)
#define	INTEL_ARCH_TOPDOWN_SLOTS		RAW_EVENT(0xa4, 0x01)
#define	INTEL_ARCH_TOPDOWN_BE_BOUND		RAW_EVENT(0xa4, 0x02)
#define	INTEL_ARCH_TOPDOWN_BAD_SPEC		RAW_EVENT(0x73, 0x00)
#define	INTEL_ARCH_TOPDOWN_FE_BOUND		RAW_EVENT(0x9c, 0x01)
#define	INTEL_ARCH_TOPDOWN_RETIRING		RAW_EVENT(0xc2, 0x02)
#define	INTEL_ARCH_LBR_INSERTS			RAW_EVENT(0xe4, 0x01)

/*
 * Note!  The order and thus the index of the architectural events matters as
 * support for each event is enumerated via CPUID using the index of the event.
 */
enum intel_pmu_architectural_events {
	INTEL_ARCH_CPU_CYCLES_INDEX,
	INTEL_ARCH_INSTRUCTIONS_RETIRED_INDEX,
	INTEL_ARCH_REFERENCE_CYCLES_INDEX,
	INTEL_ARCH_LLC_REFERENCES_INDEX,
	INTEL_ARCH_LLC_MISSES_INDEX,
	INTEL_ARCH_BRANCHES_RETIRED_INDEX,
	INTEL_ARCH_BRANCHES_MISPREDICTED_INDEX,
	INTEL_ARCH_TOPDOWN_SLOTS_INDEX,
	INTEL_ARCH_TOPDOWN_BE_BOUND_INDEX,
	INTEL_ARCH_TOPDOWN_BAD_SPEC_INDEX,
	INTEL_ARCH_TOPDOWN_FE_BOUND_INDEX,
	INTEL_ARCH_TOPDOWN_RETIRING_INDEX,
	INTEL_ARCH_LBR_INSERTS_INDEX,
	NR_INTEL_ARCH_EVENTS,
};
