/* SPDX-License-Identifier: MIT */
/* Unit tests of cpuset: bitmap operations, cpulist parsing and formatting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cpuset.h"

/* Parses @text, which must succeed, and returns its formatted form. */
static const char *roundtrip(const char *text)
{
	static char out[65536];
	struct cpuset set;
	char err[256] = "";
	int r = cpuset_parse(text, &set, err, sizeof(err));

	if (r != 0)
		fail_msg("cpuset_parse(\"%s\") = %d: %s", text, r, err);
	cpuset_format(&set, out, sizeof(out));
	return out;
}

static void expect_error(const char *text, int code, const char *msg)
{
	struct cpuset set;
	char err[256] = "";
	int r = cpuset_parse(text, &set, err, sizeof(err));

	if (r != code)
		fail_msg("cpuset_parse(\"%s\") = %d, expected %d (err \"%s\")", text, r, code, err);
	assert_string_equal(err, msg);
}

static void test_parse_empty(void **state)
{
	struct cpuset set;
	char err[128] = "untouched";

	(void)state;
	cpuset_set(&set, 3); /* parse must zero what was there */
	assert_int_equal(cpuset_parse("", &set, err, sizeof(err)), 0);
	assert_true(cpuset_empty(&set));
	assert_int_equal(cpuset_count(&set), 0);
	assert_int_equal(cpuset_last(&set), -1);
	assert_int_equal(cpuset_next(&set, 0), -1);
	assert_int_equal(cpuset_parse("  \n", &set, err, sizeof(err)), 0);
	assert_true(cpuset_empty(&set));
	assert_string_equal(roundtrip(""), "");
}

static void test_parse_single(void **state)
{
	struct cpuset set;
	char err[128];

	(void)state;
	assert_int_equal(cpuset_parse("5", &set, err, sizeof(err)), 0);
	assert_int_equal(cpuset_count(&set), 1);
	assert_true(cpuset_test(&set, 5));
	assert_false(cpuset_test(&set, 4));
	assert_false(cpuset_test(&set, 6));
	assert_int_equal(cpuset_next(&set, 0), 5);
	assert_int_equal(cpuset_last(&set), 5);
	assert_string_equal(roundtrip("5"), "5");
	assert_string_equal(roundtrip("0"), "0");
}

static void test_parse_list(void **state)
{
	static const unsigned members[] = { 0, 1, 2, 3, 8, 10, 11 };
	struct cpuset set;
	char err[128];

	(void)state;
	assert_int_equal(cpuset_parse("0-3,8,10-11", &set, err, sizeof(err)), 0);
	assert_int_equal(cpuset_count(&set), 7);
	for (unsigned cpu = 0; cpu < 64; cpu++) {
		bool want = false;

		for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++)
			want |= members[i] == cpu;
		if (cpuset_test(&set, cpu) != want)
			fail_msg("CPU %u: member %d, expected %d", cpu, cpuset_test(&set, cpu), want);
	}
	assert_string_equal(roundtrip("0-3,8,10-11"), "0-3,8,10-11");
}

static void test_parse_whitespace(void **state)
{
	struct cpuset set;
	char err[128];

	(void)state;
	/* sysfs files end with a newline. */
	assert_string_equal(roundtrip("0-3,8,10-11\n"), "0-3,8,10-11");
	assert_string_equal(roundtrip("  \t0-7 \r\n"), "0-7");
	assert_int_equal(cpuset_parse(" 4\n", &set, err, sizeof(err)), 0);
	assert_int_equal(cpuset_count(&set), 1);
	assert_true(cpuset_test(&set, 4));
}

static void test_parse_normalises(void **state)
{
	(void)state;
	/* Overlaps, unordered parts, single-CPU ranges and leading zeros. */
	assert_string_equal(roundtrip("8,0-3,2-5"), "0-5,8");
	assert_string_equal(roundtrip("3-3"), "3");
	assert_string_equal(roundtrip("1,2,3,5"), "1-3,5");
	assert_string_equal(roundtrip("007"), "7");
	assert_string_equal(roundtrip("0,2,4,6"), "0,2,4,6");
	assert_string_equal(roundtrip("62-65,127-128"), "62-65,127-128");
}

