/* SPDX-License-Identifier: MIT */
/* interpose.c: the LD_PRELOAD surface of libfakepmu.so.  Owns the library
 * constructor (reads FAKEPMU_SYSFS and FAKEPMU_SCENARIO, exits 70 on any
 * problem), the fake clock, the fd table, the global lock, and the exported
 * replacements of glibc's syscall(), read(), __read_chk(), ioctl() and
 * close().  Only SYS_perf_event_open and fds the fake made are emulated;
 * everything else goes straight to the next definition (glibc, or a
 * sanitizer runtime), resolved with dlsym(RTLD_NEXT).
 *
 * Environment:
 *   FAKEPMU_SCENARIO=FILE    JSON scenario (see README.md), required
 *   FAKEPMU_SYSFS=DIR        fixture tree standing in for /sys, required
 *   FAKEPMU_STATS=FILE       optional: at exit, the calls the fake answered
 *                            (perf_event_open, read, ioctl, close: each a
 *                            syscall on real hardware) are appended to FILE,
 *                            one "pid name count" line each, for `make bench`
 *   FAKEPMU_CLOCK_FILE=FILE  optional, tests only: the fake time in seconds
 *                            since load is read from FILE (a decimal number)
 *                            at every operation instead of CLOCK_MONOTONIC;
 *                            it never goes backwards.  The daemon must not
 *                            rely on it.
 *   FAKEPMU_CLOCK_STEP=SEC   optional, tests only: a read-paced clock.  The
 *                            fake time stays at 0 from load and moves only
 *                            at a read: an event's (or, for a group read,
 *                            its leader's) n-th read sees at least n * SEC.
 *                            A tool that reads every counter once per
 *                            interval (perf stat -I) then counts interval k
 *                            over exactly [k * SEC, (k + 1) * SEC] of the
 *                            scenario, however late a loaded machine makes
 *                            its reads; nothing outside the tool paces it.
 *                            At exit, "clock NS" (its last time) is
 *                            appended to FAKEPMU_TRACE. */
#undef _FORTIFY_SOURCE	/* we define read() ourselves */

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fakepmu.h"

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*read_chk_fn)(int, void *, size_t, size_t);
typedef int (*ioctl_fn)(int, unsigned long, ...);
typedef int (*close_fn)(int);
typedef long (*syscall_fn)(long, ...);

static _Atomic(read_fn) real_read;
static _Atomic(read_chk_fn) real_read_chk;
static _Atomic(ioctl_fn) real_ioctl;
static _Atomic(close_fn) real_close;
static _Atomic(syscall_fn) real_syscall;

/* One big lock: the fake is cheap and the daemon reads from one thread;
 * fds that are not fake never take it. */
static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;

/* Calls answered by the fake (FAKEPMU_STATS). */
enum { ST_OPEN, ST_READ, ST_IOCTL, ST_CLOSE, ST_COUNT };
static atomic_ulong answered[ST_COUNT];

static uint64_t mono0_ns;	/* CLOCK_MONOTONIC at load */
static int64_t real0_ns;	/* CLOCK_REALTIME at load */
static const char *clock_file;
static uint64_t clock_last_ns;
static uint64_t clock_step_ns;	/* FAKEPMU_CLOCK_STEP, 0: not read-paced */

/* fd -> fake event, two levels so that lookups need no lock: chunks are
 * allocated on demand under fp_lock and never freed. */
#define FD_CHUNK_SHIFT 12
#define FD_CHUNK (1 << FD_CHUNK_SHIFT)
#define FD_TOP 4096		/* fds below 16M can be fake */
typedef struct fev *_Atomic fd_slot;
static fd_slot *_Atomic fd_table[FD_TOP];

void fp_fatal(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0)
		_exit(70);
	_exit(70);
}

static void *resolve(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p)
		fp_fatal("fakepmu: cannot find the real %s(): %s", name, dlerror());
	return p;
}

/* Lazily, because another library's constructor may call us before ours
 * ran; a race only resolves the same pointer twice. */
#define REAL(var, name, type) ({					\
	type f_ = atomic_load_explicit(&var, memory_order_acquire);	\
	if (!f_) {							\
		f_ = (type)resolve(name);				\
		atomic_store_explicit(&var, f_, memory_order_release);	\
	}								\
	f_;								\
})

