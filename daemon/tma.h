/* SPDX-License-Identifier: MIT */
/* tma: the TopDown arithmetic.  From one interval's counts to the
 * category fractions, with the formulas of the perf metric tables each
 * microarchitecture follows (uarch.h names them) and the clamps that make
 * the categories partition the slots, plus the bottleneck.  Pure
 * functions: no state, no I/O, no allocation. */
#ifndef TOPDOWND_TMA_H
#define TOPDOWND_TMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topdown.h"
#include "uarch.h"

/* One interval's counts, indexed by formula variable (enum td_event),
 * already scaled for multiplexing.  Variables not counted are 0. */
struct tma_input {
	double v[TD_EV_COUNT];
};

struct tma_result {
	double slots;              /* the slots the fractions are of */
	double frac[TD_CAT_COUNT]; /* categories not yielded are 0 */
};

struct tma_model {
	enum ua_formulas formulas;
	bool refine;    /* model perf: use the refinement events */
	unsigned level; /* 1: level-2 categories are left at 0 */
	unsigned width; /* the uarch's pipeline width constant (uarch.h) */
	enum ua_mode mode; /* how SMT threads are counted (Skylake family) */
	unsigned slots_per_cycle; /* arm64: the PMU's caps/slots (perf's #slots) */
	bool stall_minus_cycles;  /* arm64: STALL_SLOT* count a slot per cycle too many */
};

/* Computes the fractions.  The level-1 fractions (four, five on AMD) are
 * in [0,1] and sum to 1; the level-2 children of a parent sum to it.  Returns -ENODATA when
 * the interval has no slots (the CPU was halted throughout, or nothing
 * was counted), -EINVAL for formulas it does not know. */
int tma_compute(const struct tma_model *model, const struct tma_input *in,
		struct tma_result *out);

/* The largest non-retiring level-1 category among @cats and, if
 * @with_l2, its largest child: "backend_bound.memory_bound".  @v holds
 * any per-category quantity (fractions or slots), indexed by enum td_cat.
 * Empty string when all are 0. */
void tma_bottleneck(const double v[TD_CAT_COUNT], td_catset cats, bool with_l2,
		    char *buf, size_t len);

#endif
