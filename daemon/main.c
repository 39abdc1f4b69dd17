/* SPDX-License-Identifier: MIT */
/* main: the command line, and the only place modules are wired together.
 * Init in dependency order, teardown in reverse. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdatomic.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "auth.h"
#include "cgattr.h"
#include "cgroups.h"
#include "cli.h"
#include "collector.h"
#include "config.h"
#include "history.h"
#include "jobs.h"
#include "http.h"
#include "listen.h"
#include "log.h"
#include "oneshot.h"
#include "budget.h"
#include "plan.h"
#include "pmu.h"
#include "sd.h"
#include "snapshot.h"
#include "sysfs.h"
#include "tls.h"
#include "topo.h"
#include "util.h"


/* At start the diagnostics go to stderr as FILE:LINE: message; on a
 * reload they go through the log (the journal). */
static void print_diag(const struct config_diag *diag, bool to_log)
{
	for (size_t i = 0; i < diag->n; i++) {
		const struct config_diag_entry *e = &diag->entries[i];
		char clean[sizeof(e->text) * 4];

		log_escape(clean, sizeof(clean), e->text);
		if (!to_log)
			fprintf(stderr, "%s\n", clean);
		else if (e->warning)
			log_warning("%s", e->text);
		else
			log_error("%s", e->text);
	}
	if (diag->dropped && to_log)
		log_error("(%zu more problems not shown)", diag->dropped);
	else if (diag->dropped)
		fprintf(stderr, "(%zu more problems not shown)\n", diag->dropped);
}

/* Loads the file and applies the command-line overrides.  @diag keeps the
 * problems for the caller (a failed reload reports the first one). */
static int load_config(const struct cli *cli, struct config *cfg, bool to_log,
		       struct config_diag *diag)
{
	int r;

	memset(diag, 0, sizeof(*diag));
	config_defaults(cfg);
	/* to_log: a reload, which needs a file with the settings in it. */
	r = config_load(cli->config_path,
			to_log ? CONFIG_LOAD_RELOAD : cli->config_explicit ? 0 : CONFIG_LOAD_MISSING_OK, cfg,
			diag);
	print_diag(diag, to_log);
	if (r < 0)
		return r;
	if (cli->n_listen) {
		memcpy(cfg->listen, cli->listen, cli->n_listen * sizeof(cli->listen[0]));
		cfg->n_listen = cli->n_listen;
	}
	if (cli->have_interval) {
		cfg->interval_ns = cli->interval_ns;
		if (cfg->interval_ns > 5 * NSEC_PER_SEC && !to_log)
			fprintf(stderr, "topdownd: warning: --interval longer than 5s: the 8-bit TopDown metrics lose precision between reads\n");
	}
	return 0;
}

/* Whether the private key @path can be read by more than its owner: a
 * warning in @msg (a group may be how the service reads it: that group
 * is named). */
static bool tls_key_exposed(const char *path, char *msg, size_t len)
{
	struct stat st;

	if (stat(path, &st) < 0 || !(st.st_mode & (S_IRGRP | S_IROTH)))
		return false;
	if (st.st_mode & S_IROTH)
		str_printf(msg, len,
			   "tls_key %s can be read by every user (mode %04o): anyone on the host can read the private key; chmod o-r it",
			   path, (unsigned)(st.st_mode & 07777));
	else
		str_printf(msg, len,
			   "tls_key %s can be read by group %u (mode %04o): make sure only topdownd's own group can",
			   path, (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777));
	return true;
}

/* The files the configuration names: the TLS material and the basic-auth
 * file.  Errors name the file; at start they go to stderr, on reload to
 * the log. */
static int load_files(const struct config *cfg, bool to_log, struct tls_material **tls,
		      struct auth_db **auth)
{
	struct config_diag diag = { 0 };
	char err[600];
	int r = 0, ra;

	*tls = NULL;
	*auth = NULL;
	if (cfg->tls_cert[0]) {
		r = tls_material_load(cfg->tls_cert, cfg->tls_key, cfg->tls_client_ca, tls, err,
				      sizeof(err));
		if (r < 0) {
			if (to_log)
				log_error("%s", err);
			else
				fprintf(stderr, "%s\n", err);
		} else if (tls_key_exposed(cfg->tls_key, err, sizeof(err))) {
			if (to_log)
				log_warning("%s", err);
			else
				fprintf(stderr, "topdownd: warning: %s\n", err);
		}
	}
	/* Checked even when the TLS files are not: every problem at once. */
	if (cfg->basic_auth_file[0]) {
		ra = auth_db_load(cfg->basic_auth_file, auth, &diag);
		print_diag(&diag, to_log);
		if (ra < 0 && r == 0)
			r = ra;
	}
	if (r < 0) {
		tls_material_free(*tls);
		auth_db_free(*auth);
		*tls = NULL;
		*auth = NULL;
	}
	return r;
}


