/* SPDX-License-Identifier: MIT */
/* parse_listen_addr over arbitrary text (-l and [http] listen).
 * Invariants: errors are -EINVAL/-ERANGE with a message; host and path
 * are terminated within their arrays; an accepted address formats
 * (format_listen_addr) into text that parses back to the same address and
 * formats identically; short buffers stay terminated. */
#include <errno.h>

#include "fuzz_common.h"
#include "parse.h"

#define ERRLEN 200

static void check_addr(const struct listen_addr *a, const char *text)
{
	FUZZ_CHECK(a->kind == LISTEN_INET || a->kind == LISTEN_UNIX, "kind %d", (int)a->kind);
	FUZZ_CHECK(memchr(a->host, '\0', sizeof(a->host)), "host unterminated for \"%s\"", text);
	FUZZ_CHECK(memchr(a->path, '\0', sizeof(a->path)), "path unterminated for \"%s\"", text);
	if (a->kind == LISTEN_UNIX)
		FUZZ_CHECK(a->path[0] == '/', "relative unix path from \"%s\"", text);
	else
		FUZZ_CHECK(a->host[0] != '\0', "empty host from \"%s\"", text);
}

static bool addr_equal(const struct listen_addr *a, const struct listen_addr *b)
{
	return a->kind == b->kind && strcmp(a->host, b->host) == 0 &&
	       a->ipv6_literal == b->ipv6_literal && a->port == b->port &&
	       strcmp(a->path, b->path) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct listen_addr addr, again;
	char *text = fuzz_cstr(data, size);
	char *err = fuzz_malloc(ERRLEN);
	char buf[LISTEN_HOST_MAX + LISTEN_PATH_MAX + 16], buf2[sizeof(buf)];
	int r;

	r = parse_listen_addr(text, &addr, err, ERRLEN);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL || r == -ERANGE, "parse_listen_addr returned %d", r);
		FUZZ_CHECK(fuzz_err_ok(err, ERRLEN), "no message for \"%s\"", text);
		goto out;
	}
	check_addr(&addr, text);
	format_listen_addr(&addr, buf, sizeof(buf));
	r = parse_listen_addr(buf, &again, err, ERRLEN);
	FUZZ_CHECK(r == 0, "\"%s\" formats as \"%s\", which does not parse: %s", text, buf, err);
	FUZZ_CHECK(addr_equal(&addr, &again), "\"%s\" -> \"%s\" -> another address", text, buf);
	format_listen_addr(&again, buf2, sizeof(buf2));
	FUZZ_CHECK(strcmp(buf, buf2) == 0, "formats \"%s\" then \"%s\"", buf, buf2);
	{
		size_t cap = strlen(buf) / 2 + 1;
		char *small = fuzz_malloc(cap);

		format_listen_addr(&addr, small, cap);
		FUZZ_CHECK(memchr(small, '\0', cap) && strncmp(small, buf, strlen(small)) == 0,
			   "truncated format of \"%s\"", buf);
		free(small);
	}
out:
	free(err);
	free(text);
	return 0;
}
