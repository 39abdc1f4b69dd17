/* api: the JSON document of /api/v1/topdown and `--once --json`, built
 * with jansson from a snapshot, and the parser of its query parameters. */
#ifndef TOPDOWND_API_H
#define TOPDOWND_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "snapshot.h"

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
	struct cpuset cpus;   /* restricts cpus, cores and packages listed */
};

/* Parses the raw parameter values (NULL when absent).  On error returns
 * -EINVAL and a message naming the parameter and the accepted values. */
int api_parse_query(const char *scope, const char *level, const char *cpu,
		    struct api_query *q, char *err, size_t errlen);

/* Builds the document; NULL on allocation failure. */
json_t *api_document(const struct snapshot *snap, const struct api_query *q,
		     const char *hostname, const char *version);

/* Serialises with the precision the document's numbers need. */
char *api_dump(const json_t *doc, bool pretty);

#endif
