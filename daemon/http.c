/* http: libmicrohttpd daemons, routing, the /metrics render cache. */
#include "http.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "api.h"
#include "expo.h"
#include "log.h"
#include "negotiate.h"
#include "util.h"
#include "version.h"

/* Headers and request line must fit; MHD answers 431/414 beyond. */
#define CONNECTION_MEMORY (32 * 1024)
#define GZIP_LEVEL 1

#define CT_TEXT "text/plain; charset=utf-8"
#define CT_JSON "application/json"
#define CT_HTML "text/html; charset=utf-8"

enum variant {
	VARIANT_TEXT,
	VARIANT_TEXT_GZIP,
	VARIANT_OM,
	VARIANT_OM_GZIP,
	VARIANT_COUNT,
};

/* A rendered body shared by every response that serves it; freed when
 * the cache and the last connection sending it let go. */
struct rendered {
	atomic_int refs;
	size_t len;
	char *data;
};

struct cache_entry {
	uint64_t seq; /* snapshot it was rendered from; 0 = none */
	struct rendered *body;
	struct MHD_Response *response;
};

struct http {
	struct http_params p;
	struct MHD_Daemon *daemons[CONFIG_LISTEN_MAX * 4];
	size_t n_daemons;
	bool quiesced;
	/* Guards the cache entries only: a few pointer swaps, no rendering. */
	pthread_mutex_t cache_lock;
	/* One renderer per variant; later scrapers of the same interval
	 * wait for it and reuse its result. */
	pthread_mutex_t render_lock[VARIANT_COUNT];
	struct cache_entry cache[VARIANT_COUNT];
	/* Size of the last render per variant: the next one is allocated at
	 * once instead of grown through a chain of reallocs. */
	size_t last_len[VARIANT_COUNT];
};

static struct log_ratelimit mhd_rl = LOG_RATELIMIT_INIT(60 * UINT64_C(1000000000), 10);

static void rendered_unref(void *cls)
{
	struct rendered *r = cls;

	if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
		free(r->data);
		free(r);
	}
}

static struct rendered *rendered_new(char *data, size_t len)
{
	struct rendered *r = malloc(sizeof(*r));

	if (!r) {
		free(data);
		return NULL;
	}
	atomic_init(&r->refs, 1);
	r->data = data;
	r->len = len;
	return r;
}

/* ---- accounting ---- */

static void count_reject(struct http *h, unsigned status)
{
	int reason = -1;

	switch (status) {
	case MHD_HTTP_UNAUTHORIZED:
	case MHD_HTTP_FORBIDDEN:
		reason = EXPO_REJ_UNAUTHORIZED;
		break;
	case MHD_HTTP_METHOD_NOT_ALLOWED:
	case MHD_HTTP_NOT_IMPLEMENTED:
		reason = EXPO_REJ_METHOD;
		break;
	case MHD_HTTP_NOT_FOUND:
		reason = EXPO_REJ_NOT_FOUND;
		break;
	case MHD_HTTP_CONTENT_TOO_LARGE:
	case MHD_HTTP_URI_TOO_LONG:
	case MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE:
		reason = EXPO_REJ_TOO_LARGE;
		break;
	default:
		if (status >= 400 && status != MHD_HTTP_SERVICE_UNAVAILABLE &&
		    status != MHD_HTTP_INTERNAL_SERVER_ERROR)
			reason = EXPO_REJ_BAD_REQUEST;
	}
	if (reason >= 0)
		atomic_fetch_add(&h->p.stats->rejected[reason], 1);
}

static void count(struct http *h, enum expo_endpoint ep, unsigned status)
{
	atomic_fetch_add(&h->p.stats->requests[ep][expo_http_code_index(status)], 1);
	count_reject(h, status);
}

/* With tls_client_ca, refuse the handshake itself to a peer without a
 * certificate the CA signed: no request is ever read from it. */
static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			      enum MHD_ConnectionNotificationCode code)
{
	struct http *h = cls;
	const union MHD_ConnectionInfo *info;

	(void)socket_context;
	if (code != MHD_CONNECTION_NOTIFY_STARTED || !h->p.tls || !h->p.tls->ca)
		return;
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (info && info->tls_session) {
		gnutls_certificate_server_set_request(info->tls_session, GNUTLS_CERT_REQUIRE);
		gnutls_session_set_verify_cert(info->tls_session, NULL, 0);
	}
}

