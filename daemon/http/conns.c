/* SPDX-License-Identifier: MIT */
/* conns: the connection registry and its reaper thread. */
#include "conns.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "util.h"

#define NSEC 1000000000ULL
/* How often the reaper looks: deadlines are kept to within this. */
#define REAP_EVERY_NS (NSEC / 4)

struct conn {
	struct conn *prev, *next;
	struct client_key key;
	int fd;
	bool expired;
	uint64_t deadline_ns; /* 0: serving a request */
	void *data;
};

/* Open connections per client: open addressing, linear probing, deleted
 * entries closed up by shifting (no tombstones). */
struct client_count {
	struct client_key key;
	unsigned n;    /* 0: free */
	unsigned shut; /* of them, shut down and not yet closed */
};

struct conns {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	uint64_t timeout_ns;
	unsigned per_client, max_total;
	uint64_t seed[2];
	unsigned n_slots; /* a power of two, at least twice the connections */
	struct client_count *clients;
	struct conn *head;
	unsigned count, shut;
	uint64_t expired, evicted;
	pthread_t reaper;
};

static struct client_count *slot_of(struct conns *c, const struct client_key *k);

/* shutdown(), not close(): the descriptor stays libmicrohttpd's, which
 * sees end of stream and closes the connection itself. */
static void shut_down(struct conns *c, struct conn *k)
{
	shutdown(k->fd, SHUT_RDWR);
	k->expired = true;
	c->shut++;
	slot_of(c, &k->key)->shut++;
}

