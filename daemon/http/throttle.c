/* SPDX-License-Identifier: MIT */
/* throttle: per-client password-check admission. */
#include "throttle.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define NSEC 1000000000ULL
/* Slots looked at for one client: the cost of a lookup is bounded even
 * when an attacker picks addresses that collide. */
#define PROBES 8

struct entry {
	struct client_key key;
	bool used, pending;
	unsigned failures;
	uint64_t blocked_until_ns, last_ns;
};

struct throttle {
	pthread_mutex_t lock;
	uint64_t seed[2];
	unsigned n;
	struct entry *e;
};

int throttle_new(unsigned slots, struct throttle **ret)
{
	struct throttle *t;

	if (slots < PROBES)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->e = calloc(slots, sizeof(*t->e));
	if (!t->e) {
		free(t);
		return -ENOMEM;
	}
	/* A keyed hash: where a client lands cannot be predicted. */
	if (getrandom(t->seed, sizeof(t->seed), 0) != (ssize_t)sizeof(t->seed)) {
		free(t->e);
		free(t);
		return -EIO;
	}
	t->n = slots;
	pthread_mutex_init(&t->lock, NULL);
	*ret = t;
	return 0;
}

void throttle_free(struct throttle *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->e);
	free(t);
}

static unsigned home(const struct throttle *t, const struct client_key *k)
{
	return (unsigned)(client_key_hash(k, t->seed) % t->n);
}

static struct entry *find(struct throttle *t, const struct client_key *k)
{
	unsigned h = home(t, k);

	for (unsigned i = 0; i < PROBES; i++) {
		struct entry *e = &t->e[(h + i) % t->n];

		if (e->used && client_key_equal(&e->key, k))
			return e;
	}
	return NULL;
}

/* A slot for a new client: a free one, else the client seen longest ago
 * that has no check in progress.  NULL when every candidate is busy. */
static struct entry *claim(struct throttle *t, const struct client_key *k)
{
	unsigned h = home(t, k);
	struct entry *victim = NULL;

	for (unsigned i = 0; i < PROBES; i++) {
		struct entry *e = &t->e[(h + i) % t->n];

		if (!e->used) {
			victim = e;
			break;
		}
		if (!e->pending && (!victim || e->last_ns < victim->last_ns))
			victim = e;
	}
	if (victim)
		*victim = (struct entry){ .key = *k, .used = true };
	return victim;
}

static unsigned seconds_until(uint64_t then, uint64_t now)
{
	return (unsigned)((then - now + NSEC - 1) / NSEC);
}

unsigned throttle_begin(struct throttle *t, const struct client_key *k, uint64_t now_ns)
{
	unsigned wait = 0;
	struct entry *e;

	pthread_mutex_lock(&t->lock);
	e = find(t, k);
	if (e && !e->pending && now_ns - e->last_ns >= THROTTLE_FORGET_S * NSEC)
		*e = (struct entry){ .key = *k, .used = true };
	if (!e)
		e = claim(t, k);
	if (!e)
		wait = 1;
	else if (e->pending)
		wait = 1; /* one check at a time per client */
	else if (e->blocked_until_ns > now_ns)
		wait = seconds_until(e->blocked_until_ns, now_ns);
	else {
		e->pending = true;
		e->last_ns = now_ns;
	}
	pthread_mutex_unlock(&t->lock);
	return wait;
}

void throttle_end(struct throttle *t, const struct client_key *k, bool ok, uint64_t now_ns)
{
	struct entry *e;

	pthread_mutex_lock(&t->lock);
	e = find(t, k);
	if (e) {
		e->pending = false;
		e->last_ns = now_ns;
		if (ok) {
			e->failures = 0;
			e->blocked_until_ns = 0;
		} else if (++e->failures > THROTTLE_FREE_FAILURES) {
			unsigned shift = e->failures - THROTTLE_FREE_FAILURES - 1;
			uint64_t s = shift >= 6 ? THROTTLE_MAX_BLOCK_S : 1ULL << shift;

			if (s > THROTTLE_MAX_BLOCK_S)
				s = THROTTLE_MAX_BLOCK_S;
			e->blocked_until_ns = now_ns + s * NSEC;
		}
	}
	pthread_mutex_unlock(&t->lock);
}

void throttle_abandon(struct throttle *t, const struct client_key *k)
{
	struct entry *e;

	pthread_mutex_lock(&t->lock);
	e = find(t, k);
	if (e)
		e->pending = false;
	pthread_mutex_unlock(&t->lock);
}
