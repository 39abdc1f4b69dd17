/* SPDX-License-Identifier: MIT */
/* body: renders write into the buffers earlier bodies gave back, the gzip
 * member decompresses to the plain body, and bodies outlive the pool's
 * owner (run under ASan and ThreadSanitizer too). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <isa-l/igzip_lib.h>

#include "body.h"
#include "snapfix.h"

static const struct expo_options OPTS = {
	.granularity = GRAN_CPU, .ratios = true, .version = "1.2.3", .revision = "abc123",
};

/* A snapshot of @n monitored CPUs with some slots each: the shared
 * Sapphire Rapids header (snapfix.h), each CPU a core of its own whose
 * topology is not summed (no core or package rows). */
static struct snapshot *snap_new(unsigned n)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	struct snapfix_cpu *rows = calloc(n, sizeof(*rows));

	assert_non_null(s);
	assert_non_null(rows);
	s->cpus = calloc(n, sizeof(*s->cpus));
	s->cores = calloc(n, sizeof(*s->cores));
	s->pkgs = calloc(1, sizeof(*s->pkgs));
	assert_true(s->cpus && s->cores && s->pkgs);
	snapfix_spr(s);
	s->seq = 3;
	for (unsigned i = 0; i < n; i++)
		rows[i] = (struct snapfix_cpu){ (int)i, true, true, (int)i, 0, -1, -1, CPU_STATE_MONITORED };
	snapfix_cpus(s, rows, n);
	free(rows);
	for (unsigned i = 0; i < n; i++) {
		s->cpus[i].c.total[TD_C_SLOTS] = 1e9 + i;
		s->cpus[i].c.total[TD_C_CAT + TD_CAT_RETIRING] = 1e9 + i;
	}
	return s;
}

static void snap_free(struct snapshot *s)
{
	free(s->cpus);
	free(s->cores);
	free(s->pkgs);
	free(s);
}

static void test_reuse(void **state)
{
	struct snapshot *s = snap_new(64);
	struct body_pool *p = NULL;
	struct body *cached, *next;
	char *first_buffer;

	(void)state;
	assert_int_equal(body_pool_new(2, 1, &p), 0);
	cached = body_render(p, 0, s, &OPTS, EXPO_TEXT);
	assert_non_null(cached);
	assert_non_null(strstr(cached->data, "topdown_slots_total{cpu=\"63\",core=\"63\",package=\"0\"} 1000000063\n"));
	first_buffer = cached->data;
	/* The next interval's render while the cache still holds this one:
	 * a second buffer. */
	next = body_render(p, 0, s, &OPTS, EXPO_TEXT);
	assert_non_null(next);
	assert_ptr_not_equal(next->data, first_buffer);
	assert_int_equal(body_fresh_buffers(p), 2);
	body_unref(cached); /* replaced in the cache: its buffer is a spare */
	cached = next;
	/* From now on the two buffers take turns: nothing fresh. */
	for (int i = 0; i < 10; i++) {
		next = body_render(p, 0, s, &OPTS, EXPO_TEXT);
		assert_non_null(next);
		assert_int_equal(next->len, cached->len);
		assert_memory_equal(next->data, cached->data, next->len);
		body_unref(cached);
		cached = next;
	}
	assert_int_equal(body_fresh_buffers(p), 2);
	body_unref(cached);
	body_pool_free(p);
	snap_free(s);
}

/* @gz (@len bytes) inflates, header, crc and length checked, to @plain. */
static void assert_inflates_to(const char *gz, size_t len, const struct body *plain)
{
	struct inflate_state in;
	char *out = malloc(plain->len + 1);

	assert_non_null(out);
	isal_inflate_init(&in);
	in.crc_flag = ISAL_GZIP;
	in.next_in = (uint8_t *)(uintptr_t)gz;
	in.avail_in = (uint32_t)len;
	in.next_out = (uint8_t *)out;
	in.avail_out = (uint32_t)plain->len + 1;
	assert_int_equal(isal_inflate(&in), ISAL_DECOMP_OK);
	assert_int_equal(in.block_state, ISAL_BLOCK_FINISH);
	assert_int_equal(in.total_out, plain->len);
	assert_memory_equal(out, plain->data, plain->len);
	free(out);
}

static void test_gzip(void **state)
{
	struct snapshot *s = snap_new(256);
	struct body_pool *p = NULL;
	unsigned long fresh = 0;

	(void)state;
	assert_int_equal(body_pool_new(2, 1, &p), 0);
	for (int i = 0; i < 4; i++) {
		struct body *plain = body_render(p, 0, s, &OPTS, EXPO_OPENMETRICS);
		struct body *gz;

		assert_non_null(plain);
		gz = body_gzip(p, 1, plain);
		assert_non_null(gz);
		assert_true(gz->len < plain->len / 4);
		/* A gzip member: magic and deflate method. */
		assert_int_equal((unsigned char)gz->data[0], 0x1f);
		assert_int_equal((unsigned char)gz->data[1], 0x8b);
		assert_int_equal(gz->data[2], 8);
		assert_inflates_to(gz->data, gz->len, plain);
		if (i == 1)
			fresh = body_fresh_buffers(p);
		body_unref(gz);
		body_unref(plain);
	}
	/* With nothing held across renders, each slot reuses its one buffer. */
	assert_int_equal(body_fresh_buffers(p), fresh);
	assert_int_equal(fresh, 2);
	body_pool_free(p);
	snap_free(s);
}

/* The one-off form: the same member as a slot's. */
static void test_gzip_once(void **state)
{
	struct snapshot *s = snap_new(64);
	struct body_pool *p = NULL;
	struct body *plain;
	char *gz;
	size_t gz_len;

	(void)state;
	assert_int_equal(body_pool_new(1, 1, &p), 0);
	plain = body_render(p, 0, s, &OPTS, EXPO_TEXT);
	assert_non_null(plain);
	assert_int_equal(body_gzip_once(plain->data, plain->len, &gz, &gz_len), 0);
	assert_true(gz_len < plain->len / 4);
	assert_inflates_to(gz, gz_len, plain);
	free(gz);
	body_unref(plain);
	body_pool_free(p);
	snap_free(s);
}

struct holder {
	struct body *b;
};

static void *release_later(void *arg)
{
	struct holder *h = arg;

	body_unref(h->b);
	return NULL;
}

/* A connection still sending a body when the server shuts down: the pool
 * goes with the last body, released on another thread. */
static void test_outlives_owner(void **state)
{
	struct snapshot *s = snap_new(8);
	struct body_pool *p = NULL;
	struct holder h[4];
	pthread_t t[4];

	(void)state;
	assert_int_equal(body_pool_new(1, 1, &p), 0);
	for (int i = 0; i < 4; i++) {
		h[i].b = body_render(p, 0, s, &OPTS, EXPO_TEXT);
		assert_non_null(h[i].b);
	}
	body_pool_free(p);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, release_later, &h[i]), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	snap_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_gzip_once),
		cmocka_unit_test(test_outlives_owner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
