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

/* A known user pays its own cost; an unknown name pays the cost of a
 * user its keyed hash chooses: always the same for the same name, and
 * spread over the file's costs, so that no one line decides them all. */
static void test_cost(void **state)
{
	struct auth_db *db = two_users();
	unsigned at[16] = { 0 };
	char name[32];

	(void)state;
	assert_int_equal(auth_db_users(db), 2);
	assert_int_equal(auth_db_cost_of(db, "prometheus"), 4);
	assert_int_equal(auth_db_cost_of(db, "alice"), 6);
	for (unsigned i = 0; i < 200; i++) {
		unsigned c;

		snprintf(name, sizeof(name), "nobody%u", i);
		c = auth_db_cost_of(db, name);
		assert_true(c == 4 || c == 6);
		assert_int_equal(auth_db_cost_of(db, name), c);
		at[c]++;
	}
	/* 200 names, two users: each user checks a share of them. */
	assert_true(at[4] > 50 && at[6] > 50);
	auth_db_free(db);
}

/* A cost above AUTH_COST_MAX is an error naming the file and the line:
 * the file is refused (at start, and on a reload, which keeps the old). */
static void test_cost_max(void **state)
{
	/* Costs are not checked by bcrypt here: a well-formed hash string. */
	static const char salt_hash[] = "abcdefghijklmnopqrstuvABCDEFGHIJKLMNOPQRSTUVWXYZ01234";
	char file[512], ok14[128];
	struct config_diag diag = { 0 };
	struct auth_db *db = NULL;

	(void)state;
	assert_int_equal(strlen(salt_hash), 53);
	snprintf(file, sizeof(file), "alice:$2y$14$%s\n# slow\nmallory:$2y$31$%s\nbob:$2b$15$%s\n",
		 salt_hash, salt_hash, salt_hash);
	assert_int_equal(auth_db_parse("/etc/topdownd/users", file, strlen(file), &db, &diag), -EINVAL);
	assert_null(db);
	assert_int_equal(diag.n, 2);
	assert_string_equal(diag.entries[0].text,
			    "/etc/topdownd/users:3: user \"mallory\": bcrypt cost 31 is above the maximum of 14 "
			    "(every check of it, and of unknown users, would hold a core for seconds); make the "
			    "hash again with htpasswd -B -C 14 or less");
	assert_non_null(strstr(diag.entries[1].text, "/etc/topdownd/users:4: user \"bob\": bcrypt cost 15 "));
	/* 14 itself is accepted. */
	memset(&diag, 0, sizeof(diag));
	snprintf(ok14, sizeof(ok14), "alice:$2y$14$%s\n", salt_hash);
	assert_int_equal(auth_db_parse("users", ok14, strlen(ok14), &db, &diag), 0);
	assert_int_equal(auth_db_cost_of(db, "alice"), 14);
	assert_int_equal(auth_db_cost_of(db, "anyone"), 14);
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
		cmocka_unit_test(test_cost_max),
		cmocka_unit_test(test_lookup_then_verify),
		cmocka_unit_test(test_file_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