static void test_parse_max_cpu(void **state)
{
	struct cpuset set;
	char err[128];

	(void)state;
	assert_int_equal(cpuset_parse("8191", &set, err, sizeof(err)), 0);
	assert_true(cpuset_test(&set, 8191));
	assert_int_equal(cpuset_count(&set), 1);
	assert_int_equal(cpuset_last(&set), 8191);
	assert_int_equal(cpuset_next(&set, 0), 8191);
	assert_int_equal(cpuset_next(&set, 8191), 8191);
	assert_string_equal(roundtrip("0-8191"), "0-8191");
	assert_int_equal(cpuset_parse("0-8191", &set, err, sizeof(err)), 0);
	assert_int_equal(cpuset_count(&set), 8192);
	assert_string_equal(roundtrip("8190-8191"), "8190-8191");
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_error("3-1", -EINVAL, "range 3-1 is reversed");
	expect_error("a", -EINVAL, "expected a CPU number at \"a\"");
	expect_error("1,,2", -EINVAL, "expected a CPU number at \",2\"");
	expect_error("1-", -EINVAL, "expected a CPU number at \"\"");
	expect_error("-1", -EINVAL, "expected a CPU number at \"-1\"");
	expect_error("8192", -ERANGE, "CPU number at \"8192\" exceeds the maximum 8191");
	expect_error("0-8192", -ERANGE, "CPU number at \"8192\" exceeds the maximum 8191");
	expect_error("99999999999999999999999", -ERANGE,
		     "CPU number at \"9999999999999999\" exceeds the maximum 8191");
	expect_error("1,", -EINVAL, "unexpected \",\" (expected a list like 0-3,8)");
	expect_error(",1", -EINVAL, "expected a CPU number at \",1\"");
	expect_error("1 2", -EINVAL, "unexpected \" 2\" (expected a list like 0-3,8)");
	expect_error("1;2", -EINVAL, "unexpected \";2\" (expected a list like 0-3,8)");
	expect_error("+1", -EINVAL, "expected a CPU number at \"+1\"");
	expect_error("0x10", -EINVAL, "unexpected \"x10\" (expected a list like 0-3,8)");
	expect_error("1-2-3", -EINVAL, "unexpected \"-3\" (expected a list like 0-3,8)");
}

/* Messages quote the input as trimmed: a sysfs file's trailing newline must
 * not end up inside the quoted text (and so inside a log line). */
static void test_parse_error_quotes_trimmed_text(void **state)
{
	(void)state;
	expect_error("1,2,\n", -EINVAL, "unexpected \",\" (expected a list like 0-3,8)");
	expect_error("1-\n", -EINVAL, "expected a CPU number at \"\"");
	expect_error("1 2 \n", -EINVAL, "unexpected \" 2\" (expected a list like 0-3,8)");
}

