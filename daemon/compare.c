/* SPDX-License-Identifier: MIT */
/* compare: --compare-perf (compare.h). */
#include "compare.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "oneshot.h"
#include "perfexpr.h"
#include "perfstat.h"
#include "util.h"
#include "version.h"

/* How long perf may take beyond its intervals to start (reading its
 * tables, opening every CPU's events) and to stop once asked. */
#define PERF_START_NS (30 * NSEC_PER_SEC)
#define PERF_STOP_MS 5000
#define LINE_MAX_BYTES 8192
#define RECS_MAX 16
#define TAIL_MAX 600
#define PERF_DIGIT 1e-8
/* Events mode: the events of every core PMU's expressions. */
#define EV_MAX (PERFEXPR_EVENTS_MAX * PMU_CORE_MAX)

enum cmp_aggr { CMP_CPU, CMP_CORE, CMP_PKG, CMP_HOST, CMP_AGGRS };

static const struct {
	const char *name;      /* the report's */
	const char *perf_arg;  /* perf stat's, NULL for -a alone */
	enum perfstat_aggr key;
} aggr_info[CMP_AGGRS] = {
	[CMP_CPU] = { "cpu", "-A", PERFSTAT_CPU },
	[CMP_CORE] = { "core", "--per-core", PERFSTAT_CORE },
	[CMP_PKG] = { "package", "--per-socket", PERFSTAT_SOCKET },
	[CMP_HOST] = { "host", NULL, PERFSTAT_HOST },
};

/* One node's comparison in one aggregation. */
struct cmp_node {
	unsigned compared;
	double max_diff;       /* fraction, not percentage points */
	char where[64];        /* "CPU 3, interval 2" */
	/* The departures topdownd documents: perf's value below 0 (0 in
	 * topdownd), perf without a value (0 in topdownd at level 2). */
	unsigned negative, no_value;
	double negative_max;
	/* perf has a value topdownd has none for (a disagreement), and the
	 * reverse (perf printed nothing for it: not compared). */
	unsigned missing, perf_missing;
	/* perf printed the metric at all (a value or none) in this run. */
	bool printed;
};

struct cmp_run {
	bool done;
	/* Not compared, on purpose, with why (a hybrid part's packages and
	 * host: two core types, whose expressions perf keeps apart). */
	const char *skipped;
	unsigned records;      /* perf's records read */
	char error[TAIL_MAX];
	unsigned intervals;
	double perf_run[2], td_run[2]; /* min, max of the entities' running shares */
	struct cmp_node node[TD_CAT_COUNT];
};

struct cmp {
	struct app *app;
	char perf[PATH_MAX];
	char perf_version[128];
	unsigned count;
	double tol; /* fraction */
	td_catset cats;
	const char *metric[TD_CAT_COUNT]; /* perf's name of each category's metric */
	char metrics[1024];               /* -M's argument */
	char model[160];                  /* "Sapphire Rapids (GenuineIntel-6-8F)" */
	const struct plan_pmu *pp;        /* the core PMU compared (the first of a hybrid part's) */
	struct utsname u;
	char avail[2048];                 /* --probe's "Free now", before perf */
	char others[256];                 /* other topdownd processes' pids */
	/* Why nothing (more) was compared, and what to do about it. */
	char reason[TAIL_MAX], fix[256];
	struct cmp_run run[CMP_AGGRS];
	/* One interval's values, per entity and category (NaN: none). */
	unsigned n_ent;
	double *td, *pf, *td_run, *pf_run;
	bool *pf_counted, *pf_seen;
	unsigned bad_lines;
	/* Events mode: perf knows no metric of the model, so it counts the
	 * events perf's expressions read (-A) and the expressions, from
	 * perf's tables, are evaluated here on its counts, summed per core,
	 * package and host as perf aggregates them. */
	bool events_mode;
	unsigned n_px;                         /* core PMUs compared (2 or 3: a hybrid part) */
	const struct plan_pmu *pps[PMU_CORE_MAX];
	struct perfexpr *px[PMU_CORE_MAX];
	unsigned ev_first[PMU_CORE_MAX + 1];   /* px[k]'s events: ev_first[k] .. ev_first[k + 1] */
	unsigned n_ev;
	const struct ua_event *ev[EV_MAX];
	char ev_name[EV_MAX][64];              /* perf's "event" of each */
	bool ev_counted[EV_MAX];               /* perf printed a count above 0 for it */
	char events[8192];                     /* -e's argument */
	char mode_note[TAIL_MAX];              /* why events mode, and from which tables */
	double *cnt, *cnt_run, *sum, *sum_run; /* per CPU (entity) and event */
	int *ent_px;                           /* per entity: its PMU, -1 none, -2 two */
};

/* ---- finding perf ---- */

static bool executable(const char *path)
{
	return access(path, X_OK) == 0;
}

/* @name (a path, or a command searched in PATH) into @out. */
static bool find_perf(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/'))
		return str_copy(out, size, name), executable(name);
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *end = strchrnul(p, ':');

		str_printf(out, size, "%.*s/%s", (int)(end - p), p, name);
		if (end > p && executable(out))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

/* What installs perf here, from /etc/os-release. */
static const char *install_hint(void)
{
	static const struct {
		const char *id, *hint;
	} hints[] = {
		{ "ubuntu", "apt install linux-tools-common linux-tools-$(uname -r)" },
		{ "debian", "apt install linux-perf" },
		{ "fedora", "dnf install perf" },
		{ "rhel", "dnf install perf" },
		{ "centos", "dnf install perf" },
		{ "amzn", "dnf install perf (Amazon Linux 2: yum install perf)" },
		{ "suse", "zypper install perf" },
		{ "arch", "pacman -S perf" },
		{ "alpine", "apk add perf" },
	};
	char line[256], ids[512] = "";
	FILE *f = fopen("/etc/os-release", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "ID=", 3) == 0 || strncmp(line, "ID_LIKE=", 8) == 0)
			str_printf(ids + strlen(ids), sizeof(ids) - strlen(ids), " %s", strchr(line, '=') + 1);
	if (f)
		fclose(f);
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (strstr(ids, hints[i].id))
			return hints[i].hint;
	return "your distribution's perf package (Linux's tools/perf)";
}

/* ---- running perf ---- */

/* perf @argv with its stderr (where perf stat writes; @stdout_too: and
 * its stdout) on a pipe: the child's pid and the pipe's read end in *@fd.
 * The child dies with this process (PR_SET_PDEATHSIG): nothing is left
 * behind. */
