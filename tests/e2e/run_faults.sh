#!/usr/bin/env bash
# Every fault lands in the right outcome class, the accounting identities hold, the run goes
# on to its end: refused, reset, close mid-body, stall (timeout), garbage, huge headers,
# short and long Content-Length, HTTP errors, business rejections and a failed body check.
# A run in which not one request ended ok exits 3 and says FAILED (its verdict and warnings); one whose
# requests were ok exits 0.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
B="http://127.0.0.1:$FS_PORT"
DEAD=$(free_port) # nobody listens here: refused

# fault path | expected outcome | extra flags
check() {
    local name=$1 url=$2 outcome=$3
    shift 3
    # the timeout is the outcome under test only where the server stalls; elsewhere it is 5 s, so
    # that a loaded machine's slow answer is not taken for a timeout
    local timeout=5s
    [[ $outcome == timeout ]] && timeout=500ms
    for mode in closed open; do
        local flags=(-n 60 --timeout "$timeout")
        [[ $mode == closed ]] && flags+=(-c 3) || flags+=(-R 300)
        run_knee run "${flags[@]}" "$@" --json "$TMP/$name.$mode.json" "$url" >"$TMP/$name.$mode.txt" 2>&1
        local want=0
        [[ $outcome == ok ]] || want=3
        [[ $RC -eq $want ]] || { cat "$TMP/$name.$mode.txt"; fail "$name ($mode): exit $RC, not $want"; }
        if ((want == 3)); then
            grep -q '^  ! FAILED: not one request succeeded' "$TMP/$name.$mode.txt" || fail "$name ($mode): no FAILED line"
        fi
        json_check "$TMP/$name.$mode.json" "identity(acc) and d['accounting_ok']" "$name ($mode): accounting"
        json_check "$TMP/$name.$mode.json" "d['outcomes']['$outcome'] == 60" "$name ($mode): all 60 $outcome"
    done
}

check ok "$B/ok" ok
check refused "http://127.0.0.1:$DEAD/" transport
check reset "$B/reset" transport
check close_mid_body "$B/close-mid-body" transport
check cl_short "$B/cl-short" transport
check stall "$B/stall" timeout
check garbage "$B/garbage" invalid
check huge_headers "$B/huge-headers" invalid
check cl_long "$B/cl-long" ok
check close "$B/close" ok
check http_error "$B/status?code=500" http_error
check rejected "$B/status?code=503&body=QUEUE_TIMEOUT" rejected --reject 503:QUEUE_TIMEOUT
check not_rejected "$B/status?code=503&body=OTHER" http_error --reject 503:QUEUE_TIMEOUT
check body_check "$B/ok" invalid --expect-body NOPE
check body_ok "$B/ok" ok --expect-body ok

# bytes after a response are reported, and their connections closed (not reused out of step)
json_check "$TMP/cl_long.closed.json" 'tot["connections"]["unsolicited_bytes"] >= 1' "unsolicited bytes"
grep -q 'sent bytes nobody asked for' "$TMP/cl_long.closed.txt" || fail "unsolicited warning"
# timeouts are reported with their latency (>= the timeout), not dropped from the statistics
json_check "$TMP/stall.open.json" 'tot["latency_by_outcome"]["timeout"]["min"] >= 499' "timeout latency >= 500 ms"
json_check "$TMP/stall.open.json" 'tot["latency"]["count"] == 60' "timeouts are in the 'all' latency"
# refused connections are counted as failed connections
json_check "$TMP/refused.open.json" 'tot["connections"]["failed"] >= 60' "refused connects counted"
# Server-Timing is summarised per name
"$KNEE" run -c 2 -n 50 --json "$TMP/st.json" "$B/timing" >"$TMP/st.txt"
json_check "$TMP/st.json" 'tot["server_timing"]["queue"]["count"] == 50 and abs(tot["server_timing"]["work"]["mean"] - 2.25) < 0.01' "Server-Timing"
grep -q 'server timing' "$TMP/st.txt" || fail "server timing table"
echo "ok"
