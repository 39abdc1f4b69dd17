/* SPDX-License-Identifier: MIT */
/* app: the daemon's lifecycle (app.h): the configuration and the files it
 * names, discovery, the collector, the HTTP server, one interval's
 * collection and publication, teardown.  The only place the subsystems are
 * wired together; loop.c drives it, main.c starts it. */
#include "app.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroups.h"
#include "listen.h"
#include "log.h"
#include "sd.h"
#include "util.h"
#include "webconfig.h"

/* At start the diagnostics go to stderr as FILE:LINE: message; on a
 * reload they go through the log (the journal). */
static void print_diag(const struct config_diag *diag, bool to_log)
{
	for (size_t i = 0; i < diag->n; i++) {
		const struct config_diag_entry *e = &diag->entries[i];
		char clean[sizeof(e->text) * 4];

		str_escape(clean, sizeof(clean), e->text);
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
/* Key @key of [@section] set from @option's @value (NULL or "": not
 * given); its error goes to @diag, its warning to stderr. */
static int override(struct config *cfg, const char *option, const char *section, const char *key,
		    const char *value, bool to_log, struct config_diag *diag)
{
	char err[300], warn[300];

	if (!value || !value[0])
		return 0;
	if (config_set(cfg, section, key, value, err, sizeof(err), warn, sizeof(warn)) < 0) {
		config_diag_add(diag, false, option, 0, "%s", err);
		print_diag(diag, to_log);
		return -EINVAL;
	}
	if (warn[0] && !to_log)
		fprintf(stderr, "topdownd: warning: %s: %s\n", option, warn);
	return 0;
}

int app_load_config(const struct cli *cli, struct config *cfg, bool to_log,
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
	/* The command line's overrides, through the key table as a line of
	 * the file would go (cli_parse() already tried them). */
	if (override(cfg, "--listen", "http", "listen", cli->listen, to_log, diag) < 0 ||
	    override(cfg, "--interval", "collect", "interval", cli->interval, to_log, diag) < 0 ||
	    override(cfg, "--web.config.file", "http", "web_config_file", cli->web_config_file, to_log,
		     diag) < 0)
		return -EINVAL;
	/* Which files go together, the file's and the command line's. */
	if (cli->web_config_file[0]) {
		char err[300];

		if (config_validate(cfg, err, sizeof(err)) < 0) {
			config_diag_add(diag, false, "--web.config.file", 0, "%s", err);
			print_diag(diag, to_log);
			return -EINVAL;
		}
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
/* [http] web_config_file: the TLS files and the users it names. */
static int load_web_config(const char *path, bool to_log, struct tls_material **tls, struct auth_db **auth)
{
	struct config_diag diag = { 0 };
	struct webconfig wc;
	char err[600];
	int r, ra = 0;

	r = webconfig_load(path, &wc, &diag);
	if (r == 0 && wc.cert_file[0]) {
		r = tls_material_load(wc.cert_file, wc.key_file, wc.client_ca_file, tls, err, sizeof(err));
		if (r < 0)
			config_diag_add(&diag, false, path, 0, "%s", err);
		else if (tls_key_exposed(wc.key_file, err, sizeof(err)))
			config_diag_add(&diag, true, path, 0, "%s", err);
	}
	if (wc.users) {
		/* Each user on its line of the file: FILE:LINE is the file's. */
		ra = auth_db_parse(path, wc.users, wc.users_len, auth, &diag);
	}
	print_diag(&diag, to_log);
	webconfig_clear(&wc);
	return r < 0 ? r : ra;
}

int app_load_files(const struct config *cfg, bool to_log, struct tls_material **tls,
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
	if (cfg->web_config_file[0])
		r = load_web_config(cfg->web_config_file, to_log, tls, auth);
	if (r < 0) {
		tls_material_free(*tls);
		auth_db_free(*auth);
		*tls = NULL;
		*auth = NULL;
	}
	return r;
}

/* Where the kernel says whether the NMI watchdog holds a cycles counter. */
#define NMI_WATCHDOG_PATH "/proc/sys/kernel/nmi_watchdog"

/* Descriptors the daemon holds besides perf groups and HTTP connections
 * (stdio, the event loop, listening sockets, libmicrohttpd's and the
 * workers' pipes, the journal, files read on reload), with room to spare. */
#define FD_INTERNAL 64
/* HTTP connections kept per listening socket even when RLIMIT_NOFILE is
 * too low for every CPU: scraping keeps working. */
#define HTTP_MIN_CONNECTIONS 64

double app_wall_now(void)
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
		return log_error_errno(r, "Failed to read the CPU topology under %s/devices/system/cpu: %s",
				       app->cli->sysfs_root, read_file_strerror(r));
	r = pmu_discover(app->sysfs, &app->pmu);
	if (r < 0)
		return log_error_errno(r, "Failed to discover the core PMU: %m");
	budget_probe(&app->pmu, app->topo, app->sysfs, NMI_WATCHDOG_PATH, app->cfg.count_kernel,
		     &app->budget);
	plan_make(&app->pmu, app->topo, &app->cfg, &app->budget, &app->plan);
	if (!cpuset_empty(&app->plan.isolated)) {
		char list[256];

		cpuset_format(&app->plan.isolated, list, sizeof(list));
		log_info("CPUs %s are isolated (isolcpus=, nohz_full=): not read, so that their tenants pay no "
			 "interrupt for it; [collect] cpus listing them reads them", list);
	}
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
		if (pp && budget_learn(&app->budget, &ev, pp->gp_available)) {
			log_warning("%s: %s; making the plan again", app->pmu.core[ev.pmu].name,
				    app->budget.pmu[ev.pmu].learned);
			changed = true;
		} else {
			char why[SNAP_REASON];

			str_printf(why, sizeof(why), "the kernel refuses the smallest group on CPU %d", ev.cpu);
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
			 app->cfg.interval_ns, app->cfg.pmu_sharing);
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
		.sharing = app->cfg.pmu_sharing,
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
	    !history_due(app->history, snapshot_mono_s(snap)))
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
void app_publish(struct app *app)
{
	struct snapshot *snap = snapring_begin(app->ring);

	collector_fill(app->collector, snap);
	app_cgroups(app, 0, snap, false);
	snap->intervals_missed = app->intervals_missed;
	snap->config_ok = app->reload_error[0] == '\0';
	snap->config_loaded_at = app->config_loaded_at;
	snapring_publish(app->ring, snap);
}

int app_listen(struct app *app)
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
void app_http_params(struct app *app, const struct config *cfg, struct tls_material *tls,
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
		.unhealthy_after_s = (double)cfg->unhealthy_after_ns / 1e9,
	};
}

int app_start_http(struct app *app)
{
	struct http_params params;
	int r;

	app->https = app->tls != NULL;
	app_http_params(app, &app->cfg, app->tls, app->auth, &params);
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

/* ---- reloads ---- */

/* The slow half, on the reload worker: nothing here touches what the
 * loop uses (@rl->current is a copy). */
static void reload_load(const struct cli *cli, struct app_reload *rl)
{
	struct config_diag diag;
	char why[128];

	rl->tls = NULL;
	rl->auth = NULL;
	rl->error[0] = '\0';
	rl->r = app_load_config(cli, &rl->cfg, true, &diag);
	if (rl->r < 0) {
		str_printf(rl->error, sizeof(rl->error), "%s",
			   diag.n ? diag.entries[0].text : "cannot read the file");
		return;
	}
	if (config_turns_protection_off(&rl->current, &rl->cfg, why, sizeof(why))) {
		str_printf(rl->error, sizeof(rl->error), "%s %s", cli->config_path, why);
		log_warning("%s", rl->error);
		rl->r = -EPERM;
		return;
	}
	rl->r = app_load_files(&rl->cfg, true, &rl->tls, &rl->auth);
	if (rl->r < 0)
		str_printf(rl->error, sizeof(rl->error), "a file it names is unusable, see the journal");
}

static void reload_job(void *arg)
{
	struct app *app = arg;
	uint64_t one = 1;

	reload_load(app->cli, app->reload);
	/* The hand-over: the loop reads app->reload once this is seen. */
	if (write(app->reload_fd, &one, sizeof(one)) != sizeof(one))
		log_error_errno(-errno, "Failed to hand a reload over: %m");
}

int app_start(struct app *app)
{
	int r;

	/* Sockets first: a taken port fails at once, before opening counters. */
	r = app_listen(app);
	if (r < 0)
		return r;
	if ((r = app_reload_start(app)) < 0 || (r = app_discover(app)) < 0 ||
	    (r = app_start_collection(app)) < 0)
		return r;
	if (!app->plan.usable)
		log_warning("TopDown is not available: %s. Serving topdown_up 0.", app->plan.reason);
	for (unsigned i = 0; i < app->plan.n_pmus; i++)
		if (app->plan.pmu[i].level_note[0])
			log_info("%s", app->plan.pmu[i].level_note);
	r = history_new(app->cfg.history_ns, collector_packages(app->collector), app->plan.cats,
			&app->history);
	if (r < 0)
		return log_error_errno(r, "Failed to allocate the history: %m");
	log_info("History (the live page, ?window=): %g s, %zu KiB",
		 (double)app->cfg.history_ns / 1e9, (history_bytes(app->history) + 1023) / 1024);
	r = jobs_new("topdownd-hist", 1, 2, 5, &app->history_jobs);
	if (r < 0)
		return log_error_errno(r, "Failed to start the history worker: %m");
	app->config_loaded_at = app_wall_now();
	/* Something to serve before the first interval completes. */
	app_publish(app);
	return app_start_http(app);
}

int app_reload_start(struct app *app)
{
	int r;

	app->reload = calloc(1, sizeof(*app->reload));
	if (!app->reload)
		return log_error_errno(-ENOMEM, "Failed to set up reloads: %m");
	app->reload_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (app->reload_fd < 0)
		return log_error_errno(-errno, "Failed to create an eventfd: %m");
	r = jobs_new("topdownd-reload", 1, 1, 0, &app->reload_jobs);
	if (r < 0)
		return log_error_errno(r, "Failed to start the reload worker: %m");
	return 0;
}

void app_reload_request(struct app *app)
{
	int r;

	if (app->reload_busy) {
		if (!app->reload_again)
			log_info("Reload requested while one is read: one more follows it");
		app->reload_again = true;
		return;
	}
	sd_glue_reloading();
	log_info("Reloading %s", app->cli->config_path);
	app->reload->current = app->cfg;
	r = jobs_submit(app->reload_jobs, reload_job, app);
	if (r < 0) {
		log_error_errno(r, "Failed to start a reload: %m");
		return;
	}
	app->reload_busy = true;
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

/* The fast half, on the loop: a good file takes effect at once without
 * touching the listening sockets, and counters carry on; a bad one
 * changes nothing.  True when the interval changed. */
static bool reload_apply(struct app *app, struct app_reload *rl)
{
	struct config *cfg = &rl->cfg;
	char changed[256];
	bool interval;
	int r;

	if (rl->r < 0) {
		str_printf(app->reload_error, sizeof(app->reload_error), "%s", rl->error);
		goto failed;
	}
	if (!app->socket_activated && config_diff(cfg, &app->cfg, "http", "listen", NULL, 0))
		log_warning("[http] listen changed: restart topdownd to listen on the new addresses");
	/* [cgroups] sizes the snapshots and loads the BPF program: a restart
	 * applies it. */
	if (config_diff(cfg, &app->cfg, "cgroups", NULL, changed, sizeof(changed))) {
		log_warning("[cgroups] %s changed: restart topdownd to apply it (the previous [cgroups] "
			    "stays in force)", changed);
		config_copy_section(cfg, &app->cfg, "cgroups");
	}
	/* The server takes the files, whatever it answers. */
	r = reload_http(app, cfg, rl->tls, rl->auth);
	rl->tls = NULL;
	rl->auth = NULL;
	if (r < 0) {
		log_error_errno(r, "Failed to apply the HTTP settings: %m");
		str_printf(app->reload_error, sizeof(app->reload_error), "the HTTP server could not restart");
		goto failed;
	}
	log_set_level(cfg->log_level);
	log_set_format(cfg->log_format);
	interval = cfg->interval_ns != app->cfg.interval_ns;
	history_set_length(app->history, cfg->history_ns);
	app->cfg = *cfg;
	plan_make(&app->pmu, app->topo, &app->cfg, &app->budget, &app->plan);
	collector_reload(app->collector, &app->plan, cfg->count_kernel, cfg->count_guest, cfg->interval_ns,
			 cfg->pmu_sharing);
	while (app_learn(app))
		;
	/* The state in force first, then published: /metrics says at once
	 * that this reload worked, whatever the interval. */
	app->reload_error[0] = '\0';
	app->config_loaded_at = app_wall_now();
	app_publish(app);
	log_info("Configuration reloaded");
	return interval;
failed:
	tls_material_free(rl->tls);
	auth_db_free(rl->auth);
	rl->tls = NULL;
	rl->auth = NULL;
	log_error("Configuration not reloaded: the previous one stays in force");
	app_publish(app); /* topdown_config_last_reload_successful 0, now */
	return false;
}

bool app_reload_finish(struct app *app)
{
	bool interval = reload_apply(app, app->reload);

	app->reload_busy = false;
	return interval;
}

void app_reload_coalesced(struct app *app)
{
	if (!app->reload_again)
		return;
	app->reload_again = false;
	app_reload_request(app);
}

void app_free(struct app *app)
{
	http_free(app->http);
	http_retired_wait();
	jobs_free(app->history_jobs);
	/* A reload being read finishes first (it reads regular files only). */
	jobs_free(app->reload_jobs);
	if (app->reload) {
		tls_material_free(app->reload->tls);
		auth_db_free(app->reload->auth);
		free(app->reload);
	}
	if (app->reload_fd >= 0)
		close(app->reload_fd);
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


/* One line for `systemctl status`. */
void app_status(const struct app *app, char *buf, size_t len)
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
	else {
		unsigned depth = 0;

		for (unsigned i = 0; i < app->plan.n_pmus; i++)
			if (app->plan.pmu[i].depth > depth)
				depth = app->plan.pmu[i].depth;
		/* Below level 2, the deepest level of the nodes counted. */
		str_printf(state, sizeof(state), "monitoring %u CPUs, level %u, model %s%s%s", monitored,
			   depth ? depth : app->plan.level, collector_model(app->collector),
			   failed ? ", some CPUs failed" : "", offline ? ", some CPUs offline" : "");
	}
	if (app->reload_error[0])
		str_printf(buf, len, "%s; last reload failed, previous configuration in force: %s", state,
			   app->reload_error);
	else
		str_printf(buf, len, "%s", state);
}
