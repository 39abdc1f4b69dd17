/* SPDX-License-Identifier: MIT */
/* log: the journal format, and rate limiting shared by threads (run under
 * ThreadSanitizer too). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "util.h"

/* Runs @fn with stderr going to a pipe; returns what was written. */
static void capture(void (*fn)(void), char *out, size_t len)
{
	int p[2], saved = dup(2);
	ssize_t n, got = 0;

	assert_int_equal(pipe(p), 0);
	dup2(p[1], 2);
	fn();
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	while ((n = read(p[0], out + got, len - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = '\0';
	close(p[0]);
}

static struct log_ratelimit shared = LOG_RATELIMIT_INIT(3600 * UINT64_C(1000000000), 10);

static void *spam(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		log_ratelimited(&shared, LOG_LEVEL_WARNING, 0, "repeated %d", i);
	return NULL;
}

static void four_threads(void)
{
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, spam, NULL), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

static void test_ratelimit_threads(void **state)
{
	char out[8192];
	int lines = 0;

	(void)state;
	log_set_journal(true);
	log_set_level(LOG_LEVEL_INFO);
	capture(four_threads, out, sizeof(out));
	/* 4,000 messages, one window: exactly the burst gets out, whole. */
	for (const char *p = out; (p = strstr(p, "<4>repeated ")); p++)
		lines++;
	assert_int_equal(lines, 10);
	assert_int_equal(shared.suppressed, 3990);
}

static void journal_line(void)
{
	errno = 0;
	log_error_errno(-2, "Failed to open %s: %m", "x");
	log_debug("not shown at level info");
}

static void test_journal_format(void **state)
{
	char out[512];

	(void)state;
	log_set_journal(true);
	log_set_level(LOG_LEVEL_INFO);
	capture(journal_line, out, sizeof(out));
	assert_string_equal(out, "<3>Failed to open x: No such file or directory\n");
}

static void escaped_line(void)
{
	log_warning("user \"%s\": not a bcrypt hash", "ev\x1b[31mil\nline\x7f");
}

/* Control bytes in what a line quotes come out as \xNN: no terminal
 * escape, no forged second line. */
static void test_escaped(void **state)
{
	char out[512], buf[8];

	(void)state;
	log_set_journal(true);
	log_set_level(LOG_LEVEL_INFO);
	capture(escaped_line, out, sizeof(out));
	assert_string_equal(out, "<4>user \"ev\\x1b[31mil\\x0aline\\x7f\": not a bcrypt hash\n");
	/* Cut whole, never in the middle of an escape. */
	str_escape(buf, sizeof(buf), "ab\001cd");
	assert_string_equal(buf, "ab\\x01c");
	str_escape(buf, 5, "a\x01");
	assert_string_equal(buf, "a");
	/* Bytes that are not UTF-8 too: a journal or Loki takes the line. */
	str_escape(buf, sizeof(buf), "\xff" "\xc3\xa9");
	assert_string_equal(buf, "\\xff\xc3\xa9");
}

/* [log] format: logfmt and JSON lines, as a log pipeline parses them,
 * with the journal's priority prefix or without, and cut whole. */
static void test_formats(void **state)
{
	const struct timespec ts = { .tv_sec = 1795900000, .tv_nsec = 123456789 };
	const char *msg = "user \"a\\b\": \\x1b escaped";
	char buf[256], tiny[40];
	size_t n;

	(void)state;
	n = log_format_line(buf, sizeof(buf), LOG_FORMAT_LOGFMT, false, LOG_LEVEL_WARNING, &ts, 42, msg);
	assert_string_equal(buf, "ts=2026-11-28T21:06:40.123Z level=warn msg=\"user \\\"a\\\\b\\\": \\\\x1b escaped\" pid=42\n");
	assert_int_equal(n, strlen(buf));
	log_format_line(buf, sizeof(buf), LOG_FORMAT_JSON, false, LOG_LEVEL_ERROR, &ts, 42, msg);
	assert_string_equal(buf, "{\"ts\":\"2026-11-28T21:06:40.123Z\",\"level\":\"error\",\"msg\":"
			    "\"user \\\"a\\\\b\\\": \\\\x1b escaped\",\"pid\":42}\n");
	log_format_line(buf, sizeof(buf), LOG_FORMAT_JSON, true, LOG_LEVEL_INFO, &ts, 42, "ok");
	assert_string_equal(buf, "<6>{\"ts\":\"2026-11-28T21:06:40.123Z\",\"level\":\"info\",\"msg\":\"ok\",\"pid\":42}\n");
	log_format_line(buf, sizeof(buf), LOG_FORMAT_TEXT, true, LOG_LEVEL_DEBUG, &ts, 42, "ok");
	assert_string_equal(buf, "<7>ok\n");
	/* A line longer than the buffer: cut, still one line. */
	n = log_format_line(tiny, sizeof(tiny), LOG_FORMAT_LOGFMT, false, LOG_LEVEL_INFO, &ts, 42, msg);
	assert_int_equal(n, sizeof(tiny) - 1);
	assert_int_equal(strlen(tiny), n);
	assert_int_equal(tiny[n - 1], '\n');
	assert_null(strchr(tiny, '\n') == tiny + n - 1 ? NULL : tiny);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ratelimit_threads),
		cmocka_unit_test(test_journal_format),
		cmocka_unit_test(test_escaped),
		cmocka_unit_test(test_formats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
