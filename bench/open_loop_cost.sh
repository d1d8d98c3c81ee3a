#!/usr/bin/env bash
# What one open-loop request costs knee run, in counts that do not depend on how loaded the
# machine is (docs/INTERNALS.md "Open loop: what a send costs"): system calls, epoll waits,
# context switches and kernel timers armed per request sent (perf's software events and
# syscall tracepoints), and, with CALLGRIND=1, the load thread's user-space instructions per
# request (callgrind, counting only from worker_main). Target: knee serve --preset null.
#
# Then CPU time per request (user + system of the generator process, /usr/bin/time) against
# wrk2 at the same rates: knee run, knee run --timer-slack SLACK and wrk2 (-t1 -c50 -R),
# interleaved REPS times, the generator pinned on GEN_CPU and the server on SERVER_CPU. wrk2
# is not in Debian: build it from https://github.com/giltene/wrk2 outside the repository and
# give its binary as WRK2=/path/to/wrk; without it the script says so and measures knee alone.
# CPU time is less disturbed by other load than wall time, but not immune: on a shared
# machine compare the spread of the REPS runs before trusting a ratio.
#
#   bench/open_loop_cost.sh [SECONDS]        (default 3 s per rate)
#   env: RATES="5000 20000" KNEE=build/knee CALLGRIND=0|1 COUNTS=1|0 CPU=1|0 REPS=3
#        WRK2=/path/to/wrk2/wrk SLACK=1ms GEN_CPU=0 SERVER_CPU=1
set -euo pipefail
SECS=${1:-3}
RATES=${RATES:-5000 20000}
HERE=$(cd "$(dirname "$0")" && pwd)
KNEE=${KNEE:-$HERE/../build/knee}
REPS=${REPS:-3}
SLACK=${SLACK:-1ms}
GEN_CPU=${GEN_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
COUNTS=${COUNTS:-1}
CPU=${CPU:-1}
WRK2=${WRK2:-}
if [ "$COUNTS" = 1 ]; then
  command -v perf >/dev/null || { echo "open_loop_cost: perf not found (linux-perf; COUNTS=0 skips the counts)" >&2; exit 2; }
fi
if [ "$CPU" = 1 ]; then
  for tool in taskset /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "open_loop_cost: $tool not found (CPU=0 skips the CPU comparison)" >&2; exit 2; }
  done
fi
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

taskset -c "$SERVER_CPU" "$KNEE" serve --preset null >"$tmp/serve" &
pid=$!
for _ in $(seq 50); do grep -q listening "$tmp/serve" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\) .*/\1/p' "$tmp/serve")
url="http://127.0.0.1:$port/"
events=context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_epoll_pwait2
events=$events,syscalls:sys_enter_sendto,syscalls:sys_enter_read,timer:hrtimer_start
if [ "$COUNTS" = 1 ] && ! perf stat -e "$events" -- true >/dev/null 2>&1; then
  echo "# open_loop_cost: counts skipped, perf cannot read the syscall tracepoints here (perf_event_paranoid?)"
  COUNTS=0
fi

# knee's lag p99 (ms) from its summary: the full table ("lag (ms): ..." then the row) or the
# compact one ("  lag (ms)  count p50 p90 p99 ...")
lag_p99() { awk '/^lag \(ms\)/ { getline; print $8; exit } /^  lag \(ms\)/ { print $6; exit }' "$1"; }
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for slack in 0 "$SLACK"; do
  [ "$COUNTS" = 1 ] || break
  extra=()
  [ "$slack" = 0 ] || extra=(--timer-slack "$slack")
  echo "# knee run -t 1 -c 50 -R RATE -d ${SECS}s ${extra[*]} against knee serve --preset null; per request sent"
  printf '%7s %6s %8s %8s %8s %8s %8s %8s %10s\n' rate sent syscalls pwait2 sendto read ctxsw hrtimer 'lag p99'
  for r in $RATES; do
    perf stat -x, -e "$events" -o "$tmp/perf" -- "$KNEE" run -t 1 -c 50 -R "$r" -d "${SECS}s" "${extra[@]}" "$url" >"$tmp/run" 2>&1 || true
    sent=$(grep -oE '^  sent [0-9,]+ =' "$tmp/run" | tr -dc 0-9)
    lag=$(lag_p99 "$tmp/run")ms
    awk -F, -v r="$r" -v s="$sent" -v lag="$lag" '/^[0-9]/ { v[$3] = $1 / s }
      END { printf "%7d %6d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %10s\n", r, s,
            v["raw_syscalls:sys_enter"], v["syscalls:sys_enter_epoll_pwait2"], v["syscalls:sys_enter_sendto"],
            v["syscalls:sys_enter_read"], v["context-switches"], v["timer:hrtimer_start"], lag }' "$tmp/perf"
  done
done

# CPU per request against wrk2. wrk2 reports the requests it completed; knee the requests it
# sent (all completed against this server: the summary's identities say so).
cpu_of() { awk '{ print $(NF-1) + $NF }' "$1"; }
if [ "$CPU" = 1 ]; then
  if [ -z "$WRK2" ] || [ ! -x "$WRK2" ]; then
    echo "# wrk2: not found (WRK2='${WRK2}'): build https://github.com/giltene/wrk2 outside the repository and"
    echo "#       give WRK2=/path/to/wrk; measuring knee alone"
    WRK2=
  fi
  echo "# CPU per request (user+sys of the generator process, µs), generator on CPU $GEN_CPU, server on CPU $SERVER_CPU,"
  echo "# -t1 -c50, ${SECS} s, $REPS interleaved runs; lag p99 (knee) in ms"
  printf '%7s %4s %22s %22s %22s\n' rate rep 'knee us (lag p99)' "slack $SLACK us (lag p99)" 'wrk2 us'
  for r in $RATES; do
    for i in $(seq "$REPS"); do
      row=()
      for gen in knee slack wrk2; do
        case $gen in
          knee) cmd=("$KNEE" run -t 1 -c 50 -R "$r" -d "${SECS}s" "$url") ;;
          slack) cmd=("$KNEE" run -t 1 -c 50 -R "$r" -d "${SECS}s" --timer-slack "$SLACK" "$url") ;;
          wrk2)
            [ -n "$WRK2" ] || { row+=("-"); continue; }
            cmd=("$WRK2" -t1 -c50 -R"$r" -d"${SECS}s" "$url") ;;
        esac
        /usr/bin/time -f '%U %S' -o "$tmp/time" taskset -c "$GEN_CPU" "${cmd[@]}" >"$tmp/out" 2>&1 || true
        if [ "$gen" = wrk2 ]; then
          n=$(awk '/requests in/ { print $1; exit }' "$tmp/out")
          lag=
        else
          n=$(grep -oE '^  sent [0-9,]+ =' "$tmp/out" | tr -dc 0-9)
          lag=$(lag_p99 "$tmp/out")
        fi
        us=$(awk -v c="$(cpu_of "$tmp/time")" -v n="${n:-0}" 'BEGIN { if (n > 0) printf "%.1f", c / n * 1e6; else print "?" }')
        row+=("$us${lag:+ ($lag)}")
      done
      printf '%7d %4d %22s %22s %22s\n' "$r" "$i" "${row[@]}"
    done
  done
fi
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
