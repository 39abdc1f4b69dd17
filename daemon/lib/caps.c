/* SPDX-License-Identifier: MIT */
/* caps: raising and describing CAP_PERFMON and CAP_BPF (caps.h).  Two
 * system calls, capget() and capset(), as glibc declares neither and
 * libcap would add a library to the image for them. */
#include "caps.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

static int caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	/* Zeroed: valgrind does not see capget() fill the second word. */
	memset(data, 0, 2 * sizeof(*data));

	return syscall(SYS_capget, &hdr, data) < 0 ? -errno : 0;
}

int caps_raise(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];
	int r = caps_get(data);

	if (r < 0)
		return r;
	if (data[0].effective == data[0].permitted && data[1].effective == data[1].permitted)
		return 0;
	data[0].effective = data[0].permitted;
	data[1].effective = data[1].permitted;
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

bool caps_effective(unsigned cap)
{
	struct __user_cap_data_struct data[2];

	if (cap >= 64 || caps_get(data) < 0)
		return false;
	return (data[cap / 32].effective >> (cap % 32)) & 1;
}

bool caps_describe(char *buf, size_t len)
{
	struct __user_cap_data_struct data[2];
	bool perfmon, bpf, admin;

	if (caps_get(data) < 0)
		memset(data, 0, sizeof(data));
#define EFFECTIVE(cap) ((data[(cap) / 32].effective >> ((cap) % 32)) & 1)
	/* CAP_SYS_ADMIN stands for both (before Linux 5.8 it was the only way). */
	admin = EFFECTIVE(CAP_SYS_ADMIN);
	perfmon = admin || EFFECTIVE(CAP_PERFMON);
	bpf = admin || EFFECTIVE(CAP_BPF);
#undef EFFECTIVE
	if (perfmon && bpf)
		str_printf(buf, len, "%s", admin ? "CAP_SYS_ADMIN" : "CAP_PERFMON, CAP_BPF");
	else if (perfmon)
		str_printf(buf, len, "CAP_PERFMON (no CAP_BPF: no per-cgroup attribution; %s)", CAPS_HOW_TO_GRANT);
	else
		str_printf(buf, len, "%s (the counters need CAP_PERFMON unless kernel.perf_event_paranoid "
			   "is 0 or less; %s)", bpf ? "CAP_BPF, no CAP_PERFMON" : "none of CAP_PERFMON, CAP_BPF",
			   CAPS_HOW_TO_GRANT);
	return perfmon && bpf;
}
