/* SPDX-License-Identifier: MIT */
/* testlib.h: helpers shared by the fake PMU's test programs (test_*.c):
 * opening events the way the daemon does, parsing read() records, the
 * scenario truth (read back from FAKEPMU_SCENARIO with jansson), an
 * independent implementation of the PERF_METRICS quantisation, the fake
 * clock file and running tests/fixtures/set-online.
 *
 * Each test program runs the one cmocka test named by argv[1] (or all), so
 * tests/integration/00-fakepmu.t can give every case its own process,
 * fixture and scenario. */
#ifndef FAKEPMU_TESTLIB_H
#define FAKEPMU_TESTLIB_H

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <linux/perf_event.h>

#define SLOTS		0x0400ULL
#define METRIC(m)	(0x8000ULL + ((uint64_t)(m) << 8))
/* The refinement events on the Sapphire Rapids fixture the tests use:
 * INT_MISC.UOP_DROPPING (EventCode 0xad, UMask 0x10) and INT_MISC.CLEARS_COUNT
 * (INT_MISC.RECOVERY_CYCLES, 0xad/0x01, with CounterMask 1 and EdgeDetect),
 * reference/perf-tables/x86/sapphirerapids/pipeline.json.  Ice Lake's
 * INT_MISC is event 0x0d (x86/icelakex/pipeline.json): on Sapphire Rapids
 * that encoding is another event, and counts nothing here. */
#define UOP_DROPPING	0x10adULL
#define RECOVERY_CYCLES	(0x01adULL | (1ULL << 18) | (1ULL << 24))	/* edge, cmask=1 */
#define ICL_UOP_DROPPING 0x100dULL
#define CYCLES_RAW	0x003cULL
#define F_EDGE		(1ULL << 18)
#define F_ANY		(1ULL << 21)
#define F_INV		(1ULL << 23)
#define F_CMASK1	(1ULL << 24)
#define RF_ALL		(PERF_FORMAT_GROUP | PERF_FORMAT_ID | \
			 PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define MAXEV		32

/* Scenario fraction order, as in the JSON. */
static const char *const t_frac[10] = {
	"retiring", "bad_speculation", "frontend_bound", "backend_bound",
	"heavy_operations", "branch_mispredicts", "fetch_latency", "memory_bound",
	"uop_dropping", "recovery_cycles",
};

static inline void t_attr(struct perf_event_attr *a, uint32_t type, uint64_t config,
			  uint64_t rf)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->read_format = rf;
}

