#!/usr/bin/env bash
# Streamed responses (knee run --stream): against knee serve --preset stream (HTTP/1.1 chunks,
# HTTP/2 DATA frames) and against an independent Python SSE server (sse_server.py): the events
# per response exact, every gap recorded, the modes (auto, sse, chunks, off), a stream that ends
# mid-event (invalid), one that never ends (a timeout, its events still counted), a non-stream
# response with --stream sse (said), thresholds on first_event and event_gap, bad input.
# tier: exact timing
# The timing tier: first_event >= first_ms and the gaps' median about gap_ms (both servers).
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_knee_serve s --preset stream --h2 --seed 3
U="http://127.0.0.1:$PORT_s/?events=6&gap_ms=20&first_ms=40&stall_p=0"
python3 "$KNEE_SRC/tests/e2e/sse_server.py" >"$TMP/py.out" 2>"$TMP/py.err" &
PIDS+=($!)
for _ in $(seq 100); do grep -q '^PORT ' "$TMP/py.out" 2>/dev/null && break; sleep 0.1; done
PY_PORT=$(awk '/^PORT /{print $2}' "$TMP/py.out")
[[ -n $PY_PORT ]] || fail "the SSE server did not start"
PYU="http://127.0.0.1:$PY_PORT/?events=5&gap_ms=30&first_ms=50"

stream_ok() { # FILE EVENTS RESPONSES: the exact counts of a run of RESPONSES ok streams of EVENTS events
    json_check "$1" "d['outcomes']['ok'] == $3 and tot['stream']['responses'] == $3" "$1: $3 ok, timed"
    json_check "$1" "tot['stream']['events'] == $2 * $3 and tot['stream']['events_per_response']['min'] == $2 and tot['stream']['events_per_response']['max'] == $2" "$1: $2 events each"
    json_check "$1" "tot['stream']['first_event']['count'] == $3 and tot['stream']['event_gap']['count'] == ($2 - 1) * $3" "$1: every gap recorded"
    json_check "$1" "d['targets'][0]['stream']['events'] == tot['stream']['events']" "$1: per target"
}

if in_tier timing; then
    "$KNEE" run -R 10 -d 2s --json "$TMP/t1.json" "$U" >/dev/null
    json_check "$TMP/t1.json" "tot['stream']['first_event']['min'] >= 40" "first event >= first_ms (knee serve)"
    json_check "$TMP/t1.json" "18 <= tot['stream']['event_gap']['p50'] <= 30" "gap median ~20 ms (knee serve)"
    "$KNEE" run -R 5 -d 2s --json "$TMP/t2.json" "$PYU" >/dev/null
    json_check "$TMP/t2.json" "tot['stream']['first_event']['min'] >= 50" "first event >= first_ms (python)"
    json_check "$TMP/t2.json" "28 <= tot['stream']['event_gap']['p50'] <= 45" "gap median ~30 ms (python)"
    in_tier exact || { echo ok; exit 0; }
fi

# knee serve over HTTP/1.1 and HTTP/2, SSE by Content-Type and chunks: 6 events each
"$KNEE" run -R 20 -d 1s --json "$TMP/h1.json" "$U" >"$TMP/h1.txt"
stream_ok "$TMP/h1.json" 6 20
grep -q '^  first event ' "$TMP/h1.txt" || fail "summary: a first event row"
grep -q '^  event gap ' "$TMP/h1.txt" || fail "summary: an event gap row"
# the per-request CSV and binary log carry the first event and the event count
"$KNEE" run -R 20 -d 1s --out "$TMP/s.csv" "$U" >/dev/null
python3 - "$TMP/s.csv" <<'PY' || fail "CSV first_event_ms and events"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 20 and all(r["events"] == "6" and float(r["first_event_ms"]) > 0 for r in rows), rows[:2]
PY
"$KNEE" run -R 20 -d 1s --out "$TMP/s.bin" "$U" >/dev/null
"$KNEE" stats --column first_event_ms "$TMP/s.bin" >"$TMP/stats.txt" || fail "knee stats reads first_event_ms from the log"
"$KNEE" run --h2c -R 20 -d 1s --json "$TMP/h2.json" "$U" >/dev/null
stream_ok "$TMP/h2.json" 6 20
json_check "$TMP/h2.json" "tot['transport']['protocols']['h2'] > 0 if 'transport' in tot and 'protocols' in tot['transport'] else True" "h2 used"
"$KNEE" run --stream chunks -R 20 -d 1s --json "$TMP/ch.json" "$U" >/dev/null
stream_ok "$TMP/ch.json" 6 20
"$KNEE" run --h2c --stream chunks -R 20 -d 1s --json "$TMP/ch2.json" "$U" >/dev/null
stream_ok "$TMP/ch2.json" 6 20
"$KNEE" run --stream off -R 20 -d 1s --json "$TMP/off.json" "$U" >/dev/null
json_check "$TMP/off.json" "'stream' not in tot and d['outcomes']['ok'] == 20" "--stream off: no stream object"
"$KNEE" run -c 2 -n 10 --json "$TMP/ev0.json" "http://127.0.0.1:$PORT_s/?events=0&first_ms=1" >/dev/null
json_check "$TMP/ev0.json" "tot['stream']['responses'] == 10 and tot['stream']['events'] == 0 and tot['stream']['first_event']['count'] == 0" "events=0: timed, no event"

