/* SPDX-License-Identifier: MIT */
/* Unit tests of config: defaults, parsing with FILE:LINE diagnostics,
 * loading, validation and printing. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "config.h"

#define SECTIONS "[collect], [metrics], [http], [log] or [cgroups]"
#define DHINT "expected a number with a unit (ns, us, ms, s, m, h), e.g. 500ms or 2s"
#define LHINT "expected host:port, [ipv6]:port or unix:/absolute/path"

#define DEFAULTS_TEXT \
	"[collect]\n" \
	"interval = 1s\n" \
	"cpus = all\n" \
	"level = 2\n" \
	"drilldown = false\n" \
	"depth_multiplex = false\n" \
	"model = perf\n" \
	"count_kernel = true\n" \
	"count_guest = false\n" \
	"history = 15m\n" \
	"pmu_sharing = yield\n" \
	"smt = auto\n" \
	"\n" \
	"[metrics]\n" \
	"granularity = package\n" \
	"ratios = true\n" \
	"\n" \
	"[http]\n" \
	"listen = [::]:10412\n" \
	"tls_cert =\n" \
	"tls_key =\n" \
	"tls_client_ca =\n" \
	"basic_auth_file =\n" \
	"web_config_file =\n" \
	"allow_plaintext = false\n" \
	"allow_unauthenticated = false\n" \
	"max_connections = 4096\n" \
	"timeout = 10s\n" \
	"unhealthy_after = 1m\n" \
	"\n" \
	"[log]\n" \
	"level = info\n" \
	"format = text\n" \
	"\n" \
	"[cgroups]\n" \
	"enabled = false\n" \
	"root =\n" \
	"track = system.slice/*.service kubepods.slice/kubepods-pod*.slice kubepods.slice/*/kubepods-*-pod*.slice kubepods/pod* kubepods/*/pod*\n" \
	"max_cgroups = 200\n" \
	"level = 1\n" \
	"budget = 1%\n" \
	"trigger = auto\n"

/* Heap-allocated: struct config and struct config_diag are large. */
struct parsed {
	struct config cfg;
	struct config_diag diag;
	int r;
};

static struct parsed *parse_len(const char *text, size_t len)
{
	struct parsed *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	config_defaults(&p->cfg);
	p->r = config_parse("t.conf", text, len, &p->cfg, &p->diag);
	return p;
}

static struct parsed *parse(const char *text)
{
	return parse_len(text, strlen(text));
}

static void dump_diag(const struct config_diag *diag)
{
	for (size_t i = 0; i < diag->n; i++)
		print_message("  diag[%zu]: %s\n", i, diag->entries[i].text);
}

/* @text must parse without any diagnostic. */
static struct parsed *parse_ok(const char *text)
{
	struct parsed *p = parse(text);

	if (p->r != 0 || p->diag.n != 0) {
		dump_diag(&p->diag);
		fail_msg("config_parse(\"%s\") = %d with %zu diagnostics", text, p->r, p->diag.n);
	}
	return p;
}

/* @text must give exactly one error, @msg ("t.conf:LINE: ..."). */
static void expect_error(const char *text, unsigned line, const char *msg)
{
	struct parsed *p = parse(text);

	if (p->r != -EINVAL || p->diag.n != 1 || p->diag.n_errors != 1) {
		dump_diag(&p->diag);
		fail_msg("config_parse(\"%s\") = %d, %zu diagnostics, %zu errors; expected one error",
			 text, p->r, p->diag.n, p->diag.n_errors);
	}
	assert_string_equal(p->diag.entries[0].text, msg);
	assert_false(p->diag.entries[0].warning);
	assert_int_equal(p->diag.entries[0].line, line);
	free(p);
}

static char *print_config(const struct config *cfg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	config_print(cfg, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void assert_config_equal(const struct config *a, const struct config *b)
{
	assert_int_equal(a->interval_ns, b->interval_ns);
	assert_int_equal(a->cpus_all, b->cpus_all);
	assert_true(cpuset_equal(&a->cpus, &b->cpus));
	assert_int_equal(a->level, b->level);
	assert_int_equal(a->drilldown, b->drilldown);
	assert_int_equal(a->depth_multiplex, b->depth_multiplex);
	assert_int_equal(a->model, b->model);
	assert_int_equal(a->count_kernel, b->count_kernel);
	assert_int_equal(a->granularity, b->granularity);
	assert_int_equal(a->ratios, b->ratios);
	assert_int_equal(a->n_listen, b->n_listen);
	for (size_t i = 0; i < a->n_listen; i++) {
		assert_int_equal(a->listen[i].kind, b->listen[i].kind);
		assert_string_equal(a->listen[i].host, b->listen[i].host);
		assert_int_equal(a->listen[i].ipv6_literal, b->listen[i].ipv6_literal);
		assert_int_equal(a->listen[i].port, b->listen[i].port);
		assert_string_equal(a->listen[i].path, b->listen[i].path);
	}
	assert_string_equal(a->tls_cert, b->tls_cert);
	assert_string_equal(a->tls_key, b->tls_key);
	assert_string_equal(a->tls_client_ca, b->tls_client_ca);
	assert_string_equal(a->basic_auth_file, b->basic_auth_file);
	assert_int_equal(a->max_connections, b->max_connections);
	assert_int_equal(a->timeout_ns, b->timeout_ns);
	assert_int_equal(a->log_level, b->log_level);
}

/* ---- defaults ---- */

static void test_defaults(void **state)
{
	struct config *cfg = calloc(1, sizeof(*cfg));

	(void)state;
	memset(cfg, 0xa5, sizeof(*cfg));
	config_defaults(cfg);
	assert_int_equal(cfg->interval_ns, UINT64_C(1000000000));
	assert_true(cfg->cpus_all);
	assert_true(cpuset_empty(&cfg->cpus));
	assert_int_equal(cfg->level, 2);
	assert_int_equal(cfg->model, MODEL_PERF);
	assert_true(cfg->count_kernel);
	assert_int_equal(cfg->granularity, GRAN_PACKAGE);
	assert_true(cfg->ratios);
	assert_int_equal(cfg->n_listen, 1);
	assert_int_equal(cfg->listen[0].kind, LISTEN_INET);
	assert_string_equal(cfg->listen[0].host, "::");
	assert_true(cfg->listen[0].ipv6_literal);
	assert_int_equal(cfg->listen[0].port, 10412);
	assert_string_equal(cfg->tls_cert, "");
	assert_string_equal(cfg->tls_key, "");
	assert_string_equal(cfg->tls_client_ca, "");
	assert_string_equal(cfg->basic_auth_file, "");
	assert_int_equal(cfg->max_connections, 4096);
	assert_int_equal(cfg->timeout_ns, UINT64_C(10000000000));
	assert_int_equal(cfg->log_level, LOG_LEVEL_INFO);
	free(cfg);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(config_model_name(MODEL_PERF), "perf");
	assert_string_equal(config_model_name(MODEL_HARDWARE), "hardware");
	assert_string_equal(config_granularity_name(GRAN_CPU), "cpu");
	assert_string_equal(config_granularity_name(GRAN_CORE), "core");
	assert_string_equal(config_granularity_name(GRAN_PACKAGE), "package");
	assert_string_equal(config_granularity_name(GRAN_SYSTEM), "system");
	assert_string_equal(config_log_level_name(LOG_LEVEL_ERROR), "error");
	assert_string_equal(config_log_level_name(LOG_LEVEL_WARNING), "warning");
	assert_string_equal(config_log_level_name(LOG_LEVEL_INFO), "info");
	assert_string_equal(config_log_level_name(LOG_LEVEL_DEBUG), "debug");
	assert_string_equal(config_model_name((enum config_model)42), "?");
}

/* ---- accepted syntax ---- */

static void test_parse_empty(void **state)
{
	struct config *def = calloc(1, sizeof(*def));
	struct parsed *p;

	(void)state;
	config_defaults(def);
	p = parse_ok("");
	assert_config_equal(&p->cfg, def);
	free(p);
	p = parse_ok("\n\n; only comments\n# and more\n   \n");
	assert_config_equal(&p->cfg, def);
	free(p);
	p = parse_ok("[collect]\n[metrics]\n[http]\n[log]\n");
	assert_config_equal(&p->cfg, def);
	free(p);
	free(def);
}

/* How many keys config_print() writes under [@section]. */
static unsigned printed_keys(const struct config *cfg, const char *section)
{
	char *text = print_config(cfg), head[64], *line, *save = NULL;
	unsigned n = 0;
	bool in = false;

	snprintf(head, sizeof(head), "[%s]", section);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '[')
			in = strcmp(line, head) == 0;
		else if (in && line[0])
			n++;
	}
	free(text);
	return n;
}

