#!/usr/bin/env bash
# What one open-loop request costs knee run and wrk2, against nginx (docs/INTERNALS.md "Open
# loop: what a send costs"): first counts that do not depend on how loaded the machine is
# (system calls, epoll waits, sends, reads, context switches and kernel timers armed per
# request, perf's software events and syscall tracepoints), with each run's CPU per request
# (perf task-clock: load-dependent, labelled so) and knee's lag p99; then CPU time per request
# (user + system of the generator process, /usr/bin/time), the generators interleaved REPS
# times; with CALLGRIND=1, the load thread's user-space instructions per request.
#
# Generators (GENS): knee (knee run, full precision: responses read at the next send's wake,
# timed by the kernel), kprompt (the same with --prompt-reads: a wake for each response), slack
# (knee run --timer-slack SLACK), prompt (the same with --prompt-reads),
# auto (knee run --timer-slack auto), base and bslack (knee and slack with another build of
# knee, BASE=/path/to/knee: two builds in one interleaved run) and wrk2 (-t1 -c50 -R). All run
# -t 1 -c 50, pinned on GEN_CPU; nginx (one worker, `return 200 "hello\n"`, bench/common.bash)
# on SERVER_CPU.
# TARGET=knee measures against knee serve --preset null instead. wrk2 is not in Debian: build
# https://github.com/giltene/wrk2 outside the repository and give WRK2=/path/to/wrk; without
# it the script says so and measures knee alone. wrk2 counts completed requests, knee sent
# ones (all complete against these servers: the summary's identities say so).
# RT=1 runs the server and every generator SCHED_FIFO (chrt -f 20): on a machine loaded by
# other work they then keep their plans (what the counts assume) instead of queueing behind it.
#
#   bench/open_loop_cost.sh [SECONDS]        (default 3 s per run)
#   env: RATES="5000 20000 50000" GENS="knee slack auto wrk2" SLACK=1ms REPS=3
#        COUNTS=1|0 CPU=1|0 CALLGRIND=0|1 WRK2=/path/to/wrk TARGET=nginx|knee RT=0|1
#        KNEE=build/knee BASE=/path/to/another/knee GEN_CPU=1 SERVER_CPU=0
set -euo pipefail
. "$(dirname "$0")/common.bash"
SECS=${1:-3}
RATES=${RATES:-5000 20000 50000}
GENS=${GENS:-knee slack auto wrk2}
REPS=${REPS:-3}
SLACK=${SLACK:-1ms}
COUNTS=${COUNTS:-1}
CPU=${CPU:-1}
TARGET=${TARGET:-nginx}
WRK2=${WRK2:-/work/scratch/wrk2/wrk}
RT=${RT:-0}
rt=()
[ "$RT" = 1 ] && rt=(chrt -f 20)
bench_need taskset
[ "$COUNTS" = 1 ] && bench_need perf
[ "$CPU" = 1 ] && bench_need /usr/bin/time
bench_tmp open_loop_cost

if [ "$TARGET" = knee ]; then
    "${rt[@]}" taskset -c "$SERVER_CPU" "$KNEE" serve --preset null >"$TMP/serve" &
    BENCH_PIDS+=($!)
    for _ in $(seq 50); do grep -q listening "$TMP/serve" && break; sleep 0.1; done
    URL="http://127.0.0.1:$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\) .*/\1/p' "$TMP/serve")/"
    target="knee serve --preset null"
else
    bench_need nginx
    bench_nginx "$SERVER_CPU"
    target="nginx $(nginx_version), one worker"
fi
if [ "$RT" = 1 ]; then # the server's processes (nginx's master and worker) SCHED_FIFO too
    for p in "${BENCH_PIDS[@]}" $(pgrep -P "${BENCH_PIDS[0]}" || true); do chrt -f -p 20 "$p" >/dev/null; done
    target="$target, SCHED_FIFO"
fi
BASE=${BASE:-}
if [[ $GENS == *base* || $GENS == *bslack* ]] && [[ ! -x $BASE ]]; then
    echo "bench: GENS names base or bslack: give BASE=/path/to/another/knee" >&2
    exit 1
fi
if [ -z "$WRK2" ] || [ ! -x "$WRK2" ]; then
    echo "# wrk2: not found (WRK2='${WRK2}'): build https://github.com/giltene/wrk2 outside the repository and"
    echo "#       give WRK2=/path/to/wrk; measuring knee alone"
    GENS=${GENS//wrk2/}
fi

# the command line of generator $1 at rate $2 for $3 seconds
gen_cmd() {
    case $1 in
        knee) cmd=("$KNEE" run -t 1 -c 50 -R "$2" -d "${3}s" "$URL") ;;
        kprompt) cmd=("$KNEE" run -t 1 -c 50 -R "$2" -d "${3}s" --prompt-reads "$URL") ;;
        slack) cmd=("$KNEE" run -t 1 -c 50 -R "$2" -d "${3}s" --timer-slack "$SLACK" "$URL") ;;
        prompt) cmd=("$KNEE" run -t 1 -c 50 -R "$2" -d "${3}s" --timer-slack "$SLACK" --prompt-reads "$URL") ;;
        auto) cmd=("$KNEE" run -t 1 -c 50 -R "$2" -d "${3}s" --timer-slack auto "$URL") ;;
        base) cmd=("$BASE" run -t 1 -c 50 -R "$2" -d "${3}s" "$URL") ;;
        bslack) cmd=("$BASE" run -t 1 -c 50 -R "$2" -d "${3}s" --timer-slack "$SLACK" "$URL") ;;
        wrk2) cmd=("$WRK2" -t1 -c50 -R"$2" -d"${3}s" "$URL") ;;
    esac
}
# requests done by the run whose output is $2 (generator $1): knee's sent, wrk2's completed
done_of() {
    if [ "$1" = wrk2 ]; then awk '/requests in/ { print $1; exit }' "$2"
    else grep -oE '^  sent [0-9,]+ =' "$2" | tr -dc 0-9; fi
}
# knee's lag p99 (ms) from its summary: the full table ("lag (ms): ..." then the row) or the
# compact one ("  lag (ms)  count p50 p90 p99 ...")
lag_p99() { awk '/^lag \(ms\)/ { getline; print $8; exit } /^  lag \(ms\)/ { print $6; exit }' "$1"; }

