#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pingpong.py CGROUP_A CGROUP_B CPU SECONDS: two processes, one in each
cgroup, both on CPU, pass a byte back and forth through pipes for SECONDS:
a cgroup switch at every hand-over.  Prints the round trips.

Each child stops itself and is moved into its cgroup by this process: a
task that moves itself while it runs is charged by per-cgroup attribution
for its CPU's slice since the last switch (README), not what is tested."""
import os
import signal
import sys
import time

a, b, cpu, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
ping_r, ping_w = os.pipe()
pong_r, pong_w = os.pipe()
done_r, done_w = os.pipe()


def child(body):
    pid = os.fork()
    if pid == 0:
        os.sched_setaffinity(0, {cpu})
        os.kill(os.getpid(), signal.SIGSTOP)
        body()
        os._exit(0)
    os.waitpid(pid, os.WUNTRACED)
    return pid


def pong():
    while True:
        x = os.read(ping_r, 1)
        if not x or x == b"q":
            return
        os.write(pong_w, x)


def ping():
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        for _ in range(100):
            os.write(ping_w, b"x")
            os.read(pong_r, 1)
        n += 100
    os.write(ping_w, b"q")
    os.write(done_w, str(n).encode())


pids = [(child(ping), a), (child(pong), b)]
for pid, cgroup in pids:
    with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
        f.write(str(pid))
for pid, _ in pids:
    os.kill(pid, signal.SIGCONT)
for pid, _ in pids:
    os.waitpid(pid, 0)
os.close(done_w)
print(os.read(done_r, 64).decode())
