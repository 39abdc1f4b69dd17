/* SPDX-License-Identifier: MIT */
/* pmu: core PMU discovery, format and event-term parsing. */
#include "pmu.h"
#include "tma.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEVICES "bus/event_source/devices"

static int parse_unsigned(const char **p, unsigned *out)
{
	unsigned long v = 0;
	const char *s = *p;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s++ - '0');
		if (v > 63)
			return -ERANGE;
	}
	*out = (unsigned)v;
	*p = s;
	return 0;
}

int pmu_parse_format(const char *name, const char *text, struct pmu_format *out,
		     char *err, size_t errlen)
{
	const char *p = text;

	memset(out, 0, sizeof(*out));
	if (strlen(name) >= sizeof(out->name)) {
		snprintf(err, errlen, "format name \"%.40s\" too long", name);
		return -EINVAL;
	}
	strcpy(out->name, name);
	if (strncmp(p, "config2:", 8) == 0) {
		out->field = 2;
		p += 8;
	} else if (strncmp(p, "config1:", 8) == 0) {
		out->field = 1;
		p += 8;
	} else if (strncmp(p, "config:", 7) == 0) {
		out->field = 0;
		p += 7;
	} else {
		snprintf(err, errlen, "format %s: \"%.40s\" does not start with config:, config1: or config2:",
			 name, text);
		return -EINVAL;
	}
	for (;;) {
		unsigned lo, hi;

		if (out->n_ranges == PMU_FORMAT_RANGES) {
			snprintf(err, errlen, "format %s: more than %d bit ranges", name,
				 PMU_FORMAT_RANGES);
			return -EINVAL;
		}
		if (parse_unsigned(&p, &lo) < 0) {
			snprintf(err, errlen, "format %s: bad bit number in \"%.40s\"", name, text);
			return -EINVAL;
		}
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_unsigned(&p, &hi) < 0 || hi < lo) {
				snprintf(err, errlen, "format %s: bad bit range in \"%.40s\"", name, text);
				return -EINVAL;
			}
		}
		out->ranges[out->n_ranges].lo = lo;
		out->ranges[out->n_ranges].hi = hi;
		out->n_ranges++;
		if (*p == '\0')
			return 0;
		if (*p != ',') {
			snprintf(err, errlen, "format %s: unexpected \"%.20s\"", name, p);
			return -EINVAL;
		}
		p++;
	}
}

static const struct pmu_format *find_format(const struct pmu_formats *formats,
					    const char *name, size_t len)
{
	for (size_t i = 0; i < formats->n; i++)
		if (strlen(formats->f[i].name) == len &&
		    memcmp(formats->f[i].name, name, len) == 0)
			return &formats->f[i];
	return NULL;
}

/* Scatters @value over the format's bit ranges, low bits first, as the
 * kernel's pmu_format parsing in perf does (perf_pmu__format_pack). */
static int pack(const struct pmu_format *f, uint64_t value, struct pmu_encoding *out)
{
	unsigned shift = 0;

	for (unsigned i = 0; i < f->n_ranges; i++) {
		unsigned width = f->ranges[i].hi - f->ranges[i].lo + 1;
		uint64_t mask = width == 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
		uint64_t part = shift < 64 ? (value >> shift) & mask : 0;

		out->config[f->field] &= ~(mask << f->ranges[i].lo);
		out->config[f->field] |= part << f->ranges[i].lo;
		shift += width;
	}
	if (shift < 64 && (value >> shift) != 0)
		return -ERANGE;
	return 0;
}

int pmu_encode_terms(const struct pmu_formats *formats, const char *terms,
		     struct pmu_encoding *out, char *err, size_t errlen)
{
	const char *p = terms;

