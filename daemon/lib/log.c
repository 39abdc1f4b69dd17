/* SPDX-License-Identifier: MIT */
/* log: level filtering, journal/plain formatting, rate limiting. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static _Atomic int current_level = LOG_LEVEL_INFO;
static _Atomic bool journal_format;
static _Atomic int line_format = LOG_FORMAT_TEXT;

void log_set_level(enum log_level level)
{
	atomic_store(&current_level, (int)level);
}

enum log_level log_get_level(void)
{
	return (enum log_level)atomic_load(&current_level);
}

bool log_level_enabled(enum log_level level)
{
	return (int)level <= atomic_load(&current_level);
}

void log_set_format(enum log_format format)
{
	atomic_store(&line_format, (int)format);
}

void log_set_journal(bool journal)
{
	atomic_store(&journal_format, journal);
}

/* systemd sets JOURNAL_STREAM=dev:ino for the stream it connected; it only
 * applies if our stderr is still that stream (not redirected by a wrapper). */
void log_setup_target(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) < 0) {
		log_set_journal(false);
		return;
	}
	log_set_journal((unsigned long long)st.st_dev == dev &&
			(unsigned long long)st.st_ino == ino);
}

static const char *level_name(enum log_level level)
{
	switch (level) {
	case LOG_LEVEL_ERROR:
		return "error";
	case LOG_LEVEL_WARNING:
		return "warning";
	case LOG_LEVEL_INFO:
		return "info";
	case LOG_LEVEL_DEBUG:
		return "debug";
	}
	return "?";
}

/* logfmt's and JSON's level names, as Prometheus' exporters spell them. */
static const char *short_level_name(enum log_level level)
{
	return level == LOG_LEVEL_WARNING ? "warn" : level_name(level);
}

/* @msg between double quotes, '"' and '\\' escaped (the same rule in
 * logfmt and JSON: @msg holds no control byte). */
static size_t quoted(char *buf, size_t len, size_t n, const char *msg)
{
	if (n < len)
		buf[n] = '"';
	n++;
	for (const char *p = msg; *p; p++) {
		if (*p == '"' || *p == '\\') {
			if (n < len)
				buf[n] = '\\';
			n++;
		}
		if (n < len)
			buf[n] = *p;
		n++;
	}
	if (n < len)
		buf[n] = '"';
	return n + 1;
}

size_t log_format_line(char *buf, size_t len, enum log_format format, bool journal,
		       enum log_level level, const struct timespec *ts, int pid, const char *msg)
{
	char when[40], prefix[8] = "";
	size_t n = 0;
	struct tm tm;
	int k;

	if (len == 0)
		return 0;
	if (journal)
		snprintf(prefix, sizeof(prefix), "<%d>", (int)level);
	if (format == LOG_FORMAT_TEXT) {
		if (journal) {
			k = snprintf(buf, len, "%s%s\n", prefix, msg);
		} else {
			localtime_r(&ts->tv_sec, &tm);
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
			k = snprintf(buf, len, "%s.%03ld topdownd[%d]: %s: %s\n", when, ts->tv_nsec / 1000000, pid,
				     level_name(level), msg);
		}
		n = k < 0 ? 0 : (size_t)k;
	} else {
		gmtime_r(&ts->tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		if (format == LOG_FORMAT_LOGFMT)
			k = snprintf(buf, len, "%sts=%s.%03ldZ level=%s msg=", prefix, when, ts->tv_nsec / 1000000,
				     short_level_name(level));
		else
			k = snprintf(buf, len, "%s{\"ts\":\"%s.%03ldZ\",\"level\":\"%s\",\"msg\":", prefix, when,
				     ts->tv_nsec / 1000000, short_level_name(level));
		n = quoted(buf, len, k < 0 ? 0 : (size_t)k, msg);
		k = format == LOG_FORMAT_LOGFMT ? snprintf(buf + (n < len ? n : len - 1), n < len ? len - n : 1,
							   " pid=%d\n", pid)
						: snprintf(buf + (n < len ? n : len - 1), n < len ? len - n : 1,
							   ",\"pid\":%d}\n", pid);
		n += k < 0 ? 0 : (size_t)k;
	}
	/* Cut: the line still ends with its newline. */
	if (n >= len) {
		n = len - 1;
		buf[n] = '\0';
		if (n > 0)
			buf[n - 1] = '\n';
	}
	return n;
}

static void emit(enum log_level level, const char *msg)
{
	char line[2048];
	struct timespec ts;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = log_format_line(line, sizeof(line), (enum log_format)atomic_load(&line_format),
			    atomic_load(&journal_format), level, &ts, (int)getpid(), msg);
	/* One write(2) per line keeps lines whole between threads. */
	ssize_t ignored = write(STDERR_FILENO, line, n);
	(void)ignored;
}

static void vlog(enum log_level level, int error, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void vlog(enum log_level level, int error, const char *fmt, va_list ap)
{
	char msg[LOG_LINE_MAX], clean[LOG_LINE_MAX];
	int saved = errno;

	/* glibc expands %m from errno: make it describe @error. */
	errno = error < 0 ? -error : saved;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Every line: what it quotes (a user name from a file, a path, a
	 * cgroup's name, a message from a library) may hold terminal escapes,
	 * newlines or bytes that are not UTF-8, which a journal or a log
	 * pipeline would take for another line or refuse. */
	str_escape(clean, sizeof(clean), msg);
	emit(level, clean);
	errno = saved;
}

int log_internal(enum log_level level, int error, const char *fmt, ...)
{
	va_list ap;

	if (!log_level_enabled(level))
		return error;
	va_start(ap, fmt);
	vlog(level, error, fmt, ap);
	va_end(ap);
	return error;
}

int log_ratelimited(struct log_ratelimit *rl, enum log_level level, int error,
		    const char *fmt, ...)
{
	uint64_t now;
	unsigned dropped = 0;
	bool print;
	va_list ap;

	if (!log_level_enabled(level))
		return error;
	pthread_mutex_lock(&rl->lock);
	/* Read under the lock: a time taken before it can be older than the
	 * window another thread has just begun, and the unsigned difference
	 * would then look like an expired window (a second burst). */
	now = mono_ns();
	if (rl->begin_ns == 0 || now - rl->begin_ns >= rl->interval_ns) {
		dropped = rl->suppressed;
		rl->begin_ns = now;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	print = rl->printed < rl->burst;
	if (print)
		rl->printed++;
	else
		rl->suppressed++;
	pthread_mutex_unlock(&rl->lock);
	if (dropped > 0)
		log_internal(level, 0, "(%u similar messages suppressed)", dropped);
	if (print) {
		va_start(ap, fmt);
		vlog(level, error, fmt, ap);
		va_end(ap);
	}
	return error;
}
