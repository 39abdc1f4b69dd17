/* SPDX-License-Identifier: MIT */
/* caps: the two capabilities topdownd needs, CAP_PERFMON (system-wide
 * counters) and CAP_BPF (per-cgroup attribution), held by this process.
 *
 * The image's binary carries them as permitted file capabilities without
 * the effective bit (setcap cap_perfmon,cap_bpf+p): the kernel then
 * executes it whether or not the container may hold them
 * (security/commoncap.c, bprm_caps_from_vfs_caps(): a missing
 * file-permitted capability fails exec only for a binary with the
 * effective bit, "legacy apps" that cannot tell), so --version, --help
 * and --check-config run under any runtime, and the daemon raises what it
 * was given itself and says what it lacks. */
#ifndef TOPDOWND_CAPS_H
#define TOPDOWND_CAPS_H

#include <linux/capability.h> /* CAP_* */
#include <stdbool.h>
#include <stddef.h>

/* How to grant them, for messages: systemd, docker or podman, Kubernetes. */
#define CAPS_HOW_TO_GRANT                                                               \
	"systemd: AmbientCapabilities=CAP_PERFMON CAP_BPF (contrib/systemd/cgroups.conf); docker or "  \
	"podman: --cap-add PERFMON --cap-add BPF; Kubernetes: securityContext.capabilities." \
	"add: [PERFMON, BPF] (contrib/kubernetes)"

/* Raises every permitted capability of this process into its effective
 * set (capset, only when that changes anything: the shipped unit's
 * system call filter refuses capset, and its ambient capabilities are
 * effective already): 0 or -errno. */
int caps_raise(void);

/* Whether capability @cap (CAP_*) is effective in this process. */
bool caps_effective(unsigned cap);

/* "CAP_PERFMON, CAP_BPF", "CAP_PERFMON (no CAP_BPF: ...)" or "none of
 * CAP_PERFMON, CAP_BPF: ...": which of the two this process holds,
 * with how to grant the missing ones.  Whether both are held. */
bool caps_describe(char *buf, size_t len);

#endif
