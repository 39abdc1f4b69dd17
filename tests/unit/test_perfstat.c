/* SPDX-License-Identifier: MIT */
/* Unit tests of perfstat: perf stat -j's lines, as perf 6.1 (Debian's
 * linux-perf 6.1.192) printed them under the fake PMU, quirks included. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perfstat.h"

static int parse(const char *line, struct perfstat_rec *out, size_t max)
{
	return perfstat_parse_line(line, strlen(line), out, max);
}

static void test_cpu_counter_and_metric(void **state)
{
	struct perfstat_rec r[4];
	const char *line = "{\"interval\" : 0.500563358, \"cpu\" : \"2\", \"counter-value\" : \"6011068128.000000\", "
			   "\"unit\" : \"\", \"event\" : \"TOPDOWN.SLOTS\", \"event-runtime\" : 126143773, "
			   "\"pcnt-running\" : 25.00, \"metric-value\" : 14.901961, \"metric-unit\" : \"%  tma_backend_bound\"}";

	(void)state;
	assert_int_equal(parse(line, r, 4), 1);
	assert_true(r[0].interval == 0.500563358);
	assert_int_equal(r[0].aggr, PERFSTAT_CPU);
	assert_int_equal(r[0].cpu, 2);
	assert_true(r[0].has_count);
	assert_true(r[0].count == 6011068128.0);
	assert_string_equal(r[0].event, "TOPDOWN.SLOTS");
	assert_true(r[0].running == 0.25);
	assert_true(r[0].has_metric);
	assert_true(r[0].metric == 14.901961);
	assert_string_equal(r[0].unit, "%  tma_backend_bound");
}

/* perf 6.1 glues a second metric pair after the object's brace. */
static void test_glued_pair(void **state)
{
	struct perfstat_rec r[4];
	const char *line = "{\"interval\" : 0.300458154, \"core\" : \"S0-D0-C1\", \"aggregate-number\" : 2, "
			   "\"counter-value\" : \"212477512.000000\", \"unit\" : \"\", \"event\" : \"topdown-br-mispredict\", "
			   "\"event-runtime\" : 145795301, \"pcnt-running\" : 24.00, \"metric-value\" : 5.881961, "
			   "\"metric-unit\" : \"Branch Mispredict\"}\"metric-value\" : 3.921960, \"metric-unit\" : \"Machine Clears\"}";

	(void)state;
	assert_int_equal(parse(line, r, 4), 2);
	assert_int_equal(r[0].aggr, PERFSTAT_CORE);
	assert_int_equal(r[0].socket, 0);
	assert_int_equal(r[0].die, 0);
	assert_int_equal(r[0].core, 1);
	assert_true(r[0].has_count && r[0].has_metric);
	assert_true(r[1].interval == 0.300458154);
	assert_int_equal(r[1].aggr, PERFSTAT_CORE);
	assert_int_equal(r[1].core, 1);
	assert_false(r[1].has_count);
	assert_true(r[1].has_metric);
	assert_true(r[1].metric == 3.921960);
	assert_string_equal(r[1].unit, "Machine Clears");
	assert_int_equal(parse(line, r, 1), -ENOBUFS);
}

static void test_nan_socket_host(void **state)
{
	struct perfstat_rec r[2];

	(void)state;
	assert_int_equal(parse("{\"interval\" : 0.5, \"cpu\" : \"0\", \"metric-value\" : nan, "
			       "\"metric-unit\" : \"%  tma_machine_clears\"}", r, 2), 1);
	assert_true(isnan(r[0].metric));
	assert_false(r[0].has_count);
	assert_int_equal(parse("{\"interval\" : 0.5, \"socket\" : \"S1\", \"aggregate-number\" : 8, "
			       "\"metric-value\" : -nan, \"metric-unit\" : \"\"}", r, 2), 1);
	assert_int_equal(r[0].aggr, PERFSTAT_SOCKET);
	assert_int_equal(r[0].socket, 1);
	assert_true(isnan(r[0].metric));
	assert_int_equal(parse("{\"interval\" : 1.000645765, \"counter-value\" : \"<not counted>\", \"unit\" : \"\", "
			       "\"event\" : \"TOPDOWN.SLOTS\", \"event-runtime\" : 0, \"pcnt-running\" : 0.00}", r, 2), 1);
	assert_int_equal(r[0].aggr, PERFSTAT_HOST);
	assert_true(r[0].has_count);
	assert_true(isnan(r[0].count));
	assert_true(r[0].running == 0);
	/* Later perf quotes the metric's value. */
	assert_int_equal(parse("{\"interval\" : 2, \"metric-value\" : \"12.5\", \"metric-unit\" : \"%  x\"}", r, 2), 1);
	assert_true(r[0].metric == 12.5);
}

static void test_not_records(void **state)
{
	struct perfstat_rec r[2];

	(void)state;
	assert_int_equal(parse("", r, 2), 0);
	assert_int_equal(parse("Invalid CPUID GenuineIntel-6-8F. Full CPUID is required", r, 2), 0);
	assert_int_equal(parse("{\"interval\" : 0.5, \"cpu\" : 3, \"metric-value\" : 1}", r, 2), -EINVAL);
	assert_int_equal(parse("{\"interval\" : 0.5, \"core\" : \"S0-C1\", \"metric-value\" : 1}", r, 2), -EINVAL);
	assert_int_equal(parse("{\"interval\" : 0.5, \"socket\" : \"S-1\", \"metric-value\" : 1}", r, 2), -EINVAL);
	assert_int_equal(parse("{\"interval\" : 0.5, \"metric-value\" : 0x10}", r, 2), -EINVAL);
	assert_int_equal(parse("{\"interval\" : 0.5}", r, 2), -EINVAL);
	assert_int_equal(parse("{\"interval\" : 0.5, \"metric-value\" : 1", r, 2), -EINVAL);
	assert_int_equal(parse("{\"interval\" : 0.5, \"event\" : \"x", r, 2), -EINVAL);
	assert_int_equal(parse("{\"interval\" : 0.5, \"metric-value\" : 1} trailing", r, 2), -EINVAL);
}

static void test_metric_name(void **state)
{
	char name[64];

	(void)state;
	perfstat_metric_name("%  tma_retiring", name, sizeof(name));
	assert_string_equal(name, "tma_retiring");
	perfstat_metric_name("percent of slots  frontend_bound", name, sizeof(name));
	assert_string_equal(name, "frontend_bound");
	perfstat_metric_name("(null)", name, sizeof(name));
	assert_string_equal(name, "");
	perfstat_metric_name("", name, sizeof(name));
	assert_string_equal(name, "");
	perfstat_metric_name("%", name, sizeof(name));
	assert_string_equal(name, "");
	perfstat_metric_name("%  tma_retiring", name, 5);
	assert_string_equal(name, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_counter_and_metric),
		cmocka_unit_test(test_glued_pair),
		cmocka_unit_test(test_nan_socket_host),
		cmocka_unit_test(test_not_records),
		cmocka_unit_test(test_metric_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
