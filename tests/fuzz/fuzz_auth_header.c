/* SPDX-License-Identifier: MIT */
/* auth_parse_header over an arbitrary Authorization header value, and
 * auth_check on a small user file (no bcrypt run is slow at cost 4).
 * Invariants: on success the user is non-empty, neither part holds a NUL
 * or exceeds its buffer, and re-encoding "user:pass" in base64 and parsing
 * it again gives the same parts; a header that does not parse is never
 * AUTH_OK. */
#include <gnutls/gnutls.h>

#include "auth.h"
#include "fuzz_common.h"

static struct auth_db *db;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* User "prom", password "pw", bcrypt cost 4 (the minimum). */
	static const char file[] = "prom:$2b$04$yIf4N2CvtFdX69VtjpiRjux3/B5HQnsEsqZiXk4jVTlyp1ICCfLIS\n";
	struct config_diag diag = { 0 };

	(void)argc;
	(void)argv;
	FUZZ_CHECK(auth_db_parse("fuzz", file, sizeof(file) - 1, &db, &diag) == 0,
		   "the harness's own user file must parse: %s", diag.n ? diag.entries[0].text : "");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *value = fuzz_cstr(data, size);
	char user[AUTH_USER_MAX], pass[AUTH_PASSWORD_MAX];
	bool bcrypt;
	int r = auth_parse_header(value, user, sizeof(user), pass, sizeof(pass));
	enum auth_result a;

	if (r == 0) {
		char both[AUTH_USER_MAX + AUTH_PASSWORD_MAX + 1], header[1024];
		char user2[AUTH_USER_MAX], pass2[AUTH_PASSWORD_MAX];
		gnutls_datum_t in, out = { NULL, 0 };

		FUZZ_CHECK(user[0] != '\0', "empty user accepted from \"%s\"", value);
		FUZZ_CHECK(strlen(user) < sizeof(user) && strlen(pass) < sizeof(pass), "overlong parts");
		snprintf(both, sizeof(both), "%s:%s", user, pass);
		in = (gnutls_datum_t){ (unsigned char *)both, (unsigned)strlen(both) };
		FUZZ_CHECK(gnutls_base64_encode2(&in, &out) == 0, "base64 encoding failed");
		snprintf(header, sizeof(header), "Basic %.*s", (int)out.size, out.data);
		gnutls_free(out.data);
		FUZZ_CHECK(auth_parse_header(header, user2, sizeof(user2), pass2, sizeof(pass2)) == 0 &&
				   strcmp(user, user2) == 0 && strcmp(pass, pass2) == 0,
			   "re-encoded credentials of \"%s\" do not parse back", value);
	}
	/* Only inputs that are short enough are checked against bcrypt. */
	if (size < 64) {
		a = auth_check(db, value, &bcrypt);
		if (r < 0)
			FUZZ_CHECK(a == AUTH_MALFORMED, "unparsable header \"%s\" gave %d", value, (int)a);
		else
			FUZZ_CHECK(a == AUTH_OK ? strcmp(user, "prom") == 0 && strcmp(pass, "pw") == 0 : 1,
				   "\"%s\" authenticated", value);
	}
	free(value);
	return 0;
}
