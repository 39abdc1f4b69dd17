/* SPDX-License-Identifier: MIT */
/* history: the host's and the packages' cumulative counters over the last
 * `[collect] history` (15 minutes by default), for ratios over a window
 * (the JSON API's ?window=) without Prometheus.
 *
 * A fixed ring of HISTORY_SAMPLES samples, one per resolution step
 * (length / HISTORY_SAMPLES, or the interval if longer): memory is
 * HISTORY_SAMPLES x (1 + packages) x the columns the collected categories
 * use (slots, the times, the categories) doubles, allocated and written
 * once (resident from the start); below level 2 ([collect] level 3 to 6),
 * as many again per node and one more (its slots_total and the base
 * slots), allocated when the first sample with nodes is kept.
 * Written by the history worker when a sample is due (history_due, asked
 * by the collection), read by HTTP threads; a lock held for a copy, never
 * across anything else. */
#ifndef TOPDOWND_HISTORY_H
#define TOPDOWND_HISTORY_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"

#define HISTORY_SAMPLES 900

struct history;

/* Room for the host and up to @max_pkgs packages, and the counters of
 * categories @cats (the plan's; if the snapshots' differ, the history
 * follows them and starts over). */
int history_new(uint64_t length_ns, unsigned max_pkgs, td_catset cats, struct history **ret);
void history_free(struct history *h);
uint64_t history_length_ns(struct history *h);
/* A new length (a reload): the samples kept so far are dropped. */
void history_set_length(struct history *h, uint64_t length_ns);
/* Bytes it holds. */
size_t history_bytes(struct history *h);

/* Samples are kept by the monotonic clock (when the collection that
 * made them ended, snapshot_mono_s()): a step of the wall clock (NTP, an
 * administrator's date) changes neither which sample a window starts at
 * nor how long a step is.  Wall times are only for display: the series
 * gives them in the frame of the snapshot it is read with. */

/* Whether a sample at @mono_s is due: a resolution step has passed since
 * the last sample kept. */
bool history_due(struct history *h, double mono_s);
/* Records @snap's totals of packages and the host at its monotonic time,
 * if due. */
void history_record(struct history *h, const struct snapshot *snap);

/* A sample: when (monotonic seconds), and the totals of the host and of
 * each package (in the snapshot's package order, with their ids).  Below
 * level 2, @nodes: for the host then each package, n_nodes + 1 doubles:
 * each tree's nodes' slots_total then its base slots, tree after tree
 * (snapshot_deep_offset), of the depth plan @deep_gen in layout @layout
 * (the snapshot's: totals continue only within both); NULL when the
 * sample has none. */
struct history_sample {
	double mono;
	unsigned n_pkgs;
	int pkg_ids[64];
	double host[TD_C_COUNT];
	double pkgs[64][TD_C_COUNT];
	uint64_t deep_gen, layout;
	unsigned n_nodes;
	double *nodes;
};

/* The latest sample taken at or before @mono_s, or the oldest one when
 * none is that old; -ENOENT when there is none at all, -ENOMEM.  Its
 * nodes are the caller's: history_sample_release(). */
int history_at(struct history *h, double mono_s, struct history_sample *out);
/* Frees @s's nodes (not @s); NULL ok. */
void history_sample_release(struct history_sample *s);
/* A sample's nodes of the host (@pkg -1) or of package @pkg (its id),
 * n_nodes + 1 of them; NULL when it has none. */
const double *history_sample_nodes(const struct history_sample *s, int pkg);

/* The samples kept after @since (a wall time, 0: all; compared to the
 * millisecond, as documents print them) and the one before them, oldest
 * first (so their steps are those that end after @since): their wall
 * times, each @ref_wall - (@ref_mono - its monotonic time), so that one
 * document's times never go backwards whatever the wall clock did; and
 * the totals of the host then each package ([n][1 + n_pkgs][TD_C_COUNT];
 * a sample taken when fewer packages were known has zeros for the others).
 * Copied under the lock, for a reader to use at leisure. */
struct history_series {
	unsigned n, n_pkgs;
	int pkg_ids[64];
	double step_s;
	double *ts;
	double *totals;
};

int history_series(struct history *h, double since, double ref_mono, double ref_wall,
		   struct history_series **ret);
void history_series_free(struct history_series *s);

#endif
