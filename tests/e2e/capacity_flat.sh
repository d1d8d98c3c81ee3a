#!/usr/bin/env bash
# knee capacity against knee serve --preset flat (10 ms of CPU on one worker: 100/s nominal),
# Poisson arrivals, SLO p99<100ms, twice. The capacity must lie in the band src/model's M/D/1
# predicts for that SLO, with the service time D measured on this machine as knee lab knee does
# (the server's own Server-Timing work, here from a one-connection knee run before every
# repetition, run by --between so it is never inside a window): each run's ladder bracket
# [capacity, next rate) meets [λ(D_max) x 0.6, λ(10 ms) x 1.25], where D_max is the largest D
# measured during that run and λ(D) is the rate at which the M/D/1 p99 response time reaches
# the SLO (the lower allowance: a shared machine makes the service time vary, and a variable
# service time queues more than M/D/1's constant one; the upper: p99 from 1 s windows of
# 40-90 requests). The two runs agree within one rate of the ladder when the machine stretched
# the 10 ms alike in both (their mean D within 25% of each other); when other processes
# stretched it far more in one run, that run's service is slower and its capacity truly lower:
# the test prints both D and asserts only each run's band (measured on this shared machine: D
# 10.5 ms in one run and 22 ms in the next while other helpers compiled).
# The ladder starts at 40/s: a machine slow enough to fail it puts the bracket at [0, 40), which
# still meets the band's lower end (0.6 x λ(D_max)), so a lower rung would show nothing more.
# --no-cross-check: a closed loop never builds the queue that the SLO is about here (see
# capacity_queue.sh C for the disagreement it reports).
# --lag-limit 50ms: knee run's relative generator rule (a lag p99 above 1 ms and above 10% of
# the latency p99) marks a step generator-limited; on a loaded 2-core machine the lag p99 is
# 3-6 ms against the low rungs' 15-30 ms p99 (measured while other helpers compiled), so those
# rungs would fail as "not delivered". The generator's timer is not what this test is about,
# and the SLO judges latency from the planned send, so a lag can only lower the capacity.
# A run that fails its checks while knee capacity itself says the machine may have been measured
# (a probe failed, a step "not delivered", a repetition BUSY: capacity_machine_why) runs once
# more, with its own three D, and the test is skipped when knee says so again (timing_verdict,
# timing.bash; a probe failure under two CPU hogs and other helpers' builds excludes a
# repetition; two of them leave no majority).
# The server and knee run at nice -10 where that is allowed, so that the other processes of a
# shared machine stretch the 10 ms less (D is measured either way).
# tier: timing
source "$KNEE_SRC/tests/e2e/capacity_common.bash"
SERVE_WRAP=("${NICE[@]}")
start_knee_serve flat --preset flat
U=http://127.0.0.1:$PORT_flat/
cat >"$TMP/stretch.sh" <<SH
#!/bin/sh
# stretch.sh RUN: one measurement of D for capacity run RUN (stretch-RUN-<n>.json)
n=\$(ls "$TMP"/stretch-\$1-*.json 2>/dev/null | wc -l)
exec "$KNEE" run -c 1 -d 500ms --json "$TMP/stretch-\$1-\$n.json" "$U" >/dev/null
SH
RATES=40,60,90

