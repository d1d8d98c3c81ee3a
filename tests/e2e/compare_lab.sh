#!/usr/bin/env bash
# knee lab compare, short: nine 1 s runs against two in-process servers. The three sections
# are there, the single-run pairs each name a winner (or the same p99), knee compare gives the
# same six runs a verdict and the changed server "slower" with its p50 interval, and every
# sentence is one of the ones the numbers choose between. Shapes only: the numbers are this
# machine's.
source "$KNEE_SRC/tests/e2e/run_common.bash"
cd "$TMP"
run_knee lab compare --quick --duration 1s --warmup 300ms >lab.out 2>lab.err
[[ $RC == 0 ]] || fail "knee lab compare: exit $RC: $(cat lab.err)"
for h in "== 1. the same server, one run a side, 3 times" "== 2. the same six runs, 3 repetitions a side: knee compare" \
    "== 3. a real change: 3 ms added to every cache hit, 3 repetitions"; do
    grep -qF "$h" lab.out || fail "no '$h': $(cat lab.out)"
done
[[ $(grep -cE '^  [123] .*"(after is slower|after is faster|the same)"$' lab.out) == 3 ]] || fail "three pairs: $(cat lab.out)"
grep -q "^- one unchanged server, 3 pairs of single runs: " lab.out || fail "no sentence on the pairs"
grep -q "^- the same six runs as 3 repetitions a side: knee compare says '" lab.out || fail "no sentence on the same runs"
grep -q "^- with 3 ms added to every cache hit, knee compare says '" lab.out || fail "no sentence on the change"
# the changed server: the p50 row says slower (3 ms on 2 ms is far above any spread here)
awk '/^== 3\./ { on = 1 } on && /^  p50 ms/ { print; exit }' lab.out | grep -q "slower$" ||
    fail "the changed server's p50 is not slower: $(cat lab.out)"
echo "ok"
