#!/usr/bin/env bash
# Rate accuracy of the open loop: the plan is exact (t0 + i/R, no drift: every planned start
# in the per-request log is exactly 1 ms apart at 1000/s), the generator actually sends on
# schedule (within a tolerance a loaded 2-core machine can keep), Poisson arrivals are seeded
# (same seed, same plan) with the right mean rate, and threads interleave one global sequence.
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_nginx
URL="http://127.0.0.1:$NGX_PORT/"

"$KNEE" run -R 1000 -d 3s -t 2 --out "$TMP/c.csv" --json "$TMP/c.json" "$URL" >/dev/null
json_check "$TMP/c.json" 'identity(acc) and acc["planned"] == 3000 and d["outcomes"]["ok"] == 3000' "3000 planned and ok"
json_check "$TMP/c.json" 'd["sent_on_schedule"] >= 0.95' "at least 95% sent by the end of the plan (loaded machine)"
json_check "$TMP/c.json" 'all(abs(t["sent"] - 1000) <= 200 for t in d["timeline"][:3] if t["length_s"] > 0.99)' \
    "every full second sends 1000 +- 20%"
python3 - "$TMP/c.csv" <<'PY' || fail "planned times"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 3000, len(rows)
starts = sorted(float(r["start_s"]) for r in rows)
for i, s in enumerate(starts):
    assert abs(s - i / 1000.0) < 2e-9, (i, s)   # t0 + i/R exactly, ns resolution
lags = sorted(float(r["lag_ms"]) for r in rows)
assert lags[0] >= 0, lags[0]
assert lags[len(lags) // 2] < 5.0, lags[len(lags) // 2]   # a median send within 5 ms of its plan
PY

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
