/* SPDX-License-Identifier: MIT */
/* uarch: everything topdownd knows about each microarchitecture, and the
 * only place that knows it: how a CPU is recognised (vendor, family and
 * model from devices/system/cpu/modalias, the core PMU directory), which
 * events it counts with which encodings, which TopDown levels and formulas
 * apply, and the perf metric each category follows.
 *
 * On arm64 the CPU is its MIDR_EL1 (devices/system/cpu/cpuN/regs/
 * identification/midr_el1) and the core PMU armv8_pmuv3_0 or the like.
 *
 * Every encoding and formula is taken from Linux perf's tables
 * (reference/perf-tables/, upstream files with their provenance); each
 * entry names the file and the event or metric it comes from, and
 * tests/integration/12-uarch-tables.t checks every entry against those files.  Events
 * the kernel exposes in sysfs (slots, topdown-*) are read from there at
 * run time: that is the kernel's own encoding. */
#ifndef TOPDOWND_UARCH_H
#define TOPDOWND_UARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "topdown.h"

#define UA_EVENTS_MAX 32
/* Fixed counters an event may name: 0-3, and Skymont's 4-6. */
#define UA_FIXED_MAX 7
#define UA_MODELS_MAX 8
#define UA_DIRS_MAX 2
#define UA_MIDRS_MAX 4

/* Which arithmetic of tma.c turns this microarchitecture's counts into
 * categories. */
enum ua_formulas {
	UA_FORMULAS_GLC,      /* Golden Cove and later PERF_METRICS: SPR, EMR, GNR, ADL P-cores */
	UA_FORMULAS_ICL,      /* Ice Lake PERF_METRICS: + 5 * RECOVERY_CYCLES on backend bound;
			       * level 2 from general-purpose counters */
	UA_FORMULAS_METRICS,  /* PERF_METRICS alone, for a model not in these tables */
	UA_FORMULAS_SKL,      /* Skylake to Cascade Lake: general-purpose counters, 4-wide,
			       * core-scoped with SMT (AnyThread) */
	UA_FORMULAS_GRT,      /* Gracemont E-cores: TOPDOWN_*.ALL over 5 * cycles */
	UA_FORMULAS_CMT,      /* Crestmont E-cores: TOPDOWN_*.ALL_P over 6 * cycles */
	UA_FORMULAS_ZEN,      /* AMD Zen 4 and later: dispatch slots, W * ls_not_halted_cyc */
	UA_FORMULAS_NEOVERSE_V1, /* Neoverse V1: sbsa.json with V1's 8-wide frontend and
				  * bad speculation, BR_MIS_PRED corrections */
	UA_FORMULAS_NEOVERSE_N2V2, /* Neoverse N2/V2: sbsa.json over #slots, the N2
				    * stall-slot fix, BR_MIS_PRED corrections */
	UA_FORMULAS_NVIDIA_T410, /* NVIDIA Olympus: stall slots over the counted
				  * CPU_SLOT, bad speculation the rest */
	UA_FORMULAS_AMPEREONE, /* AmpereOne (M): retired and misspeculated ops over
				* #slots, sbsa.json's backend bound, frontend bound
				* the rest */
	UA_FORMULAS_NEOVERSE_V3N3, /* Neoverse V3/N3: frontend and bad speculation over
				    * the core's own width with STALL_FRONTEND_FLUSH,
				    * sbsa.json's backend and retiring over #slots */
	UA_FORMULAS_GLC_ALT,  /* Golden Cove without PERF_METRICS (a guest): Intel's alternate
			       * TMA formulas over TOPDOWN.SLOTS_P */
	UA_FORMULAS_ICL_ALT,  /* Ice Lake without PERF_METRICS: the same, with Ice Lake's
			       * recovery slots and level-2 events */
	UA_FORMULAS_ARCH,     /* Intel's architectural TopDown events on general-purpose
			       * counters: PERF_METRICS' level 1 over their sum */
	UA_FORMULAS_COUNT,
};

/* How the SMT threads of a core are counted (perf's #SMT_on and
 * #core_wide), and so which events a formula reads. */
enum ua_mode {
	UA_MODE_NOSMT = 1u << 0, /* SMT off: thread and core are one */
	UA_MODE_SMT = 1u << 1,   /* SMT on, every thread of each core counted: AnyThread forms */
	UA_MODE_EBS = 1u << 2,   /* SMT on, some threads of a core not counted: perf's
				  * per-thread estimate of the core's clocks */
	UA_MODE_ALL = UA_MODE_NOSMT | UA_MODE_SMT | UA_MODE_EBS,
};