/* STATUS= is refreshed at most this often, and only when it changes. */
/* Where the kernel says whether the NMI watchdog holds a cycles counter. */
#define NMI_WATCHDOG_PATH "/proc/sys/kernel/nmi_watchdog"

#define STATUS_EVERY_NS (10 * NSEC_PER_SEC)

/* Descriptors the daemon holds besides perf groups and HTTP connections
 * (stdio, the event loop, listening sockets, libmicrohttpd's and the
 * workers' pipes, the journal, files read on reload), with room to spare. */
#define FD_INTERNAL 64
/* HTTP connections kept per listening socket even when RLIMIT_NOFILE is
 * too low for every CPU: scraping keeps working. */
#define HTTP_MIN_CONNECTIONS 64

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Discovery, topology, plan: what both --probe and a run need. */
int app_discover(struct app *app)
{
	int r;

	r = sysfs_new(app->cli->sysfs_root, &app->sysfs);
	if (r < 0)
		return log_error_errno(r, "Failed to open sysfs root %s: %m", app->cli->sysfs_root);
	r = topo_new(app->sysfs, &app->topo);
	if (r < 0)
		return log_error_errno(r, "Failed to read the CPU topology under %s/devices/system/cpu: %m",
				       app->cli->sysfs_root);
	r = pmu_discover(app->sysfs, &app->pmu);
	if (r < 0)
		return log_error_errno(r, "Failed to discover the core PMU: %m");
	budget_probe(&app->pmu, app->topo, app->sysfs, NMI_WATCHDOG_PATH, app->cfg.count_kernel,
		     &app->budget);
	plan_make(&app->pmu, app->topo, &app->cfg, &app->budget, &app->plan);
	return 0;
}

/* What the collector found the kernel would not do goes into the budget;
 * when the budget changes, the plan is made again and the collector takes
 * it.  Each step gives something up, so the loop ends.  Returns whether
 * the plan changed. */
bool app_learn_budget(struct app *app)
{
	struct budget_evidence ev;
	bool changed = false;

	while (collector_take_evidence(app->collector, &ev)) {
		const struct plan_pmu *pp = NULL;

		for (unsigned i = 0; i < app->plan.n_pmus; i++)
			if (app->plan.pmu[i].core == &app->pmu.core[ev.pmu])
				pp = &app->plan.pmu[i];
		if (pp && budget_learn(&app->budget, &ev, pp->gp_available, pp->fixed1_busy)) {
			log_warning("%s: %s; making the plan again", app->pmu.core[ev.pmu].name,
				    app->budget.pmu[ev.pmu].learned);
			changed = true;
		} else {
			char why[SNAP_REASON];

			if (ev.kind == BUDGET_TOO_BIG)
				str_printf(why, sizeof(why), "the kernel refuses the smallest group on CPU %d",
					   ev.cpu);
			else
				str_printf(why, sizeof(why),
					   "a group of the smallest plan never runs on CPU %d: another user holds "
					   "the counters%s%s%s; no figures while it does",
					   ev.cpu, ev.holders[0] ? " (" : "", ev.holders, ev.holders[0] ? ")" : "");
			log_warning("%s: %s, and no smaller plan is possible", app->pmu.core[ev.pmu].name, why);
			collector_give_up(app->collector, ev.pmu, mono_ns(), why);
		}
	}
	if (changed)
		plan_make(&app->pmu, app->topo, &app->cfg, &app->budget, &app->plan);
	return changed;
}

bool app_learn(struct app *app)
{
	if (!app_learn_budget(app))
		return false;
	collector_reload(app->collector, &app->plan, app->cfg.count_kernel, app->cfg.count_guest,
			 app->cfg.interval_ns);
	return true;
}

