/* SPDX-License-Identifier: MIT */
/* util: string helpers and the growable buffer. */
#include "util.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void str_printf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

void str_copy(char *buf, size_t len, const char *src)
{
	size_t n;

	if (len == 0)
		return;
	n = strnlen(src, len - 1);
	memcpy(buf, src, n);
	buf[n] = '\0';
}

size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static void escape(char *buf, size_t len, const char *src, bool keep_newlines)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t out = 0;

	if (len == 0)
		return;
	while (*s) {
		size_t n = utf8_len(s);

		if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7f) && !(keep_newlines && *s == '\n'))) {
			if (out + 4 >= len)
				break;
			buf[out++] = '\\';
			buf[out++] = 'x';
			buf[out++] = hex[*s >> 4];
			buf[out++] = hex[*s & 15];
			s++;
			continue;
		}
		if (out + n >= len)
			break;
		memcpy(buf + out, s, n);
		out += n;
		s += n;
	}
	buf[out] = '\0';
}

void str_escape(char *buf, size_t len, const char *src)
{
	escape(buf, len, src, false);
}

void str_escape_text(char *buf, size_t len, const char *src)
{
	escape(buf, len, src, true);
}

void str_printable(char *buf, size_t len, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t out = 0;

	if (len == 0)
		return;
	while (*s) {
		size_t n = utf8_len(s);

		if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7f))) {
			if (out + 1 >= len)
				break;
			buf[out++] = '?';
			s++;
			continue;
		}
		if (out + n >= len)
			break;
		memcpy(buf + out, s, n);
		out += n;
		s += n;
	}
	buf[out] = '\0';
}

int read_file(const char *path, size_t max, char **data, size_t *len)
{
	size_t used = 0;
	char *buf;
	int fd, r;

	struct stat st;

	/* O_NONBLOCK: opening a FIFO for reading waits for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode) && !(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENXIO;
	}
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, buf + used, max + 1 - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used > max) {
			r = -EFBIG;
			goto fail;
		}
	}
	close(fd);
	buf[used] = '\0';
	*data = buf;
	*len = used;
	return 0;
fail:
	close(fd);
	free(buf);
	return r;
}

const char *read_file_strerror(int r)
{
	if (r == -ENXIO)
		return "not a regular file (a FIFO, socket or device could block the daemon)";
	return strerror(-r);
}

int thread_spawn(pthread_t *thread, bool detached, void *(*fn)(void *), void *arg)
{
	struct sched_param normal = { .sched_priority = 0 };
	pthread_attr_t attr;
	int r;

	r = pthread_attr_init(&attr);
	if (r != 0)
		return -r;
	r = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	if (r == 0)
		r = pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	if (r == 0)
		r = pthread_attr_setschedparam(&attr, &normal);
	if (r == 0 && detached)
		r = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (r == 0)
		r = pthread_create(thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -r;
}

void buf_init(struct buf *b)
{
	memset(b, 0, sizeof(*b));
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->failed = false;
}

bool buf_reserve(struct buf *b, size_t extra)
{
	size_t cap;
	char *p;

	if (b->failed)
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + extra + 1)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void buf_add(struct buf *b, const void *data, size_t len)
{
	if (!buf_reserve(b, len))
		return;
	if (len) /* an empty buffer's data may be NULL */
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_u64(struct buf *b, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf_add(b, tmp + sizeof(tmp) - n, n);
}

void buf_i64(struct buf *b, int64_t v)
{
	if (v < 0) {
		buf_putc(b, '-');
		buf_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		buf_u64(b, (uint64_t)v);
	}
}

void buf_count(struct buf *b, double v)
{
	if (!(v >= 0))
		buf_putc(b, '0');
	else if (v < 18446744073709549568.0)
		buf_u64(b, (uint64_t)v);
	else
		buf_printf(b, "%.0f", floor(v));
}

void buf_double(struct buf *b, double v)
{
	double ip;

	if (isnan(v)) {
		buf_puts(b, "NaN");
		return;
	}
	if (isinf(v)) {
		buf_puts(b, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	/* Fixed point with 9 decimals covers ratios and seconds exactly
	 * enough and needs no printf; anything else gets %.17g. */
	if (fabs(v) < 1e9) {
		double scaled = round(fabs(v) * 1e9);
		uint64_t n = (uint64_t)scaled, whole = n / 1000000000u, frac = n % 1000000000u;
		char digits[9];
		int len = 9;

		if (v < 0 && n)
			buf_putc(b, '-');
		buf_u64(b, whole);
		if (frac == 0)
			return;
		for (int i = 8; i >= 0; i--) {
			digits[i] = (char)('0' + frac % 10);
			frac /= 10;
		}
		while (len > 0 && digits[len - 1] == '0')
			len--;
		buf_putc(b, '.');
		buf_add(b, digits, (size_t)len);
		return;
	}
	if (modf(v, &ip) == 0 && fabs(v) < 9e15) {
		buf_i64(b, (int64_t)v);
		return;
	}
	buf_printf(b, "%.17g", v);
}

bool buf_failed(const struct buf *b)
{
	return b->failed;
}

char *buf_steal(struct buf *b, size_t *len)
{
	char *p = b->data;

	*len = b->len;
	buf_init(b);
	return p;
}