struct ua_event {
	enum td_event var;  /* the formula variable it counts */
	const char *name;   /* perf's name; "BASE,cmask=1,edge=1" for a table event with filters */
	const char *sysfs;  /* events/ file of the core PMU the kernel encodes it in, or NULL */
	const char *terms;  /* perf's encoding when not in sysfs (jevents.py rules), or NULL */
	const char *table;  /* the perf table file the event comes from */
	unsigned level;     /* counted from this TopDown level on */
	bool refine;        /* a refinement event of model perf (not of model hardware) */
	/* The table's "Counter": "0,1,2,3" (general-purpose counters it may
	 * use), "Fixed counter 1"; NULL for the kernel's PERF_METRICS events
	 * (fixed counter 3).  On arm64, whose tables list no counters,
	 * "Cycle counter" for CPU_CYCLES, which the kernel puts on the
	 * dedicated cycle counter when it is free (fixed counter 1's part). */
	const char *counter;
	/* The table's "CounterHTOff" where it differs from Counter (Skylake
	 * family: the counters it may use when SMT is off), else NULL. */
	const char *counter_htoff;
	unsigned modes;     /* enum ua_mode bits it is counted in; 0: all */
};

/* The perf metric a category follows, verbatim, for people and tests. */
struct ua_metric {
	enum td_cat cat;
	const char *perf_name; /* "tma_frontend_bound" */
	const char *expr;      /* its MetricExpr */
	const char *table;     /* the metrics file */
};

/* Which threads of a core ran when (issue 43): the events of perf's
 * tma_info_system_smt_2t_utilization, and the fixed counter that counts a
 * thread's unhalted time at the TSC's rate.  How the core's "any thread
 * ran" is counted differs: */
enum ua_smt_any {
	/* CPU_CLK_UNHALTED.REF_DISTRIBUTED (Ice Lake on): the core's active
	 * crystal cycles shared between its active threads; the threads'
	 * sum is the core's. */
	UA_SMT_DISTRIBUTED,
	/* CPU_CLK_UNHALTED.REF_XCLK_ANY (AnyThread, Skylake-SP and Cascade
	 * Lake): the core's active crystal cycles, on each thread. */
	UA_SMT_XCLK_ANY,
};

enum { UA_SMT_REF_TSC, UA_SMT_ONE_THREAD, UA_SMT_ANY, UA_SMT_EVENTS };

struct ua_smt {
	enum ua_smt_any any;
	/* CPU_CLK_UNHALTED.REF_TSC (fixed counter 2), ONE_THREAD_ACTIVE,
	 * and REF_DISTRIBUTED or REF_XCLK_ANY. */
	struct ua_event events[UA_SMT_EVENTS];
	const char *metric;    /* perf's name of the metric, its expression */
	const char *expr;      /* verbatim, and the file */
	const char *table;
};

/* perf's SMT metrics of a core whose slot count tells its mode (NVIDIA
 * Olympus, issue 44): CPU_SLOT counts the core's whole width a cycle in ST
 * mode and half of it in SMT mode (perf's general.json), so that a
 * thread's CPU_SLOT over its CPU_CYCLES tells the share of its cycles it
 * ran alone.  Each metric verbatim, from @table; the fraction is a metric
 * the other two read by its name. */
enum { UA_SMT_MODE_FRACTION, UA_SMT_MODE_ST, UA_SMT_MODE_SMT, UA_SMT_MODE_METRICS };

struct ua_smt_mode {
	const char *metric[UA_SMT_MODE_METRICS];
	const char *expr[UA_SMT_MODE_METRICS];
	const char *table;
};