static pid_t spawn(char *const argv[], bool stdout_too, int *fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(127);
		if (null < 0 || dup2(null, 0) < 0 || dup2(stdout_too ? p[1] : null, 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

/* Reads what is left of @fd until EOF or @ms, then reaps @pid (killed
 * if it is still there); its exit status, or -1. */
static int reap(pid_t pid, int fd, int ms, char *tail, size_t size)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t until = mono_ns() + (uint64_t)ms * 1000000;
	char buf[4096];
	int st = 0;

	for (;;) {
		uint64_t now = mono_ns();
		ssize_t n;

		if (now >= until || poll(&pfd, 1, (int)((until - now) / 1000000) + 1) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		if (n <= 0)
			break;
		if (tail) {
			/* The last words perf said (an error). */
			buf[n] = '\0';
			if (strlen(tail) + (size_t)n < size)
				strcat(tail, buf);
		}
	}
	close(fd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `perf --version`: "perf version 6.1.192" -> "6.1.192".  0, or
 * -ENOEXEC with what perf said in @why (Debian's /usr/bin/perf is a
 * wrapper that names the package for the running kernel). */
static int perf_version(struct cmp *c, char *why, size_t size)
{
	char *argv[] = { c->perf, (char *)"--version", NULL };
	char out[TAIL_MAX] = "";
	int fd, st;
	pid_t pid = spawn(argv, true, &fd);

	if (pid < 0)
		return str_printf(why, size, "cannot run %s: %s", c->perf, strerror((int)-pid)), (int)pid;
	st = reap(pid, fd, 10000, out, sizeof(out));
	out[strcspn(out, "\n")] = '\0';
	if (st != 0 || strncmp(out, "perf version ", 13) != 0) {
		str_printf(why, size, "%s --version failed (%s%d): %s", c->perf, st < 0 ? "killed, " : "exit ",
			   st, out[0] ? out : "no output");
		return -ENOEXEC;
	}
	str_copy(c->perf_version, sizeof(c->perf_version), out + 13);
	return 0;
}

/* ---- entities ---- */

static unsigned ent_count(const struct snapshot *s, enum cmp_aggr ag)
{
	switch (ag) {
	case CMP_CPU:
		return s->n_cpus;
	case CMP_CORE:
		return s->n_cores;
	case CMP_PKG:
		return s->n_pkgs;
	default:
		return 1;
	}
}

static const struct snap_counts *ent_counts(const struct snapshot *s, enum cmp_aggr ag, unsigned i)
{
	switch (ag) {
	case CMP_CPU:
		return &s->cpus[i].c;
	case CMP_CORE:
		return &s->cores[i].c;
	case CMP_PKG:
		return &s->pkgs[i].c;
	default:
		return &s->host;
	}
}

static void ent_label(const struct snapshot *s, enum cmp_aggr ag, unsigned i, char *buf, size_t size)
{
	switch (ag) {
	case CMP_CPU:
		str_printf(buf, size, "CPU %d", s->cpus[i].cpu);
		break;
	case CMP_CORE:
		str_printf(buf, size, "core S%d-D%d-C%d", s->cores[i].package, s->cores[i].die,
			   s->cores[i].core_id);
		break;
	case CMP_PKG:
		str_printf(buf, size, "package %d", s->pkgs[i].package);
		break;
	default:
		str_copy(buf, size, "the host");
	}
}

/* (package, die, core) against (socket, die, core): the snapshot's
 * order of cores and packages (snapshot.h). */
static int key_cmp(int p, int d, int k, const struct perfstat_rec *r, bool core)
{
	int x[3] = { p, d, k }, y[3] = { r->socket, core ? r->die : 0, core ? r->core : 0 };

	for (unsigned i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/* The entity of perf's record @r, or -1: the snapshot's CPUs are indexed
 * by CPU number, its cores and packages sorted (a search: perf prints
 * thousands of records an interval). */
static int ent_of(const struct snapshot *s, enum cmp_aggr ag, const struct perfstat_rec *r)
{
	unsigned lo = 0, hi;

	switch (ag) {
	case CMP_CPU:
		return r->cpu >= 0 && (unsigned)r->cpu < s->n_cpus && s->cpus[r->cpu].cpu == r->cpu ? r->cpu : -1;
	case CMP_CORE:
	case CMP_PKG:
		hi = ent_count(s, ag);
		while (lo < hi) {
			unsigned m = lo + (hi - lo) / 2;
			int d = ag == CMP_CORE ?
				key_cmp(s->cores[m].package, s->cores[m].die, s->cores[m].core_id, r, true) :
				key_cmp(s->pkgs[m].package, 0, 0, r, false);

			if (d == 0)
				return (int)m;
			if (d < 0)
				lo = m + 1;
			else
				hi = m;
		}
		return -1;
	default:
		return 0;
	}
}

/* ---- one interval ---- */

static void interval_clear(struct cmp *c)
{
	for (unsigned i = 0; i < c->n_ent * TD_CAT_COUNT; i++) {
		c->td[i] = c->pf[i] = NAN;
		c->pf_seen[i] = false;
	}
	for (unsigned e = 0; e < c->n_ent; e++) {
		c->td_run[e] = c->pf_run[e] = NAN;
		c->pf_counted[e] = false;
	}
}

/* topdownd's figures of the interval just collected. */
static void interval_topdownd(struct cmp *c, const struct snapshot *s, enum cmp_aggr ag)
{
	for (unsigned e = 0; e < c->n_ent && e < ent_count(s, ag); e++) {
		const struct snap_counts *k = ent_counts(s, ag, e);
		double slots = k->last[TD_C_SLOTS];

		if (k->last[TD_C_ENABLED] > 0)
			c->td_run[e] = k->last[TD_C_RUNNING] / k->last[TD_C_ENABLED];
		if (!(slots > 0))
			continue;
		for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++)
			if (td_catset_has(c->cats, cat))
				c->td[e * TD_CAT_COUNT + cat] = k->last[TD_C_CAT + cat] / slots;
	}
}

/* Events mode: perf's count of record @r (-A) kept for its CPU. */
static void interval_count(struct cmp *c, const struct snapshot *s, const struct perfstat_rec *r)
{
	int e = r->aggr == PERFSTAT_CPU ? ent_of(s, CMP_CPU, r) : -1;

	if (e < 0 || (unsigned)e >= c->n_ent || !r->has_count)
		return;
	for (unsigned i = 0; i < c->n_ev; i++)
		if (strcmp(r->event, c->ev_name[i]) == 0) {
			c->cnt[(size_t)e * EV_MAX + i] = r->count;
			c->cnt_run[(size_t)e * EV_MAX + i] = r->running;
			c->ev_counted[i] |= r->count > 0;
			return;
		}
}

/* Which of the compared core PMUs CPU @k counts on, or -1. */
static int cpu_px(const struct cmp *c, const struct snapshot *s, unsigned k)
{
	int idx = s->cpus[k].pmu_idx;

	for (unsigned p = 0; idx >= 0 && p < c->n_px; p++)
		if (strcmp(s->pmus[idx].name, c->pps[p]->core->name) == 0)
			return (int)p;
	return -1;
}

/* Events mode: perf's values of aggregation @ag, its expressions on the
 * counts of each entity's CPUs summed (perf's --per-core, --per-socket
 * and -a add the CPUs' counts, then evaluate), each entity with the
 * expressions of its core PMU. */
static void interval_events(struct cmp *c, const struct snapshot *s, enum cmp_aggr ag)
{
	unsigned n = ent_count(s, ag);
	double frac[TD_CAT_COUNT];
	int *which = c->ent_px;

	for (unsigned e = 0; e < n && e < c->n_ent; e++) {
		which[e] = -1;
		for (unsigned i = 0; i < c->n_ev; i++)
			c->sum[(size_t)e * EV_MAX + i] = c->sum_run[(size_t)e * EV_MAX + i] = NAN;
	}
	for (unsigned k = 0; k < s->n_cpus && k < c->n_ent; k++) {
		const struct snap_cpu *cpu = &s->cpus[k];
		int e = ag == CMP_CPU ? (int)k : ag == CMP_CORE ? cpu->core_idx : ag == CMP_PKG ? cpu->pkg_idx : 0;
		int p = cpu_px(c, s, k);

		if (e < 0 || (unsigned)e >= n || p < 0)
			continue;
		/* An entity of two core types has no expression of its own. */
		which[e] = which[e] == -1 || which[e] == p ? p : -2;
		for (unsigned i = c->ev_first[p]; i < c->ev_first[p + 1]; i++) {
			double v = c->cnt[(size_t)k * EV_MAX + i];
			double run = c->cnt_run[(size_t)k * EV_MAX + i];
			double *sum = &c->sum[(size_t)e * EV_MAX + i];
			double *srun = &c->sum_run[(size_t)e * EV_MAX + i];

			if (isnan(v))
				continue;
			*sum = isnan(*sum) ? v : *sum + v;
			if (!(run >= *srun))
				*srun = run;
		}
	}
	for (unsigned e = 0; e < n && e < c->n_ent; e++) {
		int p = which[e];
		const double *sum;
		bool any = false;

		if (p < 0)
			continue;
		sum = &c->sum[(size_t)e * EV_MAX + c->ev_first[p]];
		for (unsigned i = c->ev_first[p]; i < c->ev_first[p + 1]; i++) {
			double run = c->sum_run[(size_t)e * EV_MAX + i];

			any |= c->sum[(size_t)e * EV_MAX + i] > 0;
			if (!isnan(run) && !(run >= c->pf_run[e]))
				c->pf_run[e] = run;
		}
		c->pf_counted[e] = any;
		perfexpr_eval(c->px[p], sum, frac);
		for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++)
			if (td_catset_has(perfexpr_cats(c->px[p]), cat)) {
				c->pf[e * TD_CAT_COUNT + cat] = frac[cat];
				c->pf_seen[e * TD_CAT_COUNT + cat] = true;
				c->run[ag].node[cat].printed = true;
			}
	}
}

/* perf's record @r into the interval's values. */
static void interval_perf(struct cmp *c, const struct snapshot *s, enum cmp_aggr ag, const struct perfstat_rec *r)
{
	int e = r->aggr == aggr_info[ag].key ? ent_of(s, ag, r) : -1;
	char name[PERFSTAT_NAME_MAX];

	if (e < 0 || (unsigned)e >= c->n_ent)
		return;
	if (r->has_count) {
		if (r->count > 0)
			c->pf_counted[e] = true;
		if (!(r->running >= c->pf_run[e]))
			c->pf_run[e] = r->running;
	}
	if (!r->has_metric)
		return;
	perfstat_metric_name(r->unit, name, sizeof(name));
	for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++)
		if (c->metric[cat] && strcmp(c->metric[cat], name) == 0) {
			/* perf's TopDown metrics are percentages (ScaleUnit
			 * 100%, "100percent of slots"). */
			c->pf[(unsigned)e * TD_CAT_COUNT + cat] = r->metric / 100;
			c->pf_seen[(unsigned)e * TD_CAT_COUNT + cat] = true;
			c->run[ag].node[cat].printed = true;
		}
}

static void range_add(double *range, double v)
{
	if (isnan(v))
		return;
	if (isnan(range[0]) || v < range[0])
		range[0] = v;
	if (isnan(range[1]) || v > range[1])
		range[1] = v;
}

/* Interval @k's values compared. */
static void interval_compare(struct cmp *c, const struct snapshot *s, enum cmp_aggr ag, unsigned k)
{
	struct cmp_run *run = &c->run[ag];

	run->intervals++;
	for (unsigned e = 0; e < c->n_ent; e++) {
		bool counted = c->pf_counted[e];

		range_add(run->td_run, c->td_run[e]);
		if (counted)
			range_add(run->perf_run, c->pf_run[e]);
		for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++) {
			struct cmp_node *n = &run->node[cat];
			double t = c->td[e * TD_CAT_COUNT + cat], v = c->pf[e * TD_CAT_COUNT + cat], want, d;
			/* perf's value, or none where its expression divides
			 * by 0: level 1 has no figure then in topdownd either,
			 * level 2 has 0. */
			bool perf_has = counted && c->pf_seen[e * TD_CAT_COUNT + cat] &&
					(!isnan(v) || td_cat[cat].level > 1);

			if (!td_catset_has(c->cats, cat))
				continue;
			/* perf printed nothing for it, or the entity did not
			 * run (no count: perf's 0 / 0). */
			if (!perf_has) {
				n->perf_missing += !isnan(t);
				continue;
			}
			if (isnan(t)) {
				n->missing += !isnan(v);
				continue;
			}
			if (isnan(v)) {
				/* Level 2: no value in perf (its '/' by 0), 0 in
				 * topdownd. */
				n->no_value++;
				want = 0;
			} else if (v < 0) {
				n->negative++;
				if (-v > n->negative_max)
					n->negative_max = -v;
				want = 0;
			} else {
				want = v;
			}
			/* In perf's last printed digit (six decimals of a
			 * percentage): perf's rounding alone makes up to half
			 * of one, and the arithmetic's last bits do not decide
			 * which of equal differences the report names (the
			 * first). */
			d = round(fabs(t - want) / PERF_DIGIT) * PERF_DIGIT;
			if (++n->compared == 1 || d > n->max_diff) {
				char who[48];

				n->max_diff = d;
				ent_label(s, ag, e, who, sizeof(who));
				str_printf(n->where, sizeof(n->where), "%s, interval %u", who, k);
			}
		}
	}
}

/* ---- one aggregation: perf stat beside topdownd's reads ---- */

struct reader {
	char buf[LINE_MAX_BYTES * 8];
	size_t len;
	char tail[TAIL_MAX]; /* perf's last lines that are not records */
};

struct pace {
	struct cmp *c;
	enum cmp_aggr ag;
	const struct snapshot *snap; /* the interval's, held */
	int k;                       /* perf's interval, -1 before its first */
	double at;                   /* its "interval" */
	bool done;
};

static void pace_release(struct pace *p)
{
	if (p->snap)
		snapring_release(p->c->app->ring, p->snap);
	p->snap = NULL;
}

/* perf printed the first line of interval @at: it has read its
 * counters, and topdownd reads its own now; the interval before is
 * complete and compared (the first, which began before perf, and the
 * last, shorter one perf prints when its command ends, are not). */
static void pace_next(struct pace *p, double at)
{
	struct app *app = p->c->app;

	if (p->k >= 1 && p->snap && p->c->events_mode) {
		/* Events mode: one perf run gives every aggregation. */
		for (unsigned ag = 0; ag < CMP_AGGRS; ag++) {
			if (p->c->run[ag].skipped)
				continue;
			interval_clear(p->c);
			interval_topdownd(p->c, p->snap, (enum cmp_aggr)ag);
			interval_events(p->c, p->snap, (enum cmp_aggr)ag);
			interval_compare(p->c, p->snap, (enum cmp_aggr)ag, (unsigned)p->k);
		}
	} else if (p->k >= 1 && p->snap) {
		interval_compare(p->c, p->snap, p->ag, (unsigned)p->k);
	}
	if (p->c->events_mode)
		for (size_t e = 0; e < p->c->n_ent; e++)
			for (unsigned i = 0; i < p->c->n_ev; i++)
				p->c->cnt[e * EV_MAX + i] = p->c->cnt_run[e * EV_MAX + i] = NAN;
	pace_release(p);
	p->k++;
	p->at = at;
	if ((unsigned)p->k > p->c->count) {
		p->done = true;
		return;
	}
	app_collect(app, mono_ns());
	while (app_learn(app))
		;
	interval_clear(p->c);
	p->snap = snapring_acquire(app->ring);
	if (p->snap)
		interval_topdownd(p->c, p->snap, p->ag);
}

static void pace_line(struct pace *p, struct reader *rd, const char *line, size_t len)
{
	struct perfstat_rec recs[RECS_MAX];
	int n = perfstat_parse_line(line, len, recs, RECS_MAX);

	if (n == 0) {
		/* perf's other words: kept for an error. */
		size_t have = strlen(rd->tail);

		if (have + len + 2 >= sizeof(rd->tail))
			have = 0;
		memcpy(rd->tail + have, line, len);
		rd->tail[have + len] = '\n';
		rd->tail[have + len + 1] = '\0';
		return;
	}
	if (n < 0) {
		p->c->bad_lines++;
		return;
	}
	p->c->run[p->ag].records += (unsigned)n;
	for (int i = 0; i < n && !p->done; i++) {
		if (p->k < 0 || recs[i].interval != p->at)
			pace_next(p, recs[i].interval);
		if (!p->done && p->snap && p->c->events_mode)
			interval_count(p->c, p->snap, &recs[i]);
		else if (!p->done && p->snap)
			interval_perf(p->c, p->snap, p->ag, &recs[i]);
	}
}

/* Whole lines of @rd go to pace_line. */
static void pace_lines(struct pace *p, struct reader *rd)
{
	char *start = rd->buf, *nl;

	while (!p->done && (nl = memchr(start, '\n', rd->len - (size_t)(start - rd->buf)))) {
		pace_line(p, rd, start, (size_t)(nl - start));
		start = nl + 1;
	}
	rd->len -= (size_t)(start - rd->buf);
	memmove(rd->buf, start, rd->len);
	if (rd->len == sizeof(rd->buf)) {
		/* A line longer than perf prints: dropped. */
		p->c->bad_lines++;
		rd->len = 0;
	}
}

static void perf_argv(struct cmp *c, enum cmp_aggr ag, char *ms, char *opt, char **argv)
{
	unsigned n = 0;

	str_printf(ms, 32, "%llu", (unsigned long long)(c->app->cfg.interval_ns / 1000000));
	/* No workload: perf counts system-wide until run_aggr stops it
	 * (SIGINT) once the interval that ends those compared begins, or at
	 * its deadline.  A workload as long as the intervals (sleep) ended
	 * perf early on a loaded machine, where its start took some of them
	 * ("perf exited after 3 intervals"). */
	argv[n++] = c->perf;
	argv[n++] = (char *)"stat";
	argv[n++] = (char *)"-j";
	argv[n++] = (char *)"-a";
	if (aggr_info[ag].perf_arg) {
		str_copy(opt, 32, aggr_info[ag].perf_arg);
		argv[n++] = opt;
	}
	argv[n++] = (char *)"-I";
	argv[n++] = ms;
	argv[n++] = (char *)(c->events_mode ? "-e" : "-M");
	argv[n++] = c->events_mode ? c->events : c->metrics;
	argv[n] = NULL;
}

static void run_aggr(struct cmp *c, enum cmp_aggr ag)
{
	struct cmp_run *run = &c->run[ag];
	static struct reader rd;
	struct pace p = { .c = c, .ag = ag, .k = -1 };
	char ms[32], opt[32], *argv[16];
	uint64_t deadline, budget;
	int fd, st;
	pid_t pid;

	run->perf_run[0] = run->perf_run[1] = run->td_run[0] = run->td_run[1] = NAN;
	memset(&rd, 0, sizeof(rd));
	perf_argv(c, ag, ms, opt, argv);
	/* topdownd's interval before perf's first starts now. */
	app_collect(c->app, mono_ns());
	pid = spawn(argv, false, &fd);
	if (pid < 0) {
		str_printf(run->error, sizeof(run->error), "cannot run %s: %s", c->perf, strerror((int)-pid));
		return;
	}
	budget = (c->count + 3) * c->app->cfg.interval_ns + PERF_START_NS;
	deadline = mono_ns() + budget;
	while (!p.done) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = mono_ns();
		ssize_t n;

		if (now >= deadline) {
			str_printf(run->error, sizeof(run->error),
				   "perf began %d of its %u intervals in %.0f s; stopped", p.k + 1, c->count + 2,
				   (double)budget / 1e9);
			break;
		}
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
			continue;
		n = read(fd, rd.buf + rd.len, sizeof(rd.buf) - rd.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		rd.len += (size_t)n;
		pace_lines(&p, &rd);
	}
	pace_release(&p);
	/* perf stat ends on SIGINT as on its command's end. */
	kill(pid, SIGINT);
	st = reap(pid, fd, PERF_STOP_MS, rd.tail, sizeof(rd.tail));
	run->done = p.done;
	if (!p.done && !run->error[0]) {
		char *t = rd.tail, *end;
		unsigned lines = 0;

		/* perf's first three lines ("Error:" and why, on two), as one. */
		while (*t == '\n')
			t++;
		for (end = t; *end && lines < 3; end++)
			if (*end == '\n') {
				lines++;
				*end = lines < 3 && end[1] ? ' ' : '\0';
			}
		t[strcspn(t, "\n")] = '\0';
		str_printf(run->error, sizeof(run->error), "perf %s after %d intervals: %s",
			   st < 0 ? "was killed" : "exited", p.k < 0 ? 0 : p.k,
			   t[0] ? t : "(it said nothing)");
	}
}

/* ---- what is compared ---- */

/* The categories of the plan and perf's metric for each: perf's names
 * from the model's table (ua->metrics).  0, or -ENOTSUP with why. */
static int choose_metrics(struct cmp *c, char *why, size_t size)
{
	const struct plan *plan = &c->app->plan;
	const struct plan_pmu *pp = NULL;

	for (unsigned i = 0; i < plan->n_pmus; i++) {
		if (!plan->pmu[i].ua || !plan->pmu[i].level)
			continue;
		c->pps[c->n_px++] = &plan->pmu[i];
		if (!pp)
			pp = &plan->pmu[i];
	}
	if (pp) {
		char cpuid[64] = "";

		if (pp->core->have_cpuid)
			ua_cpuid_format(&pp->core->cpuid, cpuid, sizeof(cpuid));
		str_printf(c->model, sizeof(c->model), "%s%s%s%s", pp->ua->name, cpuid[0] ? " (" : "", cpuid,
			   cpuid[0] ? ")" : "");
	}
	if (!pp) {
		str_printf(why, size, "no core PMU counts TopDown: %s", plan->reason);
		return -ENOTSUP;
	}
	c->pp = pp;
	for (unsigned k = 0; k < c->n_px; k++)
		for (unsigned m = 0; m < c->pps[k]->ua->n_metrics; m++) {
			const struct ua_metric *um = &c->pps[k]->ua->metrics[m];

			if (!td_catset_has(c->pps[k]->cats, um->cat) || c->metric[um->cat])
				continue;
			c->metric[um->cat] = um->perf_name;
			c->cats |= 1u << um->cat;
			str_printf(c->metrics + strlen(c->metrics), sizeof(c->metrics) - strlen(c->metrics), "%s%s",
				   c->metrics[0] ? "," : "", um->perf_name);
		}
	if (!c->cats) {
		str_printf(why, size, "no perf reference for this model: perf's tables have no TopDown metric for %s, "
			   "so there is nothing of perf's to compare with", c->model);
		return -ENOTSUP;
	}
	return 0;
}

/* Whether perf printed the model's level-1 metrics (a perf whose tables
 * lack the model takes -M's names from elsewhere, or none), naming the
 * ones it did not print in @why. */
static bool perf_knows(const struct cmp *c, char *why, size_t size)
{
	char names[512] = "";
	bool level1 = false;

	for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++) {
		if (!td_catset_has(c->cats, cat))
			continue;
		if (c->run[CMP_CPU].node[cat].printed)
			level1 |= td_cat[cat].level == 1;
		else
			str_printf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? ", " : "",
				   c->metric[cat]);
	}
	if (level1)
		return true;
	str_printf(why, size, "perf %s does not know %s's TopDown metrics (it printed no %s)", c->perf_version,
		   c->model, names);
	return false;
}

/* Other topdownd processes: a daemon counts beside the comparison. */
static void other_topdownds(char *buf, size_t size)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();

	buf[0] = '\0';
	while (d && (de = readdir(d))) {
		char path[300], comm[64] = "";
		int fd;
		ssize_t n;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoi(de->d_name) == self)
			continue;
		str_printf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n > 0 && strncmp(comm, "topdownd\n", 9) == 0 && (size_t)n == 9)
			str_printf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? ", " : "", de->d_name);
	}
	if (d)
		closedir(d);
}

