/* SPDX-License-Identifier: MIT */
/* http: the server: libmicrohttpd daemons and their lifecycle, the
 * settings a reload swaps, connection admission and TLS credentials,
 * accounting, libmicrohttpd's log.  Requests are request.c's. */
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

#include "client.h"
#include "http_internal.h"
#include "log.h"
#include "util.h"

/* libmicrohttpd's per-connection memory: request line and headers must
 * fit.  Above 32 KiB it maps the pool instead of taking it from the heap,
 * so an idle connection costs no resident page until it sends something. */
#define CONNECTION_MEMORY (64 * 1024)
/* Workers: bcrypt checks, and renders (/metrics, JSON). */
#define AUTH_WORKERS 2
#define AUTH_QUEUE 64
#define RENDER_WORKERS 1
#define RENDER_QUEUE 256
/* The JSON API, the history and the live page: one worker, a shorter
 * queue (a request waits at most API_DEADLINE_NS in it, request.c). */
#define API_WORKERS 1
#define API_QUEUE 128
/* JSON documents kept for sharing: the variants the clients of one or two
 * intervals ask for (a live page asks for two; a dashboard a few). */
#define APICACHE_SLOTS 8
#define WORKER_NICE 5
#define THROTTLE_SLOTS 4096
/* libmicrohttpd's threads inherit the nice value of the thread that
 * starts them: started from one at this value, they yield a busy core to
 * the collection (which stays at the daemon's priority). */
#define HTTP_NICE 5
#define RETIRE_GRACE_MS 500

static struct log_ratelimit mhd_rl = LOG_RATELIMIT_INIT(60 * UINT64_C(1000000000), 10);

/* ---- settings ---- */

void http_settings_unref(struct settings *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
		auth_db_free(s->auth);
		tls_material_free(s->tls);
		free(s);
	}
}

struct settings *http_settings_get(struct http *h)
{
	struct settings *s;

	pthread_mutex_lock(&h->settings_lock);
	s = h->settings;
	atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&h->settings_lock);
	return s;
}

static int settings_new(struct http *h, const struct http_params *p, struct settings **ret)
{
	struct settings *s = calloc(1, sizeof(*s));

	if (!s) {
		auth_db_free(p->auth);
		tls_material_free(p->tls);
		return -ENOMEM;
	}
	atomic_init(&s->refs, 1);
	s->gen = ++h->next_gen;
	s->granularity = p->granularity;
	s->ratios = p->ratios;
	s->timeout_s = p->timeout_s;
	s->unhealthy_after_s = p->unhealthy_after_s;
	s->tls = p->tls;
	s->auth = p->auth;
	*ret = s;
	return 0;
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
	case MHD_HTTP_TOO_MANY_REQUESTS:
		reason = EXPO_REJ_THROTTLED;
		break;
	default:
		if (status >= 400 && status != MHD_HTTP_SERVICE_UNAVAILABLE &&
		    status != MHD_HTTP_INTERNAL_SERVER_ERROR)
			reason = EXPO_REJ_BAD_REQUEST;
	}
	if (reason >= 0)
		atomic_fetch_add(&h->p.stats->rejected[reason], 1);
}

void http_count(struct http *h, enum expo_endpoint ep, unsigned status)
{
	atomic_fetch_add(&h->p.stats->requests[ep][expo_http_code_index(status)], 1);
	count_reject(h, status);
}

void http_counts(struct http *h, struct expo_http *out)
{
	const struct http_stats *s = h->p.stats;
	struct conns_stats cs;

	for (int e = 0; e < EXPO_EP_COUNT; e++)
		for (int k = 0; k < EXPO_CODE_COUNT; k++)
			out->requests[e][k] = atomic_load(&s->requests[e][k]);
	for (int k = 0; k < EXPO_REJ_COUNT; k++)
		out->rejected[k] = atomic_load(&s->rejected[k]);
	cs = conns_stats(h->conns);
	out->rejected[EXPO_REJ_TIMEOUT] += cs.expired;
	out->rejected[EXPO_REJ_EVICTED] += cs.evicted;
	out->password_checks = atomic_load(&s->password_checks);
	out->api_renders = apicache_renders(h->apicache);
	out->connections = conns_count(h->conns);
	out->api_queued = h->api_jobs ? jobs_queued(h->api_jobs) : 0;
}

