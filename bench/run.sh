#!/usr/bin/env bash
# Runs every benchmark: the C micro-benchmarks (build/bench_*) and the shell benchmarks
# (bench/*.sh, which compare knee against its peers with the target and the generator
# pinned to different CPUs). Results go to bench/out/; record them in docs/BENCHMARKS.md
# together with the exact command. Not part of `make test`: timing belongs here only.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
build=${BUILD:-build}
for b in "$build"/bench_*; do
  [ -x "$b" ] || continue
  echo "== $b"
  "$b" | tee "bench/out/$(basename "$b").txt"
done
for s in bench/*.sh; do
  [ "$(basename "$s")" = run.sh ] && continue
  echo "== $s"
  bash "$s" | tee "bench/out/$(basename "$s" .sh).txt"
done
