#!/usr/bin/env bash
# Server A (report) vs server B (quiet), the statistics-lab article: the report job holds the table lock
# 250 ms every period; requests arriving during it wait up to ~250 ms (seen in the
# Server-Timing lock time and in the open-loop latency from the planned time); B has no
# such tail. The period is shortened to 2 s so a short run sees several pauses.
# tier: timing
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
python3 - <<'PY'
from serve_helpers import *

a = Server("--preset", "report", "--pause-every", "2s", "--seed", "11")
b = Server("--preset", "quiet", "--seed", "12")
res = {}
ta = threading.Thread(target=lambda: res.__setitem__("A", open_loop(a.port, 100, 6)))
tb = threading.Thread(target=lambda: res.__setitem__("B", open_loop(b.port, 100, 6)))
ta.start(); tb.start(); ta.join(); tb.join()
A, B = res["A"], res["B"]
check(all(r["status"] == 200 for r in A + B), f"all {len(A) + len(B)} requests answered 200")
for name, rows in (("A", A), ("B", B)):
    lat = [r["latency_ms"] for r in rows]
    print(f"{name}: p50 {pct(lat, 50):.1f}  p90 {pct(lat, 90):.1f}  p99 {pct(lat, 99):.1f}  max {max(lat):.1f} ms")
lock = [r["timing"]["lock"] for r in A]
check(200 <= max(lock) <= 300, f"A: the longest lock wait is about the 250 ms pause ({max(lock):.1f} ms)")
sa = stats(a.port)
check(sa["pauses"] >= 2, f"A: {sa['pauses']} pauses in the run")
# As in the source server, a request takes its slot first, then waits for the lock: the
# first 4 arrivals of each pause hold the 4 slots waiting for the lock, later arrivals
# queue for a slot. Either way they wait until the pause ends (plus the short backlog).
held = [r for r in A if r["timing"]["lock"] > 1]
check(len(held) >= 4 * 2, f"A: {len(held)} requests waited for the lock holding a slot")
waited = [r["timing"]["queue"] for r in A if r["timing"]["queue"] > 20]
check(len(waited) >= 30, f"A: {len(waited)} requests waited > 20 ms inside the server")
check(max(waited) < 600, f"A: none waited much longer than the pause ({max(waited):.1f} ms)")
check(min(waited) < 150, f"A: late arrivals in a pause waited less ({min(waited):.1f} ms)")
latA = [r["latency_ms"] for r in A]
latB = [r["latency_ms"] for r in B]
svcB = [r["timing"]["queue"] + r["timing"]["work"] for r in B]
check(pct(latA, 99) > 150, f"A: p99 {pct(latA, 99):.1f} ms shows the stall")
check(max(svcB) < 200, f"B: no request spent 200 ms inside the server (max {max(svcB):.1f} ms)")
check(pct(latA, 99) > pct(latB, 99) + 50, "A's p99 is far above B's")
check(abs(pct(latA, 50) - pct(latB, 50)) < 20, f"medians alike ({pct(latA, 50):.1f} vs {pct(latB, 50):.1f} ms): the median hides the stall")
miss = sum(1 for r in B if r["body"]["miss"]) / len(B)
check(0.05 <= miss <= 0.16, f"B: cache-miss share {miss:.3f} ~ 10%")
a.stop(); b.stop()
PY
