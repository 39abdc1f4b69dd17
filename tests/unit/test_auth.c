/* SPDX-License-Identifier: MIT */
/* auth: the file, the header, and the two halves of a check. */
#include <crypt.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "auth.h"

/* A bcrypt hash of @pass at @cost, made here so the test holds no secret. */
static void hash_of(const char *pass, unsigned cost, char *out, size_t len)
{
	char setting[64];
	struct crypt_data data;

	memset(&data, 0, sizeof(data));
	assert_non_null(crypt_gensalt_rn("$2y$", cost, NULL, 0, setting, sizeof(setting)));
	assert_non_null(crypt_rn(pass, setting, &data, sizeof(data)));
	assert_true(strlen(data.output) < len);
	memcpy(out, data.output, strlen(data.output) + 1);
}

static struct auth_db *two_users(void)
{
	char h1[128], h2[128], file[512];
	struct config_diag diag = { 0 };
	struct auth_db *db = NULL;

	hash_of("s3cret", 4, h1, sizeof(h1));
	hash_of("hunter2", 6, h2, sizeof(h2));
	snprintf(file, sizeof(file), "# scrapers\nprometheus:%s\nalice:%s\n", h1, h2);
	assert_int_equal(auth_db_parse("users", file, strlen(file), &db, &diag), 0);
	assert_int_equal(diag.n, 0);
	return db;
}

static void test_cost(void **state)
{
	struct auth_db *db = two_users();

	(void)state;
	assert_int_equal(auth_db_users(db), 2);
	/* Failed checks pay the file's highest cost, whoever they name. */
	assert_int_equal(auth_db_cost(db), 6);
	auth_db_free(db);
}

static void test_lookup_then_verify(void **state)
{
	/* "prometheus:s3cret", "prometheus:wrong", "nobody:s3cret" */
	const char *good = "Basic cHJvbWV0aGV1czpzM2NyZXQ=";
	const char *wrong = "Basic cHJvbWV0aGV1czp3cm9uZw==";
	const char *unknown = "Basic bm9ib2R5OnMzY3JldA==";
	struct auth_db *db = two_users();
	struct auth_attempt a;
	bool bcrypt;

	(void)state;
	assert_int_equal(auth_lookup(db, NULL, &a), AUTH_MISSING);
	assert_int_equal(auth_lookup(db, "Bearer abc", &a), AUTH_MALFORMED);
	assert_int_equal(auth_lookup(db, "Basic !!!", &a), AUTH_MALFORMED);
	/* Not cached yet: the slow half decides, and wipes the attempt. */
	assert_int_equal(auth_lookup(db, good, &a), AUTH_VERIFY);
	assert_string_equal(a.user, "prometheus");
	assert_int_equal(auth_verify(db, &a), AUTH_OK);
	assert_int_equal(a.pass[0], '\0');
	/* Now the fast half knows it. */
	assert_int_equal(auth_lookup(db, good, &a), AUTH_OK);
	assert_int_equal(auth_lookup(db, wrong, &a), AUTH_VERIFY);
	assert_int_equal(auth_verify(db, &a), AUTH_DENIED);
	/* A failure is never remembered. */
	assert_int_equal(auth_lookup(db, wrong, &a), AUTH_VERIFY);
	assert_int_equal(auth_verify(db, &a), AUTH_DENIED);
	assert_int_equal(auth_lookup(db, unknown, &a), AUTH_VERIFY);
	assert_int_equal(auth_verify(db, &a), AUTH_DENIED);
	/* The one-call form says when bcrypt ran. */
	assert_int_equal(auth_check(db, good, &bcrypt), AUTH_OK);
	assert_false(bcrypt);
	assert_int_equal(auth_check(db, unknown, &bcrypt), AUTH_DENIED);
	assert_true(bcrypt);
	auth_db_free(db);
}

static void test_file_errors(void **state)
{
	struct config_diag diag = { 0 };
	struct auth_db *db = NULL;
	const char *text = "alice:plaintext\n";

	(void)state;
	assert_int_equal(auth_db_parse("users", text, strlen(text), &db, &diag), -EINVAL);
	assert_int_equal(diag.n, 1);
	assert_string_equal(diag.entries[0].text,
			    "users:1: user \"alice\": not a bcrypt hash (create the file with htpasswd -B)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_lookup_then_verify),
		cmocka_unit_test(test_file_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
