#!/usr/bin/env bash
# Slots and queueing (the queueing article): pool 4 × 200 ms serves ~20 rps under heavier offered
# load; the queue preset at 40 rps × 20 ms answers everything; at 40 rps × 200 ms it gives
# both 200s and 503 QUEUE_TIMEOUT after ~250 ms, and /stats agrees with the client exactly.
# tier: exact timing
# The exact tier: 2 s of the first and the last case, every request answered as its case says,
# every 503 a QUEUE_TIMEOUT after at least the 250 ms it waited, /stats exactly the client's.
# The timing tier: the cases as above, with their rates, shares and waits.
set -euo pipefail
export KNEE=${KNEE:-build/knee} PYTHONPATH="$(dirname "$0")"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
python3 - <<'PY'
from serve_helpers import *

if in_tier("exact"):
    # Pool 4 at 200 ms, offered 40 rps for 2 s, no acquire timeout: every request answered 200.
    s = Server("--preset", "queue", "--acquire-timeout", "0", "--seed", "3")
    rows = open_loop(s.port, 40, 2, path="/work?ms=200")
    check(all(r["status"] == 200 for r in rows) and len(rows) == 80, "all 80 answered 200 (no acquire timeout)")
    st = stats(s.port)
    check(st["executed"] == 80 and st["ok"] == 80 and st["waiting"] == 0 and st["active"] == 0, f"stats exact after drain: {st}")
    s.stop()
    # 40 rps x 200 ms for 2 s with the queue preset's 250 ms acquire timeout: 200 or 503, each
    # 503 a QUEUE_TIMEOUT after at least 250 ms in the queue, /stats the client's exactly.
    s = Server("--preset", "queue", "--seed", "5")
    rows = open_loop(s.port, 40, 2, path="/work?ms=200")
    ok = [r for r in rows if r["status"] == 200]
    rej = [r for r in rows if r["status"] == 503]
    check(len(ok) + len(rej) == 80, "every request answered 200 or 503")
    check(all(r["body"]["reason"] == "QUEUE_TIMEOUT" for r in rej), "every 503 says reason QUEUE_TIMEOUT")
    check(all(r["timing"]["queue"] >= 249 for r in rej), "every 503 waited the 250 ms acquire timeout")
    st = stats(s.port)
    check(st["ok"] == len(ok) and st["rejected"] == len(rej) and st["executed"] == len(ok), f"/stats agrees exactly: {st}")
    s.stop()
if not in_tier("timing"):
    sys.exit(0)

# Pool 4 at 200 ms, offered 40 rps open loop for 4 s: the server completes ~20/s.
s = Server("--preset", "queue", "--acquire-timeout", "0", "--seed", "3")
done = {}
def sampler():
    time.sleep(1.5); done["a"] = (time.monotonic(), stats(s.port)["executed"])
    time.sleep(3.0); done["b"] = (time.monotonic(), stats(s.port)["executed"])
th = threading.Thread(target=sampler); th.start()
rows = open_loop(s.port, 40, 4, path="/work?ms=200")
th.join()
rate = (done["b"][1] - done["a"][1]) / (done["b"][0] - done["a"][0])
check(all(r["status"] == 200 for r in rows) and len(rows) == 160, "all 160 answered 200 (no acquire timeout)")
check(17 <= rate <= 21, f"completion rate {rate:.1f}/s ~ 4 slots / 200 ms = 20/s")
q = [r["timing"]["queue"] for r in rows]
check(pct(q, 90) > 500, f"the backlog shows in Server-Timing queue: p90 {pct(q, 90):.0f} ms")
st = stats(s.port)
check(st["executed"] == 160 and st["ok"] == 160 and st["waiting"] == 0 and st["active"] == 0, f"stats exact after drain: {st}")
s.stop()

# queue preset, 40 rps × 20 ms: all succeed, queueing negligible.
s = Server("--preset", "queue", "--seed", "4")
rows = open_loop(s.port, 40, 3, path="/work?ms=20")
check(all(r["status"] == 200 for r in rows), f"40 rps x 20 ms: all {len(rows)} answered 200")
w = [r["timing"]["work"] for r in rows]
check(19.9 <= pct(w, 50) < 40, f"work time ~20 ms (median {pct(w, 50):.1f})")
s.stop()

# queue preset, 40 rps × 200 ms for 5 s: about half rejected after ~250 ms.
s = Server("--preset", "queue", "--seed", "5")
rows = open_loop(s.port, 40, 5, path="/work?ms=200")
ok = [r for r in rows if r["status"] == 200]
rej = [r for r in rows if r["status"] == 503]
print(f"40 rps x 200 ms: {len(rows)} sent, {len(ok)} ok, {len(rej)} rejected")
check(len(ok) + len(rej) == 200, "every request answered 200 or 503")
check(80 <= len(ok) <= 125, f"goodput ~20/s over 5 s: {len(ok)} ok")
check(len(rej) >= 60, f"the rest rejected: {len(rej)}")
check(all(r["body"]["reason"] == "QUEUE_TIMEOUT" for r in rej), "every 503 says reason QUEUE_TIMEOUT")
rq = [r["timing"]["queue"] for r in rej]
check(249 <= min(rq) and pct(rq, 50) < 300 and max(rq) < 1000,
      f"503s waited 250 ms in the queue ({min(rq):.1f}..{max(rq):.1f} ms, median {pct(rq, 50):.1f})")
okq = [r["timing"]["queue"] for r in ok]
check(pct(okq, 99) <= 260, f"200s waited at most about the acquire timeout (p99 {pct(okq, 99):.1f} ms)")
st = stats(s.port)
check(st["ok"] == len(ok) and st["rejected"] == len(rej) and st["executed"] == len(ok), f"/stats agrees exactly: {st}")
s.stop()
PY
