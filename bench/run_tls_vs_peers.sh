#!/usr/bin/env bash
# knee run over TLS and HTTP/2 against the peers that speak them, with nginx (Debian, one
# worker, a tiny static response, TLS 1.3 with an RSA-2048 certificate from a throwaway CA) as
# the target. nginx is pinned to CPU 0 and the generator to CPU 1 (taskset), one generator
# thread each; pairs are interleaved (peer, knee, peer, knee, ...) so drift on a shared machine
# hits both alike. CPU time per request comes from /usr/bin/time (user + system of the
# generator process). Neither wrk nor h2load verifies certificates, so knee runs with
# --insecure here too (verification is a per-connection cost: see the handshake section).
#
#   1. HTTP/1.1 keep-alive, max throughput: wrk -t1 -cC vs knee run -t 1 -c C --http1.1
#   2. h2, max throughput, the same connections and streams: h2load -t1 -cH -mS vs
#      knee run -t 1 -c H --streams S (closed loop: H x S clients, as h2load's -m)
#   3. handshake-bound, a new connection per request: wrk -H 'Connection: close' vs knee
#      --http1.1 --no-keepalive, both resuming (wrk reuses its SSL object through SSL_clear and
#      resumes: 99.8% of its handshakes in nginx's $ssl_session_reused, 2026-11-30), and
#      h2load -c N -n N (one request per connection, full handshakes) vs knee --no-keepalive
#      --tls-resume off (h2)
#   4. what a handshake costs per connection: knee's CPU per request with a new connection per
#      request (full, resumed) minus keep-alive, and the tls phase (connected -> handshake done)
#
#   bench/run_tls_vs_peers.sh                    REPS=5 DURATION=10
#   REPS=2 DURATION=3 bench/run_tls_vs_peers.sh  a smoke run
#
# Environment: KNEE (default build/knee), REPS, DURATION (s), CONNS (16), H2_CONNS (4),
# H2_STREAMS (32), HS_CONNS (16: knee's clients in the handshake runs), HS_N (h2load's
# connections, default 4000), SERVER_CPU (0), GEN_CPU (1). Needs nginx, wrk, h2load, openssl,
# taskset, /usr/bin/time, python3.
set -euo pipefail
source "$(dirname "$0")/common.bash" # KNEE, SERVER_CPU, GEN_CPU; the repository root
REPS=${REPS:-5}
DURATION=${DURATION:-10}
CONNS=${CONNS:-16}
H2_CONNS=${H2_CONNS:-4}
H2_STREAMS=${H2_STREAMS:-32}
HS_CONNS=${HS_CONNS:-16}
HS_N=${HS_N:-4000}
bench_need nginx wrk h2load openssl taskset python3 /usr/bin/time
bench_tmp knee-bench-tls
cd "$TMP"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=knee-bench-ca 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext.cnf
openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext.cnf \
    2>/dev/null
cd - >/dev/null
bench_nginx "$SERVER_CPU" "  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_certificate $TMP/srv.pem;
  ssl_certificate_key $TMP/srv.key;
  ssl_session_cache shared:S:10m;
  http2_max_requests 100000000;" "ssl http2 backlog=4096"
URL="https://127.0.0.1:$PORT/"
echo "# nginx $(nginx_version) (TLS: $(openssl version | cut -d' ' -f1-2), RSA-2048) on CPU" \
    "$SERVER_CPU, generator on CPU $GEN_CPU, $(nproc) CPUs; $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)," \
    "$(h2load --version | head -1)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# run_timed (common.bash), a failed run kept as it is (its row says so)
run_timed_any() { run_timed "$@" || true; }

