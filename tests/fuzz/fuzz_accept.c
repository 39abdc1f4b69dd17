/* SPDX-License-Identifier: MIT */
/* negotiate_format over an arbitrary Accept header value.
 * Invariants: one of the two formats; OpenMetrics only when the header
 * names an application/ media range (the full wildcard alone never
 * selects it); the same header always negotiates the same way. */
#include "fuzz_common.h"
#include "negotiate.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	FUZZ_CHECK(negotiate_format(NULL) == NEGOTIATE_TEXT, "no Accept header must give text");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *accept = fuzz_cstr(data, size);
	enum negotiate_format f = negotiate_format(accept);

	FUZZ_CHECK(f == NEGOTIATE_TEXT || f == NEGOTIATE_OPENMETRICS, "format %d", (int)f);
	if (f == NEGOTIATE_OPENMETRICS)
		FUZZ_CHECK(strcasestr(accept, "application/") != NULL,
			   "OpenMetrics without an application/ range: \"%s\"", accept);
	FUZZ_CHECK(negotiate_format(accept) == f, "not deterministic for \"%s\"", accept);
	free(accept);
	return 0;
}
