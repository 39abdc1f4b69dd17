#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The abuse battery's attackers, each printing one JSON object.

Many client hosts are simulated with loopback source addresses: Linux
answers the whole of 127/8 on lo.  Attackers use 127.0.1.x and 127.0.2.x;
the victim (a scraper) uses 127.0.3.1.

  abuse.py PORT crowd N HOSTS SECONDS [slowloris] [tls] [same] [accept=K] [ready=FILE]
      N connections from HOSTS addresses (with same: from the victim's own
      address, 127.0.3.1), idle or trickling a header byte
      every second (slowloris), held for SECONDS once the server holds K
      of them (default N; its topdown_http_connections gauge says so,
      FILE is then created); meanwhile 5 scrapes of /metrics from
      127.0.3.1, a quarter of a second apart.  Prints how many connected,
      how many the server held, how many crowd connections it had closed
      by the end and, of each scrape, its status, latency, when it was
      answered (with tls: its handshake done; seconds since the first
      connect), how many crowd connections were closed meanwhile and
      whether it could have waited for one's deadline: closed meanwhile,
      and answered no sooner than the [http] timeout T (timeout=T,
      seconds) after the first connect.
  abuse.py PORT flood N PATH [ready=FILE] [victim=PATH]
      N clients (8 addresses) each asking PATH ({k} in it: the client's
      number, 0 to N-1) again as soon as answered,
      while the victim asks its PATH (/metrics by default) 5 times, one a
      second; FILE is created once the flood runs (for a test that stops
      the daemon in it).  Prints the victim's status and latency, the
      flood's status counts and the median latency of its 200s.
  abuse.py PORT tls-stall PID byte|hello SECONDS
      One TLS client that sends one byte of a record, or a whole
      ClientHello, then nothing.  Prints the daemon's CPU use (percent of
      one core) over SECONDS and when the server closed the connection.
  abuse.py PORT guess CLIENTS TRIES USER PASSWORD [tls]
      CLIENTS hosts guess USER's password as fast as they are answered,
      until each has been answered TRIES times (at most 120 s), while the
      victim scrapes with the right credentials (cached by a first scrape)
      and /-/healthy, every 200 ms.  Prints the victim's latencies, the
      guessers' status counts and, as medians, how many password checks
      (401 answers) were answered while a victim's request waited and
      while a guesser's 401 request waited (not counting its own).
  abuse.py PORT auth-timing PID USER PASSWORD
      Wrong passwords for USER and for unknown users (each from a fresh
      source address, so no throttle applies): the median answer time of
      each, and the daemon's CPU time per answer of each (8 in a row),
      which the machine's load does not inflate.
  abuse.py PORT throttle USER N
      N wrong passwords from one address, one after the other: prints the
      statuses and the Retry-After of the first 429.
  abuse.py PORT keepalive-reload PID LOG
      A keep-alive connection answers a request, the daemon gets SIGHUP,
      and once LOG says the reload ended the same connection answers
      again (prints both statuses).
  abuse.py PORT raw DATA
      DATA sent as is (bash $'' escapes); prints the status lines received
      (all of them), the body of the first response, and the time to the
      answer or to the close.