/* A reload compares [cgroups] and [http] listen with config_diff(), which
 * compares every key of the table as --print-config writes it: here every
 * key of [cgroups] differs from its default, and each is named (a key
 * added to the section and not to this text fails the count). */
static void test_diff_and_copy(void **state)
{
	struct parsed *a = parse_ok(""), *b;
	char names[256];

	(void)state;
	b = parse_ok("[cgroups]\nenabled = true\nroot = /sys/fs/cgroup/x\ntrack = a/* b/*\n"
		     "max_cgroups = 10\nlevel = 2\nbudget = 0.5%\ntrigger = sched_switch\n"
		     "[http]\nlisten = 127.0.0.1:9\n");
	assert_int_equal(config_diff(&a->cfg, &b->cfg, "cgroups", NULL, names, sizeof(names)),
			 printed_keys(&a->cfg, "cgroups"));
	assert_string_equal(names, "enabled root track max_cgroups level budget trigger");
	assert_int_equal(config_diff(&a->cfg, &b->cfg, "http", "listen", names, sizeof(names)), 1);
	assert_string_equal(names, "listen");
	assert_int_equal(config_diff(&a->cfg, &b->cfg, "http", "timeout", names, sizeof(names)), 0);
	assert_int_equal(config_diff(&a->cfg, &b->cfg, "collect", NULL, names, sizeof(names)), 0);
	assert_string_equal(names, "");
	/* Only the track list's length differs: still a change. */
	config_copy_section(&a->cfg, &b->cfg, "cgroups");
	assert_int_equal(config_diff(&a->cfg, &b->cfg, "cgroups", NULL, NULL, 0), 0);
	a->cfg.n_cgroups_track = 1;
	assert_int_equal(config_diff(&a->cfg, &b->cfg, "cgroups", NULL, names, sizeof(names)), 1);
	assert_string_equal(names, "track");
	/* The copy took [cgroups] only. */
	assert_int_equal(config_diff(&a->cfg, &b->cfg, "http", "listen", NULL, 0), 1);
	free(a);
	free(b);
}

/* A reload fails closed: TLS or authentication in force goes only with
 * the operator's word; adding them, keeping them or consenting is fine. */
static void test_protection_off(void **state)
{
	struct parsed *none = parse_ok(""),
		      *both = parse_ok("[http]\ntls_cert = /c\ntls_key = /k\nbasic_auth_file = /a\n"),
		      *plain = parse_ok("[http]\nbasic_auth_file = /a\nallow_plaintext = true\n"),
		      *open = parse_ok("[http]\ntls_cert = /c\ntls_key = /k\nallow_unauthenticated = true\n");
	char why[128] = "";

	(void)state;
	assert_true(config_turns_protection_off(&both->cfg, &none->cfg, why, sizeof(why)));
	assert_string_equal(why, "turns TLS off; set [http] allow_plaintext = true to mean it");
	assert_false(config_turns_protection_off(&both->cfg, &plain->cfg, why, sizeof(why)));
	assert_false(config_turns_protection_off(&both->cfg, &open->cfg, why, sizeof(why)));
	assert_true(config_turns_protection_off(&plain->cfg, &none->cfg, why, sizeof(why)));
	assert_string_equal(why, "turns basic authentication off; set [http] allow_unauthenticated = true to mean it");
	assert_false(config_turns_protection_off(&plain->cfg, &open->cfg, why, sizeof(why)));
	assert_true(config_turns_protection_off(&open->cfg, &none->cfg, why, sizeof(why)));
	assert_string_equal(why, "turns TLS off; set [http] allow_plaintext = true to mean it");
	assert_false(config_turns_protection_off(&open->cfg, &plain->cfg, why, sizeof(why)));
	assert_false(config_turns_protection_off(&none->cfg, &both->cfg, why, sizeof(why)));
	assert_false(config_turns_protection_off(&both->cfg, &both->cfg, why, sizeof(why)));
	free(none);
	free(both);
	free(plain);
	free(open);
}

/* The kubelet's cgroups by preset: @pods (the default's), @containers;
 * an unknown one says which there are. */
