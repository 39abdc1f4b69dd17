/* SPDX-License-Identifier: MIT */
/* render: one render per snapshot, variant and settings generation, also
 * when many threads ask at once (run under ThreadSanitizer too). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "render.h"

static const struct expo_options OPTS = {
	.granularity = GRAN_CPU, .ratios = true, .version = "1.2.3", .revision = "abc123",
};

struct asker {
	struct render *r;
	const struct snapshot *snap;
	enum render_variant v;
	uint64_t gen;
	int failures;
};

static void *ask(void *arg)
{
	struct asker *a = arg;

	for (int i = 0; i < 20; i++) {
		struct MHD_Response *resp = render_response(a->r, a->snap, a->v, &OPTS, a->gen, NULL, NULL);

		if (!resp)
			a->failures++;
		else
			MHD_destroy_response(resp);
	}
	return NULL;
}

/* 8 threads, two of each variant, all for one snapshot and generation. */
static uint64_t ask_all(struct render *r, const struct snapshot *snap, uint64_t gen)
{
	struct asker a[8];
	pthread_t t[8];
	uint64_t before = render_count(r);

	for (int i = 0; i < 8; i++) {
		a[i] = (struct asker){ r, snap, (enum render_variant)(i % RENDER_VARIANTS), gen, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, ask, &a[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].failures, 0);
	}
	return render_count(r) - before;
}

static void test_once_per_interval(void **state)
{
	static struct snapshot snap;
	struct render *r;

	(void)state;
	memset(&snap, 0, sizeof(snap));
	snap.published = 1;
	assert_int_equal(render_new(&r), 0);
	/* Text, OpenMetrics and their gzip forms: four bodies, whoever asks. */
	assert_int_equal(ask_all(r, &snap, 1), 4);
	assert_int_equal(ask_all(r, &snap, 1), 0);
	/* A new interval, or a reload (new generation): four more each.
	 * Many rounds, so that racing renderers meet. */
	for (uint64_t seq = 2; seq < 60; seq++) {
		snap.published = seq;
		assert_int_equal(ask_all(r, &snap, 1), 4);
		assert_int_equal(ask_all(r, &snap, 2), 4);
	}
	render_free(r);
	render_free(NULL);
}

static uint64_t render_one(struct render *r, const struct snapshot *snap, enum render_variant v)
{
	uint64_t before = render_count(r);
	struct MHD_Response *resp = render_response(r, snap, v, &OPTS, 1, NULL, NULL);

	assert_non_null(resp);
	MHD_destroy_response(resp);
	return render_count(r) - before;
}

/* Rendering a newer interval drops the bodies of intervals before the one
 * it follows, whatever their variant: a scraper taking turns with formats
 * keeps no stale body per format.  The interval just before stays (it is
 * served while its successor renders). */
static void test_stale_dropped(void **state)
{
	static struct snapshot old, prev, now;
	struct render *r;

	(void)state;
	old.published = 1;
	prev.published = 2;
	now.published = 3;
	assert_int_equal(render_new(&r), 0);
	assert_int_equal(render_one(r, &old, RENDER_TEXT), 1);
	assert_int_equal(render_one(r, &old, RENDER_TEXT), 0);
	assert_int_equal(render_one(r, &prev, RENDER_OM), 1);
	/* Interval 1's text body stays while 2 is the newest rendered ... */
	assert_int_equal(render_one(r, &old, RENDER_TEXT), 0);
	assert_int_equal(render_one(r, &now, RENDER_OM_GZIP), 2);
	/* ... and went with interval 3's first render: rendered again. */
	assert_int_equal(render_one(r, &old, RENDER_TEXT), 1);
	render_free(r);
}

static void count_call(void *arg)
{
	(*(unsigned *)arg)++;
}

/* What only a render should pay for (the daemon's own figures) is
 * gathered once per render, before it, and never for a cached body: also
 * not twice for a gzip variant, which renders its plain one too. */
static void test_prepare_once(void **state)
{
	static struct snapshot one, two;
	struct MHD_Response *resp;
	unsigned calls = 0;
	struct render *r;

	(void)state;
	one.published = 1;
	two.published = 2;
	assert_int_equal(render_new(&r), 0);
	for (int i = 0; i < 3; i++) {
		resp = render_response(r, &one, RENDER_TEXT, &OPTS, 1, count_call, &calls);
		assert_non_null(resp);
		MHD_destroy_response(resp);
	}
	assert_int_equal(calls, 1);
	resp = render_response(r, &two, RENDER_TEXT_GZIP, &OPTS, 1, count_call, &calls);
	assert_non_null(resp);
	MHD_destroy_response(resp);
	assert_int_equal(calls, 2);
	assert_int_equal(render_count(r), 3);
	resp = render_response(r, &two, RENDER_TEXT, &OPTS, 1, count_call, &calls);
	assert_non_null(resp);
	MHD_destroy_response(resp);
	assert_int_equal(calls, 2);
	render_free(r);
}

/* An interval's flip: the first request for the new publication misses
 * and claims its render; the ones after it are served the previous
 * interval's body until the render is in the cache; then the new one.
 * Never a body two intervals old, nor one of another settings generation. */
static void test_lookup_flip(void **state)
{
	static struct snapshot one, two, four;
	struct render *r;

	(void)state;
	one.published = 1;
	two.published = 2;
	four.published = 4;
	assert_int_equal(render_new(&r), 0);
	/* Nothing cached: every request renders (on a worker). */
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 1, 1), RENDER_MISS);
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 1, 1), RENDER_MISS);
	assert_int_equal(render_one(r, &one, RENDER_TEXT), 1);
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 1, 1), RENDER_HIT);
	/* Interval 2 is published: one claim, then the previous body. */
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 2, 1), RENDER_MISS);
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 2, 1), RENDER_STALE);
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 2, 1), RENDER_STALE);
	/* Another variant or granularity has its own claim, and a reload's
	 * generation nothing to serve. */
	assert_int_equal(render_lookup(r, RENDER_OM, GRAN_CPU, 2, 1), RENDER_MISS);
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_PACKAGE, 2, 1), RENDER_MISS);
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 2, 2), RENDER_MISS);
	assert_int_equal(render_one(r, &two, RENDER_TEXT), 1);
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 2, 1), RENDER_HIT);
	/* Two intervals on: the cached body is too old to serve. */
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 4, 1), RENDER_MISS);
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 4, 1), RENDER_MISS);
	assert_int_equal(render_one(r, &four, RENDER_TEXT), 1);
	assert_int_equal(render_lookup(r, RENDER_TEXT, GRAN_CPU, 4, 1), RENDER_HIT);
	render_free(r);
}

static void test_variant_of(void **state)
{
	(void)state;
	assert_int_equal(render_variant_of(NULL, NULL), RENDER_TEXT);
	assert_int_equal(render_variant_of("application/openmetrics-text", NULL), RENDER_OM);
	assert_int_equal(render_variant_of(NULL, "gzip"), RENDER_TEXT_GZIP);
	assert_int_equal(render_variant_of("application/openmetrics-text;version=1.0.0", "br, gzip"),
			 RENDER_OM_GZIP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_once_per_interval),
		cmocka_unit_test(test_stale_dropped),
		cmocka_unit_test(test_prepare_once),
		cmocka_unit_test(test_lookup_flip),
		cmocka_unit_test(test_variant_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
