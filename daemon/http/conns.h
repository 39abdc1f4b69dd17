/* SPDX-License-Identifier: MIT */
/* conns: every open HTTP connection, and the deadline by which its next
 * request head must have arrived.
 *
 * libmicrohttpd's own timeout is an idle timeout: each byte a client sends
 * starts it again, so a client trickling a header a byte at a time (or one
 * stalling a TLS handshake) can hold a connection forever.  Here a
 * connection gets an absolute deadline when it opens and each time a
 * response is done: the whole next request head (TLS handshake included)
 * must be in by then.  While a request is being served there is none.  A
 * reaper thread shuts down the sockets of connections past their deadline;
 * libmicrohttpd then sees the end of the stream and closes them itself.
 *
 * It also counts each client's connections (client.h), so that one
 * client cannot take every connection: libmicrohttpd's own per-IP limit
 * would count each address of an IPv6 /64 apart.
 *
 * The socket is only shut down while the connection is registered, and
 * libmicrohttpd closes it only after it has said the connection closed
 * (conns_remove), so the reaper never touches a descriptor that was
 * reused.  Thread-safe. */
#ifndef TOPDOWND_CONNS_H
#define TOPDOWND_CONNS_H

#include <stdbool.h>
#include <stdint.h>

#include "client.h"

struct conns;
struct conn;

/* Starts the reaper.  At most @max_total connections are registered at
 * once (the sum of the servers' limits), @per_client per client. */
int conns_new(uint64_t timeout_ns, unsigned max_total, unsigned per_client, struct conns **ret);
/* Stops the reaper.  Connections still registered are forgotten (their
 * data is not freed): stop the HTTP server first. */
void conns_free(struct conns *c);
/* For connections whose deadline is set from now on. */
void conns_set_timeout(struct conns *c, uint64_t timeout_ns);

/* Whether client @k may open one more connection.  When its share, or the
 * pool, is full, the connection waiting longest for a request head (the
 * client's own, or anyone's for the pool) is shut down to make room
 * (conns_evicted); false only when every connection is being served. */
bool conns_admit(struct conns *c, const struct client_key *k);
/* Registers a new connection of client @k on socket @fd with the caller's
 * @data.  NULL without memory (the connection then has no deadline). */
struct conn *conns_add(struct conns *c, int fd, const struct client_key *key, void *data);
void *conn_data(const struct conn *k);
/* A request head is complete: no deadline while it is served. */
void conns_request_started(struct conns *c, struct conn *k);
/* Its response is done: the next head is due within the timeout. */
void conns_request_done(struct conns *c, struct conn *k);
/* Unregisters and frees @k (NULL is fine); returns its data. */
void *conns_remove(struct conns *c, struct conn *k);

unsigned conns_count(struct conns *c);
/* Connections shut down since the start, read under one lock. */
struct conns_stats {
	uint64_t expired; /* for missing their deadline */
	uint64_t evicted; /* idle, to make room for a new one */
};

struct conns_stats conns_stats(struct conns *c);

#endif
