#!/usr/bin/env bash
# knee run --remote-write into a real Prometheus (Debian's 2.42, loopback, started here as a
# remote-write receiver with native histograms) and into receivers that fail:
#   - one run (open loop, -d 3s, a push every second and one at the end): PromQL over the pushed
#     series gives the JSON's request counts per outcome exactly, and the native latency's
#     count; histogram_quantile(0.99) over the native latency is within schema 8's error of the
#     JSON p99 (timing tier); the JSON's remote_write says every push was accepted;
#   - two shards (--shard 0/2, 1/2) push with their shard label: sum across shards = the merged
#     run's counts (knee merge of their JSON);
#   - a receiver that is down and one that answers 500 (python3 http.server) neither stop nor
#     slow the load: exit 0, the counts exact, the JSON says failed/retried, the summary warns;
#     the generator verdict stays valid (timing tier); with --remote-write-required exit 1 and the
#     verdict says PUSH FAILED first; the bearer token reaches the receiver and no output;
#   - bad flags exit 2 naming the flag.
# tier: exact timing
source "$KNEE_SRC/tests/e2e/run_common.bash"
PATH=$PATH:/usr/sbin:/usr/bin
command -v prometheus >/dev/null || fail "prometheus missing: scripts/deps.sh installs the prometheus package"

start_knee_serve s --listen quiet@127.0.0.1:0
U="http://127.0.0.1:$PORT_s/"

# ---- bad flags: exit 2, the flag named -------------------------------------------------------
expect2() { # MESSAGE ARGS...: exit 2 and MESSAGE on stderr
    local want=$1 rc=0
    shift
    "$KNEE" run -R 10 -d 1s "$@" "$U" >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
    [[ $rc == 2 ]] || fail "exit $rc (want 2) for $*: $(cat "$TMP/bad.err")"
    grep -qF -- "$want" "$TMP/bad.err" || fail "for $*: no '$want' in: $(cat "$TMP/bad.err")"
}
expect2 "--remote-write: ftp://x/: scheme 'ftp' is not supported" --remote-write ftp://x/
expect2 "--remote-write: credentials in the URL are not supported" --remote-write http://u:pw@127.0.0.1:1/w
expect2 "--remote-write-label '9x' is not a label name" --remote-write http://127.0.0.1:1/w --remote-write-label 9x=1
expect2 "--remote-write-label: 'a' given twice" --remote-write http://127.0.0.1:1/w --remote-write-label a=1 \
    --remote-write-label a=2
expect2 "--remote-write-label: remote-write label 'target': knee_requests already has a label of that name" --remote-write http://127.0.0.1:1/w \
    --remote-write-label target=x
expect2 "--remote-write-auth-file $TMP/nope: No such file or directory" --remote-write http://127.0.0.1:1/w \
    --remote-write-auth-file "$TMP/nope"
printf 'token s3cr3t\n' >"$TMP/auth.bad"
expect2 "--remote-write-auth-file $TMP/auth.bad:1: expected 'bearer TOKEN'" --remote-write http://127.0.0.1:1/w \
    --remote-write-auth-file "$TMP/auth.bad"
grep -q s3cr3t "$TMP/bad.err" && fail "the auth file's secret is in a message"
expect2 "--remote-write-interval: must be above 0" --remote-write http://127.0.0.1:1/w --remote-write-interval 0
expect2 "--remote-write-required: needs --remote-write URL" --remote-write-required
expect2 "--metrics-buckets: needs --metrics-listen or --remote-write" --metrics-buckets 1ms
echo "ok: bad flags exit 2 naming the flag (URL, label, auth file, a flag without --remote-write)"

# ---- Prometheus as the receiver ------------------------------------------------------------------
PROM_PORT=$(free_port)
echo 'global: { scrape_interval: 1h }' >"$TMP/prom.yml"
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/tsdb" --web.listen-address="127.0.0.1:$PROM_PORT" \
    --web.enable-remote-write-receiver --enable-feature=native-histograms >"$TMP/prom.log" 2>&1 &
PIDS+=($!)
PROM="http://127.0.0.1:$PROM_PORT"
for _ in $(seq 300); do curl -sf "$PROM/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$PROM/-/ready" >/dev/null || { tail -20 "$TMP/prom.log"; fail "prometheus did not become ready"; }
RW="$PROM/api/v1/write"
echo "ok: prometheus ready on $PROM"

# One run, and two shards of another plan, all pushing at once.
"$KNEE" run -R 200 -d 3s --remote-write "$RW" --remote-write-interval 1s --remote-write-label job=one \
    --json "$TMP/one.json" "$U" >"$TMP/one.txt" 2>"$TMP/one.err" &
ONE=$!
for i in 0 1; do
    "$KNEE" run -R 200 -d 3s --shard "$i/2" --remote-write "$RW" --remote-write-interval 1s \
        --remote-write-label job=sharded --json "$TMP/shard$i.json" "$U" >"$TMP/shard$i.txt" 2>"$TMP/shard$i.err" &
    printf -v "SHARD$i" '%s' "$!"
