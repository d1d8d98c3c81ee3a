#!/usr/bin/env bash
# Per-entry outcome tables of a targets file (issue 26): 1,000 distinct URLs run and every entry
# is a row of the JSON's "entries" whose counts and status codes equal what a capture server of
# our own received for it; the summary prints the 10 worst within 100 columns and "... M more",
# --verbose every row; named entries count for their target; knee report prints the table from
# the JSON; knee merge adds the shards' entries by index, and leaves them out (with a note) when
# a shard has none; a file from standard input (streamed) has no table and says so.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

python3 "$KNEE_SRC/tests/e2e/capture_server.py" "$TMP/cap.jsonl" >"$TMP/cap.port" 2>"$TMP/cap.err" &
PIDS+=($!)
for _ in $(seq 100); do [[ -s "$TMP/cap.port" ]] && break; sleep 0.05; done
[[ -s "$TMP/cap.port" ]] || fail "capture server did not start"
CAP="http://127.0.0.1:$(cat "$TMP/cap.port")"

# 1. 1,000 distinct URLs, every 7th answered 404 (X-Status), each sent twice.
for i in $(seq 0 999); do
    if ((i % 7 == 3)); then
        printf 'GET %s/e/%d\nX-Status: 404\n\n' "$CAP" "$i"
    else
        printf 'GET %s/e/%d\n\n' "$CAP" "$i"
    fi
done >"$TMP/t.txt"
"$KNEE" run --targets "$TMP/t.txt" -n 2000 -c 2 -t 2 --json "$TMP/a.json" >"$TMP/a.txt" ||
    [[ $? -eq 1 ]] || fail "the run failed: $(cat "$TMP/a.txt")"
python3 - "$TMP/a.json" "$TMP/cap.jsonl" <<'PY' || fail "the entries equal what the server received"
import collections, json, sys
d = json.load(open(sys.argv[1]))
reqs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
got = collections.Counter(r["target"] for r in reqs)
es = d["entries"]
assert len(es) == 1000 and [e["index"] for e in es] == list(range(1000)), len(es)
assert len(d["entries_hash"]) == 16
for e in es:
    path = "/e/%d" % e["index"]
    assert e["url"].endswith(path) and e["method"] == "GET" and e["target"] == "t", e
    assert e["sent"] == got[path] == 2 and e["completed"] == 2, (e, got[path])
    want = {"404": 2} if e["index"] % 7 == 3 else {"200": 2}
    assert e["status_codes"] == want, e
    assert e["failed"] == (2 if e["index"] % 7 == 3 else 0)
    assert e["outcomes"]["http_error"] + e["outcomes"]["ok"] == 2
    assert e["latency"]["max"] >= e["latency"]["mean"] > 0
assert sum(e["sent"] for e in es) == d["all"]["accounting"]["sent"] == 2000
print("ok: 1,000 entries, each sent twice, its codes as the server answered")
PY
sed -n '/^entries of the targets file/,/more (--verbose/p' "$TMP/a.txt" |
    python3 -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > 100 for l in sys.stdin))' ||
    fail "a line of the entries table is wider than 100 columns"
grep -q '^entries of the targets file: 1,000, the 10 worst' "$TMP/a.txt" || fail "the entries table's title"
grep -q '^  \.\.\. 990 more (--verbose prints all' "$TMP/a.txt" || fail "the ... 990 more line"
[[ $(sed -n '/^entries of the targets file/,/more (--verbose/p' "$TMP/a.txt" | grep -c ' 404 ×2 ') -eq 10 ]] ||
    fail "the 10 worst are the 404 entries"
[[ $(wc -l <"$TMP/a.txt") -lt 80 ]] || fail "the summary of 1,000 URLs is long: $(wc -l <"$TMP/a.txt") lines"
"$KNEE" run --targets "$TMP/t.txt" -n 1000 -c 2 -t 1 --verbose >"$TMP/v.txt" || [[ $? -eq 1 ]] || fail "the --verbose run"
[[ $(sed -n '/^entries of the targets file: 1,000, in file order/,/^$/p' "$TMP/v.txt" | grep -c ' GET /e/') -eq 1000 ]] ||
    fail "--verbose prints every entry"
"$KNEE" report "$TMP/a.json" -o "$TMP/a.html" >/dev/null || fail "knee report of the run"
python3 - "$TMP/a.html" <<'PY' || fail "knee report's per-entry table"
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<table class="data entries" id="entries-0"><caption>([^<]*)</caption>(.*?)</table>', html, re.S)
assert m and "200 of 1000" in m.group(1), m and m.group(1)
rows = re.findall(r"<tr><td>(\d+)</td><td>GET [^<]*/e/(\d+)</td><td>t</td><td>2</td><td>(\d)</td><td[^>]*>(\d)</td>.*?</tr>", m.group(2))
assert len(rows) == 200, len(rows)
worst = [r for r in rows if r[3] == "2"]
assert len(worst) == 143 and rows[:143] == worst, len(worst)  # the 404 entries (every 7th) first
assert all(int(r[0]) % 7 == 3 and r[0] == r[1] for r in worst)
assert "404 \u00d72" in m.group(2)
print("ok: knee report: the per-entry table, the 143 failing entries first")
PY
echo "ok: the summary's table: the 10 worst, ... 990 more; --verbose prints all 1,000"

