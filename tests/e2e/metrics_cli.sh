#!/usr/bin/env bash
# The metrics flags from the command line. knee serve: usage errors (one line, exit 2), a
# non-loopback address served with a warning, a port in use (exit 1), --help, and
# --metrics-linger keeping the final counters up after --duration. knee run: the same usage
# errors before anything is sent, --dry-run showing the buckets with the thresholds added, a
# run whose lingering endpoint serves exactly its JSON counts, and a port in use.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

for args in "--metrics-linger 5s" "--metrics-listen 127.0.0.1" "--metrics-listen nohost:x" "--metrics-listen 127.0.0.1:70000" \
            "--metrics-listen :0 --metrics-linger soon"; do
  set +e; err=$("$KNEE" serve $args 2>&1 >/dev/null); rc=$?; set -e
  [[ $rc -eq 2 ]] || fail "'knee serve $args' exited $rc, want 2 ($err)"
  [[ $(printf '%s\n' "$err" | wc -l) -eq 1 && $err == "knee serve: --metrics-"* ]] || fail "message for '$args': $err"
  echo "ok: knee serve $args -> exit 2: $err"
done
"$KNEE" serve --help | grep -- '--metrics-listen ADDR:PORT' >/dev/null || fail "--help lacks --metrics-listen"
"$KNEE" serve --help | grep -- '--metrics-linger D' >/dev/null || fail "--help lacks --metrics-linger"
echo "ok: --help lists both flags"

# Not loopback: served, with one warning line on stderr. :PORT alone is loopback.
"$KNEE" serve --preset null --metrics-listen 0.0.0.0:0 --duration 1s >"$TMP/any.out" 2>"$TMP/any.err"
grep -q '^metrics on http://0.0.0.0:[0-9]*/metrics$' "$TMP/any.out" || fail "0.0.0.0: $(cat "$TMP/any.out")"
grep -q 'is not a loopback address' "$TMP/any.err" || fail "no warning for 0.0.0.0: $(cat "$TMP/any.err")"
"$KNEE" serve --preset null --metrics-listen :0 --duration 1s >"$TMP/lo.out" 2>"$TMP/lo.err"
grep -q '^metrics on http://127.0.0.1:' "$TMP/lo.out" && [[ ! -s "$TMP/lo.err" ]] || fail ":0 is not loopback: $(cat "$TMP/lo.out" "$TMP/lo.err")"
echo "ok: 0.0.0.0 is served with a warning; :PORT binds loopback without one"

# --duration 3s then --metrics-linger 3s: the endpoint answers with the final counters after
# the server stopped, and the process exits 0 by itself. (3 s: the three requests must reach
# the server before it stops, on a loaded machine too.)
start_knee_serve l --preset null --metrics-listen 127.0.0.1:0 --duration 3s --metrics-linger 3s
pid=$PID_l port=$PORT_l mport=$MPORT_l
for _ in 1 2 3; do curl -sf "http://127.0.0.1:$port/x" >/dev/null; done
for _ in $(seq 100); do grep -q '^metrics: final counters' "$TMP/serve-l.out" && break; sleep 0.1; done
grep -q '^metrics: final counters on http://127.0.0.1:[0-9]*/metrics for 3s$' "$TMP/serve-l.out" ||
    fail "linger line: $(cat "$TMP/serve-l.out")"
# (the scrape into a file, then grep: grep -q leaving a pipe early fails curl, and with it the
# pipeline, under pipefail)
curl -sf "http://127.0.0.1:$mport/metrics" >"$TMP/l.prom" || fail "no scrape while lingering"
grep -q "^knee_serve_ok_requests_total{server=\"127.0.0.1:$port\",preset=\"null\"} 3$" "$TMP/l.prom" ||
    fail "final counters not served while lingering: $(grep knee_serve_ok_requests_total "$TMP/l.prom")"
set +e; wait "$pid"; rc=$?; set -e
[[ $rc -eq 0 ]] || fail "exit $rc after the linger"
echo "ok: --metrics-linger serves the final counters after --duration, then exits 0"

# The metrics port already taken: exit 1 with the system's reason; the servers stop cleanly.
start_knee_serve t --preset null --metrics-listen 127.0.0.1:0 --duration 60s
taken=127.0.0.1:$MPORT_t
set +e; err=$("$KNEE" serve --preset null --metrics-listen "$taken" 2>&1 >"$TMP/t2.out"); rc=$?; set -e
[[ $rc -eq 1 && $err == *"--metrics-listen $taken"*"in use"* ]] || fail "taken port: rc=$rc $err"
grep -q '^stopped ' "$TMP/t2.out" || fail "servers not stopped after the endpoint failed: $(cat "$TMP/t2.out")"
echo "ok: a metrics port in use -> exit 1: $err"

