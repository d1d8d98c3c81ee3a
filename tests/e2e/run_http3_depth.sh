#!/usr/bin/env bash
# knee run --http3 beyond the basics, against Caddy (quic-go) on loopback: resumption and 0-RTT
# (--tls-resume on: every connection after the first resumes and its requests go as early data,
# which Caddy accepts; off: none), 0-RTT rejected (Caddy restarted mid-run: its new ticket keys
# refuse the old ticket, the early requests go again in 1-RTT), --qlog (one JSON-SEQ file per
# connection that parses), a client certificate a site requires (--cert/--key, reached through
# --connect-to), --local-address (a UDP peer sees the datagrams come from it), --stream over
# HTTP/3 (an SSE body's events), and the flags that stay refused (exit 2, one line).
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
source "$KNEE_SRC/tests/e2e/nginx_tls.bash" # the throwaway CA and its certificates
cd "$TMP"
command -v caddy >/dev/null || fail "caddy is missing (scripts/deps.sh --test installs it)"

nginx_tls_certs
nginx_tls_sign client "DNS:knee-client"
declare -A P
for n in good mtls sse again peer unused; do P[$n]=$(free_port); done
caddy_conf() { # caddy_conf SITES...: the global options, then the sites
    printf '{\n  admin off\n  auto_https disable_redirects\n  storage file_system %s/caddy\n' "$TMP"
    # Caddy turns strict SNI-Host checks on with client_auth; over its HTTP/3 they answer 421
    # whatever the names (the TLS handshake, the part under test, is unchanged)
    printf '  servers {\n    protocols h1 h2 h3\n    strict_sni_host insecure_off\n  }\n}\n'
    printf '%s\n' "$@"
}
site_good="https://127.0.0.1:${P[good]} {
  tls $TMP/good.pem $TMP/good.key
  respond \"hello\" 200
}"
site_mtls="https://localhost:${P[mtls]} {
  tls $TMP/good.pem $TMP/good.key {
    client_auth {
      mode require_and_verify
      trusted_ca_cert_file $TMP/ca.pem
    }
  }
  respond \"mtls\" 200
}"
site_sse="https://127.0.0.1:${P[sse]} {
  tls $TMP/good.pem $TMP/good.key
  header Content-Type text/event-stream
  respond \"data: a

data: b

: a comment

data: c

\" 200
}"
site_again="https://127.0.0.1:${P[again]} {
  tls $TMP/good.pem $TMP/good.key
  respond \"again\" 200
}"
caddy_conf "$site_good" "$site_mtls" "$site_sse" >Caddyfile
caddy_conf "$site_again" >Caddyfile.again
caddy_start() { # caddy_start FILE PORT: started in the background (pid in CADDY_PID), waited for on UDP
    HOME=$TMP XDG_DATA_HOME=$TMP XDG_CONFIG_HOME=$TMP caddy run --config "$1" --adapter caddyfile >>caddy.log 2>&1 &
    CADDY_PID=$!
    PIDS+=($CADDY_PID)
    for i in $(seq 100); do
        ss -Huln "sport = :$2" | grep -q . && return 0
        sleep 0.1
    done
    cat caddy.log >&2
    fail "caddy did not listen on UDP $2"
}
caddy_start Caddyfile "${P[good]}"
U() { echo "https://127.0.0.1:${P[$1]}/"; }

run() { # run NAME EXPECTED_EXIT ARGS...: --json NAME.json, the accounting holds
    local name=$1 want=$2
    shift 2
    run_knee run --http3 --json "$name.json" "$@" >"$name.txt" 2>&1
    [[ $RC -eq $want ]] || { cat "$name.txt" caddy.log; fail "$name: exit $RC, expected $want: knee run --http3 $*"; }
    json_check "$name.json" "d['accounting_ok'] and identity(acc)" "$name: accounting"
    echo "ok: $name (exit $RC)"
}
all_ok() {
    json_check "$1.json" "tot['outcomes']['ok'] == tot['accounting']['sent'] > 0 and \
        tot['protocols']['h3'] == tot['connections']['opened'] and tot['connections']['failed'] == 0 and \
        tot['tls_handshakes']['full'] + tot['tls_handshakes']['resumed'] == tot['protocols']['h3']" "$1: every request ok"
}

