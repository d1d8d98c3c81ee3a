#!/usr/bin/env bash
# Every request's timeout fires on time, in the closed and the open loop. The server answers
# half the requests after 0..400 ms and never answers the other half, so a closed loop's sends,
# and with them the deadlines in flight, spread out in time: a send made by the timeout handler
# must not push an older deadline back (it did: up to 2x --timeout late).
#
# The bound: no timed-out request's service time (T5 - T1, from the per-request CSV) exceeds
# the timeout + 250 ms. What a timeout can add is the worker thread's wake-up latency (timer
# slack 1 ns, epoll_pwait2) plus the handler's own µs: on a loaded 2-core machine a woken
# thread waits at most about one CFS scheduling period (12-24 ms, or 3 ms per runnable task
# with many), seen at a few ms here; a skipped deadline is late by up to the whole timeout.
# tier: exact timing
# The exact tier: short runs (1.5 s), whose accounting holds and whose timeouts, at least ten,
# none fired early (a lower bound the engine keeps on any machine). The timing tier: 4 s runs
# whose timeouts all fired within the bound.
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
URL="http://127.0.0.1:$FS_PORT/sometimes-stall?pct=50&max_ms=400"
TIMEOUT_MS=1000
SLACK_MS=250

# late_check CSV LABEL [exact]: at least a few timeouts seen and none early (else exit 1); unless
# told exact, also every timeout within the bound (else exit 3)
late_check() {
    python3 - "$1" "$2" "$TIMEOUT_MS" "$SLACK_MS" "${3:-timing}" <<'PY'
import csv, sys
path, label, timeout, slack, tier = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
rows = list(csv.DictReader(open(path)))
svc = [float(r["service_ms"]) for r in rows if r["outcome"] == "timeout"]
late = sorted(s for s in svc if s > timeout + slack)
print("%s: %d requests, %d timed out, service of timeouts %.1f .. %.1f ms" % (label, len(rows), len(svc),
      min(svc) if svc else 0, max(svc) if svc else 0))
if len(svc) < 10:
    sys.exit("FAIL: %s: only %d timeouts, the test needs more" % (label, len(svc)))
if min(svc) < timeout:
    sys.exit("FAIL: %s: a timeout fired early (%.1f ms)" % (label, min(svc)))
if late and tier == "timing":
    print("FAIL: %s: %d of %d timeouts later than %g + %g ms: %s" % (label, len(late), len(svc), timeout, slack,
          ", ".join("%.0f" % s for s in late[:10])), file=sys.stderr)
    sys.exit(3)
PY
}

if in_tier exact; then
    for mode in closed open; do
        flags=(-c 16)
        [[ $mode == open ]] && flags=(-R 60)
        run_knee run "${flags[@]}" -d 1500ms --timeout ${TIMEOUT_MS}ms --out "$TMP/$mode-x.csv" --json "$TMP/$mode-x.json" \
            "$URL" >"$TMP/$mode-x.txt" 2>&1
        [[ $RC -eq 0 ]] || { cat "$TMP/$mode-x.txt"; fail "$mode loop: exit $RC"; }
        json_check "$TMP/$mode-x.json" 'identity(acc) and d["accounting_ok"] and acc["outcomes"]["timeout"] > 0' \
            "$mode: accounting"
        late_check "$TMP/$mode-x.csv" "$mode loop" exact
    done
    in_tier timing || { echo "ok"; exit 0; }
fi

run_knee_nice run -c 16 -d 4s --timeout ${TIMEOUT_MS}ms --out "$TMP/closed.csv" --json "$TMP/closed.json" "$URL" \
    >"$TMP/closed.txt" 2>&1
[[ $RC -eq 0 ]] || { cat "$TMP/closed.txt"; fail "closed loop: exit $RC"; }
json_check "$TMP/closed.json" 'identity(acc) and d["accounting_ok"] and acc["outcomes"]["timeout"] > 0' "closed: accounting"
late_check "$TMP/closed.csv" "closed loop"

# The open loop's timing is knee's to judge: a timeout is late either because the engine skipped
# its deadline (the bug above: the generator's sends stay on time) or because the worker thread
# did not run (a loaded CI machine, load average ~10: 23 of 121 timeouts 257 ms to 1 s late);
# the second also delays the sends planned meanwhile (60/s: one every 17 ms), and knee calls
# such a run GENERATOR-LIMITED: a late timeout in a run knee calls so is the machine's
# (timing_verdict, timing.bash). The accounting always stands. A closed loop has no such
# verdict: its check stands as it is. knee runs at nice -10 where allowed (its timers are under
# test, not the scheduler of a shared machine).
for attempt in 1 2; do
    run_knee_nice run -R 60 -d 4s --timeout ${TIMEOUT_MS}ms --out "$TMP/open$attempt.csv" \
        --json "$TMP/open$attempt.json" "$URL" >"$TMP/open$attempt.txt" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/open$attempt.txt"; fail "open loop: exit $RC"; }
    json_check "$TMP/open$attempt.json" 'identity(acc) and d["accounting_ok"] and acc["outcomes"]["timeout"] > 0' \
        "open: accounting"
    set +e
    late_check "$TMP/open$attempt.csv" "open loop"
    lc=$?
    set -e
    [[ $lc == 0 || $lc == 3 ]] || exit 1 # too few timeouts, or one early: never the machine's
    late=""
    [[ $lc == 3 ]] && late="open loop: late timeouts (attempt $attempt)"
    timing_verdict $attempt "$late" "$(run_limited_why "$TMP/open$attempt.json")" && break
done
echo "ok"
