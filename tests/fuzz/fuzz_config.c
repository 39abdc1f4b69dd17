/* SPDX-License-Identifier: MIT */
/* config_parse over the bytes of a whole config file (no terminating NUL:
 * config_load hands the parser exactly what it read).
 * Invariants: diagnostics are bounded, terminated, and errors make the
 * call fail; an accepted configuration passes config_validate; printed by
 * config_print (--print-config) it parses back without errors into an
 * equal configuration, which prints identically. */
#include <errno.h>

#include "config.h"
#include "fuzz_common.h"

static void check_diag(const struct config_diag *d, int r)
{
	size_t errors = 0;

	FUZZ_CHECK(d->n <= CONFIG_DIAG_MAX, "%zu diagnostics", d->n);
	for (size_t i = 0; i < d->n; i++) {
		const struct config_diag_entry *e = &d->entries[i];

		FUZZ_CHECK(memchr(e->text, '\0', sizeof(e->text)), "diagnostic %zu unterminated", i);
		FUZZ_CHECK(e->text[0] != '\0', "diagnostic %zu empty", i);
		FUZZ_CHECK(!strchr(e->text, '\n'), "diagnostic %zu has a newline: %s", i, e->text);
		errors += !e->warning;
	}
	FUZZ_CHECK(d->dropped > 0 || errors == d->n_errors, "%zu errors listed, %zu counted",
		   errors, d->n_errors);
	FUZZ_CHECK(d->n + d->dropped >= d->n_errors, "error count %zu too high", d->n_errors);
	FUZZ_CHECK((r == 0) == (d->n_errors == 0), "config_parse returned %d with %zu errors", r,
		   d->n_errors);
	FUZZ_CHECK(r == 0 || r == -EINVAL, "config_parse returned %d", r);
}

static bool listen_equal(const struct listen_addr *a, const struct listen_addr *b)
{
	return a->kind == b->kind && strcmp(a->host, b->host) == 0 &&
	       a->ipv6_literal == b->ipv6_literal && a->port == b->port &&
	       strcmp(a->path, b->path) == 0;
}

/* Field by field: which members are meaningful, not the padding.  Not
 * the daemon's config_diff(), which compares what config_print() writes:
 * the round trip under test. */
static const char *field_differing(const struct config *a, const struct config *b)
{
	if (a->interval_ns != b->interval_ns)
		return "interval";
	if (a->cpus_all != b->cpus_all || !cpuset_equal(&a->cpus, &b->cpus))
		return "cpus";
	if (a->level != b->level)
		return "level";
	if (a->model != b->model)
		return "model";
	if (a->count_kernel != b->count_kernel)
		return "count_kernel";
	if (a->granularity != b->granularity)
		return "granularity";
	if (a->ratios != b->ratios)
		return "ratios";
	if (a->n_listen != b->n_listen)
		return "listen (count)";
	for (size_t i = 0; i < a->n_listen; i++)
		if (!listen_equal(&a->listen[i], &b->listen[i]))
			return "listen";
	if (strcmp(a->tls_cert, b->tls_cert) != 0)
		return "tls_cert";
	if (strcmp(a->tls_key, b->tls_key) != 0)
		return "tls_key";
	if (strcmp(a->tls_client_ca, b->tls_client_ca) != 0)
		return "tls_client_ca";
	if (strcmp(a->basic_auth_file, b->basic_auth_file) != 0)
		return "basic_auth_file";
	if (a->max_connections != b->max_connections)
		return "max_connections";
	if (a->timeout_ns != b->timeout_ns)
		return "timeout";
	if (a->log_level != b->log_level)
		return "log level";
	return NULL;
}

static char *print(const struct config *cfg, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		abort();
	config_print(cfg, f);
	if (fclose(f) != 0)
		abort();
	return text;
}

static void dump_diag(const struct config_diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "  %s\n", d->entries[i].text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *cfg = fuzz_malloc(sizeof(*cfg)), *again = fuzz_malloc(sizeof(*again));
	struct config_diag *diag = calloc(1, sizeof(*diag));
	char *file = fuzz_malloc(size), *text = NULL, *text2 = NULL;
	size_t len, len2;
	const char *diff;
	char err[256];
	int r;

	if (!diag)
		abort();
	memcpy(file, data, size);
	config_defaults(cfg);
	r = config_parse("fuzz.conf", file, size, cfg, diag);
	check_diag(diag, r);
	if (r < 0)
		goto out;
	FUZZ_CHECK(config_validate(cfg, err, sizeof(err)) == 0, "accepted but invalid: %s", err);

	text = print(cfg, &len);
	config_defaults(again);
	memset(diag, 0, sizeof(*diag));
	r = config_parse("printed.conf", text, len, again, diag);
	if (r < 0) {
		fprintf(stderr, "config_print wrote:\n%s", text);
		dump_diag(diag);
	}
	FUZZ_CHECK(r == 0, "the printed configuration does not parse (%zu errors): %s", diag->n_errors,
		   diag->n ? diag->entries[0].text : "?");
	diff = field_differing(cfg, again);
	if (diff)
		fprintf(stderr, "config_print wrote:\n%s", text);
	FUZZ_CHECK(!diff, "printed then parsed, %s differs", diff);
	text2 = print(again, &len2);
	FUZZ_CHECK(len == len2 && memcmp(text, text2, len) == 0, "printing is not stable");
out:
	free(text);
	free(text2);
	free(file);
	free(diag);
	free(again);
	free(cfg);
	return 0;
}
