/* SPDX-License-Identifier: MIT */
/* procstat: /proc/self figures for the process_* metrics. */
#include "procstat.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util.h"

int procstat_parse_stat(const char *text, long clk_tck, long page_size, double boot_time,
			struct procstat *out)
{
	/* Fields 3.. (proc(5) numbering): state ppid pgrp session tty_nr
	 * tpgid flags minflt cminflt majflt cmajflt utime stime cutime
	 * cstime priority nice num_threads itrealvalue starttime vsize rss */
	unsigned long long utime, stime, starttime, vsize;
	long long rss;
	const char *p = strrchr(text, ')');

	memset(out, 0, sizeof(*out));
	if (!p || clk_tck <= 0 || page_size <= 0)
		return -EINVAL;
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %lld",
		   &utime, &stime, &starttime, &vsize, &rss) != 5)
		return -EINVAL;
	out->cpu_seconds = (double)(utime + stime) / (double)clk_tck;
	out->start_time = boot_time > 0 ? boot_time + (double)starttime / (double)clk_tck : 0;
	out->virtual_bytes = (double)vsize;
	out->resident_bytes = (double)rss * (double)page_size;
	out->valid = true;
	return 0;
}

/* Read once: /proc/stat grows with the CPUs (100 kB on 1024) and the kernel
 * sums every CPU's times to produce it, while btime never changes. */
static double boot_time_value;
static pthread_once_t boot_time_once = PTHREAD_ONCE_INIT;

static void boot_time_read(void)
{
	char *text = NULL, *line;
	size_t len;

	if (read_file("/proc/stat", 1024 * 1024, &text, &len) < 0)
		return;
	line = strstr(text, "\nbtime ");
	if (line)
		boot_time_value = strtod(line + 7, NULL);
	free(text);
}

static double boot_time(void)
{
	pthread_once(&boot_time_once, boot_time_read);
	return boot_time_value;
}

static uint64_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	/* The directory's own descriptor, open while it was read. */
	return n ? n - 1 : 0;
}

void procstat_read(struct procstat *out)
{
	struct rlimit rl;
	char *text = NULL;
	size_t len;

	memset(out, 0, sizeof(*out));
	if (read_file("/proc/self/stat", 4096, &text, &len) < 0)
		return;
	procstat_parse_stat(text, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), boot_time(), out);
	free(text);
	out->open_fds = count_fds();
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		out->max_fds = rl.rlim_cur == RLIM_INFINITY ? 0 : (uint64_t)rl.rlim_cur;
}
