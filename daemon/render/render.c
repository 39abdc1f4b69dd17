/* SPDX-License-Identifier: MIT */
/* render: rendered /metrics bodies, their gzip forms, and the cache. */
#include "render.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "negotiate.h"

#define GZIP_LEVEL 1

struct entry {
	uint64_t seq, gen; /* seq 0: empty */
	struct body *body;
	struct MHD_Response *response;
};

/* One cache entry per variant and granularity. */
#define KEYS (RENDER_VARIANTS * GRAN_COUNT)

static unsigned key_of(enum render_variant v, enum config_granularity gran)
{
	return (unsigned)v + RENDER_VARIANTS * (unsigned)gran;
}

struct render {
	/* Guards the entries only: a few pointer swaps, no rendering. */
	pthread_mutex_t cache_lock;
	/* One renderer per variant; later callers for the same interval
	 * wait for it and take its result.  A gzip renderer takes the lock
	 * of its plain variant too (never the other way round). */
	pthread_mutex_t render_lock[KEYS];
	struct entry cache[KEYS];
	/* The newest publication whose render a request has claimed, per
	 * key (guarded by cache_lock): later requests for it are served the
	 * previous interval's body meanwhile. */
	uint64_t pending[KEYS];
	struct body_pool *bodies; /* a slot per key */
	atomic_uint_fast64_t renders;
};

enum render_variant render_variant_of(const char *accept, const char *accept_encoding)
{
	bool om = negotiate_format(accept) == NEGOTIATE_OPENMETRICS;
	bool gz = negotiate_gzip(accept_encoding);

	return om ? (gz ? RENDER_OM_GZIP : RENDER_OM) : (gz ? RENDER_TEXT_GZIP : RENDER_TEXT);
}

static bool is_gzip(enum render_variant v)
{
	return v == RENDER_TEXT_GZIP || v == RENDER_OM_GZIP;
}

static bool is_om(enum render_variant v)
{
	return v == RENDER_OM || v == RENDER_OM_GZIP;
}

static void unref_cb(void *cls)
{
	body_unref(cls);
}

int render_new(struct render **ret)
{
	struct render *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	if (body_pool_new(KEYS, GZIP_LEVEL, &r->bodies) < 0) {
		free(r);
		return -ENOMEM;
	}
	pthread_mutex_init(&r->cache_lock, NULL);
	for (int k = 0; k < KEYS; k++)
		pthread_mutex_init(&r->render_lock[k], NULL);
	*ret = r;
	return 0;
}

void render_free(struct render *r)
{
	if (!r)
		return;
	for (int k = 0; k < KEYS; k++) {
		if (r->cache[k].response)
			MHD_destroy_response(r->cache[k].response);
		body_unref(r->cache[k].body);
		pthread_mutex_destroy(&r->render_lock[k]);
	}
	body_pool_free(r->bodies);
	pthread_mutex_destroy(&r->cache_lock);
	free(r);
}

/* A response of its own for @b, which it takes the caller's reference of. */
static struct MHD_Response *response_of(struct body *b, enum render_variant v)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, unref_cb, b);

	if (!resp) {
		body_unref(b);
		return NULL;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				is_om(v) ? EXPO_CONTENT_TYPE_OPENMETRICS : EXPO_CONTENT_TYPE_TEXT);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	if (is_gzip(v))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	return resp;
}

/* Called with cache_lock held. */
static enum render_lookup lookup_locked(struct render *r, unsigned k, uint64_t seq, uint64_t gen)
{
	const struct entry *e = &r->cache[k];

	if (!e->response || e->gen != gen)
		return RENDER_MISS;
	if (e->seq == seq)
		return RENDER_HIT;
	/* Only the interval just before: an older body is not served. */
	if (e->seq + 1 != seq)
		return RENDER_MISS;
	if (r->pending[k] >= seq)
		return RENDER_STALE;
	r->pending[k] = seq;
	return RENDER_MISS;
}

enum render_lookup render_lookup(struct render *r, enum render_variant v,
				 enum config_granularity gran, uint64_t seq, uint64_t gen)
{
	enum render_lookup l;

	pthread_mutex_lock(&r->cache_lock);
	l = lookup_locked(r, key_of(v, gran), seq, gen);
	pthread_mutex_unlock(&r->cache_lock);
	return l;
}

bool render_queue_cached(struct render *r, struct MHD_Connection *conn, enum render_variant v,
			 enum config_granularity gran, uint64_t seq, uint64_t gen,
			 enum MHD_Result *ret)
{
	unsigned k = key_of(v, gran);
	bool hit = false;

