#!/usr/bin/env bash
# --timer-slack D (docs/INTERNALS.md "Open loop: what a send costs"): the open loop may send up
# to D late so that sends due within D share one wake-up. Shapes only, never absolute timings:
# every planned request is sent and accounted for, the lag the log records is the truth
# (sent - planned >= 0, its median within the slack plus the tolerance a loaded 2-core machine
# needs), sends leave together (a wake-up sends several), the JSON and the summary name the
# slack, and bad values exit 2 with one line naming the flag; without a slack no request
# leaves before its planned time although the timer is armed early.
# tier: exact timing
# The timing tier: the median lag within the slack and the tolerance, and sends leaving
# together, on a 2 s run; the exact tier the rest, on a 1 s run.
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve null --preset null --duration 120s
URL="http://127.0.0.1:$PORT_null/"

if in_tier timing; then
    # 2,000/s for 2 s with a 2 ms slack
    "$KNEE" run -R 2000 -d 2s -t 1 -c 20 --timer-slack 2ms --out "$TMP/s.csv" --json "$TMP/s.json" "$URL" \
        >"$TMP/s.txt" 2>&1 || { cat "$TMP/s.txt"; fail "knee run --timer-slack 2ms"; }
    json_check "$TMP/s.json" 'identity(acc) and acc["planned"] == 4000 and d["outcomes"]["ok"] == 4000' \
        "4000 planned, sent and ok"
    python3 - "$TMP/s.csv" <<'PY' || fail "lag and wake-ups with a slack"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 4000, len(rows)
