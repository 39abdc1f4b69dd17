/* Excerpts, verbatim, of torvalds/linux arch/x86/events/intel/core.c
 * (SPDX-License-Identifier: GPL-2.0-only): the FIXED_EVENT_CONSTRAINT
 * lines of the event-constraint tables, the encodings (event | umask << 8)
 * the kernel may place on a fixed counter.  The first table is Ice Lake's
 * as read in the kernel tree (intel_icl_event_constraints, which Sapphire
 * Rapids' intel_spr_event_constraints repeats but for the old
 * INST_RETIRED.PREC_DIST); the second Skymont's, as added by "perf/x86:
 * Add Lunar Lake and Arrow Lake support" (Kan Liang), whose fixed
 * counters 4-6 take three of the Atom TopDown events.  A probe of
 * general-purpose counters (daemon/hw/budget.c) must use an event none of
 * these encodings covers, or the kernel counts it on a fixed counter and
 * the probe finds one counter too many. */

static struct event_constraint intel_icl_event_constraints[] = {
	FIXED_EVENT_CONSTRAINT(0x00c0, 0),	/* INST_RETIRED.ANY */
	FIXED_EVENT_CONSTRAINT(0x01c0, 0),	/* old INST_RETIRED.PREC_DIST */
	FIXED_EVENT_CONSTRAINT(0x0100, 0),	/* INST_RETIRED.PREC_DIST */
	FIXED_EVENT_CONSTRAINT(0x003c, 1),	/* CPU_CLK_UNHALTED.CORE */
	FIXED_EVENT_CONSTRAINT(0x0300, 2),	/* CPU_CLK_UNHALTED.REF */
	FIXED_EVENT_CONSTRAINT(0x0400, 3),	/* SLOTS */

static struct event_constraint intel_skt_event_constraints[] __read_mostly = {
	FIXED_EVENT_CONSTRAINT(0x00c0, 0), /* INST_RETIRED.ANY */
	FIXED_EVENT_CONSTRAINT(0x003c, 1), /* CPU_CLK_UNHALTED.CORE */
	FIXED_EVENT_CONSTRAINT(0x0300, 2), /* pseudo CPU_CLK_UNHALTED.REF */
	FIXED_EVENT_CONSTRAINT(0x013c, 2), /* CPU_CLK_UNHALTED.REF_TSC_P */
	FIXED_EVENT_CONSTRAINT(0x0073, 4), /* TOPDOWN_BAD_SPECULATION.ALL */
	FIXED_EVENT_CONSTRAINT(0x019c, 5), /* TOPDOWN_FE_BOUND.ALL */
	FIXED_EVENT_CONSTRAINT(0x02c2, 6), /* TOPDOWN_RETIRING.ALL */
	EVENT_CONSTRAINT_END
};