static inline int t_open_attr(struct perf_event_attr *a, int cpu, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, a, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static inline int t_open(uint32_t type, uint64_t config, int cpu, int group_fd)
{
	struct perf_event_attr a;

	t_attr(&a, type, config, RF_ALL);
	return t_open_attr(&a, cpu, group_fd);
}

/* The type number of the fixture's PMU @name. */
static inline uint32_t t_pmu_type(const char *name)
{
	char path[4096], buf[32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/type",
		 getenv("FAKEPMU_SYSFS"), name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	return (uint32_t)strtoul(buf, NULL, 10);
}

/* errno of a failing open (0 if it unexpectedly succeeded; fd is closed). */
static inline int t_open_errno(struct perf_event_attr *a, int cpu, int group_fd)
{
	int fd = t_open_attr(a, cpu, group_fd);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

/* The daemon's group: slots, nmetrics metric events, then (optionally)
 * UOP_DROPPING and RECOVERY_CYCLES.  fds[0] is the leader.  Returns the
 * number of events. */
static inline int t_open_group(int cpu, int nmetrics, int refine, int fds[MAXEV])
{
	int n = 0;

	fds[n++] = t_open(PERF_TYPE_RAW, SLOTS, cpu, -1);
	assert_true(fds[0] >= 0);
	for (int m = 0; m < nmetrics; m++) {
		fds[n] = t_open(PERF_TYPE_RAW, METRIC(m), cpu, fds[0]);
		assert_true(fds[n] >= 0);
		n++;
	}
	if (refine) {
		fds[n] = t_open(PERF_TYPE_RAW, UOP_DROPPING, cpu, fds[0]);
		assert_true(fds[n] >= 0);
		n++;
		fds[n] = t_open(PERF_TYPE_RAW, RECOVERY_CYCLES, cpu, fds[0]);
		assert_true(fds[n] >= 0);
		n++;
	}
	return n;
}

static inline void t_close_all(const int *fds, int n)
{
	for (int i = n - 1; i >= 0; i--)
		assert_int_equal(close(fds[i]), 0);
}

struct gread {
	uint64_t nr, enabled, running;
	uint64_t val[MAXEV], id[MAXEV];
};

/* A PERF_FORMAT_GROUP|ID|ENABLED|RUNNING read, checked for size. */
static inline void t_read_group(int fd, struct gread *g)
{
	uint64_t buf[3 + 2 * MAXEV];
	ssize_t r = read(fd, buf, sizeof(buf));

	assert_true(r >= 24);
	memset(g, 0, sizeof(*g));
	g->nr = buf[0];
	g->enabled = buf[1];
	g->running = buf[2];
	assert_true(g->nr >= 1 && g->nr <= MAXEV);
	assert_int_equal((size_t)r, 8 * (3 + 2 * g->nr));
	for (uint64_t i = 0; i < g->nr; i++) {
		g->val[i] = buf[3 + 2 * i];
		g->id[i] = buf[4 + 2 * i];
	}
}

static inline uint64_t t_id(int fd)
{
	uint64_t id = 0;

	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ID, &id), 0);
	return id;
}

/* Expected PERF_METRICS bytes, written independently of the fake: sort the
 * L1 categories by the fractional part of f*255 (descending, lower index
 * first on ties) and give the missing units to the first ones; L2 bytes
 * round to nearest and never exceed their parent. */
static inline void t_expect_bytes(const double f[8], unsigned bytes[8])
{
	int order[4] = {0, 1, 2, 3};
	double frac[4];
	int total = 0;

	for (int k = 0; k < 4; k++) {
		double x = f[k] * 255.0;

		bytes[k] = (unsigned)x;
		frac[k] = x - (double)bytes[k];
		total += (int)bytes[k];
	}
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			if (frac[order[j]] > frac[order[i]] ||
			    (frac[order[j]] == frac[order[i]] && order[j] < order[i])) {
				int t = order[i];

				order[i] = order[j];
				order[j] = t;
			}
	for (int i = 0; i < 255 - total && i < 4; i++)
		bytes[order[i]]++;
	for (int k = 4; k < 8; k++) {
		unsigned r = (unsigned)lround(f[k] * 255.0);

		bytes[k] = r < bytes[k - 4] ? r : bytes[k - 4];
	}
}

static inline uint64_t t_scaled(uint64_t slots, unsigned byte)
{
	return (uint64_t)((unsigned __int128)slots * byte / 255);
}

/* ---- scenario truth ---- */

struct t_cpu {
	double sps, running;
	int nphases;
	double seconds[8];
	double f[8][10];
};

static inline int t_in_cpulist(const char *list, int cpu)
{
	const char *p = list;

	for (;;) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			return 0;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		if (cpu >= lo && cpu <= hi)
			return 1;
		if (*end != ',')
			return 0;
		p = end + 1;
	}
}

static inline void t_fill(struct t_cpu *c, json_t *o)
{
	json_t *v;

	if ((v = json_object_get(o, "slots_per_second")))
		c->sps = json_number_value(v);
	if ((v = json_object_get(o, "running")))
		c->running = json_number_value(v);
	if ((v = json_object_get(o, "phases"))) {
		json_t *ph;
		size_t i;

		c->nphases = (int)json_array_size(v);
		json_array_foreach(v, i, ph) {
			json_t *s = json_object_get(ph, "seconds");

			c->seconds[i] = s ? json_number_value(s) : 0;
			for (int k = 0; k < 10; k++) {
				json_t *x = json_object_get(ph, t_frac[k]);

				c->f[i][k] = x ? json_number_value(x) : 0;
			}
		}
	}
}

