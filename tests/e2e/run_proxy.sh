#!/usr/bin/env bash
# How connections are made (issue 31), against real processes: tinyproxy (Debian) in front of
# nginx. --proxy: http:// requests in absolute form through it (nginx's access log and
# tinyproxy's own log count them, exactly), https:// through CONNECT tunnels to an https nginx
# (HTTP/1.1 and h2 inside), a CONNECT to a port tinyproxy refuses counted as proxy_refused with
# its status, a proxy that requires credentials (407 without them, through with them), the
# credentials in no output (JSON, HTML, text, stderr, the per-request log), an unreachable proxy
# (refused, as a target would be), bad input exit 2. --local-address 127.0.0.2,127.0.0.3: nginx's
# $remote_addr shows both, round-robin (exact by connections); 192.0.2.1 is exit 2.
# --connect-rate: -c 20 --connect-rate 10 opens 20 connections over ~2 s (exact: no sooner than
# the rate allows, every request complete; timing: not much later).
# tier: exact timing
source "$KNEE_SRC/tests/e2e/run_common.bash"
source "$KNEE_SRC/tests/e2e/nginx_tls.bash"
command -v tinyproxy >/dev/null || { echo "skip: tinyproxy missing (scripts/deps.sh --test)"; exit 77; }
cd "$TMP"

HP=$(free_port) # nginx over http
SP=$(free_port) # nginx over https (h2 too)
OTHER=$(free_port)
nginx_tls_certs
nginx_tls_start "$HP" <<CONF
  log_format a '\$remote_addr \$host \$request_uri';
  keepalive_requests 1000000;
  server { listen 127.0.0.1:$HP; access_log $TMP/access.log a; location / { return 200 "ok\n"; } }
  server { listen 127.0.0.1:$SP ssl http2; access_log $TMP/access.log a; location / { return 200 "ok\n"; } }
CONF

# start_tinyproxy NAME [LINE...]: tinyproxy with config NAME.conf (ConnectPort: the https nginx
# only), on a free port; sets PX_PORT
start_tinyproxy() {
    local name=$1 i
    shift
    PX_PORT=$(free_port)
    {
        printf 'Port %s\nListen 127.0.0.1\nAllow 127.0.0.1\nConnectPort %s\nMaxClients 100\nLogLevel Info\n' \
            "$PX_PORT" "$SP"
        printf '%s\n' "$@"
    } >"$name.conf"
    tinyproxy -d -c "$TMP/$name.conf" >"$name.log" 2>&1 &
    PIDS+=($!)
    for i in $(seq 100); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $PX_PORT), 0.2)" 2>/dev/null && return 0
        sleep 0.1
    done
    cat "$name.log" >&2
    fail "tinyproxy did not start"
}
# hits PATH: requests nginx logged for PATH
hits() { grep -c " $1\$" access.log || true; }

