#!/usr/bin/env bash
# knee run --stages of clients (closed loop, 2c:2s,2..6c:3s,1c:2s) against knee serve answering
# every request in 100 ms: the dry run prints each stage with its clients; the run's JSON has one
# stage per stage (unit "clients"), every sent request completes (a retired client's request is
# never cut: errors 0, cancelled 0), the per-request log never shows more requests in flight than
# the stages allow (2 before client 3 starts at 2.75 s, 5 at most: the ramp's floor), the text
# and stage thresholds name the stages, two shards merge, and bad specs exit 2. Timing part
# (apart): the in-flight maximum of each stage is its client count, and each stage completes
# about clients / 100 ms requests per second.
# tier: exact timing
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s -p quiet --pool 0 --hit-ms 100 --miss-ms 100
U="http://127.0.0.1:$PORT_s/"
SPEC='2c:2s,2..6c:3s,1c:2s'

# inflight CSV A B: the most requests in flight at any ms of [A, B) s (from the CSV request log)
inflight() {
    python3 - "$@" <<'PY'
import csv, sys
rows = [(float(r["start_s"]), float(r["start_s"]) + float(r["latency_ms"]) / 1e3) for r in csv.DictReader(open(sys.argv[1]))]
a, b = float(sys.argv[2]), float(sys.argv[3])
print(max(sum(1 for s, e in rows if s <= t / 1e3 < e) for t in range(int(a * 1e3), int(b * 1e3))))
PY
}

run_knee run --stages "$SPEC" --json "$TMP/r.json" --out "$TMP/r.csv" --threshold 'stage2.completed_per_s>0' "$U" \
    >"$TMP/r.out" 2>&1
[[ $RC -eq 0 ]] || { cat "$TMP/r.out"; fail "run exit $RC"; }

