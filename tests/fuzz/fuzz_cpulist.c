/* SPDX-License-Identifier: MIT */
/* cpuset_parse over arbitrary text (sysfs cpulists, the `cpus` key, the
 * ?cpu= query value).  Invariants: errors are -EINVAL/-ERANGE with a
 * message; a parsed set formats (cpuset_format, snprintf semantics) into a
 * list that parses back to the same set and formats identically; short
 * buffers get a terminated prefix; count/next/last agree. */
#include <errno.h>

#include "cpuset.h"
#include "fuzz_common.h"

#define ERRLEN 128

static char *format_exact(const struct cpuset *set, size_t *len)
{
	size_t need = cpuset_format(set, NULL, 0);
	char *buf = fuzz_malloc(need + 1);
	size_t again = cpuset_format(set, buf, need + 1);

	FUZZ_CHECK(again == need, "cpuset_format returned %zu then %zu", need, again);
	FUZZ_CHECK(strlen(buf) == need, "formatted \"%s\" is not %zu long", buf, need);
	*len = need;
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cpuset set, again;
	char *text = fuzz_cstr(data, size);
	char *err = fuzz_malloc(ERRLEN);
	char *list, *list2;
	size_t len, len2;
	unsigned n = 0;
	int last = -1, r;

	r = cpuset_parse(text, &set, err, ERRLEN);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL || r == -ERANGE, "cpuset_parse returned %d", r);
		FUZZ_CHECK(fuzz_err_ok(err, ERRLEN), "no error message for \"%s\"", text);
		goto out;
	}

	CPUSET_FOREACH(cpu, &set) {
		FUZZ_CHECK(cpu < CPUSET_MAX && cpu > last, "cpuset_next went to %d after %d", cpu, last);
		FUZZ_CHECK(cpuset_test(&set, (unsigned)cpu), "cpuset_next gave non-member %d", cpu);
		last = cpu;
		n++;
	}
	FUZZ_CHECK(n == cpuset_count(&set), "cpuset_count %u, iteration %u", cpuset_count(&set), n);
	FUZZ_CHECK(cpuset_last(&set) == last, "cpuset_last %d, iteration %d", cpuset_last(&set), last);
	FUZZ_CHECK(cpuset_empty(&set) == (n == 0), "cpuset_empty disagrees with count %u", n);

	list = format_exact(&set, &len);
	r = cpuset_parse(list, &again, err, ERRLEN);
	FUZZ_CHECK(r == 0, "formatted \"%s\" does not parse: %s", list, err);
	FUZZ_CHECK(cpuset_equal(&set, &again), "\"%s\" parses to another set", list);
	list2 = format_exact(&again, &len2);
	FUZZ_CHECK(strcmp(list, list2) == 0, "formats \"%s\" then \"%s\"", list, list2);
	/* A list is never longer than the text it came from (modulo blanks). */
	FUZZ_CHECK(len <= strlen(text), "\"%s\" formats longer: \"%s\"", text, list);

	/* Truncation: a terminated prefix of the full text, full length returned. */
	for (size_t cap = 1; cap <= len; cap = cap * 2 + 1) {
		char *small = fuzz_malloc(cap);
		size_t got = cpuset_format(&set, small, cap);

		FUZZ_CHECK(got == len, "truncated format returned %zu, not %zu", got, len);
		FUZZ_CHECK(memchr(small, '\0', cap) != NULL, "unterminated in %zu bytes", cap);
		FUZZ_CHECK(strncmp(small, list, strlen(small)) == 0,
			   "\"%s\" is not a prefix of \"%s\"", small, list);
		free(small);
	}
	free(list);
	free(list2);
out:
	free(err);
	free(text);
	return 0;
}
