/* report: the human-readable reports of the command line: --probe's
 * description of what would be monitored, and --once's table in the
 * spirit of `perf stat --topdown`. */
#ifndef TOPDOWND_REPORT_H
#define TOPDOWND_REPORT_H

#include <stdio.h>

#include "plan.h"
#include "pmu.h"
#include "topo.h"

void report_probe(FILE *out, const struct pmu_info *pmu, const struct topo *topo,
		  const struct plan *plan);

#endif
