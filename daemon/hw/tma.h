/* SPDX-License-Identifier: MIT */
/* tma: the TopDown arithmetic.  From one interval's counts to the
 * category fractions: perf's metric expressions, node by node, as the
 * perf metric tables each microarchitecture follows give them (uarch.h
 * names them), plus the bottleneck.  Where perf's value is not a share
 * (negative, or none: a division by zero) the result departs from it as
 * little as it can and says so.  Pure functions: no state, no I/O, no
 * allocation. */
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

/* How a result departs from perf's values (docs/design.md, "Compared with perf"). */
enum tma_departure {
	TMA_DEP_NEGATIVE,  /* a node perf prints below 0 is 0 */
	TMA_DEP_NO_VALUE,  /* a level-2 node perf prints nothing for (a division by 0) is 0 */
	TMA_DEP_COUNT,
};

struct tma_result {
	double slots;              /* the slots the fractions are of */
	double frac[TD_CAT_COUNT]; /* categories not yielded are 0 (tma_compute) */
	td_catset cats;            /* the categories the formulas wrote */
	unsigned departures;       /* bits 1 << enum tma_departure */
	double departure_size;     /* the largest |perf's value| replaced by 0 */
};

struct tma_model {
	enum ua_formulas formulas;
	bool refine;    /* model perf: use the refinement events */
	unsigned level; /* 1: level-2 categories are left at 0 */
	unsigned width; /* the uarch's pipeline width constant (uarch.h) */
	enum ua_mode mode; /* how SMT threads are counted (Skylake family) */
	unsigned slots_per_cycle; /* arm64: the PMU's caps/slots (perf's #slots) */
	bool stall_minus_cycles;  /* arm64: STALL_SLOT* count a slot per cycle too many */
	/* The formulas for these settings, chosen once (tma_model_prepare),
	 * NULL: chosen at each evaluation by the fields above. */
	int (*eval)(const struct tma_model *model, const double *v, struct tma_result *out);
};

/* Chooses @model's formulas for its settings once, where they are fixed
 * (a collector's, every CPU and domain every interval): its evaluations
 * then branch on none of them.  Its settings must not change after. */
void tma_model_prepare(struct tma_model *model);

/* Computes the fractions: each perf's value for the same counts, except
 * a negative one or a level-2 one perf has none for, which is 0 (counted
 * in ->departures).  They are at least 0; the level-1 ones need not sum
 * to 1, nor a parent's children to it, where the counts disagree (perf's
 * do not either).  Returns -ENODATA when the interval has no slots (the
 * CPU was halted throughout, or nothing was counted) or perf has no value
 * for a level-1 node, -EINVAL for formulas it does not know. */
int tma_compute(const struct tma_model *model, const struct tma_input *in,
		struct tma_result *out);

/* tma_evaluate() of a model not prepared. */
int tma_evaluate_unprepared(const struct tma_model *model, const struct tma_input *in,
			    struct tma_result *out);

/* The same, writing only the categories the model yields (the others of
 * @out are left as they were): for a caller that reads those alone, every
 * CPU and domain every interval (inline: the call costs a tenth of the
 * formulas). */
static inline int tma_evaluate(const struct tma_model *model, const struct tma_input *in,
			       struct tma_result *out)
{
	if (!model->eval)
		return tma_evaluate_unprepared(model, in, out);
	out->cats = 0;
	out->slots = 0;
	out->departures = 0;
	out->departure_size = 0;
	return model->eval(model, in->v, out);
}

/* Whether @f's counts are PERF_METRICS' (slots and topdown-* on fixed
 * counter 3). */
bool tma_uses_perf_metrics(enum ua_formulas f);

/* The name of a departure, for labels: "negative", "no_value". */
const char *tma_departure_name(enum tma_departure d);

/* The largest non-retiring level-1 category among @cats and, if
 * @with_l2, its largest child: "backend_bound.memory_bound".  @v holds
 * any per-category quantity (fractions or slots), indexed by enum td_cat.
 * Empty string when all are 0. */
void tma_bottleneck(const double v[TD_CAT_COUNT], td_catset cats, bool with_l2,
		    char *buf, size_t len);

#endif
