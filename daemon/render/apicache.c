/* SPDX-License-Identifier: MIT */
/* apicache: the JSON documents of the newest intervals, each rendered once
 * however many requests ask for it (see apicache.h).  A slot is empty,
 * being rendered (its key is claimed: callers for the same key wait on the
 * condition instead of rendering it again) or ready. */
#include "apicache.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct doc {
	struct apidoc pub; /* first: an apidoc pointer is a doc pointer */
	atomic_int refs;
};

enum slot_state { SLOT_EMPTY, SLOT_RENDERING, SLOT_READY };

struct slot {
	enum slot_state state;
	struct apicache_key key;
	struct doc *doc;    /* SLOT_READY: the cache's reference */
	uint64_t last_used; /* for replacing the least recently used */
};

struct apicache {
	pthread_mutex_t lock;
	pthread_cond_t done; /* a render finished (or failed) */
	uint64_t tick;
	uint64_t newest; /* the newest interval asked for */
	/* Read by every /metrics render: an atomic, as render.c's count, so
	 * that reading it never waits for this cache's lock. */
	atomic_uint_fast64_t renders;
	unsigned n;
	struct slot slots[];
};

void apicache_key_init(struct apicache_key *k, uint64_t seq, uint64_t gen, bool gzip)
{
	/* memset, not an initialiser: the padding is compared too. */
	memset(k, 0, sizeof(*k));
	k->seq = seq;
	k->gen = gen;
	k->gzip = gzip;
}

int apicache_new(unsigned slots, struct apicache **ret)
{
	struct apicache *c;

	assert(slots > 0);
	c = calloc(1, sizeof(*c) + slots * sizeof(c->slots[0]));
	if (!c)
		return -ENOMEM;
	c->n = slots;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->done, NULL);
	*ret = c;
	return 0;
}

const struct apidoc *apidoc_ref(const struct apidoc *d)
{
	struct doc *doc = (struct doc *)(uintptr_t)d;

	assert(atomic_load(&doc->refs) > 0); /* only from a live reference */
	atomic_fetch_add(&doc->refs, 1);
	return d;
}

void apidoc_unref(const struct apidoc *d)
{
	struct doc *doc = (struct doc *)(uintptr_t)d;

	if (!d || atomic_fetch_sub(&doc->refs, 1) != 1)
		return;
	free(doc->pub.text);
	free(doc);
}

void apicache_free(struct apicache *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->n; i++) {
		/* Nobody may be rendering: the HTTP workers are stopped. */
		assert(c->slots[i].state != SLOT_RENDERING);
		if (c->slots[i].doc)
			apidoc_unref(&c->slots[i].doc->pub);
	}
	pthread_cond_destroy(&c->done);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static bool same_key(const struct apicache_key *a, const struct apicache_key *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* Called with the lock held: empties the ready slots of intervals older
 * than the two before the newest asked for (a request holds the interval
 * it arrived in, and the API queue's 2 s deadline answers 503 before it
 * is older than that at the default interval), and returns a slot for a
 * new key: an empty one, else the least recently used ready one; NULL
 * when every slot is being rendered. */
static struct slot *claim_slot(struct apicache *c)
{
	struct slot *victim = NULL;

	for (unsigned i = 0; i < c->n; i++) {
		struct slot *s = &c->slots[i];

		if (s->state == SLOT_READY && s->key.seq + 2 < c->newest) {
			apidoc_unref(&s->doc->pub);
			s->doc = NULL;
			s->state = SLOT_EMPTY;
		}
		if (s->state == SLOT_RENDERING)
			continue;
		if (!victim || (victim->state == SLOT_READY && s->state == SLOT_EMPTY) ||
		    (victim->state == s->state && s->last_used < victim->last_used))
			victim = s;
	}
	if (victim && victim->doc) {
		apidoc_unref(&victim->doc->pub);
		victim->doc = NULL;
	}
	return victim;
}

static int render_doc(apicache_render_fn render, void *arg, struct doc **ret)
{
	struct doc *doc = calloc(1, sizeof(*doc));
	int r;

	if (!doc)
		return -ENOMEM;
	r = render(arg, &doc->pub.text, &doc->pub.len, &doc->pub.gzip);
	if (r < 0) {
		free(doc);
		return r;
	}
	atomic_init(&doc->refs, 1);
	*ret = doc;
	return 0;
}

static struct slot *find(struct apicache *c, const struct apicache_key *k)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->slots[i].state != SLOT_EMPTY && same_key(&c->slots[i].key, k))
			return &c->slots[i];
	return NULL;
}

int apicache_get(struct apicache *c, const struct apicache_key *k, apicache_render_fn render,
		 void *arg, const struct apidoc **ret)
{
	struct slot *s;
	struct doc *doc;
	int r;

	pthread_mutex_lock(&c->lock);
	/* Another caller renders it: wait (it may fail, and the slot empty). */
	while ((s = find(c, k)) && s->state == SLOT_RENDERING)
		pthread_cond_wait(&c->done, &c->lock);
	if (s) {
		s->last_used = ++c->tick;
		*ret = apidoc_ref(&s->doc->pub);
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	if (k->seq > c->newest)
		c->newest = k->seq;
	/* Older than claim_slot() keeps: rendered for this request alone. */
	s = k->seq + 2 >= c->newest ? claim_slot(c) : NULL;
	if (s) {
		s->state = SLOT_RENDERING;
		s->key = *k;
	}
	atomic_fetch_add(&c->renders, 1);
	pthread_mutex_unlock(&c->lock);

	/* Outside the lock: other documents are served meanwhile.  Without
	 * a slot (all rendering, or too old) it is rendered unshared. */
	r = render_doc(render, arg, &doc);

	if (!s) {
		if (r == 0)
			*ret = &doc->pub;
		return r;
	}
	pthread_mutex_lock(&c->lock);
	if (r == 0) {
		s->doc = doc;
		s->state = SLOT_READY;
		s->last_used = ++c->tick;
		*ret = apidoc_ref(&doc->pub);
	} else {
		s->state = SLOT_EMPTY;
	}
	pthread_cond_broadcast(&c->done);
	pthread_mutex_unlock(&c->lock);
	return r;
}

uint64_t apicache_renders(struct apicache *c)
{
	return (uint64_t)atomic_load(&c->renders);
}