"""
import base64
import bisect
import json
import os
import select
import signal
import socket
import ssl
import statistics
import sys
import threading
import time

HOST = "127.0.0.1"
VICTIM = "127.0.3.1"


def connect(source=None, timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Like curl: no Nagle delay between the TLS Finished and the request.
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(timeout)
    if source:
        s.bind((source, 0))
    s.connect((HOST, PORT))
    return s


def host_addresses(n, base=1):
    return ["127.0.%d.%d" % (base + i // 250, 1 + i % 250) for i in range(n)]


def read_response(s, deadline):
    """Reads one response (status line, headers, Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(body) < n:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        body += chunk
    return status, headers, body[:n], body[n:]


def tls_context():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def request(path, source=None, auth=None, timeout=5.0, tls=False, close=True):
    """One GET on a new connection: (status or error text, seconds)."""
    t0 = time.monotonic()
    try:
        s = connect(source, timeout)
        if tls:
            s = tls_context().wrap_socket(s)
        hdr = "GET %s HTTP/1.1\r\nHost: x\r\n" % path
        if auth:
            hdr += "Authorization: Basic %s\r\n" % base64.b64encode(auth.encode()).decode()
        if close:
            hdr += "Connection: close\r\n"
        s.sendall((hdr + "\r\n").encode())
        status, headers, _, _ = read_response(s, t0 + timeout)
        s.close()
        return status, time.monotonic() - t0, headers
    except (OSError, ConnectionError, ValueError, IndexError) as e:
        return "error: %s" % (e.__class__.__name__), time.monotonic() - t0, {}


def server_connections(tls):
    """The daemon's topdown_http_connections gauge, asked from the victim."""
    t0 = time.monotonic()
    try:
        s = connect(VICTIM, 5)
        if tls:
            s = tls_context().wrap_socket(s)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        _, _, body, _ = read_response(s, t0 + 5)
        s.close()
    except (OSError, ConnectionError, ValueError, IndexError):
        return -1
    for line in body.decode("latin-1").split("\n"):
        if line.startswith("topdown_http_connections "):
            return int(float(line.split()[1]))
    return -1


def crowd(n, hosts, seconds, slowloris, tls, accept=None, ready=None, same=False, timeout=None):
    addrs = [VICTIM] if same else host_addresses(hosts)
    conns = []
    first = time.monotonic()
    for i in range(n):
        try:
            s = connect(addrs[i % len(addrs)])
            if tls and slowloris:
                # A complete handshake, then the request a byte at a time.
                s = tls_context().wrap_socket(s)
            if slowloris:
                s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            conns.append(s)
        except OSError:
            pass
    # The crowd connections the server has closed (shut down: end of
    # stream, or reset) so far, all of them in one poll().
    watch = select.poll()
    for s in conns:
        watch.register(s.fileno(), select.POLLRDHUP)

    def closed_now():
        return sum(1 for _, ev in watch.poll(0) if ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR))
    scrapes = []
    stop = threading.Event()

    def trickle():
        i = 0
        while not stop.wait(1.0):
            for s in conns:
                try:
                    s.send(b"X-%d: %d\r\n" % (i, i) if slowloris else b"")
                except OSError:
                    pass
            i += 1
    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    # The server holds them (accepted, counted; the gauge is of the newest
    # interval's body, so it may take an interval), or 30 s went by.
    want = len(conns) if accept is None else accept
    held, deadline = -1, time.monotonic() + 30
    while time.monotonic() < deadline:
        held = server_connections(tls)
        if held >= want:
            break
        time.sleep(0.05)
    if ready:
        open(ready, "w").close()
    end = time.monotonic() + seconds
    # Five scrapes, a quarter of a second apart: each says whether it could
    # have waited for a crowd connection's deadline.  None could have
    # before the first connection's deadline (at `timeout` after its
    # connect: the server's clock starts at its accept, later); after it,
    # a scrape waited for none if no crowd connection was closed between
    # its start and the server's taking it: its answer, or with TLS the
    # end of its handshake (the server's first words; 200 handshakes can
    # outlast a deadline on a loaded machine, and the crowd's connections
    # then close while scrapes are served).  The machine's speed moves
    # neither.
    for _ in range(5):
        t0 = time.monotonic()
        before = closed_now()
        taken = None
        try:
            sock = connect(VICTIM, 5.0)
            if tls:
                sock = tls_context().wrap_socket(sock)
                taken = (time.monotonic() - first, closed_now() - before)
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            status = read_response(sock, t0 + 5.0)[0]
            sock.close()
        except (OSError, ConnectionError, ValueError, IndexError) as e:
            status = "error: %s" % e.__class__.__name__
        at = time.monotonic() - first
        freed = closed_now() - before
        when, closes = taken or (at, freed)
        scrapes.append({"status": status, "ms": round((time.monotonic() - t0) * 1000, 1), "at": round(when, 2),
                        "freed": closes, "waited": not (timeout and when < timeout) and closes > 0})
        time.sleep(0.25)
    while time.monotonic() < end:
        time.sleep(0.1)
    stop.set()
    closed = closed_now()
    for s in conns:
        s.close()
    return {"connected": len(conns), "held": held, "scrapes": scrapes, "closed_by_server": closed}


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client_hello():
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = tls_context().wrap_bio(inc, out)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def tls_stall(pid, mode, seconds):
    s = connect(timeout=seconds + 5)
    s.sendall(b"\x16" if mode == "byte" else client_hello())
    c0, t0 = cpu_seconds(pid), time.monotonic()
    closed_after = None
    s.settimeout(0.1)
    while time.monotonic() - t0 < seconds:
        try:
            if s.recv(65536) == b"" and closed_after is None:
                closed_after = round(time.monotonic() - t0, 2)
        except socket.timeout:
            pass
        except OSError:
            if closed_after is None:
                closed_after = round(time.monotonic() - t0, 2)
        if closed_after is not None:
            time.sleep(0.1)
    cpu = cpu_seconds(pid) - c0
    s.close()
    return {"cpu_percent": round(100 * cpu / seconds, 1), "closed_after": closed_after}


def answers_between(done, t0, t1):
    """How many of the (sorted) answer times @done fall in (t0, t1)."""
    return bisect.bisect_left(done, t1) - bisect.bisect_right(done, t0)


