/* tma: the TopDown arithmetic.  From one interval's event deltas to the
 * level-1 and level-2 ratios, with perf's formulas (perf 6.1 metric tables,
 * reference page "Formulas") and clamps, plus the bottleneck.  Pure
 * functions: no state, no I/O, no allocation. */
#ifndef TOPDOWND_TMA_H
#define TOPDOWND_TMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topdown.h"

/* One interval's deltas, indexed by enum td_event.  Events not in the
 * group are 0. */
struct tma_input {
	uint64_t delta[TD_EV_COUNT];
};

struct tma_ratios {
	double l1[TD_L1_COUNT];
	double l2[TD_L2_COUNT];
};

struct tma_model {
	enum td_formulas formulas;
	bool refine;    /* model perf: use UOP_DROPPING (and RECOVERY_CYCLES) */
	unsigned level; /* 1: l2 is left at 0 */
};

/* Computes the ratios.  Every L1 ratio is in [0,1] and they sum to 1;
 * each L2 pair sums to its parent.  Returns -ENODATA when the interval
 * has no slots (the CPU was halted throughout, or nothing was counted). */
int tma_compute(const struct tma_model *model, const struct tma_input *in,
		struct tma_ratios *out);

/* The largest non-retiring L1 category and, if @with_l2, its largest
 * child: "backend_bound.memory_bound".  Empty string when all are 0. */
void tma_bottleneck(const double l1[TD_L1_COUNT], const double l2[TD_L2_COUNT],
		    bool with_l2, char *buf, size_t len);

#endif
