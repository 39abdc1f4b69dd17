/* SPDX-License-Identifier: MIT */
/* page: the live page (/), rendered from the JSON API's documents.  The
 * script (page.js) draws the same markup from the same documents: a change
 * to one is a change to the other. */
#include "page.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "topdown.h"
#include "page_assets.h" /* generated from page.css and page.js */

/* Heatmap cells per row, and the history's drawing box. */
#define HEAT_COLUMNS 16
#define HIST_W 1000.0
#define HIST_H 100.0

static void put_html(struct buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			buf_puts(b, "&lt;");
			break;
		case '>':
			buf_puts(b, "&gt;");
			break;
		case '&':
			buf_puts(b, "&amp;");
			break;
		case '"':
			buf_puts(b, "&quot;");
			break;
		case '\'':
			buf_puts(b, "&#39;");
			break;
		default:
			buf_putc(b, *s);
		}
	}
}

/* "memory_bound" as "memory bound". */
static void put_words(struct buf *b, const char *name)
{
	for (; *name; name++)
		buf_putc(b, *name == '_' ? ' ' : *name);
}

static void put_pct(struct buf *b, double v)
{
	buf_printf(b, "%.1f %%", 100.0 * v);
}

static const char *str_of(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "";
}

/* The heatmap of "both threads running" (the SMT split, issue 43): its
 * name beside the categories'. */
#define HEAT_SMT_BOTH "smt_both"

bool page_heat_known(const char *name)
{
	if (strcmp(name, HEAT_SMT_BOTH) == 0)
		return true;
	for (int c = 0; c < TD_CAT_COUNT; c++)
		if (strcmp(td_cat[c].name, name) == 0)
			return true;
	return false;
}

/* ---- the bottleneck tree of one entity ---- */

/* "backend bound → memory bound, 38.0 %": the bottleneck the API names,
 * with the share of the slots of its finest category. */
static void put_bottleneck(struct buf *b, const json_t *e)
{
	const char *name = json_string_value(json_object_get(e, "bottleneck"));
	const char *dot;
	char parent[64];
	double v;

	buf_puts(b, "<p class=\"bneck\">Bottleneck: <b>");
	if (!name) {
		buf_puts(b, "none (no slots counted)</b></p>\n");
		return;
	}
	dot = strchr(name, '.');
	snprintf(parent, sizeof(parent), "%.*s", dot ? (int)(dot - name) : (int)strlen(name), name);
	put_words(b, parent);
	if (dot) {
		buf_puts(b, " \xe2\x86\x92 ");
		put_words(b, dot + 1);
		v = json_number_value(json_object_get(json_object_get(e, "level2"), dot + 1));
	} else {
		v = json_number_value(json_object_get(json_object_get(e, "level1"), parent));
	}
	buf_puts(b, ", ");
	put_pct(b, v);
	buf_puts(b, "</b></p>\n");
}

static void put_rect(struct buf *b, const char *cat, const char *extra, double x, double y,
		     double v)
{
	buf_printf(b, "<rect class=\"c-%s%s\" data-cat=\"%s\" x=\"%.3f\" y=\"%g\" width=\"%.3f\" "
		      "height=\"1\"><title>", cat, extra, cat, 100.0 * x, y, 100.0 * v);
	put_words(b, cat);
	buf_putc(b, ' ');
	put_pct(b, v);
	buf_puts(b, "</title></rect>");
}

/* Level 1 as a 100 % bar, level 2 under each parent, from where it starts. */
static void put_tree_bar(struct buf *b, const json_t *e)
{
	const json_t *l1 = json_object_get(e, "level1");
	const json_t *tree = json_object_get(e, "level2_by_parent");
	const char *cat;
	json_t *v;
	double x = 0;

	buf_puts(b, "<svg class=\"tree\" viewBox=\"0 0 100 2.1\" preserveAspectRatio=\"none\" "
		    "role=\"img\" aria-label=\"bottleneck tree\">");
	json_object_foreach((json_t *)(uintptr_t)l1, cat, v) {
		const json_t *children = json_object_get(tree, cat);
		const char *child;
		json_t *cv;
		double cx = x;
		unsigned k = 0;

		put_rect(b, cat, "", x, 0, json_number_value(v));
		json_object_foreach((json_t *)(uintptr_t)children, child, cv) {
			char extra[16];

			snprintf(extra, sizeof(extra), " l2 k%u", k++ % 3);
			put_rect(b, child, extra, cx, 1.1, json_number_value(cv));
			cx += json_number_value(cv);
		}
		x += json_number_value(v);
	}
	buf_puts(b, "</svg>\n");
}

