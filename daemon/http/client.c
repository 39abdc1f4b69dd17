/* SPDX-License-Identifier: MIT */
/* client: client keys from socket addresses, and their hash. */
#include "client.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

int client_key_of(const struct sockaddr *sa, struct client_key *out)
{
	memset(out, 0, sizeof(*out));
	if (!sa)
		return -EAFNOSUPPORT;
	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

		out->b[10] = out->b[11] = 0xff;
		memcpy(&out->b[12], &in->sin_addr, 4);
		return 0;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			memcpy(out->b, &in6->sin6_addr, 16);
		else
			memcpy(out->b, &in6->sin6_addr, 8);
		return 0;
	}
	case AF_UNIX:
		out->b[0] = 0xff; /* ff00::/8 is multicast: never a peer's /64 */
		return 0;
	default:
		return -EAFNOSUPPORT;
	}
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t client_key_hash(const struct client_key *k, const uint64_t seed[2])
{
	uint64_t a, b;

	memcpy(&a, k->b, 8);
	memcpy(&b, k->b + 8, 8);
	return mix(mix(a ^ seed[0]) ^ b ^ seed[1]);
}

int client_key_equal(const struct client_key *a, const struct client_key *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}
