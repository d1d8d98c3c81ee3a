#!/usr/bin/env bash
# knee model end to end: the real binary's exit codes, its --json output parsed by Python,
# and Little's law closing the loop between two calculators.
# tier: exact
set -euo pipefail
: "${KNEE:?KNEE must point at the knee binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# Every calculator answers with --json, and the JSON parses.
"$KNEE" model mm1 --service 10ms --rate 70 --json >"$tmp/mm1.json"
"$KNEE" model mmc --servers 4 --service 10ms --rate 300 --json >"$tmp/mmc.json"
"$KNEE" model md1 --service 10ms --rate 70 --json >"$tmp/md1.json"
"$KNEE" model fanout --p 2% --n 1,2,5,10,20 --q 99% --json >"$tmp/fanout.json"
"$KNEE" model ladder --service 10ms --rates 10,20,...,90,95 --json >"$tmp/ladder.json"
"$KNEE" model little --rate 70 --W 33.333333ms --json >"$tmp/little.json"

python3 - "$tmp" <<'PY'
import json, math, sys
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}/{n}.json"))
mm1, mmc, md1, fan, lad, lit = (load(n) for n in ("mm1", "mmc", "md1", "fanout", "ladder", "little"))
def close(a, b, rel, what):
    if not abs(a - b) <= rel * abs(b):
        sys.exit(f"FAIL: {what}: {a} vs {b}")
close(mm1["mean_response_ms"], 100 / 3, 1e-12, "M/M/1 T")
p99 = [p for p in mm1["percentiles"] if p["p"] == 99][0]
close(p99["response_ms"], math.log(100) * 100 / 3, 1e-12, "M/M/1 p99")
close(md1["mean_wait_ms"], mm1["mean_wait_ms"] / 2, 1e-12, "M/D/1 Wq is half of M/M/1's")
close(mmc["p_wait"], 0.5094339622641509, 1e-12, "Erlang C(4, 3)")
# Percentiles increase with the level, and response ≥ wait.
for m in (mm1, mmc, md1):
    r = [p["response_ms"] for p in m["percentiles"]]
    assert r == sorted(r), r
    assert all(p["response_ms"] >= p["wait_ms"] for p in m["percentiles"])
close(fan["rows"][-1]["p_any_slow"], 1 - 0.98 ** 20, 1e-12, "fan-out n = 20")
assert [r["n"] for r in fan["rows"]] == [1, 2, 5, 10, 20]
rates = [r["arrival_rate_per_s"] for r in lad["rows"]]
assert rates == [10, 20, 30, 40, 50, 60, 70, 80, 90, 95], rates
row70 = lad["rows"][6]
close(row70["mean_response_ms"], mm1["mean_response_ms"], 1e-12, "ladder row = mm1")
# Little's law from the M/M/1 mean gives back the M/M/1 L.
close(lit["mean_in_system"], mm1["mean_in_system"], 1e-6, "Little L = λT")
PY

# Unstable systems and bad flags: exit 2 with one line naming the problem.
expect_2() {
    local want=$1; shift
    set +e
    "$KNEE" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "$*: exit $rc, want 2"
    grep -qF -- "$want" "$tmp/err" || fail "$*: stderr lacks '$want': $(cat "$tmp/err")"
    [ ! -s "$tmp/out" ] || fail "$*: wrote to stdout on error"
}
expect_2 "grows without bound" model mm1 --service 10ms --rate 100
expect_2 "grows without bound" model mmc --servers 2 --mu 10 --rate 25 --json
expect_2 "grows without bound" model ladder --service 10ms --rates 50,100
expect_2 "--rate" model md1 --service 10ms
expect_2 "--servers" model mmc --service 10ms --rate 1
expect_2 "--p" model fanout --p 150% --n 3
expect_2 "unknown option '--lambda'" model mm1 --lambda 3
echo "ok: knee model"