# the Python server: comments between events are no events; exact counts
"$KNEE" run -R 5 -d 2s --json "$TMP/py.json" "$PYU" >/dev/null
stream_ok "$TMP/py.json" 5 10
"$KNEE" run --stream chunks -R 5 -d 1s --json "$TMP/pych.json" "$PYU" >/dev/null
stream_ok "$TMP/pych.json" 5 5
# a stream that ends inside an event: invalid, said
"$KNEE" run -n 3 -c 1 --json "$TMP/cut.json" "http://127.0.0.1:$PY_PORT/cut" >"$TMP/cut.txt" || true
json_check "$TMP/cut.json" "d['outcomes']['invalid'] == 3 and tot['stream']['partial'] == 3 and tot['stream']['events'] == 6" "mid-event end: invalid"
# a stream that never ends: a timeout, its first event counted
run_knee run -n 2 -c 2 --timeout 500ms --json "$TMP/never.json" "http://127.0.0.1:$PY_PORT/never" >/dev/null
json_check "$TMP/never.json" "d['outcomes']['timeout'] == 2 and tot['stream']['events'] == 2 and tot['stream']['first_event']['count'] == 2" "never-ending stream: timeout, events counted"
# not a stream: auto leaves it, sse scans it and says so
"$KNEE" run -n 2 -c 1 --json "$TMP/plain.json" "http://127.0.0.1:$PY_PORT/plain" >/dev/null
json_check "$TMP/plain.json" "'stream' not in tot" "auto: text/plain is not timed"
"$KNEE" run --stream sse -n 2 -c 1 --json "$TMP/plsse.json" "http://127.0.0.1:$PY_PORT/plain" >"$TMP/plsse.txt"
json_check "$TMP/plsse.json" "tot['stream']['not_sse'] == 2 and d['outcomes']['ok'] == 2" "--stream sse on text/plain: counted"
grep -q 'were not text/event-stream' "$TMP/plsse.txt" || fail "--stream sse on text/plain: said"

# thresholds
run_knee run -R 20 -d 1s --threshold 'first_event.p99<10s' --threshold 'event_gap.max<1ms' --json "$TMP/thr.json" "$U" >/dev/null
[[ $RC -eq 99 ]] || fail "a failed event_gap threshold exits 99 (got $RC)"
json_check "$TMP/thr.json" "[t['pass'] for t in d['thresholds']] == [True, False]" "first_event passes, event_gap fails"
run_knee run -R 20 -d 1s --threshold 'first_event.count>0' --json "$TMP/thr0.json" "http://127.0.0.1:$PORT_s/health"
[[ $RC -eq 99 ]] || fail "first_event without streamed responses fails (got $RC)"

# bad input
run_knee run --stream bogus -n 1 "$U" 2>"$TMP/bad.err" >/dev/null
[[ $RC -eq 2 ]] || fail "--stream bogus: exit 2 (got $RC)"
grep -q -- "--stream" "$TMP/bad.err" || fail "--stream bogus: names the flag"
echo ok
