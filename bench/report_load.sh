#!/usr/bin/env bash
# knee report at 1 and 10 million requests: synthetic binary logs (build/bench_report gen, seeded;
# the shape of the statistics lab's server A, kept in bench/out/), then for each: knee report's
# wall time and peak memory, the HTML's size, and how long headless Chromium takes to draw every
# chart — the page's own clock (#knee-status data-ms: navigation start to the last chart drawn)
# and the browser process's wall time, next to the same for a 1,000-request report (Chromium's
# own start-up). Three page loads each; the median is printed.
#   bench/report_load.sh [N...]        default: 1000000 10000000
set -euo pipefail
cd "$(dirname "$0")/.."
knee=${KNEE:-build/knee}
gen=${BUILD:-build}/bench_report
mkdir -p bench/out
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1000 1000000 10000000)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

measure() { # CMD... -> "wall_s maxrss_kb"
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(f"{time.monotonic() - t:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
PY
}

echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $(chromium --version 2>/dev/null)"
for n in "${sizes[@]}"; do
  log=bench/out/report_${n}.bin html=bench/out/report_${n}.html
  [[ -s $log ]] || "$gen" gen "$n" "$log"
  read -r wall rss < <(measure "$knee" report "$log" -o "$html")
  pages=() walls=()
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
      --disable-sync --no-first-run --hide-scrollbars --user-data-dir="$profile" --virtual-time-budget=60000 \
      --window-size=1400,1000 --dump-dom "file://$PWD/$html" 2>/dev/null >"$profile/dom.html"
    t1=$(date +%s.%N)
    grep -q 'data-state="ready"' "$profile/dom.html" || { echo "page not ready for $n" >&2; exit 1; }
    pages+=("$(grep -o 'data-ms="[0-9]*"' "$profile/dom.html" | cut -d'"' -f2)")
    walls+=("$(python3 -c "print(f'{$t1 - $t0:.2f}')")")
  done
  med() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
  printf '%9d requests: log %4d MB; knee report %5.2f s, peak %6d KB; HTML %.1f MB; page drawn in %5d ms (chromium process %s s)\n' \
    "$n" "$(( $(stat -c %s "$log") / 1000000 ))" "$wall" "$rss" "$(python3 -c "print($(stat -c %s "$html") / 1e6)")" \
    "$(med "${pages[@]}")" "$(med "${walls[@]}")"
done
