/* SPDX-License-Identifier: MIT */
/* Unit tests of expo: the exact Prometheus text exposition of a tiny
 * snapshot, the OpenMetrics differences, label sets per granularity, the
 * optional families, escaping and number formats; then both outputs are
 * fed to prometheus_client's strict parsers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "snapfix.h"
#include "testlib.h"

#include "expo.h"

/* 1 package, 1 core, 2 CPUs (SMT siblings), level 2, model perf:
 *   cpu 0 total: slots 12345678901234 = retiring 4e12 + bad 1345678901234
 *                + frontend 3e12 + backend 4e12; L2 1e12/3e12,
 *                345678901234/1e12, 2e12/1e12, 2.5e12/1.5e12;
 *                enabled 1.5e9 ns, running 1.5e9 ns
 *   cpu 1 total: slots 1000, each L1 250, each L2 125; enabled 1.5e9,
 *                running 0.75e9; halted in the last interval
 *   last interval: cpu 0 slots 1000 = 400 + 100 + 200 + 300, L2 100/300,
 *                50/50, 150/50, 200/100: host ratios 0.4 0.1 0.2 0.3 and
 *                0.1 0.3 0.05 0.05 0.15 0.05 0.2 0.1 */
struct fixture {
	struct snapshot snap;
	struct snap_cpu cpus[4];
	struct snap_core cores[2];
	struct snap_pkg pkgs[2];
};

static const struct expo_options CPU_OPTS = {
	.granularity = GRAN_CPU, .ratios = true, .version = "1.2.3", .revision = "abc123",
};

/* The slots of the E-core-only categories (base .. resource_bound). */
#define E_CORE_ONLY_ZEROS 0, 0, 0, 0, 0,

/* CPUs 0 and 1: the two threads of core 0 of package 0. */
static const struct snapfix_cpu two_threads[2] = {
	{ 0, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED },
	{ 1, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED },
};

static struct fixture *tiny(void)
{
	static const double t0[TD_C_COUNT] = {
		12345678901234.0, 1.5e9, 1.5e9, 4e12, 1345678901234.0, 3e12, 4e12,
		1e12, 3e12, 345678901234.0, 1e12, 2e12, 1e12, 2.5e12, 1.5e12,
		E_CORE_ONLY_ZEROS
	};
	static const double l0[TD_C_COUNT] = {
		1000, 1e9, 1e9, 400, 100, 200, 300, 100, 300, 50, 50, 150, 50, 200, 100, E_CORE_ONLY_ZEROS
	};
	static const double t1[TD_C_COUNT] = {
		1000, 1.5e9, 0.75e9, 250, 250, 250, 250, 125, 125, 125, 125, 125, 125, 125, 125, E_CORE_ONLY_ZEROS
	};
	struct fixture *f = calloc(1, sizeof(*f));
	struct snapshot *s;

	assert_non_null(f);
	s = snap_wire(&f->snap, f->cpus, f->cores, f->pkgs);
	s->seq = 3;
	s->intervals_missed = 2;
	s->timestamp = 1700000000.25;
	s->interval_s = 1;
	s->duration_s = 0.0015;
	s->config_ok = true;
	s->config_loaded_at = 1699999990.5;
	snapfix_spr(s);
	s->pmus[0].departures[TMA_DEP_NEGATIVE] = 3;
	s->pmus[0].departures[TMA_DEP_NO_VALUE] = 1;
	snapfix_cpus(s, two_threads, 2);
	s->n_cores = 1;
	s->n_pkgs = 1;
	memcpy(f->cpus[0].c.total, t0, sizeof(t0));
	memcpy(f->cpus[0].c.last, l0, sizeof(l0));
	memcpy(f->cpus[1].c.total, t1, sizeof(t1));
	f->cpus[1].c.last[TD_C_ENABLED] = 1e9;
	/* Both to be measured; CPU 1 had no figures in the last interval. */
	f->cpus[0].c.cpus = f->cpus[1].c.cpus = 1;
	f->cpus[0].c.measured = 1;
	f->cores[0] = (struct snap_core){ .core_id = 0, .package = 0, .die = 0 };
	f->pkgs[0].package = 0;
	s->errors[COLL_ERR_READ] = 2;
	snapshot_aggregate(s);
	return f;
}

static char *render(const struct snapshot *s, const struct expo_options *opt,
		    enum expo_format format)
{
	struct buf b;
	size_t len;
	char *text;

	buf_init(&b);
	assert_int_equal(expo_render(s, opt, format, &b), 0);
	text = buf_steal(&b, &len);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	return text;
}

static void has_line(const char *text, const char *line)
{
	const char *p = text;
	size_t n = strlen(line);

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
		p += n;
	}
	fail_msg("line \"%s\" not found in:\n%s", line, text);
}

static void no_text(const char *text, const char *what)
{
	if (strstr(text, what))
		fail_msg("\"%s\" unexpectedly found in:\n%s", what, text);
}

