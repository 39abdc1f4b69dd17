/* SPDX-License-Identifier: MIT */
/* cpuset: a fixed-size CPU bitmap and the kernel's cpulist text format
 * ("0-3,8,10-11"), as found in sysfs and in the `cpus` config key.
 * Parsing and formatting are pure functions over strings. */
#ifndef TOPDOWND_CPUSET_H
#define TOPDOWND_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Debian kernels are built with NR_CPUS=8192. */
#define CPUSET_MAX 8192

struct cpuset {
	uint64_t bits[CPUSET_MAX / 64];
};

void cpuset_zero(struct cpuset *set);
void cpuset_set(struct cpuset *set, unsigned cpu);
void cpuset_clear(struct cpuset *set, unsigned cpu);
bool cpuset_test(const struct cpuset *set, unsigned cpu);
unsigned cpuset_count(const struct cpuset *set);
bool cpuset_empty(const struct cpuset *set);
bool cpuset_equal(const struct cpuset *a, const struct cpuset *b);
void cpuset_and(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b);
void cpuset_andnot(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b);
void cpuset_or(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b);
/* Next member >= @from, or -1. */
int cpuset_next(const struct cpuset *set, unsigned from);
/* Highest member, or -1 when empty. */
int cpuset_last(const struct cpuset *set);

#define CPUSET_FOREACH(cpu, set) \
	for (int cpu = cpuset_next((set), 0); cpu >= 0; \
	     cpu = cpuset_next((set), (unsigned)cpu + 1))

/* Parses a cpulist ("", "5", "0-3,8"); surrounding whitespace is allowed.
 * On error returns -EINVAL or -ERANGE and writes a message naming the
 * offending part into @err. */
int cpuset_parse(const char *text, struct cpuset *out, char *err, size_t errlen);

/* Formats like the kernel (%*pbl).  Returns the length the full text needs
 * (snprintf semantics). */
size_t cpuset_format(const struct cpuset *set, char *buf, size_t len);

#endif
