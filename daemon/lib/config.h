/* SPDX-License-Identifier: MIT */
/* config: the configuration of topdownd, its defaults, the INI file
 * (through libinih) and its diagnostics.
 *
 * Every key is described once, in the key table of config.c: its section,
 * type, range and default.  Loading is a pure function over the file's
 * bytes that collects every problem as "FILE:LINE: message". */
#ifndef TOPDOWND_CONFIG_H
#define TOPDOWND_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cpuset.h"
#include "log.h"
#include "parse.h"

#define CONFIG_DEFAULT_PATH "/etc/topdownd/topdownd.conf"
#define CONFIG_LISTEN_MAX 16
#define CONFIG_FILE_MAX (1024 * 1024)

enum config_model {
	MODEL_PERF,
	MODEL_HARDWARE,
};

enum config_granularity {
	GRAN_CPU,
	GRAN_CORE,
	GRAN_PACKAGE,
	GRAN_SYSTEM,
	GRAN_COUNT,
};

/* What topdownd does when another user's events want the counters its
 * groups hold (collect/share.c): give its general-purpose counters back
 * (yield), or take turns with them as perf does (share). */
enum config_sharing {
	SHARING_YIELD,
	SHARING_SHARE,
};

/* Which threads of each core ran when (collect/smt.c): where the events
 * fit beside the level-1/2 group (auto), also where they would join a
 * rotation (on), never (off). */
enum config_smt {
	SMT_AUTO,
	SMT_ON,
	SMT_OFF,
};

/* What runs the per-cgroup program: cgroup-switches unless perf_event
 * sits on a cgroup v1 hierarchy (auto), or as configured. */
enum config_cg_trigger {
	CG_TRIGGER_AUTO,
	CG_TRIGGER_SWITCHES,
	CG_TRIGGER_SCHED_SWITCH,
};

#define CONFIG_TRACK_MAX 16u
#define CONFIG_GLOB_MAX 200u

struct config {
	/* [collect] */
	uint64_t interval_ns;
	bool cpus_all;
	struct cpuset cpus;
	unsigned level;
	/* Below level 2: only the subtree under each package's bottleneck,
	 * followed as it changes, instead of every node. */
	bool drilldown;
	/* Below level 2 where the level-1/2 events already rotate (Ice Lake,
	 * Skylake-SP, E-cores): the nodes' group joins the rotation, at the
	 * cost of the level-1/2 groups' running time. */
	bool depth_multiplex;
	enum config_model model;
	bool count_kernel;
	bool count_guest;     /* a KVM host's guests counted too (exclude_guest 0) */
	uint64_t history_ns;    /* host and package totals kept for ?window= */
	enum config_sharing pmu_sharing;
	enum config_smt smt;
	/* [metrics] */
	enum config_granularity granularity;
	bool ratios;
	/* [http] */
	struct listen_addr listen[CONFIG_LISTEN_MAX];
	size_t n_listen;
	char tls_cert[PATH_MAX];
	char tls_key[PATH_MAX];
	char tls_client_ca[PATH_MAX];
	char basic_auth_file[PATH_MAX];
	char web_config_file[PATH_MAX]; /* exporter-toolkit's format (webconfig.h) */
	/* The operator's word that a reload may turn TLS, or basic auth, off
	 * (a reload that would, without it, fails: reloads fail closed). */
	bool allow_plaintext;
	bool allow_unauthenticated;
	uint64_t max_connections;
	uint64_t timeout_ns;
	uint64_t unhealthy_after_ns;
	/* [log] */
	enum log_level log_level;
	enum log_format log_format;
	/* [cgroups] */
	bool cgroups_enabled;
	char cgroups_root[PATH_MAX]; /* "": the cgroup2 mount in /proc/self/mountinfo */
	char cgroups_track[CONFIG_TRACK_MAX][CONFIG_GLOB_MAX];
	unsigned n_cgroups_track;
	uint64_t cgroups_max;
	uint64_t cgroups_level;
	double cgroups_budget; /* a fraction of each CPU */
	enum config_cg_trigger cgroups_trigger;
};

#define CONFIG_DIAG_MAX 64

struct config_diag_entry {
	bool warning;
	unsigned line;
	char text[512]; /* "FILE:LINE: message" */
};

/* Problems found while loading.  Errors make the file unusable; warnings
 * are worth telling the operator but the file is accepted. */
struct config_diag {
	size_t n;
	size_t n_errors;
	size_t dropped;
	struct config_diag_entry entries[CONFIG_DIAG_MAX];
};

/* Records a problem as "NAME:LINE: message" (no line if 0).  Also used by
 * the files the configuration names (the basic-auth file). */
void config_diag_add(struct config_diag *diag, bool warning, const char *name,
		     unsigned line, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

void config_defaults(struct config *cfg);

/* Parses INI text named @name (for messages) over the defaults.
 * Returns 0, or -EINVAL when @diag holds at least one error. */
int config_parse(const char *name, const char *text, size_t len,
		 struct config *cfg, struct config_diag *diag);

enum {
	CONFIG_LOAD_MISSING_OK = 1, /* a missing file is the defaults (the default path at start) */
	CONFIG_LOAD_RELOAD = 2,     /* a missing or empty file is an error (-ENOENT, -ENODATA) */
};

/* Reads and parses @path (a regular file: read_file).  Returns 0, -EINVAL
 * (see @diag) or the -errno of reading the file (also recorded in @diag). */
int config_load(const char *path, unsigned flags, struct config *cfg, struct config_diag *diag);

/* Checks what involves several keys (TLS key and cert go together...). */
int config_validate(const struct config *cfg, char *err, size_t errlen);

/* Key @name of [@section] set from @value by the key table's own parser
 * and range, as a line of the file would (the command line's overrides
 * go through it): 0, with *@warning "" or the warning a file would get;
 * or -EINVAL (-ENOENT: no such key) with @err. */
int config_set(struct config *cfg, const char *section, const char *name, const char *value, char *err,
	       size_t errlen, char *warning, size_t warnlen);

/* Writes @cfg in the file format, every key present. */
void config_print(const struct config *cfg, FILE *out);

/* The keys of [@section] (only @key when not NULL) whose values differ
 * between @a and @b, each compared as config_print() writes it: every key
 * of the table, so a key added to it is compared without a line elsewhere.
 * Returns how many differ; their names, space-separated, in @names. */
unsigned config_diff(const struct config *a, const struct config *b, const char *section,
		     const char *key, char *names, size_t len);

/* Every key of [@section] from @src into @dst. */
void config_copy_section(struct config *dst, const struct config *src, const char *section);

/* Whether replacing @in_force by @next would turn TLS or authentication
 * off without the operator's word for it ([http] allow_plaintext,
 * allow_unauthenticated): a reload fails closed, never because a file came
 * out shorter.  True with what it would do and the fix in @why ("turns TLS
 * off; set [http] allow_plaintext = true to mean it"). */
bool config_turns_protection_off(const struct config *in_force, const struct config *next,
				 char *why, size_t len);

const char *config_model_name(enum config_model model);
const char *config_granularity_name(enum config_granularity gran);
/* "cpu", "core", "package" or "system": 0, or -EINVAL. */
int config_granularity_parse(const char *name, enum config_granularity *out);
const char *config_log_level_name(enum log_level level);

#endif