/* ---- connections ---- */

/* Admission: one client may hold a share of the connections only. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct http *h = cls;
	struct client_key k;

	(void)addrlen;
	/* Local peers (a reverse proxy on a UNIX socket) are not limited. */
	if (addr->sa_family == AF_UNIX || client_key_of(addr, &k) < 0 || conns_admit(h->conns, &k))
		return MHD_YES;
	atomic_fetch_add(&h->p.stats->rejected[EXPO_REJ_CLIENT_LIMIT], 1);
	return MHD_NO;
}

/* STARTED: the connection gets its deadline; a TLS session gets the
 * certificates of the settings in force (the connection keeps them) and,
 * with tls_client_ca, must present a client certificate in the handshake
 * itself.  CLOSED (libmicrohttpd closes the socket only afterwards). */
static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			      enum MHD_ConnectionNotificationCode code)
{
	struct http *h = cls;
	const union MHD_ConnectionInfo *info;
	struct settings *s = NULL;
	struct client_key k;
	int fd;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		http_settings_unref(conns_remove(h->conns, *socket_context));
		*socket_context = NULL;
		return;
	}
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	fd = info ? info->connect_fd : -1;
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (client_key_of(info ? info->client_addr : NULL, &k) < 0)
		memset(&k, 0, sizeof(k));
	if (h->tls) {
		s = http_settings_get(h);
		info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		if (info && info->tls_session && s->tls) {
			gnutls_session_t session = info->tls_session;

			gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, s->tls->cred);
			if (s->tls->ca) {
				gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE);
				gnutls_session_set_verify_cert(session, NULL, 0);
			}
		}
	}
	*socket_context = conns_add(h->conns, fd, &k, s);
	if (!*socket_context)
		http_settings_unref(s);
}

/* libmicrohttpd answers malformed and oversized requests (400, 414, 431,
 * 505) itself, without calling the handler; it logs each of them with
 * this text, which is where they are counted. */
#define MHD_ERROR_RESPONSE "Error processing request (HTTP response code is "

/* What libmicrohttpd 0.9.75 says about a client's doing (a peer that went
 * away, a bad request, a failed handshake): any client can cause any
 * number of these, so they are debug messages, not warnings. */
static const char *const client_caused[] = {
	"Connection rejected by application",
	"Connection socket is closed",
	"Connection was closed by remote side",
	"Error: received handshake message out of context",
	"Failed to parse `Content-Length'",
	"Failed to send ",
	"Not enough memory in pool",
	"Received HTTP/1.1 request without `Host'",
	"Socket has been disconnected",
	"Too large value of 'Content-Length'",
	"Too late to send an error response",
	"Too late for error response",
	"WARNING: incomplete upload processing",
};

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

		http_count(h, EXPO_EP_OTHER, status);
		log_debug("HTTP: %s", msg);
		return;
	}
	for (size_t i = 0; i < sizeof(client_caused) / sizeof(client_caused[0]); i++) {
		if (strncmp(msg, client_caused[i], strlen(client_caused[i])) == 0) {
			log_debug("HTTP: %s", msg);
			return;
		}
	}
	log_ratelimited(&mhd_rl, LOG_LEVEL_WARNING, 0, "HTTP: %s", msg);
}

/* ---- daemons ---- */

/* One client (a slowloris, a runaway script) may hold a sixteenth of the
 * connections, so it cannot lock Prometheus out. */
