#!/usr/bin/env bash
# knee capacity against knee serve --preset flat (10 ms of CPU on one worker: 100/s), the SLO
# p90<50ms, the ladder 50..110/s (issue 25's case):
#  P. Poisson arrivals: the open loop queues, so its capacity is M/D/1's (p90 = 50 ms at ~76/s
#     for 10 ms: the ladder's bracket [70, 80)), far below the closed loop's ~100/s. Before the
#     queue model knee capacity compared the two and said INVALID on every run; now the run is
#     latency-bound, the queue model (the closed loop's service times through the ladder's
#     planned arrivals) is the second method and agrees: valid, exit 0. Its capacity lies near
#     M/D/1's for the service time it measured (knee model md1), the closed loop bounds it.
#  C. constant arrivals: no queue below the service's rate: throughput-bound, the closed loop is
#     the second method and agrees at ~100/s, as before: valid, exit 0.
# Times: 2 s windows after a 500 ms warm-up (the queue model simulates the same windows).
# --lag-limit 50ms: as in capacity_flat.sh (the generator's timer is not under test; a lag can
# only lower the capacity, which the SLO judges from the planned send).
# Each part: when its checks fail and knee capacity itself says the machine may have been
# measured (a probe failed, a step "not delivered", a repetition BUSY: capacity_machine_why), it
# runs once more, then the test is skipped (timing_verdict, timing.bash). The server and knee run
# at nice -10 where that is allowed (as in capacity_flat.sh).
# tier: timing
source "$KNEE_SRC/tests/e2e/capacity_common.bash"
SERVE_WRAP=("${NICE[@]}")
start_knee_serve flat --preset flat
U=http://127.0.0.1:$PORT_flat/
RATES=50,60,70,80,90,100,110

# measure PART ARRIVALS: knee capacity into $TMP/PART.{json,txt,err}, exit status in RC
measure() {
    set +e
    "${NICE[@]}" "$KNEE" capacity --rates $RATES --reps 3 --arrivals "$2" --slo 'p90<50ms' --step 2s --warmup 500ms \
        --settle 300ms --lag-limit 50ms --timeout 2s --drain 1s --json "$TMP/$1.json" "$U" >"$TMP/$1.txt" 2>"$TMP/$1.err"
    RC=$?
    set -e
}

