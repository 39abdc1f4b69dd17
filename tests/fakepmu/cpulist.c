/* SPDX-License-Identifier: MIT */
/* cpulist.c: the kernel's cpulist format ("0-3,8,10-11") and small sysfs
 * file reads.  Files are read with open/pread and closed through the real
 * close() so the fake never re-enters its own interposers. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakepmu.h"

static int parse_num(const char **p, long *out)
{
	const char *s = *p;
	long v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (*s - '0');
		if (v > 1000000)
			return -1;
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

/* Parses a cpulist into out[ncpus] (set to 1 for each listed CPU; out is
 * not cleared first).  Strict: no empty parts, no spaces, lo <= hi, every
 * CPU < ncpus.  A trailing newline (sysfs files) is accepted. */
int fp_parse_cpulist(const char *s, int ncpus, uint8_t *out, char *err, size_t errlen)
{
	const char *p = s;
	size_t len = strlen(s);

	if (len > 0 && s[len - 1] == '\n')
		len--;
	if (len == 0) {
		snprintf(err, errlen, "empty cpulist");
		return -1;
	}
	for (;;) {
		long lo, hi;

		if (parse_num(&p, &lo) < 0) {
			snprintf(err, errlen, "expected a CPU number at \"%.*s\"",
				 (int)(len - (size_t)(p - s)), p);
			return -1;
		}
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_num(&p, &hi) < 0) {
				snprintf(err, errlen, "expected a CPU number after \"-\" at \"%.*s\"",
					 (int)(len - (size_t)(p - s)), p);
				return -1;
			}
			if (hi < lo) {
				snprintf(err, errlen, "range %ld-%ld is reversed", lo, hi);
				return -1;
			}
		}
		if (hi >= ncpus) {
			snprintf(err, errlen, "CPU %ld is not a possible CPU (there are %d)",
				 hi, ncpus);
			return -1;
		}
		for (long c = lo; c <= hi; c++)
			out[c] = 1;
		if ((size_t)(p - s) == len)
			return 0;
		if (*p != ',') {
			snprintf(err, errlen, "unexpected \"%c\"", *p);
			return -1;
		}
		p++;
	}
}

void fp_format_cpulist(const uint8_t *set, int n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		int j = i;
		int w;

		if (!set[i])
			continue;
		while (j + 1 < n && set[j + 1])
			j++;
		if (i == j)
			w = snprintf(buf + used, len - used, "%s%d", used ? "," : "", i);
		else
			w = snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", i, j);
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
		i = j;
	}
}

/* Reads a small file into buf (NUL-terminated); returns its length or -1
 * with errno set. */
ssize_t fp_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	int saved;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, len - 1, 0);
	saved = errno;
	fp_real_close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	buf[n] = '\0';
	return n;
}
