/* SPDX-License-Identifier: MIT */
/* Unit tests of util: the growable buffer, integer and float formatting as
 * the expositions need them, and str_printf. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util.h"

typedef void (*fmt_double)(struct buf *, double);

static void u64_is(uint64_t v, const char *want)
{
	struct buf b;

	buf_init(&b);
	buf_u64(&b, v);
	assert_string_equal(b.data, want);
	assert_int_equal(b.len, strlen(want));
	buf_free(&b);
}

static void i64_is(int64_t v, const char *want)
{
	struct buf b;

	buf_init(&b);
	buf_i64(&b, v);
	assert_string_equal(b.data, want);
	assert_int_equal(b.len, strlen(want));
	buf_free(&b);
}

static void double_is(fmt_double fn, double v, const char *want)
{
	struct buf b;

	buf_init(&b);
	fn(&b, v);
	if (strcmp(b.data, want) != 0)
		fail_msg("%.17g -> \"%s\", expected \"%s\"", v, b.data, want);
	assert_int_equal(b.len, strlen(want));
	buf_free(&b);
}

static void test_u64_i64(void **state)
{
	(void)state;
	u64_is(0, "0");
	u64_is(7, "7");
	u64_is(10, "10");
	u64_is(1234567890, "1234567890");
	u64_is(UINT64_MAX, "18446744073709551615");
	u64_is(10000000000000000000ull, "10000000000000000000");
	i64_is(0, "0");
	i64_is(-1, "-1");
	i64_is(42, "42");
	i64_is(INT64_MAX, "9223372036854775807");
	i64_is(INT64_MIN, "-9223372036854775808");
}

static void test_count(void **state)
{
	(void)state;
	double_is(buf_count, 0, "0");
	double_is(buf_count, -0.0, "0");
	double_is(buf_count, 1, "1");
	double_is(buf_count, 1.9, "1"); /* the integer part */
	double_is(buf_count, 12345678901234.0, "12345678901234");
	double_is(buf_count, 9007199254740992.0, "9007199254740992"); /* 2^53 */
	double_is(buf_count, 1e19, "10000000000000000000");
	/* The largest double below 2^64, 2^64 and beyond. */
	double_is(buf_count, 18446744073709549568.0, "18446744073709549568");
	double_is(buf_count, 18446744073709551616.0, "18446744073709551616");
	double_is(buf_count, 36893488147419103232.0, "36893488147419103232"); /* 2^65 */
	double_is(buf_count, 1e20, "100000000000000000000");
	/* Never negative, never NaN. */
	double_is(buf_count, -1, "0");
	double_is(buf_count, -1e-300, "0");
	double_is(buf_count, NAN, "0");
	double_is(buf_count, -INFINITY, "0");
}

static void test_double(void **state)
{
	(void)state;
	double_is(buf_double, 0, "0");
	double_is(buf_double, -0.0, "0");
	double_is(buf_double, 1, "1");
	double_is(buf_double, 0.5, "0.5");
	double_is(buf_double, 0.301961, "0.301961");
	double_is(buf_double, 0.1 + 0.2, "0.3");
	double_is(buf_double, 1.0 / 3, "0.333333333");
	double_is(buf_double, 1e-9, "0.000000001");
	double_is(buf_double, 0.0015, "0.0015");
	double_is(buf_double, 1.5, "1.5");
	double_is(buf_double, 123456789.5, "123456789.5");
	double_is(buf_double, 999999999, "999999999");
	double_is(buf_double, 1e9, "1000000000");
	double_is(buf_double, 1e12, "1000000000000");
	double_is(buf_double, 1700000000.25, "1700000000.25");
	double_is(buf_double, -2.25, "-2.25");
	double_is(buf_double, -1e12, "-1000000000000");
	double_is(buf_double, 1e20, "1e+20");
	double_is(buf_double, NAN, "NaN");
	double_is(buf_double, INFINITY, "+Inf");
	double_is(buf_double, -INFINITY, "-Inf");
	/* Whatever it prints, strtod reads back within the 9-decimal
	 * resolution or 1e-15 relative (below 1e9: the scaled integer is
	 * beyond 2^53), or exactly (above). */
	{
		static const double vals[] = { 0.123456789, 42.000000001, 987654321.123456789,
					       1234567890.5, 3.25e15, 1.0 / 7, 1e-10 };

		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			struct buf b;
			double back;

			buf_init(&b);
			buf_double(&b, vals[i]);
			back = strtod(b.data, NULL);
			if (!(fabs(back - vals[i]) <=
			      (fabs(vals[i]) < 1e9 ? fmax(5e-10, fabs(vals[i]) * 1e-15) : 0)))
				fail_msg("%.17g -> \"%s\" -> %.17g", vals[i], b.data, back);
			buf_free(&b);
		}
	}
}

