#!/usr/bin/env bash
# knee serve --h3 --preset stream: server-sent events over HTTP/3, with headless Chromium as the
# independent HTTP/3 client. Each answer over h3 is the very event stream it is over h2 (curl)
# for the same seed and query; /stats counts the h3 requests exactly; a client that leaves
# mid-stream frees its slot (the next event sees it gone: a write failure) and the server stops
# cleanly.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
cd "$TMP"
source "$KNEE_SRC/tests/e2e/h3_common.bash"

serve=(--preset stream --seed 3 --tls --h2 --h3 --cert a.pem --key a.key)
paths=("/?events=5&gap_ms=20&first_ms=10&stall_p=0" "/?events=1&first_ms=0" "/?events=0" "/?events=3&stall_p=1&stall_ms=30")

# over h3: every answer, then /stats (over h3 too: it counts itself)
start_knee_serve h "${serve[@]}"
grep -q "^listening on 127.0.0.1:$PORT_h (stream) https h2 h3$" serve-h.out || fail "listening line: $(cat serve-h.out)"
page "$PORT_h" "${paths[@]}" /stats
chromium_h3 "$PORT_h"
[[ $(wc -l <dom.txt) -eq 5 ]] || fail "five answers over h3: $(cat dom.txt) $(tail -3 dom.err)"
sed -n 5p dom.txt | grep -q '"requests":5,.*"h3":5,' || fail "/stats over h3: $(sed -n 5p dom.txt)"
stop h
grep -q '"active":0,' serve-h.out || fail "work left at the end: $(tail -1 serve-h.out)"

# over h2 (curl), the same server configuration: the same bodies
start_knee_serve g "${serve[@]}"
i=1
for p in "${paths[@]}"; do
    h2="BODY $(curl -sk --http2 -o body.txt -w '%{http_code}' "https://127.0.0.1:$PORT_g$p") $(tr '\n' '|' <body.txt | sed 's/|*$//')"
    h3=$(sed -n "${i}p" dom.txt)
    [[ $h3 == "$h2" ]] || fail "$p: over h3 '$h3', over h2 '$h2'"
    echo "ok: $p: ${h3:0:60}..."
    i=$((i + 1))
done
stop g
grep -q '"h3":0,' serve-g.out || fail "no h3 request on the h2 server: $(tail -1 serve-g.out)"
[[ $(sed -n 1p dom.txt) == *'id: 4|data: {"i":4,"of":5}' ]] || fail "five events: $(sed -n 1p dom.txt)"

# a client that leaves mid-stream: a long stream (fetched, not awaited) while a short one holds
# the page; Chromium exits after the short one, the long one's next event finds it gone
start_knee_serve l "${serve[@]}"
cat >page.html <<PAGE
<html><body><pre id="out"></pre><script>
fetch("https://127.0.0.1:$PORT_l/?events=1000&gap_ms=50&first_ms=0").catch(() => {});
const x = new XMLHttpRequest();
x.open("GET", "https://127.0.0.1:$PORT_l/?events=4&gap_ms=100&first_ms=0", false);
x.send();
document.getElementById("out").textContent = "BO" + "DY " + x.status + " " + x.responseText.trim().replace(/\n/g, "|");
</script></body></html>
PAGE
chromium_h3 "$PORT_l"
[[ $(cat dom.txt) == *'id: 3|data: {"i":3,"of":4}' ]] || fail "the short stream: $(cat dom.txt)"
for _ in $(seq 100); do
    [[ $(stat l active) -eq 0 ]] && break
    sleep 0.1
done
[[ $(stat l active) -eq 0 ]] || fail "the long stream still works after its client left: $(curl -sk "https://127.0.0.1:$PORT_l/stats")"
stop l
grep -q '"write_failures":1,' serve-l.out || fail "the stream whose client left: $(tail -1 serve-l.out)"
echo "ok: a client that leaves mid-stream frees its slot"
echo "PASS"
