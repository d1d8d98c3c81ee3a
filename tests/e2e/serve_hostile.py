"""Hostile clients for the knee serve end-to-end tests (tests/e2e/serve_*.sh), standard
library only, loopback only, every loop bounded in time and bytes.

- reject_delivery: an oversized request (413, 414, 431) sent in full, or a client that keeps
  sending after it: does the client read the status line, or does a reset destroy it?
- framing: raw requests with smuggling-style framing; the status the server answers.
- many_connections: open N connections (raising RLIMIT_NOFILE as far as the hard limit).
- rss_kib: a process's resident memory, for the memory-bound checks.
"""
import os
import resource
import selectors
import socket
import time

STATUS_PREFIX = b"HTTP/1.1 "


def status_of(buf):
    """The status code of the first response in buf, or None."""
    if not buf.startswith(STATUS_PREFIX) or len(buf) < 12:
        return None
    try:
        return int(buf[9:12])
    except ValueError:
        return None


def oversized(kind):
    """An oversized request for the default caps (head 8 KiB, target 2 KiB, body 1 MiB)."""
    if kind == 413:
        body = b"b" * (2 * 1024 * 1024)
        return b"POST /work HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    if kind == 414:
        return b"GET /" + b"u" * (64 * 1024) + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    if kind == 431:
        return b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"h" * (60 * 1024) + b"\r\n\r\n"
    raise ValueError(kind)


def send_in_full_then_read(port, data, timeout=10.0):
    """Send the whole request (blocking), then read until the server closes.

    Returns (status or None, how it ended: 'eof', 'reset', 'timeout', 'send-reset')."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    buf = b""
    how = "eof"
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            how = "send-reset"
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except ConnectionResetError:
        how = "reset" if how == "eof" else how
    except socket.timeout:
        how = "timeout"
    finally:
        s.close()
    return status_of(buf), how


def keep_sending_and_read(port, head, seconds=3.0, max_bytes=64 * 1024 * 1024):
    """Send head, then filler bytes without end (up to seconds / max_bytes), reading whatever
    the server answers meanwhile (a client such as curl uploading a file). Once a status
    line has arrived it stops sending and reads on until the server closes. Returns
    (status or None, how it ended: 'eof', 'reset' or 'timeout')."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
    pending = head
    filler = b"k" * 65536
    sent = 0
    buf = b""
    how = "timeout"
    sending = True
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and how == "timeout":
            for _, ev in sel.select(timeout=0.2):
                if ev & selectors.EVENT_READ:
                    try:
                        chunk = s.recv(65536)
                    except ConnectionResetError:
                        how = "reset"
                        break
                    if not chunk:
                        how = "eof"
                        break
                    buf += chunk
                    if sending and b"\r\n" in buf:
                        sending = False  # the answer is here: stop, read to the end
                        sel.modify(s, selectors.EVENT_READ)
                if sending and ev & selectors.EVENT_WRITE:
                    if not pending:
                        pending = filler
                    try:
                        n = s.send(pending)
                    except BlockingIOError:
                        n = 0
                    except (BrokenPipeError, ConnectionResetError):
                        n = 0  # the server closed; what it sent may still be readable
                        sending = False
                        sel.modify(s, selectors.EVENT_READ)
                    pending = pending[n:]
                    sent += n
                    if sending and sent >= max_bytes:
                        sending = False
                        sel.modify(s, selectors.EVENT_READ)
    finally:
        sel.close()
        s.close()
    return status_of(buf), how


def rss_kib(pid):
    """VmRSS of a process in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def raise_nofile(want):
    """Raise this process's soft RLIMIT_NOFILE towards want; returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(want, hard) if hard != resource.RLIM_INFINITY else want
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def exchange(port, data, half_close=False, timeout=10.0):
    """Send data (then shut down the write side when half_close), read until the server
    closes. Returns (bytes received, how it ended: 'eof', 'reset' or 'timeout')."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    buf = b""
    how = "eof"
    try:
        s.sendall(data)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except ConnectionResetError:
        how = "reset"
    except socket.timeout:
        how = "timeout"
    finally:
        s.close()
    return buf, how


def statuses(buf):
    """Every status code in a stream of responses, in order."""
    out = []
    i = buf.find(STATUS_PREFIX)
    while i >= 0:
        out.append(int(buf[i + 9:i + 12]))
        i = buf.find(STATUS_PREFIX, i + 1)
    return out


def wait_stats(port, cond, timeout=15.0):
    """Poll /stats until cond(stats) holds (or timeout); returns the last stats."""
    from serve_helpers import stats
    deadline = time.monotonic() + timeout
    while True:
        st = stats(port)
        if cond(st) or time.monotonic() > deadline:
            return st
        time.sleep(0.05)


class RssSampler:
    """Samples a process's VmRSS every `every` seconds on a thread; .peak in KiB."""

    def __init__(self, pid, every=0.05):
        import threading
        self.pid, self.every = pid, every
        self.base = rss_kib(pid)
        self.peak = self.base
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, rss_kib(self.pid))
            except (OSError, RuntimeError):
                return
            self._stop.wait(self.every)

    def stop(self):
        self._stop.set()
        self._t.join()
        return self.peak - self.base


class Prober:
    """A well-behaved keep-alive client on its own thread: one request every `every` s,
    recording (status, seconds) of each; a failure is status -1."""

    def __init__(self, port, path="/work?ms=1", every=0.05):
        import http.client
        import threading
        self.results = []
        self._stop = threading.Event()

        def run():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            while not self._stop.is_set():
                t0 = time.monotonic()
                try:
                    conn.request("GET", path)
                    r = conn.getresponse()
                    r.read()
                    self.results.append((r.status, time.monotonic() - t0))
                except (OSError, http.client.HTTPException):
                    self.results.append((-1, time.monotonic() - t0))
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                self._stop.wait(every)
            conn.close()

        self._t = threading.Thread(target=run, daemon=True)
        self._t.start()

    def stop(self):
        self._stop.set()
        self._t.join()
        return self.results


def open_many(port, n, first=b"", batch=500):
    """Open n connections (non-blocking connects, in batches the backlog can hold) and send
    `first` on each. Returns the list of sockets (non-blocking)."""
    socks = []
    for start in range(0, n, batch):
        part = []
        for _ in range(min(batch, n - start)):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            part.append(s)
        sel = selectors.DefaultSelector()
        for s in part:
            sel.register(s, selectors.EVENT_WRITE)
        pending = len(part)
        deadline = time.monotonic() + 30
        while pending and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=1):
                s = key.fileobj
                sel.unregister(s)
                pending -= 1
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    raise OSError(err, f"connect: {os.strerror(err)}")
                if first:
                    s.send(first)
        sel.close()
        if pending:
            raise OSError("connect timed out")
        socks.extend(part)
    return socks