static void legend_row(struct buf *b, const char *cat, const char *pmu, const char *cls, unsigned k, double v,
		       bool top)
{
	buf_printf(b, "<tr class=\"%s%s\"><td><i class=\"sw c-%s %s k%u\"></i>", cls,
		   top ? " top" : "", cat, cls, k);
	put_words(b, cat);
	if (pmu) {
		buf_puts(b, " (");
		put_html(b, pmu);
		buf_putc(b, ')');
	}
	buf_puts(b, "</td><td class=\"v\">");
	put_pct(b, v);
	buf_puts(b, "</td></tr>");
}

/* Below level 2: the level-3 nodes under the bottleneck's level-2
 * category @l2 in each tree of the document's @trees, with the entity's
 * values: the drill-down a reader would do next.  On a hybrid part each
 * core type's nodes (nodes_by_pmu), named with it.  Nodes without a value
 * are left out. */
static void put_deeper(struct buf *b, const json_t *e, const json_t *trees, const char *l2)
{
	const json_t *by = json_object_get(e, "nodes_by_pmu");
	size_t t, i;
	json_t *tree, *n;

	json_array_foreach((json_t *)(uintptr_t)trees, t, tree) {
		const char *pmu = str_of(tree, "pmu");
		const json_t *nodes = by ? json_object_get(json_object_get(by, pmu), "nodes")
				     : t == 0 ? json_object_get(e, "nodes") : NULL;

		json_array_foreach((json_t *)(uintptr_t)json_object_get(tree, "nodes"), i, n) {
			const char *name = str_of(n, "node");
			const json_t *v = json_object_get(nodes, name);

			if (json_integer_value(json_object_get(n, "level")) != 3 || strcmp(str_of(n, "parent"), l2) != 0 ||
			    !json_is_number(v))
				continue;
			legend_row(b, name, by ? pmu : NULL, "l3", 0, json_number_value(v), false);
		}
	}
}

/* The figures in a table: readable without the bars, and the bottleneck's
 * rows in bold, the nodes below its level-2 category under it. */
static void put_legend(struct buf *b, const json_t *e, const json_t *trees)
{
	const json_t *l1 = json_object_get(e, "level1");
	const json_t *l2 = json_object_get(e, "level2_by_parent");
	const char *bn = str_of(e, "bottleneck"), *cat;
	json_t *v;

	buf_puts(b, "<table class=\"legend\">");
	json_object_foreach((json_t *)(uintptr_t)l1, cat, v) {
		size_t len = strlen(cat);
		bool top = strncmp(bn, cat, len) == 0 && (bn[len] == '\0' || bn[len] == '.');
		const char *child;
		json_t *cv;
		unsigned k = 0;

		legend_row(b, cat, NULL, "l1", 0, json_number_value(v), top);
		json_object_foreach((json_t *)(uintptr_t)json_object_get(l2, cat), child, cv) {
			bool here = top && bn[len] == '.' && strcmp(bn + len + 1, child) == 0;

			legend_row(b, child, NULL, "l2", k++ % 3, json_number_value(cv), here);
			if (here)
				put_deeper(b, e, trees, child);
		}
	}
	buf_puts(b, "</table>\n");
}

static void put_running(struct buf *b, const json_t *e)
{
	const json_t *r = json_object_get(e, "running_ratio");

	if (!json_is_number(r))
		return;
	buf_puts(b, json_number_value(r) < 0.995 ? "<p class=\"state warn\">" : "<p class=\"state\">");
	buf_puts(b, "Counters running ");
	put_pct(b, json_number_value(r));
	buf_puts(b, " of the time");
	if (json_number_value(r) < 0.995)
		buf_puts(b, ": they are shared with another user of the PMU (perf, another topdownd) "
			    "or rotate among groups; the figures are scaled to the whole interval, as "
			    "perf does");
	buf_puts(b, ".</p>\n");
}

static void put_entity(struct buf *b, const char *id, const char *title, const json_t *e, const json_t *trees)
{
	buf_printf(b, "<div class=\"entity\" id=\"e-%s\"><h3>", id);
	put_html(b, title);
	buf_puts(b, "</h3>\n");
	put_bottleneck(b, e);
	if (json_is_object(json_object_get(e, "level1"))) {
		put_tree_bar(b, e);
		put_legend(b, e, trees);
	}
	put_running(b, e);
	buf_puts(b, "</div>\n");
}

