#!/usr/bin/env bash
# knee run --shard I/N and knee merge, as separate processes against knee serve: the union of
# the shards' requests is the one-process plan request for request (constant mix with warm-up,
# Poisson, --requests, a ramp), shards started at different moments agree on the start
# instant (+D@FILE), the merged summary accounts for the whole plan; missing, duplicate and
# foreign shards are refused (exit 2); shards over TLS and h2 keep their tls and h2 lines; an
# interrupted shard is named and the merge marked INCOMPLETE (exit 1); a late shard's lag is
# counted; knee stats and knee report take the shards' files directly (knee stats over the
# shards' hlogs prints what it prints over the merged hlog; its refusals name the file).
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve null --preset null
U="http://127.0.0.1:$PORT_null"

# shards NAME N PLAN...: N shards of PLAN started 0.25 s apart, all at +1.5s from the first
# one's arrival (the file), each with --json/--out/--hlog
shards() {
    local name=$1 n=$2
    shift 2
    local start="$TMP/$name.start" i pids=()
    for ((i = 0; i < n; i++)); do
        "$KNEE" run "$@" -t 2 --shard "$i/$n" --start-at "+1500ms@$start" --json "$TMP/$name-$i.json" \
            --out "$TMP/$name-$i.bin" --hlog "$TMP/$name-$i.hlog" >"$TMP/$name-$i.txt" 2>"$TMP/$name-$i.err" &
        pids+=($!)
        sleep 0.25
    done
    for i in "${pids[@]}"; do
        wait "$i" || true
    done
}

# same_plan ONE.csv MERGED.csv: the same (target, planned time) multiset
same_plan() {
    python3 - "$1" "$2" <<'PY' || exit 1
import csv, sys
def plan(path):
    with open(path) as f:
        return sorted((r["server"], r["start_s"]) for r in csv.DictReader(f))
a, b = plan(sys.argv[1]), plan(sys.argv[2])
if a != b:
    diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    print("FAIL: one process planned %d requests, the shards %d; first difference at %d: %s vs %s"
          % (len(a), len(b), diff, a[diff:diff + 1], b[diff:diff + 1]), file=sys.stderr)
    sys.exit(1)
print("ok: %d requests, the same planned times" % len(a))
PY
}

check_plan() {
    local name=$1 n=$2
    shift 2
    "$KNEE" run "$@" -t 1 --out "$TMP/$name-one.csv" --json "$TMP/$name-one.json" >/dev/null 2>&1 ||
        fail "$name: the one-process run"
    shards "$name" "$n" "$@"
    run_knee merge "$TMP/$name"-[0-9]*.json "$TMP/$name"-[0-9]*.bin "$TMP/$name"-[0-9]*.hlog \
        -o "$TMP/$name-merged.csv" --json "$TMP/$name-merged.json" >"$TMP/$name-merge.txt" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/$name-merge.txt" >&2; fail "$name: knee merge exited $RC"; }
    same_plan "$TMP/$name-one.csv" "$TMP/$name-merged.csv"
    grep -q 'plan check: the shards planned .* \[equal\]' "$TMP/$name-merge.txt" || fail "$name: plan check"
    python3 - "$TMP/$name-one.json" "$TMP/$name-merged.json" <<'PY' || fail "$name: merged JSON"
import json, sys
one, m = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
tot = lambda d: d["all"]["accounting"]["planned"] + d["all"]["warmup"]["planned"]
assert tot(one) == tot(m), (tot(one), tot(m))
assert m["accounting_ok"] and m["shard"]["merged"] and m["shard"]["complete"], m["shard"]
assert [t["name"] for t in m["targets"]] == [t["name"] for t in one["targets"]]
assert abs(m["window_s"] - one["window_s"]) < 1e-6
assert m["all"]["latency"]["count"] == sum(t["latency"]["count"] for t in m["targets"])
PY
    echo "ok: $name: $n shards = one process"
}

check_plan mix 3 -R 2000 --target "a=$U/a" --target "b=$U/b" --mix a=3,b=1 -d 1500ms --warmup 500ms
check_plan poisson 3 -R 1500 --arrivals poisson --seed 7 -d 1500ms "$U/"
check_plan requests 4 -R 2000 -n 1777 "$U/"
check_plan ramp 2 --ramp 500:2500 -d 1500ms "$U/"

