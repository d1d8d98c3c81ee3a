#!/usr/bin/env bash
# knee report's documents, checked in headless Chromium: two real `knee run --repeat`
# directories (a quiet server and the one with the lock), `knee compare --html` and `knee report`
# of the compare JSON (chart 7), the --repeat directory with --html, and a knee capacity
# document (a search of our own when this knee has `knee capacity`, else a real search's
# document from tests/e2e/report_fixtures) with --service (chart 6). Each page: no console
# message, every chart it drew has coloured pixels in its box, and the numbers of its tables
# are the JSON's.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

CHROMIUM=$(command -v chromium || true)
[[ -n "$CHROMIUM" ]] || fail "chromium is not installed (scripts/deps.sh installs it)"
PNG="$KNEE_SRC/tests/e2e/report_png.py"

browse() {
    local profile
    profile=$(mktemp -d "$TMP/profile.XXXXXX")
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=30000 "$@"
}

# check NAME HTML CHARTS: the page is ready with CHARTS charts, each with pixels in its box
check() {
    local name=$1 html=$2 want=$3
    browse --window-size=1400,1000 --dump-dom "file://$html" >"$TMP/$name.dom" 2>"$TMP/$name.err" ||
        fail "$name: chromium --dump-dom failed: $(tail -3 "$TMP/$name.err")"
    if grep -E 'CONSOLE|Uncaught' "$TMP/$name.err" >&2; then fail "$name: the page wrote to its console"; fi
    local status
    status=$(grep -o 'id="knee-status"[^>]*' "$TMP/$name.dom")
    grep -q 'data-state="ready"' <<<"$status" || fail "$name: not drawn: $status"
    grep -q "data-charts=\"$want\" data-omitted=\"0\"" <<<"$status" || fail "$name: want $want charts: $status"
    local height boxes=()
    height=$(grep -o 'data-height="[0-9]*"' <<<"$status" | cut -d'"' -f2)
    browse --window-size=1400,"$height" --screenshot="$TMP/$name.png" "file://$html" >/dev/null 2>"$TMP/$name.err2" ||
        fail "$name: chromium --screenshot failed"
    if grep -E 'CONSOLE|Uncaught' "$TMP/$name.err2" >&2; then fail "$name: the page wrote to its console"; fi
    mapfile -t boxes < <(grep -o '<figure class="chart[^"]*" id="[^"]*"[^>]*data-box="[^"]*"' "$TMP/$name.dom" |
        sed 's/.*id="\([^"]*\)".*data-box="\([^"]*\)"/\1 \2/')
    [[ ${#boxes[@]} -eq $want ]] || fail "$name: ${#boxes[@]} boxes for $want charts"
    local b ids=() coords=()
    for b in "${boxes[@]}"; do ids+=("${b% *}") coords+=("${b#* }"); done
    read -ra counts < <(python3 "$PNG" count "$TMP/$name.png" "${coords[@]}")
    for i in "${!ids[@]}"; do
        [[ ${counts[$i]} -ge 200 ]] || fail "$name: ${ids[$i]} looks blank (${counts[$i]} coloured pixels)"
    done
    echo "$name: $want charts drawn (${ids[*]})"
}

start_knee_serve s --listen quiet@127.0.0.1:0 --listen report@127.0.0.1:0 --listen flat@127.0.0.1:0 --duration 240s
QUIET=$(port_of s quiet)
REPORT=$(port_of s report)
FLAT=$(port_of s flat)

# two sides of three repetitions; the second with --html: the report of its directory
"$KNEE" run -R 150 -d 2s --warmup 500ms --threads 1 --repeat 3 --out-dir "$TMP/before" \
    "http://127.0.0.1:$QUIET/product?id=1" >/dev/null
"$KNEE" run -R 150 -d 2s --warmup 500ms --threads 1 --repeat 3 --out-dir "$TMP/after" --html "$TMP/repeat.html" \
    "http://127.0.0.1:$REPORT/product?id=1" >/dev/null
# knee compare --html, and knee report of its JSON: the same page
"$KNEE" compare "$TMP/before" "$TMP/after" --json "$TMP/cmp.json" --html "$TMP/cmp.html" >/dev/null
"$KNEE" report "$TMP/cmp.json" -o "$TMP/cmp2.html" >"$TMP/report.out"
grep -q "wrote $TMP/cmp2.html (1 document, 0 runs" "$TMP/report.out" || fail "knee report said: $(cat "$TMP/report.out")"
grep -q 'knee-compare/1' "$TMP/cmp.html" || fail "knee compare --html wrote no comparison"

# capacity: a search of our own when this knee has one, else the fixture
if "$KNEE" capacity --help >/dev/null 2>&1; then
    "$KNEE" capacity --rates 20,40,60 --reps 3 --step 500ms --warmup 100ms --settle 100ms --threads 1 --lag-limit 20ms \
        --slo 'p99<200ms' --json "$TMP/cap.json" --html "$TMP/cap-direct.html" --service 10ms \
        "http://127.0.0.1:$FLAT/" >/dev/null || true # exit 0, 99 or 3: each is a document to draw
    [[ -s "$TMP/cap.json" ]] || fail "knee capacity wrote no JSON"
    check capacity-direct "$TMP/cap-direct.html" 3
else
    cp "$KNEE_SRC/tests/e2e/report_fixtures/capacity.json" "$TMP/cap.json"
fi
"$KNEE" report "$TMP/cap.json" --service 10ms -o "$TMP/cap.html" >/dev/null

check compare "$TMP/cmp.html" 3
check compare-report "$TMP/cmp2.html" 3
check repeat "$TMP/repeat.html" 17 # the repetitions' chart, the spectrum, 5 charts of each of the 3 runs
check capacity "$TMP/cap.html" 3

python3 - "$TMP" <<'PY'
import html, json, re, sys
tmp = sys.argv[1]

def cells(dom, table_id):
    """rows of a table: {row attribute value: {data-key: text}}"""
    t = re.search(rf'<table class="data" id="{re.escape(table_id)}"[^>]*>(.*?)</table>', dom, re.S)
    assert t, f"no table {table_id}"
    rows = {}
    for attrs, body in re.findall(r'<tr([^>]*)>(.*?)</tr>', t.group(1), re.S):
        m = re.search(r'data-(?:metric|rate|rep|key)="([^"]*)"', attrs)
        if not m:
            continue
        rows[m.group(1)] = {k: html.unescape(v) for k, v in re.findall(r'data-key="([^"]*)"[^>]*>([^<]*)<', body)}
    return rows

def f3(x): return "-" if x is None else f"{x:.3f}"
def s3(x): return "-" if x is None else f"{x:+.3f}"
def rate(x):
    if x is None: return "-"
    t = f"{x:,.1f}"
    return (t[:-2] if t.endswith(".0") else t) + "/s"

# compare: every metric's before, after, difference and interval are the JSON's
cmpj = json.load(open(f"{tmp}/cmp.json"))
for page in ("compare", "compare-report"):
    dom = open(f"{tmp}/{page}.dom").read()
    rows = cells(dom, "cmp-table-0")
    assert set(rows) == set(cmpj["all"]["metrics"]), (page, rows.keys())
    for k, m in cmpj["all"]["metrics"].items():
        if m["unit"] != "ms":
            continue
        r = rows[k]
        assert r["before"] == f3(m["before"]) and r["after"] == f3(m["after"]), (page, k, r, m)
        assert r["difference"] == s3(m["difference"]), (page, k, r, m)
        want = "-" if m["ci_low"] is None else f"[{s3(m['ci_low'])}, {s3(m['ci_high'])}]"
        assert r["interval"] == want, (page, k, r["interval"], want)
        assert r["verdict"] == m["verdict"], (page, k)
    assert f"verdict: {html.escape(cmpj['verdict'])}" in dom, page
    data = json.loads(html.unescape(re.search(r'id="knee-data">(.*?)</script>', dom, re.S).group(1)))
    assert data["documents"][0]["doc"] == cmpj, f"{page}: the page's document is not the JSON"
print("compare: the tables are the JSON's")

# repeat: each repetition's numbers
rj = json.load(open(f"{tmp}/after/repeat.json"))
rows = cells(open(f"{tmp}/repeat.dom").read(), "repeat-table-0")
for r in rj["repetitions"]:
    got = rows[str(r["repetition"])]
    for k in ("p50_ms", "p99_ms", "p99.9_ms", "mean_ms"):
        assert got[k] == f3(r[k]), (r["repetition"], k, got[k], r[k])
print("repeat: the table is the JSON's")

# capacity: the answer, every step of the grid, every probe
cj = json.load(open(f"{tmp}/cap.json"))
dom = open(f"{tmp}/capacity.dom").read()
facts = cells(dom, "cap-facts-0")
assert facts["capacity"]["capacity"] == ("none" if cj["capacity"] is None else rate(cj["capacity"])), facts
assert facts["verdict"]["verdict"] == cj["verdict"]
grid = cells(dom, "cap-grid-0")
assert len(grid) == len(cj["ladder"])
for g in cj["ladder"]:
    row = grid[str(g["rate"]) if g["rate"] != int(g["rate"]) else str(int(g["rate"]))]
    assert row["held"] == ("held" if g["held"] else "not held"), (g["rate"], row)
    assert row["held_by"] == f"{g['held_by']} of {g['valid_reps']}", (g["rate"], row)
    for st in g["reps"]:
        cell = row[f"rep-{st['rep']}"]
        assert cell.startswith("not run" if st["ran"] is False else ("held" if st["held"] else "not held")), cell
        assert rate(st["achieved"]) in cell, (cell, st["achieved"])
probes = cells(dom, "cap-probes-0")
for p in cj["probes"]:
    got = probes[str(p["rep"])]
    assert got["ok"] == ("ok" if p["ok"] else "SHORT") and got["achieved"] == rate(p["achieved"]), (got, p)
data = json.loads(html.unescape(re.search(r'id="knee-data">(.*?)</script>', dom, re.S).group(1)))
d = data["documents"][0]
assert d["doc"] == cj, "the page's document is not the JSON"
assert d["knee"]["prediction"]["service_ms"] == 10 and d["knee"]["slo"][0]["stat"] == "p99"
print("capacity: the tables are the JSON's")
PY
echo "1 passed, 0 failed"
