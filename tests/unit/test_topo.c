/* SPDX-License-Identifier: MIT */
/* Unit tests of topo: CPU lists and per-CPU topology from fixture trees,
 * and hotplug through edited copies of them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "topo.h"

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* Copies @fixture to tmpdir/@name and returns the copy's path. */
static const char *copy_fixture(const char *fixture, const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	sh("rm -rf '%s' && cp -r '%s/%s' '%s'", path, fixtures(), fixture, path);
	return path;
}

static void set_online(const char *copy, unsigned cpu, int online)
{
	sh("'%s/set-online' '%s' %u %d", fixtures(), copy, cpu, online);
}

struct handle {
	struct sysfs *sysfs;
	struct topo *topo;
};

static struct handle open_root(const char *root)
{
	struct handle h = { 0 };
	int r;

	r = sysfs_new(root, &h.sysfs);
	if (r < 0)
		fail_msg("sysfs_new(%s) = %d", root, r);
	r = topo_new(h.sysfs, &h.topo);
	if (r < 0)
		fail_msg("topo_new(%s) = %d", root, r);
	return h;
}

static struct handle open_fixture(const char *fixture)
{
	char root[1024];

	snprintf(root, sizeof(root), "%s/%s", fixtures(), fixture);
	return open_root(root);
}

static void close_handle(struct handle *h)
{
	topo_free(h->topo);
	sysfs_free(h->sysfs);
}

static void assert_cpu(const struct topo *topo, unsigned cpu, int core, int package, int die,
		       int node)
{
	const struct topo_cpu *c = topo_cpu(topo, cpu);

	if (!c)
		fail_msg("CPU %u: not possible", cpu);
	assert_int_equal(c->cpu, cpu);
	if (!c->known || c->core_id != core || c->package != package || c->die != die ||
	    c->node != node)
		fail_msg("CPU %u: known %d core %d package %d die %d node %d, expected known core %d package %d die %d node %d",
			 cpu, c->known, c->core_id, c->package, c->die, c->node, core, package,
			 die, node);
}

static void assert_unknown(const struct topo *topo, unsigned cpu)
{
	const struct topo_cpu *c = topo_cpu(topo, cpu);

	if (!c)
		fail_msg("CPU %u: not possible", cpu);
	assert_int_equal(c->cpu, cpu);
	assert_false(c->known);
	assert_int_equal(c->core_id, -1);
	assert_int_equal(c->package, -1);
	assert_int_equal(c->die, -1);
	assert_int_equal(c->node, -1);
}

static void test_spr_2s(void **state)
{
	struct handle h = open_fixture("spr-2s");

	(void)state;
	assert_string_equal(cpus_text(topo_possible(h.topo)), "0-15");
	assert_string_equal(cpus_text(topo_present(h.topo)), "0-15");
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-15");
	/* Kernel enumeration: first threads of package 0 then 1, then the
	 * SMT siblings in the same order. */
	for (unsigned cpu = 0; cpu < 16; cpu++) {
		int package = (cpu / 4) % 2;

		assert_cpu(h.topo, cpu, (int)cpu % 4, package, 0, package);
	}
	assert_cpu(h.topo, 9, 1, 0, 0, 0);
	assert_cpu(h.topo, 12, 0, 1, 0, 1);
	assert_null(topo_cpu(h.topo, 16));
	assert_null(topo_cpu(h.topo, 8191));
	assert_null(topo_cpu(h.topo, 100000));
	close_handle(&h);
}

static void test_icx_1s(void **state)
{
	struct handle h = open_fixture("icx-1s");

	(void)state;
	assert_string_equal(cpus_text(topo_possible(h.topo)), "0-7");
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-7");
	for (unsigned cpu = 0; cpu < 8; cpu++)
		assert_cpu(h.topo, cpu, (int)cpu % 4, 0, 0, 0);
	assert_null(topo_cpu(h.topo, 8));
	close_handle(&h);
}

static void test_adl_hybrid(void **state)
{
	struct handle h = open_fixture("adl-hybrid");

	(void)state;
	assert_string_equal(cpus_text(topo_possible(h.topo)), "0-15");
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-15");
	/* P-cores with SMT (core ids 0, 4, 8, 12), then E-cores 32-39. */
	for (unsigned cpu = 0; cpu < 8; cpu++)
		assert_cpu(h.topo, cpu, (int)(cpu / 2) * 4, 0, 0, 0);
	for (unsigned cpu = 8; cpu < 16; cpu++)
		assert_cpu(h.topo, cpu, 32 + (int)cpu - 8, 0, 0, 0);
	close_handle(&h);
}

