/* SPDX-License-Identifier: MIT */
/* log: the daemon's only way to say something to the operator.
 *
 * Owns the log level, the output format (sd-daemon "<N>" priority prefixes
 * when stderr is the journal, timestamps otherwise) and rate limiting of
 * repeated messages.  Thread-safe: one line is written with one call. */
#ifndef TOPDOWND_LOG_H
#define TOPDOWND_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Values are syslog priorities, as sd-daemon(3) prefixes expect. */
enum log_level {
	LOG_LEVEL_ERROR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

/* How a line is written ([log] format): topdownd's own text, or for log
 * pipelines (Loki, Elasticsearch) logfmt as Prometheus' exporters write
 * it, or a JSON object per line. */
enum log_format {
	LOG_FORMAT_TEXT,
	LOG_FORMAT_LOGFMT,
	LOG_FORMAT_JSON,
};

/* The longest message a line carries (longer ones are cut). */
#define LOG_LINE_MAX 1536

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void log_set_format(enum log_format format);
/* One line of @msg (already escaped: no control bytes, UTF-8) at @level
 * and time @ts, by process @pid, into @buf, newline included: with the
 * "<N>" priority prefix for the journal (which strips it), then the
 * format's fields.  The length written, cut to @len - 1.  Pure. */
size_t log_format_line(char *buf, size_t len, enum log_format format, bool journal,
		       enum log_level level, const struct timespec *ts, int pid, const char *msg);
/* Chooses the journal format when JOURNAL_STREAM names our stderr. */
void log_setup_target(void);
/* Forces the journal format on or off (tests). */
void log_set_journal(bool journal);
bool log_level_enabled(enum log_level level);

/* Logs at @level; `%m` in @fmt expands to strerror(-error) when error < 0.
 * Returns @error, so a caller can write `return log_error_errno(r, ...)`. */
int log_internal(enum log_level level, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_error(...) log_internal(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...) log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_LEVEL_ERROR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_internal(LOG_LEVEL_INFO, (e), __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)

/* Rate limiting for messages that can repeat every interval: at most
 * @burst messages per @interval_ns; the first message after a suppressed
 * run says how many were dropped.  A limiter may be shared by threads
 * (libmicrohttpd's, the collection): its state is guarded by @lock, which
 * is never held while writing. */
struct log_ratelimit {
	uint64_t interval_ns;
	unsigned burst;
	pthread_mutex_t lock;
	uint64_t begin_ns;
	unsigned printed;
	unsigned suppressed;
};

#define LOG_RATELIMIT_INIT(interval, n) \
	{ .interval_ns = (interval), .burst = (n), .lock = PTHREAD_MUTEX_INITIALIZER }

int log_ratelimited(struct log_ratelimit *rl, enum log_level level, int error,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
