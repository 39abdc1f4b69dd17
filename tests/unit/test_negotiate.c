/* SPDX-License-Identifier: MIT */
/* Unit tests of negotiate: the /metrics format from Accept (RFC 9110
 * section 12.5.1 with q-values and media ranges) and gzip from
 * Accept-Encoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "negotiate.h"

#define OM NEGOTIATE_OPENMETRICS
#define TEXT NEGOTIATE_TEXT

/* What Prometheus 2.x sends when scraping. */
#define PROMETHEUS_ACCEPT                                                                 \
	"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;" \
	"q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

static void format_is(const char *accept, enum negotiate_format want)
{
	enum negotiate_format got = negotiate_format(accept);

	if (got != want)
		fail_msg("negotiate_format(\"%s\") = %s, expected %s", accept ? accept : "(null)",
			 got == OM ? "openmetrics" : "text", want == OM ? "openmetrics" : "text");
}

static void gzip_is(const char *ae, bool want)
{
	bool got = negotiate_gzip(ae);

	if (got != want)
		fail_msg("negotiate_gzip(\"%s\") = %d, expected %d", ae ? ae : "(null)", got, want);
}

static void test_format_defaults(void **state)
{
	(void)state;
	format_is(NULL, TEXT);
	format_is("", TEXT);
	format_is(" ", TEXT);
	format_is(",,", TEXT);
	format_is("*/*", TEXT);
	format_is("text/plain", TEXT);
	format_is("text/plain;version=0.0.4", TEXT);
	format_is("text/html", TEXT);
	format_is("application/json", TEXT);
	format_is("garbage;;;==,", TEXT);
}

static void test_format_prometheus(void **state)
{
	(void)state;
	format_is(PROMETHEUS_ACCEPT, OM);
	/* Prometheus configured for the text format only (scrape_protocols). */
	format_is("text/plain;version=0.0.4;q=0.5,*/*;q=0.1", TEXT);
	format_is("application/openmetrics-text", OM);
	format_is("application/openmetrics-text;version=1.0.0", OM);
	format_is("application/openmetrics-text;version=0.0.1", OM);
	format_is("application/openmetrics-text;version=1.0.0;charset=utf-8", OM);
}

static void test_format_quality(void **state)
{
	(void)state;
	format_is("application/openmetrics-text;q=0.4,text/plain;q=0.5", TEXT);
	format_is("text/plain;q=0.5,application/openmetrics-text;q=0.4", TEXT);
	format_is("application/openmetrics-text;q=0.6,text/plain;q=0.5", OM);
	format_is("text/plain;q=0.5,application/openmetrics-text;q=0.6", OM);
	format_is("text/plain;q=0.001,application/openmetrics-text;q=0.002", OM);
	/* q=0 means "not acceptable". */
	format_is("application/openmetrics-text;q=0", TEXT);
	format_is("application/openmetrics-text;q=0.0,text/plain;q=0.1", TEXT);
	/* The best q of several openmetrics entries counts. */
	format_is("application/openmetrics-text;q=0.2,text/plain;q=0.5,"
		  "application/openmetrics-text;version=1.0.0;q=0.9",
		  OM);
	/* q=1 and q=1.000 are the same. */
	format_is("text/plain;q=1.000,application/openmetrics-text;q=1", TEXT);
}

static void test_format_ties(void **state)
{
	(void)state;
	/* Same quality: the first listed wins. */
	format_is("application/openmetrics-text,text/plain", OM);
	format_is("text/plain,application/openmetrics-text", TEXT);
	format_is("application/openmetrics-text;q=0.5,text/plain;q=0.5", OM);
	format_is("text/plain;version=0.0.4;q=0.5,application/openmetrics-text;version=0.0.1;q=0.5",
		  TEXT);
	format_is("text/*,application/openmetrics-text", TEXT);
	format_is("application/openmetrics-text,text/*", OM);
	/* The full wildcard alone never picks OpenMetrics, wherever it is listed. */
	format_is("*/*,text/plain", TEXT);
	format_is("*/*;q=0.9,text/plain;q=0.1", TEXT);
	format_is("*/*;q=0.5", TEXT);
	/* But an explicit OpenMetrics entry beats text offered by the wildcard only. */
	format_is("application/openmetrics-text;q=0.5,*/*;q=0.1", OM);
	format_is("application/openmetrics-text,*/*", OM);
}