/* Connections libmicrohttpd accepts beyond max_connections, each of
 * which closes an idle one: evictions in flight at once. */
#define EVICT_SLACK 64

unsigned http_connections_fit(uint64_t limit, uint64_t used, size_t n_listen, unsigned want,
			      uint64_t *need)
{
	uint64_t room;

	*need = used + (uint64_t)want * n_listen;
	if (n_listen == 0)
		return want;
	room = limit > used ? (limit - used) / n_listen : 0;
	if (room >= want)
		return want;
	return room ? (unsigned)room : 1;
}

static unsigned per_client_limit(unsigned max_connections)
{
	return max_connections >= 32 ? max_connections / 16 : 2;
}

struct starter {
	struct http *h;
	const struct tls_material *tls;
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
		struct MHD_OptionItem tls_options[4] = { { MHD_OPTION_END, 0, NULL } };
		/* See http.h for why HTTPS polls. */
		unsigned flags = (h->tls ? MHD_USE_POLL_INTERNAL_THREAD : MHD_USE_EPOLL_INTERNAL_THREAD) |
				 MHD_USE_ERROR_LOG | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
		struct MHD_Daemon *d;

		if (h->tls) {
			int n = 0;

			/* The daemon's own credentials; each session gets
			 * those of the settings in force (notify_connection). */
			flags |= MHD_USE_TLS;
			tls_options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, st->tls->cert };
			tls_options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, st->tls->key };
			tls_options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
								    (void *)(uintptr_t)TLS_PRIORITIES };
			tls_options[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
		}
		d = MHD_start_daemon(flags, 0, accept_policy, h, request_handle, h,
				     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
				     MHD_OPTION_LISTEN_SOCKET, params->fds[i],
				     MHD_OPTION_NOTIFY_CONNECTION, notify_connection, h,
				     MHD_OPTION_URI_LOG_CALLBACK, request_begins, h,
				     MHD_OPTION_NOTIFY_COMPLETED, request_done, h,
				     MHD_OPTION_ARRAY, tls_options,
				     /* Above the pool: a new connection is accepted
				      * and an idle one makes room (conns_admit). */
				     MHD_OPTION_CONNECTION_LIMIT, params->max_connections + EVICT_SLACK,
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
	unsigned total = params->max_connections * (unsigned)params->n_fds;
	struct starter st = { h, params->tls, 0 };
	pthread_t thread;
	int r;

	if (!h) {
		auth_db_free(params->auth);
		tls_material_free(params->tls);
		return -ENOMEM;
	}
	h->p = *params;
	h->p.tls = NULL;
	h->p.auth = NULL;
	h->tls = params->tls != NULL;
	pthread_mutex_init(&h->settings_lock, NULL);
	r = settings_new(h, params, &h->settings);
	if (r == 0)
		r = conns_new((uint64_t)params->timeout_s * 1000000000u, total,
			      per_client_limit(params->max_connections), &h->conns);
	if (r == 0)
		r = throttle_new(THROTTLE_SLOTS, &h->throttle);
	if (r == 0)
		r = render_new(&h->render);
	if (r == 0)
		r = apicache_new(APICACHE_SLOTS, &h->apicache);
	if (r == 0)
		r = jobs_new("topdownd-auth", AUTH_WORKERS, AUTH_QUEUE, WORKER_NICE, &h->auth_jobs);
	if (r == 0)
		r = jobs_new("topdownd-render", RENDER_WORKERS, RENDER_QUEUE, WORKER_NICE, &h->render_jobs);
	if (r == 0)
		r = jobs_new("topdownd-api", API_WORKERS, API_QUEUE, WORKER_NICE, &h->api_jobs);
	if (r == 0) {
		/* libmicrohttpd's threads inherit this one's policy and nice. */
		r = thread_spawn(&thread, false, start_daemons, &st);
		if (r == 0) {
			pthread_join(thread, NULL);
			r = st.r;
		}
	}
	if (r < 0) {
		http_free(h);
		return r;
	}
	*ret = h;
	return 0;
}

