/* SPDX-License-Identifier: MIT */
/* body: reusable body buffers and the gzip compressors. */
#include "body.h"

#include <assert.h>
#include <errno.h>
#include <isa-l/igzip_lib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Spare buffers, one kind for plain bodies and one for gzip members (of
 * every slot: text and OpenMetrics are the same size).  One spare per kind:
 * the cache holds each slot's current body while the next is rendered into
 * the spare, and the body it replaces becomes the spare; so a scraped
 * variant costs two buffers, as many as a fresh buffer per render held at
 * its peak, and no more. */
#define SPARES 1

enum { KIND_PLAIN, KIND_GZIP, KINDS };

struct spares {
	pthread_mutex_t lock; /* bodies are released on any thread */
	unsigned n;
	struct spare {
		char *data;
		size_t cap;
	} s[SPARES];
};

struct body_slot {
	/* The renderer's alone (the caller serialises a slot's renders). */
	size_t last_len;
	struct isal_zstream *gz; /* the slot's stream, reset for each body */
	uint8_t *gz_level_buf;
};

struct body_pool {
	atomic_int refs; /* the owner and every live body */
	int gzip_level;
	unsigned n_slots;
	atomic_ulong fresh;
	struct spares kinds[KINDS];
	struct body_slot *slots;
};

int body_pool_new(unsigned n_slots, int gzip_level, struct body_pool **ret)
{
	struct body_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->slots = calloc(n_slots ? n_slots : 1, sizeof(*p->slots));
	if (!p->slots) {
		free(p);
		return -ENOMEM;
	}
	atomic_init(&p->refs, 1);
	atomic_init(&p->fresh, 0);
	p->gzip_level = gzip_level;
	p->n_slots = n_slots;
	for (int k = 0; k < KINDS; k++)
		pthread_mutex_init(&p->kinds[k].lock, NULL);
	*ret = p;
	return 0;
}