# the shards agreed on one instant although started 0.25 s apart
python3 - "$TMP"/mix-[0-9].json <<'PY' || fail "one start instant"
import json, sys
ds = [json.load(open(p)) for p in sys.argv[1:]]
assert len({d["shard"]["start_at_unix_ns"] for d in ds}) == 1
assert len({d["shard"]["t0_unix_ns"] for d in ds}) == 1
assert all(d["shard"]["start_skew_ms"] < 0 for d in ds), [d["shard"]["start_skew_ms"] for d in ds]
print("ok: shards started 0.25 s apart share the start instant")
PY

# refusals: exit 2 with the reason
refused() {
    local want=$1
    shift
    run_knee merge "$@" >"$TMP/ref.out" 2>"$TMP/ref.err"
    [[ $RC -eq 2 ]] || fail "merge $*: exit $RC, want 2"
    grep -q -- "$want" "$TMP/ref.err" || { cat "$TMP/ref.err" >&2; fail "merge: want '$want'"; }
    echo "ok: refused: $(head -1 "$TMP/ref.err")"
}
refused "missing shards 2 of 3" "$TMP/mix-0.json" "$TMP/mix-1.json"
refused "two JSONs" "$TMP"/mix-[0-9].json "$TMP/mix-1.json"
refused "not the shards of one plan" "$TMP"/mix-[0-9].json "$TMP/poisson-0.json"
refused "not a shard's output" "$TMP/mix-one.json"
refused "the hlog of shards 1, 2 of 3 is missing" "$TMP"/mix-[0-9].json "$TMP/mix-0.hlog"

# a shard interrupted half-way: named, the merge INCOMPLETE (exit 1)
start=$(($(date +%s) + 2))
for i in 0 1; do
    "$KNEE" run -R 500 -d 3s -t 1 --shard "$i/2" --start-at "$start" --progress --json "$TMP/int-$i.json" "$U/" \
        >/dev/null 2>"$TMP/int-$i.err" &
    eval "pid$i=\$!"
done
# Ctrl-C to shard 1 half-way: after its first --progress line (a second after the instant), not
# after a fixed sleep from `date`, which a loaded machine can stretch past the plan's end (or
# put before knee run's handler: a background job starts with SIGINT ignored)
for _ in $(seq 200); do
    grep -q '^\[' "$TMP/int-1.err" && break
    sleep 0.05
done
grep -q '^\[' "$TMP/int-1.err" || fail "interrupted shard: it never started: $(cat "$TMP/int-1.err")"
kill -INT "$pid1"
wait "$pid0" || true
wait "$pid1" || true
run_knee merge "$TMP"/int-[0-9].json --json "$TMP/int-merged.json" >"$TMP/int.txt" 2>&1
[[ $RC -eq 1 ]] || { cat "$TMP/int.txt" >&2; fail "interrupted shard: exit $RC, want 1"; }
grep -q 'INCOMPLETE: shard 1 of 2' "$TMP/int.txt" || fail "the failed shard is named"
json_check "$TMP/int-merged.json" 'not d["shard"]["complete"] and d["shard"]["shards"][1]["failed"] and not d["shard"]["shards"][0]["failed"]' \
    "merged JSON marks the failure"
echo "ok: an interrupted shard makes the merge INCOMPLETE (exit 1) and is named"