# ---- knee run ------------------------------------------------------------------------------
for args in "--metrics-linger 5s" "--metrics-buckets 5ms" "--metrics-listen 127.0.0.1" \
            "--metrics-listen :0 --metrics-buckets 5ms,soon" "--metrics-listen :0 --metrics-buckets 0s"; do
  set +e; err=$("$KNEE" run -n 10 $args http://127.0.0.1:9/ 2>&1 >/dev/null); rc=$?; set -e
  [[ $rc -eq 2 ]] || fail "'knee run $args' exited $rc, want 2 ($err)"
  [[ $(printf '%s\n' "$err" | wc -l) -eq 1 && $err == "knee run: --metrics-"* ]] || fail "message for '$args': $err"
  echo "ok: knee run $args -> exit 2: $err"
done
for flag in '--metrics-listen ADDR:PORT' '--metrics-linger D' '--metrics-buckets LIST'; do
  "$KNEE" run --help | grep -- "$flag" >/dev/null || fail "knee run --help lacks $flag"
done
out=$("$KNEE" run --dry-run -R 100 -d 2s --threshold 'p99<7ms' --threshold 'error_rate<1%' \
      --metrics-listen 127.0.0.1:9464 --metrics-buckets 1ms,10ms,100ms http://127.0.0.1:9/)
grep -q -- '--metrics-listen 127.0.0.1:9464: Prometheus metrics, histogram buckets 1ms,7ms,10ms,100ms$' <<<"$out" ||
    fail "dry run: $out"
echo "ok: knee run --dry-run shows the buckets, the threshold's 7 ms added"

# A real run: its endpoint, lingering, serves exactly the JSON's counts; SIGINT ends the linger
# and the exit code is the run's.
start_knee_serve rs --preset null --duration 20s
sport=$PORT_rs
"$KNEE" run -R 500 -d 1s --warmup 200ms --metrics-listen :0 --metrics-linger 30s --json "$TMP/r.json" \
    "http://127.0.0.1:$sport/" >"$TMP/r.out" 2>"$TMP/r.err" &
rpid=$!; PIDS+=("$rpid")
for _ in $(seq 200); do grep -q '^metrics: final values on ' "$TMP/r.err" && break; sleep 0.1; done
grep -q '^metrics: final values on http://127.0.0.1:[0-9]*/metrics for 30s (Ctrl-C ends it)$' "$TMP/r.err" ||
    fail "knee run linger line: $(cat "$TMP/r.err")"
mport=$(sed -n 's|^metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$TMP/r.err")
[[ -s $TMP/r.json ]] || fail "the JSON is not written before the linger"
curl -sf "http://127.0.0.1:$mport/metrics" >"$TMP/r.prom"
python3 - "$TMP/r.json" "$TMP/r.prom" "$sport" <<'PY' || exit 1
import json, sys
d, text, t = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), "127.0.0.1:" + sys.argv[3]
want = ['knee_requests_total{target="%s",outcome="%s"} %d' % (t, o, n) for o, n in d["outcomes"].items()]
want += ['knee_planned_requests_total{target="%s"} %d' % (t, d["all"]["accounting"]["planned"]),
         'knee_latency_seconds_count{target="%s"} %d' % (t, d["all"]["latency"]["count"]),
         'knee_received_bytes_total{target="%s"} %d' % (t, d["all"]["bytes_in"]),
         "knee_run_finished 1", "knee_warmup 0",
         "knee_generator_limited %d" % (1 if d["generator_limited"] else 0)]
missing = [w for w in want if w + "\n" not in text]
if missing:
    sys.exit("FAIL: not in the lingering scrape: %s" % missing)
print("ok: knee run's lingering endpoint serves exactly its JSON counts (%d ok)" % d["outcomes"]["ok"])
PY
kill -INT "$rpid"
set +e; wait "$rpid"; rc=$?; set -e
[[ $rc -eq 0 ]] || fail "knee run exited $rc after SIGINT ended its linger"
echo "ok: SIGINT ends knee run's linger; exit 0"

# The port in use: exit 1 before anything is sent, the reason named.
set +e; err=$("$KNEE" run -n 5 -c 1 --metrics-listen "$taken" "http://127.0.0.1:$sport/" 2>&1 >/dev/null); rc=$?; set -e
[[ $rc -eq 1 && $err == *"--metrics-listen $taken"*"in use"* ]] || fail "knee run, taken port: rc=$rc $err"
echo "ok: knee run with the metrics port in use -> exit 1: $err"