/* Whether --probe's "Free now" text shows another user: fewer
 * general-purpose counters free than there are somewhere ("5 of 8"), or a
 * fixed counter held. */
static bool avail_shared(const char *avail)
{
	for (const char *p = avail; *p; p++) {
		unsigned have, of;

		if ((*p >= '0' && *p <= '9') && (p == avail || p[-1] == ' ') &&
		    sscanf(p, "%u of %u", &have, &of) == 2 && have < of)
			return true;
	}
	return strstr(avail, "held") || strstr(avail, "holds");
}

/* ---- the report ---- */

/* A fraction in percentage points, to perf's own digit (1e-6 %). */
static json_t *pp_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(round(v * 1e8) / 1e6);
}

static json_t *share_json(const double *r)
{
	return json_pack("{s:o,s:o}", "min", isnan(r[0]) ? json_null() : json_real(round(r[0] * 1e4) / 1e4),
			 "max", isnan(r[1]) ? json_null() : json_real(round(r[1] * 1e4) / 1e4));
}

struct verdict {
	unsigned compared, over, missing, failed, unprinted;
	double worst;
	char worst_where[128];
};

static void tally(const struct cmp *c, struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	for (unsigned ag = 0; ag < CMP_AGGRS; ag++) {
		const struct cmp_run *run = &c->run[ag];

		if (run->skipped)
			continue;
		v->failed += !run->done;
		for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++) {
			const struct cmp_node *n = &run->node[cat];

			if (!td_catset_has(c->cats, cat))
				continue;
			v->unprinted += run->done && !n->printed;
			v->compared += n->compared;
			v->missing += n->missing;
			if (n->compared && n->max_diff > c->tol)
				v->over++;
			if (n->compared && (!v->worst_where[0] || n->max_diff > v->worst)) {
				v->worst = n->max_diff;
				str_printf(v->worst_where, sizeof(v->worst_where), "%s, %s", td_cat[cat].name, n->where);
			}
		}
	}
}

