/* SPDX-License-Identifier: MIT */
/* oneshot: --probe, --once and --watch (oneshot.h), on the steps of app.h. */
#include "oneshot.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "caps.h"
#include "log.h"
#include "report.h"
#include "util.h"
#include "version.h"

/* One group opened, read and closed per core PMU with the plan in force
 * (a group refused as too big: the budget learns it, and the plan is
 * made again with a new collector).  0, or -errno with @why; @counted
 * lists what counted, @avail what the counters' other users leave.  No
 * collector is kept. */
int oneshot_counters(struct app *app, char *counted, size_t countedlen, char *avail, size_t availlen,
		     char *why, size_t whylen)
{
	int r;

	for (;;) {
		why[0] = '\0';
		r = app_make_collector(app);
		if (r < 0) {
			str_printf(why, whylen, "cannot set up the collector: %s", strerror(-r));
			break;
		}
		r = collector_probe(app->collector, counted, countedlen, avail, availlen, why, whylen);
		if (r != -EAGAIN)
			break;
		if (!app_learn_budget(app)) {
			str_printf(why, whylen, "no plan fits the counters the kernel leaves free");
			r = -ENOSPC;
			break;
		}
		collector_free(app->collector);
		app->collector = NULL;
	}
	collector_free(app->collector);
	app->collector = NULL;
	return r;
}

/* --probe: what would be monitored, and proof that it counts. */
int oneshot_probe(struct app *app)
{
	char counted[256], why[600], avail[2048] = "", privileges[512];
	const char *lacking;
	int r;

	/* Said only when something is missing: as root, or with both given,
	 * the probe's lines are those of topdownd(8)'s example. */
	lacking = caps_describe(privileges, sizeof(privileges)) ? NULL : privileges;
	if (app_discover(app) < 0)
		return EXIT_RUNTIME;
	if (!app->plan.usable) {
		report_probe(stdout, &app->pmu, app->topo, &app->plan, NULL, NULL, NULL, lacking);
		return EXIT_RUNTIME;
	}
	r = oneshot_counters(app, counted, sizeof(counted), avail, sizeof(avail), why, sizeof(why));
	report_probe(stdout, &app->pmu, app->topo, &app->plan, counted, avail, r < 0 ? why : NULL, lacking);
	return r < 0 ? EXIT_RUNTIME : EXIT_SUCCESS;
}

/* One interval's output of --once and --watch: the table, or the JSON
 * document of the API (pretty for --once, one line per interval for
 * --watch). */
static void print_interval(struct app *app, const struct snapshot *snap, bool one_line)
{
	if (app->cli->json) {
		struct api_query q;
		char err[128], *text;
		json_t *doc;

		api_parse_query("cpu", NULL, NULL, NULL, &q, err, sizeof(err));
		doc = api_document(snap, &q, NULL, app->hostname, topdownd_version);
		text = doc ? api_dump(doc, !one_line) : NULL;
		if (text)
			printf("%s\n", text);
		free(text);
		json_decref(doc);
	} else if (snap->up) {
		report_once(stdout, snap);
	} else {
		report_down(stdout, snap);
	}
	fflush(stdout);
}

/* The exit status of --once and --watch once collection has run. */
static int oneshot_status(const struct app *app)
{
	if (!app->plan.usable) {
		fprintf(stderr, "topdownd: TopDown not available: %s\n", app->plan.reason);
		return EXIT_RUNTIME;
	}
	if (!collector_up(app->collector)) {
		fprintf(stderr, "topdownd: no CPU could be monitored (see the messages above)\n");
		return EXIT_RUNTIME;
	}
	return EXIT_SUCCESS;
}

int oneshot_once(struct app *app)
{
	struct timespec ts = {
		.tv_sec = (time_t)(app->cfg.interval_ns / NSEC_PER_SEC),
		.tv_nsec = (long)(app->cfg.interval_ns % NSEC_PER_SEC),
	};
	const struct snapshot *snap;

	if (app_discover(app) < 0 || app_start_collection(app) < 0)
		return EXIT_RUNTIME;
	if (app->plan.usable)
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
			;
	app_collect(app, mono_ns());
	snap = snapring_acquire(app->ring);
	print_interval(app, snap, false);
	snapring_release(app->ring, snap);
	return oneshot_status(app);
}

/* --watch: perf stat -I's repeating table, from the same groups the
 * daemon opens.  On a terminal each table replaces the previous one;
 * otherwise they follow one another.  SIGINT or SIGTERM ends it. */
int oneshot_watch(struct app *app)
{
	bool tty = isatty(STDOUT_FILENO) && !app->cli->json;
	uint64_t start, deadline;
	sigset_t mask;
	int sfd;

	if (app_discover(app) < 0 || app_start_collection(app) < 0)
		return EXIT_RUNTIME;
	if (!app->plan.usable || !collector_up(app->collector))
		return oneshot_status(app);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
		return EXIT_RUNTIME;
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return log_error_errno(-errno, "Failed to create a signalfd: %m"), EXIT_RUNTIME;
	start = deadline = mono_ns();
	for (uint64_t n = 0; !app->cli->count || n < app->cli->count; n++) {
		struct timespec ts;
		struct signalfd_siginfo si;
		const struct snapshot *snap;

		/* Absolute deadlines: printing does not shift the intervals. */
		deadline += app->cfg.interval_ns;
		ts.tv_sec = (time_t)(deadline / NSEC_PER_SEC);
		ts.tv_nsec = (long)(deadline % NSEC_PER_SEC);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (read(sfd, &si, sizeof(si)) == sizeof(si))
			break;
		app_collect(app, mono_ns());
		while (app_learn(app))
			;
		snap = snapring_acquire(app->ring);
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (n > 0 && !app->cli->json)
			fputc('\n', stdout);
		if (!app->cli->json)
			printf("# %.3f s\n", (double)(deadline - start) / 1e9);
		print_interval(app, snap, true);
		snapring_release(app->ring, snap);
	}
	close(sfd);
	return EXIT_SUCCESS;
}
