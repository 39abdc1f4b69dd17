/* SPDX-License-Identifier: MIT */
/* config: key table, defaults, libinih-driven parsing and printing. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum key_type {
	KEY_DURATION,
	KEY_CPUS,
	KEY_UINT,
	KEY_CHOICE,
	KEY_BOOL,
	KEY_LISTEN,
	KEY_PATH,
	KEY_GLOBS,
	KEY_PERCENT,
};

struct choice {
	const char *name;
	int value;
};

struct key_desc {
	const char *section;
	const char *name;
	enum key_type type;
	size_t offset, size; /* the field of struct config (FIELD) */
	uint64_t min, max;
	const struct choice *choices; /* NULL-name terminated */
	const char *def;
	/* A value that is valid but worth a warning: writes it, else "". */
	void (*warn)(const struct config *cfg, const char *value, char *buf, size_t len);
};

static const struct choice model_choices[] = {
	{ "perf", MODEL_PERF }, { "hardware", MODEL_HARDWARE }, { NULL, 0 }
};
static const struct choice gran_choices[] = {
	{ "cpu", GRAN_CPU }, { "core", GRAN_CORE }, { "package", GRAN_PACKAGE },
	{ "system", GRAN_SYSTEM }, { NULL, 0 }
};
static const struct choice trigger_choices[] = {
	{ "auto", CG_TRIGGER_AUTO }, { "cgroup-switches", CG_TRIGGER_SWITCHES },
	{ "sched_switch", CG_TRIGGER_SCHED_SWITCH }, { NULL, 0 }
};
static const struct choice sharing_choices[] = {
	{ "yield", SHARING_YIELD }, { "share", SHARING_SHARE }, { NULL, 0 }
};
static const struct choice smt_choices[] = {
	{ "auto", SMT_AUTO }, { "on", SMT_ON }, { "off", SMT_OFF }, { NULL, 0 }
};
static const struct choice log_choices[] = {
	{ "error", LOG_LEVEL_ERROR }, { "warning", LOG_LEVEL_WARNING },
	{ "info", LOG_LEVEL_INFO }, { "debug", LOG_LEVEL_DEBUG },
	/* node_exporter's and Prometheus' spelling (--log.level=warn). */
	{ "warn", LOG_LEVEL_WARNING }, { NULL, 0 }
};
static const struct choice log_format_choices[] = {
	{ "text", LOG_FORMAT_TEXT }, { "logfmt", LOG_FORMAT_LOGFMT }, { "json", LOG_FORMAT_JSON }, { NULL, 0 }
};

#define OFF(field) offsetof(struct config, field)
#define FIELD(field) OFF(field), sizeof(((struct config *)0)->field)
#define MS NSEC_PER_MSEC
#define SEC NSEC_PER_SEC

/* Beyond this the metric bytes lose precision (reference page). */
#define INTERVAL_PRECISION_NS (5 * SEC)

static void interval_warning(const struct config *cfg, const char *value, char *buf, size_t len)
{
	if (cfg->interval_ns > INTERVAL_PRECISION_NS)
		snprintf(buf, len, "interval %s is longer than 5s: the 8-bit TopDown metrics lose precision "
			 "between reads", value);
}

/* The single description of every key: defaults are text parsed by the
 * same code as the file, so the table cannot disagree with itself. */
