/* SPDX-License-Identifier: MIT */
/* Unit tests of api: query parsing with its exact error texts, and the
 * JSON document built from a hand-made snapshot (keys, values, scopes,
 * levels, the cpu filter, rounding, serialisation). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "snapfix.h"
#include "testlib.h"

#include "api.h"
#include "expo.h"
#include "metric.h"

/* ---- api_parse_query ---- */

static struct api_query *query_ok(const char *scope, const char *level, const char *cpu)
{
	static struct api_query q; /* struct cpuset is 1 KiB */
	char err[256] = "";
	int r = api_parse_query(scope, level, cpu, NULL, &q, err, sizeof(err));

	if (r != 0)
		fail_msg("api_parse_query(%s, %s, %s) = %d: %s", scope ? scope : "NULL",
			 level ? level : "NULL", cpu ? cpu : "NULL", r, err);
	return &q;
}

static void query_error(const char *scope, const char *level, const char *cpu, const char *msg)
{
	struct api_query q;
	char err[256] = "";
	int r = api_parse_query(scope, level, cpu, NULL, &q, err, sizeof(err));

	if (r != -EINVAL)
		fail_msg("api_parse_query(%s, %s, %s) = %d, expected -EINVAL", scope ? scope : "NULL",
			 level ? level : "NULL", cpu ? cpu : "NULL", r);
	assert_string_equal(err, msg);
}

static void test_query_defaults(void **state)
{
	struct api_query *q;

	(void)state;
	q = query_ok(NULL, NULL, NULL);
	assert_int_equal(q->scope, API_SCOPE_HOST);
	/* Everything the daemon computes: the nodes below level 2 too. */
	assert_int_equal(q->level, 6);
	assert_false(q->has_cpus);
	assert_true(cpuset_empty(&q->cpus));
}

static void test_query_valid(void **state)
{
	struct api_query *q;

	(void)state;
	assert_int_equal(query_ok("host", NULL, NULL)->scope, API_SCOPE_HOST);
	assert_int_equal(query_ok("package", NULL, NULL)->scope, API_SCOPE_PACKAGE);
	assert_int_equal(query_ok("core", NULL, NULL)->scope, API_SCOPE_CORE);
	assert_int_equal(query_ok("cpu", NULL, NULL)->scope, API_SCOPE_CPU);
	assert_int_equal(query_ok(NULL, "1", NULL)->level, 1);
	assert_int_equal(query_ok(NULL, "2", NULL)->level, 2);
	assert_int_equal(query_ok(NULL, "3", NULL)->level, 3);
	assert_int_equal(query_ok(NULL, "6", NULL)->level, 6);

	/* cpu= alone implies scope=cpu... */
	q = query_ok(NULL, NULL, "0-3,8");
	assert_int_equal(q->scope, API_SCOPE_CPU);
	assert_true(q->has_cpus);
	assert_int_equal(cpuset_count(&q->cpus), 5);
	assert_true(cpuset_test(&q->cpus, 8));
	assert_false(cpuset_test(&q->cpus, 4));
	assert_int_equal(q->level, 6);
	/* ...but an explicit scope is kept. */
	q = query_ok("package", "1", "2");
	assert_int_equal(q->scope, API_SCOPE_PACKAGE);
	assert_int_equal(q->level, 1);
	assert_true(q->has_cpus);
	assert_int_equal(cpuset_count(&q->cpus), 1);
	assert_true(cpuset_test(&q->cpus, 2));
	q = query_ok("host", NULL, "1");
	assert_int_equal(q->scope, API_SCOPE_HOST);
	assert_true(q->has_cpus);

	/* A previous call's state does not leak into the next. */
	q = query_ok(NULL, NULL, NULL);
	assert_false(q->has_cpus);
	assert_true(cpuset_empty(&q->cpus));
	assert_int_equal(q->scope, API_SCOPE_HOST);
}

static void test_query_errors(void **state)
{
	char long_value[200];
	char want[256];
	char small[16];
	struct api_query q;

	(void)state;
	query_error("hosts", NULL, NULL,
		    "invalid scope \"hosts\": expected host, package, core, cpu or cgroup");
	query_error("Host", NULL, NULL, "invalid scope \"Host\": expected host, package, core, cpu or cgroup");
	query_error("", NULL, NULL, "invalid scope \"\": expected host, package, core, cpu or cgroup");
	query_error("system", "1", "0", "invalid scope \"system\": expected host, package, core, cpu or cgroup");
	query_error(NULL, "7", NULL, "invalid level \"7\": expected 1 to 6");
	query_error(NULL, "0", NULL, "invalid level \"0\": expected 1 to 6");
	query_error(NULL, "", NULL, "invalid level \"\": expected 1 to 6");
	query_error(NULL, "01", NULL, "invalid level \"01\": expected 1 to 6");
	query_error(NULL, "2 ", NULL, "invalid level \"2 \": expected 1 to 6");
	query_error(NULL, "one", NULL, "invalid level \"one\": expected 1 to 6");
	query_error(NULL, NULL, "x", "invalid cpu \"x\": expected a CPU list like 0-3,8");
	query_error(NULL, NULL, "3-1", "invalid cpu \"3-1\": expected a CPU list like 0-3,8");
	query_error(NULL, NULL, "99999", "invalid cpu \"99999\": expected a CPU list like 0-3,8");
	query_error(NULL, NULL, "", "invalid cpu \"\": expected a CPU list like 0-3,8");
	query_error(NULL, NULL, " ", "invalid cpu \" \": expected a CPU list like 0-3,8");
	/* Scope is checked first. */
	query_error("bad", "9", "x", "invalid scope \"bad\": expected host, package, core, cpu or cgroup");

	/* The echoed value is cut at 64 characters. */
	memset(long_value, 'a', 150);
	long_value[150] = '\0';
	snprintf(want, sizeof(want),
		 "invalid scope \"%.64s\": expected host, package, core, cpu or cgroup", long_value);
	query_error(long_value, NULL, NULL, want);
	assert_int_equal(strlen(want), 64 + strlen("invalid scope \"\": expected host, package, core, cpu or cgroup"));

	/* A short error buffer is truncated and terminated. */
	assert_int_equal(api_parse_query(NULL, "7", NULL, NULL, &q, small, sizeof(small)), -EINVAL);
	assert_string_equal(small, "invalid level \"");
}

/* ---- api_document ---- */

/* A hand-built host, level 2, model perf:
 *   cpu 0: package 0, core 0 (cores[0]), die 0, node 0, monitored
 *   cpu 1: package 0, core 0 (cores[0]), monitored, halted in the last interval
 *   cpu 2: package 0, core 1 (cores[1]), monitored, running 50% of the time
 *   cpu 3: package 1, core 0 (cores[2]), die 0, node 1, monitored
 *   cpu 4: topology unknown, unsupported, nothing counted
 *
 * Last interval (slots; retiring, bad, fe, be; heavy/light, brm/clears,
 * fetch lat/bw, mem/core):
 *   cpu 0: 1000; 300 100 200 400; 100/200  60/40  150/50  300/100
 *   cpu 1:    0
 *   cpu 2: 3000; 1000 500 500 1000; 400/600 250/250 100/400 200/800
 *   cpu 3: 2000; 700 100 300 900; 350/350  50/50  200/100 400/500
 * host:    6000; 2000 700 1000 2300; 850/1150 360/340 450/550 900/1400
 *   ratios: retiring 1/3 -> 0.333333, bad 0.11666.. -> 0.116667,
 *           fe 0.16666.. -> 0.166667, be 0.38333.. -> 0.383333
 *           memory 0.15, core 0.23333.. -> 0.233333
 *   bottleneck: backend_bound (0.383) > frontend (0.167) > bad (0.117);
 *           core_bound 1400 > memory_bound 900 -> "backend_bound.core_bound"
 * package 0 = cpus 0-2: 4000; be 1400: mem 500, core 900 -> core_bound
 * package 1 = cpu 3: 2000; be 900 (0.45): mem 400, core 500
 * Totals are the last interval * 1000, cpu 1's total is 5,000,000.
 * Enabled/running in the last interval: 1e9 each, cpu 2 running 0.5e9,
 * cpu 4 0/0: host running ratio = 3.5e9 / 4e9 = 0.875. */
struct fixture {
	struct snapshot snap;
	struct snap_cpu cpus[5];
	struct snap_core cores[3];
	struct snap_pkg pkgs[2];
};

static void set_cpu(struct snap_cpu *c, const double l1[4], const double l2[8], double slots,
		    double enabled, double running)
{
	struct snap_counts *k = &c->c;

	memset(k, 0, sizeof(*k));
	k->last[TD_C_SLOTS] = slots;
	for (int i = 0; i < 4; i++)
		k->last[TD_C_CAT + i] = l1 ? l1[i] : 0;
	for (int i = 0; i < 8; i++)
		k->last[TD_C_CAT + TD_CAT_HEAVY_OPERATIONS + i] = l2 ? l2[i] : 0;
	k->last[TD_C_ENABLED] = enabled;
	k->last[TD_C_RUNNING] = running;
	for (int i = 0; i < TD_C_COUNT; i++)
		k->total[i] = k->last[i] * 1000;
}

