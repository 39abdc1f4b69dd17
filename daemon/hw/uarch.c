/* SPDX-License-Identifier: MIT */
/* uarch: recognition from modalias and lookup in the per-vendor tables. */
#include "uarch.h"

#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uarch_tables.h"

/* The kernel prints "x86,ven%04Xfam%04Xmod%04X" (CPU_FEATURE_TYPEFMT) with
 * its X86_VENDOR_* numbers: 0 Intel, 2 AMD. */
static const char *const x86_vendors[] = { [0] = "GenuineIntel", [2] = "AuthenticAMD" };

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

int ua_parse_modalias(const char *text, struct ua_cpuid *out)
{
	static const char prefix[] = "cpu:type:x86,ven";
	unsigned vendor;
	const char *p;

	memset(out, 0, sizeof(*out));
	if (strncmp(text, prefix, sizeof(prefix) - 1) != 0)
		return -EINVAL;
	p = text + sizeof(prefix) - 1;
	if (hex4(p, &vendor) < 0 || strncmp(p + 4, "fam", 3) != 0 ||
	    hex4(p + 7, &out->family) < 0 || strncmp(p + 11, "mod", 3) != 0 ||
	    hex4(p + 14, &out->model) < 0 || (p[18] != ':' && p[18] != '\0'))
		return -EINVAL;
	if (vendor >= sizeof(x86_vendors) / sizeof(x86_vendors[0]) || !x86_vendors[vendor]) {
		/* As the modalias spells it: four hex digits fit. */
		snprintf(out->vendor, sizeof(out->vendor), "x86 vendor %04X", vendor);
		return -ENOTSUP;
	}
	snprintf(out->vendor, sizeof(out->vendor), "%s", x86_vendors[vendor]);
	return 0;
}

bool ua_modalias_is_arm64(const char *text)
{
	static const char prefix[] = "cpu:type:aarch64:";

	return strncmp(text, prefix, sizeof(prefix) - 1) == 0;
}

int ua_parse_midr(const char *text, struct ua_cpuid *out)
{
	char *end;
	unsigned long long midr;
	unsigned implementer;

	memset(out, 0, sizeof(*out));
	if (strncmp(text, "0x", 2) != 0)
		return -EINVAL;
	errno = 0;
	midr = strtoull(text, &end, 16);
	if (errno || end == text + 2 || (*end && *end != '\n') || midr > 0xffffffffULL)
		return -EINVAL;
	out->arm = true;
	out->midr = midr;
	implementer = (unsigned)(midr >> 24) & 0xff;
	/* arch/arm64/include/asm/cputype.h: ARM_CPU_IMP_ARM 0x41,
	 * ARM_CPU_IMP_NVIDIA 0x4E, ARM_CPU_IMP_AMPERE 0xC0. */
	if (implementer == 0x41)
		snprintf(out->vendor, sizeof(out->vendor), "ARM");
	else if (implementer == 0x4e)
		snprintf(out->vendor, sizeof(out->vendor), "NVIDIA");
	else if (implementer == 0xc0)
		snprintf(out->vendor, sizeof(out->vendor), "Ampere");
	else
		snprintf(out->vendor, sizeof(out->vendor), "implementer %02x", implementer);
	return 0;
}

/* MIDR_EL1's variant (23:20) and revision (3:0). */
#define MIDR_VERSION 0xf0000fULL

static unsigned midr_version(unsigned long long midr)
{
	return (unsigned)((midr >> 20) & 0xf) << 4 | (unsigned)(midr & 0xf);
}

bool ua_midr_matches(const char *map, unsigned long long midr)
{
	unsigned long long want = strtoull(map, NULL, 16);

	return (want & ~MIDR_VERSION) == (midr & ~MIDR_VERSION) &&
	       midr_version(midr) >= midr_version(want);
}

bool ua_stall_minus_cycles(const struct uarch *ua, unsigned long long midr)
{
	unsigned long long fix;

	if (!ua->stall_fix_midr)
		return false;
	fix = strtoull(ua->stall_fix_midr, NULL, 16);
	/* perf: not (strcmp_cpuid_str(fix) | strcmp_cpuid_str(fix's part) ^ 1) */
	return (fix & ~MIDR_VERSION) == (midr & ~MIDR_VERSION) && midr_version(midr) < midr_version(fix);
}

