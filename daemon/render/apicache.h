/* SPDX-License-Identifier: MIT */
/* apicache: JSON documents shared by the requests that ask for the same
 * one.  A flood of identical /api/v1/topdown?scope=cpu requests on a
 * thousand CPUs would otherwise render the same 1.5 MB document (~45 ms)
 * once per request; here it is rendered once per interval and every
 * request for it, waiting or later, is answered with that text. */
#ifndef TOPDOWND_APICACHE_H
#define TOPDOWND_APICACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"

/* Which document: the interval (@seq, the snapshot's publication), the
 * settings generation, the query and the encoding.  Build it with
 * apicache_key_init(), which zeroes the padding the comparison reads. */
struct apicache_key {
	uint64_t seq;
	uint64_t gen;
	bool gzip;
	bool history;
	unsigned level; /* history only */
	double since;   /* history only */
	struct api_query query;
};

void apicache_key_init(struct apicache_key *k, uint64_t seq, uint64_t gen, bool gzip);

/* A rendered document: immutable, shared, freed with its last reference. */
struct apidoc {
	size_t len;
	bool gzip; /* the text is gzip (asked for and worth it) */
	char *text;
};

/* Renders the document: 0 and a malloc'd @text of @len bytes (@gzipped
 * when it was compressed), or -errno. */
typedef int (*apicache_render_fn)(void *arg, char **text, size_t *len, bool *gzipped);

struct apicache;

/* Keeps up to @slots documents.  -ENOMEM. */
int apicache_new(unsigned slots, struct apicache **ret);
void apicache_free(struct apicache *c);

/* The document of @k: the cached one, the one another caller is
 * rendering (waited for), or rendered now by @render(@arg) and kept.
 * Documents of intervals older than the two before the newest asked for
 * are dropped (and such an old one is rendered for its caller alone).
 * 0 and a new reference in *@ret, or the renderer's -errno. */
int apicache_get(struct apicache *c, const struct apicache_key *k, apicache_render_fn render,
		 void *arg, const struct apidoc **ret);

const struct apidoc *apidoc_ref(const struct apidoc *d);
void apidoc_unref(const struct apidoc *d);

/* How many documents were rendered (each render once, however many
 * requests it served). */
uint64_t apicache_renders(struct apicache *c);

#endif