static void test_buf_basic(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_false(buf_failed(&b));
	buf_puts(&b, "abc");
	buf_putc(&b, '-');
	buf_add(&b, "xyz123", 3);
	buf_add(&b, "", 0);
	assert_string_equal(b.data, "abc-xyz");
	assert_int_equal(b.len, 7);
	assert_true(b.cap >= 8);
	/* Reset keeps the storage. */
	{
		char *data = b.data;
		size_t cap = b.cap;

		buf_reset(&b);
		assert_int_equal(b.len, 0);
		buf_puts(&b, "q");
		assert_ptr_equal(b.data, data);
		assert_int_equal(b.cap, cap);
		assert_string_equal(b.data, "q");
	}
	/* Embedded NULs are data. */
	buf_reset(&b);
	buf_add(&b, "a\0b", 3);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "a\0b", 4);
	buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	/* Reserve. */
	assert_true(buf_reserve(&b, 10000));
	assert_true(b.cap >= 10001);
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

static void test_printf_growth(void **state)
{
	struct buf b;
	char chunk[101];
	char *want;

	(void)state;
	buf_init(&b);
	buf_printf(&b, "%s=%d;", "start", 1);
	assert_string_equal(b.data, "start=1;");
	buf_reset(&b);

	/* 100 appends of 100 bytes: far past the first 4096-byte allocation. */
	want = malloc(100 * 100 + 1);
	assert_non_null(want);
	for (int i = 0; i < 100; i++) {
		snprintf(chunk, sizeof(chunk), "%04d%096d", i, 0);
		memcpy(want + i * 100, chunk, 100);
		buf_printf(&b, "%04d%096d", i, 0);
		assert_int_equal(b.len, (size_t)(i + 1) * 100);
		assert_int_equal(b.data[b.len], '\0');
		assert_true(b.cap > b.len);
	}
	want[100 * 100] = '\0';
	assert_string_equal(b.data, want);

	/* One printf much larger than the current capacity. */
	buf_reset(&b);
	buf_printf(&b, "%s", "x");
	buf_printf(&b, "%20000d|", 7);
	assert_int_equal(b.len, 1 + 20000 + 1);
	assert_int_equal(b.data[0], 'x');
	assert_int_equal(b.data[20000], '7');
	assert_int_equal(b.data[20001], '|');
	assert_int_equal(b.data[20002], '\0');
	assert_false(buf_failed(&b));

	/* Exactly at the 4096 boundary: 4095 bytes + NUL fit the first
	 * allocation, one more byte grows it. */
	buf_free(&b);
	buf_printf(&b, "%4095d", 1);
	assert_int_equal(b.len, 4095);
	assert_int_equal(b.cap, 4096);
	buf_putc(&b, '!');
	assert_int_equal(b.len, 4096);
	assert_true(b.cap > 4096);
	assert_int_equal(b.data[4095], '!');
	assert_int_equal(b.data[4096], '\0');
	free(want);
	buf_free(&b);
}

static void test_steal(void **state)
{
	struct buf b;
	size_t len = 99;
	char *p;

	(void)state;
	buf_init(&b);
	buf_puts(&b, "hello");
	buf_u64(&b, 42);
	p = buf_steal(&b, &len);
	assert_non_null(p);
	assert_string_equal(p, "hello42");
	assert_int_equal(len, 7);
	/* The buffer is reset and reusable. */
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	buf_puts(&b, "again");
	assert_string_equal(b.data, "again");
	assert_string_equal(p, "hello42");
	free(p);
	buf_free(&b);

	/* An empty buffer hands over NULL and 0. */
	buf_init(&b);
	len = 99;
	p = buf_steal(&b, &len);
	assert_null(p);
	assert_int_equal(len, 0);
}

