#!/usr/bin/env bash
# knee report's charts, measured in headless Chromium through the DOM: a check script appended
# to a copy of each report waits until the page has drawn and writes what the browser laid out
# (getBoundingClientRect of every label, plot area and axis) into the page, which --dump-dom
# returns. Checked exactly:
#   - two real runs side by side (the report server, whose stalls put p99, p99.9 and max close
#     together, and a quiet one): no histogram marker label overlaps another, leaves its plot
#     area or touches an axis (its tick values and label); every marker is labelled on the
#     chart or listed under it;
#   - the two runs' panels of each kind have the same x and y ranges (data-scale-*, the scales
#     uPlot drew with), and the rate, count and lag axes start at zero;
#   - a real knee compare document, its numbers set to a finding of +47% and one interval far
#     wider ([-150%, +900%]): the scale follows the finding and the wide interval's two ends are
#     clipped and marked, no other end is;
#   - --servers N: the capacity chart draws M/M/N (the same numbers as knee model mmc), and
#     --servers without --service or out of range is refused (exit 2).
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

CHROMIUM=$(command -v chromium || true)
[[ -n "$CHROMIUM" ]] || fail "chromium is not installed (scripts/deps.sh installs it)"

browse() {
    local profile
    profile=$(mktemp -d "$TMP/profile.XXXXXX")
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=30000 "$@"
}

# measure NAME HTML [WIDTH]: HTML with the check script appended, drawn in a window WIDTH px
# wide (default 1400); its DOM in $TMP/NAME.dom
measure() {
    local name=$1 html=$2 width=${3:-1400}
    python3 - "$html" "$TMP/$name.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
check = r"""<script>
(function () {
  function box(e) { var r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }
  function all(f, sel, fn) { return Array.prototype.map.call(f.querySelectorAll(sel), fn); }
  function measure() {
    var st = document.getElementById('knee-status');
    if (st.getAttribute('data-state') !== 'ready') { setTimeout(measure, 50); return; }
    var out = [];
    all(document, 'figure.chart', function (f) {
      var over = f.querySelector('.u-over');
      if (!over) return;
      out.push({id: f.id, over: box(over), axes: all(f, '.u-axis', box),
        labels: all(f, '.vlabel', function (e) { return {key: e.getAttribute('data-key'), text: e.textContent, box: box(e)}; }),
        legend: (f.querySelector('.marks-legend') || {}).textContent || '',
        clips: all(f, '.clip-mark', function (e) { return {metric: e.getAttribute('data-metric'), end: e.getAttribute('data-end'), box: box(e)}; })});
    });
    var pre = document.createElement('pre');
    pre.id = 'chart-check';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  measure();
})();
</script>
"""
i = page.rindex("</body>")
open(sys.argv[2], "w").write(page[:i] + check + page[i:])
PY
    browse --window-size="$width",1000 --dump-dom "file://$TMP/$name.html" >"$TMP/$name.dom" 2>"$TMP/$name.err" ||
        fail "$name: chromium --dump-dom failed: $(tail -3 "$TMP/$name.err")"
    if grep -E 'CONSOLE|Uncaught' "$TMP/$name.err" >&2; then fail "$name: the page wrote to its console"; fi
    grep -q 'id="chart-check"' "$TMP/$name.dom" || fail "$name: the check script did not run"
}

start_knee_serve s --listen report@127.0.0.1:0 --listen quiet@127.0.0.1:0 --duration 240s
REPORT=$(port_of s report)
QUIET=$(port_of s quiet)

# ---- two runs side by side -----------------------------------------------------------------
"$KNEE" run -R 200 -d 5s --warmup 1s --threads 1 --json "$TMP/stall.json" --out "$TMP/stall.bin" \
    "http://127.0.0.1:$REPORT/product?id=1" >/dev/null
"$KNEE" run -R 100 -d 3s --threads 1 --json "$TMP/quiet.json" --out "$TMP/quiet.bin" \
    "http://127.0.0.1:$QUIET/product?id=1" >/dev/null
"$KNEE" report "$TMP/stall.json" "$TMP/stall.bin" "$TMP/quiet.json" "$TMP/quiet.bin" -o "$TMP/two.html" >/dev/null
measure two "$TMP/two.html"
measure narrow "$TMP/two.html" 760 # two panels of 348 px: the markers crowd

