#!/usr/bin/env bash
# knee run over TLS and HTTP/2 against nginx (nginx-light: ssl and http_v2) configured here on
# loopback with certificates made here (a throwaway CA; good, expired and wrongly named server
# certificates), against misbehaving peers (tests/e2e/tls_peer.py) and against knee serve
# --tls --h2: https over HTTP/1.1 and h2, h2c, streams, GOAWAY, connection churn and
# resumption, with thresholds and every output (--json, --out CSV and binary, --hlog) read back
# by knee stats; every failure with its outcome and transport cause, the accounting holding;
# bad flags one line and exit 2.
# tier: exact timing
# The timing tier: that at most 10 of the open loop's 1,000 streams meet nginx's GOAWAY twice (a
# slow generator, ASan beside other tests, sends later and meets it more); the exact tier the
# rest, that open loop's streams all accounted for.
source "$KNEE_SRC/tests/e2e/run_common.bash"
source "$KNEE_SRC/tests/e2e/nginx_tls.bash"
cd "$TMP"

# ---- certificates ------------------------------------------------------------------------------
nginx_tls_certs

# ---- nginx: one worker, several servers ---------------------------------------------------------
declare -A P
for n in h2 h1 goaway expired wrong plain h2c; do P[$n]=$(free_port); done
nginx_tls_start "${P[h2c]}" <<CONF
  keepalive_requests 1000000;
  ssl_session_cache shared:S:1m;
  server { listen 127.0.0.1:${P[h2]} ssl http2; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[h1]} ssl; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[goaway]} ssl http2; keepalive_requests 40; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[expired]} ssl; ssl_certificate $TMP/expired.pem;
           ssl_certificate_key $TMP/expired.key; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[wrong]} ssl; ssl_certificate $TMP/wrong.pem;
           ssl_certificate_key $TMP/wrong.key; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[plain]}; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[h2c]} http2; location / { return 200 "ok\n"; } }
CONF
U() { echo "https://127.0.0.1:${P[$1]}/"; }

# run NAME EXPECTED_EXIT ARGS...: knee run with --json NAME.json, summary in NAME.txt; the
# exit code must be the expected one and the accounting must hold.
run() {
    local name=$1 want=$2
    shift 2
    run_knee run --json "$name.json" "$@" >"$name.txt" 2>&1
    [[ $RC -eq $want ]] || { cat "$name.txt"; fail "$name: exit $RC, expected $want: knee run $*"; }
    json_check "$name.json" "d['accounting_ok'] and identity(acc)" "$name: accounting"
    echo "ok: $name (exit $RC)"
}
# cause NAME CAUSE: every request of run NAME failed in transport with CAUSE
cause() {
    json_check "$1.json" "tot['outcomes']['transport'] == tot['accounting']['sent'] > 0 and \
        tot['transport_causes']['$2'] == tot['outcomes']['transport']" "$1: every request $2"
}

# goaway_open: -c 4 caps the pool: each connection carries at most nginx's 40 streams, so 1,000
# streams take 25 connections or more and all but the last 4 end in a GOAWAY, however late a
# loaded generator sends (without the cap it opened up to 166 connections of a few streams
# each). A stream is sent again once: when its second connection reaches nginx's limit too (a
# slow generator, ASan) it is refused twice, a transport outcome with its cause; never lost.
goaway_open() {
    run goaway_open 0 --cacert ca.pem -R 1000 -d 1s -c 4 --streams 16 "$(U goaway)"
    json_check goaway_open.json "tot['outcomes']['ok'] + tot['accounting']['transport_causes']['h2_goaway'] == 1000 and \
tot['h2']['goaway'] >= 20" "goaway, open loop: 1000 ok or refused twice"
}
if in_tier timing; then
    goaway_open
    json_check goaway_open.json "tot['outcomes']['ok'] >= 990" "goaway, open loop: at most 10 refused twice"
    in_tier exact || { echo "ok"; exit 0; }
fi

# ---- what must work --------------------------------------------------------------------------------
# https over HTTP/1.1, closed loop, every output, a threshold
run h1 0 --cacert ca.pem --http1.1 -c 4 -n 2000 --threshold 'p99<5s' --out h1.csv --hlog h1.hlog "$(U h2)"
json_check h1.json "tot['outcomes']['ok'] == 2000 and d['thresholds_pass']" "h1: 2000 ok"
json_check h1.json "tot['protocols'] == {'http/1.1': 4, 'h2': 0} and tot['tls_versions'] == {'TLSv1.3': 4}" \
    "h1: 4 TLS 1.3 connections over http/1.1"
