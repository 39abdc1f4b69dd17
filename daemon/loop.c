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

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* Blocked before any thread starts, so every thread inherits it. */
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
		return log_error_errno(-EINVAL, "Failed to block signals");
	signal(SIGPIPE, SIG_IGN);
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
	if ((r = watch(app, app->timer_fd)) < 0 || (r = watch(app, app->signal_fd)) < 0)
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

/* The HTTP side of a reload: the running server takes the new settings
 * under its live connections, or, when only a new server can apply them,
 * a new one takes the sockets and the old one retires in the background. */
static int reload_http(struct app *app, const struct config *cfg, struct tls_material *tls,
		       struct auth_db *auth)
{
	struct http_params params;
	struct http *http;
	bool https = tls != NULL;
	int r;

	app_http_params(app, cfg, tls, auth, &params);
	r = http_update(app->http, &params);
	if (r != -EAGAIN)
		return r;
	log_info("%s: starting a new HTTP server; open connections are closed",
		 https != app->https ? (https ? "HTTPS turned on" : "HTTPS turned off")
				     : "the connection limit changed");
	r = http_new(&params, &http);
	if (r < 0)
		return r;
	http_retire(app->http);
	app->http = http;
	app->https = https;
	app->http_connections = params.max_connections;
	return 0;
}

/* SIGHUP: a bad file changes nothing; a good one takes effect at once
 * without touching the listening sockets, and counters carry on.
 * Nothing here waits: collection keeps its schedule. */
static void reload(struct app *app)
{
	char changed[256], why[128];
	struct tls_material *tls;
	struct config_diag diag;
	struct auth_db *auth;
	struct config cfg;
	int r;

	sd_glue_reloading();
	log_info("Reloading %s", app->cli->config_path);
	if (app_load_config(app->cli, &cfg, true, &diag) < 0) {
		str_printf(app->reload_error, sizeof(app->reload_error), "%s",
			   diag.n ? diag.entries[0].text : "cannot read the file");
		goto failed;
	}
	if (config_turns_protection_off(&app->cfg, &cfg, why, sizeof(why))) {
		str_printf(app->reload_error, sizeof(app->reload_error), "%s %s",
			   app->cli->config_path, why);
		log_warning("%s", app->reload_error);
		goto failed;
	}
	if (app_load_files(&cfg, true, &tls, &auth) < 0) {
		str_printf(app->reload_error, sizeof(app->reload_error),
			   "a file it names is unusable, see the journal");
		goto failed;
	}
	if (!app->socket_activated && config_diff(&cfg, &app->cfg, "http", "listen", NULL, 0))
		log_warning("[http] listen changed: restart topdownd to listen on the new addresses");
	/* [cgroups] sizes the snapshots and loads the BPF program: a restart
	 * applies it. */
	if (config_diff(&cfg, &app->cfg, "cgroups", NULL, changed, sizeof(changed))) {
		log_warning("[cgroups] %s changed: restart topdownd to apply it (the previous [cgroups] "
			    "stays in force)", changed);
		config_copy_section(&cfg, &app->cfg, "cgroups");
	}
	r = reload_http(app, &cfg, tls, auth);
	if (r < 0) {
		log_error_errno(r, "Failed to apply the HTTP settings: %m");
		str_printf(app->reload_error, sizeof(app->reload_error), "the HTTP server could not restart");
		goto failed;
	}
	log_set_level(cfg.log_level);
	if (cfg.interval_ns != app->cfg.interval_ns) {
		r = rearm_interval(app, cfg.interval_ns);
		if (r < 0)
			log_error_errno(r, "Failed to re-arm the interval timer: %m");
	}
	history_set_length(app->history, cfg.history_ns);
	app->cfg = cfg;
	plan_make(&app->pmu, app->topo, &app->cfg, &app->budget, &app->plan);
	collector_reload(app->collector, &app->plan, cfg.count_kernel, cfg.count_guest, cfg.interval_ns);
	while (app_learn(app))
		;
	/* The state in force first, then published: /metrics says at once
	 * that this reload worked, whatever the interval. */
	app->reload_error[0] = '\0';
	app->config_loaded_at = app_wall_now();
	app_publish(app);
	log_info("Configuration reloaded");
	notify_ready(app);
	return;
failed:
	log_error("Configuration not reloaded: the previous one stays in force");
	app_publish(app); /* topdown_config_last_reload_successful 0, now */
	notify_ready(app);
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
			reload(app);
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
	int r;

	/* Sockets first: a taken port fails at once, before opening counters. */
	if (app_listen(app) < 0)
		return EXIT_RUNTIME;
	if (setup_loop(app) < 0 || app_discover(app) < 0 || app_start_collection(app) < 0)
		return EXIT_RUNTIME;
	if (!app->plan.usable)
		log_warning("TopDown is not available: %s. Serving topdown_up 0.", app->plan.reason);
	for (unsigned i = 0; i < app->plan.n_pmus; i++)
		if (app->plan.pmu[i].level_note[0])
			log_info("%s", app->plan.pmu[i].level_note);
	r = history_new(app->cfg.history_ns, collector_packages(app->collector), app->plan.cats,
			&app->history);
	if (r < 0) {
		log_error_errno(r, "Failed to allocate the history: %m");
		return EXIT_RUNTIME;
	}
	log_info("History (the live page, ?window=): %g s, %zu KiB",
		 (double)app->cfg.history_ns / 1e9, (history_bytes(app->history) + 1023) / 1024);
	r = jobs_new("topdownd-hist", 1, 2, 5, &app->history_jobs);
	if (r < 0) {
		log_error_errno(r, "Failed to start the history worker: %m");
		return EXIT_RUNTIME;
	}
	app->config_loaded_at = app_wall_now();
	/* Something to serve before the first interval completes. */
	app_publish(app);
	if (app_start_http(app) < 0)
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
		}
	}
	return EXIT_SUCCESS;
}
