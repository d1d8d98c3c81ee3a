#!/usr/bin/env bash
# `transport` broken down by cause (refused, reset, closed before the response, closed mid-
# response, stale keep-alive connection), in the JSON (transport_causes, adding up to
# outcomes.transport) and on the summary's line under the outcomes; a request whose reused
# connection went stale is sent once more and counted (by default for idempotent methods,
# --retry-stale for every method, --no-retry-stale never), the accounting identities still
# hold; and a server killed in the middle of a run: every planned request is
# accounted for, the run exits 0 and says what happened.
# tier: exact timing
# The timing tier: the race against a server that closes idle connections (what fails there is
# a stale connection only when the client's request and the server's close do not cross on the
# wire, which a loaded machine lets them do); the exact tier the rest.
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
B="http://127.0.0.1:$FS_PORT"
DEAD=$(free_port) # nobody listens here: refused

causes_sum='sum(d["transport_causes"].values()) == d["outcomes"]["transport"] and sum(tot["accounting"]["transport_causes"].values()) == acc["outcomes"]["transport"]'

# The exit code: 0 for a run with an ok request; a run without one (every request failed)
# may end in the documented failed-run code, never in 2 (bad input) or a signal.
run_rc_ok() { # JSON
    [[ $RC -eq 0 ]] && return 0
    [[ -s $1 && $RC -ne 2 && $RC -lt 128 ]] || return 1
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["outcomes"]["ok"] != 0)' "$1"
}

if in_tier timing; then
# A server that closes keep-alive connections idle for 50 ms while the client thinks 50 ms
# between requests: a race. Whatever fails is stale (nothing else goes wrong here) with
# --no-retry-stale, and by default (GET is retried) nothing fails.
start_idle_server() {
    python3 "$KNEE_SRC/tests/e2e/fault_server.py" --idle-close 50 >"$TMP/idle.out" 2>"$TMP/idle.err" &
    PIDS+=($!)
    local i
    for i in $(seq 100); do
        IDLE_PORT=$(awk '/^PORT /{print $2}' "$TMP/idle.out" 2>/dev/null)
        [[ -n "$IDLE_PORT" ]] && return 0
        sleep 0.1
    done
    fail "idle-close server did not start"
}
start_idle_server
run_knee run -c 2 --think 50ms -d 2s --no-retry-stale --json "$TMP/idle.json" "http://127.0.0.1:$IDLE_PORT/ok" >"$TMP/idle.txt" 2>&1
json_check "$TMP/idle.json" "identity(acc) and d['accounting_ok'] and $causes_sum" "idle-close: accounting"
json_check "$TMP/idle.json" 'd["transport_causes"]["stale"] == d["outcomes"]["transport"] and d["outcomes"]["ok"] + d["outcomes"]["transport"] == acc["sent"]' \
    "idle-close: every failure is a stale connection"
run_knee run -c 2 --think 50ms -d 2s --json "$TMP/idle_retry.json" "http://127.0.0.1:$IDLE_PORT/ok" \
    >"$TMP/idle_retry.txt" 2>&1
[[ $RC -eq 0 ]] || { cat "$TMP/idle_retry.txt"; fail "idle-close by default: exit $RC"; }
json_check "$TMP/idle_retry.json" 'identity(acc) and acc["outcomes"]["ok"] == acc["sent"] > 0' \
    "idle-close by default: every request ok"
in_tier exact || { echo "ok"; exit 0; }
fi

# fault path | the one cause every request must have
check() {
    local name=$1 url=$2 cause=$3
    for mode in closed open; do
        local flags=(-n 60 --timeout 2s)
        [[ $mode == closed ]] && flags+=(-c 3) || flags+=(-R 300)
        run_knee run "${flags[@]}" --json "$TMP/$name.$mode.json" "$url" >"$TMP/$name.$mode.txt" 2>&1
        run_rc_ok "$TMP/$name.$mode.json" || { cat "$TMP/$name.$mode.txt"; fail "$name ($mode): exit $RC"; }
        json_check "$TMP/$name.$mode.json" "identity(acc) and d['accounting_ok'] and $causes_sum" "$name ($mode): accounting"
        json_check "$TMP/$name.$mode.json" "d['outcomes']['transport'] == 60 and d['transport_causes']['$cause'] == 60" \
            "$name ($mode): all 60 transport, cause $cause"
        grep -q "^  transport 60: ${cause//_/ } 60" "$TMP/$name.$mode.txt" ||
            { cat "$TMP/$name.$mode.txt"; fail "$name ($mode): no cause line under the outcomes"; }
    done
}
check refused "http://127.0.0.1:$DEAD/" refused
check reset "$B/reset" reset
check hangup "$B/hangup" closed_before_response
check close_mid_body "$B/close-mid-body" closed_mid_response
check cl_short "$B/cl-short" closed_mid_response