echo "# target: $target on CPU $SERVER_CPU; generators on CPU $GEN_CPU, -t1 -c50; $(nproc) CPUs"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
events=task-clock,context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_epoll_pwait2
events=$events,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_sendto,syscalls:sys_enter_write
events=$events,syscalls:sys_enter_read,timer:hrtimer_start
if [ "$COUNTS" = 1 ] && ! perf stat -e "$events" -- true >/dev/null 2>&1; then
    echo "# counts skipped: perf cannot read the syscall tracepoints here (perf_event_paranoid?)"
    COUNTS=0
fi
if [ "$COUNTS" = 1 ]; then
    echo "# per request done (${SECS} s per run); waits: epoll_pwait2 + epoll_wait; sends: sendto + write;"
    echo "# cpu: perf task-clock per request (µs; depends on the machine's load); lag p99: knee's summary"
    printf '%-6s %6s %7s %8s %7s %7s %7s %7s %8s %8s %9s\n' gen rate done syscalls waits sends reads ctxsw hrtimer \
        'cpu us' 'lag p99'
    for r in $RATES; do
        for gen in $GENS; do
            gen_cmd "$gen" "$r" "$SECS"
            perf stat -x, -e "$events" -o "$TMP/perf" -- "${rt[@]}" taskset -c "$GEN_CPU" "${cmd[@]}" >"$TMP/run" 2>&1 || true
            n=$(done_of "$gen" "$TMP/run")
            lag=-
            [ "$gen" = wrk2 ] || lag=$(lag_p99 "$TMP/run")ms
            awk -F, -v g="$gen" -v r="$r" -v s="${n:-0}" -v lag="$lag" '/^[0-9]/ { v[$3] = $1 }
              END { if (s == 0) { printf "%-6s %6d   (no requests done)\n", g, r; exit }
                    printf "%-6s %6d %7d %8.3f %7.3f %7.3f %7.3f %7.3f %8.3f %8.1f %9s\n", g, r, s,
                      v["raw_syscalls:sys_enter"] / s,
                      (v["syscalls:sys_enter_epoll_pwait2"] + v["syscalls:sys_enter_epoll_wait"]) / s,
                      (v["syscalls:sys_enter_sendto"] + v["syscalls:sys_enter_write"]) / s,
                      v["syscalls:sys_enter_read"] / s, v["context-switches"] / s,
                      v["timer:hrtimer_start"] / s, v["task-clock"] * 1000 / s, lag }' "$TMP/perf"
        done
    done
fi

# CPU per request, the generators interleaved: user + system of the generator process.
cpu_of() { awk '{ print $(NF-1) + $NF }' "$1"; }
if [ "$CPU" = 1 ]; then
    echo "# CPU per request (user+sys of the generator process, µs), -t1 -c50, ${SECS} s, $REPS interleaved runs;"
    echo "# knee's lag p99 in ms in parentheses"
    printf '%7s %4s' rate rep
    for gen in $GENS; do printf ' %20s' "$gen"; done
    printf '\n'
    for r in $RATES; do
        for i in $(seq "$REPS"); do
            printf '%7d %4d' "$r" "$i"
            for gen in $GENS; do
                gen_cmd "$gen" "$r" "$SECS"
                /usr/bin/time -f '%U %S' -o "$TMP/time" "${rt[@]}" taskset -c "$GEN_CPU" "${cmd[@]}" >"$TMP/out" 2>&1 || true
                n=$(done_of "$gen" "$TMP/out")
                lag=
                [ "$gen" = wrk2 ] || lag=$(lag_p99 "$TMP/out")
                us=$(awk -v c="$(cpu_of "$TMP/time")" -v n="${n:-0}" \
                    'BEGIN { if (n > 0) printf "%.1f", c / n * 1e6; else print "?" }')
                printf ' %20s' "$us${lag:+ ($lag)}"
            done
            printf '\n'
        done
    done
fi
if [ "${CALLGRIND:-0}" = 1 ] && ! command -v valgrind >/dev/null; then
    echo "# callgrind skipped: valgrind not found"
elif [ "${CALLGRIND:-0}" = 1 ]; then
    echo "# callgrind, load thread only (--toggle-collect=worker_main), 2 s per rate"
    for r in $RATES; do
        valgrind --tool=callgrind --toggle-collect=worker_main --callgrind-out-file="$TMP/cg" \
            "$KNEE" run -t 1 -c 50 -R "$r" -d 2s "$URL" >"$TMP/run" 2>&1 || true
        sent=$(done_of knee "$TMP/run")
        ir=$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$TMP/run" | tr -d ,)
        echo "rate $r: sent $sent, instructions $ir, per request $((ir / sent))"
    done
fi
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
