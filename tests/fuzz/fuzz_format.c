/* SPDX-License-Identifier: MIT */
/* pmu_parse_format over a sysfs format/ file: "name\0text", or just the
 * text (named "event") when the input holds no NUL.
 * Invariants: errors come with a message; an accepted format has its
 * name, a field 0..2 and 1..PMU_FORMAT_RANGES ranges lo <= hi <= 63.
 * Then pmu_encode_terms with that single format.  For formats as the
 * kernel writes them (ascending, disjoint ranges): "name=<all ones of the
 * format's width>" sets exactly the union of its bit ranges, "name=1" the
 * lowest bit (perf_pmu__format_pack), and a value one bit wider is refused
 * as not fitting.  Other formats (overlapping or descending ranges, which
 * perf would treat as a bitmap) are only encoded, unchecked. */
#include <errno.h>
#include <inttypes.h>

#include "fuzz_common.h"
#include "pmu.h"

#define ERRLEN 160

static bool plain_name(const char *s)
{
	if (!*s || strncmp(s, "config", 6) == 0)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pmu_formats formats;
	struct pmu_format *f = &formats.f[0];
	struct pmu_encoding enc;
	char *parts[2], *err = fuzz_malloc(ERRLEN);
	const char *name = "event", *text;
	unsigned width = 0, prev_hi = 0;
	bool ordered = true;
	uint64_t want = 0;
	char terms[96];
	int r;

	if (fuzz_split(data, size, parts, 2) == 2) {
		name = parts[0];
		text = parts[1];
	} else {
		text = parts[0];
	}
	r = pmu_parse_format(name, text, f, err, ERRLEN);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL, "pmu_parse_format returned %d", r);
		FUZZ_CHECK(fuzz_err_ok(err, ERRLEN), "no message for \"%s\"", text);
		goto out;
	}
	FUZZ_CHECK(strcmp(f->name, name) == 0, "name \"%s\" stored as \"%s\"", name, f->name);
	FUZZ_CHECK(f->field <= 2, "field %u", f->field);
	FUZZ_CHECK(f->n_ranges >= 1 && f->n_ranges <= PMU_FORMAT_RANGES, "%u ranges", f->n_ranges);
	for (unsigned i = 0; i < f->n_ranges; i++) {
		unsigned lo = f->ranges[i].lo, hi = f->ranges[i].hi;

		FUZZ_CHECK(lo <= hi && hi <= 63, "range %u-%u of \"%s\"", lo, hi, text);
		ordered &= i == 0 || lo > prev_hi;
		prev_hi = hi;
		width += hi - lo + 1;
		want |= (hi - lo == 63 ? UINT64_MAX : ((UINT64_C(1) << (hi - lo + 1)) - 1)) << lo;
	}

	if (!plain_name(name))
		goto out;
	formats.n = 1;
	snprintf(terms, sizeof(terms), "%s=0x%" PRIx64, name,
		 width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1);
	r = pmu_encode_terms(&formats, terms, &enc, err, ERRLEN);
	if (!ordered)
		goto out;
	FUZZ_CHECK(r == 0, "\"%s\" with format \"%s\": %s", terms, text, err);
	for (unsigned k = 0; k < 3; k++)
		FUZZ_CHECK(enc.config[k] == (k == f->field ? want : 0),
			   "\"%s\" with format \"%s\": config%u = 0x%" PRIx64 ", want 0x%" PRIx64,
			   terms, text, k, enc.config[k], k == f->field ? want : 0);
	snprintf(terms, sizeof(terms), "%s=1", name);
	r = pmu_encode_terms(&formats, terms, &enc, err, ERRLEN);
	FUZZ_CHECK(r == 0 && enc.config[f->field] == UINT64_C(1) << f->ranges[0].lo,
		   "\"%s\" with format \"%s\": %d, 0x%" PRIx64, terms, text, r, enc.config[f->field]);
	if (width < 64) {
		snprintf(terms, sizeof(terms), "%s=0x%" PRIx64, name, UINT64_C(1) << width);
		r = pmu_encode_terms(&formats, terms, &enc, err, ERRLEN);
		FUZZ_CHECK(r == -ERANGE, "\"%s\" fits format \"%s\" of width %u", terms, text, width);
	}
out:
	free(err);
	free(parts[0]);
	return 0;
}
