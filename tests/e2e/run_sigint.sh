#!/usr/bin/env bash
# Ctrl-C: planning stops, in-flight requests drain, every output is written, the accounting
# holds and nothing measured is lost; a second signal cancels what is still in flight.
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
URL="http://127.0.0.1:$FS_PORT/slow?ms=300"

"$KNEE" run -R 200 -d 60s --json "$TMP/a.json" --out "$TMP/a.csv" "$URL" >"$TMP/a.txt" 2>&1 &
KP=$!
PIDS+=($KP)
sleep 1.5
kill -INT "$KP"
set +e
wait "$KP"
RC=$?
set -e
[[ $RC -eq 0 ]] || { cat "$TMP/a.txt"; fail "exit $RC after SIGINT"; }
json_check "$TMP/a.json" 'd["interrupted"] and identity(acc) and d["accounting_ok"]' "interrupted, accounting holds"
json_check "$TMP/a.json" 'acc["outcomes"]["cancelled"] == 0 and acc["outcomes"]["ok"] == acc["planned"] >= 200' \
    "the drain let every in-flight request finish"
json_check "$TMP/a.json" 'd["window_s"] < 5' "the window ends at the interrupt"
N=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['all']['accounting']['planned'])" "$TMP/a.json")
[[ $(($(wc -l <"$TMP/a.csv") - 1)) -eq $N ]] || fail "the CSV has a row per planned request"
grep -q 'interrupted' "$TMP/a.txt" || fail "the summary says it was interrupted"

# two signals: the second cancels the in-flight requests at once
"$KNEE" run -R 200 -d 60s --json "$TMP/b.json" "http://127.0.0.1:$FS_PORT/slow?ms=5000" >"$TMP/b.txt" 2>&1 &
KP=$!
PIDS+=($KP)
sleep 1.5
kill -INT "$KP"
sleep 0.3
kill -TERM "$KP"
set +e
wait "$KP"
RC=$?
set -e
# every request was cancelled: nothing succeeded, a failed run (exit 3), outputs written
[[ $RC -eq 3 ]] || { cat "$TMP/b.txt"; fail "exit $RC after two signals (not one ok: 3)"; }
json_check "$TMP/b.json" 'identity(acc) and acc["outcomes"]["cancelled"] >= 200 and d["no_ok"]' "second signal cancels"
echo "ok"