static const struct key_desc keys[] = {
	{ "collect", "interval", KEY_DURATION, FIELD(interval_ns), 10 * MS, 60 * SEC, NULL, "1s",
	  interval_warning },
	{ "collect", "cpus", KEY_CPUS, FIELD(cpus), 0, 0, NULL, "all", NULL },
	{ "collect", "level", KEY_UINT, FIELD(level), 1, 6, NULL, "2", NULL },
	{ "collect", "drilldown", KEY_BOOL, FIELD(drilldown), 0, 0, NULL, "false", NULL },
	{ "collect", "depth_multiplex", KEY_BOOL, FIELD(depth_multiplex), 0, 0, NULL, "false", NULL },
	{ "collect", "model", KEY_CHOICE, FIELD(model), 0, 0, model_choices, "perf", NULL },
	{ "collect", "count_kernel", KEY_BOOL, FIELD(count_kernel), 0, 0, NULL, "true", NULL },
	{ "collect", "count_guest", KEY_BOOL, FIELD(count_guest), 0, 0, NULL, "false", NULL },
	{ "collect", "history", KEY_DURATION, FIELD(history_ns), 60 * SEC, 86400 * SEC, NULL, "15m", NULL },
	{ "collect", "pmu_sharing", KEY_CHOICE, FIELD(pmu_sharing), 0, 0, sharing_choices, "yield", NULL },
	{ "collect", "smt", KEY_CHOICE, FIELD(smt), 0, 0, smt_choices, "auto", NULL },
	{ "metrics", "granularity", KEY_CHOICE, FIELD(granularity), 0, 0, gran_choices, "package", NULL },
	{ "metrics", "ratios", KEY_BOOL, FIELD(ratios), 0, 0, NULL, "true", NULL },
	{ "http", "listen", KEY_LISTEN, FIELD(listen), 0, 0, NULL, "[::]:10412", NULL },
	{ "http", "tls_cert", KEY_PATH, FIELD(tls_cert), 0, 0, NULL, "", NULL },
	{ "http", "tls_key", KEY_PATH, FIELD(tls_key), 0, 0, NULL, "", NULL },
	{ "http", "tls_client_ca", KEY_PATH, FIELD(tls_client_ca), 0, 0, NULL, "", NULL },
	{ "http", "basic_auth_file", KEY_PATH, FIELD(basic_auth_file), 0, 0, NULL, "", NULL },
	{ "http", "web_config_file", KEY_PATH, FIELD(web_config_file), 0, 0, NULL, "", NULL },
	{ "http", "allow_plaintext", KEY_BOOL, FIELD(allow_plaintext), 0, 0, NULL, "false", NULL },
	{ "http", "allow_unauthenticated", KEY_BOOL, FIELD(allow_unauthenticated), 0, 0, NULL, "false", NULL },
	{ "http", "max_connections", KEY_UINT, FIELD(max_connections), 1, 65536, NULL, "4096", NULL },
	{ "http", "timeout", KEY_DURATION, FIELD(timeout_ns), 1 * SEC, 3600 * SEC, NULL, "10s", NULL },
	{ "http", "unhealthy_after", KEY_DURATION, FIELD(unhealthy_after_ns), 1 * SEC, 86400 * SEC, NULL, "1m", NULL },
	{ "log", "level", KEY_CHOICE, FIELD(log_level), 0, 0, log_choices, "info", NULL },
	{ "log", "format", KEY_CHOICE, FIELD(log_format), 0, 0, log_format_choices, "text", NULL },
	{ "cgroups", "enabled", KEY_BOOL, FIELD(cgroups_enabled), 0, 0, NULL, "false", NULL },
	{ "cgroups", "root", KEY_PATH, FIELD(cgroups_root), 0, 0, NULL, "", NULL },
	{ "cgroups", "track", KEY_GLOBS, FIELD(cgroups_track), 0, 0, NULL,
	  "system.slice/*.service @pods", NULL },
	{ "cgroups", "max_cgroups", KEY_UINT, FIELD(cgroups_max), 1, 4096, NULL, "200", NULL },
	{ "cgroups", "level", KEY_UINT, FIELD(cgroups_level), 1, 2, NULL, "1", NULL },
	{ "cgroups", "budget", KEY_PERCENT, FIELD(cgroups_budget), 0, 0, NULL, "1%", NULL },
	{ "cgroups", "trigger", KEY_CHOICE, FIELD(cgroups_trigger), 0, 0, trigger_choices, "auto", NULL },
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static const char *const sections[] = { "collect", "metrics", "http", "log", "cgroups" };
#define N_SECTIONS (sizeof(sections) / sizeof(sections[0]))

static void *field(struct config *cfg, const struct key_desc *k)
{
	return (char *)cfg + k->offset;
}

static const void *cfield(const struct config *cfg, const struct key_desc *k)
{
	return (const char *)cfg + k->offset;
}

static void choices_text(const struct choice *c, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; c[i].name; i++) {
		const char *sep = i == 0 ? "" : c[i + 1].name ? ", " : " or ";
		int n = snprintf(buf + used, len - used, "%s%s", sep, c[i].name);

		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

static int set_listen(struct config *cfg, const char *value, char *err, size_t errlen)
{
	char copy[4096];
	char *save = NULL;
	size_t n = 0;

	if (strlen(value) >= sizeof(copy)) {
		snprintf(err, errlen, "value too long");
		return -EINVAL;
	}
	strcpy(copy, value);
	for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		struct listen_addr addr;
		int r;

		if (n == CONFIG_LISTEN_MAX) {
			snprintf(err, errlen, "more than %d addresses", CONFIG_LISTEN_MAX);
			return -ERANGE;
		}
		r = parse_listen_addr(tok, &addr, err, errlen);
		if (r < 0)
			return r;
		for (size_t i = 0; i < n; i++) {
			char a[512], b[512];

			format_listen_addr(&cfg->listen[i], a, sizeof(a));
			format_listen_addr(&addr, b, sizeof(b));
			if (strcmp(a, b) == 0) {
				snprintf(err, errlen, "address %s is listed twice", tok);
				return -EINVAL;
			}
		}
		cfg->listen[n++] = addr;
	}
	if (n == 0) {
		snprintf(err, errlen, "expected at least one address (host:port, [ipv6]:port or unix:/path)");
		return -EINVAL;
	}
	cfg->n_listen = n;
	return 0;
}

/* [cgroups] track presets: a word for the globs of the kubelet's cgroups,
 * with either cgroup driver (cgroup/kubepath.h has their shapes).  They
 * are the configuration language's, expanded where a line is read, so that
 * an unknown one fails --check-config and a reload like any bad value (the
 * library cannot ask cgroup/); test_kubepath.c's test_presets holds them to
 * what kube_parse says of the same paths. */
static const struct {
	const char *name, *globs;
} track_presets[] = {
	{ "@pods", "kubepods.slice/kubepods-pod*.slice kubepods.slice/*/kubepods-*-pod*.slice kubepods/pod* kubepods/*/pod*" },
	{ "@containers", "kubepods.slice/kubepods-pod*.slice/*.scope kubepods.slice/*/kubepods-*-pod*.slice/*.scope "
			 "kubepods/pod*/* kubepods/*/pod*/*" },
};

static int add_glob(struct config *cfg, unsigned *n, const char *tok, char *err, size_t errlen)
{
	while (*tok == '/')
		tok++;
	if (!*tok || strstr(tok, "..") || strlen(tok) >= CONFIG_GLOB_MAX) {
		snprintf(err, errlen, "\"%s\" is not a cgroup path glob: expected one like "
			 "system.slice/*.service, under %u characters, without ..", tok,
			 CONFIG_GLOB_MAX);
		return -EINVAL;
	}
	if (*n == CONFIG_TRACK_MAX) {
		snprintf(err, errlen, "more than %u globs", CONFIG_TRACK_MAX);
		return -ERANGE;
	}
	strcpy(cfg->cgroups_track[(*n)++], tok);
	return 0;
}

/* @tok's globs: a preset's, or @tok itself. */
static int add_globs(struct config *cfg, unsigned *n, const char *tok, char *err, size_t errlen)
{
	char copy[CONFIG_GLOB_MAX * 4], *save = NULL;
	int r = 0;

	if (tok[0] != '@')
		return add_glob(cfg, n, tok, err, errlen);
	for (size_t i = 0; i < sizeof(track_presets) / sizeof(track_presets[0]); i++) {
		if (strcmp(tok, track_presets[i].name) != 0)
			continue;
		snprintf(copy, sizeof(copy), "%s", track_presets[i].globs);
		for (char *g = strtok_r(copy, " ", &save); g && r == 0; g = strtok_r(NULL, " ", &save))
			r = add_glob(cfg, n, g, err, errlen);
		return r;
	}
	snprintf(err, errlen, "unknown preset \"%s\": @pods (one series per Kubernetes pod) or "
		 "@containers (one per container)", tok);
	return -EINVAL;
}


/* Globs of cgroup paths, relative to the cgroup root, blank-separated;
 * presets (@pods) stand for theirs. */
static int set_globs(struct config *cfg, const char *value, char *err, size_t errlen)
{
	char copy[CONFIG_TRACK_MAX * CONFIG_GLOB_MAX], *save = NULL;
	unsigned n = 0;
	int r;

	if (strlen(value) >= sizeof(copy)) {
		snprintf(err, errlen, "too long: at most %u globs of %u characters", CONFIG_TRACK_MAX,
			 CONFIG_GLOB_MAX - 1);
		return -ERANGE;
	}
	strcpy(copy, value);
	for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		r = add_globs(cfg, &n, tok, err, errlen);
		if (r < 0)
			return r;
	}
	if (!n) {
		snprintf(err, errlen, "no glob: expected cgroup paths like system.slice/*.service");
		return -EINVAL;
	}
	cfg->n_cgroups_track = n;
	return 0;
}