	memset(out, 0, sizeof(*out));
	while (*p) {
		const char *name = p, *eq, *end;
		uint64_t value = 1;
		size_t len;

		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		len = (size_t)((eq ? eq : end) - name);
		if (len == 0) {
			snprintf(err, errlen, "empty term in \"%.60s\"", terms);
			return -EINVAL;
		}
		if (eq) {
			char num[32], *numend;
			size_t nlen = (size_t)(end - eq - 1);

			if (nlen == 0 || nlen >= sizeof(num) || !isdigit((unsigned char)eq[1])) {
				snprintf(err, errlen, "bad value for term \"%.*s\" in \"%.60s\"",
					 (int)len, name, terms);
				return -EINVAL;
			}
			memcpy(num, eq + 1, nlen);
			num[nlen] = '\0';
			errno = 0;
			value = strtoull(num, &numend, 0);
			if (errno || *numend) {
				snprintf(err, errlen, "bad value for term \"%.*s\" in \"%.60s\"",
					 (int)len, name, terms);
				return -EINVAL;
			}
		}
		if (len == 6 && memcmp(name, "config", 6) == 0) {
			out->config[0] = value;
		} else if (len == 7 && memcmp(name, "config1", 7) == 0) {
			out->config[1] = value;
		} else if (len == 7 && memcmp(name, "config2", 7) == 0) {
			out->config[2] = value;
		} else {
			const struct pmu_format *f = find_format(formats, name, len);

			if (!f) {
				snprintf(err, errlen, "unknown term \"%.*s\" (no format/%.*s file)",
					 (int)len, name, (int)len, name);
				return -EINVAL;
			}
			if (pack(f, value, out) < 0) {
				snprintf(err, errlen, "value 0x%" PRIx64 " does not fit format %s",
					 value, f->name);
				return -ERANGE;
			}
		}
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			snprintf(err, errlen, "trailing comma in \"%.60s\"", terms);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- discovery ---- */

struct format_ctx {
	const struct sysfs *sysfs;
	const char *pmu;
	struct pmu_formats *formats;
};

static int add_format(const char *name, void *userdata)
{
	struct format_ctx *ctx = userdata;
	struct pmu_format *f;
	char path[512], text[128], err[128];

	if (ctx->formats->n == PMU_FORMAT_MAX)
		return 0;
	snprintf(path, sizeof(path), DEVICES "/%s/format/%s", ctx->pmu, name);
	if (sysfs_read(ctx->sysfs, path, text, sizeof(text)) < 0)
		return 0;
	f = &ctx->formats->f[ctx->formats->n];
	/* A format we cannot parse only matters if an event uses it, which
	 * then fails to encode and says so. */
	if (pmu_parse_format(name, text, f, err, sizeof(err)) == 0)
		ctx->formats->n++;
	return 0;
}

/* arm64: the MIDR of @cpu, as perf reads it for a PMU's first CPU. */
static bool read_midr(const struct sysfs *sysfs, unsigned cpu, struct ua_cpuid *out)
{
	char path[128], text[64];

	snprintf(path, sizeof(path), "devices/system/cpu/cpu%u/regs/identification/midr_el1", cpu);
	return sysfs_read(sysfs, path, text, sizeof(text)) > 0 && ua_parse_midr(text, out) == 0;
}

/* arm64's core PMUs, as drivers/perf/arm_pmuv3.c names them: armv8_pmuv3_0
 * (ACPI), armv8_cortex_a76, armv9_neoverse_n2 (device tree). */
static int add_arm_pmu(const char *name, void *userdata)
{
	struct pmu_info *info = userdata;

	if (strncmp(name, "armv8_", 6) != 0 && strncmp(name, "armv9_", 6) != 0)
		return 0;
	if (info->n_cores == PMU_CORE_MAX || strlen(name) >= PMU_NAME_MAX)
		return 0;
	strcpy(info->core[info->n_cores++].name, name);
	return 0;
}

static int core_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pmu_core *)a)->name, ((const struct pmu_core *)b)->name);
}

/* caps/slots: "0x%08x" (PMMIR_EL1.SLOTS); 0 when absent or unreadable. */
static unsigned read_slots(const struct sysfs *sysfs, const char *pmu)
{
	char path[256], text[64], *end;
	unsigned long v;

	snprintf(path, sizeof(path), DEVICES "/%s/caps/slots", pmu);
	if (sysfs_read(sysfs, path, text, sizeof(text)) <= 0)
		return 0;
	errno = 0;
	v = strtoul(text, &end, 0);
	if (errno || end == text || (*end && *end != '\n') || v > 64)
		return 0;
	return (unsigned)v;
}

