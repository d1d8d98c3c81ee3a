#!/usr/bin/env bash
# Rates that mean what they say (docs/FORMATS.md "Rates"): every rate counts the events that happened inside
# the window it names. A generator pinned to one core and asked for far more than it can send
# reports the send rate the per-request log's own send timestamps give (within 1%: here to
# the request), well below the plan, with the late sends apart, the identities holding and
# the run ending by --duration + --drain; a run that keeps up reports sent = planned within
# 0.5%; a closed loop's rates are its counts over its window, as before; and the timeline's
# intervals inside the window add up to the window's sends.
# tier: exact timing
# The timing tier: that the run far behind ends by --duration + --drain, and that a run that
# keeps up sends as planned (within 0.5%); the exact tier the rest.
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve null -p null
URL="http://127.0.0.1:$PORT_null/"
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c 0)

if in_tier timing; then
    # far more than one pinned thread can send: the run still ends by duration + drain
    set +e
    "${PIN[@]}" "$KNEE" run -t 1 -R 1M -d 1s --drain 1s --json "$TMP/behind-t.json" "$URL" >"$TMP/behind-t.txt" 2>&1
    RC=$?
    set -e
    [[ $RC -eq 0 ]] || { cat "$TMP/behind-t.txt"; fail "behind: exit $RC"; }
    json_check "$TMP/behind-t.json" 'd["elapsed_s"] <= 1 + 1 + 2' "behind: the run ends by duration + drain"
    # a run that keeps up: sent = planned within 0.5% (a run knee calls generator-limited is the
    # machine's: timing_verdict)
    for attempt in 1 2; do
        "$KNEE" run -R 500 -d 2s --warmup 0.5s --json "$TMP/keep-t$attempt.json" "$URL" >/dev/null
        problem=$(python3 - "$TMP/keep-t$attempt.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if not (abs(d["rates"]["sent"] - d["rates"]["planned"]) <= 0.005 * d["rates"]["planned"] and d["rates"]["planned"] == 500):
    print("keeping up: sent %.1f/s, planned %.1f/s: not within 0.5%%" % (d["rates"]["sent"], d["rates"]["planned"]))
PY
)
        timing_verdict $attempt "$problem" "$(run_limited_why "$TMP/keep-t$attempt.json")" && break
    done
    in_tier exact || { echo "1 passed, 0 failed"; exit 0; }
fi

# The JSON's rates against the binary log: sends, completions and planned times counted by
# their own timestamps inside [window_start_s, window_end_s), the pace of the sends after the
# window's start, and the timeline's intervals inside the window.
check_log() {
    python3 - "$1" "$2" "$3" <<'PY' || fail "$3: rates against the log"
import json, struct, sys
d = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], "rb").read()
what = sys.argv[3]
assert raw[:8] == b"\x89KRQ\r\n\x1a\n"
_, _, hsize, rsize, _ = struct.unpack_from("<HHIII", raw, 8)
ws, we = round(d["window_start_s"] * 1e9), round(d["window_end_s"] * 1e9)
n = planned = sent = late = completed = ok = 0
sends = []
for off in range(hsize, len(raw), rsize):
    p, s, fb, done, conn, nbytes, tgt, cid, status, outcome, flags = struct.unpack_from("<QQQQQQIIHBB", raw, off)
    n += 1
    if ws <= p < we:
        planned += 1
    if s:
        if s >= ws:
            sends.append(s)
            if s < we:
                sent += 1
            else:
                late += 1
    if done and outcome not in (6, 7) and ws <= done < we:
        completed += 1
        ok += outcome == 0
acc, ev, r, w = d["all"]["accounting"], d["events"], d["rates"], d["window_s"]
assert n == acc["planned"] + d["all"]["warmup"]["planned"], (n, acc["planned"])
real_sent = sent / w
print("%s: planned %.1f/s, sent %.1f/s (log: %.1f/s), achieved %.1f/s over %.3f s, %d late sends; elapsed %.2f s"
      % (what, r["planned"], r["sent"], real_sent, r["achieved_send"] or 0, r["sending_s"] or 0, ev["sent_late"],
         d["elapsed_s"]))
assert abs(r["sent"] - real_sent) <= 0.01 * real_sent + 1e-9, (r["sent"], real_sent)
assert (ev["planned"], ev["sent"], ev["sent_late"], ev["completed"], ev["ok"]) == (planned, sent, late, completed, ok), \
    (ev, planned, sent, late, completed, ok)
if len(sends) > 1:
    pace = (len(sends) - 1) / ((max(sends) - min(sends)) / 1e9)
    assert abs(r["achieved_send"] - pace) <= 1e-6 * pace, (r["achieved_send"], pace)
tl = [t for t in d["timeline"] if t["start_s"] >= d["window_start_s"] - 1e-9
      and t["start_s"] + t["length_s"] <= d["window_end_s"] + 1e-9]
assert sum(t["sent"] for t in tl) == ev["sent"], (sum(t["sent"] for t in tl), ev["sent"])
assert abs(sum(t["sent"] for t in tl) - r["sent"] * w) < 1e-6 * max(1, ev["sent"])
PY
}

# 1. far more than one pinned thread can send
set +e
"${PIN[@]}" "$KNEE" run -t 1 -R 1M -d 1s --drain 1s --json "$TMP/behind.json" --out "$TMP/behind.bin" "$URL" \
    >"$TMP/behind.txt" 2>&1
RC=$?
set -e
[[ $RC -eq 0 ]] || { cat "$TMP/behind.txt"; fail "behind: exit $RC"; }
check_log "$TMP/behind.json" "$TMP/behind.bin" "one pinned thread at 1M/s"
json_check "$TMP/behind.json" 'd["accounting_ok"] and identity(acc)' "behind: the identities hold"
json_check "$TMP/behind.json" 'd["rates"]["sent"] < 0.5 * d["rates"]["planned"]' "behind: sent far below planned"
json_check "$TMP/behind.json" 'd["generator_limited"] and d["generator"]["short_send"]' "behind: generator-limited"
grep -q '^  sent [0-9,.]*/s over [0-9.]* s of sending (first to last send)$' "$TMP/behind.txt" ||
    fail "behind: the achieved rate line: $(cat "$TMP/behind.txt")"

# 2. a run at 500/s: its rates are its log's (that it keeps up is the timing tier's)
"$KNEE" run -R 500 -d 2s --warmup 0.5s --json "$TMP/keep.json" --out "$TMP/keep.bin" "$URL" >/dev/null
check_log "$TMP/keep.json" "$TMP/keep.bin" "500/s"

# 3. a closed loop: every send inside its window; the rates are the counts over the window
"$KNEE" run -c 4 -n 1000 --json "$TMP/closed.json" --out "$TMP/closed.bin" "$URL" >/dev/null
check_log "$TMP/closed.json" "$TMP/closed.bin" "closed loop"
json_check "$TMP/closed.json" 'd["events"]["sent_late"] == 0 and d["events"]["sent"] == acc["sent"] == 1000 and abs(d["rates"]["sent"] * d["window_s"] - 1000) < 1e-6' \
    "closed loop: sent / window"
echo "1 passed, 0 failed"
