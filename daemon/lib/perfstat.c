/* SPDX-License-Identifier: MIT */
/* perfstat: perf stat -j's records (perfstat.h). */
#include "perfstat.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
	const char *p, *end;
};

static void skip_space(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static bool take(struct cursor *c, char ch)
{
	skip_space(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

/* A quoted string into @buf (truncated to @size - 1 bytes, always
 * terminated); perf escapes only '"' and '\' (json_out's fputs of the
 * name): a backslash takes the next byte as it is. */
static int string(struct cursor *c, char *buf, size_t size)
{
	size_t n = 0;

	if (!take(c, '"'))
		return -EINVAL;
	while (c->p < c->end && *c->p != '"') {
		char ch = *c->p++;

		if (ch == '\\') {
			if (c->p >= c->end)
				return -EINVAL;
			ch = *c->p++;
		}
		if (n + 1 < size)
			buf[n++] = ch;
	}
	if (c->p >= c->end)
		return -EINVAL;
	c->p++;
	buf[n] = '\0';
	return 0;
}

/* A number as perf prints one ("%f", "%lu", or nan, -nan, inf),
 * unquoted; NaN for nan and -nan. */
static int number_text(const char *s, size_t len, double *v)
{
	char buf[64], *end;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (strcmp(buf, "nan") == 0 || strcmp(buf, "-nan") == 0) {
		*v = NAN;
		return 0;
	}
	/* strtod takes hexadecimal and "infinity" too: only what perf
	 * prints. */
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789.-+eEinf", buf[i]))
			return -EINVAL;
	*v = strtod(buf, &end);
	return *end == '\0' ? 0 : -EINVAL;
}

/* A value: a string into @str (when not NULL; @is_string set), or a
 * number into @v. */
static int value(struct cursor *c, char *str, size_t size, bool *is_string, double *v)
{
	const char *start;

	skip_space(c);
	if (c->p < c->end && *c->p == '"') {
		char scratch[PERFSTAT_NAME_MAX];

		*is_string = true;
		return str ? string(c, str, size) : string(c, scratch, sizeof(scratch));
	}
	*is_string = false;
	start = c->p;
	while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ' ')
		c->p++;
	return number_text(start, (size_t)(c->p - start), v);
}

/* "S0-D1-C7" (core) or "S3" (socket): the numbers perf prints with
 * "S%d-D%d-C%d" and "S%d". */
static int entity_key(const char *s, struct perfstat_rec *r)
{
	int *slot[3] = { &r->socket, &r->die, &r->core };
	const char tag[3] = { 'S', 'D', 'C' };
	unsigned want = r->aggr == PERFSTAT_CORE ? 3 : 1;

	for (unsigned i = 0; i < want; i++) {
		char *end;
		long v;

		if (*s != tag[i] || s[1] < '0' || s[1] > '9')
			return -EINVAL;
		v = strtol(s + 1, &end, 10);
		if (v < 0 || v > 1 << 20)
			return -EINVAL;
		*slot[i] = (int)v;
		s = end;
		if (i + 1 < want && *s++ != '-')
			return -EINVAL;
	}
	return *s == '\0' ? 0 : -EINVAL;
}

static int cpu_key(const char *s, struct perfstat_rec *r)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v > 1 << 20)
		return -EINVAL;
	r->cpu = (int)v;
	return 0;
}

/* One field "key" : value of an object into @r (a key perf prints
 * twice: the last). */
