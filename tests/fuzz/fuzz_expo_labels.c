/* SPDX-License-Identifier: MIT */
/* expo_render with label values from the input: the snapshot's pmu,
 * pmu_name, model and reason (reason texts quote sysfs contents and
 * errors) and the build's version and revision, rendered as Prometheus
 * text 0.0.4 and as OpenMetrics 1.0.0.
 *
 * Input: byte 0 picks the options (bits 0-1 granularity, bit 2 ratios,
 * bit 3 up, bit 4 level 1 instead of 2); the rest is split at NUL bytes
 * into pmu, pmu_name, model, reason, version, revision (truncated to the
 * snapshot's arrays).
 * Invariants: every line of the output parses as a comment (# HELP,
 * # TYPE, # EOF last in OpenMetrics only) or a sample: a metric name, an
 * optional {name="value",...} set whose values use only the \\ \" \n
 * escapes (so no raw newline or quote inside a value), a space and a
 * number; the whole output is UTF-8 without a control character but the
 * newlines (Prometheus refuses the whole scrape otherwise); the label
 * values of topdown_pmu_info and topdown_build_info unescape to exactly
 * the input strings as str_escape_text() writes them (bytes that are
 * not UTF-8 and control characters but newlines as the text \xNN).  The same snapshot's
 * JSON document (api_document) parses back and carries the same text. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>

#include "api.h"
#include "expo.h"
#include "fuzz_common.h"
#include "fuzz_snapshot.h"
#include "util.h"

enum { S_PMU, S_PMU_NAME, S_MODEL, S_REASON, S_VERSION, S_REVISION, S_COUNT };
static const char *const label_of[S_COUNT] = {
	"pmu", "pmu_name", "model", "reason", "version", "revision",
};

struct line_check {
	const char *fmt;
	const char *want[S_COUNT];
	unsigned lineno;
	unsigned seen_pmu_info, seen_build_info;
};

FUZZ_NO_COVERAGE static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A value as the exposition spells it: digits, '.', 'e', signs, Inf, NaN. */
FUZZ_NO_COVERAGE static bool number(const char *s, const char *end)
{
	char buf[64], *stop;
	size_t n = (size_t)(end - s);

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (!strcmp(buf, "+Inf") || !strcmp(buf, "-Inf") || !strcmp(buf, "NaN"))
		return true;
	strtod(buf, &stop);
	return *stop == '\0' && !isspace((unsigned char)buf[0]);
}

#define LINE_CHECK(c, cond, what) \
	FUZZ_CHECK(cond, "%s line %u: %s: \"%.*s\"", (c)->fmt, (c)->lineno, what, (int)(end - line), line)

