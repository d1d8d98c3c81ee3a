#!/usr/bin/env bash
# knee report's summary block is knee run's terminal summary, byte for byte, for real runs of
# every shape: ok (the compact form), --verbose, a warm-up with Server-Timing, rejections,
# failures (http_error from a queue that overflows), a target that is down (exit 3), several
# targets with thresholds (one fails: exit 99), a closed loop, a generator-limited run. One
# printer (src/runreport) prints both, the terminal's from the run and the report's from the
# run's JSON; this test holds them to it.
# tier: exact timing
# The timing tier: that the run meant for the compact form got it (on a loaded machine knee may
# call even a null service's run generator-limited, which is the full form); the exact tier the
# rest, the report's summaries equal to the terminal's in whatever form each run took.
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s --listen report@127.0.0.1:0 --listen null@127.0.0.1:0 --listen queue@127.0.0.1:0 --duration 120s
REPORT=$(port_of s report)
NULL=$(port_of s null)
QUEUE=$(port_of s queue)
DOWN=$(free_port)

# run NAME WANT_EXIT ARGS...: knee run with --json, its stdout kept as the terminal's text
run() {
    local name=$1 want=$2 rc=0
    shift 2
    "$KNEE" run --threads 1 --json "$TMP/$name.json" "$@" >"$TMP/$name.txt" 2>"$TMP/$name.err" || rc=$?
    [[ $rc -eq $want ]] || fail "$name: knee run exit $rc, want $want: $(cat "$TMP/$name.err")"
}

# a hard lag limit: on a loaded machine (or under ASan) the relative rule may judge a 0.2 ms
# service's run generator-limited, which is the full form, not the compact one this run is for
run ok 0 -R 200 -d 1s --lag-limit 50ms "http://127.0.0.1:$NULL/"
if in_tier timing; then
    grep -q -- "--verbose: every table" "$TMP/ok.txt" || { cat "$TMP/ok.txt"; fail "ok: not the compact form"; }
    in_tier exact || { echo "1 passed, 0 failed"; exit 0; }
fi
run verbose 0 -R 200 -d 1s --lag-limit 50ms --verbose "http://127.0.0.1:$NULL/"
run timing 0 -R 100 -d 2s --warmup 500ms "http://127.0.0.1:$REPORT/product?id=1"
run rejected 0 -R 150 -d 2s --reject 503:QUEUE_TIMEOUT "http://127.0.0.1:$QUEUE/work?ms=40"
run failures 0 -R 150 -d 2s "http://127.0.0.1:$QUEUE/work?ms=40"
run down 3 -R 50 -d 1s "http://127.0.0.1:$DOWN/"
run targets 99 -R 200 -d 1s --target "a=http://127.0.0.1:$NULL/" --target "b=http://127.0.0.1:$REPORT/x@50" \
    --threshold 'p99<10s' --threshold 'b.max<1us' --threshold 'error_rate<1%'
run closed 0 -c 2 -d 1s "http://127.0.0.1:$NULL/"
run limited 0 -R 500 -d 1s --lag-limit 1ns "http://127.0.0.1:$NULL/"

names=(ok verbose timing rejected failures down targets closed limited)
args=()
for n in "${names[@]}"; do args+=(--run "$n=$TMP/$n.json"); done
"$KNEE" report "${args[@]}" -o "$TMP/r.html" >/dev/null

python3 - "$TMP" "${names[@]}" <<'PY'
import difflib, html, json, re, sys
tmp, names = sys.argv[1], sys.argv[2:]
page = open(f"{tmp}/r.html").read()
# runs are shown in the order given
for i, name in enumerate(names):
    m = re.search(rf'<pre class="summary" id="summary-{i}">(.*?)</pre>', page, re.S)
    assert m, f"no summary for {name}"
    got, want = html.unescape(m.group(1)), open(f"{tmp}/{name}.txt").read()
    if got != want:
        sys.exit(f"{name}: the report's summary differs from the terminal's:\n" + "".join(
            difflib.unified_diff(want.splitlines(True), got.splitlines(True), "terminal", "report")))
# the shapes this test means to cover really occurred
def j(n): return json.load(open(f"{tmp}/{n}.json"))
text = {n: open(f"{tmp}/{n}.txt").read() for n in names}
assert "--verbose" not in text["verbose"] and j("verbose")["verbose"] is True
assert "server timing (ms" in text["timing"] and "warm-up" in text["timing"]
assert j("rejected")["outcomes"]["rejected"] > 0, "no rejections"
assert j("failures")["outcomes"]["http_error"] > 0, "no failures"
assert "\n  ! FAILED:" in text["down"] and "\nverdict     FAILED: connection refused by" in text["down"] and "transport" in text["down"]
assert "--- target b" in text["targets"] and "  FAIL b.max<1us" in text["targets"]
assert "closed loop" in text["closed"]
assert j("limited")["generator_limited"], "the run was not generator-limited"
print("summaries equal for", " ".join(names))
PY
echo "1 passed, 0 failed"
