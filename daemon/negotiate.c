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

enum negotiate_format negotiate_format(const char *accept)
{
	double q_om = -1, q_text = -1;
	int pos_om = -1, pos_text = -1, pos = 0;
	char type[96], params[256], version[32];
	const char *p = accept;

	if (!accept)
		return NEGOTIATE_TEXT;
	while (next_element(&p, type, sizeof(type), params, sizeof(params))) {
		double q = quality(params);
		bool om = false, text = false;

		if (strcasecmp(type, "application/openmetrics-text") == 0) {
			const char *v = param(params, "version", version, sizeof(version));

			/* We speak OpenMetrics 1.0.0 (compatible with 0.0.1). */
			om = !v || strcmp(v, "1.0.0") == 0 || strcmp(v, "0.0.1") == 0;
		} else if (strcasecmp(type, "text/plain") == 0) {
			const char *v = param(params, "version", version, sizeof(version));

			text = !v || strcmp(v, "0.0.4") == 0;
		} else if (strcasecmp(type, "application/*") == 0) {
			om = true;
		} else if (strcasecmp(type, "text/*") == 0) {
			text = true;
		} else if (strcmp(type, "*/*") == 0) {
			om = text = true;
		}
		/* The most specific match decides; approximated by the best q,
		 * first position breaking ties. */
		if (om && q > q_om) {
			q_om = q;
			if (strcmp(type, "*/*") != 0)
				pos_om = pos;
		}
		if (text && q > q_text) {
			q_text = q;
			pos_text = pos;
		}
		pos++;
	}
	if (q_om <= 0)
		return NEGOTIATE_TEXT;
	if (q_om > q_text)
		return NEGOTIATE_OPENMETRICS;
	if (q_om == q_text && pos_om >= 0 && pos_om < pos_text)
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