/* One line, without its '\n'. */
FUZZ_NO_COVERAGE static void check_line(struct line_check *c, const char *line, const char *end, bool last,
		       bool openmetrics)
{
	const char *p = line, *name = line;
	size_t name_len;
	int info = -1; /* 0: topdown_pmu_info, 1: topdown_build_info */

	c->lineno++;
	if (*p == '#') {
		if (end - p == 5 && memcmp(p, "# EOF", 5) == 0) {
			LINE_CHECK(c, openmetrics && last, "# EOF not at the end of OpenMetrics");
			return;
		}
		LINE_CHECK(c, (end - p > 7 && memcmp(p, "# HELP ", 7) == 0) ||
			       (end - p > 7 && memcmp(p, "# TYPE ", 7) == 0), "unknown comment");
		return;
	}
	LINE_CHECK(c, p < end && (isalpha((unsigned char)*p) || *p == '_' || *p == ':'),
		   "no metric name");
	while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == ':'))
		p++;
	name_len = (size_t)(p - name);
	if (name_len == 16 && memcmp(name, "topdown_pmu_info", 16) == 0) {
		info = 0;
		c->seen_pmu_info++;
	} else if (name_len == 18 && memcmp(name, "topdown_build_info", 18) == 0) {
		info = 1;
		c->seen_build_info++;
	}
	if (p < end && *p == '{') {
		p++;
		for (;;) {
			const char *lname = p;
			size_t lname_len;
			char *value = fuzz_malloc((size_t)(end - p) + 1);
			size_t n = 0;

			LINE_CHECK(c, p < end && (isalpha((unsigned char)*p) || *p == '_'),
				   "no label name");
			while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
				p++;
			lname_len = (size_t)(p - lname);
			LINE_CHECK(c, end - p >= 2 && p[0] == '=' && p[1] == '"', "no =\" after label name");
			p += 2;
			for (;;) {
				LINE_CHECK(c, p < end, "label value not closed (raw newline?)");
				if (*p == '"')
					break;
				if (*p == '\\') {
					LINE_CHECK(c, p + 1 < end && (p[1] == '\\' || p[1] == '"' || p[1] == 'n'),
						   "bad escape in label value");
					value[n++] = p[1] == 'n' ? '\n' : p[1];
					p += 2;
					continue;
				}
				value[n++] = *p++;
			}
			value[n] = '\0';
			p++;
			for (int k = 0; info >= 0 && k < S_COUNT; k++) {
				if ((info == 0) != (k < S_VERSION) || strlen(label_of[k]) != lname_len ||
				    memcmp(label_of[k], lname, lname_len) != 0)
					continue;
				FUZZ_CHECK(strcmp(value, c->want[k]) == 0,
					   "%s: label %s unescapes to \"%s\", not \"%s\"", c->fmt,
					   label_of[k], value, c->want[k]);
			}
			free(value);
			LINE_CHECK(c, p < end && (*p == ',' || *p == '}'), "no , or } after label value");
			if (*p++ == '}')
				break;
		}
	}
	LINE_CHECK(c, p < end && *p == ' ', "no space before the value");
	p++;
	LINE_CHECK(c, number(p, end), "bad sample value");
}

FUZZ_NO_COVERAGE static void check_exposition(const struct buf *b, bool openmetrics, const char *const want[S_COUNT])
{
	struct line_check c = { openmetrics ? "OpenMetrics" : "text 0.0.4", { 0 }, 0, 0, 0 };
	const char *p = b->data, *stop = b->data + b->len;

	memcpy(c.want, want, sizeof(c.want));
	FUZZ_CHECK(b->len > 0 && b->data[b->len - 1] == '\n', "%s: no final newline", c.fmt);
	FUZZ_CHECK(memchr(b->data, '\0', b->len) == NULL, "%s: NUL byte in the output", c.fmt);
	for (size_t i = 0, n; i < b->len; i += n) {
		n = utf8_len((const unsigned char *)b->data + i);
		FUZZ_CHECK(n > 0 && (n > 1 || b->data[i] == '\n' ||
				     ((unsigned char)b->data[i] >= 0x20 && b->data[i] != 0x7f)),
			   "%s: byte %zu (0x%02x) is not UTF-8 text", c.fmt, i, (unsigned char)b->data[i]);
	}
	while (p < stop) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));

		check_line(&c, p, nl, nl + 1 == stop, openmetrics);
		p = nl + 1;
	}
	FUZZ_CHECK(c.seen_pmu_info == 1 && c.seen_build_info == 1, "%s: %u pmu_info, %u build_info",
		   c.fmt, c.seen_pmu_info, c.seen_build_info);
	if (openmetrics)
		FUZZ_CHECK(b->len >= 6 && memcmp(stop - 6, "# EOF\n", 6) == 0, "OpenMetrics without # EOF");
}

