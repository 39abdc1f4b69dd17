/* SPDX-License-Identifier: MIT */
/* webconfig: the web configuration file of Prometheus' exporters
 * (prometheus/exporter-toolkit, docs/web-configuration.md; node_exporter's
 * --web.config.file), so that the file a fleet already has for TLS and
 * basic authentication serves topdownd too:
 *
 *   tls_server_config:
 *     cert_file: server.crt
 *     key_file: server.key
 *     client_auth_type: RequireAndVerifyClientCert   # with client_ca_file
 *     client_ca_file: ca.crt
 *   basic_auth_users:
 *     prometheus: $2y$10$...                         # bcrypt, as htpasswd -B
 *
 * What topdownd does the same way is taken: the certificate and key, client
 * certificates checked against a CA (RequireAndVerifyClientCert), users
 * and bcrypt hashes, min_version TLS12 and max_version TLS13 (what it
 * serves anyway), http2 (it answers HTTP/1.1).  What it cannot do as the
 * toolkit does is refused with the line and the reason, never ignored: a
 * file asking for something that would not happen must not be accepted.
 * Relative paths are relative to the file's directory, as the toolkit
 * resolves them.  The parser is pure (the text, the directory). */
#ifndef TOPDOWND_WEBCONFIG_H
#define TOPDOWND_WEBCONFIG_H

#include <limits.h>
#include <stddef.h>

#include "config.h"

struct webconfig {
	char cert_file[PATH_MAX]; /* "" when no TLS */
	char key_file[PATH_MAX];
	char client_ca_file[PATH_MAX];
	/* basic_auth_users as a basic_auth_file holds them, "user:hash\n"
	 * per user (auth_db_parse), each on its line of the file (blank lines
	 * between), NULL when none; the line of basic_auth_users. */
	char *users;
	size_t users_len;
	unsigned users_line;
};

/* Parses @text (@len bytes) of the file @name, in directory @dir, into
 * @out (cleared first; webconfig_clear() frees it, also after an error).
 * Problems go to @diag as "NAME:LINE: message".  0 or -EINVAL. */
int webconfig_parse(const char *name, const char *dir, const char *text, size_t len,
		    struct webconfig *out, struct config_diag *diag);

/* Reads and parses @path. */
int webconfig_load(const char *path, struct webconfig *out, struct config_diag *diag);

void webconfig_clear(struct webconfig *wc);

#endif
