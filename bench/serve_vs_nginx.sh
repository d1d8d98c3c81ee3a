#!/usr/bin/env bash
# knee serve --preset null against nginx (Debian nginx-light, one worker, no access log),
# both answering GET / with the same 2-byte body "ok", both pinned to the same CPU, and
# measured by wrk pinned to another CPU, in interleaved pairs (knee first in odd rounds,
# nginx first in even rounds) so drift in the machine hits both alike.
#
#   bench/serve_vs_nginx.sh [ROUNDS] [SECONDS]          (defaults 5 rounds of 10 s)
#   env: CONNS=50 DEPTH=1 (DEPTH>1: wrk pipelines DEPTH requests per write)
#        SERVER_CPU=0 CLIENT_CPU=1 KNEE=build/knee
#
# Per run it prints wrk's requests/s and latency p50/p99, and the server's own CPU time
# per request (utime+stime from /proc, so a server that is not the bottleneck still shows
# how much it costs). Goal: knee/nginx throughput ratio >= 1.0 (median over rounds).
set -euo pipefail
ROUNDS=${1:-5}
SECS=${2:-10}
CONNS=${CONNS:-50}
DEPTH=${DEPTH:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
KNEE=${KNEE:-$HERE/../build/knee}
for t in wrk nginx taskset python3 curl; do
  command -v "$t" >/dev/null || { echo "serve_vs_nginx: $t not found (scripts/deps.sh --bench installs it)" >&2; exit 2; }
done
[[ -x $KNEE ]] || { echo "serve_vs_nginx: $KNEE not built (run make)" >&2; exit 2; }

tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

read -r NPORT KPORT < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

cat > "$tmp/nginx.conf" <<CONF
worker_processes 1;
master_process off;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    default_type text/plain;
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:$NPORT;
        location / { return 200 "ok"; }
    }
}
CONF
taskset -c "$SERVER_CPU" nginx -e "$tmp/error.log" -c "$tmp/nginx.conf" -p "$tmp" &
NPID=$!; pids+=("$NPID")
taskset -c "$SERVER_CPU" "$KNEE" serve --preset null --listen "127.0.0.1:$KPORT" >"$tmp/knee.out" &
KPID=$!; pids+=("$KPID")
for port in "$NPORT" "$KPORT"; do
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
done
for port in "$NPORT" "$KPORT"; do
  body=$(curl -sf "http://127.0.0.1:$port/")
  [[ $body == ok ]] || { echo "serve_vs_nginx: port $port answered '$body', not 'ok'" >&2; exit 1; }
done
nbytes=$(curl -si "http://127.0.0.1:$NPORT/" | wc -c)
kbytes=$(curl -si "http://127.0.0.1:$KPORT/" | wc -c)

script=()
(( DEPTH > 1 )) && script=(-s "$HERE/serve_pipeline.lua")
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run NAME PORT PID -> "rps p50 p99 cpu_us_per_req"
run() {
  local port=$2 pid=$3 t0 t1 out
  t0=$(cpu_ticks "$pid")
  out=$(DEPTH=$DEPTH taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d"${SECS}s" --latency "${script[@]}" "http://127.0.0.1:$port/")
  t1=$(cpu_ticks "$pid")
  awk -v ticks=$((t1 - t0)) -v hz="$hz" '
    /requests in/ { n = $1 }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = $2 } $1 == "99%" { p99 = $2 }
    /Non-2xx|Socket errors/ { bad = bad " " $0 }
    END { printf "%.0f %s %s %.2f%s\n", rps, p50, p99, (n > 0 ? ticks / hz * 1e6 / n : 0), (bad ? " !" bad : "") }' <<<"$out"
}

echo "# knee serve null vs nginx $(nginx -v 2>&1 | sed 's/.*nginx\///'): ${ROUNDS} rounds x ${SECS}s, wrk -t1 -c${CONNS}, pipeline depth ${DEPTH}"
echo "# servers on CPU ${SERVER_CPU}, wrk on CPU ${CLIENT_CPU}; response bytes (head+body): knee ${kbytes}, nginx ${nbytes}"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
run knee "$KPORT" "$KPID" >/dev/null   # warm-up, not counted
run nginx "$NPORT" "$NPID" >/dev/null
printf '%-5s %11s %9s %9s %8s   %11s %9s %9s %8s   %6s\n' round knee_rps p50 p99 cpu_us nginx_rps p50 p99 cpu_us ratio
ratios=(); kcpus=(); ncpus=()
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then k=$(run knee "$KPORT" "$KPID"); n=$(run nginx "$NPORT" "$NPID")
  else n=$(run nginx "$NPORT" "$NPID"); k=$(run knee "$KPORT" "$KPID"); fi
  read -r krps kp50 kp99 kcpu kbad <<<"$k"
  read -r nrps np50 np99 ncpu nbad <<<"$n"
  ratio=$(awk -v a="$krps" -v b="$nrps" 'BEGIN { printf "%.3f", a / b }')
  ratios+=("$ratio"); kcpus+=("$kcpu"); ncpus+=("$ncpu")
  printf '%-5s %11s %9s %9s %8s   %11s %9s %9s %8s   %6s %s %s\n' "$r" "$krps" "$kp50" "$kp99" "$kcpu" "$nrps" "$np50" "$np99" "$ncpu" "$ratio" "${kbad:-}" "${nbad:-}"
done
printf '%s\n' "${ratios[@]}" | sort -g | awk -v goal=1.0 '
  { v[NR] = $1 } END {
    med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "knee/nginx throughput ratio: median %.3f (min %.3f, max %.3f) over %d rounds: %s\n",
      med, v[1], v[NR], NR, (med >= goal ? "meets the goal (>= 1.0)" : "BELOW the goal of 1.0") }'
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "server CPU per request (median): knee $(median "${kcpus[@]}") us, nginx $(median "${ncpus[@]}") us"
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