static void test_track_presets(void **state)
{
	struct parsed *p = parse_ok("[cgroups]\ntrack = @containers system.slice/*.service\n");
	static const char *const want[] = {
		"kubepods.slice/kubepods-pod*.slice/*.scope",
		"kubepods.slice/*/kubepods-*-pod*.slice/*.scope",
		"kubepods/pod*/*", "kubepods/*/pod*/*", "system.slice/*.service",
	};

	(void)state;
	assert_int_equal(p->cfg.n_cgroups_track, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_string_equal(p->cfg.cgroups_track[i], want[i]);
	free(p);
	p = parse_ok("");
	assert_int_equal(p->cfg.n_cgroups_track, 5);
	assert_string_equal(p->cfg.cgroups_track[0], "system.slice/*.service");
	assert_string_equal(p->cfg.cgroups_track[1], "kubepods.slice/kubepods-pod*.slice");
	assert_string_equal(p->cfg.cgroups_track[4], "kubepods/*/pod*");
	free(p);
	expect_error("[cgroups]\ntrack = @pod\n", 2,
		     "t.conf:2: [cgroups] track: unknown preset \"@pod\": @pods (one series per "
		     "Kubernetes pod) or @containers (one per container)");
}

static void test_parse_every_key(void **state)
{
	struct parsed *p;
	char buf[128];

	(void)state;
	p = parse_ok("[collect]\n"
		     "interval = 250ms\n"
		     "cpus = 0-3,8\n"
		     "level = 1\n"
		     "model = hardware\n"
		     "count_kernel = false\n"
		     "[metrics]\n"
		     "granularity = package\n"
		     "ratios = no\n"
		     "[http]\n"
		     "listen = 127.0.0.1:9100\t[::1]:9100   unix:/run/topdownd.sock\n"
		     "tls_cert = /etc/topdownd/cert.pem\n"
		     "tls_key = /etc/topdownd/key.pem\n"
		     "tls_client_ca = /etc/topdownd/ca.pem\n"
		     "basic_auth_file = /etc/topdownd/htpasswd\n"
		     "max_connections = 1000\n"
		     "timeout = 1.5m\n"
		     "[log]\n"
		     "level = debug\n");
	assert_int_equal(p->cfg.interval_ns, UINT64_C(250000000));
	assert_false(p->cfg.cpus_all);
	cpuset_format(&p->cfg.cpus, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,8");
	assert_int_equal(p->cfg.level, 1);
	assert_int_equal(p->cfg.model, MODEL_HARDWARE);
	assert_false(p->cfg.count_kernel);
	assert_int_equal(p->cfg.granularity, GRAN_PACKAGE);
	assert_false(p->cfg.ratios);
	assert_int_equal(p->cfg.n_listen, 3);
	assert_string_equal(p->cfg.listen[0].host, "127.0.0.1");
	assert_int_equal(p->cfg.listen[0].port, 9100);
	assert_string_equal(p->cfg.listen[1].host, "::1");
	assert_true(p->cfg.listen[1].ipv6_literal);
	assert_int_equal(p->cfg.listen[2].kind, LISTEN_UNIX);
	assert_string_equal(p->cfg.listen[2].path, "/run/topdownd.sock");
	assert_string_equal(p->cfg.tls_cert, "/etc/topdownd/cert.pem");
	assert_string_equal(p->cfg.tls_key, "/etc/topdownd/key.pem");
	assert_string_equal(p->cfg.tls_client_ca, "/etc/topdownd/ca.pem");
	assert_string_equal(p->cfg.basic_auth_file, "/etc/topdownd/htpasswd");
	assert_int_equal(p->cfg.max_connections, 1000);
	assert_int_equal(p->cfg.timeout_ns, UINT64_C(90000000000));
	assert_int_equal(p->cfg.log_level, LOG_LEVEL_DEBUG);
	free(p);

	/* The other choices. */
	p = parse_ok("[metrics]\ngranularity = core\n[log]\nlevel = warning\n");
	assert_int_equal(p->cfg.granularity, GRAN_CORE);
	assert_int_equal(p->cfg.log_level, LOG_LEVEL_WARNING);
	free(p);
	p = parse_ok("[metrics]\ngranularity = system\n[log]\nlevel = error\n");
	assert_int_equal(p->cfg.granularity, GRAN_SYSTEM);
	assert_int_equal(p->cfg.log_level, LOG_LEVEL_ERROR);
	free(p);
	/* "all" after a list goes back to every CPU. */
	p = parse_ok("[collect]\ncpus = all\n");
	assert_true(p->cfg.cpus_all);
	free(p);
}

static void test_parse_syntax_variants(void **state)
{
	struct parsed *p;

	(void)state;
	/* BOM, CRLF, indentation, no spaces around '=', inline comments,
	 * no final newline. */
	p = parse_ok("\xEF\xBB\xBF[collect]\r\n"
		     "  level=1 ; inline comment\r\n"
		     "\tmodel   =   hardware\r\n"
		     "# comment\r\n"
		     "[log]\r\n"
		     "level = debug");
	assert_int_equal(p->cfg.level, 1);
	assert_int_equal(p->cfg.model, MODEL_HARDWARE);
	assert_int_equal(p->cfg.log_level, LOG_LEVEL_DEBUG);
	free(p);

	/* [collect] level and [log] level are different keys. */
	p = parse_ok("[log]\nlevel = error\n[collect]\nlevel = 1\n");
	assert_int_equal(p->cfg.level, 1);
	assert_int_equal(p->cfg.log_level, LOG_LEVEL_ERROR);
	free(p);

	/* A section may appear twice. */
	p = parse_ok("[collect]\nlevel = 1\n[log]\nlevel = debug\n[collect]\nmodel = hardware\n");
	assert_int_equal(p->cfg.level, 1);
	assert_int_equal(p->cfg.model, MODEL_HARDWARE);
	free(p);

	/* Empty path values keep the feature off. */
	p = parse_ok("[http]\ntls_cert =\nbasic_auth_file = \n");
	assert_string_equal(p->cfg.tls_cert, "");
	assert_string_equal(p->cfg.basic_auth_file, "");
	free(p);
}

static void test_line_lengths(void **state)
{
	char text[600];
	struct parsed *p;

	(void)state;
	/* 198 characters is the longest line libinih takes (INI_MAX_LINE 200). */
	strcpy(text, "[collect]\n# ");
	memset(text + strlen(text), 'x', 196);
	strcpy(text + 12 + 196, "\nlevel = 1\n");
	p = parse_ok(text);
	assert_int_equal(p->cfg.level, 1);
	free(p);
	/* Also with CRLF. */
	strcpy(text, "[collect]\r\n# ");
	memset(text + strlen(text), 'x', 196);
	strcpy(text + 13 + 196, "\r\nlevel = 1\r\n");
	p = parse_ok(text);
	assert_int_equal(p->cfg.level, 1);
	free(p);

	strcpy(text, "[collect]\n# ");
	memset(text + strlen(text), 'x', 197);
	strcpy(text + 12 + 197, "\nlevel = 1\n");
	p = parse(text);
	assert_int_equal(p->r, -EINVAL);
	assert_int_equal(p->diag.n, 1);
	assert_string_equal(p->diag.entries[0].text, "t.conf:2: line longer than 198 characters");
	/* The following lines are still read. */
	assert_int_equal(p->cfg.level, 1);
	free(p);

	/* A long key line is not applied. */
	strcpy(text, "[http]\nbasic_auth_file = /");
	memset(text + strlen(text), 'a', 400);
	strcpy(text + 26 + 400, "\n");
	p = parse(text);
	assert_int_equal(p->r, -EINVAL);
	assert_int_equal(p->diag.n, 1);
	assert_string_equal(p->diag.entries[0].text, "t.conf:2: line longer than 198 characters");
	assert_string_equal(p->cfg.basic_auth_file, "");
	free(p);
}

/* ---- every error path ---- */

static void test_error_unknown_section(void **state)
{
	(void)state;
	expect_error("[bogus]\ninterval = 1s\nfoo = bar\n", 1,
		     "t.conf:1: unknown section [bogus]: expected " SECTIONS);
	/* An empty unknown section is reported too. */
	expect_error("[collect]\nlevel = 1\n[bogus]\n", 3,
		     "t.conf:3: unknown section [bogus]: expected " SECTIONS);
	expect_error("[Collect]\n", 1, "t.conf:1: unknown section [Collect]: expected " SECTIONS);
	expect_error("[]\n", 1, "t.conf:1: unknown section []: expected " SECTIONS);
	expect_error("[ collect ]\n", 1,
		     "t.conf:1: unknown section [ collect ]: expected " SECTIONS);
}

static void test_unknown_section_then_known(void **state)
{
	struct parsed *p;

	(void)state;
	/* Keys of the unknown section are not reported one by one, keys of the
	 * next known section are applied. */
	p = parse("[bogus]\nfoo = 1\n[collect]\nlevel = 1\nbar = 2\n");
	assert_int_equal(p->r, -EINVAL);
	assert_int_equal(p->diag.n, 2);
	assert_string_equal(p->diag.entries[0].text,
			    "t.conf:1: unknown section [bogus]: expected " SECTIONS);
	assert_string_equal(p->diag.entries[1].text,
			    "t.conf:5: unknown key \"bar\" in [collect]: expected interval, cpus, level, drilldown, depth_multiplex, model, count_kernel, count_guest, history, pmu_sharing, smt");
	assert_int_equal(p->cfg.level, 1);
	free(p);
}

static void test_error_unknown_key(void **state)
{
	(void)state;
	expect_error("[collect]\nfoo = 1\n", 2,
		     "t.conf:2: unknown key \"foo\" in [collect]: expected interval, cpus, level, drilldown, depth_multiplex, model, count_kernel, count_guest, history, pmu_sharing, smt");
	expect_error("[metrics]\nfoo = 1\n", 2,
		     "t.conf:2: unknown key \"foo\" in [metrics]: expected granularity, ratios");
	expect_error("[http]\n\nfoo = 1\n", 3,
		     "t.conf:3: unknown key \"foo\" in [http]: expected listen, tls_cert, tls_key, tls_client_ca, basic_auth_file, web_config_file, allow_plaintext, allow_unauthenticated, max_connections, timeout, unhealthy_after");
	expect_error("[log]\nfoo = 1\n", 2,
		     "t.conf:2: unknown key \"foo\" in [log]: expected level, format");
	expect_error("[collect]\nInterval = 1s\n", 2,
		     "t.conf:2: unknown key \"Interval\" in [collect]: expected interval, cpus, level, drilldown, depth_multiplex, model, count_kernel, count_guest, history, pmu_sharing, smt");
	/* A key of another section: say where it belongs. */
	expect_error("[collect]\nlisten = [::1]:1\n", 2,
		     "t.conf:2: unknown key \"listen\" in [collect] (it belongs in [http]); expected interval, cpus, level, drilldown, depth_multiplex, model, count_kernel, count_guest, history, pmu_sharing, smt");
	expect_error("[http]\ninterval = 1s\n", 2,
		     "t.conf:2: unknown key \"interval\" in [http] (it belongs in [collect]); expected listen, tls_cert, tls_key, tls_client_ca, basic_auth_file, web_config_file, allow_plaintext, allow_unauthenticated, max_connections, timeout, unhealthy_after");
	expect_error("[log]\ngranularity = cpu\n", 2,
		     "t.conf:2: unknown key \"granularity\" in [log] (it belongs in [metrics]); expected level, format");
}

static void test_error_duplicate(void **state)
{
	(void)state;
	expect_error("[collect]\nlevel = 1\nlevel = 2\n", 3,
		     "t.conf:3: [collect] level is set twice (first on line 2)");
	expect_error("[http]\nlisten = [::1]:1\n[log]\nlevel = info\n[http]\nlisten = [::1]:2\n", 6,
		     "t.conf:6: [http] listen is set twice (first on line 2)");
}

static void test_error_outside_section(void **state)
{
	struct parsed *p;

	(void)state;
	expect_error("level = 1\n[collect]\n", 1,
		     "t.conf:1: key outside any section: put it under " SECTIONS);
	expect_error("# comment\n\ninterval = 1s\n", 3,
		     "t.conf:3: key outside any section: put it under " SECTIONS);
	/* The key is not applied to the first section that follows. */
	p = parse("level = 1\n[collect]\n");
	assert_int_equal(p->cfg.level, 2);
	free(p);
}

static void test_error_syntax(void **state)
{
	(void)state;
	expect_error("[collect]\nthis is not a key\n", 2,
		     "t.conf:2: syntax error: expected \"key = value\", \"[section]\" or a comment");
	expect_error("[collect]\ninterval: 1s\n", 2,
		     "t.conf:2: syntax error: expected \"key = value\", \"[section]\" or a comment");
	/* An indented line is a line of its own, not a continuation. */
	expect_error("[collect]\nlevel = 1\n    2\n", 3,
		     "t.conf:3: syntax error: expected \"key = value\", \"[section]\" or a comment");
	/* Found by libinih itself: the name ends at an inline comment. */
	expect_error("[collect]\n\nlevel ; = 1\n", 3,
		     "t.conf:3: syntax error: expected \"key = value\", \"[section]\" or a comment");
	expect_error("[collect\n# comment\n", 1,
		     "t.conf:1: syntax error: section header without closing ']'");
}

/* Text after a section header's ']' must not vanish silently: a key written
 * on the header line would otherwise be ignored without a word.  Comments
 * and blanks after ']' are fine. */
static void test_error_text_after_section_header(void **state)
{
	struct parsed *p;

	(void)state;
	free(parse_ok("[collect]   ; comment\n[log]\t\nlevel = debug\n"));
	p = parse("[collect] level = 1\n");
	if (p->r != -EINVAL || p->diag.n_errors != 1) {
		dump_diag(&p->diag);
		fail_msg("\"[collect] level = 1\": r = %d, %zu errors; expected one error", p->r,
			 p->diag.n_errors);
	}
	assert_int_equal(p->diag.entries[0].line, 1);
	assert_memory_equal(p->diag.entries[0].text, "t.conf:1: syntax error", 22);
	free(p);
}

static void test_error_unterminated_header_later(void **state)
{
	struct parsed *p;

	(void)state;
	p = parse("[collect]\nlevel = 1\n[log\nlevel = debug\n");
	assert_int_equal(p->r, -EINVAL);
	assert_true(p->diag.n >= 1);
	assert_string_equal(p->diag.entries[0].text,
			    "t.conf:3: syntax error: section header without closing ']'");
	assert_int_equal(p->cfg.log_level, LOG_LEVEL_INFO);
	free(p);
}

static void test_error_nul_byte(void **state)
{
	static const char text[] = "[collect]\nlevel = 1\0junk\nmodel = hardware\n";
	static const char last[] = "[collect]\nmodel = hardware\nlevel = 1\0";
	struct parsed *p;

	(void)state;
	p = parse_len(text, sizeof(text) - 1);
	assert_int_equal(p->r, -EINVAL);
	assert_int_equal(p->diag.n, 1);
	assert_string_equal(p->diag.entries[0].text, "t.conf:2: line contains a NUL byte");
	assert_int_equal(p->diag.entries[0].line, 2);
	assert_int_equal(p->cfg.level, 2);
	assert_int_equal(p->cfg.model, MODEL_HARDWARE);
	free(p);

	p = parse_len(last, sizeof(last) - 1);
	assert_int_equal(p->r, -EINVAL);
	assert_int_equal(p->diag.n, 1);
	assert_string_equal(p->diag.entries[0].text, "t.conf:3: line contains a NUL byte");
	free(p);
}

static void test_error_values(void **state)
{
	(void)state;
	/* [collect] interval */
	expect_error("[collect]\ninterval = fast\n", 2,
		     "t.conf:2: [collect] interval: invalid duration \"fast\": " DHINT);
	expect_error("[collect]\ninterval = 5\n", 2,
		     "t.conf:2: [collect] interval: invalid duration \"5\": " DHINT);
	expect_error("[collect]\ninterval = 1d\n", 2,
		     "t.conf:2: [collect] interval: invalid duration \"1d\": unknown unit; " DHINT);
	expect_error("[collect]\ninterval =\n", 2,
		     "t.conf:2: [collect] interval: invalid duration \"\": " DHINT);
	expect_error("[collect]\ninterval = 5ms\n", 2,
		     "t.conf:2: [collect] interval: 5ms is out of range: expected 10ms to 1m");
	expect_error("[collect]\ninterval = 61s\n", 2,
		     "t.conf:2: [collect] interval: 61s is out of range: expected 10ms to 1m");
	/* [collect] cpus */
	expect_error("[collect]\ncpus = 3-1\n", 2,
		     "t.conf:2: [collect] cpus: invalid CPU list \"3-1\": range 3-1 is reversed; expected all or a list like 0-15,32-47");
	expect_error("[collect]\ncpus = 1,,2\n", 2,
		     "t.conf:2: [collect] cpus: invalid CPU list \"1,,2\": expected a CPU number at \",2\"; expected all or a list like 0-15,32-47");
	expect_error("[collect]\ncpus = 9000\n", 2,
		     "t.conf:2: [collect] cpus: invalid CPU list \"9000\": CPU number at \"9000\" exceeds the maximum 8191; expected all or a list like 0-15,32-47");
	expect_error("[collect]\ncpus = ALL\n", 2,
		     "t.conf:2: [collect] cpus: invalid CPU list \"ALL\": expected a CPU number at \"ALL\"; expected all or a list like 0-15,32-47");
	expect_error("[collect]\ncpus =\n", 2,
		     "t.conf:2: [collect] cpus: empty CPU list: expected all or a list like 0-15,32-47");
	/* [collect] level */
	expect_error("[collect]\nlevel = 7\n", 2,
		     "t.conf:2: [collect] level: 7 is out of range: expected an integer from 1 to 6");
	expect_error("[collect]\nlevel = 0\n", 2,
		     "t.conf:2: [collect] level: 0 is out of range: expected an integer from 1 to 6");
	expect_error("[collect]\nlevel = two\n", 2,
		     "t.conf:2: [collect] level: invalid number \"two\": expected an integer from 1 to 6");
	/* [collect] model */
	expect_error("[collect]\nmodel = fast\n", 2,
		     "t.conf:2: [collect] model: invalid value \"fast\": expected perf or hardware");
	expect_error("[collect]\nmodel = Perf\n", 2,
		     "t.conf:2: [collect] model: invalid value \"Perf\": expected perf or hardware");
	/* [collect] count_kernel */
	expect_error("[collect]\ncount_kernel = maybe\n", 2,
		     "t.conf:2: [collect] count_kernel: invalid boolean \"maybe\": expected true or false");
	/* [metrics] */
	expect_error("[metrics]\ngranularity = thread\n", 2,
		     "t.conf:2: [metrics] granularity: invalid value \"thread\": expected cpu, core, package or system");
	expect_error("[metrics]\nratios = 2\n", 2,
		     "t.conf:2: [metrics] ratios: invalid boolean \"2\": expected true or false");
	/* [http] listen */
	expect_error("[http]\nlisten = bad\n", 2,
		     "t.conf:2: [http] listen: invalid address \"bad\": " LHINT);
	expect_error("[http]\nlisten = [::1]:1 127.0.0.1:99999\n", 2,
		     "t.conf:2: [http] listen: invalid port in \"127.0.0.1:99999\": expected 0 to 65535");
	expect_error("[http]\nlisten = ::1:80\n", 2,
		     "t.conf:2: [http] listen: invalid address \"::1:80\": write IPv6 addresses in brackets, e.g. [::1]:10412");
	expect_error("[http]\nlisten = unix:run.sock\n", 2,
		     "t.conf:2: [http] listen: invalid address \"unix:run.sock\": unix socket path must be absolute");
	expect_error("[http]\nlisten =\n", 2,
		     "t.conf:2: [http] listen: expected at least one address (host:port, [ipv6]:port or unix:/path)");
	expect_error("[http]\nlisten = [::1]:1 127.0.0.1:2 [::1]:1\n", 2,
		     "t.conf:2: [http] listen: address [::1]:1 is listed twice");
	expect_error("[http]\nlisten = unix:/a unix:/b unix:/c unix:/d unix:/e unix:/f unix:/g unix:/h "
		     "unix:/i unix:/j unix:/k unix:/l unix:/m unix:/n unix:/o unix:/p unix:/q\n", 2,
		     "t.conf:2: [http] listen: more than 16 addresses");
	/* [http] paths */
	expect_error("[http]\ntls_cert = cert.pem\ntls_key = /k.pem\n", 2,
		     "t.conf:2: [http] tls_cert: \"cert.pem\" is not an absolute path");
	expect_error("[http]\nbasic_auth_file = ./htpasswd\n", 2,
		     "t.conf:2: [http] basic_auth_file: \"./htpasswd\" is not an absolute path");
	/* [http] max_connections */
	expect_error("[http]\nmax_connections = 0\n", 2,
		     "t.conf:2: [http] max_connections: 0 is out of range: expected an integer from 1 to 65536");
	expect_error("[http]\nmax_connections = 65537\n", 2,
		     "t.conf:2: [http] max_connections: 65537 is out of range: expected an integer from 1 to 65536");
	expect_error("[http]\nmax_connections = -1\n", 2,
		     "t.conf:2: [http] max_connections: invalid number \"-1\": expected an integer from 1 to 65536");
	/* [http] timeout */
	expect_error("[http]\ntimeout = 500ms\n", 2,
		     "t.conf:2: [http] timeout: 500ms is out of range: expected 1s to 1h");
	expect_error("[http]\ntimeout = 2h\n", 2,
		     "t.conf:2: [http] timeout: 2h is out of range: expected 1s to 1h");
	expect_error("[http]\ntimeout = soon\n", 2,
		     "t.conf:2: [http] timeout: invalid duration \"soon\": " DHINT);
	/* [log] level */
	expect_error("[log]\nlevel = verbose\n", 2,
		     "t.conf:2: [log] level: invalid value \"verbose\": expected error, warning, info, debug or warn");
}

static void test_value_ranges_inclusive(void **state)
{
	struct parsed *p;

	(void)state;
	p = parse_ok("[collect]\ninterval = 10ms\n[http]\nmax_connections = 1\ntimeout = 1s\n");
	assert_int_equal(p->cfg.interval_ns, UINT64_C(10000000));
	assert_int_equal(p->cfg.max_connections, 1);
	assert_int_equal(p->cfg.timeout_ns, UINT64_C(1000000000));
	free(p);
	p = parse("[collect]\ninterval = 60s\n[http]\nmax_connections = 65536\ntimeout = 1h\n");
	assert_int_equal(p->r, 0);
	assert_int_equal(p->diag.n_errors, 0);
	assert_int_equal(p->cfg.interval_ns, UINT64_C(60000000000));
	assert_int_equal(p->cfg.max_connections, 65536);
	assert_int_equal(p->cfg.timeout_ns, UINT64_C(3600000000000));
	free(p);
	/* 16 listen addresses are fine. */
	p = parse_ok("[http]\nlisten = unix:/a unix:/b unix:/c unix:/d unix:/e unix:/f unix:/g unix:/h "
		     "unix:/i unix:/j unix:/k unix:/l unix:/m unix:/n unix:/o unix:/p\n");
	assert_int_equal(p->cfg.n_listen, 16);
	assert_string_equal(p->cfg.listen[15].path, "/p");
	free(p);
}

static void test_interval_warning(void **state)
{
	struct parsed *p;

	(void)state;
	p = parse("[collect]\n\ninterval = 10s\n");
	assert_int_equal(p->r, 0);
	assert_int_equal(p->diag.n, 1);
	assert_int_equal(p->diag.n_errors, 0);
	assert_true(p->diag.entries[0].warning);
	assert_int_equal(p->diag.entries[0].line, 3);
	assert_string_equal(p->diag.entries[0].text,
			    "t.conf:3: warning: [collect] interval 10s is longer than 5s: the 8-bit TopDown metrics lose precision between reads");
	assert_int_equal(p->cfg.interval_ns, UINT64_C(10000000000));
	free(p);

	p = parse("[collect]\ninterval = 5001ms\n");
	assert_int_equal(p->r, 0);
	assert_int_equal(p->diag.n, 1);
	assert_true(p->diag.entries[0].warning);
	free(p);

	/* 5s itself is fine. */
	free(parse_ok("[collect]\ninterval = 5s\n"));

	/* A warning next to an error: the file is rejected for the error. */
	p = parse("[collect]\ninterval = 30s\nlevel = 9\n");
	assert_int_equal(p->r, -EINVAL);
	assert_int_equal(p->diag.n, 2);
	assert_int_equal(p->diag.n_errors, 1);
	assert_true(p->diag.entries[0].warning);
	assert_false(p->diag.entries[1].warning);
	assert_string_equal(p->diag.entries[1].text,
			    "t.conf:3: [collect] level: 9 is out of range: expected an integer from 1 to 6");
	free(p);
}

static void test_error_tls(void **state)
{
	(void)state;
	expect_error("[http]\nmax_connections = 5\ntls_cert = /etc/c.pem\n", 3,
		     "t.conf:3: [http] tls_cert and tls_key must be set together (tls_key is empty)");
	expect_error("[http]\ntls_key = /etc/k.pem\n", 2,
		     "t.conf:2: [http] tls_cert and tls_key must be set together (tls_cert is empty)");
	expect_error("[http]\n\ntls_client_ca = /etc/ca.pem\n", 3,
		     "t.conf:3: [http] tls_client_ca needs tls_cert and tls_key (client certificates are checked over HTTPS only)");
	free(parse_ok("[http]\ntls_cert = /etc/c.pem\ntls_key = /etc/k.pem\ntls_client_ca = /etc/ca.pem\n"));
}

static void test_validate(void **state)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	char err[256];

	(void)state;
	config_defaults(cfg);
	assert_int_equal(config_validate(cfg, err, sizeof(err)), 0);
	strcpy(cfg->tls_cert, "/c");
	assert_int_equal(config_validate(cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "[http] tls_cert and tls_key must be set together (tls_key is empty)");
	strcpy(cfg->tls_key, "/k");
	assert_int_equal(config_validate(cfg, err, sizeof(err)), 0);
	strcpy(cfg->tls_client_ca, "/ca");
	assert_int_equal(config_validate(cfg, err, sizeof(err)), 0);
	cfg->tls_cert[0] = cfg->tls_key[0] = '\0';
	assert_int_equal(config_validate(cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "[http] tls_client_ca needs tls_cert and tls_key (client certificates are checked over HTTPS only)");
	free(cfg);
}

static void test_many_errors(void **state)
{
	char text[8192] = "[collect]\n";
	struct parsed *p;

	(void)state;
	/* Every problem is counted; 64 are kept. */
	for (int i = 0; i < 70; i++)
		strcat(text, "bogus = 1\n");
	p = parse(text);
	assert_int_equal(p->r, -EINVAL);
	assert_int_equal(p->diag.n, CONFIG_DIAG_MAX);
	assert_int_equal(p->diag.n_errors, 70);
	assert_int_equal(p->diag.dropped, 70 - CONFIG_DIAG_MAX);
	assert_string_equal(p->diag.entries[63].text,
			    "t.conf:65: unknown key \"bogus\" in [collect]: expected interval, cpus, level, drilldown, depth_multiplex, model, count_kernel, count_guest, history, pmu_sharing, smt");
	free(p);

	/* Several errors come in line order, each with its line. */
	p = parse("[collect]\nlevel = 7\nmodel = x\n[nope]\n[log]\nlevel = loud\n");
	assert_int_equal(p->r, -EINVAL);
	assert_int_equal(p->diag.n, 4);
	assert_int_equal(p->diag.entries[0].line, 2);
	assert_int_equal(p->diag.entries[1].line, 3);
	assert_int_equal(p->diag.entries[2].line, 4);
	assert_int_equal(p->diag.entries[3].line, 6);
	assert_string_equal(p->diag.entries[3].text,
			    "t.conf:6: [log] level: invalid value \"loud\": expected error, warning, info, debug or warn");
	free(p);
}

/* ---- loading ---- */

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_load_missing(void **state)
{
	struct parsed *p = calloc(1, sizeof(*p));
	struct config *def = calloc(1, sizeof(*def));
	char path[128], msg[256];

	(void)state;
	config_defaults(def);
	snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, true, &p->cfg, &p->diag), 0);
	assert_int_equal(p->diag.n, 0);
	assert_config_equal(&p->cfg, def);

	assert_int_equal(config_load(path, false, &p->cfg, &p->diag), -ENOENT);
	assert_int_equal(p->diag.n, 1);
	assert_int_equal(p->diag.n_errors, 1);
	snprintf(msg, sizeof(msg), "%s: cannot open: No such file or directory", path);
	assert_string_equal(p->diag.entries[0].text, msg);
	assert_int_equal(p->diag.entries[0].line, 0);
	free(p);
	free(def);
}

/* A reload needs a file with settings in it: missing or empty, it fails
 * (the configuration in force stays); a FIFO, which would block the
 * reader until a writer came, is refused at once, at start as on reload. */
static void test_load_reload(void **state)
{
	struct parsed *p = calloc(1, sizeof(*p));
	char path[128], msg[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, CONFIG_LOAD_MISSING_OK | CONFIG_LOAD_RELOAD, &p->cfg, &p->diag),
			 -ENOENT);
	snprintf(msg, sizeof(msg),
		 "%s: cannot open: No such file or directory (a reload needs the file: the configuration in force stays)",
		 path);
	assert_string_equal(p->diag.entries[0].text, msg);

	snprintf(path, sizeof(path), "%s/empty.conf", tmpdir);
	write_file(path, " \n\t\n", 4);
	memset(p, 0, sizeof(*p));
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, CONFIG_LOAD_RELOAD, &p->cfg, &p->diag), -ENODATA);
	snprintf(msg, sizeof(msg),
		 "%s: is empty: a reload needs the settings written out (the configuration in force stays)", path);
	assert_string_equal(p->diag.entries[0].text, msg);
	memset(p, 0, sizeof(*p));
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, 0, &p->cfg, &p->diag), 0); /* at start: the defaults */
	assert_int_equal(config_load("/dev/null", 0, &p->cfg, &p->diag), 0);

	snprintf(path, sizeof(path), "%s/fifo.conf", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	memset(p, 0, sizeof(*p));
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, CONFIG_LOAD_RELOAD, &p->cfg, &p->diag), -ENXIO);
	snprintf(msg, sizeof(msg),
		 "%s: cannot open: not a regular file (a FIFO, socket or device could block the daemon)", path);
	assert_string_equal(p->diag.entries[0].text, msg);
	unlink(path);
	free(p);
}

