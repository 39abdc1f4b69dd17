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

static void emit(enum log_level level, const char *msg)
{
	char line[2048];
	int n;

	if (atomic_load(&journal_format)) {
		n = snprintf(line, sizeof(line), "<%d>%s\n", (int)level, msg);
	} else {
		struct timespec ts;
		struct tm tm;
		char when[32];

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		n = snprintf(line, sizeof(line), "%s.%03ld topdownd[%d]: %s: %s\n",
			     when, ts.tv_nsec / 1000000, (int)getpid(),
			     level_name(level), msg);
	}
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	/* One write(2) per line keeps lines whole between threads. */
	ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
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
