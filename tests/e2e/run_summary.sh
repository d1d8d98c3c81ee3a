#!/usr/bin/env bash
# knee run's default summary of a clean run against knee serve fits a terminal: every line within
# 100 columns, at most 22 lines, led by the headline (requests/s over the window, p50/p99,
# errors, the verdict); --verbose still prints every table. A port nothing listens on: the run
# ends after 2 s with exit 3, the verdict naming the refused address, every output written, no
# GENERATOR-LIMITED (the target is the story, not the generator), in the open and the closed
# loop; with --keep-going it runs its whole duration.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s
DOWN=$(free_port)

# width_and_length FILE MAXLINES: every line within 100 columns (characters, not bytes), at most
# MAXLINES lines
width_and_length() {
    python3 - "$1" "$2" <<'PY' || fail "$1: $(cat "$1")"
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
wide = [l for l in lines if len(l) > 100]
assert not wide, "wider than 100 columns: %r" % wide
assert len(lines) <= int(sys.argv[2]), "%d lines, more than %s" % (len(lines), sys.argv[2])
PY
}

# a clean run (a hard lag limit: a loaded machine does not make it generator-limited, which is
# the full form, not the default this test is about)
run_knee run -R 200 -d 5s --lag-limit 50ms --json "$TMP/ok.json" "http://$ADDR_s/" >"$TMP/ok.txt" 2>"$TMP/ok.err"
[[ $RC -eq 0 ]] || fail "clean run: exit $RC: $(cat "$TMP/ok.err")"
width_and_length "$TMP/ok.txt" 22
grep -q '^requests/s  [0-9,.]* completed in the window 0.000 .. 5.000 s (planned 200.0, sent [0-9,.]*)$' "$TMP/ok.txt" ||
    fail "no requests/s headline: $(cat "$TMP/ok.txt")"
grep -q '^latency     p50 [0-9.]* ms   p99 [0-9.]* ms   max [0-9.]* ms   (1,000 requests, from the planned send)$' \
    "$TMP/ok.txt" || fail "no latency headline: $(cat "$TMP/ok.txt")"
grep -qx 'errors      none (1,000 sent)' "$TMP/ok.txt" || fail "no errors headline: $(cat "$TMP/ok.txt")"
grep -q '^verdict     valid: the generator kept its plan (100.00% sent on schedule, lag p99 ' "$TMP/ok.txt" ||
    fail "no verdict: $(cat "$TMP/ok.txt")"
# the plan (head, target, precision kept), a blank line, then the headline
[[ $(sed -n 3p "$TMP/ok.txt") == "  precision: lag p99 "* ]] || fail "no precision line: $(head -5 "$TMP/ok.txt")"
[[ $(sed -n 5p "$TMP/ok.txt") == "requests/s "* ]] || fail "the headline does not lead: $(head -6 "$TMP/ok.txt")"
grep -qx '  planned 1,000 = sent 1,000 + dropped 0  \[holds\]' "$TMP/ok.txt" || fail "planned vs sent"
grep -q '^server timing (ms): queue p50 ' "$TMP/ok.txt" || fail "knee serve's Server-Timing"
grep -q -- '--verbose: every table$' "$TMP/ok.txt" || fail "the default form does not point to --verbose"
! grep -q 'warnings' "$TMP/ok.txt" || fail "a clean run with warnings: $(cat "$TMP/ok.txt")"

# --verbose: every table, as before
run_knee run -R 200 -d 1s --lag-limit 50ms --verbose "http://$ADDR_s/" >"$TMP/v.txt" 2>"$TMP/v.err"
[[ $RC -eq 0 ]] || fail "--verbose: exit $RC: $(cat "$TMP/v.err")"
for want in 'latency (ms): planned send -> full response (T5 - T0), by outcome' \
    'service (ms): send -> full response (T5 - T1)' 'ttfb (ms): send -> first response byte' \
    "lag (ms): planned send -> actual send (T1 - T0), the generator's own delay" \
    '  rates per second over the window 0.000 .. 1.000 s (events inside it):' 'generator CPU: ' \
    'percentiles: HdrHistogram, 3 significant digits (value at rank ceil(p*n)); elapsed '; do
    grep -qF -- "$want" "$TMP/v.txt" || fail "--verbose lacks '$want': $(cat "$TMP/v.txt")"
done
grep -q '^requests/s  ' "$TMP/v.txt" || fail "--verbose: no headline"

# a refused port: ends after 2 s, exit 3, the cause; the outputs written
start=$SECONDS
run_knee run -R 200 -d 30s --json "$TMP/down.json" --out "$TMP/down.bin" "http://127.0.0.1:$DOWN/" \
    >"$TMP/down.txt" 2>"$TMP/down.err"
took=$((SECONDS - start))
[[ $RC -eq 3 ]] || fail "refused port: exit $RC, want 3: $(cat "$TMP/down.err")"
((took <= 15)) || fail "refused port: the 30 s run took $took s, not ending early"
grep -qx "verdict     FAILED: connection refused by 127.0.0.1:$DOWN: is the server up?" "$TMP/down.txt" ||
    fail "refused port: no verdict naming the cause: $(cat "$TMP/down.txt")"
grep -q "stopped early after 2 s: connection refused by 127.0.0.1:$DOWN: is the server up?" "$TMP/down.txt" ||
    fail "refused port: no early-end warning"
! grep -q 'GENERATOR-LIMITED' "$TMP/down.txt" || fail "refused port: GENERATOR-LIMITED: $(cat "$TMP/down.txt")"
[[ -s $TMP/down.bin ]] || fail "refused port: --out not written"
json_check "$TMP/down.json" '(d["no_ok"] and not d["generator_limited"] and not d["interrupted"] and d["window_s"] < 10
    and identity(acc) and any(w.startswith("stopped early after 2 s: connection refused by 127.0.0.1:") for w in d["warnings"]))' \
    "refused port JSON"

# the closed loop ends early too
start=$SECONDS
run_knee run -c 2 -d 30s "http://127.0.0.1:$DOWN/" >"$TMP/cdown.txt" 2>&1
[[ $RC -eq 3 && $((SECONDS - start)) -le 15 ]] || fail "closed loop, refused port: exit $RC after $((SECONDS - start)) s"
grep -q "^verdict     FAILED: connection refused by 127.0.0.1:$DOWN" "$TMP/cdown.txt" || fail "closed loop: no verdict"

# --keep-going: the whole duration
run_knee run -R 100 -d 3s --keep-going --json "$TMP/kg.json" "http://127.0.0.1:$DOWN/" >"$TMP/kg.txt" 2>"$TMP/kg.err"
[[ $RC -eq 3 ]] || fail "--keep-going: exit $RC, want 3: $(cat "$TMP/kg.err")"
json_check "$TMP/kg.json" '(d["no_ok"] and not d["generator_limited"] and d["window_s"] == 3 and acc["planned"] == 300
    and not any(w.startswith("stopped early") for w in d["warnings"]))' "--keep-going JSON"
! grep -q 'GENERATOR-LIMITED' "$TMP/kg.txt" || fail "--keep-going: GENERATOR-LIMITED: $(cat "$TMP/kg.txt")"

# a run shorter than 2 s is not cut: it ends when planned
run_knee run -R 50 -d 1s --json "$TMP/short.json" "http://127.0.0.1:$DOWN/" >/dev/null 2>&1
[[ $RC -eq 3 ]] || fail "short refused run: exit $RC"
json_check "$TMP/short.json" 'acc["planned"] == 50 and d["window_s"] == 1' "short refused run"
echo "1 passed, 0 failed"