static void test_load_directory(void **state)
{
	struct parsed *p = calloc(1, sizeof(*p));
	char msg[256];

	(void)state;
	config_defaults(&p->cfg);
	assert_int_equal(config_load(tmpdir, false, &p->cfg, &p->diag), -EISDIR);
	assert_int_equal(p->diag.n, 1);
	snprintf(msg, sizeof(msg), "%s: is a directory, not a config file", tmpdir);
	assert_string_equal(p->diag.entries[0].text, msg);
	/* missing_ok is about missing files only. */
	memset(&p->diag, 0, sizeof(p->diag));
	assert_int_equal(config_load(tmpdir, true, &p->cfg, &p->diag), -EISDIR);
	assert_int_equal(p->diag.n_errors, 1);
	free(p);
}

static void test_load_file(void **state)
{
	static const char good[] = "[collect]\nlevel = 1\n[http]\nlisten = unix:/run/t.sock\n";
	static const char bad[] = "[collect]\nlevel = 1\n\nmodel = turbo\n";
	struct parsed *p = calloc(1, sizeof(*p));
	char path[128], msg[300];

	(void)state;
	snprintf(path, sizeof(path), "%s/good.conf", tmpdir);
	write_file(path, good, sizeof(good) - 1);
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, false, &p->cfg, &p->diag), 0);
	assert_int_equal(p->diag.n, 0);
	assert_int_equal(p->cfg.level, 1);
	assert_int_equal(p->cfg.n_listen, 1);
	assert_string_equal(p->cfg.listen[0].path, "/run/t.sock");

	/* Messages are named after the path. */
	snprintf(path, sizeof(path), "%s/bad.conf", tmpdir);
	write_file(path, bad, sizeof(bad) - 1);
	memset(p, 0, sizeof(*p));
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, true, &p->cfg, &p->diag), -EINVAL);
	assert_int_equal(p->diag.n, 1);
	snprintf(msg, sizeof(msg),
		 "%s:4: [collect] model: invalid value \"turbo\": expected perf or hardware", path);
	assert_string_equal(p->diag.entries[0].text, msg);

	/* /dev/null is an empty config. */
	memset(p, 0, sizeof(*p));
	config_defaults(&p->cfg);
	assert_int_equal(config_load("/dev/null", false, &p->cfg, &p->diag), 0);
	assert_int_equal(p->diag.n, 0);
	free(p);
}