# judge RUN: run RUN's verdict and its bracket against the M/D/1 band of its own D; prints the
# band, writes the ladder index of the capacity and the run's mean D to $TMP/RUN.k; 1 on failure
judge() {
    python3 - "$TMP" "$KNEE" "$RATES" "$1" <<'PY'
import glob, json, re, subprocess, sys
tmp, knee, rates, run = sys.argv[1], sys.argv[2], [float(r) for r in sys.argv[3].split(",")], sys.argv[4]
work = [json.load(open(f))["targets"][0]["server_timing"]["work"]["mean"]
        for f in glob.glob("%s/stretch-%s-*.json" % (tmp, run))]
if len(work) != 3:
    sys.exit("FAIL: run %s: %d measurements of D, not 3: %s" % (run, len(work), work))
d_lo = 10.0

def p99_response_ms(rate, d_ms):
    out = subprocess.run([knee, "model", "md1", "--service", "%gms" % d_ms, "--rate", "%g" % rate],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return float("inf")  # unstable
    m = re.search(r"^  p99 +\S+ +(\S+)$", out.stdout, re.M)
    v = m.group(1)
    return float(v[:-2]) if v.endswith("ms") else float(v[:-1]) * 1000

def capacity(d_ms, slo_ms=100.0):
    lo, hi = 0.01, 1000.0 / d_ms
    for _ in range(30):
        mid = (lo + hi) / 2
        if p99_response_ms(mid, d_ms) < slo_ms:
            lo = mid
        else:
            hi = mid
    return lo

print("# run %s: work per request (ms, Server-Timing): %s" % (run, " ".join("%.2f" % w for w in work)))
d_hi = max(work)  # the three --between measurements of this run
band = (capacity(d_hi) * 0.6, capacity(d_lo) * 1.25)
print("# run %s: M/D/1 band for p99<100ms: %.1f/s (D %.2f ms, x0.6) .. %.1f/s (D 10 ms, x1.25)"
      % (run, band[0], d_hi, band[1]))
d = json.load(open("%s/%s.json" % (tmp, run)))
if not (d["verdict"] == "valid" and d["valid_reps"] >= 2):
    sys.exit("FAIL: run %s: verdict %s, %d valid repetitions: %s" % (run, d["verdict"], d["valid_reps"], d["reasons"]))
cap = d["ladder_capacity"]
k = rates.index(cap) if cap is not None else -1
lo = cap if cap is not None else 0.0
hi = rates[k + 1] if k + 1 < len(rates) else float("inf")
print("# run %s: capacity %s/s, bracket [%g, %g)" % (run, cap, lo, hi))
if not (lo <= band[1] and hi >= band[0]):
    sys.exit("FAIL: run %s: bracket [%g, %g) outside the M/D/1 band" % (run, lo, hi))
open("%s/%s.k" % (tmp, run), "w").write("%d %r\n" % (k, sum(work) / 3))
PY
}

for run in a b; do
    for attempt in 1 2; do
        rm -f "$TMP"/stretch-$run-*.json
        set +e
        "${NICE[@]}" "$KNEE" capacity --rates $RATES --reps 3 --arrivals poisson --step 1s --warmup 200ms --settle 200ms \
            --lag-limit 50ms --slo 'p99<100ms' --no-cross-check --between "sh $TMP/stretch.sh $run" \
            --json "$TMP/$run.json" "$U" >"$TMP/$run.txt" 2>"$TMP/$run.err"
        RC=$?
        set -e
        sed -n '/^ladder x/,/^$/p;/^capacity\|^INVALID/p' "$TMP/$run.txt"
        problem=""
        if [[ $RC -ne 0 ]]; then
            problem="run $run: exit $RC"
        elif ! judge $run; then
            problem="run $run: its verdict or bracket (above)"
        fi
        [[ -z $problem ]] || cat "$TMP/$run.txt" "$TMP/$run.err"
        timing_verdict $attempt "$problem" "$(capacity_machine_why "$TMP/$run.json")" && break
    done
done

# The two runs agree within one rate of the ladder when the machine stretched the 10 ms alike
read -r ka da <"$TMP/a.k"
read -r kb db <"$TMP/b.k"
python3 - "$ka" "$da" "$kb" "$db" <<'PY'
import sys
idx, mean_d = [int(sys.argv[1]), int(sys.argv[3])], [float(sys.argv[2]), float(sys.argv[4])]
if max(mean_d) <= 1.25 * min(mean_d):
    assert abs(idx[0] - idx[1]) <= 1, "the two runs disagree by more than one rate: %s (mean D %.2f, %.2f ms)" % (
        idx, mean_d[0], mean_d[1])
else:
    print("# the machine stretched the 10 ms differently (mean D %.2f ms, %.2f ms): the runs' agreement is not"
          " asserted, only each run's band" % (mean_d[0], mean_d[1]))
PY
echo "1 passed, 0 failed"
