/* SPDX-License-Identifier: MIT */
/* page: the live page (/), an HTML view of the bottleneck tree for a
 * person with a browser.  It is rendered on the server from the same
 * JSON documents its script then fetches every interval (the JSON API at
 * core scope and the history), so it reads the same without JavaScript.
 * Self-contained: the style and the script are inline, and the
 * Content-Security-Policy allows exactly them (by hash) and fetches from
 * the daemon itself.  Every value is escaped.  Pure: no I/O. */
#ifndef TOPDOWND_PAGE_H
#define TOPDOWND_PAGE_H

#include <jansson.h>
#include <stdbool.h>

#include "util.h"

/* Whether @name is a category of the bottleneck tree (any
 * microarchitecture's): the values ?heat= accepts. */
bool page_heat_known(const char *name);

/* A link of the page's footer: @href relative to the page, @text shown. */
struct page_link {
	const char *href;
	const char *text;
};

/* Appends the page to @b (check buf_failed() after).  @now is the JSON
 * API's document at core scope (api_document), @history the history's
 * (api_history), @heat the category of the per-core heatmap (NULL, or one
 * not collected here: the host's bottleneck), @history_s the length of the
 * history kept, @links the footer's (the server's endpoints). */
void page_live(struct buf *b, const json_t *now, const json_t *history, const char *heat,
	       double history_s, const char *revision, const struct page_link *links,
	       size_t n_links);

/* The Content-Security-Policy of the page: the hashes of its inline style
 * and script, connections to the daemon only.  Computed once;
 * thread-safe. */
const char *page_csp(void);

/* The inline style and script, as served (for tests). */
extern const char page_style[];
extern const char page_script[];

#endif