int app_make_collector(struct app *app)
{
	struct collector_params params = {
		.sysfs = app->sysfs,
		.topo = app->topo,
		.pmu = &app->pmu,
		.plan = &app->plan,
		.count_kernel = app->cfg.count_kernel,
		.count_guest = app->cfg.count_guest,
		.oneshot = app->cli->once || app->cli->watch,
		.interval_ns = app->cfg.interval_ns,
		.fd_others_want = FD_INTERNAL + (unsigned)app->cfg.max_connections *
						(unsigned)app->n_listen_fds,
		.fd_others_min = FD_INTERNAL + (app->cfg.max_connections < HTTP_MIN_CONNECTIONS ?
						(unsigned)app->cfg.max_connections : HTTP_MIN_CONNECTIONS) *
					       (unsigned)app->n_listen_fds,
	};
	int r;

	r = collector_new(&params, &app->collector);
	if (r < 0)
		return log_error_errno(r, "Failed to set up the collector: %m");
	return 0;
}

/* Per-cgroup attribution, once the groups are open.  Nothing in it stops
 * the daemon: without BPF, permission or cgroup v2 it says why and the
 * per-host figures go on. */
static int app_start_cgroups(struct app *app)
{
	const char *globs[CONFIG_TRACK_MAX];
	char root[CGROUPS_PATH_MAX];
	struct cgattr_params p = {
		.root = root,
		.globs = globs,
		.n_globs = app->cfg.n_cgroups_track,
		.cap = (unsigned)app->cfg.cgroups_max,
		.level = (unsigned)app->cfg.cgroups_level,
		.budget = app->cfg.cgroups_budget,
		.collector = app->collector,
		.cats = app->plan.cats,
	};
	int r;

	if (!app->cfg.cgroups_enabled)
		return 0;
	for (unsigned i = 0; i < app->cfg.n_cgroups_track; i++)
		globs[i] = app->cfg.cgroups_track[i];
	if (cgroups_root(app->cfg.cgroups_root, root, sizeof(root)) < 0)
		root[0] = '\0';
	p.sched_switch = app->cfg.cgroups_trigger == CG_TRIGGER_SCHED_SWITCH;
	if (app->cfg.cgroups_trigger == CG_TRIGGER_AUTO && cgroups_perf_event_on_v1()) {
		p.sched_switch = true;
		log_info("The perf_event controller is on a cgroup v1 hierarchy: per-cgroup attribution "
			 "runs on every context switch (sched_switch), as cgroup-switches would miss "
			 "cgroup v2 moves");
	}
	r = cgattr_new(&p, &app->cgattr);
	if (r < 0)
		return log_error_errno(r, "Failed to set up per-cgroup attribution: %m");
	if (cgattr_reason(app->cgattr)[0])
		log_warning("%s; per-host figures go on", cgattr_reason(app->cgattr));
	else
		log_info("Per-cgroup TopDown: tracking %s cgroups matching [cgroups] track (at most %u, level %u), "
			 "on %s", root, p.cap, p.level, cgattr_trigger(app->cgattr));
	return 0;
}

int app_start_collection(struct app *app)
{
	int r = app_make_collector(app);

	if (r < 0)
		return r;
	r = snapring_new(collector_capacity(app->collector),
			 app->cfg.cgroups_enabled ? (unsigned)app->cfg.cgroups_max + 1 : 0, &app->ring);
	if (r < 0)
		return log_error_errno(r, "Failed to allocate snapshots: %m");
	r = collector_start(app->collector);
	if (r < 0)
		return r;
	while (app_learn(app))
		;
	return app_start_cgroups(app);
}

/* The per-cgroup part of an interval: nothing when not enabled (the
 * buffer may hold an older interval's). */
static void app_cgroups(struct app *app, uint64_t now, struct snapshot *snap, bool read)
{
	if (!app->cgattr) {
		memset(&snap->cg, 0, sizeof(snap->cg));
		snap->n_cgroups = 0;
	} else if (read) {
		cgattr_collect(app->cgattr, now, snap);
	} else {
		cgattr_fill(app->cgattr, snap);
	}
}

/* A history sample: the newest interval published, its packages and host
 * recorded, on the history worker (nice 5). */
static void history_job(void *arg)
{
	struct app *app = arg;
	const struct snapshot *snap = snapring_acquire(app->ring);

	if (snap) {
		history_record(app->history, snap);
		snapring_release(app->ring, snap);
	}
	atomic_store(&app->history_queued, false);
}

static void app_record(struct app *app, const struct snapshot *snap)
{
	if (!app->history_jobs || snap->seq == 0 || atomic_load(&app->history_queued) ||
	    !history_due(app->history, snap->timestamp))
		return;
	atomic_store(&app->history_queued, true);
	if (jobs_submit(app->history_jobs, history_job, app) < 0)
		atomic_store(&app->history_queued, false);
}

