/* SPDX-License-Identifier: MIT */
/* request_internal: what the request state machine (request.c) and the
 * endpoints (endpoints.c) share, private to http/: the request, the route
 * row, the small responses. */
#ifndef TOPDOWND_REQUEST_INTERNAL_H
#define TOPDOWND_REQUEST_INTERNAL_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "api.h"
#include "client.h"
#include "http_internal.h"
#include "render.h"

#define CT_TEXT "text/plain; charset=utf-8"
#define CT_JSON "application/json"
#define CT_HTML "text/html; charset=utf-8"

/* Where a request stands: its head arrived (the handler's first call),
 * a password check or a render runs on a worker while the connection is
 * suspended, then the handler is called again. */
enum phase {
	PHASE_HEAD,
	PHASE_READY,
	PHASE_AUTH,    /* on an auth worker */
	PHASE_AUTHED,
	PHASE_RENDER,  /* on the render worker */
	PHASE_RENDERED,
};

struct req {
	struct http *h;
	struct settings *s;
	struct MHD_Connection *mc;
	struct conn *conn;
	const struct route *route; /* from the path (routes[]) */
	enum expo_endpoint ep;     /* the route's label */
	bool history; /* /api/v1/topdown/history (counted as api) */
	enum phase phase;
	/* Refused before the handler ran (the query): status and text. */
	unsigned refuse;
	const char *refuse_text;
	struct client_key client;
	bool have_client;
	enum auth_result auth;
	struct auth_attempt attempt;
	/* Render jobs: the snapshot held for the worker, what to render. */
	const struct snapshot *snap;
	enum render_variant variant;
	enum config_granularity gran; /* of /metrics: configured, or ?granularity= */
	struct api_query query;
	struct history_sample *then; /* where a ?window= starts */
	double since;                /* of the history */
	bool gzip;                   /* the client takes gzip (JSON, the page) */
	char heat[48];               /* the live page's ?heat= */
	char page_error[256];        /* why its query is refused */
	struct MHD_Response *response;
	unsigned status;
	uint64_t queued_ns; /* when it was handed to a worker */
};

/* A route's request side, on the connection's thread, with the newest
 * snapshot in *@snap: it answers (the result), or hands the request to a
 * worker (req_to_worker(): *@suspended, and the worker holds the
 * snapshot, *@snap NULL). */
typedef enum MHD_Result (*serve_fn)(struct req *req, const struct snapshot **snap,
				    bool *suspended);
/* A route's worker side: the response of @req (the snapshot it holds in
 * req->snap), NULL without memory. */
typedef struct MHD_Response *(*render_fn)(struct req *req);

/* One endpoint, one row (endpoints.c): the server routes by it, counts by
 * it (topdown_http_requests_total{endpoint}), and the live page's footer
 * links it (61-manpages.t checks topdownd(8) describes each).  Every one
 * answers GET and HEAD (screen()). */
struct route {
	const char *path;
	const char *link;      /* the live page's link to it, relative */
	enum expo_endpoint ep; /* its label in the accounting */
	bool open;             /* answered without authentication, without a
				* worker (the liveness probe: endpoint_liveness()) */
	bool scrape;           /* rendered on the scrapes' worker, never refused
				* as stale (the JSON worker's deadline) */
	serve_fn serve;        /* the request side; NULL for an open route */
	render_fn render;      /* the worker side, NULL when none */
};

/* The route of @url, or the 404 route (no handler, counted as "other"). */
const struct route *endpoint_route(const char *url);

/* The open route's answer: "OK", or 503 once collection stalled. */
unsigned endpoint_liveness(const struct req *req, char *text, size_t len);

/* @req on a worker with *@snap (which it then holds: *@snap NULL,
 * *@suspended), or the 503 when the worker's queue is full. */
enum MHD_Result req_to_worker(struct req *req, const struct snapshot **snap, bool *suspended);

enum MHD_Result req_respond_text(struct MHD_Connection *conn, unsigned status, const char *text);
/* {"error": @message}, whatever bytes @message holds. */
enum MHD_Result req_respond_json_error(struct MHD_Connection *conn, unsigned status, const char *message);

#endif
