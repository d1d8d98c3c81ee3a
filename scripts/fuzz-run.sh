#!/usr/bin/env bash
# Run every fuzz target for a fixed time and turn what it finds into corpus files, so that
# `make test` replays each finding from then on (tests/fuzz/corpus/<name>/, ctest fuzz/<name>).
#
#   scripts/fuzz-run.sh [SECONDS] [NAME...]     default 120 s each, every target
#   FUZZ_BUILD=dir      the libFuzzer build (default build-fuzz, made by `make fuzz`)
#   FUZZ_MERGE=1        also merge the inputs that reached new coverage into the corpus
#                       (libFuzzer -merge=1: only the ones that add coverage; off by default
#                       so a routine run leaves the repository as it was unless it crashed)
#
# Each target starts from a copy of its corpus in a temporary directory (a run never floods
# the repository with the thousands of inputs libFuzzer keeps), with -artifact_prefix in a
# findings directory. A crash, leak, timeout or out-of-memory input is copied to
# tests/fuzz/corpus/<name>/<kind>-<sha1> and named on stderr; the script then exits 1, so a
# finding cannot pass unnoticed. Exit 0: every target ran its time without a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-120}
shift || true
build=${FUZZ_BUILD:-build-fuzz}
[[ $secs =~ ^[0-9]+$ && $secs -gt 0 ]] || { echo "fuzz-run: SECONDS must be a positive whole number, not '$secs'" >&2; exit 2; }
if [[ ! -d $build ]]; then
  echo "fuzz-run: no $build/: build the fuzzers first (make fuzz)" >&2
  exit 2
fi
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  for src in tests/fuzz/fuzz_*.c; do
    n=$(basename "$src" .c)
    names+=("${n#fuzz_}")
  done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
found=0
for name in "${names[@]}"; do
  bin="$build/fuzz_$name"
  corpus="tests/fuzz/corpus/$name"
  if [[ ! -x $bin ]]; then
    echo "fuzz-run: $bin missing (make fuzz builds every target)" >&2
    exit 2
  fi
  mkdir -p "$corpus" "$work/$name/corpus" "$work/$name/findings"
  cp -r "$corpus"/. "$work/$name/corpus/" 2>/dev/null || true
  echo "fuzz-run: $name for ${secs}s (corpus: $(ls "$corpus" | wc -l) files)"
  set +e
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/$name/findings/" "$work/$name/corpus" >"$work/$name/log" 2>&1
  rc=$?
  set -e
  tail -n 3 "$work/$name/log" | sed "s/^/  $name: /"
  for f in "$work/$name/findings"/*; do
    [[ -e $f ]] || continue
    kind=$(basename "$f" | cut -d- -f1)
    dest="$corpus/$kind-$(sha1sum "$f" | cut -c1-40)"
    cp "$f" "$dest"
    echo "fuzz-run: $name: FOUND $kind (exit $rc): saved as $dest; see the log above, fix, and keep the file" >&2
    found=1
  done
  if [[ $rc -ne 0 && $(ls "$work/$name/findings" | wc -l) -eq 0 ]]; then
    echo "fuzz-run: $name: the fuzzer exited $rc without an artifact:" >&2
    tail -n 20 "$work/$name/log" >&2
    found=1
  fi
  if [[ ${FUZZ_MERGE:-0} == 1 ]]; then
    "$bin" -merge=1 "$corpus" "$work/$name/corpus" >"$work/$name/merge.log" 2>&1 ||
      { echo "fuzz-run: $name: merge failed" >&2; found=1; }
  fi
done
exit $found
