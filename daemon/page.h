/* SPDX-License-Identifier: MIT */
/* page: the landing page (/), an HTML summary for a person with a
 * browser: version, core PMUs and their microarchitectures, CPU states,
 * interval, and links to the endpoints.  Every value is escaped. */
#ifndef TOPDOWND_PAGE_H
#define TOPDOWND_PAGE_H

#include "snapshot.h"
#include "util.h"

/* Appends the page to @b (check buf_failed() after). */
void page_landing(struct buf *b, const struct snapshot *snap, const char *hostname,
		  const char *version, const char *revision);

#endif
