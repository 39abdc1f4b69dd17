/* SPDX-License-Identifier: MIT */
/* cpuset: bitmap operations and the cpulist parser/formatter. */
#include "cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define WORDS (CPUSET_MAX / 64)

void cpuset_zero(struct cpuset *set)
{
	memset(set, 0, sizeof(*set));
}

void cpuset_set(struct cpuset *set, unsigned cpu)
{
	if (cpu < CPUSET_MAX)
		set->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

void cpuset_clear(struct cpuset *set, unsigned cpu)
{
	if (cpu < CPUSET_MAX)
		set->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

bool cpuset_test(const struct cpuset *set, unsigned cpu)
{
	return cpu < CPUSET_MAX && (set->bits[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned cpuset_count(const struct cpuset *set)
{
	unsigned n = 0;

	for (size_t i = 0; i < WORDS; i++)
		n += (unsigned)__builtin_popcountll(set->bits[i]);
	return n;
}

bool cpuset_empty(const struct cpuset *set)
{
	for (size_t i = 0; i < WORDS; i++)
		if (set->bits[i])
			return false;
	return true;
}

bool cpuset_equal(const struct cpuset *a, const struct cpuset *b)
{
	return memcmp(a->bits, b->bits, sizeof(a->bits)) == 0;
}

void cpuset_and(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (size_t i = 0; i < WORDS; i++)
		dst->bits[i] = a->bits[i] & b->bits[i];
}

void cpuset_andnot(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (size_t i = 0; i < WORDS; i++)
		dst->bits[i] = a->bits[i] & ~b->bits[i];
}

void cpuset_or(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (size_t i = 0; i < WORDS; i++)
		dst->bits[i] = a->bits[i] | b->bits[i];
}

int cpuset_next(const struct cpuset *set, unsigned from)
{
	for (unsigned w = from / 64; w < WORDS; w++) {
		uint64_t word = set->bits[w];

		if (w == from / 64)
			word &= ~UINT64_C(0) << (from % 64);
		if (word)
			return (int)(w * 64 + (unsigned)__builtin_ctzll(word));
	}
	return -1;
}

int cpuset_last(const struct cpuset *set)
{
	for (size_t w = WORDS; w-- > 0;)
		if (set->bits[w])
			return (int)(w * 64 + 63 - (unsigned)__builtin_clzll(set->bits[w]));
	return -1;
}

/* At most 16 characters of the input from @s, within the trimmed text. */
#define QUOTE(s, end) (int)((end) - (s) < 16 ? (end) - (s) : 16), (s)

/* Reads a decimal CPU number; refuses signs, hex and overflow. */
static int parse_cpu(const char **p, const char *end, unsigned *out, char *err, size_t errlen)
{
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s)) {
		snprintf(err, errlen, "expected a CPU number at \"%.*s\"", QUOTE(s, end));
		return -EINVAL;
	}
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= CPUSET_MAX) {
			snprintf(err, errlen, "CPU number at \"%.*s\" exceeds the maximum %d",
				 QUOTE(*p, end), CPUSET_MAX - 1);
			return -ERANGE;
		}
		s++;
	}
	*out = (unsigned)v;
	*p = s;
	return 0;
}

int cpuset_parse(const char *text, struct cpuset *out, char *err, size_t errlen)
{
	const char *p = text;
	const char *end = text + strlen(text);
	int r;

	cpuset_zero(out);
	while (p < end && isspace((unsigned char)*p))
		p++;
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	if (p == end)
		return 0;
	for (;;) {
		unsigned lo, hi;

		r = parse_cpu(&p, end, &lo, err, errlen);
		if (r < 0)
			return r;
		hi = lo;
		if (*p == '-') {
			p++;
			r = parse_cpu(&p, end, &hi, err, errlen);
			if (r < 0)
				return r;
			if (hi < lo) {
				snprintf(err, errlen, "range %u-%u is reversed", lo, hi);
				return -EINVAL;
			}
		}
		for (unsigned c = lo; c <= hi; c++)
			cpuset_set(out, c);
		if (p == end)
			return 0;
		if (*p != ',' || p + 1 == end) {
			snprintf(err, errlen, "unexpected \"%.*s\" (expected a list like 0-3,8)",
				 QUOTE(p, end));
			return -EINVAL;
		}
		p++;
	}
}

size_t cpuset_format(const struct cpuset *set, char *buf, size_t len)
{
	size_t need = 0;
	int cpu = cpuset_next(set, 0);

	if (len > 0)
		buf[0] = '\0';
	while (cpu >= 0) {
		int last = cpu;
		char part[32];
		int n;

		while (cpuset_test(set, (unsigned)last + 1))
			last++;
		if (last == cpu)
			n = snprintf(part, sizeof(part), "%s%d", need ? "," : "", cpu);
		else
			n = snprintf(part, sizeof(part), "%s%d-%d", need ? "," : "", cpu, last);
		if (need + (size_t)n < len)
			memcpy(buf + need, part, (size_t)n + 1);
		need += (size_t)n;
		cpu = cpuset_next(set, (unsigned)last + 1);
	}
	return need;
}
