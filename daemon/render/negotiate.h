/* SPDX-License-Identifier: MIT */
/* negotiate: HTTP content negotiation for /metrics, as pure functions of
 * the Accept and Accept-Encoding header values (RFC 9110 section 12). */
#ifndef TOPDOWND_NEGOTIATE_H
#define TOPDOWND_NEGOTIATE_H

#include <stdbool.h>

enum negotiate_format {
	NEGOTIATE_TEXT,        /* text/plain; version=0.0.4 */
	NEGOTIATE_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
};

/* OpenMetrics when the client gives it a strictly higher quality than the
 * text format, or the same quality and lists it first.  NULL or
 * unparsable: text. */
enum negotiate_format negotiate_format(const char *accept);

/* True when gzip is acceptable (listed with q > 0, or covered by "*"). */
bool negotiate_gzip(const char *accept_encoding);

#endif
