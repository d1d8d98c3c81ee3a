#!/usr/bin/env bash
# Rate accuracy of the open loop: the plan is exact (t0 + i/R, no drift: every planned start
# in the per-request log is exactly 1 ms apart at 1000/s), the generator actually sends on
# schedule (within a tolerance a loaded 2-core machine can keep), Poisson arrivals are seeded
# (same seed, same plan) with the right mean rate, and threads interleave one global sequence.
# tier: exact timing
# The exact tier: the plan's exactness and the accounting of a 1 s run, the Poisson plans, the
# ramp. The timing tier: the sending's timing of a 3 s run (95% on schedule, every full second
# within 20% of 1000, a median lag under 5 ms), the machine's as much as the engine's: on a
# loaded 2-core machine (load average ~10, CI) one run queued 1,161 requests for a connection
# and sent outside 1000 +- 20% in a second while knee itself called it GENERATOR-LIMITED. Such a
# run is the machine's (timing_verdict, timing.bash). knee runs at nice -10 where allowed.
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_nginx
URL="http://127.0.0.1:$NGX_PORT/"

# plan_check CSV N: N planned starts, t0 + i/R exactly (ns resolution), every lag >= 0
plan_check() {
    python3 - "$1" "$2" <<'PY' || fail "planned times"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == int(sys.argv[2]), len(rows)
starts = sorted(float(r["start_s"]) for r in rows)
for i, s in enumerate(starts):
    assert abs(s - i / 1000.0) < 2e-9, (i, s)   # t0 + i/R exactly, ns resolution
lags = sorted(float(r["lag_ms"]) for r in rows)
assert lags[0] >= 0, lags[0]
PY
}

if in_tier timing; then
    for attempt in 1 2; do
        "${NICE[@]}" "$KNEE" run -R 1000 -d 3s -t 2 --out "$TMP/c$attempt.csv" --json "$TMP/c$attempt.json" "$URL" >/dev/null
        json_check "$TMP/c$attempt.json" 'identity(acc) and acc["planned"] == 3000 and d["outcomes"]["ok"] == 3000' "3000 planned and ok"
        timing=$(python3 - "$TMP/c$attempt.json" "$TMP/c$attempt.csv" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
lags = sorted(float(r["lag_ms"]) for r in csv.DictReader(open(sys.argv[2])))
bad = []
if not d["sent_on_schedule"] >= 0.95:
    bad.append("at least 95%% sent by the end of the plan: %.4f" % d["sent_on_schedule"])
sent = [t["sent"] for t in d["timeline"][:3] if t["length_s"] > 0.99]
if not all(abs(n - 1000) <= 200 for n in sent):
    bad.append("every full second sends 1000 +- 20%%: %s (queued %d)" % (sent, d["all"]["accounting"]["queued"]))
if not lags[len(lags) // 2] < 5.0:   # a median send within 5 ms of its plan
    bad.append("median lag %.3f ms, not under 5 ms" % lags[len(lags) // 2])
print("; ".join(bad))
PY
)
        timing_verdict $attempt "$timing" "$(run_limited_why "$TMP/c$attempt.json")" && break
    done
    echo "ok"
    exit 0
fi

# the plan is exact and the accounting holds, however late the machine let the sends go
"$KNEE" run -R 1000 -d 1s -t 2 --out "$TMP/c.csv" --json "$TMP/c.json" "$URL" >/dev/null
json_check "$TMP/c.json" 'identity(acc) and acc["planned"] == 1000 and d["outcomes"]["ok"] == 1000' "1000 planned and ok"
plan_check "$TMP/c.csv" 1000

# Poisson: seeded and reproducible, whatever the thread count; mean rate near R
"$KNEE" run -R 1000 --arrivals poisson --seed 3 -d 3s -t 1 --out "$TMP/p1.csv" --json "$TMP/p1.json" "$URL" >/dev/null
"$KNEE" run -R 1000 --arrivals poisson --seed 3 -d 3s -t 2 --out "$TMP/p2.csv" "$URL" >/dev/null
"$KNEE" run -R 1000 --arrivals poisson --seed 4 -d 3s -t 2 --out "$TMP/p3.csv" "$URL" >/dev/null
python3 - "$TMP/p1.csv" "$TMP/p2.csv" "$TMP/p3.csv" <<'PY' || fail "poisson plan"
import csv, sys
def starts(p):
    return sorted(r["start_s"] for r in csv.DictReader(open(p)))
a, b, c = starts(sys.argv[1]), starts(sys.argv[2]), starts(sys.argv[3])
assert a == b, "same seed, different plan (1 vs 2 threads)"
assert a != c, "different seeds, same plan"
n = len(a)
assert abs(n - 3000) < 5 * 3000 ** 0.5, n    # Poisson count: mean 3000, sd 55
gaps = [float(y) - float(x) for x, y in zip(a, a[1:])]
cv = (sum((g - sum(gaps) / len(gaps)) ** 2 for g in gaps) / len(gaps)) ** 0.5 / (sum(gaps) / len(gaps))
assert 0.9 < cv < 1.1, cv                    # exponential gaps: coefficient of variation 1
PY
json_check "$TMP/p1.json" 'identity(acc) and d["config"]["arrivals"] == "poisson"' "poisson accounting"
# the Poisson self-check reads the actual send times from a binary log: with a CSV it says it
# did not run, and why; a ramp owes no such check and says nothing about it
json_check "$TMP/p1.json" '[w for w in d["warnings"] if w.startswith("self-check: the Poisson arrivals were not checked: ")
    and "(--out FILE.bin), not a CSV" in w]' "a Poisson run without a binary log says its check did not run"

# a ramp 100 -> 300 over 2 s plans (100 + 300) / 2 * 2 = 400 requests
"$KNEE" run --ramp 100:300 -d 2s --json "$TMP/r.json" "$URL" >/dev/null
json_check "$TMP/r.json" 'abs(acc["planned"] - 400) <= 1 and identity(acc) and not [w for w in d["warnings"] if "Poisson" in w]' "ramp plan"
echo "ok"
