/* SPDX-License-Identifier: MIT */
/* page: the landing page (/): what topdownd monitors here, and links. */
#include "page.h"

#include "util.h"

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
		default:
			buf_putc(b, *s);
		}
	}
}

static void row(struct buf *b, const char *name, const char *value)
{
	buf_puts(b, "<tr><th>");
	buf_puts(b, name);
	buf_puts(b, "</th><td>");
	put_html(b, value);
	buf_puts(b, "</td></tr>\n");
}

void page_landing(struct buf *b, const struct snapshot *snap, const char *hostname,
		  const char *version, const char *revision)
{
	unsigned total = snap->n_cpus;
	char text[600];

	buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		     "<title>topdownd on ");
	put_html(b, hostname);
	buf_puts(b, "</title>\n<style>body{font-family:sans-serif;max-width:48em;margin:2em auto;"
		     "padding:0 1em}th,td{text-align:left;padding:.2em 1.5em .2em 0;vertical-align:top}"
		     "code{background:#eee}</style></head>\n<body>\n<h1>topdownd</h1>\n"
		     "<p>Intel TopDown (TMA) bottleneck metrics of <b>");
	put_html(b, hostname);
	buf_puts(b, "</b>.</p>\n<table>\n");
	str_printf(text, sizeof(text), "%s (revision %s)", version, revision);
	row(b, "Version", text);
	if (!snap->n_pmus)
		row(b, "PMU", "none");
	for (unsigned i = 0; i < snap->n_pmus; i++) {
		const struct snap_pmu *p = &snap->pmus[i];

		row(b, "PMU", p->name);
		row(b, "pmu_name", p->pmu_name[0] ? p->pmu_name : "none");
		row(b, "Uarch", p->uarch[0] ? p->uarch : "none");
		str_printf(text, sizeof(text), "%u", p->level);
		row(b, "Level", text);
		row(b, "Model", p->model[0] ? p->model : "none");
		if (p->reason[0])
			row(b, "Note", p->reason);
	}
	str_printf(text, sizeof(text), "%u of %u (%u failed, %u offline, %u unsupported)",
		   snap->cpus_by_state[CPU_STATE_MONITORED], total,
		   snap->cpus_by_state[CPU_STATE_FAILED], snap->cpus_by_state[CPU_STATE_OFFLINE],
		   snap->cpus_by_state[CPU_STATE_UNSUPPORTED]);
	row(b, "CPUs monitored", text);
	str_printf(text, sizeof(text), "%g s", snap->interval_s);
	row(b, "Interval", text);
	if (snap->reason[0])
		row(b, "Note", snap->reason);
	buf_puts(b, "</table>\n<ul>\n"
		     "<li><a href=\"metrics\">/metrics</a>: Prometheus text and OpenMetrics</li>\n"
		     "<li><a href=\"api/v1/topdown\">/api/v1/topdown</a>: JSON "
		     "(<a href=\"api/v1/topdown?scope=cpu\">?scope=cpu</a>, <code>level=1|2</code>, "
		     "<code>cpu=0-3</code>)</li>\n"
		     "<li><a href=\"-/healthy\">/-/healthy</a> and <a href=\"-/ready\">/-/ready</a></li>\n"
		     "</ul>\n</body></html>\n");
}
