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

struct cli {
	const char *config_path;
	bool config_explicit;
	struct listen_addr listen[CONFIG_LISTEN_MAX];
	size_t n_listen;
	bool have_interval;
	uint64_t interval_ns;
	bool check_config;
	bool print_config;
	bool probe;
	bool once;
	bool watch;
	uint64_t count;  /* --watch: intervals to print, 0 = until interrupted */
	bool json;
	const char *sysfs_root;
	const char *web_config_file; /* --web.config.file, NULL when not given */
};

/* Returns -1 to go on, or the exit status (help and version printed,
 * or a usage error written to stderr). */
int cli_parse(int argc, char **argv, struct cli *cli);

#endif
