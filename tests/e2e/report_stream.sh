#!/usr/bin/env bash
# knee report of streamed responses (knee run --stream), checked in headless Chromium: two real
# runs against `knee serve --preset stream` (one with two targets, one with one) become one
# report; the page loads with no console message; the "Streamed responses" section draws, for
# each run side by side, the first-event and the event-gap percentile spectra (per target and
# all), with coloured pixels on a screenshot; each figure's line of numbers is the run JSON's
# (p50, p90, p99, p99.9, max, mean to 3 decimals) and the data the page drew from is the JSON's
# spectrum; the run JSON's spectrum is consistent with its summary. A run without a stream gets
# no stream section and no empty box.
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

console_clean() {
    if grep -E 'CONSOLE|Uncaught' "$1" >&2; then
        fail "the page wrote to its console (above)"
    fi
}

start_knee_serve s --preset stream --seed 5 --duration 120s
B="http://127.0.0.1:$PORT_s"

# run a: two targets (6 events 5 ms apart after 10 ms; 3 events 2 ms apart after 4 ms, a stall of
# 30 ms in one gap of ten); run b: one target, 4 events; run c: the same without --stream
"$KNEE" run --stream sse -R 40 -d 2s --threads 1 --json "$TMP/a.json" --out "$TMP/a.bin" --hlog "$TMP/ah.hlog" \
    "$B/?events=6&gap_ms=5&first_ms=10&stall_p=0" "$B/?events=3&gap_ms=2&first_ms=4&stall_ms=30&stall_p=0.1" \
    >"$TMP/a.txt"
"$KNEE" run --stream sse -R 30 -d 2s --threads 1 --json "$TMP/b.json" "$B/?events=4&gap_ms=3&first_ms=6&stall_p=0" \
    >"$TMP/b.txt"
"$KNEE" run --stream off -R 30 -d 1s --threads 1 --json "$TMP/c.json" --out "$TMP/c.bin" \
    "$B/?events=4&gap_ms=3&first_ms=6&stall_p=0" >"$TMP/c.txt"
json_check "$TMP/a.json" "len(d['targets']) == 2 and all(t['stream']['responses'] > 0 for t in d['targets'])" "a: both targets streamed"
json_check "$TMP/a.json" "tot['stream']['events'] == 6 * d['targets'][0]['stream']['responses'] + 3 * d['targets'][1]['stream']['responses']" "a: events exact"
json_check "$TMP/c.json" "'stream' not in tot" "c: no stream"

# The run JSON's spectrum (additive: stream.spectrum {first_event, event_gap} {p[], ms[]}):
# levels from 0 up below 1, values never falling, at most the max, the summary's p50 and p90.
python3 - "$TMP/a.json" "$TMP/b.json" <<'PY' || fail "the run JSON's stream.spectrum"
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    for t in [d["all"]] + d["targets"]:
        st = t["stream"]
        for k in ("first_event", "event_gap"):
            sp, s = st["spectrum"][k], st[k]
            p, ms = sp["p"], sp["ms"]
            assert len(p) == len(ms) > 5 and p[0] == 0, (path, k, p)
            assert all(a < b < 1 for a, b in zip(p, p[1:])), (path, k, p)
            assert all(a <= b for a, b in zip(ms, ms[1:])) and ms[-1] <= s["max"], (path, k, ms, s)
            at = dict(zip(p, ms))
            assert at[0.5] == s["p50"] and at[0.9] == s["p90"], (path, k, at.get(0.5), s["p50"], at.get(0.9), s["p90"])
PY

# Run a's hlog alone: its first_event/ and event_gap/ tags are not targets (a note says so).
"$KNEE" report "$TMP/ah.hlog" -o "$TMP/h.html" >/dev/null
python3 - "$TMP" <<'PY' || fail "knee report of a --stream run's hlog"
import html, json, re, sys
tmp = sys.argv[1]
dom = open(f"{tmp}/h.html").read()
run = json.loads(html.unescape(re.search(r'id="knee-data">(.*?)</script>', dom, re.S).group(1)))["runs"][0]
tags = [l.split(",")[0][4:] for l in open(f"{tmp}/ah.hlog") if l.startswith("Tag=")]
assert any(t.startswith("first_event/") for t in tags) and any(t.startswith("event_gap/") for t in tags), tags
want = list(dict.fromkeys(t for t in tags if not t.startswith(("first_event/", "event_gap/"))))
assert len(want) == len(json.load(open(f"{tmp}/a.json"))["targets"]) == 2, want
assert [t["name"] for t in run["targets"]] == want, ([t["name"] for t in run["targets"]], want)
assert any("streamed-response histograms" in n and "are not targets" in n for n in run["notes"]), run["notes"]
PY

