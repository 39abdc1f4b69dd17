/* SPDX-License-Identifier: MIT */
/* Unit tests of page: the live page rendered from hand-made JSON
 * documents: the bars' positions and widths, level 2 under its parent, the
 * bottleneck in words, escaping, the heatmap's category and its fallback,
 * the history's areas with a gap, and the policy's hashes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "page.h"

/* Host and two packages (package 1 counted nothing yet), two cores of
 * package 0, the second one without level 2. */
static const char now_doc[] =
	"{\"hostname\": \"<b>&\\\"'\", \"version\": \"0.1.0\", \"timestamp\": 1795435694.823,"
	" \"interval_seconds\": 1, \"intervals\": 7,"
	" \"pmus\": [{\"name\": \"cpu\", \"uarch\": \"sapphirerapids\", \"level\": 2, \"model\": \"perf\"}],"
	" \"cpus_by_state\": {\"monitored\": 3, \"failed\": 1, \"offline\": 0, \"unsupported\": 0},"
	" \"host\": {\"running_ratio\": 0.5, \"cpus_expected\": 4, \"cpus_measured\": 3,"
	"   \"level1\": {\"retiring\": 0.25, \"bad_speculation\": 0.05, \"frontend_bound\": 0.2, \"backend_bound\": 0.5},"
	"   \"level2\": {\"heavy_operations\": 0.05, \"light_operations\": 0.2, \"memory_bound\": 0.38, \"core_bound\": 0.12},"
	"   \"level2_by_parent\": {\"retiring\": {\"heavy_operations\": 0.05, \"light_operations\": 0.2},"
	"                        \"backend_bound\": {\"memory_bound\": 0.38, \"core_bound\": 0.12}},"
	"   \"bottleneck\": \"backend_bound.memory_bound\","
	"   \"smt\": {\"last\": {\"neither\": 0.1, \"first_only\": 0.2, \"second_only\": 0.1, \"both\": 0.6}, \"cores\": 1}},"
	" \"packages\": [{\"package\": 0, \"running_ratio\": 1, \"level1\": {\"retiring\": 1}, \"bottleneck\": null},"
	"              {\"package\": 1, \"running_ratio\": null, \"level1\": null, \"bottleneck\": null}],"
	" \"cores\": [{\"core\": 0, \"package\": 0, \"cpus\": [0, 8], \"level1\": {\"backend_bound\": 0.625},"
	"             \"level2\": {\"memory_bound\": 0.5},"
	"             \"smt\": {\"last\": {\"neither\": 0, \"first_only\": 0.25, \"second_only\": 0, \"both\": 0.75}}},"
	"            {\"core\": 1, \"package\": 0, \"cpus\": [1], \"level1\": {\"backend_bound\": 0.25}}]}";

/* Three steps of the host: the middle one counted nothing. */
static const char history_doc[] =
	"{\"categories\": [{\"name\": \"retiring\", \"level\": 1}, {\"name\": \"backend_bound\", \"level\": 1},"
	"                 {\"name\": \"memory_bound\", \"level\": 2}],"
	" \"samples\": ["
	"  {\"start\": 1795435664.823, \"end\": 1795435674.823, \"host\": {\"level1\": {\"retiring\": 0.25, \"backend_bound\": 0.75}}, \"packages\": {}},"
	"  {\"start\": 1795435674.823, \"end\": 1795435684.823, \"host\": {\"level1\": null}, \"packages\": {}},"
	"  {\"start\": 1795435684.823, \"end\": 1795435694.823, \"host\": {\"level1\": {\"retiring\": 0.5, \"backend_bound\": 0.5}}, \"packages\": {}}]}";

/* Two of the server's links, one that needs escaping. */
static const struct page_link links[] = {
	{ "metrics", "/metrics" },
	{ "api/v1/topdown?scope=core&level=2", "/api/v1/topdown" },
};