/* One interval: the reads go straight into a free buffer of the ring. */
void app_collect(struct app *app, uint64_t now)
{
	struct snapshot *snap = snapring_begin(app->ring);

	collector_collect(app->collector, now, snap);
	app_cgroups(app, now, snap, true);
	snap->intervals_missed = app->intervals_missed;
	snap->config_ok = app->reload_error[0] == '\0';
	snap->config_loaded_at = app->config_loaded_at;
	if (snapring_publish(app->ring, snap))
		app_record(app, snap);
}

/* The same figures again with the state in force (start, a reload). */
static void app_publish(struct app *app)
{
	struct snapshot *snap = snapring_begin(app->ring);

	collector_fill(app->collector, snap);
	app_cgroups(app, 0, snap, false);
	snap->intervals_missed = app->intervals_missed;
	snap->config_ok = app->reload_error[0] == '\0';
	snap->config_loaded_at = app->config_loaded_at;
	snapring_publish(app->ring, snap);
}

static int app_listen(struct app *app)
{
	const size_t max = sizeof(app->listen_fds) / sizeof(app->listen_fds[0]);
	char err[512];
	int n;

	n = sd_glue_listen_fds(app->listen_fds, max);
	if (n < 0)
		return log_error_errno(n, "Failed to use the sockets passed by systemd: %m");
	if (n > 0) {
		app->n_listen_fds = (size_t)n;
		app->socket_activated = true;
		log_info("Using %d socket%s passed by systemd; [http] listen is ignored", n,
			 n == 1 ? "" : "s");
		return 0;
	}
	for (size_t i = 0; i < app->cfg.n_listen; i++) {
		int r = listen_open(&app->cfg.listen[i], app->listen_fds, max, &app->n_listen_fds,
				    err, sizeof(err));

		if (r < 0) {
			log_error("%s", err);
			return r;
		}
	}
	return 0;
}

/* HTTP connections per listening socket: [http] max_connections, or
 * fewer when RLIMIT_NOFILE leaves less room beside the perf groups. */
static unsigned http_connections(const struct app *app, unsigned want)
{
	uint64_t used = (uint64_t)collector_fds(app->collector) + FD_INTERNAL, need;
	struct rlimit rl;
	unsigned fit;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return want;
	fit = http_connections_fit(rl.rlim_cur, used, app->n_listen_fds, want, &need);
	if (fit < want)
		log_warning("RLIMIT_NOFILE is %llu: the perf groups hold %u descriptors, which leaves room for %u "
			    "HTTP connections per listening socket, not the %u of [http] max_connections; raise "
			    "LimitNOFILE= (or ulimit -n) to %llu",
			    (unsigned long long)rl.rlim_cur, collector_fds(app->collector), fit, want,
			    (unsigned long long)need);
	return fit;
}

/* Hands @tls and @auth over to the HTTP server with the parameters. */
static void http_params_of(struct app *app, const struct config *cfg, struct tls_material *tls,
			   struct auth_db *auth, struct http_params *params)
{
	*params = (struct http_params){
		.tls = tls,
		.auth = auth,
		.stats = &app->http_stats,
		.ring = app->ring,
		.history = app->history,
		.hostname = app->hostname,
		.fds = app->listen_fds,
		.n_fds = app->n_listen_fds,
		.granularity = cfg->granularity,
		.ratios = cfg->ratios,
		.max_connections = http_connections(app, (unsigned)cfg->max_connections),
		.timeout_s = (unsigned)((cfg->timeout_ns + NSEC_PER_SEC - 1) / NSEC_PER_SEC),
	};
}

static int app_start_http(struct app *app)
{
	struct http_params params;
	int r;

	app->https = app->tls != NULL;
	http_params_of(app, &app->cfg, app->tls, app->auth, &params);
	app->tls = NULL;
	app->auth = NULL;
	app->http_connections = params.max_connections;
	r = http_new(&params, &app->http);
	if (r < 0)
		return log_error_errno(r, "Failed to start the HTTP server: %m");
	for (size_t i = 0; i < app->n_listen_fds; i++) {
		char url[400];

		listen_url(app->listen_fds[i], app->https ? "https" : "http", url, sizeof(url));
		log_info("Listening on %s", url);
	}
	return 0;
}