/* ---- the rest of the page ---- */

static void put_state(struct buf *b, const json_t *doc)
{
	const json_t *st = json_object_get(doc, "cpus_by_state");
	json_int_t mon = json_integer_value(json_object_get(st, "monitored"));
	json_int_t total = 0;
	const char *key;
	const json_t *host, *measured, *expected;
	json_t *v, *p;
	size_t i;

	json_object_foreach((json_t *)(uintptr_t)st, key, v) {
		total += json_integer_value(v);
	}
	buf_printf(b, "<p class=\"state\" id=\"cpus\">%lld of %lld CPUs monitored", (long long)mon,
		   (long long)total);
	json_object_foreach((json_t *)(uintptr_t)st, key, v) {
		if (strcmp(key, "monitored") != 0 && json_integer_value(v) > 0) {
			buf_printf(b, ", %lld ", (long long)json_integer_value(v));
			put_html(b, key);
		}
	}
	/* The figures are over the CPUs measured in the last interval. */
	host = json_object_get(doc, "host");
	measured = json_object_get(host, "cpus_measured");
	expected = json_object_get(host, "cpus_expected");
	if (measured && expected && json_integer_value(measured) < json_integer_value(expected))
		buf_printf(b, "; the figures are over %lld of %lld CPUs", (long long)json_integer_value(measured),
			   (long long)json_integer_value(expected));
	buf_puts(b, ".</p>\n");
	json_array_foreach(json_object_get(doc, "pmus"), i, p) {
		if (json_string_value(json_object_get(p, "reason"))) {
			buf_puts(b, "<p class=\"state warn\">");
			put_html(b, str_of(p, "name"));
			buf_puts(b, ": ");
			put_html(b, str_of(p, "reason"));
			buf_puts(b, "</p>\n");
		}
	}
	if (!json_array_size(json_object_get(doc, "pmus")) &&
	    json_string_value(json_object_get(json_object_get(doc, "pmu"), "reason"))) {
		buf_puts(b, "<p class=\"state warn\">");
		put_html(b, str_of(json_object_get(doc, "pmu"), "reason"));
		buf_puts(b, "</p>\n");
	}
}

static void put_when(struct buf *b, const json_t *doc)
{
	double ts = json_number_value(json_object_get(doc, "timestamp"));
	time_t t = (time_t)ts;
	struct tm tm;
	char text[64];

	gmtime_r(&t, &tm);
	strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
	buf_printf(b, "<span class=\"when\" id=\"when\">interval %lld, %s</span>",
		   (long long)json_integer_value(json_object_get(doc, "intervals")), text);
}

static void put_meta(struct buf *b, const json_t *doc, const char *revision)
{
	const json_t *p;
	size_t i;

	buf_puts(b, "<p class=\"meta\">topdownd ");
	put_html(b, str_of(doc, "version"));
	buf_puts(b, " (");
	put_html(b, revision);
	buf_puts(b, ")");
	json_array_foreach(json_object_get(doc, "pmus"), i, p) {
		buf_puts(b, " \xc2\xb7 ");
		put_html(b, str_of(p, "name"));
		buf_puts(b, ": ");
		put_html(b, json_string_value(json_object_get(p, "uarch")) ? str_of(p, "uarch")
									    : "no TopDown");
		buf_printf(b, ", level %lld, model ", (long long)json_integer_value(json_object_get(p, "level")));
		put_html(b, json_string_value(json_object_get(p, "model")) ? str_of(p, "model") : "none");
	}
	buf_printf(b, " \xc2\xb7 interval %g s</p>\n",
		   json_number_value(json_object_get(doc, "interval_seconds")));
}

/* The category of the heatmap: @heat if collected here, else the host's
 * bottleneck (its level-1 parent), else the first category. */
static const char *heat_category(const json_t *doc, const char *heat)
{
	const json_t *host = json_object_get(doc, "host");
	const json_t *l1 = json_object_get(host, "level1"), *l2 = json_object_get(host, "level2");
	const char *bn = json_string_value(json_object_get(host, "bottleneck"));

	if (heat && (json_object_get(l1, heat) || json_object_get(l2, heat)))
		return heat;
	if (heat && strcmp(heat, HEAT_SMT_BOTH) == 0 && json_object_get(host, "smt"))
		return HEAT_SMT_BOTH;
	if (bn) {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)(uintptr_t)l1, key, v) {
			if (strncmp(bn, key, strlen(key)) == 0 &&
			    (bn[strlen(key)] == '\0' || bn[strlen(key)] == '.'))
				return key;
		}
	}
	return json_object_size(l1) ? json_object_iter_key(json_object_iter((json_t *)(uintptr_t)l1))
				    : NULL;
}

