/* SPDX-License-Identifier: MIT */
/* conns: deadlines on real sockets (socketpairs stand for connections). */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "conns.h"
#include "http.h"

static const struct client_key one = { { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1 } };

#define MS 1000000ULL

/* True when the peer of @fd sees end of stream within @ms. */
static bool peer_closed(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1)
		return false;
	return recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

static void test_deadlines(void **state)
{
	int idle[2], busy[2], trickle[2];
	struct conn *a, *b, *t;
	struct conns *c;
	int data = 7;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, idle), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, busy), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, trickle), 0);
	assert_int_equal(conns_new(300 * MS, 16, 16, &c), 0);
	a = conns_add(c, idle[0], &one, &data);
	b = conns_add(c, busy[0], &one, NULL);
	t = conns_add(c, trickle[0], &one, NULL);
	assert_non_null(t);
	assert_non_null(a);
	assert_ptr_equal(conn_data(a), &data);
	assert_int_equal(conns_count(c), 3);
	/* b's head arrived: while it is served it has no deadline. */
	conns_request_started(c, b);
	/* Bytes trickling in change nothing: the deadline is absolute. */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(write(trickle[1], "x", 1), 1);
		usleep(100 * 1000);
	}
	assert_true(peer_closed(idle[1], 3000));
	assert_true(peer_closed(trickle[1], 3000));
	assert_false(peer_closed(busy[1], 700));
	assert_int_equal(conns_stats(c).expired, 2);
	/* Its response done, the next head is due within the timeout. */
	conns_request_done(c, b);
	assert_true(peer_closed(busy[1], 3000));
	assert_int_equal(conns_stats(c).expired, 3);
	assert_ptr_equal(conns_remove(c, a), &data);
	assert_null(conns_remove(c, b));
	assert_null(conns_remove(c, NULL));
	assert_int_equal(conns_count(c), 1);
	conns_free(c); /* t is still registered: forgotten, not freed twice */
	for (int i = 0; i < 2; i++) {
		close(idle[i]);
		close(busy[i]);
		close(trickle[i]);
	}
	conns_free(NULL);
}

static void test_timeout_change(void **state)
{
	int sv[2];
	struct conns *c;
	struct conn *k;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(conns_new(3600 * 1000 * MS, 16, 16, &c), 0);
	k = conns_add(c, sv[0], &one, NULL);
	assert_false(peer_closed(sv[1], 500));
	/* A reload shortens the timeout: it applies from the next response. */
	conns_set_timeout(c, 100 * MS);
	conns_request_started(c, k);
	conns_request_done(c, k);
	assert_true(peer_closed(sv[1], 3000));
	conns_remove(c, k);
	conns_free(c);
	close(sv[0]);
	close(sv[1]);
}

/* Per-client counts through many arrivals and departures: the table's
 * deletions (entries shifted back) must keep every count findable. */
static void test_per_client(void **state)
{
	struct client_key keys[300];
	struct conn *open[300][3];
	struct conns *c;

	(void)state;
	assert_int_equal(conns_new(3600 * 1000 * MS, 900, 3, &c), 0);
	for (int i = 0; i < 300; i++) {
		memset(&keys[i], 0, sizeof(keys[i]));
		keys[i].b[0] = 0x20;
		keys[i].b[1] = 0x01;
		keys[i].b[6] = (uint8_t)(i >> 8);
		keys[i].b[7] = (uint8_t)i;
		for (int j = 0; j < 3; j++) {
			assert_true(conns_admit(c, &keys[i]));
			open[i][j] = conns_add(c, -1, &keys[i], NULL);
			/* Busy: no idle connection to make room. */
			conns_request_started(c, open[i][j]);
		}
		assert_false(conns_admit(c, &keys[i]));
	}
	assert_int_equal(conns_count(c), 900);
	/* Every other client leaves; the rest are still at their limit. */
	for (int i = 0; i < 300; i += 2)
		for (int j = 0; j < 3; j++)
			conns_remove(c, open[i][j]);
	for (int i = 0; i < 300; i++)
		assert_int_equal(conns_admit(c, &keys[i]), i % 2 == 0);
	conns_remove(c, open[1][0]);
	assert_true(conns_admit(c, &keys[1]));
	for (int i = 1; i < 300; i += 2)
		for (int j = i == 1 ? 1 : 0; j < 3; j++)
			conns_remove(c, open[i][j]);
	assert_int_equal(conns_count(c), 0);
	for (int i = 0; i < 300; i++)
		assert_true(conns_admit(c, &keys[i]));
	conns_free(c);
}

/* A full share, or a full pool, with idle connections: the one waiting
 * longest for a request head is shut down to make room (the client's own
 * for its share, anyone's for the pool), never one being served. */