static void test_vm(void **state)
{
	struct handle h = open_fixture("vm-nopmu");

	(void)state;
	assert_string_equal(cpus_text(topo_possible(h.topo)), "0-3");
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-3");
	for (unsigned cpu = 0; cpu < 4; cpu++)
		assert_cpu(h.topo, cpu, (int)cpu, 0, 0, 0);
	close_handle(&h);
}

static void test_spr_holes(void **state)
{
	struct handle h = open_fixture("spr-holes");

	(void)state;
	assert_string_equal(cpus_text(topo_possible(h.topo)), "0-7");
	assert_string_equal(cpus_text(topo_present(h.topo)), "0-7");
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-2,5-7");
	assert_cpu(h.topo, 0, 0, 0, 0, 0);
	assert_cpu(h.topo, 2, 2, 0, 0, 0);
	assert_cpu(h.topo, 5, 1, 0, 0, 0);
	assert_cpu(h.topo, 7, 3, 0, 0, 0);
	/* Offline CPUs have no topology directory. */
	assert_unknown(h.topo, 3);
	assert_unknown(h.topo, 4);
	assert_int_equal(topo_read_cpu(h.topo, h.sysfs, 3), -ENOENT);
	assert_unknown(h.topo, 3);
	close_handle(&h);
}

static void test_read_cpu_not_possible(void **state)
{
	struct handle h = open_fixture("spr-2s");

	(void)state;
	assert_int_equal(topo_read_cpu(h.topo, h.sysfs, 16), -EINVAL);
	assert_int_equal(topo_read_cpu(h.topo, h.sysfs, 9000), -EINVAL);
	assert_int_equal(topo_read_cpu(h.topo, h.sysfs, 15), 0);
	assert_cpu(h.topo, 15, 3, 1, 0, 1);
	close_handle(&h);
}

static void test_refresh_online(void **state)
{
	const char *root = copy_fixture("spr-2s", "refresh");
	char copy[256];
	struct handle h;

	(void)state;
	strcpy(copy, root);
	h = open_root(copy);
	assert_int_equal(topo_refresh_online(h.topo, h.sysfs), 0);

	set_online(copy, 5, 0);
	assert_int_equal(topo_refresh_online(h.topo, h.sysfs), 1);
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-4,6-15");
	assert_int_equal(topo_refresh_online(h.topo, h.sysfs), 0);
	/* possible and present do not change with hotplug. */
	assert_string_equal(cpus_text(topo_possible(h.topo)), "0-15");
	assert_string_equal(cpus_text(topo_present(h.topo)), "0-15");
	/* The topology of a CPU read while it was online is kept. */
	assert_cpu(h.topo, 5, 1, 1, 0, 1);

	set_online(copy, 12, 0);
	set_online(copy, 13, 0);
	assert_int_equal(topo_refresh_online(h.topo, h.sysfs), 1);
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-4,6-11,14-15");

	set_online(copy, 5, 1);
	assert_int_equal(topo_refresh_online(h.topo, h.sysfs), 1);
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-11,14-15");
	assert_int_equal(topo_read_cpu(h.topo, h.sysfs, 5), 0);
	assert_cpu(h.topo, 5, 1, 1, 0, 1);

	/* A vanished online file is an error and changes nothing. */
	sh("rm '%s/devices/system/cpu/online'", copy);
	assert_int_equal(topo_refresh_online(h.topo, h.sysfs), -ENOENT);
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-11,14-15");
	close_handle(&h);
}

static void test_cpu_comes_online(void **state)
{
	const char *root = copy_fixture("spr-holes", "comes-online");
	char copy[256];
	struct handle h;

	(void)state;
	strcpy(copy, root);
	h = open_root(copy);
	assert_unknown(h.topo, 3);

	set_online(copy, 3, 1);
	assert_int_equal(topo_refresh_online(h.topo, h.sysfs), 1);
	assert_string_equal(cpus_text(topo_online(h.topo)), "0-3,5-7");
	/* Its topology directory is not there (yet). */
	assert_int_equal(topo_read_cpu(h.topo, h.sysfs, 3), -ENOENT);
	assert_unknown(h.topo, 3);

	/* It appears; no die_id (kernels before 5.2), the node from the
	 * cpu3/node1 link since node cpulists skip CPUs offline at start. */
	sh("cd '%s/devices/system' && mkdir -p cpu/cpu3/topology node/node1 && "
	   "echo 3 > cpu/cpu3/topology/core_id && "
	   "echo 0 > cpu/cpu3/topology/physical_package_id && "
	   "ln -s ../../node/node1 cpu/cpu3/node1", copy);
	assert_int_equal(topo_read_cpu(h.topo, h.sysfs, 3), 0);
	assert_cpu(h.topo, 3, 3, 0, 0, 1);
	assert_unknown(h.topo, 4);
	close_handle(&h);
}