/* "1%", "0.5%": a share of one CPU, stored as a fraction. */
static int set_percent(double *out, const char *value, char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (end == value || strcmp(end, "%") != 0 || errno || !(v >= 0.01 && v <= 100)) {
		snprintf(err, errlen, "invalid percentage \"%s\": expected 0.01%% to 100%%, like 1%%",
			 value);
		return -EINVAL;
	}
	*out = v / 100;
	return 0;
}

static int set_key(struct config *cfg, const struct key_desc *k, const char *value,
		   char *err, size_t errlen)
{
	char lo[32], hi[32], list[128];
	uint64_t u;
	int r;

	switch (k->type) {
	case KEY_DURATION:
		r = parse_duration(value, &u, err, errlen);
		if (r < 0)
			return r;
		if (u < k->min || u > k->max) {
			format_duration(k->min, lo, sizeof(lo));
			format_duration(k->max, hi, sizeof(hi));
			snprintf(err, errlen, "%s is out of range: expected %s to %s", value, lo, hi);
			return -ERANGE;
		}
		*(uint64_t *)field(cfg, k) = u;
		return 0;
	case KEY_CPUS:
		if (strcmp(value, "all") == 0) {
			cfg->cpus_all = true;
			cpuset_zero(&cfg->cpus);
			return 0;
		}
		r = cpuset_parse(value, &cfg->cpus, list, sizeof(list));
		if (r < 0) {
			snprintf(err, errlen, "invalid CPU list \"%s\": %s; expected all or a list like 0-15,32-47",
				 value, list);
			return r;
		}
		if (cpuset_empty(&cfg->cpus)) {
			snprintf(err, errlen, "empty CPU list: expected all or a list like 0-15,32-47");
			return -EINVAL;
		}
		cfg->cpus_all = false;
		return 0;
	case KEY_UINT:
		r = parse_uint(value, k->min, k->max, &u, err, errlen);
		if (r < 0)
			return r;
		if (k->size == sizeof(unsigned))
			*(unsigned *)field(cfg, k) = (unsigned)u;
		else
			*(uint64_t *)field(cfg, k) = u;
		return 0;
	case KEY_CHOICE:
		for (size_t i = 0; k->choices[i].name; i++) {
			if (strcmp(value, k->choices[i].name) == 0) {
				*(int *)field(cfg, k) = k->choices[i].value;
				return 0;
			}
		}
		choices_text(k->choices, list, sizeof(list));
		snprintf(err, errlen, "invalid value \"%s\": expected %s", value, list);
		return -EINVAL;
	case KEY_BOOL:
		return parse_bool(value, (bool *)field(cfg, k), err, errlen);
	case KEY_LISTEN:
		return set_listen(cfg, value, err, errlen);
	case KEY_GLOBS:
		return set_globs(cfg, value, err, errlen);
	case KEY_PERCENT:
		return set_percent((double *)field(cfg, k), value, err, errlen);
	case KEY_PATH:
		if (value[0] && value[0] != '/') {
			snprintf(err, errlen, "\"%s\" is not an absolute path", value);
			return -EINVAL;
		}
		if (strlen(value) >= PATH_MAX) {
			snprintf(err, errlen, "path too long");
			return -ERANGE;
		}
		strcpy((char *)field(cfg, k), value);
		return 0;
	}
	return -EINVAL;
}

