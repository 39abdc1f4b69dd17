/* SPDX-License-Identifier: MIT */
/* request: one HTTP request, from its head to its response: refusals
 * decided before any work (method, body, query, client certificate),
 * basic authentication with the bcrypt check on an auth worker, then its
 * route (endpoints.c): the request side here, the render on a worker.
 * While a worker has it, the connection is suspended; the worker resumes
 * it as its last act. */
#include <errno.h>
#include <pthread.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "body.h"
#include "client.h"
#include "request_internal.h"
#include "negotiate.h"
#include "page.h"
#include "util.h"
#include "version.h"

/* An API render that waited this long in its queue is answered 503 with
 * Retry-After instead: under a flood, an old request's answer is no use
 * to anyone and rendering it keeps the newer ones waiting. */
#define API_DEADLINE_NS (2 * UINT64_C(1000000000))

/* ---- small responses ---- */

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status,
			       const char *content_type, const char *body, size_t len,
			       unsigned retry_after)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (retry_after) {
		char text[16];

		str_printf(text, sizeof(text), "%u", retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, text);
	}
	if (status == MHD_HTTP_UNAUTHORIZED)
		ret = MHD_queue_basic_auth_fail_response(conn, AUTH_REALM, resp);
	else
		ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result req_respond_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
	return respond(conn, status, CT_TEXT, text, strlen(text), 0);
}

static enum MHD_Result respond_retry(struct MHD_Connection *conn, unsigned status,
				     const char *text, unsigned retry_after)
{
	return respond(conn, status, CT_TEXT, text, strlen(text), retry_after);
}

/* @message may quote what the client sent: anything not UTF-8 is replaced
 * so that the document is valid JSON whatever came in. */
enum MHD_Result req_respond_json_error(struct MHD_Connection *conn, unsigned status,
				       const char *message)
{
	char clean[512], *text;
	enum MHD_Result ret;
	json_t *doc;

	str_printable(clean, sizeof(clean), message);
	doc = json_pack("{s:s}", "error", clean);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text)
		return req_respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	ret = respond(conn, status, CT_JSON, text, strlen(text), 0);
	free(text);
	return ret;
}

/* With tls_client_ca the handshake already required a certificate the CA
 * signed; this check keeps that true whatever the TLS library did. */
static bool client_verified(const struct settings *s, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info;
	unsigned status = 0;

	if (!s->tls || !s->tls->ca)
		return true;
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!info || !info->tls_session)
		return false;
	if (gnutls_certificate_verify_peers2(info->tls_session, &status) < 0 || status != 0)
		return false;
	return gnutls_certificate_get_peers(info->tls_session, NULL) != NULL;
}

/* ---- requests ---- */

/* Called with the request line, before libmicrohttpd splits the query into
 * parameters.  Each parameter takes a record in the connection's memory
 * pool; thousands of them exhaust it, and libmicrohttpd 0.9.75 then can
 * neither parse the request nor build its error response, and holds the
 * connection until the timeout.  So an oversized query is emptied here (the
 * URI lives in that pool, writable) and the request refused by the
 * handler. */
void *request_begins(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct http *h = cls;
	const union MHD_ConnectionInfo *info;
	struct req *req = calloc(1, sizeof(*req));
	const char *q = strchr(uri, '?');

	if (!req)
		return NULL;
	req->h = h;
	req->mc = conn;
	req->s = http_settings_get(h);
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	req->conn = info ? info->socket_context : NULL;
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	req->have_client = client_key_of(info ? info->client_addr : NULL, &req->client) == 0;
	/* An encoded NUL would cut the decoded path: "/metrics%00.html"
	 * served /metrics. */
	if (strstr(uri, "%00")) {
		req->refuse = MHD_HTTP_BAD_REQUEST;
		req->refuse_text = "the path holds an encoded NUL (%00)";
	}
	if (q && !req->refuse) {
		size_t params = 1, len = strlen(q + 1);

		for (const char *p = q + 1; *p; p++)
			params += *p == '&';
		if (len > HTTP_QUERY_MAX) {
			req->refuse = MHD_HTTP_URI_TOO_LONG;
			req->refuse_text = "query string too long";
		} else if (params > HTTP_QUERY_PARAMS_MAX) {
			req->refuse = MHD_HTTP_BAD_REQUEST;
			req->refuse_text = "too many query parameters";
		}
		if (req->refuse)
			*(char *)(uintptr_t)(q + 1) = '\0';
	}
	return req;
}