const struct ua_arm_slots *ua_arm_published_slots(unsigned long long midr)
{
	unsigned implementer = (unsigned)((midr >> 24) & 0xff), part = (unsigned)((midr >> 4) & 0xfff);

	for (size_t i = 0; i < ua_arm_slots_published_count; i++)
		if (ua_arm_slots_published[i].implementer == implementer &&
		    ua_arm_slots_published[i].part == part)
			return &ua_arm_slots_published[i];
	return NULL;
}

const struct ua_arm_slots *ua_arm_slots_table(size_t *count)
{
	*count = ua_arm_slots_published_count;
	return ua_arm_slots_published;
}

void ua_cpuid_format(const struct ua_cpuid *id, char *buf, size_t len)
{
	if (id->arm)
		snprintf(buf, len, "0x%016llx", id->midr);
	else
		snprintf(buf, len, "%s-%u-%X", id->vendor, id->family, id->model);
}

static bool has_model(const struct uarch *ua, unsigned model)
{
	for (unsigned i = 0; i < ua->n_models; i++)
		if (ua->models[i] == model)
			return true;
	return false;
}

bool ua_cpuid_matches(const char *pattern, const char *cpuid)
{
	regex_t re;
	regmatch_t m;
	bool hit;

	/* perf's strcmp_cpuid_str(): a match must start at 0 and span the
	 * whole string. */
	if (regcomp(&re, pattern, REG_EXTENDED) != 0)
		return false;
	hit = regexec(&re, cpuid, 1, &m, 0) == 0 && m.rm_so == 0 &&
	      (size_t)m.rm_eo == strlen(cpuid);
	regfree(&re);
	return hit;
}

/* perf takes the first mapfile.csv line that matches: a CPU without
 * TopDown listed before a pattern that would also match it (Zen 3 before
 * Zen 4) is not that pattern's. */
const struct ua_without *ua_lookup_without(const struct ua_cpuid *id)
{
	char cpuid[64];

	ua_cpuid_format(id, cpuid, sizeof(cpuid));
	for (size_t i = 0; i < ua_without_count(); i++) {
		const struct ua_without *w = ua_without_get(i);

		if (strcmp(w->vendor, id->vendor) != 0)
			continue;
		if (id->arm ? ua_midr_matches(w->cpuid_pattern, id->midr)
			    : ua_cpuid_matches(w->cpuid_pattern, cpuid))
			return w;
	}
	return NULL;
}

static bool recognises(const struct uarch *ua, const struct ua_cpuid *id)
{
	char cpuid[64];

	if (strcmp(ua->vendor, id->vendor) != 0)
		return false;
	if (id->arm) {
		for (unsigned i = 0; i < UA_MIDRS_MAX && ua->midrs[i]; i++)
			if (ua_midr_matches(ua->midrs[i], id->midr))
				return true;
		return false;
	}
	if (!ua->cpuid_pattern)
		return ua->family == id->family && has_model(ua, id->model);
	ua_cpuid_format(id, cpuid, sizeof(cpuid));
	return ua_cpuid_matches(ua->cpuid_pattern, cpuid);
}

const struct uarch *ua_lookup(const struct ua_cpuid *id, const char *pmu)
{
	if (ua_lookup_without(id))
		return NULL;
	for (size_t i = 0; i < ua_count(); i++) {
		const struct uarch *ua = ua_get(i);

		/* arm64 tables name no PMU: the kernel's names vary
		 * (armv8_pmuv3_0, armv9_neoverse_n2). */
		if (recognises(ua, id) && (!pmu || !ua->pmu || strcmp(ua->pmu, pmu) == 0))
			return ua;
	}
	return NULL;
}

const struct ua_without *ua_lookup_no_reference(const struct ua_cpuid *id, const char *pmu)
{
	char cpuid[64];

	if (id->arm)
		return NULL;
	ua_cpuid_format(id, cpuid, sizeof(cpuid));
	for (size_t i = 0; i < ua_intel_no_reference_count; i++) {
		const struct ua_without *w = &ua_intel_no_reference[i];

		if (strcmp(w->vendor, id->vendor) == 0 && ua_cpuid_matches(w->cpuid_pattern, cpuid) &&
		    (!w->pmu || (pmu && strcmp(w->pmu, pmu) == 0)))
			return w;
	}
	return NULL;
}

size_t ua_no_reference_count(void)
{
	return ua_intel_no_reference_count;
}

const struct ua_without *ua_no_reference_get(size_t i)
{
	return i < ua_intel_no_reference_count ? &ua_intel_no_reference[i] : NULL;
}

