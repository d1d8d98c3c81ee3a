#!/usr/bin/env bash
# knee run --metrics-listen: knee_protocol_connections{target,protocol} counts the connections
# by the protocol they speak, equal to the JSON's protocols: an --http3 run has only protocol h3,
# an https run offered only h2 (--http2) only h2, a cleartext one only h1; the existing families
# stay (knee_connections_opened). Read during --metrics-linger, after the run's end.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
cd "$TMP"
start_knee_serve h --preset null --tls --h2 --h3
start_knee_serve p --preset null

# scrape NAME ARGS...: knee run ARGS with the endpoint; the exposition at the end in NAME.prom
scrape() {
    local name=$1
    shift
    "$KNEE" run -c 2 -R 20 -d 1s --metrics-listen 127.0.0.1:0 --metrics-linger 3s --json "$name.json" "$@" \
        >"$name.out" 2>"$name.err" &
    local pid=$! port="" i
    for i in $(seq 100); do
        port=$(sed -n 's|^metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$name.out" "$name.err" | head -1)
        [[ -n $port && -s $name.json ]] && break
        sleep 0.1
    done
    [[ -n $port && -s $name.json ]] || fail "$name: no endpoint or no JSON: $(cat "$name.err")"
    curl -s "http://127.0.0.1:$port/metrics" >"$name.prom"
    wait "$pid" || fail "$name: knee run exited $?"
}

# check NAME PROTO JSONKEY: the protocol's series equals the JSON's count; no other protocol
check() {
    local n want series
    want=$(python3 -c "import json; print(json.load(open('$1.json'))['targets'][0]['protocols']['$3'])")
    series=$(grep -c '^knee_protocol_connections_total{' "$1.prom" || true)
    n=$(sed -n "s/^knee_protocol_connections_total{target=\"[^\"]*\",protocol=\"$2\"} \([0-9]*\)$/\1/p" "$1.prom")
    [[ $want -ge 1 && $n == "$want" && $series -eq 1 ]] ||
        fail "$1: protocol $2: series $n (of $series), JSON $want: $(grep knee_protocol "$1.prom")"
    grep -q '^knee_connections_opened_total{target=' "$1.prom" || fail "$1: knee_connections_opened is gone"
    echo "ok: $1: knee_protocol_connections_total{protocol=\"$2\"} $n"
}

scrape h3 --http3 --insecure "https://127.0.0.1:$PORT_h/"
check h3 h3 h3
scrape h2 --http2 --insecure "https://127.0.0.1:$PORT_h/"
check h2 h2 h2
scrape h1 "http://127.0.0.1:$PORT_p/"
check h1 h1 http/1.1
echo "PASS"
