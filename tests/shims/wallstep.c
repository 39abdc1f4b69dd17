/* SPDX-License-Identifier: MIT */
/* wallstep: test equipment, preloaded (LD_PRELOAD) into a program to step
 * its wall clock as NTP or `date -s` would, without touching the
 * machine's: CLOCK_REALTIME (and gettimeofday, time) read through it are
 * moved by the number of seconds in the file WALLSTEP_FILE (a decimal,
 * read at every call; missing or empty: 0).  Every other clock passes
 * through untouched.  Built alone, from this file only. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static int64_t offset_ns(void)
{
	const char *path = getenv("WALLSTEP_FILE");
	char text[64];
	ssize_t n;
	int fd;

	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	return (int64_t)(strtod(text, NULL) * 1e9);
}

static int real_clock_gettime(clockid_t id, struct timespec *ts)
{
	static clock_gettime_fn real;

	if (!real)
		real = (clock_gettime_fn)(uintptr_t)dlsym(RTLD_NEXT, "clock_gettime");
	return real(id, ts);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int64_t ns;
	int r = real_clock_gettime(id, ts);

	if (r != 0 || (id != CLOCK_REALTIME && id != CLOCK_REALTIME_COARSE))
		return r;
	ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + offset_ns();
	ts->tv_sec = (time_t)(ns / 1000000000);
	ts->tv_nsec = (long)(ns % 1000000000);
	return 0;
}

int gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
