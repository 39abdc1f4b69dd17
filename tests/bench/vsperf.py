# SPDX-License-Identifier: MIT
"""`make bench`: topdownd beside the sidecar a user would otherwise run,
`perf stat -a -I MS -M TopdownL1,TopdownL2`, under the same fake PMU,
fixture (Sapphire Rapids, 2 packages, SMT) and scenario.

perf runs in a private mount namespace where the fixture stands in for
sysfs (tests/oracle/sysns, as the perf-oracle test runs it), with PERF_CPUID
set to the model; topdownd runs `--watch` (perf stat -I's counterpart: the
same groups the daemon opens, a table printed per interval, no HTTP).  Each
tool runs a fixed number of intervals (perf --interval-count, topdownd
--count), the two tools alternately.  CPU time and allocations are taken
over a window of intervals in the steady state (after the first few, as the
tool prints them); instructions and system calls from two runs of N1 and
N2 intervals, the difference over N2 - N1, so start-up cancels:

  cpu       run time of the tool's threads (schedstat: user and system),
            the fake PMU's emulation included (it runs in the tool)
  instr     user instructions under callgrind, every call chain through
            the fake PMU excluded (the kernel's part of the work on real
            hardware)
  syscalls  system calls strace counts, plus the calls the fake PMU answered
            (FAKEPMU_STATS: perf_event_open, read, ioctl, close), each a
            system call on real hardware
  allocs    heap allocations (tests/bench/allocount.c, all threads)
  rss       the tool's RSS at the end of the window (VmRSS) minus the heap
            the fake PMU holds then (allocount), which stands in for kernel
            memory; not the peak, which is the fake PMU's own parse of
            perf's tables at start in both tools
"""

import os
import re
import resource
import statistics
import struct
import subprocess
import threading

PERF_CPUID = "GenuineIntel-6-8F-4"  # the Sapphire Rapids fixtures' model
INTERVAL_MS = 100
# Every run is bounded (issue 42: perf under callgrind once did not exit
# for 9 minutes): a run over its bound is killed and the bench says which.
RUN_TIMEOUT_S = 600
WARMUP, WINDOW = 5, 30      # intervals before the window, and in it
CG_COUNTS = (3, 8)          # intervals of the two runs under callgrind and strace
REPEATS = 3                 # timing runs per tool and size: medians


def read_allocs(path):
    """(allocations, live heap bytes of the fake PMU) from allocount's file."""
    with open(path, "rb") as f:
        w = struct.unpack("<8Q", f.read(64))
    return w[2] + w[4], w[7]


