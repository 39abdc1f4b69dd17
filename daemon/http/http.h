/* SPDX-License-Identifier: MIT */
/* http: the HTTP server (libmicrohttpd) and its endpoints: /metrics,
 * /api/v1/topdown, /, /-/healthy, /-/ready.
 *
 * One libmicrohttpd daemon per listening socket, each with one thread that
 * only moves bytes and routes requests: epoll for plain HTTP; poll for
 * HTTPS, because libmicrohttpd 0.9.75's epoll loop spins on a TLS
 * handshake that stalls halfway (MHD_run_tls_handshake_ leaves the
 * connection marked read-ready on GNUTLS_E_AGAIN).  Slow work goes to
 * worker pools while the connection is suspended: password checks (one
 * pool, with a per-client throttle) and rendering (another), so no client
 * waits for another's.  Every connection has a deadline for its request
 * head (conns.h), and each client a share of the connections.
 *
 * Snapshots are read from the ring: a scrape never waits for collection,
 * collection never waits for a scrape.  A reload swaps the settings
 * (authentication, certificates, labels, timeout) under live connections;
 * only a change of HTTPS on or off or of the connection limit needs a new
 * server.  The sockets belong to the caller: they stay open across
 * http_free. */
#ifndef TOPDOWND_HTTP_H
#define TOPDOWND_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "auth.h"
#include "config.h"
#include "expo.h"
#include "history.h"
#include "snapshot.h"
#include "tls.h"

/* Request accounting.  Owned by the caller so it outlives a server that
 * a reload replaces: counters never go back. */
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
	struct history *history;        /* for ?window= */
	const char *hostname;
	const int *fds;
	size_t n_fds;
	unsigned max_connections;       /* per listening socket */
	struct http_stats *stats;
	/* What a reload can change under live connections. */
	enum config_granularity granularity;
	bool ratios;
	unsigned timeout_s;
	double unhealthy_after_s;       /* [http] unhealthy_after */
	struct tls_material *tls;       /* NULL: plain HTTP */
	struct auth_db *auth;           /* NULL: no authentication */
};

struct http;

/* Takes @params->tls and ->auth over, also when it fails. */
/* How many connections each of @n_listen listening sockets may hold under
 * a descriptor limit of @limit of which @used are taken (the perf groups,
 * the daemon's own): @want, or what fits, at least 1.  *@need: the limit
 * that @want needs. */
unsigned http_connections_fit(uint64_t limit, uint64_t used, size_t n_listen, unsigned want,
			      uint64_t *need);

int http_new(const struct http_params *params, struct http **ret);
/* A reload.  Takes @params->tls and ->auth over and returns 0; or, when
 * only a new server can apply it (HTTPS turned on or off, another
 * connection limit), takes nothing and returns -EAGAIN. */
int http_update(struct http *h, const struct http_params *params);
/* Stops accepting (a new server has the sockets) and, in the background,
 * gives the requests in flight half a second, then stops and frees @h. */
void http_retire(struct http *h);
/* Waits until every server given to http_retire() is gone. */
void http_retired_wait(void);
/* Stops serving, closing any connection left; the sockets stay open. */
void http_free(struct http *h);

#endif
