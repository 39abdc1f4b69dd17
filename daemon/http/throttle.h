/* SPDX-License-Identifier: MIT */
/* throttle: who may have a password checked now.
 *
 * A password check (bcrypt) costs a worker tens to hundreds of
 * milliseconds; a client guessing passwords must not be able to buy many.
 * Per client (client.h: an IPv4 address or an IPv6 /64), at most one check
 * is in progress at a time,
 * and after THROTTLE_FREE_FAILURES wrong passwords in a row each further
 * failure blocks the client for twice as long as the previous one, from 1 s
 * up to THROTTLE_MAX_BLOCK_S; a correct password clears it.  A client that
 * stays quiet for THROTTLE_FORGET_S is forgotten.
 *
 * A fixed table: memory does not grow with the number of clients.  When
 * it is full, the client seen longest ago among a few candidates is
 * forgotten (never one with a check in progress).  Times are passed in, so
 * the policy is tested without clocks.  Thread-safe. */
#ifndef TOPDOWND_THROTTLE_H
#define TOPDOWND_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

#include "client.h"

#define THROTTLE_FREE_FAILURES 5
#define THROTTLE_MAX_BLOCK_S 60
#define THROTTLE_FORGET_S 600

struct throttle;

int throttle_new(unsigned slots, struct throttle **ret);
void throttle_free(struct throttle *t);

/* 0: the client may have one password checked now, and must call
 * throttle_end() when it is done.  Otherwise the client is refused and the
 * value is the number of seconds after which to try again (Retry-After). */
unsigned throttle_begin(struct throttle *t, const struct client_key *k, uint64_t now_ns);
void throttle_end(struct throttle *t, const struct client_key *k, bool ok, uint64_t now_ns);
/* The check that throttle_begin() allowed did not happen after all. */
void throttle_abandon(struct throttle *t, const struct client_key *k);

#endif
