#!/usr/bin/env bash
# --nagle reproduces the first run of the statistics-lab article: head and body in two writes with Nagle
# on, against a closed-loop client whose delayed ACK holds the second segment ~40 ms. The
# median exposes it; without --nagle (TCP_NODELAY, one write) the median is the work time.
# tier: timing
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
python3 - <<'PY'
from serve_helpers import *

def median_latency(*flags):
    s = Server("--preset", "quiet", "--hit-ms", "5", "--miss-rate", "0", *flags)
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    lat = [get(s.port, "/", conn=conn)[3] * 1e3 for _ in range(60)]
    s.stop()
    return pct(lat[5:], 50)

plain = median_latency()
nagle = median_latency("--nagle")
print(f"median without --nagle {plain:.1f} ms, with --nagle {nagle:.1f} ms")
check(plain < 25, f"without --nagle the median is about the 5 ms work time ({plain:.1f} ms)")
check(nagle >= 30, f"with --nagle the median jumps by the delayed-ACK timer, >= 30 ms ({nagle:.1f} ms)")
check(nagle - plain >= 25, "the difference is the ~40 ms delayed ACK")
PY
