#!/usr/bin/env bash
# --io uring against --io epoll: the same closed-loop plans give the same request counts, the
# same outcome classes and transport causes, the accounting identities hold, timeouts, refused
# connects, servers that close (Connection: close, an idle timeout, --requests-per-connection,
# mid-response), hostile servers, Ctrl-C, --out rows knee stats reads, --hlog, and the JSON and
# the summary name the engine that ran. Exits 77 (skip) where this process may not set up an
# io_uring (a container's seccomp, kernel.io_uring_disabled).
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
B="http://127.0.0.1:$FS_PORT"
DEAD=$(free_port) # nobody listens here: refused

run_knee run --io uring -c 1 -n 1 "$B/ok" >"$TMP/probe.txt" 2>&1
if grep -q 'cannot set up an io_uring' "$TMP/probe.txt"; then
    echo "SKIP: $(cat "$TMP/probe.txt")"
    exit 77
fi
[[ $RC -eq 0 ]] || { cat "$TMP/probe.txt"; fail "a one-request run with --io uring: exit $RC"; }
grep -q '1 thread on io_uring' "$TMP/probe.txt" || { cat "$TMP/probe.txt"; fail "the summary names io_uring"; }

# same NAME URL OUTCOME N FLAGS...: both engines, N requests, all of them OUTCOME, the same
# outcomes and transport causes, the JSON names the engine
same() {
    local name=$1 url=$2 outcome=$3 n=$4
    shift 4
    # the timeout is the outcome under test only where the server stalls; elsewhere it is 5 s, so
    # that a loaded machine's slow answer is not taken for a timeout
    local timeout=5s
    [[ $outcome == timeout ]] && timeout=500ms
    for io in epoll uring; do
        local f="$TMP/$name.$io"
        run_knee run -c 3 -n "$n" --timeout "$timeout" --io "$io" "$@" --json "$f.json" "$url" >"$f.txt" 2>&1
        local want=0
        [[ $outcome == ok ]] || want=3
        [[ $RC -eq $want ]] || { cat "$f.txt"; fail "$name ($io): exit $RC, not $want"; }
        json_check "$f.json" "identity(acc) and d['accounting_ok']" "$name ($io): accounting"
        json_check "$f.json" "d['outcomes']['$outcome'] == $n" "$name ($io): all $n $outcome"
        json_check "$f.json" "d['config']['io'] == '$io' and d['config']['io_engine'] == '$io'" "$name ($io): engine"
    done
    python3 - "$TMP/$name.epoll.json" "$TMP/$name.uring.json" "$name" <<'PY' || exit 1
import json, sys
e, u = (json.load(open(p)) for p in sys.argv[1:3])
for key in ("outcomes", "transport_causes"):
    if e[key] != u[key]:
        sys.exit("FAIL: %s: %s differ: epoll %s, uring %s" % (sys.argv[3], key, e[key], u[key]))
PY
}

same ok "$B/ok" ok 60
same refused "http://127.0.0.1:$DEAD/" transport 30
same reset "$B/reset" transport 30
same close_mid_body "$B/close-mid-body" transport 30
same cl_short "$B/cl-short" transport 30
same hangup "$B/hangup" transport 30
same stall "$B/stall" timeout 6
same endless_chunked "$B/endless-chunked" timeout 3
same garbage "$B/garbage" invalid 30
same huge_headers "$B/huge-headers" invalid 30
same cl_long "$B/cl-long" ok 30
same close "$B/close" ok 60
same unsolicited "$B/unsolicited" ok 30
same http_error "$B/status?code=500" http_error 30
same body_check "$B/ok" invalid 30 --expect-body NOPE
same rpc "$B/ok" ok 200 --requests-per-connection 7
same no_keepalive "$B/ok" ok 60 --no-keepalive
same think "$B/ok" ok 12 --think 10ms

# the causes themselves (not only that both engines agree)
json_check "$TMP/refused.uring.json" "d['transport_causes']['refused'] == 30" "refused"
json_check "$TMP/close_mid_body.uring.json" "d['transport_causes']['closed_mid_response'] == 30" "closed mid-response"
json_check "$TMP/stall.uring.json" "tot['latency_by_outcome']['timeout']['min'] >= 499" "timeouts run their --timeout"
json_check "$TMP/cl_long.uring.json" "tot['connections']['unsolicited_bytes'] >= 1" "unsolicited bytes"
json_check "$TMP/close.uring.json" "tot['connections']['opened'] >= 60" "Connection: close: a connection per request"
json_check "$TMP/no_keepalive.uring.json" "tot['connections']['opened'] == 60" "no keep-alive: a connection per request"
json_check "$TMP/rpc.uring.json" "29 <= tot['connections']['opened'] <= 35" "--requests-per-connection 7"
for io in epoll uring; do
    json_check "$TMP/ok.$io.json" "tot['connect']['count'] == 3" "$io: connect times of the first requests"