static const char *verdict_word(const struct verdict *v)
{
	if (v->failed || v->unprinted || !v->compared)
		return "not compared";
	return v->over || v->missing ? "differ" : "agree";
}

static json_t *report_json(const struct cmp *c, const struct verdict *v)
{
	const struct utsname *u = &c->u;
	const char *others = c->others, *avail = c->avail;
	json_t *doc = json_object(), *aggrs = json_array();

	json_object_set_new(doc, "topdownd", json_string(topdownd_version));
	json_object_set_new(doc, "perf", json_pack("{s:s,s:s}", "path", c->perf, "version", c->perf_version));
	json_object_set_new(doc, "kernel", json_pack("{s:s,s:s}", "release", u->release, "machine", u->machine));
	json_object_set_new(doc, "model", json_string(c->model));
	json_object_set_new(doc, "metrics", json_string(c->metrics));
	/* "metrics": perf's own (-M); "events": perf's expressions on its
	 * counts (-e), perf knowing no metric of the model. */
	json_object_set_new(doc, "mode", json_string(c->events_mode ? "events" : "metrics"));
	json_object_set_new(doc, "perf_events", c->events_mode ? json_string(c->events) : json_null());
	json_object_set_new(doc, "mode_note", c->events_mode ? json_string(c->mode_note) : json_null());
	json_object_set_new(doc, "interval_seconds", json_real((double)c->app->cfg.interval_ns / 1e9));
	json_object_set_new(doc, "intervals", json_integer(c->count));
	json_object_set_new(doc, "tolerance_pp", json_real(c->tol * 100));
	json_object_set_new(doc, "counters_free_before", json_string(avail));
	json_object_set_new(doc, "pmu_shared_before", json_boolean(avail_shared(avail)));
	json_object_set_new(doc, "other_topdownd_pids", json_string(others));
	for (unsigned ag = 0; ag < CMP_AGGRS; ag++) {
		const struct cmp_run *run = &c->run[ag];
		json_t *a = json_object(), *nodes = json_array();

		json_object_set_new(a, "aggregation", json_string(aggr_info[ag].name));
		/* Events mode: every aggregation from -A's counts, summed. */
		json_object_set_new(a, "perf_option", json_string(c->events_mode ? "-A" :
								  aggr_info[ag].perf_arg ? aggr_info[ag].perf_arg : "-a"));
		json_object_set_new(a, "intervals_compared", json_integer(run->intervals));
		json_object_set_new(a, "perf_records", json_integer(run->records));
		json_object_set_new(a, "error", run->skipped ? json_string(run->skipped) :
					      run->done ? json_null() : json_string(run->error));
		json_object_set_new(a, "running", json_pack("{s:o,s:o}", "perf", share_json(run->perf_run),
							    "topdownd", share_json(run->td_run)));
		for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++) {
			const struct cmp_node *n = &run->node[cat];

			if (!td_catset_has(c->cats, cat))
				continue;
			json_array_append_new(nodes, json_pack(
				"{s:s,s:s,s:i,s:o,s:s,s:{s:i,s:o},s:{s:i},s:i,s:b,s:i}",
				"node", td_cat[cat].name, "perf_metric", c->metric[cat],
				"compared", (json_int_t)n->compared,
				"max_diff_pp", n->compared ? pp_or_null(n->max_diff) : json_null(),
				"where", n->where,
				"negative", "count", (json_int_t)n->negative, "max_pp",
				n->negative ? pp_or_null(n->negative_max) : json_null(),
				"no_value", "count", (json_int_t)n->no_value,
				"topdownd_without_value", (json_int_t)n->missing,
				"perf_printed", n->printed,
				"perf_without_value", (json_int_t)n->perf_missing));
		}
		json_object_set_new(a, "nodes", nodes);
		json_array_append_new(aggrs, a);
	}
	json_object_set_new(doc, "aggregations", aggrs);
	json_object_set_new(doc, "unreadable_perf_lines", json_integer(c->bad_lines));
	json_object_set_new(doc, "compared", json_integer(v->compared));
	json_object_set_new(doc, "max_diff_pp", v->compared ? pp_or_null(v->worst) : json_null());
	json_object_set_new(doc, "verdict", json_string(c->reason[0] ? "not compared" : verdict_word(v)));
	/* stderr's "not compared: " is the verdict here. */
	json_object_set_new(doc, "reason", !c->reason[0] ? json_null() :
				  json_string(c->reason + (strncmp(c->reason, "not compared: ", 14) ? 0 : 14)));
	json_object_set_new(doc, "fix", c->fix[0] ? json_string(c->fix) : json_null());
	return doc;
}

