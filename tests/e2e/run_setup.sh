#!/usr/bin/env bash
# knee run --setup and --capture (issue 26): one request before the load (a login) whose answer's
# JSON field, header and cookie fill {{NAME}} placeholders in every load request's URL, headers
# and body, in positional targets and targets files alike. The capture server records every
# request: the setup request is sent once and first, every load request carries the token
# exactly; the run JSON notes the setup but never the token or the login's password. A failing
# setup (401, a missing field, no server) exits 3 naming the status or the field and sends no
# load; a placeholder that names nothing is exit 2 before even the setup is sent.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

# start_capture NAME: a capture server logging to $TMP/NAME.jsonl; sets CAP (its base URL).
start_capture() {
    python3 "$KNEE_SRC/tests/e2e/capture_server.py" "$TMP/$1.jsonl" >"$TMP/$1.port" 2>"$TMP/$1.err" &
    PIDS+=($!)
    local i
    for i in $(seq 100); do
        [[ -s "$TMP/$1.port" ]] && break
        sleep 0.05
    done
    [[ -s "$TMP/$1.port" ]] || fail "capture server did not start"
    CAP="http://127.0.0.1:$(cat "$TMP/$1.port")"
}

# capture_check NAME PYTHON-EXPR MESSAGE: reqs is the list of captured requests (dicts), token
# the one the server derives from the login body LOGIN.
LOGIN='{"user": "ann", "password": "s3cret-pw"}'
capture_check() {
    python3 - "$TMP/$1.jsonl" "$2" "$LOGIN" <<'PY' || fail "$3"
import hashlib, json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
token = "tk-" + hashlib.sha256(sys.argv[3].encode()).hexdigest()[:16]
def hdr(r, name):
    return [v for n, v in r["headers"] if n.lower() == name.lower()]
ok = eval(sys.argv[2])
if not ok:
    print("captured:", json.dumps(reqs[:6])[:3000], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# 1. positional target: the token in the URL (from the X-Token header), the headers (a JSON
#    field, a cookie) and the body (the JSON field again), with {{seq}} beside it.
start_capture ok
"$KNEE" run --setup "POST $CAP/login" --setup-header 'Content-Type: application/json' --setup-body "$LOGIN" \
    --capture tok=json:data.token --capture sid=cookie:sid --capture xt=header:X-Token --capture uid=json:data.ids.1 \
    -m POST -H 'Authorization: Bearer {{tok}}' -H 'Cookie: sid={{sid}}' -b '{"t": "{{tok}}", "n": {{seq}}}' \
    -n 20 -c 2 -t 2 --json "$TMP/ok.json" "$CAP/api/{{uid}}?t={{xt}}" >"$TMP/ok.out" 2>"$TMP/ok.err" ||
    fail "the run with a setup: exit $? ($(cat "$TMP/ok.err"))"
capture_check ok 'len(reqs) == 21' "the setup request and 20 load requests"
capture_check ok 'reqs[0]["method"] == "POST" and reqs[0]["target"] == "/login" and reqs[0]["body"] == sys.argv[3] and hdr(reqs[0], "Content-Type") == ["application/json"] and hdr(reqs[0], "Connection") == ["close"]' \
    "the setup request first, as given"
capture_check ok 'sum(r["target"] == "/login" for r in reqs) == 1' "the setup request sent once"
capture_check ok 'all(r["target"] == "/api/8?t=" + token for r in reqs[1:])' "the token in every URL"
capture_check ok 'all(hdr(r, "Authorization") == ["Bearer " + token] and hdr(r, "Cookie") == ["sid=" + token] for r in reqs[1:])' \
    "the token in every request's headers"
capture_check ok 'sorted(json.loads(r["body"])["n"] for r in reqs[1:]) == list(range(20)) and all(json.loads(r["body"])["t"] == token for r in reqs[1:])' \
    "the token in every body, beside {{seq}}"
json_check "$TMP/ok.json" 'd["outcomes"]["ok"] == 20 and identity(acc)' "20 requests answered"
json_check "$TMP/ok.json" 'd["config"]["setup"]["url"].endswith("/login") and d["config"]["setup"]["method"] == "POST" and d["config"]["setup"]["status"] == 200 and d["config"]["setup"]["captured"] == ["tok", "sid", "xt", "uid"]' \
    "the JSON notes the setup"
python3 - "$TMP/ok.json" "$LOGIN" <<'PY' || fail "the run JSON holds neither the token nor the password"
import hashlib, sys
text = open(sys.argv[1]).read()
token = "tk-" + hashlib.sha256(sys.argv[2].encode()).hexdigest()[:16]
assert token not in text, "the token"
assert "s3cret-pw" not in text, "the password"
assert "tok=json:data.token" in text, "the capture rules stay"
PY
grep -q "^setup: POST $CAP/login answered 200 OK in .* ms; captured tok, sid, xt, uid$" "$TMP/ok.err" ||
    fail "the setup line on stderr: $(cat "$TMP/ok.err")"
grep -q "tk-" "$TMP/ok.out" "$TMP/ok.err" && fail "a captured value printed"

# 2. a targets file's entries use the captured variables as they use a feed's columns
start_capture file
printf '{"url": "%s/f/{{uid}}", "headers": {"X-T": "{{tok}}"}}\n{"method": "PUT", "url": "%s/g", "body": "{{tok}}-{{id}}"}\n' \
    "$CAP" "$CAP" >"$TMP/t.jsonl"
printf 'id\n1\n2\n' >"$TMP/f.csv"
"$KNEE" run --targets "$TMP/t.jsonl" --feed "$TMP/f.csv" --setup "POST $CAP/login" --setup-body "$LOGIN" \
    --capture tok=json:data.token --capture uid=json:data.ids.0 -n 4 -c 1 -t 1 >/dev/null 2>"$TMP/file.err" ||
    fail "the targets file with a setup: $(cat "$TMP/file.err")"
capture_check file '[r["target"] for r in reqs] == ["/login", "/f/7", "/g", "/f/7", "/g"]' "setup first, then the file in order"
capture_check file 'hdr(reqs[1], "X-T") == [token] and reqs[2]["body"] == token + "-2" and reqs[4]["body"] == token + "-2"' \
    "the file's header and body carry the token beside the feed's values"

# 3. a setup answered 401: exit 3 with the status and the body's start, no load sent
start_capture denied
run_knee run --setup "POST $CAP/login" --setup-header 'X-Status: 401' --setup-body "$LOGIN" \
    --capture tok=json:data.token -H 'Authorization: Bearer {{tok}}' -n 5 -c 1 "$CAP/api" >"$TMP/denied.out" 2>"$TMP/denied.err"
[[ $RC -eq 3 ]] || fail "a 401 setup: exit $RC, expected 3"
grep -qF -- "--setup POST $CAP/login: the answer was 401 Unauthorized, not 2xx (nothing else was sent); body: {\"error\": \"bad credentials\"}" "$TMP/denied.err" ||
    fail "the 401 message: $(cat "$TMP/denied.err")"
capture_check denied 'len(reqs) == 1 and reqs[0]["target"] == "/login"' "no load after a failed setup"

# 4. a field missing from the answer: exit 3 naming it and the keys there are
start_capture missing
run_knee run --setup "POST $CAP/login" --capture tok=json:data.tokn -H 'Authorization: Bearer {{tok}}' -n 5 -c 1 "$CAP/api" \
    >"$TMP/missing.out" 2>"$TMP/missing.err"
[[ $RC -eq 3 ]] || fail "a missing field: exit $RC, expected 3"
grep -qF -- "--capture tok: json:data.tokn: no key 'tokn' in data (keys: token, user, ids)" "$TMP/missing.err" ||
    fail "the missing field's message: $(cat "$TMP/missing.err")"
capture_check missing 'len(reqs) == 1' "no load after a missing field"
run_knee run --setup "POST $CAP/login" --capture s=cookie:session -H 'Cookie: s={{s}}' -n 5 -c 1 "$CAP/api" 2>"$TMP/cookie.err"
[[ $RC -eq 3 ]] && grep -qF "cookie:session: no Set-Cookie header sets it (cookies set: theme, sid)" "$TMP/cookie.err" ||
    fail "a missing cookie: exit $RC, $(cat "$TMP/cookie.err")"
capture_check missing 'len(reqs) == 2' "no load after a missing cookie"

# 5. no server for the setup: exit 3, the load's server sees nothing
start_capture down
dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run_knee run --setup "POST http://127.0.0.1:$dead/login" -n 5 -c 1 "$CAP/api" 2>"$TMP/down.err"
[[ $RC -eq 3 ]] && grep -qF "Connection refused (nothing else was sent)" "$TMP/down.err" || fail "setup refused: exit $RC, $(cat "$TMP/down.err")"
capture_check down 'len(reqs) == 0' "nothing sent when the setup cannot connect"

# 6. over TLS, with the run's --insecure (knee serve's self-signed certificate); and without it
#    the setup fails on the certificate, exit 3, before the load
start_knee_serve tls --preset null --tls --h2
"$KNEE" run --insecure --setup "GET https://$ADDR_tls/" --capture st=status -n 3 -c 1 -t 1 \
    --json "$TMP/tls.json" "https://$ADDR_tls/x?s={{st}}" >/dev/null 2>"$TMP/tls.err" || fail "a setup over TLS: $(cat "$TMP/tls.err")"
grep -q "^setup: GET https://$ADDR_tls/ answered 200" "$TMP/tls.err" || fail "the TLS setup line: $(cat "$TMP/tls.err")"
json_check "$TMP/tls.json" 'd["outcomes"]["ok"] == 3 and d["config"]["setup"]["status"] == 200' "the load after a TLS setup"
run_knee run --setup "GET https://$ADDR_tls/" -n 3 -c 1 "https://$ADDR_tls/x" 2>"$TMP/tls-verify.err"
[[ $RC -eq 3 ]] && grep -qF "TLS: tls_verify" "$TMP/tls-verify.err" || fail "an unverified TLS setup: exit $RC, $(cat "$TMP/tls-verify.err")"

# 7. bad input is exit 2 before even the setup is sent; --dry-run sends nothing
start_capture bad
bad() { # bad NAME EXPECTED-TEXT ARGS...
    local name=$1 want=$2
    shift 2
    run_knee run "$@" -n 3 -c 1 >"$TMP/bad-$name.out" 2>"$TMP/bad-$name.err"
    [[ $RC -eq 2 ]] || fail "$name: exit $RC, expected 2"
    grep -qF -- "$want" "$TMP/bad-$name.err" || fail "$name: no '$want' in $(cat "$TMP/bad-$name.err")"
}
bad unknown-name "no column 'tokn' in --capture (columns: tok)" --setup "POST $CAP/login" --capture tok=status "$CAP/{{tokn}}"
printf '{"url": "%s/{{tokn}}"}\n' "$CAP" >"$TMP/t2.jsonl"
bad unknown-in-file "t2.jsonl:1" --setup "POST $CAP/login" --capture tok=status --targets "$TMP/t2.jsonl"
bad capture-alone "--capture needs --setup" --capture tok=status "$CAP/{{tok}}"
bad capture-source "--capture 'tok=xml:a': unknown source 'xml:a'" --setup "POST $CAP/login" --capture tok=xml:a "$CAP/"
bad capture-twice "the name tok is taken" --setup "POST $CAP/login" --capture tok=status --capture tok=body "$CAP/"
bad capture-column "--capture id: " --setup "POST $CAP/login" --capture id=status --feed "$TMP/f.csv" "$CAP/{{id}}"
bad setup-placeholder "no placeholders in it" --setup "POST $CAP/login?{{x}}" "$CAP/"
bad setup-url "--setup ftp://x/login" --setup "POST ftp://x/login" "$CAP/"
bad setup-body-file "--setup-body: $TMP/none.json" --setup "POST $CAP/login" --setup-body "@$TMP/none.json" "$CAP/"
"$KNEE" run --dry-run --setup "POST $CAP/login" --capture tok=json:data.token -n 3 "$CAP/{{tok}}" >"$TMP/dry.out" ||
    fail "--dry-run with a setup"
grep -qF "setup: POST $CAP/login, sent once before the load (not in a dry run)" "$TMP/dry.out" || fail "the dry run names the setup"
capture_check bad 'len(reqs) == 0' "nothing sent for bad input or a dry run"
echo "run_setup: ok"
