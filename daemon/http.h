/* http: the HTTP server (libmicrohttpd) and its endpoints: /metrics,
 * /api/v1/topdown, /, /-/healthy, /-/ready.
 *
 * One libmicrohttpd daemon per listening socket, each with its own epoll
 * thread, reading snapshots from the ring: a scrape never waits for
 * collection, collection never waits for a scrape.  /metrics is rendered at
 * most once per interval, format and encoding, then served from that
 * buffer to every client.  The sockets belong to the caller: they stay
 * open across http_free (reload, socket activation). */
#ifndef TOPDOWND_HTTP_H
#define TOPDOWND_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "auth.h"
#include "config.h"
#include "expo.h"
#include "snapshot.h"
#include "tls.h"

/* Request accounting.  Owned by the caller so it outlives a reload (a new
 * server replaces the old one): counters never go back. */
struct http_stats {
	_Atomic uint64_t requests[EXPO_EP_COUNT][EXPO_CODE_COUNT];
	_Atomic uint64_t rejected[EXPO_REJ_COUNT];
	_Atomic uint64_t password_checks;
};

/* Query strings longer than this get 414, more parameters 400. */
#define HTTP_QUERY_MAX 1024
#define HTTP_QUERY_PARAMS_MAX 8

struct http_params {
	struct snapring *ring;
	const char *hostname;
	const int *fds;
	size_t n_fds;
	enum config_granularity granularity;
	bool ratios;
	unsigned max_connections;
	unsigned timeout_s;
	const struct tls_material *tls; /* NULL: plain HTTP */
	struct auth_db *auth;           /* NULL: no authentication */
	struct http_stats *stats;
};

struct http;

int http_new(const struct http_params *params, struct http **ret);
/* Stops accepting (another server may take the sockets over) and waits at
 * most @ms for the requests in flight to complete. */
void http_drain(struct http *http, unsigned ms);
/* Stops serving, closing any connection left; the sockets stay open. */
void http_free(struct http *http);

#endif
