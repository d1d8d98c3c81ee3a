#!/usr/bin/env bash
# A log written by the Java reference (HistogramLogWriter; six tags of seeded random values of
# different shapes and histogram parameters, 12 intervals each) read by knee: knee's
# percentile distribution, statistics and percentiles must equal the Java library's own.
# tier: exact
source "$KNEE_SRC/tests/e2e/hlog/common.sh"
ref write "$tmp/j.hlog" 42
for tag in untagged api tail db tiny edge; do
  if [[ $tag == untagged ]]; then sel=(); else sel=(--tag "$tag"); fi
  # the Java accumulation's outputPercentileDistribution, against knee show minus the two lines
  # HistogramLogProcessor adds above the table
  "$KNEE" hlog show "$tmp/j.hlog" "${sel[@]}" | tail -n +3 > "$tmp/k.$tag.hgrm"
  same "$tmp/k.$tag.hgrm" "$tmp/j.hlog.$tag.hgrm" "java-written log, tag $tag: percentile distribution"
  # HistogramLogProcessor on the same file, with a time window
  if [[ $tag == untagged ]]; then psel=(); else psel=(-tag "$tag"); fi
  processor -i "$tmp/j.hlog" -o "$tmp/p.$tag" -start 3 -end 7 "${psel[@]}" > /dev/null
  "$KNEE" hlog show "$tmp/j.hlog" "${sel[@]}" --from 3 --to 7 > "$tmp/kw.$tag.hgrm"
  same "$tmp/kw.$tag.hgrm" "$tmp/p.$tag.hgrm" "java-written log, tag $tag, -start 3 -end 7: HistogramLogProcessor"
done
# percentiles, count, min, max, mean, stdev: exact (the JSON numbers are value/1e6, as Java's /1e6)
"$KNEE" hlog stats "$tmp/j.hlog" --json > "$tmp/stats.json"
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
st = json.load(open(f"{tmp}/stats.json"))
names = {"untagged": "(untagged)", "api": "api", "tail": "tail", "db": "db", "tiny": "tiny", "edge": "edge"}
bad = 0
for tag, key in names.items():
    ref = dict(line.split() for line in open(f"{tmp}/j.hlog.{tag}.pct"))
    g = st["groups"][key]
    pairs = [("count", int(ref["count"]), g["count"]),
             ("max", int(ref["max"]) / 1e6, g["max"]), ("min", int(ref["min"]) / 1e6, g["min"]),
             ("mean", float(ref["mean"]) / 1e6, g["mean"]), ("stdev", float(ref["stdev"]) / 1e6, g["stdev"])]
    for p in ("50.0", "90.0", "95.0", "99.0", "99.9"):
        pairs.append(("p" + p, int(ref["p" + p]) / 1e6, g["p" + p.removesuffix(".0")]))
    wrong = [(name, want, got) for name, want, got in pairs if want != got]
    for name, want, got in wrong:
        print(f"FAIL: tag {tag} {name}: java {want!r} knee {got!r}")
    bad += len(wrong)
    if not wrong:
        print(f"ok: tag {tag}: count, min, max, mean, stdev, p50..p99.9 equal")
# tags with different precision (db: 2 digits, lowest 1000) cannot be summed exactly: knee says so
if "all" in st or "all_error" not in st:
    print("FAIL: all tags merged although their precisions differ"); bad += 1
sys.exit(1 if bad else 0)
PY
# and refuses to pretend otherwise in show --all-tags (exit 2, file and line named)
set +e
"$KNEE" hlog show "$tmp/j.hlog" --all-tags > /dev/null 2> "$tmp/err"
rc=$?
set -e
[[ $rc == 2 ]] || fail "show --all-tags over mixed precisions: exit $rc, want 2"
grep -q "significant digits" "$tmp/err" || fail "show --all-tags: unclear message: $(cat "$tmp/err")"
echo "ok: mixed precisions refused: $(cat "$tmp/err")"
