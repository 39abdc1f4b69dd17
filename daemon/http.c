/* http: libmicrohttpd daemons, routing, the /metrics render cache. */
#include "http.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	struct MHD_Daemon *daemons[CONFIG_LISTEN_MAX];
	size_t n_daemons;
	/* Guards the cache entries only: a few pointer swaps, no rendering. */
	pthread_mutex_t cache_lock;
	/* One renderer per variant; later scrapers of the same interval
	 * wait for it and reuse its result. */
	pthread_mutex_t render_lock[VARIANT_COUNT];
	struct cache_entry cache[VARIANT_COUNT];
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

static struct rendered *render(struct http *h, const struct snapshot *snap, enum variant v)
{
	struct expo_options opt = {
		.granularity = h->p.granularity,
		.ratios = h->p.ratios,
		.version = topdownd_version,
		.revision = topdownd_revision,
	};
	bool om = v == VARIANT_OM || v == VARIANT_OM_GZIP;
	struct rendered *plain;
	struct buf b;
	char *data;
	size_t len;

	if (v == VARIANT_TEXT || v == VARIANT_OM) {
		buf_init(&b);
		if (expo_render(snap, &opt, om ? EXPO_OPENMETRICS : EXPO_TEXT, &b) < 0) {
			buf_free(&b);
			return NULL;
		}
		data = buf_steal(&b, &len);
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
				     const struct snapshot *snap)
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

	if (queue_cached(h, conn, v, snap->seq, &ret))
		return ret;
	pthread_mutex_lock(&h->render_lock[v]);
	if (queue_cached(h, conn, v, snap->seq, &ret))
		goto out;
	body = render(h, snap, v);
	if (!body) {
		ret = respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory rendering metrics\n");
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
				 const struct snapshot *snap)
{
	struct query_args args = { 0 };
	struct api_query q;
	char err[256], *text;
	enum MHD_Result ret;
	json_t *doc;

	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	if (args.error[0])
		return respond_json_error(conn, MHD_HTTP_BAD_REQUEST, args.error);
	if (api_parse_query(args.scope, args.level, args.cpu, &q, err, sizeof(err)) < 0)
		return respond_json_error(conn, MHD_HTTP_BAD_REQUEST, err);
	doc = api_document(snap, &q, h->p.hostname, topdownd_version);
	text = doc ? api_dump(doc, false) : NULL;
	json_decref(doc);
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
	row(&b, "PMU", snap->pmu[0] ? snap->pmu : "none");
	row(&b, "pmu_name", snap->pmu_name[0] ? snap->pmu_name : "none");
	str_printf(text, sizeof(text), "%u", snap->level);
	row(&b, "Level", text);
	row(&b, "Model", snap->model[0] ? snap->model : "none");
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

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **con_cls)
{
	struct http *h = cls;
	const struct snapshot *snap;
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "405 method not allowed\n");
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
	if (strcmp(url, "/-/healthy") == 0)
		return respond_text(conn, MHD_HTTP_OK, "OK\n");

	snap = snapring_acquire(h->p.ring);
	if (!snap)
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "starting\n");
	if (strcmp(url, "/metrics") == 0)
		ret = serve_metrics(h, conn, snap);
	else if (strcmp(url, "/api/v1/topdown") == 0)
		ret = serve_api(h, conn, snap);
	else if (strcmp(url, "/") == 0)
		ret = serve_landing(h, conn, snap);
	else if (strcmp(url, "/-/ready") == 0)
		ret = snap->seq > 0 ? respond_text(conn, MHD_HTTP_OK, "ready\n")
				    : respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
						   "not ready: no interval collected yet\n");
	else
		ret = respond_text(conn, MHD_HTTP_NOT_FOUND, "404 not found\n");
	snapring_release(h->p.ring, snap);
	return ret;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	/* Clients can make libmicrohttpd talk: keep it from flooding. */
	log_ratelimited(&mhd_rl, LOG_LEVEL_WARNING, 0, "HTTP: %s", msg);
}

int http_new(const struct http_params *params, struct http **ret)
{
	struct http *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->p = *params;
	pthread_mutex_init(&h->cache_lock, NULL);
	for (int v = 0; v < VARIANT_COUNT; v++)
		pthread_mutex_init(&h->render_lock[v], NULL);
	for (size_t i = 0; i < params->n_fds; i++) {
		struct MHD_Daemon *d;

		d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC,
				     0, NULL, NULL, handle, h,
				     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				     MHD_OPTION_LISTEN_SOCKET, params->fds[i],
				     MHD_OPTION_CONNECTION_LIMIT, params->max_connections,
				     MHD_OPTION_CONNECTION_TIMEOUT, params->timeout_s,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
				     MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
				     MHD_OPTION_END);
		if (!d) {
			http_free(h);
			return -EIO;
		}
		h->daemons[h->n_daemons++] = d;
	}
	*ret = h;
	return 0;
}

void http_free(struct http *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_daemons; i++) {
		/* Quiescing hands the listening socket back instead of
		 * closing it: it belongs to the caller. */
		MHD_quiesce_daemon(h->daemons[i]);
		MHD_stop_daemon(h->daemons[i]);
	}
	for (int v = 0; v < VARIANT_COUNT; v++) {
		if (h->cache[v].response)
			MHD_destroy_response(h->cache[v].response);
		rendered_unref(h->cache[v].body);
		pthread_mutex_destroy(&h->render_lock[v]);
	}
	pthread_mutex_destroy(&h->cache_lock);
	free(h);
}
