#!/usr/bin/env bash
# knee capacity --http3: every window of the ladder speaks HTTP/3 over QUIC to knee serve --tls
# --h3 (the server's final counters: every request it answered came over h3), the in-process
# probe too (its own server serves h3), and the report says so (the head's protocol line, the
# JSON's config.http3); an http:// target with --http3 is exit 2. Small rates, short windows.
# tier: exact
source "$KNEE_SRC/tests/e2e/capacity_common.bash"
cd "$TMP"

start_knee_serve h --preset null --tls --h3
set +e
"$KNEE" capacity --http3 --insecure --rates 10,20 --reps 1 --step 1s --warmup 200ms --settle 100ms \
    --slo 'p99<500ms' --lag-limit 50ms --no-cross-check --json cap.json "https://127.0.0.1:$PORT_h/" >cap.txt 2>cap.err
rc=$?
set -e
[[ $rc -eq 0 || $rc -eq 99 ]] || fail "knee capacity --http3: exit $rc: $(tail -3 cap.err)"
grep -q '^  protocol  h3 (HTTP/3 over QUIC, --http3): every step and the probe$' cap.txt ||
    fail "the head's protocol line: $(head -5 cap.txt)"
cap_check cap.json "d['config']['http3'] is True" "config.http3"
cap_check cap.json "len(d['probes']) == 1 and d['probes'][0]['achieved'] > 0" "the probe ran (over h3, in-process)"
kill -INT "$PID_h"
wait "$PID_h" || fail "the server exited with $?"
line=$(tail -1 serve-h.out)
req=$(sed -n 's/.*"requests":\([0-9]*\),.*/\1/p' <<<"$line")
h3=$(sed -n 's/.*"h3":\([0-9]*\),.*/\1/p' <<<"$line")
# the two windows and their warm-ups: at least (10 + 20) x 1 s, every one over h3
[[ -n $req && $req -ge 30 && $req -eq $h3 ]] || fail "every request over h3: requests $req, h3 $h3: $line"
echo "ok: $req requests, all over h3"

set +e
err=$("$KNEE" capacity --http3 --rates 10,20 --reps 1 --step 1s "http://127.0.0.1:$PORT_h/" 2>&1 >/dev/null)
rc=$?
set -e
[[ $rc -eq 2 && $err == *"--http3"* ]] || fail "--http3 with an http:// target: exit $rc: $err"
echo "ok: --http3 with an http:// target -> exit 2: $err"
echo "PASS"