def flood(n, path, ready=None, victim="/metrics"):
    counts = {}
    took_ok = []
    waits = []  # the flood's requests under way: (start, end)
    rendered = []  # when the flood's 200 answers came
    lock = threading.Lock()
    stop = threading.Event()
    addrs = host_addresses(8, base=2)

    def client(addr, k):
        # {k}: the client's number, so that each asks its own document.
        mine = path.replace("{k}", str(k))
        while not stop.is_set():
            t0 = time.monotonic()
            status, took, _ = request(mine, addr, timeout=30)
            with lock:
                counts[str(status)] = counts.get(str(status), 0) + 1
                if ready_seen.is_set():
                    waits.append((t0, time.monotonic()))
                    if status == 200:
                        took_ok.append(took)
                        rendered.append(time.monotonic())
    ready_seen = threading.Event()
    threads = [threading.Thread(target=client, args=(addrs[k % 8], k), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    # Under way: the first answers are in.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with lock:
            if sum(counts.values()) >= n:
                break
        time.sleep(0.05)
    if ready:
        open(ready, "w").close()
    ready_seen.set()
    scrapes = []
    for _ in range(5):
        t0 = time.monotonic()
        status, took, _ = request(victim, VICTIM, timeout=30)
        scrapes.append({"status": status, "ms": round(took * 1000, 1), "span": (t0, time.monotonic())})
        time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join(35)
    took_ok.sort()
    median = round(took_ok[len(took_ok) // 2] * 1000, 1) if took_ok else None
    # Waits counted in the flood's answers given meanwhile, not in
    # milliseconds: how long a turn takes depends on the machine's load,
    # who is served in between does not.
    done = sorted(end for _, end in waits)
    rendered.sort()
    for sc in scrapes:
        # The flood's renders a request waited for (its 200 answers:
        # a 503 renders nothing and comes at a rate of its own).
        sc["renders_meanwhile"] = answers_between(rendered, *sc["span"])
        sc["answers_meanwhile"] = answers_between(done, *sc.pop("span"))
    flood_between = sorted(answers_between(done, a, b) for a, b in waits)
    return {"scrapes": scrapes, "flood": counts, "flood_ok_median_ms": median,
            "flood_answers_meanwhile_median": flood_between[len(flood_between) // 2] if flood_between else None}


def guess(clients, tries, user, password, tls):
    counts = {}
    lock = threading.Lock()
    stop = threading.Event()

    # Per address: the times of its wrong-password answers (401), to tell
    # whether it could have been throttled at all, and how many answers.
    failures = {}
    answered = {}
    # Every password check answered (a 401: bcrypt ran), when; and the
    # span of each guesser's 401 request, to count the checks answered
    # while one waited for its own.
    checked, spans = [], []

    def guesser(addr, k):
        i = 0
        while not stop.is_set():
            t0 = time.monotonic()
            status, _, _ = request("/metrics", addr, auth="%s:wrong-%d-%d" % (user, k, i), tls=tls)
            t1 = time.monotonic()
            with lock:
                counts[str(status)] = counts.get(str(status), 0) + 1
                answered[addr] = answered.get(addr, 0) + 1
                if status == 401:
                    failures.setdefault(addr, []).append(t1)
                    checked.append(t1)
                    spans.append((t0, t1))
            i += 1
            if status == 429:
                time.sleep(0.05)
    first, _, _ = request("/metrics", VICTIM, auth="%s:%s" % (user, password), timeout=30, tls=tls)
    threads = [threading.Thread(target=guesser, args=(a, k), daemon=True)
               for k, a in enumerate(host_addresses(clients, base=2))]
    for t in threads:
        t.start()
    scrape, healthy = [], []
    end = time.monotonic() + 120
    addrs = host_addresses(clients, base=2)

    def done():
        with lock:
            return all(answered.get(a, 0) >= tries for a in addrs)

    def timed(path, auth):
        t0 = time.monotonic()
        st, took, _ = request(path, VICTIM, auth=auth, timeout=15, tls=tls)
        return st, took, (t0, time.monotonic())
    while time.monotonic() < end and not done():
        scrape.append(timed("/metrics", "%s:%s" % (user, password)))
        healthy.append(timed("/-/healthy", None))
        time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join(20)

    def meanwhile(span, own=False):
        # Checks answered while the request waited (its own not counted).
        return sum(1 for t in checked if span[0] < t <= span[1]) - (1 if own else 0)

    def summary(samples):
        ms = sorted(t * 1000 for _, t, _ in samples)
        waits = [meanwhile(span) for _, _, span in samples]
        return {"n": len(samples), "ok": sum(1 for st, _, _ in samples if st == 200),
                "median_ms": round(statistics.median(ms), 1) if ms else None,
                "max_ms": round(ms[-1], 1) if ms else None,
                "checks_meanwhile_median": statistics.median(waits) if waits else None}
    # An address with a sixth failure asked again at once (the loop does
    # not wait), inside the 1 s block: its seventh try must be answered 429.
    return {"first": first, "scrape": summary(scrape), "healthy": summary(healthy),
            "guessers": counts, "min_answers_per_address": min(answered.get(a, 0) for a in addrs),
            "guesser_checks_meanwhile_median": statistics.median([meanwhile(s, True) for s in spans])
            if spans else None,
            "max_failures_per_address": max((len(t) for t in failures.values()), default=0),
            "addresses_past_free_failures": sum(1 for t in failures.values() if len(t) >= 6)}


def auth_timing(pid, user, password):
    times = {"known": [], "unknown": []}
    cpu = {}
    addrs = iter(host_addresses(40, base=5))
    for kind in ("known", "unknown"):
        c0 = cpu_seconds(pid)
        for i in range(8):
            auth = "%s:wrong-%d" % (user, i) if kind == "known" else "nobody-%d:wrong" % i
            _, t, _ = request("/metrics", next(addrs), auth=auth, timeout=30)
            times[kind].append(t)
        cpu[kind] = (cpu_seconds(pid) - c0) / 8
    return {"known_ms": round(statistics.median(times["known"]) * 1000, 1),
            "unknown_ms": round(statistics.median(times["unknown"]) * 1000, 1),
            "known_cpu_ms": round(cpu["known"] * 1000, 1),
            "unknown_cpu_ms": round(cpu["unknown"] * 1000, 1)}


def throttle(user, n):
    statuses, retry_after = [], None
    for i in range(n):
        st, _, headers = request("/metrics", "127.0.4.1", auth="%s:wrong-%d" % (user, i), timeout=30)
        statuses.append(st)
        if st == 429 and retry_after is None:
            retry_after = headers.get("retry-after")
    return {"statuses": statuses, "retry_after": retry_after}


def reloads_logged(log):
    with open(log, errors="replace") as f:
        return sum(1 for line in f if "Configuration reloaded" in line or "Configuration not reloaded" in line)


def keepalive_reload(pid, log):
    s = connect(VICTIM)
    req = b"GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n"
    s.sendall(req)
    before, _, _, rest = read_response(s, time.monotonic() + 5)
    n = reloads_logged(log)
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + 30
    while reloads_logged(log) <= n and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        s.sendall(req)
        after, _, _, _ = read_response(s, time.monotonic() + 5)
    except (OSError, ConnectionError) as e:
        after = "error: %s" % e.__class__.__name__
    s.close()
    return {"before": before, "after": after}


def raw(data):
    s = connect(timeout=15)
    t0 = time.monotonic()
    try:
        s.sendall(data)
    except OSError:
        pass
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
            if b"\r\n\r\n" in got:
                head, _, body = got.partition(b"\r\n\r\n")
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                if len(body) >= n:
                    # Anything more (a second status line) arrives at once.
                    s.settimeout(0.3)
    except (socket.timeout, ConnectionResetError):
        pass
    took = time.monotonic() - t0
    s.close()
    text = got.decode("latin-1")
    status_lines = [line for line in text.split("\r\n") if line.startswith("HTTP/")]
    body = text.partition("\r\n\r\n")[2]
    return {"status_lines": status_lines, "body": body[:200], "seconds": round(took, 2)}


def main():
    global PORT
    PORT = int(sys.argv[1])
    cmd, a = sys.argv[2], sys.argv[3:]
    if cmd == "crowd":
        opts = dict(x.split("=", 1) for x in a[3:] if "=" in x)
        out = crowd(int(a[0]), int(a[1]), float(a[2]), "slowloris" in a[3:], "tls" in a[3:],
                    int(opts["accept"]) if "accept" in opts else None, opts.get("ready"),
                    "same" in a[3:], float(opts["timeout"]) if "timeout" in opts else None)
    elif cmd == "flood":
        opts = dict(x.split("=", 1) for x in a[2:] if "=" in x)
        out = flood(int(a[0]), a[1], opts.get("ready"), opts.get("victim", "/metrics"))
    elif cmd == "tls-stall":
        out = tls_stall(int(a[0]), a[1], float(a[2]))
    elif cmd == "guess":
        out = guess(int(a[0]), int(a[1]), a[2], a[3], "tls" in a[4:])
    elif cmd == "auth-timing":
        out = auth_timing(int(a[0]), a[1], a[2])
    elif cmd == "throttle":
        out = throttle(a[0], int(a[1]))
    elif cmd == "keepalive-reload":
        out = keepalive_reload(int(a[0]), a[1])
    elif cmd == "raw":
        out = raw(a[0].encode("latin-1"))
    else:
        sys.exit("unknown command " + cmd)
    print(json.dumps(out))


main()
