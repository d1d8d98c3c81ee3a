#!/usr/bin/env bash
# Slowloris against knee serve: 3,000 connections each send the start of a request head and
# then trickle a field line every half second, never finishing it. The header timeout
# (from the head's first byte, so trickling does not extend it) must fire for every one of
# them with a 408 the client reads, the server must keep answering a well-behaved client
# meanwhile, and its memory must stay bounded (a few KiB per connection).
# tier: exact
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
python3 - <<'PY'
from serve_helpers import *
from serve_hostile import *

N = 3000
HEADER_TIMEOUT_S = 2.0
have = raise_nofile(N + 200)
if have < N + 200:
    print(f"SKIP: this process may open {have} files, the test needs {N + 200} (ulimit -Hn)")
    sys.exit(77)

s = Server("--preset", "quiet", "--header-timeout", "2s", "--seed", "5")
rss = RssSampler(s.proc.pid)
probe = Prober(s.port)
t0 = time.monotonic()
socks = open_many(s.port, N, first=b"GET / HTTP/1.1\r\nHost: x\r\n")
t_open = time.monotonic()
print(f"opened {N} connections in {t_open - t0:.2f} s", flush=True)

sel = selectors.DefaultSelector()
live = {}
for so in socks:
    sel.register(so, selectors.EVENT_READ)
    live[so] = {"buf": b"", "t408": None, "end": None}
ended = {}
next_trickle = time.monotonic()
deadline = t_open + HEADER_TIMEOUT_S + 30
while live and time.monotonic() < deadline:
    now = time.monotonic()
    if now >= next_trickle:  # a field line on every connection still waiting for its 408
        for so, st in live.items():
            if st["t408"] is None:
                try:
                    so.send(b"X-a: b\r\n")
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    pass
        next_trickle = now + 0.5
    for key, _ in sel.select(timeout=0.05):
        so = key.fileobj
        st = live[so]
        try:
            chunk = so.recv(4096)
            how = "eof" if not chunk else None
        except ConnectionResetError:
            chunk, how = b"", "reset"
        st["buf"] += chunk
        if st["t408"] is None and status_of(st["buf"]) == 408:
            st["t408"] = time.monotonic()
        if how:
            st["end"] = how
            sel.unregister(so)
            so.close()
            ended[so] = live.pop(so)
sel.close()
results = probe.stop()
grew_kib = rss.stop()

got = [st for st in ended.values() if st["t408"] is not None]
eofs = sum(1 for st in ended.values() if st["end"] == "eof")
check(not live and len(got) == N and eofs == N,
      f"every one of {N} slow heads got its 408, then EOF ({len(got)} 408s, {eofs} EOFs, {len(live)} still open)")
first, last = min(st["t408"] for st in got) - t0, max(st["t408"] for st in got) - t_open
check(first >= HEADER_TIMEOUT_S - 0.05 and last <= HEADER_TIMEOUT_S + 10,
      f"the 408s came {first:.2f} s after the first connect at the earliest and {last:.2f} s after the last at the latest "
      f"(header timeout {HEADER_TIMEOUT_S} s; trickling does not extend it)")
ok = [dt for st_, dt in results if st_ == 200]
check(len(results) >= 10 and len(ok) == len(results),
      f"a well-behaved client was served throughout: {len(ok)} of {len(results)} requests 200, "
      f"slowest {max(ok) * 1e3:.0f} ms")
check(grew_kib < N * 32, f"server memory grew {grew_kib} KiB for {N} connections ({grew_kib / N:.1f} KiB each; bound 32)")
st = wait_stats(s.port, lambda st: st["connections"] == 1)
check(st["timeouts"] == N and st["bad_requests"] == 0 and st["connections"] == 1,
      f"/stats: {st['timeouts']} header timeouts, {st['connections']} open")
s.stop()
PY
