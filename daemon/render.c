/* SPDX-License-Identifier: MIT */
/* render: rendered /metrics bodies, their gzip forms, and the cache. */
#include "render.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "negotiate.h"
#include "util.h"

#define GZIP_LEVEL 1

/* A rendered body shared by every response that serves it; freed when
 * the cache and the last connection sending it let go. */
struct rendered {
	atomic_int refs;
	size_t len;
	char *data;
};

struct entry {
	uint64_t seq, gen; /* seq 0: empty */
	struct rendered *body;
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
	/* Size of the last render per key, under its render_lock: the next
	 * buffer is allocated at once instead of grown in steps. */
	size_t last_len[KEYS];
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

static void rendered_unref(void *cls)
{
	struct rendered *b = cls;

	if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
		free(b->data);
		free(b);
	}
}

static struct rendered *rendered_ref(struct rendered *b)
{
	atomic_fetch_add(&b->refs, 1);
	return b;
}

static struct rendered *rendered_new(char *data, size_t len)
{
	struct rendered *b = malloc(sizeof(*b));

	if (!b) {
		free(data);
		return NULL;
	}
	atomic_init(&b->refs, 1);
	b->data = data;
	b->len = len;
	return b;
}

int render_new(struct render **ret)
{
	struct render *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
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
		rendered_unref(r->cache[k].body);
		pthread_mutex_destroy(&r->render_lock[k]);
	}
	pthread_mutex_destroy(&r->cache_lock);
	free(r);
}

/* A response of its own for @b, which it takes the caller's reference of. */
static struct MHD_Response *response_of(struct rendered *b, enum render_variant v)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data,
								      rendered_unref, b);

	if (!resp) {
		rendered_unref(b);
		return NULL;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				is_om(v) ? EXPO_CONTENT_TYPE_OPENMETRICS : EXPO_CONTENT_TYPE_TEXT);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	if (is_gzip(v))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	return resp;
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
	if (r->cache[k].response && r->cache[k].seq == seq && r->cache[k].gen == gen) {
		*ret = MHD_queue_response(conn, MHD_HTTP_OK, r->cache[k].response);
		hit = true;
	}
	pthread_mutex_unlock(&r->cache_lock);
	return hit;
}

static struct rendered *cached_body(struct render *r, unsigned k, uint64_t seq, uint64_t gen)
{
	struct rendered *b = NULL;

	pthread_mutex_lock(&r->cache_lock);
	if (r->cache[k].body && r->cache[k].seq == seq && r->cache[k].gen == gen)
		b = rendered_ref(r->cache[k].body);
	pthread_mutex_unlock(&r->cache_lock);
	return b;
}

static int gzip_body(const char *in, size_t len, char **out, size_t *out_len)
{
	z_stream zs = { 0 };
	uLong bound;
	char *buf;

	/* windowBits 15 + 16: a gzip wrapper rather than zlib's. */
	if (deflateInit2(&zs, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)len);
	buf = malloc(bound);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)buf;
	zs.avail_out = (uInt)bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(buf);
		return -EIO;
	}
	*out_len = zs.total_out;
	deflateEnd(&zs);
	/* deflateBound is about the input's size; the output is a tenth. */
	*out = realloc(buf, *out_len ? *out_len : 1);
	if (!*out)
		*out = buf;
	return 0;
}

/* Renders @v for @snap; called with the render_lock of its key held. */
static struct rendered *render_body(struct render *r, const struct snapshot *snap,
				    enum render_variant v, const struct expo_options *opt,
				    uint64_t gen);

/* The body of @v for @snap and @gen, from the cache or rendered now; a
 * new reference.  NULL without memory. */
static struct rendered *body_for(struct render *r, const struct snapshot *snap,
				 enum render_variant v, const struct expo_options *opt, uint64_t gen)
{
	unsigned k = key_of(v, opt->granularity);
	struct MHD_Response *resp, *old_resp = NULL;
	struct rendered *b, *old_body = NULL;

	pthread_mutex_lock(&r->render_lock[k]);
	b = cached_body(r, k, snap->published, gen);
	if (b)
		goto out;
	b = render_body(r, snap, v, opt, gen);
	if (!b)
		goto out;
	/* The cache keeps a response of its own (it holds one reference);
	 * the caller gets another. */
	resp = response_of(rendered_ref(b), v);
	if (resp) {
		pthread_mutex_lock(&r->cache_lock);
		old_resp = r->cache[k].response;
		old_body = r->cache[k].body;
		r->cache[k] = (struct entry){ snap->published, gen, rendered_ref(b), resp };
		pthread_mutex_unlock(&r->cache_lock);
	}
	if (old_resp)
		MHD_destroy_response(old_resp);
	rendered_unref(old_body);
out:
	pthread_mutex_unlock(&r->render_lock[k]);
	return b;
}

static struct rendered *render_body(struct render *r, const struct snapshot *snap,
				    enum render_variant v, const struct expo_options *opt,
				    uint64_t gen)
{
	struct rendered *plain;
	struct buf b;
	char *data;
	size_t len;

	atomic_fetch_add(&r->renders, 1);
	if (!is_gzip(v)) {
		unsigned k = key_of(v, opt->granularity);

		buf_init(&b);
		if (r->last_len[k])
			buf_reserve(&b, r->last_len[k] + r->last_len[k] / 16);
		if (expo_render(snap, opt, is_om(v) ? EXPO_OPENMETRICS : EXPO_TEXT, &b) < 0) {
			buf_free(&b);
			return NULL;
		}
		data = buf_steal(&b, &len);
		r->last_len[k] = len;
		return rendered_new(data, len);
	}
	/* The gzip variant compresses the plain one of the same interval:
	 * both always carry the same bytes. */
	plain = body_for(r, snap, is_om(v) ? RENDER_OM : RENDER_TEXT, opt, gen);
	if (!plain)
		return NULL;
	if (gzip_body(plain->data, plain->len, &data, &len) < 0) {
		rendered_unref(plain);
		return NULL;
	}
	rendered_unref(plain);
	return rendered_new(data, len);
}

struct MHD_Response *render_response(struct render *r, const struct snapshot *snap,
				      enum render_variant v, const struct expo_options *opt,
				      uint64_t gen)
{
	struct rendered *b = body_for(r, snap, v, opt, gen);

	return b ? response_of(b, v) : NULL;
}

uint64_t render_count(struct render *r)
{
	return atomic_load(&r->renders);
}