json_check h1.json "tot['tls']['count'] == 4 and tot['tls_handshakes']['full'] + tot['tls_handshakes']['resumed'] == 4" \
    "h1: 4 handshakes timed"
json_check h1.json "d['config']['tls']['verify'] and d['config']['tls']['alpn'] == 'http/1.1'" "h1: config.tls"
json_check h1.json "d['environment']['openssl'].startswith('OpenSSL') and d['environment']['nghttp2']" \
    "h1: OpenSSL's and nghttp2's versions in the environment"
grep -q "^tls: TLSv1.3, http/1.1 (--http1.1); handshakes 4" h1.txt || { cat h1.txt; fail "h1: the tls line"; }
head -1 h1.csv | grep -q ',warmup,tls_ms,protocol,tls,entry,first_event_ms,events$' || fail "h1: CSV header"
[[ $(tail -n +2 h1.csv | wc -l) -eq 2000 ]] || fail "h1: 2000 CSV rows"
[[ $(tail -n +2 h1.csv | grep -c ',h1,full,,,$\|,h1,resumed,,,$') -eq 2000 ]] || fail "h1: every row h1 over TLS"
[[ $(tail -n +2 h1.csv | awk -F, '$12 != ""' | wc -l) -eq 4 ]] || fail "h1: tls_ms on the 4 first requests"
"$KNEE" stats h1.csv >st.txt || fail "knee stats on the CSV"
"$KNEE" stats --column tls_ms h1.csv >st.txt || fail "knee stats --column tls_ms"
grep -Eq "^[^ ]+ +4 " st.txt || { cat st.txt; fail "h1: knee stats sees 4 handshakes"; }
"$KNEE" stats h1.hlog >st.txt || fail "h1: knee stats reads the hlog"

# h2 over ALPN, open loop, the binary log read back by knee stats
run h2 0 --cacert ca.pem -R 800 -d 2s --streams 8 --threshold 'error_rate<1%' --out h2.bin "$(U h2)"
json_check h2.json "tot['outcomes']['ok'] == 1600 and tot['protocols']['h2'] >= 1 and tot['protocols']['http/1.1'] == 0" \
    "h2: 1600 ok over h2"
json_check h2.json "tot['h2']['streams'] == 1600 and tot['h2']['max_concurrent'] == 128 and d['config']['streams'] == 8" \
    "h2: streams and the server's limit"
grep -q "^h2: 1,600 streams on .* (server limit 128, --streams 8)" h2.txt || { cat h2.txt; fail "h2: the h2 line"; }
"$KNEE" stats --where protocol=h2 h2.bin >st.txt || fail "knee stats --where protocol=h2 on the binary log"
grep -q "1600" st.txt || { cat st.txt; fail "h2: 1600 rows of protocol h2"; }
"$KNEE" stats --column tls_ms h2.bin >st.txt || fail "knee stats --column tls_ms on the binary log"

# h2, closed loop: 2 connections x 8 streams = 16 clients
run h2c16 0 --cacert ca.pem -c 2 --streams 8 -n 3000 "$(U h2)"
json_check h2c16.json "tot['outcomes']['ok'] == 3000 and tot['connections']['opened'] == 2 and d['targets'][0]['clients'] == 16" \
    "h2 closed loop: 3000 ok on 2 connections, 16 clients"

# GOAWAY: nginx ends an h2 connection after 40 requests; streams above its last one are sent again
run goaway 0 --cacert ca.pem -c 2 --streams 8 -n 1000 "$(U goaway)"
json_check goaway.json "tot['outcomes']['ok'] == 1000 and tot['h2']['goaway'] >= 20" "goaway: 1000 ok across GOAWAYs"
json_check goaway.json "tot['retries'] == tot['h2']['retried'] and tot['retries'] <= tot['accounting']['sent']" \
    "goaway: streams sent again counted as retries"
goaway_open