if in_tier exact; then
    out=$("$KNEE" run --dry-run --stages "$SPEC" "$U")
    grep -q '^knee run: closed loop, 3 stages up to 6 clients, 7 s' <<<"$out" || fail "dry-run head: $out"
    grep -qE '^    stage 2  2 -> 6 clients +3s  from 2 s$' <<<"$out" || fail "dry-run stage 2: $out"
    out=$("$KNEE" run --dry-run --stages "$SPEC" --shard 1/2 "$U")
    grep -qE '^    stage 2  2 -> 6 clients +3s  from 2 s  \[1 -> 3\]$' <<<"$out" || fail "dry-run shard: $out"

    json_check "$TMP/r.json" 'len(d["stages"]) == 3 and [s["index"] for s in d["stages"]] == [1, 2, 3]' "stage count"
    json_check "$TMP/r.json" '[(s["from"], s["to"], s["unit"], s["duration_s"]) for s in d["stages"]] == [(2, 2, "clients", 2), (2, 6, "clients", 3), (1, 1, "clients", 2)]' "the stages as planned"
    json_check "$TMP/r.json" 'd["config"]["mode"] == "closed" and [s["unit"] for s in d["config"]["stages"]] == ["clients"] * 3' "config.stages"
    json_check "$TMP/r.json" 'all(identity(s) for s in d["stages"])' "stage identities"
    json_check "$TMP/r.json" 'sum(s["planned"] for s in d["stages"]) == acc["planned"] and all(s["planned"] > 0 for s in d["stages"])' "the stages add up to the run"
    json_check "$TMP/r.json" 'acc["outcomes"]["ok"] == acc["sent"] == acc["planned"] and all(s["completed"] == s["sent"] == s["outcomes"]["ok"] for s in d["stages"])' "every sent request completed, none cut"
    json_check "$TMP/r.json" 'all(t["pass"] for t in d["thresholds"])' "stage threshold"
    # each client has at most one request in flight, and only while its stage runs it (or it is
    # finishing the one it had): 2 clients until 2.75 s, never more than 5 (6 is the ramp's end)
    [[ $(inflight "$TMP/r.csv" 0 2.75) -le 2 ]] || fail "more than 2 in flight before 2.75 s"
    [[ $(inflight "$TMP/r.csv" 0 8) -le 5 ]] || fail "more than 5 in flight"
    [[ $(($(wc -l <"$TMP/r.csv") - 1)) -eq $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["all"]["accounting"]["planned"])' "$TMP/r.json") ]] ||
        fail "the log has a row per request"
    grep -q '^knee run: closed loop, 3 stages up to 6 clients, 7 s' "$TMP/r.out" || fail "summary head: $(cat "$TMP/r.out")"
    grep -qE '^  #   clients ' "$TMP/r.out" || fail "stage table head: $(cat "$TMP/r.out")"
    grep -qE '^  2   2 -> 6 clients +3s ' "$TMP/r.out" || fail "stage 2's row: $(cat "$TMP/r.out")"
    grep -qE '^  3   1 client +2s ' "$TMP/r.out" || fail "stage 3's row: $(cat "$TMP/r.out")"

    # two shards of a shorter plan, merged: the stages add up
    SH=()
    for i in 0 1; do
        "$KNEE" run --stages '2c:1s,4c:1s' --shard $i/2 --json "$TMP/s$i.json" "$U" >"$TMP/s$i.out" 2>&1 &
        SH+=($!)
        PIDS+=($!)
    done
    for p in "${SH[@]}"; do wait "$p" || fail "a shard failed: $(cat "$TMP"/s?.out)"; done
    json_check "$TMP/s1.json" '[s["unit"] for s in d["stages"]] == ["clients", "clients"]' "shard stages"
    run_knee merge "$TMP/s0.json" "$TMP/s1.json" --json "$TMP/m.json" >"$TMP/m.out" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/m.out"; fail "merge exit $RC"; }
    python3 - "$TMP/s0.json" "$TMP/s1.json" "$TMP/m.json" <<'PY' || fail "merged stages"
import json, sys
a, b, m = (json.load(open(p)) for p in sys.argv[1:])
assert [s["planned"] for s in m["stages"]] == [x["planned"] + y["planned"] for x, y in zip(a["stages"], b["stages"])]
assert [s["unit"] for s in m["stages"]] == ["clients", "clients"]
PY

    # an abort rule naming a closed-loop stage fires in that stage
    run_knee run --stages '1c:1s,2c:2s' --abort-if 'stage2.p99[1s]>1ms' --json "$TMP/a.json" "$U" >"$TMP/a.out" 2>&1
    [[ $RC -eq 99 ]] || { cat "$TMP/a.out"; fail "abort exit $RC"; }
    json_check "$TMP/a.json" 'd["aborted"]["rule"] == "stage2.p99[1s]>1ms" and d["aborted"]["at_s"] >= 1' "aborted in stage 2"

    # bad input: exit 2, one line naming the stage or the flags
    bad() {
        local want=$1
        shift
        run_knee run --dry-run "$@" "$U" >/dev/null 2>"$TMP/bad.err"
        [[ $RC -eq 2 ]] || fail "exit $RC for $*"
        grep -qF -- "$want" "$TMP/bad.err" || fail "message for $*: $(cat "$TMP/bad.err")"
    }
    bad "--stages: stage 2 '10:1s': give all stages as rates or all as clients (Nc), not a mix" --stages '4c:1s,10:1s'
    bad "--stages of clients and --connections: give one" --stages '4c:1s' -c 4
    bad "--stages: stage 1 '1.5c:1s': expected clients such as 4c or 4..64c" --stages '1.5c:1s'
    bad "--stages: every stage has clients 0" --stages '0c:1s'
    bad "--stages of clients (Nc) make a closed loop" --stages '4c:1s' --target "a=$U@10"
    bad "--target a: @Nc and --stages of clients: give one" --stages '4c:1s' --target "a=$U@2c"
fi

if in_tier timing; then
    # the most requests in flight in each stage's steady part is its count (a loaded machine may
    # delay a send by a few ms, not by the ~0.6 s windows below)
    [[ $(inflight "$TMP/r.csv" 0.2 1.9) -eq 2 ]] || fail "stage 1: not 2 in flight"
    [[ $(inflight "$TMP/r.csv" 4.35 4.95) -eq 5 ]] || fail "stage 2's end: not 5 in flight"
    [[ $(inflight "$TMP/r.csv" 5.3 6.9) -eq 1 ]] || fail "stage 3: not 1 in flight"
    # done/s: clients / 100 ms (stage 2: its floor's mean, 3.5 clients)
    json_check "$TMP/r.json" 'all(abs(s["rates"]["completed"] - want) <= 0.25 * want for s, want in zip(d["stages"], [20, 35, 10]))' "stage rates"
fi
