/* SPDX-License-Identifier: MIT */
/* metric: every metric family topdownd exports, declared once.
 *
 * One row per family: its name, type, HELP text, labels, and where the
 * JSON document (/api/v1/topdown) carries the same quantity.  expo.c
 * writes the Prometheus and OpenMetrics families from these rows only (it
 * names a family by its id, never by a string of its own); a unit test
 * (test_api.c, test_metric_sets) renders both outputs of one snapshot and
 * checks that every family is in both, where its row says the document
 * carries it, and that every field of the document is a family's or on
 * metric_json_only's list with the reason it is not one.  That is what
 * keeps a new figure from reaching one output and not the other. */
#ifndef TOPDOWND_METRIC_H
#define TOPDOWND_METRIC_H

#include <assert.h>
#include <stddef.h>

enum metric_id {
	/* state */
	MET_UP,
	MET_PMU_INFO,
	MET_BUILD_INFO,
	MET_CPUS,
	MET_CPU_INFO,
	/* per entity of the granularity */
	MET_SLOTS,
	MET_LEVEL1_SLOTS,
	MET_LEVEL2_SLOTS,
	MET_ENABLED_SECONDS,
	MET_RUNNING_SECONDS,
	MET_EXPECTED_CPUS,
	MET_MEASURED_CPUS,
	/* per entity, below level 2 ([collect] level 3 to 6) */
	MET_NODE_SLOTS,
	MET_NODE_SECONDS,
	MET_NODE_BASE_SLOTS,
	/* per core (and its package, the host): which threads ran when */
	MET_SMT_SECONDS,
	/* per entity, where a thread's slots tell its mode (NVIDIA Olympus) */
	MET_SMT_MODE_CYCLES,
	/* the host's last interval */
	MET_LEVEL1_RATIO,
	MET_LEVEL2_RATIO,
	/* per cgroup */
	MET_CGROUPS,
	MET_CGROUP_SWITCHES,
	MET_CGROUP_BPF_SECONDS,
	MET_CGROUP_SLOTS,
	MET_CGROUP_LEVEL1_SLOTS,
	MET_CGROUP_LEVEL2_SLOTS,
	/* the collection */
	MET_COLLECTION_ERRORS,
	MET_DEPARTURES,
	MET_INTERVAL_SECONDS,
	MET_RELOAD_SUCCESSFUL,
	MET_RELOAD_TIMESTAMP,
	MET_COLLECTIONS,
	MET_INTERVALS_MISSED,
	MET_COLLECTION_DURATION,
	MET_LAST_COLLECTION,
	/* the process (the Prometheus client libraries' convention) */
	MET_PROCESS_CPU_SECONDS,
	MET_PROCESS_OPEN_FDS,
	MET_PROCESS_MAX_FDS,
	MET_PROCESS_VIRTUAL_BYTES,
	MET_PROCESS_RESIDENT_BYTES,
	MET_PROCESS_START_TIME,
	/* the HTTP server */
	MET_HTTP_REQUESTS,
	MET_HTTP_REJECTED,
	MET_HTTP_CONNECTIONS,
	MET_HTTP_API_RENDERS,
	MET_HTTP_API_QUEUED,
	MET_HTTP_PASSWORD_CHECKS,
	MET_COUNT,
};

struct metric {
	const char *name;   /* samples' name: counters end in _total */
	const char *type;   /* "counter" or "gauge" */
	const char *help;
	/* Its labels, space-separated; "ENTITY" stands for the granularity's
	 * (cpu core package, core package, package, none). */
	const char *labels;
	/* Where /api/v1/topdown carries the same figures: space-separated
	 * paths of keys, "[]" for every element of an array, "*" for every
	 * entity (host, packages[], cores[], cpus[]); a family with labels
	 * is an object keyed by their values there.  NULL where the document
	 * does not, and json_absent says why. */
	const char *json;
	const char *json_absent;
};

/* Indexed by enum metric_id, MET_COUNT long. */
extern const struct metric metric_table[];

static inline const struct metric *metric_get(enum metric_id id)
{
	assert((unsigned)id < MET_COUNT);
	return &metric_table[id];
}

/* Fields of the document that are no family's, and why: the document's
 * own metadata, what the request asked, and the last interval's figures
 * derived from the counters (what Prometheus computes with rate()). */
struct metric_json_field {
	const char *path; /* as in struct metric's json */
	const char *why;
};

extern const struct metric_json_field metric_json_only[];
extern const size_t metric_json_only_count;

#endif
