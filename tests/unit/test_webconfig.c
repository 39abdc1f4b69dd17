/* SPDX-License-Identifier: MIT */
/* webconfig: exporter-toolkit's web configuration file, what is taken and
 * what is refused, with its lines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "auth.h"
#include "webconfig.h"

static int parse(const char *text, struct webconfig *wc, struct config_diag *diag)
{
	memset(diag, 0, sizeof(*diag));
	return webconfig_parse("web.yml", "/etc/node_exporter", text, strlen(text), wc, diag);
}

/* The file of node_exporter's documentation, relative and absolute paths. */
static void test_full(void **state)
{
	static const char text[] =
		"# node_exporter's\n"
		"tls_server_config:\n"
		"  cert_file: server.crt\n"
		"  key_file: /etc/ssl/server.key\n"
		"  client_auth_type: \"RequireAndVerifyClientCert\"\n"
		"  client_ca_file: ca/clients.pem\n"
		"  min_version: TLS12\n"
		"  max_version: TLS13\n"
		"  prefer_server_cipher_suites: true\n"
		"  cipher_suites: []\n"
		"http_server_config:\n"
		"  http2: false\n"
		"basic_auth_users:\n"
		"  alice: $2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze\n"
		"\n"
		"  bob: '$2y$10$hLqFl9jSjoAAy95Z/zw8Ye8wkdMBM8c5Bn1ptYqP/AXyV0.oy0S8m'\n";
	struct config_diag diag;
	struct webconfig wc;

	(void)state;
	assert_int_equal(parse(text, &wc, &diag), 0);
	assert_int_equal(diag.n, 0);
	assert_string_equal(wc.cert_file, "/etc/node_exporter/server.crt");
	assert_string_equal(wc.key_file, "/etc/ssl/server.key");
	assert_string_equal(wc.client_ca_file, "/etc/node_exporter/ca/clients.pem");
	/* Each user on its line of the file (14 and 16): what auth_db_parse
	 * says of a user is FILE:LINE of the YAML. */
	assert_int_equal(wc.users_line, 13);
	assert_string_equal(wc.users, "\n\n\n\n\n\n\n\n\n\n\n\n\n"
			    "alice:$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze\n\n"
			    "bob:$2y$10$hLqFl9jSjoAAy95Z/zw8Ye8wkdMBM8c5Bn1ptYqP/AXyV0.oy0S8m\n");
	webconfig_clear(&wc);
}

/* An empty file, null or empty sections: no TLS, no users (the toolkit's
 * reading). */
static void test_empty(void **state)
{
	struct config_diag diag;
	struct webconfig wc;

	(void)state;
	assert_int_equal(parse("", &wc, &diag), 0);
	assert_string_equal(wc.cert_file, "");
	assert_null(wc.users);
	webconfig_clear(&wc);
	assert_int_equal(parse("tls_server_config:\nbasic_auth_users: {}\nhttp_server_config: ~\n", &wc, &diag), 0);
	assert_int_equal(diag.n, 0);
	assert_string_equal(wc.cert_file, "");
	assert_null(wc.users);
	webconfig_clear(&wc);
}

/* Everything topdownd would not do as asked is refused, each with its
 * line, all in one pass. */
static void test_refused(void **state)
{
	static const char text[] =
		"tls_server_config:\n"                          /* 1 */
		"  cert: |\n"                                   /* 2 */
		"    -----BEGIN CERTIFICATE-----\n"
		"  cert_file: a.crt\n"                          /* 4 */
		"  key_file: a.key\n"
		"  client_auth_type: RequireAnyClientCert\n"    /* 6 */
		"  min_version: TLS10\n"                        /* 7 */
		"  curve_preferences: [CurveP256]\n"            /* 8 */
		"  client_allowed_sans: [a.example]\n"          /* 9 */
		"http_server_config:\n"
		"  headers:\n"                                  /* 11 */
		"    X-Frame-Options: deny\n"
		"  http3: true\n"                               /* 13 */
		"basic_auth_users:\n"
		"  \"a:b\": x\n"                                /* 15 */
		"  c: [x]\n"                                    /* 16 */
		"web: 1\n";                                     /* 17 */
	static const char *const want[] = {
		"web.yml:2: tls_server_config: cert: certificates and keys written in the file are not "
		"supported by topdownd: put it in a file and name it with cert_file",
		"web.yml:7: tls_server_config: min_version: TLS10 is not supported by topdownd, which serves "
		"TLS 1.2 and 1.3: TLS12 or leave it out",
		"web.yml:8: tls_server_config: curve_preferences is not supported by topdownd (it uses GnuTLS' "
		"defaults and checks client certificates against client_ca_file only): leave it out",
		"web.yml:9: tls_server_config: client_allowed_sans is not supported by topdownd (it uses GnuTLS' "
		"defaults and checks client certificates against client_ca_file only): leave it out",
		"web.yml:11: http_server_config: headers are not supported by topdownd: leave them out",
		"web.yml:13: http_server_config: unknown key \"http3\": expected http2 or headers",
		"web.yml:15: basic_auth_users: user \"a:b\": a name with ':' or a line break cannot be checked",
		"web.yml:16: c: expected a single value",
		"web.yml:17: unknown key \"web\": expected tls_server_config, http_server_config or basic_auth_users",
		"web.yml:6: tls_server_config: client_auth_type RequireAnyClientCert is not supported by "
		"topdownd: RequireAndVerifyClientCert (with client_ca_file) or NoClientCert",
	};
	struct config_diag diag;
	struct webconfig wc;

	(void)state;
	assert_int_equal(parse(text, &wc, &diag), -EINVAL);
	assert_int_equal(diag.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < diag.n; i++)
		assert_string_equal(diag.entries[i].text, want[i]);
	webconfig_clear(&wc);
}