void config_defaults(struct config *cfg)
{
	char err[256];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < N_KEYS; i++) {
		int r = set_key(cfg, &keys[i], keys[i].def, err, sizeof(err));

		/* The table's defaults are checked by the unit tests. */
		if (r < 0)
			abort();
	}
}

/* ---- parsing ---- */

struct parse_ctx {
	const char *name;
	const char *text;
	size_t len;
	size_t pos;
	unsigned line;
	bool section_known;
	bool saw_section;
	struct config *cfg;
	struct config_diag *diag;
	unsigned set_on_line[N_KEYS];
	bool path_failed; /* a path did not parse: no check of which go together */
};

void config_diag_add(struct config_diag *diag, bool warning, const char *name,
		     unsigned line, const char *fmt, ...)
{
	struct config_diag_entry *e;
	char msg[400];
	va_list ap;

	if (!warning)
		diag->n_errors++;
	if (diag->n == CONFIG_DIAG_MAX) {
		diag->dropped++;
		return;
	}
	e = &diag->entries[diag->n++];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e->warning = warning;
	e->line = line;
	if (line)
		snprintf(e->text, sizeof(e->text), "%s:%u: %s%s", name, line,
			 warning ? "warning: " : "", msg);
	else
		snprintf(e->text, sizeof(e->text), "%s: %s%s", name,
			 warning ? "warning: " : "", msg);
}

