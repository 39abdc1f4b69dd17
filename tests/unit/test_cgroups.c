/* SPDX-License-Identifier: MIT */
/* Unit tests of per-cgroup attribution's pure parts: the track globs, the
 * cgroup2 mount lookup, the slice accounting core shared with the BPF
 * program, the cost guard's arithmetic, and the bucket table on a
 * directory tree. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgacct.h"
#include "cgattr.h"
#include "cgroups.h"

static const char *const defaults[] = {
	"system.slice/*.service", "kubepods.slice/kubepods-pod*.slice",
	"kubepods.slice/*/kubepods-*-pod*.slice", "kubepods/pod*", "kubepods/*/pod*",
};
#define N_DEFAULTS (sizeof(defaults) / sizeof(defaults[0]))

static void test_match(void **state)
{
	(void)state;
	assert_true(cgroups_match(defaults, N_DEFAULTS, "system.slice/nginx.service"));
	assert_true(cgroups_match(defaults, N_DEFAULTS, "kubepods.slice/kubepods-pod1234.slice"));
	assert_true(cgroups_match(defaults, N_DEFAULTS,
				  "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podab12.slice"));
	assert_true(cgroups_match(defaults, N_DEFAULTS, "kubepods/besteffort/pod0f3e"));
	assert_true(cgroups_match(defaults, N_DEFAULTS, "kubepods/pod0f3e"));
	/* '*' never crosses a '/': a container is not its pod. */
	assert_false(cgroups_match(defaults, N_DEFAULTS,
				   "kubepods.slice/kubepods-pod1234.slice/cri-containerd-99.scope"));
	assert_false(cgroups_match(defaults, N_DEFAULTS, "system.slice/nginx.service/child"));
	assert_false(cgroups_match(defaults, N_DEFAULTS, "system.slice/dbus.socket"));
	assert_false(cgroups_match(defaults, N_DEFAULTS, "user.slice/user-1000.slice"));
	assert_false(cgroups_match(defaults, N_DEFAULTS, "system.slice"));
	/* The QoS levels are no pods ("kubepods" holds "pod"). */
	assert_false(cgroups_match(defaults, N_DEFAULTS, "kubepods.slice/kubepods-burstable.slice"));
	assert_false(cgroups_match(defaults, N_DEFAULTS, "kubepods.slice/kubepods-besteffort.slice"));
	assert_false(cgroups_match(defaults, N_DEFAULTS, "kubepods/burstable"));
	/* A leading dot is not matched by '*' (FNM_PERIOD). */
	assert_false(cgroups_match(defaults, N_DEFAULTS, "system.slice/.hidden.service"));
	assert_false(cgroups_match(defaults, 0, "system.slice/nginx.service"));
}

static void test_depth(void **state)
{
	static const char *const one[] = { "a" };
	static const char *const mixed[] = { "a/*", "x/*/y/*", "b" };

	(void)state;
	assert_int_equal(cgroups_depth(defaults, N_DEFAULTS), 3);
	assert_int_equal(cgroups_depth(one, 1), 1);
	assert_int_equal(cgroups_depth(mixed, 3), 4);
	assert_int_equal(cgroups_depth(one, 0), 0);
}

