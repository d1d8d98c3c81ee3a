#!/usr/bin/env bash
# The HTTP surface of knee serve with real sockets: malformed input -> 400 and close,
# oversized headers -> 431, the server keeps serving others; pipelined requests answered
# in order; Connection: close honoured; slow header -> 408; /stats exact.
# tier: exact
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
python3 - <<'PY'
from serve_helpers import *
s = Server("--preset", "quiet", "--header-timeout", "500ms", "--seed", "2")
keep = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
check(get(s.port, "/", conn=keep)[0] == 200, "a keep-alive client is served")

out = raw(s.port, b"NOT HTTP AT ALL\r\n\r\n")
check(out.startswith(b"HTTP/1.1 400 ") and b"BAD_REQUEST" in out, "malformed request -> 400 (and the server closed)")
out = raw(s.port, b"GET / HTTP/1.1\r\nX-Huge: " + b"h" * 20000 + b"\r\n\r\n")
check(out.startswith(b"HTTP/1.1 431 ") and b"HEADERS_TOO_LARGE" in out, "20 KB header -> 431")
out = raw(s.port, b"GET /" + b"u" * 3000 + b" HTTP/1.1\r\n\r\n")
check(out.startswith(b"HTTP/1.1 414 "), "3 KB URL -> 414")
check(get(s.port, "/", conn=keep)[0] == 200, "the keep-alive client is still served after the bad ones")

# Pipelining: three requests in one write, answered in order.
out = raw(s.port, b"GET /work?ms=80 HTTP/1.1\r\n\r\nGET /health HTTP/1.1\r\n\r\nGET /work?ms=5 HTTP/1.1\r\nConnection: close\r\n\r\n")
i80, iup, i5 = out.find(b'"work_ms":80.000'), out.find(b'"UP"'), out.find(b'"work_ms":5.000')
check(out.count(b"HTTP/1.1 200 ") == 3 and 0 < i80 < iup < i5, "pipelined responses in request order")
check(out.count(b"Connection: close") == 1, "Connection: close on the last one only, then closed")

# A client that stops mid-header gets 408 after the header timeout.
t0 = time.monotonic()
out = raw(s.port, b"GET / HTTP/1.1\r\nHost: sl", timeout=10)
dt = time.monotonic() - t0
check(out.startswith(b"HTTP/1.1 408 ") and 0.4 <= dt < 5, f"stalled header -> 408 after {dt:.2f} s")

st = stats(s.port)
# requests: 2 on keep + 3 pipelined + this /stats; bad: 400, 431, 414.
check(st["requests"] == 6 and st["ok"] == 4 and st["bad_requests"] == 3 and st["timeouts"] == 1,
      f"/stats exact: {st}")
s.stop()
PY