static char *render(const char *heat)
{
	json_t *now = json_loads(now_doc, 0, NULL), *hist = json_loads(history_doc, 0, NULL);
	struct buf b;
	size_t len;
	char *text;

	assert_non_null(now);
	assert_non_null(hist);
	buf_init(&b);
	page_live(&b, now, hist, heat, 100, "abc", links, sizeof(links) / sizeof(links[0]));
	assert_false(buf_failed(&b));
	text = buf_steal(&b, &len);
	buf_free(&b);
	json_decref(now);
	json_decref(hist);
	return text;
}

static void has(const char *page, const char *what)
{
	if (!strstr(page, what))
		fail_msg("the page lacks %s", what);
}

static void test_tree(void **state)
{
	char *p = render(NULL);

	(void)state;
	/* Level 1 one after the other, level 2 from its parent's start. */
	has(p, "<div class=\"entity\" id=\"e-host\"><h3>host</h3>\n<p class=\"bneck\">Bottleneck: "
	       "<b>backend bound \xe2\x86\x92 memory bound, 38.0 %</b></p>");
	has(p, "<rect class=\"c-retiring\" data-cat=\"retiring\" x=\"0.000\" y=\"0\" width=\"25.000\" "
	       "height=\"1\"><title>retiring 25.0 %</title></rect>");
	has(p, "<rect class=\"c-light_operations l2 k1\" data-cat=\"light_operations\" x=\"5.000\" y=\"1.1\" "
	       "width=\"20.000\"");
	has(p, "<rect class=\"c-backend_bound\" data-cat=\"backend_bound\" x=\"50.000\" y=\"0\" width=\"50.000\"");
	has(p, "<rect class=\"c-memory_bound l2 k0\" data-cat=\"memory_bound\" x=\"50.000\" y=\"1.1\" width=\"38.000\"");
	has(p, "<rect class=\"c-core_bound l2 k1\" data-cat=\"core_bound\" x=\"88.000\" y=\"1.1\" width=\"12.000\"");
	/* The bottleneck's rows in bold, running time in words. */
	has(p, "<tr class=\"l1 top\"><td><i class=\"sw c-backend_bound l1 k0\"></i>backend bound</td><td class=\"v\">50.0 %</td></tr>");
	has(p, "<tr class=\"l2 top\"><td><i class=\"sw c-memory_bound l2 k0\"></i>memory bound</td>");
	has(p, "<p class=\"state warn\">Counters running 50.0 % of the time: they are shared with another "
	       "user of the PMU (perf, another topdownd) or rotate among groups");
	/* The figures are over the CPUs measured: said when not all were. */
	has(p, "<p class=\"state\" id=\"cpus\">3 of 4 CPUs monitored, 1 failed; the figures are over 3 of 4 CPUs.</p>");
	/* A package without slots: no bars, said so. */
	has(p, "<div class=\"entity\" id=\"e-package-1\"><h3>package 1</h3>\n<p class=\"bneck\">Bottleneck: "
	       "<b>none (no slots counted)</b></p>\n</div>");
	has(p, "<span class=\"when\" id=\"when\">interval 7, 2026-11-23 12:08:14 UTC</span>");
	free(p);
}

static void test_escaping(void **state)
{
	char *p = render(NULL);

	(void)state;
	has(p, "<title>topdownd on &lt;b&gt;&amp;&quot;&#39;</title>");
	/* The footer: the links given, in order, escaped. */
	has(p, "<footer><a href=\"metrics\">/metrics</a>"
	       "<a href=\"api/v1/topdown?scope=core&amp;level=2\">/api/v1/topdown</a></footer>");
	assert_null(strstr(p, "<b>&\"'"));
	free(p);
}

