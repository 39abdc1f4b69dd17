/* SPDX-License-Identifier: MIT */
/* perfstat: the records of `perf stat -j -I MS` (perf's JSON lines), for
 * --compare-perf.  Pure: no I/O, no allocation.
 *
 * perf prints one object per line (tools/perf/util/stat-display.c,
 * print_*_json and json_out): "interval", the aggregation's key ("cpu" :
 * "3" with -A, "core" : "S0-D0-C3" with --per-core, "socket" : "S1" with
 * --per-socket, none with -a), then an event's "counter-value" (a number
 * in quotes, or "<not counted>" / "<not supported>"), "event",
 * "event-runtime", "pcnt-running", and a "metric-value" / "metric-unit"
 * pair, or only the pair.  What the parser tolerates, because perf
 * prints it:
 *   - bare nan, -nan and inf as values (not JSON);
 *   - perf 6.1 gluing a second metric pair after an object's closing
 *     brace (`...}"metric-value" : 3.1, "metric-unit" : "x"}`), or a
 *     second object, on the same line: each is a record of its own, the
 *     glued pair with the entity and interval of the record before it;
 *   - fields it does not know (skipped), in any order. */
#ifndef TOPDOWND_PERFSTAT_H
#define TOPDOWND_PERFSTAT_H

#include <stdbool.h>
#include <stddef.h>

/* Which entity a record is about. */
enum perfstat_aggr {
	PERFSTAT_HOST,   /* perf stat -a: no key */
	PERFSTAT_CPU,    /* -A: "cpu" */
	PERFSTAT_CORE,   /* --per-core: "core" : "S<socket>-D<die>-C<core>" */
	PERFSTAT_SOCKET, /* --per-socket: "socket" : "S<socket>" */
};

#define PERFSTAT_NAME_MAX 160

struct perfstat_rec {
	double interval;            /* seconds since perf started */
	enum perfstat_aggr aggr;
	int cpu, socket, die, core; /* -1 where the key does not give it */
	/* An event's count (NaN: perf counted nothing, "<not counted>" or
	 * "<not supported>"), its name and the share of the time it ran
	 * (0 to 1; NaN when perf did not say). */
	bool has_count;
	double count, running;
	char event[PERFSTAT_NAME_MAX];
	/* A metric: its value as perf prints it (NaN when perf has none) and
	 * its unit ("%  tma_retiring", "(null)", "" ...). */
	bool has_metric;
	double metric;
	char unit[PERFSTAT_NAME_MAX];
};

/* The records of one line of perf's output (without its newline), at
 * most @max into @out; returns how many, 0 for a line that is not a
 * record (perf's other messages), or -EINVAL for a record perf would not
 * print (a key in a form perf does not use, a value that is not one), or
 * -ENOBUFS when more than @max (the first @max are in @out). */
int perfstat_parse_line(const char *line, size_t len, struct perfstat_rec *out, size_t max);

/* The metric's name in a record's unit: "%  tma_retiring" ->
 * "tma_retiring" (the unit's last word), "" when the unit names none
 * ("", "(null)").  Into @name, @size bytes. */
void perfstat_metric_name(const char *unit, char *name, size_t size);

#endif