static void app_free(struct app *app)
{
	http_free(app->http);
	http_retired_wait();
	jobs_free(app->history_jobs);
	history_free(app->history);
	auth_db_free(app->auth);
	tls_material_free(app->tls);
	for (size_t i = 0; i < app->n_listen_fds; i++)
		close(app->listen_fds[i]);
	if (app->signal_fd >= 0)
		close(app->signal_fd);
	if (app->timer_fd >= 0)
		close(app->timer_fd);
	if (app->watchdog_fd >= 0)
		close(app->watchdog_fd);
	if (app->epoll_fd >= 0)
		close(app->epoll_fd);
	snapring_free(app->ring);
	cgattr_free(app->cgattr);
	collector_free(app->collector);
	topo_free(app->topo);
	sysfs_free(app->sysfs);
}

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

/* One line for `systemctl status`. */
static void app_status(const struct app *app, char *buf, size_t len)
{
	unsigned monitored = collector_count(app->collector, CPU_STATE_MONITORED);
	unsigned failed = collector_count(app->collector, CPU_STATE_FAILED);
	unsigned offline = collector_count(app->collector, CPU_STATE_OFFLINE);
	char state[256];

	if (!app->plan.usable)
		str_printf(state, sizeof(state), "TopDown not available: %s", app->plan.reason);
	else if (monitored == 0)
		str_printf(state, sizeof(state), "no CPU monitored (%u failed, %u offline): see the journal",
			   failed, offline);
	else
		str_printf(state, sizeof(state), "monitoring %u CPUs, level %u, model %s%s%s", monitored,
			   app->plan.level, collector_model(app->collector),
			   failed ? ", some CPUs failed" : "", offline ? ", some CPUs offline" : "");
	if (app->reload_error[0])
		str_printf(buf, len, "%s; last reload failed, previous configuration in force: %s", state,
			   app->reload_error);
	else
		str_printf(buf, len, "%s", state);
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

	http_params_of(app, cfg, tls, auth, &params);
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
	char changed[256];
	struct tls_material *tls;
	struct config_diag diag;
	struct auth_db *auth;
	struct config cfg;
	int r;

	sd_glue_reloading();
	log_info("Reloading %s", app->cli->config_path);
	if (load_config(app->cli, &cfg, true, &diag) < 0) {
		str_printf(app->reload_error, sizeof(app->reload_error), "%s",
			   diag.n ? diag.entries[0].text : "cannot read the file");
		goto failed;
	}
	/* Fail closed: TLS or authentication in force goes only on the
	 * operator's word, never because a file came out shorter. */
	if (app->cfg.tls_cert[0] && !cfg.tls_cert[0] && !cfg.allow_plaintext) {
		str_printf(app->reload_error, sizeof(app->reload_error),
			   "%s turns TLS off; set [http] allow_plaintext = true to mean it",
			   app->cli->config_path);
		log_warning("%s", app->reload_error);
		goto failed;
	}
	if (app->cfg.basic_auth_file[0] && !cfg.basic_auth_file[0] && !cfg.allow_unauthenticated) {
		str_printf(app->reload_error, sizeof(app->reload_error),
			   "%s turns basic authentication off; set [http] allow_unauthenticated = true to mean it",
			   app->cli->config_path);
		log_warning("%s", app->reload_error);
		goto failed;
	}
	if (load_files(&cfg, true, &tls, &auth) < 0) {
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
	app->config_loaded_at = wall_now();
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

static int run_daemon(struct app *app)
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
	app->config_loaded_at = wall_now();
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

int main(int argc, char **argv)
{
	struct app app = { .epoll_fd = -1, .timer_fd = -1, .signal_fd = -1, .watchdog_fd = -1 };
	struct config_diag diag;
	struct config cfg;
	struct cli cli;
	int r;

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

	r = load_config(&cli, &cfg, false, &diag);
	/* Only what serves HTTP needs the TLS and auth files. */
	if (r == 0 && !cli.print_config && !cli.probe && !cli.once && !cli.watch)
		r = load_files(&cfg, false, &app.tls, &app.auth);
	else if (r == -EINVAL && cli.check_config) {
		char err[256];

		/* Every problem in one run: the files the configuration
		 * names are checked even when the rest of it has errors
		 * (unless the TLS keys do not pair, already reported). */
		if (config_validate(&cfg, err, sizeof(err)) == 0)
			load_files(&cfg, false, &app.tls, &app.auth);
	}
	if (cli.check_config) {
		auth_db_free(app.auth);
		tls_material_free(app.tls);
		return r < 0 ? EXIT_CONFIG : EXIT_SUCCESS;
	}
	if (r < 0)
		return EXIT_CONFIG;
	log_set_level(cfg.log_level);
	if (cli.print_config) {
		config_print(&cfg, stdout);
		return EXIT_SUCCESS;
	}

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
	else
		r = run_daemon(&app);
	app_free(&app);
	return r;
}
