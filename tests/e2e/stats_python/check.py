#!/usr/bin/env python3
"""Python side of tests/e2e/stats_python.sh.
  check.py gen SEED            write seeded data sets, one per line (repr floats, exact)
  check.py compare DATA COUT   compare test_stats --python-dump output with the stdlib"""
import math
import random
import statistics
import sys
from fractions import Fraction

PCTS = [0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 100]


def gen(seed):
    rnd = random.Random(seed)
    shapes = {
        "uniform": lambda: rnd.uniform(1, 10),
        "exp": lambda: rnd.expovariate(1 / 5),
        "lognormal": lambda: rnd.lognormvariate(1, 1),
        "bimodal": lambda: abs(rnd.gauss(1, 0.1)) if rnd.random() < 0.9 else abs(rnd.gauss(50, 5)),
        "pareto": lambda: rnd.paretovariate(1.2),
        "offset": lambda: 1e9 + rnd.random(),       # catastrophic cancellation for naive stdev
        "ints": lambda: float(rnd.randrange(0, 20)),  # many ties
    }
    for name, f in shapes.items():
        for n in (2, 3, 10, 99, 100, 101, 1000, 10007, 100000):
            print(name, " ".join(repr(f()) for _ in range(n)))
    print("equal", " ".join(["3.25"] * 500))


def exact_nearest_rank(sorted_v, p):
    n = len(sorted_v)
    r = math.ceil(Fraction(str(p)) * n / 100)
    return sorted_v[min(max(r, 1), n) - 1]


def rel(a, b):
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def compare(data_path, cout_path):
    sets = []
    with open(data_path) as f:
        for line in f:
            parts = line.split()
            sets.append((parts[0], [float(x) for x in parts[1:]]))
    blocks = []
    with open(cout_path) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "set":
                blocks.append({})
                continue
            key = parts[0] if len(parts) == 2 else (parts[0], parts[1])
            blocks[-1][key] = float.fromhex(parts[-1])
    if len(blocks) != len(sets):
        sys.exit(f"FAIL: {len(blocks)} result blocks for {len(sets)} data sets")
    worst = {"mean": 0.0, "stdev": 0.0, "q6": 0.0, "q7": 0.0}
    identical = total = failures = 0

    def check(what, name, n, got, want, tol):
        nonlocal identical, total, failures
        r = rel(got, want)
        kind = what if isinstance(what, str) else what[0]
        worst[kind] = max(worst.get(kind, 0.0), r)
        total += 1
        identical += got == want
        if r > tol:
            failures += 1
            print(f"FAIL {name} n={n} {what}: knee {got!r} python {want!r} rel {r:.3g}", file=sys.stderr)

    for (name, v), b in zip(sets, blocks):
        n = len(v)
        s = sorted(v)
        check("mean", name, n, b["mean"], statistics.fmean(v), 1e-12)
        check("stdev", name, n, b["stdev"], statistics.stdev(v), 1e-9)
        incl = statistics.quantiles(v, n=100, method="inclusive")
        excl = statistics.quantiles(v, n=100, method="exclusive")
        for k in range(1, 100):
            check(("q7", k), name, n, b[("q7", str(k))], incl[k - 1], 1e-12)
            # Python extrapolates beyond the data where k/100 < 1/(n+1) or > n/(n+1); knee
            # clamps (H&F, R). Compare inside the data, check the clamp outside.
            if 1 <= k * (n + 1) / 100 <= n:
                check(("q6", k), name, n, b[("q6", str(k))], excl[k - 1], 1e-12)
            else:
                want = s[0] if k * (n + 1) < 100 else s[-1]
                check(("q6clamp", k), name, n, b[("q6", str(k))], want, 0)
        for p in PCTS:
            check(("nr", p), name, n, b[("nr", repr(p))], exact_nearest_rank(s, p), 0)
    print(f"{total} comparisons over {len(sets)} data sets, {identical} bit-identical; worst relative "
          f"difference: mean {worst['mean']:.2g}, stdev {worst['stdev']:.2g}, "
          f"exclusive {worst['q6']:.2g}, inclusive {worst['q7']:.2g}")
    if failures:
        sys.exit(f"FAIL: {failures} comparisons outside tolerance")
    print("ok")


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(int(sys.argv[2]))
    else:
        compare(sys.argv[2], sys.argv[3])