static struct fixture *fixture_new(void)
{
	static const double l1_0[4] = { 300, 100, 200, 400 };
	static const double l2_0[8] = { 100, 200, 60, 40, 150, 50, 300, 100 };
	static const double l1_2[4] = { 1000, 500, 500, 1000 };
	static const double l2_2[8] = { 400, 600, 250, 250, 100, 400, 200, 800 };
	static const double l1_3[4] = { 700, 100, 300, 900 };
	static const double l2_3[8] = { 350, 350, 50, 50, 200, 100, 400, 500 };
	/* cpu, known, selected, core_id, package, core_idx, pkg_idx, state */
	static const struct snapfix_cpu layout[5] = {
		{ 0, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED },
		{ 1, true, true, 0, 0, 0, 0, CPU_STATE_MONITORED },
		{ 2, true, true, 1, 0, 1, 0, CPU_STATE_MONITORED },
		{ 3, true, true, 0, 1, 2, 1, CPU_STATE_MONITORED },
		{ 4, false, true, -1, -1, -1, -1, CPU_STATE_UNSUPPORTED },
	};
	struct fixture *f = calloc(1, sizeof(*f));
	struct snapshot *s;

	assert_non_null(f);
	s = snap_wire(&f->snap, f->cpus, f->cores, f->pkgs);
	snapfix_spr(s);
	snapfix_cpus(s, layout, 5);
	s->n_cores = 3;
	s->n_pkgs = 2;
	s->seq = 12;
	s->timestamp = 1700000000.12345;
	s->interval_s = 2.5;
	s->last_interval_s = 12.50375;
	s->duration_s = 0.001;
	set_cpu(&f->cpus[0], l1_0, l2_0, 1000, 1e9, 1e9);
	set_cpu(&f->cpus[1], NULL, NULL, 0, 1e9, 1e9);
	f->cpus[1].c.total[TD_C_SLOTS] = 5e6;
	f->cpus[1].c.total[TD_C_CAT + TD_CAT_RETIRING] = 5e6;
	f->cpus[1].c.total[TD_C_CAT + TD_CAT_LIGHT_OPERATIONS] = 5e6;
	set_cpu(&f->cpus[2], l1_2, l2_2, 3000, 1e9, 0.5e9);
	set_cpu(&f->cpus[3], l1_3, l2_3, 2000, 1e9, 1e9);
	set_cpu(&f->cpus[4], NULL, NULL, 0, 0, 0);
	f->cores[0] = (struct snap_core){ .core_id = 0, .package = 0, .die = 0 };
	f->cores[1] = (struct snap_core){ .core_id = 1, .package = 0, .die = 0 };
	f->cores[2] = (struct snap_core){ .core_id = 0, .package = 1, .die = 0 };
	f->pkgs[0].package = 0;
	f->pkgs[1].package = 1;
	snapshot_aggregate(s);
	return f;
}

/* "a.b.2.c": object keys and array indexes. */
static json_t *jpath(json_t *j, const char *path)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *tok = strtok_r(buf, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save)) {
		if (json_is_array(j))
			j = json_array_get(j, strtoul(tok, NULL, 10));
		else
			j = json_object_get(j, tok);
	}
	return j;
}

static json_t *jhas(json_t *doc, const char *path)
{
	json_t *j = jpath(doc, path);

	if (!j)
		fail_msg("%s: missing", path);
	return j;
}

static void jreal(json_t *doc, const char *path, double want)
{
	json_t *j = jhas(doc, path);

	if (!json_is_real(j))
		fail_msg("%s: not a real (type %d)", path, json_typeof(j));
	if (json_real_value(j) != want)
		fail_msg("%s = %.17g, expected %.17g", path, json_real_value(j), want);
}

static void jint(json_t *doc, const char *path, long long want)
{
	json_t *j = jhas(doc, path);

	if (!json_is_integer(j))
		fail_msg("%s: not an integer (type %d)", path, json_typeof(j));
	if (json_integer_value(j) != want)
		fail_msg("%s = %lld, expected %lld", path, (long long)json_integer_value(j), want);
}

static void jstr(json_t *doc, const char *path, const char *want)
{
	json_t *j = jhas(doc, path);

	if (!json_is_string(j))
		fail_msg("%s: not a string (type %d)", path, json_typeof(j));
	assert_string_equal(json_string_value(j), want);
}

static void jnull(json_t *doc, const char *path)
{
	json_t *j = jhas(doc, path);

	if (!json_is_null(j))
		fail_msg("%s: not null (type %d)", path, json_typeof(j));
}

static void jabsent(json_t *doc, const char *path)
{
	if (jpath(doc, path))
		fail_msg("%s: present, expected absent", path);
}

static json_t *document(const struct snapshot *s, const char *scope, const char *level,
			const char *cpu)
{
	json_t *doc = api_document(s, query_ok(scope, level, cpu), NULL, "node1", "9.8.7");

	assert_non_null(doc);
	return doc;
}

static void test_document_host(void **state)
{
	struct fixture *f = fixture_new();
	json_t *doc;

	(void)state;
	f->snap.errors[COLL_ERR_READ] = 3;
	f->snap.config_ok = false;
	f->snap.config_loaded_at = 1699999000.25;
	doc = document(&f->snap, NULL, NULL, NULL);
	/* Exactly the top-level keys of the host scope. */
	assert_int_equal(json_object_size(doc), 17);
	jint(doc, "collection_errors.read", 3);
	jint(doc, "collection_errors.open", 0);
	assert_true(json_is_false(jhas(doc, "config.last_reload_successful")));
	jreal(doc, "config.loaded_timestamp", 1699999000.25);
	jstr(doc, "pmus.0.per_cpu", "thread");
	jstr(doc, "api_version", "1.11");
	jstr(doc, "version", "9.8.7");
	jstr(doc, "hostname", "node1");
	jreal(doc, "timestamp", 1700000000.123);
	jreal(doc, "interval_seconds", 2.5);
	jreal(doc, "last_interval_seconds", 12.504); /* a stopped daemon's, rounded to 1 ms */
	jint(doc, "intervals", 12);
	jint(doc, "intervals_missed", 0);
	jreal(doc, "collection_seconds", 0.001);
	assert_true(json_is_true(jhas(doc, "up")));
	jstr(doc, "pmu.name", "cpu");
	jstr(doc, "pmu.pmu_name", "sapphire_rapids");
	jint(doc, "pmu.level", 2);
	jstr(doc, "pmu.model", "perf");
	jstr(doc, "pmu.uarch", "sapphirerapids");
	jabsent(doc, "pmu.reason");
	assert_int_equal(json_array_size(jhas(doc, "pmus")), 1);
	jstr(doc, "pmus.0.name", "cpu");
	jstr(doc, "pmus.0.uarch", "sapphirerapids");
	jint(doc, "pmus.0.level", 2);
	jint(doc, "cpus_by_state.monitored", 4);
	jint(doc, "cpus_by_state.failed", 0);
	jint(doc, "cpus_by_state.offline", 0);
	jint(doc, "cpus_by_state.unsupported", 1);
	jint(doc, "cpus_by_state.held", 0);
	jint(doc, "cpus_by_state.yielded", 0);
	jint(doc, "cpus_by_state.silenced", 0);
	jint(doc, "cpus_by_state.isolated", 0);
	assert_int_equal(json_object_size(jhas(doc, "cpus_by_state")), 8);
	jabsent(doc, "packages");
	jabsent(doc, "cores");
	jabsent(doc, "cpus");

	/* The host: slot-weighted ratios of the last interval. */
	jint(doc, "host.slots", 6000);
	jint(doc, "host.slots_total", 6000 * 1000 + 5000000);
	jreal(doc, "host.running_ratio", 0.875);
	assert_int_equal(json_object_size(jhas(doc, "host.level1")), 4);
	jreal(doc, "host.level1.retiring", 0.333333);
	jreal(doc, "host.level1.bad_speculation", 0.116667);
	jreal(doc, "host.level1.frontend_bound", 0.166667);
	jreal(doc, "host.level1.backend_bound", 0.383333);
	assert_int_equal(json_object_size(jhas(doc, "host.level2")), 8);
	jreal(doc, "host.level2.heavy_operations", 0.141667);   /* 850/6000 */
	jreal(doc, "host.level2.light_operations", 0.191667);   /* 1150/6000 */
	jreal(doc, "host.level2.branch_mispredicts", 0.06);     /* 360/6000 */
	jreal(doc, "host.level2.machine_clears", 0.056667);     /* 340/6000 */
	jreal(doc, "host.level2.fetch_latency", 0.075);         /* 450/6000 */
	jreal(doc, "host.level2.fetch_bandwidth", 0.091667);    /* 550/6000 */
	jreal(doc, "host.level2.memory_bound", 0.15);           /* 900/6000 */
	jreal(doc, "host.level2.core_bound", 0.233333);         /* 1400/6000 */
	jstr(doc, "host.bottleneck", "backend_bound.core_bound");
	/* Level 2 grouped under its parent too. */
	assert_int_equal(json_object_size(jhas(doc, "host.level2_by_parent")), 4);
	jreal(doc, "host.level2_by_parent.backend_bound.memory_bound", 0.15);
	jreal(doc, "host.level2_by_parent.backend_bound.core_bound", 0.233333);
	jreal(doc, "host.level2_by_parent.retiring.heavy_operations", 0.141667);
	assert_int_equal(json_object_size(jhas(doc, "host.level2_by_parent.retiring")), 2);
	/* Cumulative counts a client can difference: every category. */
	assert_int_equal(json_object_size(jhas(doc, "host.level1_slots_total")), 4);
	jint(doc, "host.level1_slots_total.retiring", 2000 * 1000 + 5000000);
	jint(doc, "host.level1_slots_total.backend_bound", 2300 * 1000);
	assert_int_equal(json_object_size(jhas(doc, "host.level2_slots_total")), 8);
	jint(doc, "host.level2_slots_total.light_operations", 1150 * 1000 + 5000000);
	jint(doc, "host.level2_slots_total.core_bound", 1400 * 1000);
	jreal(doc, "host.enabled_seconds_total", 4000.0);
	jreal(doc, "host.running_seconds_total", 3500.0);
	jabsent(doc, "selection");
	jabsent(doc, "window");
	json_decref(doc);
	free(f);
}

