#!/usr/bin/env bash
# What one open-loop request costs knee run, in counts that do not depend on how loaded the
# machine is (docs/INTERNALS.md "Open loop: what a send costs"): system calls, epoll waits,
# context switches and kernel timers armed per request sent (perf's software events and
# syscall tracepoints), and, with CALLGRIND=1, the load thread's user-space instructions per
# request (callgrind, counting only from worker_main). Target: knee serve --preset null.
#
#   bench/open_loop_cost.sh [SECONDS]        (default 3 s per rate)
#   env: RATES="5000 20000" KNEE=build/knee CALLGRIND=0|1
set -euo pipefail
SECS=${1:-3}
RATES=${RATES:-5000 20000}
HERE=$(cd "$(dirname "$0")" && pwd)
KNEE=${KNEE:-$HERE/../build/knee}
command -v perf >/dev/null || { echo "open_loop_cost: perf not found (linux-perf)" >&2; exit 2; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

"$KNEE" serve --preset null >"$tmp/serve" &
pid=$!
for _ in $(seq 50); do grep -q listening "$tmp/serve" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\) .*/\1/p' "$tmp/serve")
url="http://127.0.0.1:$port/"
events=context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_epoll_pwait2
events=$events,syscalls:sys_enter_sendto,syscalls:sys_enter_read,timer:hrtimer_start
if ! perf stat -e "$events" -- true >/dev/null 2>&1; then
  echo "# open_loop_cost: skipped, perf cannot read the syscall tracepoints here (perf_event_paranoid?)"
  exit 0
fi

echo "# knee run -t 1 -c 50 -R RATE -d ${SECS}s against knee serve --preset null; per request sent"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%7s %6s %8s %8s %8s %8s %8s %8s %10s\n' rate sent syscalls pwait2 sendto read ctxsw hrtimer 'lag p99'
for r in $RATES; do
  perf stat -x, -e "$events" -o "$tmp/perf" -- "$KNEE" run -t 1 -c 50 -R "$r" -d "${SECS}s" "$url" >"$tmp/run" 2>&1 || true
  sent=$(grep -oE '^  sent [0-9,]+ =' "$tmp/run" | tr -dc 0-9)
  lag=$(grep -A1 '^lag' "$tmp/run" | tail -1 | awk '{print $8 "ms"}')
  awk -F, -v r="$r" -v s="$sent" -v lag="$lag" '/^[0-9]/ { v[$3] = $1 / s }
    END { printf "%7d %6d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %10s\n", r, s,
          v["raw_syscalls:sys_enter"], v["syscalls:sys_enter_epoll_pwait2"], v["syscalls:sys_enter_sendto"],
          v["syscalls:sys_enter_read"], v["context-switches"], v["timer:hrtimer_start"], lag }' "$tmp/perf"
done
if [ "${CALLGRIND:-0}" = 1 ] && ! command -v valgrind >/dev/null; then
  echo "# callgrind skipped: valgrind not found"
elif [ "${CALLGRIND:-0}" = 1 ]; then
  echo "# callgrind, load thread only (--toggle-collect=worker_main), 2 s per rate"
  for r in $RATES; do
    valgrind --tool=callgrind --toggle-collect=worker_main --callgrind-out-file="$tmp/cg" \
      "$KNEE" run -t 1 -c 50 -R "$r" -d 2s "$url" >"$tmp/run" 2>&1 || true
    sent=$(grep -oE '^  sent [0-9,]+ =' "$tmp/run" | tr -dc 0-9)
    ir=$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$tmp/run" | tr -d ,)
    parser=$(callgrind_annotate "$tmp/cg" 2>/dev/null | awk '/http_parser_execute/ { gsub(",", "", $1); print $1; exit }' || true)
    echo "rate $r: sent $sent, instructions $ir, per request $((ir / sent)) (http_parser_execute $((${parser:-0} / sent)))"
  done
fi
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
