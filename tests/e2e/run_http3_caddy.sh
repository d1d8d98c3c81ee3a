#!/usr/bin/env bash
# knee run --http3 against Caddy (a real HTTP/3 server: quic-go) on loopback with certificates
# made here: open and closed loop (--streams 4) with every request ok, protocols.h3 equal to the
# connections, the quic counters; certificate failures with their causes (no --cacert, a wrong
# name, expired); nothing on the UDP port (the handshake cause, exit 3); a UDP peer that never
# answers (every request times out, bounded); the flags that do not go with --http3 (exit 2).
# Caddy is a test dependency (scripts/deps.sh --test): missing, the test fails, it is not skipped.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
source "$KNEE_SRC/tests/e2e/nginx_tls.bash" # the throwaway CA and its certificates
cd "$TMP"
command -v caddy >/dev/null || fail "caddy is missing (scripts/deps.sh --test installs it)"

nginx_tls_certs
declare -A P
for n in good wrong expired silent none garbage; do P[$n]=$(free_port); done
site() { # site NAME CERT: an https site on P[NAME] with CERT.pem
    printf 'https://127.0.0.1:%s {\n  tls %s/%s.pem %s/%s.key\n  respond "hello" 200\n}\n' "${P[$1]}" "$TMP" "$2" \
        "$TMP" "$2"
}
{
    printf '{\n  admin off\n  auto_https disable_redirects\n  storage file_system %s/caddy\n' "$TMP"
    printf '  servers {\n    protocols h1 h2 h3\n  }\n}\n'
    site good good
    site wrong wrong
    site expired expired
} >Caddyfile
HOME=$TMP XDG_DATA_HOME=$TMP XDG_CONFIG_HOME=$TMP caddy run --config Caddyfile --adapter caddyfile >caddy.log 2>&1 &
PIDS+=($!)
for i in $(seq 100); do
    ss -Huln "sport = :${P[good]}" | grep -q . && break
    sleep 0.1
done
ss -Huln "sport = :${P[good]}" | grep -q . || { cat caddy.log >&2; fail "caddy did not listen on UDP ${P[good]}"; }
# a UDP peer that takes every datagram and answers none
python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', ${P[silent]})); s.settimeout(0.5)
end = time.time() + 120
while time.time() < end:
    try: s.recvfrom(4096)
    except OSError: pass
" &
PIDS+=($!)
# a UDP peer that answers every datagram with garbage: random bytes, then a packet that looks
# like a QUIC long header (Initial, version 1, the client's connection IDs echoed) with a random
# body, then one with an unknown version
python3 -c "
import os, socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', ${P[garbage]})); s.settimeout(0.5)
end, n = time.time() + 120, 0
while time.time() < end:
    try: d, a = s.recvfrom(4096)
    except OSError: continue
    n += 1
    if len(d) > 6 and d[0] & 0x80:
        dl = d[5]; dcid = d[6:6 + dl]; sl = d[6 + dl]; scid = d[7 + dl:7 + dl + sl]
        ver = b'\\x00\\x00\\x00\\x01' if n % 3 else b'\\x1a\\x2a\\x3a\\x4a'
        s.sendto(bytes([0xc0 | (d[0] & 0x0f)]) + ver + bytes([len(scid)]) + scid + bytes([len(dcid)]) + dcid + os.urandom(1100), a)
    s.sendto(os.urandom(1 + n % 1300), a)
" &
PIDS+=($!)
U() { echo "https://127.0.0.1:${P[$1]}/"; }

