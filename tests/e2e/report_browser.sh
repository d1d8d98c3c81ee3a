#!/usr/bin/env bash
# knee report, checked in a real browser (headless Debian Chromium): two real runs against
# `knee serve --preset report` (one logged in binary, one in CSV with an hlog) become one report
# of three runs; the page loads with no console message, every chart it says it drew has
# coloured pixels in its box on a screenshot (decoded with python3's zlib), the chart an hlog
# cannot back is left out with a note, and each run's summary block is the terminal's output
# byte for byte (so its numbers are the JSON's). Then a million-request report (a synthetic
# binary log) loads: its load time is printed, not asserted (docs/BENCHMARKS.md).
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

CHROMIUM=$(command -v chromium || true)
[[ -n "$CHROMIUM" ]] || fail "chromium is not installed (scripts/deps.sh installs it)"
PNG="$KNEE_SRC/tests/e2e/report_png.py"

# chromium ARGS...: a fresh profile each time, no network services, logs on stderr
browse() {
    local profile
    profile=$(mktemp -d "$TMP/profile.XXXXXX")
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=30000 "$@"
}

# console_clean LOG: the page printed nothing to its console (no error, no uncaught exception)
console_clean() {
    if grep -E 'CONSOLE|Uncaught' "$1" >&2; then
        fail "the page wrote to its console (above)"
    fi
}

start_knee_serve s --listen report@127.0.0.1:0 --pause-every 2s --duration 120s
PORT=$PORT_s

# run a: open loop with a warm-up and --timer-slack 2ms, binary log; run b: CSV log and an hlog
"$KNEE" run -R 200 -d 5s --warmup 1s --threads 1 --timer-slack 2ms --json "$TMP/a.json" --out "$TMP/a.bin" \
    "http://127.0.0.1:$PORT/product?id=1" >"$TMP/a.txt"
"$KNEE" run -R 100 -d 3s --threads 1 --json "$TMP/b.json" --out "$TMP/b.csv" --hlog "$TMP/b.hlog" \
    "http://127.0.0.1:$PORT/product?id=2" >"$TMP/b.txt"

"$KNEE" report "$TMP/a.json" "$TMP/a.bin" --run "csv=$TMP/b.json,$TMP/b.csv" --run "hlog=$TMP/b.hlog" \
    -o "$TMP/r.html" >"$TMP/report.out"
grep -q "wrote $TMP/r.html (3 runs" "$TMP/report.out" || fail "knee report said: $(cat "$TMP/report.out")"
grep -q 'src=\|href="http\|@import' "$TMP/r.html" && fail "the report loads something from elsewhere"

browse --window-size=1400,1000 --dump-dom "file://$TMP/r.html" >"$TMP/dom.html" 2>"$TMP/dom.err" ||
    fail "chromium --dump-dom failed: $(tail -3 "$TMP/dom.err")"
console_clean "$TMP/dom.err"

# The DOM: state, figures and boxes, summaries against the terminal, numbers against the JSON.
python3 - "$TMP" >"$TMP/boxes.txt" <<'PY'
import html, json, re, sys
tmp = sys.argv[1]
dom = open(f"{tmp}/dom.html").read()
status = re.search(r'<div id="knee-status"([^>]*)>', dom)
assert status, "no #knee-status"
attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', status.group(1)))
assert attrs.get("state") == "ready", f"page state {attrs}"
figs = re.findall(r'<figure class="chart([^"]*)" id="([^"]+)"([^>]*)>', dom)
drawn = [(fid, re.search(r'data-box="([^"]+)"', rest)) for cls, fid, rest in figs if "omitted" not in cls]
omitted = [fid for cls, fid, rest in figs if "omitted" in cls]
assert all(b for _, b in drawn), f"a drawn figure without a box: {drawn}"
assert int(attrs["charts"]) == len(drawn), (attrs, len(drawn))
# runs: 0 = csv, 1 = hlog, 2 = a. Every chart of the log-backed runs; the hlog run has no lag chart
want = {f"chart-{k}-{r}" for k in ("hist", "time", "heat", "rates", "lag") for r in (0, 2)}
want |= {"chart-spectrum", "chart-hist-1", "chart-time-1", "chart-heat-1", "chart-rates-1"}
got = {f for f, _ in drawn}
assert got == want, f"drawn {sorted(got)}, want {sorted(want)}"
assert omitted == ["chart-lag-1"], omitted
note = re.search(r'id="chart-lag-1".*?<p class="note">([^<]*)</p>', dom, re.S).group(1)
assert "hlog has no send times" in note, note
# the lag chart's threshold is the one the verdict used: knee run's default 1 ms limit, plus
# run a's --timer-slack 2ms (the verdict judges the lag beyond the slack), both named
def caption(fid):
    return html.unescape(re.search(rf'id="{fid}"[^>]*><figcaption>([^<]*)</figcaption>', dom).group(1))