/* The SMT split in the document: each core's, package's and the host's
 * seconds by state and the last interval's shares; absent where a row was
 * never split; what is counted and why not, at the top. */
static void test_document_smt(void **state)
{
	struct fixture *f = fixture_new();
	json_t *doc;

	(void)state;
	doc = document(&f->snap, "core", NULL, NULL);
	assert_true(json_is_false(jhas(doc, "smt.counted")));
	assert_true(json_is_null(jhas(doc, "smt.events")));
	jabsent(doc, "host.smt");
	jabsent(doc, "cores.0.smt");
	json_decref(doc);
	f->snap.smt_on = true;
	strcpy(f->snap.smt_method, "CPU_CLK_UNHALTED.REF_TSC, CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE, CPU_CLK_UNHALTED.REF_DISTRIBUTED");
	strcpy(f->snap.smt_reason, "1 of 2 cores with two threads split in the last interval");
	f->cores[0].smt = (struct snap_smt){ .total = { 10, 5, 2.5, 22.5 }, .last = { 0.5, 0.25, 0, 0.25 },
					     .valid = true, .ever = true, .cores = 1 };
	f->cores[0].first_cpu = 0;
	f->cores[0].second_cpu = 1;
	f->pkgs[0].smt = f->cores[0].smt;
	f->snap.smt_host = f->cores[0].smt;
	f->snap.smt_host.valid = false;
	doc = document(&f->snap, "core", NULL, NULL);
	assert_true(json_is_true(jhas(doc, "smt.counted")));
	jstr(doc, "smt.reason", "1 of 2 cores with two threads split in the last interval");
	jreal(doc, "cores.0.smt.seconds_total.neither", 10);
	jreal(doc, "cores.0.smt.seconds_total.first_only", 5);
	jreal(doc, "cores.0.smt.seconds_total.second_only", 2.5);
	jreal(doc, "cores.0.smt.seconds_total.both", 22.5);
	jreal(doc, "cores.0.smt.last.neither", 0.5);
	jreal(doc, "cores.0.smt.last.first_only", 0.25);
	jint(doc, "cores.0.smt.first_cpu", 0);
	jint(doc, "cores.0.smt.second_cpu", 1);
	jabsent(doc, "cores.1.smt");
	jint(doc, "packages.0.smt.cores", 1);
	jabsent(doc, "packages.1.smt");
	/* Not split in the last interval: its totals, and no shares. */
	assert_true(json_is_null(jhas(doc, "host.smt.last")));
	jreal(doc, "host.smt.seconds_total.both", 22.5);
	json_decref(doc);
	free(f);
}

/* perf's SMT mode metrics (NVIDIA Olympus) in the document: each CPU's,
 * core's, package's and the host's cycles in ST and SMT mode and the last
 * interval's share in ST mode (null: none); absent where an entity never
 * had them; what they are, at the top, only where counted. */
static void test_document_smt_mode(void **state)
{
	struct fixture *f = fixture_new();
	json_t *doc;

	(void)state;
	doc = document(&f->snap, "cpu", NULL, NULL);
	jabsent(doc, "smt_mode");
	jabsent(doc, "host.smt_mode");
	jabsent(doc, "cpus.0.smt_mode");
	json_decref(doc);
	f->snap.mode_on = true;
	strcpy(f->snap.mode_method, "cpu_cycles_in_st_mode, cpu_cycles_in_smt_mode (t410/metrics.json), from CPU_SLOT and CPU_CYCLES");
	f->cpus[0].mode = (struct snap_mode){ .fraction = 0.6, .last = { 60, 40 },
					      .total = { 600, 400 }, .valid = true, .ever = true };
	f->cpus[1].mode = f->cpus[0].mode;
	f->cpus[1].mode.valid = false;
	f->cores[0].mode = f->cpus[0].mode;
	f->pkgs[0].mode = f->cpus[0].mode;
	f->snap.mode_host = f->cpus[0].mode;
	doc = document(&f->snap, "cpu", NULL, NULL);
	assert_true(json_is_true(jhas(doc, "smt_mode.counted")));
	jstr(doc, "smt_mode.metrics", "cpu_cycles_in_st_mode, cpu_cycles_in_smt_mode (t410/metrics.json), from CPU_SLOT and CPU_CYCLES");
	jint(doc, "cpus.0.smt_mode.cycles_total.st", 600);
	jint(doc, "cpus.0.smt_mode.cycles_total.smt", 400);
	jreal(doc, "cpus.0.smt_mode.st_fraction", 0.6);
	/* No value in the last interval: its totals, and no share. */
	assert_true(json_is_null(jhas(doc, "cpus.1.smt_mode.st_fraction")));
	jint(doc, "cpus.1.smt_mode.cycles_total.st", 600);
	jabsent(doc, "cpus.2.smt_mode");
	jreal(doc, "cores.0.smt_mode.st_fraction", 0.6);
	jabsent(doc, "cores.1.smt_mode");
	jint(doc, "packages.0.smt_mode.cycles_total.smt", 400);
	jabsent(doc, "packages.1.smt_mode");
	jreal(doc, "host.smt_mode.st_fraction", 0.6);
	json_decref(doc);
	free(f);
}

static void test_document_scopes(void **state)
{
	struct fixture *f = fixture_new();
	json_t *doc;

	(void)state;
	doc = document(&f->snap, "package", NULL, NULL);
	assert_int_equal(json_object_size(doc), 18);
	assert_int_equal(json_array_size(jhas(doc, "packages")), 2);
	jabsent(doc, "cores");
	jabsent(doc, "cpus");
	jint(doc, "packages.0.package", 0);
	jint(doc, "packages.0.slots", 4000);
	jint(doc, "packages.0.slots_total", 4000000 + 5000000);
	jreal(doc, "packages.0.running_ratio", 0.833333); /* 2.5 / 3 */
	jreal(doc, "packages.0.level1.backend_bound", 0.35); /* 1400/4000 */
	jstr(doc, "packages.0.bottleneck", "backend_bound.core_bound");
	jint(doc, "packages.1.package", 1);
	jint(doc, "packages.1.slots", 2000);
	jreal(doc, "packages.1.level1.backend_bound", 0.45);
	jreal(doc, "packages.1.level2.memory_bound", 0.2);
	jreal(doc, "packages.1.level2.core_bound", 0.25);
	json_decref(doc);

	doc = document(&f->snap, "core", NULL, NULL);
	assert_int_equal(json_object_size(doc), 19);
	assert_int_equal(json_array_size(jhas(doc, "packages")), 2);
	assert_int_equal(json_array_size(jhas(doc, "cores")), 3);
	jabsent(doc, "cpus");
	jint(doc, "cores.0.core", 0);
	jint(doc, "cores.0.package", 0);
	jint(doc, "cores.0.die", 0);
	assert_int_equal(json_array_size(jhas(doc, "cores.0.cpus")), 2);
	jint(doc, "cores.0.cpus.0", 0);
	jint(doc, "cores.0.cpus.1", 1);
	jint(doc, "cores.0.slots", 1000);
	jstr(doc, "cores.0.bottleneck", "backend_bound.memory_bound");
	jint(doc, "cores.1.core", 1);
	assert_int_equal(json_array_size(jhas(doc, "cores.1.cpus")), 1);
	jint(doc, "cores.1.cpus.0", 2);
	jreal(doc, "cores.1.running_ratio", 0.5);
	jint(doc, "cores.2.core", 0);
	jint(doc, "cores.2.package", 1);
	jint(doc, "cores.2.cpus.0", 3);
	json_decref(doc);

	doc = document(&f->snap, "cpu", NULL, NULL);
	assert_int_equal(json_object_size(doc), 20);
	assert_int_equal(json_array_size(jhas(doc, "cpus")), 5);
	jint(doc, "cpus.0.cpu", 0);
	jint(doc, "cpus.0.core", 0);
	jint(doc, "cpus.0.package", 0);
	jint(doc, "cpus.0.die", 0);
	jint(doc, "cpus.0.node", 0);
	jstr(doc, "cpus.0.state", "monitored");
	jint(doc, "cpus.0.slots", 1000);
	jint(doc, "cpus.0.slots_total", 1000000);
	jreal(doc, "cpus.0.running_ratio", 1.0);
	jreal(doc, "cpus.0.level1.retiring", 0.3);
	jreal(doc, "cpus.0.level1.bad_speculation", 0.1);
	jreal(doc, "cpus.0.level1.frontend_bound", 0.2);
	jreal(doc, "cpus.0.level1.backend_bound", 0.4);
	jreal(doc, "cpus.0.level2.fetch_latency", 0.15);
	jreal(doc, "cpus.0.level2.core_bound", 0.1);
	jstr(doc, "cpus.0.bottleneck", "backend_bound.memory_bound");
	jint(doc, "cpus.3.node", 1);
	jint(doc, "cpus.3.package", 1);
	/* cpu 2: retiring 1000/3000 rounds to 6 decimals. */
	jreal(doc, "cpus.2.level1.retiring", 0.333333);
	jreal(doc, "cpus.2.level1.bad_speculation", 0.166667);
	/* cpu 1 was halted in the last interval: no ratios, no bottleneck. */
	jint(doc, "cpus.1.slots", 0);
	jint(doc, "cpus.1.slots_total", 5000000);
	jreal(doc, "cpus.1.running_ratio", 1.0);
	jnull(doc, "cpus.1.level1");
	jnull(doc, "cpus.1.level2");
	jnull(doc, "cpus.1.bottleneck");
	/* cpu 4: unknown topology, unsupported, never enabled. */
	jint(doc, "cpus.4.cpu", 4);
	jnull(doc, "cpus.4.core");
	jnull(doc, "cpus.4.package");
	jnull(doc, "cpus.4.die");
	jnull(doc, "cpus.4.node");
	jstr(doc, "cpus.4.state", "unsupported");
	jint(doc, "cpus.4.slots", 0);
	jnull(doc, "cpus.4.running_ratio");
	jnull(doc, "cpus.4.level1");
	jnull(doc, "cpus.4.bottleneck");
	json_decref(doc);
	free(f);
}

