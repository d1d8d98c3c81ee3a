#!/usr/bin/env bash
# The overhead knee serve adds on top of its simulated times: latency of the null target
# and of /work?ms=0 (the whole work path: slot, timers, Server-Timing, JSON body) and of
# /work?ms=10 (a 10 ms timer: what is measured above 10 ms is overhead), unloaded (1
# connection) and under load (50 connections), measured by wrk (closed loop). Server on
# one CPU, wrk on another.
#
#   bench/serve_overhead.sh [SECONDS]        (default 5 s per cell)
#   env: SERVER_CPU=0 CLIENT_CPU=1 KNEE=build/knee
set -euo pipefail
SECS=${1:-5}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
KNEE=${KNEE:-$HERE/../build/knee}
command -v wrk >/dev/null || { echo "serve_overhead: wrk not found (scripts/deps.sh --bench)" >&2; exit 2; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# start PRESET VAR: runs in this shell (not in $(...)) so the EXIT trap knows the pid.
start() {
  local out
  out=$(mktemp)
  taskset -c "$SERVER_CPU" "$KNEE" serve --preset "$1" >"$out" &
  pids+=($!)
  for _ in $(seq 50); do grep -q listening "$out" && break; sleep 0.1; done
  printf -v "$2" '%s' "$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\) .*/\1/p' "$out")"
  rm -f "$out"
}
start null NULL_PORT
start quiet WORK_PORT   # pool 4, no pause; ?ms= overrides the hit/miss work

echo "# knee serve overhead: wrk -t1, ${SECS}s per cell, server on CPU ${SERVER_CPU}, wrk on CPU ${CLIENT_CPU}"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-18s %5s %10s %9s %9s %9s %9s\n' target conns rps p50 p90 p99 max
for target in "null $NULL_PORT /" "work?ms=0 $WORK_PORT /work?ms=0" "work?ms=10 $WORK_PORT /work?ms=10"; do
  read -r name port path <<<"$target"
  for c in 1 50; do
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$c" -d"${SECS}s" --latency "http://127.0.0.1:$port$path" |
      awk -v name="$name" -v c="$c" '
        /Requests\/sec/ { rps = $2 } /^ +Latency +[0-9]/ { max = $4 }
        $1 == "50%" { p50 = $2 } $1 == "90%" { p90 = $2 } $1 == "99%" { p99 = $2 }
        END { printf "%-18s %5s %10.0f %9s %9s %9s %9s\n", name, c, rps, p50, p90, p99, max }'
  done
done
echo "# (work?ms=10 with 50 connections: 4 slots x 10 ms = 400 rps at most, the rest is queueing by design)"
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
