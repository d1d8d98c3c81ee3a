#!/usr/bin/env bash
# knee hlog merge's memory does not grow with the intervals that share one time slot: 8,000
# out-of-order intervals in one slot, each histogram spread over its whole range, are summed
# through one scratch histogram (they took 2 GB when each was decoded first), and the sum is
# exact (its statistics are those of every interval read together).
# tier: exact
set -euo pipefail
: "${KNEE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 - "$tmp/in.hlog" 8000 <<'PY'
import base64, random, struct, sys, zlib
out, n = sys.argv[1], int(sys.argv[2])
def v2(counts, digits=3, lowest=1, highest=3600000000000):
    p = bytearray()
    for v in counts:  # a negative count is a run of zeros (the V2 encoding)
        u = ((v << 1) ^ (v >> 63)) & 0xffffffffffffffff
        while u >= 0x80:
            p.append((u & 0x7f) | 0x80); u >>= 7
        p.append(u)
    return struct.pack(">IIiiqqd", 0x1c849313, len(p), 0, digits, lowest, highest, 1.0) + bytes(p)
def comp(raw):
    z = zlib.compress(raw, 9)
    return base64.b64encode(struct.pack(">II", 0x1c849314, len(z)) + z).decode()
rng = random.Random(7)
with open(out, "w") as f:
    f.write("#[Histogram log format version 1.3]\n#[StartTime: 1700000000.000 (seconds since epoch)]\n")
    for i in range(n):
        # a count every ~400 buckets: every page of a decoded histogram's counts is touched
        counts = sum(([-(400 + rng.randrange(3)), 1 + i % 5] for _ in range(80)), [])
        f.write(f"{rng.random() * 0.9:.3f},0.001,0.000,{comp(v2(counts))}\n")
PY

# the merge's peak resident memory, from the kernel's accounting of the finished child
python3 - "$KNEE" "$tmp" <<'PY' > "$tmp/rss"
import resource, subprocess, sys
knee, d = sys.argv[1], sys.argv[2]
r = subprocess.run([knee, "hlog", "merge", d + "/in.hlog", "-o", d + "/out.hlog"], timeout=240)
if r.returncode != 0:
    sys.exit(f"knee hlog merge exited {r.returncode}")
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # KiB on Linux
PY
rss_kb=$(cat "$tmp/rss")
# a plain build needs ~7 MB, ASan's shadow and quarantine some tens; the old way took 2 GB
((rss_kb < 256 * 1024)) || fail "knee hlog merge of 8,000 intervals in one slot peaked at $rss_kb KiB"
echo "ok: 8,000 intervals in one slot merged in $((rss_kb / 1024)) MiB"

[[ $(grep -vc '^[#"]' "$tmp/out.hlog") == 1 ]] || fail "the merge should write one interval"
"$KNEE" hlog stats "$tmp/in.hlog" | tail -n +2 > "$tmp/in.stats"
"$KNEE" hlog stats "$tmp/out.hlog" | tail -n +2 > "$tmp/out.stats"
diff -u "$tmp/in.stats" "$tmp/out.stats" || fail "the merged interval's statistics differ from its inputs'"
echo "ok: the sum is exact"
