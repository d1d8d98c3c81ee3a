#!/usr/bin/env bash
# knee compare stage by stage: two --stages runs of the same plan (one against a server 5 ms
# slower per hit) compare with a "by stage" table, one row per stage, and a JSON "stages" list
# with each stage's planned requests on both sides; runs without stages, or with different
# stages (refused; forced), print no such table. Exact checks only on structure and counts.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
cd "$TMP"

start_knee_serve fast -p quiet --pool 0 --seed 1
start_knee_serve slow -p quiet --pool 0 --seed 2 --hit-ms 5
F="http://127.0.0.1:$PORT_fast/product?id=42"
S="http://127.0.0.1:$PORT_slow/product?id=42"
SPEC='50:1s,100:1s'

run_knee run --stages "$SPEC" --json a.json --out a.bin "$F" >a.out 2>&1
[[ $RC == 0 ]] || fail "run A: exit $RC: $(cat a.out)"
run_knee run --stages "$SPEC" --json b.json --out b.bin "$S" >b.out 2>&1
[[ $RC == 0 ]] || fail "run B: exit $RC: $(cat b.out)"

run_knee compare --before a.bin --after b.bin --json cmp.json >cmp.out 2>&1
[[ $RC == 0 ]] || fail "compare: exit $RC: $(cat cmp.out)"
grep -q '^by stage (per stage: point values from each run.s JSON, no intervals' cmp.out || fail "no by-stage table: $(cat cmp.out)"
[[ $(grep -cE '^ +1  50/s 1s +50 +50 ' cmp.out) == 1 ]] || fail "stage 1 row: $(cat cmp.out)"
[[ $(grep -cE '^ +2  100/s 1s +100 +100 ' cmp.out) == 1 ]] || fail "stage 2 row: $(cat cmp.out)"
[[ $(sed -n '/^by stage/,/^$/p' cmp.out | grep -cE '^ +[0-9]+  [0-9]') == 2 ]] || fail "one row per stage: $(cat cmp.out)"
python3 - cmp.json <<'PY' || fail "compare JSON stages: $(cat cmp.json)"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stages"]
assert [x["index"] for x in s] == [1, 2], s
assert [(x["from"], x["to"], x["duration_s"]) for x in s] == [(50, 50, 1), (100, 100, 1)], s
assert [(x["requests_before"], x["requests_after"]) for x in s] == [(50, 50), (100, 100)], s
for x in s:
    for k in ("p50", "p99"):
        assert x[k + "_before"] > 0 and x[k + "_after"] > 0, x
        assert abs(x[k + "_ratio"] - x[k + "_after"] / x[k + "_before"]) < 1e-9, x
    assert 0 <= x["error_rate_before"] <= 1 and 0 <= x["error_rate_after"] <= 1, x
PY

# without stages: no table, no "stages" in the JSON
run_knee run -R 50 -d 1s --json p.json --out p.bin "$F" >p.out 2>&1
[[ $RC == 0 ]] || fail "plain run: exit $RC: $(cat p.out)"
run_knee compare --before p.bin --after p.bin --json pp.json >pp.out 2>&1
[[ $RC == 0 ]] || fail "plain compare: exit $RC: $(cat pp.out)"
! grep -q '^by stage' pp.out || fail "by-stage table without stages: $(cat pp.out)"
python3 -c 'import json,sys; assert "stages" not in json.load(open(sys.argv[1]))' pp.json || fail "stages in JSON without stages"

# different stages: refused as before; forced, still no by-stage table
run_knee run --stages '50:1s,60:1s' --json c.json --out c.bin "$F" >c.out 2>&1
[[ $RC == 0 ]] || fail "run C: exit $RC: $(cat c.out)"
run_knee compare --before a.bin --after c.bin >ac.out 2>&1
[[ $RC == 2 ]] || fail "different stages: exit $RC: $(cat ac.out)"
run_knee compare --force --before a.bin --after c.bin --json ac.json >acf.out 2>&1
[[ $RC == 0 ]] || fail "forced: exit $RC: $(cat acf.out)"
! grep -q '^by stage' acf.out || fail "by-stage table with different stages: $(cat acf.out)"
python3 -c 'import json,sys; assert "stages" not in json.load(open(sys.argv[1]))' ac.json || fail "stages in JSON with different stages"