"$KNEE" report "$TMP/a.json" "$TMP/a.bin" "$TMP/b.json" -o "$TMP/r.html" >"$TMP/report.out"
grep -q "wrote $TMP/r.html (2 runs" "$TMP/report.out" || fail "knee report said: $(cat "$TMP/report.out")"
browse --window-size=1400,1000 --dump-dom "file://$TMP/r.html" >"$TMP/dom.html" 2>"$TMP/dom.err" ||
    fail "chromium --dump-dom failed: $(tail -3 "$TMP/dom.err")"
console_clean "$TMP/dom.err"

python3 - "$TMP" >"$TMP/boxes.txt" <<'PY'
import html, json, re, sys
from decimal import Decimal, ROUND_HALF_UP
tmp = sys.argv[1]
dom = open(f"{tmp}/dom.html").read()
status = re.search(r'<div id="knee-status"([^>]*)>', dom)
attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', status.group(1)))
assert attrs.get("state") == "ready", f"page state {attrs}"
data = json.loads(html.unescape(re.search(r'<script type="application/json" id="knee-data">(.*?)</script>', dom, re.S).group(1)))
idx = {r["name"]: i for i, r in enumerate(data["runs"])}
assert set(idx) == {"a", "b"}, idx
assert "<h2>Streamed responses</h2>" in dom
figs = {fid: rest for cls, fid, rest in re.findall(r'<figure class="chart([^"]*)" id="([^"]+)"([^>]*)>', dom)}
want = {f"chart-stream-{k}-{idx[n]}" for k in ("first", "gap") for n in ("a", "b")}
assert want <= set(figs), (sorted(figs), want)
assert not [f for f in figs if "stream" in f and f not in want], sorted(figs)
boxes = []
for fid in sorted(want):
    b = re.search(r'data-box="([^"]+)"', figs[fid])
    assert b and 'data-drawn="1"' in figs[fid], fid
    x, y, w, h = map(int, b.group(1).split(","))
    assert w > 200 and h > 100, (fid, w, h)
    boxes.append(f"{fid}={b.group(1)}")
# the runs side by side: a's and b's first-event charts on one row, the first left of the second
def box(fid):
    return list(map(int, re.search(r'data-box="([^"]+)"', figs[fid]).group(1).split(",")))
ba, bb = box(f"chart-stream-first-{idx['a']}"), box(f"chart-stream-first-{idx['b']}")
left, right = (ba, bb) if idx["a"] < idx["b"] else (bb, ba)
assert left[0] + left[2] < right[0] and left[1] < right[1] + right[3] and right[1] < left[1] + left[3], (ba, bb)

def f3(v):
    return str(Decimal(v).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))
for name in ("a", "b"):
    run = json.load(open(f"{tmp}/{name}.json"))
    page = data["runs"][idx[name]]["stream"]
    series = ([("all", run["all"])] if len(run["targets"]) > 1 else []) + [(t["name"], t) for t in run["targets"]]
    assert [s["name"] for s in ([page["all"]] if page["all"] else []) + page["targets"]] == [n for n, _ in series]
    for kind, key in (("first", "first_event"), ("gap", "event_gap")):
        fid = f"chart-stream-{kind}-{idx[name]}"
        body = re.search(rf'id="{fid}"[^>]*>(.*?)</figure>', dom, re.S).group(1)
        lines = {html.unescape(t): html.unescape(x) for t, x in
                 re.findall(r'<p class="note numbers" data-target="([^"]*)" data-kind="' + key + r'"[^>]*>([^<]*)</p>', body)}
        assert len(lines) == len(series), (fid, lines)
        for tname, t in series:
            s = t["stream"][key]
            want_line = (f"{tname}: {s['count']:,} {'first events' if key == 'first_event' else 'gaps'}, "
                         f"p50 {f3(s['p50'])}, p90 {f3(s['p90'])}, p99 {f3(s['p99'])}, p99.9 {f3(s['p99.9'])}, "
                         f"max {f3(s['max'])}, mean {f3(s['mean'])} ms")
            assert lines[tname] == want_line, (fid, lines[tname], want_line)
            drawn = ([page["all"]] if page["all"] else []) + page["targets"]
            got = [x for x in drawn if x["name"] == tname][0]
            assert got["spectrum"][key] == t["stream"]["spectrum"][key], (fid, tname)
    counts = html.unescape(re.search(rf'<p class="note stream-counts" id="stream-counts-{idx[name]}">([^<]*)</p>', dom).group(1))
    for tname, t in series:
        assert f"{tname}: {t['stream']['events']:,} events in {t['stream']['responses']:,} responses" in counts, counts