static void test_node_from_link(void **state)
{
	const char *root = copy_fixture("spr-2s", "node-link");
	char copy[256];
	struct handle h;

	(void)state;
	strcpy(copy, root);
	/* Without node1's cpulist the cpuN/node1 links still say node 1. */
	sh("rm '%s/devices/system/node/node1/cpulist'", copy);
	/* die_id is read when present. */
	sh("echo 1 > '%s/devices/system/cpu/cpu7/topology/die_id'", copy);
	h = open_root(copy);
	assert_cpu(h.topo, 12, 0, 1, 0, 1);
	assert_cpu(h.topo, 4, 0, 1, 0, 1);
	assert_cpu(h.topo, 7, 3, 1, 1, 1);
	assert_cpu(h.topo, 0, 0, 0, 0, 0);
	close_handle(&h);
}

static void test_node_cpulist_wins(void **state)
{
	const char *root = copy_fixture("spr-2s", "node-list");
	char copy[256];
	struct handle h;

	(void)state;
	strcpy(copy, root);
	/* The node cpulists are read first; a link is only a fallback. */
	sh("cd '%s/devices/system/node' && echo 0-11 > node0/cpulist && echo 12-15 > node1/cpulist",
	   copy);
	h = open_root(copy);
	assert_cpu(h.topo, 4, 0, 1, 0, 0);
	assert_cpu(h.topo, 12, 0, 1, 0, 1);
	close_handle(&h);
}

static void test_topo_new_errors(void **state)
{
	const char *root;
	char copy[256];
	struct sysfs *sysfs;
	struct topo *topo = NULL;

	(void)state;
	root = copy_fixture("spr-2s", "no-possible");
	strcpy(copy, root);
	sh("rm '%s/devices/system/cpu/possible'", copy);
	assert_int_equal(sysfs_new(copy, &sysfs), 0);
	assert_int_equal(topo_new(sysfs, &topo), -ENOENT);
	sysfs_free(sysfs);

	root = copy_fixture("spr-2s", "bad-online");
	strcpy(copy, root);
	sh("echo 0-x > '%s/devices/system/cpu/online'", copy);
	assert_int_equal(sysfs_new(copy, &sysfs), 0);
	assert_int_equal(topo_new(sysfs, &topo), -EINVAL);
	sysfs_free(sysfs);

	root = copy_fixture("spr-2s", "empty-possible");
	strcpy(copy, root);
	sh("echo > '%s/devices/system/cpu/possible'", copy);
	assert_int_equal(sysfs_new(copy, &sysfs), 0);
	assert_int_equal(topo_new(sysfs, &topo), -ENODEV);
	sysfs_free(sysfs);

	/* No present file: present = possible. */
	root = copy_fixture("spr-holes", "no-present");
	strcpy(copy, root);
	sh("rm '%s/devices/system/cpu/present'", copy);
	{
		struct handle h = open_root(copy);

		assert_string_equal(cpus_text(topo_present(h.topo)), "0-7");
		assert_string_equal(cpus_text(topo_online(h.topo)), "0-2,5-7");
		close_handle(&h);
	}
	topo_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spr_2s),
		cmocka_unit_test(test_icx_1s),
		cmocka_unit_test(test_adl_hybrid),
		cmocka_unit_test(test_vm),
		cmocka_unit_test(test_spr_holes),
		cmocka_unit_test(test_read_cpu_not_possible),
		cmocka_unit_test(test_refresh_online),
		cmocka_unit_test(test_cpu_comes_online),
		cmocka_unit_test(test_node_from_link),
		cmocka_unit_test(test_node_cpulist_wins),
		cmocka_unit_test(test_topo_new_errors),
	};

	return cmocka_run_group_tests(tests, tmpdir_make, tmpdir_remove);
}