static void *reap(void *arg)
{
	struct conns *c = arg;

	pthread_setname_np(pthread_self(), "topdownd-reap");
	pthread_mutex_lock(&c->lock);
	while (!c->stopping) {
		uint64_t now = mono_ns(), wake = now + REAP_EVERY_NS;
		struct timespec ts = { (time_t)(wake / NSEC), (long)(wake % NSEC) };

		for (struct conn *k = c->head; k; k = k->next) {
			if (k->expired || k->deadline_ns == 0 || k->deadline_ns > now)
				continue;
			shut_down(c, k);
			c->expired++;
		}
		pthread_cond_timedwait(&c->wake, &c->lock, &ts);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int conns_new(uint64_t timeout_ns, unsigned max_total, unsigned per_client, struct conns **ret)
{
	struct conns *c = calloc(1, sizeof(*c));
	pthread_condattr_t attr;
	int r;

	if (!c)
		return -ENOMEM;
	c->n_slots = 64;
	while (c->n_slots < 2 * (uint64_t)max_total)
		c->n_slots *= 2;
	c->clients = calloc(c->n_slots, sizeof(*c->clients));
	if (!c->clients ||
	    getrandom(c->seed, sizeof(c->seed), 0) != (ssize_t)sizeof(c->seed)) {
		free(c->clients);
		free(c);
		return -ENOMEM;
	}
	c->timeout_ns = timeout_ns;
	c->per_client = per_client;
	c->max_total = max_total;
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wake, &attr);
	pthread_condattr_destroy(&attr);
	r = thread_spawn(&c->reaper, false, reap, c);
	if (r < 0) {
		pthread_cond_destroy(&c->wake);
		pthread_mutex_destroy(&c->lock);
		free(c->clients);
		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void conns_free(struct conns *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->reaper, NULL);
	while (c->head) {
		struct conn *k = c->head;

		c->head = k->next;
		free(k);
	}
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	free(c->clients);
	free(c);
}

void conns_set_timeout(struct conns *c, uint64_t timeout_ns)
{
	pthread_mutex_lock(&c->lock);
	c->timeout_ns = timeout_ns;
	pthread_mutex_unlock(&c->lock);
}

/* The slot of @k, or the free slot where it would go.  The table never
 * fills: it has twice as many slots as there can be connections. */
static struct client_count *slot_of(struct conns *c, const struct client_key *k)
{
	unsigned i = (unsigned)client_key_hash(k, c->seed) & (c->n_slots - 1);

	while (c->clients[i].n && !client_key_equal(&c->clients[i].key, k))
		i = (i + 1) & (c->n_slots - 1);
	return &c->clients[i];
}

/* Empties @s and moves up the entries that probed past it. */
static void slot_free(struct conns *c, struct client_count *s)
{
	unsigned mask = c->n_slots - 1, hole = (unsigned)(s - c->clients), i = hole;

	memset(&c->clients[hole], 0, sizeof(c->clients[hole]));
	for (;;) {
		unsigned home;

		i = (i + 1) & mask;
		if (!c->clients[i].n)
			return;
		home = (unsigned)client_key_hash(&c->clients[i].key, c->seed) & mask;
		/* Movable when its home is not in (hole, i], cyclically. */
		if ((i > hole && (home <= hole || home > i)) || (i < hole && home <= hole && home > i)) {
			c->clients[hole] = c->clients[i];
			memset(&c->clients[i], 0, sizeof(c->clients[i]));
			hole = i;
		}
	}
}

/* The connection waiting longest for a request head (of client @k, or of
 * anyone when NULL): the earliest deadline; NULL when all are serving. */
static struct conn *oldest_idle(struct conns *c, const struct client_key *k)
{
	struct conn *best = NULL;

	for (struct conn *x = c->head; x; x = x->next)
		if (!x->expired && x->deadline_ns && (!k || client_key_equal(&x->key, k)) &&
		    (!best || x->deadline_ns < best->deadline_ns))
			best = x;
	return best;
}

bool conns_admit(struct conns *c, const struct client_key *k)
{
	struct client_count *s;
	struct conn *victim = NULL;
	bool ok = true;

	pthread_mutex_lock(&c->lock);
	s = slot_of(c, k);
	/* A full share, or a full pool: the oldest idle connection (of the
	 * client, or of anyone) makes room, so that idle connections cannot
	 * keep a client with a request out. */
	if (s->n - s->shut >= c->per_client)
		ok = (victim = oldest_idle(c, k)) != NULL;
	else if (c->count - c->shut >= c->max_total)
		ok = (victim = oldest_idle(c, NULL)) != NULL;
	if (victim) {
		shut_down(c, victim);
		c->evicted++;
	}
	pthread_mutex_unlock(&c->lock);
	return ok;
}

struct conn *conns_add(struct conns *c, int fd, const struct client_key *key, void *data)
{
	struct conn *k = calloc(1, sizeof(*k));
	struct client_count *s;

	if (!k)
		return NULL;
	k->fd = fd;
	k->key = *key;
	k->data = data;
	pthread_mutex_lock(&c->lock);
	s = slot_of(c, key);
	if (!s->n)
		*s = (struct client_count){ .key = *key };
	s->n++;
	k->deadline_ns = mono_ns() + c->timeout_ns;
	k->next = c->head;
	if (c->head)
		c->head->prev = k;
	c->head = k;
	c->count++;
	pthread_mutex_unlock(&c->lock);
	return k;
}

void *conn_data(const struct conn *k)
{
	return k ? k->data : NULL;
}

void conns_request_started(struct conns *c, struct conn *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&c->lock);
	k->deadline_ns = 0;
	pthread_mutex_unlock(&c->lock);
}

void conns_request_done(struct conns *c, struct conn *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&c->lock);
	k->deadline_ns = mono_ns() + c->timeout_ns;
	pthread_mutex_unlock(&c->lock);
}

void *conns_remove(struct conns *c, struct conn *k)
{
	void *data;

	if (!k)
		return NULL;
	pthread_mutex_lock(&c->lock);
	if (k->prev)
		k->prev->next = k->next;
	else
		c->head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	c->count--;
	{
		struct client_count *s = slot_of(c, &k->key);

		if (k->expired) {
			c->shut--;
			s->shut--;
		}
		if (s->n && --s->n == 0)
			slot_free(c, s);
	}
	pthread_mutex_unlock(&c->lock);
	data = k->data;
	free(k);
	return data;
}

unsigned conns_count(struct conns *c)
{
	unsigned n;

	pthread_mutex_lock(&c->lock);
	n = c->count;
	pthread_mutex_unlock(&c->lock);
	return n;
}

struct conns_stats conns_stats(struct conns *c)
{
	struct conns_stats st;

	pthread_mutex_lock(&c->lock);
	st = (struct conns_stats){ .expired = c->expired, .evicted = c->evicted };
	pthread_mutex_unlock(&c->lock);
	return st;
}
