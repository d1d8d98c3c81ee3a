#!/usr/bin/env bash
# knee serve --tls / --cert / --key / --h2 from the command line: the listening lines, a
# self-signed certificate, a CA-signed one verified by the client, HTTP/2 over ALPN and h2c by
# prior knowledge answered with the same counters as HTTP/1.1, h2load (nghttp2-client) as an
# independent HTTP/2 client, and bad flags (one line, exit 2). knee_probe (tests/probe) is the
# client where h2load is not.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
: "${KNEE_BUILD:?KNEE_BUILD must name the build dir}"
PROBE=$KNEE_BUILD/knee_probe
[[ -x $PROBE ]] || fail "no $PROBE (build the tests)"
command -v openssl >/dev/null || { echo "skip: openssl missing"; exit 77; }
cd "$TMP"

# bad input: one line naming the flag, exit 2
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout a.key -out a.pem -days 2 \
    -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout b.key -out b.pem -days 2 \
    -subj /CN=localhost 2>/dev/null
echo "not a certificate" >junk.pem
for args in "--key a.key" "--cert a.pem" "--cert nope.pem --key a.key" "--cert junk.pem --key a.key" \
            "--cert a.pem --key b.key" "--tls --cert a.pem"; do
    set +e; err=$("$KNEE" serve $args 2>&1 >/dev/null); rc=$?; set -e
    [[ $rc -eq 2 && $(printf '%s\n' "$err" | wc -l) -eq 1 && $err == "knee serve: "* ]] ||
        fail "'knee serve $args': exit $rc: $err"
    echo "ok: knee serve $args -> exit 2: $err"
done
err=$("$KNEE" serve --cert a.pem --key b.key 2>&1 >/dev/null || true)
[[ $err == *"--key b.key does not match the certificate of --cert a.pem"* ]] || fail "mismatch message: $err"

stop() { # stop NAME: SIGINT, wait, and the final counters line in serve-NAME.out (start_knee_serve)
    local pid_var=PID_$1
    kill -INT "${!pid_var}"
    wait "${!pid_var}" || fail "$1 exited with $?"
}

# --tls --h2, self-signed: https with ALPN h2 and http/1.1
start_knee_serve s --preset null --tls --h2
grep -q "^listening on 127.0.0.1:$PORT_s (null) https h2$" serve-s.out || fail "listening line: $(cat serve-s.out)"
grep -Eq '^tls: self-signed certificate, SHA-256 ([0-9A-F]{2}:){31}[0-9A-F]{2} \(clients need --insecure\)$' serve-s.out ||
    fail "fingerprint line: $(cat serve-s.out)"
"$PROBE" --insecure -n 50 -m 8 "https://127.0.0.1:$PORT_s/" >p.txt || { cat p.txt; fail "probe h2"; }
grep -q " proto=h2 .* completed=50 ok=50 " p.txt || fail "h2 over TLS: $(cat p.txt)"
"$PROBE" --insecure --http1.1 -n 10 "https://127.0.0.1:$PORT_s/" >p.txt || fail "probe h1"
grep -q " proto=http/1.1 .* completed=10 ok=10 " p.txt || fail "http/1.1 over TLS: $(cat p.txt)"
"$PROBE" "https://127.0.0.1:$PORT_s/" >p.txt && fail "verification must fail on a self-signed certificate"
grep -q " reason=tls_verify " p.txt || fail "verify reason: $(cat p.txt)"
if command -v h2load >/dev/null; then
    h2load -n 2000 -c 4 -m 10 "https://127.0.0.1:$PORT_s/" >h2load.txt 2>&1 || true
    grep -q "requests: 2000 total, 2000 started, 2000 done, 2000 succeeded" h2load.txt || { cat h2load.txt; fail "h2load over TLS"; }
    grep -q "Application protocol: h2" h2load.txt || fail "h2load did not negotiate h2"
else
    echo "note: h2load missing (nghttp2-client): the independent h2 client is skipped"
