#!/usr/bin/env bash
# knee serve against smuggling-style framing (RFC 9112 sections 2, 3, 5, 6, 7) over real
# sockets: each ambiguous request is refused with its status (400, 501, 505), the
# connection ends with a clean EOF, and a request hidden after it is never answered. Then
# the half-close: a client that shuts down its write side after its requests gets every
# answer, in order, then EOF.
# tier: exact
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
python3 - <<'PY'
from serve_helpers import *
from serve_hostile import *

s = Server("--preset", "quiet", "--seed", "3")
HIDDEN = b"GET /work?ms=1&hidden=1 HTTP/1.1\r\nHost: x\r\n\r\n"
cases = [
    # (what, request, status)
    ("space before the colon (TE)", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400),
    ("space before the colon (CL)", b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length : 3\r\n\r\nabc", 400),
    ("space inside a field name", b"GET / HTTP/1.1\r\nHost: x\r\nX Y: z\r\n\r\n", 400),
    ("obs-folded Transfer-Encoding", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", 400),
    ("obs-folded value", b"GET / HTTP/1.1\r\nHost: x\r\nX-A: b\r\n\tc\r\n\r\n", 400),
    ("whitespace before the first field", b"GET / HTTP/1.1\r\n Host: x\r\n\r\n", 400),
    ("HTTP/9.9", b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505),
    ("HTTP/2.0 in HTTP/1 syntax", b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    ("Content-Length and Transfer-Encoding",
     b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    ("Content-Length twice (same value)",
     b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400),
    ("Content-Length list", b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc", 400),
    ("Content-Length with a sign", b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc", 400),
    ("chunked not the final coding", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", 400),
    ("chunked twice", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    ("Transfer-Encoding in HTTP/1.0", b"POST / HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    ("a coding before chunked", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
    ("bare CR in a value", b"GET / HTTP/1.1\r\nHost: x\r\nX-A: b\rc\r\n\r\n", 400),
    ("bare LF line ends", b"GET / HTTP/1.1\nHost: x\n\n", 400),
    ("NUL in a value", b"GET / HTTP/1.1\r\nHost: x\r\nX-A: b\x00c\r\n\r\n", 400),
    ("Host twice", b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    ("chunk data without its CRLF", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n", 400),
    ("whitespace after the chunk size", b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n", 400),
]
for what, req, want in cases:
    buf, how = exchange(s.port, req + HIDDEN)
    got = statuses(buf)
    check(got == [want] and how == "eof" and b"Connection: close" in buf,
          f"{what} -> {want}, nothing else, then EOF (got {got}, {how})")
st = stats(s.port)
check(st["bad_requests"] == len(cases) and st["requests"] == 1 and st["executed"] == 0,
      f"/stats: {st['bad_requests']} refused, no hidden request executed")

# What RFC 9112 allows is still served: chunked with extensions and trailers, a tab before
# the value, upper-case coding, HTTP/1.2 (read as 1.1), an empty line before the request.
fine = [
    b"POST /work?ms=1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n",
    b"POST /work?ms=1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\tCHUNKED\r\n\r\n0\r\n\r\n",
    b"GET /work?ms=1 HTTP/1.2\r\nHost: x\r\n\r\n",
    b"\r\nGET /work?ms=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
]
for req in fine:
    buf, how = exchange(s.port, req + b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
    check(statuses(buf) == [200, 200] and how == "eof", f"accepted and the next request too: {req[:40]!r}")

# Half-close: requests, then shutdown(SHUT_WR): every complete request answered, in order,
# then EOF. The first one runs 300 ms, so the EOF arrives while the work runs.
buf, how = exchange(s.port, b"GET /work?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n"
                    b"GET /work?ms=2 HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n", half_close=True)
i300, i2, iup = buf.find(b'"work_ms":300.000'), buf.find(b'"work_ms":2.000'), buf.find(b'"UP"')
check(statuses(buf) == [200, 200, 200] and 0 < i300 < i2 < iup and how == "eof",
      f"half-close: 3 answers in order, then EOF ({statuses(buf)}, {how})")
buf, how = exchange(s.port, b"GET /work?ms=1 HTTP/1.1\r\nHost: x\r\n\r\nGET /work?ms=1 HTTP/1.1\r\nHo", half_close=True)
check(statuses(buf) == [200] and how == "eof", "half-close after 1.5 requests: the complete one answered, then EOF")
st = wait_stats(s.port, lambda st: st["connections"] == 1)
check(st["write_failures"] == 0 and st["cancelled"] == 0 and st["connections"] == 1,
      f"no write failure, nothing cancelled, nothing left open: {st}")
s.stop()
PY