static void put_heat_select(struct buf *b, const json_t *doc, const char *heat)
{
	const json_t *host = json_object_get(doc, "host");
	const json_t *l1 = json_object_get(host, "level1");
	const json_t *tree = json_object_get(host, "level2_by_parent");
	const char *cat, *child;
	json_t *v, *cv;

	buf_puts(b, "<form method=\"get\" action=\"\"><label>Category <select id=\"heat\" name=\"heat\">");
	json_object_foreach((json_t *)(uintptr_t)l1, cat, v) {
		buf_printf(b, "<option value=\"%s\"%s>", cat, strcmp(cat, heat) == 0 ? " selected" : "");
		put_words(b, cat);
		buf_puts(b, "</option>");
		json_object_foreach((json_t *)(uintptr_t)json_object_get(tree, cat), child, cv) {
			buf_printf(b, "<option value=\"%s\"%s>\xc2\xa0\xc2\xa0", child,
				   strcmp(child, heat) == 0 ? " selected" : "");
			put_words(b, child);
			buf_puts(b, "</option>");
		}
	}
	/* Which threads ran: where the SMT split is counted. */
	if (json_object_get(host, "smt"))
		buf_printf(b, "<option value=\"%s\"%s>both threads running (SMT)</option>", HEAT_SMT_BOTH,
			   strcmp(HEAT_SMT_BOTH, heat) == 0 ? " selected" : "");
	buf_puts(b, "</select></label> <noscript><button>Show</button></noscript></form>\n");
}

/* The category's value in an entity: level 1 or level 2; or the share
 * of its last interval both threads ran. */
static const json_t *value_of(const json_t *e, const char *cat)
{
	const json_t *v = json_object_get(json_object_get(e, "level1"), cat);

	if (strcmp(cat, HEAT_SMT_BOTH) == 0)
		return json_object_get(json_object_get(json_object_get(e, "smt"), "last"), "both");

	return v ? v : json_object_get(json_object_get(e, "level2"), cat);
}

/* Cores of each package in rows of HEAT_COLUMNS, their opacity the
 * category's share of their slots. */
static void put_heatmap(struct buf *b, const json_t *doc, const char *heat)
{
	const json_t *pkgs = json_object_get(doc, "packages"), *cores = json_object_get(doc, "cores");
	const json_t *pkg;
	size_t i;

	json_array_foreach(pkgs, i, pkg) {
		json_int_t id = json_integer_value(json_object_get(pkg, "package"));
		const json_t *core;
		unsigned n = 0, rows;
		size_t k;

		json_array_foreach(cores, k, core) {
			n += json_integer_value(json_object_get(core, "package")) == id;
		}
		rows = (n + HEAT_COLUMNS - 1) / HEAT_COLUMNS;
		buf_printf(b, "<h3>package %lld</h3>\n<svg class=\"heat\" data-package=\"%lld\" "
			      "viewBox=\"0 0 %u %u\" role=\"img\" aria-label=\"cores of package %lld\">",
			   (long long)id, (long long)id, HEAT_COLUMNS * 11, rows ? rows * 11 : 1,
			   (long long)id);
		n = 0;
		json_array_foreach(cores, k, core) {
			const json_t *v = value_of(core, heat), *cpu;
			unsigned x = (n % HEAT_COLUMNS) * 11, y = (n / HEAT_COLUMNS) * 11;
			size_t j;

			if (json_integer_value(json_object_get(core, "package")) != id)
				continue;
			n++;
			buf_printf(b, "<rect class=\"cell-bg\" x=\"%u\" y=\"%u\" width=\"10\" height=\"10\"/>",
				   x, y);
			buf_printf(b, "<rect class=\"c-%s\" data-core=\"%lld\" x=\"%u\" y=\"%u\" width=\"10\" "
				      "height=\"10\" fill-opacity=\"%.3f\"><title>core %lld (CPU",
				   heat, (long long)json_integer_value(json_object_get(core, "core")), x, y,
				   json_is_number(v) ? fmin(1, fmax(0, json_number_value(v))) : 0,
				   (long long)json_integer_value(json_object_get(core, "core")));
			if (json_array_size(json_object_get(core, "cpus")) > 1)
				buf_putc(b, 's');
			json_array_foreach(json_object_get(core, "cpus"), j, cpu) {
				buf_printf(b, "%s%lld", j ? ", " : " ", (long long)json_integer_value(cpu));
			}
			buf_puts(b, "): ");
			if (strcmp(heat, HEAT_SMT_BOTH) == 0)
				buf_puts(b, "both threads running");
			else
				put_words(b, heat);
			buf_putc(b, ' ');
			if (json_is_number(v))
				put_pct(b, json_number_value(v));
			else
				buf_puts(b, "not counted");
			buf_printf(b, "</title></rect><text x=\"%u\" y=\"%u\">", x + 5, y + 5);
			if (json_is_number(v))
				buf_printf(b, "%.0f", 100.0 * json_number_value(v));
			else
				buf_putc(b, '-');
			buf_puts(b, "</text>");
		}
		buf_puts(b, "</svg>\n");
	}
}