static void test_find_mount(void **state)
{
	char out[256];
	const char *hybrid =
		"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n";
	const char *unified = "25 22 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";
	const char *none = "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n";
	const char *escaped = "40 30 0:37 / /mnt/with\\040space rw - cgroup2 cgroup2 rw\n";

	(void)state;
	assert_int_equal(cgroups_find_mount(hybrid, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/unified");
	assert_int_equal(cgroups_find_mount(unified, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup");
	assert_int_equal(cgroups_find_mount(none, out, sizeof(out)), -ENOENT);
	assert_int_equal(cgroups_find_mount("", out, sizeof(out)), -ENOENT);
	assert_int_equal(cgroups_find_mount(escaped, out, sizeof(out)), -ENOENT);
	assert_int_equal(cgroups_find_mount(unified, out, 4), -ENOENT);
}

static void test_perf_event_v1(void **state)
{
	(void)state;
	/* Hybrid with perf_event on the unified hierarchy (0): v2. */
	assert_false(cgroups_perf_event_v1("#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
					   "cpu\t1\t1\t1\nperf_event\t0\t1\t1\npids\t8\t1\t1\n"));
	assert_true(cgroups_perf_event_v1("cpuset\t3\t1\t1\nperf_event\t9\t12\t1\n"));
	assert_false(cgroups_perf_event_v1("cpu\t1\t1\t1\n"));
	assert_false(cgroups_perf_event_v1(""));
	/* A name that only starts like it is another controller. */
	assert_false(cgroups_perf_event_v1("perf_eventx\t4\t1\t1\n"));
}

static void set_read(struct cga_read *r, unsigned n, uint64_t base, uint64_t t)
{
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < n; i++) {
		r->value[i] = base * (i + 1);
		r->enabled[i] = t;
		r->running[i] = t;
		r->ok |= 1u << i;
	}
}

static void test_account(void **state)
{
	struct cga_prev prev;
	struct cga_bucket a, b;
	struct cga_read r;

	(void)state;
	memset(&prev, 0, sizeof(prev));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	/* The first read only sets the baseline. */
	set_read(&r, 3, 100, 10);
	assert_int_equal(cga_account(&prev, &r, &a, 3), 0);
	assert_int_equal(a.value[0], 0);
	assert_int_equal(a.slices, 1);
	/* Then each slice's deltas go to the bucket it is charged to. */
	set_read(&r, 3, 150, 20);
	assert_int_equal(cga_account(&prev, &r, &a, 3), 3);
	set_read(&r, 3, 400, 45);
	assert_int_equal(cga_account(&prev, &r, &b, 3), 3);
	assert_int_equal(a.value[0], 50);
	assert_int_equal(a.value[2], 150);
	assert_int_equal(a.enabled[1], 10);
	assert_int_equal(b.value[0], 250);
	assert_int_equal(b.value[1], 500);
	assert_int_equal(b.running[2], 25);
	/* Buckets partition the counts: a + b is the CPU's delta. */
	assert_int_equal(a.value[1] + b.value[1], 2 * 400 - 2 * 100);
	/* An event not read keeps its baseline; the others are charged. */
	set_read(&r, 3, 500, 50);
	r.ok &= ~2u;
	assert_int_equal(cga_account(&prev, &r, &a, 3), 2);
	assert_int_equal(a.value[1], 100);
	set_read(&r, 3, 600, 60);
	assert_int_equal(cga_account(&prev, &r, &a, 3), 3);
	assert_int_equal(a.value[1], 100 + 1200 - 800);
	/* A counter that went backwards was reopened: its count is the new
	 * baseline, nothing negative is charged. */
	set_read(&r, 3, 10, 5);
	assert_int_equal(cga_account(&prev, &r, &b, 3), 0);
	assert_int_equal(b.value[0], 250);
	set_read(&r, 3, 30, 7);
	assert_int_equal(cga_account(&prev, &r, &b, 3), 3);
	assert_int_equal(b.value[0], 270);
	/* Events beyond n_events are never touched. */
	assert_int_equal(b.value[3], 0);
}

static void test_cost(void **state)
{
	(void)state;
	/* 2 ms of program time in 1 s on 2 CPUs: 0.1 % of each. */
	assert_float_equal(cgattr_cost(2000000, 1000000000, 2), 0.001, 1e-12);
	assert_float_equal(cgattr_cost(0, 1000000000, 2), 0, 0);
	assert_float_equal(cgattr_cost(5, 0, 2), 0, 0);
	assert_float_equal(cgattr_cost(5, 10, 0), 0, 0);
}

static char tree[256];

static void mk(const char *rel)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void rm(const char *rel)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	assert_int_equal(rmdir(p), 0);
}

static bool tracked(const struct cgroups *g, const char *path, unsigned *bucket)
{
	for (unsigned s = 0; s < cgroups_slots(g); s++)
		if (cgroups_live(g, s) && strcmp(cgroups_get(g, s)->path, path) == 0) {
			if (bucket)
				*bucket = cgroups_get(g, s)->bucket;
			return true;
		}
	return false;
}

/* The table on an ordinary directory tree (name_to_handle_at gives ids
 * there too): the cap, a cgroup keeping its bucket, gone ones published
 * once more then freed, newcomers taking the freed buckets. */
static void test_scan(void **state)
{
	static const char *const globs[] = { "svc/*", "pods/*/pod*" };
	struct cgroups_change ch;
	struct cgroups *g;
	unsigned b_a, b_a2;
	uint64_t id;
	int fd;

	(void)state;
	snprintf(tree, sizeof(tree), "/tmp/test_cgroups.XXXXXX");
	assert_non_null(mkdtemp(tree));
	fd = open(tree, O_RDONLY | O_DIRECTORY);
	if (cgroups_id(AT_FDCWD, tree, &id) < 0) {
		close(fd);
		rmdir(tree);
		skip(); /* a file system without file handles */
	}
	close(fd);
	/* Nothing matches yet: nothing tracked, nothing dropped. */
	assert_int_equal(cgroups_new(tree, globs, 2, 2, &g), 0);
	assert_int_equal(cgroups_scan(g, &ch), 0);
	assert_int_equal(ch.matched + ch.n_added + ch.n_gone + ch.dropped, 0);
	assert_int_equal(cgroups_scan(g, &ch), 0);
	cgroups_free(g);
	mk("svc");
	mk("svc/a");
	mk("svc/b");
	mk("svc/a/child");
	mk("pods");
	mk("pods/burstable");
	mk("pods/burstable/pod1");
	mk("other");
	assert_int_equal(cgroups_new(tree, globs, 2, 2, &g), 0);
	assert_int_equal(cgroups_scan(g, &ch), 0);
	assert_int_equal(ch.matched, 3);
	assert_int_equal(ch.n_added, 2);
	assert_int_equal(ch.dropped, 1);
	assert_int_equal(cgroups_tracked(g), 2);
	/* In path order: /pods/burstable/pod1 and /svc/a get the two. */
	assert_true(tracked(g, "/pods/burstable/pod1", NULL));
	assert_true(tracked(g, "/svc/a", &b_a));
	assert_false(tracked(g, "/svc/b", NULL));
	/* Nothing changed: nothing reported. */
	assert_int_equal(cgroups_scan(g, &ch), 0);
	assert_int_equal(ch.n_added + ch.n_gone, 0);
	assert_int_equal(ch.dropped, 1);
	/* The pod goes: published once more (still in the table), and the
	 * dropped /svc/b cannot have its bucket before the next scan. */
	rm("pods/burstable/pod1");
	assert_int_equal(cgroups_scan(g, &ch), 0);
	assert_int_equal(ch.n_gone, 1);
	assert_string_equal(cgroups_get(g, ch.gone[0])->path, "/pods/burstable/pod1");
	assert_true(cgroups_live(g, ch.gone[0]));
	assert_int_equal(ch.n_added, 0);
	assert_int_equal(cgroups_tracked(g), 1);
	assert_int_equal(cgroups_scan(g, &ch), 0);
	assert_int_equal(ch.n_added, 1);
	assert_true(tracked(g, "/svc/b", NULL));
	assert_true(tracked(g, "/svc/a", &b_a2));
	assert_int_equal(b_a, b_a2);
	/* Created again under the same name: a new cgroup. */
	rm("svc/a/child");
	rm("svc/a");
	mk("svc/a");
	assert_int_equal(cgroups_scan(g, &ch), 0);
	assert_int_equal(ch.n_gone, 1);
	assert_int_equal(ch.dropped, 1);
	cgroups_free(g);
	/* A match whose path is too long for a bucket's name: dropped and
	 * counted, not skipped unseen (CGROUPS_PATH_MAX with the '/'). */
	{
		char long_name[300];

		memset(long_name, 'x', sizeof(long_name));
		memcpy(long_name, "svc/", 4);
		long_name[4 + 251] = '\0';
		mk(long_name);
		assert_int_equal(cgroups_new(tree, globs, 2, 10, &g), 0);
		assert_int_equal(cgroups_scan(g, &ch), 0);
		assert_int_equal(ch.matched, 3);
		assert_int_equal(ch.n_added, 2);
		assert_int_equal(ch.dropped, 1);
		assert_int_equal(ch.too_long, 1);
		cgroups_free(g);
		rm(long_name);
	}
	rm("svc/a");
	rm("svc/b");
	rm("svc");
	rm("pods/burstable");
	rm("pods");
	rm("other");
	assert_int_equal(rmdir(tree), 0);
	cgroups_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_find_mount),
		cmocka_unit_test(test_perf_event_v1),
		cmocka_unit_test(test_account),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
