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

/* dst[i] += src[i] (four at a time: the loop's own instructions are as
 * many as its additions') */
static inline void vec_add(double *restrict dst, const double *restrict src, unsigned n)
{
	size_t i = 0;

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
	size_t i = 0;

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
	size_t i = 0;

	for (; i + 2 <= n; i += 2)
		vec_store(dst + i, vec_load(dst + i) + vec_load(src + i) * k);
	if (i < n)
		dst[i] += src[i] * k;
}

/* One pair of vec_commit(). */
static inline __attribute__((always_inline)) void vec_commit2(double *restrict last, double *restrict total, const double *restrict was,
			       const double *restrict src, double k, size_t i)
{
	vec_d2 l = vec_load(src + i) * k;

	vec_store(last + i, l);
	vec_store(total + i, vec_load(was + i) + l);
}

/* last[i] = src[i] * k; total[i] = was[i] + last[i].  Up to 16 without a
 * loop (a jump into the pairs, as Duff's device): every CPU and core
 * commits a dozen categories every interval, and a loop's own
 * instructions were a third of them. */
static inline __attribute__((always_inline)) void vec_commit(double *restrict last, double *restrict total, const double *restrict was,
			      const double *restrict src, double k, unsigned n)
{
	size_t i = n & ~1u;

	if (n & 1) {
		last[i] = src[i] * k;
		total[i] = was[i] + last[i];
	}
	switch (i) {
	default:
		for (size_t j = 0; j < i; j += 2)
			vec_commit2(last, total, was, src, k, j);
		break;
	case 16:
		vec_commit2(last, total, was, src, k, 14);
		/* fall through */
	case 14:
		vec_commit2(last, total, was, src, k, 12);
		/* fall through */
	case 12:
		vec_commit2(last, total, was, src, k, 10);
		/* fall through */
	case 10:
		vec_commit2(last, total, was, src, k, 8);
		/* fall through */
	case 8:
		vec_commit2(last, total, was, src, k, 6);
		/* fall through */
	case 6:
		vec_commit2(last, total, was, src, k, 4);
		/* fall through */
	case 4:
		vec_commit2(last, total, was, src, k, 2);
		/* fall through */
	case 2:
		vec_commit2(last, total, was, src, k, 0);
		/* fall through */
	case 0:
		break;
	}
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
