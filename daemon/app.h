/* SPDX-License-Identifier: MIT */
/* app: what the running daemon holds (struct app), and its lifecycle:
 * the steps loop.c (the daemon), oneshot.c (--probe, --once, --watch) and
 * main.c share.  Defined in app.c, the only place the subsystems are wired
 * together. */
#ifndef TOPDOWND_APP_H
#define TOPDOWND_APP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "budget.h"
#include "cgattr.h"
#include "cli.h"
#include "collector.h"
#include "config.h"
#include "history.h"
#include "http.h"
#include "jobs.h"
#include "plan.h"
#include "pmu.h"
#include "snapshot.h"
#include "sysfs.h"
#include "tls.h"
#include "topo.h"

struct app_reload;

/* Everything the running daemon holds, in init order. */
struct app {
	const struct cli *cli;
	uint64_t intervals_missed; /* timer expirations collection came too late for */
	struct config cfg;
	struct sysfs *sysfs;
	struct topo *topo;
	struct pmu_info pmu;
	struct budget budget;
	struct plan plan;
	struct collector *collector;
	struct cgattr *cgattr;      /* NULL unless [cgroups] enabled */
	struct snapring *ring;
	struct history *history;
	struct jobs *history_jobs; /* takes the history's samples */
	atomic_bool history_queued;
	struct tls_material *tls;   /* until the HTTP server takes them */
	struct auth_db *auth;
	bool https;
	struct http_stats http_stats;
	struct http *http;
	unsigned http_connections;  /* per listening socket, within RLIMIT_NOFILE */
	int listen_fds[CONFIG_LISTEN_MAX * 4];
	size_t n_listen_fds;
	bool socket_activated;
	char hostname[256];
	int epoll_fd, timer_fd, signal_fd, watchdog_fd;
	uint64_t last_tick_ns;      /* when the interval timer last fired */
	double config_loaded_at;    /* Unix time: start, or the last good reload */
	char status[640];
	char reload_error[400]; /* why the last reload failed, until one works */
	uint64_t status_at_ns;
	/* Reloads: read on a worker, applied on the loop (app_reload_*). */
	struct jobs *reload_jobs;
	int reload_fd;        /* eventfd: a reload's files are read */
	bool reload_busy;     /* one is being read */
	bool reload_again;    /* SIGHUP(s) came meanwhile: one more after it */
	struct app_reload *reload;
};

/* A reload's slow half, read off the collection's thread: the file with
 * the command line's overrides, and the files it names, checked against
 * the configuration in force (@current, a copy). */
struct app_reload {
	struct config current;
	struct config cfg;
	struct tls_material *tls;
	struct auth_db *auth;
	int r;             /* 0, or -errno: nothing to apply */
	char error[400];   /* why not, for the status line */
};

/* Discovery, topology, plan: what both --probe and a run need.  0, or
 * -errno after saying why. */
int app_discover(struct app *app);

/* A collector for the plan in force.  0, or -errno after saying why. */
int app_make_collector(struct app *app);

/* What the collector found the kernel would not do goes into the budget;
 * when the budget changes, the plan is made again.  Returns whether it
 * changed. */
bool app_learn_budget(struct app *app);

/* app_learn_budget(), and the collector takes the new plan: call until
 * false (each step gives something up, so the loop ends). */
bool app_learn(struct app *app);

/* The collector, the snapshot ring and, with [cgroups], per-cgroup
 * attribution.  0, or -errno after saying why. */
int app_start_collection(struct app *app);

/* One interval, at @now (CLOCK_MONOTONIC): the reads go straight into a
 * free buffer of the ring, which is then published. */
void app_collect(struct app *app, uint64_t now);

/* Loads the file and applies the command-line overrides.  @diag keeps the
 * problems for the caller (a failed reload reports the first one).  At
 * start (!@to_log) they go to stderr as FILE:LINE: message, on a reload
 * to the log.  0, or -errno. */
int app_load_config(const struct cli *cli, struct config *cfg, bool to_log,
		    struct config_diag *diag);

/* The files the configuration names: the TLS material and the basic-auth
 * file.  Errors name the file.  0, or -errno (nothing is kept). */
int app_load_files(const struct config *cfg, bool to_log, struct tls_material **tls,
		   struct auth_db **auth);

/* Unix time now (the configuration's load time, for its gauge). */
double app_wall_now(void);

/* The same figures again with the state in force (start, a reload). */
void app_publish(struct app *app);

/* The daemon's start, in order: the listening sockets, the reload worker,
 * discovery, the collector, the history and its worker, the first
 * publication, the HTTP server.  0, or -errno after saying why; loop.c
 * then runs the event loop (and app_free() tears down what was made). */
int app_start(struct app *app);

/* The listening sockets: systemd's, or bound from the configuration.
 * 0, or -errno after saying why. */
int app_listen(struct app *app);

/* The HTTP server's parameters for @cfg, handing @tls and @auth over. */
void app_http_params(struct app *app, const struct config *cfg, struct tls_material *tls,
		     struct auth_db *auth, struct http_params *params);

/* The HTTP server on the listening sockets.  0, or -errno after saying why. */
int app_start_http(struct app *app);

/* Reloads (SIGHUP).  The files are read and checked on a worker, so
 * that nothing in them (a slow disk, a large password file) holds up
 * collection; the result is applied on the loop's thread.  SIGHUPs that
 * come while a reload is read are coalesced into one more reload after
 * it: the state in force is the last file's within two reloads' time of
 * the last signal.  app_reload_start() creates the worker and the
 * eventfd (app->reload_fd) the loop watches; app_reload_request() is a
 * SIGHUP; app_reload_finish() runs when reload_fd is readable and
 * returns whether the interval changed (the loop re-arms its timer and
 * tells systemd READY=1), then app_reload_coalesced() starts the one
 * more reload that SIGHUPs meanwhile asked for, if any. */
int app_reload_start(struct app *app);
void app_reload_request(struct app *app);
bool app_reload_finish(struct app *app);
void app_reload_coalesced(struct app *app);

/* One line for `systemctl status`. */
void app_status(const struct app *app, char *buf, size_t len);

/* Everything app holds, in reverse order of init; any part may be unset. */
void app_free(struct app *app);

#endif
