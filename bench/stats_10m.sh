#!/usr/bin/env bash
# knee stats on ROWS rows (default 10 million) of CSV in the article's format, end to end:
# wall time and peak memory (max RSS) of `knee stats` (exact and --approx) and of a
# straightforward Python standard-library analysis of the same file (bench/stats_baseline.py),
# and their ratio (goal: knee >= 20x faster). The CSV is generated once (seeded) and kept in
# bench/out/ (about 250 MB for 10M rows); generation is not timed.
#   bench/stats_10m.sh [ROWS]        e.g. bench/stats_10m.sh 1000000 for a quick smoke run
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-10000000}
knee=${KNEE:-build/knee}
mkdir -p bench/out
csv=bench/out/stats_${rows}.csv
if [[ ! -s $csv ]]; then
  # A at 100/s and B at 300/s as the article; the run is long enough for ROWS rows
  secs=$(( rows / 400 + 1 ))
  python3 tests/data/gen_article.py "$csv" --seed 10 --seconds "$secs" --rows "$rows"
fi
bytes=$(stat -c %s "$csv")

# measure CMD...: prints "wall_s maxrss_kb" of the child (resource usage, no extra tools)
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
wall = time.monotonic() - t
print(f"{wall:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
PY
}

echo "input: $csv, $rows rows, $((bytes / 1000000)) MB; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
read -r k_wall k_rss < <(measure "$knee" stats "$csv")
echo "knee stats:          ${k_wall} s  peak ${k_rss} KB"
read -r a_wall a_rss < <(measure "$knee" stats --approx "$csv")
echo "knee stats --approx: ${a_wall} s  peak ${a_rss} KB"
read -r p_wall p_rss < <(measure python3 bench/stats_baseline.py "$csv")
echo "python baseline:     ${p_wall} s  peak ${p_rss} KB"
python3 -c "print(f'ratio python/knee: {$p_wall / $k_wall:.1f}x (exact), {$p_wall / $a_wall:.1f}x (--approx); '
                  f'knee reads {$bytes / 1e6 / $k_wall:.0f} MB/s')"
