# Shared by tests/e2e/*.sh (sourced, not a test itself): a temp dir, children that are always
# killed, knee serve, the fault server and nginx on free 127.0.0.1 ports, JSON checks, and the
# tiers' helpers (timing.bash).
set -euo pipefail
: "${KNEE:?KNEE must name the knee binary}" "${KNEE_SRC:?KNEE_SRC must name the source dir}"
source "$KNEE_SRC/tests/e2e/timing.bash"
TMP=$(mktemp -d /tmp/knee-e2e.XXXXXX)
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do
        [[ -n "$p" ]] || continue
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Start the python fault server; sets FS_PORT. Extra args go to the server (--period, --stall).
start_fault_server() {
    python3 "$KNEE_SRC/tests/e2e/fault_server.py" "$@" >"$TMP/fs.out" 2>"$TMP/fs.err" &
    PIDS+=($!)
    local i
    for i in $(seq 100); do
        if grep -q '^PORT ' "$TMP/fs.out" 2>/dev/null; then
            FS_PORT=$(awk '/^PORT /{print $2}' "$TMP/fs.out")
            return 0
        fi
        sleep 0.1
    done
    cat "$TMP/fs.err" >&2
    fail "fault server did not start"
}

# start_knee_serve NAME ARGS...: `knee serve ARGS` in the background, behind the command in the
# array SERVE_WRAP when one is set (nice, taskset, ip netns exec), on 127.0.0.1:0 unless ARGS
# give a --listen (-l); stdout in $TMP/serve-NAME.out, stderr in $TMP/serve-NAME.err; registered
# for cleanup (PIDS). Waits (polling every 50 ms, at most 20 s) until it printed its "listening
# on" line, one per --listen (times --count), and with --metrics-listen its "metrics on" line.
# Sets PID_NAME, PORT_NAME (the first server's port), ADDR_NAME (its HOST:PORT) and, with
# --metrics-listen, MPORT_NAME; port_of NAME PRESET prints the port of NAME's server of PRESET.
SERVE_WRAP=()
start_knee_serve() {
    local name=$1
    shift
    local out="$TMP/serve-$name.out" lines=0 count=1 metrics=0 a prev=""
    for a in "$@"; do
        case $prev in --count) count=$a ;; esac
        case $a in -l | --listen | --listen=*) lines=$((lines + 1)) ;; --metrics-listen | --metrics-listen=*) metrics=1 ;; esac
        prev=$a
    done
    local listen=()
    ((lines)) || { listen=(--listen 127.0.0.1:0); lines=1; }
    lines=$((lines * count))
    "${SERVE_WRAP[@]}" "$KNEE" serve "$@" "${listen[@]}" >"$out" 2>"$TMP/serve-$name.err" &
    local pid=$!
    PIDS+=("$pid")
    local i
    for i in $(seq 400); do
        if [[ $(grep -c '^listening on ' "$out" 2>/dev/null) -ge $lines ]] && { ((!metrics)) || grep -q '^metrics on ' "$out"; }; then
            break
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    local addr
    addr=$(sed -n 's/^listening on \([^ ]*:[0-9]*\) .*/\1/p' "$out" | head -1)
    [[ $(grep -c '^listening on ' "$out") -ge $lines && -n $addr ]] && { ((!metrics)) || grep -q '^metrics on ' "$out"; } ||
        { cat "$out" "$TMP/serve-$name.err" >&2; fail "knee serve $* did not start"; }
    printf -v "PID_$name" '%s' "$pid"
    printf -v "ADDR_$name" '%s' "$addr"
    printf -v "PORT_$name" '%s' "${addr##*:}"
    ((metrics)) && printf -v "MPORT_$name" '%s' "$(sed -n 's|^metrics on http://.*:\([0-9]*\)/metrics$|\1|p' "$out" | head -1)"
    return 0
}

# port_of NAME PRESET: the port of the server of PRESET that start_knee_serve NAME started.
port_of() { sed -n "s/^listening on .*:\([0-9]*\) ($2).*/\1/p" "$TMP/serve-$1.out" | head -1; }

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# nginx (one worker) with a tiny static response on a free port; sets NGX_PORT.
start_nginx() {
    command -v nginx >/dev/null || PATH=$PATH:/usr/sbin
    NGX_PORT=$(free_port)
    mkdir -p "$TMP/nginx"
    cat >"$TMP/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 300s;
  client_body_temp_path $TMP/nginx;
  proxy_temp_path $TMP/nginx;
  fastcgi_temp_path $TMP/nginx;
  uwsgi_temp_path $TMP/nginx;
  scgi_temp_path $TMP/nginx;
  server {
    listen 127.0.0.1:$NGX_PORT;
    location / { return 200 "hello\n"; }
  }
}
CONF
    nginx -c "$TMP/nginx/nginx.conf" -p "$TMP/nginx" >"$TMP/nginx/out" 2>&1 &
    PIDS+=($!)
    local i
    for i in $(seq 100); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $NGX_PORT), 0.2)" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    cat "$TMP/nginx/out" "$TMP/nginx/error.log" >&2 || true
    fail "nginx did not start"
}