# a late shard: ready 0.7 s after the instant; its lag counts it. The instant and the wait are
# the shell's own clock reads, not a python start each (1.8 s apiece on a loaded machine: the
# late shard came more than the plan's 2 s after the instant, knee run refused the plan as past,
# exit 2, and set -e ended the test without a word); -d 3s leaves a slow start more room.
start_ns=$(($(date +%s%N) + 1000000000))
start_at=$(printf '%d.%09d' $((start_ns / 1000000000)) $((start_ns % 1000000000)))
"$KNEE" run -R 400 -d 3s -t 1 --shard 0/2 --start-at "$start_at" --json "$TMP/late-0.json" "$U/" >/dev/null 2>&1 &
p0=$!
while (($(date +%s%N) < start_ns + 700000000)); do sleep 0.02; done
run_knee run -R 400 -d 3s -t 1 --shard 1/2 --start-at "$start_at" --json "$TMP/late-1.json" "$U/" >"$TMP/late-1.txt" 2>&1
[[ $RC -eq 0 ]] || { cat "$TMP/late-1.txt"; fail "late shard: exit $RC"; }
wait "$p0" || true
json_check "$TMP/late-1.json" 'd["shard"]["start_skew_ms"] >= 650 and d["all"]["lag"]["max"] >= 600' "late shard's skew and lag"
grep -q 'after the shared start instant' "$TMP/late-1.txt" || fail "late shard warns"
run_knee merge "$TMP"/late-[0-9].json --json "$TMP/late.json" >"$TMP/late.txt" 2>&1
# shard 1, or shards 0 and 1 when a loaded machine (ASan beside other tests) made shard 0 late too
grep -Eq 'shards? ([0-9]+, )*1 started up to' "$TMP/late.txt" || { cat "$TMP/late.txt" >&2; fail "merge names the late shard"; }
json_check "$TMP/late.json" 'd["all"]["lag"]["max"] >= 600 and d["shard"]["start_skew_ms"]["max"] >= 650' "merged lag keeps it"
echo "ok: a late shard's lateness is lag in its JSON and in the merge"

# shards over TLS and HTTP/2: the merged summary keeps the tls and h2 lines, the handshakes,
# protocols and streams summed, the handshake histograms added
start_knee_serve tls --preset null --tls --h2
TLS_PORT=$PORT_tls
shards tls 2 -R 400 -d 1s -c 2 --insecure "https://127.0.0.1:$TLS_PORT/"
run_knee merge "$TMP"/tls-[0-9].json --json "$TMP/tls-merged.json" >"$TMP/tls-merge.txt" 2>&1
[[ $RC -eq 0 ]] || { cat "$TMP/tls-merge.txt" >&2; fail "tls: knee merge exited $RC"; }
grep -q '^tls: TLSv1.3, h2 (ALPN); handshakes [0-9]' "$TMP/tls-merge.txt" || { cat "$TMP/tls-merge.txt" >&2; fail "tls: the merged tls line"; }
grep -q '^tls: certificate verification OFF (--insecure)' "$TMP/tls-merge.txt" || fail "tls: the merge says --insecure"
grep -q '^h2: [0-9,]* streams on [0-9]* connections\? (server limit ' "$TMP/tls-merge.txt" || fail "tls: the merged h2 line"
python3 - "$TMP/tls-merged.json" "$TMP"/tls-[0-9].json <<'PY' || fail "tls: merged JSON sums the shards"
import json, sys
m, shards = json.load(open(sys.argv[1])), [json.load(open(p)) for p in sys.argv[2:]]
add = lambda f: sum(f(s["all"]) for s in shards)
a = m["all"]
assert a["protocols"]["h2"] == add(lambda t: t["protocols"]["h2"]) > 0, a["protocols"]
assert a["tls_versions"] == {"TLSv1.3": add(lambda t: t["tls_versions"]["TLSv1.3"])}, a["tls_versions"]
hs = lambda t: t["tls_handshakes"]["full"] + t["tls_handshakes"]["resumed"]
assert hs(a) == add(hs) and a["tls"]["count"] == add(lambda t: t["tls"]["count"]) == hs(a), (a["tls"], a["tls_handshakes"])
assert a["h2"]["streams"] == add(lambda t: t["h2"]["streams"]) == 400, a["h2"]
assert m["config"]["tls"]["verify"] is False and m["config"]["tls"]["alpn"] == "h2,http/1.1", m["config"]["tls"]
print("ok: tls: %d handshakes, %d streams summed" % (hs(a), a["h2"]["streams"]))
PY