static void test_load_size_limit(void **state)
{
	struct parsed *p = calloc(1, sizeof(*p));
	size_t len = CONFIG_FILE_MAX;
	char *data = malloc(len + 1);
	char path[128], msg[300];

	(void)state;
	/* Exactly CONFIG_FILE_MAX bytes of comments: accepted. */
	for (size_t i = 0; i < len; i += 64) {
		memset(data + i, '#', 63);
		data[i + 63] = '\n';
	}
	snprintf(path, sizeof(path), "%s/max.conf", tmpdir);
	write_file(path, data, len);
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, false, &p->cfg, &p->diag), 0);
	assert_int_equal(p->diag.n, 0);

	/* One byte more: refused. */
	data[len] = '\n';
	snprintf(path, sizeof(path), "%s/big.conf", tmpdir);
	write_file(path, data, len + 1);
	memset(p, 0, sizeof(*p));
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, false, &p->cfg, &p->diag), -EFBIG);
	assert_int_equal(p->diag.n, 1);
	snprintf(msg, sizeof(msg), "%s: larger than 1048576 bytes", path);
	assert_string_equal(p->diag.entries[0].text, msg);
	free(data);
	free(p);
}

static void test_load_example_config(void **state)
{
	static const char path[] = "config/topdownd.conf";
	struct parsed *p = calloc(1, sizeof(*p));
	struct config *def = calloc(1, sizeof(*def));

	(void)state;
	if (access(path, R_OK) != 0) {
		free(p);
		free(def);
		skip();
	}
	config_defaults(def);
	config_defaults(&p->cfg);
	assert_int_equal(config_load(path, false, &p->cfg, &p->diag), 0);
	dump_diag(&p->diag);
	assert_int_equal(p->diag.n, 0);
	/* The example lists every key with its default. */
	assert_config_equal(&p->cfg, def);
	free(p);
	free(def);
}

