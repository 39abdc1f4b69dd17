/* SPDX-License-Identifier: MIT */
/* compare: --compare-perf, topdownd beside Linux perf on this machine.
 *
 * topdownd counts with its own plan (levels 1 and 2) while the installed
 * perf runs `perf stat -j -a -I MS -M <the model's metrics>` four times
 * in turn, once per aggregation (-A, --per-core, --per-socket, -a);
 * topdownd's reads follow perf's (each interval is collected when perf
 * prints the first line of its next one), so both count the same
 * stretches of time.  Every value perf prints is compared with
 * topdownd's for the same CPU, core, package or the host and interval;
 * the report gives per node the largest difference, the departures
 * topdownd documents (docs/design.md) with their sizes, both tools'
 * running shares, perf's version, the kernel, the model and the verdict.
 * Bounded in time; changes nothing (no files, a running daemon
 * untouched); perf is stopped and reaped whatever happens. */
#ifndef TOPDOWND_COMPARE_H
#define TOPDOWND_COMPARE_H

#include "app.h"

/* Exit status: 0 every value within the tolerance, EXIT_DIFFER when
 * some are not, EXIT_RUNTIME when nothing could be compared (the reason
 * printed, with what to install or change). */
#define EXIT_DIFFER 2

int compare_perf(struct app *app);

#endif
