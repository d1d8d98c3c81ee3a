#!/usr/bin/env bash
# knee's exact statistics against Python's standard library (no extra packages): seeded data
# sets of several shapes and sizes go through `test_stats --python-dump` (src/stats/stats.c) and
# are compared with statistics.fmean (1e-12 relative; in practice bit-identical), statistics.stdev
# (1e-9 relative), statistics.quantiles(n=100, method='exclusive'/'inclusive') (1e-12 relative)
# and an exact-fraction nearest rank (exact equality).
# tier: exact
set -euo pipefail
src=${KNEE_SRC:?KNEE_SRC not set}
build=${KNEE_BUILD:?KNEE_BUILD not set}
command -v python3 >/dev/null || { echo "FAIL: python3 not found (run scripts/deps.sh --test)" >&2; exit 1; }
[[ -x $build/test_stats ]] || { echo "FAIL: $build/test_stats not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$src/tests/e2e/stats_python/check.py" gen 4242 > "$tmp/data"
"$build/test_stats" --python-dump < "$tmp/data" > "$tmp/c.out"
python3 "$src/tests/e2e/stats_python/check.py" compare "$tmp/data" "$tmp/c.out"
