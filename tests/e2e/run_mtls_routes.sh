#!/usr/bin/env bash
# knee run --cert/--key (mutual TLS), --unix-socket and --connect-to (issue 31) against real
# servers started here: nginx requiring a client certificate (ssl_verify_client on; h2 and
# http/1.1), nginx listening on Unix sockets (cleartext and TLS) and on a port whose certificate
# names example.test; openssl s_server refusing by alert (TLS 1.3 and 1.2), and over h2 a peer
# of tests/e2e/tls_client_cert_peer.py. nginx's access log
# ($remote_addr $host $request_uri) is the witness that requests arrived, with the URL's Host.
# Every count exact; bad inputs exit 2 before anything is sent.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
source "$KNEE_SRC/tests/e2e/nginx_tls.bash"
cd "$TMP"

# ---- certificates: the CA's server certificates, a client certificate it signed, one it did not,
# and a server certificate for example.test
nginx_tls_certs
nginx_tls_sign client "DNS:knee-client"
nginx_tls_sign example "DNS:example.test"
openssl req -x509 -newkey rsa:2048 -nodes -keyout stranger.key -out stranger.pem -days 2 -subj /CN=stranger \
    2>/dev/null
cat client.pem client.key >client-both.pem

declare -A P
for n in m2 m1 ex alert13 alert12 alerth2; do P[$n]=$(free_port); done
LOG=$TMP/access.log
nginx_tls_start "${P[ex]}" <<CONF
  log_format a '\$remote_addr \$host \$request_uri';
  server { listen 127.0.0.1:${P[m2]} ssl http2; ssl_verify_client on; ssl_client_certificate $TMP/ca.pem;
           access_log $LOG a; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[m1]} ssl; ssl_verify_client on; ssl_client_certificate $TMP/ca.pem;
           access_log $LOG a; location / { return 200 "ok\n"; } }
  server { listen unix:$TMP/plain.sock; access_log $LOG a; location / { return 200 "ok\n"; } }
  server { listen unix:$TMP/tls.sock ssl http2; access_log $LOG a; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:${P[ex]} ssl; ssl_certificate $TMP/example.pem; ssl_certificate_key $TMP/example.key;
           access_log $LOG a; location / { return 200 "ok\n"; } }
CONF
[[ -S plain.sock && -S tls.sock ]] || { cat nginx/error.log; fail "nginx did not start"; }

# s_server VERSION PORT: openssl s_server requiring a client certificate signed by the CA (an
# alert when there is none or it does not verify), one TLS version, HTTP answers (-www)
s_server() {
    openssl s_server -accept "127.0.0.1:$2" -cert good.pem -key good.key -CAfile ca.pem -Verify 1 \
        -verify_return_error "-$1" -www -quiet >"s_server-$2.log" 2>&1 &
    PIDS+=($!)
    wait_port "$2"
}
wait_port() {
    for i in $(seq 100); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null && return
        sleep 0.1
    done
    fail "nothing listens on $1"
}
s_server tls1_3 "${P[alert13]}"
s_server tls1_2 "${P[alert12]}"
python3 "$KNEE_SRC/tests/e2e/tls_client_cert_peer.py" "${P[alerth2]}" "$TMP" >peer.log 2>&1 &
PIDS+=($!)
wait_port "${P[alerth2]}"

lines() { [[ -f $LOG ]] && wc -l <"$LOG" || echo 0; }
# run NAME EXPECTED_EXIT ARGS...: knee run --json NAME.json; the exit code and the accounting
run() {
    local name=$1 want=$2
    shift 2
    run_knee run --json "$name.json" "$@" >"$name.txt" 2>&1
    [[ $RC -eq $want ]] || { cat "$name.txt"; fail "$name: exit $RC, expected $want: knee run $*"; }
    json_check "$name.json" "d['accounting_ok'] and identity(acc)" "$name: accounting"
    echo "ok: $name (exit $RC)"
}
M2="https://127.0.0.1:${P[m2]}/m2"
M1="https://127.0.0.1:${P[m1]}/m1"
CERT=(--cert client.pem --key client.key)

