#!/usr/bin/env bash
# Instructions per request in the generator's load thread, knee run against wrk, counted with
# callgrind. An instruction count is load-independent (the same binary and the same inputs
# give the same count, whatever else the machine runs), so unlike CPU time it can be taken on
# a busy or shared machine. Closed loop, one load thread, CONNS connections, against nginx
# (one worker, `return 200 "hello\n"`: a 153-byte response) and against `knee serve -p null`
# (117 bytes).
#
#   bench/instr_per_request.sh                 REQUESTS=20000 CONNS=50 WRK_DURATION=3
#
# knee: `valgrind --tool=callgrind --toggle-collect=worker_main knee run -t 1 -c CONNS -n N URL`
#   counts only what runs inside worker_main (the load thread), divided by N, and the same
#   without publish_interval (the once-a-second merge, whose cost follows the run's wall time,
#   not its requests: the figure to compare two builds by); the top functions by their own
#   instructions (and inclusive of what they call) per request.
# wrk: `valgrind --tool=callgrind --separate-threads=yes wrk -t1 -cCONNS -dWRK_DURATIONs URL`;
#   wrk's binary is stripped, so its load thread is the thread with the most instructions,
#   divided by the requests wrk reports.
# Environment: KNEE (default build/knee), REQUESTS, CONNS, WRK_DURATION (s), TOP (functions
# listed, default 12), KEEP (a directory to keep the callgrind files in). Needs valgrind
# (callgrind_annotate), nginx, python3; wrk is optional (skipped, and said, when missing).
set -euo pipefail
source "$(dirname "$0")/common.bash" # KNEE; the repository root
REQUESTS=${REQUESTS:-20000}
CONNS=${CONNS:-50}
WRK_DURATION=${WRK_DURATION:-3}
TOP=${TOP:-12}
bench_need valgrind callgrind_annotate nginx python3
HAVE_WRK=1
command -v wrk >/dev/null || { HAVE_WRK=0; echo "bench: wrk is missing: knee only (scripts/deps.sh --bench)" >&2; }

bench_exit_hook() { if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$TMP"/callgrind.* "$KEEP"/ 2>/dev/null || true; fi; }
bench_tmp knee-instr
bench_nginx "" # not pinned: instruction counts do not depend on where it runs; PORT
SPORT=$(free_port)
"$KNEE" serve -p null -l "127.0.0.1:$SPORT" >"$TMP/serve.out" 2>&1 &
BENCH_PIDS+=($!)
wait_port "$SPORT"

echo "# $(valgrind --version), nginx $(nginx_version), $(nproc) CPUs," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg) (instruction counts do not depend on it)"
resp_bytes() {
    python3 - "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
s.settimeout(0.5)
data = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
except socket.timeout:
    pass
print(len(data))
PY
}

# knee_one NAME URL: callgrind of knee run's load thread; prints the total and the top functions
knee_one() {
    local name=$1 url=$2 out="$TMP/callgrind.knee.$1"
    valgrind --tool=callgrind --toggle-collect=worker_main --callgrind-out-file="$out" \
        "$KNEE" run -t 1 -c "$CONNS" -n "$REQUESTS" --json "$TMP/$name.json" "$url" >/dev/null 2>"$TMP/$name.vg"
    python3 - "$TMP/$name.json" "$REQUESTS" <<'PY' || { echo "bench: knee run against $name did not answer every request" >&2; exit 1; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["outcomes"]["ok"] == int(sys.argv[2]), d["outcomes"]
PY
    callgrind_annotate --inclusive=yes "$out" >"$TMP/$name.incl" 2>/dev/null
    callgrind_annotate "$out" >"$TMP/$name.self" 2>/dev/null
    python3 - "$TMP/$name.incl" "$TMP/$name.self" "$REQUESTS" "$TOP" "$name" <<'PY'
import re, sys
incl, self_, n, top, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def rows(path):
    total, out = None, []
    for line in open(path):
        m = re.match(r"\s*([\d,]+)(?: \(\s*[\d.]+%\))?\s+PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = re.match(r"\s*([\d,]+) \(\s*([\d.]+)%\)\s+\S*?:?(\S+?)(?: \[.*\])?\s*$", line)
        if m:
            out.append((int(m.group(1).replace(",", "")), m.group(3).split(":")[-1]))
    return total, out
total, inc = rows(incl)
_, slf = rows(self_)
print(f"knee -> {name}: {total / n:,.0f} instructions per request in worker_main ({n} requests)")
# the once-a-second merge (publish_interval: engine_publish's hdr_add, the histograms' reset)
# costs what the run's wall time under valgrind says, not what its requests do: one more
# second moves the figure above by ~30; compare builds on the figure without it
pub = max((v for v, fn in inc if fn == "publish_interval"), default=0)
print(f"  {(total - pub) / n:,.0f} without publish_interval ({pub / n:,.0f})")
print(f"  {'self/req':>9}  {'incl/req':>9}  function")
incl_of = {}
for v, fn in inc:
    incl_of.setdefault(fn, v)
for v, fn in slf[:top]:
    print(f"  {v / n:9,.0f}  {incl_of.get(fn, 0) / n:9,.0f}  {fn}")
PY
}

# wrk_one NAME URL: callgrind of wrk's threads; the busiest is its load thread
wrk_one() {
    local name=$1 url=$2 out="$TMP/callgrind.wrk.$1"
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out" \
        wrk -t1 -c"$CONNS" -d"${WRK_DURATION}s" "$url" >"$TMP/$name.wrk" 2>"$TMP/$name.wvg"
    local done
    done=$(sed -n 's/^ *\([0-9][0-9]*\) requests in.*/\1/p' "$TMP/$name.wrk")
    [[ -n $done ]] || { echo "bench: wrk against $name printed no request count" >&2; cat "$TMP/$name.wrk" >&2; exit 1; }
    local best=0 bestf= f t
    for f in "$out"-*; do
        t=$(callgrind_annotate "$f" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
        if [[ -n $t && $t -gt $best ]]; then best=$t; bestf=$f; fi
    done
    callgrind_annotate "$bestf" >"$TMP/$name.wself" 2>/dev/null
    python3 - "$TMP/$name.wself" "$best" "$done" "$TOP" "$name" <<'PY'
import re, sys
path, total, n, top, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
print(f"wrk  -> {name}: {total / n:,.0f} instructions per request in its load thread ({n} requests)")
print(f"  {'self/req':>9}  function")
k = 0
for line in open(path):
    m = re.match(r"\s*([\d,]+) \(\s*([\d.]+)%\)\s+\S*?:?(\S+?)(?: \[.*\])?\s*$", line)
    if m and k < top:
        print(f"  {int(m.group(1).replace(',', '')) / n:9,.0f}  {m.group(3).split(':')[-1]}")
        k += 1
PY
}

echo "# response bytes: nginx $(resp_bytes "$PORT"), knee serve -p null $(resp_bytes "$SPORT")"
echo
knee_one nginx "http://127.0.0.1:$PORT/"
echo
knee_one serve "http://127.0.0.1:$SPORT/"
if ((HAVE_WRK)); then
    echo
    wrk_one nginx "http://127.0.0.1:$PORT/"
    echo
    wrk_one serve "http://127.0.0.1:$SPORT/"
fi
