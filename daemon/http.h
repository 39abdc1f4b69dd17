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

#include "config.h"
#include "snapshot.h"

struct http_params {
	struct snapring *ring;
	const char *hostname;
	const int *fds;
	size_t n_fds;
	enum config_granularity granularity;
	bool ratios;
	unsigned max_connections;
	unsigned timeout_s;
};

struct http;

int http_new(const struct http_params *params, struct http **ret);
/* Stops serving; the listening sockets stay open. */
void http_free(struct http *http);

#endif
