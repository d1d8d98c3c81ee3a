#!/usr/bin/env bash
# The gaps between events in the binary request log (knee run --stream X --out x.bin, X not
# off): against knee serve --preset stream, the log read by an independent reader of the layout
# docs/FORMATS.md gives (version 2, flag 0x0002, u32 n + n u64 gaps after each record): every
# ok record of N events has N-1 gaps, the log's gaps are the run's event_gap histogram's (count
# and p99 through knee stats --column event_gap_ms), HTTP/2 and chunks too, the warm-up left out
# as the run leaves it out, a timed-out stream's gaps so far, the rule (no --stream or --stream
# off: version 1, and event_gap_ms refused with exit 2), the CSV unchanged, and knee merge of two
# shards' logs keeping every gap.
# tier: exact timing
# The timing tier: the gaps' median from the log is about the server's gap_ms.
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_knee_serve s --preset stream --h2 --seed 3
N=6
G=20
U="http://127.0.0.1:$PORT_s/?events=$N&gap_ms=$G&first_ms=5&stall_p=0"

# log_gaps FILE: the log read by the layout alone; prints "version records ok_records gaps" and
# checks every record: its gap list fits its events (n <= events - 1), a record not timed has
# none, and no byte is left over
log_gaps() {
    python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89KRQ\r\n\x1a\n", "magic"
version, flags, header_size, record_size, ntargets = struct.unpack_from("<HHIII", b, 8)
gaps_flag = bool(flags & 2)
assert gaps_flag == (version == 2), (version, flags)
pos, records, ok, total, short = header_size, 0, 0, 0, 0
while pos < len(b):
    rec = b[pos:pos + record_size]
    assert len(rec) == record_size, "partial record"
    outcome = rec[58]
    events = struct.unpack_from("<I", rec, 88)[0]
    pos += record_size
    n = 0
    if gaps_flag:
        n = struct.unpack_from("<I", b, pos)[0]
        pos += 4
        gaps = struct.unpack_from("<%dQ" % n, b, pos)
        pos += 8 * n
        assert (n == 0) if events < 2 else (n <= events - 2), (records, n, events)
        short += events >= 2 and n < events - 2
    records += 1
    ok += outcome == 0
    total += n
assert pos == len(b), "bytes left over"
print(version, records, ok, total, short)
PY
}

# gap_stats FILE.bin: knee stats --column event_gap_ms as JSON (count, p50, p99 as knee run
# summarises them)
gap_stats() {
    "$KNEE" stats --column event_gap_ms --json "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
a = d["as_knee_run"]["all"]
print(a["count"], a["p50"], a["p99"], d["rows"]["read"], d["rows"]["filtered_warmup"])'
}

if in_tier timing; then
    "$KNEE" run --stream sse -R 10 -d 2s --out "$TMP/t.bin" "$U" >/dev/null
    read -r _ p50 _ _ _ < <(gap_stats "$TMP/t.bin")
    python3 -c "import sys; sys.exit(0 if $((G - 2)) <= $p50 <= $((G + 10)) else 1)" ||
        fail "the log's gap median $p50 ms is not about gap_ms=$G"
    echo "ok: gap median $p50 ms (gap_ms=$G)"
    in_tier exact || { echo ok; exit 0; }
fi

