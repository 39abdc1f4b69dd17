/* expo: renders a snapshot as Prometheus text 0.0.4 or OpenMetrics 1.0.
 *
 * Owns the metric names, HELP texts, label sets per granularity and the
 * rules of both formats (counter family names, `# EOF`, escaping).  A pure
 * function of the snapshot and the options into a buffer. */
#ifndef TOPDOWND_EXPO_H
#define TOPDOWND_EXPO_H

#include <stdbool.h>

#include "config.h"
#include "snapshot.h"
#include "util.h"

enum expo_format {
	EXPO_TEXT,
	EXPO_OPENMETRICS,
};

#define EXPO_CONTENT_TYPE_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define EXPO_CONTENT_TYPE_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

struct expo_options {
	enum config_granularity granularity;
	bool ratios;
	const char *version;
	const char *revision;
};

/* Appends the exposition to @out; returns 0 or -ENOMEM. */
int expo_render(const struct snapshot *snap, const struct expo_options *opt,
		enum expo_format format, struct buf *out);

#endif