void request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http *h = cls;
	struct req *req = *con_cls;

	(void)conn;
	(void)toe;
	if (!req)
		return;
	conns_request_done(h->conns, req->conn);
	if (req->response)
		MHD_destroy_response(req->response);
	if (req->snap)
		snapring_release(h->p.ring, req->snap);
	explicit_bzero(&req->attempt, sizeof(req->attempt));
	http_settings_unref(req->s);
	history_sample_release(req->then);
	free(req->then);
	free(req);
	*con_cls = NULL;
}

/* ---- work on the workers ---- */

static void auth_job(void *arg)
{
	struct req *req = arg;
	struct http *h = req->h;

	if (atomic_load(&h->stopping)) {
		/* Stopping: a check still queued is not made (a stop waits at
		 * most for the ones under way, AUTH_COST_MAX each). */
		explicit_bzero(&req->attempt, sizeof(req->attempt));
		if (req->have_client)
			throttle_abandon(h->throttle, &req->client);
		req->auth = AUTH_UNAVAILABLE;
	} else {
		atomic_fetch_add(&h->p.stats->password_checks, 1);
		req->auth = auth_verify(req->s->auth, &req->attempt);
		if (req->have_client)
			throttle_end(h->throttle, &req->client, req->auth == AUTH_OK, mono_ns());
	}
	req->phase = PHASE_AUTHED;
	/* The last touch: once resumed, the request may complete and go. */
	MHD_resume_connection(req->mc);
}

/* The route's render on its worker; a JSON or page render that waited
 * API_DEADLINE_NS, or one queued when the server stops, is answered 503. */
static void render_job(void *arg)
{
	struct req *req = arg;
	struct http *h = req->h;

	bool stopping = atomic_load(&h->stopping);

	if (!req->route->scrape && (stopping || mono_ns() - req->queued_ns > API_DEADLINE_NS)) {
		static const char text[] = "503 busy, try again in a second\n";

		if (stopping)
			atomic_fetch_add(&h->unrendered, 1);
		req->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		atomic_fetch_add(&h->p.stats->rejected[EXPO_REJ_BUSY], 1);
		req->response = MHD_create_response_from_buffer(sizeof(text) - 1, (void *)(uintptr_t)text,
								MHD_RESPMEM_PERSISTENT);
		if (req->response) {
			MHD_add_response_header(req->response, MHD_HTTP_HEADER_CONTENT_TYPE, CT_TEXT);
			MHD_add_response_header(req->response, MHD_HTTP_HEADER_RETRY_AFTER, "1");
		}
	} else {
		req->response = req->route->render(req);
	}
	snapring_release(h->p.ring, req->snap);
	req->snap = NULL;
	req->phase = PHASE_RENDERED;
	MHD_resume_connection(req->mc);
}

/* Suspends the connection and hands @req to @pool.  False (nothing
 * suspended) when the pool is full or stopping. */
static bool offload(struct jobs *pool, job_fn fn, struct req *req, enum phase phase)
{
	/* Any fixed key: where a client lands only decides which client it
	 * shares its turns with, should two collide. */
	static const uint64_t seed[2] = { 0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL };
	uint64_t client = req->have_client ? client_key_hash(&req->client, seed) : 0;

	req->phase = phase;
	req->queued_ns = mono_ns();
	MHD_suspend_connection(req->mc);
	if (jobs_submit_from(pool, client, fn, req) == 0)
		return true;
	MHD_resume_connection(req->mc);
	req->phase = PHASE_READY;
	return false;
}

static enum MHD_Result busy(struct req *req)
{
	req->status = MHD_HTTP_SERVICE_UNAVAILABLE;
	atomic_fetch_add(&req->h->p.stats->rejected[EXPO_REJ_BUSY], 1);
	return respond_retry(req->mc, req->status, "503 busy, try again in a second\n", 1);
}

/* Hands the rendering of @snap for @req to a worker: true when it went
 * (the connection is suspended), else *@ret is the 503. */
static bool render_on_worker(struct http *h, struct req *req, const struct snapshot *snap,
			     enum MHD_Result *ret)
{
	req->snap = snap;
	if (offload(req->route->scrape ? h->render_jobs : h->api_jobs, render_job, req, PHASE_RENDER))
		return true;
	req->snap = NULL;
	*ret = busy(req);
	return false;
}

/* On a worker with the snapshot, or the worker's refusal (busy). */
enum MHD_Result req_to_worker(struct req *req, const struct snapshot **snap, bool *suspended)
{
	enum MHD_Result ret;

	if (render_on_worker(req->h, req, *snap, &ret)) {
		*snap = NULL;
		*suspended = true;
		return MHD_YES;
	}
	return ret;
}

