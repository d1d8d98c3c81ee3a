#!/usr/bin/env bash
# Fan-out (the knee article): each request waits for N parallel dependencies, each slow
# (200 ms) with probability p; the share of slow responses is ~ 1-(1-p)^N. Seeded.
# tier: exact timing
# The exact tier: the shares, the fan-out taken from the request, slow pages at least 200 ms,
# the seed. The timing tier: that the other pages are fast (their median), on a 400-page run.
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
python3 - <<'PY'
from serve_helpers import *

def run(port, n, total, clients=40):
    rows, lock = [], threading.Lock()
    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(total // clients):
            st, h, body, dt = get(port, f"/?fanout={n}", conn=conn)
            with lock:
                rows.append((json.loads(body), dt * 1e3))
    ts = [threading.Thread(target=client) for _ in range(clients)]
    [t.start() for t in ts]; [t.join() for t in ts]
    return rows

s = Server("--preset", "fanout", "--seed", "21")
if in_tier("timing"):
    rows = run(s.port, 1, 400)
    fast = [dt for b, dt in rows if b["slow_deps"] == 0]
    check(pct(fast, 50) < 50, f"the others are fast (median {pct(fast, 50):.1f} ms)")
    if not in_tier("exact"):
        s.stop()
        sys.exit(0)
    s.stop()
    s = Server("--preset", "fanout", "--seed", "21")
for n, total in ((1, 400), (20, 400)):
    rows = run(s.port, n, total)
    slow = [r for r in rows if r[0]["slow_deps"] > 0]
    share = len(slow) / len(rows)
    want = 1 - (1 - 0.02) ** n
    sigma = math.sqrt(want * (1 - want) / len(rows))
    print(f"fanout {n}: {len(slow)}/{len(rows)} slow = {share:.3f}, predicted {want:.3f} (sigma {sigma:.3f})")
    check(abs(share - want) <= 4 * sigma + 0.005, f"fanout {n}: slow share {share:.3f} ~ 1-(1-0.02)^{n} = {want:.3f}")
    check(all(b["fanout"] == n for b, _ in rows), f"fanout {n} taken from ?fanout=")
    check(all(dt >= 199 for b, dt in slow), "every response with a slow dependency took >= 200 ms")
s.stop()

# The preset's own N from --fanout, and the seed reproduces the draw sequence.
def seq(seed):
    s = Server("--preset", "fanout", "--fanout", "5", "--dep-slow-prob", "10%", "--dep-slow-ms", "5", "--seed", str(seed))
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    out = [json.loads(get(s.port, "/", conn=conn)[2])["slow_deps"] for _ in range(50)]
    s.stop()
    return out
a, b, c = seq(7), seq(7), seq(8)
check(a == b, "same --seed, same sequence of slow dependencies")
check(a != c, "another seed, another sequence")
PY