# ---- --cert/--key: every request ok over h2 and http/1.1; the config names the files ----------
run mtls_h2 0 --cacert ca.pem "${CERT[@]}" -n 60 -c 3 "$M2"
json_check mtls_h2.json "tot['outcomes']['ok'] == 60 and tot['protocols']['h2'] == 3 and \
    d['config']['tls']['cert'] == 'client.pem' and d['config']['tls']['key'] == 'client.key' and \
    tot['tls_handshakes']['client_cert_requested'] == tot['tls_handshakes']['full'] > 0 and \
    not any('client certificate' in w for w in d['warnings'])" "mtls_h2: 60 ok over h2, the files recorded"
run mtls_h1 0 --cacert ca.pem "${CERT[@]}" -n 40 -c 2 -R 400 "$M1"
json_check mtls_h1.json "tot['outcomes']['ok'] == 40 and tot['protocols']['http/1.1'] >= 1 and \
    tot['protocols']['h2'] == 0" "mtls_h1: 40 ok over http/1.1"
run mtls_both 0 --cacert ca.pem --cert client-both.pem -n 10 -c 1 "$M1"
json_check mtls_both.json "tot['outcomes']['ok'] == 10 and d['config']['tls']['key'] is None" \
    "mtls_both: the key in the certificate's file"
run mtls_setup 0 --cacert ca.pem "${CERT[@]}" --setup "$M1?login" -n 5 -c 1 "$M2"
json_check mtls_setup.json "tot['outcomes']['ok'] == 5 and d['config']['setup']['status'] == 200" \
    "mtls_setup: the --setup request presents the certificate too"
[[ $(grep -c "/m2$" "$LOG") -eq 65 && $(grep -c "/m1$" "$LOG") -eq 50 && $(grep -c "/m1?login$" "$LOG") -eq 1 ]] ||
    fail "access log: $(sort "$LOG" | uniq -c)"

# ---- without: nginx answers 400 (the warning names the client certificate) -------------------
for v in h2 h1; do
    u=$M2 && [[ $v == h1 ]] && u=$M1
    run nocert_$v 3 --cacert ca.pem -n 12 -c 2 "$u"
    json_check nocert_$v.json "tot['status_codes'] == {'400': 12} and tot['outcomes']['http_error'] == 12 and \
        tot['tls_handshakes']['client_cert_requested'] == tot['tls_handshakes']['full'] > 0 and \
        any('400 x12: the server asked for a client certificate' in w and 'had none: give --cert FILE --key FILE' \
            in w for w in d['warnings'])" "nocert_$v: 400 x12 and the warning"
done
# one its CA did not sign: nginx answers 400 too, and the warning names the file sent
run stranger_h1 3 --cacert ca.pem --cert stranger.pem --key stranger.key -n 6 -c 1 "$M1"
json_check stranger_h1.json "tot['status_codes'] == {'400': 6} and \
    any('400 x6: the server asked for a client certificate' in w and 'was sent --cert stranger.pem' in w \
        for w in d['warnings'])" "stranger_h1: 400 x6 and the warning"
grep -q "asked for a client certificate" nocert_h1.txt || fail "nocert_h1: the summary's warning"

# ---- a server that refuses by alert: certificate_required (TLS 1.3; 1.2's handshake_failure after
# asking), bad certificate (one its CA did not sign) ---------------------------------------------
cause() {
    json_check "$1.json" "tot['outcomes']['transport'] == tot['accounting']['sent'] == $3 and \
        tot['transport_causes']['$2'] == $3" "$1: every request $2"
}
for v in 13 12; do
    A="https://127.0.0.1:${P[alert$v]}/"
    run alert${v}_none 3 --cacert ca.pem -n 3 -c 1 "$A"
    cause alert${v}_none tls_alert_certificate_required 3
    run alert${v}_bad 3 --cacert ca.pem --cert stranger.pem --key stranger.key -n 3 -c 1 "$A"
    cause alert${v}_bad tls_alert_bad_certificate 3
    run alert${v}_ok 0 --cacert ca.pem "${CERT[@]}" -n 3 -c 1 --http1.1 "$A"
    json_check alert${v}_ok.json "tot['outcomes']['ok'] == 3" "alert${v}_ok: accepted with the CA's certificate"