/* ---- printing ---- */

static void test_print_defaults(void **state)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	char *text;

	(void)state;
	config_defaults(cfg);
	text = print_config(cfg);
	assert_string_equal(text, DEFAULTS_TEXT);
	free(text);
	free(cfg);
}

static const char modified_text[] =
	"[collect]\n"
	"interval = 1500ms\n"
	"cpus = 0-3,8,10-11\n"
	"level = 1\n"
	"drilldown = true\n"
	"depth_multiplex = true\n"
	"model = hardware\n"
	"count_kernel = false\n"
	"count_guest = true\n"
	"history = 2h\n"
	"pmu_sharing = share\n"
	"smt = off\n"
	"\n"
	"[metrics]\n"
	"granularity = system\n"
	"ratios = false\n"
	"\n"
	"[http]\n"
	"listen = 127.0.0.1:9100 [::1]:9100 unix:/run/topdownd.sock metrics.example.com:80\n"
	"tls_cert = /etc/topdownd/cert.pem\n"
	"tls_key = /etc/topdownd/key.pem\n"
	"tls_client_ca = /etc/topdownd/ca.pem\n"
	"basic_auth_file = /etc/topdownd/htpasswd\n"
	"web_config_file =\n"
	"allow_plaintext = false\n"
	"allow_unauthenticated = true\n"
	"max_connections = 1000\n"
	"timeout = 2m\n"
	"unhealthy_after = 90s\n"
	"\n"
	"[log]\n"
	"level = debug\n"
	"format = logfmt\n"
	"\n"
	"[cgroups]\n"
	"enabled = true\n"
	"root = /sys/fs/cgroup\n"
	"track = system.slice/*.service\n"
	"max_cgroups = 50\n"
	"level = 2\n"
	"budget = 0.5%\n"
	"trigger = sched_switch\n";

