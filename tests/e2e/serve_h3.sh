#!/usr/bin/env bash
# knee serve --h3: HTTP/3 over QUIC on the TCP port's number, with headless Chromium as the
# independent HTTP/3 client (forced onto QUIC for the origin, the certificate pinned by its
# SPKI). Every preset answers a request over h3 with the very body it gives over h2 (curl) for
# the same seed; /stats counts the h3 requests exactly; TCP answers carry Alt-Svc; the stream
# limit (128 at once per connection) holds under 300 parallel requests; a client that never
# finishes its handshake (tests/e2e/quic_initial.py) is dropped after --header-timeout, and an
# undecryptable Initial makes no connection; bad flags exit 2.
# tier: exact timing
source "$KNEE_SRC/tests/e2e/run_common.bash"
PY=python3 # Debian's (test-bin), with python3-cryptography (quic_initial.py)
cd "$TMP"
source "$KNEE_SRC/tests/e2e/h3_common.bash"

if in_tier exact; then
    # bad input: one line naming the flag, exit 2
    set +e
    err=$("$KNEE" serve --h3 2>&1 >/dev/null)
    rc=$?
    set -e
    [[ $rc -eq 2 && $(printf '%s\n' "$err" | wc -l) -eq 1 && $err == "knee serve: "*"--h3"*"--tls"* ]] ||
        fail "'knee serve --h3' without --tls: exit $rc: $err"
    echo "ok: knee serve --h3 -> exit 2: $err"

    # every preset: the first request over h3 (Chromium) and over h2 (curl), same seed: same body
    for preset in report quiet queue flat fanout null stall; do
        seed=(--seed 7)
        [[ $preset == null ]] && seed=() # the null target draws nothing (--seed is refused)
        start_knee_serve h --preset "$preset" "${seed[@]}" --tls --h2 --h3 --cert a.pem --key a.key
        grep -q "^listening on 127.0.0.1:$PORT_h ($preset) https h2 h3$" serve-h.out ||
            fail "listening line: $(cat serve-h.out)"
        page "$PORT_h" / /health /stats
        chromium_h3 "$PORT_h"
        [[ $(wc -l <dom.txt) -eq 3 ]] || fail "$preset: three answers over h3: $(cat dom.txt) $(tail -3 dom.err)"
        h3_body=$(sed -n 1p dom.txt)
        # /stats over h3 counts itself: the three requests, all over h3
        sed -n 3p dom.txt | grep -q '"requests":3,.*"h3":3,' || fail "$preset: /stats over h3: $(sed -n 3p dom.txt)"
        [[ $(sed -n 2p dom.txt) == 'BODY 200 {"status":"UP"}' ]] || fail "$preset: /health over h3: $(sed -n 2p dom.txt)"
        stop h
        start_knee_serve h --preset "$preset" "${seed[@]}" --tls --h2 --h3 --cert a.pem --key a.key
        h2_body="BODY $(curl -sk --http2 -o body.txt -w '%{http_code}' "https://127.0.0.1:$PORT_h/") $(tr -d '\n' <body.txt)"
        [[ $h3_body == "$h2_body" ]] || fail "$preset: over h3 '$h3_body', over h2 '$h2_body'"
        echo "ok: $preset: $h3_body"
        # TCP answers advertise HTTP/3 (h2 and http/1.1)
        curl -skI --http2 "https://127.0.0.1:$PORT_h/health" | grep -qi "^alt-svc: h3=\":$PORT_h\"" || fail "Alt-Svc over h2"
        curl -skI --http1.1 "https://127.0.0.1:$PORT_h/health" | grep -qi "^alt-svc: h3=\":$PORT_h\"" ||
            fail "Alt-Svc over http/1.1"
        stop h
        grep -q '"h3":0,' serve-h.out || fail "$preset: no h3 request on the second server: $(tail -1 serve-h.out)"
    done

    # without --cert: the certificate generated at start is the one QUIC serves too (Chromium
    # pins the SPKI that the TCP side shows)
    start_knee_serve g --preset null --tls --h3
    spki_tcp=$(openssl s_client -connect "127.0.0.1:$PORT_g" </dev/null 2>/dev/null | openssl x509 -pubkey -noout |
        openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
    spki_files=$SPKI
    SPKI=$spki_tcp
    page "$PORT_g" /health
    chromium_h3 "$PORT_g"
    SPKI=$spki_files
    [[ $(cat dom.txt) == 'BODY 200 {"status":"UP"}' ]] || fail "generated certificate over h3: $(cat dom.txt)"
    [[ $(stat g h3) -eq 1 ]] || fail "one request over h3: $(curl -sk "https://127.0.0.1:$PORT_g/stats")"
    stop g
    echo "ok: the generated certificate is served over QUIC too"

    # beyond --max-conns a new QUIC connection is refused (CONNECTION_REFUSED), and counted
    start_knee_serve m --preset null --tls --h3 --max-conns 1 --header-timeout 30s
    [[ $($PY "$KNEE_SRC/tests/e2e/quic_initial.py" "$PORT_m" --listen 0.3) -ge 1 ]] || fail "no answer to the first Initial"
    [[ $($PY "$KNEE_SRC/tests/e2e/quic_initial.py" "$PORT_m" --listen 0.3) -eq 1 ]] || fail "no refusal to the second"
    stop m
    grep -q '"connections":0,"connections_total":1,"conn_refused":1,' serve-m.out ||
        fail "--max-conns 1: $(tail -1 serve-m.out)"
    echo "ok: beyond --max-conns a QUIC connection is refused"

    # the stream limit: 300 requests of 400 ms at once on one connection (distinct fetches: no
    # cache lock), never more than 128 at work (the pool is unlimited: every open stream works),
    # every one answered. A slow iframe from another (cleartext) server holds the load event.
    start_knee_serve l --preset fanout --tls --h3 --cert a.pem --key a.key
    start_knee_serve slow --preset fanout
    {
        echo '<html><body><script>'
        echo "const u = 'https://127.0.0.1:$PORT_l/work?ms=400&fanout=0';"
        echo "for (let i = 0; i < 300; i++) fetch(u, {cache: 'no-store'}).catch(() => {});"
        echo "</script><iframe src='http://127.0.0.1:$PORT_slow/work?ms=4000&fanout=0'></iframe></body></html>"
    } >page.html
    (
        for _ in $(seq 80); do
            stat l active
            sleep 0.05
        done
    ) >active.txt &
    poll=$!
    chromium_h3 "$PORT_l"
    wait "$poll"
    max=$(sort -n active.txt | tail -1)
    [[ -n $max && $max -le 128 ]] || fail "streams at work at once: $max (limit 128)"
    echo "ok: at most $max streams at work at once (limit 128)"
    [[ $(stat l h3) -eq 300 ]] || fail "300 requests over h3: $(curl -sk "https://127.0.0.1:$PORT_l/stats")"
    stop slow
    stop l
fi

if in_tier timing; then
    # a handshake that never finishes: dropped after --header-timeout (counted in timeouts)
    start_knee_serve t --preset null --tls --h3 --header-timeout 1s
    got=$($PY "$KNEE_SRC/tests/e2e/quic_initial.py" "$PORT_t" --listen 0.3)
    [[ $got -ge 1 ]] || fail "the server answered no datagram to a valid Initial"
    [[ $(stat t connections) -eq 2 && $(stat t timeouts) -eq 0 ]] ||
        fail "the stalled QUIC connection is open: $(curl -sk "https://127.0.0.1:$PORT_t/stats")"
    sleep 1.2
    [[ $(stat t connections) -eq 1 && $(stat t timeouts) -eq 1 ]] ||
        fail "the stalled handshake was not dropped after 1 s: $(curl -sk "https://127.0.0.1:$PORT_t/stats")"
    echo "ok: a handshake that never finishes is dropped after --header-timeout"
    # garbage shaped as an Initial: no connection at all
    $PY "$KNEE_SRC/tests/e2e/quic_initial.py" "$PORT_t" --garbage --listen 0.2 >/dev/null
    [[ $(stat t connections) -eq 1 ]] || fail "an undecryptable Initial left a connection open"
    stop t
    grep -q '"connections":0,.*"h3":0,' serve-t.out || fail "final counters: $(tail -1 serve-t.out)"
fi
echo "PASS"
