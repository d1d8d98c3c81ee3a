# Shared by the benches that measure against nginx (run_vs_wrk.sh, run_tls_vs_peers.sh,
# metrics_overhead.sh, instr_per_request.sh); sourced, not run (bench/run.sh runs *.sh only).
# Sourcing it moves to the repository root and sets, from the environment first:
#   KNEE (build/knee), SERVER_CPU (0: nginx and helpers), GEN_CPU (1: the generator).
# Then:
#   bench_need TOOL...        each TOOL on the PATH (/usr/bin/time: that file), and KNEE built
#   bench_tmp PREFIX          TMP, a new directory /tmp/PREFIX.XXXXXX; at exit every pid in
#                             BENCH_PIDS is stopped, bench_exit_hook runs (when defined), TMP goes
#   free_port, wait_port PORT a free 127.0.0.1 port; wait until PORT accepts (exit 1 if never)
#   bench_nginx CPU [HTTP [LISTEN]]  nginx, one worker, `return 200 "hello\n"` on a free port
#                             (PORT, URL http://127.0.0.1:PORT/), pinned to CPU (empty: not
#                             pinned); HTTP: more lines for its http block (TLS), LISTEN: more
#                             words for its listen line ("ssl http2 backlog=4096")
#   nginx_version             e.g. 1.22.1
#   run_timed PREFIX CMD...   CMD pinned to GEN_CPU under /usr/bin/time: PREFIX.out, .err and
#                             .time (user and system seconds); its exit status
cd "$(dirname "${BASH_SOURCE[0]}")/.."
KNEE=${KNEE:-build/knee}
SERVER_CPU=${SERVER_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
command -v nginx >/dev/null || PATH=$PATH:/usr/sbin

bench_need() {
    local tool
    for tool in "$@"; do
        if [[ $tool == /* ]]; then
            [[ -x $tool ]] || { echo "bench: $tool is missing (package $(basename "$tool"))" >&2; exit 1; }
        else
            command -v "$tool" >/dev/null || { echo "bench: $tool is missing (scripts/deps.sh --bench)" >&2; exit 1; }
        fi
    done
    [[ -x $KNEE ]] || { echo "bench: $KNEE not built (make)" >&2; exit 1; }
}

BENCH_PIDS=()
bench_cleanup() {
    local p
    for p in "${BENCH_PIDS[@]}"; do
        { kill "$p" && wait "$p"; } 2>/dev/null || true
    done
    if declare -F bench_exit_hook >/dev/null; then bench_exit_hook; fi
    rm -rf "$TMP"
}

bench_tmp() {
    TMP=$(mktemp -d "/tmp/$1.XXXXXX")
    trap bench_cleanup EXIT
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_port() {
    for _ in $(seq 50); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "bench: nothing listens on port $1" >&2
    exit 1
}

bench_nginx() {
    local cpu=$1 http=${2:-} listen=${3:-} pin=()
    [[ -z $cpu ]] || pin=(taskset -c "$cpu")
    PORT=$(free_port)
    cat >"$TMP/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/error.log;
events { worker_connections 8192; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  client_body_temp_path $TMP; proxy_temp_path $TMP; fastcgi_temp_path $TMP;
  uwsgi_temp_path $TMP; scgi_temp_path $TMP;
$http
  server { listen 127.0.0.1:$PORT $listen; location / { return 200 "hello\n"; } }
}
CONF
    "${pin[@]}" nginx -c "$TMP/nginx.conf" -p "$TMP" >"$TMP/nginx.out" 2>&1 &
    BENCH_PIDS+=($!)
    wait_port "$PORT"
    URL="http://127.0.0.1:$PORT/"
}

nginx_version() { nginx -v 2>&1 | sed 's/.*\///'; }

run_timed() {
    local p=$1
    shift
    /usr/bin/time -f '%U %S' -o "$p.time" taskset -c "$GEN_CPU" "$@" >"$p.out" 2>"$p.err"
}