#define TINY_TEXT \
	"# HELP topdown_up 1 when TopDown counters are being collected on at least one CPU.\n" \
	"# TYPE topdown_up gauge\n" \
	"topdown_up 1\n" \
	"# HELP topdown_pmu_info Each core PMU: its microarchitecture, the TopDown level and model in effect, whether a CPU's figures are its thread's own or its share of its core (per_cpu), and why anything is missing.\n" \
	"# TYPE topdown_pmu_info gauge\n" \
	"topdown_pmu_info{pmu=\"cpu\",pmu_name=\"sapphire_rapids\",uarch=\"sapphirerapids\",level=\"2\",model=\"perf\",per_cpu=\"thread\",reason=\"\"} 1\n" \
	"# HELP topdown_build_info The version and source revision of topdownd.\n" \
	"# TYPE topdown_build_info gauge\n" \
	"topdown_build_info{version=\"1.2.3\",revision=\"abc123\"} 1\n" \
	"# HELP topdown_cpus CPUs by collection state.\n" \
	"# TYPE topdown_cpus gauge\n" \
	"topdown_cpus{state=\"monitored\"} 2\n" \
	"topdown_cpus{state=\"failed\"} 0\n" \
	"topdown_cpus{state=\"offline\"} 0\n" \
	"topdown_cpus{state=\"unsupported\"} 0\n" \
	"topdown_cpus{state=\"held\"} 0\n" \
	"topdown_cpus{state=\"yielded\"} 0\n" \
	"topdown_cpus{state=\"silenced\"} 0\n" \
	"topdown_cpus{state=\"isolated\"} 0\n" \
	"# HELP topdown_cpu_info Topology of each CPU: core, package, die and NUMA node.\n" \
	"# TYPE topdown_cpu_info gauge\n" \
	"topdown_cpu_info{cpu=\"0\",core=\"0\",package=\"0\",die=\"0\",node=\"0\"} 1\n" \
	"topdown_cpu_info{cpu=\"1\",core=\"0\",package=\"0\",die=\"0\",node=\"0\"} 1\n" \
	"# HELP topdown_slots_total Pipeline slots counted (TOPDOWN.SLOTS), scaled to the enabled time when the counters were multiplexed, as perf does.\n" \
	"# TYPE topdown_slots_total counter\n" \
	"topdown_slots_total{cpu=\"0\",core=\"0\",package=\"0\"} 12345678901234\n" \
	"topdown_slots_total{cpu=\"1\",core=\"0\",package=\"0\"} 1000\n" \
	"# HELP topdown_level1_slots_total Pipeline slots attributed to each TopDown level-1 category (perf's value times the slots); they sum to topdown_slots_total where the counts are consistent.\n" \
	"# TYPE topdown_level1_slots_total counter\n" \
	"topdown_level1_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"retiring\"} 4000000000000\n" \
	"topdown_level1_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"bad_speculation\"} 1345678901234\n" \
	"topdown_level1_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"frontend_bound\"} 3000000000000\n" \
	"topdown_level1_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"backend_bound\"} 4000000000000\n" \
	"topdown_level1_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"retiring\"} 250\n" \
	"topdown_level1_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"bad_speculation\"} 250\n" \
	"topdown_level1_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"frontend_bound\"} 250\n" \
	"topdown_level1_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"backend_bound\"} 250\n" \
	"# HELP topdown_level2_slots_total Pipeline slots attributed to each TopDown level-2 category (perf's value times the slots); the children of a parent sum to it where the counts are consistent.\n" \
	"# TYPE topdown_level2_slots_total counter\n" \
	"topdown_level2_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"heavy_operations\",parent=\"retiring\"} 1000000000000\n" \
	"topdown_level2_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"light_operations\",parent=\"retiring\"} 3000000000000\n" \
	"topdown_level2_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"branch_mispredicts\",parent=\"bad_speculation\"} 345678901234\n" \
	"topdown_level2_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"machine_clears\",parent=\"bad_speculation\"} 1000000000000\n" \
	"topdown_level2_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"fetch_latency\",parent=\"frontend_bound\"} 2000000000000\n" \
	"topdown_level2_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"fetch_bandwidth\",parent=\"frontend_bound\"} 1000000000000\n" \
	"topdown_level2_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"memory_bound\",parent=\"backend_bound\"} 2500000000000\n" \
	"topdown_level2_slots_total{cpu=\"0\",core=\"0\",package=\"0\",category=\"core_bound\",parent=\"backend_bound\"} 1500000000000\n" \
	"topdown_level2_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"heavy_operations\",parent=\"retiring\"} 125\n" \
	"topdown_level2_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"light_operations\",parent=\"retiring\"} 125\n" \
	"topdown_level2_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"branch_mispredicts\",parent=\"bad_speculation\"} 125\n" \
	"topdown_level2_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"machine_clears\",parent=\"bad_speculation\"} 125\n" \
	"topdown_level2_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"fetch_latency\",parent=\"frontend_bound\"} 125\n" \
	"topdown_level2_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"fetch_bandwidth\",parent=\"frontend_bound\"} 125\n" \
	"topdown_level2_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"memory_bound\",parent=\"backend_bound\"} 125\n" \
	"topdown_level2_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"core_bound\",parent=\"backend_bound\"} 125\n" \
	"# HELP topdown_enabled_seconds_total Time the counters were enabled.\n" \
	"# TYPE topdown_enabled_seconds_total counter\n" \
	"topdown_enabled_seconds_total{cpu=\"0\",core=\"0\",package=\"0\"} 1.5\n" \
	"topdown_enabled_seconds_total{cpu=\"1\",core=\"0\",package=\"0\"} 1.5\n" \
	"# HELP topdown_running_seconds_total Time the counters were running; less than enabled when multiplexed.\n" \
	"# TYPE topdown_running_seconds_total counter\n" \
	"topdown_running_seconds_total{cpu=\"0\",core=\"0\",package=\"0\"} 1.5\n" \
	"topdown_running_seconds_total{cpu=\"1\",core=\"0\",package=\"0\"} 0.75\n" \
	"# HELP topdown_expected_cpus CPUs topdownd is to measure: selected, on a core PMU with TopDown, not isolated.\n" \
	"# TYPE topdown_expected_cpus gauge\n" \
	"topdown_expected_cpus{cpu=\"0\",core=\"0\",package=\"0\"} 1\n" \
	"topdown_expected_cpus{cpu=\"1\",core=\"0\",package=\"0\"} 1\n" \
	"# HELP topdown_measured_cpus CPUs measured in the last interval (an idle one too: it adds no slots): an entity's figures are over these (fewer than topdown_expected_cpus: another user holds counters, a CPU yielded them, a PMU counts nothing).\n" \
	"# TYPE topdown_measured_cpus gauge\n" \
	"topdown_measured_cpus{cpu=\"0\",core=\"0\",package=\"0\"} 1\n" \
	"topdown_measured_cpus{cpu=\"1\",core=\"0\",package=\"0\"} 0\n" \
	"# HELP topdown_level1_ratio Share of the host's pipeline slots in each level-1 category over the last interval.\n" \
	"# TYPE topdown_level1_ratio gauge\n" \
	"topdown_level1_ratio{category=\"retiring\"} 0.4\n" \
	"topdown_level1_ratio{category=\"bad_speculation\"} 0.1\n" \
	"topdown_level1_ratio{category=\"frontend_bound\"} 0.2\n" \
	"topdown_level1_ratio{category=\"backend_bound\"} 0.3\n" \
	"# HELP topdown_level2_ratio Share of the host's pipeline slots in each level-2 category over the last interval.\n" \
	"# TYPE topdown_level2_ratio gauge\n" \
	"topdown_level2_ratio{category=\"heavy_operations\",parent=\"retiring\"} 0.1\n" \
	"topdown_level2_ratio{category=\"light_operations\",parent=\"retiring\"} 0.3\n" \
	"topdown_level2_ratio{category=\"branch_mispredicts\",parent=\"bad_speculation\"} 0.05\n" \
	"topdown_level2_ratio{category=\"machine_clears\",parent=\"bad_speculation\"} 0.05\n" \
	"topdown_level2_ratio{category=\"fetch_latency\",parent=\"frontend_bound\"} 0.15\n" \
	"topdown_level2_ratio{category=\"fetch_bandwidth\",parent=\"frontend_bound\"} 0.05\n" \
	"topdown_level2_ratio{category=\"memory_bound\",parent=\"backend_bound\"} 0.2\n" \
	"topdown_level2_ratio{category=\"core_bound\",parent=\"backend_bound\"} 0.1\n" \
	"# HELP topdown_collection_errors_total Failures opening or reading the counters, by reason; each is confined to its CPU.\n" \
	"# TYPE topdown_collection_errors_total counter\n" \
	"topdown_collection_errors_total{reason=\"permission\"} 0\n" \
	"topdown_collection_errors_total{reason=\"unsupported\"} 0\n" \
	"topdown_collection_errors_total{reason=\"offline\"} 0\n" \
	"topdown_collection_errors_total{reason=\"fd_limit\"} 0\n" \
	"topdown_collection_errors_total{reason=\"open\"} 0\n" \
	"topdown_collection_errors_total{reason=\"read\"} 2\n" \
	"topdown_collection_errors_total{reason=\"short_read\"} 0\n" \
	"# HELP topdown_departures_total CPU intervals whose figures depart from perf's, by core PMU and departure: negative (a value perf prints below 0 is 0), no_value (a level-2 value perf has none for, a division by 0, is 0).\n" \
	"# TYPE topdown_departures_total counter\n" \
	"topdown_departures_total{pmu=\"cpu\",reason=\"negative\"} 3\n" \
	"topdown_departures_total{pmu=\"cpu\",reason=\"no_value\"} 1\n" \
	"# HELP topdown_collection_interval_seconds The configured collection interval.\n" \
	"# TYPE topdown_collection_interval_seconds gauge\n" \
	"topdown_collection_interval_seconds 1\n" \
	"# HELP topdown_config_last_reload_successful 1 when the last configuration reload (SIGHUP) worked, or none was tried; 0 when the previous configuration stayed in force.\n" \
	"# TYPE topdown_config_last_reload_successful gauge\n" \
	"topdown_config_last_reload_successful 1\n" \
	"# HELP topdown_config_last_reload_success_timestamp_seconds Unix time at which the configuration in force was loaded (start or reload).\n" \
	"# TYPE topdown_config_last_reload_success_timestamp_seconds gauge\n" \
	"topdown_config_last_reload_success_timestamp_seconds 1699999990.5\n" \
	"# HELP topdown_collections_total Intervals collected since the daemon started.\n" \
	"# TYPE topdown_collections_total counter\n" \
	"topdown_collections_total 3\n" \
	"# HELP topdown_intervals_missed_total Timer expirations the collection came too late for (the next interval then covered both): the collection falling behind.\n" \
	"# TYPE topdown_intervals_missed_total counter\n" \
	"topdown_intervals_missed_total 2\n" \
	"# HELP topdown_collection_duration_seconds Time the last interval's reads and computations took.\n" \
	"# TYPE topdown_collection_duration_seconds gauge\n" \
	"topdown_collection_duration_seconds 0.0015\n" \
	"# HELP topdown_last_collection_timestamp_seconds Unix time at which the last interval was collected.\n" \
	"# TYPE topdown_last_collection_timestamp_seconds gauge\n" \
	"topdown_last_collection_timestamp_seconds 1700000000.25\n"