# resumption: one connection at a time, 4 requests each: the first is a full handshake, the 9
# after it resume with its ticket and send their first requests as 0-RTT, which Caddy takes
run resume 0 --cacert ca.pem -c 1 --requests-per-connection 4 -n 40 "$(U good)"
all_ok resume
json_check resume.json "tot['protocols']['h3'] == 10 and tot['tls_handshakes']['full'] == 1 and \
    tot['tls_handshakes']['resumed'] == 9 and tot['quic']['zero_rtt_accepted'] == 9 and \
    tot['quic']['zero_rtt_rejected'] == 0 and tot['quic']['streams'] == 40" "resume: 9 resumed, 9 with 0-RTT"
json_check resume.json "tot['quic']['rtt_connections'] == 10 and 0 < tot['quic']['rtt_min_us'] and \
    tot['quic']['rtt_min_us'] * 10 <= tot['quic']['rtt_smoothed_sum_us'] and \
    tot['quic']['rtt_smoothed_max_us'] * 10 >= tot['quic']['rtt_smoothed_sum_us'] and \
    tot['quic']['cwnd_sum_bytes'] > 0 and tot['quic']['stream_packets_lost'] == 0" "resume: the path counters"
grep -q "handshakes 10: 9 resumed" resume.txt || { cat resume.txt; fail "resume: the summary's tls line"; }
grep -qE "^h3: 40 streams on 10 QUIC connections; .*; 0-RTT 9 accepted, 0 rejected; rtt min [0-9.]+ ms, smoothed mean [0-9.]+ ms$" \
    resume.txt || { cat resume.txt; fail "resume: the summary's h3 line"; }

# 0-RTT can be replayed: a POST resumes but waits for the handshake, unless --retry-stale says
# every method may be sent twice
run post 0 --cacert ca.pem -c 1 --requests-per-connection 4 -n 20 -m POST "$(U good)"
json_check post.json "d['accounting_ok'] and tot['tls_handshakes']['resumed'] == 4 and \
    tot['quic']['zero_rtt_accepted'] == tot['quic']['zero_rtt_rejected'] == 0" "post: resumed, no 0-RTT"
run postearly 0 --cacert ca.pem -c 1 --requests-per-connection 4 -n 20 -m POST --retry-stale "$(U good)"
json_check postearly.json "d['accounting_ok'] and tot['tls_handshakes']['resumed'] == 4 and \
    tot['quic']['zero_rtt_accepted'] == 4" "post --retry-stale: 0-RTT"

run noresume 0 --cacert ca.pem -c 1 --requests-per-connection 4 -n 20 --tls-resume off "$(U good)"
all_ok noresume
json_check noresume.json "tot['tls_handshakes']['resumed'] == 0 and tot['tls_handshakes']['full'] == 5 and \
    tot['quic']['zero_rtt_accepted'] == tot['quic']['zero_rtt_rejected'] == 0" "noresume: 5 full handshakes"

# 0-RTT rejected: Caddy restarted under the run; the first connection after it offers the old
# ticket with early requests, the new Caddy cannot read the ticket (a full handshake) and ignores
# the early data, the requests go again in 1-RTT. Requests while it is down fail (refused).
caddy_start Caddyfile.again "${P[again]}"
old=$CADDY_PID
run_knee run --http3 --json reject.json --cacert ca.pem -c 1 --requests-per-connection 4 -d 4s --timeout 1s \
    "$(U again)" >reject.txt 2>&1 &
KNEE_BG=$!
PIDS+=($KNEE_BG)
sleep 1.5
kill "$old"
wait "$old" 2>/dev/null || true
caddy_start Caddyfile.again "${P[again]}"
wait "$KNEE_BG" || true
json_check reject.json "d['accounting_ok'] and identity(acc) and tot['quic']['zero_rtt_rejected'] >= 1 and \
    tot['quic']['zero_rtt_accepted'] >= 1 and tot['tls_handshakes']['full'] >= 2 and tot['outcomes']['ok'] > 0" \
    "reject: 0-RTT refused after the restart"
json_check reject.json "set(k for k, v in tot['transport_causes'].items() if v) <= {'quic_handshake', 'other'} and \
    tot['outcomes']['timeout'] <= 2" "reject: only the restart's failures"
echo "ok: reject"

# --qlog: one file per connection, each a JSON text sequence that parses
mkdir qlog
run qlog 0 --cacert ca.pem -c 2 --requests-per-connection 5 -n 20 --qlog qlog "$(U good)"
all_ok qlog
python3 - qlog qlog.json <<'PY' || fail "qlog: the files"
import json, os, re, sys
d = json.load(open(sys.argv[2]))
files = sorted(os.listdir(sys.argv[1]))
assert len(files) == d["all"]["connections"]["opened"] == 4, files
for f in files:
    assert re.fullmatch(r"t[0-9]+-c[0-9]+\.sqlog", f), f
    text = open(os.path.join(sys.argv[1], f)).read()
    assert text.startswith("\x1e"), f
    recs = [json.loads(r) for r in text.split("\x1e") if r.strip()]
    assert recs[0]["qlog_format"] == "JSON-SEQ" and recs[0]["trace"]["vantage_point"]["type"] == "client", f
    names = {r.get("name") for r in recs[1:]}
    assert "transport:packet_sent" in names and "transport:packet_received" in names, (f, names)
