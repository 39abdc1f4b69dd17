/* SPDX-License-Identifier: MIT */
/* cli: command-line options and usage. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "version.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: topdownd [-c FILE] [options]\n"
		"Serve the TopDown (TMA) level-1/level-2 bottleneck metrics of every CPU\n"
		"(Intel, AMD and Arm cores) to Prometheus (/metrics) and as JSON (/api/v1/topdown).\n"
		"\n"
		"  -c, --config FILE        config file (default " CONFIG_DEFAULT_PATH ";\n"
		"                           a missing default file means the defaults)\n"
		"  -l, --listen ADDR        listen address, repeatable; overrides [http] listen\n"
		"                           (host:port, [ipv6]:port or unix:/path)\n"
		"  -i, --interval DURATION  collection interval, overrides [collect] interval\n"
		"      --web.config.file FILE  TLS and basic auth in exporter-toolkit's format\n"
		"                           (node_exporter's); overrides [http] web_config_file\n"
		"      --check-config       validate the config, print errors as FILE:LINE: message\n"
		"      --print-config       print the effective config in the file format\n"
		"      --probe              print what would be monitored; exit 0 if TopDown works\n"
		"      --once               collect one interval, print a table and exit\n"
		"      --watch              print the table every interval, like perf stat -I\n"
		"      --count N            with --watch: stop after N intervals; with\n"
		"                           --compare-perf: intervals per aggregation (default 3)\n"
		"      --json               with --once or --watch: the JSON document of the API\n"
		"                           (one line per interval with --watch); with\n"
		"                           --compare-perf: the report as JSON\n"
		"      --compare-perf       count beside the installed perf and compare every value\n"
		"                           per CPU, core, package and host (exit 0 agree, 2 differ)\n"
		"      --perf PATH          with --compare-perf: the perf to run (default: perf in PATH)\n"
		"      --tolerance PP       with --compare-perf: the largest difference that agrees,\n"
		"                           in percentage points (default 0.5)\n"
		"      --sysfs-root DIR     read DIR in place of /sys (tests, demos)\n"
		"  -V, --version            print the version and exit\n"
		"  -h, --help               print this help and exit\n"
		"\n"
		"Exit status: 0 ok, 1 runtime failure, 2 --compare-perf found values that differ,\n"
		"64 usage error, 78 config error.\n"
		"See topdownd(8) and topdownd.conf(5).\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "topdownd: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'topdownd --help' for more information.\n");
	return EXIT_USAGE;
}

enum {
	OPT_CHECK_CONFIG = 256,
	OPT_PRINT_CONFIG,
	OPT_PROBE,
	OPT_ONCE,
	OPT_WATCH,
	OPT_COUNT,
	OPT_JSON,
	OPT_SYSFS_ROOT,
	OPT_WEB_CONFIG,
	OPT_COMPARE_PERF,
	OPT_PERF,
	OPT_TOLERANCE,
};

int cli_parse(int argc, char **argv, struct cli *cli)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
		{ "probe", no_argument, NULL, OPT_PROBE },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "watch", no_argument, NULL, OPT_WATCH },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "compare-perf", no_argument, NULL, OPT_COMPARE_PERF },
		{ "perf", required_argument, NULL, OPT_PERF },
		{ "tolerance", required_argument, NULL, OPT_TOLERANCE },
		{ "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
		{ "web.config.file", required_argument, NULL, OPT_WEB_CONFIG },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[512], warn[256];
	struct config scratch; /* where the overrides are tried */
	int c;

	*cli = (struct cli){ .config_path = CONFIG_DEFAULT_PATH, .sysfs_root = "/sys" };
	config_defaults(&scratch);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:l:i:Vh", options, NULL)) != -1) {
		switch (c) {
		case 'c':
			cli->config_path = optarg;
			cli->config_explicit = true;
			break;
		case 'l': {
			size_t len = strlen(cli->listen);

			/* One address per option: a blank would split it. */
			if (!optarg[0] || strpbrk(optarg, " \t") ||
			    len + strlen(optarg) + 2 > sizeof(cli->listen))
				return usage_error("--listen: invalid address \"%s\"", optarg);
			snprintf(cli->listen + len, sizeof(cli->listen) - len, "%s%s", len ? " " : "", optarg);
			if (config_set(&scratch, "http", "listen", cli->listen, err, sizeof(err), warn,
				       sizeof(warn)) < 0)
				return usage_error("--listen: %s", err);
			break;
		}
		case 'i':
			if (config_set(&scratch, "collect", "interval", optarg, err, sizeof(err), warn,
				       sizeof(warn)) < 0)
				return usage_error("--interval: %s", err);
			cli->interval = optarg;
			break;
		case OPT_CHECK_CONFIG:
			cli->check_config = true;
			break;
		case OPT_PRINT_CONFIG:
			cli->print_config = true;
			break;
		case OPT_PROBE:
			cli->probe = true;
			break;
		case OPT_ONCE:
			cli->once = true;
			break;
		case OPT_WATCH:
			cli->watch = true;
			break;
		case OPT_COUNT:
			if (parse_uint(optarg, 1, UINT32_MAX, &cli->count, err, sizeof(err)) < 0)
				return usage_error("--count: %s", err);
			break;
		case OPT_JSON:
			cli->json = true;
			break;
		case OPT_COMPARE_PERF:
			cli->compare_perf = true;
			break;
		case OPT_PERF:
			cli->perf = optarg;
			break;
		case OPT_TOLERANCE: {
			char *end;

			errno = 0;
			cli->tolerance_pp = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(cli->tolerance_pp > 0 && cli->tolerance_pp <= 100))
				return usage_error("--tolerance: expected percentage points above 0, at most 100, "
						   "not \"%s\"", optarg);
			break;
		}
		case OPT_SYSFS_ROOT:
			cli->sysfs_root = optarg;
			break;
		case OPT_WEB_CONFIG: {
			char cwd[PATH_MAX];

			/* Relative to the current directory, as node_exporter
			 * reads it; the key itself takes absolute paths. */
			if (optarg[0] == '/')
				str_printf(cli->web_config_file, sizeof(cli->web_config_file), "%s", optarg);
			else if (getcwd(cwd, sizeof(cwd)))
				str_printf(cli->web_config_file, sizeof(cli->web_config_file), "%s/%s", cwd, optarg);
			if (config_set(&scratch, "http", "web_config_file", cli->web_config_file, err, sizeof(err),
				       warn, sizeof(warn)) < 0)
				return usage_error("--web.config.file: %s", err);
			break;
		}
		case 'V':
			printf("topdownd %s (revision %s)\n", topdownd_version, topdownd_revision);
			return EXIT_SUCCESS;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt > 0 && optopt < 256 && !strchr("clihV", optopt))
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (cli->json && !cli->once && !cli->watch && !cli->compare_perf)
		return usage_error("--json only goes with --once, --watch or --compare-perf");
	if (cli->count && !cli->watch && !cli->compare_perf)
		return usage_error("--count only goes with --watch or --compare-perf");
	if ((cli->perf || cli->tolerance_pp > 0) && !cli->compare_perf)
		return usage_error("--perf and --tolerance only go with --compare-perf");
	if (cli->check_config + cli->print_config + cli->probe + cli->once + cli->watch + cli->compare_perf > 1)
		return usage_error("choose one of --check-config, --print-config, --probe, --once, --watch and "
				   "--compare-perf");
	if (cli->tolerance_pp == 0)
		cli->tolerance_pp = CLI_TOLERANCE_PP;
	return -1;
}