static bool section_is_known(const char *s)
{
	for (size_t i = 0; i < N_SECTIONS; i++)
		if (strcmp(s, sections[i]) == 0)
			return true;
	return false;
}

static void section_list(char *buf, size_t len)
{
	size_t used = 0;

	for (size_t i = 0; i < N_SECTIONS; i++) {
		const char *sep = i == 0 ? "" : i + 1 < N_SECTIONS ? ", " : " or ";
		int n = snprintf(buf + used, len - used, "%s[%s]", sep, sections[i]);

		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

static void key_list(const char *section, char *buf, size_t len)
{
	size_t used = 0;
	bool first = true;

	buf[0] = '\0';
	for (size_t i = 0; i < N_KEYS; i++) {
		int n;

		if (strcmp(keys[i].section, section) != 0)
			continue;
		n = snprintf(buf + used, len - used, "%s%s", first ? "" : ", ", keys[i].name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
		first = false;
	}
}

/* Looks at each raw line before libinih does, to report what libinih
 * cannot (long lines, NUL bytes, unknown or empty sections) with the line
 * number.  Lines are handed over without leading blanks, so an indented
 * line is a line of its own, never a libinih continuation line. */
static char *reader(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;
	const char *start, *nl, *p, *end;
	size_t n;

	if (ctx->pos >= ctx->len)
		return NULL;
	start = ctx->text + ctx->pos;
	nl = memchr(start, '\n', ctx->len - ctx->pos);
	n = nl ? (size_t)(nl - start) + 1 : ctx->len - ctx->pos;
	ctx->pos += n;
	ctx->line++;
	end = start + n;
	while (end > start && (end[-1] == '\n' || end[-1] == '\r'))
		end--;

	if (memchr(start, '\0', n)) {
		config_diag_add(ctx->diag, false, ctx->name, ctx->line, "line contains a NUL byte");
		goto blank;
	}
	if ((size_t)(end - start) + 2 > (size_t)num) {
		config_diag_add(ctx->diag, false, ctx->name, ctx->line,
			 "line longer than %d characters", num - 2);
		goto blank;
	}
	p = start;
	if (ctx->line == 1 && end - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p == ';' || *p == '#')
		goto blank;
	if (*p == '[') {
		const char *close = memchr(p, ']', (size_t)(end - p));
		char name[64];
		size_t len;

		if (!close) {
			config_diag_add(ctx->diag, false, ctx->name, ctx->line,
				 "syntax error: section header without closing ']'");
			goto blank;
		}
		for (const char *q = close + 1; q < end && *q != ';' && *q != '#'; q++) {
			if (*q != ' ' && *q != '\t') {
				config_diag_add(ctx->diag, false, ctx->name, ctx->line,
					 "syntax error: unexpected \"%.*s\" after the section header",
					 (int)(end - q), q);
				goto blank;
			}
		}
		len = (size_t)(close - p - 1);
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, p + 1, len);
		name[len] = '\0';
		ctx->saw_section = true;
		ctx->section_known = section_is_known(name);
		if (!ctx->section_known) {
			char list[128];

			section_list(list, sizeof(list));
			config_diag_add(ctx->diag, false, ctx->name, ctx->line,
				 "unknown section [%s]: expected %s", name, list);
		}
		goto pass;
	}
	if (!memchr(p, '=', (size_t)(end - p))) {
		config_diag_add(ctx->diag, false, ctx->name, ctx->line,
			 "syntax error: expected \"key = value\", \"[section]\" or a comment");
		goto blank;
	}
	if (!ctx->saw_section) {
		char list[128];

		section_list(list, sizeof(list));
		config_diag_add(ctx->diag, false, ctx->name, ctx->line,
			 "key outside any section: put it under %s", list);
		goto blank;
	}
	/* libinih cuts " ;comment"; " #comment" is cut here, the same way,
	 * rather than becoming part of the value. */
	for (const char *q = p + 1; q < end; q++) {
		if (*q == '#' && (q[-1] == ' ' || q[-1] == '\t')) {
			end = q;
			break;
		}
	}
pass:
	memcpy(str, p, (size_t)(end - p));
	str[end - p] = '\n';
	str[end - p + 1] = '\0';
	return str;
blank:
	str[0] = '\n';
	str[1] = '\0';
	return str;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;
	char err[400];
	size_t i;

	if (!ctx->section_known)
		return 1; /* already reported at the section header */
	for (i = 0; i < N_KEYS; i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
			break;
	if (i == N_KEYS) {
		char list[256];

		key_list(section, list, sizeof(list));
		for (i = 0; i < N_KEYS; i++)
			if (strcmp(keys[i].name, name) == 0)
				break;
		if (i < N_KEYS)
			config_diag_add(ctx->diag, false, ctx->name, ctx->line,
				 "unknown key \"%s\" in [%s] (it belongs in [%s]); expected %s",
				 name, section, keys[i].section, list);
		else
			config_diag_add(ctx->diag, false, ctx->name, ctx->line,
				 "unknown key \"%s\" in [%s]: expected %s", name, section, list);
		return 1;
	}
	if (ctx->set_on_line[i]) {
		config_diag_add(ctx->diag, false, ctx->name, ctx->line,
			 "[%s] %s is set twice (first on line %u)", section, name,
			 ctx->set_on_line[i]);
		return 1;
	}
	ctx->set_on_line[i] = ctx->line;
	if (set_key(ctx->cfg, &keys[i], value, err, sizeof(err)) < 0) {
		config_diag_add(ctx->diag, false, ctx->name, ctx->line, "[%s] %s: %s", section, name, err);
		/* A path refused looks unset: the checks of which paths go
		 * together would blame the wrong key. */
		if (keys[i].type == KEY_PATH)
			ctx->path_failed = true;
		return 1;
	}
	err[0] = '\0';
	if (keys[i].warn)
		keys[i].warn(ctx->cfg, value, err, sizeof(err));
	if (err[0])
		config_diag_add(ctx->diag, true, ctx->name, ctx->line, "[%s] %s", section, err);
	return 1;
}

int config_set(struct config *cfg, const char *section, const char *name, const char *value, char *err,
	       size_t errlen, char *warning, size_t warnlen)
{
	warning[0] = '\0';
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcmp(keys[i].section, section) != 0 || strcmp(keys[i].name, name) != 0)
			continue;
		if (set_key(cfg, &keys[i], value, err, errlen) < 0)
			return -EINVAL;
		if (keys[i].warn)
			keys[i].warn(cfg, value, warning, warnlen);
		return 0;
	}
	snprintf(err, errlen, "no key %s in [%s]", name, section);
	return -ENOENT;
}

static unsigned line_of(const struct parse_ctx *ctx, size_t offset)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (keys[i].offset == offset)
			return ctx->set_on_line[i];
	return 0;
}

