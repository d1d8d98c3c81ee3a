#!/usr/bin/env bash
# Several targets in one run: weighted shares of --rate (--mix) and of the closed-loop
# clients, a target with its own rate or its own clients, per-target method, header and
# body, statistics per target and for all, warm-up excluded, the binary request log, IPv6.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
B="http://127.0.0.1:$FS_PORT"

# open loop, 400 requests shared 3:1, plus a target with its own 50/s; the write target must
# arrive as a POST with the header and a 7-byte body (else the server answers 400)
"$KNEE" run -R 400 -n 400 --target read="$B/require?method=GET" \
    --target write="$B/require?method=POST&header=X-Write&len=7" \
    --mix read=3,write=1 -m write=POST -H 'write=X-Write: yes' -b 'write={"a":1}' \
    --json "$TMP/o.json" >"$TMP/o.txt"
json_check "$TMP/o.json" 'identity(acc) and d["outcomes"]["ok"] == 400' "every request answered 200"
json_check "$TMP/o.json" '[t["accounting"]["planned"] for t in d["targets"]] == [300, 100]' "3:1 split of 400"
json_check "$TMP/o.json" '[t["name"] for t in d["targets"]] == ["read", "write"]' "target names"
json_check "$TMP/o.json" 'sum(t["latency"]["count"] for t in d["targets"]) == tot["latency"]["count"] == 400' \
    "all = the union of the targets"
grep -q -- '--- target write' "$TMP/o.txt" || fail "per-target section"

"$KNEE" run -R 100 -d 2s --target a="$B/ok" --target b="$B/ok@50" --json "$TMP/r.json" >/dev/null
json_check "$TMP/r.json" '[t["accounting"]["planned"] for t in d["targets"]] == [200, 100]' "own rate @50"

# closed loop: 2 clients of their own for a, the 4 shared ones 1:1 between b and c
"$KNEE" run -c 4 -n 600 --target a="$B/ok@2c" --target b="$B/ok" --target c="$B/ok" --json "$TMP/c.json" >/dev/null
json_check "$TMP/c.json" '[t["clients"] for t in d["targets"]] == [2, 2, 2]' "clients per target"
json_check "$TMP/c.json" 'identity(acc) and acc["planned"] == 600 and d["outcomes"]["ok"] == 600' "closed multi"

# warm-up: logged, not counted
"$KNEE" run -R 100 -d 2s --warmup 1s --out "$TMP/w.bin" --json "$TMP/w.json" "$B/ok" >"$TMP/w.txt"
json_check "$TMP/w.json" 'acc["planned"] == 100 and tot["warmup"]["planned"] == 100' "warm-up split"
json_check "$TMP/w.json" 'tot["latency"]["count"] == 100 and abs(d["rates"]["planned"] - 100) < 1e-6' "stats exclude warm-up"
grep -q 'warm-up' "$TMP/w.txt" || fail "warm-up noted"
python3 - "$TMP/w.bin" <<'PY' || fail "binary log"
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89KRQ\r\n\x1a\n", b[:8]
version, flags, hdr, rec, nt = struct.unpack_from("<HHIII", b, 8)
assert version == 1 and flags == 0 and rec == 96 and nt == 1, (version, flags, rec, nt)  # 96: tls_ns, protocol, tls, entry, first_event_ns, events
assert (len(b) - hdr) == 200 * rec, (len(b), hdr)   # every planned request, warm-up included
warm = sum(b[hdr + i * rec + 59] & 1 for i in range(200))
assert warm == 100, warm
PY
# IPv6, when this machine has a loopback for it: a second server on [::1]
if python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
    V4_PORT=$FS_PORT
    start_fault_server --host ::1
    "$KNEE" run -c 2 -n 50 --json "$TMP/v6.json" "http://[::1]:$FS_PORT/ok" >/dev/null
    json_check "$TMP/v6.json" 'd["outcomes"]["ok"] == 50 and d["targets"][0]["address"].startswith("[::1]:")' "IPv6"
fi
echo "ok"
