/* SPDX-License-Identifier: MIT */
/* webconfig_parse over arbitrary web configuration bytes (YAML or not).
 * Invariants: success iff no error was recorded; every diagnostic is one
 * terminated line "fuzz:..." with a line number within the file; paths
 * are absolute (the directory given is "/d") or empty; the users' text
 * has no more lines than the file. */
#include "fuzz_common.h"
#include "webconfig.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static size_t lines_of(const char *text, size_t len)
{
	size_t lines = 1;

	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n' || text[i] == '\r';
	return lines;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	struct config_diag diag = { 0 };
	struct webconfig wc;
	size_t lines;
	int r;

	if (!text)
		abort();
	memcpy(text, data, size);
	lines = lines_of(text, size);
	r = webconfig_parse("fuzz", "/d", text, size, &wc, &diag);
	FUZZ_CHECK((r == 0) == (diag.n_errors == 0), "result %d with %zu errors", r, diag.n_errors);
	for (size_t i = 0; i < diag.n; i++) {
		const struct config_diag_entry *e = &diag.entries[i];

		FUZZ_CHECK(memchr(e->text, '\0', sizeof(e->text)) != NULL, "unterminated diagnostic");
		FUZZ_CHECK(strncmp(e->text, "fuzz:", 5) == 0, "diagnostic \"%s\" without the name", e->text);
		FUZZ_CHECK(e->line <= lines + 1, "line %u of a %zu-line file", e->line, lines);
	}
	FUZZ_CHECK(!wc.cert_file[0] || wc.cert_file[0] == '/', "relative cert_file \"%s\"", wc.cert_file);
	FUZZ_CHECK(!wc.client_ca_file[0] || wc.client_ca_file[0] == '/', "relative client_ca_file");
	FUZZ_CHECK(!wc.users || lines_of(wc.users, wc.users_len) <= lines + 1, "users beyond the file's lines");
	webconfig_clear(&wc);
	free(text);
	return 0;
}
