#!/usr/bin/env bash
# Requests as users bring them (issue 26): --targets FILE|- in vegeta's http format and in JSON
# lines, --feed and placeholders. A capture server of our own records every request: the bytes
# on the wire equal the file, entry for entry and in order; the feed's values appear exactly;
# 1,000 distinct URLs run; a 1,000,000-line targets file read from a pipe keeps knee's memory
# flat; bad input is exit 2 naming FILE:LINE, before anything is sent.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

# start_capture NAME: a capture server logging to $TMP/NAME.jsonl; sets CAP (its base URL).
start_capture() {
    python3 "$KNEE_SRC/tests/e2e/capture_server.py" "$TMP/$1.jsonl" >"$TMP/$1.port" 2>"$TMP/$1.err" &
    PIDS+=($!)
    local i
    for i in $(seq 100); do
        [[ -s "$TMP/$1.port" ]] && break
        sleep 0.05
    done
    [[ -s "$TMP/$1.port" ]] || fail "capture server did not start"
    CAP="http://127.0.0.1:$(cat "$TMP/$1.port")"
}

# capture_check NAME PYTHON-EXPR MESSAGE: reqs is the list of captured requests (dicts).
capture_check() {
    python3 - "$TMP/$1.jsonl" "$2" <<'PY' || fail "$3"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def hdr(r, name):
    return [v for n, v in r["headers"] if n.lower() == name.lower()]
ok = eval(sys.argv[2])
if not ok:
    print("captured:", json.dumps(reqs[:12], indent=None)[:3000], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# 1. vegeta's http format, read as it is: every entry in file order, cycling; headers, a body
#    from a file (relative to the targets file), comments and CRLF line ends.
start_capture h
mkdir -p "$TMP/t"
printf '{"n": 1}' >"$TMP/t/body.json"
{
    printf '# a comment\n'
    printf 'GET %s/a?x=1\nX-A: 1\nX-B: two words\n\n' "$CAP"
    printf 'POST %s/b\r\nContent-Type: application/json\r\n@body.json\r\n\r\n' "$CAP"
    printf 'DELETE %s/c/9\n' "$CAP"
} >"$TMP/t/targets.txt"
"$KNEE" run --targets "$TMP/t/targets.txt" -n 7 -c 1 -t 1 --out "$TMP/h.csv" --json "$TMP/h.json" >"$TMP/h.txt"
json_check "$TMP/h.json" 'identity(acc) and d["outcomes"]["ok"] == 7' "7 requests answered"
json_check "$TMP/h.json" '[t["name"] for t in d["targets"]] == ["targets"]' "the file's target is named after it"
capture_check h '[(r["method"], r["target"]) for r in reqs] == [("GET", "/a?x=1"), ("POST", "/b"), ("DELETE", "/c/9")] * 2 + [("GET", "/a?x=1")]' \
    "methods and targets in file order, cycling"
capture_check h 'hdr(reqs[0], "X-A") == ["1"] and hdr(reqs[0], "X-B") == ["two words"] and hdr(reqs[2], "X-A") == []' \
    "each entry's own headers"
capture_check h 'reqs[1]["body"] == "{\"n\": 1}" and hdr(reqs[1], "Content-Type") == ["application/json"] and hdr(reqs[1], "Content-Length") == ["8"]' \
    "the body from @body.json"
python3 - "$TMP/h.csv" <<'PY' || fail "the CSV carries each request's entry"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["entry"] for r in rows] == ["0", "1", "2", "0", "1", "2", "0"], [r["entry"] for r in rows]
PY

# ... and the binary log: knee stats breaks a run down by entry from either
"$KNEE" run --targets "$TMP/t/targets.txt" -n 6 -c 1 -t 1 --out "$TMP/h.bin" >/dev/null
by_entry() { "$KNEE" stats "$1" --by entry --json | python3 -c 'import json, sys; print(sorted((k, v["count"]) for k, v in json.load(sys.stdin)["groups"].items()))'; }
[[ $(by_entry "$TMP/h.bin") == "[('0', 2), ('1', 2), ('2', 2)]" ]] || fail "knee stats --by entry of the binary log"
[[ $(by_entry "$TMP/h.csv") == "[('0', 3), ('1', 2), ('2', 2)]" ]] || fail "knee stats --by entry of the CSV"

# 2. JSON lines: headers with a list value, body_base64, weights (sequential: sends per cycle),
#    and -H added to every entry.
start_capture j
{
    printf '{"method": "PUT", "url": "%s/j/1", "headers": {"X-L": ["a", "b"]}, "body": "one", "weight": 2}\n' "$CAP"
    printf '{"url": "%s/j/2", "body_base64": "dHdv"}\n' "$CAP"
} >"$TMP/t/t.jsonl"
"$KNEE" run --targets "$TMP/t/t.jsonl" -H 'X-All: yes' -n 6 -c 1 -t 1 --json "$TMP/j.json" >/dev/null
json_check "$TMP/j.json" 'd["outcomes"]["ok"] == 6' "6 jsonl requests"
capture_check j '[r["target"] for r in reqs] == ["/j/1", "/j/1", "/j/2"] * 2' "weight 2 sends the first entry twice a cycle"
capture_check j 'hdr(reqs[0], "X-L") == ["a", "b"] and reqs[0]["method"] == "PUT" and reqs[0]["body"] == "one"' "jsonl headers, method, body"
capture_check j 'reqs[2]["method"] == "GET" and reqs[2]["body"] == "two" and all(hdr(r, "X-All") == ["yes"] for r in reqs)' \
    "body_base64, the default method, -H on every entry"

# 3. a feed and placeholders in the URL, a header and the body: the feed's values exactly, in
#    order; {{seq}} counts the requests from 0; {{rand}} within its bounds; {{uuid}} a UUID.
start_capture f
printf 'id,name\n7,ann\n8,"bob, jr"\n9,cy\n' >"$TMP/t/users.csv"
"$KNEE" run "$CAP/u/{{id}}?s={{seq}}&r={{rand:3-5}}" -H 'X-Name: {{name}}' -H 'X-Id: {{uuid}}' \
    -m POST -b '{"id": {{id}}, "seq": {{seq}}}' --feed "$TMP/t/users.csv" -n 7 -c 1 -t 1 >/dev/null
capture_check f '[r["target"].split("?")[0] for r in reqs] == ["/u/7", "/u/8", "/u/9"] * 2 + ["/u/7"]' "feed rows in order, cycling"
capture_check f '[hdr(r, "X-Name")[0] for r in reqs[:3]] == ["ann", "bob, jr", "cy"]' "a quoted CSV value as it is"
capture_check f '[r["target"].split("s=")[1].split("&")[0] for r in reqs] == [str(i) for i in range(7)]' "{{seq}} 0..6"
capture_check f 'all(3 <= int(r["target"].split("r=")[1]) <= 5 for r in reqs)' "{{rand:3-5}} within 3..5"
capture_check f 'all(__import__("re").fullmatch("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", hdr(r, "X-Id")[0]) for r in reqs)' "{{uuid}} a version-4 UUID"
capture_check f 'reqs[1]["body"] == "{\"id\": 8, \"seq\": 1}"' "placeholders in the body"

# 4. 1,000 distinct URLs in one run (open loop); every one of them sent once.
start_capture k
for i in $(seq 0 999); do printf 'GET %s/k/%d\n\n' "$CAP" "$i"; done >"$TMP/t/k.txt"
"$KNEE" run --targets "$TMP/t/k.txt" -R 2000 -n 1000 --json "$TMP/k.json" >/dev/null
json_check "$TMP/k.json" 'identity(acc) and acc["planned"] == 1000 and d["outcomes"]["ok"] == 1000' "1,000 requests"
capture_check k 'sorted(int(r["target"].split("/")[2]) for r in reqs) == list(range(1000))' "each of the 1,000 URLs once"

# 5. standard input, read once: the run ends with the input (a note), every entry sent once in
#    order.
start_capture p
for i in 1 2 3 4 5; do printf 'GET %s/p/%d\n\n' "$CAP" "$i"; done |
    "$KNEE" run --targets - -n 100 -c 1 -t 1 --json "$TMP/p.json" >/dev/null 2>"$TMP/p.err"
grep -q 'the input ended' "$TMP/p.err" || fail "the end of the input is said"
json_check "$TMP/p.json" 'identity(acc) and acc["sent"] == 5 and d["outcomes"]["ok"] == 5' "5 entries, 5 requests"
capture_check p '[r["target"] for r in reqs] == ["/p/%d" % i for i in range(1, 6)]' "standard input in order"

# 6. bad input: exit 2 naming FILE:LINE (or the flag), and nothing sent.
start_capture bad
bad() { # bad NAME EXPECTED-TEXT ARGS...
    local name=$1 want=$2
    shift 2
    set +e
    "$KNEE" run "$@" -n 3 -c 1 >"$TMP/bad-$name.out" 2>"$TMP/bad-$name.err"
    local rc=$?
    set -e
    [[ $rc -eq 2 ]] || fail "$name: exit $rc, expected 2"
    grep -qF -- "$want" "$TMP/bad-$name.err" || { cat "$TMP/bad-$name.err" >&2; fail "$name: no '$want'"; }
}
printf 'GET %s/1\n\nGET %s/2\nno colon here\n' "$CAP" "$CAP" >"$TMP/t/b1.txt"
bad header-line "b1.txt:4" --targets "$TMP/t/b1.txt"
printf 'GET %s/1\n@missing.bin\n' "$CAP" >"$TMP/t/b2.txt"
bad body-file "b2.txt:2" --targets "$TMP/t/b2.txt"
printf '{"url": "%s/1"}\n{"url": "%s/2", "wieght": 2}\n' "$CAP" "$CAP" >"$TMP/t/b3.jsonl"
bad jsonl-key "b3.jsonl:2" --targets "$TMP/t/b3.jsonl"
printf 'GET %s/1\n\nGET http://127.0.0.2:9/x\n' "$CAP" >"$TMP/t/b4.txt"
bad origin "b4.txt:3" --targets "$TMP/t/b4.txt"
printf 'GET %s/{{nope}}\n' "$CAP" >"$TMP/t/b5.txt"
bad placeholder "b5.txt:1" --targets "$TMP/t/b5.txt" --feed "$TMP/t/users.csv"
bad placeholder-name "nope" "$CAP/{{nope}}" --feed "$TMP/t/users.csv"
printf 'id,name\n7,ann\n8,"bob jr"\n' >"$TMP/t/space.csv"
bad feed-value "row 2 of" "$CAP/u/{{name}}" --feed "$TMP/t/space.csv"
bad with-url "--targets" --targets "$TMP/t/k.txt" "$CAP/x"
bad order "--targets-order" --targets "$TMP/t/k.txt" --targets-order shuffle
printf '' >"$TMP/t/empty.txt"
bad empty "no entry" --targets "$TMP/t/empty.txt"
capture_check bad 'reqs == []' "nothing was sent from a file that failed"

# 7. random order: drawn by weight, reproducible with --seed.
start_capture r
printf '{"url": "%s/r/heavy", "weight": 9}\n{"url": "%s/r/light"}\n' "$CAP" "$CAP" >"$TMP/t/r.jsonl"
"$KNEE" run --targets "$TMP/t/r.jsonl" --targets-order random --seed 5 -n 400 -c 2 >/dev/null
capture_check r '300 < sum(r["target"] == "/r/heavy" for r in reqs) < 400 and len(reqs) == 400' "weights 9:1"

# 8. shards take their share of the entries: the plan's request i sends entry i mod 6 in
#    whichever shard plans it, so two shards together send each entry exactly as one run would;
#    knee merge adds them up.
start_capture sh
for i in 0 1 2 3 4 5; do printf 'GET %s/s/%d\n\n' "$CAP" "$i"; done >"$TMP/t/s.txt"
for i in 0 1; do
    "$KNEE" run --targets "$TMP/t/s.txt" --shard $i/2 -R 200 -n 24 -t 1 --json "$TMP/sh$i.json" >/dev/null
done
capture_check sh 'sorted(r["target"] for r in reqs) == sorted("/s/%d" % (i % 6) for i in range(24))' \
    "two shards: every entry 4 times, as one run of 24"
"$KNEE" merge "$TMP/sh0.json" "$TMP/sh1.json" --json "$TMP/shm.json" >/dev/null
json_check "$TMP/shm.json" 'identity(acc) and acc["planned"] == 24 and d["outcomes"]["ok"] == 24' "merged: 24 requests"

# 9. a file larger than a table (100,001 entries): checked whole, then streamed from its first
#    entry, in order
start_capture big
python3 -c 'import sys; sys.stdout.write("".join("GET %s/b/%d\n\n" % (sys.argv[1], i) for i in range(100001)))' "$CAP" \
    >"$TMP/t/big.txt"
"$KNEE" run --targets "$TMP/t/big.txt" --dry-run | grep -q 'big.txt: 100001 entries (http, sequential, streamed)' ||
    fail "a file of 100,001 entries is streamed"
"$KNEE" run --targets "$TMP/t/big.txt" -n 5 -c 1 -t 1 >/dev/null
capture_check big '[r["target"] for r in reqs] == ["/b/%d" % i for i in range(5)]' "a streamed file from its first entry"

# 10. 1,000,000 lines from a pipe (100,000 entries of 10 lines): knee's memory stays flat
#    (compared with 10,000 lines through the same path; in the plain build: ASan's quarantine
#    keeps freed memory) and every entry is sent once.
start_knee_serve s --preset null
python3 - "$ADDR_s" "$TMP" <<'PY' || fail "memory flat over a 1,000,000-line pipe"
import resource, subprocess, sys, json, os
addr, tmp = sys.argv[1], sys.argv[2]
knee = os.environ["KNEE"]
def run(entries):
    p = subprocess.Popen([knee, "run", "--targets", "-", "-c", "8", "-d", "120s", "--json", f"{tmp}/m.json"],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    chunk = []
    for i in range(entries):
        chunk.append(f"GET http://{addr}/m/{i}\n" + "".join(f"X-H{k}: {i}\n" for k in range(8)) + "\n")
        if len(chunk) == 1000:
            p.stdin.write("".join(chunk).encode()); chunk = []
    p.stdin.write("".join(chunk).encode())
    p.stdin.close()
    p.wait()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest child so far
    d = json.load(open(f"{tmp}/m.json"))
    sent = d["all"]["accounting"]["sent"]
    return ru, sent
small, sent_small = run(1000)
large, sent_large = run(100000)
print(f"max RSS: 10,000 lines {small} KiB, 1,000,000 lines {large} KiB; sent {sent_small}, {sent_large}")
assert sent_small == 1000 and sent_large == 100000, (sent_small, sent_large)
# under ASan freed memory sits in its quarantine: the bound is the plain build's to check
if os.environ.get("KNEE_SANITIZED", "0") in ("0", "", "OFF", "FALSE", "false"):
    assert large < small + 16 * 1024, (small, large)
PY
# 11. HTTP/2 (h2c, and h2 over TLS): entries with and without placeholders, bodies included,
#     go through HTTP/2's own serialisation (each request's fields), every one answered
start_knee_serve h2 --preset null --h2
start_knee_serve h2t --preset null --h2 --tls
printf '{"method": "POST", "url": "http://%s/a/{{seq}}", "body": "x{{seq}}"}\n{"url": "http://%s/b", "body": "lit"}\n' \
    "$ADDR_h2" "$ADDR_h2" >"$TMP/t/h2.jsonl"
"$KNEE" run --targets "$TMP/t/h2.jsonl" --h2c -n 200 -c 2 --streams 4 --json "$TMP/h2.json" >/dev/null
json_check "$TMP/h2.json" 'identity(acc) and d["outcomes"]["ok"] == 200 and d["all"]["protocols"]["h2"] >= 1' "h2c: 200 ok"
sed "s|http://$ADDR_h2|https://$ADDR_h2t|g" "$TMP/t/h2.jsonl" >"$TMP/t/h2t.jsonl"
"$KNEE" run --targets "$TMP/t/h2t.jsonl" -k -R 400 -n 200 --json "$TMP/h2t.json" >/dev/null
json_check "$TMP/h2t.json" 'identity(acc) and d["outcomes"]["ok"] == 200 and d["all"]["protocols"]["h2"] >= 1' "h2 over TLS: 200 ok"
# 12. a file whose entries have names: one target per name, its share the sum of its entries'
#     weights, its entries in file order (each weight times a cycle); thresholds name them
start_capture nm
{
    printf '{"name": "browse", "url": "%s/p/1", "weight": 3}\n' "$CAP"
    printf '{"name": "checkout", "method": "POST", "url": "%s/c", "body": "x"}\n' "$CAP"
    printf '{"name": "browse", "url": "%s/p/2"}\n' "$CAP"
} >"$TMP/t/named.jsonl"
"$KNEE" run --targets "$TMP/t/named.jsonl" -R 500 -n 500 --threshold 'checkout.count==100' --json "$TMP/nm.json" \
    --out "$TMP/nm.csv" >/dev/null
json_check "$TMP/nm.json" '[(t["name"], t["accounting"]["planned"]) for t in d["targets"]] == [("browse", 400), ("checkout", 100)]' \
    "one target per name, 4:1 by weight"
json_check "$TMP/nm.json" 'd["outcomes"]["ok"] == 500 and d["thresholds"][0]["pass"]' "a threshold names a group"
capture_check nm 'sorted(r["target"] for r in reqs) == sorted(["/p/1"] * 300 + ["/p/2"] * 100 + ["/c"] * 100)' "each group's entries by weight"
# the order as planned (the log's planned send times: two threads' sends may reach the server
# in another order): browse's entries 0 and 2 (file order), weight 3 and 1
python3 - "$TMP/nm.csv" <<'PY' || fail "a group's entries in file order"
import csv, sys
rows = sorted((float(r["start_s"]), r["entry"]) for r in csv.DictReader(open(sys.argv[1])) if r["server"] == "browse")
assert [e for _, e in rows[:8]] == ["0", "0", "0", "2"] * 2, rows[:8]
PY
"$KNEE" run --targets "$TMP/t/named.jsonl" -R 500 -n 500 --dry-run |
    grep -q 'browse: requests from .*named.jsonl: 2 entries named browse (jsonl, sequential)' || fail "dry run: a group's entries"
printf '{"name": "a", "url": "%s/"}\n{"url": "%s/"}\n' "$CAP" "$CAP" >"$TMP/t/half.jsonl"
bad half-named "half.jsonl:2: an entry without a \"name\"" --targets "$TMP/t/half.jsonl"
printf '{"name": "a.b", "url": "%s/"}\n' "$CAP" >"$TMP/t/dot.jsonl"
bad dotted-name "dot.jsonl:1" --targets "$TMP/t/dot.jsonl"

# 13. fifty URLs on the command line: one row each in the summary, every table with --verbose
start_capture many
urls=()
for i in $(seq 1 50); do urls+=("$CAP/m$i"); done
"$KNEE" run "${urls[@]}" -R 500 -n 500 >"$TMP/many.txt"
grep -q '^targets: 50, one row each (--verbose: every target.s tables)$' "$TMP/many.txt" || fail "the compact per-target table"
[[ $(grep -cE '^  127\.0\.0\.1:[0-9]+(/m[0-9]+)? +10 +10 +0 ' "$TMP/many.txt") -eq 50 ]] || fail "50 rows of 10 requests"
(($(wc -l <"$TMP/many.txt") < 200)) || fail "fifty targets in under 200 lines ($(wc -l <"$TMP/many.txt"))"
! grep -q -- '--- target' "$TMP/many.txt" || fail "no per-target tables without --verbose"
"$KNEE" run "${urls[@]}" -R 500 -n 500 --verbose >"$TMP/many-v.txt"
[[ $(grep -c -- '^--- target' "$TMP/many-v.txt") -eq 50 ]] || fail "--verbose: every target's tables"
echo "run_targets: ok"
