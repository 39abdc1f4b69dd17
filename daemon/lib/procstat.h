/* SPDX-License-Identifier: MIT */
/* procstat: the process_* metrics every Prometheus exporter exports, read
 * from /proc/self the way the Prometheus client libraries read them:
 * CPU time and start time from /proc/self/stat (with the boot time of
 * /proc/stat), open descriptors from /proc/self/fd, the descriptor limit
 * (RLIMIT_NOFILE), resident and virtual memory.  The parser is a pure
 * function over the file's text. */
#ifndef TOPDOWND_PROCSTAT_H
#define TOPDOWND_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>

struct procstat {
	double cpu_seconds;      /* user + system */
	double start_time;       /* Unix seconds; 0 when unknown */
	double resident_bytes;
	double virtual_bytes;
	uint64_t open_fds;
	uint64_t max_fds;        /* soft limit */
	bool valid;
};

/* /proc/self/stat's text: fields after the parenthesised command, which
 * may itself hold spaces and parentheses.  @boot_time is /proc/stat's
 * btime (0 when unknown).  -EINVAL on malformed text. */
int procstat_parse_stat(const char *text, long clk_tck, long page_size, double boot_time,
			struct procstat *out);

/* Reads all of it for this process; out->valid says whether it worked. */
void procstat_read(struct procstat *out);

#endif
