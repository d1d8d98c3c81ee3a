#!/usr/bin/env bash
# knee run --hlog: one interval per second per target, tagged with the target name, whose
# counts add up to the run's own summary, readable by knee hlog (and, per hlog_knee_to_java.sh,
# by the Java reference). Bad tags and unwritable paths are refused before any request.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s --preset null --duration 60s
PORT=$PORT_s

"$KNEE" run --target api=http://127.0.0.1:$PORT/a@200 --target web=http://127.0.0.1:$PORT/b@100 \
    -d 3s --threads 1 --hlog "$TMP/r.hlog" --json "$TMP/r.json" >/dev/null
grep -q '^#\[Histogram log format version 1.3\]' "$TMP/r.hlog" || fail "no version header"
grep -q '^Tag=api,' "$TMP/r.hlog" || fail "no api intervals"
grep -q '^Tag=web,' "$TMP/r.hlog" || fail "no web intervals"
"$KNEE" hlog stats "$TMP/r.hlog" --json >"$TMP/h.json"
python3 - "$TMP/r.json" "$TMP/h.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1])); h = json.load(open(sys.argv[2]))
for t in ("api", "web"):
    n_run = next(x for x in run["targets"] if x["name"] == t)["latency"]["count"]
    n_log = h["groups"][t]["count"]
    assert n_run == n_log, (t, n_run, n_log)
    assert n_log > 0
print("counts agree")
PY

# Refused before any request is sent: a name that cannot be a tag, a path that cannot be written.
long=$(printf 'n%.0s' $(seq 300))   # longer than an hlog tag may be
if "$KNEE" run --target "$long=http://127.0.0.1:$PORT/" -n 5 --hlog "$TMP/x.hlog" 2>"$TMP/err"; then fail "bad tag accepted"; fi
grep -q -- '--hlog' "$TMP/err" || fail "bad tag message does not name --hlog"
set +e
"$KNEE" run -n 5 --hlog /nonexistent/dir/x.hlog http://127.0.0.1:$PORT/ 2>"$TMP/err"; rc=$?
set -e
[[ $rc -eq 2 ]] || fail "unwritable --hlog: exit $rc, want 2"
grep -q -- '--hlog /nonexistent/dir/x.hlog' "$TMP/err" || fail "unwritable path not named"
echo "1 passed, 0 failed"