if in_tier exact; then
    start_tinyproxy open
    OPEN=$PX_PORT
    start_tinyproxy auth "BasicAuth knee S3CRET-PW"
    AUTH=$PX_PORT

    # http:// through the proxy: absolute form (tinyproxy logs the request line), every request at nginx
    "$KNEE" run -n 30 -c 3 -t 1 --proxy "http://127.0.0.1:$OPEN" --json h1.json "http://127.0.0.1:$HP/plain" >h1.out
    json_check h1.json 'tot["outcomes"]["ok"] == 30 and d["config"]["proxy"] == "127.0.0.1:'"$OPEN"'"' \
        "30 ok through the proxy, config.proxy its host:port"
    [[ $(hits /plain) == 30 ]] || fail "nginx logged $(hits /plain) of 30 /plain requests"
    n=$(grep -c "GET http://127.0.0.1:$HP/plain HTTP/1.1" open.log || true)
    [[ $n == 30 ]] || fail "tinyproxy logged $n absolute-form requests, not 30"
    grep -q "connections: through the proxy 127.0.0.1:$OPEN" h1.out || fail "the summary does not name the proxy"
    # a request source's requests (--targets, a --feed placeholder) are rewritten the same way
    printf 'GET http://127.0.0.1:%s/file1\n\nPOST http://127.0.0.1:%s/file2\n@body.txt\n' "$HP" "$HP" >targets.txt
    echo hello >body.txt
    "$KNEE" run -n 10 -c 2 -t 1 --no-keepalive --proxy "http://127.0.0.1:$OPEN" --targets targets.txt \
        --json tf.json >/dev/null
    json_check tf.json 'tot["outcomes"]["ok"] == 10' "10 ok from a targets file through the proxy"
    [[ $(hits /file1) == 5 && $(hits /file2) == 5 ]] || fail "nginx logged $(hits /file1) and $(hits /file2), not 5 and 5"
    n=$(grep -c "POST http://127.0.0.1:$HP/file2 HTTP/1.1" open.log || true)
    [[ $n == 5 ]] || fail "tinyproxy logged $n absolute-form POSTs, not 5"
    echo "ok: http:// through tinyproxy in absolute form (30 of 30 at nginx)"

    # https:// through CONNECT tunnels: HTTP/1.1, then h2 inside the tunnel
    "$KNEE" run -n 20 -c 2 -t 1 --proxy "http://127.0.0.1:$OPEN" --cacert ca.pem --http1.1 --json t1.json \
        "https://localhost:$SP/tunnel1" >/dev/null
    json_check t1.json 'tot["outcomes"]["ok"] == 20 and d["targets"][0]["protocols"]["http/1.1"] == 2' \
        "20 ok over 2 tunnels (the certificate checked for localhost)"
    "$KNEE" run -n 20 -c 2 -t 1 --proxy "http://127.0.0.1:$OPEN" --cacert ca.pem --http2 --json t2.json \
        "https://127.0.0.1:$SP/tunnel2" >/dev/null
    json_check t2.json 'tot["outcomes"]["ok"] == 20 and d["targets"][0]["protocols"]["h2"] == 2' "20 ok, h2 in 2 tunnels"
    [[ $(hits /tunnel1) == 20 && $(hits /tunnel2) == 20 ]] || fail "nginx logged $(hits /tunnel1) and $(hits /tunnel2)"
    n=$(grep -c "CONNECT.*localhost:$SP" open.log || true)
    [[ $n -ge 2 ]] || fail "tinyproxy saw $n CONNECTs to localhost:$SP"
    echo "ok: https:// through CONNECT tunnels, HTTP/1.1 and h2 (exact at nginx)"

    # a CONNECT to a port tinyproxy refuses (ConnectPort): counted as proxy_refused, by status
    run_knee run -n 6 -c 2 -t 1 --proxy "http://127.0.0.1:$OPEN" --cacert ca.pem --json refused.json \
        "https://127.0.0.1:$OTHER/no" >refused.out
    [[ $RC == 3 ]] || fail "a run the proxy refused exits $RC, not 3"
    # proxy_refused counts CONNECTs (connections), the cause requests: a connection opened ahead
    # of its request (a closed loop's client, the next one after a failure) may be refused with none
    json_check refused.json '(acc["transport_causes"]["proxy_refused"] == 6 and tot["outcomes"]["transport"] == 6
        and list(d["targets"][0]["proxy_refused"]) == ["403"]
        and d["targets"][0]["proxy_refused"]["403"] == tot["connections"]["failed"] >= 6)' "6 requests refused with 403"
    grep -q "proxy refused 6 (the proxy answered 403 ×[0-9]*)" refused.out || fail "the summary: $(grep proxy refused.out)"
    echo "ok: CONNECTs the proxy refuses: proxy_refused ×6, by status 403"

    # a proxy that wants credentials: 407 without them (http: its answer; https: a refused CONNECT)
    run_knee run -n 4 -c 1 -t 1 --proxy "http://127.0.0.1:$AUTH" --json noauth.json "http://127.0.0.1:$HP/x" >/dev/null
    json_check noauth.json 'd["all"]["status_codes"].get("407") == 4' "http:// without credentials: 407 ×4"
    run_knee run -n 4 -c 1 -t 1 --proxy "http://127.0.0.1:$AUTH" --cacert ca.pem --json noauth2.json \
        "https://127.0.0.1:$SP/x" >/dev/null
    json_check noauth2.json '(list(d["targets"][0]["proxy_refused"]) == ["407"] and
        acc["transport_causes"]["proxy_refused"] == 4)' "https:// without credentials: 407"
    PX="http://knee:S3CRET-PW@127.0.0.1:$AUTH"
    "$KNEE" run -n 10 -c 2 -t 1 --proxy "$PX" --json a1.json --html a1.html --out a1.csv "http://127.0.0.1:$HP/auth1" \
        >a1.out 2>a1.err
    "$KNEE" run -n 10 -c 2 -t 1 -x "$PX" --cacert ca.pem --json a2.json "https://127.0.0.1:$SP/auth2" >a2.out 2>a2.err
    json_check a1.json 'tot["outcomes"]["ok"] == 10' "http:// with credentials"
    json_check a2.json 'tot["outcomes"]["ok"] == 10 and "http://<redacted>@127.0.0.1:'"$AUTH"'" in d["environment"]["args"]' \
        "https:// with credentials, the command line redacted"
    [[ $(hits /auth1) == 10 && $(hits /auth2) == 10 ]] || fail "nginx logged $(hits /auth1) and $(hits /auth2)"
    # a bad --proxy and an unresolvable one: the messages keep no credential either
    run_knee run -n 1 --proxy "http://knee:S3CRET-PW@127.0.0.1" "http://127.0.0.1:$HP/" 2>bad1.err
    [[ $RC == 2 ]] && grep -q "give the proxy's port" bad1.err || fail "a proxy without a port: exit $RC, $(cat bad1.err)"
    run_knee run -n 1 --proxy "http://knee:S3CRET-PW@nowhere.invalid:3128" "http://127.0.0.1:$HP/" 2>bad2.err
    [[ $RC == 2 ]] || fail "an unresolvable proxy exits $RC"
    for f in a1.json a1.html a1.csv a1.out a1.err a2.json a2.out a2.err bad1.err bad2.err; do
        ! grep -q "S3CRET\|a25lZTpTM0NSRVQtUFc" "$f" || fail "$f keeps the proxy's credentials"
    done
    echo "ok: credentials: 407 without, through with them, in no output"

    # an unreachable proxy is a refused connect, as a target's would be
    DEAD=$(free_port)
    run_knee run -n 4 -c 2 -t 1 --proxy "http://127.0.0.1:$DEAD" --json dead.json "http://127.0.0.1:$HP/" >dead.out
    [[ $RC == 3 ]] || fail "an unreachable proxy exits $RC, not 3"
    grep -q "connection refused by the proxy 127.0.0.1:$DEAD" dead.out || fail "the verdict: $(grep verdict dead.out)"
    json_check dead.json 'acc["transport_causes"]["refused"] == 4' "an unreachable proxy: refused ×4"
    run_knee run -n 1 --proxy "https://127.0.0.1:$OPEN" "http://127.0.0.1:$HP/" 2>/dev/null
    [[ $RC == 2 ]] || fail "an https:// proxy exits $RC, not 2"
    run_knee run -n 1 --proxy "http://127.0.0.1:$OPEN" --h2c "http://127.0.0.1:$HP/" 2>/dev/null
    [[ $RC == 2 ]] || fail "--h2c through a proxy exits $RC, not 2"
    run_knee run -n 1 --proxy "http://127.0.0.1:$OPEN" --setup "http://127.0.0.1:$HP/login" "http://127.0.0.1:$HP/" 2>/dev/null
    [[ $RC == 2 ]] || fail "--setup through a proxy exits $RC, not 2"
    echo "ok: an unreachable proxy is refused; bad --proxy input is exit 2"

    # --local-address: both addresses, round-robin per new connection (exact by connections)
    "$KNEE" run -n 40 -c 4 -t 2 --no-keepalive --local-address 127.0.0.2,127.0.0.3 --json la.json \
        "http://127.0.0.1:$HP/la" >/dev/null
    json_check la.json 'tot["outcomes"]["ok"] == 40 and d["config"]["local_addresses"] == "127.0.0.2,127.0.0.3"' \
        "40 ok from two source addresses"
    a2=$(grep -c "^127.0.0.2 .* /la$" access.log || true)
    a3=$(grep -c "^127.0.0.3 .* /la$" access.log || true)
    [[ $a2 == 20 && $a3 == 20 ]] || fail "source addresses: 127.0.0.2 ×$a2, 127.0.0.3 ×$a3 (want 20 each)"
    run_knee run -n 1 --local-address 127.0.0.2,192.0.2.1 "http://127.0.0.1:$HP/" 2>la.err
    [[ $RC == 2 ]] && grep -q "local-address 192.0.2.1: cannot send from it" la.err || fail "192.0.2.1: exit $RC $(cat la.err)"
    run_knee run -n 1 --local-address ::1 "http://127.0.0.1:$HP/" 2>/dev/null
    [[ $RC == 2 ]] || fail "an IPv6 source for an IPv4 target exits $RC"
    n=$(grep -c " /la$" access.log || true)
    [[ $n == 40 ]] || fail "a refused --local-address sent something ($n)"
    echo "ok: --local-address round-robin 20/20; a foreign address is exit 2 before the run"
