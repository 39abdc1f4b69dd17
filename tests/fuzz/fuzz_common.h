/* SPDX-License-Identifier: MIT */
/* Helpers shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c).
 *
 * Inputs are copied into buffers of exactly the size the parser may read,
 * so AddressSanitizer sees any read past the end; error buffers likewise.
 * A broken invariant prints what broke and aborts: libFuzzer saves the
 * input as a crash artifact like any sanitizer report. */
#ifndef TOPDOWND_FUZZ_COMMON_H
#define TOPDOWND_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* For the harness's own checking code: its branches are not the parser's
 * and should not steer the fuzzer (nor slow it down). */
#if defined(__has_attribute) && __has_attribute(no_sanitize_coverage)
#define FUZZ_NO_COVERAGE __attribute__((no_sanitize_coverage))
#else
#define FUZZ_NO_COVERAGE
#endif

#define FUZZ_CHECK(cond, fmt, ...)                                                    \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n  " fmt "\n", \
				#cond, __FILE__, __LINE__, ##__VA_ARGS__);              \
			abort();                                                      \
		}                                                                     \
	} while (0)

/* A NUL-terminated copy of the input (the text ends at its first NUL). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Splits a copy of the input at its NUL bytes into at most @max strings;
 * returns how many there are (at least 1).  free(parts[0]) frees them all.
 * The last part takes everything after the (max-1)th NUL, up to its own
 * first NUL. */
static inline size_t fuzz_split(const uint8_t *data, size_t size, char **parts, size_t max)
{
	char *s = fuzz_cstr(data, size);
	size_t n = 1;

	parts[0] = s;
	for (size_t i = 0; i < size && n < max; i++)
		if (s[i] == '\0')
			parts[n++] = s + i + 1;
	return n;
}

/* An error message was written: terminated within @len and not empty. */
static inline bool fuzz_err_ok(const char *err, size_t len)
{
	return len == 0 || (memchr(err, '\0', len) != NULL && err[0] != '\0');
}

static inline void *fuzz_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();
	return p;
}

#endif