static void test_evict(void **state)
{
	static const struct client_key two = { { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 2 } };
	int sv[5][2];
	struct conn *k[5];
	struct conns *c;

	(void)state;
	for (int i = 0; i < 5; i++)
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]), 0);
	/* A pool of 3, 3 per client. */
	assert_int_equal(conns_new(3600 * 1000 * MS, 3, 3, &c), 0);
	for (int i = 0; i < 3; i++) {
		assert_true(conns_admit(c, &one));
		k[i] = conns_add(c, sv[i][0], &one, NULL);
	}
	conns_request_started(c, k[0]); /* the oldest is being served */
	/* One's share is full: its oldest idle connection (1) makes room. */
	assert_true(conns_admit(c, &one));
	assert_true(peer_closed(sv[1][1], 1000));
	assert_false(peer_closed(sv[0][1], 50));
	assert_false(peer_closed(sv[2][1], 50));
	assert_int_equal(conns_stats(c).evicted, 1);
	k[3] = conns_add(c, sv[3][0], &one, NULL);
	conns_remove(c, k[1]); /* libmicrohttpd closes it */
	/* The pool is full (0, 2, 3): another client's new connection takes
	 * the place of the oldest idle one of anyone: 2. */
	assert_true(conns_admit(c, &two));
	assert_true(peer_closed(sv[2][1], 1000));
	assert_int_equal(conns_stats(c).evicted, 2);
	k[4] = conns_add(c, sv[4][0], &two, NULL);
	conns_remove(c, k[2]);
	/* All busy: refused. */
	conns_request_started(c, k[3]);
	conns_request_started(c, k[4]);
	assert_false(conns_admit(c, &two));
	assert_int_equal(conns_stats(c).evicted, 2);
	conns_remove(c, k[0]);
	conns_remove(c, k[3]);
	conns_remove(c, k[4]);
	conns_free(c);
	for (int i = 0; i < 5; i++) {
		close(sv[i][0]);
		close(sv[i][1]);
	}
}

/* Evictions through many arrivals and departures: a client's count of
 * shut-down connections moves with its entry when the table shifts, and
 * a freed entry keeps none (a stale one let a later client's 4th
 * connection in, or kept a client at 0 out). */
static void test_evict_counts(void **state)
{
	static struct conn *open[300][4];
	struct client_key keys[300];
	struct conns *c;

	(void)state;
	assert_int_equal(conns_new(3600 * 1000 * MS, 900, 3, &c), 0);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 300; i++) {
			memset(&keys[i], 0, sizeof(keys[i]));
			keys[i].b[0] = 0x20;
			keys[i].b[7] = (uint8_t)i;
			keys[i].b[6] = (uint8_t)(i >> 8);
			/* Three idle, then a fourth that shuts the first down. */
			for (int j = 0; j < 4; j++) {
				assert_true(conns_admit(c, &keys[i]));
				open[i][j] = conns_add(c, -1, &keys[i], NULL);
			}
		}
		assert_int_equal(conns_stats(c).evicted, 300 * (round + 1));
		/* libmicrohttpd closes them all, every other client first. */
		for (int i = 0; i < 300; i += 2)
			for (int j = 0; j < 4; j++)
				conns_remove(c, open[i][j]);
		for (int i = 1; i < 300; i += 2)
			for (int j = 0; j < 4; j++)
				conns_remove(c, open[i][j]);
		assert_int_equal(conns_count(c), 0);
	}
	/* Every client's share is whole again: 3 busy, then refused. */
	for (int i = 0; i < 300; i++) {
		for (int j = 0; j < 3; j++) {
			assert_true(conns_admit(c, &keys[i]));
			open[i][j] = conns_add(c, -1, &keys[i], NULL);
			conns_request_started(c, open[i][j]);
		}
		assert_false(conns_admit(c, &keys[i]));
	}
	for (int i = 0; i < 300; i++)
		for (int j = 0; j < 3; j++)
			conns_remove(c, open[i][j]);
	conns_free(c);
}

/* The connections that fit beside the perf groups under RLIMIT_NOFILE. */
static void test_connections_fit(void **state)
{
	uint64_t need;

	(void)state;
	/* Room for all: 100,000 - 10,000 used, over 2 sockets. */
	assert_int_equal(http_connections_fit(100000, 10000, 2, 4096, &need), 4096);
	assert_int_equal(need, 10000 + 2 * 4096);
	/* 1,024 left over 2 sockets: 512 each, and the limit that fits 4096. */
	assert_int_equal(http_connections_fit(11024, 10000, 2, 4096, &need), 512);
	assert_int_equal(need, 18192);
	/* Nothing left: 1, so the daemon still answers. */
	assert_int_equal(http_connections_fit(9000, 10000, 1, 64, &need), 1);
	/* No listening socket (--once): what was asked. */
	assert_int_equal(http_connections_fit(10, 10000, 0, 64, &need), 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadlines),
		cmocka_unit_test(test_timeout_change),
		cmocka_unit_test(test_per_client),
		cmocka_unit_test(test_evict),
		cmocka_unit_test(test_evict_counts),
		cmocka_unit_test(test_connections_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
