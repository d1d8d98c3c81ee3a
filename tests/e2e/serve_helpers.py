"""Helpers for the knee serve end-to-end tests (tests/e2e/serve_*.sh), standard library only.

Starts `knee serve` as a child process (port 0, reads the printed port), and drives it with
http.client or raw sockets: single requests, an open loop on a fixed schedule (latency from
the planned time), a closed loop, and /stats. Every child is killed at exit.
"""
import atexit
import http.client
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

KNEE = os.environ.get("KNEE", "build/knee")
_children = []
LINE = re.compile(r"^listening on (127\.0\.0\.1|\[::1\]):(\d+) \(([a-z]+)\)$")


def _kill_children():
    for p in _children:
        if p.poll() is None:
            p.kill()
            p.wait()


atexit.register(_kill_children)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))


def in_tier(tier):
    """True when this run of the test does `tier`'s part (exact or timing): KNEE_TIER, set by
    CMake for a script in both tiers (tests/e2e/timing.bash); run by hand, a test does both."""
    t = os.environ.get("KNEE_TIER", "")
    return not t or t == tier


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg, flush=True)


class Server:
    """A running `knee serve`; .ports lists the port of each server it printed."""

    def __init__(self, *args, count=1):
        self.proc = subprocess.Popen([KNEE, "serve", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        _children.append(self.proc)
        self.ports, self.presets, self.lines = [], [], []
        for _ in range(count):
            line = self.proc.stdout.readline().rstrip("\n")
            self.lines.append(line)
            m = LINE.match(line)
            if not m:
                err = self.proc.stderr.read() if self.proc.poll() is not None else ""
                fail(f"unexpected first line {line!r} (stderr: {err!r})")
            self.ports.append(int(m.group(2)))
            self.presets.append(m.group(3))
        self.port = self.ports[0]

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """Signal the server and return (exit code, remaining stdout lines)."""
        self.proc.send_signal(sig)
        out, _ = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out.splitlines()


def stats(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/stats")
    r = c.getresponse()
    body = r.read()
    c.close()
    return json.loads(body)


def server_timing(header):
    """'queue;dur=1.5, work;dur=20.1' -> {'queue': 1.5, 'work': 20.1}"""
    out = {}
    for part in (header or "").split(","):
        m = re.match(r"\s*(\w+);dur=([0-9.]+)", part)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def get(port, path="/", conn=None, headers=None):
    """One GET; returns (status, headers dict (lower-case names), body bytes, seconds)."""
    own = conn is None
    if own:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    t0 = time.perf_counter()
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    body = r.read()
    dt = time.perf_counter() - t0
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    if own:
        conn.close()
    return r.status, hdrs, body, dt


def raw(port, data, timeout=5.0, until_close=True):
    """Send raw bytes, return everything received until the server closes (or timeout)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    buf = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
            if not until_close and b"\r\n\r\n" in buf:
                break
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return buf


def open_loop(port, rate, seconds, path="/", workers=64):
    """Requests leave on a fixed schedule (rate per second) whatever the server does.

    Each worker thread keeps one keep-alive connection. Returns a list of dicts:
    planned_s, latency_ms (from the planned time), service_ms (from the send), status,
    timing (Server-Timing), body (parsed JSON or None)."""
    n = int(rate * seconds)
    t0 = time.perf_counter() + 0.2
    schedule = [t0 + i / rate for i in range(n)]
    nxt = [0]
    lock = threading.Lock()
    rows = []
    paths = path if callable(path) else (lambda i: path)

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= n:
                break
            planned = schedule[i]
            now = time.perf_counter()
            if planned > now:
                time.sleep(planned - now)
            sent = time.perf_counter()
            try:
                status, hdrs, body, _ = get(port, paths(i), conn=conn)
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                status, hdrs, body = -1, {}, b""
            end = time.perf_counter()
            try:
                parsed = json.loads(body) if body else None
            except ValueError:
                parsed = None
            with lock:
                rows.append({"i": i, "planned_s": planned - t0, "latency_ms": (end - planned) * 1e3,
                             "service_ms": (end - sent) * 1e3, "status": status,
                             "timing": server_timing(hdrs.get("server-timing")), "body": parsed})
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows.sort(key=lambda r: r["i"])
    return rows


def closed_loop(port, clients, seconds, path="/"):
    """N clients, each sends, waits for the answer, sends again. Returns rows as open_loop."""
    stop_at = time.perf_counter() + seconds
    lock = threading.Lock()
    rows = []

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.perf_counter() < stop_at:
            status, hdrs, body, dt = get(port, path, conn=conn)
            with lock:
                rows.append({"status": status, "service_ms": dt * 1e3, "latency_ms": dt * 1e3,
                             "timing": server_timing(hdrs.get("server-timing")),
                             "body": json.loads(body) if body else None})
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return rows


def pct(values, p):
    """Nearest rank."""
    s = sorted(values)
    return s[max(1, math.ceil(p / 100 * len(s))) - 1]
