/* SPDX-License-Identifier: MIT */
/* api_parse_query over the raw scope, level, cpu and window query values (what
 * libmicrohttpd hands over after splitting and %-decoding the query
 * string), then api_document on a small static snapshot.
 *
 * Input: byte 0 says which parameters are present (bit 0 scope, bit 1
 * level, bit 2 cpu, bit 4 window; bit 3 pretty-prints); the rest is split
 * at NUL bytes into the present values, in that order (missing ones are
 * "").  api_check_query then judges them against the snapshot.
 * Invariants: errors come with a message; an accepted query has a valid
 * scope and level 1 or 2, has_cpus exactly when cpu was given; the
 * document lists the arrays of the scope and no finer one, the selected
 * CPUs only, no level2 at level 1; api_dump's text parses back with
 * json_loads into an equal document. */
#include <errno.h>
#include <jansson.h>

#include "api.h"
#include "fuzz_common.h"
#include "fuzz_snapshot.h"

#define ERRLEN 256

static struct fuzz_snap fs;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_snapshot_init(&fs);
	return 0;
}

static size_t expected_cpus(const struct api_query *q)
{
	size_t n = 0;

	for (unsigned i = 0; i < fs.snap.n_cpus; i++)
		n += fs.cpus[i].selected &&
		     (!q->has_cpus || cpuset_test(&q->cpus, (unsigned)fs.cpus[i].cpu));
	return n;
}

static void check_document(const struct api_query *q, bool pretty)
{
	json_t *doc = api_document(&fs.snap, q, NULL, "fuzzhost", "0.0.0-fuzz"), *back, *cpus, *host;
	json_error_t jerr;
	char *text;

	FUZZ_CHECK(doc != NULL, "api_document failed");
	FUZZ_CHECK(!!json_object_get(doc, "packages") == (q->scope >= API_SCOPE_PACKAGE),
		   "packages with scope %d", (int)q->scope);
	FUZZ_CHECK(!!json_object_get(doc, "cores") == (q->scope >= API_SCOPE_CORE),
		   "cores with scope %d", (int)q->scope);
	cpus = json_object_get(doc, "cpus");
	FUZZ_CHECK(!!cpus == (q->scope >= API_SCOPE_CPU), "cpus with scope %d", (int)q->scope);
	if (cpus)
		FUZZ_CHECK(json_array_size(cpus) == expected_cpus(q), "%zu CPUs listed, %zu selected",
			   json_array_size(cpus), expected_cpus(q));
	host = json_object_get(doc, "host");
	FUZZ_CHECK(host && json_object_get(host, "level1"), "no host level1");
	FUZZ_CHECK(!!json_object_get(host, "level2") == (q->level >= 2),
		   "host level2 at level %u", q->level);

	text = api_dump(doc, pretty);
	FUZZ_CHECK(text != NULL, "api_dump failed");
	back = json_loads(text, 0, &jerr);
	FUZZ_CHECK(back != NULL, "api_dump output does not parse: %s (line %d)", jerr.text, jerr.line);
	FUZZ_CHECK(json_equal(doc, back), "api_dump output parses into another document");
	json_decref(back);
	free(text);
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned bit[4] = { 1, 2, 4, 16 };
	const char *value[4] = { NULL, NULL, NULL, NULL };
	char *parts[4], *err;
	struct api_query q;
	unsigned mask;
	size_t n, k = 0;
	int r;

	if (size == 0)
		return 0;
	mask = data[0];
	n = fuzz_split(data + 1, size - 1, parts, 4);
	for (int i = 0; i < 4; i++)
		if (mask & bit[i])
			value[i] = k < n ? parts[k++] : "";
	err = fuzz_malloc(ERRLEN);
	r = api_parse_query(value[0], value[1], value[2], value[3], &q, err, ERRLEN);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL, "api_parse_query returned %d", r);
		FUZZ_CHECK(fuzz_err_ok(err, ERRLEN), "no message");
		goto out;
	}
	FUZZ_CHECK(q.scope >= API_SCOPE_HOST && q.scope <= API_SCOPE_CPU, "scope %d", (int)q.scope);
	FUZZ_CHECK(q.level >= 1 && q.level <= DEPTH_LEVEL_MAX, "level %u", q.level);
	FUZZ_CHECK(q.has_cpus == (value[2] != NULL), "has_cpus %d", q.has_cpus);
	FUZZ_CHECK(!q.has_cpus || !cpuset_empty(&q.cpus), "empty cpu selection accepted");
	FUZZ_CHECK((q.window_ns != 0) == (value[3] != NULL), "window %llu", (unsigned long long)q.window_ns);
	r = api_check_query(&fs.snap, &q, 900 * 1000000000ULL, err, ERRLEN);
	FUZZ_CHECK(r == 0 || (r == -EINVAL && fuzz_err_ok(err, ERRLEN)), "api_check_query: %d", r);
	if (q.window_ns)
		q.window_ns = 0; /* no history here: the document of the last interval */
	check_document(&q, mask & 8);
out:
	free(err);
	free(parts[0]);
	return 0;
}