/* "#" after a value starts a comment, as " ;" does; not inside a value. */
static void test_inline_hash_comment(void **state)
{
	struct parsed *p;

	(void)state;
	p = parse_ok("[collect]\ninterval = 2s # two seconds\nlevel = 1\t#tab\n"
		     "[http]\nbasic_auth_file = /etc/topdownd/users#1 # the file\n");
	assert_int_equal(p->cfg.interval_ns, 2 * UINT64_C(1000000000));
	assert_int_equal(p->cfg.level, 1);
	assert_string_equal(p->cfg.basic_auth_file, "/etc/topdownd/users#1");
	free(p);
}

/* The pairing of the TLS keys is checked even after other errors, so
 * one run reports every problem; but not when a TLS path was refused. */
static void test_all_problems(void **state)
{
	struct parsed *p;

	(void)state;
	p = parse("[collect]\nlevel = 7\n[http]\ntls_cert = /a.pem\n");
	assert_int_equal(p->r, -EINVAL);
	assert_int_equal(p->diag.n, 2);
	assert_string_equal(p->diag.entries[0].text,
			    "t.conf:2: [collect] level: 7 is out of range: expected an integer from 1 to 6");
	assert_string_equal(p->diag.entries[1].text,
			    "t.conf:4: [http] tls_cert and tls_key must be set together (tls_key is empty)");
	free(p);
}