static void describe_no_topdown(const struct sysfs *sysfs, struct pmu_core *core)
{
	char path[256], cpuid[64] = "an unknown CPU";

	snprintf(path, sizeof(path), DEVICES "/%s/events/topdown-total-slots", core->name);
	const struct ua_without *without = core->have_cpuid ? ua_lookup_without(&core->cpuid) : NULL;
	const struct ua_without *nr = core->have_cpuid ? ua_lookup_no_reference(&core->cpuid, core->name) : NULL;

	if (core->have_cpuid)
		ua_cpuid_format(&core->cpuid, cpuid, sizeof(cpuid));
	if (nr && nr->pmu) {
		/* A core type perf has no TopDown for, whose topdown-* events
		 * are its own and not the architectural ones: counting them
		 * would be a guess at what they count. */
		str_printf(core->reason, sizeof(core->reason),
			   "no perf reference for this model: %s (x86/%s): %s; %s of %s shows topdown-* events of its "
			   "own, not the architectural ones: not counted",
			   nr->name, nr->table, nr->why, core->name, cpuid);
	} else if (without) {
		str_printf(core->reason, sizeof(core->reason), "%s is %s (perf's table %s): %s", cpuid,
			   without->name, without->table, without->why);
	} else if (strcmp(core->name, "cpu_atom") == 0) {
		str_printf(core->reason, sizeof(core->reason),
			   "cpu_atom (E-core) of %s: not a microarchitecture topdownd has TopDown tables for (Gracemont and Crestmont are)",
			   cpuid);
	} else if (sysfs_exists(sysfs, path)) {
		str_printf(core->reason, sizeof(core->reason),
			   "%s (pmu_name %s) is older than Skylake or not in topdownd's tables: TopDown needs Skylake or later",
			   cpuid, core->pmu_name[0] ? core->pmu_name : "unknown");
	} else if (core->have_cpuid && strcmp(core->cpuid.vendor, "GenuineIntel") != 0) {
		str_printf(core->reason, sizeof(core->reason),
			   "%s (core PMU %s) is not a microarchitecture topdownd has TopDown tables for",
			   cpuid, core->name);
	} else {
		str_printf(core->reason, sizeof(core->reason),
			   "core PMU %s (pmu_name %s) of %s is not a microarchitecture topdownd has TopDown tables for",
			   core->name, core->pmu_name[0] ? core->pmu_name : "unknown", cpuid);
	}
}

/* Whether the core PMU's events/ shows topdown-retiring, -bad-spec,
 * -fe-bound and -be-bound as Intel's architectural TopDown events: the
 * kernel lists them where the CPU has them (Darkmont), and hides its
 * PERF_METRICS events of the same names where the model has no
 * PERF_METRICS (a guest), so their encodings decide. */
static bool shows_arch_topdown(const struct sysfs *sysfs, const struct pmu_formats *formats,
			       const char *pmu)
{
	const struct uarch *ua = ua_intel_arch();
	char path[256], text[128], err[160];

	for (unsigned i = 0; i < ua->n_events; i++) {
		const struct ua_event *ev = &ua->events[i];
		struct pmu_encoding shown = { { 0 } }, arch = { { 0 } };

		if (ev->var == TD_EV_CYCLES)
			continue;
		snprintf(path, sizeof(path), DEVICES "/%s/events/%s", pmu, ev->name);
		/* The same configuration through the PMU's own format, however
		 * the kernel spells it. */
		if (sysfs_read(sysfs, path, text, sizeof(text)) <= 0 ||
		    pmu_encode_terms(formats, text, &shown, err, sizeof(err)) < 0 ||
		    pmu_encode_terms(formats, ev->terms, &arch, err, sizeof(err)) < 0 ||
		    memcmp(&shown, &arch, sizeof(shown)) != 0)
			return false;
	}
	return true;
}