done

# a server that closes idle connections (knee serve --idle-timeout) between a client's requests
start_knee_serve idle -p null --idle-timeout 50ms
SP=$PORT_idle
for io in epoll uring; do
    "$KNEE" run -c 2 -n 6 --think 150ms --io "$io" --json "$TMP/idle.$io.json" "http://127.0.0.1:$SP/" >/dev/null 2>&1 ||
        fail "idle ($io): exit $?"
    json_check "$TMP/idle.$io.json" "identity(acc) and d['outcomes']['ok'] == 6" "idle ($io): all ok"
    json_check "$TMP/idle.$io.json" "tot['connections']['closed_by_server'] >= 4 and tot['connections']['opened'] == 6" \
        "idle ($io): the server's closes seen, a new connection each time"
done

# --out (CSV and binary) rows that knee stats reads, --hlog, against knee serve
for io in epoll uring; do
    "$KNEE" run -c 4 -n 400 --io "$io" --out "$TMP/o.$io.csv" --hlog "$TMP/o.$io.hlog" --json "$TMP/o.$io.json" \
        "http://127.0.0.1:$SP/" >/dev/null 2>&1 || fail "out ($io): exit $?"
    "$KNEE" run -c 4 -n 400 --io "$io" --out "$TMP/o.$io.bin" "http://127.0.0.1:$SP/" >/dev/null 2>&1 ||
        fail "out bin ($io): exit $?"
    [[ $(($(wc -l <"$TMP/o.$io.csv") - 1)) -eq 400 ]] || fail "out ($io): 400 CSV rows"
    for f in "$TMP/o.$io.csv" "$TMP/o.$io.bin"; do
        "$KNEE" stats "$f" >"$TMP/stats.txt" 2>&1 || { cat "$TMP/stats.txt"; fail "knee stats $f: exit $?"; }
        grep -q '400' "$TMP/stats.txt" || { cat "$TMP/stats.txt"; fail "knee stats $f: 400 requests"; }
    done
    [[ -s "$TMP/o.$io.hlog" ]] || fail "hlog ($io) is empty"
done

# Ctrl-C: planning stops, what is in flight finishes, nothing is lost (run_common.bash)
sigint_drains int 5 run -c 5 -d 60s --io uring "$B/slow?ms=300"

# nginx, a real peer: both engines, every request ok
start_nginx
for io in epoll uring; do
    "$KNEE" run -c 20 -d 1 --io "$io" --json "$TMP/ngx.$io.json" "http://127.0.0.1:$NGX_PORT/" >"$TMP/ngx.$io.txt" 2>&1 ||
        { cat "$TMP/ngx.$io.txt"; fail "nginx ($io): exit $?"; }
    json_check "$TMP/ngx.$io.json" "identity(acc) and d['accounting_ok'] and acc['outcomes']['ok'] == acc['sent'] > 100" \
        "nginx ($io): every request ok"
done

# where io_uring does not apply, an explicit --io uring is one line and exit 2; auto runs epoll
expect_2() {
    local what=$1
    shift
    run_knee run --io uring "$@" >"$TMP/e.txt" 2>&1
    [[ $RC -eq 2 ]] || { cat "$TMP/e.txt"; fail "$what: exit $RC, not 2"; }
    [[ $(wc -l <"$TMP/e.txt") -eq 1 ]] && grep -q -- '--io uring' "$TMP/e.txt" || { cat "$TMP/e.txt"; fail "$what: one line naming --io uring"; }
}
expect_2 "open loop" -R 100 -n 5 "$B/ok"
expect_2 "https" -n 5 "https://127.0.0.1:$FS_PORT/"
expect_2 "h2c" --h2c -n 5 "$B/ok"
run_knee run --io nope -n 1 "$B/ok" >"$TMP/e.txt" 2>&1
[[ $RC -eq 2 ]] && grep -q -- "--io 'nope'" "$TMP/e.txt" || { cat "$TMP/e.txt"; fail "--io nope: exit $RC"; }
"$KNEE" run -R 50 -n 5 --json "$TMP/auto.json" "$B/ok" >/dev/null 2>&1 || fail "auto, open loop: exit $?"
json_check "$TMP/auto.json" "d['config']['io'] == 'auto' and d['config']['io_engine'] == 'epoll'" "auto, open loop: epoll"
echo "ok"