static void print_json(const struct cmp *c, const struct verdict *v)
{
	json_t *doc = report_json(c, v);
	char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;

	if (text)
		printf("%s\n", text);
	free(text);
	json_decref(doc);
}

static void report_text(const struct cmp *c, const struct verdict *v)
{
	const struct utsname *u = &c->u;
	const char *others = c->others, *avail = c->avail;
	int width = 22;

	printf("%-13s %s\n", "topdownd:", topdownd_version);
	printf("%-13s %s (%s)\n", "perf:", c->perf_version, c->perf);
	printf("%-13s Linux %s (%s)\n", "Kernel:", u->release, u->machine);
	printf("%-13s %s\n", "Model:", c->model);
	printf("%-13s %s\n", "Metrics:", c->metrics);
	if (c->events_mode)
		printf("%-13s %s\n%-13s perf stat -A -e %s\n", "Events mode:", c->mode_note, "", c->events);
	printf("%-13s %u of %.3f s per aggregation, perf stat -j -I beside topdownd's reads\n", "Intervals:",
	       c->count, (double)c->app->cfg.interval_ns / 1e9);
	printf("%-13s %s\n", "Free before:", avail[0] ? avail : "unknown");
	if (avail_shared(avail))
		printf("%-13s another user holds counters (above): its events take turns with both tools';\n"
		       "%-13s the running shares below say how long each counted\n", "Shared:", "");
	if (others[0])
		printf("%-13s a topdownd daemon counts too (pid %s): its groups take turns with both;\n"
		       "%-13s for the cleanest comparison stop it (systemctl stop topdownd) and run again\n",
		       "Others:", others, "");
	printf("%-13s both count at once: where their groups need the same counters (slots and the\n"
	       "%-13s metrics on Intel's fixed counter 3) the kernel rotates them, each scales its\n"
	       "%-13s counts by its own running time, so a workload that changes within an interval\n"
	       "%-13s differs by what each side saw of it\n", "Sharing:", "", "", "");
	/* The names' column as wide as its longest (AMD's level 2). */
	for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++)
		if (td_catset_has(c->cats, cat) && (int)strlen(td_cat[cat].name) + 1 > width)
			width = (int)strlen(td_cat[cat].name) + 1;
	printf("\n%-*s", width, "largest difference, pp");
	for (unsigned ag = 0; ag < CMP_AGGRS; ag++)
		printf(" %9s", aggr_info[ag].name);
	printf("\n");
	for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++) {
		if (!td_catset_has(c->cats, cat))
			continue;
		printf("%-*s", width, td_cat[cat].name);
		for (unsigned ag = 0; ag < CMP_AGGRS; ag++) {
			const struct cmp_node *n = &c->run[ag].node[cat];

			if (n->compared)
				printf(" %9.4f", n->max_diff * 100);
			else
				printf(" %9s", "-");
		}
		printf("\n");
	}
	printf("\n");
	for (unsigned ag = 0; ag < CMP_AGGRS; ag++) {
		const struct cmp_run *run = &c->run[ag];

		if (!run->done || run->skipped) {
			printf("%-8s not compared: %s\n", aggr_info[ag].name, run->skipped ? run->skipped : run->error);
			continue;
		}
		printf("%-8s %u intervals; running: perf %.0f-%.0f %%, topdownd %.0f-%.0f %%\n", aggr_info[ag].name,
		       run->intervals, run->perf_run[0] * 100, run->perf_run[1] * 100, run->td_run[0] * 100,
		       run->td_run[1] * 100);
		for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++) {
			const struct cmp_node *n = &run->node[cat];

			if (n->negative)
				printf("%-8s departure: %s below 0 in perf %u times (down to -%.4f pp), 0 in topdownd\n",
				       "", td_cat[cat].name, n->negative, n->negative_max * 100);
			if (n->no_value)
				printf("%-8s departure: %s without a value in perf %u times (a division by 0), "
				       "0 in topdownd\n", "", td_cat[cat].name, n->no_value);
			if (n->missing)
				printf("%-8s %s: perf has a value topdownd has none for, %u times\n", "",
				       td_cat[cat].name, n->missing);
		}
	}
	if (c->bad_lines)
		printf("%u lines of perf's output could not be read\n", c->bad_lines);
	printf("\nVerdict:      %s", verdict_word(v));
	if (v->compared)
		printf(": %u values, largest difference %.4f pp (%s); tolerance %.4f pp", v->compared, v->worst * 100,
		       v->worst_where, c->tol * 100);
	if (v->missing)
		printf("; %u values perf has and topdownd has not", v->missing);
	printf("\n");
	for (unsigned ag = 0; ag < CMP_AGGRS; ag++)
		for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++)
			if (c->run[ag].done && !c->run[ag].skipped && td_catset_has(c->cats, cat) &&
			    !c->run[ag].node[cat].printed)
				printf("%-13s perf printed no %s (%s)\n", "", c->metric[cat], aggr_info[ag].name);
}

