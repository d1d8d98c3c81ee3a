#!/usr/bin/env bash
# --hlog on Ctrl-C: the interval log is complete (its counts add up to the run's own latency
# count, last partial second included) and parses (knee hlog show), after one signal (drain)
# and after two (the second cancels what is in flight; cancelled requests have no latency).
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server --log

served() { grep -c '^served' "$TMP/fs.out" || true; }

# NAME URL SIGNALS...: start a 60 s run, wait until the server has answered 150 more
# requests, send the signals (0.3 s apart), then check the log against the JSON
interrupted_run() {
    local name=$1 url=$2
    shift 2
    local before
    before=$(served)
    "$KNEE" run -R 200 -d 60s --hlog "$TMP/$name.hlog" --json "$TMP/$name.json" "$url" >"$TMP/$name.txt" 2>&1 &
    local kp=$!
    PIDS+=($kp)
    local i
    for i in $(seq 400); do
        (($(served) - before >= 150)) && break
        sleep 0.05
    done
    (($(served) - before >= 150)) || fail "$name: the server never answered"
    local sig
    for sig in "$@"; do
        kill "-$sig" "$kp"
        sleep 0.3
    done
    set +e
    wait "$kp"
    RC=$?
    set -e
    [[ $RC -eq 0 ]] || { cat "$TMP/$name.txt"; fail "$name: exit $RC"; }
    json_check "$TMP/$name.json" 'd["interrupted"] and identity(acc) and d["accounting_ok"]' "$name: interrupted, accounting holds"
    "$KNEE" hlog show --all-tags "$TMP/$name.hlog" >"$TMP/$name.hgrm" || fail "$name: knee hlog show cannot read the log"
    local total
    total=$(sed -n 's/.*Total count *= *\([0-9]*\).*/\1/p' "$TMP/$name.hgrm")
    [[ -n "$total" ]] || { cat "$TMP/$name.hgrm"; fail "$name: no total count in knee hlog show"; }
    json_check "$TMP/$name.json" "tot['latency']['count'] == $total > 0" "$name: the hlog holds every latency of the run ($total)"
    "$KNEE" hlog stats "$TMP/$name.hlog" --json >"$TMP/$name.stats.json" || fail "$name: knee hlog stats"
    python3 - "$TMP/$name.stats.json" "$total" <<'PY' || fail "$name: hlog stats disagrees with hlog show"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["all"]["count"] == int(sys.argv[2]), (s["all"]["count"], sys.argv[2])
PY
}

# answers after 300 ms: the drain ends them all
interrupted_run drain "http://127.0.0.1:$FS_PORT/slow?ms=300" INT
json_check "$TMP/drain.json" 'acc["outcomes"]["cancelled"] == 0' "drain: nothing cancelled"
# half the requests are never answered: the drain waits for them until the second signal
interrupted_run cancel "http://127.0.0.1:$FS_PORT/sometimes-stall?pct=50&max_ms=10" INT TERM
json_check "$TMP/cancel.json" 'acc["outcomes"]["cancelled"] > 0' "cancel: the second signal cancelled requests in flight"
echo "ok"
