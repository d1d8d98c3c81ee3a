#!/usr/bin/env bash
# The README's pictures of `knee report`, made the way tests/e2e/report_browser.sh checks reports:
# a real open-loop and closed-loop run against `knee serve --preset report` (server A of the
# statistics lab: a job holds the table lock 250 ms every 4 s), one report of both; a real
# comparison (`knee run --repeat 3` against server B, then against server A, `knee compare
# --html`); and a real capacity search against `knee serve --preset flat` (10 ms of CPU per
# request on one worker) drawn with --service 10ms (skipped when this knee has no `knee
# capacity`). Headless Chromium screenshots, cropped per section with tests/e2e/report_png.py.
#   scripts/report-screenshots.sh [OUTDIR]     (default docs/img; needs build/knee and chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/img}
knee=$(realpath "${KNEE:-build/knee}")
tmp=$(mktemp -d /tmp/knee-shots.XXXXXX)
serve_pid=
cleanup() {
  [[ -n "$serve_pid" ]] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

"$knee" serve --listen report@127.0.0.1:0 --listen quiet@127.0.0.1:0 --listen flat@127.0.0.1:0 --duration 600s \
  >"$tmp/serve.out" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do [[ $(grep -c '^listening on' "$tmp/serve.out" 2>/dev/null) -eq 3 ]] && break; sleep 0.1; done
port_of() { sed -n "s/^listening on 127.0.0.1:\([0-9]*\) ($1).*/\1/p" "$tmp/serve.out"; }
port=$(port_of report)
url="http://127.0.0.1:$port/product?id=42"
"$knee" run -R 200 -d 12s --warmup 1s --threads 1 --json "$tmp/open-loop.json" --out "$tmp/open-loop.bin" "$url" >/dev/null
"$knee" run -c 8 -d 12s --warmup 1s --threads 1 --json "$tmp/closed-loop.json" --out "$tmp/closed-loop.bin" "$url" >/dev/null
(cd "$tmp" && "$knee" report open-loop.json open-loop.bin closed-loop.json closed-loop.bin -o report.html)

# a comparison: server B (no lock) before, server A (the lock) after
quiet="http://127.0.0.1:$(port_of quiet)/product?id=42"
"$knee" run -R 200 -d 5s --warmup 1s --threads 1 --repeat 3 --out-dir "$tmp/before" "$quiet" >/dev/null
"$knee" run -R 200 -d 5s --warmup 1s --threads 1 --repeat 3 --out-dir "$tmp/after" "$url" >/dev/null
"$knee" compare "$tmp/before" "$tmp/after" --html "$tmp/compare.html" >/dev/null || true # a verdict is not an error here
# a capacity search, when this knee has knee capacity
capacity=
if "$knee" capacity --help >/dev/null 2>&1; then
  "$knee" capacity --rates 30,50,70,85,95,110 --reps 3 --step 3s --warmup 500ms --settle 500ms --threads 1 \
    --lag-limit 20ms --slo 'p99<100ms' --slo 'error_rate<1%' --json "$tmp/capacity.json" \
    "http://127.0.0.1:$(port_of flat)/" >/dev/null || true # valid, 99 or INVALID: each is a picture
  "$knee" report "$tmp/capacity.json" --service 10ms -o "$tmp/capacity.html" >/dev/null
  capacity=1
else
  echo "this knee has no knee capacity: the capacity pictures are not remade" >&2
fi

chrome() {
  chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --hide-scrollbars --user-data-dir="$tmp/profile" --virtual-time-budget=30000 "$@" \
    2>/dev/null
}
# shoot PAGE: PAGE.html drawn, its DOM in PAGE.dom and its screenshot in PAGE.png
shoot() {
  chrome --window-size=1400,1000 --dump-dom "file://$tmp/$1.html" >"$tmp/$1.dom"
  local height
  height=$(grep -o 'data-height="[0-9]*"' "$tmp/$1.dom" | head -1 | cut -d'"' -f2)
  chrome --window-size=1400,"$height" --screenshot="$tmp/$1.png" "file://$tmp/$1.html" >/dev/null
}

# crop PAGE NAME ID-PATTERN [TOP]: the figures and tables matching the pattern, captions and
# legends included
crop() {
  local box
  box=$(python3 - "$tmp/$1.dom" "$3" "${4:-}" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
found = re.findall(r'<(figure|table) class="(?:chart|data)[^"]*" id="([^"]+)"[^>]*data-box="([^"]+)"', dom)
boxes = [(kind, tuple(map(int, b.split(",")))) for kind, fid, b in found if re.fullmatch(sys.argv[2], fid)]
top = 0 if sys.argv[3] == "top" else min(y - (150 if kind == "figure" else 70) for kind, (_, y, _, _) in boxes)
bottom = max(y + h + (115 if kind == "figure" else 10) for kind, (_, y, _, h) in boxes)
print(f"0,{top},1400,{bottom - top}")
PY
)
  python3 tests/e2e/report_png.py crop "$tmp/$1.png" "$box" "$out/$2"
  echo "wrote $out/$2 ($box)"
}
mkdir -p "$out"
shoot report
crop report report-summary-histogram.png 'chart-hist-.*' top
crop report report-time.png 'chart-time-.*'
crop report report-spectrum-rates.png 'chart-(spectrum|rates-.*|lag-.*|heat-.*)'
shoot compare
crop compare report-compare.png 'cmp-table-0|chart-cmp-.*'
if [[ -n $capacity ]]; then
  shoot capacity
  crop capacity report-capacity.png 'cap-facts-0|chart-cap-.*|cap-grid-0'
fi