/* The configuration the comparison counts with: levels 1 and 2 of the
 * plan, nothing beside them that takes counters, and counters kept
 * while perf wants them too (the default, yield, would give topdownd's
 * general-purpose counters to perf, the other user here). */
static void compare_config(struct config *cfg)
{
	if (cfg->level > 2)
		cfg->level = 2;
	cfg->smt = SMT_OFF;
	cfg->cgroups_enabled = false;
	cfg->pmu_sharing = SHARING_SHARE;
	cfg->history_ns = 0;
}

/* Nothing (more) can be compared: the reason and its fix on stderr, or
 * with --json the report so far (verdict "not compared", "reason",
 * "fix"), the file a user attaches to an issue. */
static int not_compared(struct cmp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int not_compared(struct cmp *c, const char *fmt, ...)
{
	char text[sizeof(c->reason)];
	va_list ap;

	/* Through a copy: the reason may be one of the arguments. */
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	memcpy(c->reason, text, sizeof(text));
	if (c->app->cli->json) {
		struct verdict v;

		tally(c, &v);
		print_json(c, &v);
	} else {
		fprintf(stderr, "topdownd: %s\n", c->reason);
		if (c->fix[0])
			fprintf(stderr, "topdownd: %s\n", c->fix);
	}
	return EXIT_RUNTIME;
}

/* Events mode: perf's -e of the events each core PMU's expressions read,
 * on that PMU: the kernel's PERF_METRICS events in one group led by slots
 * (the kernel refuses them otherwise: intel_pmu_hw_config), every other
 * event alone, named so that its records are found. */
static int events_argument(struct cmp *c, char *why, size_t size)
{
	char *out = c->events;
	size_t room = sizeof(c->events);

	c->n_ev = 0;
	out[0] = '\0';
	for (unsigned p = 0; p < c->n_px; p++) {
		const char *pmu = c->pps[p]->core->name;
		char group[1024] = "", rest[4096] = "";
		bool slots = false;

		c->ev_first[p] = c->n_ev;
		for (unsigned j = 0; j < perfexpr_n_events(c->px[p]); j++) {
			unsigned i = c->n_ev++;
			const struct ua_event *ev = perfexpr_event(c->px[p], j);
			/* The kernel's PERF_METRICS events (slots and the metrics
			 * on fixed counter 3: no counter in the table); Skymont's
			 * topdown-* are events of its own fixed counters. */
			bool metrics = ev->sysfs && !ev->counter;

			c->ev[i] = ev;
			if (ev->sysfs) {
				str_printf(c->ev_name[i], sizeof(c->ev_name[i]), "%s/%s/", pmu, ev->sysfs);
			} else if (ev->terms) {
				/* perf's name= term: its records say it. */
				str_printf(c->ev_name[i], sizeof(c->ev_name[i]), "topdownd_e%u", i);
				str_printf(rest + strlen(rest), sizeof(rest) - strlen(rest), "%s%s/%s,name=%s/",
					   rest[0] ? "," : "", pmu, ev->terms, c->ev_name[i]);
				continue;
			} else {
				str_printf(why, size, "%s has no encoding perf can be given", ev->name);
				return -EINVAL;
			}
			if (!metrics)
				str_printf(rest + strlen(rest), sizeof(rest) - strlen(rest), "%s%s", rest[0] ? "," : "",
					   c->ev_name[i]);
			else if (strcmp(ev->sysfs, "slots") == 0)
				slots = true;
			else
				str_printf(group + strlen(group), sizeof(group) - strlen(group), ",%s", c->ev_name[i]);
		}
		if (group[0] || slots)
			str_printf(out + strlen(out), room - strlen(out), "%s{%s/slots/%s}%s%s", out[0] ? "," : "", pmu,
				   group, rest[0] ? "," : "", rest);
		else if (rest[0])
			str_printf(out + strlen(out), room - strlen(out), "%s%s", out[0] ? "," : "", rest);
	}
	c->ev_first[c->n_px] = c->n_ev;
	/* str_printf truncates: a list that filled its buffer may be cut. */
	if (strlen(out) + 1 >= room) {
		str_printf(why, size, "perf's -e argument for %u events is longer than %zu bytes", c->n_ev, room - 1);
		return -E2BIG;
	}
	return 0;
}

/* perf has no metrics for the model (@c->reason says so), or it has two
 * core types: perf counts the events perf's expressions read, they are
 * evaluated here on its counts.  0 when every aggregation ran, or the
 * exit status after not_compared(). */
static int events_mode(struct cmp *c)
{
	char why[256], names[512] = "", files[256] = "";
	size_t n = (size_t)c->n_ent * EV_MAX;
	unsigned compared = 0;
	int r = 0;

	c->events_mode = true;
	for (unsigned p = 0; p < c->n_px && r == 0; p++) {
		const struct plan_pmu *pp = c->pps[p];
		const struct pmu_core *core = pp->core;
		struct perfexpr_env env = {
			.smt_on = c->app->budget.smt,
			.core_wide = true, /* perf stat -a: every thread of each core (util/smt.c) */
			.slots = core->slots,
			.have_midr = core->have_cpuid && core->cpuid.arm,
			.midr = core->cpuid.midr,
		};

		r = perfexpr_new(pp->ua, pp->cats & c->cats, &env, &c->px[p], why, sizeof(why));
		if (r < 0) {
			if (strncmp(pp->ua->metrics[0].table, "perf-tables", 11) == 0)
				str_copy(c->fix, sizeof(c->fix), "a newer perf knows it: Linux's tools/perf from a recent "
					 "kernel tree, or your distribution's backports");
			else
				str_printf(c->fix, sizeof(c->fix), "none: topdownd counts %s with formulas perf's tables "
					   "do not have (reference/%s), so no perf can print them", pp->ua->name,
					   pp->ua->metrics[0].table);
		}
		if (!strstr(files, pp->ua->metrics[0].table))
			str_printf(files + strlen(files), sizeof(files) - strlen(files), "%s%s", files[0] ? ", " : "",
				   pp->ua->metrics[0].table);
	}
	if (r == 0 && events_argument(c, why, sizeof(why)) < 0)
		r = -EINVAL;
	if (r < 0)
		return not_compared(c, "not compared: %s; perf's expressions cannot be evaluated on its events here: %s",
				    c->reason, why);
	str_printf(c->mode_note, sizeof(c->mode_note), "%s: perf counted the %u events of perf's expressions "
		   "(%s), evaluated by topdownd on perf's counts", c->reason, c->n_ev, files);
	c->reason[0] = '\0';
	c->cnt = malloc(n * sizeof(double));
	c->cnt_run = malloc(n * sizeof(double));
	c->sum = malloc(n * sizeof(double));
	c->sum_run = malloc(n * sizeof(double));
	c->ent_px = malloc(c->n_ent * sizeof(int));
	if (!c->cnt || !c->cnt_run || !c->sum || !c->sum_run || !c->ent_px)
		return not_compared(c, "out of memory");
	for (size_t i = 0; i < n; i++)
		c->cnt[i] = c->cnt_run[i] = NAN;
	memset(c->run, 0, sizeof(c->run));
	for (unsigned ag = 0; ag < CMP_AGGRS; ag++) {
		c->run[ag].perf_run[0] = c->run[ag].perf_run[1] = c->run[ag].td_run[0] = c->run[ag].td_run[1] = NAN;
		/* A hybrid part's packages and host hold two core types:
		 * perf's expressions are each core type's, topdownd's figures
		 * of them both. */
		if (c->n_px > 1 && (ag == CMP_PKG || ag == CMP_HOST))
			c->run[ag].skipped = "two core types in it: perf's expressions are each core type's own";
	}
	run_aggr(c, CMP_CPU);
	for (unsigned ag = 0; ag < CMP_AGGRS; ag++) {
		c->run[ag].done = c->run[CMP_CPU].done;
		c->run[ag].records = c->run[CMP_CPU].records;
		memcpy(c->run[ag].error, c->run[CMP_CPU].error, sizeof(c->run[ag].error));
	}
	if (!c->run[CMP_CPU].done)
		return not_compared(c, "not compared: %s", c->run[CMP_CPU].error);
	for (unsigned i = 0; i < c->n_ev; i++)
		if (!c->ev_counted[i])
			str_printf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? ", " : "",
				   c->ev[i]->name);
	for (unsigned cat = 0; cat < TD_CAT_COUNT; cat++)
		compared += c->run[CMP_CPU].node[cat].compared;
	/* A PMU that does not count these events (an emulated one) reads 0
	 * or "<not supported>": no expression has a value. */
	if (!compared && names[0])
		return not_compared(c, "not compared: perf counted nothing for %s on this machine (0, \"<not counted>\" "
				    "or \"<not supported>\"): perf's expressions have no value without them", names);
	return 0;
}