/* The JSON document carries the same strings, when JSON can. */
FUZZ_NO_COVERAGE static void check_json(const struct snapshot *snap)
{
	static const struct {
		const char *key;
		size_t off;
	} strs[] = {
		{ "name", offsetof(struct snap_pmu, name) },
		{ "pmu_name", offsetof(struct snap_pmu, pmu_name) },
		{ "model", offsetof(struct snap_pmu, model) },
		{ "reason", offsetof(struct snap_pmu, reason) },
	};
	struct api_query q;
	char err[128], *text;
	json_t *doc, *back, *pmu;
	json_error_t jerr;

	/* Host scope: the strings live at the top; fuzz_query covers the rest. */
	FUZZ_CHECK(api_parse_query(NULL, NULL, NULL, NULL, &q, err, sizeof(err)) == 0, "query: %s", err);
	doc = api_document(snap, &q, NULL, "fuzzhost", "0.0.0-fuzz");
	FUZZ_CHECK(doc != NULL, "api_document failed");
	text = api_dump(doc, false);
	FUZZ_CHECK(text != NULL, "api_dump failed");
	back = json_loads(text, 0, &jerr);
	FUZZ_CHECK(back != NULL, "api_dump output does not parse: %s", jerr.text);
	FUZZ_CHECK(json_equal(doc, back), "api_dump output parses into another document");
	pmu = json_object_get(back, "pmu");
	FUZZ_CHECK(json_is_object(pmu), "no pmu object");
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		const char *s = (const char *)&snap->pmus[0] + strs[i].off;
		json_t *v = json_object_get(pmu, strs[i].key);
		char want[4 * SNAP_REASON];

		str_escape_text(want, sizeof(want), s);
		if (s[0])
			FUZZ_CHECK(json_is_string(v) && strcmp(json_string_value(v), want) == 0,
				   "pmu.%s is not \"%s\"", strs[i].key, want);
	}
	json_decref(back);
	free(text);
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_snap fs;
	struct snapshot *s = &fs.snap;
	const char *want[S_COUNT];
	struct expo_options opt;
	char *parts[S_COUNT];
	struct buf out;
	size_t n;

	if (size == 0)
		return 0;
	fuzz_snapshot_init(&fs);
	n = fuzz_split(data + 1, size - 1, parts, S_COUNT);
	for (size_t i = n; i < S_COUNT; i++)
		parts[i] = "";
	copy_str(s->pmus[0].name, sizeof(s->pmus[0].name), parts[S_PMU]);
	copy_str(s->pmus[0].pmu_name, sizeof(s->pmus[0].pmu_name), parts[S_PMU_NAME]);
	copy_str(s->pmus[0].model, sizeof(s->pmus[0].model), parts[S_MODEL]);
	copy_str(s->pmus[0].reason, sizeof(s->pmus[0].reason), parts[S_REASON]);
	s->level = data[0] & 16 ? 1 : 2;
	s->pmus[0].level = s->level;
	s->up = data[0] & 8;
	opt = (struct expo_options){
		.granularity = (enum config_granularity)(data[0] & 3),
		.ratios = data[0] & 4,
		.version = parts[S_VERSION],
		.revision = parts[S_REVISION],
	};
	{
		const char *raw[S_COUNT] = {
			[S_PMU] = s->pmus[0].name,
			[S_PMU_NAME] = s->pmus[0].pmu_name,
			[S_MODEL] = s->pmus[0].model,
			[S_REASON] = s->pmus[0].reason[0] ? s->pmus[0].reason : s->reason,
			[S_VERSION] = opt.version,
			[S_REVISION] = opt.revision,
		};

		for (int k = 0; k < S_COUNT; k++) {
			size_t len = 4 * strlen(raw[k]) + 1;
			char *e = fuzz_malloc(len);

			str_escape_text(e, len, raw[k]);
			want[k] = e;
		}
	}

	for (int f = EXPO_TEXT; f <= EXPO_OPENMETRICS; f++) {
		buf_init(&out);
		FUZZ_CHECK(expo_render(s, &opt, (enum expo_format)f, &out) == 0, "expo_render failed");
		check_exposition(&out, f == EXPO_OPENMETRICS, want);
		buf_free(&out);
	}
	check_json(s);
	for (int k = 0; k < S_COUNT; k++)
		free((char *)(uintptr_t)want[k]);
	free(parts[0]);
	return 0;
}