/* ---- small responses ---- */

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status,
			       const char *content_type, const char *body, size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_UNAUTHORIZED)
		ret = MHD_queue_basic_auth_fail_response(conn, AUTH_REALM, resp);
	else
		ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
	return respond(conn, status, CT_TEXT, text, strlen(text));
}

static enum MHD_Result respond_json_error(struct MHD_Connection *conn, unsigned status,
					  const char *message)
{
	json_t *doc = json_pack("{s:s}", "error", message);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	enum MHD_Result ret;

	json_decref(doc);
	if (!text)
		return MHD_NO;
	ret = respond(conn, status, CT_JSON, text, strlen(text));
	free(text);
	return ret;
}

/* ---- /metrics ---- */

static int gzip_body(const char *in, size_t len, char **out, size_t *out_len)
{
	z_stream zs = { 0 };
	uLong bound;
	char *buf;

	/* windowBits 15 + 16: a gzip wrapper rather than zlib's. */
	if (deflateInit2(&zs, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)len);
	buf = malloc(bound);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)buf;
	zs.avail_out = (uInt)bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(buf);
		return -EIO;
	}
	*out_len = zs.total_out;
	deflateEnd(&zs);
	/* deflateBound is about the input's size; the output is a tenth. */
	*out = realloc(buf, *out_len ? *out_len : 1);
	if (!*out)
		*out = buf;
	return 0;
}

/* Takes a reference to the cached body of @v if it is from @seq. */
static struct rendered *cached_body(struct http *h, enum variant v, uint64_t seq)
{
	struct rendered *r = NULL;

	pthread_mutex_lock(&h->cache_lock);
	if (h->cache[v].seq == seq && h->cache[v].body) {
		r = h->cache[v].body;
		atomic_fetch_add(&r->refs, 1);
	}
	pthread_mutex_unlock(&h->cache_lock);
	return r;
}

/* Queues the cached response of @v if it is from @seq.  Under the lock:
 * the cache's reference keeps the response alive until MHD holds its own. */
static bool queue_cached(struct http *h, struct MHD_Connection *conn, enum variant v,
			 uint64_t seq, enum MHD_Result *ret)
{
	bool hit = false;

	pthread_mutex_lock(&h->cache_lock);
	if (h->cache[v].seq == seq && h->cache[v].response) {
		*ret = MHD_queue_response(conn, MHD_HTTP_OK, h->cache[v].response);
		hit = true;
	}
	pthread_mutex_unlock(&h->cache_lock);
	return hit;
}

static void http_counts(const struct http *h, struct expo_http *out)
{
	const struct http_stats *s = h->p.stats;

	for (int e = 0; e < EXPO_EP_COUNT; e++)
		for (int k = 0; k < EXPO_CODE_COUNT; k++)
			out->requests[e][k] = atomic_load(&s->requests[e][k]);
	for (int k = 0; k < EXPO_REJ_COUNT; k++)
		out->rejected[k] = atomic_load(&s->rejected[k]);
	out->password_checks = atomic_load(&s->password_checks);
	out->auth = h->p.auth != NULL;
}

static struct rendered *render(struct http *h, const struct snapshot *snap, enum variant v)
{
	struct expo_http counts;
	struct expo_options opt = {
		.granularity = h->p.granularity,
		.ratios = h->p.ratios,
		.version = topdownd_version,
		.revision = topdownd_revision,
		.http = &counts,
	};
	bool om = v == VARIANT_OM || v == VARIANT_OM_GZIP;
	struct rendered *plain;
	struct buf b;
	char *data;
	size_t len;

	if (v == VARIANT_TEXT || v == VARIANT_OM) {
		http_counts(h, &counts);
		buf_init(&b);
		if (h->last_len[v])
			buf_reserve(&b, h->last_len[v] + h->last_len[v] / 16);
		if (expo_render(snap, &opt, om ? EXPO_OPENMETRICS : EXPO_TEXT, &b) < 0) {
			buf_free(&b);
			return NULL;
		}
		data = buf_steal(&b, &len);
		h->last_len[v] = len;
		return rendered_new(data, len);
	}
	/* The gzip variant compresses the plain one of the same interval,
	 * rendering it first if needed: both always carry the same bytes. */
	plain = cached_body(h, om ? VARIANT_OM : VARIANT_TEXT, snap->seq);
	if (!plain) {
		plain = render(h, snap, om ? VARIANT_OM : VARIANT_TEXT);
		if (!plain)
			return NULL;
	}
	if (gzip_body(plain->data, plain->len, &data, &len) < 0) {
		rendered_unref(plain);
		return NULL;
	}
	rendered_unref(plain);
	return rendered_new(data, len);
}

