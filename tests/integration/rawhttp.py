#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Raw HTTP over TCP for the robustness tests, where curl cannot go.

  rawhttp.py PORT header N        GET with an N-byte header: prints the status
  rawhttp.py PORT url N           GET with an N-byte URL: prints the status
  rawhttp.py PORT statuses DATA   sends DATA, reads to the end: prints the
                                  first status and how many status lines
                                  came ("400 1")
  rawhttp.py PORT send DATA       sends DATA (bash $'' escapes): prints the
                                  status, or "closed" if the server just closed
  rawhttp.py PORT pipelined N     N GET /-/healthy in one write: prints how
                                  many 200 responses came back
  rawhttp.py PORT halfclose       a request then shutdown(SHUT_WR): prints the status
  rawhttp.py PORT idle N SECONDS  holds N idle connections for SECONDS (from
                                  127.0.0.2.. so one host's limit is not hit)
  rawhttp.py PORT slowloris N SECONDS
                                  N connections trickling header bytes
                                  (both print "open N" once connected, then
                                  "N ALIVE": connected, still open at the end)
  rawhttp.py PORT garbage N       N connections sending random bytes
"""
import os
import re
import socket
import sys
import time

HOST = "127.0.0.1"


def connect(source=None, timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if source:
        s.bind((source, 0))
    s.connect((HOST, PORT))
    return s


def status_of(s):
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    if not data.startswith(b"HTTP/"):
        return "closed"
    return data.split(b" ")[1].decode()


def exchange(payload, shut=False):
    s = connect()
    try:
        s.sendall(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass
    if shut:
        s.shutdown(socket.SHUT_WR)
    st = status_of(s)
    s.close()
    return st


def sources(n):
    """Spread over 127.0.0.2..: loopback answers the whole of 127/8."""
    return ["127.0.%d.%d" % (2 + i // 250, 2 + i % 250) for i in range(n)]


def hold(conns, seconds, trickle=False):
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        if trickle:
            for s in list(conns):
                try:
                    s.send(b"X-%d: %d\r\n" % (i, i))
                except OSError:
                    conns.remove(s)
            i += 1
        time.sleep(1 if trickle else 0.2)
    alive = 0
    for s in conns:
        try:
            s.setblocking(False)
            if s.recv(1) == b"":
                continue
        except BlockingIOError:
            alive += 1
            continue
        except OSError:
            continue
    for s in conns:
        s.close()
    return alive


def main():
    global PORT
    PORT = int(sys.argv[1])
    cmd, args = sys.argv[2], sys.argv[3:]
    if cmd == "header":
        print(exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * int(args[0]) + b"\r\n\r\n"))
    elif cmd == "url":
        print(exchange(b"GET /metrics?x=" + b"b" * int(args[0]) + b" HTTP/1.1\r\nHost: x\r\n\r\n"))
    elif cmd == "send":
        print(exchange(args[0].encode("latin-1")))
    elif cmd == "statuses":
        s = connect()
        s.sendall(args[0].encode("latin-1"))
        s.shutdown(socket.SHUT_WR)
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except (socket.timeout, ConnectionResetError):
            pass
        s.close()
        lines = re.findall(rb"(?:^|\r\n)HTTP/1\.[01] (\d{3})", data)
        print("%s %d" % (lines[0].decode() if lines else "closed", len(lines)))
    elif cmd == "pipelined":
        n = int(args[0])
        s = connect()
        s.sendall(b"GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n" * n)
        data, deadline = b"", time.monotonic() + 10
        while data.count(b"HTTP/1.1 200") < n and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        print(data.count(b"HTTP/1.1 200"))
    elif cmd == "halfclose":
        print(exchange(b"GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n", shut=True))
    elif cmd in ("idle", "slowloris"):
        n, seconds = int(args[0]), float(args[1])
        conns = []
        for src in sources(n):
            try:
                s = connect(src)
                if cmd == "slowloris":
                    s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                conns.append(s)
            except OSError:
                pass
        # Says when they are connected, so a test can wait for the server
        # to hold them rather than sleep.
        print("open", len(conns), flush=True)
        print(len(conns), hold(conns, seconds, trickle=cmd == "slowloris"))
    elif cmd == "garbage":
        sent = 0
        for _ in range(int(args[0])):
            try:
                s = connect()
                s.sendall(os.urandom(4096))
                s.settimeout(0.3)
                try:
                    s.recv(4096)
                except OSError:
                    pass
                s.close()
                sent += 1
            except OSError:
                pass
        print(sent)
    else:
        sys.exit("unknown command " + cmd)


main()
