#!/usr/bin/env bash
# knee serve's metrics flags from the command line: usage errors (one line, exit 2), a
# non-loopback address served with a warning, a port in use (exit 1), --help, and
# --metrics-linger keeping the final counters up after --duration.
set -euo pipefail
KNEE=${KNEE:-build/knee}
TMP=$(mktemp -d /tmp/knee-metrics-cli.XXXXXX)
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do [[ -n "$p" ]] && { kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; }; done
    rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

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

# --duration 1s then --metrics-linger 3s: the endpoint answers with the final counters after
# the server stopped, and the process exits 0 by itself.
"$KNEE" serve --preset null --metrics-listen 127.0.0.1:0 --duration 1s --metrics-linger 3s >"$TMP/l.out" 2>&1 &
pid=$!; PIDS+=("$pid")
for _ in $(seq 100); do grep -q '^metrics on ' "$TMP/l.out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\) .*/\1/p' "$TMP/l.out")
mport=$(sed -n 's|^metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$TMP/l.out")
for _ in 1 2 3; do curl -sf "http://127.0.0.1:$port/x" >/dev/null; done
for _ in $(seq 100); do grep -q '^metrics: final counters' "$TMP/l.out" && break; sleep 0.1; done
grep -q '^metrics: final counters on http://127.0.0.1:[0-9]*/metrics for 3s$' "$TMP/l.out" || fail "linger line: $(cat "$TMP/l.out")"
curl -sf "http://127.0.0.1:$mport/metrics" | grep -q "^knee_serve_ok_requests_total{server=\"127.0.0.1:$port\",preset=\"null\"} 3$" ||
    fail "final counters not served while lingering"
set +e; wait "$pid"; rc=$?; set -e
[[ $rc -eq 0 ]] || fail "exit $rc after the linger"
echo "ok: --metrics-linger serves the final counters after --duration, then exits 0"

# The metrics port already taken: exit 1 with the system's reason; the servers stop cleanly.
"$KNEE" serve --preset null --metrics-listen 127.0.0.1:0 --duration 5s >"$TMP/t.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q '^metrics on ' "$TMP/t.out" && break; sleep 0.1; done
taken=$(sed -n 's|^metrics on http://\(127.0.0.1:[0-9]*\)/metrics$|\1|p' "$TMP/t.out")
set +e; err=$("$KNEE" serve --preset null --metrics-listen "$taken" 2>&1 >"$TMP/t2.out"); rc=$?; set -e
[[ $rc -eq 1 && $err == *"--metrics-listen $taken"*"in use"* ]] || fail "taken port: rc=$rc $err"
grep -q '^stopped ' "$TMP/t2.out" || fail "servers not stopped after the endpoint failed: $(cat "$TMP/t2.out")"
echo "ok: a metrics port in use -> exit 1: $err"
