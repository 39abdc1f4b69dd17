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

#define PMU_FORMAT_MAX 32
#define PMU_FORMAT_RANGES 4
#define PMU_NAME_MAX 64
#define PMU_REASON_MAX 320

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
/* Encodes "event=0x00,umask=0x80" (plus flag terms like "edge") into
 * config values with @formats.  Returns 0 or -EINVAL with @err set. */
int pmu_encode_terms(const struct pmu_formats *formats, const char *terms,
		     struct pmu_encoding *out, char *err, size_t errlen);

struct pmu_info {
	/* The core PMU; name[0] == '\0' when there is none. */
	char name[PMU_NAME_MAX];
	uint32_t type;
	char pmu_name[PMU_NAME_MAX]; /* caps/pmu_name, "" if absent */
	unsigned level;             /* 0: no TopDown, 1: L1 metrics, 2: L1 + L2 */
	enum td_formulas formulas;
	/* CPUs the core PMU covers: its `cpus` file, or every possible CPU. */
	bool has_cpus;
	struct cpuset cpus;
	bool have[TD_EV_COUNT];
	struct pmu_encoding enc[TD_EV_COUNT];
	/* Why level is 0, or what is degraded: one line for operators. */
	char reason[PMU_REASON_MAX];

	/* Hybrid parts: the other core type's PMU, whose CPUs are unsupported. */
	char other_name[PMU_NAME_MAX];
	struct cpuset other_cpus;
	char other_reason[PMU_REASON_MAX];
};

/* Fills @info from @sysfs.  Only fails (-errno) on allocation failure;
 * absent or unusable hardware is described by info->level and reason. */
int pmu_discover(const struct sysfs *sysfs, struct pmu_info *info);

#endif
