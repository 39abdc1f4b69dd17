/* SPDX-License-Identifier: MIT */
/* util: small string and buffer helpers shared by every module. */
#ifndef TOPDOWND_UTIL_H
#define TOPDOWND_UTIL_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* For a table indexed by an enum, after its definition (which takes its
 * size from its initialiser): one entry per value up to the last, so that
 * a value added before @count without an entry fails the build. */
#define TABLE_COVERS(table, count)                                      \
	static_assert(sizeof(table) / sizeof((table)[0]) == (count),    \
		      #table ": one entry per value of its enum")

/* snprintf for messages into fixed buffers, where cutting a long message
 * short is the intended behaviour.  Always NUL-terminates. */
void str_printf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* str_printf(buf, len, "%s", src) without the formatting machinery (the
 * collection copies its PMUs' names into every interval's snapshot). */
void str_copy(char *buf, size_t len, const char *src);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t mono_ns(void);

/* Length of the valid UTF-8 sequence at @s (1-4), or 0 where @s does not
 * start one (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF). */
size_t utf8_len(const unsigned char *s);

/* Copies @src into @buf as text any reader takes (a log line, a label,
 * JSON, a terminal): every byte that is not part of a valid UTF-8
 * sequence, and every control character, becomes the four characters
 * \xNN, the way systemd escapes unit names, so that different names stay
 * different.  Cut at a character boundary; always NUL-terminates. */
void str_escape(char *buf, size_t len, const char *src);
/* The same, newlines kept: for a format that escapes them itself (a
 * label value's \n, JSON's), where the text may run over lines. */
void str_escape_text(char *buf, size_t len, const char *src);

/* Copies @src into @buf for a message a client sees (JSON needs UTF-8):
 * every byte that is not part of a valid UTF-8 sequence, and every control
 * character, becomes '?'.  Cut at a character boundary; always
 * NUL-terminates. */
void str_printable(char *buf, size_t len, const char *src);

/* Reads all of @path into a new NUL-terminated buffer: a regular file
 * (or /dev/null), opened without blocking.  -errno on failure, -EISDIR
 * for a directory, -ENXIO for a FIFO, socket or other device (reading
 * one could block the daemon for ever), -EFBIG beyond @max bytes. */
int read_file(const char *path, size_t max, char **data, size_t *len);
/* strerror() of read_file's error, saying what -ENXIO means there. */
const char *read_file_strerror(int r);

/* pthread_create() for every thread of the daemon but the collection:
 * always at normal priority (SCHED_OTHER), also when the collection runs
 * real-time (the unit's CPUSchedulingPolicy=rr), rather than inheriting
 * its policy.  0 or -errno. */
int thread_spawn(pthread_t *thread, bool detached, void *(*fn)(void *), void *arg);

/* A growable byte buffer.  After an allocation failure every append is a
 * no-op and buf_failed() is true, so writers check once at the end. */
struct buf {
	char *data;
	size_t len;
	size_t cap;
	bool failed;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
bool buf_reserve(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *data, size_t len);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Decimal integer, without printf. */
void buf_u64(struct buf *b, uint64_t v);
void buf_i64(struct buf *b, int64_t v);
/* A counter held as a double: its integer part (exact below 2^64). */
void buf_count(struct buf *b, double v);
/* A float as Prometheus parses it: shortest of fixed 9 decimals or %.17g. */
void buf_double(struct buf *b, double v);
bool buf_failed(const struct buf *b);
/* Hands the data over to the caller (who frees it); @b is reset. */
char *buf_steal(struct buf *b, size_t *len);

#endif
