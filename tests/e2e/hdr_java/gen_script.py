#!/usr/bin/env python3
"""Writes the seeded command script that tests/e2e/hdr_java.sh feeds to both the Java
reference (HdrCheck.java) and knee's C implementation (test_hist --java-dump)."""
import random
import struct
import sys

rnd = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 20240601)
out = []
H1 = 3600000000000  # 1 hour in ns
configs = [(1, H1, 3), (1, H1, 2), (1000, H1, 3), (1, 3600000000, 1), (1, 100000, 5), (1, H1, 4),
           (7, 10**9, 2), (1, 2**40, 3)]


def draw(kind, hi):
    if kind == "uniform":
        ms = rnd.uniform(1, 10)
    elif kind == "exp":
        ms = rnd.expovariate(1 / 5)
    elif kind == "lognormal":
        ms = rnd.lognormvariate(1, 1)
    elif kind == "bimodal":
        ms = rnd.gauss(1, 0.1) if rnd.random() < 0.9 else rnd.gauss(50, 5)
    elif kind == "pareto":
        ms = rnd.paretovariate(1.2)
    else:  # "small": integers near the unit-resolution edge
        return rnd.randrange(0, 5000)
    scale = 1e6 if hi > 10**7 else 100  # small-range histograms get small values
    return max(0, min(hi, int(ms * scale)))


nh = 0
for (lo, hi, d) in configs:
    for kind in ("uniform", "exp", "lognormal", "bimodal", "pareto", "small"):
        out.append(f"new {lo} {hi} {d}")
        n = rnd.choice([1, 2, 10, 300, 2500])
        for _ in range(n):
            out.append(f"r {draw(kind, hi)} {rnd.choice([1, 1, 1, 2, 7])}")
        out.append("dump")
        nh += 1
    # coordinated-omission back-fill and merging
    out.append(f"new {lo} {hi} {d}")
    base = nh
    nh += 1
    for _ in range(200):
        v = draw("lognormal", hi // 2)
        out.append(f"c {v} {max(1, hi // 1000000) * 1000}")
    out.append("dump")
    out.append(f"new {lo} {hi} {d}")
    nh += 1
    out.append(f"add {base}")
    out.append(f"add {base - 1}")
    out.append(f"add {base - 2}")
    out.append("dump")
    out.append("dist 5 1e6 0")
    out.append("dist 1 1000 0")
    out.append("dist 5 1e6 1")
    out.append("dist 3 1 0")

# empty histogram and a single zero
out += ["new 1 3600000000000 3", "dump", "dist 5 1e6 0", "r 0 3", "dump", "dist 5 1e6 0"]

# number formatting: random magnitudes, decimals 0..12, and decimal-boundary values
for _ in range(3000):
    v = 10 ** rnd.uniform(-7, 12)
    out.append("fmt %x %d" % (struct.unpack("<Q", struct.pack("<d", v))[0], rnd.randrange(0, 13)))
for _ in range(2000):
    k = rnd.randrange(0, 10**7)
    v = (k + 0.5) / 1000 if rnd.random() < 0.5 else k / 1e6
    out.append("fmt %x %d" % (struct.unpack("<Q", struct.pack("<d", v))[0], rnd.choice([2, 3, 4])))

print("\n".join(out))
