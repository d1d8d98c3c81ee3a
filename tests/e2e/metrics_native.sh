#!/usr/bin/env bash
# knee run's native histograms read by a real Prometheus (Debian's 2.42 with
# --enable-feature=native-histograms, loopback, scraping every second), which then asks for the
# protobuf exposition: one `knee run --metrics-listen` against knee serve's quiet preset (2 ms
# work, 40 ms on a 10% cache miss: a p99 in the slow cluster), lingering with its final values.
# Prometheus's HTTP API must give:
#   - sum by (outcome) of knee_requests_total = the run's JSON outcomes, exactly (counters
#     through the protobuf exposition);
#   - histogram_count() of the native knee_latency_seconds, service, lag and TTFB = the JSON counts;
#   - histogram_quantile(0.99 / 0.5, knee_latency_seconds) over the native series within the
#     schema's error (2^(1/256) - 1 = 0.27%) of the run's own p99 / p50 (the JSON's, the same
#     cumulative HdrHistogram: the estimate lies in the native bucket holding that value);
# and the endpoint still answers the text format to a client that does not ask for protobuf;
# the Grafana dashboard's native-histogram panel returns data.
# Bounded: one 4 s run at 200/s, at most 90 s of polling.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
PATH=$PATH:/usr/sbin:/usr/bin
command -v prometheus >/dev/null || fail "prometheus missing: scripts/deps.sh installs the prometheus package"

start_knee_serve s --listen quiet@127.0.0.1:0
SPORT=$(port_of s quiet)
MPORT=$(free_port)
PROM_PORT=$(free_port)
[[ $PROM_PORT != "$MPORT" ]] || PROM_PORT=$(free_port)
cat >"$TMP/prom.yml" <<EOF
global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: knee
    static_configs: [ { targets: ["127.0.0.1:$MPORT"] } ]
EOF
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/tsdb" --enable-feature=native-histograms \
    --web.listen-address="127.0.0.1:$PROM_PORT" >"$TMP/prom.log" 2>&1 &
PIDS+=($!)
PROM="http://127.0.0.1:$PROM_PORT"
for _ in $(seq 300); do curl -sf "$PROM/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$PROM/-/ready" >/dev/null || { tail -20 "$TMP/prom.log"; fail "prometheus did not become ready"; }
echo "ok: prometheus (native histograms) ready on $PROM"

"$KNEE" run -R 200 -d 4s --metrics-listen "127.0.0.1:$MPORT" --metrics-linger 120s \
    --target "api=http://127.0.0.1:$SPORT/" --json "$TMP/run.json" >"$TMP/run.txt" 2>"$TMP/run.err" &
RUN_PID=$!
PIDS+=($RUN_PID)
for _ in $(seq 600); do [[ -s $TMP/run.json ]] && break; sleep 0.1; done
[[ -s $TMP/run.json ]] || fail "the run did not finish: $(cat "$TMP/run.err")"
json_check "$TMP/run.json" 'd["accounting_ok"] and tot["outcomes"]["ok"] > 500' "the run: accounting holds, requests answered"

# The endpoint: protobuf when asked as Prometheus asks, the text format otherwise.
ACCEPT='application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,text/plain;version=0.0.4;q=0.5'
curl -sf -D "$TMP/pb.head" -o "$TMP/pb.body" -H "Accept: $ACCEPT" "http://127.0.0.1:$MPORT/metrics" ||
    fail "the endpoint does not answer a protobuf scrape"
grep -qi '^content-type: application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited' \
    "$TMP/pb.head" || fail "protobuf scrape answered $(grep -i content-type "$TMP/pb.head")"
curl -sf "http://127.0.0.1:$MPORT/metrics" >"$TMP/text.prom" || fail "the endpoint does not answer a text scrape"
grep -q '^knee_latency_seconds_bucket{target="api",le="+Inf"} ' "$TMP/text.prom" ||
    fail "the text format lost its classic buckets"
echo "ok: protobuf to Prometheus's Accept ($(stat -c %s "$TMP/pb.body") bytes), text with classic buckets otherwise"

python3 - "$PROM" "$TMP" <<'PY' || exit 1
import json, sys, time, urllib.parse, urllib.request
prom, tmp = sys.argv[1], sys.argv[2]
run = json.load(open(tmp + "/run.json"))
a = run["all"]

def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)

def query(q):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    r = json.load(urllib.request.urlopen(url, timeout=10))
    if r["status"] != "success":
        fail("%s: %s" % (q, r))
    return r["data"]["result"]

def one(q):
    r = query(q)
    return float(r[0]["value"][1]) if r else None

want = {o: float(n) for o, n in run["outcomes"].items()}
deadline = time.monotonic() + 90
while True:
    got = {s["metric"]["outcome"]: float(s["value"][1])
           for s in query('sum by (outcome) (knee_requests_total{job="knee"})')}
    if got == want and one('knee_run_finished{job="knee"}') == 1.0 and \
            one('histogram_count(knee_latency_seconds{job="knee"})') == float(a["latency"]["count"]):
        break
    if time.monotonic() > deadline:
        fail("Prometheus never reached the run's final values: by outcome %s, JSON %s; native count %s, JSON %s"
             % (got, want, one('histogram_count(knee_latency_seconds{job="knee"})'), a["latency"]["count"]))
    time.sleep(0.5)
print("ok: sum by (outcome) (knee_requests_total) = the JSON outcomes exactly: %s"
      % {o: int(v) for o, v in want.items() if v})

for fam, key in (("knee_latency_seconds", "latency"), ("knee_service_seconds", "service"), ("knee_lag_seconds", "lag"),
                 ("knee_ttfb_seconds", "ttfb")):
    n = one('histogram_count(%s{job="knee"})' % fam)
    if n != float(a[key]["count"]):
        fail("histogram_count(%s) = %s, JSON %s.count %s" % (fam, n, key, a[key]["count"]))
print("ok: histogram_count of the native latency, service, lag and TTFB = the JSON counts (%d)" % a["latency"]["count"])

err = 2 ** (1 / 256) - 1
for q, key in ((0.99, "p99"), (0.5, "p50")):
    est = one('histogram_quantile(%g, knee_latency_seconds{job="knee"})' % q) * 1000
    own = a["latency"][key]
    if abs(est - own) > err * own + 1e-6:
        fail("histogram_quantile(%g) over the native histogram = %.6f ms, the run's %s %.6f ms: off by %.4f%% > %.4f%%"
             % (q, est, key, own, 100 * abs(est - own) / own, 100 * err))
    print("ok: histogram_quantile(%g, knee_latency_seconds) = %.4f ms, the run's %s %.4f ms (%.4f%%, within %.2f%%)"
          % (q, est, key, own, 100 * abs(est - own) / own, 100 * err))
PY

# The Grafana dashboard's native-histogram panel answers from this Prometheus (its rate() needs
# two scrapes of the native series in its window: polled, at most 30 s).
for i in $(seq 60); do
    python3 "$KNEE_SRC/tests/e2e/dashboard_queries.py" "$KNEE_SRC/deploy/grafana/knee.json" --query "$PROM" --native \
        >"$TMP/dash.out" 2>&1 && break
    sleep 0.5
done
cat "$TMP/dash.out"
grep -q '^ok: ' "$TMP/dash.out" || exit 1

kill -TERM "$RUN_PID"
set +e
wait "$RUN_PID"
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "the run exited $rc after SIGTERM ended its linger"
echo "ok: SIGTERM ends --metrics-linger; the run exits 0"
