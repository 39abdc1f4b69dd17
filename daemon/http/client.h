/* SPDX-License-Identifier: MIT */
/* client: who is at the other end of a connection, for per-client limits
 * (connections per client, password checks per client).
 *
 * An IPv4 address is one client; so is an IPv6 /64, which a single host
 * usually holds whole and can pick addresses from at will.  IPv4-mapped
 * IPv6 addresses are the IPv4 client.  All UNIX-socket peers are one
 * client. */
#ifndef TOPDOWND_CLIENT_H
#define TOPDOWND_CLIENT_H

#include <stdint.h>
#include <sys/socket.h>

struct client_key {
	uint8_t b[16];
};

/* -EAFNOSUPPORT for an address family that is none of the above. */
int client_key_of(const struct sockaddr *sa, struct client_key *out);
/* A hash of @k under @seed (random per table, so that where a client
 * lands cannot be predicted). */
uint64_t client_key_hash(const struct client_key *k, const uint64_t seed[2]);
int client_key_equal(const struct client_key *a, const struct client_key *b);

#endif
