/* SPDX-License-Identifier: MIT */
/* allocount: an LD_PRELOAD shim counting heap allocations, for `make bench`.
 *
 * Counts every malloc, calloc, realloc, reallocarray, posix_memalign,
 * aligned_alloc, memalign, valloc and pvalloc call, split between the main
 * thread (gettid() == getpid(): topdownd's collection thread) and all the
 * others (libmicrohttpd's threads), with the bytes asked for.
 *
 * The counters live in a shared file mapping named by ALLOCOUNT_FILE, so the
 * harness reads them at any moment without signalling the process: eight
 * little-endian uint64 words
 *   0 magic "ALLOCNT1"   1 pid
 *   2 main allocations   3 main bytes
 *   4 other allocations  5 other bytes
 *   6 frees (all threads)
 *   7 heap bytes live that libfakepmu.so allocated itself (return address in
 *     its code): test equipment standing in for kernel memory, which the
 *     harness subtracts from the daemon's RSS
 * Without ALLOCOUNT_FILE the shim counts into a private array, which a
 * benchmark linked in the same process reads through allocount_words().
 *
 * Preload it before the fake PMU: LD_PRELOAD="allocount.so libfakepmu.so".
 * It forwards to glibc's __libc_* entry points (no dlsym, which allocates)
 * and calls nothing the fake PMU interposes (read, ioctl, close, syscall). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
extern void __libc_free(void *p);

enum {
	W_MAGIC, W_PID, W_MAIN_N, W_MAIN_BYTES, W_OTHER_N, W_OTHER_BYTES, W_FREES,
	W_FAKE_LIVE, W_COUNT
};

static uint64_t fallback[W_COUNT];
static _Atomic(uint64_t *) words;
static pid_t main_pid;
/* libfakepmu.so's code, to tell its own allocations apart. */
static uintptr_t fake_lo, fake_hi;

/* 0 unknown, 1 main thread, 2 another thread. */
static __thread int role __attribute__((tls_model("initial-exec")));
static __thread int initialising __attribute__((tls_model("initial-exec")));

static int find_fake(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libfakepmu"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!fake_lo || lo < fake_lo)
			fake_lo = lo;
		if (hi > fake_hi)
			fake_hi = hi;
	}
	return 1;
}

/* Runs at the first allocation (the fake PMU's constructor allocates
 * before ours would run) or from the constructor, whichever is first. */
static void allocount_setup(void)
{
	const char *path = getenv("ALLOCOUNT_FILE");
	uint64_t *w = fallback;

	if (atomic_load(&words) || initialising)
		return;
	initialising = 1;
	main_pid = getpid();
	dl_iterate_phdr(find_fake, NULL);
	if (path && *path) {
		/* The descriptor stays open: closing would go through the fake
		 * PMU's close(), which may not be initialised yet. */
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd >= 0 && ftruncate(fd, 4096) == 0) {
			void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

			if (p != MAP_FAILED)
				w = p;
		}
	}
	w[W_PID] = (uint64_t)main_pid;
	memcpy(&w[W_MAGIC], "ALLOCNT1", 8);
	atomic_store(&words, w);
	initialising = 0;
}

__attribute__((constructor)) static void allocount_init(void)
{
	allocount_setup();
}

static int from_fake(const void *ra)
{
	return (uintptr_t)ra >= fake_lo && (uintptr_t)ra < fake_hi;
}

static void fake_track(const void *ra, void *p, int64_t sign)
{
	uint64_t *w = atomic_load_explicit(&words, memory_order_relaxed);

	if (w && p && from_fake(ra))
		__atomic_fetch_add(&w[W_FAKE_LIVE], (uint64_t)(sign * (int64_t)malloc_usable_size(p)),
				   __ATOMIC_RELAXED);
}

static void count(size_t size)
{
	uint64_t *w = atomic_load_explicit(&words, memory_order_relaxed);
	int main_thread;

	if (!w) {
		allocount_setup();
		w = atomic_load_explicit(&words, memory_order_relaxed);
		if (!w)
			return; /* allocations of the set-up itself */
	}
	if (!role)
		role = gettid() == main_pid ? 1 : 2;
	main_thread = role == 1;
	__atomic_fetch_add(&w[main_thread ? W_MAIN_N : W_OTHER_N], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&w[main_thread ? W_MAIN_BYTES : W_OTHER_BYTES], size, __ATOMIC_RELAXED);
}

#define RA __builtin_return_address(0)

void *malloc(size_t size)
{
	void *p;

	count(size);
	p = __libc_malloc(size);
	fake_track(RA, p, 1);
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p;

	count(n * size);
	p = __libc_calloc(n, size);
	fake_track(RA, p, 1);
	return p;
}

void *realloc(void *p, size_t size)
{
	void *q;

	count(size);
	if (p && from_fake(RA))
		fake_track(RA, p, -1);
	q = __libc_realloc(p, size);
	if (!q && p && size)
		fake_track(RA, p, 1); /* failed: the old block lives on */
	fake_track(RA, q, 1);
	return q;
}

void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	count(total);
	return __libc_realloc(p, total);
}

void *memalign(size_t align, size_t size)
{
	count(size);
	return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	count(size);
	return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	count(size);
	p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t size)
{
	count(size);
	return __libc_valloc(size);
}

void *pvalloc(size_t size)
{
	count(size);
	return __libc_pvalloc(size);
}

/* For in-process benchmarks (dlsym(RTLD_DEFAULT, "allocount_words")). */
const uint64_t *allocount_words(void);
const uint64_t *allocount_words(void)
{
	return atomic_load(&words);
}

void free(void *p)
{
	uint64_t *w = atomic_load_explicit(&words, memory_order_relaxed);

	if (p && w)
		__atomic_fetch_add(&w[W_FREES], 1, __ATOMIC_RELAXED);
	fake_track(RA, p, -1);
	__libc_free(p);
}
