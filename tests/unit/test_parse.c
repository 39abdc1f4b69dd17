/* SPDX-License-Identifier: MIT */
/* Unit tests of parse: durations, booleans, unsigned integers, listen
 * addresses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "parse.h"

#define HINT "expected a number with a unit (ns, us, ms, s, m, h), e.g. 500ms or 2s"
#define LHINT "expected host:port, [ipv6]:port or unix:/absolute/path"

static uint64_t dur(const char *text)
{
	char err[256] = "";
	uint64_t ns = 0xdeadbeef;
	int r = parse_duration(text, &ns, err, sizeof(err));

	if (r != 0)
		fail_msg("parse_duration(\"%s\") = %d: %s", text, r, err);
	return ns;
}

static void dur_error(const char *text, int code, const char *msg)
{
	char err[256] = "";
	uint64_t ns = 12345;
	int r = parse_duration(text, &ns, err, sizeof(err));

	if (r != code)
		fail_msg("parse_duration(\"%s\") = %d (ns %llu), expected %d", text, r,
			 (unsigned long long)ns, code);
	assert_string_equal(err, msg);
	assert_int_equal(ns, 12345); /* untouched on error */
}

static void test_duration_units(void **state)
{
	(void)state;
	assert_int_equal(dur("100ms"), UINT64_C(100000000));
	assert_int_equal(dur("1s"), UINT64_C(1000000000));
	assert_int_equal(dur("1.5s"), UINT64_C(1500000000));
	assert_int_equal(dur("2m"), UINT64_C(120000000000));
	assert_int_equal(dur("1h"), UINT64_C(3600000000000));
	assert_int_equal(dur("250us"), UINT64_C(250000));
	assert_int_equal(dur("10ns"), UINT64_C(10));
	assert_int_equal(dur("0.5s"), UINT64_C(500000000));
	assert_int_equal(dur(".5s"), UINT64_C(500000000));
	assert_int_equal(dur("0s"), 0);
	assert_int_equal(dur("0ns"), 0);
	assert_int_equal(dur("1.25ms"), UINT64_C(1250000));
	assert_int_equal(dur("0.001s"), UINT64_C(1000000));
	assert_int_equal(dur("1.5m"), UINT64_C(90000000000));
	assert_int_equal(dur("0.25h"), UINT64_C(900000000000));
	assert_int_equal(dur("010s"), UINT64_C(10000000000));
	/* Beyond nanosecond precision the digits are dropped, not rounded. */
	assert_int_equal(dur("1.0000000019s"), UINT64_C(1000000001));
	assert_int_equal(dur("1.5ns"), 1);
}

static void test_duration_large(void **state)
{
	(void)state;
	/* The largest whole number of hours that fits in 64 bits of ns. */
	assert_int_equal(dur("5124095h"), UINT64_C(5124095) * 3600 * UINT64_C(1000000000));
	assert_int_equal(dur("18446744073s"), UINT64_C(18446744073000000000));
	dur_error("5124096h", -ERANGE, "duration \"5124096h\" is too large");
	dur_error("18446744074s", -ERANGE, "duration \"18446744074s\" is too large");
	dur_error("99999999999999999999999ns", -ERANGE,
		  "duration \"99999999999999999999999ns\" is too large");
}

/* The fractional part must not wrap the result around 2^64 either. */
static void test_duration_fraction_overflow(void **state)
{
	(void)state;
	dur_error("18446744073.9s", -ERANGE, "duration \"18446744073.9s\" is too large");
	dur_error("5124095.9h", -ERANGE, "duration \"5124095.9h\" is too large");
}

static void test_duration_errors(void **state)
{
	(void)state;
	dur_error("", -EINVAL, "invalid duration \"\": " HINT);
	dur_error("5", -EINVAL, "invalid duration \"5\": " HINT);
	dur_error("1d", -EINVAL, "invalid duration \"1d\": unknown unit; " HINT);
	dur_error("s", -EINVAL, "invalid duration \"s\": " HINT);
	dur_error("1.2.3s", -EINVAL, "invalid duration \"1.2.3s\": unknown unit; " HINT);
	dur_error(".s", -EINVAL, "invalid duration \".s\": " HINT);
	dur_error("-1s", -EINVAL, "invalid duration \"-1s\": " HINT);
	dur_error("1 s", -EINVAL, "invalid duration \"1 s\": unknown unit; " HINT);
	dur_error(" 1s", -EINVAL, "invalid duration \" 1s\": " HINT);
	dur_error("1S", -EINVAL, "invalid duration \"1S\": unknown unit; " HINT);
	dur_error("1sec", -EINVAL, "invalid duration \"1sec\": unknown unit; " HINT);
	dur_error("1ms5", -EINVAL, "invalid duration \"1ms5\": unknown unit; " HINT);
	dur_error("1e3ms", -EINVAL, "invalid duration \"1e3ms\": unknown unit; " HINT);
}