/* The events/ name the arm64 PMU driver gives a PMUv3 common event: its
 * perf name in lower case ("STALL_SLOT" -> "stall_slot"). */
static const char *arm_sysfs_name(const char *perf_name, char *buf, size_t len)
{
	size_t i;

	for (i = 0; perf_name[i] && perf_name[i] != ',' && i + 1 < len; i++)
		buf[i] = (char)(perf_name[i] >= 'A' && perf_name[i] <= 'Z' ? perf_name[i] - 'A' + 'a'
									  : perf_name[i]);
	buf[i] = '\0';
	return buf;
}

static bool arm_event_listed(const struct sysfs *sysfs, const char *pmu, const char *perf_name)
{
	char name[64], path[512], text[128];

	snprintf(path, sizeof(path), DEVICES "/%s/events/%s", pmu,
		 arm_sysfs_name(perf_name, name, sizeof(name)));
	return sysfs_read(sysfs, path, text, sizeof(text)) >= 0;
}

/* Whether the arm64 PMU driver can list event @terms in events/ at all:
 * it has attributes for the PMUv3 common events only (0x0000-0x003f and
 * 0x4000-0x403f, shown when PMCEID says the CPU implements them:
 * drivers/perf/arm_pmuv3.c, armv8pmu_event_attr_is_visible).  An
 * IMPLEMENTATION DEFINED event (Neoverse V3's STALL_FRONTEND_FLUSH,
 * 0x8162) is never listed, so its absence says nothing. */
static bool arm_listable(const char *terms)
{
	unsigned long code;

	if (strncmp(terms, "event=", 6) != 0)
		return true;
	code = strtoul(terms + 6, NULL, 0);
	return code < 0x40 || (code >= 0x4000 && code < 0x4040);
}

/* Encodes each event of the core's microarchitecture: from the kernel's
 * events/ file when it has one, else from perf's encoding. */
static void encode_events(const struct sysfs *sysfs, const struct pmu_formats *formats,
			  struct pmu_core *core)
{
	char path[512], text[256], err[160];

	for (unsigned i = 0; i < core->ua->n_events; i++) {
		const struct ua_event *ev = &core->ua->events[i];
		const char *terms = ev->terms;

		if (ev->sysfs) {
			snprintf(path, sizeof(path), DEVICES "/%s/events/%s", core->name, ev->sysfs);
			if (sysfs_read(sysfs, path, text, sizeof(text)) < 0)
				continue;
			terms = text;
		}
		if (!terms)
			continue;
		/* arm64: the kernel lists a PMUv3 common event in events/ only
		 * when the CPU says it implements it (PMCEID;
		 * drivers/perf/arm_pmuv3.c: armv8pmu_event_attr_is_visible).  An
		 * unlisted one still opens and counts 0 (armpmu_map_raw_event
		 * does not check): wrong figures, so it is taken as absent. */
		if (core->ua->arch && strcmp(core->ua->arch, "arm64") == 0 && !ev->sysfs && arm_listable(terms) &&
		    !arm_event_listed(sysfs, core->name, ev->name)) {
			if (!ev->refine && !core->reason[0])
				str_printf(core->reason, sizeof(core->reason),
					   "core PMU %s does not list events/%s: the CPU (or its hypervisor) does not "
					   "implement %s, which perf's TopdownL1 needs",
					   core->name, arm_sysfs_name(ev->name, text, sizeof(text)), ev->name);
			continue;
		}
		if (pmu_encode_terms(formats, terms, &core->enc[i], err, sizeof(err)) < 0) {
			if (!ev->refine && !core->reason[0])
				str_printf(core->reason, sizeof(core->reason),
					   "cannot encode %s/%s (\"%s\"): %s", core->name,
					   ev->sysfs ? ev->sysfs : ev->name, terms, err);
			continue;
		}
		core->have[i] = true;
	}
}