run() { # run NAME EXPECTED_EXIT ARGS...: --json NAME.json, the accounting holds
    local name=$1 want=$2
    shift 2
    run_knee run --http3 --json "$name.json" "$@" >"$name.txt" 2>&1
    [[ $RC -eq $want ]] || { cat "$name.txt" caddy.log; fail "$name: exit $RC, expected $want: knee run --http3 $*"; }
    json_check "$name.json" "d['accounting_ok'] and identity(acc)" "$name: accounting"
    echo "ok: $name (exit $RC)"
}
cause() { # cause NAME CAUSE: every request of run NAME failed in transport with CAUSE
    json_check "$1.json" "tot['outcomes']['transport'] == tot['accounting']['sent'] > 0 and \
        tot['transport_causes']['$2'] == tot['outcomes']['transport']" "$1: every request $2"
}
all_ok() { # all_ok NAME: every request ok over h3, one h3 per connection, the quic counters
    json_check "$1.json" "tot['outcomes']['ok'] == tot['accounting']['sent'] > 0 and \
        tot['status_codes'] == {'200': tot['outcomes']['ok']} and \
        tot['protocols'] == {'http/1.1': 0, 'h2': 0, 'h3': tot['connections']['opened']} and \
        tot['connections']['failed'] == 0 and \
        tot['tls_handshakes']['full'] + tot['tls_handshakes']['resumed'] == tot['protocols']['h3'] and \
        tot['tls_versions'] == {'TLSv1.3': tot['protocols']['h3']} and \
        tot['quic']['streams'] == tot['accounting']['sent'] and \
        tot['quic']['datagrams_sent'] > 0 and tot['quic']['datagrams_received'] > 0 and \
        tot['quic']['bytes_received'] > 0 and tot['quic']['reset_codes'] == {} and \
        tot['tls']['count'] == tot['protocols']['h3']" "$1: every request ok over h3"
}

run open 0 --cacert ca.pem -R 200 -d 2s "$(U good)"
all_ok open
json_check open.json "tot['accounting']['planned'] == 400" "open: 400 planned"
grep -q "^h3: 400 streams on" open.txt || { cat open.txt; fail "open: the summary's h3 line"; }

run closed 0 --cacert ca.pem -c 2 --streams 4 -d 2s "$(U good)"
all_ok closed
json_check closed.json "tot['protocols']['h3'] == 2 and d['config']['streams'] == 4" "closed: 2 connections"

run insecure 0 --insecure -R 50 -d 1s "$(U wrong)"
all_ok insecure

run verify 3 -R 20 -d 1s "$(U good)"
cause verify tls_verify
run hostname 3 --cacert ca.pem -R 20 -d 1s "$(U wrong)"
cause hostname tls_hostname
run expired 3 --cacert ca.pem -R 20 -d 1s "$(U expired)"
cause expired tls_expired
run none 3 --cacert ca.pem -R 20 -d 1s "$(U none)"
cause none quic_handshake
json_check none.json "tot['protocols']['h3'] == 0" "none: no connection became ready"

# the silent peer: every request times out, the run ends within --timeout after its last send
start=$(date +%s%N)
run silent 3 --cacert ca.pem -R 20 -d 1s --timeout 1s "$(U silent)"
took_ms=$((($(date +%s%N) - start) / 1000000))
json_check silent.json "tot['outcomes']['timeout'] == tot['accounting']['sent'] == 20" "silent: every request timeout"
((took_ms < 8000)) || fail "silent: took ${took_ms} ms"

# the garbage peer: nothing it sends is taken for QUIC; every request is accounted (a timeout or
# a failed handshake), none ok, and the run ends within --timeout after its last send
start=$(date +%s%N)
run garbage 3 --cacert ca.pem -R 20 -d 1s --timeout 1s "$(U garbage)"
took_ms=$((($(date +%s%N) - start) / 1000000))
json_check garbage.json "tot['outcomes']['ok'] == 0 and tot['protocols']['h3'] == 0 and \
    tot['outcomes']['timeout'] + tot['outcomes']['transport'] == tot['accounting']['sent'] == 20" \
    "garbage: every request a timeout or a transport failure"
((took_ms < 8000)) || fail "garbage: took ${took_ms} ms"

# flags that do not go with --http3: one line, exit 2
bad() {
    run_knee run "$@" >bad.txt 2>&1
    [[ $RC -eq 2 && $(wc -l <bad.txt) -eq 1 ]] && grep -q -- "--http3" bad.txt || {
        cat bad.txt
        fail "bad: knee run $* (exit $RC)"
    }
}
bad --http3 -R 1 -d 1s "http://127.0.0.1:${P[good]}/"
bad --http3 --http2 -R 1 -d 1s "$(U good)"
bad --http3 --h2c -R 1 -d 1s "$(U good)" "http://127.0.0.1:1/"
bad --http3 --tls-version 1.2 -R 1 -d 1s "$(U good)"
echo "PASS"