static void test_document_levels(void **state)
{
	struct fixture *f = fixture_new();
	json_t *doc;

	(void)state;
	/* level=1: no level2 anywhere, bottleneck without a child. */
	doc = document(&f->snap, "cpu", "1", NULL);
	jint(doc, "pmu.level", 2); /* what is collected */
	jhas(doc, "host.level1");
	jabsent(doc, "host.level2");
	jstr(doc, "host.bottleneck", "backend_bound");
	jabsent(doc, "packages.0.level2");
	jabsent(doc, "cores.0.level2");
	jabsent(doc, "cpus.0.level2");
	jabsent(doc, "cpus.1.level2"); /* not even null */
	jabsent(doc, "host.level2_by_parent");
	jabsent(doc, "host.level2_slots_total");
	jnull(doc, "cpus.1.level1");
	jstr(doc, "cpus.0.bottleneck", "backend_bound");
	json_decref(doc);

	/* A level-1 snapshot never has level2, whatever is asked. */
	f->snap.level = 1;
	f->snap.pmus[0].level = 1;
	f->snap.cats = TD_CATSET_L1;
	doc = document(&f->snap, "cpu", "2", NULL);
	jint(doc, "pmu.level", 1);
	jabsent(doc, "host.level2");
	jabsent(doc, "cpus.0.level2");
	jabsent(doc, "cpus.1.level2");
	jstr(doc, "host.bottleneck", "backend_bound");
	json_decref(doc);
	free(f);
}

static void test_document_cpu_filter(void **state)
{
	struct fixture *f = fixture_new();
	json_t *doc;

	(void)state;
	/* cpu=2: its CPU, its core, its package; the host stays whole, and
	 * the selection is the figure of exactly those CPUs. */
	doc = document(&f->snap, NULL, NULL, "2");
	jint(doc, "selection.cpus.0", 2);
	jint(doc, "selection.slots", 3000);
	jreal(doc, "selection.level1.retiring", 0.333333);
	jreal(doc, "selection.running_ratio", 0.5);
	assert_int_equal(json_array_size(jhas(doc, "cpus")), 1);
	jint(doc, "cpus.0.cpu", 2);
	assert_int_equal(json_array_size(jhas(doc, "cores")), 1);
	jint(doc, "cores.0.core", 1);
	jint(doc, "cores.0.cpus.0", 2);
	assert_int_equal(json_array_size(jhas(doc, "packages")), 1);
	jint(doc, "packages.0.package", 0);
	jint(doc, "host.slots", 6000);
	json_decref(doc);

	/* cpu=0,3: slot-weighted over the two, not an average of ratios:
	 * backend (400 + 900) / (1000 + 2000). */
	doc = document(&f->snap, "host", NULL, "0,3");
	assert_int_equal(json_array_size(jhas(doc, "selection.cpus")), 2);
	jint(doc, "selection.slots", 3000);
	jreal(doc, "selection.level1.backend_bound", 0.433333);
	jreal(doc, "selection.level2.memory_bound", 0.233333); /* 700/3000 */
	jint(doc, "selection.slots_total", 3000000);
	jstr(doc, "selection.bottleneck", "backend_bound.memory_bound"); /* 700 > 600 */
	jabsent(doc, "packages");
	json_decref(doc);

	/* cpu=3-4: cpu 4 has no core nor package. */
	doc = document(&f->snap, NULL, NULL, "3-4");
	assert_int_equal(json_array_size(jhas(doc, "cpus")), 2);
	jint(doc, "cpus.0.cpu", 3);
	jint(doc, "cpus.1.cpu", 4);
	assert_int_equal(json_array_size(jhas(doc, "cores")), 1);
	jint(doc, "cores.0.package", 1);
	assert_int_equal(json_array_size(jhas(doc, "packages")), 1);
	jint(doc, "packages.0.package", 1);
	json_decref(doc);

	/* cpu=1 lists core 0 whole (both its CPUs) and package 0. */
	doc = document(&f->snap, NULL, NULL, "1");
	assert_int_equal(json_array_size(jhas(doc, "cores")), 1);
	assert_int_equal(json_array_size(jhas(doc, "cores.0.cpus")), 2);
	jint(doc, "cores.0.slots", 1000);
	json_decref(doc);

	/* An explicit coarser scope: packages only. */
	doc = document(&f->snap, "package", NULL, "3");
	assert_int_equal(json_array_size(jhas(doc, "packages")), 1);
	jint(doc, "packages.0.package", 1);
	jabsent(doc, "cores");
	jabsent(doc, "cpus");
	json_decref(doc);

	free(f);
}

