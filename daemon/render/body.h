/* SPDX-License-Identifier: MIT */
/* body: rendered /metrics bodies and their gzip forms, written into
 * buffers reused from one interval to the next.
 *
 * A body is shared by the render cache and every connection sending it;
 * when the last of them lets go, its buffer becomes a spare, and the next
 * render writes into memory that is already mapped (at a
 * thousand CPUs a body is 1.7 MB: a fresh buffer is hundreds of page
 * faults per render).  Each gzip slot keeps one deflate stream (ISA-L's
 * igzip, three times libdeflate's speed and six times zlib's at level 1)
 * for good, reset for each body.  One renderer per slot at a time (the caller's
 * lock); bodies are referenced and released from any thread, and may
 * outlive the pool's owner. */
#ifndef TOPDOWND_BODY_H
#define TOPDOWND_BODY_H

#include <stdatomic.h>
#include <stddef.h>

#include "expo.h"
#include "snapshot.h"

struct body_pool;
struct spares;

struct body {
	atomic_int refs;
	size_t len;
	char *data;
	size_t cap;
	struct body_pool *pool;
	struct spares *home; /* where its buffer goes back */
};

/* @n_slots slots (one per cached variant); gzip at igzip's @gzip_level
 * (1, its default: level 2 is no smaller and level 3 four times slower). */
int body_pool_new(unsigned n_slots, int gzip_level, struct body_pool **ret);
/* The owner lets go; the pool goes when the last body does. */
void body_pool_free(struct body_pool *p);

/* @snap rendered in @format with @opt into slot @slot's buffer: a new
 * reference, or NULL without memory. */
struct body *body_render(struct body_pool *p, unsigned slot, const struct snapshot *snap,
			 const struct expo_options *opt, enum expo_format format);
/* @plain compressed (a gzip member) into slot @slot's buffer. */
struct body *body_gzip(struct body_pool *p, unsigned slot, const struct body *plain);

/* @len bytes at @in compressed (a gzip member, level 1) into a buffer of
 * their own, for the responses rendered once per request (the JSON API,
 * the live page).  -ENOMEM. */
int body_gzip_once(const char *in, size_t len, char **out, size_t *out_len);

struct body *body_ref(struct body *b);
/* NULL is fine. */
void body_unref(struct body *b);

/* Buffers handed out that were not a reused one (for tests and the bench). */
unsigned long body_fresh_buffers(struct body_pool *p);

#endif
