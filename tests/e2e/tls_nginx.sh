#!/usr/bin/env bash
# The TLS and HTTP/2 client transport (src/tls, src/h2) against nginx (nginx-light: ssl and
# http_v2) configured here on loopback with certificates made here (a throwaway CA; a good, an
# expired and a wrongly named server certificate), and against misbehaving peers
# (tests/e2e/tls_peer.py). The client is knee_probe (tests/probe), which drives the transport as
# knee run's worker will. Every failure must come back with its own reason.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
: "${KNEE_BUILD:?KNEE_BUILD must name the build dir}"
PROBE=$KNEE_BUILD/knee_probe
source "$KNEE_SRC/tests/e2e/nginx_tls.bash"
[[ -x $PROBE ]] || fail "no $PROBE (build the tests)"

# ---- certificates --------------------------------------------------------------------------
cd "$TMP"
nginx_tls_certs

# ---- nginx: one worker, several servers --------------------------------------------------------
declare -A P
for n in h2 h1 h2cap expired wrong tls12 plain h2c; do P[$n]=$(free_port); done
nginx_tls_start "${P[h2c]}" <<CONF
  server { listen 127.0.0.1:${P[h2]} ssl http2; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[h1]} ssl; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[h2cap]} ssl http2; http2_max_concurrent_streams 2;
           location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[expired]} ssl; ssl_certificate $TMP/expired.pem;
           ssl_certificate_key $TMP/expired.key; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[wrong]} ssl; ssl_certificate $TMP/wrong.pem;
           ssl_certificate_key $TMP/wrong.key; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[tls12]} ssl; ssl_protocols TLSv1.2; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[plain]}; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[h2c]} http2; location / { return 200 "ok\n"; } }
CONF

# expect REASON ARGS...: knee_probe's first line says reason=REASON (and, for none, exit 0)
expect() {
    local reason=$1
    shift
    set +e
    "$PROBE" --timeout-ms 10000 "$@" >out.txt 2>err.txt
    local rc=$?
    set -e
    grep -q "^conn=0 .* reason=$reason " out.txt || { cat out.txt err.txt; fail "reason $reason expected for: $*"; }
    [[ $reason != none || $rc -eq 0 ]] || { cat out.txt; fail "exit $rc for: $*"; }
}
has() { grep -q -- "$1" out.txt || { cat out.txt; fail "no '$1' for: $2"; }; }
U() { echo "https://127.0.0.1:${P[$1]}/"; }

# ---- what must work ----------------------------------------------------------------------------
expect none --cacert ca.pem -n 100 -m 8 "$(U h2)"
has " proto=h2 " "ALPN h2"
has " completed=100 ok=100 " "100 streams answered"
has " server_max_streams=128 max_open=8 " "the user's cap (nginx allows 128)"
has " version=TLSv1.3 " "TLS 1.3"
expect none --cacert ca.pem --http1.1 -n 20 "https://localhost:${P[h2]}/" # by name, with SNI
has " proto=http/1.1 " "--http1.1 on an h2 server"
has " completed=20 " "20 keep-alive requests"
expect none --cacert ca.pem -n 30 -m 8 "$(U h2cap)"
has " server_max_streams=2 max_open=2 " "the server's SETTINGS_MAX_CONCURRENT_STREAMS caps the streams"
expect none --cacert ca.pem "$(U h1)"
has " proto=http/1.1 " "no h2 on the server: ALPN picks http/1.1"
expect none --cacert ca.pem --tls-version 1.2:1.2 "$(U h2)"
has " version=TLSv1.2 " "--tls-version 1.2:1.2"
expect none --cacert ca.pem --tls-version 1.2:1.2 --ciphers ECDHE-RSA-AES128-GCM-SHA256 "$(U h1)"
has " cipher=ECDHE-RSA-AES128-GCM-SHA256 " "--ciphers"
expect none --h2c -n 50 -m 10 "http://127.0.0.1:${P[h2c]}/"
has " proto=h2 .* completed=50 " "h2c with prior knowledge"

# resumption: one full handshake, then resumed ones; off: all full
for v in 1.3 1.2:1.2; do
    "$PROBE" --cacert ca.pem --resume --tls-version "$v" -c 4 "$(U h2)" >out.txt || { cat out.txt; fail "resume $v"; }
    has "total connections=4 handshakes_full=1 resumed=3 " "--tls-resume with TLS $v"
done
"$PROBE" --cacert ca.pem -c 3 "$(U h2)" >out.txt || fail "no resume"
has "total connections=3 handshakes_full=3 resumed=0 " "no resumption without --tls-resume"

# ---- what must fail, each with its reason ----------------------------------------------------------
expect tls_verify "$(U h2)"                                     # the system store does not know our CA
expect tls_expired --cacert ca.pem "$(U expired)"
has "certificate has expired" "the expired certificate's words"
expect tls_hostname --cacert ca.pem "$(U wrong)"
expect none --cacert ca.pem --insecure "$(U wrong)"             # --insecure: no verification at all
expect tls_alert --cacert ca.pem --http2 "$(U h1)"              # h2 forced, the server speaks HTTP/1.1
has "no application protocol" "nginx's alert"
expect tls_alert --cacert ca.pem --tls-version 1.3 "$(U tls12)" # versions that do not meet
has "protocol version" "the version alert"
expect tls_protocol --cacert ca.pem "https://127.0.0.1:${P[plain]}/" # a plain HTTP server
has "wrong version number" "OpenSSL's words"
expect h2_not_h2 --h2c "http://127.0.0.1:${P[plain]}/"          # h2c to an HTTP/1.1 server
expect refused "https://127.0.0.1:$(free_port)/"

# misbehaving peers
start_peer() {
    python3 "$KNEE_SRC/tests/e2e/tls_peer.py" --cert good.pem --key good.key "$@" >peer.out 2>peer.err &
    PIDS+=($!)
    for i in $(seq 100); do grep -q '^PORT ' peer.out 2>/dev/null && break; sleep 0.1; done
    PEER=$(awk '/^PORT /{print $2}' peer.out)
    [[ -n $PEER ]] || { cat peer.err; fail "tls_peer.py did not start"; }
}
start_peer --mode stall
expect tls_handshake_timeout --cacert ca.pem --handshake-timeout-ms 300 "https://127.0.0.1:$PEER/"
start_peer --mode garbage
expect tls_protocol --cacert ca.pem "https://127.0.0.1:$PEER/"
has " phase=http " "garbage after the handshake"
start_peer --mode inside
expect http_invalid --cacert ca.pem "https://127.0.0.1:$PEER/"
echo "ok"
