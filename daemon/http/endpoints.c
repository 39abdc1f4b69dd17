/* SPDX-License-Identifier: MIT */
/* endpoints: what each path answers, one row each (routes[]): its query's
 * checks and answer on the connection's thread, its render on a worker
 * (the JSON document, the live page, /metrics), the live page's footer,
 * and the liveness probe.  request.c runs the request around them. */
#include <errno.h>
#include <pthread.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "body.h"
#include "negotiate.h"
#include "page.h"
#include "request_internal.h"
#include "util.h"
#include "version.h"

/* The live page's history and now: everything the API has, at core scope. */
/* Level 3: the nodes under each bottleneck, when topdownd counts them. */
static const struct api_query page_query = { .scope = API_SCOPE_CORE, .level = 3 };

static const struct page_link *page_links(size_t *n);

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

/* The live page of the held snapshot: rendered from the documents its
 * script fetches. */
static struct MHD_Response *page_response(struct req *req)
{
	struct http *h = req->h;
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
static struct MHD_Response *api_response(struct req *req)
{
	struct http *h = req->h;
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

/* /metrics on the scrapes' worker: the newest interval when the job's turn
 * comes (serve_metrics() released the one it saw), with the daemon's own
 * figures gathered once per render. */
static struct MHD_Response *render_metrics(struct req *req)
{
	struct http *h = req->h;
	const struct snapshot *snap = snapring_acquire(h->p.ring);
	struct expo_http counts;
	struct procstat proc;
	struct expo_options opt = {
		.granularity = req->gran,
		.ratios = req->s->ratios,
		.version = topdownd_version,
		.revision = topdownd_revision,
		.http = &counts,
		.proc = &proc,
	};
	struct own_figures own = { req, &counts, &proc };
	struct MHD_Response *resp = snap ? render_response(h->render, snap, req->variant, &opt, req->s->gen,
							    gather_own, &own)
					  : NULL;

	snapring_release(h->p.ring, snap);
	return resp;
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
		return req_respond_text(conn, req->status, err);
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
	return req_to_worker(req, snap, suspended);
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
		return req_respond_json_error(req->mc, req->status, args.error[0] ? args.error : err);
	}
	return req_to_worker(req, snap, suspended);
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
		return req_respond_json_error(req->mc, req->status, args.error[0] ? args.error : err);
	}
	if (req->query.window_ns) {
		req->then = malloc(sizeof(*req->then));
		if (!req->then ||
		    history_at(h->p.history, snapshot_mono_s(*snap) - (double)req->query.window_ns / 1e9,
			       req->then) < 0) {
			free(req->then);
			req->then = NULL;
			req->status = MHD_HTTP_SERVICE_UNAVAILABLE;
			return req_respond_json_error(req->mc, req->status, "no history yet");
		}
	}
	return req_to_worker(req, snap, suspended);
}

/* /: the live page. */
static enum MHD_Result serve_index(struct req *req, const struct snapshot **snap, bool *suspended)
{
	MHD_get_connection_values(req->mc, MHD_GET_ARGUMENT_KIND, collect_page_arg, req);
	if (req->page_error[0]) {
		req->status = MHD_HTTP_BAD_REQUEST;
		return req_respond_text(req->mc, req->status, req->page_error);
	}
	return req_to_worker(req, snap, suspended);
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
	return req_respond_text(req->mc, req->status, text);
}

/* The endpoints (request_internal.h, struct route). */
static const struct route routes[] = {
	{ "/metrics", "metrics", EXPO_EP_METRICS, false, true, serve_metrics, render_metrics },
	{ "/api/v1/topdown", "api/v1/topdown?scope=core", EXPO_EP_API, false, false, serve_api, api_response },
	{ "/api/v1/topdown/history", "api/v1/topdown/history", EXPO_EP_API, false, false, serve_history,
	  api_response },
	{ "/", ".", EXPO_EP_INDEX, false, false, serve_index, page_response },
	{ "/-/healthy", "-/healthy", EXPO_EP_HEALTHY, true, false, NULL, NULL },
	{ "/-/ready", "-/ready", EXPO_EP_READY, false, false, serve_ready, NULL },
};

/* Anything else: 404, counted as "other". */
static const struct route not_found = { NULL, NULL, EXPO_EP_OTHER, false, false, NULL, NULL };

const struct route *endpoint_route(const char *url)
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

/* /-/healthy, the liveness probe: "OK", unless collection stopped (a read
 * stuck in the kernel, a wedged main loop) for ten intervals and at least
 * [http] unhealthy_after since the last one: 503, so that Kubernetes
 * restarts the pod as systemd's WatchdogSec= restarts the service.  Longer
 * than /-/ready's limit: a slow interval takes a pod out of the Service
 * first, and only a stall restarts it.  Before the first interval
 * (start-up) it is alive. */
unsigned endpoint_liveness(const struct req *req, char *text, size_t len)
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

