/* SPDX-License-Identifier: MIT */
/* listen: socket creation and description. */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"

#define BACKLOG 1024

static int bind_listen(int family, const struct sockaddr *sa, socklen_t salen)
{
	int one = 1, fd, r;

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (family != AF_UNIX)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6) {
		/* [::] means every address, IPv4 included, whatever the
		 * system default of net.ipv6.bindv6only. */
		int off = 0;
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)sa;

		if (IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr))
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	}
	if (bind(fd, sa, salen) < 0 || listen(fd, BACKLOG) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static int open_unix(const struct listen_addr *addr, int *fds, size_t max, size_t *n,
		     char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (*n >= max) {
		str_printf(err, errlen, "unix:%s: too many listening sockets", addr->path);
		return -ENOSPC;
	}
	strcpy(sun.sun_path, addr->path);
	/* A socket left by a previous run is stale and goes; one that
	 * answers belongs to a running server (a second topdownd, another
	 * daemon) and stays; anything else is not ours to remove. */
	if (lstat(addr->path, &st) == 0) {
		int probe;

		if (!S_ISSOCK(st.st_mode)) {
			str_printf(err, errlen, "Failed to listen on unix:%s: it exists and is not a socket; "
				   "remove it or choose another path", addr->path);
			return -EEXIST;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (probe < 0) {
			str_printf(err, errlen, "Failed to check unix:%s: %s", addr->path, strerror(errno));
			return -errno;
		}
		/* Nonblocking: a listener whose backlog is full answers
		 * EAGAIN rather than holding the start. */
		int e = connect(probe, (const struct sockaddr *)&sun, sizeof(sun)) == 0 ? 0 : errno;

		if (e != ECONNREFUSED) {
			close(probe);
			str_printf(err, errlen, "Failed to listen on unix:%s: %s; is another topdownd running? "
				   "(stop it, or choose another path)", addr->path,
				   e == 0 || e == EAGAIN ? "a server is listening on it" : strerror(e));
			return -EADDRINUSE;
		}
		close(probe);
		unlink(addr->path);
	}
	fd = bind_listen(AF_UNIX, (const struct sockaddr *)&sun, sizeof(sun));
	if (fd < 0) {
		str_printf(err, errlen, "Failed to listen on unix:%s: %s", addr->path, strerror(-fd));
		return fd;
	}
	/* Whoever can reach the directory may connect, whatever the umask:
	 * access is the directory's business (and basic auth's). */
	if (chmod(addr->path, 0666) < 0) {
		int r = -errno;

		str_printf(err, errlen, "Failed to make unix:%s accessible: %s", addr->path, strerror(errno));
		close(fd);
		return r;
	}
	fds[(*n)++] = fd;
	return 0;
}

int listen_open(const struct listen_addr *addr, int *fds, size_t max, size_t *n,
		char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	}, *res = NULL;
	size_t start = *n;
	char port[8], desc[300];
	int r;

	if (addr->kind == LISTEN_UNIX)
		return open_unix(addr, fds, max, n, err, errlen);
	format_listen_addr(addr, desc, sizeof(desc));
	snprintf(port, sizeof(port), "%u", addr->port);
	if (addr->ipv6_literal)
		hints.ai_flags |= AI_NUMERICHOST;
	r = getaddrinfo(addr->host, port, &hints, &res);
	if (r != 0) {
		str_printf(err, errlen, "Failed to resolve listen address %s: %s", desc, gai_strerror(r));
		return -EADDRNOTAVAIL;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd;

		if (*n >= max) {
			str_printf(err, errlen, "%s: too many listening sockets", desc);
			r = -ENOSPC;
			goto fail;
		}
		fd = bind_listen(ai->ai_family, ai->ai_addr, ai->ai_addrlen);
		if (fd < 0) {
			r = fd;
			str_printf(err, errlen, "Failed to listen on %s: %s", desc, strerror(-fd));
			goto fail;
		}
		fds[(*n)++] = fd;
	}
	freeaddrinfo(res);
	return 0;
fail:
	freeaddrinfo(res);
	while (*n > start)
		close(fds[--(*n)]);
	return r;
}

void listen_describe(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN];

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		str_printf(buf, len, "?");
		return;
	}
	switch (ss.ss_family) {
	case AF_INET: {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		str_printf(buf, len, "%s:%u", host, ntohs(a->sin_port));
		return;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		str_printf(buf, len, "[%s]:%u", host, ntohs(a->sin6_port));
		return;
	}
	case AF_UNIX: {
		const struct sockaddr_un *a = (const struct sockaddr_un *)&ss;

		str_printf(buf, len, "unix:%s", a->sun_path);
		return;
	}
	}
	str_printf(buf, len, "?");
}

void listen_url(int fd, const char *scheme, char *buf, size_t len)
{
	char desc[300];

	listen_describe(fd, desc, sizeof(desc));
	if (strncmp(desc, "unix:", 5) == 0)
		str_printf(buf, len, "%s (%s over a unix socket)", desc, scheme);
	else
		str_printf(buf, len, "%s://%s/", scheme, desc);
}