static void test_text_exact(void **state)
{
	struct fixture *f = tiny();
	char *text = render(&f->snap, &CPU_OPTS, EXPO_TEXT);

	(void)state;
	if (strcmp(text, TINY_TEXT) != 0) {
		const char *a = text, *b = TINY_TEXT;

		while (*a && *a == *b)
			a++, b++;
		fail_msg("output differs at byte %zu:\n--- got:\n%.200s\n--- expected:\n%.200s",
			 (size_t)(a - text), a, b);
	}
	free(text);
	free(f);
}

/* OpenMetrics: counter families are named without _total in HELP/TYPE,
 * samples keep it, and "# EOF" is the last line.  Otherwise identical. */
static void test_openmetrics(void **state)
{
	struct fixture *f = tiny();
	char *om = render(&f->snap, &CPU_OPTS, EXPO_OPENMETRICS);
	const char *eof;

	(void)state;
	has_line(om, "# HELP topdown_slots Pipeline slots counted (TOPDOWN.SLOTS), scaled to the enabled time when the counters were multiplexed, as perf does.");
	has_line(om, "# TYPE topdown_slots counter");
	has_line(om, "topdown_slots_total{cpu=\"0\",core=\"0\",package=\"0\"} 12345678901234");
	has_line(om, "# TYPE topdown_level1_slots counter");
	has_line(om, "# TYPE topdown_level2_slots counter");
	has_line(om, "# TYPE topdown_enabled_seconds counter");
	has_line(om, "# TYPE topdown_running_seconds counter");
	has_line(om, "# TYPE topdown_collection_errors counter");
	has_line(om, "topdown_collection_errors_total{reason=\"read\"} 2");
	has_line(om, "# TYPE topdown_level1_ratio gauge");
	has_line(om, "# TYPE topdown_up gauge");
	no_text(om, "# TYPE topdown_slots_total");
	no_text(om, "# HELP topdown_slots_total");
	no_text(om, "_total counter");
	eof = strstr(om, "# EOF\n");
	assert_non_null(eof);
	assert_string_equal(eof, "# EOF\n"); /* the last line, once */
	/* The same samples and gauges as the text format, line for line, once
	 * the family names and # EOF are put back. */
	{
		char *text = render(&f->snap, &CPU_OPTS, EXPO_TEXT);
		char *line, *save = NULL;
		unsigned n_om = 0, n_text = 0;

		for (line = strtok_r(om, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			n_om++;
			if (strncmp(line, "# ", 2) != 0)
				has_line(text, line);
		}
		for (const char *p = text; *p; p++)
			n_text += *p == '\n';
		assert_int_equal(n_om, n_text + 1);
		free(text);
	}
	free(om);
	free(f);
}

static void test_text_has_no_eof(void **state)
{
	struct fixture *f = tiny();
	char *text = render(&f->snap, &CPU_OPTS, EXPO_TEXT);

	(void)state;
	no_text(text, "# EOF");
	free(text);
	free(f);
}

static void test_granularities(void **state)
{
	struct fixture *f = tiny();
	struct expo_options opt = CPU_OPTS;
	char *t;

	(void)state;
	opt.granularity = GRAN_CORE;
	t = render(&f->snap, &opt, EXPO_TEXT);
	/* core 0 = cpus 0 + 1: 12345678901234 + 1000 slots. */
	has_line(t, "topdown_slots_total{core=\"0\",package=\"0\"} 12345678902234");
	has_line(t, "topdown_level1_slots_total{core=\"0\",package=\"0\",category=\"retiring\"} 4000000000250");
	has_line(t, "topdown_level2_slots_total{core=\"0\",package=\"0\",category=\"core_bound\",parent=\"backend_bound\"} 1500000000125");
	has_line(t, "topdown_enabled_seconds_total{core=\"0\",package=\"0\"} 3");
	has_line(t, "topdown_running_seconds_total{core=\"0\",package=\"0\"} 2.25");
	/* The core's figures are over one of its two CPUs. */
	has_line(t, "topdown_expected_cpus{core=\"0\",package=\"0\"} 2");
	has_line(t, "topdown_measured_cpus{core=\"0\",package=\"0\"} 1");
	no_text(t, "_total{cpu=");
	/* Topology stays per CPU. */
	has_line(t, "topdown_cpu_info{cpu=\"1\",core=\"0\",package=\"0\",die=\"0\",node=\"0\"} 1");
	free(t);

	opt.granularity = GRAN_PACKAGE;
	t = render(&f->snap, &opt, EXPO_TEXT);
	has_line(t, "topdown_slots_total{package=\"0\"} 12345678902234");
	has_line(t, "topdown_level1_slots_total{package=\"0\",category=\"bad_speculation\"} 1345678901484");
	no_text(t, "_total{core=");
	no_text(t, "_total{cpu=");
	free(t);

	opt.granularity = GRAN_SYSTEM;
	t = render(&f->snap, &opt, EXPO_TEXT);
	has_line(t, "topdown_slots_total 12345678902234");
	has_line(t, "topdown_level1_slots_total{category=\"frontend_bound\"} 3000000000250");
	has_line(t, "topdown_level2_slots_total{category=\"fetch_latency\",parent=\"frontend_bound\"} 2000000000125");
	has_line(t, "topdown_enabled_seconds_total 3");
	has_line(t, "topdown_running_seconds_total 2.25");
	no_text(t, "_total{package=");
	no_text(t, "_total{core=");
	free(t);

	/* The same in OpenMetrics. */
	t = render(&f->snap, &opt, EXPO_OPENMETRICS);
	has_line(t, "topdown_slots_total 12345678902234");
	has_line(t, "# TYPE topdown_slots counter");
	free(t);
	free(f);
}

/* The SMT split: per core at cpu and core granularity (a CPU has none of
 * its own), per package, for the host; rows never split have no series;
 * none at all while no PMU counts it. */
static void test_smt_family(void **state)
{
	static const double core0[SMT_STATE_COUNT] = { 1.5, 0.25, 0.125, 2 };
	struct fixture *f = tiny();
	struct snapshot *s = &f->snap;
	struct expo_options opt = CPU_OPTS;
	char *t;

	(void)state;
	t = render(s, &opt, EXPO_TEXT);
	no_text(t, "topdown_smt_seconds_total");
	free(t);
	s->smt_on = true;
	memcpy(f->cores[0].smt.total, core0, sizeof(core0));
	f->cores[0].smt.ever = true;
	memcpy(f->pkgs[0].smt.total, core0, sizeof(core0));
	f->pkgs[0].smt.ever = true;
	memcpy(s->smt_host.total, core0, sizeof(core0));
	s->smt_host.ever = true;
	for (int g = GRAN_CPU; g <= GRAN_SYSTEM; g++) {
		opt.granularity = (enum config_granularity)g;
		t = render(s, &opt, EXPO_TEXT);
		has_line(t, "# TYPE topdown_smt_seconds_total counter");
		if (g <= GRAN_CORE) {
			has_line(t, "topdown_smt_seconds_total{core=\"0\",package=\"0\",state=\"neither\"} 1.5");
			has_line(t, "topdown_smt_seconds_total{core=\"0\",package=\"0\",state=\"first_only\"} 0.25");
			has_line(t, "topdown_smt_seconds_total{core=\"0\",package=\"0\",state=\"second_only\"} 0.125");
			has_line(t, "topdown_smt_seconds_total{core=\"0\",package=\"0\",state=\"both\"} 2");
			no_text(t, "topdown_smt_seconds_total{cpu=");
		} else if (g == GRAN_PACKAGE) {
			has_line(t, "topdown_smt_seconds_total{package=\"0\",state=\"both\"} 2");
		} else {
			has_line(t, "topdown_smt_seconds_total{state=\"first_only\"} 0.25");
		}
		free(t);
	}
	/* A core never split: no series (no invented zeros); the family's
	 * header stays while the split is counted. */
	f->cores[0].smt.ever = false;
	opt.granularity = GRAN_CORE;
	t = render(s, &opt, EXPO_TEXT);
	has_line(t, "# TYPE topdown_smt_seconds_total counter");
	no_text(t, "topdown_smt_seconds_total{");
	free(t);
	t = render(s, &CPU_OPTS, EXPO_OPENMETRICS);
	has_line(t, "# TYPE topdown_smt_seconds counter");
	free(t);
	free(f);
}

static void test_ratios_off(void **state)
{
	struct fixture *f = tiny();
	struct expo_options opt = CPU_OPTS;
	char *t;

	(void)state;
	opt.ratios = false;
	t = render(&f->snap, &opt, EXPO_TEXT);
	no_text(t, "topdown_level1_ratio");
	no_text(t, "topdown_level2_ratio");
	has_line(t, "topdown_slots_total{cpu=\"0\",core=\"0\",package=\"0\"} 12345678901234");
	free(t);
	free(f);
}

/* No slots in the last interval anywhere: no ratio families; the
 * counters stay. */
static void test_no_slots_last_interval(void **state)
{
	struct fixture *f = tiny();
	char *t;

	(void)state;
	memset(f->cpus[0].c.last, 0, sizeof(f->cpus[0].c.last));
	snapshot_aggregate(&f->snap);
	t = render(&f->snap, &CPU_OPTS, EXPO_TEXT);
	no_text(t, "topdown_level1_ratio");
	no_text(t, "topdown_level2_ratio");
	no_text(t, "NaN");
	has_line(t, "topdown_slots_total{cpu=\"0\",core=\"0\",package=\"0\"} 12345678901234");
	free(t);
	free(f);
}

static void test_level1(void **state)
{
	struct fixture *f = tiny();
	char *t;

	(void)state;
	f->snap.level = 1;
	f->snap.pmus[0].level = 1;
	f->snap.cats = TD_CATSET_L1;
	t = render(&f->snap, &CPU_OPTS, EXPO_TEXT);
	no_text(t, "topdown_level2");
	has_line(t, "topdown_level1_ratio{category=\"retiring\"} 0.4");
	has_line(t, "topdown_level1_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"backend_bound\"} 250");
	has_line(t, "topdown_pmu_info{pmu=\"cpu\",pmu_name=\"sapphire_rapids\",uarch=\"sapphirerapids\",level=\"1\",model=\"perf\",per_cpu=\"thread\",reason=\"\"} 1");
	free(t);
	free(f);
}

/* No TopDown (a VM): every CPU unsupported, nothing counted. */
static void make_no_topdown(struct fixture *f, const char *reason)
{
	struct snapshot *s = &f->snap;

	s->up = false;
	s->level = 0;
	s->cats = 0;
	s->pmus[0].level = 0;
	s->pmus[0].pmu_name[0] = '\0';
	s->pmus[0].uarch[0] = '\0';
	s->pmus[0].model[0] = '\0';
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	for (unsigned i = 0; i < s->n_cpus; i++) {
		memset(&s->cpus[i].c, 0, sizeof(s->cpus[i].c));
		s->cpus[i].state = CPU_STATE_UNSUPPORTED;
	}
	memset(s->cpus_by_state, 0, sizeof(s->cpus_by_state));
	s->cpus_by_state[CPU_STATE_UNSUPPORTED] = s->n_cpus;
	snapshot_aggregate(s);
}

static void test_no_topdown(void **state)
{
	static const enum config_granularity grans[] = { GRAN_CPU, GRAN_CORE, GRAN_PACKAGE,
							 GRAN_SYSTEM };
	struct fixture *f = tiny();
	struct expo_options opt = CPU_OPTS;

	(void)state;
	make_no_topdown(f, "no TopDown: pre-Ice Lake CPU");
	for (unsigned g = 0; g < 4; g++) {
		for (int fmt = EXPO_TEXT; fmt <= EXPO_OPENMETRICS; fmt++) {
			char *t;

			opt.granularity = grans[g];
			t = render(&f->snap, &opt, (enum expo_format)fmt);
			has_line(t, "topdown_up 0");
			has_line(t, "topdown_pmu_info{pmu=\"cpu\",pmu_name=\"\",uarch=\"\",level=\"0\",model=\"\",per_cpu=\"thread\",reason=\"no TopDown: pre-Ice Lake CPU\"} 1");
			has_line(t, "topdown_cpus{state=\"unsupported\"} 2");
			has_line(t, "topdown_cpus{state=\"monitored\"} 0");
			no_text(t, "topdown_slots");
			no_text(t, "topdown_level1");
			no_text(t, "topdown_level2");
			no_text(t, "topdown_enabled_seconds");
			no_text(t, "topdown_running_seconds");
			has_line(t, "topdown_build_info{version=\"1.2.3\",revision=\"abc123\"} 1");
			free(t);
		}
	}
	free(f);
}

static void test_escaping(void **state)
{
	struct fixture *f = tiny();
	char *t;

	(void)state;
	snprintf(f->snap.reason, sizeof(f->snap.reason), "say \"hi\" \\ then\nnext line");
	t = render(&f->snap, &CPU_OPTS, EXPO_TEXT);
	has_line(t, "topdown_pmu_info{pmu=\"cpu\",pmu_name=\"sapphire_rapids\",uarch=\"sapphirerapids\",level=\"2\",model=\"perf\",per_cpu=\"thread\","
		    "reason=\"say \\\"hi\\\" \\\\ then\\nnext line\"} 1");
	free(t);
	t = render(&f->snap, &CPU_OPTS, EXPO_OPENMETRICS);
	has_line(t, "topdown_pmu_info{pmu=\"cpu\",pmu_name=\"sapphire_rapids\",uarch=\"sapphirerapids\",level=\"2\",model=\"perf\",per_cpu=\"thread\","
		    "reason=\"say \\\"hi\\\" \\\\ then\\nnext line\"} 1");
	free(t);
	/* Escapes at the very start and end of a value. */
	snprintf(f->snap.reason, sizeof(f->snap.reason), "\\x\"");
	t = render(&f->snap, &CPU_OPTS, EXPO_TEXT);
	has_line(t, "topdown_pmu_info{pmu=\"cpu\",pmu_name=\"sapphire_rapids\",uarch=\"sapphirerapids\",level=\"2\",model=\"perf\",per_cpu=\"thread\","
		    "reason=\"\\\\x\\\"\"} 1");
	free(t);
	/* What a tenant's cgroup or sysfs may hold: a byte that is not UTF-8,
	 * a truncated sequence, a control character.  Each becomes the text
	 * \xNN (its backslash escaped), UTF-8 passes as it is. */
	snprintf(f->snap.reason, sizeof(f->snap.reason), "a\xff" "b\xc3" "c\x1b[0m caf\xc3\xa9 \xe2\x82");
	for (int fmt = 0; fmt < 2; fmt++) {
		t = render(&f->snap, &CPU_OPTS, fmt ? EXPO_OPENMETRICS : EXPO_TEXT);
		has_line(t, "topdown_pmu_info{pmu=\"cpu\",pmu_name=\"sapphire_rapids\",uarch=\"sapphirerapids\",level=\"2\",model=\"perf\",per_cpu=\"thread\","
			    "reason=\"a\\\\xffb\\\\xc3c\\\\x1b[0m caf\xc3\xa9 \\\\xe2\\\\x82\"} 1");
		free(t);
	}
	free(f);
}

/* Counters exactly as integers, times in seconds as decimals. */
static void test_numbers(void **state)
{
	struct fixture *f = tiny();
	struct expo_options opt = CPU_OPTS;
	char *t;

	(void)state;
	f->cpus[0].c.total[TD_C_SLOTS] = 12345678901234.0;
	f->cpus[0].c.total[TD_C_ENABLED] = 1.5e9;
	f->cpus[0].c.total[TD_C_RUNNING] = 1234567890123.0; /* 1234.567890123 s */
	f->cpus[1].c.total[TD_C_SLOTS] = 9007199254740993.0; /* 2^53 + 1 -> 2^53 */
	f->cpus[1].c.total[TD_C_CAT + TD_CAT_RETIRING] = 123.75; /* fractional slots */
	f->cpus[1].c.total[TD_C_ENABLED] = 0;
	snapshot_aggregate(&f->snap);
	t = render(&f->snap, &opt, EXPO_TEXT);
	has_line(t, "topdown_slots_total{cpu=\"0\",core=\"0\",package=\"0\"} 12345678901234");
	has_line(t, "topdown_enabled_seconds_total{cpu=\"0\",core=\"0\",package=\"0\"} 1.5");
	has_line(t, "topdown_running_seconds_total{cpu=\"0\",core=\"0\",package=\"0\"} 1234.567890123");
	has_line(t, "topdown_slots_total{cpu=\"1\",core=\"0\",package=\"0\"} 9007199254740992");
	has_line(t, "topdown_level1_slots_total{cpu=\"1\",core=\"0\",package=\"0\",category=\"retiring\"} 123");
	has_line(t, "topdown_enabled_seconds_total{cpu=\"1\",core=\"0\",package=\"0\"} 0");
	no_text(t, "e+");
	free(t);
	free(f);
}

/* Unsupported CPUs are left out of the per-CPU counter families, and a
 * core or package made only of them too. */
static void test_unsupported_cpu(void **state)
{
	struct fixture *f = tiny();
	struct snapshot *s = &f->snap;
	struct expo_options opt = CPU_OPTS;
	char *t;

	(void)state;
	/* cpu 2 (core 1, package 1) unsupported; cpu 3 of unknown topology. */
	s->n_cpus = 4;
	s->n_cores = 2;
	s->n_pkgs = 2;
	f->cpus[2] = (struct snap_cpu){ .cpu = 2, .selected = true, .known = true, .core_id = 1, .package = 1,
					.state = CPU_STATE_UNSUPPORTED, .core_idx = 1, .pkg_idx = 1 };
	f->cpus[3] = (struct snap_cpu){ .cpu = 3, .selected = true, .known = false, .core_id = -1, .package = -1,
					.die = -1, .node = -1, .state = CPU_STATE_FAILED,
					.core_idx = -1, .pkg_idx = -1 };
	f->cores[1] = (struct snap_core){ .core_id = 1, .package = 1 };
	f->pkgs[1].package = 1;
	s->cpus_by_state[CPU_STATE_UNSUPPORTED] = 1;
	s->cpus_by_state[CPU_STATE_FAILED] = 1;
	snapshot_aggregate(s);

	t = render(s, &opt, EXPO_TEXT);
	has_line(t, "topdown_slots_total{cpu=\"1\",core=\"0\",package=\"0\"} 1000");
	no_text(t, "_total{cpu=\"2\"");
	no_text(t, "_total{cpu=\"3\"");
	no_text(t, "core=\"-1\"");
	has_line(t, "topdown_cpus{state=\"unsupported\"} 1");
	free(t);

	opt.granularity = GRAN_CORE;
	t = render(s, &opt, EXPO_TEXT);
	has_line(t, "topdown_slots_total{core=\"0\",package=\"0\"} 12345678902234");
	no_text(t, "_total{core=\"1\"");
	free(t);

	opt.granularity = GRAN_PACKAGE;
	t = render(s, &opt, EXPO_TEXT);
	has_line(t, "topdown_slots_total{package=\"0\"} 12345678902234");
	no_text(t, "_total{package=\"1\"");
	free(t);
	free(f);
}

static void test_seq0(void **state)
{
	struct fixture *f = tiny();
	char *t;

	(void)state;
	f->snap.seq = 0;
	t = render(&f->snap, &CPU_OPTS, EXPO_TEXT);
	no_text(t, "topdown_collection_duration_seconds");
	no_text(t, "topdown_last_collection_timestamp_seconds");
	has_line(t, "topdown_collection_errors_total{reason=\"read\"} 2");
	free(t);
	t = render(&f->snap, &CPU_OPTS, EXPO_OPENMETRICS);
	no_text(t, "topdown_collection_duration_seconds");
	assert_string_equal(t + strlen(t) - 6, "# EOF\n");
	free(t);
	free(f);
}

/* Appends to what the buffer already holds. */
static void test_appends(void **state)
{
	struct fixture *f = tiny();
	struct buf b;

	(void)state;
	buf_init(&b);
	buf_puts(&b, "prefix\n");
	assert_int_equal(expo_render(&f->snap, &CPU_OPTS, EXPO_TEXT, &b), 0);
	assert_int_equal(b.len, strlen("prefix\n") + strlen(TINY_TEXT));
	assert_string_equal(b.data + strlen("prefix\n"), TINY_TEXT);
	buf_free(&b);
	free(f);
}

/* ---- the strict parsers of prometheus_client ---- */

static const char PY_TEXT[] =
	"import sys\n"
	"from prometheus_client.parser import text_string_to_metric_families\n"
	"fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))\n"
	"names = {f.name for f in fams}\n"
	"assert \"topdown_up\" in names, names\n"
	"assert sum(len(f.samples) for f in fams) > 0\n";

static const char PY_OM[] =
	"import sys\n"
	"from prometheus_client.openmetrics.parser import text_string_to_metric_families\n"
	"fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))\n"
	"names = {f.name for f in fams}\n"
	"assert \"topdown_up\" in names, names\n"
	"assert sum(len(f.samples) for f in fams) > 0\n";

static void python_accepts(const char *program, const char *text)
{
	char path[] = "/tmp/test_expo.XXXXXX";
	char cmd[2048];
	int fd = mkstemp(path), status;
	FILE *fp;

	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	/* The programs hold no single quote. */
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c '%s' %s", program, path);
	status = system(cmd);
	unlink(path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s", text);
		fail_msg("the Python parser rejected the text above");
	}
}

static void test_python_parsers(void **state)
{
	static const enum config_granularity grans[] = { GRAN_CPU, GRAN_CORE, GRAN_PACKAGE,
							 GRAN_SYSTEM };
	struct fixture *f = tiny();
	struct expo_options opt = CPU_OPTS;
	char *t;

	(void)state;
	if (access("/usr/bin/python3", X_OK) != 0 ||
	    system("/usr/bin/python3 -c 'import prometheus_client.openmetrics.parser' 2>/dev/null") != 0)
		fail_msg("/usr/bin/python3 with prometheus_client is needed (make deps)");
	/* Escapes, and bytes that are not UTF-8 (the parsers read UTF-8). */
	snprintf(f->snap.reason, sizeof(f->snap.reason), "say \"hi\" \\ then\nnext line \xff\x01");
	for (unsigned g = 0; g < 4; g++) {
		opt.granularity = grans[g];
		t = render(&f->snap, &opt, EXPO_TEXT);
		python_accepts(PY_TEXT, t);
		free(t);
		t = render(&f->snap, &opt, EXPO_OPENMETRICS);
		python_accepts(PY_OM, t);
		free(t);
	}
	/* And without TopDown. */
	make_no_topdown(f, "no TopDown");
	t = render(&f->snap, &CPU_OPTS, EXPO_TEXT);
	python_accepts(PY_TEXT, t);
	free(t);
	t = render(&f->snap, &CPU_OPTS, EXPO_OPENMETRICS);
	python_accepts(PY_OM, t);
	free(t);
	free(f);
}

/* HTTP self metrics: only seen (endpoint, code) pairs, every reason, the
 * password checks only with basic auth; both parsers accept them. */
static void test_http_families(void **state)
{
	struct fixture *f = tiny();
	struct expo_options opt = CPU_OPTS;
	struct expo_http http;
	char *t;

	(void)state;
	memset(&http, 0, sizeof(http));
	http.requests[EXPO_EP_METRICS][expo_http_code_index(200)] = 41;
	http.requests[EXPO_EP_OTHER][expo_http_code_index(431)] = 2;
	http.requests[EXPO_EP_API][expo_http_code_index(299)] = 1;
	http.rejected[EXPO_REJ_TOO_LARGE] = 2;
	http.password_checks = 3;
	opt.http = &http;
	t = render(&f->snap, &opt, EXPO_TEXT);
	assert_non_null(strstr(t, "topdown_http_requests_total{endpoint=\"metrics\",code=\"200\"} 41\n"));
	assert_non_null(strstr(t, "topdown_http_requests_total{endpoint=\"other\",code=\"431\"} 2\n"));
	assert_non_null(strstr(t, "topdown_http_requests_total{endpoint=\"api\",code=\"other\"} 1\n"));
	assert_null(strstr(t, "endpoint=\"index\""));
	assert_non_null(strstr(t, "topdown_http_rejected_total{reason=\"too_large\"} 2\n"));
	assert_non_null(strstr(t, "topdown_http_rejected_total{reason=\"unauthorized\"} 0\n"));
	assert_null(strstr(t, "topdown_http_password_checks_total"));
	python_accepts(PY_TEXT, t);
	free(t);
	http.auth = true;
	t = render(&f->snap, &opt, EXPO_OPENMETRICS);
	assert_non_null(strstr(t, "# TYPE topdown_http_password_checks counter\ntopdown_http_password_checks_total 3\n"));
	python_accepts(PY_OM, t);
	free(t);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_families),
		cmocka_unit_test(test_text_exact),
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_text_has_no_eof),
		cmocka_unit_test(test_granularities),
		cmocka_unit_test(test_smt_family),
		cmocka_unit_test(test_ratios_off),
		cmocka_unit_test(test_no_slots_last_interval),
		cmocka_unit_test(test_level1),
		cmocka_unit_test(test_no_topdown),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_unsupported_cpu),
		cmocka_unit_test(test_seq0),
		cmocka_unit_test(test_appends),
		cmocka_unit_test(test_python_parsers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
