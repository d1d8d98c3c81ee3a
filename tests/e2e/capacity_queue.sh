#!/usr/bin/env bash
# knee capacity against knee serve --preset queue (4 slots x 20 ms: 200/s; 503 after 250 ms):
#  A. the target is down for the whole of repetition 2 (--between kills it before, restarts it
#     on the same port before repetition 3): that repetition fails every rate, the vote keeps
#     the capacity at 150/s (100 and 150 held 2/3, 250 not); the closed loop (~200/s) lands in
#     the ladder's bracket [150, 250) (up to knee capacity's own --agree 10%): valid, exit 0.
#     The JSON follows knee-capacity/1, --out keeps every window's log and hlog, --hlog tags
#     every window, --between is timed.
#  B. --require above it: exit 99, the verdict says NOT MET; --json - puts the JSON on stdout
#     (two rates: the capacity is at least the top, 150/s, unless a bad window failed it in the
#     one repetition); --metrics-listen serves the steps' counts added up (the probe's left
#     out) and lingers with the final values; --progress in a pipe prints plain lines.
#  C. one slot (20 ms: 50/s), Poisson arrivals and an SLO of a few service times: the open loop's capacity lies
#     far below the closed loop's throughput (~50/s), which only bounds it: latency-bound, the queue model
#     of the closed loop's service times (~18/s) is the second method and lands in the ladder's bracket
#     [10, 20): valid, exit 0 (before the queue model: INVALID, the closed loop compared as a measurement).
# --lag-limit 50ms: knee run's relative generator rule (a lag p99 above 1 ms and above 10% of
# the latency p99) marks a step generator-limited; on a loaded 2-core machine the lag p99 is
# 3-6 ms against the 100 and 150/s steps' 22-30 ms p99 (measured while other helpers compiled),
# so those steps fail as "not delivered" without a hard limit. The generator's timer is not
# under test here (capacity_probe.sh tests the probe, with its own default limit).
# A, B and C: when a part's expected verdict does not come and knee capacity itself says the
# machine may have been measured (a probe failed, a step "not delivered", a repetition BUSY:
# capacity_machine_why), that part runs once more (measured with two CPU hogs and other
# helpers' builds: a probe at 46/s sent 97.7% of its plan and excluded C's one repetition;
# steps at 150/s with lag p99 115-247 ms left A's capacity below 100/s; a closed-loop step of 2
# connections failed p99<100ms with 103 ms, one slow answer in a 1 s window of 80). On a machine
# that loaded the second run can fail the same way: the test is then skipped, naming what knee
# capacity measured (timing_verdict, timing.bash). A verdict that does not come from a run knee
# capacity calls valid fails at once.
# The servers and knee capacity run at nice -10 where that is allowed (as in capacity_flat.sh),
# so that the other processes of a shared machine stretch the 20 ms and the sends less (before
# that and the repetition, under two CPU hogs and other builds, 3 of 3 runs failed, each with a
# failed probe).
# tier: exact timing
# The exact tier runs A and B with short steps (300 ms) and checks what their verdicts do not
# decide: the JSON's fields, repetition 2's failures, --between, --out and --hlog, --json -,
# --progress's lines and the metrics endpoint's counts. The timing tier runs A, B and C as
# above and checks the verdicts (and the same again).
source "$KNEE_SRC/tests/e2e/capacity_common.bash"
SERVE_WRAP=("${NICE[@]}")
run_nice() { # run_knee behind NICE
    set +e
    "${NICE[@]}" "$KNEE" "$@"
    RC=$?
    set -e
}
start_knee_serve q --preset queue
Q=http://127.0.0.1:$PORT_q/
COMMON=(--step 1s --warmup 300ms --settle 200ms --lag-limit 50ms --timeout 2s --drain 1s)

