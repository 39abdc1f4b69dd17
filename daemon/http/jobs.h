/* SPDX-License-Identifier: MIT */
/* jobs: a small pool of worker threads for the slow work of HTTP requests
 * (bcrypt verification, rendering and compressing /metrics), so that the
 * threads that serve connections never do it and one client's slow work
 * delays nobody else.
 *
 * A bounded queue: submitting to a full pool fails at once instead of
 * piling up work.  Jobs of one client run in submission order, clients take
 * turns (the next job is the oldest of the client whose last turn is the
 * oldest), so one client's many requests do not queue another's behind
 * them; each job runs to completion on one worker.  Thread-safe. */
#ifndef TOPDOWND_JOBS_H
#define TOPDOWND_JOBS_H

#include <stdbool.h>
#include <stdint.h>

struct jobs;

typedef void (*job_fn)(void *arg);

/* @name names the threads ("topdownd-auth"); @nice is added to the
 * workers' priority so that they yield to collection. */
int jobs_new(const char *name, unsigned threads, unsigned queue_max, int nice,
	     struct jobs **ret);
/* Queues fn(arg).  -EAGAIN when the queue is full, -ESHUTDOWN once
 * jobs_free() has begun; fn is then not called. */
int jobs_submit(struct jobs *j, job_fn fn, void *arg);
/* The same for a job of @client (any number that tells clients apart;
 * jobs_submit() is client 0). */
int jobs_submit_from(struct jobs *j, uint64_t client, job_fn fn, void *arg);
/* Jobs queued, waiting for a worker (not those running). */
unsigned jobs_queued(struct jobs *j);
/* Runs what is queued and stops the workers; later submissions fail with
 * -ESHUTDOWN (safe to call while other threads submit). */
void jobs_stop(struct jobs *j);
/* jobs_stop(), then frees @j (NULL is fine). */
void jobs_free(struct jobs *j);

#endif
