#!/usr/bin/env bash
# Sharded HTTP/3 runs and knee merge: two shards of one --http3 plan (--shard 0/2 and 1/2, one
# shared start instant) against the same knee serve --tls --h3; the merged JSON's outcomes,
# protocols.h3 and every quic counter are the shards' sums (the RTT minimum and maximum their
# least and largest), exactly, and match the server's own
# counts (its h3 requests, its QUIC connections); the plan check finds the whole plan; the
# merged summary has its h3 line.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
cd "$TMP"

start_knee_serve h --preset null --tls --h3
pids=()
for i in 0 1; do
    "$KNEE" run --http3 --insecure -c 2 -R 40 -d 1s -t 1 --shard "$i/2" --start-at "+1500ms@$TMP/h3.start" \
        --json "sh-$i.json" --hlog "sh-$i.hlog" "https://127.0.0.1:$PORT_h/" >"sh-$i.txt" 2>"sh-$i.err" &
    pids+=($!)
    sleep 0.25
done
for p in "${pids[@]}"; do wait "$p" || fail "a shard failed: $(cat sh-*.err)"; done
run_knee merge sh-0.json sh-1.json sh-0.hlog sh-1.hlog --json merged.json >merged.txt 2>&1
[[ $RC -eq 0 ]] || { cat merged.txt >&2; fail "knee merge exited $RC"; }
grep -q 'plan check: the shards planned 40 requests, the whole plan has 40 \[equal\]' merged.txt ||
    fail "plan check: $(grep 'plan check' merged.txt)"
grep -q '^h3: 40 streams on [0-9]* QUIC connections; datagrams ' merged.txt || fail "the h3 line: $(grep '^h3' merged.txt)"

kill -INT "$PID_h"
wait "$PID_h" || fail "the server exited with $?"
python3 - "$TMP/serve-h.out" <<'PY' || fail "the merged counts"
import json, re, sys
shards = [json.load(open("sh-%d.json" % i)) for i in (0, 1)]
m = json.load(open("merged.json"))
def tgt(d): return d["targets"][0]
errs = []
def eq(what, got, want):
    if got != want: errs.append("%s: merged %r, expected %r" % (what, got, want))
for k, v in m["outcomes"].items():
    eq("outcomes." + k, v, sum(s["outcomes"][k] for s in shards))
eq("outcomes.ok", m["outcomes"]["ok"], 40)
for s in shards:
    eq("a shard's protocols (h3 only)", {k: v for k, v in tgt(s)["protocols"].items() if k != "h3"}, {"http/1.1": 0, "h2": 0})
    if not 1 <= tgt(s)["protocols"]["h3"] <= 2: errs.append("a shard's QUIC connections: %r" % tgt(s)["protocols"])
eq("protocols.h3", tgt(m)["protocols"]["h3"], sum(tgt(s)["protocols"]["h3"] for s in shards))
q = tgt(m)["quic"]
for k, v in q.items():
    if isinstance(v, dict):
        keys = set(v) | set().union(*(tgt(s)["quic"][k].keys() for s in shards))
        for c in keys: eq("quic.%s.%s" % (k, c), v.get(c, 0), sum(tgt(s)["quic"][k].get(c, 0) for s in shards))
    elif k == "rtt_min_us":  # the least of the shards' (of those that measured one)
        eq("quic." + k, v, min([tgt(s)["quic"][k] for s in shards if tgt(s)["quic"]["rtt_connections"]] or [0]))
    elif k.endswith("_max_us"):  # the largest
        eq("quic." + k, v, max(tgt(s)["quic"][k] for s in shards))
    else:
        eq("quic." + k, v, sum(tgt(s)["quic"][k] for s in shards))
eq("quic.streams", q["streams"], 40)
# the server's final counters: every request over h3, one QUIC connection per protocols.h3
last = open(sys.argv[1]).read().strip().splitlines()[-1]  # "stopped ADDR (null) {...}"
final = json.loads(last[last.index("{"):])
eq("server h3 requests", final["h3"], 40)
eq("server requests", final["requests"], 40)
eq("server connections_total", final["connections_total"], tgt(m)["protocols"]["h3"])
if errs:
    print("FAIL: " + "; ".join(errs), file=sys.stderr); sys.exit(1)
print("ok: merged 40 requests over %d QUIC connections, every quic counter the shards' sum" % tgt(m)["protocols"]["h3"])
PY
echo "PASS"