/* The toolkit's own rules on the TLS keys. */
static void test_tls_rules(void **state)
{
	struct config_diag diag;
	struct webconfig wc;

	(void)state;
	assert_int_equal(parse("tls_server_config:\n  key_file: k\n", &wc, &diag), -EINVAL);
	assert_string_equal(diag.entries[0].text, "web.yml:1: tls_server_config: missing cert_file");
	webconfig_clear(&wc);
	assert_int_equal(parse("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca\n",
			       &wc, &diag), -EINVAL);
	assert_string_equal(diag.entries[0].text,
			    "web.yml:4: tls_server_config: client_ca_file without client_auth_type "
			    "RequireAndVerifyClientCert (Client CA's have been configured without a Client Auth "
			    "Policy)");
	webconfig_clear(&wc);
	assert_int_equal(parse("tls_server_config:\n  cert_file: c\n  key_file: k\n"
			       "  client_auth_type: RequireAndVerifyClientCert\n", &wc, &diag), -EINVAL);
	assert_string_equal(diag.entries[0].text,
			    "web.yml:4: tls_server_config: client_auth_type RequireAndVerifyClientCert needs "
			    "client_ca_file (the CAs client certificates are checked against)");
	webconfig_clear(&wc);
	assert_int_equal(parse("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: Maybe\n",
			       &wc, &diag), -EINVAL);
	assert_string_equal(diag.entries[0].text,
			    "web.yml:4: tls_server_config: client_auth_type: invalid ClientAuth \"Maybe\"");
	webconfig_clear(&wc);
	/* NoClientCert spelled out: TLS without client certificates. */
	assert_int_equal(parse("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: NoClientCert\n",
			       &wc, &diag), 0);
	assert_string_equal(wc.client_ca_file, "");
	webconfig_clear(&wc);
}

/* Not YAML, or YAML of another shape. */
static void test_not_yaml(void **state)
{
	struct config_diag diag;
	struct webconfig wc;

	(void)state;
	assert_int_equal(parse("tls_server_config:\n  cert_file: [a\n", &wc, &diag), -EINVAL);
	assert_int_equal(diag.n, 1);
	assert_non_null(strstr(diag.entries[0].text, "web.yml:3: not YAML: "));
	webconfig_clear(&wc);
	assert_int_equal(parse("- a\n- b\n", &wc, &diag), -EINVAL);
	assert_string_equal(diag.entries[0].text, "web.yml:1: the file: expected keys and values");
	webconfig_clear(&wc);
	assert_int_equal(parse("basic_auth_users:\n  a: \"x\\0y\"\n", &wc, &diag), -EINVAL);
	assert_string_equal(diag.entries[0].text, "web.yml:2: a: a value with a NUL byte");
	webconfig_clear(&wc);
}

/* The users go through the basic_auth_file checks, with the YAML's lines. */
static void test_users_checked(void **state)
{
	struct config_diag diag, adiag = { 0 };
	struct auth_db *db = NULL;
	struct webconfig wc;

	(void)state;
	assert_int_equal(parse("basic_auth_users:\n  ok: $2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze\n"
			       "  md5: $apr1$abc$def\n", &wc, &diag), 0);
	assert_int_equal(auth_db_parse("web.yml", wc.users, wc.users_len, &db, &adiag), -EINVAL);
	assert_int_equal(adiag.n, 1);
	assert_string_equal(adiag.entries[0].text,
			    "web.yml:3: user \"md5\": not a bcrypt hash (create the file with htpasswd -B)");
	auth_db_free(db);
	webconfig_clear(&wc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_tls_rules),
		cmocka_unit_test(test_not_yaml),
		cmocka_unit_test(test_users_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
