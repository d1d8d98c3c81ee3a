#!/usr/bin/env python3
"""The straightforward Python standard-library analysis that bench/stats_10m.sh compares
knee stats against: the same sections as the article's stats.py (the table, the doubling
histogram, p99 by three methods, averaged p99s and per-second p99s, Prometheus estimates,
the share under 100 ms, ten 100-row windows), written plainly with csv.DictReader and
statistics, but sorting each group once (not once per percentile) so it is a fair baseline.
    stats_baseline.py FILE.csv [column]"""
import csv
import math
import statistics
import sys
from collections import defaultdict

FILE = sys.argv[1]
COL = sys.argv[2] if len(sys.argv) > 2 else "latency_ms"
data = defaultdict(list)
per_sec = defaultdict(list)
with open(FILE, newline="") as f:
    for r in csv.DictReader(f):
        v = float(r[COL])
        data[r["server"]].append(v)
        per_sec[(r["server"], math.floor(float(r["start_s"])))].append(v)
names = sorted(data)
allname = "+".join(names)
data[allname] = [v for n in names for v in data[n]]


def pct(s, p):
    return s[max(1, math.ceil(p / 100 * len(s))) - 1]


srt = {n: sorted(v) for n, v in data.items()}
print(f"== {FILE} ({COL})")
for n in names + [allname]:
    s = srt[n]
    print(n, len(s), round(statistics.fmean(s), 1), round(statistics.stdev(s), 1),
          *[round(pct(s, p), 1) for p in (50, 90, 95, 99, 99.9)], s[-1])
s = srt[allname]
lo, hist = 1.0, []
while lo < s[-1]:
    hist.append(sum(1 for x in s if lo <= x < lo * 2) + (sum(1 for x in s if x < lo) if lo == 1.0 else 0))
    lo *= 2
print("histogram", hist)
q = {m: statistics.quantiles(s, n=100, method=m)[98] for m in ("exclusive", "inclusive")}
print("p99", pct(s, 99), q)
p99s = [pct(srt[n], 99) for n in names]
print("average of p99s", statistics.fmean(p99s), "real", pct(s, 99))
for n in names:
    w = [pct(sorted(x), 99) for (g, _), x in per_sec.items() if g == n]
    print(n, "per-second p99: mean", statistics.fmean(w), "max", max(w), "whole", pct(srt[n], 99))
bounds = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]
cum = [sum(1 for x in s if x <= b) for b in bounds]
for p in (50, 95, 99):
    rank = p / 100 * len(s)
    i = next(k for k, c in enumerate(cum) if c >= rank)
    lo_b, lo_c = (bounds[i - 1], cum[i - 1]) if i else (0, 0)
    print(f"p{p}", lo_b + (bounds[i] - lo_b) * (rank - lo_c) / (cum[i] - lo_c), pct(s, p))
for n in names + [allname]:
    print(n, sum(1 for x in data[n] if x < 100), "of", len(data[n]))
a = data[names[0]]
step = len(a) // 10
print(" ".join(f"{pct(sorted(a[i * step:i * step + 100]), 99):.1f}" for i in range(10)))