# json_check FILE 'python expression over d' MESSAGE: asserts the expression is true.
json_check() {
    python3 - "$1" "$2" "$3" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
def identity(c):
    o = c["outcomes"]
    sent = sum(v for k, v in o.items() if k != "dropped")
    return c["planned"] == c["sent"] + c["dropped"] and c["sent"] == sent and c["dropped"] == o["dropped"]
env = {"d": d, "identity": identity, "tot": d["all"], "acc": d["all"]["accounting"]}
ok = eval(sys.argv[2], env)
if not ok:
    print("FAIL: %s: %s\n  outcomes %s\n  accounting %s" % (sys.argv[3], sys.argv[2], d["outcomes"],
          d["all"]["accounting"]), file=sys.stderr)
    sys.exit(1)
PY
}

# run_knee ARGS...: runs knee, stores the exit code in RC (never aborts the script).
run_knee() {
    set +e
    "$KNEE" "$@"
    RC=$?
    set -e
}

# knee_signalled OUT SIGNALS ARGS...: knee ARGS in the background (stdout and stderr in OUT);
# once knee catches SIGINT (a background job of a non-interactive shell starts with it ignored:
# polled in /proc, bounded) and has run 1.5 s more, each of SIGNALS (e.g. "INT", "INT TERM"),
# 0.3 s apart; waits for knee and stores its exit code in RC.
knee_signalled() {
    local out=$1 signals=$2 sig first=1 i
    shift 2
    "$KNEE" "$@" >"$out" 2>&1 &
    local kp=$!
    PIDS+=("$kp")
    for i in $(seq 400); do
        kill -0 "$kp" 2>/dev/null || break
        (($(awk '/^SigCgt:/ { print "0x" $2 }' "/proc/$kp/status" 2>/dev/null || echo 0) & 2)) && break
        sleep 0.025
    done
    sleep 1.5 # the run under way: requests planned and in flight when the signal comes
    for sig in $signals; do
        ((first)) || sleep 0.3
        first=0
        kill -"$sig" "$kp"
    done
    set +e
    wait "$kp"
    RC=$?
    set -e
}

# NICE: the prefix that runs a process at nice -10 where that is allowed (root, CAP_SYS_NICE),
# else nothing: a timing test's generator and server then keep their timers on a machine that
# other processes load (as capacity_flat.sh's server, run_hostile's and compare_lab's knee).
NICE=()
nice -n -10 true 2>/dev/null && NICE=(nice -n -10)

# run_knee_nice ARGS...: run_knee at $NICE.
run_knee_nice() {
    set +e
    "${NICE[@]}" "$KNEE" "$@"
    RC=$?
    set -e
}

# sigint_drains NAME MIN ARGS...: Ctrl-C during `knee ARGS --json $TMP/NAME.json --out
# $TMP/NAME.csv` (stdout and stderr in $TMP/NAME.txt): planning stops, what is in flight
# finishes, nothing is lost: exit 0, interrupted, the accounting holds, no request cancelled,
# every planned one (at least MIN) ok, a CSV row per planned request.
sigint_drains() {
    local name=$1 min=$2
    shift 2
    local j="$TMP/$name.json"
    knee_signalled "$TMP/$name.txt" INT "$@" --json "$j" --out "$TMP/$name.csv"
    [[ $RC -eq 0 ]] || { cat "$TMP/$name.txt"; fail "$name: exit $RC after SIGINT"; }
    json_check "$j" 'd["interrupted"] and identity(acc) and d["accounting_ok"]' "$name: interrupted, accounting holds"
    json_check "$j" "acc['outcomes']['cancelled'] == 0 and acc['outcomes']['ok'] == acc['planned'] >= $min" \
        "$name: the drain let every in-flight request finish"
    local n
    n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['all']['accounting']['planned'])" "$j")
    [[ $(($(wc -l <"$TMP/$name.csv") - 1)) -eq $n ]] || fail "$name: the CSV has a row per planned request"
}
