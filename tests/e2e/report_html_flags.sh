#!/usr/bin/env bash
# --html FILE on knee run (also with --repeat), knee stats, knee compare and knee lab: the
# report is written at the end with the same content knee report makes of the same outputs
# (the run's summary block is its stdout, byte for byte); a path that cannot be written is
# refused before the first request (exit 2) or, when it fails at the end, exit 1 with one line
# naming it; an input the report cannot read is exit 2 naming the file.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s --preset null --duration 120s
PORT=$PORT_s
URL="http://127.0.0.1:$PORT/"

# expect CODE PATTERN CMD...: the exit code and a stderr line matching PATTERN
expect() {
    local code=$1 pat=$2 rc=0
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [[ $rc -eq $code ]] || fail "$*: exit $rc, want $code ($(cat "$TMP/err"))"
    grep -q -- "$pat" "$TMP/err" || fail "$*: stderr '$(cat "$TMP/err")' lacks '$pat'"
}

# the summary block of a report, as text
summary() {
    python3 -c 'import html, re, sys; print(html.unescape(re.search(r"<pre class=\"summary\" id=\"summary-0\">(.*?)</pre>",
                open(sys.argv[1]).read(), re.S).group(1)), end="")' "$1"
}

# knee run: refused before any request, then written
expect 2 "knee run: --html /nonexistent-dir/r.html: " "$KNEE" run -R 50 -d 1s --html /nonexistent-dir/r.html "$URL"
grep -q 'requests' "$TMP/out" && fail "knee run sent requests before refusing --html"
expect 2 "knee run: --html -: the report needs a file" "$KNEE" run -R 50 -d 1s --html - "$URL"
"$KNEE" run -R 50 -d 1s --dry-run --html "$TMP/dry.html" "$URL" >"$TMP/dry.txt"
grep -q -- "--html $TMP/dry.html: the report with charts" "$TMP/dry.txt" || fail "--dry-run does not list --html"
[[ ! -e "$TMP/dry.html" ]] || fail "--dry-run wrote the report"
"$KNEE" run -R 100 -d 1s --threads 1 --out "$TMP/r.bin" --json "$TMP/r.json" --html "$TMP/r.html" "$URL" >"$TMP/r.txt"
grep -q 'JSON, knee-run/2, open loop' "$TMP/r.html" || fail "knee run --html: no run in the report"
grep -q '<h2>run</h2>' "$TMP/r.html" || fail "knee run --html: the run is not named"
grep -q 'r.bin (binary log, 100 records)' "$TMP/r.html" || fail "knee run --html: the per-request log is not in it"
cmp -s <(summary "$TMP/r.html") "$TMP/r.txt" || fail "knee run --html: the summary block is not the terminal's"
"$KNEE" report "$TMP/r.json" "$TMP/r.bin" -o "$TMP/r2.html" >/dev/null
cmp -s <(summary "$TMP/r2.html") "$TMP/r.txt" || fail "knee report of the same files: another summary"
# a full device made here (never the machine's own /dev/full as an output path: outputs are never destroyed)
if mknod "$TMP/full" c 1 7 2>/dev/null; then
    expect 1 "knee run: --html $TMP/full: " "$KNEE" run -R 50 -d 1s --threads 1 --html "$TMP/full" "$URL"
    [[ -c "$TMP/full" ]] || fail "knee run --html on a full device: $TMP/full is no longer a character device"
else
    echo "note: cannot mknod here (not root): the full-device case of knee run --html is skipped"
fi
# with --repeat: the report of DIR
"$KNEE" run -R 100 -d 1s --threads 1 --repeat 2 --out-dir "$TMP/rep" --html "$TMP/rep.html" "$URL" >/dev/null
grep -q '<h2>rep-1</h2>' "$TMP/rep.html" && grep -q '<h2>rep-2</h2>' "$TMP/rep.html" && grep -q 'knee-repeat/1' "$TMP/rep.html" ||
    fail "knee run --repeat --html: not the report of the directory"

# knee stats: its text is the summary of a single input; an input the report cannot read: exit 2
"$KNEE" stats "$TMP/r.bin" --html "$TMP/s.html" >"$TMP/s.txt"
cmp -s <(summary "$TMP/s.html") "$TMP/s.txt" || fail "knee stats --html: the summary block is not its text"
printf 'a,b\n1,2\n' >"$TMP/plain.csv"
expect 2 "knee stats: --html $TMP/plain.csv:1: needs the columns start_s and latency_ms" \
    "$KNEE" stats "$TMP/plain.csv" --column b --html "$TMP/p.html"

# knee compare: the comparison's document
"$KNEE" run -R 100 -d 1s --threads 1 --repeat 2 --out-dir "$TMP/rep2" "$URL" >/dev/null
"$KNEE" compare "$TMP/rep" "$TMP/rep2" --html "$TMP/c.html" >/dev/null
grep -q 'knee-compare/1' "$TMP/c.html" && grep -q '"spectrum"' "$TMP/c.html" || fail "knee compare --html: no comparison"
expect 1 "knee compare: --html /nonexistent-dir/c.html" "$KNEE" compare "$TMP/rep" "$TMP/rep2" --html /nonexistent-dir/c.html

# knee lab: DIR/<experiment>.html, and --html needs --out
expect 2 "knee lab: --html needs --out DIR" "$KNEE" lab queue --html
"$KNEE" lab queue --duration 1s --quiet --out "$TMP/lab" --html >/dev/null 2>"$TMP/lab.err" ||
    fail "knee lab failed: $(cat "$TMP/lab.err")"
grep -q "wrote $TMP/lab/queue.html" "$TMP/lab.err" || fail "knee lab did not say where the report is"
[[ $(grep -c '<section class="run"' "$TMP/lab/queue.html") -eq $(ls "$TMP/lab"/queue-*.csv | wc -l) ]] ||
    fail "knee lab --html: not one run per round"
echo "1 passed, 0 failed"
