/* SPDX-License-Identifier: MIT */
/* Unit tests of vec: the loops every CPU and domain runs every interval,
 * against plain scalar loops, for every length they are given (0 to 30:
 * the jumps into the unrolled pairs and the loop past them), nothing
 * written outside the range; and the conversion of small integers from
 * their bits, exact below 2^52.  Run natively and under qemu-aarch64
 * (NEON), as every unit test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vec.h"

#define LEN 30
#define GUARD 4
#define SENTINEL -7777.25

/* A value for element @i of array @which: distinct, not round. */
static double val(unsigned which, unsigned i)
{
	return (double)(which * 1000 + i) * 1.25 + 0.5;
}

static void fill(double *a, unsigned which)
{
	for (unsigned i = 0; i < LEN + 2 * GUARD; i++)
		a[i] = i < GUARD || i >= LEN + GUARD ? SENTINEL : val(which, i - GUARD);
}

/* The guards around [GUARD, GUARD + n) hold the sentinel, and past n up
 * to LEN the values are @which's untouched. */
static void untouched(const double *a, unsigned n, unsigned which)
{
	for (unsigned i = 0; i < GUARD; i++) {
		assert_true(a[i] == SENTINEL);
		assert_true(a[LEN + GUARD + i] == SENTINEL);
	}
	for (unsigned i = n; i < LEN; i++)
		assert_true(a[GUARD + i] == val(which, i));
}

static void test_commit(void **state)
{
	(void)state;
	for (unsigned n = 0; n <= LEN; n++) {
		double last[LEN + 2 * GUARD], total[LEN + 2 * GUARD], was[LEN + 2 * GUARD], src[LEN + 2 * GUARD];
		const double k = 3.5;

		fill(last, 1);
		fill(total, 2);
		fill(was, 3);
		fill(src, 4);
		vec_commit(last + GUARD, total + GUARD, was + GUARD, src + GUARD, k, n);
		for (unsigned i = 0; i < n; i++) {
			assert_true(last[GUARD + i] == val(4, i) * k);
			assert_true(total[GUARD + i] == val(3, i) + val(4, i) * k);
		}
		untouched(last, n, 1);
		untouched(total, n, 2);
	}
}

static void test_add_copy_pairs(void **state)
{
	(void)state;
	for (unsigned pairs = 0; pairs <= VEC_PAIRS_MAX; pairs++) {
		double dst[LEN + 2 * GUARD], cp[LEN + 2 * GUARD], src[LEN + 2 * GUARD];

		fill(dst, 1);
		fill(cp, 2);
		fill(src, 3);
		vec_add_pairs(dst + GUARD, src + GUARD, pairs);
		vec_copy_pairs(cp + GUARD, src + GUARD, pairs);
		for (unsigned i = 0; i < 2 * pairs; i++) {
			assert_true(dst[GUARD + i] == val(1, i) + val(3, i));
			assert_true(cp[GUARD + i] == val(3, i));
		}
		untouched(dst, 2 * pairs, 1);
		untouched(cp, 2 * pairs, 2);
	}
}

static void test_add_copy(void **state)
{
	(void)state;
	for (unsigned n = 0; n <= LEN; n++) {
		double dst[LEN + 2 * GUARD], cp[LEN + 2 * GUARD], sc[LEN + 2 * GUARD], src[LEN + 2 * GUARD];

		fill(dst, 1);
		fill(cp, 2);
		fill(sc, 5);
		fill(src, 3);
		vec_add(dst + GUARD, src + GUARD, n);
		vec_copy(cp + GUARD, src + GUARD, n);
		vec_add_scaled(sc + GUARD, src + GUARD, 0.75, n);
		for (unsigned i = 0; i < n; i++) {
			assert_true(dst[GUARD + i] == val(1, i) + val(3, i));
			assert_true(cp[GUARD + i] == val(3, i));
			assert_true(sc[GUARD + i] == val(5, i) + val(3, i) * 0.75);
		}
		untouched(dst, n, 1);
		untouched(cp, n, 2);
		untouched(sc, n, 5);
	}
}

/* Exact from 0 to 2^52 - 1: the ends, powers of two and their
 * neighbours, and a spread of others; not the value at 2^52 (the range's
 * end, which the collector keeps clear of, DELTA_SMALL_NS). */
static void test_small_to_d2(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (unsigned b = 0; b < 52; b++) {
		long long p = 1LL << b;
		vec_d2 d = vec_small_to_d2((vec_l2){ p, p - 1 });
		vec_d2 e = vec_small_to_d2((vec_l2){ p + 1, (1LL << 52) - 1 });

		assert_true(d[0] == (double)p);
		assert_true(d[1] == (double)(p - 1));
		assert_true(e[0] == (double)(p + 1));
		assert_true(e[1] == 4503599627370495.0);
	}
	for (unsigned i = 0; i < 10000; i++) {
		long long a, b;
		vec_d2 d;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		a = (long long)(x >> 12);          /* 52 bits */
		b = (long long)(x >> (12 + i % 40)); /* fewer */
		d = vec_small_to_d2((vec_l2){ a, b });
		assert_true(d[0] == (double)a);
		assert_true(d[1] == (double)b);
	}
	assert_false(vec_small_to_d2((vec_l2){ 1LL << 52, 0 })[0] == 4503599627370496.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commit),
		cmocka_unit_test(test_add_copy_pairs),
		cmocka_unit_test(test_add_copy),
		cmocka_unit_test(test_small_to_d2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
