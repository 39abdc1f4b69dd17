/* SPDX-License-Identifier: MIT */
/* listen: the listening sockets of the HTTP server: created from [http]
 * listen addresses (IPv4, IPv6, unix), close-on-exec and non-blocking,
 * and described back as text for logs. */
#ifndef TOPDOWND_LISTEN_H
#define TOPDOWND_LISTEN_H

#include <stddef.h>

#include "parse.h"

/* Binds and listens on every address @addr resolves to, appending the
 * sockets to @fds (capacity @max, count in *@n).  On failure nothing is
 * left open and @err says what failed, naming the address. */
int listen_open(const struct listen_addr *addr, int *fds, size_t max, size_t *n,
		char *err, size_t errlen);

/* "127.0.0.1:10412", "[::1]:8080", "unix:/run/topdownd.sock", or "?". */
void listen_describe(int fd, char *buf, size_t len);

/* URL of a socket for log lines: "http://127.0.0.1:10412/". */
void listen_url(int fd, const char *scheme, char *buf, size_t len);

#endif
