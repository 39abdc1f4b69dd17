/* SPDX-License-Identifier: MIT */
/* webconfig: exporter-toolkit's web configuration file (webconfig.h), read
 * with libyaml's document API (every node keeps its line). */
#include "webconfig.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util.h"

/* The largest web configuration read (node_exporter's are a few lines;
 * a thousand users fit). */
#define WEBCONFIG_FILE_MAX (256 * 1024)

struct wctx {
	const char *name, *dir;
	yaml_document_t *doc;
	struct config_diag *diag;
	struct webconfig *out;
	const char *client_auth; /* client_auth_type, NULL when not set */
	unsigned client_auth_line, tls_line, ca_line;
	unsigned tls_keys; /* keys seen in tls_server_config */
	unsigned users_lines; /* lines of out->users so far */
};

static unsigned line_of(const yaml_node_t *n)
{
	return (unsigned)n->start_mark.line + 1;
}

static void problem(struct wctx *x, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct wctx *x, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	config_diag_add(x->diag, false, x->name, n ? line_of(n) : 0, "%s", msg);
}

/* A scalar's text, NULL (and said) for anything else or a NUL inside. */
static const char *text_of(struct wctx *x, const yaml_node_t *n, const char *key)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE) {
		problem(x, n, "%s: expected a single value", key);
		return NULL;
	}
	s = (const char *)n->data.scalar.value;
	if (strlen(s) != n->data.scalar.length) {
		problem(x, n, "%s: a value with a NUL byte", key);
		return NULL;
	}
	return s;
}

/* A null value ("key:" with nothing, "~", "null"): the section is empty. */
static bool is_null(const yaml_node_t *n)
{
	const char *s = (const char *)n->data.scalar.value;

	return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!s[0] || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
		strcmp(s, "NULL") == 0);
}

/* An empty sequence or mapping, or null: a setting left at its default. */
static bool is_empty(const yaml_node_t *n)
{
	return is_null(n) ||
	       (n->type == YAML_SEQUENCE_NODE && n->data.sequence.items.top == n->data.sequence.items.start) ||
	       (n->type == YAML_MAPPING_NODE && n->data.mapping.pairs.top == n->data.mapping.pairs.start);
}

/* @path, relative to the file's directory as the toolkit resolves it. */
static void path_into(struct wctx *x, const yaml_node_t *n, const char *key, char *dst)
{
	const char *s = text_of(x, n, key);
	int len;

	if (!s)
		return;
	if (!s[0]) {
		dst[0] = '\0';
		return;
	}
	if (s[0] == '/' || !x->dir[0])
		len = snprintf(dst, PATH_MAX, "%s", s);
	else
		len = snprintf(dst, PATH_MAX, "%s%s%s", x->dir, x->dir[strlen(x->dir) - 1] == '/' ? "" : "/", s);
	if (len < 0 || len >= PATH_MAX) {
		problem(x, n, "%s: path longer than %d bytes", key, PATH_MAX - 1);
		dst[0] = '\0';
	}
}

/* @k: the key's node, whose line problems of the key name (a block
 * value starts on the next line). */