# knee stats and knee report take the shards' files
"$KNEE" stats "$TMP"/mix-[0-9].bin >"$TMP/stats.txt"
grep -q '^inputs: all 3 shards of one run' "$TMP/stats.txt" || fail "knee stats labels shards"
run_knee stats "$TMP/mix-0.bin" "$TMP/mix-0.bin"
[[ $RC -eq 2 ]] || fail "knee stats: a shard twice must be refused"
"$KNEE" report "$TMP"/mix-[0-9].json "$TMP"/mix-[0-9].bin -o "$TMP/r.html" >"$TMP/report.txt"
grep -q '(1 run' "$TMP/report.txt" || { cat "$TMP/report.txt" >&2; fail "knee report: the shards are one run"; }
grep -q 'mix (3 shards merged)' "$TMP/r.html" || fail "knee report names the merged run"
echo "ok: knee stats and knee report read shards"

# knee stats over every shard's hlog: the numbers of the merged hlog, tag for tag (the same
# log, so the interval count and span too), labelled; refusals name the file (exit 2);
# several hlogs that are no shard's keep the one-file refusal
run_knee merge "$TMP"/mix-[0-9].hlog --hlog "$TMP/mixm.hlog" >/dev/null 2>&1
[[ $RC -eq 0 ]] || fail "merge --hlog exited $RC"
for cmd in stats "hlog stats"; do
    for win in "" "--from 1s"; do
        # shellcheck disable=SC2086
        $KNEE $cmd $win "$TMP"/mix-[0-9].hlog >"$TMP/hs.txt" || fail "knee $cmd over the shards' hlogs"
        # shellcheck disable=SC2086
        $KNEE $cmd $win "$TMP/mixm.hlog" >"$TMP/hm.txt" || fail "knee $cmd over the merged hlog"
        grep -q '^inputs: all 3 shards of one run (plan [0-9a-f]*, shared start ' "$TMP/hs.txt" ||
            fail "knee $cmd labels the shards' hlogs"
        diff <(sed '1,2d; 3s/^mix (3 shards merged): //' "$TMP/hs.txt") <(sed "1s|^$TMP/mixm.hlog: ||" "$TMP/hm.txt") ||
            fail "knee $cmd $win: the shards' hlogs differ from the merged hlog"
        # shellcheck disable=SC2086
        $KNEE $cmd $win --json "$TMP"/mix-[0-9].hlog >"$TMP/hs.json" 2>/dev/null
        # shellcheck disable=SC2086
        $KNEE $cmd $win --json "$TMP/mixm.hlog" >"$TMP/hm.json"
        python3 - "$TMP/hs.json" "$TMP/hm.json" <<'PY' || fail "knee $cmd $win --json: shards vs merged"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a.pop("file") == "mix (3 shards merged)"
b.pop("file")
assert a == b, (a, b)
assert sorted(a["groups"]) == ["a", "b"] and a["all"]["count"] > 0, a
PY
    done
done
echo "ok: knee stats over the shards' hlogs = knee stats over the merged hlog"
refused_stats() {
    local want=$1
    shift
    run_knee stats "$@" >"$TMP/ref.out" 2>"$TMP/ref.err"
    [[ $RC -eq 2 ]] || fail "stats $*: exit $RC, want 2"
    [[ ! -s "$TMP/ref.out" ]] || fail "stats $*: printed numbers it refused"
    grep -q -- "$want" "$TMP/ref.err" || { cat "$TMP/ref.err" >&2; fail "stats: want '$want'"; }
    echo "ok: stats refused: $(head -1 "$TMP/ref.err")"
}
refused_stats "two hlogs, $TMP/mix-1.hlog and $TMP/mix-1.hlog" "$TMP"/mix-[0-9].hlog "$TMP/mix-1.hlog"
refused_stats "missing shards 2 of 3" "$TMP/mix-0.hlog" "$TMP/mix-1.hlog"
refused_stats "$TMP/poisson-0.hlog is shard 0 of 3 .* not the shards of one plan" "$TMP"/mix-[0-9].hlog "$TMP/poisson-0.hlog"
refused_stats "$TMP/mixm.hlog: already a merge" "$TMP"/mix-[0-9].hlog "$TMP/mixm.hlog"
refused_stats "$TMP/mix-0.bin: a binary log, not an hlog" "$TMP"/mix-[0-9].hlog "$TMP/mix-0.bin"
refused_stats "unexpected argument '$TMP/mixm.hlog': usage: knee stats \[options\] FILE.hlog" "$TMP/mixm.hlog" "$TMP/mixm.hlog"
