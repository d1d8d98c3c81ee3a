#!/usr/bin/env bash
# Ctrl-C: planning stops, in-flight requests drain, every output is written, the accounting
# holds and nothing measured is lost; a second signal cancels what is still in flight.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
URL="http://127.0.0.1:$FS_PORT/slow?ms=300"

# exit 0, interrupted, accounting, no cancel, every planned request ok, a CSV row each
sigint_drains a 200 run -R 200 -d 60s "$URL"
json_check "$TMP/a.json" 'd["window_s"] < 5' "the window ends at the interrupt"
grep -q 'interrupted' "$TMP/a.txt" || fail "the summary says it was interrupted"

# two signals: the second cancels the in-flight requests at once
knee_signalled "$TMP/b.txt" "INT TERM" run -R 200 -d 60s --json "$TMP/b.json" "http://127.0.0.1:$FS_PORT/slow?ms=5000"
# every request was cancelled: nothing succeeded, a failed run (exit 3), outputs written
[[ $RC -eq 3 ]] || { cat "$TMP/b.txt"; fail "exit $RC after two signals (not one ok: 3)"; }
json_check "$TMP/b.json" 'identity(acc) and acc["outcomes"]["cancelled"] >= 200 and d["no_ok"]' "second signal cancels"
echo "ok"
