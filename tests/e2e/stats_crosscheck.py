#!/usr/bin/env python3
"""Cross-check of `knee stats --json` against an independent implementation in Python's
standard library, over seeded random data of several shapes:
  - nearest-rank percentiles exactly (rank = ceil(p/100 * n) in exact rational arithmetic),
  - mean and stdev as statistics.fmean / statistics.stdev to 1e-9 relative,
  - p99 exclusive / inclusive as statistics.quantiles(n=100, method=...)[98] to 1e-9 relative,
  - Prometheus estimates by PromQL's histogram_quantile rule (bucketQuantile), 1e-9 relative,
  - share under the threshold, the doubling histogram, the small windows and the
    per-second p99 windows exactly; their averages to 1e-9 relative;
  - the binary request log: a log written here from the byte layout in docs/FORMATS.md and
    the CSV of the same requests give the same numbers.
Usage: stats_crosscheck.py KNEE_BINARY WORKDIR"""
import json
import math
import os
import random
import statistics
import struct
import subprocess
import sys
from fractions import Fraction

KNEE, WORK = sys.argv[1], sys.argv[2]
PCTS = [("p50", "50"), ("p90", "90"), ("p95", "95"), ("p99", "99"), ("p99.9", "99.9")]
PROM_DEFAULT = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]
failures = []
checks = 0


def fail(case, what, got, want):
    failures.append(f"{case}: {what}: knee {got!r}, python {want!r}")


def eq_exact(case, what, got, want):
    global checks
    checks += 1
    if got != want:
        fail(case, what, got, want)


def eq_rel(case, what, got, want, tol=1e-9):
    global checks
    checks += 1
    if want is None or got is None or (isinstance(want, float) and math.isnan(want)):
        if not (got is None and (want is None or math.isnan(want))):
            fail(case, what, got, want)
        return
    if want == 0:
        ok = abs(got) <= tol
    else:
        ok = abs(got - want) <= tol * abs(want)
    if not ok:
        fail(case, what, got, want)


def nearest_rank(sorted_v, p):
    n = len(sorted_v)
    rank = math.ceil(Fraction(p) / 100 * n)
    return sorted_v[max(1, rank) - 1]


def prom_quantile(values, bounds, q):
    """PromQL bucketQuantile over cumulative counts (le: value <= bound), +Inf last."""
    cum = [sum(1 for v in values if v <= b) for b in bounds] + [len(values)]
    upper = list(bounds) + [math.inf]
    rank = q * len(values)
    b = next((i for i in range(len(cum) - 1) if cum[i] >= rank), len(cum) - 1)
    if b == len(cum) - 1:
        return bounds[-1], bounds[-1], None
    if b == 0 and upper[0] <= 0:
        return upper[0], None, upper[0]
    start, end, count = 0.0, upper[b], float(cum[b])
    if b > 0:
        start = upper[b - 1]
        count -= cum[b - 1]
        rank -= cum[b - 1]
    return start + (end - start) * (rank / count), start, end


def dbl_bucket(v):
    if v < 1:
        return 0
    m, e = math.frexp(v)  # v = m * 2**e, m in [0.5, 1): v in [2**(e-1), 2**e)
    return min(e, 63)


def write_csv(path, rows, header=("server", "start_s", "latency_ms", "service_ms"), crlf=False, quote=False):
    nl = "\r\n" if crlf else "\n"
    with open(path, "w", newline="") as f:
        f.write(",".join(header) + nl)
        for r in rows:
            cells = []
            for c in r:
                s = c if isinstance(c, str) else repr(c)
                if quote and isinstance(c, str):
                    s = '"' + s.replace('"', '""') + '"'
                cells.append(s)
            f.write(",".join(cells) + nl)


