#!/usr/bin/env bash
# knee run against a real peer (nginx, one worker, tiny static response): closed loop with
# keep-alive uses exactly one connection per client; --no-keepalive one per request; an open
# loop plans exactly rate × duration; the JSON carries the schema's required fields.
# tier: exact timing
# The timing tier: the progress line's rate, 500.0/s in every full second (a loaded machine
# sends some of a second's requests in the next); the exact tier the rest.
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_nginx
URL="http://127.0.0.1:$NGX_PORT/"

if in_tier timing; then
    # live progress: a line every second on stderr, its rate the plan's
    "$KNEE" run -R 500 -d 2s --progress "$URL" >"$TMP/p.out" 2>"$TMP/p.err"
    grep -q 'sent 500.0/s' "$TMP/p.err" || { cat "$TMP/p.err"; fail "progress line on stderr"; }
    in_tier exact || { echo "ok"; exit 0; }
fi

"$KNEE" run -c 4 -t 2 -n 5000 --json "$TMP/c.json" "$URL" >"$TMP/c.txt"
json_check "$TMP/c.json" 'identity(acc) and d["outcomes"]["ok"] == 5000' "closed loop: 5000 ok"
json_check "$TMP/c.json" 'tot["connections"]["opened"] == 4' "keep-alive: one connection per client"
json_check "$TMP/c.json" 'tot["latency"]["count"] == 5000 and tot["latency"]["p50"] > 0' "latency recorded"
json_check "$TMP/c.json" 'd["config"]["mode"] == "closed" and d["latency_interval"].startswith("T5-T1")' "labelled"
grep -q 'planned 5,000 = sent 5,000 + dropped 0  \[holds\]' "$TMP/c.txt" || fail "text accounting line"
grep -q 'send -> full response (T5 - T1)' "$TMP/c.txt" || fail "closed-loop interval label"

"$KNEE" run -c 2 -t 1 -n 300 --no-keepalive --json "$TMP/k.json" "$URL" >/dev/null
json_check "$TMP/k.json" 'd["outcomes"]["ok"] == 300 and tot["connections"]["opened"] == 300' \
    "--no-keepalive: a connection per request"
json_check "$TMP/k.json" 'tot["connect"]["count"] == 300' "a connect time per new connection"

"$KNEE" run -R 2000 -d 2s --json "$TMP/o.json" "$URL" >"$TMP/o.txt"
json_check "$TMP/o.json" 'identity(acc) and acc["planned"] == 4000 and d["outcomes"]["ok"] == 4000' \
    "open loop: exactly 2000/s x 2 s planned and answered"
json_check "$TMP/o.json" 'abs(d["rates"]["planned"] - 2000) < 1e-6 and d["window_s"] == 2' "planned rate"
python3 - "$TMP/o.json" <<'PY' || fail "JSON schema fields"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("planned", "sent", "completed", "goodput"):
    assert k in d["rates"], k
for k in ("ok", "rejected", "http_error", "invalid", "transport", "timeout", "dropped", "cancelled"):
    assert k in d["outcomes"], k
for t in [d["all"]] + d["targets"]:
    for m in ("latency", "service", "ttfb", "lag"):
        for s in ("count", "mean", "stdev", "min", "max", "p50", "p90", "p95", "p99", "p99.9"):
            assert s in t[m], (m, s)
e = d["environment"]
for k in ("version", "args", "cpus", "kernel", "loadavg_before", "loadavg_after", "cpu_user_s", "cpu_sys_s",
          "peak_rss_kb"):
    assert k in e, k
assert e["args"][:3] == ["run", "-R", "2000"], e["args"]
assert len(d["timeline"]) >= 2
PY
grep -q 'planned send -> full response (T5 - T0)' "$TMP/o.txt" || fail "open-loop interval label"

# live progress: on stderr with --progress (a terminal gets it without), never on stdout
"$KNEE" run -R 500 -d 2s --progress "$URL" >"$TMP/p.out" 2>"$TMP/p.err"
grep -q 'sent [0-9,.]*/s' "$TMP/p.err" || { cat "$TMP/p.err"; fail "progress line on stderr"; }
! grep -q 'in flight' "$TMP/p.out" || fail "progress leaked to stdout"
"$KNEE" run -R 500 -d 1s "$URL" >/dev/null 2>"$TMP/np.err"
[[ ! -s "$TMP/np.err" ]] || fail "progress without a terminal and without --progress"
echo "ok"