# run_a: part A's knee capacity against the target now running (PID_q), which its --between
# kills before repetition 2 and starts again (PID_q then) before repetition 3
run_a() {
    rm -rf "$TMP/n" "$TMP/out" "$TMP/a.hlog" "$TMP/q2.pid"
    cat >"$TMP/between.sh" <<SH
#!/bin/sh
# before repetition N: kill the target before the 2nd, start it again on its port before the 3rd
n=\$(( \$(cat "$TMP/n" 2>/dev/null || echo 0) + 1 )); echo \$n >"$TMP/n"
if [ \$n -eq 2 ]; then
    kill $PID_q
    while kill -0 $PID_q 2>/dev/null; do sleep 0.05; done
elif [ \$n -eq 3 ]; then
    ${NICE[*]} "$KNEE" serve -l 127.0.0.1:$PORT_q --preset queue >"$TMP/serve-q2.out" 2>&1 &
    echo \$! >"$TMP/q2.pid"
    i=0; while ! grep -q 'listening on' "$TMP/serve-q2.out" && [ \$i -lt 100 ]; do sleep 0.05; i=\$((i+1)); done
fi
SH
    run_nice capacity --rates 100,150,250 --reps 3 "${COMMON[@]}" --slo 'p99<100ms' --slo 'error_rate<1%' \
        --between "sh $TMP/between.sh" --json "$TMP/a.json" --out "$TMP/out" --hlog "$TMP/a.hlog" "$Q" >"$TMP/a.txt" 2>"$TMP/a.err"
    if [[ -s "$TMP/q2.pid" ]]; then
        PID_q=$(cat "$TMP/q2.pid")
        PIDS+=("$PID_q")
    fi
}
if in_tier exact; then
    COMMON=(--step 300ms --warmup 100ms --settle 100ms --lag-limit 50ms --timeout 2s --drain 1s)
    run_a
    [[ $RC -eq 0 || $RC -eq 3 ]] || { cat "$TMP/a.txt" "$TMP/a.err"; fail "A (short steps): exit $RC"; }
    cap_check "$TMP/a.json" "d['schema'] == 'knee-capacity/1' and d['exit_code'] == $RC and \
        d['slo'] == ['p99<100ms', 'error_rate<1%'] and d['reps'] == 3" "A: head"
    cap_check "$TMP/a.json" "all(not g['reps'][1]['held'] and g['reps'][1]['reason'] for g in d['ladder'])" \
        "A: repetition 2 failed every rate, with a reason"
    cap_check "$TMP/a.json" "all(set(r) >= {'held', 'reason', 'achieved', 'p50', 'p99', 'error_rate'} \
        for g in d['ladder'] for r in g['reps'])" "A: step fields"
    cap_check "$TMP/a.json" "len(d['probes']) == 3 and all(set(p) >= {'planned', 'achieved', 'lag_p99', 'ok'} \
        for p in d['probes'])" "A: probes"
    cap_check "$TMP/a.json" "len(d['environment']) == 3 and all(e['recorded'] and e['cpus'] and e['start'] and \
        e['wall_s'] > 0 and 'knee_cpu_s' in e and len(e['loadavg_before']) == 3 for e in d['environment'])" \
        "A: the environment record"
    cap_check "$TMP/a.json" "[r['between']['status'] for r in d['repetitions']] == [0, 0, 0] and \
        all(r['between']['seconds'] > 0 for r in d['repetitions'])" "A: --between timed before every repetition"
    for f in rep1-probe rep1-100 rep2-150 rep3-250; do
        [[ -s "$TMP/out/$f.bin" && -s "$TMP/out/$f.hlog" ]] || fail "A: --out has no $f.bin/.hlog: $(ls "$TMP/out")"
    done
    "$KNEE" stats "$TMP/out/rep1-150.bin" >"$TMP/stats.txt" || fail "A: knee stats cannot read a step's log"
    "$KNEE" hlog tags "$TMP/a.hlog" >"$TMP/tags.txt" || fail "A: knee hlog cannot read --hlog"
    for t in rep1/probe/probe "rep2/150/127.0.0.1:$PORT_q" "rep3/250/127.0.0.1:$PORT_q"; do
        grep -q "^$t " "$TMP/tags.txt" || { cat "$TMP/tags.txt"; fail "A: --hlog has no tag $t"; }
    done
    # B's outputs: --json - on stdout, --progress's plain lines, the lingering endpoint's counts
    "$KNEE" capacity --rates 100,150 --reps 1 --no-cross-check "${COMMON[@]}" --slo 'error_rate<1%' \
        --require 1000 --json - --metrics-listen 127.0.0.1:0 --metrics-linger 30s --progress "$Q" \
        >"$TMP/bx.json" 2>"$TMP/bx.txt" &
    bpid=$!
    PIDS+=("$bpid")
    for _ in $(seq 300); do grep -q '^metrics: final values on ' "$TMP/bx.txt" && break; sleep 0.1; done
    grep -q '^metrics: final values on http://127.0.0.1:[0-9]*/metrics for 30s' "$TMP/bx.txt" ||
        { cat "$TMP/bx.txt"; fail "B: no lingering metrics endpoint"; }
    mport=$(sed -n 's|^metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$TMP/bx.txt")
    curl -sf "http://127.0.0.1:$mport/metrics" >"$TMP/bx.prom" || fail "B: the scrape failed"
    kill -INT "$bpid"
    set +e
    wait "$bpid"
    RC=$?
    set -e
    # 99: the requirement not met; 3: no repetition valid (a probe that failed on a busy machine)
    [[ $RC -eq 99 || $RC -eq 3 ]] || { cat "$TMP/bx.txt"; fail "B (short steps): exit $RC"; }
    cap_check "$TMP/bx.json" "d['exit_code'] == $RC and d['require_met'] is False and d['cross_check']['ran'] is False" \
        "B: --json - on stdout"
    grep -q 'no cross-check' "$TMP/bx.txt" || fail "B: no-cross-check not said"
    grep -q '^capacity: rep 1/1 probe 172.5/s$' "$TMP/bx.txt" || { cat "$TMP/bx.txt"; fail "B: no progress line for the probe"; }
    grep -q '^capacity: rep 1/1 step 2/2 150/s  last step p99 ' "$TMP/bx.txt" || fail "B: no progress line for step 2"
    ! grep -q $'[\r\033]' "$TMP/bx.txt" || fail "B: control characters in --progress to a pipe"
    python3 - "$TMP/bx.json" "$TMP/bx.prom" "$PORT_q" <<'PY' || exit 1
import json, sys
d, text, t = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), "127.0.0.1:" + sys.argv[3]
steps = sum(r["requests"] for g in d["ladder"] for r in g["reps"])
want = ['knee_planned_requests_total{target="%s"} %d' % (t, steps), "knee_run_finished 1"]
missing = [w for w in want if w + "\n" not in text]
if missing or steps <= 0:
    sys.exit("FAIL: B: not in the lingering scrape: %s (steps' requests %d)" % (missing, steps))
