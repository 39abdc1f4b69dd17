/* SPDX-License-Identifier: MIT */
/* render: the /metrics render cache.
 *
 * /metrics is rendered at most once per interval, format (Prometheus text
 * or OpenMetrics), encoding (plain or gzip), granularity (the configured
 * one or ?granularity=) and settings generation (a reload starts a new
 * one), then every scrape of
 * that interval is served the same bytes.  Rendering and compressing take
 * milliseconds at a thousand CPUs: render_response() is for a worker
 * thread; render_queue_cached() is what the connection threads call, and
 * costs a lock held for a pointer check.  Thread-safe. */
#ifndef TOPDOWND_RENDER_H
#define TOPDOWND_RENDER_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "expo.h"
#include "snapshot.h"

enum render_variant {
	RENDER_TEXT,
	RENDER_TEXT_GZIP,
	RENDER_OM,
	RENDER_OM_GZIP,
	RENDER_VARIANTS,
};

/* The variant an Accept and an Accept-Encoding header (NULL if absent) ask for. */
enum render_variant render_variant_of(const char *accept, const char *accept_encoding);

struct render;

int render_new(struct render **ret);
void render_free(struct render *r);

enum render_lookup {
	RENDER_HIT,   /* the body of @seq is cached */
	RENDER_STALE, /* @seq's is being rendered: the previous interval's is served */
	RENDER_MISS,  /* nothing to serve at once: the caller renders (on a worker) */
};

/* What the cache can serve of @v at @gran for publication @seq and
 * settings generation @gen.  The first miss of an interval whose
 * predecessor's body is cached claims the render; the requests that come
 * while it renders get RENDER_STALE, so that an interval's flip never
 * makes every in-flight scrape wait for the render (the body is at most
 * one interval older, and only for the render's few milliseconds). */
enum render_lookup render_lookup(struct render *r, enum render_variant v,
				 enum config_granularity gran, uint64_t seq, uint64_t gen);

/* Queues the cached response of @v at granularity @gran for snapshot @seq
 * and settings generation @gen on @conn, if there is one (render_lookup()'s
 * HIT or STALE): true, with MHD's result in *@ret.  @seq is the
 * snapshot's publication number. */
bool render_queue_cached(struct render *r, struct MHD_Connection *conn, enum render_variant v,
			 enum config_granularity gran, uint64_t seq, uint64_t gen,
			 enum MHD_Result *ret);

/* What a render needs that only a render should pay for: called with
 * @arg just before a body is rendered, never when it is cached (the
 * daemon's own figures, which @opt points at: counting its descriptors
 * takes 15 ms at a thousand CPUs, so a hundred scrapes of one interval
 * cost one render and one count, not a hundred counts). */
typedef void render_prepare_fn(void *arg);

/* The response of @v for @snap, rendered with @opt (its granularity says
 * which one) after @prepare(@arg) (NULL: nothing to prepare) unless it is
 * cached for (@snap->published, @gen); the cache then holds it too.  The
 * caller owns the result (MHD_destroy_response after queueing).  NULL
 * without memory. */
struct MHD_Response *render_response(struct render *r, const struct snapshot *snap,
				      enum render_variant v, const struct expo_options *opt,
				      uint64_t gen, render_prepare_fn *prepare, void *arg);

/* Bodies rendered or compressed so far (each at most once per snapshot,
 * variant and generation). */
uint64_t render_count(struct render *r);

#endif