	/* Under the lock: the cache's reference keeps the response alive
	 * until MHD holds its own. */
	pthread_mutex_lock(&r->cache_lock);
	if (lookup_locked(r, k, seq, gen) != RENDER_MISS) {
		*ret = MHD_queue_response(conn, MHD_HTTP_OK, r->cache[k].response);
		hit = true;
	}
	pthread_mutex_unlock(&r->cache_lock);
	return hit;
}

static struct body *cached_body(struct render *r, unsigned k, uint64_t seq, uint64_t gen)
{
	struct body *b = NULL;

	pthread_mutex_lock(&r->cache_lock);
	if (r->cache[k].body && r->cache[k].seq == seq && r->cache[k].gen == gen)
		b = body_ref(r->cache[k].body);
	pthread_mutex_unlock(&r->cache_lock);
	return b;
}

/* Drops the entries of intervals older than the one before publication
 * @seq: no request can be served them any more (render_lookup() serves
 * the previous interval's while the newest renders), and each holds a
 * body (1.7 MB at a thousand CPUs).  Scrapers that take turns with
 * formats would otherwise keep one stale body per format resident; their
 * buffers go back to the spares or to the system.  Connections still
 * sending them hold their own references. */
static void evict_stale(struct render *r, uint64_t seq)
{
	struct MHD_Response *resp[KEYS];
	struct body *bodies[KEYS];
	unsigned n = 0;

	pthread_mutex_lock(&r->cache_lock);
	for (unsigned k = 0; k < KEYS; k++)
		if (r->cache[k].body && r->cache[k].seq + 1 < seq) {
			resp[n] = r->cache[k].response;
			bodies[n++] = r->cache[k].body;
			r->cache[k] = (struct entry){ 0 };
		}
	pthread_mutex_unlock(&r->cache_lock);
	for (unsigned i = 0; i < n; i++) {
		if (resp[i])
			MHD_destroy_response(resp[i]);
		body_unref(bodies[i]);
	}
}

/* Renders @v for @snap; called with the render_lock of its key held. */
static struct body *render_body(struct render *r, const struct snapshot *snap,
				    enum render_variant v, const struct expo_options *opt,
				    uint64_t gen);

/* The body of @v for @snap and @gen, from the cache or rendered now
 * (after @prepare); a new reference.  NULL without memory. */
static struct body *body_for(struct render *r, const struct snapshot *snap,
			     enum render_variant v, const struct expo_options *opt, uint64_t gen,
			     render_prepare_fn *prepare, void *arg)
{
	unsigned k = key_of(v, opt->granularity);
	struct MHD_Response *resp, *old_resp = NULL;
	struct body *b, *old_body = NULL;

	pthread_mutex_lock(&r->render_lock[k]);
	b = cached_body(r, k, snap->published, gen);
	if (b)
		goto out;
	evict_stale(r, snap->published);
	if (prepare)
		prepare(arg);
	b = render_body(r, snap, v, opt, gen);
	if (!b)
		goto out;
	/* The cache keeps a response of its own (it holds one reference);
	 * the caller gets another. */
	resp = response_of(body_ref(b), v);
	if (resp) {
		pthread_mutex_lock(&r->cache_lock);
		old_resp = r->cache[k].response;
		old_body = r->cache[k].body;
		r->cache[k] = (struct entry){ snap->published, gen, body_ref(b), resp };
		pthread_mutex_unlock(&r->cache_lock);
	}
	if (old_resp)
		MHD_destroy_response(old_resp);
	body_unref(old_body);
out:
	pthread_mutex_unlock(&r->render_lock[k]);
	return b;
}

static struct body *render_body(struct render *r, const struct snapshot *snap,
				    enum render_variant v, const struct expo_options *opt,
				    uint64_t gen)
{
	unsigned k = key_of(v, opt->granularity);
	struct body *plain, *gz;

	atomic_fetch_add(&r->renders, 1);
	if (!is_gzip(v))
		return body_render(r->bodies, k, snap, opt, is_om(v) ? EXPO_OPENMETRICS : EXPO_TEXT);
	/* The gzip variant compresses the plain one of the same interval:
	 * both always carry the same bytes (and the caller prepared already). */
	plain = body_for(r, snap, is_om(v) ? RENDER_OM : RENDER_TEXT, opt, gen, NULL, NULL);
	if (!plain)
		return NULL;
	gz = body_gzip(r->bodies, k, plain);
	body_unref(plain);
	return gz;
}

struct MHD_Response *render_response(struct render *r, const struct snapshot *snap,
				      enum render_variant v, const struct expo_options *opt,
				      uint64_t gen, render_prepare_fn *prepare, void *arg)
{
	struct body *b = body_for(r, snap, v, opt, gen, prepare, arg);

	return b ? response_of(b, v) : NULL;
}

uint64_t render_count(struct render *r)
{
	return atomic_load(&r->renders);
}