# pair_stats NAME PEER KIND: the pairs file's median row and the per-pair ratio range
pair_stats() {
    python3 - "$TMP/$1" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
if not rows:
    print("no pairs measured")
    sys.exit(0)
col = lambda j: [r[j] for r in rows]
print("median %12.0f %12.0f %8.3f %14.2f %14.2f %8.3f" % tuple(statistics.median(col(j)) for j in range(1, 7)))
print("ratio knee/peer per pair: throughput %.3f..%.3f, CPU per request %.3f..%.3f"
      % (min(col(3)), max(col(3)), min(col(6)), max(col(6))))
PY
}

# one pair's row: "i peer_rps knee_rps ratio peer_cpu_us knee_cpu_us cpu_ratio"
PAIR_PY='
import json, re, sys
kind, p, k, i = sys.argv[1:5]
out = open(p + ".out").read()
if kind == "wrk":
    preq = int(re.search(r"(\d+) requests in", out).group(1))
    prps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
else:
    preq = int(re.search(r"requests: \d+ total, \d+ started, (\d+) done", out).group(1))
    prps = float(re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", out).group(1))
pcpu = sum(map(float, open(p + ".time").read().split()[-2:]))
d = json.load(open(k + ".json"))
kreq = d["all"]["accounting"]["sent"]
krps = d["all"]["rates"]["completed"]
kcpu = sum(map(float, open(k + ".time").read().split()[-2:]))
ok = d["all"]["outcomes"]["ok"] == kreq
print(i, prps, krps, krps / prps, pcpu / preq * 1e6, kcpu / kreq * 1e6, (kcpu / kreq) / (pcpu / preq),
      "" if ok else "# knee had failures")
'

header() {
    printf '%-6s %12s %12s %8s %14s %14s %8s\n' pair "$1_rps" knee_rps ratio "$1_cpu_us" knee_cpu_us cpu_ratio
}

echo
echo "## 1. HTTP/1.1 keep-alive, max throughput: $CONNS connections, 1 thread, ${DURATION}s, $REPS interleaved pairs"
header wrk
: >"$TMP/p1"
for i in $(seq "$REPS"); do
    run_timed_any "$TMP/w$i" wrk -t1 -c"$CONNS" -d"${DURATION}s" "$URL"
    run_timed_any "$TMP/k1$i" "$KNEE" run -t 1 -c "$CONNS" -d "${DURATION}s" -k --http1.1 --json "$TMP/k1$i.json" "$URL"
    python3 -c "$PAIR_PY" wrk "$TMP/w$i" "$TMP/k1$i" "$i" >>"$TMP/p1"
    tail -1 "$TMP/p1" | awk '{printf "%-6s %12.0f %12.0f %8.3f %14.2f %14.2f %8.3f %s\n", $1, $2, $3, $4, $5, $6, $7, $8}'
done
pair_stats p1

echo
echo "## 2. h2, max throughput: $H2_CONNS connections x $H2_STREAMS streams, 1 thread, ${DURATION}s, $REPS pairs"
header h2load
: >"$TMP/p2"
for i in $(seq "$REPS"); do
    run_timed_any "$TMP/h$i" h2load -t1 -c"$H2_CONNS" -m"$H2_STREAMS" -D "$DURATION" "$URL"
    run_timed_any "$TMP/k2$i" "$KNEE" run -t 1 -c "$H2_CONNS" --streams "$H2_STREAMS" -d "${DURATION}s" -k \
        --json "$TMP/k2$i.json" "$URL"
    python3 -c "$PAIR_PY" h2load "$TMP/h$i" "$TMP/k2$i" "$i" >>"$TMP/p2"
    tail -1 "$TMP/p2" | awk '{printf "%-6s %12.0f %12.0f %8.3f %14.2f %14.2f %8.3f %s\n", $1, $2, $3, $4, $5, $6, $7, $8}'
done
pair_stats p2

echo
echo "## 3a. handshake-bound, HTTP/1.1: a new connection (resumed handshake, as wrk's) per request, $HS_CONNS at once, ${DURATION}s"
header wrk
: >"$TMP/p3"
for i in $(seq "$REPS"); do
    run_timed_any "$TMP/wc$i" wrk -t1 -c"$HS_CONNS" -d"${DURATION}s" -H 'Connection: close' "$URL"
    run_timed_any "$TMP/k3$i" "$KNEE" run -t 1 -c "$HS_CONNS" -d "${DURATION}s" -k --http1.1 --no-keepalive \
        --json "$TMP/k3$i.json" "$URL"
    python3 -c "$PAIR_PY" wrk "$TMP/wc$i" "$TMP/k3$i" "$i" >>"$TMP/p3"
    tail -1 "$TMP/p3" | awk '{printf "%-6s %12.0f %12.0f %8.3f %14.2f %14.2f %8.3f %s\n", $1, $2, $3, $4, $5, $6, $7, $8}'
done
pair_stats p3

echo
echo "## 3b. handshake-bound, h2: one request per connection (full handshake); h2load -c $HS_N -n $HS_N, knee $HS_CONNS clients ${DURATION}s"
header h2load
: >"$TMP/p4"
for i in $(seq "$REPS"); do
    run_timed_any "$TMP/hc$i" h2load -t1 -c"$HS_N" -n"$HS_N" -r 40 --rate-period 10ms "$URL"
    run_timed_any "$TMP/k4$i" "$KNEE" run -t 1 -c "$HS_CONNS" -d "${DURATION}s" -k --no-keepalive --tls-resume off \
        --json "$TMP/k4$i.json" "$URL"
    python3 -c "$PAIR_PY" h2load "$TMP/hc$i" "$TMP/k4$i" "$i" >>"$TMP/p4"
    tail -1 "$TMP/p4" | awk '{printf "%-6s %12.0f %12.0f %8.3f %14.2f %14.2f %8.3f %s\n", $1, $2, $3, $4, $5, $6, $7, $8}'
done
pair_stats p4

echo
echo "## 4. what a handshake costs per connection (knee, HTTP/1.1, $HS_CONNS clients, ${DURATION}s each)"
printf '%-22s %12s %14s %12s %12s %10s\n' mode rps cpu_us_per_req tls_p50_ms tls_p99_ms resumed
for mode in keepalive resumed full; do
    case $mode in
    keepalive) extra=() ;;
    resumed) extra=(--no-keepalive) ;;
    full) extra=(--no-keepalive --tls-resume off) ;;
    esac
    run_timed_any "$TMP/c$mode" "$KNEE" run -t 1 -c "$HS_CONNS" -d "${DURATION}s" -k --http1.1 "${extra[@]}" \
        --json "$TMP/c$mode.json" "$URL"
    python3 - "$TMP/c$mode" "$mode" <<'PY'
import json, sys
p, mode = sys.argv[1:3]
d = json.load(open(p + ".json"))
a = d["all"]
cpu = sum(map(float, open(p + ".time").read().split()[-2:]))
hs = a["tls_handshakes"]
tls = a["tls"] or {}
print("%-22s %12.0f %14.2f %12s %12s %10s" % (mode, a["rates"]["completed"], cpu / a["accounting"]["sent"] * 1e6,
      "%.3f" % tls["p50"] if tls.get("p50") is not None else "-", "%.3f" % tls["p99"] if tls.get("p99") is not None else "-",
      "%d/%d" % (hs["resumed"], hs["full"] + hs["resumed"])))
PY
done
python3 - "$TMP" <<'PY'
import json, sys
t = sys.argv[1]
def cpu(m):
    d = json.load(open("%s/c%s.json" % (t, m)))
    return sum(map(float, open("%s/c%s.time" % (t, m)).read().split()[-2:])) / d["all"]["accounting"]["sent"] * 1e6
k = cpu("keepalive")
print("CPU per connection over keep-alive: a full handshake %.0f us, a resumed one %.0f us (generator side)"
      % (cpu("full") - k, cpu("resumed") - k))
PY
echo
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