for page in two narrow; do
python3 - "$TMP" "$page" <<'PY'
import html, json, re, sys
tmp, page = sys.argv[1:3]
dom = open(f"{tmp}/{page}.dom").read()
figs = {f["id"]: f for f in json.loads(html.unescape(re.search(r'<pre id="chart-check">(.*?)</pre>', dom, re.S).group(1)))}

def meets(a, b):  # two boxes [left, top, right, bottom] share area (touching edges do not)
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

def inside(a, b, slack=0.5):
    return a[0] >= b[0] - slack and a[1] >= b[1] - slack and a[2] <= b[2] + slack and a[3] <= b[3] + slack

# runs: 0 = stall, 1 = quiet (the order given)
for i in (0, 1):
    f = figs[f"chart-hist-{i}"]
    labels = f["labels"]
    assert f["axes"], "no axis boxes"
    for n, a in enumerate(labels):
        assert inside(a["box"], f["over"]), (f["id"], a, f["over"])
        for ax in f["axes"]:
            assert not meets(a["box"], ax), (f["id"], "label on an axis", a, ax)
        for b in labels[n + 1:]:
            assert not meets(a["box"], b["box"]), (f["id"], "labels overlap", a, b)
    listed = f["legend"].split(": ", 1)[1].split(", ") if f["legend"] else []
    keys = sorted([a["key"] for a in labels] + [t.split(" ")[0] for t in listed])
    assert keys == sorted(["p50", "p90", "p99", "p99.9", "max"]), (f["id"], keys, f["legend"])
    print(f"{page}: {f['id']}: {len(labels)} labels on the chart ({', '.join(a['text'] for a in labels)}), "
          f"{len(listed)} listed under it ({f['over'][2] - f['over'][0]:.0f} px wide)")

def attrs(fid):
    m = re.search(rf'<figure class="chart[^"]*" id="{fid}"([^>]*)>', dom)
    assert m, f"no figure {fid}"
    return {k: tuple(map(float, v.split(","))) for k, v in re.findall(r'data-scale-([a-z]+)="([^"]+)"', m.group(1))}

for kind in ("hist", "time", "heat", "rates", "lag"):
    a, b = attrs(f"chart-{kind}-0"), attrs(f"chart-{kind}-1")
    assert a and a == b, (kind, "the runs' axes differ", a, b)
    print(f"{page}: chart-{kind}: both runs on {a}")
for kind, scale in (("rates", "y"), ("hist", "y"), ("lag", "lag"), ("lag", "n")):
    for i in (0, 1):
        lo, hi = attrs(f"chart-{kind}-{i}")[scale]
        assert lo == 0 and hi > 0, (kind, i, scale, lo, hi)
# the rate axis holds the stall run's 200/s with room, from zero
assert attrs("chart-rates-0")["y"][1] >= 200, attrs("chart-rates-0")
for kind in ("time", "heat", "rates", "lag"):  # one time axis for every chart over time
    assert attrs(f"chart-{kind}-0")["x"] == attrs("chart-time-0")["x"], (kind, attrs(f"chart-{kind}-0"))
PY
done

# ---- the compare chart scaled to the findings ------------------------------------------------
"$KNEE" run -R 150 -d 1s --warmup 300ms --threads 1 --repeat 3 --out-dir "$TMP/before" \
    "http://127.0.0.1:$QUIET/product?id=1" >/dev/null
"$KNEE" run -R 150 -d 1s --warmup 300ms --threads 1 --repeat 3 --out-dir "$TMP/after" \
    "http://127.0.0.1:$QUIET/product?id=1" >/dev/null
"$KNEE" compare "$TMP/before" "$TMP/after" --json "$TMP/cmp.json" >/dev/null || true # a verdict is not an error
python3 - "$TMP/cmp.json" "$TMP/cmp-set.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ms = doc["metrics"]
assert "p50" in ms and "p99.9" in ms, list(ms)
def put(m, rel, lo, hi, verdict):
    b = m["before"]
    m.update(relative=rel, ci_low_relative=lo, ci_high_relative=hi, verdict=verdict)
    if m.get("unit") != "fraction" and b:
        m.update(after=b * (1 + rel), difference=b * rel, ci_low=b * lo, ci_high=b * hi)
for k, m in ms.items():
    put(m, 0.05, -0.03, 0.12, "no detectable difference")