static void pool_unref(struct body_pool *p)
{
	if (atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	for (unsigned i = 0; i < p->n_slots; i++) {
		free(p->slots[i].gz);
		free(p->slots[i].gz_level_buf);
	}
	for (int k = 0; k < KINDS; k++) {
		for (unsigned i = 0; i < p->kinds[k].n; i++)
			free(p->kinds[k].s[i].data);
		pthread_mutex_destroy(&p->kinds[k].lock);
	}
	free(p->slots);
	free(p);
}

void body_pool_free(struct body_pool *p)
{
	if (p)
		pool_unref(p);
}

/* A spare of at least @want bytes, else a fresh buffer of @want. */
static char *take(struct body_pool *p, struct spares *s, size_t want, size_t *cap)
{
	char *data = NULL;

	pthread_mutex_lock(&s->lock);
	while (s->n && !data) {
		struct spare sp = s->s[--s->n];

		/* Too small, or far too large for what it would hold now. */
		if (sp.cap >= want && sp.cap / 4 <= want) {
			data = sp.data;
			*cap = sp.cap;
		} else {
			free(sp.data);
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (data)
		return data;
	atomic_fetch_add(&p->fresh, 1);
	*cap = want;
	return malloc(want);
}

static void give_back(struct spares *s, char *data, size_t cap)
{
	pthread_mutex_lock(&s->lock);
	if (s->n < SPARES) {
		s->s[s->n++] = (struct spare){ data, cap };
		data = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	free(data);
}

static struct body *wrap(struct body_pool *p, struct spares *home, char *data, size_t len,
			 size_t cap)
{
	struct body *b = malloc(sizeof(*b));

	if (!b) {
		give_back(home, data, cap);
		return NULL;
	}
	atomic_init(&b->refs, 1);
	b->data = data;
	b->len = len;
	b->cap = cap;
	b->pool = p;
	b->home = home;
	atomic_fetch_add(&p->refs, 1);
	return b;
}

struct body *body_ref(struct body *b)
{
	/* A reference is only taken from a live one (a body at 0 is back in
	 * its pool, its buffer another body's). */
	assert(atomic_load(&b->refs) > 0);
	atomic_fetch_add(&b->refs, 1);
	return b;
}

void body_unref(struct body *b)
{
	struct body_pool *p;

	if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
		return;
	p = b->pool;
	give_back(b->home, b->data, b->cap);
	free(b);
	pool_unref(p);
}

struct body *body_render(struct body_pool *p, unsigned slot, const struct snapshot *snap,
			 const struct expo_options *opt, enum expo_format format)
{
	struct body_slot *s = &p->slots[slot];
	/* Room for the last render and a little growth: no reallocation on
	 * the way in the common case. */
	size_t want = s->last_len ? s->last_len + s->last_len / 16 : 64 * 1024;
	struct buf b;
	size_t cap;
	char *data = take(p, &p->kinds[KIND_PLAIN], want, &cap);

	if (!data)
		return NULL;
	buf_init(&b);
	b.data = data;
	b.cap = cap;
	if (expo_render(snap, opt, format, &b) < 0) {
		buf_free(&b);
		return NULL;
	}
	cap = b.cap; /* it may have grown */
	data = buf_steal(&b, &s->last_len);
	return wrap(p, &p->kinds[KIND_PLAIN], data, s->last_len, cap);
}

/* Compresses @len bytes at @in into @out (@cap bytes) as one gzip
 * member with stream @zs: the bytes written, or 0 if they do not fit. */
static size_t deflate_into(struct isal_zstream *zs, uint8_t *level_buf, int level,
			   const char *in, size_t len, char *out, size_t cap)
{
	if (len > UINT32_MAX / 2 || cap > UINT32_MAX)
		return 0;
	isal_deflate_init(zs);
	zs->level = (uint32_t)level;
	zs->level_buf = level_buf;
	zs->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	zs->gzip_flag = IGZIP_GZIP;
	zs->end_of_stream = 1;
	zs->flush = NO_FLUSH;
	zs->next_in = (uint8_t *)(uintptr_t)in;
	zs->avail_in = (uint32_t)len;
	zs->next_out = (uint8_t *)out;
	zs->avail_out = (uint32_t)cap;
	if (isal_deflate(zs) != COMP_OK || zs->internal_state.state != ZSTATE_END)
		return 0;
	return zs->total_out;
}

/* Room for stored blocks should nothing compress (5 bytes per 64 KiB),
 * the gzip header and trailer, and more. */
static size_t gzip_bound(size_t len)
{
	return len + len / 16 + 4096;
}

struct body *body_gzip(struct body_pool *p, unsigned slot, const struct body *plain)
{
	struct body_slot *s = &p->slots[slot];
	size_t cap, n;
	char *data;

	if (!s->gz) {
		s->gz = malloc(sizeof(*s->gz));
		s->gz_level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
		if (!s->gz || !s->gz_level_buf) {
			free(s->gz);
			free(s->gz_level_buf);
			s->gz = NULL;
			s->gz_level_buf = NULL;
			return NULL;
		}
	}
	data = take(p, &p->kinds[KIND_GZIP], gzip_bound(plain->len), &cap);
	if (!data)
		return NULL;
	n = deflate_into(s->gz, s->gz_level_buf, p->gzip_level, plain->data, plain->len, data, cap);
	if (!n) {
		give_back(&p->kinds[KIND_GZIP], data, cap);
		return NULL;
	}
	return wrap(p, &p->kinds[KIND_GZIP], data, n, cap);
}

int body_gzip_once(const char *in, size_t len, char **out, size_t *out_len)
{
	struct isal_zstream *zs = malloc(sizeof(*zs));
	uint8_t *level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
	char *data = malloc(gzip_bound(len));
	size_t n = zs && level_buf && data
			   ? deflate_into(zs, level_buf, 1, in, len, data, gzip_bound(len)) : 0;

	free(zs);
	free(level_buf);
	if (!n) {
		free(data);
		return -ENOMEM;
	}
	*out = data;
	*out_len = n;
	return 0;
}

unsigned long body_fresh_buffers(struct body_pool *p)
{
	return atomic_load(&p->fresh);
}
