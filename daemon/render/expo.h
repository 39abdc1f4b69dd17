/* SPDX-License-Identifier: MIT */
/* expo: renders a snapshot as Prometheus text 0.0.4 or OpenMetrics 1.0.
 *
 * Owns the label sets per granularity (the families are metric.h's) and the
 * rules of both formats (counter family names, `# EOF`, escaping).  A pure
 * function of the snapshot and the options into a buffer. */
#ifndef TOPDOWND_EXPO_H
#define TOPDOWND_EXPO_H

#include <stdbool.h>

#include "config.h"
#include "procstat.h"
#include "snapshot.h"
#include "util.h"

enum expo_format {
	EXPO_TEXT,
	EXPO_OPENMETRICS,
};

#define EXPO_CONTENT_TYPE_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define EXPO_CONTENT_TYPE_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* HTTP self metrics: topdown_http_requests_total{endpoint,code},
 * topdown_http_rejected_total{reason}, topdown_http_password_checks_total. */
enum expo_endpoint {
	EXPO_EP_METRICS,
	EXPO_EP_API,
	EXPO_EP_INDEX,
	EXPO_EP_HEALTHY,
	EXPO_EP_READY,
	EXPO_EP_OTHER,
	EXPO_EP_COUNT,
};

enum expo_reject {
	EXPO_REJ_UNAUTHORIZED,
	EXPO_REJ_METHOD,
	EXPO_REJ_NOT_FOUND,
	EXPO_REJ_BAD_REQUEST,
	EXPO_REJ_TOO_LARGE,
	EXPO_REJ_THROTTLED,    /* 429: a client guessing passwords */
	EXPO_REJ_BUSY,         /* 503: the workers' queue is full */
	EXPO_REJ_TIMEOUT,      /* no complete request head by the deadline */
	EXPO_REJ_CLIENT_LIMIT, /* one client's share of connections is used up */
	EXPO_REJ_EVICTED,      /* an idle connection closed to make room for a new one */
	EXPO_REJ_COUNT,
};

#define EXPO_CODE_COUNT 15
/* Indexed by the enums above, EXPO_CODE_COUNT, EXPO_EP_COUNT and
 * EXPO_REJ_COUNT long (declared without a size so that the definitions'
 * initialisers give it, which TABLE_COVERS checks); the last code is
 * "other" (0). */
extern const unsigned expo_http_codes[];
extern const char *const expo_endpoint_name[];
extern const char *const expo_reject_name[];

struct expo_http {
	uint64_t requests[EXPO_EP_COUNT][EXPO_CODE_COUNT];
	uint64_t rejected[EXPO_REJ_COUNT];
	uint64_t password_checks;
	uint64_t api_renders; /* JSON documents rendered (apicache) */
	unsigned connections;  /* open now */
	unsigned api_queued;   /* API requests waiting for the API worker now */
	bool auth; /* basic auth on: export password_checks */
};

/* Index of @code in expo_http_codes (the "other" slot if absent). */
unsigned expo_http_code_index(unsigned code);

struct expo_options {
	enum config_granularity granularity;
	bool ratios;
	const char *version;
	const char *revision;
	const struct expo_http *http; /* NULL: no HTTP families */
	const struct procstat *proc;  /* NULL: no process_* families */
};

/* Appends the exposition to @out; returns 0 or -ENOMEM. */
int expo_render(const struct snapshot *snap, const struct expo_options *opt,
		enum expo_format format, struct buf *out);

#endif