int fp_real_close(int fd)
{
	return REAL(real_close, "close", close_fn)(fd);
}

ssize_t fp_real_read(int fd, void *buf, size_t count)
{
	return REAL(real_read, "read", read_fn)(fd, buf, count);
}

uint64_t fp_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t read_clock_file(void)
{
	char buf[64], *end;
	double s;

	if (fp_read_file(clock_file, buf, sizeof(buf)) <= 0)
		return clock_last_ns;
	s = strtod(buf, &end);
	if (end == buf || !(s >= 0) || s > 1e9)
		return clock_last_ns;
	return (uint64_t)llround(s * 1e9);
}

uint64_t fp_now_ns(void)
{
	uint64_t t;

	if (clock_step_ns)
		return clock_last_ns;
	if (!clock_file)
		return fp_mono_ns() - mono0_ns;
	t = read_clock_file();
	if (t < clock_last_ns)
		t = clock_last_ns;
	clock_last_ns = t;
	return t;
}

bool fp_fake_clock(void)
{
	return clock_file != NULL || clock_step_ns;
}

void fp_clock_read(uint64_t nth)
{
	if (clock_step_ns && nth * clock_step_ns > clock_last_ns)
		clock_last_ns = nth * clock_step_ns;
}

/* A file mtime (CLOCK_REALTIME) as fake time since load. */
int64_t fp_realtime_to_rel_ns(int64_t real_ns)
{
	return real_ns - real0_ns;
}

struct fev *fp_fd_lookup(int fd)
{
	fd_slot *chunk;

	if (fd < 0 || fd >= FD_TOP * FD_CHUNK)
		return NULL;
	chunk = atomic_load_explicit(&fd_table[fd >> FD_CHUNK_SHIFT], memory_order_acquire);
	if (!chunk)
		return NULL;
	return atomic_load_explicit(&chunk[fd & (FD_CHUNK - 1)], memory_order_acquire);
}

int fp_fd_set(int fd, struct fev *ev)
{
	fd_slot *chunk;

	if (fd < 0 || fd >= FD_TOP * FD_CHUNK)
		return -1;
	chunk = atomic_load_explicit(&fd_table[fd >> FD_CHUNK_SHIFT], memory_order_acquire);
	if (!chunk) {
		if (!ev)
			return 0;
		chunk = calloc(FD_CHUNK, sizeof(*chunk));
		if (!chunk)
			return -1;
		atomic_store_explicit(&fd_table[fd >> FD_CHUNK_SHIFT], chunk,
				      memory_order_release);
	}
	atomic_store_explicit(&chunk[fd & (FD_CHUNK - 1)], ev, memory_order_release);
	return 0;
}

__attribute__((constructor)) static void fp_init(void)
{
	struct timespec ts;
	const char *scen = getenv("FAKEPMU_SCENARIO");
	const char *sysfs = getenv("FAKEPMU_SYSFS");
	const char *step;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	mono0_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	clock_gettime(CLOCK_REALTIME, &ts);
	real0_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	(void)REAL(real_read, "read", read_fn);
	(void)REAL(real_read_chk, "__read_chk", read_chk_fn);
	(void)REAL(real_ioctl, "ioctl", ioctl_fn);
	(void)REAL(real_close, "close", close_fn);
	(void)REAL(real_syscall, "syscall", syscall_fn);
	if (!scen || !*scen)
		fp_fatal("fakepmu: FAKEPMU_SCENARIO is not set (path of the JSON scenario)");
	if (!sysfs || !*sysfs)
		fp_fatal("fakepmu: FAKEPMU_SYSFS is not set (fixture tree standing in for /sys)");
	clock_file = getenv("FAKEPMU_CLOCK_FILE");
	if (clock_file && !*clock_file)
		clock_file = NULL;
	step = getenv("FAKEPMU_CLOCK_STEP");
	if (step && *step) {
		char *end;
		double sec = strtod(step, &end);

		if (end == step || *end || !(sec > 0) || sec > 3600)
			fp_fatal("fakepmu: FAKEPMU_CLOCK_STEP=%s: expected seconds, a number in (0, 3600]", step);
		clock_step_ns = (uint64_t)llround(sec * 1e9);
		if (clock_file)
			fp_fatal("fakepmu: FAKEPMU_CLOCK_STEP and FAKEPMU_CLOCK_FILE are two clocks: set one");
	}
	fp_fixture_load(sysfs);
	fp_scenario_load(scen);
	fp_cpus_init();
}

