/* SPDX-License-Identifier: MIT */
/* jobs: worker threads and their bounded queue. */
#include "jobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util.h"

#define THREADS_MAX 16

struct job {
	job_fn fn;
	void *arg;
	uint64_t client;
};

/* When a client's job last started (a tick of the pool's own clock). */
struct turn {
	uint64_t client, at;
};

struct jobs {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct job *queue; /* queue_max, in arrival order */
	struct turn *turns; /* queue_max: the clients seen most recently */
	unsigned queue_max, count, running, n_turns;
	uint64_t tick;
	bool stopping, stopped;
	int nice;
	char name[16];
	unsigned n_threads;
	pthread_t threads[THREADS_MAX];
};

static struct turn *turn_of(struct jobs *j, uint64_t client)
{
	for (unsigned i = 0; i < j->n_turns; i++)
		if (j->turns[i].client == client)
			return &j->turns[i];
	return NULL;
}

/* The next job: the oldest of the client whose last turn is the oldest
 * (a client unseen, or forgotten, has had none).  Round robin between
 * clients, first come first served within one: a client with many
 * queued requests delays another's by one job at most per turn.  Called
 * with the lock held and count > 0. */
static struct job take_next(struct jobs *j)
{
	unsigned best = 0, slot;
	uint64_t best_at = UINT64_MAX;
	struct turn *t;
	struct job job;

	for (unsigned i = 0; i < j->count; i++) {
		t = turn_of(j, j->queue[i].client);
		if ((t ? t->at : 0) < best_at) {
			best_at = t ? t->at : 0;
			best = i;
		}
	}
	job = j->queue[best];
	memmove(&j->queue[best], &j->queue[best + 1], (j->count - best - 1) * sizeof(*j->queue));
	j->count--;
	t = turn_of(j, job.client);
	if (!t) {
		/* Full: the client whose turn is the oldest is forgotten. */
		if (j->n_turns < j->queue_max) {
			slot = j->n_turns++;
		} else {
			slot = 0;
			for (unsigned i = 1; i < j->n_turns; i++)
				if (j->turns[i].at < j->turns[slot].at)
					slot = i;
		}
		t = &j->turns[slot];
		t->client = job.client;
	}
	t->at = ++j->tick;
	return job;
}

static void *worker(void *arg)
{
	struct jobs *j = arg;

	pthread_setname_np(pthread_self(), j->name);
	/* Best effort: a worker at the collector's priority still works. */
	if (j->nice)
		(void)setpriority(PRIO_PROCESS, (id_t)gettid(), j->nice);
	pthread_mutex_lock(&j->lock);
	for (;;) {
		struct job job;

		while (j->count == 0 && !j->stopping)
			pthread_cond_wait(&j->wake, &j->lock);
		if (j->count == 0)
			break;
		job = take_next(j);
		j->running++;
		pthread_mutex_unlock(&j->lock);
		job.fn(job.arg);
		pthread_mutex_lock(&j->lock);
		j->running--;
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

int jobs_new(const char *name, unsigned threads, unsigned queue_max, int nice,
	     struct jobs **ret)
{
	struct jobs *j;
	int r = 0;

	if (threads == 0 || threads > THREADS_MAX || queue_max == 0)
		return -EINVAL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->queue = calloc(queue_max, sizeof(*j->queue));
	j->turns = calloc(queue_max, sizeof(*j->turns));
	if (!j->queue || !j->turns) {
		free(j->queue);
		free(j->turns);
		free(j);
		return -ENOMEM;
	}
	j->queue_max = queue_max;
	j->nice = nice;
	snprintf(j->name, sizeof(j->name), "%s", name);
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->wake, NULL);
	for (; j->n_threads < threads; j->n_threads++) {
		r = thread_spawn(&j->threads[j->n_threads], false, worker, j);
		if (r < 0)
			break;
	}
	if (r < 0) {
		jobs_free(j);
		return r;
	}
	*ret = j;
	return 0;
}

int jobs_submit(struct jobs *j, job_fn fn, void *arg)
{
	return jobs_submit_from(j, 0, fn, arg);
}

int jobs_submit_from(struct jobs *j, uint64_t client, job_fn fn, void *arg)
{
	int r = 0;

	pthread_mutex_lock(&j->lock);
	if (j->stopping)
		r = -ESHUTDOWN;
	else if (j->count == j->queue_max)
		r = -EAGAIN;
	else {
		j->queue[j->count++] = (struct job){ fn, arg, client };
		pthread_cond_signal(&j->wake);
	}
	pthread_mutex_unlock(&j->lock);
	return r;
}

unsigned jobs_queued(struct jobs *j)
{
	unsigned n;

	pthread_mutex_lock(&j->lock);
	n = j->count;
	pthread_mutex_unlock(&j->lock);
	return n;
}

void jobs_stop(struct jobs *j)
{
	bool join;

	pthread_mutex_lock(&j->lock);
	join = !j->stopped;
	j->stopping = j->stopped = true;
	pthread_cond_broadcast(&j->wake);
	pthread_mutex_unlock(&j->lock);
	if (!join)
		return;
	for (unsigned i = 0; i < j->n_threads; i++)
		pthread_join(j->threads[i], NULL);
}

void jobs_free(struct jobs *j)
{
	if (!j)
		return;
	jobs_stop(j);
	pthread_cond_destroy(&j->wake);
	pthread_mutex_destroy(&j->lock);
	free(j->queue);
	free(j->turns);
	free(j);
}