# near_md1: the queue model's capacity against M/D/1's for its own mean service time (knee
# model md1: the rate whose p90 response time is 50 ms), and the ladder's bracket against it
near_md1() {
    python3 - "$TMP/p.json" "$KNEE" "$RATES" <<'PY'
import json, re, subprocess, sys
d, knee, rates = json.load(open(sys.argv[1])), sys.argv[2], [float(r) for r in sys.argv[3].split(",")]
q = d["cross_check"]["queue"]

def p90_ms(rate, d_ms):
    out = subprocess.run([knee, "model", "md1", "--service", "%gms" % d_ms, "--rate", "%g" % rate],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return float("inf")  # unstable
    v = re.search(r"^  p90 +\S+ +(\S+)$", out.stdout, re.M).group(1)
    return float(v[:-2]) if v.endswith("ms") else float(v[:-1]) * 1000

def md1_capacity(d_ms, slo_ms=50.0):
    lo, hi = 0.01, 1000.0 / d_ms
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p90_ms(mid, d_ms) < slo_ms else (lo, mid)
    return lo

dm = q["service"]["mean"]
lam = md1_capacity(dm)
cap = d["ladder_capacity"]
k = rates.index(cap) if cap is not None else -1
lo, hi = (cap if cap is not None else 0.0), (rates[k + 1] if k + 1 < len(rates) else float("inf"))
print("# service mean %.2f ms (p99 %.2f ms), M/D/1 %.1f/s; the queue model %.1f/s; the ladder [%g, %g); "
      "the closed loop %.1f/s" % (dm, q["service"]["p99"], lam, q["capacity"], lo, hi, d["cross_check"]["closed_loop"]))
# a measured service varies (M/G/1 queues more than M/D/1): the model may lie below M/D/1, not above
if not 0.6 * lam <= q["capacity"] <= 1.1 * lam:
    sys.exit("FAIL: P: the queue model's %.1f/s is not near M/D/1's %.1f/s for D %.2f ms" % (q["capacity"], lam, dm))
if not (lo <= 1.25 * lam and hi >= 0.6 * lam):
    sys.exit("FAIL: P: the ladder's bracket [%g, %g) is not near M/D/1's %.1f/s" % (lo, hi, lam))
PY
}

for attempt in 1 2; do
    measure p poisson
    problem=""
    if [[ $RC -ne 0 || $(cap_value "$TMP/p.json" "d['verdict'] == 'valid' and \
        d['cross_check']['regime'] == 'latency-bound'" 2>/dev/null) != True ]]; then
        problem="P: exit $RC, expected 0, valid and latency-bound"
    elif ! near_md1; then
        problem="P: the queue model or the ladder is not near M/D/1 (above)"
    fi
    [[ -z $problem ]] || cat "$TMP/p.txt" "$TMP/p.err"
    timing_verdict $attempt "$problem" "$(capacity_machine_why "$TMP/p.json")" && break
done
sed -n '/^ladder x/,/^$/p;/^cross-check/,$p' "$TMP/p.txt"
grep -q '^capacity [0-9]*/s at p90<50ms ([23]/3 repetitions valid, latency-bound: queue model [0-9.]*/s, ' "$TMP/p.txt" ||
    fail "P: the verdict line"
grep -q "; the closed loop's [0-9.]*/s bounds it)$" "$TMP/p.txt" || fail "P: the bound not said in the verdict line"
grep -q '^  regime: latency-bound: the queue model holds the SLO up to ' "$TMP/p.txt" || fail "P: no regime line"
grep -q '^  second method: the queue model, ' "$TMP/p.txt" || fail "P: no second method line"
cap_check "$TMP/p.json" "d['capacity'] == d['ladder_capacity'] and d['exit_code'] == 0 and \
    d['cross_check']['method'] == 'queue' and d['cross_check']['agree'] is True and \
    d['cross_check']['above_bound'] is False and d['cross_check']['queue']['ran'] and \
    d['cross_check']['queue']['servers'] == 1 and d['cross_check']['queue']['arrivals'] == 'poisson' and \
    d['cross_check']['second'] == d['cross_check']['queue']['capacity'] and \
    d['cross_check']['second'] < d['cross_check']['closed_loop']" "P: latency-bound, the queue model agrees"

for attempt in 1 2; do
    measure c constant
    problem=""
    if [[ $RC -ne 0 || $(cap_value "$TMP/c.json" "d['verdict'] == 'valid' and \
        d['cross_check']['regime'] == 'throughput-bound'" 2>/dev/null) != True ]]; then
        problem="C: exit $RC, expected 0, valid and throughput-bound"
        cat "$TMP/c.txt" "$TMP/c.err"
    fi
    timing_verdict $attempt "$problem" "$(capacity_machine_why "$TMP/c.json")" && break
done
sed -n '/^ladder x/,/^$/p;/^cross-check/,$p' "$TMP/c.txt"
grep -q '^capacity [0-9]*/s at p90<50ms ([23]/3 repetitions valid, closed loop [0-9.]*/s, .*; throughput-bound: queue model ' \
    "$TMP/c.txt" || fail "C: the verdict line"
grep -q '^  second method: the closed loop, ' "$TMP/c.txt" || fail "C: no second method line"
cap_check "$TMP/c.json" "d['capacity'] == d['ladder_capacity'] and \
    d['cross_check']['method'] == 'closed loop' and d['cross_check']['agree'] is True and \
    d['cross_check']['second'] == d['cross_check']['closed_loop'] and \
    d['cross_check']['queue']['arrivals'] == 'constant'" "C: throughput-bound, the closed loop agrees"
echo "1 passed, 0 failed"