def run_knee(args):
    p = subprocess.run([KNEE, "stats", "--json"] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"knee stats {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return json.loads(p.stdout)


def check(case, groups, under=100.0, bounds=PROM_DEFAULT, args=(), window_group=None, times=None, out=None):
    """groups: name -> list of (time_s, value) in row order. Writes the CSV, runs knee, compares."""
    path = out or os.path.join(WORK, case + ".csv")
    args = list(args)
    if under != 100.0:
        args += ["--under", repr(under)]
    if bounds != PROM_DEFAULT:
        args += ["--buckets", ",".join(repr(b) for b in bounds)]
    if not out:
        rows = []
        for name, pairs in groups.items():
            rows += [(name, t, v) for t, v in pairs]
        rows.sort(key=lambda r: r[1])  # one file in time order, groups interleaved
        write_csv(path, [(n, t, v, v) for n, t, v in rows])
        # row order within a group is preserved by the stable sort
        groups = {}
        for n, t, v in rows:
            groups.setdefault(n, []).append((t, v))
    j = run_knee([path] + list(args))
    names = sorted(groups)
    allv = []
    for n in names:
        allv += [v for _, v in groups[n]]
    # 1. the table
    for label, values, got in [(n, [v for _, v in groups[n]], j["groups"].get(n)) for n in names] + \
            [("all", allv, j["all"])]:
        if got is None:
            fail(case, f"group {label}", None, "present")
            continue
        s = sorted(values)
        eq_exact(case, f"{label} count", got["count"], len(s))
        eq_rel(case, f"{label} mean", got["mean"], statistics.fmean(s))
        eq_rel(case, f"{label} stdev", got["stdev"], statistics.stdev(s) if len(s) > 1 else 0.0)
        eq_exact(case, f"{label} min", got["min"], s[0])
        eq_exact(case, f"{label} max", got["max"], s[-1])
        for key, p in PCTS:
            eq_exact(case, f"{label} {key}", got[key], nearest_rank(s, p))
        # 8. the count beyond each percentile, and the interval brackets the point
        ci = j["confidence"]["groups"][label] if label != "all" else j["confidence"]["all"]
        for key, p in PCTS:
            c = ci[key]
            eq_exact(case, f"{label} {key} beyond", c["beyond"], sum(1 for v in s if v > nearest_rank(s, p)))
            if c["defined"] and not (c["lo"] <= c["value"] <= c["hi"]):
                fail(case, f"{label} {key} interval", (c["lo"], c["hi"]), c["value"])
        # 9.
        m2 = (j["mean_2sd"]["groups"][label] if label != "all" else j["mean_2sd"]["all"])
        eq_rel(case, f"{label} mean+2sd", m2["mean_plus_2sd"],
               statistics.fmean(s) + 2 * (statistics.stdev(s) if len(s) > 1 else 0.0))
    sa = sorted(allv)
    # 2. histogram
    counts = {}
    for v in allv:
        counts[dbl_bucket(v)] = counts.get(dbl_bucket(v), 0) + 1
    got_h = {}
    for b in j["histogram"]["buckets"]:
        if b["count"]:
            idx = 0 if b["lo"] == 0 else dbl_bucket(b["lo"])
            got_h[idx] = b["count"]
    eq_exact(case, "histogram", got_h, counts)
    # 3. methods
    eq_exact(case, "p99 nearest", j["p99_methods"]["nearest_rank"], nearest_rank(sa, "99"))
    if len(sa) >= 2:
        for m in ("exclusive", "inclusive"):
            eq_rel(case, f"p99 {m}", j["p99_methods"][m], statistics.quantiles(sa, n=100, method=m)[98])
    # 4. averaging
    p99s = [nearest_rank(sorted(v for _, v in groups[n]), "99") for n in names]
    eq_rel(case, "groups_mean p99", j["averaged_p99"]["groups_mean"], sum(p99s) / len(p99s))
    eq_exact(case, "averaged all", j["averaged_p99"]["all"], nearest_rank(sa, "99"))
    for n in names:
        per = {}
        for t, v in groups[n]:
            per.setdefault(math.floor(t), []).append(v)
        w = [nearest_rank(sorted(x), "99") for x in per.values()]
        got = j["window_p99"][n]
        eq_exact(case, f"{n} windows", got["windows"], len(w))
        eq_rel(case, f"{n} window mean", got["mean"], statistics.fmean(w))
        eq_exact(case, f"{n} window max", got["max"], max(w))
        eq_exact(case, f"{n} window whole", got["whole"], nearest_rank(sorted(v for _, v in groups[n]), "99"))
    # 5. Prometheus
    eq_exact(case, "prom bounds", j["prometheus"]["bounds"], [float(b) for b in bounds])
    for key, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
        est, lo, hi = prom_quantile(allv, bounds, q)
        got = j["prometheus"][key]
        eq_rel(case, f"prom {key} estimate", got["estimate"], est)
        eq_exact(case, f"prom {key} exact", got["exact"], nearest_rank(sa, key[1:]))
        if hi is not None:
            eq_exact(case, f"prom {key} bucket", (got["low"], got["high"]), (float(lo), float(hi)))
    # 6. share under
    for n in names:
        got = j["share_under"]["groups"][n]
        eq_exact(case, f"{n} under", (got["under"], got["count"]),
                 (sum(1 for _, v in groups[n] if v < under), len(groups[n])))
    eq_exact(case, "all under", (j["share_under"]["all"]["under"], j["share_under"]["all"]["count"]),
             (sum(1 for v in allv if v < under), len(allv)))
    # 7. small windows: ten windows of 100 consecutive rows, window i at i * (n // 10)
    wg = window_group or names[0]
    a = [v for _, v in groups[wg]]
    step = len(a) // 10
    want = [nearest_rank(sorted(a[i * step:i * step + 100]), "99") for i in range(10)]
    eq_exact(case, "small windows group", j["small_windows"]["group"], wg)
    eq_exact(case, "small windows", j["small_window_p99"], want)
    return j


def series(rng, n, gen, t_span=60.0):
    times = sorted(rng.uniform(0, t_span) for _ in range(n))
    return [(round(t, 4), gen()) for t in times]


def main():
    os.makedirs(WORK, exist_ok=True)
    rng = random.Random(20261130)
    r3 = lambda x: round(x, 3)

    # the article's shape: a fast mode, cache misses at 40 ms, and a periodic stall on A
    def article_value(t, stalled):
        base = 4 + rng.lognormvariate(1.2, 0.45) + (40 if rng.random() < 0.1 else 2)
        phase = t % 4.0
        if stalled and 0.8 <= phase < 1.05:
            base += (1.05 - phase) * 1000
        return r3(base)

    ga = [(round(i / 100, 4), 0.0) for i in range(6000)]
    ga = [(t, article_value(t, True)) for t, _ in ga]
    gb = [(round(i / 300, 4), article_value(i / 300, False)) for i in range(18000)]
    check("article", {"A": ga, "B": gb})

    # shapes: lognormal tail, ties (integers), bimodal, uniform, a wide range, three groups
    check("lognormal", {"x": series(rng, 20000, lambda: r3(rng.lognormvariate(2, 1)))}, under=10)
    check("ties", {"a": series(rng, 5000, lambda: float(rng.randint(1, 20))),
                   "b": series(rng, 3001, lambda: float(rng.choice([5, 5, 5, 10, 100])))}, under=10)
    check("bimodal", {"p": series(rng, 9999, lambda: r3(5 + rng.random()) if rng.random() < 0.9 else r3(45 + rng.random()))})
    check("wide", {"w": series(rng, 4000, lambda: 10 ** rng.uniform(-6, 6))}, under=1e-3)
    check("three", {"A": series(rng, 1234, lambda: r3(rng.expovariate(1 / 20))),
                    "B": series(rng, 777, lambda: r3(rng.expovariate(1 / 80))),
                    "C": series(rng, 4321, lambda: r3(rng.gammavariate(2, 15)))}, window_group="B",
          args=["--window-group", "B"])
    # small groups: Python's exclusive method extrapolates below 99 values
    for n in (2, 3, 7, 37, 98, 99, 100, 150):
        check(f"small{n}", {"s": series(rng, n, lambda: r3(rng.expovariate(1 / 30)))})
    # custom buckets, a rank landing in +Inf, and a threshold on a bucket bound
    check("buckets", {"k": series(rng, 3000, lambda: r3(rng.paretovariate(1.2) * 3))}, under=25,
          bounds=[1, 2.5, 5, 10, 25])
    # the same data with CRLF line ends and every text cell quoted: same numbers
    g = {"A \"quoted\", name": series(rng, 500, lambda: r3(rng.uniform(1, 50)))}
    rows = sorted(((n, t, v, v) for n, p in g.items() for t, v in p), key=lambda r: r[1])
    path = os.path.join(WORK, "quoted.csv")
    write_csv(path, rows, crlf=True, quote=True)
    check("quoted", g, out=path)

    # binary request log vs the CSV of the same requests (docs/FORMATS.md byte layout)
    names = [b"api", b"static"]
    recs = []
    for i in range(20000):
        planned = i * 2_500_000 + rng.randint(0, 999)
        outcome = 0 if rng.random() < 0.97 else rng.choice([2, 4, 5, 6])
        if outcome == 6:
            sent = first = done = 0
        else:
            sent = planned + rng.randint(0, 200_000)
            first = sent + rng.randint(100_000, 5_000_000)
            done = first + rng.randint(1, 90_000_000)
        recs.append((planned, sent, first, done, 0, 512, i % 2, i % 16, 200 if outcome == 0 else 0, outcome,
                     1 if planned < 1_000_000_000 else 0))
    blob = b"\x89KRQ\r\n\x1a\n" + struct.pack("<HHIII", 1, 0, 24 + sum(2 + len(n) for n in names), 60, len(names))
    blob += b"".join(struct.pack("<H", len(n)) + n for n in names)
    blob += b"".join(struct.pack("<QQQQQQIIHBB", *r) for r in recs)
    logp = os.path.join(WORK, "run.bin")
    with open(logp, "wb") as f:
        f.write(blob)
    outcomes = ["ok", "rejected", "http_error", "invalid", "transport", "timeout", "dropped", "cancelled"]
    csvp = os.path.join(WORK, "run.csv")
    groups = {}
    with open(csvp, "w") as f:
        f.write("server,start_s,latency_ms,service_ms,ttfb_ms,lag_ms,status,outcome,bytes,connection\n")
        for p, s, fb, d, c, b, t, conn, st, o, fl in recs:
            ms = lambda a, z: f"{(a - z) / 1e6:.6f}"
            lat = ms(d, p) if d else ""
            f.write(f"{names[t].decode()},{p / 1e9:.9f},{lat},{ms(d, s) if s and d else ''},"
                    f"{ms(fb, s) if s and fb else ''},{ms(s, p) if s else ''},{st},{outcomes[o]},{b},{conn}\n")
            if d and not fl and o == 0:
                groups.setdefault(names[t].decode(), []).append((p / 1e9, (d - p) / 1e6))
    jb = run_knee([logp, "--where", "outcome=ok"])
    jc = run_knee([csvp, "--where", "outcome=ok", "--skip", "1s"])  # the log's warm-up flag = first second
    for k in ("groups", "all", "p99_methods", "averaged_p99", "window_p99", "prometheus", "share_under",
              "small_window_p99", "histogram", "mean_2sd"):
        eq_exact("binary-vs-csv", k, jb[k], jc[k])
    eq_exact("binary", "warm-up rows", jb["rows"]["filtered_warmup"], sum(1 for r in recs if r[10]))
    # and the log's numbers against Python on the derived latency
    check("binary", groups, out=logp, args=["--where", "outcome=ok"])

    print(f"{checks} checks, {len(failures)} failures")
    for f in failures[:40]:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