/* A refusal of what request_begins() saw: "STATUS text" as plain text,
 * or {"error": text} from the JSON API. */
static enum MHD_Result refuse(struct req *req)
{
	char text[160];

	if (req->ep == EXPO_EP_API)
		return req_respond_json_error(req->mc, req->status, req->refuse_text);
	str_printf(text, sizeof(text), "%u %s\n", req->status, req->refuse_text);
	return req_respond_text(req->mc, req->status, text);
}

/* Basic auth.  Returns true when the request may go on; otherwise a
 * response is queued, or the check runs on a worker (*@suspended). */
static bool authorized(struct req *req, enum MHD_Result *ret, bool *suspended)
{
	struct http *h = req->h;
	const char *authz;
	unsigned wait;

	if (req->phase == PHASE_AUTHED) {
		if (req->auth == AUTH_OK)
			return true;
		if (req->auth == AUTH_UNAVAILABLE) {
			*ret = busy(req);
			return false;
		}
		req->status = MHD_HTTP_UNAUTHORIZED;
		*ret = req_respond_text(req->mc, req->status, "401 unauthorized\n");
		return false;
	}
	authz = MHD_lookup_connection_value(req->mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	req->auth = auth_lookup(req->s->auth, authz, &req->attempt);
	if (req->auth == AUTH_OK)
		return true;
	if (req->auth != AUTH_VERIFY) {
		req->status = MHD_HTTP_UNAUTHORIZED;
		*ret = req_respond_text(req->mc, req->status, "401 unauthorized\n");
		return false;
	}
	/* Credentials not seen lately: bcrypt, if this client may have it. */
	wait = req->have_client ? throttle_begin(h->throttle, &req->client, mono_ns()) : 0;
	if (wait) {
		explicit_bzero(&req->attempt, sizeof(req->attempt));
		req->status = MHD_HTTP_TOO_MANY_REQUESTS;
		*ret = respond_retry(req->mc, req->status,
				     "429 too many failed logins from this address, try again later\n", wait);
		return false;
	}
	if (offload(h->auth_jobs, auth_job, req, PHASE_AUTH)) {
		*suspended = true;
		return false;
	}
	if (req->have_client)
		throttle_abandon(h->throttle, &req->client);
	explicit_bzero(&req->attempt, sizeof(req->attempt));
	*ret = busy(req);
	return false;
}

/* A route that reads a snapshot: @req->route's handler with the newest. */
static enum MHD_Result serve(struct req *req, bool *suspended)
{
	struct http *h = req->h;
	const struct snapshot *snap;
	enum MHD_Result ret;

	if (!req->route->serve) {
		req->status = MHD_HTTP_NOT_FOUND;
		return req_respond_text(req->mc, req->status, "404 not found\n");
	}
	snap = snapring_acquire(h->p.ring);
	if (!snap) {
		req->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		return req_respond_text(req->mc, req->status, "starting\n");
	}
	req->status = MHD_HTTP_OK;
	req->gzip = negotiate_gzip(MHD_lookup_connection_value(req->mc, MHD_HEADER_KIND,
							       MHD_HTTP_HEADER_ACCEPT_ENCODING));
	ret = req->route->serve(req, &snap, suspended);
	if (snap)
		snapring_release(h->p.ring, snap);
	return ret;
}

/* A request with a body (none of ours takes one) is refused at once, so
 * the body is never waited for. */
static bool has_body(struct MHD_Connection *conn)
{
	const char *len = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_LENGTH);

	return MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL ||
	       (len && strcmp(len, "0") != 0);
}

/* Everything decided before the endpoint: a response, or 0. */
struct framing {
	unsigned hosts, lengths;
	const char *length;
	bool lengths_differ, folded, bad_name;
};

/* A field name is a token (RFC 9110 section 5.1). */
static bool is_token(const char *s, size_t len)
{
	static const char others[] = "!#$%&'*+-.^_`|~";

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c && strchr(others, c))))
			return false;
	}
	return true;
}

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
				     size_t key_size, const char *value, size_t value_size)
{
	struct framing *f = cls;

	(void)kind;
	(void)value_size;
	/* obs-fold (a field continued on a line that starts with a space):
	 * libmicrohttpd 0.9.75 appends the continuation to the field's
	 * *name* in a copy of it made after the request's buffer, where
	 * every other field's value follows its name ("Content-Length:" then
	 * " 48" is a field "Content-Length48" with an empty value, and the
	 * body is then read as a second request).  A name that does not
	 * precede its own value, or that is not a token, is such a field. */
	if (value && (uintptr_t)value < (uintptr_t)key + key_size + 1)
		f->folded = true;
	if (!is_token(key, key_size))
		f->bad_name = true;
	if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
		f->hosts++;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		if (f->lengths++ && strcmp(f->length, value ? value : "") != 0)
			f->lengths_differ = true;
		f->length = value ? value : "";
	}
	return MHD_YES;
}