static const char *fmt_dur(uint64_t ns)
{
	static char buf[64];

	memset(buf, 'x', sizeof(buf));
	format_duration(ns, buf, sizeof(buf));
	return buf;
}

static void test_format_duration(void **state)
{
	static const char *const round[] = {
		"1s", "100ms", "1500ms", "2m", "90s", "1h", "250us", "10ns", "10ms",
		"60s", "3600s", "1001ms", "7ns", "5124095h",
	};

	(void)state;
	assert_string_equal(fmt_dur(0), "0ns");
	assert_string_equal(fmt_dur(1), "1ns");
	assert_string_equal(fmt_dur(UINT64_C(1000)), "1us");
	assert_string_equal(fmt_dur(UINT64_C(1000000)), "1ms");
	assert_string_equal(fmt_dur(UINT64_C(1000000000)), "1s");
	assert_string_equal(fmt_dur(UINT64_C(1500000000)), "1500ms");
	assert_string_equal(fmt_dur(UINT64_C(60000000000)), "1m");
	assert_string_equal(fmt_dur(UINT64_C(90000000000)), "90s");
	assert_string_equal(fmt_dur(UINT64_C(3600000000000)), "1h");
	assert_string_equal(fmt_dur(UINT64_C(5400000000000)), "90m");
	assert_string_equal(fmt_dur(UINT64_C(1000001)), "1000001ns");
	assert_string_equal(fmt_dur(UINT64_MAX), "18446744073709551615ns");
	/* Formatting then parsing gives the same value. */
	for (size_t i = 0; i < sizeof(round) / sizeof(round[0]); i++) {
		uint64_t ns = dur(round[i]);

		if (dur(fmt_dur(ns)) != ns)
			fail_msg("%s -> %s does not round-trip", round[i], fmt_dur(ns));
	}
	/* A short buffer is truncated and terminated. */
	{
		char small[4];

		format_duration(UINT64_C(1500000000), small, sizeof(small));
		assert_string_equal(small, "150");
	}
}