PY
    in_tier timing || { echo "1 passed, 0 failed"; exit 0; }
    COMMON=(--step 1s --warmup 300ms --settle 200ms --lag-limit 50ms --timeout 2s --drain 1s)
fi

for attempt in 1 2; do
    run_a
    problem=""
    [[ $RC -eq 0 && $(cap_value "$TMP/a.json" "d['capacity'] == 150" 2>/dev/null) == True ]] ||
        problem="A: exit $RC, capacity $(cap_value "$TMP/a.json" "d['capacity']" 2>/dev/null), expected 0 and 150"
    [[ -z $problem ]] || cat "$TMP/a.txt" "$TMP/a.err"
    timing_verdict $attempt "$problem" "$(capacity_machine_why "$TMP/a.json")" && break
done
cat "$TMP/a.txt"
[[ $RC -eq 0 ]] || { cat "$TMP/a.err"; fail "A: exit $RC, expected 0"; }
# (4 servers and an SLO of 5 service times lie near the regimes' border: the queue model holds
# p99<100ms to ~0.9 of the closed loop's throughput, either side of --agree's 10% by the run;
# the verdict line names the method it compared)
grep -Eq '^capacity 150/s at p99<100ms, error_rate<1% \(3/3 repetitions valid, (closed loop|latency-bound: queue model) ' \
    "$TMP/a.txt" || fail "A: the verdict line"
cap_check "$TMP/a.json" "d['schema'] == 'knee-capacity/1' and d['capacity'] == 150 and d['verdict'] == 'valid'" \
    "A: capacity 150, valid"
cap_check "$TMP/a.json" "d['exit_code'] == 0 and d['slo'] == ['p99<100ms', 'error_rate<1%'] and d['reps'] == 3" "A: head"
cap_check "$TMP/a.json" "[(g['rate'], g['held_by'], g['valid_reps'], g['held']) for g in d['ladder']] == \
    [(100, 2, 3, True), (150, 2, 3, True), (250, 0, 3, False)]" "A: the vote (repetition 2 held nothing)"
cap_check "$TMP/a.json" "all(not g['reps'][1]['held'] and g['reps'][1]['reason'] for g in d['ladder'])" \
    "A: repetition 2 failed every rate, with a reason"
cap_check "$TMP/a.json" "all(set(r) >= {'held', 'reason', 'achieved', 'p50', 'p99', 'error_rate'} \
    for g in d['ladder'] for r in g['reps'])" "A: step fields"
