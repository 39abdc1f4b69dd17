/* SPDX-License-Identifier: MIT */
/* api: the JSON document of /api/v1/topdown and `--once --json`, built
 * with jansson from a snapshot, and the parser of its query parameters.
 *
 * Versioned within /api/v1: fields are added, never renamed or removed.
 * 1.0: the original document.  1.1: "api_version", the cumulative slots of
 * every category ("level1_slots_total", "level2_slots_total") and times,
 * "level2_by_parent", the "selection" of ?cpu=, and ?window=.  1.2:
 * "intervals_missed", and /api/v1/topdown/history.  1.3: ?scope=cgroup
 * ("cgroup_attribution", "cgroups"). */
#ifndef TOPDOWND_API_H
#define TOPDOWND_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "history.h"
#include "snapshot.h"

#define API_VERSION "1.11"

enum api_scope {
	API_SCOPE_HOST,
	API_SCOPE_PACKAGE,
	API_SCOPE_CORE,
	API_SCOPE_CPU,
};

struct api_query {
	enum api_scope scope; /* this scope and every coarser one */
	unsigned level;       /* 1 or 2; capped by what is collected */
	bool has_cpus;
	struct cpuset cpus;   /* restricts cpus, cores and packages listed,
			       * and is summed up as "selection" */
	uint64_t window_ns;   /* 0: ratios of the last interval */
	bool cgroups;         /* scope=cgroup: the host and each cgroup's bucket */
};

/* Parses the raw parameter values (NULL when absent).  On error returns
 * -EINVAL and a message naming the parameter and the accepted values. */
int api_parse_query(const char *scope, const char *level, const char *cpu, const char *window,
		    struct api_query *q, char *err, size_t errlen);

/* What only the snapshot can tell: every CPU asked for exists, and a
 * window is asked for the host and packages only (the history keeps
 * nothing finer) and fits in @history_ns.  -EINVAL with a message. */
int api_check_query(const struct snapshot *snap, const struct api_query *q, uint64_t history_ns,
		    char *err, size_t errlen);

/* Builds the document; NULL on allocation failure.  With a window, @then
 * is the history sample it starts from (history_at). */
json_t *api_document(const struct snapshot *snap, const struct api_query *q,
		     const struct history_sample *then, const char *hostname, const char *version);

/* /api/v1/topdown/history: the host's and each package's ratios over every
 * step of the history kept (the differences of consecutive samples), the
 * steps that end after @since; categories of @snap up to @level. */
json_t *api_history(const struct snapshot *snap, const struct history_series *s, unsigned level,
		    const char *hostname, const char *version);

/* ?since= and ?level= of the history; -EINVAL with a message. */
int api_parse_history_query(const char *since, const char *level, double *since_out,
			    unsigned *level_out, char *err, size_t errlen);

/* Serialises with the precision the document's numbers need. */
char *api_dump(const json_t *doc, bool pretty);

#endif
