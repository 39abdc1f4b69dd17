/* SPDX-License-Identifier: MIT */
/* pmu_encode_terms over arbitrary event terms (sysfs events/ files), with
 * the real Sapphire Rapids formats of tests/fixtures/spr-2s parsed once at
 * start-up by pmu_parse_format (FUZZ_SPR_FORMATS overrides the directory).
 * Invariants: errors come with a message; the result (success or not,
 * and the config values) matches an independent reference encoder that
 * follows the documented rules: comma-separated name[=value] terms, value
 * C-style (strtoull base 0) starting with a digit and shorter than 32
 * characters, no empty term or trailing comma, config/config1/config2 set
 * a whole word, any other name needs a format and must fit its width
 * (bits scattered over its ranges, low bits first). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>

#include "fuzz_common.h"
#include "pmu.h"

#ifndef FUZZ_FIXTURES
#define FUZZ_FIXTURES "tests/fixtures"
#endif
#define FORMAT_DIR FUZZ_FIXTURES "/spr-2s/bus/event_source/devices/cpu/format"
#define ERRLEN 160

static struct pmu_formats formats;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_SPR_FORMATS") ? getenv("FUZZ_SPR_FORMATS") : FORMAT_DIR;
	DIR *d = opendir(dir);
	struct dirent *de;

	(void)argc;
	(void)argv;
	if (!d) {
		fprintf(stderr, "fuzz_terms: cannot open %s\n", dir);
		exit(1);
	}
	while ((de = readdir(d))) {
		char path[4096], text[128], err[ERRLEN];
		size_t n;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
			n--;
		text[n] = '\0';
		if (formats.n == PMU_FORMAT_MAX ||
		    pmu_parse_format(de->d_name, text, &formats.f[formats.n], err, sizeof(err)) < 0) {
			fprintf(stderr, "fuzz_terms: %s: %s\n", path, err);
			exit(1);
		}
		formats.n++;
	}
	closedir(d);
	if (formats.n < 5) {
		fprintf(stderr, "fuzz_terms: only %zu formats in %s\n", formats.n, dir);
		exit(1);
	}
	return 0;
}

static const struct pmu_format *lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < formats.n; i++)
		if (strlen(formats.f[i].name) == len && memcmp(formats.f[i].name, name, len) == 0)
			return &formats.f[i];
	return NULL;
}

/* The reference: 0 with @out, or -EINVAL/-ERANGE. */
static int reference(const char *terms, uint64_t out[3])
{
	const char *p = terms;

	memset(out, 0, 3 * sizeof(out[0]));
	if (!*p)
		return 0;
	for (;;) {
		const char *end = strchr(p, ',') ? strchr(p, ',') : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		size_t len = (size_t)((eq ? eq : end) - p);
		uint64_t value = 1;
		const struct pmu_format *f;

		if (len == 0)
			return -EINVAL;
		if (eq) {
			char num[64], *numend;
			size_t nlen = (size_t)(end - eq - 1);

			if (nlen == 0 || nlen >= 32 || eq[1] < '0' || eq[1] > '9')
				return -EINVAL;
			memcpy(num, eq + 1, nlen);
			num[nlen] = '\0';
			errno = 0;
			value = strtoull(num, &numend, 0);
			if (errno || *numend)
				return -EINVAL;
		}
		if (len == 6 && memcmp(p, "config", 6) == 0) {
			out[0] = value;
		} else if (len == 7 && memcmp(p, "config1", 7) == 0) {
			out[1] = value;
		} else if (len == 7 && memcmp(p, "config2", 7) == 0) {
			out[2] = value;
		} else if (!(f = lookup(p, len))) {
			return -EINVAL;
		} else {
			unsigned shift = 0;

			for (unsigned i = 0; i < f->n_ranges; i++) {
				for (unsigned bit = f->ranges[i].lo; bit <= f->ranges[i].hi; bit++, shift++) {
					uint64_t v = shift < 64 ? (value >> shift) & 1 : 0;

					out[f->field] &= ~(UINT64_C(1) << bit);
					out[f->field] |= v << bit;
				}
			}
			if (shift < 64 && value >> shift)
				return -ERANGE;
		}
		if (!*end)
			return 0;
		p = end + 1;
		if (!*p)
			return -EINVAL; /* trailing comma */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *terms = fuzz_cstr(data, size);
	char *err = fuzz_malloc(ERRLEN);
	struct pmu_encoding enc;
	uint64_t want[3];
	int r = pmu_encode_terms(&formats, terms, &enc, err, ERRLEN);
	int ref = reference(terms, want);

	FUZZ_CHECK(r == ref, "\"%s\": pmu_encode_terms %d, reference %d", terms, r, ref);
	if (r < 0) {
		FUZZ_CHECK(fuzz_err_ok(err, ERRLEN), "no message for \"%s\"", terms);
	} else {
		for (int k = 0; k < 3; k++)
			FUZZ_CHECK(enc.config[k] == want[k],
				   "\"%s\": config%d 0x%" PRIx64 ", reference 0x%" PRIx64, terms, k,
				   enc.config[k], want[k]);
	}
	free(err);
	free(terms);
	return 0;
}