static enum MHD_Result serve_metrics(struct http *h, struct MHD_Connection *conn,
				     const struct snapshot *snap, unsigned *status)
{
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	const char *enc = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_ACCEPT_ENCODING);
	bool om = negotiate_format(accept) == NEGOTIATE_OPENMETRICS;
	bool gz = negotiate_gzip(enc);
	enum variant v = om ? (gz ? VARIANT_OM_GZIP : VARIANT_OM) : (gz ? VARIANT_TEXT_GZIP : VARIANT_TEXT);
	struct MHD_Response *resp, *old_resp = NULL;
	struct rendered *body, *old_body = NULL;
	enum MHD_Result ret = MHD_NO;

	*status = MHD_HTTP_OK;
	if (queue_cached(h, conn, v, snap->seq, &ret))
		return ret;
	pthread_mutex_lock(&h->render_lock[v]);
	if (queue_cached(h, conn, v, snap->seq, &ret))
		goto out;
	body = render(h, snap, v);
	if (!body) {
		*status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		ret = respond_text(conn, *status, "out of memory rendering metrics\n");
		goto out;
	}
	resp = MHD_create_response_from_buffer_with_free_callback_cls(body->len, body->data,
								     rendered_unref, body);
	if (!resp) {
		rendered_unref(body);
		goto out;
	}
	/* The response holds the creation reference; the cache takes one. */
	atomic_fetch_add(&body->refs, 1);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				om ? EXPO_CONTENT_TYPE_OPENMETRICS : EXPO_CONTENT_TYPE_TEXT);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	if (gz)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	pthread_mutex_lock(&h->cache_lock);
	old_resp = h->cache[v].response;
	old_body = h->cache[v].body;
	h->cache[v] = (struct cache_entry){ snap->seq, body, resp };
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	pthread_mutex_unlock(&h->cache_lock);
	if (old_resp)
		MHD_destroy_response(old_resp);
	rendered_unref(old_body);
out:
	pthread_mutex_unlock(&h->render_lock[v]);
	return ret;
}

/* ---- /api/v1/topdown ---- */

struct query_args {
	const char *scope, *level, *cpu;
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
	if (strcmp(key, "scope") == 0)
		slot = &a->scope;
	else if (strcmp(key, "level") == 0)
		slot = &a->level;
	else if (strcmp(key, "cpu") == 0)
		slot = &a->cpu;
	if (!slot) {
		str_printf(a->error, sizeof(a->error),
			   "unknown parameter \"%.64s\": expected scope, level or cpu", key);
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

static enum MHD_Result serve_api(struct http *h, struct MHD_Connection *conn,
				 const struct snapshot *snap, unsigned *status)
{
	struct query_args args = { 0 };
	struct api_query q;
	char err[256], *text;
	enum MHD_Result ret;
	json_t *doc;

	*status = MHD_HTTP_BAD_REQUEST;
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	if (args.error[0])
		return respond_json_error(conn, MHD_HTTP_BAD_REQUEST, args.error);
	if (api_parse_query(args.scope, args.level, args.cpu, &q, err, sizeof(err)) < 0)
		return respond_json_error(conn, MHD_HTTP_BAD_REQUEST, err);
	doc = api_document(snap, &q, h->p.hostname, topdownd_version);
	text = doc ? api_dump(doc, false) : NULL;
	json_decref(doc);
	*status = text ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR;
	if (!text)
		return respond_json_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	ret = respond(conn, MHD_HTTP_OK, CT_JSON, text, strlen(text));
	free(text);
	return ret;
}

/* ---- / ---- */

static void put_html(struct buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			buf_puts(b, "&lt;");
			break;
		case '>':
			buf_puts(b, "&gt;");
			break;
		case '&':
			buf_puts(b, "&amp;");
			break;
		case '"':
			buf_puts(b, "&quot;");
			break;
		default:
			buf_putc(b, *s);
		}
	}
}

static void row(struct buf *b, const char *name, const char *value)
{
	buf_puts(b, "<tr><th>");
	buf_puts(b, name);
	buf_puts(b, "</th><td>");
	put_html(b, value);
	buf_puts(b, "</td></tr>\n");
}