done
grep -q "tls alert certificate required 3" alert13_none.txt || fail "alert13_none: the summary names the cause"
# over h2 (ALPN), the alert met by the session's first read
AH2="https://127.0.0.1:${P[alerth2]}/"
run alerth2_none 3 --cacert ca.pem --http2 -n 4 -c 1 "$AH2"
cause alerth2_none tls_alert_certificate_required 4
run alerth2_bad 3 --cacert ca.pem --http2 --cert stranger.pem --key stranger.key -n 4 -c 1 "$AH2"
cause alerth2_bad tls_alert_bad_certificate 4

# ---- --unix-socket: every request reaches the socket, Host from the URL; TLS inside works --------
: >"$LOG"
run unix_plain 0 --unix-socket "$TMP/plain.sock" -n 30 -c 3 "http://svc.test/unix?i=1"
json_check unix_plain.json "tot['outcomes']['ok'] == 30 and d['config']['unix_socket'] == '$TMP/plain.sock' and \
    d['targets'][0]['address'] == 'unix:$TMP/plain.sock' and tot['connect']['count'] == 3" \
    "unix_plain: 30 ok, the socket recorded, 3 connects timed"
run unix_tls 0 --unix-socket "$TMP/tls.sock" --cacert ca.pem -n 20 -c 2 "https://localhost/unixtls"
json_check unix_tls.json "tot['outcomes']['ok'] == 20 and tot['tls']['count'] == 2 and tot['protocols']['h2'] == 2" \
    "unix_tls: 20 ok over TLS and h2 inside the socket"
run unix_setup 0 --unix-socket "$TMP/plain.sock" --setup "http://svc.test/login" -n 2 -c 1 "http://svc.test/after"
[[ $(grep -c "^unix: svc.test /unix?i=1$" "$LOG") -eq 30 && $(grep -c "^unix: localhost /unixtls$" "$LOG") -eq 20 &&
    $(grep -c "^unix: svc.test /login$" "$LOG") -eq 1 && $(grep -c "^unix: svc.test /after$" "$LOG") -eq 2 &&
    $(lines) -eq 53 ]] || fail "access log (unix): $(sort "$LOG" | uniq -c)"
# a path nobody listens on is refused, as a closed port (not bad input: a server may come up)
run unix_none 3 --unix-socket "$TMP/nobody.sock" -n 4 -c 1 "http://svc.test/"
cause unix_none refused 4

# ---- --connect-to: example.test:443 goes to nginx's port; Host, SNI and the check stay example.test
: >"$LOG"
run connect_to 0 --connect-to "example.test:443:127.0.0.1:${P[ex]}" --cacert ca.pem -n 15 -c 1 \
    "https://example.test/ct"
json_check connect_to.json "tot['outcomes']['ok'] == 15 and \
    d['config']['connect_to'] == ['example.test:443:127.0.0.1:${P[ex]}'] and \
    d['targets'][0]['address'] == '127.0.0.1:${P[ex]}'" "connect_to: 15 ok, the rule recorded"
# empty HOST and PORT match any; a rule that matches nothing changes nothing; the first match wins
run connect_any 0 --connect-to "nothing.test:443:127.0.0.9:9" --connect-to "::127.0.0.1:${P[ex]}" \
    --connect-to "::127.0.0.9:9" --cacert ca.pem -n 5 -c 1 "https://example.test/any"
# the certificate names example.test, not 127.0.0.1: reached by address, it fails as it should
run connect_ip 3 --connect-to "127.0.0.1:${P[ex]}:127.0.0.1:${P[ex]}" --cacert ca.pem -n 2 -c 1 \
    "https://127.0.0.1:${P[ex]}/ip"
cause connect_ip tls_hostname 2
[[ $(grep -c "^127.0.0.1 example.test /ct$" "$LOG") -eq 15 && $(grep -c "^127.0.0.1 example.test /any$" "$LOG") -eq 5 &&
    $(lines) -eq 20 ]] || fail "access log (connect-to): $(sort "$LOG" | uniq -c)"

