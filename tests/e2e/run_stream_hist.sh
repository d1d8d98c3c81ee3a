#!/usr/bin/env bash
# Streamed responses' histograms beyond the run's JSON, against knee serve --preset stream:
# --hlog tags first_event/NAME and event_gap/NAME whose counts add up to the JSON's exactly
# (knee hlog stats reads them, its "all" row is the latency alone); --abort-if on event_gap and
# first_event fires (exit 99, the rule in the JSON) or stays quiet; two shards merged by knee
# merge add up their stream counts and histograms exactly.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_knee_serve s --preset stream --seed 3
U="http://127.0.0.1:$PORT_s/?events=5&gap_ms=20&first_ms=10&stall_p=0"

# --hlog: the stream tags, their counts equal to the JSON's
"$KNEE" run --target st="$U" -R 20 -d 2s --hlog "$TMP/r.hlog" --json "$TMP/r.json" >/dev/null
grep -q '^Tag=st,' "$TMP/r.hlog" || fail "no latency intervals"
grep -q '^Tag=first_event/st,' "$TMP/r.hlog" || fail "no first_event intervals"
grep -q '^Tag=event_gap/st,' "$TMP/r.hlog" || fail "no event_gap intervals"
"$KNEE" hlog stats "$TMP/r.hlog" --json >"$TMP/h.json" || fail "knee hlog stats"
python3 - "$TMP/r.json" "$TMP/h.json" <<'PY' || fail "hlog counts against the JSON"
import json, sys
run = json.load(open(sys.argv[1])); h = json.load(open(sys.argv[2]))
st = run["targets"][0]["stream"]
g = h["groups"]
assert st["responses"] == 40 and st["events"] == 200, st
assert g["first_event/st"]["count"] == st["first_event"]["count"] == 40, g
assert g["event_gap/st"]["count"] == st["event_gap"]["count"] == 160, g
assert g["st"]["count"] == run["targets"][0]["latency"]["count"]
assert h["all"]["count"] == g["st"]["count"], ("all is the latency alone", h["all"])
assert g["first_event/st"]["min"] >= 10, g["first_event/st"]
print("hlog counts agree")
PY
"$KNEE" stats "$TMP/r.hlog" >"$TMP/hs.txt" || fail "knee stats FILE.hlog"
grep -q '^event_gap/st ' "$TMP/hs.txt" || fail "knee stats: an event_gap/st row"

# --abort-if on the gaps: 20 ms gaps hold event_gap.p99>5ms at once; first_event.p99>5s never
RC=0
"$KNEE" run -R 20 -d 30s --abort-if 'event_gap.p99[1s]>5ms' --json "$TMP/a.json" "$U" >"$TMP/a.txt" 2>"$TMP/a.err" || RC=$?
[[ $RC -eq 99 ]] || { cat "$TMP/a.err"; fail "event_gap rule: exit $RC (want 99)"; }
grep -q 'ABORTED at .* --abort-if event_gap.p99\[1s\]>5ms holds' "$TMP/a.err" || fail "the abort is said"
json_check "$TMP/a.json" 'd["aborted"]["rule"] == "event_gap.p99[1s]>5ms"' "aborted.rule"
RC=0
"$KNEE" run -R 20 -d 2s --abort-if 'first_event.p99[1s]>5s' --json "$TMP/c.json" "$U" >/dev/null 2>&1 || RC=$?
[[ $RC -eq 0 ]] || fail "a first_event rule that never holds: exit $RC"
json_check "$TMP/c.json" 'd["aborted"] is None' "first_event rule quiet"
RC=0
"$KNEE" run -R 20 -d 1s --abort-if 'first_event.error_rate[1s]>1%' "$U" >/dev/null 2>"$TMP/bad.err" || RC=$?
[[ $RC -eq 2 ]] || fail "first_event.error_rate: exit $RC (want 2)"
grep -qF -- "--abort-if 'first_event.error_rate[1s]>1%': " "$TMP/bad.err" || fail "the bad rule is named"

# two shards merged: the stream counts and histograms add up exactly
for i in 0 1; do
    "$KNEE" run -R 20 -n 30 -t 1 --shard "$i/2" --json "$TMP/s$i.json" --hlog "$TMP/s$i.hlog" "$U" >/dev/null 2>&1 ||
        fail "shard $i"
done
run_knee merge "$TMP/s0.json" "$TMP/s1.json" --json "$TMP/m.json" >"$TMP/m.txt" 2>&1
[[ $RC -eq 0 ]] || { cat "$TMP/m.txt"; fail "knee merge: exit $RC"; }
python3 - "$TMP/s0.json" "$TMP/s1.json" "$TMP/m.json" <<'PY' || fail "merged stream counts"
import json, sys
a, b, m = (json.load(open(p)) for p in sys.argv[1:])
sa, sb, sm = (x["all"]["stream"] for x in (a, b, m))
assert sa["responses"] + sb["responses"] == sm["responses"] == 30, (sa["responses"], sb["responses"], sm["responses"])
assert sm["events"] == 150 and sm["events_per_response"]["min"] == sm["events_per_response"]["max"] == 5, sm
assert sm["first_event"]["count"] == 30 and sm["event_gap"]["count"] == 120, sm
assert sm["first_event"]["max"] == max(sa["first_event"]["max"], sb["first_event"]["max"])
assert sm["event_gap"]["max"] == max(sa["event_gap"]["max"], sb["event_gap"]["max"])
assert m["targets"][0]["stream"]["events"] == 150
print("merged exactly")
PY
grep -q '^  first event ' "$TMP/m.txt" || fail "the merged summary has a first event row"
# knee compare: the repetitions' first events and gaps (their hlogs beside the binary logs)
# compared as latency is; the counts exact
for side in b a; do
    "$KNEE" run -R 20 -d 1s --repeat 3 --out-dir "$TMP/$side" "$U" >/dev/null 2>&1 || fail "--repeat ($side)"
done
grep -q '^Tag=event_gap/' "$TMP/b/rep-1.hlog" || fail "--repeat: the repetitions' hlogs have the stream tags"
run_knee compare --before "$TMP/b" --after "$TMP/a" --json "$TMP/cmp.json" >"$TMP/cmp.txt" 2>&1
[[ $RC -eq 0 ]] || { cat "$TMP/cmp.txt"; fail "knee compare: exit $RC"; }
python3 - "$TMP/cmp.json" <<'PY' || fail "compare: the stream rows"
import json, sys
d = json.load(open(sys.argv[1]))
fe, gap = d["stream"]["first_event"], d["stream"]["event_gap"]
assert fe["requests_before"] == fe["requests_after"] == 60, fe
assert gap["requests_before"] == gap["requests_after"] == 240, gap
assert "p99" in gap["metrics"] and gap["verdict"], gap
PY
"$KNEE" compare --before "$TMP/b" --after "$TMP/a" >"$TMP/cmp.txt" 2>&1 || true
grep -q '^first event (60 values before, 60 after)' "$TMP/cmp.txt" || { cat "$TMP/cmp.txt"; fail "compare: a first event table"; }
grep -q '^event gap (240 values before, 240 after)' "$TMP/cmp.txt" || fail "compare: an event gap table"
echo ok
