/* pmu: core PMU discovery, format and event-term parsing. */
#include "pmu.h"
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

/* Sysfs event file of each TopDown event; refinement events are not in
 * sysfs and come from perf's event tables (reference page). */
static const char *const event_terms_fixed[TD_EV_COUNT] = {
	[TD_EV_UOP_DROPPING] = "event=0x0d,umask=0x10",
	[TD_EV_RECOVERY_CYCLES] = "event=0x0d,umask=0x01,cmask=1,edge=1",
};

static void describe_missing_slots(const struct sysfs *sysfs, struct pmu_info *info)
{
	char path[256];

	snprintf(path, sizeof(path), DEVICES "/%s/events/topdown-total-slots", info->name);
	if (sysfs_exists(sysfs, path))
		str_printf(info->reason, sizeof(info->reason),
			 "pre-Ice Lake CPU (pmu_name %s): no SLOTS counter or PERF_METRICS, TopDown metrics need Ice Lake or later",
			 info->pmu_name[0] ? info->pmu_name : "unknown");
	else
		str_printf(info->reason, sizeof(info->reason),
			 "core PMU %s (pmu_name %s) has no slots event: not an Intel CPU with PERF_METRICS (Ice Lake or later)",
			 info->name, info->pmu_name[0] ? info->pmu_name : "unknown");
}

static void discover_core(const struct sysfs *sysfs, struct pmu_info *info)
{
	struct pmu_formats formats = { 0 };
	struct format_ctx fctx = { sysfs, info->name, &formats };
	char path[512], text[256], err[160];
	unsigned n_l1 = 0, n_l2 = 0;
	long type;
	int r;

	snprintf(path, sizeof(path), DEVICES "/%s/type", info->name);
	r = sysfs_read_int(sysfs, path, &type);
	if (r < 0 || type < 0 || type > UINT32_MAX) {
		str_printf(info->reason, sizeof(info->reason), "cannot read %s: %s", path,
			 r < 0 ? strerror(-r) : "bad value");
		return;
	}
	info->type = (uint32_t)type;
	snprintf(path, sizeof(path), DEVICES "/%s/caps/pmu_name", info->name);
	if (sysfs_read(sysfs, path, text, sizeof(text)) > 0)
		str_printf(info->pmu_name, sizeof(info->pmu_name), "%s", text);

	snprintf(path, sizeof(path), DEVICES "/%s/cpus", info->name);
	if (sysfs_read(sysfs, path, text, sizeof(text)) >= 0) {
		if (cpuset_parse(text, &info->cpus, err, sizeof(err)) < 0) {
			str_printf(info->reason, sizeof(info->reason), "cannot parse %s: %s", path, err);
			return;
		}
		info->has_cpus = true;
	}

	snprintf(path, sizeof(path), DEVICES "/%s/format", info->name);
	sysfs_foreach(sysfs, path, add_format, &fctx);

	for (int ev = 0; ev < TD_EV_COUNT; ev++) {
		const char *terms = event_terms_fixed[ev];

		if (!terms) {
			snprintf(path, sizeof(path), DEVICES "/%s/events/%s", info->name,
				 td_event_name[ev]);
			if (sysfs_read(sysfs, path, text, sizeof(text)) < 0)
				continue;
			terms = text;
		}
		if (pmu_encode_terms(&formats, terms, &info->enc[ev], err, sizeof(err)) < 0) {
			if (ev == TD_EV_SLOTS || td_event_is_metric((enum td_event)ev))
				str_printf(info->reason, sizeof(info->reason),
					 "cannot encode %s/%s (\"%s\"): %s", info->name,
					 td_event_name[ev], terms, err);
			continue;
		}
		info->have[ev] = true;
	}

	if (!info->have[TD_EV_SLOTS]) {
		if (!info->reason[0])
			describe_missing_slots(sysfs, info);
		return;
	}
	for (int ev = TD_EV_RETIRING; ev <= TD_EV_BE_BOUND; ev++)
		n_l1 += info->have[ev];
	for (int ev = TD_EV_HEAVY_OPS; ev <= TD_EV_MEM_BOUND; ev++)
		n_l2 += info->have[ev];
	if (n_l1 < 4) {
		if (!info->reason[0])
			str_printf(info->reason, sizeof(info->reason),
				 "core PMU %s has a slots event but only %u of the 4 level-1 topdown events",
				 info->name, n_l1);
		return;
	}
	info->reason[0] = '\0';
	info->level = n_l2 == 4 ? 2 : 1;
	/* Eight metrics mean the Golden Cove generation and its formulas;
	 * four mean Ice Lake's.  The pmu_name is only informational. */
	info->formulas = info->level == 2 ? TD_FORMULAS_SPR : TD_FORMULAS_ICL;
	if (info->level == 1)
		for (int ev = TD_EV_HEAVY_OPS; ev <= TD_EV_MEM_BOUND; ev++)
			info->have[ev] = false;
}

int pmu_discover(const struct sysfs *sysfs, struct pmu_info *info)
{
	char path[256], text[256], err[160];

	memset(info, 0, sizeof(*info));
	if (sysfs_exists(sysfs, DEVICES "/cpu")) {
		strcpy(info->name, "cpu");
	} else if (sysfs_exists(sysfs, DEVICES "/cpu_core")) {
		strcpy(info->name, "cpu_core");
		if (sysfs_exists(sysfs, DEVICES "/cpu_atom")) {
			strcpy(info->other_name, "cpu_atom");
			snprintf(path, sizeof(path), DEVICES "/cpu_atom/cpus");
			if (sysfs_read(sysfs, path, text, sizeof(text)) >= 0)
				cpuset_parse(text, &info->other_cpus, err, sizeof(err));
			str_printf(info->other_reason, sizeof(info->other_reason),
				 "cpu_atom (E-core): no SLOTS counter or PERF_METRICS");
		}
	} else if (sysfs_exists(sysfs, DEVICES "/cpu_atom")) {
		str_printf(info->reason, sizeof(info->reason),
			 "only an Atom core PMU (cpu_atom) is registered: E-cores have no SLOTS counter or PERF_METRICS");
		return 0;
	} else {
		str_printf(info->reason, sizeof(info->reason),
			 "no core PMU registered by the kernel (%s has no cpu or cpu_core): a virtual machine without a virtual PMU, or a CPU the perf driver does not support",
			 DEVICES);
		return 0;
	}
	discover_core(sysfs, info);
	return 0;
}
