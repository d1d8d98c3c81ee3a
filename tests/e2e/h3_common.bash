# Shared by the HTTP/3 e2e tests (serve_h3*.sh): a certificate for 127.0.0.1, headless Chromium
# as the independent HTTP/3 client, and stopping a server. Source after run_common.bash, in $TMP.
CHROMIUM=$(command -v chromium || true)
[[ -n "$CHROMIUM" ]] || fail "chromium is not installed (scripts/deps.sh installs it)"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout a.key -out a.pem -days 2 \
    -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
SPKI=$(openssl x509 -in a.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)

stop() { # stop NAME: SIGINT, wait (the final counters line is in serve-NAME.out)
    local pid_var=PID_$1
    kill -INT "${!pid_var}"
    wait "${!pid_var}" || fail "$1 exited with $?: $(tail -5 "serve-$1.err")"
}

# page PORT PATH...: an HTML page that fetches each PATH from https://127.0.0.1:PORT with a
# synchronous XHR (so the load event, and --dump-dom, come after the answers) and writes the
# bodies, one per line after a marker (built at run time, so the script's text has none), into
# the DOM; newlines inside a body become '|'
page() {
    local port=$1
    shift
    local list="" p
    for p in "$@"; do list+="\"$p\","; done
    cat >page.html <<PAGE
<html><body><pre id="out"></pre><script>
const out = [];
for (const p of [$list]) {
  const x = new XMLHttpRequest();
  x.open("GET", "https://127.0.0.1:$port" + p, false);
  try { x.send(); out.push("BO" + "DY " + x.status + " " + x.responseText.trim().replace(/\n/g, "|")); }
  catch (e) { out.push("BO" + "DY error " + e); }
}
document.getElementById("out").textContent = out.join("\n");
</script></body></html>
PAGE
}

# chromium_h3 PORT: load page.html with the origin forced onto QUIC; the bodies in dom.txt
chromium_h3() {
    rm -rf prof
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-web-security --user-data-dir="$TMP/prof" \
        --no-first-run --disable-background-networking --disable-component-update --disable-sync \
        --enable-quic --origin-to-force-quic-on="127.0.0.1:$1" --ignore-certificate-errors-spki-list="$SPKI" \
        --dump-dom "file://$TMP/page.html" >dom.html 2>dom.err || fail "chromium failed: $(tail -3 dom.err)"
    grep -o 'BODY [^<]*' dom.html | sed 's/&quot;/"/g' >dom.txt || true
}

stat() { # stat NAME KEY: one counter of NAME's server, read over TCP (http/1.1)
    local pv=PORT_$1
    curl -sk --http1.1 "https://127.0.0.1:${!pv}/stats" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}
