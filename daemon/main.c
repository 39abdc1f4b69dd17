/* main: the command line, and the only place modules are wired together.
 * Init in dependency order, teardown in reverse. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "parse.h"
#include "plan.h"
#include "pmu.h"
#include "report.h"
#include "sysfs.h"
#include "topo.h"
#include "version.h"

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
	bool json;
	const char *sysfs_root;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: topdownd [-c FILE] [options]\n"
		"Serve Intel TopDown (TMA) level-1/level-2 bottleneck metrics of every CPU\n"
		"to Prometheus (/metrics) and as JSON (/api/v1/topdown).\n"
		"\n"
		"  -c, --config FILE        config file (default " CONFIG_DEFAULT_PATH ";\n"
		"                           a missing default file means the defaults)\n"
		"  -l, --listen ADDR        listen address, repeatable; overrides [http] listen\n"
		"                           (host:port, [ipv6]:port or unix:/path)\n"
		"  -i, --interval DURATION  collection interval, overrides [collect] interval\n"
		"      --check-config       validate the config, print errors as FILE:LINE: message\n"
		"      --print-config       print the effective config in the file format\n"
		"      --probe              print what would be monitored; exit 0 if TopDown works\n"
		"      --once               collect one interval, print a table and exit\n"
		"      --json               with --once: print the JSON document of the API\n"
		"      --sysfs-root DIR     read DIR in place of /sys (tests, demos)\n"
		"  -V, --version            print the version and exit\n"
		"  -h, --help               print this help and exit\n"
		"\n"
		"Exit status: 0 ok, 1 runtime failure, 64 usage error, 78 config error.\n"
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
	OPT_JSON,
	OPT_SYSFS_ROOT,
};

/* Returns -1 to continue, or the exit status. */
static int parse_cli(int argc, char **argv, struct cli *cli)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
		{ "probe", no_argument, NULL, OPT_PROBE },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[512];
	int c;

	*cli = (struct cli){ .config_path = CONFIG_DEFAULT_PATH, .sysfs_root = "/sys" };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:l:i:Vh", options, NULL)) != -1) {
		switch (c) {
		case 'c':
			cli->config_path = optarg;
			cli->config_explicit = true;
			break;
		case 'l':
			if (cli->n_listen == CONFIG_LISTEN_MAX)
				return usage_error("--listen: more than %d addresses", CONFIG_LISTEN_MAX);
			if (parse_listen_addr(optarg, &cli->listen[cli->n_listen], err,
					      sizeof(err)) < 0)
				return usage_error("--listen: %s", err);
			cli->n_listen++;
			break;
		case 'i':
			if (parse_duration(optarg, &cli->interval_ns, err, sizeof(err)) < 0)
				return usage_error("--interval: %s", err);
			if (cli->interval_ns < 10 * NSEC_PER_MSEC || cli->interval_ns > 60 * NSEC_PER_SEC)
				return usage_error("--interval: %s is out of range: expected 10ms to 60s",
						   optarg);
			cli->have_interval = true;
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
		case OPT_JSON:
			cli->json = true;
			break;
		case OPT_SYSFS_ROOT:
			cli->sysfs_root = optarg;
			break;
		case 'V':
			printf("topdownd %s (revision %s)\n", topdownd_version, topdownd_revision);
			return EXIT_SUCCESS;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (cli->json && !cli->once)
		return usage_error("--json only goes with --once");
	if (cli->check_config + cli->print_config + cli->probe + cli->once > 1)
		return usage_error("choose one of --check-config, --print-config, --probe and --once");
	return -1;
}

static void print_diag(const struct config_diag *diag)
{
	for (size_t i = 0; i < diag->n; i++)
		fprintf(stderr, "%s\n", diag->entries[i].text);
	if (diag->dropped)
		fprintf(stderr, "(%zu more problems not shown)\n", diag->dropped);
}

/* Loads the file and applies the command-line overrides. */
static int load_config(const struct cli *cli, struct config *cfg)
{
	struct config_diag diag = { 0 };
	int r;

	config_defaults(cfg);
	r = config_load(cli->config_path, !cli->config_explicit, cfg, &diag);
	print_diag(&diag);
	if (r < 0)
		return r;
	if (cli->n_listen) {
		memcpy(cfg->listen, cli->listen, cli->n_listen * sizeof(cli->listen[0]));
		cfg->n_listen = cli->n_listen;
	}
	if (cli->have_interval)
		cfg->interval_ns = cli->interval_ns;
	return 0;
}

static int run_probe(const struct cli *cli, const struct config *cfg)
{
	struct sysfs *sysfs = NULL;
	struct topo *topo = NULL;
	struct pmu_info pmu;
	struct plan plan;
	int r, status = EXIT_RUNTIME;

	r = sysfs_new(cli->sysfs_root, &sysfs);
	if (r < 0) {
		log_error_errno(r, "Failed to open sysfs root %s: %m", cli->sysfs_root);
		goto out;
	}
	r = topo_new(sysfs, &topo);
	if (r < 0) {
		log_error_errno(r, "Failed to read the CPU topology under %s/devices/system/cpu: %m",
				cli->sysfs_root);
		goto out;
	}
	r = pmu_discover(sysfs, &pmu);
	if (r < 0) {
		log_error_errno(r, "Failed to discover the core PMU: %m");
		goto out;
	}
	plan_make(&pmu, topo, cfg, &plan);
	report_probe(stdout, &pmu, topo, &plan);
	status = plan.usable ? EXIT_SUCCESS : EXIT_RUNTIME;
out:
	topo_free(topo);
	sysfs_free(sysfs);
	return status;
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct cli cli;
	int r;

	log_setup_target();
	r = parse_cli(argc, argv, &cli);
	if (r >= 0)
		return r;

	r = load_config(&cli, &cfg);
	if (cli.check_config)
		return r < 0 ? EXIT_CONFIG : EXIT_SUCCESS;
	if (r < 0)
		return EXIT_CONFIG;
	log_set_level(cfg.log_level);
	if (cli.print_config) {
		config_print(&cfg, stdout);
		return EXIT_SUCCESS;
	}
	if (cli.probe)
		return run_probe(&cli, &cfg);

	fprintf(stderr, "topdownd: collection is not built yet; use --probe\n");
	return EXIT_RUNTIME;
}