static void test_format_versions(void **state)
{
	(void)state;
	format_is("application/openmetrics-text;version=2.0.0", TEXT);
	format_is("application/openmetrics-text;version=2.0.0,text/plain;q=0.1", TEXT);
	format_is("application/openmetrics-text;version=1.0", TEXT);
	format_is("application/openmetrics-text;version=2.0.0,application/openmetrics-text;"
		  "version=1.0.0;q=0.3,text/plain;q=0.2",
		  OM);
	/* A text version we do not speak does not count as text. */
	format_is("text/plain;version=1.0.0,application/openmetrics-text;q=0.5", OM);
	/* Quoted parameter values. */
	format_is("application/openmetrics-text;version=\"1.0.0\"", OM);
	format_is("application/openmetrics-text;version=\"2.0.0\"", TEXT);
}

static void test_format_ranges(void **state)
{
	(void)state;
	format_is("application/*", OM);
	format_is("application/*,text/plain", OM);
	format_is("text/plain,application/*", TEXT);
	format_is("application/*;q=0.5,text/plain", TEXT);
	format_is("application/*;q=0.9,text/plain;q=0.5", OM);
	format_is("text/*;q=0.9,application/*;q=0.5", TEXT);
}

static void test_format_malformed_q(void **state)
{
	(void)state;
	/* A malformed q makes the element unacceptable. */
	format_is("application/openmetrics-text;q=abc,text/plain;q=0.1", TEXT);
	format_is("application/openmetrics-text;q=1.5", TEXT);
	format_is("application/openmetrics-text;q=-1", TEXT);
	format_is("application/openmetrics-text;q=", TEXT);
	format_is("application/openmetrics-text;q=0.5x", TEXT);
	format_is("application/openmetrics-text;q=0.5;q=abc", OM); /* the first q counts */
	/* A malformed text element does not disturb a good OpenMetrics one. */
	format_is("text/plain;q=zz,application/openmetrics-text;q=0.1", OM);
}

static void test_format_whitespace_case(void **state)
{
	(void)state;
	format_is("  application/openmetrics-text  ;  version=1.0.0 ; q=0.9 , text/plain ; q=0.8", OM);
	format_is("text/plain ; q=0.9 ,\tapplication/openmetrics-text ;q=0.8", TEXT);
	format_is("Application/OpenMetrics-Text; Version=1.0.0", OM);
	format_is("APPLICATION/OPENMETRICS-TEXT;Q=0.4,TEXT/PLAIN;Q=0.5", TEXT);
	format_is("APPLICATION/OPENMETRICS-TEXT;Q=0.6,TEXT/PLAIN;Q=0.5", OM);
	format_is("application/openmetrics-text;version=1.0.0,\n text/plain", OM);
}

/* RFC 9110 section 12.5.1: "the most specific reference has precedence".
 * An explicit q=0 on OpenMetrics refuses it, whatever a wider range (the
 * full wildcard or application/star) says. */
static void test_format_explicit_refusal(void **state)
{
	(void)state;
	format_is("application/openmetrics-text;q=0,*/*", TEXT);
	format_is("application/openmetrics-text;q=0,application/*", TEXT);
	format_is("application/openmetrics-text;q=0.1,application/*;q=0.9,text/plain;q=0.5", TEXT);
}

static void test_gzip(void **state)
{
	(void)state;
	gzip_is(NULL, false);
	gzip_is("", false);
	gzip_is("gzip", true);
	gzip_is("gzip;q=0", false);
	gzip_is("gzip;q=0.0", false);
	gzip_is("gzip;q=0.001", true);
	gzip_is("deflate, gzip;q=0.5", true);
	gzip_is("deflate, br", false);
	gzip_is("*", true);
	gzip_is("*;q=0", false);
	gzip_is("identity", false);
	gzip_is("identity;q=1, *;q=0", false);
	gzip_is("x-gzip", true);
	gzip_is("GZIP", true);
	gzip_is("X-Gzip;Q=0.5", true);
	gzip_is("  gzip  ;  q=0.8 ", true);
	gzip_is("gzip, deflate, br, zstd", true);
	/* An explicit gzip entry overrides "*". */
	gzip_is("gzip;q=0, *", false);
	gzip_is("*;q=0, gzip", true);
	gzip_is("br;q=1.0, gzip;q=0.8, *;q=0.1", true);
	/* Malformed q: not acceptable. */
	gzip_is("gzip;q=abc", false);
	gzip_is("gzip;q=2", false);
	/* Not gzip. */
	gzip_is("gzipx", false);
	gzip_is("gz", false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_defaults),
		cmocka_unit_test(test_format_prometheus),
		cmocka_unit_test(test_format_quality),
		cmocka_unit_test(test_format_ties),
		cmocka_unit_test(test_format_versions),
		cmocka_unit_test(test_format_ranges),
		cmocka_unit_test(test_format_malformed_q),
		cmocka_unit_test(test_format_whitespace_case),
		cmocka_unit_test(test_format_explicit_refusal),
		cmocka_unit_test(test_gzip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
