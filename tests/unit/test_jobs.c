/* SPDX-License-Identifier: MIT */
/* jobs: order, bounds, shutdown, and many submitters at once (the last
 * also runs under ThreadSanitizer in `make check`). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "jobs.h"

struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open;
	atomic_int entered;
};

static void wait_gate(void *arg)
{
	struct gate *g = arg;

	atomic_fetch_add(&g->entered, 1);
	pthread_mutex_lock(&g->lock);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void open_gate(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

struct order {
	int seen[64];
	atomic_int n;
};

struct order_job {
	struct order *o;
	int value;
};

static void record(void *arg)
{
	struct order_job *oj = arg;

	oj->o->seen[atomic_fetch_add(&oj->o->n, 1)] = oj->value;
}

static void test_fifo_and_bound(void **state)
{
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0 };
	struct order o = { { 0 }, 0 };
	struct order_job oj[4];
	struct jobs *j;

	(void)state;
	assert_int_equal(jobs_new("test", 1, 4, 0, &j), 0);
	/* The only worker waits at the gate: the queue then fills up. */
	assert_int_equal(jobs_submit(j, wait_gate, &g), 0);
	while (atomic_load(&g.entered) == 0)
		usleep(1000);
	for (int i = 0; i < 4; i++) {
		oj[i] = (struct order_job){ &o, i };
		assert_int_equal(jobs_submit(j, record, &oj[i]), 0);
	}
	assert_int_equal(jobs_submit(j, record, &oj[0]), -EAGAIN);
	assert_int_equal(jobs_queued(j), 4);
	open_gate(&g);
	/* jobs_free runs what was queued before stopping. */
	jobs_free(j);
	assert_int_equal(atomic_load(&o.n), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(o.seen[i], i);
}

/* Clients take turns: while the only worker is held, client 1 queues four
 * jobs, client 2 two, client 3 one; they run 1 2 3 1 2 1 1, each client's
 * own in order. */
static void test_clients_take_turns(void **state)
{
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0 };
	struct order o = { { 0 }, 0 };
	struct order_job oj[7];
	static const uint64_t client[7] = { 1, 1, 1, 1, 2, 2, 3 };
	static const int want[7] = { 0, 4, 6, 1, 5, 2, 3 };
	struct jobs *j;

	(void)state;
	assert_int_equal(jobs_new("test", 1, 8, 0, &j), 0);
	assert_int_equal(jobs_submit(j, wait_gate, &g), 0);
	while (atomic_load(&g.entered) == 0)
		usleep(1000);
	for (int i = 0; i < 7; i++) {
		oj[i] = (struct order_job){ &o, i };
		assert_int_equal(jobs_submit_from(j, client[i], record, &oj[i]), 0);
	}
	open_gate(&g);
	jobs_free(j);
	assert_int_equal(atomic_load(&o.n), 7);
	for (int i = 0; i < 7; i++)
		assert_int_equal(o.seen[i], want[i]);
}

static void test_bad_arguments(void **state)
{
	struct jobs *j = NULL;

	(void)state;
	assert_int_equal(jobs_new("test", 0, 4, 0, &j), -EINVAL);
	assert_int_equal(jobs_new("test", 1, 0, 0, &j), -EINVAL);
	assert_int_equal(jobs_new("test", 17, 4, 0, &j), -EINVAL);
	jobs_free(NULL);
}

static atomic_int counted;

static void count_one(void *arg)
{
	(void)arg;
	atomic_fetch_add(&counted, 1);
}

struct submitter {
	struct jobs *j;
	int accepted;
};

static void *submit_many(void *arg)
{
	struct submitter *s = arg;

	for (int i = 0; i < 2000; i++) {
		int r = jobs_submit(s->j, count_one, NULL);

		if (r == 0)
			s->accepted++;
		else
			assert_int_equal(r, -EAGAIN);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	struct submitter s[4];
	pthread_t t[4];
	struct jobs *j;
	int accepted = 0;

	(void)state;
	atomic_store(&counted, 0);
	assert_int_equal(jobs_new("test", 3, 64, 0, &j), 0);
	for (int i = 0; i < 4; i++) {
		s[i] = (struct submitter){ j, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, submit_many, &s[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		accepted += s[i].accepted;
	}
	jobs_free(j);
	assert_true(accepted > 0);
	assert_int_equal(atomic_load(&counted), accepted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_and_bound),
		cmocka_unit_test(test_clients_take_turns),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
