#!/usr/bin/env bash
# Coordinated omission, shown by knee itself: against a server that stalls 250 ms every 2 s,
# the open loop (latency from the planned send) must see the stall in its p99, while a closed
# loop with 8 connections hides it (its clients simply wait, and send less). Each result is
# labelled with the interval it measures.
# tier: exact timing
# The exact tier: 1 s runs, their accounting and labels. The timing tier: 6 s runs (three
# stalls), the stall in the open loop's tail and not in the closed loop's.
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server --period 2 --stall 0.25
URL="http://127.0.0.1:$FS_PORT/periodic"

# labels NAME: the intervals each loop measures, in the JSON and the summary
labels() {
    json_check "$TMP/open$1.json" 'd["latency_interval"].startswith("T5-T0")' "open loop measures from the plan"
    json_check "$TMP/closed$1.json" 'd["latency_interval"].startswith("T5-T1")' "closed loop measures from the send"
    grep -q 'planned send -> full response (T5 - T0)' "$TMP/open$1.txt" || fail "open label"
    grep -q 'send -> full response (T5 - T1).*closed loop' "$TMP/closed$1.txt" || fail "closed label"
    grep -q 'coordinated omission' "$TMP/closed$1.txt" || fail "closed-loop note"
}

if in_tier exact; then
    "$KNEE" run -R 200 -d 1s --json "$TMP/open-x.json" "$URL" >"$TMP/open-x.txt"
    "$KNEE" run -c 8 -d 1s --json "$TMP/closed-x.json" "$URL" >"$TMP/closed-x.txt"
    json_check "$TMP/open-x.json" 'identity(acc) and acc["planned"] == 200' "open loop accounting"
    json_check "$TMP/closed-x.json" 'identity(acc)' "closed loop accounting"
    labels -x
    in_tier timing || { echo "ok"; exit 0; }
fi

"$KNEE" run -R 200 -d 6s --json "$TMP/open.json" "$URL" >"$TMP/open.txt"
"$KNEE" run -c 8 -d 6s --json "$TMP/closed.json" "$URL" >"$TMP/closed.txt"
json_check "$TMP/open.json" 'identity(acc) and acc["planned"] == 1200' "open loop accounting"
json_check "$TMP/closed.json" 'identity(acc)' "closed loop accounting"
# 12.5% of planned sends fall into a stall; those in its first 50 ms wait >= 200 ms: 2.5% > 1%
json_check "$TMP/open.json" 'tot["latency"]["p99"] >= 200' "open-loop p99 reflects the stall"
json_check "$TMP/open.json" 'tot["latency"]["max"] >= 240' "open-loop max is the stall"
# the closed loop sees the stall only in the 8 requests in flight when it starts
OPEN_P99=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['all']['latency']['p99'])" "$TMP/open.json")
json_check "$TMP/closed.json" "tot['latency']['p99'] < 0.25 * $OPEN_P99" "closed-loop p99 far lower than open-loop p99"
labels ""
echo "open p99 $OPEN_P99 ms," \
    "closed p99 $(python3 -c "import json;print(json.load(open('$TMP/closed.json'))['all']['latency']['p99'])") ms"
echo "ok"