/* The effective scenario of one CPU: "default" overlaid by its key. */
static inline struct t_cpu t_scenario(int cpu)
{
	struct t_cpu c = {.running = 1.0};
	json_error_t err;
	json_t *root = json_load_file(getenv("FAKEPMU_SCENARIO"), 0, &err);
	json_t *cpus, *v;
	const char *key;

	assert_non_null(root);
	cpus = json_object_get(root, "cpus");
	if ((v = json_object_get(cpus, "default")))
		t_fill(&c, v);
	json_object_foreach(cpus, key, v)
		if (strcmp(key, "default") && t_in_cpulist(key, cpu))
			t_fill(&c, v);
	json_decref(root);
	return c;
}

/* The scenario's rate (events per slot) of perf event @name in phase
 * @phase of @cpu: the CPU's own key if it has phases, else "default". */
static inline double t_event_rate(int cpu, int phase, const char *name)
{
	json_error_t err;
	json_t *root = json_load_file(getenv("FAKEPMU_SCENARIO"), 0, &err);
	json_t *cpus, *v, *phases = NULL, *rate;
	const char *key;
	double r;

	assert_non_null(root);
	cpus = json_object_get(root, "cpus");
	if ((v = json_object_get(cpus, "default")))
		phases = json_object_get(v, "phases");
	json_object_foreach(cpus, key, v)
		if (strcmp(key, "default") && t_in_cpulist(key, cpu) && json_object_get(v, "phases"))
			phases = json_object_get(v, "phases");
	rate = json_object_get(json_object_get(json_array_get(phases, (size_t)phase), "events"), name);
	r = rate ? json_number_value(rate) : 0;
	json_decref(root);
	return r;
}

/* ---- multiplexing ---- */

#define T_MUX_NS 4000000ULL	/* perf_event_mux_interval_ms of the fixtures */

/* The README's rule for the scenario's "running" r < 1: an outside user
 * holds every counter in mux slice k when floor((k+1)(1-r)) > floor(k(1-r)).
 * Running time of a group alone on its CPU over [0, t): the free slices. */
static inline uint64_t t_running_ns(double running, double seconds)
{
	uint64_t t = (uint64_t)llround(seconds * 1e9), run = 0;
	double busy = 1.0 - running;

	for (uint64_t k = 0; k * T_MUX_NS < t; k++) {
		uint64_t len = t - k * T_MUX_NS < T_MUX_NS ? t - k * T_MUX_NS : T_MUX_NS;

		if (!(busy > 0 && floor((double)(k + 1) * busy) > floor((double)k * busy)))
			run += len;
	}
	return run;
}

/* ---- time ---- */

static inline double t_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void t_sleep(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Sets the fake clock (FAKEPMU_CLOCK_FILE) to s seconds since load. */
static inline void t_clock(double s)
{
	const char *path = getenv("FAKEPMU_CLOCK_FILE");
	char tmp[4096];
	FILE *f;

	assert_non_null(path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fprintf(f, "%.9f\n", s);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
}

/* Runs tests/fixtures/set-online on the FAKEPMU_SYSFS copy, without
 * LD_PRELOAD so the script does not load the fake. */
static inline void t_set_online(int cpu, int state)
{
	const char *script = getenv("SET_ONLINE");
	char cpus[16], st[4];
	pid_t pid;
	int status;

	assert_non_null(script);
	snprintf(cpus, sizeof(cpus), "%d", cpu);
	snprintf(st, sizeof(st), "%d", state);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		unsetenv("LD_PRELOAD");
		execl(script, script, getenv("FAKEPMU_SYSFS"), cpus, st, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Runs the test named argv[1] (all without an argument). */
static inline int t_main(int argc, char **argv, const struct CMUnitTest *tests, size_t n,
			 const char *group)
{
	if (argc < 2)
		return _cmocka_run_group_tests(group, tests, n, NULL, NULL);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tests[i].name, argv[1]))
			return _cmocka_run_group_tests(group, &tests[i], 1, NULL, NULL);
	fprintf(stderr, "%s: no test named %s\n", argv[0], argv[1]);
	return 2;
}

#define T_MAIN(group, tests) \
	int main(int argc, char **argv) \
	{ \
		return t_main(argc, argv, tests, sizeof(tests) / sizeof(tests[0]), group); \
	}

#endif