/* The highest level whose non-refinement events are all there. */
static unsigned offered_level(const struct pmu_core *core)
{
	unsigned level = 0;

	for (unsigned l = 1; l <= core->ua->max_level; l++) {
		for (unsigned i = 0; i < core->ua->n_events; i++) {
			const struct ua_event *ev = &core->ua->events[i];

			if (ev->level <= l && !ev->refine && !core->have[i])
				return level;
		}
		level = l;
	}
	return level;
}

static void discover_core(const struct sysfs *sysfs, const struct pmu_info *info,
			  struct pmu_core *core)
{
	struct pmu_formats formats = { 0 };
	struct format_ctx fctx = { sysfs, core->name, &formats };
	char path[512], text[256], err[160];
	/* An Intel CPU, or one the modalias does not name. */
	bool intel = !info->have_cpuid || strcmp(info->cpuid.vendor, "GenuineIntel") == 0;
	long type;
	int r;

	snprintf(path, sizeof(path), DEVICES "/%s/type", core->name);
	r = sysfs_read_int(sysfs, path, &type);
	if (r < 0 || type < 0 || type > UINT32_MAX) {
		str_printf(core->reason, sizeof(core->reason), "cannot read %s: %s", path,
			   r < 0 ? read_file_strerror(r) : "bad value");
		return;
	}
	core->type = (uint32_t)type;
	snprintf(path, sizeof(path), DEVICES "/%s/caps/pmu_name", core->name);
	/* Informational only, and shown everywhere (labels, --probe, the
	 * log): kept as text any reader takes, whatever sysfs holds. */
	if (sysfs_read(sysfs, path, text, sizeof(text)) > 0)
		str_escape(core->pmu_name, sizeof(core->pmu_name), text);
	snprintf(path, sizeof(path), DEVICES "/%s/cpus", core->name);
	if (sysfs_read(sysfs, path, text, sizeof(text)) >= 0) {
		if (cpuset_parse(text, &core->cpus, err, sizeof(err)) < 0) {
			str_printf(core->reason, sizeof(core->reason), "cannot parse %s: %s", path, err);
			return;
		}
		core->has_cpus = true;
	}