# 2. Named entries: one target per name, every entry a row naming its target.
{
    printf '{"url": "%s/n/0", "name": "api"}\n' "$CAP"
    printf '{"url": "%s/n/1", "name": "web"}\n' "$CAP"
    printf '{"method": "POST", "url": "%s/n/2", "name": "api", "body": "x"}\n' "$CAP"
} >"$TMP/n.jsonl"
"$KNEE" run --targets "$TMP/n.jsonl" -n 30 -c 2 -t 1 --json "$TMP/n.json" >/dev/null || fail "the named run"
json_check "$TMP/n.json" '[(e["name"], e["target"], e["method"]) for e in d["entries"]] == [("api", "api", "GET"), ("web", "web", "GET"), ("api", "api", "POST")]' \
    "named entries count for their own target"
json_check "$TMP/n.json" 'sum(e["sent"] for e in d["entries"] if e["target"] == "api") == [t for t in d["targets"] if t["name"] == "api"][0]["accounting"]["sent"]' \
    "a target's entries add up to its sent"

# 3. Shards add up by index; a shard without entries leaves them out of the merge.
for i in 0 1; do
    "$KNEE" run --targets "$TMP/t.txt" -R 400 -d 1s -t 1 --shard "$i/2" --start-at "+1s@$TMP/start" \
        --json "$TMP/s$i.json" >/dev/null 2>&1 &
    PIDS+=($!)
done
wait "${PIDS[@]:1}" 2>/dev/null || true
run_knee merge "$TMP/s0.json" "$TMP/s1.json" --json "$TMP/m.json" >"$TMP/out" 2>&1
[[ $RC -le 1 ]] || fail "knee merge exited $RC: $(cat "$TMP/out")"
python3 - "$TMP/s0.json" "$TMP/s1.json" "$TMP/m.json" <<'PY' || fail "the merge adds the entries by index"
import json, sys
a, b, m = [json.load(open(p)) for p in sys.argv[1:4]]
assert m["entries_hash"] == a["entries_hash"] == b["entries_hash"]
for x, y, z in zip(a["entries"], b["entries"], m["entries"]):
    assert z["sent"] == x["sent"] + y["sent"], (x, y, z)
    assert z["outcomes"] == {k: x["outcomes"][k] + y["outcomes"][k] for k in x["outcomes"]}
    assert z["latency"]["max_ns"] == max(x["latency"]["max_ns"], y["latency"]["max_ns"])
assert sum(e["sent"] for e in m["entries"]) == m["all"]["accounting"]["sent"] == 400
print("ok: the merged entries are the shards' added by index")
PY
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); del d["entries"], d["entries_hash"]; json.dump(d, open(sys.argv[2], "w"))' \
    "$TMP/s1.json" "$TMP/s1-none.json"
run_knee merge "$TMP/s0.json" "$TMP/s1-none.json" --json "$TMP/m2.json" >"$TMP/out" 2>&1
[[ $RC -le 1 ]] || fail "knee merge of a shard without entries exited $RC"
grep -q 'shard 1 ran another targets file than shard 0 (0 entries' "$TMP/out" || fail "the merge's note on the entries"
json_check "$TMP/m2.json" '"entries" not in d' "the merge leaves the entries out"
echo "ok: knee merge leaves the entries out, with a note, when a shard ran another file"

# 4. Standard input is streamed: no table, and the summary says where to get one.
cat "$TMP/t.txt" | "$KNEE" run --targets - -n 20 -c 1 -t 1 --json "$TMP/p.json" >"$TMP/p.txt" 2>&1 ||
    [[ $? -eq 1 ]] || fail "the piped run"
json_check "$TMP/p.json" '"entries" not in d and any("no per-entry table" in w for w in d["warnings"])' \
    "a streamed file has no entries, and a note"
grep -q 'knee stats --by entry' "$TMP/p.txt" || fail "the summary names knee stats --by entry"
echo "ok: standard input: no per-entry table, the note says so"

# 5. knee capacity --targets FILE: every step of the ladder runs the file's workload; standard
#    input (read once) and a URL beside the file are exit 2.
run_knee capacity --targets "$TMP/t.txt" --rates 50 --reps 1 --step 1s --warmup 200ms --settle 100ms \
    --slo 'p99<2s' --probe-lag-limit 1s --no-cross-check --out "$TMP/cap" --json "$TMP/cap.json" >"$TMP/cap.txt" 2>&1
[[ $RC -eq 0 || $RC -eq 3 ]] || fail "knee capacity --targets exited $RC: $(tail -5 "$TMP/cap.txt")"
[[ -s "$TMP/cap/rep1-50.bin" ]] || fail "knee capacity kept no log of its step"
"$KNEE" stats "$TMP/cap/rep1-50.bin" --by entry --json | python3 -c '
import json, sys
g = json.load(sys.stdin)["groups"]
sys.exit(0 if len(g) >= 40 else 1)' || fail "the step ran the file's entries"
cat "$TMP/t.txt" | "$KNEE" capacity --targets - --rates 50 --slo 'p99<1s' >/dev/null 2>"$TMP/cap.err" && fail "--targets - was accepted"
grep -q 'knee capacity: --targets -: .*give a file' "$TMP/cap.err" || fail "the --targets - message: $(cat "$TMP/cap.err")"
run_knee capacity --targets "$TMP/t.txt" "$CAP/x" --rates 50 --slo 'p99<1s' >/dev/null 2>"$TMP/cap.err"
[[ $RC -eq 2 ]] && grep -q 'no URL or --target with it' "$TMP/cap.err" || fail "a URL beside --targets: exit $RC"
echo "ok: knee capacity --targets runs the file at every step; - and a URL beside it are exit 2"
