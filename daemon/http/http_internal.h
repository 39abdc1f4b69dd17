/* SPDX-License-Identifier: MIT */
/* http_internal: what the server (http.c) and its requests (request.c)
 * share: the server, its settings, and the accounting.  Not for other
 * modules. */
#ifndef TOPDOWND_HTTP_INTERNAL_H
#define TOPDOWND_HTTP_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>

#include "apicache.h"
#include "conns.h"
#include "http.h"
#include "jobs.h"
#include "render.h"
#include "throttle.h"

/* What a reload changes under live connections.  Each request, and each
 * TLS connection (whose session uses the credentials), holds a reference;
 * the last one frees the authentication data and the certificates. */
struct settings {
	atomic_int refs;
	uint64_t gen;
	enum config_granularity granularity;
	bool ratios;
	unsigned timeout_s;
	double unhealthy_after_s; /* /-/healthy fails after a stall this long */
	struct tls_material *tls;
	struct auth_db *auth;
};

struct http {
	struct http_params p; /* tls and auth are in the settings */
	bool tls;
	struct MHD_Daemon *daemons[CONFIG_LISTEN_MAX * 4];
	size_t n_daemons;
	bool quiesced;
	pthread_mutex_t settings_lock; /* guards the pointer, not the settings */
	struct settings *settings;
	uint64_t next_gen;
	struct conns *conns;
	struct throttle *throttle;
	/* render_jobs: /metrics only (cached per interval), so that scrapes
	 * never wait behind the expensive JSON and page renders of api_jobs. */
	struct jobs *auth_jobs, *render_jobs, *api_jobs;
	/* Shutting down: queued API renders answer 503 at once (counted in
	 * unrendered, which the stop logs). */
	atomic_bool stopping;
	atomic_uint unrendered;
	struct render *render;
	struct apicache *apicache; /* the JSON documents, shared */
};

struct settings *http_settings_get(struct http *h);
void http_settings_unref(struct settings *s);
/* Counts an answered request, and a refusal by its status. */
void http_count(struct http *h, enum expo_endpoint ep, unsigned status);
/* The HTTP figures /metrics shows. */
void http_counts(struct http *h, struct expo_http *out);

/* libmicrohttpd's request callbacks (request.c): URI log, completion,
 * access handler. */
void *request_begins(void *cls, const char *uri, struct MHD_Connection *conn);
void request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
		  enum MHD_RequestTerminationCode toe);
enum MHD_Result request_handle(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_size, void **con_cls);

#endif