static enum MHD_Result serve_landing(struct http *h, struct MHD_Connection *conn,
				     const struct snapshot *snap)
{
	unsigned total = snap->n_cpus;
	char text[600];
	enum MHD_Result ret;
	struct buf b;

	buf_init(&b);
	buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		     "<title>topdownd on ");
	put_html(&b, h->p.hostname);
	buf_puts(&b, "</title>\n<style>body{font-family:sans-serif;max-width:48em;margin:2em auto;"
		     "padding:0 1em}th,td{text-align:left;padding:.2em 1.5em .2em 0;vertical-align:top}"
		     "code{background:#eee}</style></head>\n<body>\n<h1>topdownd</h1>\n"
		     "<p>Intel TopDown (TMA) bottleneck metrics of <b>");
	put_html(&b, h->p.hostname);
	buf_puts(&b, "</b>.</p>\n<table>\n");
	str_printf(text, sizeof(text), "%s (revision %s)", topdownd_version, topdownd_revision);
	row(&b, "Version", text);
	if (!snap->n_pmus)
		row(&b, "PMU", "none");
	for (unsigned i = 0; i < snap->n_pmus; i++) {
		const struct snap_pmu *p = &snap->pmus[i];

		row(&b, "PMU", p->name);
		row(&b, "pmu_name", p->pmu_name[0] ? p->pmu_name : "none");
		row(&b, "Uarch", p->uarch[0] ? p->uarch : "none");
		str_printf(text, sizeof(text), "%u", p->level);
		row(&b, "Level", text);
		row(&b, "Model", p->model[0] ? p->model : "none");
		if (p->reason[0])
			row(&b, "Note", p->reason);
	}
	str_printf(text, sizeof(text), "%u of %u (%u failed, %u offline, %u unsupported)",
		   snap->cpus_by_state[CPU_STATE_MONITORED], total,
		   snap->cpus_by_state[CPU_STATE_FAILED], snap->cpus_by_state[CPU_STATE_OFFLINE],
		   snap->cpus_by_state[CPU_STATE_UNSUPPORTED]);
	row(&b, "CPUs monitored", text);
	str_printf(text, sizeof(text), "%g s", snap->interval_s);
	row(&b, "Interval", text);
	if (snap->reason[0])
		row(&b, "Note", snap->reason);
	buf_puts(&b, "</table>\n<ul>\n"
		     "<li><a href=\"metrics\">/metrics</a>: Prometheus text and OpenMetrics</li>\n"
		     "<li><a href=\"api/v1/topdown\">/api/v1/topdown</a>: JSON "
		     "(<a href=\"api/v1/topdown?scope=cpu\">?scope=cpu</a>, <code>level=1|2</code>, "
		     "<code>cpu=0-3</code>)</li>\n"
		     "<li><a href=\"-/healthy\">/-/healthy</a> and <a href=\"-/ready\">/-/ready</a></li>\n"
		     "</ul>\n</body></html>\n");
	if (buf_failed(&b)) {
		buf_free(&b);
		return MHD_NO;
	}
	ret = respond(conn, MHD_HTTP_OK, CT_HTML, b.data, b.len);
	buf_free(&b);
	return ret;
}

/* ---- routing ---- */

static enum expo_endpoint endpoint_of(const char *url)
{
	if (strcmp(url, "/metrics") == 0)
		return EXPO_EP_METRICS;
	if (strcmp(url, "/api/v1/topdown") == 0)
		return EXPO_EP_API;
	if (strcmp(url, "/") == 0)
		return EXPO_EP_INDEX;
	if (strcmp(url, "/-/healthy") == 0)
		return EXPO_EP_HEALTHY;
	if (strcmp(url, "/-/ready") == 0)
		return EXPO_EP_READY;
	return EXPO_EP_OTHER;
}

struct query_size {
	size_t n, bytes;
};

static enum MHD_Result measure_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct query_size *q = cls;

	(void)kind;
	q->n++;
	q->bytes += strlen(key) + (value ? strlen(value) + 1 : 0) + 1;
	return MHD_YES;
}

/* With tls_client_ca the handshake already required a certificate the CA
 * signed; this check keeps that true whatever the TLS library did. */
static bool client_verified(const struct http *h, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info;
	unsigned status = 0;

	if (!h->p.tls || !h->p.tls->ca)
		return true;
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!info || !info->tls_session)
		return false;
	if (gnutls_certificate_verify_peers2(info->tls_session, &status) < 0 || status != 0)
		return false;
	return gnutls_certificate_get_peers(info->tls_session, NULL) != NULL;
}