# exact_log NAME URL ARGS...: knee run ARGS --json NAME.json --out NAME.bin against URL; then the
# log's gaps are exactly the run's: N-1 for every ok record, their total the JSON's
# events - responses and its event_gap count, and knee stats' count and p99 the run's
exact_log() {
    local name=$1 url=$2
    shift 2
    "$KNEE" run "$@" --json "$TMP/$name.json" --out "$TMP/$name.bin" "$url" >/dev/null
    read -r version records ok total short < <(log_gaps "$TMP/$name.bin")
    [[ $version == 2 ]] || fail "$name: version $version, not 2"
    [[ $short == 0 ]] || fail "$name: $short records with fewer than events - 1 gaps"
    json_check "$TMP/$name.json" "d['outcomes']['ok'] == $ok == 20 and tot['stream']['responses'] == 20" "$name: 20 ok"
    json_check "$TMP/$name.json" "$total == ($N - 1) * 20 == tot['stream']['events'] - tot['stream']['responses'] == tot['stream']['event_gap']['count']" "$name: the log has every gap ($total)"
    read -r count _ p99 _ _ < <(gap_stats "$TMP/$name.bin")
    json_check "$TMP/$name.json" "$count == $total and abs($p99 - tot['stream']['event_gap']['p99']) <= tot['stream']['event_gap']['p99'] / 1000" "$name: knee stats' count $count and p99 $p99 are the run's"
    echo "ok: $name: $records records, $total gaps"
}
exact_log sse "$U" --stream sse -R 20 -d 1s
exact_log auto "$U" --stream auto -R 20 -d 1s
exact_log h2 "$U" --h2c --stream sse -R 20 -d 1s
exact_log chunks "$U" --stream chunks -R 20 -d 1s
exact_log h2chunks "$U" --h2c --stream chunks -R 20 -d 1s
# no time between events: several arrive in one read, their gaps 0 (the histogram's zeros)
BURST="http://127.0.0.1:$PORT_s/?events=$N&gap_ms=0&first_ms=5&stall_p=0"
exact_log burst "$BURST" --stream sse -R 20 -d 1s
python3 - "$TMP/burst.bin" <<'PY' || fail "burst: no zero gap in the log"
import struct, sys
b = open(sys.argv[1], "rb").read()
_, _, pos, size, _ = struct.unpack_from("<HHIII", b, 8)
zeros = 0
while pos < len(b):
    n = struct.unpack_from("<I", b, pos + size)[0]
    zeros += struct.unpack_from("<%dQ" % n, b, pos + size + 4).count(0)
    pos += size + 4 + 8 * n
assert zeros > 0, zeros
print("ok: burst: %d gaps of 0" % zeros)
PY

# long lists: 30,000 events a response (a request's list and the writer's chunk grow; the
# closed loop's header flag beside the gaps flag)
LONG="http://127.0.0.1:$PORT_s/?events=30000&gap_ms=0&first_ms=1&stall_p=0"
"$KNEE" run --stream sse -n 3 -c 3 --json "$TMP/long.json" --out "$TMP/long.bin" "$LONG" >/dev/null
read -r version records ok total short < <(log_gaps "$TMP/long.bin")
[[ $(od -An -tu2 -j10 -N2 "$TMP/long.bin" | tr -d ' ') == 3 ]] || fail "long: header flags are not closed loop | gaps"
json_check "$TMP/long.json" "$ok == 3 and $short == 0 and $total == 3 * 29999 == tot['stream']['event_gap']['count']" "long lists: every gap ($total)"

# the warm-up: its records carry their gaps (flagged); knee stats leaves them out as the run's
# histogram does, and --keep-warmup counts them too
"$KNEE" run --stream sse -R 20 -d 2s --warmup 1s --json "$TMP/warm.json" --out "$TMP/warm.bin" "$U" >/dev/null
read -r _ records _ total _ < <(log_gaps "$TMP/warm.bin")
read -r count _ p99 read warm < <(gap_stats "$TMP/warm.bin")
[[ $records == 40 && $read == 40 && $warm == 20 && $total == $(((N - 1) * 40)) ]] ||
    fail "warm-up: $records records, $read read, $warm warm-up, $total gaps"
json_check "$TMP/warm.json" "$count == tot['stream']['event_gap']['count'] == ($N - 1) * 20 and abs($p99 - tot['stream']['event_gap']['p99']) <= tot['stream']['event_gap']['p99'] / 1000" "warm-up: knee stats leaves it out as the run does"
read -r count _ _ _ _ < <(gap_stats --keep-warmup "$TMP/warm.bin")
[[ $count == "$total" ]] || fail "--keep-warmup: $count gaps, the log holds $total"

# a stream that never ends in time: a timeout, its gaps so far in the log, as in the histogram
SLOW="http://127.0.0.1:$PORT_s/?events=1000&gap_ms=10&first_ms=1&stall_p=0"
"$KNEE" run --stream sse -n 4 -c 4 --timeout 300ms --json "$TMP/to.json" --out "$TMP/to.bin" "$SLOW" >/dev/null || true
read -r _ records _ total short < <(log_gaps "$TMP/to.bin")
json_check "$TMP/to.json" "d['outcomes']['timeout'] == 4 and $records == 4 and $total > 0 and $total == tot['stream']['event_gap']['count'] == tot['stream']['events'] - 4" "timed-out streams: their gaps so far ($total)"

