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
		struct MHD_Response *resp = render_response(a->r, a->snap, a->v, &OPTS, a->gen);

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
	struct MHD_Response *resp = render_response(r, snap, v, &OPTS, 1);

	assert_non_null(resp);
	MHD_destroy_response(resp);
	return render_count(r) - before;
}

/* Rendering a newer interval drops the bodies of older ones, whatever
 * their variant: a scraper taking turns with formats keeps no stale body
 * per format. */
static void test_stale_dropped(void **state)
{
	static struct snapshot old, now;
	struct render *r;

	(void)state;
	old.published = 1;
	now.published = 2;
	assert_int_equal(render_new(&r), 0);
	assert_int_equal(render_one(r, &old, RENDER_TEXT), 1);
	assert_int_equal(render_one(r, &old, RENDER_TEXT), 0);
	assert_int_equal(render_one(r, &now, RENDER_OM), 1);
	/* The text body of interval 1 went with it: rendered again. */
	assert_int_equal(render_one(r, &old, RENDER_TEXT), 1);
	/* ... which keeps interval 2's (newer) OpenMetrics body. */
	assert_int_equal(render_one(r, &now, RENDER_OM), 0);
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
		cmocka_unit_test(test_variant_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
