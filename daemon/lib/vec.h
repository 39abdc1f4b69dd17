/* SPDX-License-Identifier: MIT */
/* vec: the few loops over short runs of doubles that collection runs for
 * every CPU and domain every interval (a dozen categories, a dozen
 * events), two at a time.  GCC's -O2 leaves them scalar (their lengths
 * are not known, and its cheap cost model does not vectorise with an
 * epilogue); these are GCC's and Clang's generic vectors, which are SSE2
 * on x86-64 and NEON on arm64, with a scalar tail.  Callers guarantee the
 * ranges do not overlap. */
#ifndef TOPDOWND_VEC_H
#define TOPDOWND_VEC_H

#include <string.h>

typedef double vec_d2 __attribute__((vector_size(2 * sizeof(double))));
typedef long long vec_l2 __attribute__((vector_size(2 * sizeof(long long))));

static inline vec_d2 vec_load(const double *p)
{
	vec_d2 v;

	memcpy(&v, p, sizeof(v)); /* no alignment assumed */
	return v;
}

static inline void vec_store(double *p, vec_d2 v)
{
	memcpy(p, &v, sizeof(v));
}

static inline vec_l2 vec_load_l2(const void *p)
{
	vec_l2 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void vec_store_l2(void *p, vec_l2 v)
{
	memcpy(p, &v, sizeof(v));
}

/* Two integers in [0, 2^52) as doubles, exactly, without a conversion
 * instruction (SSE2 has none from 64-bit integers): 2^52 + x has x as
 * its mantissa.  Outside that range the result is not x. */
static inline vec_d2 vec_small_to_d2(vec_l2 x)
{
	const vec_l2 bias = { 0x4330000000000000LL, 0x4330000000000000LL };
	vec_l2 bits = x | bias;
	vec_d2 d;

	memcpy(&d, &bits, sizeof(d));
	return d - (vec_d2){ 0x1p52, 0x1p52 };
}

/* dst[i] += src[i] (four at a time: the loop's own instructions are as
 * many as its additions') */
static inline void vec_add(double *restrict dst, const double *restrict src, unsigned n)
{
	unsigned i = 0;

	for (; i + 4 <= n; i += 4) {
		vec_store(dst + i, vec_load(dst + i) + vec_load(src + i));
		vec_store(dst + i + 2, vec_load(dst + i + 2) + vec_load(src + i + 2));
	}
	if (i + 2 <= n) {
		vec_store(dst + i, vec_load(dst + i) + vec_load(src + i));
		i += 2;
	}
	if (i < n)
		dst[i] += src[i];
}

/* dst[i] = src[i] (memcpy() of a length not known is a call) */
static inline void vec_copy(double *restrict dst, const double *restrict src, unsigned n)
{
	unsigned i = 0;

	for (; i + 4 <= n; i += 4) {
		vec_store(dst + i, vec_load(src + i));
		vec_store(dst + i + 2, vec_load(src + i + 2));
	}
	if (i + 2 <= n) {
		vec_store(dst + i, vec_load(src + i));
		i += 2;
	}
	if (i < n)
		dst[i] = src[i];
}

/* dst[i] += src[i] * k */
static inline void vec_add_scaled(double *restrict dst, const double *restrict src, double k, unsigned n)
{
	unsigned i = 0;

	for (; i + 2 <= n; i += 2)
		vec_store(dst + i, vec_load(dst + i) + vec_load(src + i) * k);
	if (i < n)
		dst[i] += src[i] * k;
}

/* BODY(i) for i = 2 * (pairs - 1), ..., 2, 0, pairs at most 12, without
 * a loop: a jump into the sequence, as Duff's device.  Every CPU and core
 * commits a dozen categories and sums a dozen or two counts every
 * interval, and a loop's own instructions were a third of theirs. */
#define VEC_PAIRS_MAX 12
#define VEC_PAIRS12(pairs, BODY)                     \
	do {                                         \
		switch (pairs) {                     \
		case 12:                             \
			BODY(22);                    \
			/* fall through */           \
		case 11:                             \
			BODY(20);                    \
			/* fall through */           \
		case 10:                             \
			BODY(18);                    \
			/* fall through */           \
		case 9:                              \
			BODY(16);                    \
			/* fall through */           \
		case 8:                              \
			BODY(14);                    \
			/* fall through */           \
		case 7:                              \
			BODY(12);                    \
			/* fall through */           \
		case 6:                              \
			BODY(10);                    \
			/* fall through */           \
		case 5:                              \
			BODY(8);                     \
			/* fall through */           \
		case 4:                              \
			BODY(6);                     \
			/* fall through */           \
		case 3:                              \
			BODY(4);                     \
			/* fall through */           \
		case 2:                              \
			BODY(2);                     \
			/* fall through */           \
		case 1:                              \
			BODY(0);                     \
			/* fall through */           \
		default:                             \
			break;                       \
		}                                    \
	} while (0)

/* dst[0..2 * pairs) += src[...], pairs at most VEC_PAIRS_MAX. */
static inline __attribute__((always_inline)) void vec_add_pairs(double *restrict dst, const double *restrict src,
								unsigned pairs)
{
#define VEC_ADD2(i) vec_store(dst + (i), vec_load(dst + (i)) + vec_load(src + (i)))
	VEC_PAIRS12(pairs, VEC_ADD2);
#undef VEC_ADD2
}

/* dst[0..2 * pairs) = src[...], pairs at most VEC_PAIRS_MAX. */
static inline __attribute__((always_inline)) void vec_copy_pairs(double *restrict dst, const double *restrict src,
								 unsigned pairs)
{
#define VEC_COPY2(i) vec_store(dst + (i), vec_load(src + (i)))
	VEC_PAIRS12(pairs, VEC_COPY2);
#undef VEC_COPY2
}

/* One pair of vec_commit(). */
static inline __attribute__((always_inline)) void vec_commit2(double *restrict last, double *restrict total,
							      const double *restrict was, const double *restrict src,
							      double k, size_t i)
{
	vec_d2 l = vec_load(src + i) * k;

	vec_store(last + i, l);
	vec_store(total + i, vec_load(was + i) + l);
}

/* last[i] = src[i] * k; total[i] = was[i] + last[i]; up to 24 without a
 * loop (VEC_PAIRS12). */
static inline __attribute__((always_inline)) void vec_commit(double *restrict last, double *restrict total,
							     const double *restrict was, const double *restrict src,
							     double k, unsigned n)
{
	size_t pairs = n / 2;

	if (n & 1) {
		last[n - 1] = src[n - 1] * k;
		total[n - 1] = was[n - 1] + last[n - 1];
	}
	if (pairs > VEC_PAIRS_MAX) {
		for (size_t j = 0; j < 2 * pairs; j += 2)
			vec_commit2(last, total, was, src, k, j);
		return;
	}
#define VEC_COMMIT2(i) vec_commit2(last, total, was, src, k, (i))
	VEC_PAIRS12(pairs, VEC_COMMIT2);
#undef VEC_COMMIT2
}

/* dst[0..n) = 0 for a constant @n: stores, where GCC makes memset() of a
 * few hundred bytes a rep stos (an instruction per word). */
#define VEC_ZERO(dst, n)                                                  \
	do {                                                              \
		_Pragma("GCC unroll 32") for (unsigned vz_ = 0; vz_ + 2 <= (n); vz_ += 2) \
			vec_store((dst) + vz_, (vec_d2){ 0, 0 });         \
		if ((n) % 2)                                              \
			(dst)[(n) - 1] = 0;                               \
	} while (0)

/* dst[0..n) = src[0..n) for a constant @n, the same way. */
#define VEC_COPY(dst, src, n)                                             \
	do {                                                              \
		_Pragma("GCC unroll 32") for (unsigned vc_ = 0; vc_ + 2 <= (n); vc_ += 2) \
			vec_store((dst) + vc_, vec_load((src) + vc_));    \
		if ((n) % 2)                                              \
			(dst)[(n) - 1] = (src)[(n) - 1];                  \
	} while (0)

#endif