static void test_heatmap(void **state)
{
	char *p = render("memory_bound");

	(void)state;
	has(p, "<option value=\"memory_bound\" selected>");
	has(p, "<rect class=\"c-memory_bound\" data-core=\"0\" x=\"0\" y=\"0\" width=\"10\" height=\"10\" "
	       "fill-opacity=\"0.500\"><title>core 0 (CPUs 0, 8): memory bound 50.0 %</title></rect>"
	       "<text x=\"5\" y=\"5\">50</text>");
	/* A core without the category. */
	has(p, "<rect class=\"c-memory_bound\" data-core=\"1\" x=\"11\" y=\"0\" width=\"10\" height=\"10\" "
	       "fill-opacity=\"0.000\"><title>core 1 (CPU 1): memory bound not counted</title></rect>"
	       "<text x=\"16\" y=\"5\">-</text>");
	has(p, "<body data-interval=\"1\" data-history=\"100\" data-heat=\"memory_bound\">");
	free(p);
	/* Not collected here (an AMD category): the host's bottleneck. */
	p = render("smt_contention");
	has(p, "data-heat=\"backend_bound\"");
	has(p, "<rect class=\"c-backend_bound\" data-core=\"0\" x=\"0\" y=\"0\" width=\"10\" height=\"10\" "
	       "fill-opacity=\"0.625\">");
	free(p);
	/* Which threads ran (the SMT split): its own heatmap, a core of one
	 * thread not counted. */
	p = render("smt_both");
	has(p, "<option value=\"smt_both\" selected>both threads running (SMT)</option>");
	has(p, "data-heat=\"smt_both\"");
	has(p, "<rect class=\"c-smt_both\" data-core=\"0\" x=\"0\" y=\"0\" width=\"10\" height=\"10\" "
	       "fill-opacity=\"0.750\"><title>core 0 (CPUs 0, 8): both threads running 75.0 %</title></rect>"
	       "<text x=\"5\" y=\"5\">75</text>");
	has(p, "<rect class=\"c-smt_both\" data-core=\"1\" x=\"11\" y=\"0\" width=\"10\" height=\"10\" "
	       "fill-opacity=\"0.000\"><title>core 1 (CPU 1): both threads running not counted</title></rect>");
	free(p);
	assert_true(page_heat_known("smt_both"));
	assert_true(page_heat_known("memory_bound"));
	assert_true(page_heat_known("smt_contention"));
	assert_false(page_heat_known("memory"));
	assert_false(page_heat_known(""));
}

static void test_history(void **state)
{
	char *p = render(NULL);

	(void)state;
	/* 100 s shown in 1000 units: the steps end 20 s and 0 s before now.
	 * backend_bound tops the stack (drawn first), up to 1; retiring
	 * below.  The empty step breaks both areas. */
	has(p, "<path class=\"c-backend_bound\" data-cat=\"backend_bound\" "
	       "d=\"M700.0 100L700.0 0.0L800.0 0.0L800.0 100ZM900.0 100L900.0 0.0L1000.0 0.0L1000.0 100Z\"/>");
	has(p, "<path class=\"c-retiring\" data-cat=\"retiring\" "
	       "d=\"M700.0 100L700.0 75.0L800.0 75.0L800.0 100ZM900.0 100L900.0 50.0L1000.0 50.0L1000.0 100Z\"/>");
	has(p, "<h2>Level 1 over the last 1.7 minutes</h2>");
	free(p);
}

static void test_csp(void **state)
{
	unsigned char digest[32];
	gnutls_datum_t in = { digest, sizeof(digest) }, b64 = { NULL, 0 };
	char want[128];

	(void)state;
	assert_int_equal(gnutls_hash_fast(GNUTLS_DIG_SHA256, page_script, strlen(page_script), digest), 0);
	assert_int_equal(gnutls_base64_encode2(&in, &b64), 0);
	snprintf(want, sizeof(want), "script-src 'sha256-%.*s';", (int)b64.size, (char *)b64.data);
	gnutls_free(b64.data);
	has(page_csp(), want);
	assert_non_null(strstr(page_csp(), "default-src 'none'; style-src 'sha256-"));
	assert_non_null(strstr(page_csp(), "connect-src 'self'"));
	/* The page carries exactly the style and script hashed. */
	{
		char *p = render(NULL);
		char *s = strstr(p, "<script>");

		assert_non_null(s);
		assert_memory_equal(s + 8, page_script, strlen(page_script));
		assert_string_equal(s + 8 + strlen(page_script), "</script>\n</body></html>\n");
		free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_heatmap),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_csp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