done
wait "$ONE" || fail "the run exited $?: $(cat "$TMP/one.err")"
wait "$SHARD0" || fail "shard 0 exited $?: $(cat "$TMP/shard0.err")"
wait "$SHARD1" || fail "shard 1 exited $?: $(cat "$TMP/shard1.err")"
grep -q "^remote-write to $RW every 1s$" "$TMP/one.err" || fail "no remote-write line: $(cat "$TMP/one.err")"
"$KNEE" merge "$TMP/shard0.json" "$TMP/shard1.json" --json "$TMP/merged.json" >/dev/null 2>"$TMP/merge.err" ||
    fail "knee merge: $(cat "$TMP/merge.err")"
for r in one shard0 shard1; do
    json_check "$TMP/$r.json" '(d["accounting_ok"] and tot["outcomes"]["ok"] > 100 and d["remote_write"]["ok"] >= 3 and
        d["remote_write"]["ok"] == d["remote_write"]["pushes"] and d["remote_write"]["failed"] == 0 and
        d["remote_write"]["dropped"] == 0 and d["remote_write"]["last_error"] is None and d["remote_write"]["bytes"] > 0)' \
        "$r: every push accepted"
done
echo "ok: three runs pushed every second and at the end, every push accepted (JSON remote_write)"

python3 - "$PROM" "$TMP" <<'PY' || exit 1
import json, os, sys, urllib.parse, urllib.request
prom, tmp = sys.argv[1], sys.argv[2]
def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)
def query(q):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    r = json.load(urllib.request.urlopen(url, timeout=10))
    if r["status"] != "success":
        fail("%s: %s" % (q, r))
    return r["data"]["result"]
def by(q, label):
    return {s["metric"].get(label, ""): float(s["value"][1]) for s in query(q)}
def one(q):
    r = query(q)
    if len(r) != 1:
        fail("%s: %d series, want 1: %s" % (q, len(r), r))
    return float(r[0]["value"][1])

a = json.load(open(tmp + "/one.json"))
got = by('sum by (outcome) (knee_requests_total{job="one"})', "outcome")
want = {o: float(n) for o, n in a["outcomes"].items()}
if got != want:
    fail("sum by (outcome) (knee_requests_total{job=\"one\"}) = %s, JSON %s" % (got, want))
print("ok: the pushed knee_requests_total by outcome = the JSON's outcomes exactly: %s" % {o: int(v) for o, v in want.items() if v})
for fam, key in (("knee_latency_seconds", "latency"), ("knee_service_seconds", "service"), ("knee_lag_seconds", "lag")):
    n = one('histogram_count(%s{job="one"})' % fam)
    c = one('%s_count{job="one"}' % fam)
    if n != float(a["all"][key]["count"]) or c != n:
        fail("%s: native count %s, classic count %s, JSON %s" % (fam, n, c, a["all"][key]["count"]))
print("ok: the native and the classic latency, service and lag counts = the JSON's (%d)" % a["all"]["latency"]["count"])
if os.environ.get("KNEE_TIER", "timing") == "timing":
    err = 2 ** (1 / 256) - 1
    est = one('histogram_quantile(0.99, knee_latency_seconds{job="one"})') * 1000
    own = a["all"]["latency"]["p99"]
    if abs(est - own) > err * own + 1e-6:
        fail("histogram_quantile(0.99) over the pushed native latency = %.6f ms, the run's p99 %.6f ms: off by %.4f%% > %.4f%%"
             % (est, own, 100 * abs(est - own) / own, 100 * err))
    print("ok: histogram_quantile(0.99, knee_latency_seconds) = %.4f ms, the run's p99 %.4f ms (within %.2f%%)"
          % (est, own, 100 * err))

m = json.load(open(tmp + "/merged.json"))
shards = by('sum by (shard) (knee_requests_total{job="sharded"})', "shard")
if sorted(shards) != ["0", "1"]:
    fail("the shards' pushes carry shard labels %s, want 0 and 1" % sorted(shards))
got = by('sum by (outcome) (knee_requests_total{job="sharded"})', "outcome")
want = {o: float(n) for o, n in m["outcomes"].items()}
if got != want:
    fail("sum across shards by outcome = %s, the merged run's %s" % (got, want))
n = one('sum(histogram_count(knee_latency_seconds{job="sharded"}))')
if n != float(m["all"]["latency"]["count"]):
    fail("sum across shards of the native latency count = %s, the merged run's %s" % (n, m["all"]["latency"]["count"]))
print("ok: two shards push shard=\"0\" and shard=\"1\"; sum across them = the merged run's outcomes and latency count")
PY