static void tls_key(struct wctx *x, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct webconfig *o = x->out;
	const char *s;

	if (strcmp(key, "cert_file") == 0) {
		path_into(x, v, key, o->cert_file);
	} else if (strcmp(key, "key_file") == 0) {
		path_into(x, v, key, o->key_file);
	} else if (strcmp(key, "client_ca_file") == 0) {
		path_into(x, v, key, o->client_ca_file);
		x->ca_line = line_of(v);
	} else if (strcmp(key, "client_auth_type") == 0) {
		x->client_auth = text_of(x, v, key);
		x->client_auth_line = line_of(v);
	} else if (strcmp(key, "cert") == 0 || strcmp(key, "key") == 0 || strcmp(key, "client_ca") == 0) {
		if (!is_empty(v))
			problem(x, k, "tls_server_config: %s: certificates and keys written in the file are not "
				"supported by topdownd: put it in a file and name it with %s_file", key, key);
	} else if (strcmp(key, "min_version") == 0) {
		s = text_of(x, v, key);
		if (s && strcmp(s, "TLS12") != 0)
			problem(x, v, "tls_server_config: min_version: %s is not supported by topdownd, which "
				"serves TLS 1.2 and 1.3: TLS12 or leave it out", s);
	} else if (strcmp(key, "max_version") == 0) {
		s = text_of(x, v, key);
		if (s && strcmp(s, "TLS13") != 0)
			problem(x, v, "tls_server_config: max_version: %s is not supported by topdownd, which "
				"serves TLS 1.2 and 1.3: TLS13 or leave it out", s);
	} else if (strcmp(key, "prefer_server_cipher_suites") == 0) {
		text_of(x, v, key); /* a preference: GnuTLS' order is the server's */
	} else if (strcmp(key, "cipher_suites") == 0 || strcmp(key, "curve_preferences") == 0 ||
		   strcmp(key, "client_allowed_sans") == 0) {
		if (!is_empty(v))
			problem(x, k, "tls_server_config: %s is not supported by topdownd (it uses GnuTLS' "
				"defaults and checks client certificates against client_ca_file only): "
				"leave it out", key);
	} else {
		problem(x, k, "tls_server_config: unknown key \"%s\": expected cert_file, key_file, "
			"client_auth_type, client_ca_file, min_version, max_version", key);
	}
}

static void http_key(struct wctx *x, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	if (strcmp(key, "http2") == 0) {
		text_of(x, v, key); /* topdownd answers HTTP/1.1, which every client speaks */
	} else if (strcmp(key, "headers") == 0) {
		if (!is_empty(v))
			problem(x, k, "http_server_config: headers are not supported by topdownd: leave them out");
	} else {
		problem(x, k, "http_server_config: unknown key \"%s\": expected http2 or headers", key);
	}
}

/* basic_auth_users: NAME: HASH, as "NAME:HASH\n" lines for auth_db_parse. */
static void user(struct wctx *x, const char *name, yaml_node_t *k, yaml_node_t *v)
{
	struct webconfig *o = x->out;
	const char *hash = text_of(x, v, name);
	size_t need;
	char *grown;

	if (!hash)
		return;
	if (strpbrk(name, ":\n") || strchr(hash, '\n')) {
		problem(x, k, "basic_auth_users: user \"%s\": a name with ':' or a line break cannot be checked", name);
		return;
	}
	/* Each on its own line of the file, blank lines before it, so that
	 * what auth_db_parse says of it is FILE:LINE of the file. */
	if (line_of(k) <= x->users_lines) {
		problem(x, k, "basic_auth_users: user \"%s\": write one user per line", name);
		return;
	}
	need = o->users_len + (line_of(k) - x->users_lines - 1) + strlen(name) + strlen(hash) + 3;
	grown = realloc(o->users, need);
	if (!grown) {
		problem(x, k, "basic_auth_users: out of memory");
		return;
	}
	o->users = grown;
	while (x->users_lines + 1 < line_of(k)) {
		o->users[o->users_len++] = '\n';
		x->users_lines++;
	}
	o->users_len += (size_t)sprintf(o->users + o->users_len, "%s:%s\n", name, hash);
	x->users_lines++;
}

/* Each pair of mapping @m: its key's text and its value. */
static void each(struct wctx *x, yaml_node_t *m, const char *section,
		 void (*fn)(struct wctx *, const char *, yaml_node_t *, yaml_node_t *))
{
	if (is_null(m))
		return;
	if (m->type != YAML_MAPPING_NODE) {
		problem(x, m, "%s: expected keys and values", section);
		return;
	}
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(x->doc, p->value);
		const char *key = k ? text_of(x, k, section) : NULL;

		if (key && v)
			fn(x, key, k, v);
	}
}

static void tls_pair(struct wctx *x, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	x->tls_keys++;
	tls_key(x, key, k, v);
}

static void http_pair(struct wctx *x, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	http_key(x, key, k, v);
}

