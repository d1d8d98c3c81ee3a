#!/usr/bin/env bash
# 10,000 concurrent keep-alive connections to one knee serve: every one is served (twice,
# the second time after all of them are open), a new client is still served while they
# are all open, /stats counts them exactly, and memory stays bounded. knee serve raises
# its own open-file limit towards --max-conns; this test raises the client's. When the
# machine cannot give 10,000 descriptors to each side it says why and exits 77 (skip).
# tier: exact
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
N=10000
hard=$(ulimit -Hn)
if [[ $hard != unlimited && $hard -lt $((N + 200)) ]]; then
  echo "SKIP: the hard open-file limit is $hard (ulimit -Hn); 10,000 connections need $((N + 200)) per process"
  exit 77
fi
ports=$(cat /proc/sys/net/ipv4/ip_local_port_range)
read -r lo hi <<<"$ports"
if (( hi - lo + 1 < N + 1000 )); then
  echo "SKIP: the local port range $lo-$hi holds fewer than $((N + 1000)) ports"
  exit 77
fi
python3 - <<'PY'
from serve_helpers import *
from serve_hostile import *

N = 10000
have = raise_nofile(N + 200)
if have < N + 200:
    print(f"SKIP: this process may open {have} files, the test needs {N + 200}")
    sys.exit(77)
s = Server("--preset", "null", "--max-conns", str(N + 100))
rss = RssSampler(s.proc.pid)
t0 = time.monotonic()
REQ = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
socks = open_many(s.port, N, first=REQ)
print(f"opened {N} connections in {time.monotonic() - t0:.2f} s", flush=True)


def read_one_each(socks, timeout=60):
    """Read one 200 response on every socket; returns how many arrived."""
    sel = selectors.DefaultSelector()
    bufs = {}
    for so in socks:
        sel.register(so, selectors.EVENT_READ)
        bufs[so] = b""
    done = 0
    deadline = time.monotonic() + timeout
    while done < len(socks) and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            so = key.fileobj
            chunk = so.recv(4096)
            bufs[so] += chunk
            if not chunk or bufs[so].endswith(b"\r\n\r\nok"):
                sel.unregister(so)
                done += 1 if statuses(bufs[so]) == [200] else 0
    sel.close()
    return done


got = read_one_each(socks)
check(got == N, f"{got} of {N} connections served")
st = stats(s.port)
check(st["connections"] == N + 1, f"/stats while all are open: {st['connections']} connections (N + this one)")
status, _, body, dt = get(s.port, "/")
check(status == 200, f"a new client is served with {N} connections open ({dt * 1e3:.0f} ms)")
for so in socks:
    so.send(REQ)
got = read_one_each(socks)
check(got == N, f"second round: {got} of {N} served on their kept-alive connections")
grew_kib = rss.stop()
check(grew_kib < N * 24, f"server memory grew {grew_kib} KiB for {N} connections ({grew_kib / N:.1f} KiB each; bound 24)")
for so in socks:
    so.close()
st = wait_stats(s.port, lambda st: st["connections"] == 1)
check(st["connections"] == 1 and st["requests"] == 2 * N + 3 and st["conn_refused"] == 0,
      f"after they close: {st['connections']} open, {st['requests']} requests, {st['conn_refused']} refused")
s.stop()
PY
