#!/usr/bin/env bash
# What one wake-up costs a thread on this machine (docs/INTERNALS.md "Open loop: what a send
# costs"): bench/wake_cost.c, built here with cc, run pinned on one CPU for each way knee's load
# thread can wait for its next send: sleeping in epoll_pwait2 until a timer (1 ns timer slack,
# as knee run), waking on IO (another thread writes an eventfd: a response arriving), polling
# the clock (--spin), and sleeping with a 1 ms timer slack (--timer-slack 1ms: sends that fall
# due together share one wake). The CPU time is the waiting thread's own (user + system); it
# depends on what else the CPU does (a CPU that goes idle between wakes pays for leaving idle,
# a busy one does not), so run it REPS times and read the spread.
#
#   bench/wake_cost.sh            env: REPS=3 COUNT=5000 GEN_CPU=0 CC=cc
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPS=${REPS:-3}
COUNT=${COUNT:-5000}
GEN_CPU=${GEN_CPU:-0}
CC=${CC:-cc}
command -v taskset >/dev/null || { echo "wake_cost: taskset not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$CC" -O2 -Wall -Wextra -o "$tmp/wake_cost" "$HERE/wake_cost.c" -lpthread
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg); CPU $GEN_CPU; $COUNT periods per line"
for i in $(seq "$REPS"); do
  for m in "sleep 200" "sleep 50" "io 200" "spin 200" "sleep 200 1000" "sleep 50 1000"; do
    read -r mode gap slack <<<"$m"
    taskset -c "$GEN_CPU" "$tmp/wake_cost" "$mode" "$gap" "$COUNT" ${slack:+"$slack"}
  done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