def vm_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def run_time(pid):
    """Nanoseconds on a CPU of every thread of @pid (schedstat)."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


class Tools:
    def __init__(self, root, out, topdownd, fakepmu, allocount, scenario, parse_callgrind,
                 quick=False):
        self.root, self.out = root, out
        self.topdownd, self.fakepmu, self.allocount = topdownd, fakepmu, allocount
        self.scenario = scenario
        self.sysns = os.path.join(root, "tests", "oracle", "sysns")
        self.parse_callgrind = parse_callgrind
        self.repeats = 1 if quick else REPEATS
        os.makedirs(out, exist_ok=True)

    def env(self, fixture, name, alloc=True):
        env = dict(os.environ, FAKEPMU_SYSFS=fixture, FAKEPMU_SCENARIO=self.scenario,
                   PERF_CPUID=PERF_CPUID,
                   FAKEPMU_STATS=os.path.join(self.out, name + ".fake"))
        env.pop("FAKEPMU_CLOCK_FILE", None)
        preload = [self.fakepmu]
        if alloc:
            env["ALLOCOUNT_FILE"] = os.path.join(self.out, name + ".alloc")
            preload.insert(0, self.allocount)
        env["LD_PRELOAD"] = " ".join(preload)
        for f in (env["FAKEPMU_STATS"], env.get("ALLOCOUNT_FILE")):
            if f and os.path.exists(f):
                os.unlink(f)
        return env

    def cmd(self, tool, fixture, count, name, out=True):
        if tool == "perf":
            return [self.sysns, fixture, "perf", "stat", "-a", "-I", str(INTERVAL_MS),
                    "--interval-count", str(count), "-M", "TopdownL1,TopdownL2", "-x,"] + \
                (["-o", os.path.join(self.out, name + ".out")] if out else [])
        return [self.topdownd, "--sysfs-root", fixture, "--watch", "--count", str(count),
                "-i", "%dms" % INTERVAL_MS]

    def run(self, tool, fixture, count, name, wrap):
        """The calls the fake PMU answered in one whole run under @wrap.
        The fake's clock is read-paced (FAKEPMU_CLOCK_STEP, one interval
        per read): under valgrind a tool runs 50 times slower, and on the
        wall clock the fake would simulate every 4 ms rotation of every
        CPU for all that time (perf's exit at 256 CPUs under callgrind took
        9 minutes, closing events the fake had to bring up to date)."""
        env = self.env(fixture, name, alloc=False)
        env["FAKEPMU_CLOCK_STEP"] = "%g" % (INTERVAL_MS / 1000)
        cmd = self.cmd(tool, fixture, count, name)
        # Inside the namespace for perf (sysns execs the wrapper, which
        # execs perf).
        cmd = cmd[:2] + wrap + cmd[2:] if tool == "perf" else wrap + cmd
        with open(os.path.join(self.out, name + ".log"), "w") as log:
            try:
                code = subprocess.call(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log,
                                       timeout=RUN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise RuntimeError("%s: not done after %d s, killed (%s)" % (
                    " ".join(cmd), RUN_TIMEOUT_S, os.path.join(self.out, name + ".log")))
        if code != 0:
            raise RuntimeError("%s exited %d (%s)" % (" ".join(cmd), code,
                                                    os.path.join(self.out, name + ".log")))
        calls = 0
        if os.path.exists(env["FAKEPMU_STATS"]):
            for line in open(env["FAKEPMU_STATS"]):
                calls += int(line.split()[2])
        return calls

    def timing(self, tool, fixture, n, rep):
        """CPU microseconds and allocations per interval over WINDOW
        intervals of the steady state, and the RSS then minus the fake
        PMU's heap (KiB)."""
        name = "%s-%d-%d" % (tool, n, rep)
        env = self.env(fixture, name)
        # perf prints its intervals on stderr (unbuffered), topdownd on
        # stdout (flushed after each table).
        cmd = self.cmd(tool, fixture, WARMUP + WINDOW + 2, name, out=False)
        pipe, null = subprocess.PIPE, subprocess.DEVNULL
        p = subprocess.Popen(cmd, env=env, text=True,
                             stdout=null if tool == "perf" else pipe,
                             stderr=pipe if tool == "perf" else null)
        seen, last, marks = 0, None, {}
        pattern = re.compile(r"\s*([0-9.]+)," if tool == "perf" else r"# ([0-9.]+) s$")
        # The pipe ends when the tool does; a tool that hangs is killed.
        watchdog = threading.Timer(RUN_TIMEOUT_S, p.kill)
        watchdog.start()
        for line in (p.stderr if tool == "perf" else p.stdout):
            m = pattern.match(line)
            if not m or m.group(1) == last:
                continue
            last = m.group(1)
            seen += 1
            if seen in (WARMUP, WARMUP + WINDOW):
                allocs, heap = read_allocs(env["ALLOCOUNT_FILE"])
                marks[seen] = (run_time(p.pid), allocs, vm_rss_kib(p.pid) - heap / 1024)
        _, status, _ = os.wait4(p.pid, 0)
        watchdog.cancel()
        code = os.waitstatus_to_exitcode(status)
        if code != 0 or len(marks) < 2:
            raise RuntimeError("%s: exited %d after %d intervals" % (" ".join(cmd), code, seen))
        (c0, a0, _), (c1, a1, rss) = marks[WARMUP], marks[WARMUP + WINDOW]
        return {"cpu_us": (c1 - c0) / WINDOW / 1e3, "allocs": (a1 - a0) / WINDOW,
                "rss_kib": rss}

    def instructions(self, tool, fixture, n):
        total = []
        for c in CG_COUNTS:
            name = "%s-cg-%d-%d" % (tool, n, c)
            cg = os.path.join(self.out, name + ".cg")
            for f in os.listdir(self.out):
                if f.startswith(name + ".cg"):
                    os.unlink(os.path.join(self.out, f))
            self.run(tool, fixture, c, name,
                     ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg,
                      "--separate-threads=yes", "--separate-callers=12", "--dump-instr=no"])
            own = 0
            for f in os.listdir(self.out):
                if not f.startswith(name + ".cg"):
                    continue
                cost, ctx_obj, _ = self.parse_callgrind(os.path.join(self.out, f))
                fake = {ctx.split("'")[0] for ctx, ob in ctx_obj.items()
                        if ob and os.path.basename(ob).startswith("libfakepmu")}
                own += sum(ir for ctx, ir in cost.items()
                           if not any(fn in fake for fn in ctx.split("'")))
            total.append(own)
        return (total[1] - total[0]) / (CG_COUNTS[1] - CG_COUNTS[0])

    def syscalls(self, tool, fixture, n):
        total = []
        for c in CG_COUNTS:
            name = "%s-strace-%d-%d" % (tool, n, c)
            st = os.path.join(self.out, name + ".strace")
            answered = self.run(tool, fixture, c, name, ["strace", "-f", "-c", "-o", st])
            calls = 0
            for line in open(st):
                f = line.split()
                if f and f[-1] == "total":
                    calls = int(f[3])
            total.append(calls + answered)
        return (total[1] - total[0]) / (CG_COUNTS[1] - CG_COUNTS[0])


def compare(tools, fixtures, sizes, log):
    """{n: {tool: figures}} for every size (the tools alternately);
    instructions and system calls at the smallest."""
    res = {}
    for n in sizes:
        log("perf vs topdownd, %d CPUs: CPU time, allocations, RSS" % n)
        runs = {"perf": [], "topdownd": []}
        for rep in range(tools.repeats):
            for tool in ("perf", "topdownd"):
                runs[tool].append(tools.timing(tool, fixtures[n], n, rep))
        res[n] = {tool: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
                  for tool, rs in runs.items()}
    n = sizes[0]
    for tool in ("perf", "topdownd"):
        log("perf vs topdownd, %d CPUs: %s under callgrind and strace" % (n, tool))
        res[n][tool]["instr"] = tools.instructions(tool, fixtures[n], n)
        res[n][tool]["syscalls"] = tools.syscalls(tool, fixtures[n], n)
    return res


def fd_limit_allows(tools, fixture_small, n_small, n):
    """Whether perf's events at @n CPUs fit RLIMIT_NOFILE, raised as far as
    this process may (root: up to fs.nr_open); (ok, needed, limit)."""
    name = "perf-fds"
    env = tools.env(fixture_small, name, alloc=False)
    subprocess.check_call(tools.cmd("perf", fixture_small, 1, name), env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=RUN_TIMEOUT_S)
    opens = sum(int(line.split()[2]) for line in open(env["FAKEPMU_STATS"])
                if line.split()[1] == "perf_event_open")
    need = opens * n // n_small + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for limits in ((need, max(hard, need)), (hard, hard)):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, limits)
            break
        except (OSError, ValueError):
            continue
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return need <= soft, need, soft
