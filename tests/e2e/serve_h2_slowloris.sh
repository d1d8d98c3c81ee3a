#!/usr/bin/env bash
# Slowloris over HTTP/2 against knee serve --h2 (h2c): 50 raw connections fill --max-conns 50,
# each holding it in its own way with frames built by hand (tests/e2e/serve_h2_hostile.py):
#   open     HEADERS without END_STREAM (the request's end never comes)
#   cont     HEADERS without END_HEADERS (the CONTINUATION never comes)
#   after    one request answered, then a second stream's HEADERS without END_STREAM
#   trickle  one request answered, then a HEADERS frame sent a byte every 0.5 s
#   ping     one request answered, then a PING every 0.5 s and no request
#   window0  SETTINGS_INITIAL_WINDOW_SIZE 0 and a request: its answer can never be sent
# An incomplete request is timed from its first byte by --header-timeout, as over HTTP/1.1:
# the first four get a 408 (on the stream when there is one, RST_STREAM after it), GOAWAY and
# the close, counted in `timeouts`; frames that carry no request extend no deadline, so the
# last two are closed by --idle-timeout. Exact tier: every one is cleared (generous bound),
# the counts, and the server is reachable again; timing tier: each close came at its deadline.
# tier: exact timing
source "$KNEE_SRC/tests/e2e/run_common.bash"
cd "$TMP"
start_knee_serve s --preset null --h2 --max-conns 50 --header-timeout 3s --idle-timeout 3s
PORT=$PORT_s PYTHONPATH="$KNEE_SRC/tests/e2e" python3 - <<'PY'
import os
import time
from serve_helpers import check, fail, get, in_tier, stats
from serve_h2_hostile import *

PORT = int(os.environ["PORT"])
HEADER_TIMEOUT_S = IDLE_TIMEOUT_S = 3.0
KINDS = {"open": 14, "cont": 14, "after": 8, "trickle": 6, "ping": 4, "window0": 4}
TIMED = ("open", "cont", "after", "trickle")  # a request past the header timeout: 408, counted
opening = PREFACE + settings()

clients = []
for kind, n in KINDS.items():
    for _ in range(n):
        if kind == "open":
            c = Client(PORT, kind, opening + headers(1, end_stream=False))
            c.request_start = c.t0
        elif kind == "cont":
            c = Client(PORT, kind, opening + headers(1, end_headers=False))
            c.request_start = c.t0
        elif kind == "window0":
            c = Client(PORT, kind, PREFACE + settings(initial_window_size=0) + headers(1))
        else:  # after, trickle, ping: one request answered first (the script below goes on)
            c = Client(PORT, kind, opening + headers(1))
        clients.append(c)
t_open = time.monotonic()
print(f"opened {len(clients)} connections in {t_open - clients[0].t0:.2f} s", flush=True)

# While they hold every slot, a new connection is refused (checked only when it is certain to
# be before the first deadline: this is the attack the deadlines must clear).
if time.monotonic() - clients[0].t0 < HEADER_TIMEOUT_S - 1:
    try:
        status, _, body, _ = get(PORT, "/health")
    except OSError as e:
        status, body = -1, str(e).encode()
    check(status == 503 and b"CONN_LIMIT" in body, f"the 50 connections hold --max-conns 50: a new one gets {status}")


def step(now):
    """after / trickle / ping: once the first answer is in, the second act."""
    for c in clients:
        if c.kind in ("after", "trickle", "ping") and c.request_start is None and c.answered(1):
            c.request_start = time.monotonic()
            if c.kind == "after":
                c.send(headers(3, end_stream=False))
            elif c.kind == "trickle":
                c.trickle(headers(3), 0.5)
        if c.kind == "ping" and c.request_start is not None and not c.ended and now >= getattr(c, "next_ping", 0):
            c.send(ping())
            c.next_ping = now + 0.5


drive(clients, lambda cs: all(c.ended for c in cs), HEADER_TIMEOUT_S + IDLE_TIMEOUT_S + 30, step)
left = [c.kind for c in clients if not c.ended]
check(not left, f"the server closed every one of the {len(clients)} connections (still open: {left})")
for kind in KINDS:
    mine = [c for c in clients if c.kind == kind]
    if kind in ("after", "trickle", "ping"):
        check(all(c.answered(1) for c in mine), f"{kind}: the first request was answered on each connection")
    if kind in TIMED:
        check(all(c.got(GOAWAY) for c in mine), f"{kind}: GOAWAY before the close on each connection")
    if kind in ("open", "cont", "after"):
        sid = 3 if kind == "after" else 1
        got408 = [c for c in mine if b'"HEADER_TIMEOUT"' in c.body(sid) and c.answered(sid)]
        reset = [c for c in mine if any(p == b"\0\0\0\0" for t, fl, s, p in c.got(RST_STREAM, sid))]
        check(len(got408) == len(mine) and len(reset) == len(mine),
              f"{kind}: a 408 HEADER_TIMEOUT on the incomplete stream, then RST_STREAM(NO_ERROR): "
              f"{len(got408)} and {len(reset)} of {len(mine)}")
    if kind in ("ping", "window0"):
        check(not any(c.got(GOAWAY) for c in mine) and all(c.ended[1] in ("eof", "reset") for c in mine),
              f"{kind}: closed by the idle timeout")

st = stats(PORT)
timed = sum(KINDS[k] for k in TIMED)
check(st["timeouts"] == timed, f"timeouts {st['timeouts']}: one per connection whose request timed out ({timed})")
check(st["bad_requests"] == 0 and st["conn_refused"] >= 0, f"no bad request counted ({st['bad_requests']})")
status, _, body, _ = get(PORT, "/health")
check(status == 200, f"after the attack a new client is served: {status}")

if in_tier("timing"):
    # each connection ended at its deadline: the 408's GOAWAY at the header timeout from the
    # request's first byte; the idle ones at the idle timeout from their last answer
    late = []
    for c in clients:
        if c.kind in TIMED:
            start, end, bound = c.request_start - c.t0, c.got(GOAWAY)[0][0], HEADER_TIMEOUT_S
        else:
            start, end, bound = max(t for t, *_ in c.got(HEADERS, 1)), c.ended[0], IDLE_TIMEOUT_S
        if not (bound - 0.05 <= end - start <= bound + 1.5):
            late.append(f"{c.kind} {end - start:.2f} s")
    check(not late, f"every connection cleared {HEADER_TIMEOUT_S:.0f} s (+0..1.5 s) after its request's first byte "
          f"or its last answer (off: {late})")
for c in clients:
    c.close()
PY
echo "1 passed, 0 failed"
