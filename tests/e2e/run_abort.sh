#!/usr/bin/env bash
# knee run --abort-if: a service that turns slow (or fails) after a few seconds stops the run.
# Exact: exit 99, the JSON's aborted.rule is the rule, the text says ABORTED first, the run
# drained (nothing cancelled, the identities hold), every output (--json, --out, --hlog) is
# whole and read by knee stats and knee merge (shards that aborted), --abort-after holds the
# rules back, bad rules are exit 2 naming the rule. Timing: the abort fires within a second or
# two of the rule becoming true.
# tier: exact timing
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
SLOW_S=2 # the server turns slow this long after the first request
RULE='p99[1s]>150ms'

# run_slow NAME ARGS...: knee run against a server that answers at once, then after 300 ms;
# exit code in RC, text in $TMP/NAME.txt, stderr in $TMP/NAME.err
run_slow() {
    local name=$1
    shift
    RC=0
    "$KNEE" run "$@" >"$TMP/$name.txt" 2>"$TMP/$name.err" || RC=$?
}

if in_tier exact; then
    # bad input: exit 2, one line naming the flag and the rule
    for bad in 'p99>1s' 'p99[1s]>' 'stage2.p99[10s]>1s' 'nope[1s]>1'; do
        RC=0
        "$KNEE" run -R 10 -d 1s --abort-if "$bad" "http://127.0.0.1:$FS_PORT/ok" >"$TMP/bad.txt" 2>&1 || RC=$?
        [[ $RC -eq 2 ]] || { cat "$TMP/bad.txt"; fail "--abort-if '$bad': exit $RC (want 2)"; }
        grep -qF -- "--abort-if '$bad': " "$TMP/bad.txt" || { cat "$TMP/bad.txt"; fail "the error names '$bad'"; }
    done
    grep -q "needs --stages" <("$KNEE" run -R 10 -d 1s --abort-if 'stage2.p99[10s]>1s' http://127.0.0.1:1/ 2>&1 || true) ||
        fail "a stage rule without --stages says it needs --stages"
    RC=0
    "$KNEE" run -R 10 -d 1s --abort-after 2s "http://127.0.0.1:$FS_PORT/ok" >"$TMP/bad.txt" 2>&1 || RC=$?
    [[ $RC -eq 2 ]] || fail "--abort-after without --abort-if: exit $RC (want 2)"
    RC=0
    "$KNEE" run -c 2 -d 1s --abort-if generator_limited "http://127.0.0.1:$FS_PORT/ok" >"$TMP/bad.txt" 2>&1 || RC=$?
    [[ $RC -eq 2 ]] || fail "generator_limited in a closed loop: exit $RC (want 2)"

    # a rule that never holds changes nothing: exit 0, aborted null
    run_slow calm -R 100 -d 2s --abort-if 'p99[1s]>5s' --json "$TMP/calm.json" "http://127.0.0.1:$FS_PORT/ok"
    [[ $RC -eq 0 ]] || { cat "$TMP/calm.txt" "$TMP/calm.err"; fail "a rule that never holds: exit $RC"; }
    json_check "$TMP/calm.json" 'd["aborted"] is None and not d["interrupted"]' "not aborted: null"
fi

# the run that aborts: every output
URL="http://127.0.0.1:$FS_PORT/slow-after?s=$SLOW_S&ms=300"
run_slow a -R 100 -d 60s --abort-if "$RULE" --json "$TMP/a.json" --out "$TMP/a.bin" --hlog "$TMP/a.hlog" "$URL"
[[ $RC -eq 99 ]] || { cat "$TMP/a.txt" "$TMP/a.err"; fail "aborted: exit $RC (want 99)"; }
if in_tier exact; then
    json_check "$TMP/a.json" "d['aborted']['rule'] == '$RULE' and d['interrupted'] and d['window_end_s'] < 30" \
        "aborted.rule is the rule; the run stopped"
    json_check "$TMP/a.json" 'identity(acc) and acc["outcomes"]["cancelled"] == 0 and acc["outcomes"]["ok"] == acc["sent"]' \
        "drained: every request sent ended ok, none cancelled"
    head -1 "$TMP/a.txt" | grep -qF "ABORTED at " || { head -3 "$TMP/a.txt"; fail "the text says ABORTED first"; }
    grep -qF -- "--abort-if $RULE" <(head -1 "$TMP/a.txt") || fail "the first line names the rule"
    grep -qF "ABORTED at " "$TMP/a.err" || fail "stderr says when the rule fired"
    # --out and --hlog whole: knee stats reads them, with every completed request
    n=$(python3 -c "import json;print(json.load(open('$TMP/a.json'))['all']['accounting']['sent'])")
    "$KNEE" stats "$TMP/a.bin" >"$TMP/stats.txt" || fail "knee stats reads the aborted run's --out"
    grep -qE "^127\.0\.0\.1:$FS_PORT +$n " "$TMP/stats.txt" || { cat "$TMP/stats.txt"; fail "the log has all $n requests"; }
    "$KNEE" stats "$TMP/a.hlog" >"$TMP/hstats.txt" || fail "knee stats reads the aborted run's --hlog"
    # the record reads back (knee report takes the JSON)
    "$KNEE" report "$TMP/a.json" -o "$TMP/a.html" >/dev/null || fail "knee report reads the aborted run's JSON"

    # --abort-after: the server is slow from the start now, the rule is armed at 4 s
    run_slow late -R 100 -d 60s --abort-if "$RULE" --abort-after 4s --json "$TMP/late.json" "$URL"
    [[ $RC -eq 99 ]] || fail "--abort-after: exit $RC (want 99)"
    json_check "$TMP/late.json" 'd["aborted"]["at_s"] >= 4' "not before --abort-after"

    # generator_limited: a lag limit no timer keeps (1 us) makes the generator's verdict hold
    run_slow gen -R 200 -d 60s --lag-limit 1us --abort-if generator_limited --json "$TMP/gen.json" \
        "http://127.0.0.1:$FS_PORT/ok"
    [[ $RC -eq 99 ]] || { cat "$TMP/gen.err"; fail "generator_limited: exit $RC (want 99)"; }
    json_check "$TMP/gen.json" 'd["aborted"]["rule"] == "generator_limited" and d["generator_limited"]' \
        "generator_limited: the verdict the summary gives"

    # shards that aborted: knee merge reads them and says the first rule that fired
    for i in 0 1; do
        "$KNEE" run --shard $i/2 -R 100 -d 60s --abort-if 'error_rate[1s]>50%' --json "$TMP/s$i.json" \
            --out "$TMP/s$i.bin" --hlog "$TMP/s$i.hlog" "http://127.0.0.1:$FS_PORT/status?code=500" \
            >"$TMP/sh$i.txt" 2>&1 &
        PIDS+=($!)
    done
    for p in "${PIDS[@]:1}"; do
        RC=0
        wait "$p" || RC=$?
        [[ $RC -eq 99 ]] || fail "shard aborted: exit $RC (want 99)"
    done
    RC=0
    "$KNEE" merge --json "$TMP/m.json" -o "$TMP/m.bin" --hlog "$TMP/m.hlog" "$TMP"/s0.* "$TMP"/s1.* >"$TMP/m.txt" 2>&1 || RC=$?
    [[ $RC -eq 1 ]] || { cat "$TMP/m.txt"; fail "merge of aborted shards: exit $RC (1: shards stopped early)"; }
    json_check "$TMP/m.json" 'd["aborted"]["rule"] == "error_rate[1s]>50%" and identity(acc)' "the merge says aborted"
    grep -q "aborted at" "$TMP/m.txt" || { cat "$TMP/m.txt"; fail "the merge names the shards' abort"; }
    "$KNEE" stats "$TMP/m.bin" >/dev/null || fail "knee stats reads the merged log"
fi

if in_tier timing; then
    # the rule holds once the first slow request completes (SLOW_S + 0.3 s); it is judged at the
    # end of each second, so it fires by the end of the next one (a second of slack for load)
    at=$(python3 -c "import json;print(json.load(open('$TMP/a.json'))['aborted']['at_s'])")
    python3 -c "import sys; a=float('$at'); sys.exit(0 if $SLOW_S <= a <= $SLOW_S + 0.3 + 2.0 else 1)" ||
        fail "timing: fired at $at s; the rule became true at ~$SLOW_S.3 s"
    json_check "$TMP/a.json" 'd["elapsed_s"] <= d["aborted"]["at_s"] + 1.5' \
        "timing: planning stopped at the abort and the drain took about one slow request"
fi
echo "ok"
