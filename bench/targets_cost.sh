#!/usr/bin/env bash
# The cost of requests that vary (issue 26: --targets, --feed, placeholders), in instructions
# per request of knee run's load thread, counted with callgrind (load-independent: see
# bench/instr_per_request.sh). Closed loop, one load thread, CONNS connections, against nginx
# (one worker, `return 200`). The cases, each REQUESTS requests:
#   fixed      one URL, the request built once (the baseline)
#   table      --targets with 1,000 entries without placeholders (each built once, shared)
#   seq        one URL with {{seq}} (its digits rewritten in place per request, ahead of its send)
#   feed       {{id}} in the URL and {{name}} in a header from a 1,000-row CSV feed (small
#              enough to be rendered before the run: each row's request built once, shared)
#   bigfeed    the same from a 200,000-row feed (too many to render: the placeholders are
#              rewritten in place per request)
#   stream     --targets with 200,000 entries (more than a table holds: each entry read per
#              request under the source's lock, its bytes its target and the entry before's)
# The preparation runs on the load thread (the ring is topped up after each loop callback), so
# its cost is in the figure. Printed per case: the instructions per request without
# publish_interval (the once-a-second merge, whose cost follows the run's wall time under
# valgrind, not its requests: the figure the ratio is of), and all of them.
#
#   bench/targets_cost.sh                      REQUESTS=20000 CONNS=50 CASES='fixed ... bigfeed stream'
#                                              KEEP=DIR (keep the callgrind files there)
set -euo pipefail
source "$(dirname "$0")/common.bash" # KNEE; the repository root
REQUESTS=${REQUESTS:-20000}
CONNS=${CONNS:-50}
CASES=${CASES:-fixed table seq feed bigfeed stream}
bench_need valgrind callgrind_annotate nginx python3
bench_exit_hook() { if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$TMP"/callgrind.* "$KEEP"/ 2>/dev/null || true; fi; }
bench_tmp knee-targets
bench_nginx "" # PORT
B="http://127.0.0.1:$PORT"
python3 - "$TMP" "$B" <<'PY'
import sys
tmp, b = sys.argv[1], sys.argv[2]
with open(f"{tmp}/table.txt", "w") as f:
    for i in range(1000):
        f.write(f"GET {b}/k/{i}\n\n")
with open(f"{tmp}/stream.txt", "w") as f:
    for i in range(200000):
        f.write(f"GET {b}/k/{i}\n\n")
with open(f"{tmp}/feed.csv", "w") as f:
    f.write("id,name\n")
    for i in range(1000):
        f.write(f"{i},user{i}\n")
with open(f"{tmp}/bigfeed.csv", "w") as f:
    f.write("id,name\n")
    for i in range(200000):
        f.write(f"{i},user{i}\n")
PY
echo "# $(valgrind --version), nginx $(nginx_version), $(nproc) CPUs; $REQUESTS requests, $CONNS connections, 1 thread"
echo "# instructions per request in worker_main: all, and without publish_interval (the once-a-second"
echo "# merge: its cost follows the run's wall time under valgrind, not its requests; the ratio's base)"
base=0
one() { # one NAME ARGS...: instructions per request in worker_main
    local name=$1 out="$TMP/callgrind.$1"
    shift
    [[ " $CASES " == *" $name "* ]] || return 0
    valgrind --tool=callgrind --toggle-collect=worker_main --callgrind-out-file="$out" \
        "$KNEE" run -t 1 -c "$CONNS" -n "$REQUESTS" --json "$TMP/$name.json" "$@" >/dev/null 2>"$TMP/$name.vg"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["outcomes"]["ok"] == int(sys.argv[2]), d["outcomes"]' \
        "$TMP/$name.json" "$REQUESTS" || { echo "bench: $name: not every request answered" >&2; exit 1; }
    local total pub
    callgrind_annotate --inclusive=yes "$out" >"$TMP/$name.incl" 2>/dev/null
    total=$(sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' "$TMP/$name.incl" | tr -d ,)
    pub=$(sed -n 's/^ *\([0-9,]*\) .*worker\.c:publish_interval .*/\1/p' "$TMP/$name.incl" | head -1 | tr -d ,)
    local all=$((total / REQUESTS)) per=$(((total - ${pub:-0}) / REQUESTS))
    ((base)) || base=$per
    printf '%-8s %6d (all %6d)  %.2fx fixed   knee run %s\n' "$name" "$per" "$all" \
        "$(python3 -c "print($per / $base)")" "$*"
}
one fixed "$B/k/1"
one table --targets "$TMP/table.txt"
one seq "$B/k/{{seq}}"
one feed "$B/u/{{id}}" -H 'X-Name: {{name}}' --feed "$TMP/feed.csv"
one bigfeed "$B/u/{{id}}" -H 'X-Name: {{name}}' --feed "$TMP/bigfeed.csv"
one stream --targets "$TMP/stream.txt"