	core->have_cpuid = info->have_cpuid;
	core->cpuid = info->cpuid;
	if (info->have_cpuid && info->cpuid.arm) {
		/* Each arm64 PMU by the MIDR of its own first CPU (perf's
		 * perf_pmu__getcpuid()); heterogeneous parts have several. */
		struct ua_cpuid id = info->cpuid;
		int first = 0;

		if (core->has_cpus) {
			first = -1;
			CPUSET_FOREACH(cpu, &core->cpus) {
				first = cpu;
				break;
			}
		}
		if (first >= 0 && !read_midr(sysfs, (unsigned)first, &id))
			id = info->cpuid;
		core->cpuid = id;
		core->ua = ua_lookup(&id, core->name);
		core->slots = read_slots(sysfs, core->name);
		core->stall_minus_cycles = core->ua && ua_stall_minus_cycles(core->ua, id.midr);
		if (core->ua && core->ua->slots_from_caps && !core->slots) {
			/* A KVM guest reads PMMIR_EL1 as zero (caps/slots
			 * 0x00000000), a kernel before PMUv3.4 support shows
			 * none: Arm's published width of the part.  Every part
			 * of the tables has one (uarch_check.py); the refusal
			 * is for a part added without it. */
			core->slots_published = ua_arm_published_slots(id.midr);
			if (core->slots_published) {
				core->slots = core->slots_published->slots;
			} else {
				str_printf(core->reason, sizeof(core->reason),
					   "core PMU %s (%s) has no caps/slots, and %s publishes no slot width for this part here: perf's TopdownL1 needs the slots per cycle (PMMIR_EL1.SLOTS), which the kernel shows from PMUv3.4 on and a virtual machine reads as 0",
					   core->name, core->ua->name,
					   strcmp(core->ua->vendor, "ARM") == 0 ? "Arm" : core->ua->vendor);
				core->ua = NULL;
				return;
			}
		}
	} else if (info->have_cpuid) {
		core->ua = ua_lookup(&info->cpuid, core->name);
	}
	snprintf(path, sizeof(path), DEVICES "/%s/events/slots", core->name);
	/* No slots where the model has PERF_METRICS: a guest (KVM does not
	 * virtualise it); Intel's formulas on general-purpose counters where
	 * topdownd has them. */
	if (core->ua && core->ua->guest_alt && !sysfs_exists(sysfs, path))
		core->ua = core->ua->guest_alt;
	if (!core->ua && intel && sysfs_exists(sysfs, path))
		core->ua = ua_metrics_only();
	snprintf(path, sizeof(path), DEVICES "/%s/format", core->name);
	sysfs_foreach(sysfs, path, add_format, &fctx);
	/* No tables for the model, no PERF_METRICS: Intel's architectural
	 * TopDown events where the kernel shows them. */
	if (!core->ua && intel && shows_arch_topdown(sysfs, &formats, core->name))
		core->ua = ua_intel_arch();
	if (!core->ua) {
		describe_no_topdown(sysfs, core);
		return;
	}
	encode_events(sysfs, &formats, core);
	core->formats = formats;
	core->level = offered_level(core);
	if (core->level == 0) {
		for (unsigned i = 0; i < core->ua->n_events && !core->reason[0]; i++) {
			const struct ua_event *ev = &core->ua->events[i];

			if (ev->level != 1 || ev->refine || core->have[i])
				continue;
			if (ev->var == TD_EV_SLOTS && tma_uses_perf_metrics(core->ua->formulas))
				/* KVM gives a guest the architectural and
				 * model events but not PERF_METRICS. */
				str_printf(core->reason, sizeof(core->reason),
					   "core PMU %s (%s) has no events/slots: no PERF_METRICS (a virtual machine? KVM does not virtualise it; or a kernel before its TopDown support), and topdownd has no general-purpose-counter TopDown formulas for %s",
					   core->name, core->ua->name, core->ua->name);
			else
				str_printf(core->reason, sizeof(core->reason),
					   "core PMU %s (%s) has no events/%s: this kernel does not expose its TopDown events",
					   core->name, core->ua->name, ev->sysfs ? ev->sysfs : ev->name);
		}
		return;
	}
	core->reason[0] = '\0';
	/* Events above the offered level are not opened. */
	for (unsigned i = 0; i < core->ua->n_events; i++)
		if (core->ua->events[i].level > core->level)
			core->have[i] = false;
}

void pmu_guest_note(const struct pmu_core *core, char *buf, size_t len)
{
	bool fallback = core->ua == ua_intel_arch() || core->ua == ua_metrics_only();
	const struct ua_without *nr = core->ua && fallback ? ua_lookup_no_reference(&core->cpuid, core->name) : NULL;
	char pre[256] = "";

	if (nr && nr->table)
		str_printf(pre, sizeof(pre), "no perf reference for this model: %s (x86/%s): %s; ", nr->name, nr->table,
			   nr->why);
	else if (nr)
		str_printf(pre, sizeof(pre), "no perf reference for this model: %s: %s; ", nr->name, nr->why);
	if (core->ua == ua_metrics_only()) {
		str_printf(buf, len,
			   "%sno TopDown tables for this model: PERF_METRICS alone, levels 1 and 2 as the hardware gives them (perf's expressions without a model's refinement events)",
			   pre);
		return;
	}
	if (core->ua && core->ua->alt_of)
		str_printf(buf, len,
			   "no PERF_METRICS (no events/slots: a virtual machine?): counting with general-purpose events, Intel's alternate TMA formulas for %s (%s)",
			   core->ua->alt_of->name, core->ua->metrics[0].table);
	else if (core->ua == ua_intel_arch())
		str_printf(buf, len,
			   "%sno TopDown tables for this model and no PERF_METRICS: counting Intel's architectural TopDown events (events/topdown-*; SDM \"Pre-defined Architectural Performance Events\", CPUID.0AH EBX bits 8-11), level 1 as perf's PERF_METRICS expressions over them",
			   pre);
	else if (core->slots_published)
		str_printf(buf, len,
			   "caps/slots is 0 or absent (a virtual machine reads PMMIR_EL1 as 0): %u slots per cycle, Arm's published width of the %s (%s)",
			   core->slots, core->slots_published->name, core->slots_published->source);
	else if (len)
		buf[0] = '\0';
}