static void test_bool(void **state)
{
	static const char *const yes[] = { "true", "TRUE", "True", "yes", "YES", "on", "On", "1" };
	static const char *const no[] = { "false", "FALSE", "no", "No", "off", "OFF", "0" };
	char err[128];
	bool b;

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		b = false;
		assert_int_equal(parse_bool(yes[i], &b, err, sizeof(err)), 0);
		if (!b)
			fail_msg("\"%s\" parsed as false", yes[i]);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		b = true;
		assert_int_equal(parse_bool(no[i], &b, err, sizeof(err)), 0);
		if (b)
			fail_msg("\"%s\" parsed as true", no[i]);
	}
	b = true;
	assert_int_equal(parse_bool("maybe", &b, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "invalid boolean \"maybe\": expected true or false");
	assert_true(b);
	assert_int_equal(parse_bool("", &b, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "invalid boolean \"\": expected true or false");
	assert_int_equal(parse_bool("2", &b, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse_bool("truee", &b, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse_bool(" true", &b, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse_bool("y", &b, err, sizeof(err)), -EINVAL);
}

static void uint_ok(const char *text, uint64_t min, uint64_t max, uint64_t want)
{
	char err[256] = "";
	uint64_t v = 0;
	int r = parse_uint(text, min, max, &v, err, sizeof(err));

	if (r != 0)
		fail_msg("parse_uint(\"%s\") = %d: %s", text, r, err);
	assert_int_equal(v, want);
}

static void uint_error(const char *text, uint64_t min, uint64_t max, int code, const char *msg)
{
	char err[256] = "";
	uint64_t v = 777;
	int r = parse_uint(text, min, max, &v, err, sizeof(err));

	if (r != code)
		fail_msg("parse_uint(\"%s\", %llu, %llu) = %d, expected %d", text,
			 (unsigned long long)min, (unsigned long long)max, r, code);
	assert_string_equal(err, msg);
	assert_int_equal(v, 777);
}

static void test_uint(void **state)
{
	(void)state;
	uint_ok("1", 1, 2, 1);
	uint_ok("2", 1, 2, 2);
	uint_ok("64", 1, 65536, 64);
	uint_ok("65536", 1, 65536, 65536);
	uint_ok("0", 0, 10, 0);
	uint_ok("007", 0, 10, 7);
	uint_ok("4294967296", 0, UINT64_MAX, UINT64_C(4294967296));
	uint_error("0", 1, 2, -ERANGE, "0 is out of range: expected an integer from 1 to 2");
	uint_error("3", 1, 2, -ERANGE, "3 is out of range: expected an integer from 1 to 2");
	uint_error("65537", 1, 65536, -ERANGE,
		   "65537 is out of range: expected an integer from 1 to 65536");
	uint_error("99999999999999999999999", 1, 65536, -ERANGE,
		   "99999999999999999999999 is out of range: expected an integer from 1 to 65536");
	uint_error("", 1, 2, -EINVAL, "invalid number \"\": expected an integer from 1 to 2");
	uint_error("x", 1, 2, -EINVAL, "invalid number \"x\": expected an integer from 1 to 2");
	uint_error("-1", 1, 2, -EINVAL, "invalid number \"-1\": expected an integer from 1 to 2");
	uint_error("+1", 1, 2, -EINVAL, "invalid number \"+1\": expected an integer from 1 to 2");
	uint_error("1x", 1, 2, -EINVAL, "invalid number \"1x\": expected an integer from 1 to 2");
	uint_error("0x10", 0, 100, -EINVAL,
		   "invalid number \"0x10\": expected an integer from 0 to 100");
	uint_error("1 ", 1, 2, -EINVAL, "invalid number \"1 \": expected an integer from 1 to 2");
	uint_error("1.0", 1, 2, -EINVAL, "invalid number \"1.0\": expected an integer from 1 to 2");
}

static struct listen_addr addr_ok(const char *text)
{
	struct listen_addr a;
	char err[256] = "";
	int r = parse_listen_addr(text, &a, err, sizeof(err));

	if (r != 0)
		fail_msg("parse_listen_addr(\"%s\") = %d: %s", text, r, err);
	return a;
}

static void addr_error(const char *text, int code, const char *msg)
{
	struct listen_addr a;
	char err[512] = "";
	int r = parse_listen_addr(text, &a, err, sizeof(err));

	if (r != code)
		fail_msg("parse_listen_addr(\"%s\") = %d, expected %d (err \"%s\")", text, r,
			 code, err);
	assert_string_equal(err, msg);
}

static void test_listen_inet(void **state)
{
	struct listen_addr a;

	(void)state;
	a = addr_ok("127.0.0.1:10412");
	assert_int_equal(a.kind, LISTEN_INET);
	assert_string_equal(a.host, "127.0.0.1");
	assert_false(a.ipv6_literal);
	assert_int_equal(a.port, 10412);

	a = addr_ok("[::1]:10412");
	assert_int_equal(a.kind, LISTEN_INET);
	assert_string_equal(a.host, "::1");
	assert_true(a.ipv6_literal);
	assert_int_equal(a.port, 10412);

	a = addr_ok("[::]:10412");
	assert_string_equal(a.host, "::");
	assert_true(a.ipv6_literal);
	assert_int_equal(a.port, 10412);

	a = addr_ok("[fe80::1:2]:65535");
	assert_string_equal(a.host, "fe80::1:2");
	assert_int_equal(a.port, 65535);

	a = addr_ok("[::ffff:192.0.2.1]:80");
	assert_string_equal(a.host, "::ffff:192.0.2.1");
	assert_int_equal(a.port, 80);

	a = addr_ok("metrics.example.com:9100");
	assert_int_equal(a.kind, LISTEN_INET);
	assert_string_equal(a.host, "metrics.example.com");
	assert_false(a.ipv6_literal);
	assert_int_equal(a.port, 9100);

	a = addr_ok("localhost:1");
	assert_string_equal(a.host, "localhost");
	assert_int_equal(a.port, 1);

	a = addr_ok("my_host-1:0");
	assert_string_equal(a.host, "my_host-1");
	assert_int_equal(a.port, 0);
}

static void test_listen_unix(void **state)
{
	struct listen_addr a;
	char path[LISTEN_PATH_MAX + 16];

	(void)state;
	a = addr_ok("unix:/run/x.sock");
	assert_int_equal(a.kind, LISTEN_UNIX);
	assert_string_equal(a.path, "/run/x.sock");
	assert_int_equal(a.port, 0);

	/* The longest path sun_path holds (107 bytes + NUL). */
	strcpy(path, "unix:/");
	memset(path + 6, 'a', 106);
	path[112] = '\0';
	a = addr_ok(path);
	assert_int_equal(strlen(a.path), 107);

	/* One more byte does not fit. */
	strcpy(path, "unix:/");
	memset(path + 6, 'a', 107);
	path[113] = '\0';
	{
		char msg[300];

		snprintf(msg, sizeof(msg),
			 "invalid address \"%s\": unix socket path longer than 107 bytes", path);
		addr_error(path, -ERANGE, msg);
	}
}

static void test_listen_errors(void **state)
{
	char host[400], msg[600];

	(void)state;
	addr_error("127.0.0.1", -EINVAL, "invalid address \"127.0.0.1\": " LHINT);
	addr_error("localhost", -EINVAL, "invalid address \"localhost\": " LHINT);
	addr_error("", -EINVAL, "invalid address \"\": " LHINT);
	addr_error(":80", -EINVAL, "invalid address \":80\": " LHINT);
	addr_error("127.0.0.1:", -EINVAL, "invalid port in \"127.0.0.1:\": expected 0 to 65535");
	addr_error("127.0.0.1:99999", -EINVAL,
		   "invalid port in \"127.0.0.1:99999\": expected 0 to 65535");
	addr_error("127.0.0.1:65536", -EINVAL,
		   "invalid port in \"127.0.0.1:65536\": expected 0 to 65535");
	addr_error("127.0.0.1:http", -EINVAL,
		   "invalid port in \"127.0.0.1:http\": expected 0 to 65535");
	addr_error("127.0.0.1:-1", -EINVAL,
		   "invalid port in \"127.0.0.1:-1\": expected 0 to 65535");
	addr_error("::1:80", -EINVAL,
		   "invalid address \"::1:80\": write IPv6 addresses in brackets, e.g. [::1]:10412");
	addr_error("unix:run/x.sock", -EINVAL,
		   "invalid address \"unix:run/x.sock\": unix socket path must be absolute");
	addr_error("unix:", -EINVAL, "invalid address \"unix:\": unix socket path must be absolute");
	addr_error("[::g]:80", -EINVAL, "invalid IPv6 address in \"[::g]:80\"");
	addr_error("[]:80", -EINVAL, "invalid IPv6 address in \"[]:80\"");
	addr_error("[127.0.0.1]:80", -EINVAL, "invalid IPv6 address in \"[127.0.0.1]:80\"");
	addr_error("[::1]", -EINVAL, "invalid address \"[::1]\": " LHINT);
	addr_error("[::1]80", -EINVAL, "invalid address \"[::1]80\": " LHINT);
	addr_error("[::1:80", -EINVAL, "invalid address \"[::1:80\": " LHINT);
	addr_error("[::1]:", -EINVAL, "invalid port in \"[::1]:\": expected 0 to 65535");
	addr_error("[::1]:99999", -EINVAL, "invalid port in \"[::1]:99999\": expected 0 to 65535");
	addr_error("ho st:80", -EINVAL, "invalid host in \"ho st:80\": " LHINT);
	addr_error("a/b:80", -EINVAL, "invalid host in \"a/b:80\": " LHINT);

	memset(host, 'h', 300);
	strcpy(host + 300, ":80");
	snprintf(msg, sizeof(msg), "invalid address \"%s\": host name too long", host);
	addr_error(host, -ERANGE, msg);
}

static void test_listen_format(void **state)
{
	static const char *const round[] = {
		"127.0.0.1:10412", "[::1]:10412", "[::]:10412", "unix:/run/x.sock",
		"metrics.example.com:80", "[fe80::1]:1", "0.0.0.0:0",
	};
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(round) / sizeof(round[0]); i++) {
		struct listen_addr a = addr_ok(round[i]), b;

		memset(buf, 'x', sizeof(buf));
		format_listen_addr(&a, buf, sizeof(buf));
		assert_string_equal(buf, round[i]);
		b = addr_ok(buf);
		assert_int_equal(a.kind, b.kind);
		assert_string_equal(a.host, b.host);
		assert_int_equal(a.ipv6_literal, b.ipv6_literal);
		assert_int_equal(a.port, b.port);
		assert_string_equal(a.path, b.path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_duration_large),
		cmocka_unit_test(test_duration_fraction_overflow),
		cmocka_unit_test(test_duration_errors),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_uint),
		cmocka_unit_test(test_listen_inet),
		cmocka_unit_test(test_listen_unix),
		cmocka_unit_test(test_listen_errors),
		cmocka_unit_test(test_listen_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