print("qlog files ok:", len(files))
PY

# a client certificate the site requires, reached by --connect-to (the URL's port is unused)
run mtls 0 --cacert ca.pem --cert client.pem --key client.key -n 6 -c 1 \
    --connect-to "localhost:${P[unused]}:127.0.0.1:${P[mtls]}" "https://localhost:${P[unused]}/"
all_ok mtls
json_check mtls.json "tot['tls_handshakes']['client_cert_requested'] == tot['protocols']['h3'] == 1" \
    "mtls: the server asked for the certificate"
run nocert 3 --cacert ca.pem -n 3 -c 1 --tls-resume off \
    --connect-to "localhost:${P[unused]}:127.0.0.1:${P[mtls]}" "https://localhost:${P[unused]}/"
json_check nocert.json "tot['outcomes']['ok'] == 0 and tot['outcomes']['transport'] == 3 and \
    tot['transport_causes']['quic_close'] + tot['transport_causes']['quic_handshake'] == 3 and \
    tot['quic']['close_codes'].get('CRYPTO_ERROR', 0) >= 1" "nocert: the server refused the connection"
run_knee run --http3 --cacert ca.pem --cert missing.pem -n 1 "$(U good)" >badcert.txt 2>&1
[[ $RC -eq 2 ]] && grep -q -- "--cert missing.pem" badcert.txt || { cat badcert.txt; fail "badcert: exit $RC"; }

# --local-address: a UDP peer that answers nothing writes where each datagram came from
python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', ${P[peer]})); s.settimeout(0.2)
end = time.time() + 30
with open('peer.txt', 'w') as out:
    while time.time() < end:
        try:
            _, a = s.recvfrom(4096)
            out.write(a[0] + '\n'); out.flush()
        except OSError: pass
" &
PIDS+=($!)
sleep 0.3
run_knee run --http3 --cacert ca.pem --local-address 127.0.0.3 -n 1 --timeout 1s "https://127.0.0.1:${P[peer]}/" \
    >local.txt 2>&1
[[ $RC -eq 3 ]] || { cat local.txt; fail "local: exit $RC, expected 3 (the request times out)"; }
[[ -s peer.txt ]] && [[ $(sort -u peer.txt) == 127.0.0.3 ]] || { cat peer.txt; fail "local: datagrams not from 127.0.0.3"; }
echo "ok: local"

# --stream over HTTP/3: an SSE body of three events (and a comment, no event)
run sse 0 --cacert ca.pem -n 6 -c 1 "$(U sse)"
json_check sse.json "tot['stream']['responses'] == 6 and tot['stream']['events'] == 18 and \
    tot['stream']['partial'] == 0 and tot['stream']['first_event']['count'] == 6" "sse: 3 events a response"
run chunks 0 --cacert ca.pem -n 4 -c 1 --stream chunks "$(U good)"
json_check chunks.json "tot['stream']['responses'] == 4 and tot['stream']['events'] == 4" "chunks: one event a response"

# what stays refused with --http3, and --qlog's own checks: one line, exit 2
bad() { # bad WORD ARGS...: exit 2, one line that says WORD
    local word=$1
    shift
    run_knee run "$@" >bad.txt 2>&1
    [[ $RC -eq 2 && $(wc -l <bad.txt) -eq 1 ]] && grep -q -- "$word" bad.txt || {
        cat bad.txt
        fail "bad: knee run $* (exit $RC)"
    }
}
bad "--proxy" --http3 --proxy "http://127.0.0.1:${P[unused]}" -n 1 "$(U good)"
bad "--unix-socket" --http3 --unix-socket "$TMP/no.sock" -n 1 "$(U good)"
bad "--qlog applies to --http3" --qlog qlog -n 1 "$(U good)"
bad "--qlog $TMP/nodir: not a writable directory" --http3 --qlog "$TMP/nodir" -n 1 "$(U good)"
bad "--qlog Caddyfile: not a writable directory" --http3 --qlog Caddyfile -n 1 "$(U good)"
echo "PASS"