__attribute__((destructor)) static void fp_fini(void)
{
	static const char *const names[ST_COUNT] = { "perf_event_open", "read", "ioctl", "close" };
	const char *path = getenv("FAKEPMU_STATS");
	unsigned long total = 0;
	FILE *f;

	/* The read-paced clock's last time, "clock NS": a tool's last
	 * interval ended there (a test places its intervals back from it). */
	if (clock_step_ns && clock_last_ns)
		fp_trace("clock %llu", (unsigned long long)clock_last_ns);
	for (int i = 0; i < ST_COUNT; i++)
		total += atomic_load(&answered[i]);
	/* Appended, by every process that answered something (a tool's
	 * children inherit the preload). */
	if (!total || !path || !*path || !(f = fopen(path, "ae")))
		return;
	for (int i = 0; i < ST_COUNT; i++)
		fprintf(f, "%d %s %lu\n", (int)getpid(), names[i], atomic_load(&answered[i]));
	fclose(f);
}

/* Interposed glibc functions (exported). */

long syscall(long number, ...)
{
	va_list ap;
	long a[6];

	/* Like glibc's own syscall(): six register-sized arguments, whether or
	 * not the caller passed them all. */
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_perf_event_open) {
		long r;
		int saved;

		atomic_fetch_add_explicit(&answered[ST_OPEN], 1, memory_order_relaxed);
		pthread_mutex_lock(&fp_lock);
		/* pid, cpu and group_fd are ints in the kernel's prototype. */
		r = fp_perf_event_open((void *)a[0], (int)a[1], (int)a[2], (int)a[3],
				       (unsigned long)a[4]);
		saved = errno;
		pthread_mutex_unlock(&fp_lock);
		errno = saved;
		return r;
	}
	return REAL(real_syscall, "syscall", syscall_fn)(number, a[0], a[1], a[2], a[3],
							 a[4], a[5]);
}

ssize_t read(int fd, void *buf, size_t count)
{
	struct fev *ev = fp_fd_lookup(fd);

	if (ev) {
		pthread_mutex_lock(&fp_lock);
		ev = fp_fd_lookup(fd);	/* closed meanwhile? */
		if (ev) {
			ssize_t r = fp_read(ev, buf, count);
			int saved = errno;

			atomic_fetch_add_explicit(&answered[ST_READ], 1, memory_order_relaxed);

			pthread_mutex_unlock(&fp_lock);
			errno = saved;
			return r;
		}
		pthread_mutex_unlock(&fp_lock);
	}
	return REAL(real_read, "read", read_fn)(fd, buf, count);
}

ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);
extern void __chk_fail(void) __attribute__((noreturn));

/* What read() becomes under _FORTIFY_SOURCE. */
ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	if (fp_fd_lookup(fd)) {
		if (count > buflen)
			__chk_fail();
		return read(fd, buf, count);
	}
	return REAL(real_read_chk, "__read_chk", read_chk_fn)(fd, buf, count, buflen);
}

int ioctl(int fd, unsigned long request, ...)
{
	struct fev *ev = fp_fd_lookup(fd);
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (ev) {
		pthread_mutex_lock(&fp_lock);
		ev = fp_fd_lookup(fd);
		if (ev) {
			int r = fp_ioctl(ev, request, arg);
			int saved = errno;

			atomic_fetch_add_explicit(&answered[ST_IOCTL], 1, memory_order_relaxed);

			pthread_mutex_unlock(&fp_lock);
			errno = saved;
			return r;
		}
		pthread_mutex_unlock(&fp_lock);
	}
	return REAL(real_ioctl, "ioctl", ioctl_fn)(fd, request, arg);
}

int close(int fd)
{
	struct fev *ev = fp_fd_lookup(fd);

	if (ev) {
		pthread_mutex_lock(&fp_lock);
		ev = fp_fd_lookup(fd);
		if (ev) {
			int r = fp_close(ev);
			int saved = errno;

			atomic_fetch_add_explicit(&answered[ST_CLOSE], 1, memory_order_relaxed);

			pthread_mutex_unlock(&fp_lock);
			errno = saved;
			return r;
		}
		pthread_mutex_unlock(&fp_lock);
	}
	return REAL(real_close, "close", close_fn)(fd);
}