# churn: a new connection per request, with and without resumption. One client in turn, so
# each connection starts after the one before has read its response, and with it the
# server's ticket: every handshake but the first resumes, however slow the machine (an open
# loop at 100/s let connections overlap when ASan and other tests slowed the handshakes,
# and fewer resumed)
run churn 0 --cacert ca.pem --no-keepalive -t 1 -c 1 -n 200 "$(U h1)"
json_check churn.json "tot['outcomes']['ok'] == 200 and tot['connections']['opened'] == 200" "churn: 200 ok, 200 connections"
json_check churn.json "tot['tls_handshakes']['resumed'] >= 190 and tot['tls_handshakes']['resumption_ratio'] > 0.9" \
    "churn: resumed handshakes"
run churn_full 0 --cacert ca.pem --no-keepalive --tls-resume off -R 100 -d 2s "$(U h1)"
json_check churn_full.json "tot['tls_handshakes']['resumed'] == 0 and tot['tls_handshakes']['full'] >= 200" \
    "churn, --tls-resume off: every handshake full"
run rpc 0 --cacert ca.pem -c 2 -n 200 --requests-per-connection 10 "$(U h1)"
json_check rpc.json "tot['outcomes']['ok'] == 200 and tot['connections']['opened'] == 20" \
    "--requests-per-connection 10: 20 connections for 200 requests"
run rpc_h2 0 --cacert ca.pem -c 2 -n 200 --requests-per-connection 10 "$(U h2)"
json_check rpc_h2.json "tot['outcomes']['ok'] == 200 and tot['connections']['opened'] == 20" \
    "--requests-per-connection 10 over h2: 20 connections"

# h2c by prior knowledge
run h2c 0 --h2c -c 2 --streams 4 -n 500 "http://127.0.0.1:${P[h2c]}/"
json_check h2c.json "tot['outcomes']['ok'] == 500 and tot['protocols']['h2'] == 2 and tot['tls'] is None" "h2c: 500 ok"

# ---- what must fail, each with its cause --------------------------------------------------------------
run verify 3 -c 2 -n 20 "$(U h2)" # the system store does not know our CA
cause verify tls_verify
# the summary names the cause and the flag that fixes it (it printed "tls: , no protocol agreed (ALPN)")
grep -Eq '^tls: no handshake completed: [0-9]+ failed \(tls verify 20: --cacert FILE or --insecure\)$' verify.txt ||
    { cat verify.txt; fail "verify: the tls line"; }
grep -q '^  transport 20: tls verify 20 (tls verify: .*--cacert FILE trusts the CA that signed it, --insecure skips' \
    verify.txt || { cat verify.txt; fail "verify: the transport line"; }
run expired 3 --cacert ca.pem -c 2 -n 20 "$(U expired)"
cause expired tls_expired
grep -Eq '^tls: no handshake completed: [0-9]+ failed \(tls expired 20: --insecure\)$' expired.txt ||
    { cat expired.txt; fail "expired: the tls line"; }
run wrong 3 --cacert ca.pem -c 2 -n 20 "$(U wrong)"
cause wrong tls_hostname
grep -Eq '^tls: no handshake completed: [0-9]+ failed \(tls hostname 20: --insecure\)$' wrong.txt ||
    { cat wrong.txt; fail "wrong: the tls line"; }
run insecure 0 --insecure -c 2 -n 20 "$(U wrong)" # --insecure: no verification at all, said in the summary
grep -q "certificate verification OFF (--insecure)" insecure.txt || fail "insecure: not said in the summary"
json_check insecure.json "not d['config']['tls']['verify']" "insecure: config.tls.verify false"
run forced 3 --cacert ca.pem --http2 -c 2 -n 20 "$(U h1)" # h2 forced, the server speaks HTTP/1.1
json_check forced.json "tot['transport_causes']['tls_alert'] + tot['transport_causes']['tls_alpn'] == 20" \
    "forced h2 against an HTTP/1.1 server: tls_alert or tls_alpn"
run notls 3 --cacert ca.pem -c 2 -n 20 "https://127.0.0.1:${P[plain]}/"
cause notls tls_protocol
run noh2c 3 --h2c -c 2 -n 20 "http://127.0.0.1:${P[plain]}/"
cause noh2c h2_not_h2

