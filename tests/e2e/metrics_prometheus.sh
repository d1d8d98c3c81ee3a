#!/usr/bin/env bash
# Live metrics read by a real Prometheus (Debian's prometheus 2.x on loopback, scraping every
# second, OpenMetrics negotiated): two `knee serve --metrics-listen` instances loaded by a
# closed-loop `knee run`. promtool lints a text-format scrape; Prometheus must end up with
# exactly each server's /stats counters (one server still running, the other stopped and
# lingering with its final counters), the servers' ok counts must add up to knee run's JSON
# ok count, and every query of the Grafana dashboard must run without error.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
PATH=$PATH:/usr/sbin:/usr/bin
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
    fail "prometheus/promtool missing: scripts/deps.sh installs the prometheus package"

# start_serve NAME ARGS...: a knee serve with --metrics-listen on free ports (start_knee_serve):
# PID_<NAME>, PORT_<NAME> (the server) and MPORT_<NAME> (its metrics endpoint); its output in
# serve-NAME.out and .err.
start_serve() {
    local name=$1
    shift
    start_knee_serve "$name" --metrics-listen 127.0.0.1:0 "$@"
}

start_serve A --preset report --metrics-linger 120s
start_serve B --preset quiet
[[ ! -s "$TMP/serve-A.err" ]] || fail "a loopback --metrics-listen printed a warning: $(cat "$TMP/serve-A.err")"
echo "ok: two knee serve instances, metrics on 127.0.0.1:$MPORT_A and 127.0.0.1:$MPORT_B"

# The text format passes promtool's linter; OpenMetrics is negotiated and ends with # EOF.
curl -sf "http://127.0.0.1:$MPORT_B/metrics" >"$TMP/scrape.txt"
promtool check metrics <"$TMP/scrape.txt" >"$TMP/lint" 2>&1 || { cat "$TMP/lint"; fail "promtool check metrics"; }
grep -q "^knee_serve_requests_total{server=\"127.0.0.1:$PORT_B\",preset=\"quiet\"} 0$" "$TMP/scrape.txt" ||
    fail "scrape lacks the server's labelled counter: $(head -20 "$TMP/scrape.txt")"
echo "ok: promtool check metrics passes on a real scrape ($(wc -l <"$TMP/scrape.txt") lines)"
curl -sf -D "$TMP/om.head" -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5' \
    "http://127.0.0.1:$MPORT_B/metrics" >"$TMP/om.txt"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$TMP/om.head" || fail "no OpenMetrics content type"
[[ $(tail -n1 "$TMP/om.txt") == "# EOF" ]] || fail "OpenMetrics exposition does not end with # EOF"
grep -q '^# UNIT knee_serve_uptime_seconds seconds$' "$TMP/om.txt" || fail "OpenMetrics UNIT line"
echo "ok: OpenMetrics on request (content type, UNIT, # EOF)"

# Prometheus on loopback, scraping both every second.
PROM_PORT=$(free_port)
cat >"$TMP/prom.yml" <<EOF
global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: knee_serve
    static_configs: [ { targets: ["127.0.0.1:$MPORT_A", "127.0.0.1:$MPORT_B"] } ]
EOF
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" >"$TMP/prom.log" 2>&1 &
PIDS+=($!)
PROM="http://127.0.0.1:$PROM_PORT"
for _ in $(seq 300); do curl -sf "$PROM/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$PROM/-/ready" >/dev/null || { tail -20 "$TMP/prom.log"; fail "prometheus did not become ready"; }
echo "ok: prometheus $(prometheus --version 2>&1 | awk 'NR==1{print $3}') ready on $PROM"
# Its discovery hands targets to the scrapers only every few seconds: wait until both have
# been scraped (up == 1) before the load starts, so the run is seen while it happens.
for _ in $(seq 300); do
    n=$(curl -sf "$PROM/api/v1/query" --data-urlencode 'query=count(up{job="knee_serve"} == 1)' |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
    [[ $n == 2 ]] && break
    sleep 0.1
done
[[ $n == 2 ]] || fail "prometheus never scraped both endpoints: $(curl -s "$PROM/api/v1/targets")"
echo "ok: both endpoints scraped (up == 1)"

# A short closed-loop run against both servers (bounded: 3 s, 4 connections).
"$KNEE" run -c 4 -d 3s --target a="http://127.0.0.1:$PORT_A/" --target b="http://127.0.0.1:$PORT_B/" \
    --json "$TMP/run.json" >"$TMP/run.txt" || fail "knee run failed: $(cat "$TMP/run.txt")"
json_check "$TMP/run.json" 'identity(acc) and d["outcomes"]["ok"] > 100 and d["outcomes"]["ok"] == acc["sent"]' \
    "knee run: every request sent was answered ok"

# The expected counters: B's /stats while it runs (the /stats request counts itself), A's
# final counters from its "stopped" line after SIGTERM (it then lingers with them).
curl -sf "http://127.0.0.1:$PORT_B/stats" >"$TMP/B.stats"
kill -TERM "$PID_A"
for _ in $(seq 100); do grep -q '^metrics: final counters on ' "$TMP/serve-A.out" && break; sleep 0.1; done
grep -q '^metrics: final counters on ' "$TMP/serve-A.out" || fail "A did not announce its linger: $(cat "$TMP/serve-A.out")"
sed -n 's/^stopped [^ ]* (report) //p' "$TMP/serve-A.out" >"$TMP/A.stats"
[[ -s "$TMP/A.stats" ]] || fail "no stopped line from A"
curl -sf "http://127.0.0.1:$MPORT_A/metrics" >"$TMP/A.linger" || fail "A's endpoint does not answer while lingering"
echo "ok: A stopped and lingers with its final counters"

python3 - "$PROM" "$PORT_A" "$TMP/A.stats" "$PORT_B" "$TMP/B.stats" "$TMP/run.json" "$TMP/A.linger" <<'PY' || exit 1
import json, sys, time, urllib.parse, urllib.request
prom, ports, run = sys.argv[1], {"A": sys.argv[2], "B": sys.argv[4]}, json.load(open(sys.argv[6]))
stats = {"A": json.load(open(sys.argv[3])), "B": json.load(open(sys.argv[5]))}
names = {"executed": "knee_serve_executed_requests_total", "ok": "knee_serve_ok_requests_total",
         "rejected": "knee_serve_rejected_requests_total", "cancelled": "knee_serve_cancelled_requests_total",
         "write_failures": "knee_serve_write_failures_total", "requests": "knee_serve_requests_total",
         "bad_requests": "knee_serve_bad_requests_total", "timeouts": "knee_serve_header_timeouts_total",
         "connections_total": "knee_serve_connections_total", "conn_refused": "knee_serve_refused_connections_total",
         "pauses": "knee_serve_pauses_total", "tls_failed": "knee_serve_tls_handshake_failures_total",
         "h3": "knee_serve_h3_requests_total"}

def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)

