/* SPDX-License-Identifier: MIT */
/* negotiate_gzip over an arbitrary Accept-Encoding header value.
 * Invariants: gzip only when the header names gzip, x-gzip or "*";
 * deterministic. */
#include "fuzz_common.h"
#include "negotiate.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	FUZZ_CHECK(!negotiate_gzip(NULL), "no Accept-Encoding header must mean no gzip");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *value = fuzz_cstr(data, size);
	bool gzip = negotiate_gzip(value);

	if (gzip)
		FUZZ_CHECK(strcasestr(value, "gzip") != NULL || strchr(value, '*') != NULL,
			   "gzip chosen for \"%s\"", value);
	FUZZ_CHECK(negotiate_gzip(value) == gzip, "not deterministic for \"%s\"", value);
	free(value);
	return 0;
}
