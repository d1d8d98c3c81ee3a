#!/usr/bin/env bash
# A pipelined flood against knee serve: one client sends requests back to back as fast as
# the socket takes them and never reads. The server must stop reading once its answers
# back up (its input and output buffers are 4 KiB each), so the client's sends stall at
# what the kernel buffers hold, the server's memory stays flat, and other clients are
# still served; when the client finally reads, every request it sent is answered, in order.
# tier: exact
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
python3 - <<'PY'
from serve_helpers import *
from serve_hostile import *

REQ = b"GET / HTTP/1.1\r\n\r\n"  # 18 bytes
BLOCK = REQ * 3641               # 65,538 bytes: whole requests only
LIMIT = 256 << 20                # far above any kernel buffer: a server that kept reading would take it all
s = Server("--preset", "null")
rss = RssSampler(s.proc.pid)
c = socket.create_connection(("127.0.0.1", s.port))
c.setblocking(False)
sent, stalled_since, t0 = 0, None, time.monotonic()
view = memoryview(BLOCK)
off = 0
while sent < LIMIT and time.monotonic() - t0 < 60:
    try:
        n = c.send(view[off:])
    except BlockingIOError:
        n = 0
    if n:
        sent += n
        off = (off + n) % len(BLOCK)
        stalled_since = None
        continue
    stalled_since = stalled_since or time.monotonic()
    if time.monotonic() - stalled_since >= 2.0:
        break
    time.sleep(0.01)
check(stalled_since is not None and sent < LIMIT,
      f"the flood stalled after {sent / 2**20:.1f} MiB ({sent // len(REQ)} requests): the server stopped reading")
st = stats(s.port)
status, _, _, dt = get(s.port, "/health")
check(status == 200, f"another client is served during the stall ({dt * 1e3:.0f} ms); the server has parsed "
                     f"{st['requests'] - 1} of the flood's requests so far")
grew_kib = rss.stop()
check(grew_kib < 8 * 1024, f"server memory grew {grew_kib} KiB during the flood (bound 8 MiB)")

# Now read: every whole request sent is answered, 200, in order (the server resumes).
want = sent // len(REQ)
c.setblocking(True)
c.settimeout(30)
got, tail = 0, b""
deadline = time.monotonic() + 120
while got < want and time.monotonic() < deadline:
    chunk = c.recv(1 << 20)
    if not chunk:
        break
    data = tail + chunk
    got += data.count(b"HTTP/1.1 200 OK\r\n")
    tail = data[-16:]
check(got == want, f"after reading: {got} of {want} requests answered 200")
c.close()
st = wait_stats(s.port, lambda st: st["connections"] == 1)
check(st["requests"] == want + 3 and st["bad_requests"] == 0,
      f"/stats: {st['requests']} requests = flood {want} + 3 others, no bad request")
s.stop()
PY
