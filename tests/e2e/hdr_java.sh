#!/usr/bin/env bash
# knee's HdrHistogram against the Java reference library, value for value: the same seeded
# command script goes through HdrCheck.java (org.HdrHistogram 2.1.x from libhdrhistogram-java)
# and through `test_hist --java-dump` (src/hist/hdr.c); the outputs - statistics, getValueAtPercentile
# for ~230 percentiles, every step of the four iterators, index math, outputPercentileDistribution
# (text and CSV) and Java's %.Nf number formatting - must be byte-identical.
# Fails (never skips) when java, javac or the jar are missing: scripts/deps.sh --test installs them.
# tier: exact
set -euo pipefail
src=${KNEE_SRC:?KNEE_SRC not set}
build=${KNEE_BUILD:?KNEE_BUILD not set}
jar=/usr/share/java/hdrhistogram.jar
for tool in java javac python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (run scripts/deps.sh --test)" >&2; exit 1; }
done
[[ -r $jar ]] || { echo "FAIL: $jar missing (libhdrhistogram-java; run scripts/deps.sh --test)" >&2; exit 1; }
[[ -x $build/test_hist ]] || { echo "FAIL: $build/test_hist not built" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
javac -d "$tmp" -cp "$jar" "$src/tests/e2e/hdr_java/HdrCheck.java"
python3 "$src/tests/e2e/hdr_java/gen_script.py" 20240601 > "$tmp/script"
java -cp "$jar:$tmp" HdrCheck < "$tmp/script" > "$tmp/java.out"
"$build/test_hist" --java-dump < "$tmp/script" > "$tmp/c.out"

lines=$(wc -l < "$tmp/java.out")
if ! cmp -s "$tmp/java.out" "$tmp/c.out"; then
  echo "FAIL: knee's HdrHistogram differs from Java's (first differences, < java > knee):" >&2
  diff "$tmp/java.out" "$tmp/c.out" | head -40 >&2
  exit 1
fi
[[ $lines -gt 30000 ]] || { echo "FAIL: suspiciously short comparison ($lines lines)" >&2; exit 1; }
echo "ok: $lines lines identical to the Java reference ($(grep -c '^new' "$tmp/script") histograms)"