static void read_cpuid(const struct sysfs *sysfs, struct pmu_info *info)
{
	char text[512];

	if (sysfs_read(sysfs, "devices/system/cpu/modalias", text, sizeof(text)) <= 0)
		return;
	if (ua_modalias_is_arm64(text))
		info->have_cpuid = read_midr(sysfs, 0, &info->cpuid);
	else if (ua_parse_modalias(text, &info->cpuid) == 0)
		info->have_cpuid = true;
}

/* The msr PMU's TSC: its type, and events/tsc ("event=0x00", its format
 * config:0-63). */
static void discover_msr(const struct sysfs *sysfs, struct pmu_info *info)
{
	char buf[64];
	long type;
	char *end;
	unsigned long long tsc;

	if (sysfs_read_int(sysfs, DEVICES "/msr/type", &type) < 0 || type <= 0 || type > UINT32_MAX ||
	    sysfs_read(sysfs, DEVICES "/msr/events/tsc", buf, sizeof(buf)) < 0 || strncmp(buf, "event=", 6) != 0)
		return;
	errno = 0;
	tsc = strtoull(buf + 6, &end, 0);
	if (errno || end == buf + 6 || (*end && *end != '\n'))
		return;
	info->msr_type = (uint32_t)type;
	info->msr_tsc = tsc;
}

/* perf's #has_pmem: whether the firmware's ACPI tables have an NFIT
 * (tools/perf/util/expr.c has_pmem(): access(SYSFS/firmware/acpi/tables/NFIT)). */
static void discover_pmem(const struct sysfs *sysfs, struct pmu_info *info)
{
	info->has_pmem = sysfs_exists(sysfs, "firmware/acpi/tables/NFIT");
}

int pmu_discover(const struct sysfs *sysfs, struct pmu_info *info)
{
	/* The kernel's hybrid PMUs (intel_hybrid_pmu_type_map): the P-cores,
	 * the E-cores and Arrow Lake-H's low-power E-cores. */
	static const char *const hybrid[] = { "cpu_core", "cpu_atom", "cpu_lowpower" };

	memset(info, 0, sizeof(*info));
	read_cpuid(sysfs, info);
	discover_msr(sysfs, info);
	discover_pmem(sysfs, info);
	if (sysfs_exists(sysfs, DEVICES "/cpu")) {
		strcpy(info->core[info->n_cores++].name, "cpu");
	} else {
		for (size_t i = 0; i < sizeof(hybrid) / sizeof(hybrid[0]); i++) {
			char path[128];

			snprintf(path, sizeof(path), DEVICES "/%s", hybrid[i]);
			if (sysfs_exists(sysfs, path))
				strcpy(info->core[info->n_cores++].name, hybrid[i]);
		}
		if (info->n_cores == 0) {
			sysfs_foreach(sysfs, DEVICES, add_arm_pmu, info);
			qsort(info->core, info->n_cores, sizeof(info->core[0]), core_name_cmp);
		}
	}
	if (info->n_cores == 0) {
		str_printf(info->reason, sizeof(info->reason),
			   "no core PMU registered by the kernel (%s has no cpu, cpu_core or armv8_pmuv3): a virtual machine without a virtual PMU, or a CPU the perf driver does not support",
			   DEVICES);
		return 0;
	}
	for (unsigned i = 0; i < info->n_cores; i++)
		discover_core(sysfs, info, &info->core[i]);
	return 0;
}

const struct pmu_core *pmu_core_of(const struct pmu_info *info, unsigned cpu)
{
	for (unsigned i = 0; i < info->n_cores; i++) {
		const struct pmu_core *c = &info->core[i];

		if (!c->has_cpus || cpuset_test(&c->cpus, cpu))
			return c;
	}
	return NULL;
}