cap_check "$TMP/a.json" "len(d['probes']) == 3 and all(p['ok'] and p['planned'] > 280 and \
    set(p) >= {'planned', 'achieved', 'lag_p99', 'ok'} for p in d['probes'])" "A: probes at 115% of 250/s"
cap_check "$TMP/a.json" "len(d['environment']) == 3 and all(e['recorded'] and e['cpus'] and e['start'] and \
    e['wall_s'] > 0 and 'knee_cpu_s' in e and len(e['loadavg_before']) == 3 for e in d['environment'])" \
    "A: the environment record"
cap_check "$TMP/a.json" "[r['between']['status'] for r in d['repetitions']] == [0, 0, 0] and \
    all(r['between']['seconds'] > 0 for r in d['repetitions'])" "A: --between timed before every repetition"
# (the closed loop's ~200/s is 4 slots over 20 ms; a loaded machine stretched the 20 ms to 27 and
# the closed loop carried 148/s, 1.3% below the bracket, which knee capacity calls agreement
# within its --agree 10%: the test asks for that rule, the bracket widened by exactly the share)
cap_check "$TMP/a.json" "d['cross_check']['ran'] and d['cross_check']['agree'] and \
    150 * (1 - d['cross_check']['agree_threshold']) <= d['cross_check']['closed_loop'] <= 250 and \
    abs(d['cross_check']['difference']) <= d['cross_check']['agree_threshold']" \
    "A: the closed loop inside the bracket (up to --agree)"
cap_check "$TMP/a.json" "d['bracket'] == [150, 250] and d['nonmonotone'] == [] and d['interrupted'] is False" \
    "A: bracket"
for f in rep1-probe rep1-100 rep2-150 rep3-250 closed-c1; do
    [[ -s "$TMP/out/$f.bin" && -s "$TMP/out/$f.hlog" ]] || fail "A: --out has no $f.bin/.hlog: $(ls "$TMP/out")"
done
"$KNEE" stats "$TMP/out/rep1-150.bin" >"$TMP/stats.txt" || fail "A: knee stats cannot read a step's log"
"$KNEE" hlog tags "$TMP/a.hlog" >"$TMP/tags.txt" || fail "A: knee hlog cannot read --hlog"
for t in rep1/probe/probe "rep2/150/127.0.0.1:$PORT_q" "rep3/250/127.0.0.1:$PORT_q" "closed/c1/127.0.0.1:$PORT_q"; do
    grep -q "^$t " "$TMP/tags.txt" || { cat "$TMP/tags.txt"; fail "A: --hlog has no tag $t"; }
done