put(ms["p50"], 0.47, 0.41, 0.53, "slower")
put(ms["p99.9"], 0.2, -1.5, 9.0, "no detectable difference")
json.dump(doc, open(sys.argv[2], "w"))
PY
"$KNEE" report "$TMP/cmp-set.json" -o "$TMP/cmp.html" >/dev/null
measure cmp "$TMP/cmp.html"
python3 - "$TMP" <<'PY'
import html, json, re, sys
tmp = sys.argv[1]
dom = open(f"{tmp}/cmp.dom").read()
figs = {f["id"]: f for f in json.loads(html.unescape(re.search(r'<pre id="chart-check">(.*?)</pre>', dom, re.S).group(1)))}
doc = json.load(open(f"{tmp}/cmp-set.json"))
f = figs["chart-cmp-diff-0"]
lo, hi = map(float, re.search(r'id="chart-cmp-diff-0"[^>]*data-scale-y="([^"]+)"', dom).group(1).split(","))
for k, m in doc["metrics"].items():
    assert lo <= 100 * m["relative"] <= hi, (k, m["relative"], lo, hi)
    for end, v in (("low", m["ci_low_relative"]), ("high", m["ci_high_relative"])):
        clipped = not (lo <= 100 * v <= hi)
        marked = [c for c in f["clips"] if c["metric"] == k and c["end"] == end]
        assert len(marked) == (1 if clipped else 0), (k, end, v, lo, hi, f["clips"])
        if marked:
            assert all(a >= b - 0.5 for a, b in zip(marked[0]["box"][:2], f["over"][:2])), marked
assert {(c["metric"], c["end"]) for c in f["clips"]} == {("p99.9", "low"), ("p99.9", "high")}, f["clips"]
assert 47 / (hi - lo) >= 0.5, ("the +47% finding is squeezed", lo, hi)
assert "is cut at the edge of the chart" in dom
print(f"compare: y axis {lo:.2f} .. {hi:.2f} %, clipped: {sorted((c['metric'], c['end']) for c in f['clips'])}")
PY

# ---- --servers N: M/M/c on the capacity chart ---------------------------------------------------
CAP=$KNEE_SRC/tests/e2e/report_fixtures/capacity.json
"$KNEE" report "$CAP" --service 20ms --servers 2 -o "$TMP/cap.html" >/dev/null
measure cap "$TMP/cap.html"
python3 - "$TMP" >"$TMP/cap.rate" <<'PY'
import html, json, re, sys
dom = open(f"{sys.argv[1]}/cap.dom").read()
data = json.loads(html.unescape(re.search(r'<script type="application/json" id="knee-data">(.*?)</script>', dom, re.S).group(1)))
p = data["documents"][0]["knee"]["prediction"]
assert p["servers"] == 2 and p["saturation_rate"] == 100 and "mmc" in p and "mm1" not in p and "md1" not in p, p.keys()
assert re.search(r'id="chart-cap-knee-0"[^>]*><figcaption>[^<]*M/M/2 with 2 servers and a service time of 20\.00 ms', dom)
k = 79  # rate 99.5 x 80/160 = 49.75/s, a number the command line takes as written
print(p["rate"][k], p["mmc"]["p50"][k], p["mmc"]["p99"][k])
PY
read -r rate p50 p99 <"$TMP/cap.rate"
"$KNEE" model mmc --servers 2 --service 20ms --rate "$rate" --percentiles 50,99 --json >"$TMP/model.json"
python3 - "$TMP/model.json" "$p50" "$p99" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
got = {float(q["p"]): q["response_ms"] for q in m["percentiles"]}
for p, want in ((50, float(sys.argv[2])), (99, float(sys.argv[3]))):
    assert abs(got[p] - want) <= 1e-6 * want, (p, got[p], want)
print(f"--servers 2: M/M/2 p50 {float(sys.argv[2]):.3f} ms, p99 {float(sys.argv[3]):.3f} ms, as knee model mmc")
PY
set +e
"$KNEE" report "$CAP" --servers 2 -o "$TMP/x.html" 2>"$TMP/e1"
c1=$?
"$KNEE" report "$CAP" --service 20ms --servers 0 -o "$TMP/x.html" 2>"$TMP/e2"
c2=$?
set -e
[[ $c1 -eq 2 ]] && grep -q -- "--servers needs --service D" "$TMP/e1" || fail "--servers without --service: exit $c1, $(cat "$TMP/e1")"
[[ $c2 -eq 2 ]] && grep -q -- "--servers 0: must be 1..100000" "$TMP/e2" || fail "--servers 0: exit $c2, $(cat "$TMP/e2")"
[[ ! -e $TMP/x.html ]] || fail "a refused report wrote its file"
echo "1 passed, 0 failed"
