/* SPDX-License-Identifier: MIT */
/* uarch: everything topdownd knows about each microarchitecture, and the
 * only place that knows it: how a CPU is recognised (vendor, family and
 * model from devices/system/cpu/modalias, the core PMU directory), which
 * events it counts with which encodings, which TopDown levels and formulas
 * apply, and the perf metric each category follows.
 *
 * Every encoding and formula is taken from Linux perf's tables
 * (reference/perf-tables/, upstream files with their provenance); each
 * entry names the file and the event or metric it comes from, and
 * tests/integration/12-uarch-tables.t checks every entry against those files.  Events
 * the kernel exposes in sysfs (slots, topdown-*) are read from there at
 * run time: that is the kernel's own encoding. */
#ifndef TOPDOWND_UARCH_H
#define TOPDOWND_UARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "topdown.h"

#define UA_EVENTS_MAX 16
#define UA_MODELS_MAX 8

/* Which arithmetic of tma.c turns this microarchitecture's counts into
 * categories. */
enum ua_formulas {
	UA_FORMULAS_GLC,      /* Golden Cove and later PERF_METRICS: SPR, EMR, GNR, ADL P-cores */
	UA_FORMULAS_ICL,      /* Ice Lake PERF_METRICS: + 5 * RECOVERY_CYCLES on backend bound */
	UA_FORMULAS_METRICS,  /* PERF_METRICS alone, for a model not in these tables */
};

struct ua_event {
	enum td_event var;  /* the formula variable it counts */
	const char *name;   /* perf's name; "BASE,cmask=1,edge=1" for a table event with filters */
	const char *sysfs;  /* events/ file of the core PMU the kernel encodes it in, or NULL */
	const char *terms;  /* perf's encoding when not in sysfs (jevents.py rules), or NULL */
	const char *table;  /* the perf table file the event comes from */
	unsigned level;     /* counted from this TopDown level on */
	bool refine;        /* a refinement event of model perf (not of model hardware) */
};

/* The perf metric a category follows, verbatim, for people and tests. */
struct ua_metric {
	enum td_cat cat;
	const char *perf_name; /* "tma_frontend_bound" */
	const char *expr;      /* its MetricExpr */
	const char *table;     /* the metrics file */
};

struct uarch {
	const char *id;        /* perf's table directory: "sapphirerapids" */
	const char *name;      /* for people: "Sapphire Rapids" */
	const char *vendor;    /* modalias vendor as perf spells it: "GenuineIntel" */
	unsigned family;
	unsigned n_models;
	unsigned char models[UA_MODELS_MAX]; /* from perf's x86/mapfile.csv */
	const char *pmu;       /* the core PMU directory it counts on */
	enum ua_formulas formulas;
	unsigned max_level;    /* what topdownd computes for it */
	unsigned n_events;
	const struct ua_event *events;
	unsigned n_metrics;
	const struct ua_metric *metrics;
};

/* What devices/system/cpu/modalias says about the CPU. */
struct ua_cpuid {
	char vendor[16];       /* "GenuineIntel", "AuthenticAMD" */
	unsigned family, model;
};

/* Parses "cpu:type:x86,ven0000fam0006mod008F:feature:...".  Returns 0, or
 * -EINVAL (not x86, malformed) or -ENOTSUP (a vendor perf has no tables
 * for). */
int ua_parse_modalias(const char *text, struct ua_cpuid *out);

/* "GenuineIntel-6-8F", perf's CPUID string without the stepping. */
void ua_cpuid_format(const struct ua_cpuid *id, char *buf, size_t len);

/* The microarchitecture of @id counting on core PMU @pmu, or NULL. */
const struct uarch *ua_lookup(const struct ua_cpuid *id, const char *pmu);

/* PERF_METRICS without refinement, for a core PMU with slots whose model
 * is not in the tables: the hardware's own TopDown, nothing guessed. */
const struct uarch *ua_metrics_only(void);

/* The event of @ua standing for @var, or NULL. */
const struct ua_event *ua_event_of(const struct uarch *ua, enum td_event var);

/* Every microarchitecture in the tables (tests, documentation). */
size_t ua_count(void);
const struct uarch *ua_get(size_t i);

#endif
