/* SPDX-License-Identifier: MIT */
/* throttle: the per-client password-check policy, on a fake clock. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include <cmocka.h>

#include "throttle.h"

#define S 1000000000ULL

static struct client_key v4(const char *addr)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct client_key k;

	assert_int_equal(inet_pton(AF_INET, addr, &in.sin_addr), 1);
	assert_int_equal(client_key_of((struct sockaddr *)&in, &k), 0);
	return k;
}

static struct client_key v6(const char *addr)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct client_key k;

	assert_int_equal(inet_pton(AF_INET6, addr, &in6.sin6_addr), 1);
	assert_int_equal(client_key_of((struct sockaddr *)&in6, &k), 0);
	return k;
}

static void test_client_keys(void **state)
{
	struct client_key a, b;
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct sockaddr sa = { .sa_family = AF_APPLETALK };

	(void)state;
	/* An IPv4 client is the same whether it came over v4 or v6. */
	a = v4("192.0.2.7");
	b = v6("::ffff:192.0.2.7");
	assert_memory_equal(&a, &b, sizeof(a));
	assert_memory_not_equal(&a, &(struct client_key){ { 0 } }, sizeof(a));
	a = v4("192.0.2.8");
	assert_memory_not_equal(&a, &b, sizeof(a));
	/* A whole IPv6 /64 is one client. */
	a = v6("2001:db8:1:2::1");
	b = v6("2001:db8:1:2:ffff:ffff:ffff:ffff");
	assert_memory_equal(&a, &b, sizeof(a));
	b = v6("2001:db8:1:3::1");
	assert_memory_not_equal(&a, &b, sizeof(a));
	assert_int_equal(client_key_of((struct sockaddr *)&un, &a), 0);
	assert_int_equal(client_key_of(&sa, &a), -EAFNOSUPPORT);
	assert_int_equal(client_key_of(NULL, &a), -EAFNOSUPPORT);
}

static void test_backoff(void **state)
{
	struct client_key k = v4("198.51.100.1"), other = v4("198.51.100.2");
	struct throttle *t;
	uint64_t now = 1000 * S;

	(void)state;
	assert_int_equal(throttle_new(64, &t), 0);
	/* One check at a time per client; another client is not affected. */
	assert_int_equal(throttle_begin(t, &k, now), 0);
	assert_int_equal(throttle_begin(t, &k, now), 1);
	assert_int_equal(throttle_begin(t, &other, now), 0);
	throttle_end(t, &other, false, now);
	throttle_end(t, &k, false, now);
	/* Four more free failures (five in all). */
	for (int i = 0; i < THROTTLE_FREE_FAILURES - 1; i++) {
		assert_int_equal(throttle_begin(t, &k, now), 0);
		throttle_end(t, &k, false, now);
	}
	assert_int_equal(throttle_begin(t, &k, now), 0);
	throttle_end(t, &k, false, now); /* the 6th: 1 s */
	assert_int_equal(throttle_begin(t, &k, now), 1);
	assert_int_equal(throttle_begin(t, &k, now + S / 2), 1);
	assert_int_equal(throttle_begin(t, &k, now + S), 0);
	now += S;
	throttle_end(t, &k, false, now); /* the 7th: 2 s */
	assert_int_equal(throttle_begin(t, &k, now), 2);
	assert_int_equal(throttle_begin(t, &k, now + S + 1), 1);
	/* Doubling up to the cap. */
	for (unsigned expect = 2, i = 0; i < 10; i++) {
		now += (uint64_t)expect * S;
		assert_int_equal(throttle_begin(t, &k, now), 0);
		throttle_end(t, &k, false, now);
		expect = expect * 2 > THROTTLE_MAX_BLOCK_S ? THROTTLE_MAX_BLOCK_S : expect * 2;
		assert_int_equal(throttle_begin(t, &k, now), expect);
	}
	/* A correct password clears it. */
	now += THROTTLE_MAX_BLOCK_S * S;
	assert_int_equal(throttle_begin(t, &k, now), 0);
	throttle_end(t, &k, true, now);
	for (int i = 0; i < THROTTLE_FREE_FAILURES; i++) {
		assert_int_equal(throttle_begin(t, &k, now), 0);
		throttle_end(t, &k, false, now);
	}
	assert_int_equal(throttle_begin(t, &k, now), 0);
	throttle_end(t, &k, false, now);
	assert_int_equal(throttle_begin(t, &k, now), 1);
	/* So does staying quiet long enough. */
	now += THROTTLE_FORGET_S * S;
	assert_int_equal(throttle_begin(t, &k, now), 0);
	throttle_end(t, &k, false, now);
	assert_int_equal(throttle_begin(t, &k, now), 0);
	throttle_free(t);
}

static void test_full_table(void **state)
{
	struct throttle *t;
	struct client_key keys[64];
	unsigned refused = 0;

	(void)state;
	assert_int_equal(throttle_new(8, &t), 0);
	/* Eight clients with checks in progress fill every slot. */
	for (int i = 0; i < 64; i++) {
		char a[32];

		snprintf(a, sizeof(a), "203.0.113.%d", i + 1);
		keys[i] = v4(a);
		if (throttle_begin(t, &keys[i], S) != 0)
			refused++;
	}
	assert_int_equal(refused, 64 - 8);
	/* Once they are done, a newcomer takes the stalest slot. */
	for (int i = 0; i < 64; i++)
		throttle_end(t, &keys[i], false, S + (uint64_t)i);
	assert_int_equal(throttle_begin(t, &keys[63], 2 * S), 0);
	/* A check that did not happen costs nothing. */
	throttle_abandon(t, &keys[63]);
	assert_int_equal(throttle_begin(t, &keys[63], 2 * S), 0);
	throttle_free(t);
	assert_int_equal(throttle_new(4, &t), -EINVAL);
	throttle_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_keys),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_full_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
