/* SPDX-License-Identifier: MIT */
/* body: reusable body buffers and the gzip compressors. */
#include "body.h"

#include <errno.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Two buffers per slot take turns: the cache holds the current body
 * while the next interval's is rendered. */
#define SPARES 2

struct body_slot {
	struct body_pool *pool;
	pthread_mutex_t lock; /* the spares: bodies are released anywhere */
	unsigned n_spares;
	struct spare {
		char *data;
		size_t cap;
	} spares[SPARES];
	/* The renderer's alone (the caller serialises a slot's renders). */
	size_t last_len;
	struct libdeflate_compressor *gz;
};

struct body_pool {
	atomic_int refs; /* the owner and every live body */
	int gzip_level;
	unsigned n_slots;
	atomic_ulong fresh;
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
	for (unsigned i = 0; i < n_slots; i++) {
		p->slots[i].pool = p;
		pthread_mutex_init(&p->slots[i].lock, NULL);
	}
	*ret = p;
	return 0;
}

static void pool_unref(struct body_pool *p)
{
	if (atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	for (unsigned i = 0; i < p->n_slots; i++) {
		struct body_slot *s = &p->slots[i];

		for (unsigned k = 0; k < s->n_spares; k++)
			free(s->spares[k].data);
		if (s->gz)
			libdeflate_free_compressor(s->gz);
		pthread_mutex_destroy(&s->lock);
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
static char *take(struct body_slot *s, size_t want, size_t *cap)
{
	char *data = NULL;

	pthread_mutex_lock(&s->lock);
	while (s->n_spares && !data) {
		struct spare sp = s->spares[--s->n_spares];

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
	atomic_fetch_add(&s->pool->fresh, 1);
	*cap = want;
	return malloc(want);
}

static void give_back(struct body_slot *s, char *data, size_t cap)
{
	pthread_mutex_lock(&s->lock);
	if (s->n_spares < SPARES) {
		s->spares[s->n_spares++] = (struct spare){ data, cap };
		data = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	free(data);
}

static struct body *wrap(struct body_slot *s, char *data, size_t len, size_t cap)
{
	struct body *b = malloc(sizeof(*b));

	if (!b) {
		give_back(s, data, cap);
		return NULL;
	}
	atomic_init(&b->refs, 1);
	b->data = data;
	b->len = len;
	b->cap = cap;
	b->slot = s;
	atomic_fetch_add(&s->pool->refs, 1);
	return b;
}

struct body *body_ref(struct body *b)
{
	atomic_fetch_add(&b->refs, 1);
	return b;
}

void body_unref(struct body *b)
{
	struct body_pool *p;

	if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
		return;
	p = b->slot->pool;
	give_back(b->slot, b->data, b->cap);
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
	char *data = take(s, want, &cap);

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
	return wrap(s, data, s->last_len, cap);
}

struct body *body_gzip(struct body_pool *p, unsigned slot, const struct body *plain)
{
	struct body_slot *s = &p->slots[slot];
	size_t want, cap, len;
	char *data;

	if (!s->gz) {
		s->gz = libdeflate_alloc_compressor(p->gzip_level);
		if (!s->gz)
			return NULL;
	}
	want = libdeflate_gzip_compress_bound(s->gz, plain->len);
	data = take(s, want, &cap);
	if (!data)
		return NULL;
	len = libdeflate_gzip_compress(s->gz, plain->data, plain->len, data, cap);
	if (len == 0) { /* cannot happen within the bound */
		give_back(s, data, cap);
		return NULL;
	}
	return wrap(s, data, len, cap);
}

unsigned long body_fresh_buffers(struct body_pool *p)
{
	return atomic_load(&p->fresh);
}