# Stale keep-alive connections. /one-shot serves one request per connection without saying so
# (no Connection: close): every reuse of a connection goes stale, deterministically. With
# --no-retry-stale those requests fail; by default a GET is sent again (and a POST is not,
# unless --retry-stale).
for mode in closed open; do
    flags=(-n 200 --timeout 2s)
    [[ $mode == closed ]] && flags+=(-c 4) || flags+=(-R 400)
    run_knee run "${flags[@]}" --no-retry-stale --json "$TMP/stale.$mode.json" "$B/one-shot" >"$TMP/stale.$mode.txt" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/stale.$mode.txt"; fail "stale ($mode): exit $RC"; }
    json_check "$TMP/stale.$mode.json" "identity(acc) and d['accounting_ok'] and $causes_sum" "stale ($mode): accounting"
    json_check "$TMP/stale.$mode.json" 'd["outcomes"]["transport"] > 0 and d["transport_causes"]["stale"] == d["outcomes"]["transport"] and d["retries"] == 0' \
        "stale ($mode): the failures are stale connections, none retried"
    grep -q -- '--retry-stale' "$TMP/stale.$mode.txt" || fail "stale ($mode): the summary does not point to --retry-stale"

    run_knee run "${flags[@]}" --json "$TMP/retry.$mode.json" --out "$TMP/retry.$mode.csv" "$B/one-shot" \
        >"$TMP/retry.$mode.txt" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/retry.$mode.txt"; fail "retry ($mode): exit $RC"; }
    # planned once, sent once, one outcome each: the retries are counted beside them
    json_check "$TMP/retry.$mode.json" "identity(acc) and d['accounting_ok'] and $causes_sum" "retry ($mode): accounting"
    json_check "$TMP/retry.$mode.json" 'acc["planned"] == acc["sent"] == acc["outcomes"]["ok"] == 200 and 0 < d["retries"] <= acc["sent"] and acc["retries"] == d["retries"] and d["config"]["retry_stale"] and not d["config"]["retry_stale_all"]' \
        "retry ($mode): every request ok, retries counted"
    grep -q '^  retried [0-9,]* requests\? once on a new connection' "$TMP/retry.$mode.txt" ||
        { cat "$TMP/retry.$mode.txt"; fail "retry ($mode): the summary does not report the retries"; }
    # one row per planned request in the log, none for a retry
    [[ $(($(wc -l <"$TMP/retry.$mode.csv") - 1)) -eq 200 ]] || fail "retry ($mode): the request log has a row per request"

    # POST is not idempotent: not sent again by default (the summary says how), but with --retry-stale
    run_knee run "${flags[@]}" -m POST -b x --json "$TMP/post.$mode.json" "$B/one-shot" >"$TMP/post.$mode.txt" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/post.$mode.txt"; fail "post ($mode): exit $RC"; }
    json_check "$TMP/post.$mode.json" 'd["outcomes"]["transport"] > 0 and d["transport_causes"]["stale"] == d["outcomes"]["transport"] and d["retries"] == 0' \
        "post ($mode): stale POSTs fail, none sent again by default"
    grep -q 'POST, PATCH and other methods that are not idempotent are sent again only with --retry-stale' \
        "$TMP/post.$mode.txt" || { cat "$TMP/post.$mode.txt"; fail "post ($mode): the summary does not say why"; }
    run_knee run "${flags[@]}" -m POST -b x --retry-stale --json "$TMP/postr.$mode.json" "$B/one-shot" \
        >"$TMP/postr.$mode.txt" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/postr.$mode.txt"; fail "post --retry-stale ($mode): exit $RC"; }
    json_check "$TMP/postr.$mode.json" 'acc["outcomes"]["ok"] == 200 and d["retries"] > 0 and d["config"]["retry_stale_all"]' \
        "post --retry-stale ($mode): every request ok, retries counted"
done
# the retried requests' latency runs from their first send: it includes the failed attempt
json_check "$TMP/retry.closed.json" 'tot["latency"]["count"] == 200' "retry: one latency per request"

# The server is killed (SIGKILL) in the middle of an open-loop run: requests in flight lose
# their connection, later ones are refused. Every planned request is accounted for.
python3 "$KNEE_SRC/tests/e2e/fault_server.py" --log >"$TMP/victim.out" 2>/dev/null &
VICTIM=$!
PIDS+=($VICTIM)
for i in $(seq 100); do grep -q '^PORT ' "$TMP/victim.out" 2>/dev/null && break; sleep 0.1; done
VPORT=$(awk '/^PORT /{print $2}' "$TMP/victim.out")
"$KNEE" run -R 100 -d 4s --timeout 2s --json "$TMP/killed.json" "http://127.0.0.1:$VPORT/slow?ms=100" \
    >"$TMP/killed.txt" 2>&1 &
KP=$!
PIDS+=($KP)
# kill the server once it has answered 20 requests (its log says so), well before the run ends
for i in $(seq 200); do
    [[ $(grep -c '^served' "$TMP/victim.out") -ge 20 ]] && break
    sleep 0.05
done
[[ $(grep -c '^served' "$TMP/victim.out") -ge 20 ]] || fail "killed server: the server never answered"
{ kill -KILL "$VICTIM"; wait "$VICTIM"; } 2>/dev/null || true
set +e
wait "$KP"
RC=$?
set -e
[[ $RC -eq 0 ]] || { cat "$TMP/killed.txt"; fail "killed server: exit $RC"; }
json_check "$TMP/killed.json" "identity(acc) and d['accounting_ok'] and $causes_sum" "killed server: accounting"
json_check "$TMP/killed.json" 'acc["planned"] == 400 and acc["outcomes"]["ok"] > 0 and d["transport_causes"]["refused"] > 0 and acc["outcomes"]["ok"] + acc["outcomes"]["transport"] == 400' \
    "killed server: 400 planned, ok before the kill, refused after"
grep -q 'connection attempts failed' "$TMP/killed.txt" || { cat "$TMP/killed.txt"; fail "killed server: no warning"; }
grep -q '^  transport [0-9,]*: .*refused' "$TMP/killed.txt" || fail "killed server: no cause line"
echo "ok"