static void test_print_modified(void **state)
{
	struct parsed *p;
	char *text;

	(void)state;
	/* Values written differently from how they print. */
	p = parse_ok("[cgroups]\ntrigger = sched_switch\nbudget = 0.50%\nlevel = 2\nmax_cgroups = 050\nenabled = yes\n"
		     "track = /system.slice/*.service\nroot = /sys/fs/cgroup\n"
		     "[log]\nformat = logfmt\nlevel = debug\n"
		     "[http]\ntimeout = 120s\nunhealthy_after = 1.5m\nmax_connections = 01000\n"
		     "listen = 127.0.0.1:9100 [::1]:9100 unix:/run/topdownd.sock metrics.example.com:80\n"
		     "tls_cert = /etc/topdownd/cert.pem\ntls_key = /etc/topdownd/key.pem\n"
		     "tls_client_ca = /etc/topdownd/ca.pem\nbasic_auth_file = /etc/topdownd/htpasswd\n"
		     "allow_unauthenticated = yes\n"
		     "[metrics]\nratios = off\ngranularity = system\n"
		     "[collect]\ninterval = 1.5s\ncpus = 11,10,8,0-3\nlevel = 1\ndrilldown = Yes\ndepth_multiplex = ON\nmodel = hardware\n"
		     "count_kernel = NO\ncount_guest = on\nhistory = 120m # two hours\npmu_sharing = share\nsmt = off\n");
	text = print_config(&p->cfg);
	assert_string_equal(text, modified_text);
	free(text);
	free(p);
}

/* Warnings (a long interval) are allowed, errors are not. */
static struct parsed *parse_no_error(const char *text)
{
	struct parsed *p = parse(text);

	if (p->r != 0 || p->diag.n_errors != 0) {
		dump_diag(&p->diag);
		fail_msg("config_parse(\"%s\") = %d with %zu errors", text, p->r, p->diag.n_errors);
	}
	return p;
}

static void roundtrip(const char *input)
{
	struct parsed *a = parse_no_error(input), *b;
	char *text = print_config(&a->cfg), *again;

	b = parse_no_error(text);
	assert_config_equal(&a->cfg, &b->cfg);
	again = print_config(&b->cfg);
	assert_string_equal(again, text);
	free(again);
	free(text);
	free(a);
	free(b);
}

static void test_print_roundtrip(void **state)
{
	(void)state;
	roundtrip("");
	roundtrip(modified_text);
	roundtrip("[collect]\ninterval = 10ms\ncpus = 8191\n[http]\nlisten = [fe80::1]:1 0.0.0.0:0\n"
		  "timeout = 3599999ms\n[metrics]\ngranularity = core\n");
	roundtrip("[collect]\ninterval = 1234567us\ncpus = 0,2,4,6,8-100\n[log]\nlevel = warning\n"
		  "[metrics]\ngranularity = package\n");
	roundtrip("[collect]\ninterval = 60s\n[log]\nlevel = error\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_parse_empty),
		cmocka_unit_test(test_parse_every_key),
		cmocka_unit_test(test_parse_syntax_variants),
		cmocka_unit_test(test_line_lengths),
		cmocka_unit_test(test_error_unknown_section),
		cmocka_unit_test(test_unknown_section_then_known),
		cmocka_unit_test(test_error_unknown_key),
		cmocka_unit_test(test_error_duplicate),
		cmocka_unit_test(test_error_outside_section),
		cmocka_unit_test(test_error_syntax),
		cmocka_unit_test(test_error_text_after_section_header),
		cmocka_unit_test(test_error_unterminated_header_later),
		cmocka_unit_test(test_error_nul_byte),
		cmocka_unit_test(test_error_values),
		cmocka_unit_test(test_value_ranges_inclusive),
		cmocka_unit_test(test_interval_warning),
		cmocka_unit_test(test_error_tls),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_many_errors),
		cmocka_unit_test(test_load_missing),
		cmocka_unit_test(test_load_directory),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_size_limit),
		cmocka_unit_test(test_load_example_config),
		cmocka_unit_test(test_load_reload),
		cmocka_unit_test(test_print_defaults),
		cmocka_unit_test(test_print_modified),
		cmocka_unit_test(test_inline_hash_comment),
		cmocka_unit_test(test_all_problems),
		cmocka_unit_test(test_print_roundtrip),
		cmocka_unit_test(test_diff_and_copy),
		cmocka_unit_test(test_protection_off),
		cmocka_unit_test(test_track_presets),
	};

	return cmocka_run_group_tests(tests, tmpdir_make, tmpdir_remove);
}