/* An entity's level 1 over the history as stacked areas, bottom up in the
 * tree's order: each category's area is drawn from the bottom to the top
 * of its stack, the highest first, each step flat from its start to its
 * end.  A step without slots breaks the areas. */
static void put_history_chart(struct buf *b, const json_t *hist, const char *pkg, double end,
			      double length_s)
{
	const json_t *samples = json_object_get(hist, "samples"), *cats = json_object_get(hist, "categories");
	size_t n_cats = json_array_size(cats);

	buf_printf(b, "<svg class=\"hist\" viewBox=\"0 0 %g %g\" preserveAspectRatio=\"none\" "
		      "role=\"img\" aria-label=\"level 1 over the last %g s\">", HIST_W, HIST_H, length_s);
	for (size_t c = n_cats; c-- > 0;) {
		const json_t *cat = json_array_get(cats, c), *s;
		const char *name = str_of(cat, "name");
		bool open = false;
		double last_x = 0;
		size_t i;

		if (json_integer_value(json_object_get(cat, "level")) != 1)
			continue;
		buf_printf(b, "<path class=\"c-%s\" data-cat=\"%s\" d=\"", name, name);
		json_array_foreach(samples, i, s) {
			const json_t *e = pkg ? json_object_get(json_object_get(s, "packages"), pkg)
					      : json_object_get(s, "host");
			const json_t *l1 = json_object_get(e, "level1");
			double x0 = HIST_W * (json_number_value(json_object_get(s, "start")) - end + length_s) / length_s;
			double x1 = HIST_W * (json_number_value(json_object_get(s, "end")) - end + length_s) / length_s;
			double top = 0;
			size_t k;

			if (x1 <= 0)
				continue;
			x0 = fmax(0, x0);
			if (!json_is_object(l1)) {
				if (open)
					buf_printf(b, "L%.1f %gZ", last_x, HIST_H);
				open = false;
				continue;
			}
			for (k = 0; k <= c; k++) {
				const json_t *ck = json_array_get(cats, k);

				if (json_integer_value(json_object_get(ck, "level")) == 1)
					top += json_number_value(json_object_get(l1, str_of(ck, "name")));
			}
			if (!open)
				buf_printf(b, "M%.1f %g", x0, HIST_H);
			buf_printf(b, "L%.1f %.1fL%.1f %.1f", x0, HIST_H * (1 - top), x1, HIST_H * (1 - top));
			open = true;
			last_x = x1;
		}
		if (open)
			buf_printf(b, "L%.1f %gZ", last_x, HIST_H);
		buf_puts(b, "\"/>");
	}
	buf_puts(b, "</svg>\n");
}

/* One entity's chart: the host (@pkg NULL) or package @pkg. */
static void put_history_entity(struct buf *b, const json_t *hist, const char *pkg, double end,
			       double length_s, double minutes)
{
	if (pkg)
		buf_printf(b, "<div id=\"h-package-%s\"><h3>package %s</h3>", pkg, pkg);
	else
		buf_puts(b, "<div id=\"h-host\"><h3>host</h3>");
	put_history_chart(b, hist, pkg, end, length_s);
	buf_printf(b, "<div class=\"axis\"><span>-%g min</span><span>now</span></div></div>\n",
		   minutes);
}

