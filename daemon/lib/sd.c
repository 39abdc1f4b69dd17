/* SPDX-License-Identifier: MIT */
/* sd: sd_notify, watchdog and socket activation through libsystemd. */
#include "sd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <time.h>

void sd_glue_ready(const char *status)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void sd_glue_status(const char *status)
{
	sd_notifyf(0, "STATUS=%s", status);
}

void sd_glue_reloading(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
		   (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
}

void sd_glue_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}

void sd_glue_watchdog(void)
{
	sd_notify(0, "WATCHDOG=1");
}

uint64_t sd_glue_watchdog_usec(void)
{
	uint64_t usec = 0;

	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}

int sd_glue_listen_fds(int *fds, size_t max)
{
	int n = sd_listen_fds(1);

	if (n <= 0)
		return n;
	if ((size_t)n > max)
		return -EMFILE;
	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;

		if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0)
			return -ENOTSOCK;
		/* libmicrohttpd accepts in a loop until EAGAIN. */
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
			return -errno;
		fds[i] = fd;
	}
	return n;
}
