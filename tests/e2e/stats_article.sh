#!/usr/bin/env bash
# knee stats on the article's format (server,start_s,latency_ms,service_ms) from a seeded
# simulation of its lab: every section is there, the JSON has the keys the issue lists, and the
# article's shapes hold (a stall owns A's tail; averaging p99s lies both ways; the closed loop
# hides the stall; a 40 ms cluster trips the median check). --approx agrees within HDR's
# precision; --by file and several files work.
# tier: exact
set -euo pipefail
KNEE=${KNEE:-$PWD/build/knee}
KNEE_SRC=${KNEE_SRC:-$PWD}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 "$KNEE_SRC/tests/data/gen_article.py" open.csv --seed 3
python3 "$KNEE_SRC/tests/data/gen_article.py" closed.csv --seed 3 --closed 8 --seconds 20

"$KNEE" stats open.csv > text.txt
for s in "== open.csv (latency_ms)" "-- histogram of A+B" "-- p99 from different methods, A+B" \
         "-- averaging percentiles" "server A: average of 60 per-second p99 values" \
         "-- what a Prometheus histogram with the default buckets would estimate (A+B)" \
         "-- share of requests under 100 ms" "(the counts add up, the percentiles do not)" \
         "-- p99 from only 100 requests, ten different windows of A" "-- 95% confidence intervals" \
         "-- mean + 2 stdev is not a percentile" "-- latency_ms over time (A+B)"; do
  grep -qF -- "$s" text.txt || { echo "missing section: $s"; cat text.txt; exit 1; }
done
grep -E '^(A|B|A\+B) ' text.txt | head -3

"$KNEE" stats open.csv --json > open.json
"$KNEE" stats open.csv --json --approx > approx.json
"$KNEE" stats closed.csv --json > closed.json
"$KNEE" stats open.csv --json --column service_ms > service.json
cp open.csv copy.csv
"$KNEE" stats open.csv copy.csv --by file --json > byfile.json
python3 - <<'PY'
import json
o = json.load(open("open.json")); a = json.load(open("approx.json")); c = json.load(open("closed.json"))
s = json.load(open("service.json")); f = json.load(open("byfile.json"))
def need(cond, msg):
    if not cond:
        raise SystemExit("FAIL: " + msg)
for k in ("column", "groups", "all", "p99_methods", "averaged_p99", "window_p99", "prometheus",
          "share_under", "small_window_p99"):
    need(k in o, f"key {k}")
for g in ("A", "B"):
    need(set(o["groups"][g]) >= {"count", "mean", "stdev", "min", "max", "p50", "p90", "p95", "p99", "p99.9"}, "summary keys")
    need(set(o["window_p99"][g]) >= {"mean", "max", "whole"}, "window keys")
need(set(o["p99_methods"]) == {"nearest_rank", "exclusive", "inclusive"}, "p99 methods")
need(set(o["averaged_p99"]) >= {"groups_mean", "all"}, "averaged keys")
for q in ("p50", "p95", "p99"):
    need(set(o["prometheus"][q]) >= {"low", "high", "estimate", "exact"}, "prometheus keys")
need(set(o["share_under"]) >= {"threshold", "groups", "all"} and set(o["share_under"]["all"]) >= {"under", "count"}, "share keys")
need(len(o["small_window_p99"]) == 10, "ten small windows")
A, B, AB = o["groups"]["A"], o["groups"]["B"], o["all"]
need(A["count"] == 6000 and B["count"] == 18000 and AB["count"] == 24000, "counts as the article")
need(abs(A["p50"] - B["p50"]) < 2, "medians alike")
need(A["p99"] > 3 * B["p99"], "the stall owns A's tail")
need(o["averaged_p99"]["groups_mean"] > AB["p99"], "the average of two p99s is not the p99 of all")
need(o["window_p99"]["A"]["mean"] < 0.7 * A["p99"], "averaging per-second p99s hides the tail")
need(o["window_p99"]["A"]["max"] > A["p99"], "the worst second is worse than the run's p99")
need(max(o["small_window_p99"]) > 3 * min(o["small_window_p99"]), "p99 of 100 requests is unstable")
need(o["share_under"]["all"]["under"] == sum(o["share_under"]["groups"][g]["under"] for g in "AB"), "counts add up")
need(o["mean_2sd"]["groups"]["A"]["flagged"], "mean+2sd flagged for A")
need(c["groups"]["A"]["p99"] < 0.5 * A["p99"], "the closed loop hides the stall (coordinated omission)")
need(s["column"] == "service_ms" and s["groups"]["B"]["p99"] <= B["p99"], "service time <= latency")
for k in ("p50", "p90", "p95", "p99", "p99.9"):
    for g in ("A", "B"):
        e, x = o["groups"][g][k], a["groups"][g][k]
        need(abs(e - x) <= 1e-3 * e + 1e-3, f"approx {g} {k}: {x} vs {e}")
need(a["small_window_p99"] == o["small_window_p99"], "approx small windows exact")
need(a["share_under"] == o["share_under"], "approx shares exact")
need(list(f["groups"]) == ["copy.csv", "open.csv"] and f["all"]["count"] == 48000, "--by file")
need(f["groups"]["copy.csv"]["p99"] == AB["p99"], "--by file: each file is the whole run")
print("article shapes hold: A p99 %.1f vs B %.1f; average of p99s %.1f vs real %.1f; per-second mean %.1f; closed-loop A p99 %.1f"
      % (A["p99"], B["p99"], o["averaged_p99"]["groups_mean"], AB["p99"], o["window_p99"]["A"]["mean"], c["groups"]["A"]["p99"]))
PY

# the first run of the article: a median near 50 ms when the code takes 2 (Nagle + delayed ACK)
python3 - <<'PY'
import random
r = random.Random(9)
with open("nagle.csv", "w") as f:
    f.write("server,start_s,latency_ms,service_ms\n")
    for i in range(4000):
        v = 2 + r.random() if r.random() < 0.3 else 50 + r.random()
        f.write(f"A,{i / 100:.4f},{v:.3f},{v:.3f}\n")
PY
"$KNEE" stats nagle.csv --expect-median 2ms > nagle.txt
grep -q "Nagle's algorithm with delayed ACK" nagle.txt || { cat nagle.txt; echo "FAIL: no Nagle hint"; exit 1; }
"$KNEE" stats nagle.csv --expect-median 40ms | grep -q "within 3×" || { echo "FAIL: false alarm"; exit 1; }
echo "ok"
