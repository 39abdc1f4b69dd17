/* SPDX-License-Identifier: MIT */
/* sd: the systemd glue: readiness and status notifications, the watchdog,
 * and sockets passed by socket activation.  Every call is a no-op outside
 * systemd (no NOTIFY_SOCKET, no LISTEN_FDS). */
#ifndef TOPDOWND_SD_H
#define TOPDOWND_SD_H

#include <stddef.h>
#include <stdint.h>

void sd_glue_ready(const char *status);
void sd_glue_status(const char *status);
/* RELOADING=1 with MONOTONIC_USEC, as systemd 253's Type=notify-reload wants. */
void sd_glue_reloading(void);
void sd_glue_stopping(void);
void sd_glue_watchdog(void);
/* The watchdog period requested by the service manager, 0 if none. */
uint64_t sd_glue_watchdog_usec(void);

/* Takes the listening sockets systemd passed (and unsets LISTEN_FDS so
 * children do not see them).  Returns how many, or -errno if one of them
 * is not a listening stream socket. */
int sd_glue_listen_fds(int *fds, size_t max);

#endif
