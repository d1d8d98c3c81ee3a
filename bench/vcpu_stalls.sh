#!/usr/bin/env bash
# How often the generator's CPU stops running a thread that never sleeps (docs/INTERNALS.md
# "The schedule timer's own lateness"): bench/vcpu_stalls.c, built here with cc, pinned on
# GEN_CPU for SECONDS, first with the other CPU idle, then with SERVER_CPU busy (a shell loop,
# as nginx is under load). Counts of gaps between two clock reads above each size: the floor
# under any generator's lag on this machine. REPS rounds.
#
#   bench/vcpu_stalls.sh [SECONDS]      env: REPS=3 GEN_CPU=1 SERVER_CPU=0 CC=cc
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SECS=${1:-5}
REPS=${REPS:-3}
GEN_CPU=${GEN_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
CC=${CC:-cc}
command -v taskset >/dev/null || { echo "vcpu_stalls: taskset not found" >&2; exit 2; }
tmp=$(mktemp -d)
busy=
trap '[ -z "$busy" ] || kill "$busy" 2>/dev/null; rm -rf "$tmp"' EXIT
"$CC" -O2 -Wall -Wextra -o "$tmp/vcpu_stalls" "$HERE/vcpu_stalls.c"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg); probe on CPU $GEN_CPU"
for i in $(seq "$REPS"); do
    printf 'idle %d: ' "$i"
    taskset -c "$GEN_CPU" "$tmp/vcpu_stalls" "$SECS"
    taskset -c "$SERVER_CPU" sh -c 'while :; do :; done' &
    busy=$!
    printf 'busy %d: ' "$i"
    taskset -c "$GEN_CPU" "$tmp/vcpu_stalls" "$SECS"
    kill "$busy"
    wait "$busy" 2>/dev/null || true
    busy=
done