def query(q):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    r = json.load(urllib.request.urlopen(url, timeout=10))
    if r["status"] != "success":
        fail("%s: %s" % (q, r))
    return r["data"]["result"]

def scraped():
    got = {}
    for key, metric in names.items():
        for s in query(metric):
            got[(s["metric"]["server"].rsplit(":", 1)[1], key)] = float(s["value"][1])
    return got

# The lingering endpoint already serves A's final counters.
lines = open(sys.argv[7]).read()
want = 'knee_serve_ok_requests_total{server="127.0.0.1:%s",preset="report"} %d\n' % (ports["A"], stats["A"]["ok"])
if want not in lines:
    fail("lingering endpoint: want %r" % want)

# Poll (bounded) until Prometheus has scraped the final values of both servers.
expected = {(ports[n], k): float(stats[n][k]) for n in ports for k in names}
deadline = time.monotonic() + 60
while True:
    got = scraped()
    diff = {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}
    if not diff:
        break
    if time.monotonic() > deadline:
        fail("Prometheus never reached the servers' counters: (scraped, /stats) %s" % diff)
    time.sleep(0.5)
print("ok: Prometheus holds exactly each server's counters (%d series; A final, B live)" % len(expected))

# Every request knee run sent was executed and answered ok by one of the servers.
ok_sum = query("sum(knee_serve_ok_requests_total)")
total = float(ok_sum[0]["value"][1])
if total != run["outcomes"]["ok"] or stats["A"]["ok"] + stats["B"]["ok"] != run["outcomes"]["ok"]:
    fail("sum of servers' ok %s (stats %d + %d) != knee run's ok %d"
         % (total, stats["A"]["ok"], stats["B"]["ok"], run["outcomes"]["ok"]))
per_target = {t["name"]: t["outcomes"]["ok"] for t in run["targets"]}
if per_target != {"a": stats["A"]["ok"], "b": stats["B"]["ok"]}:
    fail("per target: knee run %s, servers A %d B %d" % (per_target, stats["A"]["ok"], stats["B"]["ok"]))
print("ok: sum(knee_serve_ok_requests_total) = %d = knee run's JSON ok count (per target too)" % total)

# Both scraped; Prometheus parsed OpenMetrics (only OpenMetrics carries UNIT metadata).
up = query('up{job="knee_serve"}')
if len(up) != 2 or any(s["value"][1] != "1" for s in up):
    fail("up: %s" % up)
md = json.load(urllib.request.urlopen(prom + "/api/v1/metadata?metric=knee_serve_uptime_seconds", timeout=10))
units = {m.get("unit") for m in md["data"].get("knee_serve_uptime_seconds", [])}
if units != {"seconds"}:
    fail("metadata of knee_serve_uptime_seconds: %s (OpenMetrics not negotiated?)" % md)
print("ok: both targets up; Prometheus read OpenMetrics (UNIT metadata: seconds)")

# rate() in the dashboard needs two samples of a series in its window: wait for them.
deadline = time.monotonic() + 30
while True:
    c = query("min(count_over_time(knee_serve_ok_requests_total[1m]))")
    if c and float(c[0]["value"][1]) >= 2:
        break
    if time.monotonic() > deadline:
        fail("fewer than two samples per series after 30 s: %s" % c)
    time.sleep(0.5)
PY

python3 "$KNEE_SRC/tests/e2e/dashboard_queries.py" "$KNEE_SRC/deploy/grafana/knee.json" --query "$PROM" || exit 1

# A second SIGTERM ends the linger at once; the process exits 0.
kill -TERM "$PID_A"
for _ in $(seq 100); do kill -0 "$PID_A" 2>/dev/null || break; sleep 0.1; done
set +e; wait "$PID_A"; rc=$?; set -e
[[ $rc -eq 0 ]] || fail "A exited $rc after the second SIGTERM"
echo "ok: a second SIGTERM ends --metrics-linger (exit 0)"
