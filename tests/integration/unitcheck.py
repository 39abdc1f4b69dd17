#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Does the hardened unit allow what topdownd's features need?

  unitcheck.py UNIT [DROP-IN...]

With drop-ins (contrib/systemd/cgroups.conf), the unit as they extend it
must also allow per-cgroup attribution: its system calls and CAP_BPF.

Reads the unit's SystemCallFilter= lines and computes, with systemd's rules,
the system calls they allow: the first assignment decides whether the list
is an allow list (the default action denies) or a deny list; later ones add
to or remove from it; "@group" names are expanded with the groups of the
installed systemd (`systemd-analyze syscall-filter`).  Then checks every
system call each feature needs, and the paths it reads under the unit's
/proc and file-system options.  Prints one line per problem, naming the
feature, and exits 1 if there is any.
"""
import re
import subprocess
import sys

# What each feature calls (beyond what every program does: read, write,
# mmap...), from the daemon's sources and strace of a run.
FEATURES = {
    "counting (perf groups)": ["perf_event_open", "ioctl", "read", "close"],
    "raising RLIMIT_NOFILE for the perf groups and connections": ["prlimit64"],
    "HTTP threads yielding to the collection (nice 5)": ["setpriority"],
    "threads at normal priority beside the real-time collection": ["sched_setscheduler"],
    "naming the threads": ["prctl"],
    "the event loop": ["epoll_create1", "epoll_ctl", "epoll_wait", "timerfd_create",
                       "timerfd_settime", "timerfd_gettime", "signalfd4", "clock_nanosleep"],
    "serving HTTP (epoll and, for HTTPS, poll)": ["accept4", "setsockopt", "getsockopt", "sendto",
                                                  "recvfrom", "sendmsg", "poll", "ppoll",
                                                  "eventfd2", "pipe2", "shutdown"],
    "worker threads": ["clone", "clone3", "futex", "rt_sigprocmask", "set_robust_list"],
    "random keys (auth cache, throttle)": ["getrandom"],
    "process_* metrics (/proc/self/fd)": ["getdents64", "openat", "newfstatat"],
    "sd_notify and the watchdog": ["socket", "connect", "sendmsg"],
}


def groups():
    """{"@name": [entries]} of the installed systemd."""
    out = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"], capture_output=True,
                         text=True, check=True).stdout
    g, cur = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            cur = line.strip()
            g[cur] = []
        elif cur and line.strip() and not line.strip().startswith("#"):
            g[cur].append(line.strip())
    return g


def expand(names, g, seen=None):
    seen = set() if seen is None else seen
    out = set()
    for n in names:
        if n.startswith("@"):
            if n in seen:
                continue
            seen.add(n)
            out |= expand(g.get(n, []), g, seen)
        else:
            out.add(n)
    return out


def allowed(unit_text, g):
    mode, calls = None, set()
    for line in unit_text.splitlines():
        m = re.match(r"\s*SystemCallFilter=(.*)", line)
        if not m:
            continue
        value = m.group(1).strip()
        if value == "":
            mode, calls = None, set()
            continue
        deny = value.startswith("~")
        names = expand(value.lstrip("~").split(), g)
        if mode is None:
            mode = "deny" if deny else "allow"
            calls = set(names)
        elif mode == "allow":
            calls = calls - names if deny else calls | names
        else:
            calls = calls | names if deny else calls - names
    return mode, calls


# With the drop-in only (the unit alone does not grant them).
CGROUP_FEATURES = {
    "per-cgroup attribution (the BPF program, its maps and statistics)": ["bpf"],
    "per-cgroup attribution (cgroup ids, as perf reads them)": ["name_to_handle_at"],
}


def main():
    text = "\n".join(open(f).read() for f in sys.argv[1:])
    g = groups()
    mode, calls = allowed(text, g)
    problems = []
    features = dict(FEATURES)
    if len(sys.argv) > 2:
        features.update(CGROUP_FEATURES)
        caps = set()
        # Assignments add up; an empty one resets (systemd.exec(5)).
        for m in re.finditer(r"^\s*AmbientCapabilities=(.*)$", text, re.M):
            caps = caps | set(m.group(1).split()) if m.group(1).strip() else set()
        for cap in ("CAP_PERFMON", "CAP_BPF"):
            if cap not in caps:
                problems.append("per-cgroup attribution needs %s, which AmbientCapabilities= lacks" % cap)
    for feature, needed in features.items():
        for call in needed:
            ok = mode is None or (call in calls if mode == "allow" else call not in calls)
            if not ok:
                problems.append("%s needs %s, which SystemCallFilter= denies" % (feature, call))
    # /proc: ProcSubset=pid hides /proc/sys (kernel.perf_event_paranoid,
    # named in the permission advice) and /proc/stat (process_start_time).
    if re.search(r"^\s*ProcSubset=pid", text, re.M):
        problems.append("the permission advice reads /proc/sys/kernel/perf_event_paranoid and "
                        "process_start_time_seconds /proc/stat, which ProcSubset=pid hides")
    if not re.search(r"^\s*RestartPreventExitStatus=.*\b78\b", text, re.M):
        problems.append("a configuration error (exit 78) would be restarted forever: "
                        "RestartPreventExitStatus=78 is missing")
    for p in problems:
        print(p)
    return 1 if problems else 0


sys.exit(main())