struct uarch {
	const char *id;        /* perf's table directory: "sapphirerapids", "arm/neoverse-v1" */
	const char *arch;      /* perf's architecture directory: "x86" (NULL) or "arm64" */
	/* Other table directories perf picks for the same models (by
	 * stepping, which sysfs does not tell): their events and metrics are
	 * the same, a test checks it. */
	const char *also[UA_DIRS_MAX];
	const char *name;      /* for people: "Sapphire Rapids" */
	const char *vendor;    /* modalias vendor as perf spells it: "GenuineIntel" */
	unsigned family;
	unsigned n_models;
	unsigned char models[UA_MODELS_MAX]; /* from perf's x86/mapfile.csv */
	/* Or perf's own mapfile.csv pattern, matched as perf matches it
	 * (POSIX extended, the whole "AuthenticAMD-25-11"), where a family
	 * is recognised by pattern rather than by a list of models; the
	 * microarchitectures of a vendor are tried in mapfile order. */
	const char *cpuid_pattern;
	/* arm64: perf's mapfile.csv MIDRs ("0x00000000410fd4f0"), matched as
	 * perf matches them (part number equal, variant and revision at
	 * least the listed ones). */
	const char *midrs[UA_MIDRS_MAX];
	/* arm64: the slots per cycle are the PMU's caps/slots (perf's #slots). */
	bool slots_from_caps;
	/* arm64: parts of this MIDR's part number at a lower variant or
	 * revision count a slot per cycle too many in STALL_SLOT and
	 * STALL_SLOT_FRONTEND (perf's strcmp_cpuid_str() test), or NULL. */
	const char *stall_fix_midr;
	const char *pmu;       /* the core PMU directory it counts on */
	enum ua_formulas formulas;
	/* The pipeline width the formulas multiply cycles by (perf's
	 * tma_info_thread_slots = 4 * ..., 5 * INT_MISC.CLEARS_COUNT...);
	 * 0 where the formulas use none. */
	unsigned width;
	const char *width_source; /* the metric and file it comes from */
	/* With SMT on, level 1 and 2 are core-scoped quantities (perf's
	 * AnyThread forms): a CPU's figures are its share of its core. */
	bool core_scoped;
	unsigned max_level;    /* what topdownd computes for it */
	unsigned n_events;
	const struct ua_event *events;
	unsigned n_metrics;
	const struct ua_metric *metrics;
	/* For tables without Counter fields (AMD's): the general-purpose
	 * counters of the core PMU, as the kernel's driver sets them, and
	 * where that figure comes from. */
	unsigned gp_counters;
	const char *gp_source;
	/* The microarchitecture counting this model where the kernel shows
	 * no PERF_METRICS (a virtual machine), or NULL; on that entry, the
	 * one it stands in for. */
	const struct uarch *guest_alt;
	const struct uarch *alt_of;
	/* The PMU has no fixed counters: the NMI watchdog's cycles event
	 * takes a general-purpose counter. */
	bool watchdog_takes_gp;
	/* Its SMT activity events, or NULL. */
	const struct ua_smt *smt;
	/* perf's SMT mode metrics, read from the level-1 group's counts, or
	 * NULL. */
	const struct ua_smt_mode *smt_mode;
};

/* A CPU perf has tables for, but no TopDown metrics in them (AMD Zen 1 to
 * 3): recognised so that the reason names it. */
struct ua_without {
	const char *vendor;
	const char *arch;          /* "x86" (NULL) or "arm64" */
	const char *cpuid_pattern; /* perf's mapfile.csv pattern (x86), MIDR (arm64) */
	const char *table;         /* perf's directory for it, NULL: perf has none */
	const char *name;
	const char *why;
	/* The core PMU of a hybrid part it is about (its Unit in perf's
	 * tables), NULL for every one. */
	const char *pmu;
};

/* What devices/system/cpu/modalias (x86) or midr_el1 (arm64) says about
 * the CPU. */
struct ua_cpuid {
	char vendor[16];       /* "GenuineIntel", "AuthenticAMD", "ARM" */
	unsigned family, model;
	bool arm;              /* arm64: midr names the CPU */
	unsigned long long midr;
};

/* Parses "cpu:type:x86,ven0000fam0006mod008F:feature:...".  Returns 0, or
 * -EINVAL (not x86, malformed) or -ENOTSUP (a vendor perf has no tables
 * for). */
int ua_parse_modalias(const char *text, struct ua_cpuid *out);

/* Whether @text is an arm64 modalias ("cpu:type:aarch64:..."). */
bool ua_modalias_is_arm64(const char *text);

/* Parses midr_el1 ("0x00000000410fd4f1").  Returns 0 or -EINVAL. */
int ua_parse_midr(const char *text, struct ua_cpuid *out);

/* perf's arm64 strcmp_cpuid_str(): @midr is the part @map names, at its
 * variant and revision or later. */
bool ua_midr_matches(const char *map, unsigned long long midr);

/* arm64: whether @ua's stall-slot correction applies to @midr (a part of
 * stall_fix_midr's part number before its variant and revision). */