# ---- knee capacity: the steps present the certificate; its in-process probe is not routed -----
# (the verdict is the machine's business here: only that every request of the ladder was ok)
cap() {
    local name=$1
    shift
    run_knee capacity --slo 'p99<2s' --rates 20 --reps 1 --step 1s --settle 0 --json "$name.json" "$@" >"$name.txt" 2>&1
    [[ $RC -ne 2 ]] || { cat "$name.txt"; fail "$name: exit 2"; }
    python3 -c "import json, sys; d = json.load(open('$name.json')); s = d['ladder'][0]['reps'][0]
sys.exit(not (s['requests'] == 20 and s['error_rate'] == 0 and d['probes'][0]['ok']))" ||
        { cat "$name.txt"; fail "$name: 20 requests ok and the probe ok"; }
    echo "ok: $name"
}
cap cap_mtls --cacert ca.pem "${CERT[@]}" "$M2"
cap cap_unix --unix-socket "$TMP/plain.sock" "http://svc.test/cap"

# ---- bad input: exit 2 naming the flag (and the part), nothing sent ------------------------------
bad() {
    local want=$1
    shift
    run_knee run "$@" >bad.txt 2>&1
    [[ $RC -eq 2 ]] || { cat bad.txt; fail "exit $RC, expected 2: knee run $*"; }
    grep -qF -- "$want" bad.txt || { cat bad.txt; fail "'$want' not said: knee run $*"; }
    echo "ok: exit 2: $want"
}
before=$(lines)
LONG=$TMP/$(printf 'x%.0s' $(seq 120)).sock
bad "--cert $TMP/missing.pem: No such file or directory" --cacert ca.pem --cert "$TMP/missing.pem" --key client.key "$M1"
bad "--key $TMP/missing.key: No such file or directory" --cacert ca.pem --cert client.pem --key "$TMP/missing.key" "$M1"
bad "--key stranger.key does not match the certificate of --cert client.pem" --cacert ca.pem --cert client.pem \
    --key stranger.key "$M1"
bad "--cert client.pem holds no private key: give --key FILE" --cacert ca.pem --cert client.pem "$M1"
bad "--cert ca.db/ca.cnf: no PEM certificate" --cacert ca.pem --cert ca.db/ca.cnf --key client.key "$M1"
bad "--key needs --cert" --cacert ca.pem --key client.key "$M1"
bad "--cert applies to https:// targets" "${CERT[@]}" "http://127.0.0.1:${P[m1]}/"
bad "--cert client.key: no PEM certificate" --cacert ca.pem --cert client.key --key client.key --setup "$M1" "$M2"
bad "--unix-socket $LONG: the path is" --unix-socket "$LONG" "http://svc.test/"
bad "--unix-socket and --connect-to: give one" --unix-socket plain.sock --connect-to "::127.0.0.1:1" "http://a/"
bad "--connect-to 'a:443:b': ':' expected after the address" --connect-to "a:443:b" "http://a/"
bad "--connect-to 'a:4x3:b:1': the port '4x3'" --connect-to "a:4x3:b:1" "http://a/"
bad "--connect-to 'a:443:b:70000': the address's port '70000'" --connect-to "a:443:b:70000" "http://a/"
bad "--connect-to 'a:443:b:1:2': more than four parts" --connect-to "a:443:b:1:2" "http://a/"
bad "--connect-to '[::1:443:b:1': the host has '[' without ']'" --connect-to "[::1:443:b:1" "http://a/"
run_knee capacity --cert client.pem --key stranger.key --cacert ca.pem --rates 10 "$M2" >bad.txt 2>&1
[[ $RC -eq 2 ]] && grep -q "does not match the certificate" bad.txt || { cat bad.txt; fail "capacity: bad --key"; }
sleep 0.2
[[ $(lines) -eq $before ]] || fail "bad input sent requests: $(tail -3 "$LOG")"
echo "PASS"
