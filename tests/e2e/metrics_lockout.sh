#!/usr/bin/env bash
# The --metrics-listen endpoint under a lock-out attempt (knee serve's; knee run's and knee
# capacity's are the same code): its 32 connection slots are taken by 30 connections that send
# nothing, one that trickles a first request a field line every 0.5 s, and one that is
# answered a scrape and then trickles its second request. A scrape meanwhile gets 503. The
# deadlines (src/metrics/endpoint.h) are fixed instants that no byte moves: the first request
# must be complete 5 s after the accept, a request answered 10 s after its first byte. The
# exact part: every one is closed (generous bounds) and scrapes are answered again; then 32
# connections that scrape once and stay idle do not lock a scraper out either (the one idle
# the longest is closed for it); --help states the values. The timing part: each close came
# at its deadline.
# tier: exact timing
source "$KNEE_SRC/tests/e2e/run_common.bash"
cd "$TMP"
limits='32 connections, each closed unless its first request is whole 5 s after the connect and any request is answered 10 s after its first byte (idle: 120 s)'
for cmd in serve run capacity; do
    "$KNEE" $cmd --help | grep -F -- "$limits" >/dev/null || fail "knee $cmd --help does not state the endpoint's deadlines"
done
start_knee_serve s --preset null --metrics-listen 127.0.0.1:0
MPORT=$MPORT_s PYTHONPATH="$KNEE_SRC/tests/e2e" python3 - <<'PY'
import os
import selectors
import socket
import time
from serve_helpers import check, in_tier

PORT = int(os.environ["MPORT"])
FIRST_S, REQUEST_S = 5.0, 10.0
SCRAPE = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"


def scrape(s=None):
    """One scrape, on s or a new connection: the status, or -1 when the connection failed."""
    try:
        mine = s is None
        if mine:
            s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        s.sendall(SCRAPE)
        buf = b""
        while not (b"\r\n\r\n" in buf and len(buf) >= buf.index(b"\r\n\r\n") + 4 + Conn.length(buf)):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        if mine:
            s.close()
        return int(buf[9:12]) if buf.startswith(b"HTTP/1.1 ") else -1
    except OSError:
        return -1


class Conn:
    def __init__(self, kind):
        self.kind = kind
        self.t0 = time.monotonic()
        self.sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        self.start = self.t0  # when the deadline being tested began
        self.ended = None
        self.next_send = None
        if kind == "after":  # a whole scrape answered, then the trickle
            self.sock.sendall(SCRAPE)
            buf = b""
            while not (b"\r\n\r\n" in buf and len(buf) >= buf.index(b"\r\n\r\n") + 4 + self.length(buf)):
                buf += self.sock.recv(65536)
            check(buf.startswith(b"HTTP/1.1 200"), "after: its first scrape answered 200")
        self.sock.setblocking(False)
        if kind in ("fresh", "after"):
            self.sock.send(b"GET /metrics HTTP/1.1\r\n")
            if kind == "after":  # its request deadline runs from this first byte
                self.start = time.monotonic()
            self.next_send = time.monotonic() + 0.5

    @staticmethod
    def length(buf):
        head = buf[:buf.index(b"\r\n\r\n")].decode().lower()
        return int(head.split("content-length:")[1].split("\r\n")[0])

    def tick(self, now):
        if not self.ended and self.next_send is not None and now >= self.next_send:
            try:
                self.sock.send(b"X-a: b\r\n")
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                pass
            self.next_send = now + 0.5

    def on_readable(self):
        try:
            chunk = self.sock.recv(65536)
            how = None if chunk else "eof"
        except BlockingIOError:
            return
        except ConnectionResetError:
            how = "reset"
        if how:
            self.ended = (time.monotonic(), how)


conns = [Conn("after")] + [Conn("silent") for _ in range(30)] + [Conn("fresh")]
if time.monotonic() - conns[1].t0 < FIRST_S - 1:  # certainly before the first deadline
    status = scrape()
    check(status == 503, f"32 connections hold every slot: a scrape gets {status}")

sel = selectors.DefaultSelector()
for c in conns:
    sel.register(c.sock, selectors.EVENT_READ, c)
scraped_between = None
deadline = time.monotonic() + REQUEST_S + 20
while time.monotonic() < deadline and not all(c.ended for c in conns):
    now = time.monotonic()
    for c in conns:
        c.tick(now)
    for key, _ in sel.select(timeout=0.05):
        key.data.on_readable()
        if key.data.ended:
            sel.unregister(key.data.sock)
    if scraped_between is None and all(c.ended for c in conns if c.kind != "after") and not conns[0].ended:
        scraped_between = scrape()  # the silent ones are gone, the trickler still holds its slot
sel.close()
left = [c.kind for c in conns if not c.ended]
check(not left, f"the endpoint closed every one of the {len(conns)} connections (still open: {left})")
check(scraped_between in (200, None), f"once the first-request deadline cleared the slots, a scrape got {scraped_between}")
status = scrape()
check(status == 200, f"after the attack a scrape is answered: {status}")

# 32 connections that scrape once and stay idle: a new scrape takes the slot of the first.
idle = [socket.create_connection(("127.0.0.1", PORT), timeout=10) for _ in range(32)]
statuses = [scrape(s) for s in idle]
check(statuses == [200] * 32, f"32 keep-alive scrapers answered: {sorted(set(statuses))}")
status = scrape()
check(status == 200, f"with 32 idle keep-alive connections a new scrape is answered: {status}")
check(idle[0].recv(1) == b"", "the one idle the longest was closed for it")
check(scrape(idle[1]) == 200, "the others stay")
for s in idle:
    s.close()

if in_tier("timing"):
    off = []
    for c in conns:
        bound = REQUEST_S if c.kind == "after" else FIRST_S
        took = c.ended[0] - c.start
        if not bound - 0.05 <= took <= bound + 1.0:
            off.append(f"{c.kind} {took:.2f} s")
    check(not off, f"each connection closed at its deadline ({FIRST_S:.0f} s from the accept; {REQUEST_S:.0f} s from "
          f"a request's first byte; +0..1 s) (off: {off})")
for c in conns:
    c.sock.close()
PY
echo "1 passed, 0 failed"