static void test_parse_error_truncated(void **state)
{
	struct cpuset set;
	char err[8];

	(void)state;
	/* A short error buffer is NUL-terminated, never overrun. */
	memset(err, 'x', sizeof(err));
	assert_int_equal(cpuset_parse("3-1", &set, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "range 3");
}

static void test_format(void **state)
{
	struct cpuset set;
	char buf[64];

	(void)state;
	cpuset_zero(&set);
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(cpuset_format(&set, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	cpuset_set(&set, 0);
	cpuset_set(&set, 1);
	cpuset_set(&set, 2);
	cpuset_set(&set, 3);
	cpuset_set(&set, 8);
	cpuset_set(&set, 10);
	cpuset_set(&set, 11);
	assert_int_equal(cpuset_format(&set, buf, sizeof(buf)), strlen("0-3,8,10-11"));
	assert_string_equal(buf, "0-3,8,10-11");
	/* snprintf semantics: the needed length, a NUL-terminated prefix. */
	assert_int_equal(cpuset_format(&set, buf, 6), 11);
	assert_string_equal(buf, "0-3,8");
	assert_int_equal(cpuset_format(&set, buf, 5), 11);
	assert_string_equal(buf, "0-3");
	assert_int_equal(cpuset_format(&set, NULL, 0), 11);
	assert_int_equal(cpuset_format(&set, buf, 12), 11);
	assert_string_equal(buf, "0-3,8,10-11");
}

static void test_bit_ops(void **state)
{
	struct cpuset set;

	(void)state;
	cpuset_zero(&set);
	cpuset_set(&set, 63);
	cpuset_set(&set, 64);
	cpuset_set(&set, 8191);
	cpuset_set(&set, 8192); /* out of range: ignored */
	cpuset_set(&set, 100000);
	assert_int_equal(cpuset_count(&set), 3);
	assert_false(cpuset_test(&set, 8192));
	assert_int_equal(cpuset_next(&set, 0), 63);
	assert_int_equal(cpuset_next(&set, 63), 63);
	assert_int_equal(cpuset_next(&set, 64), 64);
	assert_int_equal(cpuset_next(&set, 65), 8191);
	assert_int_equal(cpuset_next(&set, 8192), -1);
	assert_int_equal(cpuset_next(&set, 100000), -1);
	assert_int_equal(cpuset_last(&set), 8191);
	cpuset_clear(&set, 8191);
	cpuset_clear(&set, 9000); /* ignored */
	assert_int_equal(cpuset_last(&set), 64);
	assert_int_equal(cpuset_count(&set), 2);
	cpuset_clear(&set, 64);
	assert_int_equal(cpuset_last(&set), 63);
	assert_false(cpuset_empty(&set));
	cpuset_clear(&set, 63);
	assert_true(cpuset_empty(&set));
	assert_int_equal(cpuset_last(&set), -1);
}

static void test_foreach(void **state)
{
	struct cpuset set;
	char err[64], seen[128] = "";
	size_t used = 0;

	(void)state;
	assert_int_equal(cpuset_parse("1,63-65,200,8191", &set, err, sizeof(err)), 0);
	CPUSET_FOREACH(cpu, &set)
		used += (size_t)snprintf(seen + used, sizeof(seen) - used, "%d;", cpu);
	assert_string_equal(seen, "1;63;64;65;200;8191;");
}

static void test_set_algebra(void **state)
{
	struct cpuset a, b, dst;
	char err[64], buf[128];

	(void)state;
	assert_int_equal(cpuset_parse("0-7,64-70", &a, err, sizeof(err)), 0);
	assert_int_equal(cpuset_parse("4-11,70,8000", &b, err, sizeof(err)), 0);

	cpuset_and(&dst, &a, &b);
	cpuset_format(&dst, buf, sizeof(buf));
	assert_string_equal(buf, "4-7,70");
	assert_int_equal(cpuset_count(&dst), 5);

	cpuset_andnot(&dst, &a, &b);
	cpuset_format(&dst, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,64-69");

	cpuset_andnot(&dst, &b, &a);
	cpuset_format(&dst, buf, sizeof(buf));
	assert_string_equal(buf, "8-11,8000");

	cpuset_or(&dst, &a, &b);
	cpuset_format(&dst, buf, sizeof(buf));
	assert_string_equal(buf, "0-11,64-70,8000");

	/* In place: dst aliasing an operand. */
	dst = a;
	cpuset_and(&dst, &dst, &b);
	cpuset_format(&dst, buf, sizeof(buf));
	assert_string_equal(buf, "4-7,70");

	assert_false(cpuset_equal(&a, &b));
	dst = a;
	assert_true(cpuset_equal(&a, &dst));
	cpuset_clear(&dst, 70);
	assert_false(cpuset_equal(&a, &dst));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_empty),
		cmocka_unit_test(test_parse_single),
		cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_parse_whitespace),
		cmocka_unit_test(test_parse_normalises),
		cmocka_unit_test(test_parse_max_cpu),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_error_quotes_trimmed_text),
		cmocka_unit_test(test_parse_error_truncated),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_bit_ops),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_set_algebra),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
