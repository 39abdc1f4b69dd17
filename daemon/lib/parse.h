/* SPDX-License-Identifier: MIT */
/* parse: pure parsers for configuration and command-line values
 * (durations, booleans, integers, listen addresses).  No I/O, no logging;
 * errors are returned as -EINVAL/-ERANGE with a message for the operator. */
#ifndef TOPDOWND_PARSE_H
#define TOPDOWND_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NSEC_PER_SEC UINT64_C(1000000000)
#define NSEC_PER_MSEC UINT64_C(1000000)

/* "100ms", "1s", "1.5s", "2m", "1h", "250us", "10ns". */
int parse_duration(const char *text, uint64_t *ns, char *err, size_t errlen);
/* Formats @ns with the largest unit that keeps it exact: "1s", "100ms". */
void format_duration(uint64_t ns, char *buf, size_t len);

/* true/false, yes/no, on/off, 1/0 (case-insensitive). */
int parse_bool(const char *text, bool *out, char *err, size_t errlen);

/* Decimal unsigned integer in [min, max]. */
int parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out,
	       char *err, size_t errlen);

enum listen_kind {
	LISTEN_INET,
	LISTEN_UNIX,
};

#define LISTEN_HOST_MAX 256
#define LISTEN_PATH_MAX 108 /* sizeof(sun_path) */

struct listen_addr {
	enum listen_kind kind;
	char host[LISTEN_HOST_MAX]; /* without brackets; "" never */
	bool ipv6_literal;
	uint16_t port;
	char path[LISTEN_PATH_MAX];
};

/* "127.0.0.1:10412", "[::1]:10412", "host.example:80", "unix:/run/x.sock". */
int parse_listen_addr(const char *text, struct listen_addr *out, char *err,
		      size_t errlen);
/* Writes the address back in the syntax parse_listen_addr accepts. */
void format_listen_addr(const struct listen_addr *addr, char *buf, size_t len);

#endif