fi

# --connect-rate: 20 connections at 10/s open over ~1.9 s (the first at once), each client's
# requests all complete
T0=$(date +%s.%N)
"$KNEE" run -n 60 -c 20 -t 2 --connect-rate 10 --json cr.json "http://127.0.0.1:$HP/cr" >cr.out
T1=$(date +%s.%N)
if in_tier exact; then
    json_check cr.json '(tot["outcomes"]["ok"] == 60 and tot["connections"]["opened"] == 20 and
        d["config"]["connect_rate"] == 10)' "60 ok over 20 connections"
    grep -q "at most 10.0 new/s" cr.out || fail "the summary does not say the connect rate"
    # each thread dials its 10 at 5/s, the last 1.8 s after its first (which may precede the
    # run's t0, so the process, not elapsed_s, is the bound): the run cannot end sooner
    python3 -c "import sys; sys.exit(0 if $T1 - $T0 >= 1.8 else 1)" ||
        fail "connections opened sooner than --connect-rate allows ($T0 .. $T1)"
    echo "ok: --connect-rate 10: 20 connections, none sooner than the rate allows, every request complete"
fi
if in_tier timing; then
    json_check cr.json 'd["elapsed_s"] < 2.6' "20 connections at 10/s took too long"
    echo "ok: --connect-rate 10: 20 connections in under 2.6 s"
fi
