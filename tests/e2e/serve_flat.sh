#!/usr/bin/env bash
# The flat server (the knee article): 10 ms of real CPU per request on one worker. Service
# time ~10 ms; concurrent clients queue for the single worker, so throughput stays at or
# below ~100 rps and queue time appears.
# tier: timing
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
python3 - <<'PY'
from serve_helpers import *
s = Server("--preset", "flat")
rows = closed_loop(s.port, 1, 1.5)
w = [r["timing"]["work"] for r in rows]
check(9.9 <= pct(w, 50) <= 60, f"one client: service (work) time median {pct(w, 50):.1f} ms ~ 10 ms of CPU")
cpu0 = os.times()
rows = closed_loop(s.port, 4, 2.0)
rate = len(rows) / 2.0
q = [r["timing"]["queue"] for r in rows]
check(rate <= 105, f"4 clients, one worker: {rate:.0f} rps <= capacity 100 rps")
check(pct(q, 50) >= 5, f"requests queue for the worker: median queue {pct(q, 50):.1f} ms")
with open(f"/proc/{s.proc.pid}/stat") as f:
    fields = f.read().rsplit(")", 1)[1].split()
cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
n = stats(s.port)["executed"]
check(n * 0.0095 <= cpu_s <= n * 0.013 + 0.3, f"the server burnt ~10 ms of CPU per request: {cpu_s:.2f} s for {n} requests")
s.stop()
PY
