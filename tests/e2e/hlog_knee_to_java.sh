#!/usr/bin/env bash
# Logs written by knee (two "machines" with different seeds, StartTimes 0.25 s apart, three
# tags) merged by knee hlog merge, then read by the Java reference: HistogramLogProcessor's
# .hgrm must equal knee hlog show line for line, for every tag, on the inputs and the merged
# log; and the merged log must equal the Java library's own sum of the two inputs.
# tier: exact
source "$KNEE_SRC/tests/e2e/hlog/common.sh"
GEN="$KNEE_BUILD/bench_hlog"
[[ -x $GEN ]] || fail "$GEN not built"
"$GEN" gen "$tmp/a.hlog" --seed 1 --intervals 30 --start 1700000000 --tags api,db
"$GEN" gen "$tmp/b.hlog" --seed 2 --intervals 30 --start 1700000000.25 --tags api,db
"$KNEE" hlog merge "$tmp/a.hlog" "$tmp/b.hlog" -o "$tmp/m.hlog"
for tag in untagged api db; do
  if [[ $tag == untagged ]]; then sel=(); psel=(); rtag=-; else sel=(--tag "$tag"); psel=(-tag "$tag"); rtag=$tag; fi
  for log in a m; do
    processor -i "$tmp/$log.hlog" -o "$tmp/p.$log.$tag" "${psel[@]}" > /dev/null
    "$KNEE" hlog show "$tmp/$log.hlog" "${sel[@]}" > "$tmp/k.$log.$tag.hgrm"
    same "$tmp/k.$log.$tag.hgrm" "$tmp/p.$log.$tag.hgrm" "knee-written $log.hlog, tag $tag: HistogramLogProcessor"
  done
  # exact merge: Java's own sum of both inputs equals knee's merged log
  ref sum "$rtag" "$tmp/a.hlog" "$tmp/b.hlog" > "$tmp/sum.$tag.hgrm"
  "$KNEE" hlog show "$tmp/m.hlog" "${sel[@]}" | tail -n +3 > "$tmp/km.$tag.hgrm"
  same "$tmp/km.$tag.hgrm" "$tmp/sum.$tag.hgrm" "merged log, tag $tag: equals Java's sum of the inputs"
done
# all tags in one distribution: Java's sum of every interval of both inputs
ref sum '*' "$tmp/a.hlog" "$tmp/b.hlog" > "$tmp/sum.all.hgrm"
"$KNEE" hlog show "$tmp/m.hlog" --all-tags | tail -n +3 > "$tmp/km.all.hgrm"
same "$tmp/km.all.hgrm" "$tmp/sum.all.hgrm" "merged log, all tags: equals Java's sum of every interval of the inputs"
# aligned by absolute time: midpoints 0.5 s and 0.75 s into each second share a slot, so the
# merged log has 30 intervals per tag, not 60
n=$(grep -c '^Tag=api,' "$tmp/m.hlog")
[[ $n == 30 ]] || fail "merged log has $n api intervals, want 30"
echo "ok: merged log has 30 intervals per tag"
# Java reads the merged log's tags like knee
processor -i "$tmp/m.hlog" -listtags > "$tmp/tags.txt"
for t in api db; do grep -qx "$t" "$tmp/tags.txt" || fail "HistogramLogProcessor -listtags misses $t"; done
echo "ok: HistogramLogProcessor lists the merged tags"
# different precision on merge: one clear error naming file and line, exit 2, no output left
"$GEN" gen "$tmp/c.hlog" --seed 3 --intervals 3 --digits 2
set +e
"$KNEE" hlog merge "$tmp/a.hlog" "$tmp/c.hlog" -o "$tmp/bad.hlog" 2> "$tmp/err"
rc=$?
set -e
[[ $rc == 2 ]] || fail "merge with mismatched digits: exit $rc, want 2"
grep -q "c.hlog:6: 2 significant digits" "$tmp/err" || fail "merge mismatch message: $(cat "$tmp/err")"
[[ ! -e $tmp/bad.hlog ]] || fail "a failed merge left its output behind"
echo "ok: mismatched digits refused: $(cat "$tmp/err")"