# B: --require not met, --json - (JSON on stdout, the text on stderr); --metrics-listen: one
# endpoint for the whole measurement, lingering after it with the final values: its planned
# requests are the steps' (the JSON's), the probe's left out
run_b() {
    "${NICE[@]}" "$KNEE" capacity --rates 100,150 --reps 1 --no-cross-check "${COMMON[@]}" --slo 'error_rate<1%' \
        --require 1000 --json - --metrics-listen 127.0.0.1:0 --metrics-linger 30s --progress "$Q" \
        >"$TMP/b.json" 2>"$TMP/b.txt" &
    bpid=$!
    PIDS+=("$bpid")
    for _ in $(seq 300); do grep -q '^metrics: final values on ' "$TMP/b.txt" && break; sleep 0.1; done
    grep -q '^metrics: final values on http://127.0.0.1:[0-9]*/metrics for 30s' "$TMP/b.txt" ||
        { cat "$TMP/b.txt"; fail "B: no lingering metrics endpoint"; }
    mport=$(sed -n 's|^metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$TMP/b.txt")
    curl -sf "http://127.0.0.1:$mport/metrics" >"$TMP/b.prom" || fail "B: the scrape failed"
    kill -INT "$bpid"
    set +e
    wait "$bpid"
    RC=$?
    set -e
}
for attempt in 1 2; do
    run_b
    problem=""
    [[ $RC -eq 99 && $(cap_value "$TMP/b.json" "d['capacity'] in (100, 150)" 2>/dev/null) == True ]] ||
        problem="B: exit $RC, capacity $(cap_value "$TMP/b.json" "d['capacity']" 2>/dev/null), expected 99 and 100 or 150"
    [[ -z $problem ]] || cat "$TMP/b.txt"
    timing_verdict $attempt "$problem" "$(capacity_machine_why "$TMP/b.json")" && break
done
sed -n '/^ladder x/,/^$/p;/^why steps/,/^$/p' "$TMP/b.txt"
[[ $RC -eq 99 ]] || { cat "$TMP/b.txt"; fail "B: exit $RC, expected 99"; }
grep -q -- '--require 1,000/s NOT MET' "$TMP/b.txt" || { cat "$TMP/b.txt"; fail "B: the verdict line"; }
grep -q 'no cross-check' "$TMP/b.txt" || fail "B: no-cross-check not said"
# --progress in a pipe: a plain line as each window starts, no CR, no escape sequence
grep -q '^capacity: rep 1/1 probe 172.5/s$' "$TMP/b.txt" || { cat "$TMP/b.txt"; fail "B: no progress line for the probe"; }
grep -q '^capacity: rep 1/1 step 2/2 150/s  last step p99 ' "$TMP/b.txt" || fail "B: no progress line for step 2"
! grep -q $'[\r\033]' "$TMP/b.txt" || fail "B: control characters in --progress to a pipe"
# (one repetition, so one bad window of a loaded machine can fail 150/s: A tests the vote)
cap_check "$TMP/b.json" "d['exit_code'] == 99 and d['require_met'] is False and d['capacity'] in (100, 150) and \
    d['top_held'] == (d['capacity'] == 150) and d['cross_check']['ran'] is False" "B: --require"
python3 - "$TMP/b.json" "$TMP/b.prom" "$PORT_q" <<'PY' || exit 1
import json, sys
d, text, t = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), "127.0.0.1:" + sys.argv[3]
steps = sum(r["requests"] for g in d["ladder"] for r in g["reps"])
want = ['knee_planned_requests_total{target="%s"} %d' % (t, steps), "knee_run_finished 1"]
missing = [w for w in want if w + "\n" not in text]
if missing or steps < 240:
    sys.exit("FAIL: B: not in the lingering scrape: %s (steps' requests %d)\n%s" % (missing, steps,
             "\n".join(l for l in text.splitlines() if l.startswith("knee_planned"))))
print("ok: B: knee capacity's endpoint counts the steps' %d planned requests, the probe's left out" % steps)
PY

# C: one 20 ms slot, an SLO of 2.5 service times: latency-bound, the queue model agrees, valid
start_knee_serve one --preset queue --pool 1
run_c() {
    run_nice capacity --rates 5,10,20,40 --reps 1 --arrivals poisson "${COMMON[@]}" --slo 'p99<50ms' --json "$TMP/c.json" \
        "http://127.0.0.1:$PORT_one/" >"$TMP/c.txt" 2>"$TMP/c.err"
}
for attempt in 1 2; do
    run_c
    problem=""
    if [[ $RC -ne 0 || $(cap_value "$TMP/c.json" "d['ladder_capacity'] in (5, 10, 20) and \
        d['cross_check']['regime'] == 'latency-bound' and d['cross_check']['closed_loop'] > 35" 2>/dev/null) != True ]]; then
        problem="C: exit $RC, expected 0, latency-bound and the queue model agreeing"
        cat "$TMP/c.txt" "$TMP/c.err"
    fi
    timing_verdict $attempt "$problem" "$(capacity_machine_why "$TMP/c.json")" && break
done
sed -n '/^cross-check/,$p' "$TMP/c.txt"
[[ $RC -eq 0 ]] || { cat "$TMP/c.err"; fail "C: exit $RC, expected 0"; }
grep -q '^capacity [0-9]*/s at p99<50ms (1/1 repetitions valid, latency-bound: queue model ' "$TMP/c.txt" ||
    fail "C: the verdict line"
grep -q '^  regime: latency-bound: the queue model holds the SLO up to ' "$TMP/c.txt" || fail "C: no regime line"
# the closed loop carried more than twice the ladder's bracket: compared as a measurement (the
# check before the queue model) it would have called this correct answer INVALID
cap_check "$TMP/c.json" "d['verdict'] == 'valid' and d['capacity'] == d['ladder_capacity'] and \
    d['cross_check']['method'] == 'queue' and d['cross_check']['agree'] is True and \
    d['cross_check']['queue']['servers'] == 1 and d['cross_check']['above_bound'] is False and \
    d['cross_check']['closed_loop'] > 35 and d['cross_check']['second'] < 30" "C: latency-bound, valid"
echo "1 passed, 0 failed"
