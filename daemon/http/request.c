/* SPDX-License-Identifier: MIT */
/* request: one HTTP request, from its head to its response: refusals
 * decided before any work (method, body, query, client certificate),
 * basic authentication with the bcrypt check on an auth worker, and the
 * endpoints, /metrics from the render cache or rendered like the JSON
 * document on the render worker.  While a worker has it, the connection
 * is suspended; the worker resumes it as its last act. */
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
#include "http_internal.h"
#include "negotiate.h"
#include "page.h"
#include "util.h"
#include "version.h"

#define CT_TEXT "text/plain; charset=utf-8"
#define CT_JSON "application/json"
#define CT_HTML "text/html; charset=utf-8"

/* The live page's history and now: everything the API has, at core scope. */
static const struct api_query page_query = { .scope = API_SCOPE_CORE, .level = 2 };

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

struct route;

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

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned status, const char *text)
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
static enum MHD_Result respond_json_error(struct MHD_Connection *conn, unsigned status,
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
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
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

/* Compresses *@text (malloc'd, *@len bytes) in place when the client
 * takes gzip and it is worth it: the core-scope document the live page
 * fetches every interval is 643 KB at a thousand CPUs, 60 KB as gzip.
 * True when it did. */
static bool gzip_text(const struct req *req, char **text, size_t *len)
{
	char *gz;
	size_t gz_len;

	if (!req->gzip || *len < 1024 || body_gzip_once(*text, *len, &gz, &gz_len) < 0)
		return false;
	free(*text);
	*text = gz;
	*len = gz_len;
	return true;
}

static void add_text_headers(struct MHD_Response *resp, const char *content_type, bool zipped)
{
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	if (zipped)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
}

/* A response taking @text (malloc'd, @len bytes), compressed when worth
 * it (gzip_text).  NULL without memory. */
static struct MHD_Response *rendered_response(struct req *req, char *text, size_t len,
					      const char *content_type)
{
	struct MHD_Response *resp;
	bool zipped = gzip_text(req, &text, &len);

	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return NULL;
	}
	add_text_headers(resp, content_type, zipped);
	return resp;
}

static json_t *history_document(struct http *h, const struct snapshot *snap, double since,
				unsigned level)
{
	struct history_series *series = NULL;
	json_t *doc = history_series(h->p.history, since, snapshot_mono_s(snap), snap->timestamp,
				     &series) == 0
			      ? api_history(snap, series, level, h->p.hostname, topdownd_version)
			      : NULL;

	history_series_free(series);
	return doc;
}

static const struct page_link *page_links(size_t *n);

/* The live page of the held snapshot: rendered from the documents its
 * script fetches. */
static struct MHD_Response *page_response(struct http *h, struct req *req)
{
	struct MHD_Response *resp = NULL;
	json_t *now, *hist;
	struct buf b;

	now = api_document(req->snap, &page_query, NULL, h->p.hostname, topdownd_version);
	hist = history_document(h, req->snap, 0, 2);
	buf_init(&b);
	if (now && hist) {
		size_t n_links;
		const struct page_link *links = page_links(&n_links);

		page_live(&b, now, hist, req->heat[0] ? req->heat : NULL,
			  (double)history_length_ns(h->p.history) / 1e9, topdownd_revision, links,
			  n_links);
	}
	json_decref(now);
	json_decref(hist);
	if (now && hist && !buf_failed(&b)) {
		size_t len;
		char *text = buf_steal(&b, &len);

		resp = rendered_response(req, text, len, CT_HTML);
	}
	buf_free(&b);
	if (!resp)
		return NULL;
	MHD_add_response_header(resp, "Content-Security-Policy", page_csp());
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	return resp;
}

/* Renders the JSON document @arg (a struct req) asks for (apicache). */
static int api_text(void *arg, char **text, size_t *len, bool *gzipped)
{
	struct req *req = arg;
	struct http *h = req->h;
	json_t *doc;

	if (req->history)
		doc = history_document(h, req->snap, req->since, req->query.level);
	else
		doc = api_document(req->snap, &req->query, req->then, h->p.hostname, topdownd_version);
	*text = doc ? api_dump(doc, false) : NULL;
	json_decref(doc);
	if (!*text)
		return -ENOMEM;
	*len = strlen(*text);
	*gzipped = gzip_text(req, text, len);
	return 0;
}

static void unref_doc(void *cls)
{
	apidoc_unref(cls);
}

/* The JSON document of @req, shared with every request for the same one
 * of the same interval (one render however many ask). */
static struct MHD_Response *api_response(struct http *h, struct req *req)
{
	struct apicache_key k;
	const struct apidoc *d;
	struct MHD_Response *resp;

