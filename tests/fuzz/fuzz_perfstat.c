/* SPDX-License-Identifier: MIT */
/* perfstat_parse_line (perf stat -j's lines, any bytes: --compare-perf
 * reads perf's output) and perfstat_metric_name.
 * Invariants:
 *  - the result is a record count within the room given, 0, -EINVAL or
 *    -ENOBUFS; a line that does not start with '{' (after blanks) is not
 *    a record (0);
 *  - every record has an interval >= 0, a count or a metric, its strings
 *    terminated, the keys its aggregation gives (cpu >= 0 for -A; socket
 *    for --per-core and --per-socket; die and core for --per-core);
 *  - the same line parses the same way twice, and with more room to the
 *    same records (or, out of room before, to more, or to a refusal of
 *    what it had not read);
 *  - a metric name is a terminated suffix of the unit without blanks. */
#include <errno.h>
#include <math.h>

#include "fuzz_common.h"
#include "perfstat.h"

#define MAX 4

static FUZZ_NO_COVERAGE void check_rec(const struct perfstat_rec *r)
{
	char name[PERFSTAT_NAME_MAX];

	FUZZ_CHECK(r->interval >= 0, "interval %g", r->interval);
	FUZZ_CHECK(r->has_count || r->has_metric, "a record of nothing");
	FUZZ_CHECK(memchr(r->event, '\0', sizeof(r->event)), "event unterminated");
	FUZZ_CHECK(memchr(r->unit, '\0', sizeof(r->unit)), "unit unterminated");
	FUZZ_CHECK(r->aggr != PERFSTAT_CPU || r->cpu >= 0, "-A without a CPU");
	FUZZ_CHECK(r->aggr != PERFSTAT_SOCKET || r->socket >= 0, "--per-socket without a socket");
	FUZZ_CHECK(r->aggr != PERFSTAT_CORE || (r->socket >= 0 && r->die >= 0 && r->core >= 0),
		   "--per-core without S-D-C");
	FUZZ_CHECK(r->has_count || isnan(r->count), "a count without a counter-value");
	perfstat_metric_name(r->unit, name, sizeof(name));
	FUZZ_CHECK(!strchr(name, ' '), "a metric name with a blank: \"%s\"", name);
	FUZZ_CHECK(!name[0] || strstr(r->unit, name), "\"%s\" not in \"%s\"", name, r->unit);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = fuzz_cstr(data, size);
	size_t len = strlen(line);
	struct perfstat_rec *a = malloc(MAX * sizeof(*a)), *b = malloc(2 * MAX * sizeof(*b));
	int n, again, more;
	const char *p = line;

	if (!a || !b)
		abort();
	n = perfstat_parse_line(line, len, a, MAX);
	FUZZ_CHECK(n == -EINVAL || n == -ENOBUFS || (n >= 0 && n <= MAX), "returned %d", n);
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (*p != '{')
		FUZZ_CHECK(n == 0, "\"%.40s\" is not a record but returned %d", line, n);
	for (int i = 0; i < n; i++)
		check_rec(&a[i]);
	again = perfstat_parse_line(line, len, b, MAX);
	FUZZ_CHECK(again == n, "%d then %d", n, again);
	FUZZ_CHECK(n <= 0 || memcmp(a, b, (size_t)n * sizeof(*a)) == 0, "different records the second time");
	more = perfstat_parse_line(line, len, b, 2 * MAX);
	/* Out of room, the rest of the line is not read: with more room it
	 * may turn out to be malformed. */
	FUZZ_CHECK(n != -ENOBUFS || more == -ENOBUFS || more == -EINVAL || more > MAX,
		   "-ENOBUFS with %d, then %d with more room", MAX, more);
	FUZZ_CHECK(n < 0 || more == n, "%d records, %d with more room", n, more);
	free(a);
	free(b);
	free(line);
	return 0;
}