fi
stop s
want=$((50 + 10 + $(command -v h2load >/dev/null && echo 2000 || echo 0)))
grep -q "^stopped 127.0.0.1:$PORT_s (null) {.*\"executed\":$want,\"ok\":$want,.*\"requests\":$want,.*\"connections\":0," serve-s.out ||
    fail "final counters ($want requests): $(tail -1 serve-s.out)"
# the probe that refused the self-signed certificate aborted its handshake: the server counts it
grep -q '^stopped .*"tls_failed":[1-9][0-9]*,' serve-s.out || fail "a failed handshake is counted: $(tail -1 serve-s.out)"

# HTTP/1.1 pipelining through TLS: 300 work requests in one write. OpenSSL holds the records it
# read beyond the input buffer's room, which epoll cannot see: the server must read them itself.
start_knee_serve q --preset quiet --tls
python3 - "$PORT_q" <<'PY' || fail "pipelining over TLS"
import socket, ssl, sys, time
ctx = ssl.create_default_context()
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))), server_hostname="localhost")
n = 300
s.sendall(b"GET /work?ms=1 HTTP/1.1\r\nHost: a\r\n\r\n" * n)
buf, t = b"", time.time()
s.settimeout(20)
while buf.count(b"HTTP/1.1 200") < n and time.time() - t < 20:
    d = s.recv(65536)
    if not d:
        break
    buf += d
got = buf.count(b"HTTP/1.1 200")
print("pipelined over TLS: %d of %d answered" % (got, n))
sys.exit(0 if got == n else 1)
PY
stop q
grep -q '"ok":300,.*"tls_failed":0,' serve-q.out || fail "pipelined: $(tail -1 serve-q.out)"

# --cert/--key (a CA the client trusts); the quiet preset's pipeline and Server-Timing over h2
start_knee_serve c --preset quiet --cert a.pem --key a.key --h2
grep -q "https h2$" serve-c.out && ! grep -q '^tls: self-signed' serve-c.out || fail "--cert: $(cat serve-c.out)"
"$PROBE" --cacert a.pem -n 20 -m 4 "https://localhost:$PORT_c/work?ms=1" >p.txt || { cat p.txt; fail "verified h2"; }
grep -q " reason=none proto=h2 .* ok=20 .*server_timing='queue;dur=[0-9.]*, work;dur=[0-9.]*'" p.txt ||
    fail "Server-Timing over h2: $(cat p.txt)"
stop c

# --h2 without TLS: h2c by prior knowledge; HTTP/1.1 on the same port
start_knee_serve h --preset null --h2
grep -q "^listening on 127.0.0.1:$PORT_h (null) http h2c$" serve-h.out || fail "h2c listening line: $(cat serve-h.out)"
"$PROBE" --h2c -n 100 -m 16 "http://127.0.0.1:$PORT_h/" >p.txt || { cat p.txt; fail "h2c"; }
grep -q " proto=h2 .* completed=100 ok=100 .* server_max_streams=128 max_open=16 " p.txt || fail "h2c: $(cat p.txt)"
"$PROBE" -n 5 "http://127.0.0.1:$PORT_h/" >p.txt || fail "http/1.1 beside h2c"
if command -v h2load >/dev/null; then
    h2load -n 1000 -c 2 -m 20 "http://127.0.0.1:$PORT_h/" >h2load.txt 2>&1 || true
    grep -q "requests: 1000 total, 1000 started, 1000 done, 1000 succeeded" h2load.txt || { cat h2load.txt; fail "h2load h2c"; }
fi
stop h
grep -q '"connections":0,' serve-h.out || fail "connections left open: $(tail -1 serve-h.out)"

# without --h2, the h2c preface is an HTTP/1.1 request that does not parse
start_knee_serve p --preset null
"$PROBE" --h2c "http://127.0.0.1:$PORT_p/" >p.txt && fail "h2c to a server without --h2"
grep -q " reason=h2_not_h2 " p.txt || fail "h2c refused: $(cat p.txt)"
stop p
echo "ok"