/* perf found and asked its version; topdownd's plan with the comparison's
 * configuration, its counters probed, the metrics chosen, collection
 * started.  0, or the exit status after not_compared(). */
static int prepare(struct cmp *c)
{
	struct app *app = c->app;
	const struct cli *cli = app->cli;
	char counted[256];

	if (!find_perf(cli->perf ? cli->perf : "perf", c->perf, sizeof(c->perf))) {
		str_printf(c->fix, sizeof(c->fix), "install it: %s", install_hint());
		return not_compared(c, "%s is not installed (or not executable)", cli->perf ? cli->perf : "perf");
	}
	if (perf_version(c, c->reason, sizeof(c->reason)) < 0) {
		str_printf(c->fix, sizeof(c->fix), "install the perf of the running kernel: %s", install_hint());
		return not_compared(c, "%s", c->reason);
	}
	compare_config(&app->cfg);
	other_topdownds(c->others, sizeof(c->others));
	if (app_discover(app) < 0)
		return not_compared(c, "not compared: discovery failed (see the messages above)");
	if (!app->plan.usable)
		return not_compared(c, "not compared: TopDown not available: %s", app->plan.reason);
	if (oneshot_counters(app, counted, sizeof(counted), c->avail, sizeof(c->avail), c->reason,
			     sizeof(c->reason)) < 0 ||
	    choose_metrics(c, c->reason, sizeof(c->reason)) < 0)
		return not_compared(c, "not compared: %s", c->reason);
	if (app_start_collection(app) < 0 || !collector_up(app->collector))
		return not_compared(c, "not compared: no CPU could be monitored (see the messages above)");
	/* Every possible CPU: more than cores, packages or the host. */
	app_collect(app, mono_ns());
	{
		const struct snapshot *snap = snapring_acquire(app->ring);

		c->n_ent = snap ? snap->n_cpus : 0;
		if (snap)
			snapring_release(app->ring, snap);
	}
	c->td = calloc((size_t)c->n_ent * TD_CAT_COUNT, sizeof(double));
	c->pf = calloc((size_t)c->n_ent * TD_CAT_COUNT, sizeof(double));
	c->td_run = calloc(c->n_ent, sizeof(double));
	c->pf_run = calloc(c->n_ent, sizeof(double));
	c->pf_counted = calloc(c->n_ent, sizeof(bool));
	c->pf_seen = calloc((size_t)c->n_ent * TD_CAT_COUNT, sizeof(bool));
	if (!c->td || !c->pf || !c->td_run || !c->pf_run || !c->pf_counted || !c->pf_seen)
		return not_compared(c, "out of memory");
	return 0;
}

