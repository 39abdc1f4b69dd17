/* SPDX-License-Identifier: MIT */
/* negotiate: Accept and Accept-Encoding parsing. */
#include "negotiate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Walks one comma-separated element: returns its media type (trimmed, in
 * @type) and its parameters (in @params), advancing *p past it. */
static bool next_element(const char **p, char *type, size_t tlen, char *params, size_t plen)
{
	const char *s = *p, *end, *semi;
	size_t n;

	while (*s == ',' || isspace((unsigned char)*s))
		s++;
	if (!*s)
		return false;
	end = strchr(s, ',');
	if (!end)
		end = s + strlen(s);
	*p = end;
	semi = memchr(s, ';', (size_t)(end - s));
	n = (size_t)((semi ? semi : end) - s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= tlen)
		n = tlen - 1;
	memcpy(type, s, n);
	type[n] = '\0';
	n = semi ? (size_t)(end - semi) : 0;
	if (n >= plen)
		n = plen - 1;
	if (semi)
		memcpy(params, semi, n);
	params[n] = '\0';
	return true;
}

/* Value of parameter @name in ";a=b; q=0.5", or NULL.  Writes into @out. */
static const char *param(const char *params, const char *name, char *out, size_t len)
{
	size_t nlen = strlen(name);
	const char *s = params;

	while ((s = strchr(s, ';'))) {
		size_t n = 0;

		s++;
		while (isspace((unsigned char)*s))
			s++;
		if (strncasecmp(s, name, nlen) == 0 && s[nlen] == '=') {
			s += nlen + 1;
			if (*s == '"')
				s++;
			while (s[n] && s[n] != ';' && s[n] != '"' && !isspace((unsigned char)s[n]) &&
			       n + 1 < len) {
				out[n] = s[n];
				n++;
			}
			out[n] = '\0';
			return out;
		}
	}
	return NULL;
}

/* q in [0,1]; a malformed q counts as 0 (RFC: ignore the element). */
static double quality(const char *params)
{
	char v[16], *end;
	double q;

	if (!param(params, "q", v, sizeof(v)))
		return 1.0;
	q = strtod(v, &end);
	if (end == v || *end || q < 0 || q > 1)
		return 0;
	return q;
}

/* The q-value a format gets from the most specific media range that
 * matches it (RFC 9110 section 12.5.1): exact type (2) over type/ * (1)
 * over * / * (0); among equally specific ranges the best q. */
struct pick {
	double q;
	int spec;
	int pos; /* position of the range that set q; -1: the full wildcard */
};

static void consider(struct pick *p, double q, int spec, int pos)
{
	if (spec > p->spec || (spec == p->spec && q > p->q)) {
		p->q = q;
		p->spec = spec;
		p->pos = pos;
	}
}

enum negotiate_format negotiate_format(const char *accept)
{
	struct pick om = { -1, -1, -1 }, text = { -1, -1, -1 };
	char type[96], params[256], version[32];
	const char *p = accept;
	int pos = 0;

	if (!accept)
		return NEGOTIATE_TEXT;
	while (next_element(&p, type, sizeof(type), params, sizeof(params))) {
		double q = quality(params);

		if (strcasecmp(type, "application/openmetrics-text") == 0) {
			const char *v = param(params, "version", version, sizeof(version));

			/* We speak OpenMetrics 1.0.0 (compatible with 0.0.1). */
			if (!v || strcmp(v, "1.0.0") == 0 || strcmp(v, "0.0.1") == 0)
				consider(&om, q, 2, pos);
		} else if (strcasecmp(type, "text/plain") == 0) {
			const char *v = param(params, "version", version, sizeof(version));

			if (!v || strcmp(v, "0.0.4") == 0)
				consider(&text, q, 2, pos);
		} else if (strcasecmp(type, "application/*") == 0) {
			consider(&om, q, 1, pos);
		} else if (strcasecmp(type, "text/*") == 0) {
			consider(&text, q, 1, pos);
		} else if (strcmp(type, "*/*") == 0) {
			consider(&om, q, 0, -1);
			consider(&text, q, 0, pos);
		}
		pos++;
	}
	/* The full wildcard alone never selects OpenMetrics. */
	if (om.q <= 0 || om.pos < 0)
		return NEGOTIATE_TEXT;
	if (om.q > text.q)
		return NEGOTIATE_OPENMETRICS;
	if (om.q == text.q && om.pos < text.pos)
		return NEGOTIATE_OPENMETRICS;
	return NEGOTIATE_TEXT;
}

bool negotiate_gzip(const char *accept_encoding)
{
	char type[64], params[128];
	const char *p = accept_encoding;
	double q_gzip = -1, q_any = -1;

	if (!accept_encoding)
		return false;
	while (next_element(&p, type, sizeof(type), params, sizeof(params))) {
		double q = quality(params);

		if (strcasecmp(type, "gzip") == 0 || strcasecmp(type, "x-gzip") == 0)
			q_gzip = q > q_gzip ? q : q_gzip;
		else if (strcmp(type, "*") == 0)
			q_any = q;
	}
	if (q_gzip >= 0)
		return q_gzip > 0;
	return q_any > 0;
}