/* RFC 9112: a request with two Hosts, or HTTP/1.1 without one (3.2), two
 * different Content-Lengths (6.3), or a field folded over two lines (5.2)
 * is a 400, not a guess: a proxy in front may have read it otherwise. */
static const char *bad_framing(struct MHD_Connection *conn, const char *version)
{
	struct framing f = { 0 };

	MHD_get_connection_values_n(conn, MHD_HEADER_KIND, count_framing, &f);
	if (f.folded)
		return "400 a header field is continued on a second line (obsolete line folding is not accepted: RFC 9112 section 5.2)\n";
	if (f.bad_name)
		return "400 a header field's name is not a token\n";
	if (f.hosts > 1)
		return "400 more than one Host header\n";
	if (f.hosts == 0 && strcmp(version, MHD_HTTP_VERSION_1_1) == 0)
		return "400 an HTTP/1.1 request needs a Host header\n";
	if (f.lengths_differ)
		return "400 conflicting Content-Length headers\n";
	return NULL;
}

static unsigned screen(struct req *req, const char *method, const char *version, enum MHD_Result *ret)
{
	struct MHD_Connection *conn = req->mc;
	const char *framing = bad_framing(conn, version);

	if (framing) {
		*ret = req_respond_text(conn, MHD_HTTP_BAD_REQUEST, framing);
		return MHD_HTTP_BAD_REQUEST;
	}

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		*ret = req_respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "405 method not allowed\n");
		return MHD_HTTP_METHOD_NOT_ALLOWED;
	}
	if (has_body(conn)) {
		*ret = req_respond_text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "413 request bodies are not accepted\n");
		return MHD_HTTP_CONTENT_TOO_LARGE;
	}
	if (!client_verified(req->s, conn)) {
		*ret = req_respond_text(conn, MHD_HTTP_FORBIDDEN, "403 client certificate required\n");
		return MHD_HTTP_FORBIDDEN;
	}
	return 0;
}

enum MHD_Result request_handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **con_cls)
{
	struct http *h = cls;
	struct req *req = *con_cls;
	bool suspended = false;
	enum MHD_Result ret;

	(void)upload_data;
	if (!req)
		return req_respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	switch (req->phase) {
	case PHASE_HEAD: {
		unsigned refused;

		/* The head is in: no deadline while it is served, and the
		 * idle timeout of the settings in force. */
		conns_request_started(h->conns, req->conn);
		MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, req->s->timeout_s);
		req->route = endpoint_route(url);
		req->ep = req->route->ep;
		refused = screen(req, method, version, &ret);
		if (refused) {
			http_count(h, req->ep, refused);
			return ret;
		}
		/* Answer on the next call, once the whole request is in. */
		req->phase = PHASE_READY;
		return MHD_YES;
	}
	case PHASE_AUTH:
	case PHASE_RENDER:
		return MHD_YES; /* still on a worker */
	case PHASE_RENDERED:
		if (req->response) {
			ret = MHD_queue_response(conn, req->status, req->response);
		} else {
			req->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
			ret = req_respond_text(conn, req->status, "out of memory rendering the response\n");
		}
		http_count(h, req->ep, req->status);
		return ret;
	case PHASE_READY:
	case PHASE_AUTHED:
		break;
	}
	if (req->s->auth && !req->route->open && !authorized(req, &ret, &suspended)) {
		if (!suspended)
			http_count(h, req->ep, req->status);
		return suspended ? MHD_YES : ret;
	}
	/* What request_begins() found in the request line is answered
	 * only now: an unauthenticated client learns nothing of how a
	 * request is parsed (every path is 401 to it), and the JSON API
	 * answers in JSON. */
	if (req->refuse) {
		req->status = req->refuse;
		http_count(h, req->ep, req->status);
		return refuse(req);
	}
	if (req->route->open) {
		char text[160];

		req->status = endpoint_liveness(req, text, sizeof(text));
		http_count(h, req->ep, req->status);
		return req_respond_text(conn, req->status, text);
	}
	ret = serve(req, &suspended);
	if (!suspended)
		http_count(h, req->ep, req->status);
	return ret;
}

