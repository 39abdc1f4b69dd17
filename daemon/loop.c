/* SPDX-License-Identifier: MIT */
/* loop: the daemon's one event loop (epoll): the interval timer, the
 * signals (SIGHUP reloads, SIGTERM and SIGINT stop), the systemd watchdog,
 * and what systemd is told (READY=1, STATUS=, RELOADING=1, STOPPING=1). */
#include "loop.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sd.h"
#include "util.h"

/* STATUS= is refreshed at most this often, and only when it changes. */
#define STATUS_EVERY_NS (10 * NSEC_PER_SEC)

/* Fires first at @first (CLOCK_MONOTONIC), then every @period_ns. */
static int arm_periodic_at(int fd, uint64_t first, uint64_t period_ns)
{
	struct itimerspec its = {
		.it_value = { (time_t)(first / NSEC_PER_SEC), (long)(first % NSEC_PER_SEC) },
		.it_interval = { (time_t)(period_ns / NSEC_PER_SEC), (long)(period_ns % NSEC_PER_SEC) },
	};

	/* Absolute deadlines: a slow interval does not shift the next ones. */
	return timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

static int arm_periodic(int fd, uint64_t period_ns)
{
	return arm_periodic_at(fd, mono_ns() + period_ns, period_ns);
}

/* A new interval keeps the schedule: the next collection comes at the
 * earlier of the one already due and the last one plus the new interval,
 * so reloads in a row (even every fraction of an interval) never hold
 * collection back. */
static int rearm_interval(struct app *app, uint64_t period_ns)
{
	struct itimerspec cur;
	uint64_t now = mono_ns(), due, next;

	if (timerfd_gettime(app->timer_fd, &cur) < 0)
		return -errno;
	due = now + (uint64_t)cur.it_value.tv_sec * NSEC_PER_SEC + (uint64_t)cur.it_value.tv_nsec;
	next = (app->last_tick_ns ? app->last_tick_ns : now) + period_ns;
	if (due < next && (cur.it_value.tv_sec || cur.it_value.tv_nsec))
		next = due;
	if (next <= now)
		next = now + 1; /* overdue: at once (0 would disarm) */
	return arm_periodic_at(app->timer_fd, next, period_ns);
}

static int watch(struct app *app, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(app->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int setup_loop(struct app *app)
{
	uint64_t watchdog_usec;
	sigset_t mask;
	int r;

	/* main() blocked them first thing (so every thread inherits the
	 * mask): one that came during start-up waits in the signalfd. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	app->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (app->epoll_fd < 0)
		return log_error_errno(-errno, "Failed to create an epoll instance: %m");
	app->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (app->signal_fd < 0)
		return log_error_errno(-errno, "Failed to create a signalfd: %m");
	app->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (app->timer_fd < 0)
		return log_error_errno(-errno, "Failed to create a timerfd: %m");
	r = arm_periodic(app->timer_fd, app->cfg.interval_ns);
	if (r < 0)
		return log_error_errno(r, "Failed to arm the interval timer: %m");
	if ((r = watch(app, app->timer_fd)) < 0 || (r = watch(app, app->signal_fd)) < 0 ||
	    (r = watch(app, app->reload_fd)) < 0)
		return log_error_errno(r, "Failed to set up the event loop: %m");
	/* Pinged from this loop, which also collects: a stuck collection
	 * stops the pings and systemd restarts the service. */
	watchdog_usec = sd_glue_watchdog_usec();
	if (watchdog_usec) {
		app->watchdog_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (app->watchdog_fd < 0)
			return log_error_errno(-errno, "Failed to create the watchdog timer: %m");
		r = arm_periodic(app->watchdog_fd, watchdog_usec * 1000 / 2);
		if (r < 0 || (r = watch(app, app->watchdog_fd)) < 0)
			return log_error_errno(r, "Failed to arm the watchdog timer: %m");
		log_debug("systemd watchdog: pinging every %llu ms",
			  (unsigned long long)(watchdog_usec / 2000));
	}
	return 0;
}


/* Refreshes STATUS= when it changed, at most every STATUS_EVERY_NS. */
static void update_status(struct app *app, uint64_t now)
{
	char status[sizeof(app->status)];

	if (now - app->status_at_ns < STATUS_EVERY_NS)
		return;
	app->status_at_ns = now;
	app_status(app, status, sizeof(status));
	if (strcmp(status, app->status) != 0) {
		strcpy(app->status, status);
		sd_glue_status(status);
	}
}

/* READY=1 with the current status (start, end of a reload). */
static void notify_ready(struct app *app)
{
	app->status_at_ns = mono_ns();
	app_status(app, app->status, sizeof(app->status));
	sd_glue_ready(app->status);
}

static void on_timer(struct app *app)
{
	uint64_t expirations, now;

	/* Missed expirations are not made up: the next read's deltas cover
	 * the whole time since the previous one. */
	if (read(app->timer_fd, &expirations, sizeof(expirations)) < 0)
		return;
	if (expirations > 1)
		app->intervals_missed += expirations - 1;
	now = mono_ns();
	app->last_tick_ns = now;
	app_collect(app, now);
	if (app_learn(app)) {
		while (app_learn(app))
			;
		app_publish(app);
	}
	update_status(app, now);
}

/* A reload's files are read: applied here, on the loop's thread. */
static void on_reload(struct app *app)
{
	uint64_t n;
	int r;

	if (read(app->reload_fd, &n, sizeof(n)) != sizeof(n))
		return;
	if (app_reload_finish(app)) {
		r = rearm_interval(app, app->cfg.interval_ns);
		if (r < 0)
			log_error_errno(r, "Failed to re-arm the interval timer: %m");
	}
	notify_ready(app);
	app_reload_coalesced(app);
}

/* Returns true when the daemon should stop. */
static bool on_signal(struct app *app)
{
	struct signalfd_siginfo si;

	while (read(app->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			sd_glue_stopping();
			log_info("Received %s, stopping", si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
			return true;
		}
		if (si.ssi_signo == SIGHUP)
			app_reload_request(app);
	}
	return false;
}

static void on_watchdog(struct app *app)
{
	uint64_t expirations;

	if (read(app->watchdog_fd, &expirations, sizeof(expirations)) > 0)
		sd_glue_watchdog();
}

int loop_run(struct app *app)
{
	bool stop = false;

	/* Everything the daemon runs (app.c), then this loop's descriptors:
	 * the interval's timer starts once the counters are open, and a
	 * signal sent meanwhile waits, blocked, for the signalfd. */
	if (app_start(app) < 0 || setup_loop(app) < 0)
		return EXIT_RUNTIME;
	notify_ready(app);
	/* What is monitored, in the words of systemctl status. */
	log_info("Started: %s", app->status);
	while (!stop) {
		struct epoll_event events[4];
		int n = epoll_wait(app->epoll_fd, events, 4, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_error_errno(-errno, "epoll_wait failed: %m");
			return EXIT_RUNTIME;
		}
		for (int i = 0; i < n; i++) {
			if (events[i].data.fd == app->timer_fd)
				on_timer(app);
			else if (events[i].data.fd == app->watchdog_fd)
				on_watchdog(app);
			else if (events[i].data.fd == app->signal_fd)
				stop = on_signal(app) || stop;
			else if (events[i].data.fd == app->reload_fd)
				on_reload(app);
		}
	}
	return EXIT_SUCCESS;
}
