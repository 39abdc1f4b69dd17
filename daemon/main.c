/* SPDX-License-Identifier: MIT */
/* main: the command line, then what it asks for: the configuration
 * checked or printed, a one-shot mode (oneshot.c), or the daemon's loop
 * (loop.c); app_free() tears down what either built. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "auth.h"
#include "caps.h"
#include "cli.h"
#include "compare.h"
#include "config.h"
#include "log.h"
#include "loop.h"
#include "oneshot.h"
#include "tls.h"

int main(int argc, char **argv)
{
	struct app app = { .epoll_fd = -1, .timer_fd = -1, .signal_fd = -1, .watchdog_fd = -1,
			   .reload_fd = -1 };
	struct config_diag diag;
	sigset_t handled, before;
	struct config cfg;
	struct cli cli;
	int r;

	/* First of all: the signals the daemon handles wait, blocked, until
	 * its loop reads them from a signalfd.  systemd, logrotate and
	 * configuration management send SIGHUP whenever they like; one
	 * during start-up is then a reload once the daemon runs, never a
	 * death.  The one-shot modes take the default actions back below.
	 * SIGUSR1 and SIGUSR2 mean nothing here: ignored rather than fatal
	 * (topdownd(8) SIGNALS). */
	sigemptyset(&handled);
	sigaddset(&handled, SIGHUP);
	sigaddset(&handled, SIGTERM);
	sigaddset(&handled, SIGINT);
	sigprocmask(SIG_BLOCK, &handled, &before);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);

	/* Rendered /metrics bodies are megabytes each interval.  A fixed mmap
	 * threshold (it also turns off glibc's dynamic one, which rises after
	 * the first big free) gives them back to the kernel when freed, so RSS
	 * stays flat instead of creeping with arena fragmentation; two arenas
	 * are plenty for one collector and the HTTP threads. */
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	mallopt(M_ARENA_MAX, 2);
	log_setup_target();
	r = cli_parse(argc, argv, &cli);
	if (r >= 0)
		return r;
	/* A command that ends by itself stops on SIGINT or SIGTERM as any
	 * program does, and a closed terminal's SIGHUP ends it too (--watch
	 * reads SIGINT and SIGTERM itself). */
	if (cli.check_config || cli.print_config || cli.probe || cli.once || cli.watch || cli.compare_perf)
		sigprocmask(SIG_SETMASK, &before, NULL);

	r = app_load_config(&cli, &cfg, false, &diag);
	/* Only what serves HTTP needs the TLS and auth files. */
	if (r == 0 && !cli.print_config && !cli.probe && !cli.once && !cli.watch && !cli.compare_perf)
		r = app_load_files(&cfg, false, &app.tls, &app.auth);
	else if (r == -EINVAL && cli.check_config) {
		char err[256];

		/* Every problem in one run: the files the configuration
		 * names are checked even when the rest of it has errors
		 * (unless the TLS keys do not pair, already reported). */
		if (config_validate(&cfg, err, sizeof(err)) == 0)
			app_load_files(&cfg, false, &app.tls, &app.auth);
	}
	if (cli.check_config) {
		auth_db_free(app.auth);
		tls_material_free(app.tls);
		return r < 0 ? EXIT_CONFIG : EXIT_SUCCESS;
	}
	if (r < 0)
		return EXIT_CONFIG;
	log_set_level(cfg.log_level);
	log_set_format(cfg.log_format);
	if (cli.print_config) {
		config_print(&cfg, stdout);
		return EXIT_SUCCESS;
	}

	/* The image's binary holds CAP_PERFMON and CAP_BPF as permitted file
	 * capabilities only (caps.h): effective from here on, where the
	 * container was given them. */
	r = caps_raise();
	if (r < 0)
		log_debug_errno(r, "Failed to raise the permitted capabilities: %m");
	app.cli = &cli;
	app.cfg = cfg;
	if (gethostname(app.hostname, sizeof(app.hostname) - 1) < 0)
		strcpy(app.hostname, "unknown");
	if (cli.probe)
		r = oneshot_probe(&app);
	else if (cli.once)
		r = oneshot_once(&app);
	else if (cli.watch)
		r = oneshot_watch(&app);
	else if (cli.compare_perf)
		r = compare_perf(&app);
	else
		r = loop_run(&app);
	app_free(&app);
	return r;
}