int http_update(struct http *h, const struct http_params *params)
{
	struct settings *s, *old;
	int r;

	if ((params->tls != NULL) != h->tls || params->max_connections != h->p.max_connections)
		return -EAGAIN;
	r = settings_new(h, params, &s);
	if (r < 0)
		return r;
	h->p.granularity = params->granularity;
	h->p.ratios = params->ratios;
	h->p.timeout_s = params->timeout_s;
	conns_set_timeout(h->conns, (uint64_t)params->timeout_s * 1000000000u);
	pthread_mutex_lock(&h->settings_lock);
	old = h->settings;
	h->settings = s;
	pthread_mutex_unlock(&h->settings_lock);
	http_settings_unref(old);
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

/* Servers being retired, for http_retired_wait(). */
static pthread_mutex_t retire_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t retire_done = PTHREAD_COND_INITIALIZER;
static unsigned retiring;

static void *retire(void *arg)
{
	struct http *h = arg;
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	pthread_setname_np(pthread_self(), "topdownd-retire");
	for (unsigned waited = 0; waited < RETIRE_GRACE_MS && conns_count(h->conns) > 0; waited += 10)
		nanosleep(&tick, NULL);
	/* Stopping may wait for password checks in progress: here, never
	 * in the thread that collects. */
	http_free(h);
	pthread_mutex_lock(&retire_lock);
	retiring--;
	pthread_cond_broadcast(&retire_done);
	pthread_mutex_unlock(&retire_lock);
	return NULL;
}

void http_retire(struct http *h)
{
	pthread_t thread;
	int r;

	if (!h)
		return;
	quiesce(h);
	pthread_mutex_lock(&retire_lock);
	retiring++;
	pthread_mutex_unlock(&retire_lock);
	r = thread_spawn(&thread, true, retire, h);
	if (r != 0) {
		pthread_mutex_lock(&retire_lock);
		retiring--;
		pthread_mutex_unlock(&retire_lock);
		http_free(h);
	}
}

void http_retired_wait(void)
{
	pthread_mutex_lock(&retire_lock);
	while (retiring > 0)
		pthread_cond_wait(&retire_done, &retire_lock);
	pthread_mutex_unlock(&retire_lock);
}

void http_free(struct http *h)
{
	if (!h)
		return;
	quiesce(h);
	/* Workers first: each resumes the connection it holds, and no new
	 * job is taken, so none is left suspended when the daemons stop
	 * (libmicrohttpd aborts the process otherwise).  Queued API renders
	 * answer 503 without rendering: shutdown does not wait for them. */
	atomic_store(&h->stopping, true);
	if (h->auth_jobs)
		jobs_stop(h->auth_jobs);
	if (h->render_jobs)
		jobs_stop(h->render_jobs);
	if (h->api_jobs)
		jobs_stop(h->api_jobs);
	if (atomic_load(&h->unrendered))
		log_info("Stopping: %u queued API requests answered 503 without being rendered",
			 atomic_load(&h->unrendered));
	for (size_t i = 0; i < h->n_daemons; i++)
		MHD_stop_daemon(h->daemons[i]);
	jobs_free(h->auth_jobs);
	jobs_free(h->render_jobs);
	jobs_free(h->api_jobs);
	if (h->conns) {
		struct conns_stats cs = conns_stats(h->conns);

		atomic_fetch_add(&h->p.stats->rejected[EXPO_REJ_TIMEOUT], cs.expired);
		atomic_fetch_add(&h->p.stats->rejected[EXPO_REJ_EVICTED], cs.evicted);
	}
	render_free(h->render);
	apicache_free(h->apicache);
	throttle_free(h->throttle);
	conns_free(h->conns);
	http_settings_unref(h->settings);
	pthread_mutex_destroy(&h->settings_lock);
	free(h);
}