int config_parse(const char *name, const char *text, size_t len,
		 struct config *cfg, struct config_diag *diag)
{
	struct parse_ctx ctx = {
		.name = name, .text = text, .len = len, .cfg = cfg, .diag = diag,
	};
	char err[256];
	int r;

	r = ini_parse_stream(reader, &ctx, handler, &ctx);
	if (r > 0)
		config_diag_add(diag, false, name, (unsigned)r,
			 "syntax error: expected \"key = value\", \"[section]\" or a comment");
	/* Checked even after other errors (one run reports every problem),
	 * unless a TLS path itself was refused: it would look unset. */
	if (!ctx.path_failed && config_validate(cfg, err, sizeof(err)) < 0) {
		/* Point at the key that is set, the missing one has no line. */
		unsigned line = line_of(&ctx, cfg->tls_cert[0] ? OFF(tls_cert) : OFF(tls_key));

		if (!line)
			line = line_of(&ctx, OFF(tls_client_ca));
		if (!line)
			line = line_of(&ctx, OFF(web_config_file));
		config_diag_add(diag, false, name, line, "%s", err);
	}
	return diag->n_errors ? -EINVAL : 0;
}

int config_validate(const struct config *cfg, char *err, size_t errlen)
{
	if (!!cfg->tls_cert[0] != !!cfg->tls_key[0]) {
		snprintf(err, errlen, "[http] tls_cert and tls_key must be set together (%s is empty)",
			 cfg->tls_cert[0] ? "tls_key" : "tls_cert");
		return -EINVAL;
	}
	if (cfg->tls_client_ca[0] && !cfg->tls_cert[0]) {
		snprintf(err, errlen, "[http] tls_client_ca needs tls_cert and tls_key (client certificates are checked over HTTPS only)");
		return -EINVAL;
	}
	if (cfg->web_config_file[0] && (cfg->tls_cert[0] || cfg->basic_auth_file[0])) {
		snprintf(err, errlen, "[http] web_config_file sets TLS and basic authentication: leave %s out, "
			 "or web_config_file", cfg->tls_cert[0] ? "tls_cert, tls_key and tls_client_ca" : "basic_auth_file");
		return -EINVAL;
	}
	return 0;
}