# the rule: no --stream (auto by default), or --stream off: version 1, no gaps; the CSV is unchanged
for args in "" "--stream off"; do
    # shellcheck disable=SC2086
    "$KNEE" run $args -R 10 -d 1s --out "$TMP/v1.bin" "$U" >/dev/null
    read -r version records _ total _ < <(log_gaps "$TMP/v1.bin")
    [[ $version == 1 && $records == 10 && $total == 0 ]] || fail "'$args': version $version, $records records"
    run_knee stats --column event_gap_ms "$TMP/v1.bin" >/dev/null 2>"$TMP/v1.err"
    [[ $RC -eq 2 ]] || fail "event_gap_ms of a log without gaps: exit 2 (got $RC)"
    grep -q 'event_gap_ms: this log carries no gaps' "$TMP/v1.err" || { cat "$TMP/v1.err" >&2; fail "event_gap_ms without gaps: said"; }
done
"$KNEE" run --stream sse -R 10 -d 1s --out "$TMP/s.csv" "$U" >/dev/null
head -1 "$TMP/s.csv" | grep -qx 'server,start_s,latency_ms,service_ms,ttfb_ms,lag_ms,status,outcome,bytes,connection,warmup,tls_ms,protocol,tls,entry,first_event_ms,events' ||
    fail "the CSV's columns changed"
# a per-gap column is a value column only
run_knee stats --column latency_ms --where event_gap_ms=1 "$TMP/sse.bin" >/dev/null 2>"$TMP/w.err"
[[ $RC -eq 2 ]] && grep -q 'one value per gap' "$TMP/w.err" || fail "--where event_gap_ms: exit 2 ($RC), said"
run_knee stats --column latency_ms --by event_gap_ms "$TMP/sse.bin" >/dev/null 2>"$TMP/b.err"
[[ $RC -eq 2 ]] && grep -q 'one value per gap' "$TMP/b.err" || fail "--by event_gap_ms: exit 2 ($RC), said"
# --by with event_gap_ms: one group per target, the same total
"$KNEE" run --stream sse -R 20 -d 1s --target a="$U" --target b="$U&x=1" --out "$TMP/two.bin" >/dev/null
read -r _ _ _ total _ < <(log_gaps "$TMP/two.bin")
"$KNEE" stats --column event_gap_ms --by server --json "$TMP/two.bin" | python3 -c "
import json, sys
g = json.load(sys.stdin)['groups']
assert sorted(g) == ['a', 'b'] and sum(v['count'] for v in g.values()) == $total, (g.keys(), $total)" ||
    fail "--by server: the gaps of each target"

# knee merge of two shards' logs keeps every gap (version 2), in the CSV no gap column
for i in 0 1; do
    "$KNEE" run --stream sse -R 20 -d 1s --shard "$i/2" --json "$TMP/sh-$i.json" --out "$TMP/sh-$i.bin" "$U" >/dev/null
done
read -r _ r0 _ t0 _ < <(log_gaps "$TMP/sh-0.bin")
read -r _ r1 _ t1 _ < <(log_gaps "$TMP/sh-1.bin")
run_knee merge "$TMP"/sh-[01].json "$TMP"/sh-[01].bin -o "$TMP/merged.bin" >"$TMP/merge.txt" 2>&1
[[ $RC -eq 0 ]] || { cat "$TMP/merge.txt" >&2; fail "knee merge exited $RC"; }
read -r version records _ total short < <(log_gaps "$TMP/merged.bin")
[[ $version == 2 && $records == $((r0 + r1)) && $total == $((t0 + t1)) && $total == $(((N - 1) * 20)) && $short == 0 ]] ||
    fail "merged log: version $version, $records records, $total gaps (shards: $r0 + $r1 records, $t0 + $t1 gaps)"
read -r count _ _ _ _ < <(gap_stats "$TMP/merged.bin")
[[ $count == "$total" ]] || fail "knee stats of the merged log: $count gaps, not $total"
echo ok
