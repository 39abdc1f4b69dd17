#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The third battery's drivers (75-battery3.t), where bash cannot go.

  battery3.py hup-at-start CONFIG LOG N -- COMMAND...
      N times: starts COMMAND (the daemon, -c CONFIG, logging to LOG) and
      sends it SIGHUP the moment it opens CONFIG (inotify IN_OPEN: main()
      is reading its configuration, before any of its set-up).  Prints
      "N started, K died (statuses), R reloaded": started is how many
      went on to listen, reloaded how many logged the reload the signal
      asked for.  Each daemon is stopped with SIGTERM.
  battery3.py bcrypt-flood PORT N
      N connections from N loopback addresses (no throttle applies), each
      sending a request with its own wrong password, then held open;
      prints "sent N" once all are written, and exits when stdin closes.
"""
import base64
import ctypes
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time

IN_OPEN = 0x20


def inotify_open(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
    if fd < 0 or libc.inotify_add_watch(fd, path.encode(), IN_OPEN) < 0:
        sys.exit("inotify: %s" % os.strerror(ctypes.get_errno()))
    return fd


def wait_log(log, pattern, proc, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            if re.search(pattern, open(log, errors="replace").read(), re.M):
                return True
        except OSError:
            pass
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def hup_at_start(config, log, n, cmd):
    started = died = reloaded = 0
    statuses = []
    for _ in range(n):
        fd = inotify_open(config)
        with open(log, "w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        # The first open of the file: main() is loading it.
        r, _, _ = select.select([fd], [], [], 30)
        os.close(fd)
        if r:
            try:
                proc.send_signal(signal.SIGHUP)
            except ProcessLookupError:
                pass
        if wait_log(log, r"Listening on ", proc, 60):
            started += 1
            if wait_log(log, r"Configuration (not )?reloaded", proc, 60):
                reloaded += 1
            proc.send_signal(signal.SIGTERM)
        try:
            st = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            st = proc.wait()
        if st != 0:
            died += 1
            statuses.append(str(st))
    print("%d started, %d died (%s), %d reloaded" % (started, died, " ".join(statuses) or "-", reloaded))


def bcrypt_flood(port, n):
    socks = []
    for i in range(n):
        src = "127.0.%d.%d" % (10 + i // 250, 1 + i % 250)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((src, 0))
        s.connect(("127.0.0.1", port))
        cred = base64.b64encode(("nobody%d:wrong%d" % (i, i)).encode()).decode()
        s.sendall(("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic %s\r\n\r\n" % cred).encode())
        socks.append(s)
    print("sent", len(socks), flush=True)
    sys.stdin.read()
    for s in socks:
        s.close()


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "hup-at-start":
        sep = a.index("--")
        hup_at_start(a[0], a[1], int(a[2]), a[sep + 1:])
    elif cmd == "bcrypt-flood":
        bcrypt_flood(int(a[0]), int(a[1]))
    else:
        sys.exit("unknown command " + cmd)


main()