/* What only the snapshot can refuse. */
static void test_check_query(void **state)
{
	struct fixture *f = fixture_new();
	const uint64_t history = 900 * 1000000000ULL;
	struct api_query q;
	char err[256];

	(void)state;
	assert_int_equal(api_parse_query(NULL, NULL, "3,100-101", NULL, &q, err, sizeof(err)), 0);
	assert_int_equal(api_check_query(&f->snap, &q, history, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "invalid cpu: 100-101 do not exist on this host (its CPUs are 0-4)");
	assert_int_equal(api_parse_query(NULL, NULL, "7", NULL, &q, err, sizeof(err)), 0);
	assert_int_equal(api_check_query(&f->snap, &q, history, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "invalid cpu: 7 does not exist on this host (its CPUs are 0-4)");
	assert_int_equal(api_parse_query(NULL, NULL, "0-4", NULL, &q, err, sizeof(err)), 0);
	assert_int_equal(api_check_query(&f->snap, &q, history, err, sizeof(err)), 0);
	/* A window: host and packages only, within the history. */
	assert_int_equal(api_parse_query("package", NULL, NULL, "5m", &q, err, sizeof(err)), 0);
	assert_int_equal(q.window_ns, 300 * 1000000000ULL);
	assert_int_equal(api_check_query(&f->snap, &q, history, err, sizeof(err)), 0);
	assert_int_equal(api_parse_query(NULL, NULL, NULL, "1h", &q, err, sizeof(err)), 0);
	assert_int_equal(api_check_query(&f->snap, &q, history, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "window 1h is longer than the history kept ([collect] history = 15m)");
	assert_int_equal(api_parse_query("cpu", NULL, NULL, "1m", &q, err, sizeof(err)), 0);
	assert_int_equal(api_check_query(&f->snap, &q, history, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "window covers scope=host and scope=package (the history keeps nothing finer); "
			    "for CPUs, difference the *_slots_total of two requests");
	assert_int_equal(api_parse_query(NULL, NULL, NULL, "0s", &q, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "invalid window \"0s\": expected a duration like 30s, 5m or 1h");
	assert_int_equal(api_parse_query(NULL, NULL, NULL, "soon", &q, err, sizeof(err)), -EINVAL);
	free(f);
}

/* ?window=: ratios from what the totals gained since a history sample. */
static void test_document_window(void **state)
{
	struct fixture *f = fixture_new();
	struct history_sample then;
	struct api_query q;
	char err[256];
	json_t *doc;

	(void)state;
	/* 60 s before: the host had gained 1000 slots less, all of them
	 * backend bound, memory bound; package 1 likewise, package 0 the
	 * same totals as now (nothing counted in the window). */
	memset(&then, 0, sizeof(then));
	/* Measured on the monotonic clock: the wall clock was stepped a day
	 * back meanwhile (the window is still 60.5 s, not -86339.5). */
	f->snap.collected_ns = 5000 * 1000000000ULL;
	then.mono = 5000 - 60.5;
	memcpy(then.host, f->snap.host.total, sizeof(then.host));
	then.host[TD_C_SLOTS] -= 1000;
	then.host[TD_C_CAT + TD_CAT_BACKEND_BOUND] -= 1000;
	then.host[TD_C_CAT + TD_CAT_MEMORY_BOUND] -= 1000;
	then.host[TD_C_ENABLED] -= 60e9;
	then.host[TD_C_RUNNING] -= 60e9;
	then.n_pkgs = 2;
	then.pkg_ids[0] = 0;
	then.pkg_ids[1] = 1;
	memcpy(then.pkgs[0], f->snap.pkgs[0].c.total, sizeof(then.pkgs[0]));
	memcpy(then.pkgs[1], f->snap.pkgs[1].c.total, sizeof(then.pkgs[1]));
	then.pkgs[1][TD_C_SLOTS] -= 1000;
	then.pkgs[1][TD_C_CAT + TD_CAT_BACKEND_BOUND] -= 1000;
	then.pkgs[1][TD_C_CAT + TD_CAT_MEMORY_BOUND] -= 1000;
	assert_int_equal(api_parse_query("package", NULL, NULL, "1m", &q, err, sizeof(err)), 0);
	doc = api_document(&f->snap, &q, &then, "node1", "9.8.7");
	assert_non_null(doc);
	jreal(doc, "window.requested_seconds", 60.0);
	jreal(doc, "window.seconds", 60.5);
	jreal(doc, "window.start", round((f->snap.timestamp - 60.5) * 1e3) / 1e3);
	jint(doc, "host.slots", 1000);
	jreal(doc, "host.level1.backend_bound", 1.0);
	jreal(doc, "host.level1.retiring", 0.0);
	jreal(doc, "host.level2.memory_bound", 1.0);
	jreal(doc, "host.running_ratio", 1.0);
	jstr(doc, "host.bottleneck", "backend_bound.memory_bound");
	/* The cumulative counts stay cumulative. */
	jint(doc, "host.slots_total", 6000 * 1000 + 5000000);
	jint(doc, "packages.0.slots", 0);
	jnull(doc, "packages.0.level1");
	jint(doc, "packages.1.slots", 1000);
	jreal(doc, "packages.1.level1.backend_bound", 1.0);
	json_decref(doc);
	free(f);
}

/* ?window= below level 2: a node's value over the window is what its
 * slots_total gained over what the base slots gained (a rate() of
 * /metrics' counters); null where the base gained nothing, or from a
 * sample of another depth plan (a reload) or layout (totals restarted). */
static void test_document_window_nodes(void **state)
{
	static double last[22], slots[22], ns[22], base[11];
	const struct dt_table *t = depth_table_of("sapphirerapids", "cpu");
	struct fixture *f = fixture_new();
	struct snapshot *s = &f->snap;
	/* host, package 0, package 1: l1_bound, l2_bound, base */
	double then_nodes[3][3] = { { 1010 - 300, 500 - 100, 10000 - 1000 },
				    { 1008 - 50, 500, 10000 - 500 },
				    { 1009, 500, 10000 } };
	struct history_sample then;
	struct api_query q;
	char err[256];
	json_t *doc;

	(void)state;
	assert_non_null(t);
	/* Rows: 5 CPUs, 3 cores, packages 0 and 1 (8, 9), the host (10). */
	s->n_deep = 1;
	s->deep[0] = (struct snap_deep){ .n_nodes = 2, .level = 3, .gen = 5, .n_groups = 11, .source = t->source,
				      .rows = 11, .last = last, .slots_total = slots, .measured_ns_total = ns,
				      .row_slots_total = base, .cap = 22, .row_cap = 11 };
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (!strcmp(t->nodes[i].name, "tma_l1_bound") || !strcmp(t->nodes[i].name, "tma_l2_bound"))
			s->deep[0].node[t->nodes[i].name[5] == '1' ? 0 : 1] = &t->nodes[i];
	s->deep[0].parent[0] = s->deep[0].parent[1] = -1;
	for (unsigned r = 0; r < 11; r++) {
		last[2 * r] = last[2 * r + 1] = 0.5;
		slots[2 * r] = 1000 + r;
		slots[2 * r + 1] = 500;
		base[r] = 10000;
	}
	s->layout = 2;
	s->collected_ns = 5000 * 1000000000ULL;
	memset(&then, 0, sizeof(then));
	then.mono = 5000 - 60;
	memcpy(then.host, s->host.total, sizeof(then.host));
	then.n_pkgs = 2;
	then.pkg_ids[0] = 0;
	then.pkg_ids[1] = 1;
	then.deep_gen = 5;
	then.layout = 2;
	then.n_nodes = 2;
	then.nodes = &then_nodes[0][0];
	assert_int_equal(api_parse_query("package", NULL, NULL, "1m", &q, err, sizeof(err)), 0);
	doc = api_document(s, &q, &then, "node1", "9.8.7");
	assert_non_null(doc);
	jreal(doc, "host.nodes.l1_bound", 0.3);
	jreal(doc, "host.nodes.l2_bound", 0.1);
	jreal(doc, "packages.0.nodes.l1_bound", 0.1);
	jreal(doc, "packages.0.nodes.l2_bound", 0.0);
	jnull(doc, "packages.1.nodes.l1_bound");
	/* The cumulative counts stay cumulative; the tree is there. */
	jint(doc, "host.nodes_slots_total.l1_bound", 1010);
	jint(doc, "host.nodes_base_slots_total", 10000);
	jint(doc, "tree.level", 3);
	json_decref(doc);
	/* A sample of the depth plan before a reload: no value. */
	then.deep_gen = 4;
	doc = api_document(s, &q, &then, "node1", "9.8.7");
	jnull(doc, "host.nodes.l1_bound");
	jnull(doc, "packages.0.nodes.l2_bound");
	json_decref(doc);
	/* Nor from before a change of layout, nor from a sample without
	 * nodes. */
	then.deep_gen = 5;
	then.layout = 1;
	doc = api_document(s, &q, &then, "node1", "9.8.7");
	jnull(doc, "host.nodes.l1_bound");
	json_decref(doc);
	then.layout = 2;
	then.nodes = NULL;
	doc = api_document(s, &q, &then, "node1", "9.8.7");
	jnull(doc, "host.nodes.l2_bound");
	json_decref(doc);
	free(f);
}

/* The history document: a step per pair of samples, ratios of each. */
static void test_history(void **state)
{
	struct fixture *f = fixture_new();
	double ts[3] = { 100, 101, 102 }, totals[3][3][TD_C_COUNT];
	struct history_series s = { .n = 3, .n_pkgs = 2, .pkg_ids = { 0, 5 }, .step_s = 1,
				    .ts = ts, .totals = &totals[0][0][0] };
	double since;
	unsigned level;
	char err[256];
	json_t *doc;

	(void)state;
	memset(totals, 0, sizeof(totals));
	/* Step 1: the host 1000 slots, 400 retiring (100 heavy), 600 backend
	 * (450 memory); package 5 half of it.  Step 2: nothing counted. */
	for (int e = 0; e < 3; e++) {
		double k = e == 0 ? 1 : e == 2 ? 0.5 : 0;

		totals[1][e][TD_C_SLOTS] = totals[2][e][TD_C_SLOTS] = 1000 * k;
		totals[1][e][TD_C_CAT + TD_CAT_RETIRING] = totals[2][e][TD_C_CAT + TD_CAT_RETIRING] = 400 * k;
		totals[1][e][TD_C_CAT + TD_CAT_HEAVY_OPERATIONS] = 100 * k;
		totals[2][e][TD_C_CAT + TD_CAT_HEAVY_OPERATIONS] = 100 * k;
		totals[1][e][TD_C_CAT + TD_CAT_BACKEND_BOUND] = totals[2][e][TD_C_CAT + TD_CAT_BACKEND_BOUND] = 600 * k;
		totals[1][e][TD_C_CAT + TD_CAT_MEMORY_BOUND] = totals[2][e][TD_C_CAT + TD_CAT_MEMORY_BOUND] = 450 * k;
		totals[1][e][TD_C_ENABLED] = totals[2][e][TD_C_ENABLED] = 2e9;
		totals[1][e][TD_C_RUNNING] = totals[2][e][TD_C_RUNNING] = 1e9;
	}
	doc = api_history(&f->snap, &s, 2, "node1", "9.8.7");
	assert_non_null(doc);
	jreal(doc, "step_seconds", 1.0);
	jint(doc, "level", 2);
	jstr(doc, "categories.0.name", "retiring");
	jnull(doc, "categories.0.parent");
	assert_int_equal(json_array_size(json_object_get(doc, "samples")), 2);
	jreal(doc, "samples.0.start", 100.0);
	jreal(doc, "samples.0.end", 101.0);
	jint(doc, "samples.0.host.slots", 1000);
	jreal(doc, "samples.0.host.level1.retiring", 0.4);
	jreal(doc, "samples.0.host.level1.backend_bound", 0.6);
	jreal(doc, "samples.0.host.level2.memory_bound", 0.45);
	jreal(doc, "samples.0.host.level2.heavy_operations", 0.1);
	jreal(doc, "samples.0.host.running_ratio", 0.5);
	jint(doc, "samples.0.packages.5.slots", 500);
	jreal(doc, "samples.0.packages.5.level1.retiring", 0.4);
	jint(doc, "samples.0.packages.0.slots", 0);
	jnull(doc, "samples.0.packages.0.level1");
	jnull(doc, "samples.1.host.level1");
	json_decref(doc);
	/* Level 1 only. */
	doc = api_history(&f->snap, &s, 1, "node1", "9.8.7");
	assert_null(json_object_get(json_object_get(json_array_get(json_object_get(doc, "samples"), 0),
						   "host"), "level2") ? (void *)1 : NULL);
	json_decref(doc);
	/* The parameters. */
	assert_int_equal(api_parse_history_query(NULL, NULL, &since, &level, err, sizeof(err)), 0);
	assert_true(since == 0 && level == 2);
	assert_int_equal(api_parse_history_query("1795398014.84", "1", &since, &level, err, sizeof(err)), 0);
	assert_true(since == 1795398014.84 && level == 1);
	assert_int_equal(api_parse_history_query("-1", NULL, &since, &level, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "invalid since \"-1\": expected a timestamp in seconds (a sample's \"end\")");
	assert_int_equal(api_parse_history_query(NULL, "3", &since, &level, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "invalid level \"3\": expected 1 or 2");
	free(f);
}

/* No TopDown: the document still describes the situation. */
/* A hybrid part: a tree per core PMU (cpu_core on CPUs 0-2, cpu_atom on
 * CPU 3), their nodes sharing names.  A CPU and a core show their own
 * core type's nodes; a package and the host every tree's, by PMU; the
 * node families carry the PMU and no CPU a series of the other type's. */
static void test_document_hybrid_trees(void **state)
{
	static double last[2][11 * 2], slots[2][11 * 2], ns[2][11 * 2], base[2][11];
	const struct dt_table *tt[2] = { depth_table_of("alderlake", "cpu_core"), depth_table_of("alderlake", "cpu_atom") };
	static const char *const pmu[2] = { "cpu_core", "cpu_atom" };
	struct fixture *f = fixture_new();
	struct snapshot *s = &f->snap;
	struct expo_options opt = { .granularity = GRAN_CPU, .version = "9.8.7", .revision = "abc" };
	struct buf text;
	json_t *doc;

	(void)state;
	s->n_pmus = 2;
	strcpy(s->pmus[0].name, "cpu_core");
	s->pmus[1] = s->pmus[0];
	strcpy(s->pmus[1].name, "cpu_atom");
	f->cpus[3].pmu_idx = 1;
	f->cores[0].pmu_idx = f->cores[1].pmu_idx = 0;
	f->cores[2].pmu_idx = 1;
	s->n_deep = 2;
	for (unsigned t = 0; t < 2; t++) {
		struct snap_deep *d = &s->deep[t];

		assert_non_null(tt[t]);
		*d = (struct snap_deep){ .n_nodes = 2, .level = 3, .gen = 5, .n_groups = 3 + t, .source = tt[t]->source,
					 .rows = 11, .last = last[t], .slots_total = slots[t], .measured_ns_total = ns[t],
					 .row_slots_total = base[t], .cap = 22, .row_cap = 11 };
		strcpy(d->pmu, pmu[t]);
		d->pmu_idx = (int)t;
		/* tma_l1_bound in both, then a node of the tree's own. */
		for (unsigned i = 0; i < tt[t]->n_nodes; i++) {
			if (!strcmp(tt[t]->nodes[i].name, "tma_l1_bound"))
				d->node[0] = &tt[t]->nodes[i];
			if (!strcmp(tt[t]->nodes[i].name, t == 0 ? "tma_dsb" : "tma_nuke"))
				d->node[1] = &tt[t]->nodes[i];
		}
		assert_non_null(d->node[0]);
		assert_non_null(d->node[1]);
		d->parent[0] = d->parent[1] = -1;
		for (unsigned r = 0; r < 11; r++) {
			last[t][2 * r] = t == 0 ? 0.5 : 0.25;
			last[t][2 * r + 1] = 0.125;
			slots[t][2 * r] = t == 0 ? 500 : 250;
			slots[t][2 * r + 1] = 125;
			ns[t][2 * r] = ns[t][2 * r + 1] = 1e9;
			base[t][r] = 1000;
		}
	}
	doc = document(s, "cpu", "3", NULL);
	jstr(doc, "tree.pmu", "cpu_core");
	jstr(doc, "trees.0.pmu", "cpu_core");
	jstr(doc, "trees.1.pmu", "cpu_atom");
	jint(doc, "trees.1.groups", 4);
	/* A CPU: its own core type's nodes, and no other tree's. */
	jreal(doc, "cpus.0.nodes.l1_bound", 0.5);
	jreal(doc, "cpus.0.nodes.dsb", 0.125);
	jreal(doc, "cpus.3.nodes.l1_bound", 0.25);
	jreal(doc, "cpus.3.nodes.nuke", 0.125);
	jabsent(doc, "cpus.3.nodes.dsb");
	jabsent(doc, "cpus.3.nodes_by_pmu");
	/* A package and the host: the first tree's, and each by PMU. */
	jreal(doc, "host.nodes.l1_bound", 0.5);
	jreal(doc, "host.nodes_by_pmu.cpu_core.nodes.l1_bound", 0.5);
	jreal(doc, "host.nodes_by_pmu.cpu_atom.nodes.l1_bound", 0.25);
	jint(doc, "host.nodes_by_pmu.cpu_atom.nodes_slots_total.nuke", 125);
	jint(doc, "packages.1.nodes_by_pmu.cpu_atom.nodes_base_slots_total", 1000);
	json_decref(doc);
	/* /metrics: the pmu label; CPU 3 in cpu_atom's tree only. */
	buf_init(&text);
	assert_int_equal(expo_render(s, &opt, EXPO_TEXT, &text), 0);
	buf_putc(&text, '\0');
	assert_non_null(strstr(text.data, "topdown_node_slots_total{cpu=\"3\",core=\"0\",package=\"1\",node=\"l1_bound\","
				"level=\"3\",parent=\"memory_bound\",pmu=\"cpu_atom\"} 250\n"));
	assert_non_null(strstr(text.data, "topdown_node_slots_total{cpu=\"0\",core=\"0\",package=\"0\",node=\"l1_bound\","
				"level=\"3\",parent=\"memory_bound\",pmu=\"cpu_core\"} 500\n"));
	assert_null(strstr(text.data, "topdown_node_slots_total{cpu=\"3\",core=\"0\",package=\"1\",node=\"l1_bound\","
			     "level=\"3\",parent=\"memory_bound\",pmu=\"cpu_core\"}"));
	assert_null(strstr(text.data, "topdown_node_slots_total{cpu=\"0\",core=\"0\",package=\"0\",node=\"nuke\""));
	assert_non_null(strstr(text.data, "topdown_node_base_slots_total{cpu=\"3\",core=\"0\",package=\"1\",pmu=\"cpu_atom\"} 1000\n"));
	assert_null(strstr(text.data, "topdown_node_base_slots_total{cpu=\"3\",core=\"0\",package=\"1\",pmu=\"cpu_core\"}"));
	buf_free(&text);
	free(f);
}

static void test_document_no_topdown(void **state)
{
	struct fixture *f = fixture_new();
	struct snapshot *s = &f->snap;
	json_t *doc;

	(void)state;
	s->pmus[0].pmu_name[0] = '\0';
	s->pmus[0].uarch[0] = '\0';
	s->pmus[0].model[0] = '\0';
	s->pmus[0].level = 0;
	strcpy(s->pmus[0].reason, "no TopDown: the cpu PMU has no slots event (a VM?)");
	s->level = 0;
	s->cats = 0;
	s->up = false;
	for (unsigned i = 0; i < s->n_cpus; i++) {
		memset(&s->cpus[i].c, 0, sizeof(s->cpus[i].c));
		s->cpus[i].state = CPU_STATE_UNSUPPORTED;
	}
	memset(s->cpus_by_state, 0, sizeof(s->cpus_by_state));
	s->cpus_by_state[CPU_STATE_UNSUPPORTED] = 5;
	snapshot_aggregate(s);
	doc = document(s, "cpu", NULL, NULL);
	assert_true(json_is_false(jhas(doc, "up")));
	jstr(doc, "pmu.name", "cpu");
	jnull(doc, "pmu.pmu_name");
	jnull(doc, "pmu.model");
	jint(doc, "pmu.level", 0);
	jstr(doc, "pmu.reason", "no TopDown: the cpu PMU has no slots event (a VM?)");
	jint(doc, "cpus_by_state.unsupported", 5);
	jint(doc, "host.slots", 0);
	jint(doc, "host.slots_total", 0);
	jnull(doc, "host.running_ratio");
	jnull(doc, "host.level1");
	jabsent(doc, "host.level2"); /* level 0 */
	jnull(doc, "host.bottleneck");
	jstr(doc, "cpus.0.state", "unsupported");
	json_decref(doc);

	s->n_pmus = 0;
	strcpy(s->reason, "no core PMU");
	doc = document(s, NULL, NULL, NULL);
	jnull(doc, "pmu.name");
	jint(doc, "pmu.level", 0);
	jstr(doc, "pmu.reason", "no core PMU");
	assert_int_equal(json_array_size(jhas(doc, "pmus")), 0);
	json_decref(doc);
	free(f);
}

/* Only retiring in the last interval: every level-1 field, no bottleneck. */
static void test_document_no_bottleneck(void **state)
{
	struct fixture *f = fixture_new();
	static const double l1[4] = { 500, 0, 0, 0 };
	static const double l2[8] = { 100, 400, 0, 0, 0, 0, 0, 0 };
	json_t *doc;

	(void)state;
	for (int i = 0; i < 4; i++)
		set_cpu(&f->cpus[i], l1, l2, 500, 1e9, 1e9);
	snapshot_aggregate(&f->snap);
	doc = document(&f->snap, NULL, NULL, NULL);
	jreal(doc, "host.level1.retiring", 1.0);
	jreal(doc, "host.level1.backend_bound", 0.0);
	jreal(doc, "host.level2.heavy_operations", 0.2);
	jnull(doc, "host.bottleneck");
	json_decref(doc);
	free(f);
}

/* ?scope=cgroup: the host, the attribution's state and each bucket, most
 * slots first. */
static void set_cgroup(struct snap_cgroup *cg, const char *name, const double l1[4], double slots)
{
	memset(cg, 0, sizeof(*cg));
	strcpy(cg->name, name);
	cg->c.cats = TD_CATSET_L1;
	cg->c.last[TD_C_SLOTS] = slots;
	cg->c.last[TD_C_ENABLED] = cg->c.last[TD_C_RUNNING] = 1e9;
	for (int i = 0; i < 4; i++)
		cg->c.last[TD_C_CAT + i] = l1[i];
	for (int i = 0; i < TD_C_COUNT; i++)
		cg->c.total[i] = cg->c.last[i] * 10;
}

static void test_document_cgroups(void **state)
{
	static const double web[4] = { 100, 0, 100, 200 }, other[4] = { 300, 100, 200, 400 };
	struct fixture *f = fixture_new();
	struct snapshot *s = &f->snap;
	struct snap_cgroup cg[2];
	struct api_query q;
	char err[256];
	json_t *doc;

	(void)state;
	/* Not enabled: the state says so, and there is no bucket. */
	doc = document(s, "cgroup", NULL, NULL);
	assert_true(json_is_false(jhas(doc, "cgroup_attribution.enabled")));
	assert_true(json_is_false(jhas(doc, "cgroup_attribution.attributing")));
	assert_int_equal(json_array_size(jhas(doc, "cgroups")), 0);
	jhas(doc, "host.slots");
	jabsent(doc, "packages");
	json_decref(doc);

	set_cgroup(&cg[0], "/system.slice/web.service", web, 400);
	set_cgroup(&cg[1], "other", other, 1000);
	s->cgroups = cg;
	s->n_cgroups = 2;
	s->cg.enabled = true;
	s->cg.attributing = true;
	s->cg.level = 1;
	strcpy(s->cg.trigger, "cgroup-switches");
	s->cg.tracked = 1;
	s->cg.dropped = 3;
	s->cg.switches = 1234;
	s->cg.bpf_seconds = 0.5;
	doc = document(s, "cgroup", NULL, NULL);
	assert_true(json_is_true(jhas(doc, "cgroup_attribution.attributing")));
	jstr(doc, "cgroup_attribution.trigger", "cgroup-switches");
	jnull(doc, "cgroup_attribution.reason");
	jint(doc, "cgroup_attribution.level", 1);
	jint(doc, "cgroup_attribution.tracked", 1);
	jint(doc, "cgroup_attribution.dropped", 3);
	jint(doc, "cgroup_attribution.switches", 1234);
	jreal(doc, "cgroup_attribution.bpf_seconds", 0.5);
	assert_int_equal(json_array_size(jhas(doc, "cgroups")), 2);
	jstr(doc, "cgroups.0.cgroup", "other");
	jint(doc, "cgroups.0.slots", 1000);
	jint(doc, "cgroups.0.slots_total", 10000);
	jreal(doc, "cgroups.0.level1.backend_bound", 0.4);
	jstr(doc, "cgroups.1.cgroup", "/system.slice/web.service");
	jint(doc, "cgroups.1.slots", 400);
	jreal(doc, "cgroups.1.level1.backend_bound", 0.5);
	jreal(doc, "cgroups.1.level1.bad_speculation", 0);
	jint(doc, "cgroups.1.level1_slots_total.retiring", 1000);
	/* Level 1 per cgroup ([cgroups] level = 1) even when ?level=2. */
	jabsent(doc, "cgroups.1.level2");
	jstr(doc, "cgroups.1.bottleneck", "backend_bound");
	jabsent(doc, "cpus");
	json_decref(doc);

	/* A name that is not UTF-8 (a tenant's mkdir) is there, its bytes
	 * written as the text \xNN, as /metrics writes them: jansson alone
	 * would refuse it and leave the key out. */
	set_cgroup(&cg[0], "/t/a\xff" "b\x1b", web, 400);
	doc = document(s, "cgroup", NULL, NULL);
	jstr(doc, "cgroups.1.cgroup", "/t/a\\xffb\\x1b");
	json_decref(doc);
	set_cgroup(&cg[0], "/system.slice/web.service", web, 400);

	/* Stopped by the guard: the reason, no bucket. */
	s->cg.attributing = false;
	strcpy(s->cg.reason, "per-cgroup attribution stopped: it cost 2.00% of each CPU");
	s->n_cgroups = 0;
	doc = document(s, "cgroup", NULL, NULL);
	jstr(doc, "cgroup_attribution.reason", "per-cgroup attribution stopped: it cost 2.00% of each CPU");
	assert_int_equal(json_array_size(jhas(doc, "cgroups")), 0);
	json_decref(doc);

	/* The history keeps no cgroups. */
	assert_int_equal(api_parse_query("cgroup", NULL, NULL, "5m", &q, err, sizeof(err)), 0);
	assert_true(q.cgroups);
	assert_int_equal(api_check_query(s, &q, 900 * 1000000000ULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "window covers scope=host and scope=package (the history keeps no cgroups); "
			    "difference the slots of two scope=cgroup requests");
	s->cgroups = NULL;
	free(f);
}

static void test_dump(void **state)
{
	struct fixture *f = fixture_new();
	json_t *doc, *back;
	json_error_t jerr;
	char *text;

	(void)state;
	f->snap.host.total[TD_C_SLOTS] = 1.5e19; /* beyond int64: a real */
	doc = document(&f->snap, "cpu", NULL, NULL);
	jreal(doc, "host.slots_total", 1.5e19);

	text = api_dump(doc, false);
	assert_non_null(text);
	/* Compact, in insertion order, timestamp to the millisecond. */
	assert_memory_equal(text, "{\"api_version\":\"1.11\",\"version\":\"9.8.7\",\"hostname\":\"node1\",\"timestamp\":1700000000.123,",
			    strlen("{\"api_version\":\"1.11\",\"version\":\"9.8.7\",\"hostname\":\"node1\",\"timestamp\":1700000000.123,"));
	assert_non_null(strstr(text, "\"interval_seconds\":2.5,"));
	assert_non_null(strstr(text, "\"retiring\":0.333333,"));
	assert_null(strchr(text, '\n'));
	back = json_loads(text, 0, &jerr);
	if (!back)
		fail_msg("json_loads: %s at %d: %s", jerr.text, jerr.position, text);
	assert_true(json_equal(doc, back));
	json_decref(back);
	free(text);

	text = api_dump(doc, true);
	assert_non_null(text);
	assert_non_null(strstr(text, "\n  \"hostname\": \"node1\",\n"));
	back = json_loads(text, 0, &jerr);
	if (!back)
		fail_msg("json_loads: %s at %d", jerr.text, jerr.position);
	assert_true(json_equal(doc, back));
	json_decref(back);
	free(text);
	json_decref(doc);
	free(f);
}

/* ---- the metric families and the document carry the same figures ---- */

#define PATHS_MAX 512

struct paths {
	char *p[PATHS_MAX];
	unsigned n;
};

static void paths_add(struct paths *ps, const char *path)
{
	for (unsigned i = 0; i < ps->n; i++)
		if (strcmp(ps->p[i], path) == 0)
			return;
	assert_true(ps->n < PATHS_MAX);
	ps->p[ps->n++] = strdup(path);
}

static void paths_free(struct paths *ps)
{
	for (unsigned i = 0; i < ps->n; i++)
		free(ps->p[i]);
	ps->n = 0;
}

/* Every leaf of @j as a path of keys, "[]" for an array's elements. */
static void leaves(json_t *j, const char *path, struct paths *out)
{
	char sub[256];
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_object(j) && json_object_size(j)) {
		json_object_foreach(j, key, v) {
			snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", key);
			leaves(v, sub, out);
		}
	} else if (json_is_array(j) && json_array_size(j) && json_is_object(json_array_get(j, 0))) {
		snprintf(sub, sizeof(sub), "%s[]", path);
		json_array_foreach(j, i, v)
			leaves(v, sub, out);
	} else {
		paths_add(out, path);
	}
}

/* "*.slots_total" for each entity; the others as they are. */
static void expand(const char *paths, struct paths *out)
{
	static const char *const entities[] = { "host", "packages[]", "cores[]", "cpus[]" };
	char buf[512], *save = NULL, one[256];

	snprintf(buf, sizeof(buf), "%s", paths);
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (strncmp(tok, "*.", 2) != 0) {
			paths_add(out, tok);
			continue;
		}
		for (size_t e = 0; e < sizeof(entities) / sizeof(entities[0]); e++) {
			snprintf(one, sizeof(one), "%s%s", entities[e], tok + 1);
			paths_add(out, one);
		}
	}
}

/* @prefix is @path or names an object above it. */
static bool covers(const char *prefix, const char *path)
{
	size_t n = strlen(prefix);

	return strncmp(prefix, path, n) == 0 && (path[n] == '\0' || path[n] == '.');
}

static bool any_covers(const struct paths *prefixes, const char *path)
{
	for (unsigned i = 0; i < prefixes->n; i++)
		if (covers(prefixes->p[i], path))
			return true;
	return false;
}

/* A word of a space-separated list. */
static bool has_word(const char *list, const char *word, size_t len)
{
	for (const char *p = list + strspn(list, " "); *p; p += strspn(p, " ")) {
		size_t n = strcspn(p, " ");

		if (n == len && strncmp(p, word, len) == 0)
			return true;
		p += n;
	}
	return false;
}

/* Each sample's labels are its family's (ENTITY: the cpu granularity's). */
static void labels_declared(const char *text)
{
	for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
		const char *brace = strchr(line, '{'), *end = strchr(line, '\n');
		const struct metric *m = NULL;

		if (line[0] == '#')
			continue;
		for (int id = 0; id < MET_COUNT; id++) {
			size_t n = strlen(metric_get(id)->name);

			if (strncmp(line, metric_get(id)->name, n) == 0 && (line[n] == '{' || line[n] == ' '))
				m = metric_get(id);
		}
		if (!m)
			fail_msg("a sample of no declared family: %.*s", (int)(end - line), line);
		if (!brace || brace > end)
			continue;
		for (const char *l = brace + 1; *l != '}';) {
			size_t n = strcspn(l, "=");
			bool entity = has_word(m->labels, "ENTITY", 6) && has_word("cpu core package", l, n);

			if (!entity && !has_word(m->labels, l, n))
				fail_msg("%s: label %.*s is not declared (\"%s\")", m->name, (int)n, l, m->labels);
			l = strchr(l + n + 2, '"') + 1; /* past ="value" (no quote inside here) */
			if (*l == ',')
				l++;
		}
	}
}

static void test_metric_sets(void **state)
{
	static const double web[4] = { 100, 0, 100, 200 };
	static const double l2[8] = { 10, 90, 0, 0, 50, 50, 100, 100 };
	struct fixture *f = fixture_new();
	struct snapshot *s = &f->snap;
	struct snap_cgroup cg[2];
	struct expo_options opt = { .granularity = GRAN_CPU, .ratios = true,
				    .version = "9.8.7", .revision = "abc" };
	struct expo_http http = { .auth = true, .connections = 2 };
	struct procstat proc = { .valid = true, .max_fds = 1024, .start_time = 1.7e9 };
	struct history_sample then;
	struct paths families = { .n = 0 }, declared = { .n = 0 }, json_only = { .n = 0 },
		     doc_leaves = { .n = 0 };
	static const char *const scopes[] = { NULL, "package", "core", "cpu", "cgroup" };
	struct api_query q;
	char err[256];
	struct buf text;
	json_t *doc;

	(void)state;
	/* Everything a family can show: attribution with a level-2 bucket,
	 * a PMU with a reason, HTTP with authentication, the process. */
	set_cgroup(&cg[0], "/kubepods/besteffort/pod0b7a3c1e-5d2f-4e8a-9c6b-1f2e3d4c5b6a/3f9c", web, 400);
	strcpy(cg[0].pod_uid, "0b7a3c1e-5d2f-4e8a-9c6b-1f2e3d4c5b6a");
	strcpy(cg[0].container_id, "3f9c");
	cg[0].qos_class = "BestEffort";
	cg[0].c.cats = TD_CATSET_L1 | TD_CATSET_L2_INTEL;
	for (int i = 0; i < 8; i++)
		cg[0].c.total[TD_C_CAT + TD_CAT_HEAVY_OPERATIONS + i] = l2[i];
	set_cgroup(&cg[1], "other", web, 100);
	s->cgroups = cg;
	s->n_cgroups = 2;
	s->cg.enabled = s->cg.attributing = true;
	s->cg.level = 2;
	strcpy(s->pmus[0].reason, "level 2 multiplexed");
	/* Two of perf's nodes below level 2, in every row. */
	{
		static double last[11 * 2], slots[11 * 2], ns[11 * 2], base[11];
		const struct dt_table *t = depth_table_of("sapphirerapids", "cpu");

		assert_non_null(t);
		s->n_deep = 1;
		s->deep[0] = (struct snap_deep){ .n_nodes = 2, .level = 3, .n_groups = 11, .source = t->source,
					      .rows = 11, .last = last, .slots_total = slots,
					      .measured_ns_total = ns, .row_slots_total = base,
					      .cap = 22, .row_cap = 11 };
		strcpy(s->deep[0].pmu, "cpu");
		strcpy(s->deep[0].reason, "4 nodes left out");
		s->deep[0].drilldown = true;
		s->deep[0].host_drill = "tma_memory_bound";
		f->pkgs[0].drill[0] = "tma_memory_bound";
		for (unsigned i = 0; i < t->n_nodes; i++)
			if (!strcmp(t->nodes[i].name, "tma_l1_bound") || !strcmp(t->nodes[i].name, "tma_l2_bound"))
				s->deep[0].node[t->nodes[i].name[5] == '1' ? 0 : 1] = &t->nodes[i];
		s->deep[0].parent[0] = s->deep[0].parent[1] = -1;
		for (unsigned r = 0; r < 11; r++) {
			last[2 * r] = 0.1;
			last[2 * r + 1] = r == 3 ? NAN : 0.05;
			slots[2 * r] = 100;
			slots[2 * r + 1] = 50;
			ns[2 * r] = ns[2 * r + 1] = 2e9;
			base[r] = 1000;
		}
	}
	/* The SMT split of core 0, package 0 and the host. */
	s->smt_on = true;
	strcpy(s->smt_method, "CPU_CLK_UNHALTED.REF_TSC, CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE, CPU_CLK_UNHALTED.REF_DISTRIBUTED");
	strcpy(s->smt_reason, "2 of 3 cores with two threads split in the last interval");
	f->cores[0].smt = (struct snap_smt){ .total = { 1, 2, 3, 4 }, .last = { 0.1, 0.2, 0.3, 0.4 },
					     .valid = true, .ever = true, .cores = 1 };
	f->pkgs[0].smt = f->cores[0].smt;
	s->smt_host = f->cores[0].smt;
	/* perf's SMT mode metrics of CPU 0, its core, package and the host. */
	s->mode_on = true;
	strcpy(s->mode_method, "cpu_cycles_in_st_mode, cpu_cycles_in_smt_mode (t410/metrics.json), from CPU_SLOT and CPU_CYCLES");
	f->cpus[0].mode = (struct snap_mode){ .fraction = 0.6, .last = { 60, 40 },
					      .total = { 600, 400 }, .valid = true, .ever = true };
	f->cores[0].mode = f->pkgs[0].mode = s->mode_host = f->cpus[0].mode;
	http.requests[EXPO_EP_METRICS][expo_http_code_index(200)] = 1;
	opt.http = &http;
	opt.proc = &proc;

	/* The families /metrics shows: every declared one. */
	buf_init(&text);
	assert_int_equal(expo_render(s, &opt, EXPO_TEXT, &text), 0);
	buf_putc(&text, '\0');
	for (const char *l = text.data; (l = strstr(l, "# TYPE ")); l++) {
		char name[128];

		assert_int_equal(sscanf(l, "# TYPE %127s", name), 1);
		paths_add(&families, name);
	}
	for (int id = 0; id < MET_COUNT; id++) {
		bool found = false;

		for (unsigned i = 0; i < families.n; i++)
			found |= strcmp(families.p[i], metric_get(id)->name) == 0;
		if (!found)
			fail_msg("%s is declared but /metrics does not show it", metric_get(id)->name);
	}
	assert_int_equal(families.n, MET_COUNT);
	labels_declared(text.data);
	/* A pod's container: the labels Prometheus joins on, in both. */
	assert_non_null(strstr(text.data, "topdown_cgroup_slots_total{cgroup=\"/kubepods/besteffort/"
				"pod0b7a3c1e-5d2f-4e8a-9c6b-1f2e3d4c5b6a/3f9c\",pod_uid=\"0b7a3c1e-5d2f-"
				"4e8a-9c6b-1f2e3d4c5b6a\",container_id=\"3f9c\",qos_class=\"BestEffort\"} 4000\n"));
	assert_non_null(strstr(text.data, "topdown_cgroup_slots_total{cgroup=\"other\"} 1000\n"));
	buf_free(&text);
	doc = document(s, "cgroup", NULL, NULL);
	jstr(doc, "cgroups.0.pod_uid", "0b7a3c1e-5d2f-4e8a-9c6b-1f2e3d4c5b6a");
	jstr(doc, "cgroups.0.container_id", "3f9c");
	jstr(doc, "cgroups.0.qos_class", "BestEffort");
	json_decref(doc);

	/* Every field of the document, at every scope, with a window and a
	 * cpu= selection. */
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		doc = document(s, scopes[i], NULL, i == 3 ? "0-1" : NULL);
		leaves(doc, "", &doc_leaves);
		json_decref(doc);
	}
	memset(&then, 0, sizeof(then));
	then.mono = snapshot_mono_s(s) - 60;
	assert_int_equal(api_parse_query(NULL, NULL, NULL, "1m", &q, err, sizeof(err)), 0);
	doc = api_document(s, &q, &then, "node1", "9.8.7");
	assert_non_null(doc);
	leaves(doc, "", &doc_leaves);
	json_decref(doc);

	/* Where the declarations say the document carries a family, it does. */
	for (int id = 0; id < MET_COUNT; id++) {
		const struct metric *m = metric_get(id);
		struct paths one = { .n = 0 };

		if (!m->json) {
			if (!m->json_absent || !m->json_absent[0])
				fail_msg("%s: neither in the document nor saying why not", m->name);
			continue;
		}
		expand(m->json, &one);
		for (unsigned i = 0; i < one.n; i++) {
			bool found = false;

			for (unsigned k = 0; k < doc_leaves.n && !found; k++)
				found = covers(one.p[i], doc_leaves.p[k]);
			if (!found)
				fail_msg("%s: the document has no %s", m->name, one.p[i]);
			paths_add(&declared, one.p[i]);
		}
		paths_free(&one);
	}
	for (size_t i = 0; i < metric_json_only_count; i++) {
		bool found = false;

		expand(metric_json_only[i].path, &json_only);
		for (unsigned k = 0; k < doc_leaves.n && !found; k++)
			found = strncmp(metric_json_only[i].path, "*.", 2) == 0 ||
				covers(metric_json_only[i].path, doc_leaves.p[k]);
		if (!found)
			fail_msg("metric_json_only lists %s, which the document does not have",
				 metric_json_only[i].path);
	}
	/* And every field of the document is a family's, or says why not. */
	for (unsigned k = 0; k < doc_leaves.n; k++)
		if (!any_covers(&declared, doc_leaves.p[k]) && !any_covers(&json_only, doc_leaves.p[k]))
			fail_msg("the document's %s is no family's: declare it in metric.c "
				 "(or list it in metric_json_only with the reason)", doc_leaves.p[k]);
	paths_free(&families);
	paths_free(&declared);
	paths_free(&json_only);
	paths_free(&doc_leaves);
	s->cgroups = NULL;
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_defaults),
		cmocka_unit_test(test_query_valid),
		cmocka_unit_test(test_query_errors),
		cmocka_unit_test(test_document_host),
		cmocka_unit_test(test_document_scopes),
		cmocka_unit_test(test_document_smt),
		cmocka_unit_test(test_document_smt_mode),
		cmocka_unit_test(test_document_levels),
		cmocka_unit_test(test_document_cpu_filter),
		cmocka_unit_test(test_check_query),
		cmocka_unit_test(test_document_window),
		cmocka_unit_test(test_document_window_nodes),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_document_no_topdown),
		cmocka_unit_test(test_document_no_bottleneck),
		cmocka_unit_test(test_document_cgroups),
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_document_hybrid_trees),
		cmocka_unit_test(test_metric_sets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