# the runs' charts of a kind share their scales
for kind in ("first", "gap"):
    sc = [dict(re.findall(r'data-scale-([a-z]+)="([^"]+)"', figs[f"chart-stream-{kind}-{i}"])) for i in (0, 1)]
    assert sc[0] == sc[1] and set(sc[0]) == {"x", "y"}, (kind, sc)
print(attrs["height"], " ".join(boxes))
PY
read -r HEIGHT BOXES <"$TMP/boxes.txt"
echo "dom ok: page height $HEIGHT px, $BOXES"

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

# A JSON without the spectrum (an older knee, or one rewritten from statistics) draws the
# summary's percentiles as points, said in the legend; a malformed spectrum is dropped with a note.
python3 - "$TMP" <<'PY'
import json, sys
tmp = sys.argv[1]
d = json.load(open(f"{tmp}/b.json"))
del d["targets"][0]["stream"]["spectrum"]
json.dump(d, open(f"{tmp}/old.json", "w"))
d["targets"][0]["stream"]["spectrum"] = {"first_event": {"p": [0, 2], "ms": [1, 2]}}
json.dump(d, open(f"{tmp}/bad.json", "w"))
PY
"$KNEE" report "$TMP/old.json" "$TMP/bad.json" -o "$TMP/o.html" >/dev/null
browse --window-size=1400,1000 --dump-dom "file://$TMP/o.html" >"$TMP/odom.html" 2>"$TMP/odom.err" ||
    fail "chromium --dump-dom failed on the report of old JSONs"
console_clean "$TMP/odom.err"
python3 - "$TMP/odom.html" <<'PY' || fail "the report of JSONs without a spectrum"
import html, json, re, sys
dom = open(sys.argv[1]).read()
assert 'data-state="ready"' in dom
for i in (0, 1):
    for kind in ("first", "gap"):
        m = re.search(rf'<figure class="chart[^"]*" id="chart-stream-{kind}-{i}"([^>]*)>(.*?)</figure>', dom, re.S)
        assert m and 'data-drawn="1"' in m.group(1), (kind, i)
        assert "(the JSON's percentiles only)" in html.unescape(m.group(2)), (kind, i)
data = json.loads(html.unescape(re.search(r'<script type="application/json" id="knee-data">(.*?)</script>', dom, re.S).group(1)))
notes = data["runs"][1]["notes"]
assert any("stream.spectrum.first_event" in n and "malformed" in n for n in notes), notes
PY

# No stream: no section, no figure, no omitted box.
"$KNEE" report "$TMP/c.json" "$TMP/c.bin" -o "$TMP/c.html" >/dev/null
browse --window-size=1400,1000 --dump-dom "file://$TMP/c.html" >"$TMP/cdom.html" 2>"$TMP/cdom.err" ||
    fail "chromium --dump-dom failed on the report without a stream"
console_clean "$TMP/cdom.err"
grep -q 'data-state="ready"' "$TMP/cdom.html" || fail "the report without a stream did not draw"
grep -q '<h2>Streamed responses</h2>\|id="chart-stream-\|id="stream-counts-' "$TMP/cdom.html" && fail "a run without a stream got stream charts"
grep -o 'id="knee-status"[^>]*' "$TMP/cdom.html" | grep -q 'data-omitted="0"' ||
    fail "the report without a stream has omitted boxes: $(grep -o 'id="knee-status"[^>]*' "$TMP/cdom.html")"
echo "1 passed, 0 failed"
