/* SPDX-License-Identifier: MIT */
/* The value parsers of parse.c over the same text: parse_duration,
 * parse_bool and parse_uint (the config keys and command-line options).
 * Invariants:
 *  - duration: the value equals an exact 128-bit reference computation
 *    (digits past nanosecond precision ignored); a value the reference
 *    finds within 64 bits is not refused as too large; format_duration's
 *    text parses back to the same value.
 *  - bool: exactly the documented words, case-insensitive.
 *  - uint: agrees with strtoull on all-digit text for several ranges, and
 *    the printed value parses back. */
#include <errno.h>
#include <inttypes.h>
#include <strings.h>

#include "fuzz_common.h"
#include "parse.h"

#define ERRLEN 160

/* Exact value of a duration; false when the syntax is wrong.  *big is set
 * when the value does not fit 64 bits. */
static bool ref_duration(const char *s, uint64_t *ns, bool *big)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
		{ "m", UINT64_C(60000000000) }, { "h", UINT64_C(3600000000000) },
	};
	unsigned __int128 whole = 0, frac = 0, scale = 1, v;
	bool digits = false, overflow = false;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (((unsigned __int128)1) << 100))
			overflow = true;
		else
			whole = whole * 10 + (unsigned)(*p - '0');
		digits = true;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (scale < 1000000000) {
				frac = frac * 10 + (unsigned)(*p - '0');
				scale *= 10;
			}
			digits = true;
		}
	}
	if (!digits)
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].name) != 0)
			continue;
		v = whole * units[i].ns + frac * units[i].ns / scale;
		*big = overflow || v > UINT64_MAX;
		*ns = (uint64_t)v;
		return true;
	}
	return false;
}

static void check_duration(const char *text, char *err)
{
	uint64_t ns = 0, ref = 0, again = 0;
	bool big = false, ref_ok = ref_duration(text, &ref, &big);
	char buf[64];
	int r = parse_duration(text, &ns, err, ERRLEN);

	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL || r == -ERANGE, "parse_duration returned %d", r);
		FUZZ_CHECK(fuzz_err_ok(err, ERRLEN), "no message for \"%s\"", text);
		FUZZ_CHECK(!ref_ok || big, "\"%s\" refused (%s), exact value %" PRIu64 "ns fits",
			   text, err, ref);
		return;
	}
	FUZZ_CHECK(ref_ok && !big, "\"%s\" accepted as %" PRIu64 "ns; reference: %s", text, ns,
		   ref_ok ? "too large" : "invalid");
	FUZZ_CHECK(ns == ref, "\"%s\" is %" PRIu64 "ns, reference %" PRIu64 "ns", text, ns, ref);

	format_duration(ns, buf, sizeof(buf));
	r = parse_duration(buf, &again, err, ERRLEN);
	FUZZ_CHECK(r == 0, "format_duration(%" PRIu64 ") = \"%s\" does not parse: %s", ns, buf, err);
	FUZZ_CHECK(again == ns, "\"%s\" is %" PRIu64 "ns, not %" PRIu64 "ns", buf, again, ns);
	/* Short buffers: terminated, never overrun (ASan watches @small). */
	{
		char *small = fuzz_malloc(4);

		format_duration(ns, small, 4);
		FUZZ_CHECK(memchr(small, '\0', 4) != NULL, "unterminated format");
		free(small);
	}
}

static void check_bool(const char *text, char *err)
{
	static const char *const words[] = { "true", "yes", "on", "1", "false", "no", "off", "0" };
	bool v = false, again = true;
	int want = -1;
	int r = parse_bool(text, &v, err, ERRLEN);

	for (int i = 0; i < 8; i++)
		if (strcasecmp(text, words[i]) == 0)
			want = i < 4;
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL && want < 0, "\"%s\" refused (%d)", text, r);
		FUZZ_CHECK(fuzz_err_ok(err, ERRLEN), "no message for \"%s\"", text);
		return;
	}
	FUZZ_CHECK(want >= 0 && v == (want == 1), "\"%s\" parsed as %d", text, v);
	r = parse_bool(v ? "true" : "false", &again, err, ERRLEN);
	FUZZ_CHECK(r == 0 && again == v, "round trip of %d", v);
}

static void check_uint(const char *text, uint64_t min, uint64_t max, char *err)
{
	bool all_digits = text[0] != '\0';
	uint64_t v = 0, again = 0;
	char buf[32];
	int r = parse_uint(text, min, max, &v, err, ERRLEN);

	for (const char *p = text; *p; p++)
		all_digits &= *p >= '0' && *p <= '9';
	if (all_digits) {
		unsigned long long ref;
		char *end;

		errno = 0;
		ref = strtoull(text, &end, 10);
		if (errno == ERANGE || ref < min || ref > max)
			FUZZ_CHECK(r == -ERANGE, "\"%s\" in [%" PRIu64 ", %" PRIu64 "]: %d, want -ERANGE",
				   text, min, max, r);
		else
			FUZZ_CHECK(r == 0 && v == ref, "\"%s\" in [%" PRIu64 ", %" PRIu64 "]: %d, %" PRIu64,
				   text, min, max, r, v);
	} else {
		FUZZ_CHECK(r == -EINVAL, "\"%s\" is not a number but parse_uint returned %d", text, r);
	}
	if (r < 0) {
		FUZZ_CHECK(fuzz_err_ok(err, ERRLEN), "no message for \"%s\"", text);
		return;
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	r = parse_uint(buf, min, max, &again, err, ERRLEN);
	FUZZ_CHECK(r == 0 && again == v, "round trip of %" PRIu64, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	char *err = fuzz_malloc(ERRLEN);

	check_duration(text, err);
	check_bool(text, err);
	check_uint(text, 0, 65535, err);           /* ports */
	check_uint(text, 1, 65536, err);           /* max_connections */
	check_uint(text, 0, UINT64_MAX - 1, err);  /* near the saturation */
	free(err);
	free(text);
	return 0;
}
