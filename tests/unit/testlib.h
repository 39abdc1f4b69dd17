/* SPDX-License-Identifier: MIT */
/* testlib: what several unit tests share (include after <cmocka.h>): the
 * fixture trees, a temporary directory for a group of tests, CPU lists
 * for messages, and a snapshot over a test's own arrays. */
#ifndef TOPDOWND_TESTLIB_H
#define TOPDOWND_TESTLIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "snapshot.h"

/* The fixture trees: $FIXTURES (make check sets it), else the source
 * tree's, for a test run from the repository root. */
static inline const char *fixtures(void)
{
	const char *f = getenv("FIXTURES");

	return f && *f ? f : "tests/fixtures";
}

/* The group's temporary directory, made by tmpdir_make() and removed with
 * what is in it by tmpdir_remove() (cmocka's group setup and teardown). */
static char tmpdir[64] __attribute__((unused));

static inline int tmpdir_make(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/topdownd-unit.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int tmpdir_remove(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* @set as a CPU list ("0-3,8"), in one of four buffers used in turn: a
 * message may show four. */
static inline const char *cpus_text(const struct cpuset *set)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	cpuset_format(set, buf[i], sizeof(buf[i]));
	return buf[i];
}

/* @s (a test fixture's, zeroed) over the fixture's own arrays. */
static inline struct snapshot *snap_wire(struct snapshot *s, struct snap_cpu *cpus,
					 struct snap_core *cores, struct snap_pkg *pkgs)
{
	s->cpus = cpus;
	s->cores = cores;
	s->pkgs = pkgs;
	return s;
}

#endif
