/* SPDX-License-Identifier: MIT */
/* cgroups: discovery of the tracked cgroups (cgroups.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cgroups.h"
#include "util.h"

#define GLOBS_MAX 32

/* A table slot: live (tracked), gone (published once more, then freed) or
 * free. */
enum slot_state { SLOT_FREE, SLOT_LIVE, SLOT_GONE };

struct candidate {
	char path[CGROUPS_PATH_MAX];
	uint64_t id;
};

struct cgroups {
	char root[CGROUPS_PATH_MAX];
	char *globs[GLOBS_MAX];
	unsigned n_globs, depth, cap;
	struct cgroup_entry *table; /* cap slots; slot i has bucket i + 1 */
	enum slot_state *state;
	unsigned *added, *gone;
	/* This scan's matches; kept between scans, grown only when needed. */
	struct candidate *cand;
	size_t n_cand, cand_cap;
	/* Matched this scan, but a path too long for a bucket's name. */
	unsigned too_long;
};

bool cgroups_match(const char *const *globs, unsigned n, const char *path)
{
	for (unsigned i = 0; i < n; i++)
		if (fnmatch(globs[i], path, FNM_PATHNAME | FNM_PERIOD) == 0)
			return true;
	return false;
}

unsigned cgroups_depth(const char *const *globs, unsigned n)
{
	unsigned depth = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned d = 1;

		for (const char *p = globs[i]; *p; p++)
			d += *p == '/';
		if (d > depth)
			depth = d;
	}
	return depth;
}

/* mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER". */
int cgroups_find_mount(const char *mountinfo, char *out, size_t outlen)
{
	for (const char *line = mountinfo; line && *line;) {
		const char *end = strchr(line, '\n'), *dash = strstr(line, " - ");
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (dash && dash < line + len && strncmp(dash + 3, "cgroup2 ", 8) == 0) {
			const char *p = line;
			size_t n;

			for (int field = 0; field < 4 && p; field++) {
				p = strchr(p, ' ');
				p = p ? p + 1 : NULL;
			}
			if (p && p < dash) {
				n = strcspn(p, " ");
				if (n < outlen) {
					/* mountinfo escapes spaces as \040: a path with them is not
					 * one we can take whole. */
					memcpy(out, p, n);
					out[n] = '\0';
					if (!strchr(out, '\\'))
						return 0;
				}
			}
		}
		line = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

/* /proc/cgroups: "#subsys_name hierarchy num_cgroups enabled" lines. */
bool cgroups_perf_event_v1(const char *proc_cgroups)
{
	for (const char *line = proc_cgroups; line && *line;) {
		unsigned hierarchy;
		char name[32];

		if (sscanf(line, "%31s %u", name, &hierarchy) == 2 && strcmp(name, "perf_event") == 0)
			return hierarchy != 0;
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return false;
}

int cgroups_new(const char *root, const char *const *globs, unsigned n_globs, unsigned cap,
		struct cgroups **ret)
{
	struct cgroups *g;

	if (strlen(root) >= CGROUPS_PATH_MAX || n_globs > GLOBS_MAX || !cap)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	strcpy(g->root, root);
	g->cap = cap;
	g->table = calloc(cap, sizeof(*g->table));
	g->state = calloc(cap, sizeof(*g->state));
	g->added = calloc(cap, sizeof(*g->added));
	g->gone = calloc(cap, sizeof(*g->gone));
	if (!g->table || !g->state || !g->added || !g->gone) {
		cgroups_free(g);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n_globs; i++) {
		g->globs[i] = strdup(globs[i]);
		if (!g->globs[i]) {
			cgroups_free(g);
			return -ENOMEM;
		}
		g->n_globs++;
	}
	g->depth = cgroups_depth((const char *const *)g->globs, g->n_globs);
	*ret = g;
	return 0;
}

void cgroups_free(struct cgroups *g)
{
	if (!g)
		return;
	for (unsigned i = 0; i < g->n_globs; i++)
		free(g->globs[i]);
	free(g->table);
	free(g->state);
	free(g->added);
	free(g->gone);
	free(g->cand);
	free(g);
}

int cgroups_id(int dirfd, const char *path, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h;
	int mount_id;

	h.fh.handle_bytes = sizeof(h.id);
	if (name_to_handle_at(dirfd, path, &h.fh, &mount_id, 0) < 0)
		return -errno;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

static int add_candidate(struct cgroups *g, const char *path, uint64_t id)
{
	if (g->n_cand == g->cand_cap) {
		size_t n = g->cand_cap ? 2 * g->cand_cap : 64;
		struct candidate *c = realloc(g->cand, n * sizeof(*c));

		if (!c)
			return -ENOMEM;
		g->cand = c;
		g->cand_cap = n;
	}
	g->cand[g->n_cand].path[0] = '/';
	memcpy(g->cand[g->n_cand].path + 1, path, strlen(path) + 1); /* walk() keeps it short */
	g->cand[g->n_cand].id = id;
	g->n_cand++;
	return 0;
}

/* @dirfd is the directory @rel (relative to the root, "" for the root) at
 * @level (0 for the root); closes it. */
static int walk(struct cgroups *g, int dirfd, const char *rel, unsigned level)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *e;
	int r = 0;

	if (!d) {
		close(dirfd);
		return -errno;
	}
	while (r >= 0 && (e = readdir(d))) {
		char path[CGROUPS_PATH_MAX];
		uint64_t id = 0;
		int fd;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >=
		    sizeof(path) - 1) {
			/* No room for it (and the leading '/'): one that matches
			 * is dropped, and counted as such, not skipped unseen.
			 * Nothing below it is shorter. */
			char *full = NULL;

			if (asprintf(&full, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >= 0 &&
			    cgroups_match((const char *const *)g->globs, g->n_globs, full))
				g->too_long++;
			free(full);
			continue;
		}
		if (cgroups_match((const char *const *)g->globs, g->n_globs, path) &&
		    cgroups_id(dirfd, e->d_name, &id) == 0)
			r = add_candidate(g, path, id);
		if (r < 0 || level + 1 >= g->depth)
			continue;
		fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		/* A cgroup removed meanwhile is simply not there. */
		if (fd >= 0)
			r = walk(g, fd, path, level + 1);
	}
	closedir(d);
	return r;
}

static int cand_cmp(const void *a, const void *b)
{
	return strcmp(((const struct candidate *)a)->path, ((const struct candidate *)b)->path);
}

static struct candidate *find_candidate(struct cgroups *g, const struct cgroup_entry *e)
{
	struct candidate key;

	if (!g->n_cand)
		return NULL;
	memcpy(key.path, e->path, sizeof(key.path));
	key.id = 0;
	return bsearch(&key, g->cand, g->n_cand, sizeof(*g->cand), cand_cmp);
}

int cgroups_scan(struct cgroups *g, struct cgroups_change *out)
{
	unsigned next_free = 0;
	int fd, r;

	memset(out, 0, sizeof(*out));
	out->added = g->added;
	out->gone = g->gone;
	/* Slots gone at the previous scan have been published: free them. */
	for (unsigned i = 0; i < g->cap; i++)
		if (g->state[i] == SLOT_GONE)
			g->state[i] = SLOT_FREE;
	g->n_cand = 0;
	g->too_long = 0;
	fd = open(g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = g->depth ? walk(g, fd, "", 0) : (close(fd), 0);
	if (r < 0)
		return r;
	/* No match, no array yet: qsort and bsearch take no NULL. */
	if (g->n_cand)
		qsort(g->cand, g->n_cand, sizeof(*g->cand), cand_cmp);
	out->matched = (unsigned)g->n_cand + g->too_long;
	out->dropped = out->too_long = g->too_long;
	/* The tracked that are still there (same path, same id) keep their
	 * bucket; a cgroup created again under the same name is a new one. */
	for (unsigned i = 0; i < g->cap; i++) {
		struct candidate *c;

		if (g->state[i] != SLOT_LIVE)
			continue;
		c = find_candidate(g, &g->table[i]);
		if (c && c->id == g->table[i].id) {
			c->id = 0; /* taken */
			continue;
		}
		g->state[i] = SLOT_GONE;
		out->gone[out->n_gone++] = i;
	}
	for (size_t k = 0; k < g->n_cand; k++) {
		struct candidate *c = &g->cand[k];

		if (!c->id)
			continue;
		while (next_free < g->cap && g->state[next_free] != SLOT_FREE)
			next_free++;
		if (next_free == g->cap) {
			out->dropped++;
			continue;
		}
		memcpy(g->table[next_free].path, c->path, CGROUPS_PATH_MAX);
		g->table[next_free].id = c->id;
		g->table[next_free].bucket = next_free + 1;
		/* Once, when it gets its bucket: its labels for as long as it lives. */
		g->table[next_free].is_pod = kube_parse(c->path, &g->table[next_free].kube) == 0;
		g->state[next_free] = SLOT_LIVE;
		out->added[out->n_added++] = next_free;
	}
	return 0;
}

const struct cgroup_entry *cgroups_get(const struct cgroups *g, unsigned slot)
{
	return &g->table[slot];
}

unsigned cgroups_slots(const struct cgroups *g)
{
	return g->cap;
}

bool cgroups_live(const struct cgroups *g, unsigned slot)
{
	return g->state[slot] != SLOT_FREE;
}

unsigned cgroups_tracked(const struct cgroups *g)
{
	unsigned n = 0;

	for (unsigned i = 0; i < g->cap; i++)
		n += g->state[i] == SLOT_LIVE;
	return n;
}

int cgroups_root(const char *configured, char *out, size_t outlen)
{
	char *text = NULL;
	size_t n;
	int r;

	if (configured[0]) {
		str_printf(out, outlen, "%s", configured);
		return 0;
	}
	r = read_file("/proc/self/mountinfo", 1 << 20, &text, &n);
	if (r == 0)
		r = cgroups_find_mount(text, out, outlen);
	free(text);
	return r;
}

bool cgroups_perf_event_on_v1(void)
{
	char *text = NULL;
	size_t n;
	bool v1 = read_file("/proc/cgroups", 1 << 16, &text, &n) == 0 && cgroups_perf_event_v1(text);

	free(text);
	return v1;
}
