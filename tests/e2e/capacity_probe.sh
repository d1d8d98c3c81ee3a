#!/usr/bin/env bash
# The calibration probe tests the generator: knee capacity pinned on one CPU with one load
# thread; before repetition 2 --between starts CPU hogs pinned on that same CPU and before
# repetition 3 stops them. Repetition 2's probe (115% of 4,000/s to the in-process null
# target) falls short, the repetition is excluded and never votes, and the output says why
# (the probe's shortfall, the hogs among the busiest processes of its environment record).
# The other probes may pass (the test could fail): at least one of them must. One rung: the
# probe is what is tested. No --lag-limit: the probe's default limit is 10% of the SLO's
# p99<500ms, 50 ms; the steps are judged by knee run's relative rule (they may fail as
# generator-limited on a busy machine; this test does not look at them). --timeout and
# --drain bound repetition 2's windows: a starved generator would drain for many seconds.
# tier: timing
# (CPU hogs pinned on the generator's CPU: never beside other tests. The checks of the lines and
# the JSON are exact checks of the same run; that a probe without hogs passes is the machine's:
# when neither does, knee capacity itself says the machine was measured, and the run is
# repeated once, then skipped (timing_verdict, timing.bash).)
source "$KNEE_SRC/tests/e2e/capacity_common.bash"
command -v taskset >/dev/null || { echo "skip: no taskset"; exit 77; }
[[ $(nproc) -ge 2 ]] || { echo "skip: one CPU"; exit 77; }
HOGS="$TMP/hogs"
cleanup_hogs() { [[ -s "$HOGS" ]] && kill $(cat "$HOGS") 2>/dev/null; rm -f "$HOGS"; cleanup; }
trap cleanup_hogs EXIT
# the target on CPU 0, the generator on CPU 1
SERVE_WRAP=(taskset -c 0)
start_knee_serve null --preset null
PORT=$PORT_null
# The hogs outweigh the generator: three at nice -10 where that is allowed (the generator gets
# about 3% of its CPU, and each hog a third, so they top the environment record's list of
# busiest processes), else twelve at nice 0. Six at nice 0 once left the probe within its lag
# limit: the generator, asleep between sends, is let in first at every wake-up, and a seventh
# of a CPU was nearly enough for it.
NICE= NHOGS=12
nice -n -10 true 2>/dev/null && NICE="nice -n -10" NHOGS=3
cat >"$TMP/between.sh" <<SH
#!/bin/sh
NICE="$NICE"
n=\$(( \$(cat "$TMP/n" 2>/dev/null || echo 0) + 1 )); echo \$n >"$TMP/n"
if [ \$n -eq 2 ]; then
    for i in \$(seq $NHOGS); do taskset -c 1 \$NICE sh -c 'while :; do :; done' & echo \$! >>"$HOGS"; done
elif [ \$n -eq 3 ]; then
    kill \$(cat "$HOGS"); rm -f "$HOGS"
fi
SH
run_knee_pinned() {
    set +e
    taskset -c 1 "$KNEE" "$@"
    RC=$?
    set -e
}
for attempt in 1 2; do
    rm -f "$TMP/n"
    run_knee_pinned capacity --threads 1 --rates 4000 --reps 3 --step 1s --warmup 300ms --settle 200ms \
        --timeout 1s --drain 500ms --slo 'p99<500ms' --no-cross-check --between "sh $TMP/between.sh" --json "$TMP/p.json" \
        "http://127.0.0.1:$PORT/" >"$TMP/p.txt" 2>"$TMP/p.err"
    cat "$TMP/p.txt"
    [[ ! -s "$HOGS" ]] || fail "the hogs were not stopped"
    [[ $RC -eq 0 || $RC -eq 3 ]] || { cat "$TMP/p.err"; fail "exit $RC"; }
    grep -q '^  rep 2   FAILED  achieved ' "$TMP/p.txt" || fail "the probes table does not show repetition 2 failing"
    grep -q 'repetition 2 excluded: probe failed (not delivered: ' "$TMP/p.txt" || fail "no reason for the exclusion"
    grep -q "lag p99 > 50ms (10% of the SLO's p99<500ms)" "$TMP/p.txt" || fail "the probe's lag limit not shown"
    cap_check "$TMP/p.json" "d['config']['probe_lag_limit'] == 50 and d['config']['latency_group'] == 'ok'" \
        "the probe's lag limit and the latency group in the JSON"
    cap_check "$TMP/p.json" "not d['probes'][1]['ok'] and d['probes'][1]['reason'] != '' and \
        (d['probes'][1]['achieved'] < 0.99 * d['probes'][1]['planned'] or d['probes'][1]['lag_p99'] > 50)" \
        "repetition 2's probe fell short"
    cap_check "$TMP/p.json" "not d['repetitions'][1]['valid'] and d['repetitions'][1]['excluded'].startswith('probe failed')" \
        "repetition 2 excluded"
    cap_check "$TMP/p.json" "all(g['valid_reps'] == sum(1 for r in d['repetitions'] if r['valid']) for g in d['ladder'])" \
        "repetition 2 never votes"
    cap_check "$TMP/p.json" "sum(p['cpu_s'] for p in d['environment'][1]['top'] if p['comm'] == 'sh') > 0.5" \
        "the hogs in repetition 2's environment record"
    problem=""
    [[ $(cap_value "$TMP/p.json" "d['probes'][0]['ok'] or d['probes'][2]['ok']") == True ]] ||
        problem="a probe without hogs passes: neither did (repetitions 1 and 3)"
    # knee capacity's own verdict on repetitions 1 and 3 (repetition 2's failure is the test's)
    why=$(capacity_machine_why "$TMP/p.json" | tr ';' '\n' | grep -v 'probe of rep 2 failed\|during repetition 2$' | paste -sd';' || true)
    timing_verdict $attempt "$problem" "$why" && break
done
echo "1 passed, 0 failed"