bool ua_stall_minus_cycles(const struct uarch *ua, unsigned long long midr);

/* arm64: an Arm core's pipeline slots per cycle as Arm publishes them (its
 * telemetry specification's product_configuration.num_slots), for a PMU
 * whose caps/slots says 0: a KVM guest reads PMMIR_EL1 as zero. */
struct ua_arm_slots {
	unsigned implementer;  /* MIDR_EL1 bits 31:24 (0x41: Arm) */
	unsigned part;         /* MIDR_EL1 bits 15:4 (PartNum) */
	unsigned slots;
	const char *name;
	const char *source;    /* the file it comes from (reference/arm-telemetry) */
};

/* The published slot width of the part @midr is (any variant and
 * revision), or NULL. */
const struct ua_arm_slots *ua_arm_published_slots(unsigned long long midr);

/* Every entry of that table (uarch_dump). */
const struct ua_arm_slots *ua_arm_slots_table(size_t *count);

/* "GenuineIntel-6-8F", perf's CPUID string without the stepping; on
 * arm64 the MIDR as perf prints it, "0x00000000410fd4f1". */
void ua_cpuid_format(const struct ua_cpuid *id, char *buf, size_t len);

/* The microarchitecture of @id counting on core PMU @pmu, or NULL. */
const struct uarch *ua_lookup(const struct ua_cpuid *id, const char *pmu);

/* A CPU perf knows without TopDown metrics, or NULL. */
const struct ua_without *ua_lookup_without(const struct ua_cpuid *id);

/* Whether @pattern (perf's mapfile.csv syntax) matches the whole of
 * @cpuid ("AuthenticAMD-25-11"). */
bool ua_cpuid_matches(const char *pattern, const char *cpuid);

/* PERF_METRICS without refinement, for a core PMU with slots whose model
 * is not in the tables: the hardware's own TopDown, nothing guessed. */
const struct uarch *ua_metrics_only(void);

/* A model perf's tables know, with its events, but give no TopDown
 * metrics (Panther Lake, Clearwater Forest): topdownd counts it with what
 * the kernel exposes (ua_metrics_only, ua_intel_arch) and says there is
 * no perf reference for it.  NULL for any other. */
const struct ua_without *ua_lookup_no_reference(const struct ua_cpuid *id, const char *pmu);
size_t ua_no_reference_count(void);
const struct ua_without *ua_no_reference_get(size_t i);

/* Intel's architectural TopDown level-1 events (SDM "Pre-defined
 * Architectural Performance Events"), for a core PMU whose events/ shows
 * them as topdown-* and whose model is not in the tables: Clearwater
 * Forest's Darkmont cores, on the host or in a guest. */
const struct uarch *ua_intel_arch(void);

/* The event of @ua standing for @var, or NULL. */
const struct ua_event *ua_event_of(const struct uarch *ua, enum td_event var);

/* The fixed counter @ev may count on: 3 for the kernel's PERF_METRICS
 * events (slots and the metrics share it), N for "Fixed counter N", -1
 * for general-purpose counters only. */
int ua_event_fixed(const struct ua_event *ev);

/* Whether @ev may also take a general-purpose counter ("Fixed counter 1"
 * events may: the kernel extends those constraints to the general-purpose
 * counters; slots, the metrics and fixed counter 2 may not). */
bool ua_event_gp_ok(const struct ua_event *ev);

/* The highest general-purpose counter an event of @ua may use, plus one
 * (its Counter fields: "0,1,2,3" -> 4); the driver's figure
 * (gp_counters) when the table lists none. */
unsigned ua_gp_counters(const struct uarch *ua);

/* The general-purpose counters @ev may count on in @mode (its table's
 * Counter, or CounterHTOff with SMT off), as the highest plus one: "0,1,2,3"
 * -> 4; UINT_MAX when the table restricts nothing (no list, a fixed
 * counter's event on a general-purpose one). */
unsigned ua_event_counters(const struct ua_event *ev, enum ua_mode mode);

/* Every microarchitecture in the tables (tests, documentation). */
size_t ua_count(void);
const struct uarch *ua_get(size_t i);
/* The entries for guests without PERF_METRICS (each some ua_get()'s
 * guest_alt), which lookups never return. */
size_t ua_guest_count(void);
const struct uarch *ua_guest_get(size_t i);
/* Every CPU known to have no TopDown in perf (tests, documentation). */
size_t ua_without_count(void);
const struct ua_without *ua_without_get(size_t i);

#endif