lags = sorted(float(r["lag_ms"]) for r in rows)
# the slack is lateness asked for: the median send within it, plus 5 ms for a loaded machine
assert lags[len(lags) // 2] < 2 + 5.0, lags[len(lags) // 2]
# sends that share a wake-up leave within microseconds of each other; with 0.5 ms between
# planned sends and a 2 ms slack most wake-ups send several (without the slack, on a quiet
# machine, one each)
sent = sorted(float(r["start_s"]) + float(r["lag_ms"]) / 1e3 for r in rows)
bursts = 1 + sum(1 for a, b in zip(sent, sent[1:]) if b - a > 50e-6)
assert len(sent) / bursts >= 1.5, ("sends per wake-up", len(sent) / bursts)
PY
    in_tier exact || { echo "ok"; exit 0; }
fi

# 2,000/s for 1 s with a 2 ms slack: 2,000 planned, sent and ok
"$KNEE" run -R 2000 -d 1s -t 1 -c 20 --timer-slack 2ms --out "$TMP/x.csv" --json "$TMP/x.json" "$URL" \
    >"$TMP/x.txt" 2>&1 || { cat "$TMP/x.txt"; fail "knee run --timer-slack 2ms"; }
json_check "$TMP/x.json" 'identity(acc) and acc["planned"] == 2000 and d["outcomes"]["ok"] == 2000' \
    "2000 planned, sent and ok"
json_check "$TMP/x.json" 'd["config"]["timer_slack_ms"] == 2 and d["generator"]["timer_slack_ms"] == 2' \
    "the JSON names the slack asked for"
grep -q 'sends up to 2.000 ms late by --timer-slack' "$TMP/x.txt" || { cat "$TMP/x.txt"; fail "the summary names the slack"; }
python3 - "$TMP/x.csv" <<'PY' || fail "lag with a slack"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2000, len(rows)
lags = sorted(float(r["lag_ms"]) for r in rows)
assert lags[0] >= 0, lags[0]
PY

# without a slack the timer is armed before each send by the wake-up latency it measures
# (openloop.c sched_deadline), and a wake that comes early polls until the planned time: no
# request leaves before it (every lag >= 0; the lag histogram, which refuses negative values,
# holds every send)
"$KNEE" run -R 4000 -d 1s -t 1 -c 20 --out "$TMP/f.csv" --json "$TMP/f.json" "$URL" \
    >"$TMP/f.txt" 2>&1 || { cat "$TMP/f.txt"; fail "knee run at full precision"; }
json_check "$TMP/f.json" 'identity(acc) and acc["planned"] == 4000 and d["all"]["lag"]["count"] == 4000' \
    "4000 planned, sent, and in the lag histogram"
python3 - "$TMP/f.csv" <<'PY' || fail "no send before its planned time"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 4000, len(rows)
assert min(float(r["lag_ms"]) for r in rows) >= 0
PY

# the summary's plan names the precision kept and its price (exact: the line's shape; the
# numbers are the run's own lag p99 and generator CPU over requests sent)
grep -Eq '^  precision: lag p99 [0-9]+\.[0-9]{3} ms; generator CPU [0-9]+\.[0-9] us per request sent(; kernel-timed reads)?$' "$TMP/x.txt" ||
    { cat "$TMP/x.txt"; fail "the plan's precision line"; }
python3 - "$TMP/x.json" "$TMP/x.txt" <<'PY' || fail "the precision line agrees with the JSON"
import json, re, sys
d = json.load(open(sys.argv[1]))
line = next(l for l in open(sys.argv[2]) if l.startswith("  precision: "))
lag, cpu = re.match(r"  precision: lag p99 ([0-9.]+) ms; generator CPU ([0-9.]+) us", line).groups()
assert abs(float(lag) - d["all"]["lag"]["p99"]) < 0.0011, (lag, d["all"]["lag"]["p99"])
g = d["environment"]["generator_cpu"]
sent = d["all"]["accounting"]["sent"] + d["all"]["warmup"]["sent"]
want = (g["user_s"] + g["sys_s"]) * 1e6 / sent
assert abs(float(cpu) - want) <= 0.051 + want * 1e-3, (cpu, want)
PY

# a plain run names no slack (0), and its precision all the same
"$KNEE" run -R 200 -d 1s -t 1 --json "$TMP/p.json" "$URL" >"$TMP/p.txt" 2>&1 || fail "plain run"
json_check "$TMP/p.json" 'd["config"]["timer_slack_ms"] == 0 and identity(acc)' "no slack: 0"
json_check "$TMP/p.json" '"timer_slack_auto" not in d["config"]' "no auto"
! grep -q 'timer-slack' "$TMP/p.txt" || fail "a plain run mentions no slack"
grep -Eq '^  precision: lag p99 [0-9]+\.[0-9]{3} ms; generator CPU [0-9]+\.[0-9] us per request sent(; kernel-timed reads)?$' "$TMP/p.txt" ||
    { cat "$TMP/p.txt"; fail "a plain run's precision line"; }

# --timer-slack auto: the plan says the rule, the precision line the slack it kept (1% of the
# service p50 of a null service: well under 1 ms), the JSON both
"$KNEE" run -R 1000 -d 1s -t 1 --timer-slack auto --json "$TMP/a.json" "$URL" >"$TMP/a.txt" 2>&1 ||
    { cat "$TMP/a.txt"; fail "knee run --timer-slack auto"; }
grep -Eq '^knee run: open loop, constant arrivals, 1,000.0/s, (pool up to 10,000 connections \(queue when busy\), )?sends up to 1% of the service p50 late \(at most 1.000 ms\) by --timer-slack auto, 1 s, 1 thread' "$TMP/a.txt" ||
    { cat "$TMP/a.txt"; fail "the plan names the auto rule"; }
grep -Eq '^  precision: lag p99 [0-9]+\.[0-9]{3} ms \(--timer-slack auto kept at most [0-9]+\.[0-9]{3} ms\); generator CPU [0-9]+\.[0-9] us per request sent(; kernel-timed reads)?$' "$TMP/a.txt" ||
    { cat "$TMP/a.txt"; fail "the precision line names the slack auto kept"; }
json_check "$TMP/a.json" 'd["config"]["timer_slack_auto"] is True and 0 <= d["config"]["timer_slack_ms"] <= 1 and identity(acc) and acc["planned"] == 1000' \
    "auto: the JSON says so, the slack kept within [0, 1 ms]"

# bad values: exit 2, one line naming the flag
expect2() {
    local pattern=$1
    shift
    run_knee run "$@" >"$TMP/out" 2>"$TMP/err"
    [[ $RC -eq 2 ]] || { cat "$TMP/err"; fail "exit $RC, not 2, for: $*"; }
    [[ $(wc -l <"$TMP/err") -eq 1 ]] || { cat "$TMP/err"; fail "more than one line for: $*"; }
    grep -q -- "$pattern" "$TMP/err" || { cat "$TMP/err"; fail "no '$pattern' in the message for: $*"; }
}
expect2 '--timer-slack' -R 100 -d 1s --timer-slack banana "$URL"
expect2 '--timer-slack' -R 100 -d 1s --timer-slack -1ms "$URL"
expect2 '--timer-slack must be at most 100 ms' -R 100 -d 1s --timer-slack 1s "$URL"
expect2 '--timer-slack applies to the open loop' -d 1s --timer-slack 1ms "$URL"
expect2 '--timer-slack and --spin' -R 100 -d 1s --timer-slack 1ms --spin 20us "$URL"
expect2 '--timer-slack applies to the open loop' -d 1s --timer-slack auto "$URL"
expect2 '--timer-slack and --spin' -R 100 -d 1s --timer-slack auto --spin 20us "$URL"
expect2 "--timer-slack: 'Auto' is not a duration such as 1ms, or auto" -R 100 -d 1s --timer-slack Auto "$URL"
run_knee capacity --rates 20 --slo 'p99<1s' --timer-slack auto "$URL" >"$TMP/out" 2>"$TMP/err"
[[ $RC -eq 2 ]] && grep -q -- '--timer-slack auto is knee run' "$TMP/err" || { cat "$TMP/err"; fail "capacity refuses auto"; }
echo "ok"