static void test_str_printf(void **state)
{
	char buf[8];

	(void)state;
	str_printf(buf, sizeof(buf), "%s", "abc");
	assert_string_equal(buf, "abc");
	str_printf(buf, sizeof(buf), "%s-%d", "abcdefghij", 12);
	assert_string_equal(buf, "abcdefg");
	str_printf(buf, sizeof(buf), "%d", 1234567);
	assert_string_equal(buf, "1234567");
	str_printf(buf, sizeof(buf), "%d", 12345678);
	assert_string_equal(buf, "1234567");
	str_printf(buf, 1, "%s", "xyz");
	assert_string_equal(buf, "");
	memcpy(buf, "KEEPME!", 8);
	str_printf(buf, 0, "%s", "xyz"); /* writes nothing */
	assert_string_equal(buf, "KEEPME!");
}

static void test_str_copy(void **state)
{
	char buf[8];

	(void)state;
	str_copy(buf, sizeof(buf), "abc");
	assert_string_equal(buf, "abc");
	str_copy(buf, sizeof(buf), "abcdefghij");
	assert_string_equal(buf, "abcdefg");
	str_copy(buf, sizeof(buf), "");
	assert_string_equal(buf, "");
	str_copy(buf, 1, "xyz");
	assert_string_equal(buf, "");
	memcpy(buf, "KEEPME!", 8);
	str_copy(buf, 0, "xyz"); /* writes nothing */
	assert_string_equal(buf, "KEEPME!");
}

static void test_str_printable(void **state)
{
	char buf[16];

	(void)state;
	str_printable(buf, sizeof(buf), "scope=host");
	assert_string_equal(buf, "scope=host");
	/* %ff unescaped by the HTTP library: not UTF-8. */
	str_printable(buf, sizeof(buf), "a\xff" "b");
	assert_string_equal(buf, "a?b");
	str_printable(buf, sizeof(buf), "caf\xc3\xa9");
	assert_string_equal(buf, "caf\xc3\xa9");
	/* Overlong '/', a surrogate, beyond U+10FFFF, a cut sequence. */
	str_printable(buf, sizeof(buf), "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82");
	assert_string_equal(buf, "??|???|????|??");
	str_printable(buf, sizeof(buf), "tab\there\x7f");
	assert_string_equal(buf, "tab?here?");
	/* Cut at a character boundary, never inside one. */
	str_printable(buf, 6, "abc\xc3\xa9\xc3\xa9");
	assert_string_equal(buf, "abc\xc3\xa9");
	str_printable(buf, 5, "abc\xc3\xa9");
	assert_string_equal(buf, "abc");
}

/* str_escape: the same bytes as str_printable, written \xNN so that two
 * names that differ stay different. */
static void test_str_escape(void **state)
{
	char buf[40];

	(void)state;
	str_escape(buf, sizeof(buf), "/kubepods.slice/caf\xc3\xa9");
	assert_string_equal(buf, "/kubepods.slice/caf\xc3\xa9");
	str_escape(buf, sizeof(buf), "a\xff" "b\xfe" "c");
	assert_string_equal(buf, "a\\xffb\\xfec");
	str_escape(buf, sizeof(buf), "\xc0\xaf|\xed\xa0\x80|\xe2\x82");
	assert_string_equal(buf, "\\xc0\\xaf|\\xed\\xa0\\x80|\\xe2\\x82");
	str_escape(buf, sizeof(buf), "esc\x1b[2J\ttab\n");
	assert_string_equal(buf, "esc\\x1b[2J\\x09tab\\x0a");
	/* Cut before an escape that does not fit, never inside one. */
	str_escape(buf, 6, "ab\xff");
	assert_string_equal(buf, "ab");
	str_escape(buf, 7, "ab\xff");
	assert_string_equal(buf, "ab\\xff");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64_i64),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_double),
		cmocka_unit_test(test_buf_basic),
		cmocka_unit_test(test_printf_growth),
		cmocka_unit_test(test_steal),
		cmocka_unit_test(test_str_printf),
		cmocka_unit_test(test_str_copy),
		cmocka_unit_test(test_str_printable),
		cmocka_unit_test(test_str_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