# ---- receivers that fail: down, and one that answers 500 (and records the Authorization) --------
DOWN=$(free_port)
cat >"$TMP/r500.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(sys.argv[1], "a") as f:
            f.write("%s|%s|%s\n" % (self.headers.get("Authorization"), self.headers.get("Content-Encoding"),
                                    self.headers.get("X-Prometheus-Remote-Write-Version")))
        self.send_response(500)
        self.send_header("Content-Length", "9")
        self.end_headers()
        self.wfile.write(b"overload\n")
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print("PORT", s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$TMP/r500.py" "$TMP/r500.log" >"$TMP/r500.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q '^PORT ' "$TMP/r500.out" 2>/dev/null && break; sleep 0.1; done
R500=$(awk '/^PORT /{print $2}' "$TMP/r500.out")
[[ -n $R500 ]] || fail "the 500 receiver did not start"
printf 'bearer tok-3x4mpl3\n' >"$TMP/auth"

bad_runs() { # attempt: the two failing receivers, plain, and the down one with --remote-write-required
    local rc
    rc=0
    "$KNEE" run -R 300 -d 3s --remote-write "http://127.0.0.1:$DOWN/api/v1/write" --remote-write-interval 500ms \
        --remote-write-timeout 1s --json "$TMP/down.json" "$U" >"$TMP/down.txt" 2>"$TMP/down.err" || rc=$?
    [[ $rc == 0 ]] || fail "a receiver that is down: exit $rc (want 0): $(cat "$TMP/down.err")"
    rc=0
    "$KNEE" run -R 300 -d 3s --remote-write "http://127.0.0.1:$R500/api/v1/write" --remote-write-interval 500ms \
        --remote-write-timeout 1s --remote-write-auth-file "$TMP/auth" --json "$TMP/r500.json" "$U" \
        >"$TMP/r500.txt" 2>"$TMP/r500.err" || rc=$?
    [[ $rc == 0 ]] || fail "a receiver that answers 500: exit $rc (want 0): $(cat "$TMP/r500.err")"
}
bad_required() {
    local rc=0
    "$KNEE" run -R 100 -d 1s --remote-write "http://127.0.0.1:$DOWN/api/v1/write" --remote-write-timeout 500ms \
        --remote-write-required --json "$TMP/req.json" "$U" >"$TMP/req.txt" 2>"$TMP/req.err" || rc=$?
    [[ $rc == 1 ]] || fail "--remote-write-required with a receiver that is down: exit $rc (want 1)"
    grep -q '^verdict     PUSH FAILED: not one --remote-write push was accepted (connect 127.0.0.1:' "$TMP/req.txt" ||
        fail "no PUSH FAILED verdict: $(cat "$TMP/req.txt")"
    json_check "$TMP/req.json" '(d["remote_write"]["required"] and d["remote_write"]["ok"] == 0 and
        d["warnings"][0].startswith("remote-write: ") and "--remote-write-required: exit 1" in d["warnings"][0] and
        d["accounting_ok"] and tot["outcomes"]["ok"] == 100)' "--remote-write-required: the warning first, the load whole"
    echo "ok: --remote-write-required with a receiver that is down: exit 1, the verdict says PUSH FAILED first"
}

bad_required
for attempt in 1 2; do
    bad_runs
    problem=""
    if in_tier timing; then
        python3 - "$TMP" >"$TMP/verdict.txt" <<'PY' || true
import json, sys
for r in ("down", "r500"):
    d = json.load(open("%s/%s.json" % (sys.argv[1], r)))
    if d["generator_limited"]:
        print("%s: GENERATOR-LIMITED" % r)
PY
        problem=$(cat "$TMP/verdict.txt")
    fi
    timing_verdict "$attempt" "$problem" "$(run_limited_why "$TMP/down.json" "$TMP/r500.json")" && break
done
json_check "$TMP/down.json" '(d["accounting_ok"] and tot["outcomes"]["ok"] == 900 and acc["planned"] == 900 and
    d["remote_write"]["ok"] == 0 and d["remote_write"]["failed"] >= 1 and d["remote_write"]["retried"] >= 1 and
    d["remote_write"]["pushes"] == d["remote_write"]["failed"] + d["remote_write"]["dropped"] and
    "connect 127.0.0.1:" in d["remote_write"]["last_error"] and not d["remote_write"]["required"] and
    any(w.startswith("remote-write: ") for w in d["warnings"]))' "down: the load whole, every push failed and said"
json_check "$TMP/r500.json" '(d["accounting_ok"] and tot["outcomes"]["ok"] == 900 and
    d["remote_write"]["ok"] == 0 and d["remote_write"]["retried"] >= 2 and
    d["remote_write"]["last_error"] == "HTTP 500: overload" and any(w.startswith("remote-write: ") for w in d["warnings"]))' \
    "500: the load whole, retried, the status said"
in_tier timing && echo "ok: the generator verdict of both runs is valid (the pushes did not slow the load)"
grep -q '^Bearer tok-3x4mpl3|snappy|0.1.0$' "$TMP/r500.log" || fail "the receiver saw: $(head -3 "$TMP/r500.log")"
[[ $(wc -l <"$TMP/r500.log") -ge 3 ]] || fail "the 500 receiver saw fewer than 3 attempts"
if grep -l 'tok-3x4mpl3' "$TMP"/*.json "$TMP"/*.txt "$TMP"/*.err 2>/dev/null; then
    fail "the bearer token is in an output"
fi
echo "ok: a receiver that is down and one that answers 500: exit 0, 900 of 900 ok, failed/retried in the JSON;"
echo "ok: the bearer token reached the receiver (with Content-Encoding snappy, version 0.1.0) and no output"
