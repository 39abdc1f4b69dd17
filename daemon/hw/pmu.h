/* SPDX-License-Identifier: MIT */
/* pmu: discovery of the core PMU from sysfs and what it supports.
 *
 * Finds `cpu` (or `cpu_core` + `cpu_atom` on hybrid parts), reads its type,
 * caps/pmu_name, format/ and events/, turns event terms into
 * perf_event_attr config values through the format bit ranges, and decides
 * the TopDown level the hardware offers, or why there is none.
 * The term and format parsers are pure functions. */
#ifndef TOPDOWND_PMU_H
#define TOPDOWND_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "sysfs.h"
#include "topdown.h"
#include "uarch.h"

#define PMU_FORMAT_MAX 32
#define PMU_FORMAT_RANGES 4
#define PMU_NAME_MAX 64
#define PMU_REASON_MAX 512

/* One format/ file: "config:0-7", "config1:0-63", "config:0-7,32-35". */
struct pmu_format {
	char name[32];
	unsigned field; /* 0 = config, 1 = config1, 2 = config2 */
	unsigned n_ranges;
	struct {
		unsigned lo, hi;
	} ranges[PMU_FORMAT_RANGES];
};

struct pmu_formats {
	size_t n;
	struct pmu_format f[PMU_FORMAT_MAX];
};

struct pmu_encoding {
	uint64_t config[3]; /* config, config1, config2 */
};

int pmu_parse_format(const char *name, const char *text, struct pmu_format *out,
		     char *err, size_t errlen);
/* Encodes "event=N,umask=M" style terms (plus flag terms like "edge") into
 * config values with @formats.  Returns 0 or -EINVAL with @err set. */
int pmu_encode_terms(const struct pmu_formats *formats, const char *terms,
		     struct pmu_encoding *out, char *err, size_t errlen);

#define PMU_CORE_MAX 3

/* One core PMU (cpu, or cpu_core / cpu_atom on a hybrid part) and what it
 * offers. */
struct pmu_core {
	char name[PMU_NAME_MAX];
	uint32_t type;
	char pmu_name[PMU_NAME_MAX]; /* caps/pmu_name, "" if absent */
	/* CPUs the PMU covers: its `cpus` file, or every possible CPU. */
	bool has_cpus;
	struct cpuset cpus;
	const struct uarch *ua;     /* NULL: no TopDown here */
	unsigned level;             /* 0: no TopDown, 1: level 1, 2: level 1 and 2 */
	/* Its format/ files: how perf's terms encode on it (the events of
	 * the tree below level 2 are encoded with them, hw/depth.c). */
	struct pmu_formats formats;
	/* Per event of ua: whether it could be encoded, and how. */
	bool have[UA_EVENTS_MAX];
	struct pmu_encoding enc[UA_EVENTS_MAX];
	/* The CPU it counts: the host's (x86), or the MIDR of its first CPU
	 * (arm64, where a heterogeneous part has several). */
	bool have_cpuid;
	struct ua_cpuid cpuid;
	/* arm64: caps/slots (PMMIR_EL1.SLOTS), 0 if absent; whether its
	 * STALL_SLOT events need perf's correction (uarch.h). */
	unsigned slots;
	/* Where slots came from when caps/slots said 0 (a guest): Arm's
	 * published width (uarch.h ua_arm_slots); NULL: caps/slots. */
	const struct ua_arm_slots *slots_published;
	bool stall_minus_cycles;
	/* Why level is 0, or what is degraded: one line for operators. */
	char reason[PMU_REASON_MAX];
};

struct pmu_info {
	/* devices/system/cpu/modalias, when it names an x86 CPU; on arm64
	 * the MIDR of CPU 0. */
	bool have_cpuid;
	struct ua_cpuid cpuid;
	unsigned n_cores;
	struct pmu_core core[PMU_CORE_MAX];
	/* Why there is no core PMU at all (n_cores == 0). */
	char reason[PMU_REASON_MAX];
	/* The msr PMU (arch/x86/events/msr.c) and its TSC event's config,
	 * when the kernel has them (msr_type 0: none). */
	uint32_t msr_type;
	uint64_t msr_tsc;
	/* The firmware's NFIT table is there (persistent memory): perf's
	 * #has_pmem (tools/perf/util/expr.c has_pmem()). */
	bool has_pmem;
};

/* Fills @info from @sysfs.  Only fails (-errno) on allocation failure;
 * absent or unusable hardware is described by each core's level and
 * reason. */
int pmu_discover(const struct sysfs *sysfs, struct pmu_info *info);

/* The core PMU covering @cpu, or NULL. */
const struct pmu_core *pmu_core_of(const struct pmu_info *info, unsigned cpu);

/* What @core counts with because it is a guest's (Intel's alternate
 * formulas without PERF_METRICS, Arm's published slot width without
 * caps/slots), for its reason; "" otherwise. */
void pmu_guest_note(const struct pmu_core *core, char *buf, size_t len);

#endif
