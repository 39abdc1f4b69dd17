/* SPDX-License-Identifier: MIT */
/* parse: value parsers shared by the config file and the command line. */
#include "parse.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	uint64_t ns;
} duration_units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "ms", NSEC_PER_MSEC },
	{ "s", NSEC_PER_SEC },
	{ "m", 60 * NSEC_PER_SEC },
	{ "h", 3600 * NSEC_PER_SEC },
};

#define DURATION_HINT "expected a number with a unit (ns, us, ms, s, m, h), e.g. 500ms or 2s"

int parse_duration(const char *text, uint64_t *ns, char *err, size_t errlen)
{
	const char *p = text;
	uint64_t whole = 0, frac = 0, frac_scale = 1;
	bool digits = false;

	while (isdigit((unsigned char)*p)) {
		if (whole > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
			snprintf(err, errlen, "duration \"%s\" is too large", text);
			return -ERANGE;
		}
		whole = whole * 10 + (uint64_t)(*p++ - '0');
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			/* Digits beyond nanosecond precision are ignored. */
			if (frac_scale < NSEC_PER_SEC) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				frac_scale *= 10;
			}
			p++;
			digits = true;
		}
	}
	if (!digits) {
		snprintf(err, errlen, "invalid duration \"%s\": " DURATION_HINT, text);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++) {
		uint64_t unit = duration_units[i].ns;

		if (strcmp(p, duration_units[i].name) != 0)
			continue;
		/* frac * unit can exceed 64 bits (frac < 1e9, unit <= 3.6e12). */
		uint64_t fns = (uint64_t)((unsigned __int128)frac * unit / frac_scale);

		if (whole > (UINT64_MAX - fns) / unit) {
			snprintf(err, errlen, "duration \"%s\" is too large", text);
			return -ERANGE;
		}
		*ns = whole * unit + fns;
		return 0;
	}
	snprintf(err, errlen, "invalid duration \"%s\": %s", text,
		 *p ? "unknown unit; " DURATION_HINT : DURATION_HINT);
	return -EINVAL;
}

void format_duration(uint64_t ns, char *buf, size_t len)
{
	for (size_t i = sizeof(duration_units) / sizeof(duration_units[0]); i-- > 0;) {
		uint64_t unit = duration_units[i].ns;

		if (ns != 0 && ns % unit == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", ns / unit, duration_units[i].name);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64 "ns", ns);
}

int parse_bool(const char *text, bool *out, char *err, size_t errlen)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(text, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(text, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	snprintf(err, errlen, "invalid boolean \"%s\": expected true or false", text);
	return -EINVAL;
}

int parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out,
	       char *err, size_t errlen)
{
	uint64_t v = 0;
	const char *p = text;

	if (!isdigit((unsigned char)*p)) {
		snprintf(err, errlen, "invalid number \"%s\": expected an integer from %" PRIu64
			 " to %" PRIu64, text, min, max);
		return -EINVAL;
	}
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
			v = UINT64_MAX;
			break;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	while (isdigit((unsigned char)*p))
		p++;
	if (*p) {
		snprintf(err, errlen, "invalid number \"%s\": expected an integer from %" PRIu64
			 " to %" PRIu64, text, min, max);
		return -EINVAL;
	}
	if (v < min || v > max) {
		snprintf(err, errlen, "%s is out of range: expected an integer from %" PRIu64
			 " to %" PRIu64, text, min, max);
		return -ERANGE;
	}
	*out = v;
	return 0;
}

#define LISTEN_HINT "expected host:port, [ipv6]:port or unix:/absolute/path"

static int parse_port(const char *text, const char *whole, uint16_t *port,
		      char *err, size_t errlen)
{
	uint64_t v;
	char sub[128];

	if (parse_uint(text, 0, 65535, &v, sub, sizeof(sub)) < 0) {
		snprintf(err, errlen, "invalid port in \"%s\": expected 0 to 65535", whole);
		return -EINVAL;
	}
	*port = (uint16_t)v;
	return 0;
}

static bool valid_hostname(const char *h)
{
	if (!*h)
		return false;
	for (; *h; h++)
		if (!isalnum((unsigned char)*h) && *h != '.' && *h != '-' && *h != '_')
			return false;
	return true;
}

int parse_listen_addr(const char *text, struct listen_addr *out, char *err,
		      size_t errlen)
{
	const char *colon;
	size_t hostlen;

	memset(out, 0, sizeof(*out));
	if (strncmp(text, "unix:", 5) == 0) {
		const char *path = text + 5;

		if (path[0] != '/') {
			snprintf(err, errlen, "invalid address \"%s\": unix socket path must be absolute",
				 text);
			return -EINVAL;
		}
		if (strlen(path) >= LISTEN_PATH_MAX) {
			snprintf(err, errlen, "invalid address \"%s\": unix socket path longer than %d bytes",
				 text, LISTEN_PATH_MAX - 1);
			return -ERANGE;
		}
		out->kind = LISTEN_UNIX;
		strcpy(out->path, path);
		return 0;
	}

	out->kind = LISTEN_INET;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		struct in6_addr a6;

		if (!close || close[1] != ':') {
			snprintf(err, errlen, "invalid address \"%s\": " LISTEN_HINT, text);
			return -EINVAL;
		}
		hostlen = (size_t)(close - text - 1);
		if (hostlen == 0 || hostlen >= INET6_ADDRSTRLEN) {
			snprintf(err, errlen, "invalid IPv6 address in \"%s\"", text);
			return -EINVAL;
		}
		memcpy(out->host, text + 1, hostlen);
		out->host[hostlen] = '\0';
		if (inet_pton(AF_INET6, out->host, &a6) != 1) {
			snprintf(err, errlen, "invalid IPv6 address in \"%s\"", text);
			return -EINVAL;
		}
		out->ipv6_literal = true;
		return parse_port(close + 2, text, &out->port, err, errlen);
	}

	colon = strrchr(text, ':');
	if (!colon || colon == text) {
		snprintf(err, errlen, "invalid address \"%s\": " LISTEN_HINT, text);
		return -EINVAL;
	}
	hostlen = (size_t)(colon - text);
	if (hostlen >= LISTEN_HOST_MAX) {
		snprintf(err, errlen, "invalid address \"%s\": host name too long", text);
		return -ERANGE;
	}
	memcpy(out->host, text, hostlen);
	out->host[hostlen] = '\0';
	if (strchr(out->host, ':')) {
		snprintf(err, errlen, "invalid address \"%s\": write IPv6 addresses in brackets, e.g. [::1]:10412",
			 text);
		return -EINVAL;
	}
	if (!valid_hostname(out->host)) {
		snprintf(err, errlen, "invalid host in \"%s\": " LISTEN_HINT, text);
		return -EINVAL;
	}
	return parse_port(colon + 1, text, &out->port, err, errlen);
}

void format_listen_addr(const struct listen_addr *addr, char *buf, size_t len)
{
	if (addr->kind == LISTEN_UNIX)
		snprintf(buf, len, "unix:%s", addr->path);
	else if (addr->ipv6_literal)
		snprintf(buf, len, "[%s]:%u", addr->host, addr->port);
	else
		snprintf(buf, len, "%s:%u", addr->host, addr->port);
}
