/* SPDX-License-Identifier: MIT */
/* loop: the daemon's event loop (loop.c says what it handles). */
#ifndef TOPDOWND_LOOP_H
#define TOPDOWND_LOOP_H

#include "app.h"

/* Listens, collects every interval, serves HTTP, and handles signals
 * until SIGTERM or SIGINT; tears nothing down (main.c calls app_free()).
 * Returns the process's exit status. */
int loop_run(struct app *app);

#endif