static void top_pair(struct wctx *x, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	if (strcmp(key, "tls_server_config") == 0) {
		x->tls_line = line_of(k);
		each(x, v, key, tls_pair);
	} else if (strcmp(key, "http_server_config") == 0) {
		each(x, v, key, http_pair);
	} else if (strcmp(key, "basic_auth_users") == 0) {
		x->out->users_line = line_of(k);
		each(x, v, key, user);
	} else {
		problem(x, k, "unknown key \"%s\": expected tls_server_config, http_server_config or "
			"basic_auth_users", key);
	}
}

/* What the toolkit refuses, and what topdownd's TLS needs. */
static void check_tls(struct wctx *x)
{
	struct webconfig *o = x->out;
	const char *auth = x->client_auth ? x->client_auth : "";

	/* An empty tls_server_config is TLS off, as for the toolkit. */
	if (!o->cert_file[0] != !o->key_file[0] || (x->tls_keys && !o->cert_file[0]))
		config_diag_add(x->diag, false, x->name, x->tls_line, "tls_server_config: missing %s",
				o->cert_file[0] ? "key_file" : "cert_file");
	if (strcmp(auth, "RequireAndVerifyClientCert") == 0) {
		if (!o->client_ca_file[0])
			config_diag_add(x->diag, false, x->name, x->client_auth_line,
					"tls_server_config: client_auth_type RequireAndVerifyClientCert needs "
					"client_ca_file (the CAs client certificates are checked against)");
	} else if (!auth[0] || strcmp(auth, "NoClientCert") == 0) {
		/* The toolkit's own rule. */
		if (o->client_ca_file[0])
			config_diag_add(x->diag, false, x->name, x->ca_line,
					"tls_server_config: client_ca_file without client_auth_type "
					"RequireAndVerifyClientCert (Client CA's have been configured without a "
					"Client Auth Policy)");
	} else if (strcmp(auth, "RequestClientCert") == 0 || strcmp(auth, "RequireClientCert") == 0 ||
		   strcmp(auth, "RequireAnyClientCert") == 0 || strcmp(auth, "VerifyClientCertIfGiven") == 0) {
		config_diag_add(x->diag, false, x->name, x->client_auth_line,
				"tls_server_config: client_auth_type %s is not supported by topdownd: "
				"RequireAndVerifyClientCert (with client_ca_file) or NoClientCert", auth);
	} else {
		config_diag_add(x->diag, false, x->name, x->client_auth_line,
				"tls_server_config: client_auth_type: invalid ClientAuth \"%s\"", auth);
	}
}

void webconfig_clear(struct webconfig *wc)
{
	free(wc->users);
	memset(wc, 0, sizeof(*wc));
}

int webconfig_parse(const char *name, const char *dir, const char *text, size_t len,
		    struct webconfig *out, struct config_diag *diag)
{
	struct wctx x = { .name = name, .dir = dir ? dir : "", .diag = diag, .out = out };
	size_t errors = diag->n_errors;
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;

	memset(out, 0, sizeof(*out));
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		config_diag_add(diag, false, name, (unsigned)parser.problem_mark.line + 1, "not YAML: %s%s%s",
				parser.problem ? parser.problem : "syntax error",
				parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	x.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	/* An empty file: no TLS, no users, as the toolkit reads it. */
	if (root)
		each(&x, root, "the file", top_pair);
	check_tls(&x);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return diag->n_errors > errors ? -EINVAL : 0;
}

int webconfig_load(const char *path, struct webconfig *out, struct config_diag *diag)
{
	char *buf = NULL, dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len = 0;
	int r;

	memset(out, 0, sizeof(*out));
	r = read_file(path, WEBCONFIG_FILE_MAX, &buf, &len);
	if (r < 0) {
		config_diag_add(diag, false, path, 0, "cannot open: %s", r == -EFBIG ? "larger than 256 KiB"
									      : read_file_strerror(r));
		return r;
	}
	str_printf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
	if (slash == path)
		str_printf(dir, sizeof(dir), "/");
	r = webconfig_parse(path, slash ? dir : ".", buf, len, out, diag);
	free(buf);
	return r;
}
