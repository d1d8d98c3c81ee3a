#!/usr/bin/env bash
# knee lab end to end through the real binary: usage errors exit 2 with one line naming the
# flag, --help lists the experiments, and two short experiments run to completion with their
# sentences, their --out files (CSV in the article's columns, JSON that parses) and every
# accounting identity holding. Servers are in-process on free 127.0.0.1 ports; no children.
# tier: exact
set -euo pipefail
: "${KNEE:?KNEE must point at the knee binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

expect_usage() { # expect exit 2 and a message containing $1
    local want=$1; shift
    set +e
    "$KNEE" lab "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "knee lab $*: exit $rc, expected 2"
    grep -q -- "$want" "$tmp/err" || fail "knee lab $*: stderr lacks '$want': $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "knee lab $*: more than one line of error"
}

"$KNEE" lab --help >"$tmp/help"
for e in stats queue knee fanout nagle tls all --quick --duration --out --seed; do
    grep -q -- "$e" "$tmp/help" || fail "--help does not mention $e"
done
"$KNEE" --help | grep '^  lab ' >/dev/null || fail "knee --help does not list lab"

expect_usage "unknown experiment 'nosuch'" nosuch
expect_usage "--duration" --duration 500ms
expect_usage "--rates" knee --rates 10,,20
expect_usage "--rates applies to the knee" queue --rates 10
expect_usage "--seed" --seed banana
expect_usage "--quiet and --progress exclude each other" --quiet --progress

# Progress in a pipe: nothing during a round unless asked; with --progress, plain lines (no
# carriage return, no escape code) every 5 s of a round.
"$KNEE" lab nagle --duration 5s --warmup 1s >"$tmp/nagle.txt" 2>"$tmp/nagle.err" || fail "knee lab nagle exited $?"
if grep -q ' s of ' "$tmp/nagle.err"; then fail "progress lines in a pipe without --progress: $(cat "$tmp/nagle.err")"; fi
"$KNEE" lab nagle --duration 5s --warmup 1s --progress >"$tmp/nagle.txt" 2>"$tmp/nagle.err" ||
    fail "knee lab nagle --progress exited $?"
grep -Eq '^  [56] s of 6: sent [0-9]+/s, done [0-9]+/s, in flight [0-9]+, p99 [0-9.-]+ ms, errors [0-9]+$' "$tmp/nagle.err" ||
    fail "--progress: no plain progress line: $(cat -A "$tmp/nagle.err")"
if LC_ALL=C grep -q $'[\r\033]' "$tmp/nagle.err"; then fail "--progress in a pipe wrote \\r or an escape code"; fi
grep -q '^== what this run shows' "$tmp/nagle.txt" || fail "nagle: no explanation"

# The queue experiment, 2 s rounds, with --out.
"$KNEE" lab queue --duration 2s --quiet --out "$tmp/q" >"$tmp/queue.txt" ||
    fail "knee lab queue exited $?"
grep -q '^== what this run shows' "$tmp/queue.txt" || fail "queue: no explanation"
grep -q 'every accounting identity held' "$tmp/queue.txt" || fail "queue: an identity failed: $(cat "$tmp/queue.txt")"
if grep -q 'DOES NOT HOLD' "$tmp/queue.txt"; then fail "queue: DOES NOT HOLD printed"; fi
grep -q 'rejected with 503 QUEUE_TIMEOUT' "$tmp/queue.txt" || fail "queue: no rejection sentence"
# knee's own CPU next to every round (a line, or a warning above the 10% budget), and summed up
for n in 1 2 3 4; do
    grep -Eq "^  (generator CPU: knee's own threads took [0-9.]+% of one core over round $n \(budget 10%\)|! round $n: knee's own threads took [0-9.]+% of one core)" "$tmp/queue.txt" ||
        fail "queue: round $n has no generator CPU line"
done
grep -Eq "^  generator CPU: knee's own threads took [0-9.]+% to [0-9.]+% of one core per round over 4 rounds" "$tmp/queue.txt" ||
    fail "queue: no generator CPU summary"
for r in open-20ms closed-200ms open-200ms starved; do
    [ -s "$tmp/q/queue-$r.csv" ] || fail "queue: no $r.csv"
    [ -s "$tmp/q/queue-$r.json" ] || fail "queue: no $r.json"
done

python3 - "$tmp/q" <<'PY'
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/queue-open-200ms.csv")))
assert list(rows[0].keys())[:4] == ["server", "start_s", "latency_ms", "service_ms"], rows[0].keys()
outcomes = {}
for r in rows:
    outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
# 40/s for 2 s on 200 ms of work: 80 planned, some ok, some rejected, nothing else.
assert len(rows) == 80, len(rows)
assert set(outcomes) <= {"ok", "rejected"}, outcomes
assert outcomes.get("rejected", 0) > 0 and outcomes.get("ok", 0) > 0, outcomes
for r in rows:
    if r["outcome"] == "rejected":
        assert r["status"] == "503", r
        assert float(r["latency_ms"]) >= 240, r
starved = list(csv.DictReader(open(f"{d}/queue-starved.csv")))
drops = sum(1 for r in starved if r["outcome"] == "dropped")
assert drops > len(starved) // 2, (drops, len(starved))
assert all(r["latency_ms"] == "" for r in starved if r["outcome"] == "dropped")
j = json.load(open(f"{d}/queue-open-200ms.json"))
assert isinstance(j, dict) and j, "empty JSON summary"
# knee's own CPU in the round's JSON: the load threads, the log writer and the run's thread,
# apart from the in-process server's (in cpu_user_s/cpu_sys_s)
g = j["environment"]["generator_cpu"]
assert g["threads"] >= 3, g
assert g["user_s"] + g["sys_s"] > 0, g
assert g["user_s"] + g["sys_s"] <= g["wall_s"] * g["threads"] + 0.001, g
assert abs(g["core_share"] - (g["user_s"] + g["sys_s"]) / g["wall_s"]) < 1e-9, g
PY

# The fan-out experiment with a fixed seed: the table has its five rows.
"$KNEE" lab fanout --duration 3s --seed 9 --quiet >"$tmp/fanout.txt" || fail "knee lab fanout exited $?"
for n in 1 2 5 10 20; do
    grep -Eq "^ +$n +[0-9]+ " "$tmp/fanout.txt" || fail "fanout: no row for N = $n"
done
# The sentence follows knee run's verdict on the round: checked against the prediction when the
# round is valid; on a loaded machine knee run may call it generator-limited, and then the lab
# must say so (with knee run's warning) and not check the prediction.
if grep -q '^- the round was GENERATOR-LIMITED' "$tmp/fanout.txt"; then
    grep -q '^  ! GENERATOR-LIMITED: ' "$tmp/fanout.txt" || fail "fanout: generator-limited without knee run's warning"
    if grep -q 'predicts 33.2%' "$tmp/fanout.txt"; then fail "fanout: a conclusion from a generator-limited round"; fi
    echo "fanout: the round was generator-limited on this machine; the lab said so"
else
    grep -q '1 − (1 − 0.02)^20 predicts 33.2%' "$tmp/fanout.txt" || fail "fanout: no prediction sentence"
fi
echo "ok"