int compare_perf(struct app *app)
{
	const struct cli *cli = app->cli;
	static struct cmp c;
	struct verdict v;
	int r;

	c.app = app;
	c.count = (unsigned)(cli->count ? cli->count : 3);
	c.tol = cli->tolerance_pp / 100;
	uname(&c.u);
	r = prepare(&c);
	if (r == 0 && c.n_px > 1) {
		/* A hybrid part: perf 6.1's -M fails there, and a newer perf's
		 * metrics are each core type's; perf's events and expressions
		 * per core type are the comparison. */
		str_printf(c.reason, sizeof(c.reason), "%s and %s%s%s are %u core types, whose metrics perf keeps apart "
			   "(perf 6.1's -M fails on a hybrid part)", c.pps[0]->core->name, c.pps[1]->core->name,
			   c.n_px > 2 ? " and " : "", c.n_px > 2 ? c.pps[2]->core->name : "", c.n_px);
		r = events_mode(&c);
	}
	for (unsigned ag = 0; r == 0 && !c.events_mode && ag < CMP_AGGRS; ag++) {
		run_aggr(&c, (enum cmp_aggr)ag);
		/* perf that cannot count these metrics at all: said once. */
		if (ag == CMP_CPU && !c.run[ag].done) {
			r = not_compared(&c, "not compared: %s", c.run[ag].error);
		} else if (ag == CMP_CPU && !perf_knows(&c, c.reason, sizeof(c.reason))) {
			/* Every aggregation from one run of perf's events. */
			r = events_mode(&c);
			break;
		}
	}
	if (r == 0) {
		tally(&c, &v);
		if (cli->json)
			print_json(&c, &v);
		else
			report_text(&c, &v);
		r = !strcmp(verdict_word(&v), "agree") ? EXIT_SUCCESS :
		    !strcmp(verdict_word(&v), "differ") ? EXIT_DIFFER : EXIT_RUNTIME;
	}
	fflush(stdout);
	free(c.td);
	free(c.pf);
	free(c.td_run);
	free(c.pf_run);
	free(c.pf_counted);
	free(c.pf_seen);
	free(c.cnt);
	free(c.cnt_run);
	free(c.sum);
	free(c.sum_run);
	free(c.ent_px);
	for (unsigned p = 0; p < c.n_px; p++)
		perfexpr_free(c.px[p]);
	return r;
}
