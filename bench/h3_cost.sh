#!/usr/bin/env bash
# What HTTP/3 costs knee run against knee's own h2 over TLS, on the same server: Caddy (Debian,
# quic-go; h1, h2 and h3 on one port, a certificate from a throwaway CA) pinned to SERVER_CPU,
# the generator to GEN_CPU, one thread. Closed loop, max throughput, the same connections and
# streams (-c C --streams S) over --http3 and --http2, pairs interleaved (h2, h3, h2, h3, ...)
# so drift on a shared machine hits both alike. CPU per request is the run JSON's
# cpu_us_per_request (user + system of the generator), with the rate and latency p50/p99.
#
#   bench/h3_cost.sh                    REPS=5 DURATION=5
#   REPS=2 DURATION=2 bench/h3_cost.sh  a smoke run
#
# Environment: KNEE (build/knee), REPS, DURATION (s), CONNS (2), STREAMS (8), SERVER_CPU (0),
# GEN_CPU (1). Needs caddy, openssl, taskset, python3, ss.
set -euo pipefail
source "$(dirname "$0")/common.bash" # KNEE, SERVER_CPU, GEN_CPU; the repository root
REPS=${REPS:-5}
DURATION=${DURATION:-5}
CONNS=${CONNS:-2}
STREAMS=${STREAMS:-8}
bench_need caddy openssl taskset python3 ss
bench_tmp knee-bench-h3
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/ca.key" -out "$TMP/ca.pem" -days 2 -subj /CN=knee-bench-ca \
    2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$TMP/srv.key" -out "$TMP/srv.csr" -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$TMP/ext.cnf"
openssl x509 -req -in "$TMP/srv.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" -CAcreateserial -out "$TMP/srv.pem" \
    -days 2 -extfile "$TMP/ext.cnf" 2>/dev/null
PORT=$(free_port)
cat >"$TMP/Caddyfile" <<CADDY
{
  admin off
  auto_https disable_redirects
  storage file_system $TMP/caddy
  servers {
    protocols h1 h2 h3
  }
}
https://127.0.0.1:$PORT {
  tls $TMP/srv.pem $TMP/srv.key
  respond "hello" 200
}
CADDY
HOME=$TMP XDG_DATA_HOME=$TMP XDG_CONFIG_HOME=$TMP taskset -c "$SERVER_CPU" caddy run --config "$TMP/Caddyfile" \
    --adapter caddyfile >"$TMP/caddy.log" 2>&1 &
BENCH_PIDS+=($!)
wait_port "$PORT"
for i in $(seq 50); do ss -Huln "sport = :$PORT" | grep -q . && break || sleep 0.1; done
URL="https://127.0.0.1:$PORT/"
echo "# caddy $(caddy version | cut -d' ' -f1) on CPU $SERVER_CPU, generator on CPU $GEN_CPU, $(nproc) CPUs;" \
    "-t 1 -c $CONNS --streams $STREAMS, ${DURATION}s, $REPS interleaved pairs"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %4s %12s %12s %10s %10s\n' proto rep "req/s" "cpu us/req" "p50 ms" "p99 ms"
for rep in $(seq "$REPS"); do
    for proto in http2 http3; do
        taskset -c "$GEN_CPU" "$KNEE" run "--$proto" --cacert "$TMP/ca.pem" -t 1 -c "$CONNS" --streams "$STREAMS" \
            -d "${DURATION}s" --json "$TMP/$proto-$rep.json" "$URL" >/dev/null 2>&1 || true
        python3 - "$TMP/$proto-$rep.json" "$proto" "$rep" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a = d["all"]
ok = a["outcomes"]["ok"]
e = d["environment"]
print("%-5s %4s %12.0f %12.1f %10.3f %10.3f%s" % ("h" + sys.argv[2][4:], sys.argv[3], d["rates"]["completed"],
      e["cpu_us_per_request"], a["latency"]["p50"], a["latency"]["p99"],
      "" if ok == a["accounting"]["sent"] else "  (not all ok)"))
PY
    done
done
