#!/usr/bin/env bash
# The README's pictures of `knee report`, made the way tests/e2e/report_browser.sh checks reports:
# a real open-loop and closed-loop run against `knee serve --preset report` (server A of the
# statistics lab: a job holds the table lock 250 ms every 4 s), one report of both, a headless
# Chromium screenshot, cropped per section with tests/e2e/report_png.py.
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

"$knee" serve --listen report@127.0.0.1:0 --duration 120s >"$tmp/serve.out" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/serve.out")
url="http://127.0.0.1:$port/product?id=42"
"$knee" run -R 200 -d 12s --warmup 1s --threads 1 --json "$tmp/open-loop.json" --out "$tmp/open-loop.bin" "$url" >/dev/null
"$knee" run -c 8 -d 12s --warmup 1s --threads 1 --json "$tmp/closed-loop.json" --out "$tmp/closed-loop.bin" "$url" >/dev/null
(cd "$tmp" && "$knee" report open-loop.json open-loop.bin closed-loop.json closed-loop.bin -o report.html)

chrome() {
  chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --hide-scrollbars --user-data-dir="$tmp/profile" --virtual-time-budget=30000 "$@" \
    2>/dev/null
}
chrome --window-size=1400,1000 --dump-dom "file://$tmp/report.html" >"$tmp/dom.html"
height=$(grep -o 'data-height="[0-9]*"' "$tmp/dom.html" | head -1 | cut -d'"' -f2)
chrome --window-size=1400,"$height" --screenshot="$tmp/page.png" "file://$tmp/report.html" >/dev/null

# crop NAME FIGURE-ID-PATTERN [TOP]: the figures matching the pattern, captions and legends included
crop() {
  local box
  box=$(python3 - "$tmp/dom.html" "$2" "${3:-}" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
boxes = [tuple(map(int, b.split(","))) for fid, b in re.findall(r'<figure class="chart[^"]*" id="([^"]+)"[^>]*data-box="([^"]+)"', dom)
         if re.fullmatch(sys.argv[2], fid)]
top = 0 if sys.argv[3] == "top" else min(y for _, y, _, _ in boxes) - 150
bottom = max(y + h for _, y, _, h in boxes) + 115
print(f"0,{top},1400,{bottom - top}")
PY
)
  python3 tests/e2e/report_png.py crop "$tmp/page.png" "$box" "$out/$1"
  echo "wrote $out/$1 ($box)"
}
mkdir -p "$out"
crop report-summary-histogram.png 'chart-hist-.*' top
crop report-time.png 'chart-time-.*'
crop report-spectrum-rates.png 'chart-(spectrum|rates-.*|lag-.*|heat-.*)'