start_peer() { # start_peer MODE: tests/e2e/tls_peer.py on a free port, in $PEER
    python3 "$KNEE_SRC/tests/e2e/tls_peer.py" --cert good.pem --key good.key --mode "$1" >"peer-$1.out" 2>&1 &
    PIDS+=($!)
    for i in $(seq 100); do grep -q '^PORT ' "peer-$1.out" 2>/dev/null && break; sleep 0.1; done
    PEER=$(awk '/^PORT /{print $2}' "peer-$1.out")
    [[ -n $PEER ]] || fail "tls_peer.py --mode $1 did not start"
}
start_peer garbage
run garbage 3 --cacert ca.pem -c 1 -n 3 "https://127.0.0.1:$PEER/"
cause garbage tls_protocol
start_peer stall
# closed loop: the requests wait on the stalled handshake and time out
run stall 3 --cacert ca.pem -c 1 -n 2 --timeout 300ms "https://127.0.0.1:$PEER/"
json_check stall.json "tot['outcomes']['timeout'] == 2" "stall: the requests bound to the handshake time out"
# open loop, one connection: the request queued behind the stalled handshake fails with it
run stall_open 3 --cacert ca.pem -c 1 -R 4 -d 1s --timeout 300ms "https://127.0.0.1:$PEER/"
json_check stall_open.json "tot['transport_causes']['tls_handshake_timeout'] >= 1 and tot['tls_handshakes']['failed'] >= 1" \
    "stall, open loop: tls_handshake_timeout"

# ---- knee serve --tls --h2 -------------------------------------------------------------------------------
start_knee_serve srv --preset null --tls --h2
SRV=$ADDR_srv
run serve_h2 0 -k -c 2 --streams 4 -n 1000 "https://$SRV/"
json_check serve_h2.json "tot['outcomes']['ok'] == 1000 and tot['protocols']['h2'] == 2" "knee serve --tls --h2: h2"
run serve_h1 0 -k --http1.1 -R 500 -d 1s "https://$SRV/"
json_check serve_h1.json "tot['outcomes']['ok'] == 500 and tot['protocols']['h2'] == 0" "knee serve --tls: http/1.1"
# --expect-body over h2: the body is checked on streams as on HTTP/1.1 (knee serve's null body is "ok\n")
run body_h2 0 -k -c 1 -n 50 --expect-body ok "https://$SRV/"
json_check body_h2.json "tot['outcomes']['ok'] == 50 and tot['protocols']['h2'] == 1" "--expect-body over h2: ok"
run body_h2_bad 3 -k -c 1 -n 50 --expect-body nothing-like-it "https://$SRV/"
json_check body_h2_bad.json "tot['outcomes']['invalid'] == 50 and tot['protocols']['h2'] == 1" "--expect-body over h2: invalid"

# ---- bad flags: one line naming the flag, exit 2 ---------------------------------------------------------
bad() { # bad 'EXPECTED TEXT' ARGS...
    local want=$1
    shift
    set +e
    err=$("$KNEE" run -n 1 "$@" 2>&1 >/dev/null)
    local rc=$?
    set -e
    [[ $rc -eq 2 && $(printf '%s\n' "$err" | wc -l) -eq 1 && $err == "knee run: "*"$want"* ]] ||
        fail "knee run $*: exit $rc, '$err' (expected '$want')"
    echo "ok: exit 2: $err"
}
H=$(U h2)
bad "--http1.1 and --http2" --http1.1 --http2 "$H"
bad "--cacert applies to https:// targets" --cacert ca.pem "http://127.0.0.1:${P[plain]}/"
bad "--http2 applies to https:// targets" --http2 "http://127.0.0.1:${P[plain]}/"
bad "--h2c applies to http:// targets" --h2c "$H"
bad "--streams must be between 1 and 1024" --streams 0 "$H"
bad "--streams must be between 1 and 1024" --streams 5000 "$H"
bad "--streams applies to HTTP/2" --streams 4 "http://127.0.0.1:${P[plain]}/"
bad "--streams applies to HTTP/2" --streams 4 --http1.1 "$H"
bad "--tls-version" --tls-version 1.4 "$H"
bad "--tls-version" --tls-version 1.3:1.2 "$H"
bad "--tls-resume 'maybe': expected one of on, off" --tls-resume maybe "$H"
bad "--ciphers" --ciphers NOT-A-CIPHER "$H"
bad "--cacert" --cacert "$TMP/nope.pem" "$H"
bad "--insecure and --cacert" --insecure --cacert ca.pem "$H"
bad "--requests-per-connection must be" --requests-per-connection 0 "$H"
bad "--requests-per-connection and --no-keepalive" --requests-per-connection 5 --no-keepalive "$H"
echo "ok"
