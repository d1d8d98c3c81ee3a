#!/usr/bin/env bash
# knee report on the command line: inputs grouped into runs (by name, by --run, from a
# directory), and every bad input or output refused with one line naming the flag, file and
# line or record — exit 2 for bad input, 1 for an output that could not be written (and no
# partial file left behind).
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s --preset null --duration 60s
PORT=$PORT_s

mkdir -p "$TMP/lab"
"$KNEE" run -R 100 -d 1s --threads 1 --json "$TMP/lab/x.json" --out "$TMP/lab/x.csv" --hlog "$TMP/lab/x.hlog" \
    "http://127.0.0.1:$PORT/" >/dev/null
"$KNEE" run -R 100 -d 1s --threads 1 --json "$TMP/lab/y.json" --out "$TMP/lab/y.bin" "http://127.0.0.1:$PORT/" >/dev/null
echo "not an input" >"$TMP/lab/README.txt"

# expect CODE PATTERN CMD...: the exit code and one stderr line matching PATTERN
expect() {
    local code=$1 pat=$2 rc
    shift 2
    set +e
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    set -e
    [[ $rc -eq $code ]] || fail "$*: exit $rc, want $code ($(cat "$TMP/err"))"
    [[ $(wc -l <"$TMP/err") -le 1 ]] || fail "$*: more than one error line: $(cat "$TMP/err")"
    grep -q -- "$pat" "$TMP/err" || fail "$*: stderr '$(cat "$TMP/err")' lacks '$pat'"
}

# a directory: x.json + x.csv (+ x.hlog, not needed then) are run x, y.json + y.bin run y
"$KNEE" report "$TMP/lab" -o "$TMP/dir.html" >"$TMP/out"
grep -q "wrote $TMP/dir.html (2 runs" "$TMP/out" || fail "directory: $(cat "$TMP/out")"
grep -q '<h2>x</h2>' "$TMP/dir.html" || fail "no run x"
grep -q '<h2>y</h2>' "$TMP/dir.html" || fail "no run y"
grep -q 'x.hlog not used: the per-request log holds every request' "$TMP/dir.html" || fail "the unused hlog is not noted"
grep -q 'x.csv (CSV, 100 rows)' "$TMP/dir.html" || fail "the CSV source line is missing"
# --run names a run; an hlog alone is a run whose missing charts are said to be missing
"$KNEE" report --run "only hlog=$TMP/lab/x.hlog" -o "$TMP/h.html" >/dev/null
grep -q '<h2>only hlog</h2>' "$TMP/h.html" || fail "--run name not used"
grep -q 'latency (ms) per tag, from the hlog' "$TMP/h.html" || fail "no hlog summary"

"$KNEE" report --help >"$TMP/help"
for f in --output --run --service; do grep -q -- "$f" "$TMP/help" || fail "--help lacks $f"; done

expect 2 'knee report: -o FILE is required' "$KNEE" report "$TMP/lab/y.bin"
expect 2 'knee report: no inputs' "$KNEE" report -o "$TMP/r.html"
expect 2 "knee report: $TMP/nope.bin: No such file or directory" "$KNEE" report "$TMP/nope.bin" -o "$TMP/r.html"
expect 2 "knee report: -o $TMP/lab/y.bin: is also an input" "$KNEE" report "$TMP/lab/y.bin" -o "$TMP/lab/y.bin"
expect 2 "knee report: --run 'bad': expected NAME=FILE" "$KNEE" report --run bad -o "$TMP/r.html"
printf 'server,start_s,latency_ms\nA,0.1,1.5\nA,0.2,fast\n' >"$TMP/bad.csv"
expect 2 "knee report: $TMP/bad.csv:3: latency_ms: 'fast' is not a number" "$KNEE" report "$TMP/bad.csv" -o "$TMP/r.html"
head -c 1000 "$TMP/lab/y.bin" >"$TMP/cut.bin"
expect 2 "knee report: $TMP/cut.bin: record [0-9]* is truncated" "$KNEE" report "$TMP/cut.bin" -o "$TMP/r.html"
"$KNEE" stats "$TMP/lab/y.bin" --json >"$TMP/stats.json"
expect 2 "not a knee run JSON" "$KNEE" report "$TMP/stats.json" -o "$TMP/r.html"
printf '{"schema": "knee-run/1",\n  oops }\n' >"$TMP/broken.json"
expect 2 "knee report: $TMP/broken.json:2:" "$KNEE" report "$TMP/broken.json" -o "$TMP/r.html"
printf '{"schema": "knee-capacity/1", "ladder": {}}\n' >"$TMP/cap.json"
expect 2 "knee report: $TMP/cap.json: \"config\" missing or not an object" "$KNEE" report "$TMP/cap.json" -o "$TMP/r.html"
expect 2 "knee report: --service must be > 0" "$KNEE" report "$TMP/lab/y.bin" --service 0 -o "$TMP/r.html"
expect 2 "already has a JSON input" "$KNEE" report --run "r=$TMP/lab/x.json,$TMP/lab/y.json" -o "$TMP/r.html"
[[ ! -e "$TMP/r.html" ]] || fail "a refused report left $TMP/r.html behind"
expect 1 "knee report: -o /nonexistent/dir/r.html: " "$KNEE" report "$TMP/lab/y.bin" -o /nonexistent/dir/r.html
echo "1 passed, 0 failed"
