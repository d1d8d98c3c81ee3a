#!/usr/bin/env bash
# Deferred reads (docs/REFERENCE.md "Sending on time"): in the open loop over cleartext
# HTTP/1.1 a load thread reads responses at its next send's wake and times them by the
# kernel's receive timestamps. Against a server that works a known 3 ms per request (knee
# serve's queue preset, /work?ms=3): every request accounted; no response timed before the
# server could have sent it (service >= 3 ms less the send's own system call, whatever the
# thread's wake-ups did); the JSON and the precision line say the reads were deferred, with and
# without --timer-slack, and say nothing of it with --prompt-reads, --stream sse or in a closed
# loop; --prompt-reads in a closed loop is exit 2.
# tier: exact timing
# The timing tier: the median service time is the server's 3 ms plus little (the kernel's
# receive time, not the thread's late read), as with prompt reads.
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve q --preset queue --pool 64 --duration 120s
URL="http://127.0.0.1:$PORT_q/work?ms=3"

# run NAME ARGS...: 400 requests at 400/s, one thread, 20 connections at most
run() {
    local name=$1
    shift
    "$KNEE" run -R 400 -d 1s -t 1 -c 20 --out "$TMP/$name.csv" --json "$TMP/$name.json" "$@" "$URL" \
        >"$TMP/$name.txt" 2>&1 || { cat "$TMP/$name.txt"; fail "knee run $*"; }
    json_check "$TMP/$name.json" 'identity(acc) and acc["planned"] == 400 and d["outcomes"]["ok"] == 400' \
        "$name: 400 planned, sent and ok"
}

# rows of a run's CSV: no response before the server's 3 ms (less 0.05 ms for the send itself),
# first byte no later than the whole response, latency from the planned send
check_rows() {
    python3 - "$1" "$2" <<'PY' || fail "$2: the per-request times"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 400, len(rows)
for r in rows:
    s, t, l, g = (float(r[k]) for k in ("service_ms", "ttfb_ms", "latency_ms", "lag_ms"))
    assert s >= 2.95, (sys.argv[2], "service below the server's 3 ms", r)
    assert 0 < t <= s, (sys.argv[2], "ttfb after the response", r)
    assert g >= 0 and abs(l - (g + s)) < 1e-3, (sys.argv[2], "latency != lag + service", r)
PY
}

if in_tier exact; then
    run deferred
    json_check "$TMP/deferred.json" 'd["config"]["reads_deferred"] is True' "deferred: the JSON says so"
    grep -Eq '^  precision: lag p99 .* per request sent; kernel-timed reads$' "$TMP/deferred.txt" ||
        { cat "$TMP/deferred.txt"; fail "deferred: the precision line says so"; }
    check_rows "$TMP/deferred.csv" deferred

    run slack --timer-slack 2ms
    json_check "$TMP/slack.json" 'd["config"]["reads_deferred"] is True' "deferred with a slack too"
    check_rows "$TMP/slack.csv" slack

    run prompt --prompt-reads
    json_check "$TMP/prompt.json" 'd["config"]["reads_deferred"] is False' "--prompt-reads: not deferred"
    ! grep -q 'kernel-timed' "$TMP/prompt.txt" || fail "--prompt-reads: the summary says nothing of it"
    check_rows "$TMP/prompt.csv" prompt

    # events are timed by their own arrival: --stream sse reads promptly
    run sse --stream sse
    json_check "$TMP/sse.json" 'd["config"]["reads_deferred"] is False' "--stream sse: not deferred"

    # a closed loop reads each response as it arrives (its next request waits for it)
    "$KNEE" run -c 2 -n 50 --json "$TMP/closed.json" "$URL" >"$TMP/closed.txt" 2>&1 ||
        { cat "$TMP/closed.txt"; fail "closed loop"; }
    json_check "$TMP/closed.json" 'd["config"]["reads_deferred"] is False' "closed loop: not deferred"
    run_knee run -c 2 -n 10 --prompt-reads "$URL" >"$TMP/out" 2>"$TMP/err"
    [[ $RC -eq 2 && $(wc -l <"$TMP/err") -eq 1 ]] && grep -q -- '--prompt-reads applies to the open loop' "$TMP/err" ||
        { cat "$TMP/err"; fail "--prompt-reads in a closed loop: exit $RC"; }
fi

if in_tier timing; then
    [[ -s $TMP/deferred.csv ]] || run deferred --timer-slack 2ms
    [[ -s $TMP/prompt.csv ]] || run prompt --prompt-reads
    python3 - "$TMP/deferred.csv" "$TMP/prompt.csv" <<'PY' || fail "the median service time"
import csv, sys
def p50(path):
    v = sorted(float(r["service_ms"]) for r in csv.DictReader(open(path)))
    return v[len(v) // 2]
d, p = p50(sys.argv[1]), p50(sys.argv[2])
# the server's 3 ms plus its own timer and the loopback: not the 2-4 ms a late read would add
assert 3 <= d < 3 + 1.5, ("deferred p50", d)
assert d <= p + 0.5, ("deferred p50 above prompt's", d, p)
PY
fi
echo "ok"