static void put_history(struct buf *b, const json_t *doc, const json_t *hist, double length_s)
{
	const json_t *pkg;
	double end = json_number_value(json_object_get(doc, "timestamp"));
	double minutes = round(length_s / 6) / 10;
	size_t i;

	buf_printf(b, "<section id=\"history\"><h2>Level 1 over the last %g minutes</h2>\n"
		      "<div class=\"entities\">\n", minutes);
	put_history_entity(b, hist, NULL, end, length_s, minutes);
	json_array_foreach(json_object_get(doc, "packages"), i, pkg) {
		char id[24];

		snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(json_object_get(pkg, "package")));
		put_history_entity(b, hist, id, end, length_s, minutes);
	}
	buf_puts(b, "</div></section>\n");
}

void page_live(struct buf *b, const json_t *now, const json_t *history, const char *heat,
	       double history_s, const char *revision, const struct page_link *links,
	       size_t n_links)
{
	const json_t *pkg;
	size_t i;

	heat = heat_category(now, heat);
	buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		    "<link rel=\"icon\" href=\"data:,\">\n<title>topdownd on ");
	put_html(b, str_of(now, "hostname"));
	buf_puts(b, "</title>\n<style>");
	buf_puts(b, page_style);
	buf_printf(b, "</style>\n</head>\n<body data-interval=\"%g\" data-history=\"%g\" data-heat=\"",
		   json_number_value(json_object_get(now, "interval_seconds")), history_s);
	put_html(b, heat ? heat : "");
	buf_puts(b, "\">\n<header><h1>topdownd <small>on ");
	put_html(b, str_of(now, "hostname"));
	buf_puts(b, "</small></h1>\n");
	put_meta(b, now, revision);
	buf_puts(b, "</header>\n<main>\n<section id=\"now\"><h2>Now ");
	put_when(b, now);
	buf_puts(b, "</h2>\n");
	put_state(b, now);
	buf_puts(b, "<div class=\"entities\" id=\"entities\">\n");
	put_entity(b, "host", "host", json_object_get(now, "host"), json_object_get(now, "trees"));
	json_array_foreach(json_object_get(now, "packages"), i, pkg) {
		char id[24], title[40];

		snprintf(id, sizeof(id), "package-%lld", (long long)json_integer_value(json_object_get(pkg, "package")));
		snprintf(title, sizeof(title), "package %lld", (long long)json_integer_value(json_object_get(pkg, "package")));
		put_entity(b, id, title, pkg, json_object_get(now, "trees"));
	}
	buf_puts(b, "</div></section>\n<section id=\"cores\"><h2>Cores</h2>\n");
	if (heat) {
		put_heat_select(b, now, heat);
		buf_puts(b, "<div id=\"heatmaps\">");
		put_heatmap(b, now, heat);
		buf_puts(b, "</div>");
	} else {
		buf_puts(b, "<p class=\"state\">No slots counted yet.</p>");
	}
	buf_puts(b, "</section>\n");
	put_history(b, now, history, history_s);
	buf_puts(b, "</main>\n<footer>");
	for (size_t k = 0; k < n_links; k++) {
		buf_puts(b, "<a href=\"");
		put_html(b, links[k].href);
		buf_puts(b, "\">");
		put_html(b, links[k].text);
		buf_puts(b, "</a>");
	}
	buf_puts(b, "</footer>\n<script>");
	buf_puts(b, page_script);
	buf_puts(b, "</script>\n</body></html>\n");
}

/* ---- the policy ---- */

static char csp[512];
static pthread_once_t csp_once = PTHREAD_ONCE_INIT;

/* 'sha256-<base64>' of @text. */
static void hash_source(const char *text, char *out, size_t len)
{
	unsigned char digest[32];
	gnutls_datum_t in = { digest, sizeof(digest) }, b64 = { NULL, 0 };

	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, text, strlen(text), digest) < 0 ||
	    gnutls_base64_encode2(&in, &b64) < 0) {
		/* Nothing inline then runs: the page still reads. */
		snprintf(out, len, "'none'");
		return;
	}
	snprintf(out, len, "'sha256-%.*s'", (int)b64.size, (const char *)b64.data);
	gnutls_free(b64.data);
}

static void csp_build(void)
{
	char style[80], script[80];

	hash_source(page_style, style, sizeof(style));
	hash_source(page_script, script, sizeof(script));
	snprintf(csp, sizeof(csp),
		 "default-src 'none'; style-src %s; script-src %s; connect-src 'self'; "
		 "img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
		 style, script);
}

const char *page_csp(void)
{
	pthread_once(&csp_once, csp_build);
	return csp;
}