cap_a, cap_b = caption("chart-lag-2"), caption("chart-lag-0")
assert "threshold at 3.000 ms (knee run's default --lag-limit 1.000 ms + --timer-slack 2.000 ms: the verdict judges the lag beyond the slack)" in cap_a, cap_a
assert "threshold at 1.000 ms (knee run's default --lag-limit);" in cap_b and "timer-slack" not in cap_b, cap_b
for fid, b in drawn:
    x, y, w, h = map(int, b.group(1).split(","))
    assert w > 200 and h > 100, (fid, w, h)
print(attrs["height"], " ".join(f"{fid}={b.group(1)}" for fid, b in drawn))

def summary(i):
    m = re.search(rf'<pre class="summary" id="summary-{i}">(.*?)</pre>', dom, re.S)
    assert m, f"no summary {i}"
    return html.unescape(m.group(1))
for i, name in ((2, "a"), (0, "b")):
    term = open(f"{tmp}/{name}.txt").read()
    page = summary(i)
    if page != term:
        import difflib
        sys.exit("summary differs from the terminal:\n" + "".join(difflib.unified_diff(
            term.splitlines(True), page.splitlines(True), "terminal", "page")))
    run = json.load(open(f"{tmp}/{name}.json"))
    lat = run["all"]["latency"]
    # the full form's "all" row, or the compact form's "latency (ms)" row
    full = re.search(r"^  all +([\d,]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)$",
                     page, re.M)
    compact = re.search(r"^  latency \(ms\) +([\d,]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)$", page, re.M)
    assert full or compact, "no latency row"
    row, cols = (full, (("mean", 2), ("p50", 4), ("p99", 7), ("max", 9))) if full else \
        (compact, (("p50", 2), ("p90", 3), ("p99", 4), ("p99.9", 5), ("max", 6)))
    assert int(row.group(1).replace(",", "")) == lat["count"], (row.group(1), lat["count"])
    for k, g in cols:
        assert row.group(g) == f"{lat[k]:.3f}", (name, k, row.group(g), lat[k])
assert "latency (ms) per tag, from the hlog" in summary(1)
# the data object: what the page drew from
data = json.loads(html.unescape(re.search(r'<script type="application/json" id="knee-data">(.*?)</script>', dom, re.S).group(1)))
a = data["runs"][2]
assert a["requests"] == json.load(open(f"{tmp}/a.json"))["all"]["accounting"]["planned"] + \
    json.load(open(f"{tmp}/a.json"))["all"]["warmup"]["planned"], "requests in the page != planned in the JSON"
sc = sum(s["n"] for s in a["scatter"]["series"] if s["key"] != "service")
assert sc + a["scatter"]["dropped"]["n_total"] <= a["requests"]
PY
read -r HEIGHT BOXES <"$TMP/boxes.txt"
echo "dom ok: page height $HEIGHT px, charts: $BOXES"

browse --window-size=1400,"$HEIGHT" --screenshot="$TMP/shot.png" "file://$TMP/r.html" >"$TMP/shot.out" 2>"$TMP/shot.err" ||
    fail "chromium --screenshot failed: $(tail -3 "$TMP/shot.err")"
console_clean "$TMP/shot.err"
boxes=()
for b in $BOXES; do boxes+=("${b#*=}"); done
read -ra counts < <(python3 "$PNG" count "$TMP/shot.png" "${boxes[@]}")
i=0
for b in $BOXES; do
    echo "  ${b%%=*}: ${counts[$i]} coloured pixels"
    [[ ${counts[$i]} -ge 200 ]] || fail "${b%%=*} looks blank on the screenshot (${counts[$i]} coloured pixels)"
    i=$((i + 1))
done

# A million requests: the report builds and the page draws every chart (time printed only).
"$KNEE_BUILD/bench_report" gen 1000000 "$TMP/m.bin"
start=$(date +%s.%N)
"$KNEE" report "$TMP/m.bin" -o "$TMP/m.html" >/dev/null
built=$(date +%s.%N)
browse --window-size=1400,1000 --dump-dom "file://$TMP/m.html" >"$TMP/mdom.html" 2>"$TMP/mdom.err" ||
    fail "chromium failed on the million-request report"
done_=$(date +%s.%N)
console_clean "$TMP/mdom.err"
grep -o 'id="knee-status"[^>]*' "$TMP/mdom.html" | grep -q 'data-state="ready" data-charts="7" data-omitted="0"' ||
    fail "the million-request page did not draw its 7 charts: $(grep -o 'id="knee-status"[^>]*' "$TMP/mdom.html")"
ms=$(grep -o 'data-ms="[0-9]*"' "$TMP/mdom.html" | cut -d'"' -f2)
python3 -c "import sys; s, b, d = map(float, sys.argv[1:4]); print(f'1M requests: knee report {b - s:.2f} s, '
            f'{int(sys.argv[4]) / 1e6:.1f} MB; chromium up to drawn {d - b:.2f} s (page: {sys.argv[5]} ms to drawn)')" \
    "$start" "$built" "$done_" "$(stat -c %s "$TMP/m.html")" "$ms"
echo "1 passed, 0 failed"