static bool blank(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)buf[i]))
			return false;
	return true;
}

int config_load(const char *path, unsigned flags, struct config *cfg, struct config_diag *diag)
{
	bool reload = flags & CONFIG_LOAD_RELOAD;
	char *buf = NULL;
	size_t len = 0;
	int r;

	r = read_file(path, CONFIG_FILE_MAX, &buf, &len);
	if (r == -ENOENT && (flags & CONFIG_LOAD_MISSING_OK) && !reload)
		return 0;
	if (r == -EISDIR)
		config_diag_add(diag, false, path, 0, "is a directory, not a config file");
	else if (r == -EFBIG)
		config_diag_add(diag, false, path, 0, "larger than %d bytes", CONFIG_FILE_MAX);
	else if (r < 0)
		config_diag_add(diag, false, path, 0, "cannot open: %s%s", read_file_strerror(r),
				r == -ENOENT && reload ? " (a reload needs the file: the configuration in force stays)" : "");
	if (r < 0)
		return r;
	if (reload && blank(buf, len)) {
		/* Most likely a file caught half-written, or truncated: its
		 * defaults would turn TLS and authentication off. */
		config_diag_add(diag, false, path, 0,
				"is empty: a reload needs the settings written out (the configuration in force stays)");
		free(buf);
		return -ENODATA;
	}
	r = config_parse(path, buf, len, cfg, diag);
	free(buf);
	return r;
}

/* ---- printing ---- */

static void print_value(const struct config *cfg, const struct key_desc *k, FILE *out)
{
	char buf[8192];

	switch (k->type) {
	case KEY_DURATION:
		format_duration(*(const uint64_t *)cfield(cfg, k), buf, sizeof(buf));
		fputs(buf, out);
		return;
	case KEY_CPUS:
		if (cfg->cpus_all) {
			fputs("all", out);
		} else {
			cpuset_format(&cfg->cpus, buf, sizeof(buf));
			fputs(buf, out);
		}
		return;
	case KEY_UINT:
		if (k->size == sizeof(unsigned))
			fprintf(out, "%u", *(const unsigned *)cfield(cfg, k));
		else
			fprintf(out, "%" PRIu64, *(const uint64_t *)cfield(cfg, k));
		return;
	case KEY_CHOICE:
		/* The first name of the value: "warning", not its alias "warn". */
		for (size_t i = 0; k->choices[i].name; i++)
			if (k->choices[i].value == *(const int *)cfield(cfg, k)) {
				fputs(k->choices[i].name, out);
				break;
			}
		return;
	case KEY_BOOL:
		fputs(*(const bool *)cfield(cfg, k) ? "true" : "false", out);
		return;
	case KEY_LISTEN:
		for (size_t i = 0; i < cfg->n_listen; i++) {
			format_listen_addr(&cfg->listen[i], buf, sizeof(buf));
			fprintf(out, "%s%s", i ? " " : "", buf);
		}
		return;
	case KEY_PATH:
		fputs((const char *)cfield(cfg, k), out);
		return;
	case KEY_GLOBS:
		for (unsigned i = 0; i < cfg->n_cgroups_track; i++)
			fprintf(out, "%s%s", i ? " " : "", cfg->cgroups_track[i]);
		return;
	case KEY_PERCENT:
		fprintf(out, "%g%%", *(const double *)cfield(cfg, k) * 100);
		return;
	}
}

/* "key = value", or "key=value" when the blanks would make the line longer
 * than the reader accepts (libinih's INI_MAX_LINE - 2 characters): what
 * was read from a file always prints back into a file that reads. */
static void print_key(const struct config *cfg, const struct key_desc *k, FILE *out)
{
	char *value = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&value, &len);

	if (mem) {
		print_value(cfg, k, mem);
		if (fclose(mem) != 0) {
			free(value);
			value = NULL;
		}
	}
	if (!value) { /* out of memory: the usual layout */
		fprintf(out, "%s = ", k->name);
		print_value(cfg, k, out);
		fputc('\n', out);
		return;
	}
	fprintf(out, "%s%s%s\n", k->name,
		strlen(k->name) + 3 + len > INI_MAX_LINE - 2 ? "=" : " = ", value);
	free(value);
}

/* @k's value as config_print() writes it, malloc'd; NULL without memory. */
static char *value_text(const struct config *cfg, const struct key_desc *k)
{
	char *value = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&value, &len);

	if (!mem)
		return NULL;
	print_value(cfg, k, mem);
	if (fclose(mem) != 0) {
		free(value);
		return NULL;
	}
	return value;
}

