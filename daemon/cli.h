/* SPDX-License-Identifier: MIT */
/* cli: the command line: options, their checks and the usage text.
 * parse_cli is a pure function of argv (apart from --help and --version,
 * which print). */
#ifndef TOPDOWND_CLI_H
#define TOPDOWND_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "parse.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 64
#define EXIT_CONFIG 78

/* --compare-perf's default tolerance, in percentage points: both tools
 * count at once, and where they take turns on the same counters each
 * sees a different part of an interval. */
#define CLI_TOLERANCE_PP 0.5

/* Room for CONFIG_LISTEN_MAX addresses of the longest form. */
#define CLI_LISTEN_TEXT 4096

struct cli {
	const char *config_path;
	bool config_explicit;
	/* The overrides of the configuration, as given: each goes through
	 * the key table's parser (config_set), here to refuse it as a usage
	 * error and again when applied (app_load_config). */
	char listen[CLI_LISTEN_TEXT];   /* every --listen, space-separated; "" when none */
	const char *interval;           /* --interval, NULL when not given */
	bool check_config;
	bool print_config;
	bool probe;
	bool once;
	bool watch;
	uint64_t count;  /* --watch: intervals to print, 0 = until interrupted */
	bool json;
	/* --compare-perf: the perf to run (NULL: perf in PATH) and the
	 * largest difference that agrees, in percentage points. */
	bool compare_perf;
	const char *perf;
	double tolerance_pp;
	const char *sysfs_root;
	char web_config_file[PATH_MAX]; /* --web.config.file made absolute, "" when not given */
};

/* Returns -1 to go on, or the exit status (help and version printed,
 * or a usage error written to stderr). */
int cli_parse(int argc, char **argv, struct cli *cli);

#endif