static int field(struct cursor *c, struct perfstat_rec *r)
{
	char key[32], str[PERFSTAT_NAME_MAX];
	bool is_string = false;
	double v = NAN;
	int e;

	e = string(c, key, sizeof(key));
	if (e < 0 || !take(c, ':'))
		return -EINVAL;
	e = value(c, str, sizeof(str), &is_string, &v);
	if (e < 0)
		return e;
	if (strcmp(key, "interval") == 0) {
		if (is_string || !(v >= 0))
			return -EINVAL;
		r->interval = v;
	} else if (strcmp(key, "cpu") == 0) {
		r->aggr = PERFSTAT_CPU;
		return is_string ? cpu_key(str, r) : -EINVAL;
	} else if (strcmp(key, "core") == 0 || strcmp(key, "socket") == 0) {
		r->aggr = key[0] == 'c' ? PERFSTAT_CORE : PERFSTAT_SOCKET;
		return is_string ? entity_key(str, r) : -EINVAL;
	} else if (strcmp(key, "counter-value") == 0) {
		char *end;

		if (!is_string)
			return -EINVAL;
		r->has_count = true;
		r->count = strtod(str, &end);
		/* "<not counted>", "<not supported>": nothing counted. */
		if (end == str || *end != '\0')
			r->count = NAN;
	} else if (strcmp(key, "event") == 0) {
		if (!is_string)
			return -EINVAL;
		memcpy(r->event, str, strlen(str) + 1);
	} else if (strcmp(key, "pcnt-running") == 0) {
		if (is_string)
			return -EINVAL;
		r->running = v / 100;
	} else if (strcmp(key, "metric-value") == 0) {
		r->has_metric = true;
		if (is_string) {
			/* Later perf quotes it. */
			char *end;

			r->metric = strtod(str, &end);
			if (end == str || *end != '\0')
				r->metric = NAN;
		} else {
			r->metric = v;
		}
	} else if (strcmp(key, "metric-unit") == 0) {
		if (!is_string)
			return -EINVAL;
		memcpy(r->unit, str, strlen(str) + 1);
	}
	return 0;
}

static void rec_init(struct perfstat_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->cpu = r->socket = r->die = r->core = -1;
	r->count = r->running = r->metric = NAN;
	r->aggr = PERFSTAT_HOST;
}

int perfstat_parse_line(const char *line, size_t len, struct perfstat_rec *out, size_t max)
{
	struct cursor c = { line, line + len };
	size_t n = 0;
	int e;

	skip_space(&c);
	if (c.p >= c.end || *c.p != '{')
		return 0;
	while (c.p < c.end) {
		struct perfstat_rec r;
		bool first = true;

		if (take(&c, '{')) {
			rec_init(&r);
		} else if (n > 0 && c.p < c.end && *c.p == '"') {
			/* perf 6.1 glues a metric pair after an object's '}'
			 * (`...}"metric-value" : 3.1, "metric-unit" :
			 * "Machine Clears"}`): a record of the same entity and
			 * interval. */
			rec_init(&r);
			r.interval = out[n - 1].interval;
			r.aggr = out[n - 1].aggr;
			r.cpu = out[n - 1].cpu;
			r.socket = out[n - 1].socket;
			r.die = out[n - 1].die;
			r.core = out[n - 1].core;
		} else {
			break;
		}
		while (!take(&c, '}')) {
			if (!first && !take(&c, ','))
				return -EINVAL;
			first = false;
			e = field(&c, &r);
			if (e < 0)
				return e;
		}
		if (!(r.interval >= 0) || (!r.has_count && !r.has_metric))
			return -EINVAL;
		if (n == max)
			return -ENOBUFS;
		out[n++] = r;
		skip_space(&c);
	}
	skip_space(&c);
	return c.p == c.end ? (int)n : -EINVAL;
}

void perfstat_metric_name(const char *unit, char *name, size_t size)
{
	const char *end = unit + strlen(unit), *start;
	size_t n;

	while (end > unit && end[-1] == ' ')
		end--;
	start = end;
	while (start > unit && start[-1] != ' ')
		start--;
	n = (size_t)(end - start);
	if (size == 0)
		return;
	if (n == 0 || n >= size || (n == 6 && memcmp(start, "(null)", 6) == 0) || start == unit) {
		/* A unit of one word is a unit ("%"), not a metric. */
		name[0] = '\0';
		return;
	}
	memcpy(name, start, n);
	name[n] = '\0';
}