unsigned config_diff(const struct config *a, const struct config *b, const char *section,
		     const char *key, char *names, size_t len)
{
	unsigned n = 0;
	size_t used = 0;

	if (len)
		names[0] = '\0';
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct key_desc *k = &keys[i];
		char *x, *y;
		bool same;

		if (strcmp(k->section, section) != 0 || (key && strcmp(k->name, key) != 0))
			continue;
		x = value_text(a, k);
		y = value_text(b, k);
		/* Without memory to tell: different, which costs a warning,
		 * never a change missed. */
		same = x && y && strcmp(x, y) == 0;
		free(x);
		free(y);
		if (same)
			continue;
		n++;
		if (used < len) {
			int w = snprintf(names + used, len - used, "%s%s", used ? " " : "", k->name);

			used += w > 0 ? (size_t)w : 0;
		}
	}
	return n;
}

void config_copy_section(struct config *dst, const struct config *src, const char *section)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct key_desc *k = &keys[i];

		if (strcmp(k->section, section) != 0)
			continue;
		memcpy((char *)dst + k->offset, (const char *)src + k->offset, k->size);
		/* The fields that go with the key's (print_value() reads them). */
		switch (k->type) {
		case KEY_CPUS:
			dst->cpus_all = src->cpus_all;
			break;
		case KEY_LISTEN:
			dst->n_listen = src->n_listen;
			break;
		case KEY_GLOBS:
			dst->n_cgroups_track = src->n_cgroups_track;
			break;
		default:
			break;
		}
	}
}

/* What a reload may turn off only on the operator's word. */
static const struct {
	size_t path;    /* the file that turns it on (its path: empty when off) */
	size_t consent; /* the key that says the operator means it off */
	const char *what, *key;
} protections[] = {
	{ offsetof(struct config, tls_cert), offsetof(struct config, allow_plaintext), "TLS",
	  "allow_plaintext" },
	{ offsetof(struct config, basic_auth_file), offsetof(struct config, allow_unauthenticated),
	  "basic authentication", "allow_unauthenticated" },
	/* What it turns on is in the file: both consents are asked for, the
	 * first missing is named. */
	{ offsetof(struct config, web_config_file), offsetof(struct config, allow_plaintext),
	  "web_config_file's TLS and basic authentication", "allow_plaintext" },
	{ offsetof(struct config, web_config_file), offsetof(struct config, allow_unauthenticated),
	  "web_config_file's TLS and basic authentication", "allow_unauthenticated" },
};

bool config_turns_protection_off(const struct config *in_force, const struct config *next,
				 char *why, size_t len)
{
	for (size_t i = 0; i < sizeof(protections) / sizeof(protections[0]); i++) {
		const char *was = (const char *)in_force + protections[i].path;
		const char *now = (const char *)next + protections[i].path;
		bool consent = *(const bool *)(const void *)((const char *)next + protections[i].consent);

		if (was[0] && !now[0] && !consent) {
			str_printf(why, len, "turns %s off; set [http] %s = true to mean it",
				   protections[i].what, protections[i].key);
			return true;
		}
	}
	return false;
}

void config_print(const struct config *cfg, FILE *out)
{
	const char *section = NULL;

	for (size_t i = 0; i < N_KEYS; i++) {
		if (!section || strcmp(section, keys[i].section) != 0) {
			section = keys[i].section;
			fprintf(out, "%s[%s]\n", i ? "\n" : "", section);
		}
		if (keys[i].type == KEY_PATH && !*(const char *)cfield(cfg, &keys[i])) {
			fprintf(out, "%s =\n", keys[i].name);
			continue;
		}
		print_key(cfg, &keys[i], out);
	}
}

static const char *choice_name(const struct choice *c, int value)
{
	for (size_t i = 0; c[i].name; i++)
		if (c[i].value == value)
			return c[i].name;
	return "?";
}

const char *config_model_name(enum config_model model)
{
	return choice_name(model_choices, (int)model);
}

const char *config_granularity_name(enum config_granularity gran)
{
	return choice_name(gran_choices, (int)gran);
}

int config_granularity_parse(const char *name, enum config_granularity *out)
{
	for (size_t i = 0; gran_choices[i].name; i++) {
		if (strcmp(gran_choices[i].name, name) == 0) {
			*out = (enum config_granularity)gran_choices[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

const char *config_log_level_name(enum log_level level)
{
	return choice_name(log_choices, (int)level);
}
