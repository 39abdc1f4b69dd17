/* SPDX-License-Identifier: MIT */
/* report: the human-readable reports of the command line: --probe's
 * description of what would be monitored, and --once's table in the
 * spirit of `perf stat --topdown`. */
#ifndef TOPDOWND_REPORT_H
#define TOPDOWND_REPORT_H

#include <stdio.h>

#include "plan.h"
#include "snapshot.h"
#include "pmu.h"
#include "topo.h"

/* An interval without figures (no CPU measured): the CPUs by state and
 * each PMU's reason, as comment lines. */
void report_down(FILE *out, const struct snapshot *snap);

/* @counted: what the probe's group counted; @avail: what other users leave
 * each CPU, a line per core PMU (NULL: not probed); @failure: why it
 * could not count (NULL when it did); @privileges: the capabilities the
 * process lacks and how to grant them (NULL when it holds them). */
void report_probe(FILE *out, const struct pmu_info *pmu, const struct topo *topo,
		  const struct plan *plan, const char *counted, const char *avail, const char *failure,
		  const char *privileges);

/* The host and per-package breakdown of the last interval, percentages
 * with one decimal, level 2 indented under its parent, '*' on the
 * bottleneck of each column. */
void report_once(FILE *out, const struct snapshot *snap);

#endif