const struct uarch *ua_metrics_only(void)
{
	return &ua_intel_metrics_only;
}

const struct uarch *ua_intel_arch(void)
{
	return &ua_intel_arch_events;
}

const struct ua_event *ua_event_of(const struct uarch *ua, enum td_event var)
{
	for (unsigned i = 0; i < ua->n_events; i++)
		if (ua->events[i].var == var)
			return &ua->events[i];
	return NULL;
}

int ua_event_fixed(const struct ua_event *ev)
{
	static const char fixed[] = "Fixed counter ";

	if (!ev->counter)
		return ev->sysfs ? 3 : -1;
	/* arm64's cycle counter: cycles prefer it, the NMI watchdog holds it,
	 * as fixed counter 1 on Intel. */
	if (strcmp(ev->counter, "Cycle counter") == 0)
		return 1;
	if (strncmp(ev->counter, fixed, sizeof(fixed) - 1) == 0)
		return ev->counter[sizeof(fixed) - 1] - '0';
	return -1;
}

bool ua_event_gp_ok(const struct ua_event *ev)
{
	int f = ua_event_fixed(ev);

	/* The kernel extends a fixed counter's constraint to the
	 * general-purpose counters unless its code is a pseudo-encoding
	 * (event byte 0: intel_pmu_check_event_constraints,
	 * use_fixed_pseudo_encoding): fixed counters 0 and 1, and Skymont's
	 * 4-6 for the kernel's events/ that take them (their codes are the
	 * general-purpose events', intel_skt_event_constraints). */
	return f < 0 || f == 0 || f == 1 || (f >= 4 && ev->sysfs);
}

static unsigned highest_plus_one(const char *list)
{
	/* "0,1,2,3": the last number is the highest. */
	const char *last = strrchr(list, ',');

	return (unsigned)strtoul(last ? last + 1 : list, NULL, 10) + 1;
}

unsigned ua_gp_counters(const struct uarch *ua)
{
	unsigned best = 0;

	for (unsigned i = 0; i < ua->n_events; i++) {
		const char *c = ua->events[i].counter;

		unsigned n;

		if (!c || ua_event_fixed(&ua->events[i]) >= 0)
			continue;
		n = highest_plus_one(c);
		if (n > best)
			best = n;
	}
	return best ? best : ua->gp_counters;
}

unsigned ua_event_counters(const struct ua_event *ev, enum ua_mode mode)
{
	const char *c = mode == UA_MODE_NOSMT && ev->counter_htoff ? ev->counter_htoff : ev->counter;

	if (!c || ua_event_fixed(ev) >= 0)
		return UINT_MAX;
	return highest_plus_one(c);
}

/* Every vendor file's table, in the order lookups try them (Intel's
 * P-cores before the Skylake family and E-cores, as perf's mapfile.csv):
 * a new vendor file is one row here and one in uarch_tables.h. */
static const struct {
	const struct uarch *const *list;
	const size_t *count;
} tables[] = {
	{ ua_intel, &ua_intel_count },
	{ ua_skl, &ua_skl_count },
	{ ua_atom, &ua_atom_count },
	{ ua_amd, &ua_amd_count },
	{ ua_arm, &ua_arm_count },
};

static const struct {
	const struct ua_without *list;
	const size_t *count;
} withouts[] = {
	{ ua_amd_without, &ua_amd_without_count },
	{ ua_arm_without, &ua_arm_without_count },
};

size_t ua_count(void)
{
	size_t n = 0;

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		n += *tables[t].count;
	return n;
}

size_t ua_guest_count(void)
{
	return ua_intel_guest_count;
}

const struct uarch *ua_guest_get(size_t i)
{
	return i < ua_intel_guest_count ? ua_intel_guest[i] : NULL;
}

const struct uarch *ua_get(size_t i)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		if (i < *tables[t].count)
			return tables[t].list[i];
		i -= *tables[t].count;
	}
	return NULL;
}

size_t ua_without_count(void)
{
	size_t n = 0;

	for (size_t t = 0; t < sizeof(withouts) / sizeof(withouts[0]); t++)
		n += *withouts[t].count;
	return n;
}

const struct ua_without *ua_without_get(size_t i)
{
	for (size_t t = 0; t < sizeof(withouts) / sizeof(withouts[0]); t++) {
		if (i < *withouts[t].count)
			return &withouts[t].list[i];
		i -= *withouts[t].count;
	}
	return NULL;
}
