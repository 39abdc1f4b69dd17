/* SPDX-License-Identifier: MIT */
/* cgroups: which cgroups get a bucket of their own.  Walks the cgroup v2
 * tree for the directories the [cgroups] track globs match, keeps their
 * kernel ids, hands out a bucket to each up to the cap (a cgroup keeps
 * its bucket while it lives; newcomers beyond the cap are dropped and
 * counted), and reports what appeared and what went away since the last
 * scan.  The glob matching and the mount lookup are pure functions. */
#ifndef TOPDOWND_CGROUPS_H
#define TOPDOWND_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kubepath.h"

#define CGROUPS_PATH_MAX 256

/* Whether @path (relative to the cgroup root, no leading '/') matches one
 * of @globs (fnmatch with FNM_PATHNAME: '*' never crosses a '/'). */
bool cgroups_match(const char *const *globs, unsigned n, const char *path);
/* The deepest level a glob can match (its components), for the walk. */
unsigned cgroups_depth(const char *const *globs, unsigned n);
/* The mount point of the cgroup v2 hierarchy in /proc/self/mountinfo
 * text @mountinfo: 0, or -ENOENT when none is mounted. */
int cgroups_find_mount(const char *mountinfo, char *out, size_t outlen);

/* The cgroup id of directory @path under @dirfd: the kernfs id the BPF
 * helpers return (perf's read_cgroup_id() does the same). */
int cgroups_id(int dirfd, const char *path, uint64_t *id);

/* Whether /proc/cgroups text @proc_cgroups puts the perf_event controller
 * on a cgroup v1 hierarchy (its hierarchy number is not 0): the
 * cgroup-switches event then compares v1 cgroups, blind to v2 moves. */
bool cgroups_perf_event_v1(const char *proc_cgroups);

/* The cgroup v2 hierarchy to walk: @configured ([cgroups] root) when it is
 * set, else where /proc/self/mountinfo says cgroup2 is mounted.  0, or
 * -ENOENT when none is, or read_file()'s error. */
int cgroups_root(const char *configured, char *out, size_t outlen);

/* Whether /proc/cgroups puts the perf_event controller on a cgroup v1
 * hierarchy (false when it cannot be read). */
bool cgroups_perf_event_on_v1(void);

struct cgroup_entry {
	char path[CGROUPS_PATH_MAX]; /* "/system.slice/nginx.service" */
	uint64_t id;
	unsigned bucket;             /* 1..cap (0 is other) */
	bool is_pod;                 /* a Kubernetes pod's or container's */
	struct kube_id kube;         /* which (kubepath.h), when is_pod */
};

struct cgroups_change {
	/* Into the table (cgroups_get); gone entries stay there until the
	 * next scan, so their last values can be read and published. */
	unsigned n_added, n_gone;
	unsigned *added, *gone;
	unsigned dropped; /* matched but beyond the cap or too long, this scan */
	unsigned too_long; /* of them: a path longer than CGROUPS_PATH_MAX - 1 bytes */
	unsigned matched; /* matched in all */
};

struct cgroups;

/* @root: the cgroup v2 mount; @globs (relative to it, no leading '/',
 * as [cgroups] track stores them) are copied; @cap buckets (besides
 * other). */
int cgroups_new(const char *root, const char *const *globs, unsigned n_globs, unsigned cap,
		struct cgroups **ret);
void cgroups_free(struct cgroups *g);

/* Walks the tree.  -errno only when the root cannot be read at all. */
int cgroups_scan(struct cgroups *g, struct cgroups_change *out);
const struct cgroup_entry *cgroups_get(const struct cgroups *g, unsigned slot);
/* Slots in the table (tracked cgroups occupy some of them). */
unsigned cgroups_slots(const struct cgroups *g);
bool cgroups_live(const struct cgroups *g, unsigned slot);
unsigned cgroups_tracked(const struct cgroups *g);

#endif
