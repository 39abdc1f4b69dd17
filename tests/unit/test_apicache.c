/* SPDX-License-Identifier: MIT */
/* apicache: one render per document however many ask, at once or later;
 * a failed render is not shared; old intervals and the least recently
 * used documents make room (the threaded case also runs under TSan). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apicache.h"

struct renderer {
	atomic_int calls;
	int fail;             /* the next this many calls fail with -EIO */
	atomic_int entered;   /* threads that called apicache_get */
	int wait_for;         /* a render returns once this many entered */
	pthread_mutex_t lock; /* with cond: the waiting above */
	pthread_cond_t cond;
};

static int render_text(void *arg, char **text, size_t *len, bool *gzipped)
{
	struct renderer *rd = arg;
	int call = atomic_fetch_add(&rd->calls, 1) + 1;

	pthread_mutex_lock(&rd->lock);
	while (atomic_load(&rd->entered) < rd->wait_for)
		pthread_cond_wait(&rd->cond, &rd->lock);
	pthread_mutex_unlock(&rd->lock);
	if (rd->fail > 0) {
		rd->fail--;
		return -EIO;
	}
	*text = malloc(32);
	if (!*text)
		return -ENOMEM;
	*len = (size_t)snprintf(*text, 32, "render %d", call);
	*gzipped = false;
	return 0;
}

static void renderer_init(struct renderer *rd)
{
	memset(rd, 0, sizeof(*rd));
	pthread_mutex_init(&rd->lock, NULL);
	pthread_cond_init(&rd->cond, NULL);
}

static struct apicache_key key(uint64_t seq, enum api_scope scope, bool gzip)
{
	struct apicache_key k;

	apicache_key_init(&k, seq, 1, gzip);
	k.query.scope = scope;
	k.query.level = 2;
	return k;
}

/* The text of @k's document (rendered or shared), in @out. */
static void get_text(struct apicache *c, struct apicache_key k, struct renderer *rd, char *out)
{
	const struct apidoc *d;

	assert_int_equal(apicache_get(c, &k, render_text, rd, &d), 0);
	snprintf(out, 32, "%.*s", (int)d->len, d->text);
	apidoc_unref(d);
}

static void test_shared_later(void **state)
{
	struct apicache *c;
	struct renderer rd;
	char t[32];

	(void)state;
	renderer_init(&rd);
	assert_int_equal(apicache_new(4, &c), 0);
	get_text(c, key(5, API_SCOPE_CPU, false), &rd, t);
	assert_string_equal(t, "render 1");
	get_text(c, key(5, API_SCOPE_CPU, false), &rd, t);
	assert_string_equal(t, "render 1");
	/* Another encoding, query or interval is another document. */
	get_text(c, key(5, API_SCOPE_CPU, true), &rd, t);
	assert_string_equal(t, "render 2");
	get_text(c, key(5, API_SCOPE_CORE, false), &rd, t);
	assert_string_equal(t, "render 3");
	get_text(c, key(6, API_SCOPE_CPU, false), &rd, t);
	assert_string_equal(t, "render 4");
	/* Full: the least recently used makes room. */
	get_text(c, key(7, API_SCOPE_CPU, false), &rd, t);
	assert_string_equal(t, "render 5");
	get_text(c, key(6, API_SCOPE_CPU, false), &rd, t);
	assert_string_equal(t, "render 4");
	get_text(c, key(5, API_SCOPE_CORE, false), &rd, t);
	assert_string_equal(t, "render 3");
	get_text(c, key(5, API_SCOPE_CPU, false), &rd, t);
	assert_string_equal(t, "render 6");
	/* Interval 8 asked for: those of 5 go, and a late request for one is
	 * rendered for itself, not kept. */
	get_text(c, key(8, API_SCOPE_HOST, false), &rd, t);
	assert_string_equal(t, "render 7");
	get_text(c, key(5, API_SCOPE_CORE, false), &rd, t);
	assert_string_equal(t, "render 8");
	get_text(c, key(5, API_SCOPE_CORE, false), &rd, t);
	assert_string_equal(t, "render 9");
	get_text(c, key(6, API_SCOPE_CPU, false), &rd, t);
	assert_string_equal(t, "render 4");
	assert_int_equal(apicache_renders(c), 9);
	apicache_free(c);
}

static void test_least_recently_used(void **state)
{
	struct apicache *c;
	struct renderer rd;
	const struct apidoc *held;
	struct apicache_key a = key(1, API_SCOPE_HOST, false);
	char t[32];

	(void)state;
	renderer_init(&rd);
	assert_int_equal(apicache_new(2, &c), 0);
	assert_int_equal(apicache_get(c, &a, render_text, &rd, &held), 0);
	get_text(c, key(1, API_SCOPE_CPU, false), &rd, t); /* render 2 */
	get_text(c, key(1, API_SCOPE_HOST, false), &rd, t); /* a used last */
	assert_string_equal(t, "render 1");
	get_text(c, key(1, API_SCOPE_CORE, false), &rd, t); /* replaces cpu */
	assert_string_equal(t, "render 3");
	get_text(c, key(1, API_SCOPE_CPU, false), &rd, t); /* replaces a */
	assert_string_equal(t, "render 4");
	get_text(c, key(1, API_SCOPE_HOST, false), &rd, t);
	assert_string_equal(t, "render 5");
	/* A document a response still sends outlives its slot. */
	assert_memory_equal(held->text, "render 1", held->len);
	apidoc_unref(held);
	apicache_free(c);
}

static void test_failure_not_shared(void **state)
{
	struct apicache *c;
	struct renderer rd;
	struct apicache_key k = key(3, API_SCOPE_CPU, false);
	const struct apidoc *d = NULL;
	char t[32];

	(void)state;
	renderer_init(&rd);
	rd.fail = 1;
	assert_int_equal(apicache_new(2, &c), 0);
	assert_int_equal(apicache_get(c, &k, render_text, &rd, &d), -EIO);
	assert_null(d);
	get_text(c, k, &rd, t);
	assert_string_equal(t, "render 2");
	apicache_free(c);
}

struct caller {
	struct apicache *c;
	struct renderer *rd;
	char text[32];
};

static void *call(void *arg)
{
	struct caller *cl = arg;

	pthread_mutex_lock(&cl->rd->lock);
	atomic_fetch_add(&cl->rd->entered, 1);
	pthread_cond_broadcast(&cl->rd->cond);
	pthread_mutex_unlock(&cl->rd->lock);
	get_text(cl->c, key(9, API_SCOPE_CPU, true), cl->rd, cl->text);
	return NULL;
}

/* Eight requests at once: the render the first starts does not return
 * before all eight have asked, so the other seven find it in progress
 * (or done) and none renders it again. */
static void test_one_render_at_once(void **state)
{
	enum { N = 8 };
	struct apicache *c;
	struct renderer rd;
	struct caller callers[N];
	pthread_t threads[N];

	(void)state;
	renderer_init(&rd);
	rd.wait_for = N;
	assert_int_equal(apicache_new(4, &c), 0);
	for (int i = 0; i < N; i++) {
		callers[i] = (struct caller){ c, &rd, "" };
		assert_int_equal(pthread_create(&threads[i], NULL, call, &callers[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(threads[i], NULL);
		assert_string_equal(callers[i].text, "render 1");
	}
	assert_int_equal(atomic_load(&rd.calls), 1);
	assert_int_equal(apicache_renders(c), 1);
	apicache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_later),
		cmocka_unit_test(test_least_recently_used),
		cmocka_unit_test(test_failure_not_shared),
		cmocka_unit_test(test_one_render_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