/* Access control and limits shared by every endpoint; 0 when the request
 * may proceed, else the status of the refusal that was queued. */
static unsigned screen(struct http *h, struct MHD_Connection *conn, enum expo_endpoint ep,
		       enum MHD_Result *ret)
{
	struct query_size q = { 0, 0 };

	if (!client_verified(h, conn)) {
		*ret = respond_text(conn, MHD_HTTP_FORBIDDEN, "403 client certificate required\n");
		return MHD_HTTP_FORBIDDEN;
	}
	if (h->p.auth && ep != EXPO_EP_HEALTHY) {
		const char *authz = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
								MHD_HTTP_HEADER_AUTHORIZATION);
		bool bcrypt = false;
		enum auth_result a = auth_check(h->p.auth, authz, &bcrypt);

		if (bcrypt)
			atomic_fetch_add(&h->p.stats->password_checks, 1);
		if (a != AUTH_OK) {
			*ret = respond_text(conn, MHD_HTTP_UNAUTHORIZED, "401 unauthorized\n");
			return MHD_HTTP_UNAUTHORIZED;
		}
	}
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, measure_arg, &q);
	if (q.bytes > HTTP_QUERY_MAX) {
		*ret = respond_text(conn, MHD_HTTP_URI_TOO_LONG, "414 query string too long\n");
		return MHD_HTTP_URI_TOO_LONG;
	}
	if (q.n > HTTP_QUERY_PARAMS_MAX) {
		*ret = respond_text(conn, MHD_HTTP_BAD_REQUEST, "400 too many query parameters\n");
		return MHD_HTTP_BAD_REQUEST;
	}
	return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **con_cls)
{
	struct http *h = cls;
	enum expo_endpoint ep = endpoint_of(url);
	const struct snapshot *snap;
	enum MHD_Result ret;
	unsigned status;

	(void)version;
	(void)upload_data;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		count(h, ep, MHD_HTTP_METHOD_NOT_ALLOWED);
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "405 method not allowed\n");
	}
	/* Answer once the whole request is in: a response queued earlier
	 * makes libmicrohttpd close the connection instead of keeping it. */
	if (!*con_cls) {
		*con_cls = h;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	status = screen(h, conn, ep, &ret);
	if (status) {
		count(h, ep, status);
		return ret;
	}
	if (ep == EXPO_EP_HEALTHY) {
		count(h, ep, MHD_HTTP_OK);
		return respond_text(conn, MHD_HTTP_OK, "OK\n");
	}
	snap = snapring_acquire(h->p.ring);
	if (!snap) {
		count(h, ep, MHD_HTTP_SERVICE_UNAVAILABLE);
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "starting\n");
	}
	switch (ep) {
	case EXPO_EP_METRICS:
		ret = serve_metrics(h, conn, snap, &status);
		break;
	case EXPO_EP_API:
		ret = serve_api(h, conn, snap, &status);
		break;
	case EXPO_EP_INDEX:
		status = MHD_HTTP_OK;
		ret = serve_landing(h, conn, snap);
		break;
	case EXPO_EP_READY:
		status = snap->seq > 0 ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
		ret = status == MHD_HTTP_OK ? respond_text(conn, status, "ready\n")
					   : respond_text(conn, status, "not ready: no interval collected yet\n");
		break;
	default:
		status = MHD_HTTP_NOT_FOUND;
		ret = respond_text(conn, status, "404 not found\n");
		break;
	}
	snapring_release(h->p.ring, snap);
	count(h, ep, status);
	return ret;
}

/* libmicrohttpd answers malformed and oversized requests (400, 414, 431,
 * 505) itself, without calling the handler; it logs each of them with
 * this text, which is where they are counted. */
#define MHD_ERROR_RESPONSE "Error processing request (HTTP response code is "

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http *h = cls;
	const char *code;
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	code = strstr(msg, MHD_ERROR_RESPONSE);
	if (code && h) {
		unsigned status = (unsigned)strtoul(code + strlen(MHD_ERROR_RESPONSE), NULL, 10);

		count(h, EXPO_EP_OTHER, status);
		/* Counted in topdown_http_rejected_total; a client can cause
		 * any number of these. */
		log_debug("HTTP: %s", msg);
		return;
	}
	log_ratelimited(&mhd_rl, LOG_LEVEL_WARNING, 0, "HTTP: %s", msg);
}

