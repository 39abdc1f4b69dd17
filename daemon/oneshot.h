/* SPDX-License-Identifier: MIT */
/* oneshot: the commands that collect and print rather than serve:
 * --probe (what would be monitored, and proof it counts), --once (one
 * interval) and --watch (perf stat -I's repeating table).  Each returns
 * the process's exit status. */
#ifndef TOPDOWND_ONESHOT_H
#define TOPDOWND_ONESHOT_H

#include "app.h"

int oneshot_probe(struct app *app);
/* --probe's proof, for --compare-perf too: see oneshot.c. */
int oneshot_counters(struct app *app, char *counted, size_t countedlen, char *avail, size_t availlen,
		     char *why, size_t whylen);
int oneshot_once(struct app *app);
int oneshot_watch(struct app *app);

#endif
