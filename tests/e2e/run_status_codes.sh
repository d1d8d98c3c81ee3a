#!/usr/bin/env bash
# Status codes everywhere: knee run against the fault server's /status?code=C counts the
# responses by status for all and every target in the JSON (exactly; only non-zero codes, in
# numeric order), names the codes on the outcome lines of the text (http_error and rejected,
# per target too; a clean run prints no such line), judges status.* thresholds (exit 99 when
# one fails), and knee merge adds the shards' codes up; knee report draws the classes over time
# from the per-request log and a table of codes under the summary.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
B="http://127.0.0.1:$FS_PORT"
cd "$TMP"

# 3 targets, 30 requests each (closed loop, one connection each): 404s, 200s and 503s that
# --reject takes as rejections
run_knee run -n 90 -c 3 --reject 503:QUEUE_TIMEOUT --json r.json --out r.bin \
    --threshold 'status.404==30' --threshold 'status.5xx_rate<=34%' --threshold 'nf.status.4xx>=30' \
    --target nf="$B/status?code=404" --target ok="$B/ok" --target busy="$B/status?code=503&body=QUEUE_TIMEOUT" >r.txt 2>&1
[[ $RC -eq 0 ]] || { cat r.txt; fail "exit $RC, not 0"; }
json_check r.json 'tot["status_codes"] == {"200": 30, "404": 30, "503": 30}' "all's status codes"
json_check r.json 'list(tot["status_codes"]) == ["200", "404", "503"]' "keys in numeric order"
json_check r.json '[t["status_codes"] for t in d["targets"]] == [{"404": 30}, {"200": 30}, {"503": 30}]' \
    "every target's status codes"
json_check r.json 'all(t["pass"] for t in d["thresholds"])' "status thresholds pass"
grep -qx '  http_error 30: 404 ×30' r.txt || { cat r.txt; fail "no http_error status line"; }
grep -qx '  rejected 30: 503 ×30' r.txt || fail "no rejected status line"
[[ $(grep -c '^  http_error 30: 404 ×30$' r.txt) -eq 2 ]] || fail "the 404 target's own status line"
grep -q '^  pass status.5xx_rate<=34% *measured 33.33' r.txt || fail "status share threshold line"

# a failed status threshold is exit 99; a bad one is exit 2 naming it
run_knee run -n 40 -c 2 --threshold 'status.5xx==0' "$B/ok" "$B/status?code=500" >t.txt 2>&1
[[ $RC -eq 99 ]] || { cat t.txt; fail "status.5xx==0 on 500s: exit $RC, not 99"; }
grep -q '^  FAIL status.5xx==0 *measured 20$' t.txt || fail "the failed threshold's line"
[[ $(grep -c '^  http_error 20: 500 ×20$' t.txt) -eq 2 ]] || fail "500's status lines (all and its target)"
run_knee run -n 5 --threshold 'status.6xx==0' "$B/ok" >b.txt 2>&1
[[ $RC -eq 2 ]] || fail "a bad status threshold: exit $RC, not 2"
grep -q "threshold 'status.6xx==0': unknown status" b.txt || fail "the bad threshold is not named: $(cat b.txt)"

# a clean run says nothing of statuses in the text, and counts its 200s
run_knee run -n 20 -c 1 --json ok.json "$B/ok" >ok.txt 2>&1
[[ $RC -eq 0 ]] || fail "clean run: exit $RC"
json_check ok.json 'tot["status_codes"] == {"200": 20}' "clean run's codes"
! grep -q '×' ok.txt || fail "a clean run printed a status line"

# knee merge adds the shards' codes up (a warm-up's are left out, in every shard)
for i in 0 1; do
    "$KNEE" run -R 100 -d 1s --warmup 200ms --shard "$i/2" --json "s$i.json" "$B/status?code=404" "$B/ok" >/dev/null 2>&1 ||
        true
done
run_knee merge s0.json s1.json --json m.json >m.txt 2>&1
[[ $RC -eq 0 || $RC -eq 3 ]] || { cat m.txt; fail "knee merge exited $RC"; }
python3 - s0.json s1.json m.json <<'PY' || fail "merged status codes are not the shards' sum"
import json, sys
s = [json.load(open(p)) for p in sys.argv[1:3]]
m = json.load(open(sys.argv[3]))
def add(a, b):
    return {k: a.get(k, 0) + b.get(k, 0) for k in sorted(set(a) | set(b))}
assert m["all"]["status_codes"] == add(s[0]["all"]["status_codes"], s[1]["all"]["status_codes"]), m["all"]["status_codes"]
for i in range(2):
    assert m["targets"][i]["status_codes"] == add(s[0]["targets"][i]["status_codes"], s[1]["targets"][i]["status_codes"])
acc = m["all"]["accounting"]["outcomes"]
assert sum(m["all"]["status_codes"].values()) == acc["ok"] + acc["http_error"], (m["all"]["status_codes"], acc)
PY
grep -q '^  http_error [0-9,]*: 404 ×' m.txt || { cat m.txt; fail "the merged summary's status line"; }

# knee report: the classes over time from the log, the table of codes under the summary
run_knee report r.json r.bin -o r.html >rep.txt 2>&1
[[ $RC -eq 0 ]] || { cat rep.txt; fail "knee report exited $RC"; }
grep -q '<table class="data status-codes" id="status-0"><caption>Responses by HTTP status' r.html ||
    fail "no status table in the report"
grep -q '<tr><td class="bad">404</td><td>30</td><td>33.33%</td></tr>' r.html || fail "the 404 row"
grep -q '"status":{"2xx":\[' r.html || fail "no status classes over time in the report's data"
grep -q '"4xx":\[' r.html || fail "no 4xx class in the report's data"
echo "ok: status codes in the JSON, the text, thresholds, merge and report"