/* One host (a slowloris, a runaway script) may hold at most a quarter of
 * the connections, so it cannot lock Prometheus out. */
static unsigned per_ip_limit(unsigned max_connections)
{
	return max_connections >= 8 ? max_connections / 4 : 2;
}

/* libmicrohttpd's threads inherit the nice value of the thread that
 * starts them: started from this one, they yield a busy core to the
 * collection (which stays at the daemon's priority) rather than delay it. */
#define HTTP_NICE 5

struct starter {
	struct http *h;
	int r;
};

static void *start_daemons(void *arg)
{
	struct starter *st = arg;
	struct http *h = st->h;
	const struct http_params *params = &h->p;

	if (setpriority(PRIO_PROCESS, (id_t)gettid(), HTTP_NICE) < 0)
		log_debug_errno(-errno, "Failed to lower the HTTP threads' priority: %m");
	st->r = 0;
	for (size_t i = 0; i < params->n_fds; i++) {
		struct MHD_OptionItem tls_options[5] = { { MHD_OPTION_END, 0, NULL } };
		unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC;
		struct MHD_Daemon *d;

		if (params->tls) {
			const struct tls_material *t = params->tls;
			int n = 0;

			flags |= MHD_USE_TLS;
			tls_options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, t->cert };
			tls_options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, t->key };
			tls_options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
								    (void *)(uintptr_t)TLS_PRIORITIES };
			if (t->ca)
				tls_options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0, t->ca };
			tls_options[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
		}
		d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h,
				     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
				     MHD_OPTION_LISTEN_SOCKET, params->fds[i],
				     MHD_OPTION_NOTIFY_CONNECTION, notify_connection, h,
				     MHD_OPTION_ARRAY, tls_options,
				     MHD_OPTION_CONNECTION_LIMIT, params->max_connections,
				     MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit(params->max_connections),
				     MHD_OPTION_CONNECTION_TIMEOUT, params->timeout_s,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
				     MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
				     MHD_OPTION_END);
		if (!d) {
			st->r = -EIO;
			break;
		}
		h->daemons[h->n_daemons++] = d;
	}
	return NULL;
}

int http_new(const struct http_params *params, struct http **ret)
{
	struct http *h = calloc(1, sizeof(*h));
	struct starter st = { h, 0 };
	pthread_t thread;
	int r;

	if (!h)
		return -ENOMEM;
	h->p = *params;
	pthread_mutex_init(&h->cache_lock, NULL);
	for (int v = 0; v < VARIANT_COUNT; v++)
		pthread_mutex_init(&h->render_lock[v], NULL);
	r = -pthread_create(&thread, NULL, start_daemons, &st);
	if (r == 0) {
		pthread_join(thread, NULL);
		r = st.r;
	}
	if (r < 0) {
		http_free(h);
		return r;
	}
	*ret = h;
	return 0;
}

static void quiesce(struct http *h)
{
	/* Quiescing hands the listening socket back instead of closing it:
	 * it belongs to the caller. */
	for (size_t i = 0; i < h->n_daemons && !h->quiesced; i++)
		MHD_quiesce_daemon(h->daemons[i]);
	h->quiesced = true;
}

static unsigned connections(struct http *h)
{
	unsigned n = 0;

	for (size_t i = 0; i < h->n_daemons; i++) {
		const union MHD_DaemonInfo *info =
			MHD_get_daemon_info(h->daemons[i], MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

		if (info)
			n += info->num_connections;
	}
	return n;
}

void http_drain(struct http *h, unsigned ms)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	if (!h)
		return;
	quiesce(h);
	for (unsigned waited = 0; waited < ms && connections(h) > 0; waited += 10)
		nanosleep(&tick, NULL);
}

void http_free(struct http *h)
{
	if (!h)
		return;
	quiesce(h);
	for (size_t i = 0; i < h->n_daemons; i++)
		MHD_stop_daemon(h->daemons[i]);
	for (int v = 0; v < VARIANT_COUNT; v++) {
		if (h->cache[v].response)
			MHD_destroy_response(h->cache[v].response);
		rendered_unref(h->cache[v].body);
		pthread_mutex_destroy(&h->render_lock[v]);
	}
	pthread_mutex_destroy(&h->cache_lock);
	free(h);
}