	apicache_key_init(&k, req->snap->published, req->s->gen, req->gzip);
	k.history = req->history;
	if (req->history) {
		k.level = req->query.level;
		k.since = req->since;
	} else {
		/* api_parse_query() zeroed its padding. */
		memcpy(&k.query, &req->query, sizeof(k.query));
	}
	if (apicache_get(h->apicache, &k, api_text, req, &d) < 0)
		return NULL;
	resp = MHD_create_response_from_buffer_with_free_callback_cls(d->len, d->text, unref_doc,
								      (void *)(uintptr_t)d);
	if (!resp) {
		apidoc_unref(d);
		return NULL;
	}
	add_text_headers(resp, CT_JSON, d->gzip);
	return resp;
}

/* The daemon's own figures for a /metrics render (render_prepare_fn). */
struct own_figures {
	struct req *req;
	struct expo_http *counts;
	struct procstat *proc;
};

static void gather_own(void *arg)
{
	struct own_figures *o = arg;

	http_counts(o->req->h, o->counts);
	procstat_read(o->proc);
	o->counts->auth = o->req->s->auth != NULL;
}

static void render_job(void *arg)
{
	struct req *req = arg;
	struct http *h = req->h;
	struct expo_http counts;
	struct procstat proc;

	if (req->ep == EXPO_EP_METRICS) {
		/* The newest interval when the job's turn comes (see serve()). */
		const struct snapshot *snap = snapring_acquire(h->p.ring);
		struct expo_options opt = {
			.granularity = req->gran,
			.ratios = req->s->ratios,
			.version = topdownd_version,
			.revision = topdownd_revision,
			.http = &counts,
			.proc = &proc,
		};

		struct own_figures own = { req, &counts, &proc };

		req->response = snap ? render_response(h->render, snap, req->variant, &opt,
						       req->s->gen, gather_own, &own)
				     : NULL;
		snapring_release(h->p.ring, snap);
	} else if (atomic_load(&h->stopping) || mono_ns() - req->queued_ns > API_DEADLINE_NS) {
		static const char text[] = "503 busy, try again in a second\n";

		req->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		atomic_fetch_add(&h->p.stats->rejected[EXPO_REJ_BUSY], 1);
		req->response = MHD_create_response_from_buffer(sizeof(text) - 1, (void *)(uintptr_t)text,
								MHD_RESPMEM_PERSISTENT);
		if (req->response) {
			MHD_add_response_header(req->response, MHD_HTTP_HEADER_CONTENT_TYPE,
						"text/plain; charset=utf-8");
			MHD_add_response_header(req->response, MHD_HTTP_HEADER_RETRY_AFTER, "1");
		}
	} else if (req->ep == EXPO_EP_INDEX) {
		req->response = page_response(h, req);
	} else {
		req->response = api_response(h, req);
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
	if (offload(req->ep == EXPO_EP_METRICS ? h->render_jobs : h->api_jobs, render_job, req, PHASE_RENDER))
		return true;
	req->snap = NULL;
	*ret = busy(req);
	return false;
}

/* A refusal of what request_begins() saw: "STATUS text" as plain text,
 * or {"error": text} from the JSON API. */
static enum MHD_Result refuse(struct req *req)
{
	char text[160];

	if (req->ep == EXPO_EP_API)
		return respond_json_error(req->mc, req->status, req->refuse_text);
	str_printf(text, sizeof(text), "%u %s\n", req->status, req->refuse_text);
	return respond_text(req->mc, req->status, text);
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
		*ret = respond_text(req->mc, req->status, "401 unauthorized\n");
		return false;
	}
	authz = MHD_lookup_connection_value(req->mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	req->auth = auth_lookup(req->s->auth, authz, &req->attempt);
	if (req->auth == AUTH_OK)
		return true;
	if (req->auth != AUTH_VERIFY) {
		req->status = MHD_HTTP_UNAUTHORIZED;
		*ret = respond_text(req->mc, req->status, "401 unauthorized\n");
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

/* ---- endpoints ---- */

struct query_args {
	const char *scope, *level, *cpu, *window, *since;
	bool history; /* since, level only */
	char error[256];
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct query_args *a = cls;
	const char **slot = NULL;

	(void)kind;
	if (a->error[0])
		return MHD_NO;
	if (strcmp(key, "level") == 0)
		slot = &a->level;
	else if (a->history && strcmp(key, "since") == 0)
		slot = &a->since;
	else if (!a->history && strcmp(key, "scope") == 0)
		slot = &a->scope;
	else if (!a->history && strcmp(key, "cpu") == 0)
		slot = &a->cpu;
	else if (!a->history && strcmp(key, "window") == 0)
		slot = &a->window;
	if (!slot) {
		str_printf(a->error, sizeof(a->error), "unknown parameter \"%.64s\": expected %s", key,
			   a->history ? "since or level" : "scope, level, cpu or window");
		return MHD_NO;
	}
	if (*slot) {
		str_printf(a->error, sizeof(a->error), "parameter \"%s\" given more than once", key);
		return MHD_NO;
	}
	if (!value) {
		str_printf(a->error, sizeof(a->error), "parameter \"%s\" needs a value", key);
		return MHD_NO;
	}
	*slot = value;
	return MHD_YES;
}

/* / takes one parameter, heat: the category of the cores' heatmap (the
 * page's form, without JavaScript). */
static enum MHD_Result collect_page_arg(void *cls, enum MHD_ValueKind kind, const char *key,
					const char *value)
{
	struct req *req = cls;
	char text[80];

	(void)kind;
	if (req->page_error[0])
		return MHD_NO;
	if (strcmp(key, "heat") != 0) {
		str_printable(text, sizeof(text), key);
		str_printf(req->page_error, sizeof(req->page_error),
			   "400 unknown parameter \"%.64s\": / takes heat=CATEGORY\n", text);
	} else if (req->heat[0]) {
		str_printf(req->page_error, sizeof(req->page_error),
			   "400 parameter \"heat\" given more than once\n");
	} else if (!value || !page_heat_known(value)) {
		str_printable(text, sizeof(text), value ? value : "");
		str_printf(req->page_error, sizeof(req->page_error),
			   "400 invalid heat \"%.64s\": expected a category of the bottleneck tree, "
			   "such as backend_bound or memory_bound\n", text);
	} else {
		str_printf(req->heat, sizeof(req->heat), "%s", value);
	}
	return req->page_error[0] ? MHD_NO : MHD_YES;
}

/* /metrics takes one parameter, granularity: the scrape of a second,
 * slower job (or a person) can ask for per-CPU detail that the default
 * configuration leaves out. */
struct metrics_args {
	const char *granularity;
	char error[256];
};

static enum MHD_Result collect_metrics_arg(void *cls, enum MHD_ValueKind kind, const char *key,
					   const char *value)
{
	struct metrics_args *a = cls;

	(void)kind;
	if (a->error[0])
		return MHD_NO;
	if (strcmp(key, "granularity") != 0) {
		char name[80];

		str_printable(name, sizeof(name), key);
		str_printf(a->error, sizeof(a->error),
			   "400 unknown parameter \"%.64s\": /metrics takes granularity=cpu|core|package|system\n",
			   name);
	}
	else if (a->granularity)
		str_printf(a->error, sizeof(a->error), "400 parameter \"granularity\" given more than once\n");
	else
		a->granularity = value ? value : "";
	return a->error[0] ? MHD_NO : MHD_YES;
}

static bool metrics_granularity(struct req *req, char *err, size_t errlen)
{
	struct metrics_args args = { 0 };

	req->gran = req->s->granularity;
	MHD_get_connection_values(req->mc, MHD_GET_ARGUMENT_KIND, collect_metrics_arg, &args);
	if (args.error[0]) {
		str_printf(err, errlen, "%s", args.error);
		return false;
	}
	if (args.granularity && config_granularity_parse(args.granularity, &req->gran) < 0) {
		char value[80];

		str_printable(value, sizeof(value), args.granularity);
		str_printf(err, errlen, "400 invalid granularity \"%.64s\": expected cpu, core, package or system\n",
			   value);
		return false;
	}
	return true;
}

/* ---- the endpoints ---- */

/* A route's handler, called with the newest snapshot in *@snap: it answers
 * (*@ret), or hands the request to a worker (*@suspended; the worker
 * then holds the snapshot, and *@snap is NULL). */
typedef enum MHD_Result (*serve_fn)(struct req *req, const struct snapshot **snap,
				    bool *suspended);

/* On a worker with the snapshot, or the worker's refusal (busy). */
static enum MHD_Result to_worker(struct req *req, const struct snapshot **snap, bool *suspended)
{
	enum MHD_Result ret;

	if (render_on_worker(req->h, req, *snap, &ret)) {
		*snap = NULL;
		*suspended = true;
		return MHD_YES;
	}
	return ret;
}

/* /metrics: from the cache, or rendered on the render worker. */
static enum MHD_Result serve_metrics(struct req *req, const struct snapshot **snap,
				     bool *suspended)
{
	struct http *h = req->h;
	struct MHD_Connection *conn = req->mc;
	enum MHD_Result ret;
	char err[256];

	if (!metrics_granularity(req, err, sizeof(err))) {
		req->status = MHD_HTTP_BAD_REQUEST;
		return respond_text(conn, req->status, err);
	}
	req->variant = render_variant_of(
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	if (render_queue_cached(h->render, conn, req->variant, req->gran, (*snap)->published,
				req->s->gen, &ret))
		return ret;
	/* Requests waiting for the render worker hold no snapshot: a queue
	 * of them would hold every buffer of the ring (and the collector
	 * would write intervals nobody sees).  The worker takes the newest. */
	snapring_release(h->p.ring, *snap);
	*snap = NULL;
	return to_worker(req, snap, suspended);
}

/* /api/v1/topdown/history */
static enum MHD_Result serve_history(struct req *req, const struct snapshot **snap,
				     bool *suspended)
{
	struct query_args args = { .history = true };
	char err[256];

	req->history = true;
	MHD_get_connection_values(req->mc, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	if (args.error[0] || api_parse_history_query(args.since, args.level, &req->since,
						     &req->query.level, err, sizeof(err)) < 0) {
		req->status = MHD_HTTP_BAD_REQUEST;
		return respond_json_error(req->mc, req->status, args.error[0] ? args.error : err);
	}
	return to_worker(req, snap, suspended);
}

/* /api/v1/topdown */
static enum MHD_Result serve_api(struct req *req, const struct snapshot **snap, bool *suspended)
{
	struct http *h = req->h;
	struct query_args args = { .history = false };
	char err[256];

	MHD_get_connection_values(req->mc, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	if (args.error[0] ||
	    api_parse_query(args.scope, args.level, args.cpu, args.window, &req->query, err,
			    sizeof(err)) < 0 ||
	    api_check_query(*snap, &req->query, history_length_ns(h->p.history), err,
			    sizeof(err)) < 0) {
		req->status = MHD_HTTP_BAD_REQUEST;
		return respond_json_error(req->mc, req->status, args.error[0] ? args.error : err);
	}
	if (req->query.window_ns) {
		req->then = malloc(sizeof(*req->then));
		if (!req->then ||
		    history_at(h->p.history, snapshot_mono_s(*snap) - (double)req->query.window_ns / 1e9,
			       req->then) < 0) {
			free(req->then);
			req->then = NULL;
			req->status = MHD_HTTP_SERVICE_UNAVAILABLE;
			return respond_json_error(req->mc, req->status, "no history yet");
		}
	}
	return to_worker(req, snap, suspended);
}

/* /: the live page. */
static enum MHD_Result serve_index(struct req *req, const struct snapshot **snap, bool *suspended)
{
	MHD_get_connection_values(req->mc, MHD_GET_ARGUMENT_KIND, collect_page_arg, req);
	if (req->page_error[0]) {
		req->status = MHD_HTTP_BAD_REQUEST;
		return respond_text(req->mc, req->status, req->page_error);
	}
	return to_worker(req, snap, suspended);
}

/* /-/ready */
static enum MHD_Result serve_ready(struct req *req, const struct snapshot **snap, bool *suspended)
{
	const struct snapshot *s = *snap;
	/* Collection that stopped (a read stuck in the kernel, a hung
	 * thread) is not ready either: after five intervals, and at least
	 * 5 s, without one. */
	double late = s->collected_ns ? (double)(mono_ns() - s->collected_ns) / 1e9 : 0;
	double limit = 5 * s->interval_s > 5 ? 5 * s->interval_s : 5;
	char text[160];

	(void)suspended;
	req->status = s->seq > 0 && late <= limit ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
	if (s->seq == 0)
		str_printf(text, sizeof(text), "not ready: no interval collected yet\n");
	else if (late > limit)
		str_printf(text, sizeof(text),
			   "not ready: no interval collected for %.1f s (the interval is %g s)\n", late,
			   s->interval_s);
	else
		str_printf(text, sizeof(text), "ready\n");
	return respond_text(req->mc, req->status, text);
}

/* The endpoints: the one list the server routes by and counts by
 * (topdown_http_requests_total{endpoint}), and whose links the live page's
 * footer shows (61-manpages.t checks topdownd(8) describes each of those).
 * Every one answers GET and HEAD (screen()). */
struct route {
	const char *path;
	const char *link;      /* the live page's link to it, relative */
	enum expo_endpoint ep; /* its label in the accounting */
	bool open;             /* answered without authentication (the
				* liveness probe: liveness()) */
	serve_fn serve;        /* NULL for an open route */
};

static const struct route routes[] = {
	{ "/metrics", "metrics", EXPO_EP_METRICS, false, serve_metrics },
	{ "/api/v1/topdown", "api/v1/topdown?scope=core", EXPO_EP_API, false, serve_api },
	{ "/api/v1/topdown/history", "api/v1/topdown/history", EXPO_EP_API, false, serve_history },
	{ "/", ".", EXPO_EP_INDEX, false, serve_index },
	{ "/-/healthy", "-/healthy", EXPO_EP_HEALTHY, true, NULL },
	{ "/-/ready", "-/ready", EXPO_EP_READY, false, serve_ready },
};

/* Anything else: 404, counted as "other". */
static const struct route not_found = { NULL, NULL, EXPO_EP_OTHER, false, NULL };

static const struct route *route_of(const char *url)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(url, routes[i].path) == 0)
			return &routes[i];
	return &not_found;
}

/* The live page's footer: a link to every route, built once (the page
 * renders on any HTTP thread). */
static struct page_link footer_links[sizeof(routes) / sizeof(routes[0])];
static pthread_once_t footer_once = PTHREAD_ONCE_INIT;

static void footer_build(void)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		footer_links[i] = (struct page_link){ routes[i].link, routes[i].path };
}

static const struct page_link *page_links(size_t *n)
{
	pthread_once(&footer_once, footer_build);
	*n = sizeof(footer_links) / sizeof(footer_links[0]);
	return footer_links;
}

/* A route that reads a snapshot: @req->route's handler with the newest. */
static enum MHD_Result serve(struct req *req, bool *suspended)
{
	struct http *h = req->h;
	const struct snapshot *snap;
	enum MHD_Result ret;

	if (!req->route->serve) {
		req->status = MHD_HTTP_NOT_FOUND;
		return respond_text(req->mc, req->status, "404 not found\n");
	}
	snap = snapring_acquire(h->p.ring);
	if (!snap) {
		req->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		return respond_text(req->mc, req->status, "starting\n");
	}
	req->status = MHD_HTTP_OK;
	req->gzip = negotiate_gzip(MHD_lookup_connection_value(req->mc, MHD_HEADER_KIND,
							       MHD_HTTP_HEADER_ACCEPT_ENCODING));
	ret = req->route->serve(req, &snap, suspended);
	if (snap)
		snapring_release(h->p.ring, snap);
	return ret;
}

/* /-/healthy, the liveness probe: "OK", unless collection stopped (a read
 * stuck in the kernel, a wedged main loop) for ten intervals and at least
 * [http] unhealthy_after since the last one: 503, so that Kubernetes
 * restarts the pod as systemd's WatchdogSec= restarts the service.  Longer
 * than /-/ready's limit: a slow interval takes a pod out of the Service
 * first, and only a stall restarts it.  Before the first interval
 * (start-up) it is alive. */
static unsigned liveness(const struct req *req, char *text, size_t len)
{
	const struct snapshot *s = snapring_acquire(req->h->p.ring);
	double late, limit;
	unsigned status = MHD_HTTP_OK;

	str_printf(text, len, "OK\n");
	if (!s)
		return status;
	late = s->collected_ns ? (double)(mono_ns() - s->collected_ns) / 1e9 : 0;
	limit = 10 * s->interval_s > req->s->unhealthy_after_s ? 10 * s->interval_s : req->s->unhealthy_after_s;
	if (s->seq > 0 && late > limit) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		str_printf(text, len, "unhealthy: no interval collected for %.1f s (the interval is %g s, "
			   "the limit %g s)\n", late, s->interval_s, limit);
	}
	snapring_release(req->h->p.ring, s);
	return status;
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
		*ret = respond_text(conn, MHD_HTTP_BAD_REQUEST, framing);
		return MHD_HTTP_BAD_REQUEST;
	}

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		*ret = respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "405 method not allowed\n");
		return MHD_HTTP_METHOD_NOT_ALLOWED;
	}
	if (has_body(conn)) {
		*ret = respond_text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "413 request bodies are not accepted\n");
		return MHD_HTTP_CONTENT_TOO_LARGE;
	}
	if (!client_verified(req->s, conn)) {
		*ret = respond_text(conn, MHD_HTTP_FORBIDDEN, "403 client certificate required\n");
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
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
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
		req->route = route_of(url);
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
			ret = respond_text(conn, req->status, "out of memory rendering the response\n");
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

		req->status = liveness(req, text, sizeof(text));
		http_count(h, req->ep, req->status);
		return respond_text(conn, req->status, text);
	}
	ret = serve(req, &suspended);
	if (!suspended)
		http_count(h, req->ep, req->status);
	return ret;
}

