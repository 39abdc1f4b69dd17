/* SPDX-License-Identifier: MIT */
/* auth_db_parse over arbitrary basic-auth file bytes.
 * Invariants: success iff no error was recorded; every diagnostic is one
 * terminated line "fuzz:LINE: message" with a line number within the
 * file; an accepted file has at least one user. */
#include "auth.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	struct config_diag diag = { 0 };
	struct auth_db *db = NULL;
	size_t lines = 1;
	int r;

	if (!text)
		abort();
	memcpy(text, data, size);
	for (size_t i = 0; i < size; i++)
		lines += text[i] == '\n';
	r = auth_db_parse("fuzz", text, size, &db, &diag);
	FUZZ_CHECK((r == 0) == (diag.n_errors == 0), "result %d with %zu errors", r, diag.n_errors);
	FUZZ_CHECK(r != 0 || (db && auth_db_users(db) > 0), "accepted without users");
	for (size_t i = 0; i < diag.n; i++) {
		const struct config_diag_entry *e = &diag.entries[i];

		FUZZ_CHECK(memchr(e->text, '\0', sizeof(e->text)) != NULL, "unterminated diagnostic");
		FUZZ_CHECK(strncmp(e->text, "fuzz:", 5) == 0, "diagnostic \"%s\" without the name", e->text);
		FUZZ_CHECK(e->line <= lines, "line %u of a %zu-line file", e->line, lines);
	}
	auth_db_free(db);
	free(text);
	return 0;
}
