#!/usr/bin/env bash
# knee run's live metrics read by a real Prometheus (Debian's, loopback, scraping every second):
# two `knee run --metrics-listen` instances (one against a server with 10% slow cache misses,
# one against a fast one, both with a warm-up) and the `knee serve` they load. After the runs,
# lingering with their final values (--metrics-linger), Prometheus's HTTP API must give:
#   - sum by (outcome) of knee_requests_total = the two JSON outcome counts added, exactly;
#     per instance, planned, latency and lag counts, bytes and connections = its JSON;
#   - histogram_quantile(0.99, sum by (le) (knee_latency_seconds_bucket)) over the run = the
#     estimate knee itself computes (knee stats, src/hist/prom) from the same merged buckets,
#     and those buckets = the sum of the two instances' own final expositions;
#   - the average of the two instances' p99s differs from it (the lesson, through the system);
#   - the server's view: knee serve's ok counts = the runs' ok requests, warm-up included, and
#     its server-time histogram counts them all;
# and every query of the Grafana dashboard must return data. Bounded (two 5 s runs at 300/s).
# tier: exact timing
# The timing tier: the lesson (the two runs' p99s must differ as the two servers do, which on a
# loaded machine both runs' own delays can hide); the exact tier the rest. Each runs the whole.
source "$KNEE_SRC/tests/e2e/run_common.bash"
PATH=$PATH:/usr/sbin:/usr/bin
command -v prometheus >/dev/null || fail "prometheus missing: scripts/deps.sh installs the prometheus package"

# knee serve: a slow-tailed server (quiet: 2 ms work, 40 ms on a 10% cache miss) and a fast one
# (queue preset, /work?ms=2), with metrics.
start_knee_serve s --listen quiet@127.0.0.1:0 --listen queue@127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
    --metrics-buckets 1ms,5ms,10ms,50ms,100ms,1s
SERVE_PID=$PID_s
SLOW_PORT=$(port_of s quiet)
FAST_PORT=$(port_of s queue)
SERVE_MPORT=$MPORT_s
A_MPORT=$(free_port)
B_MPORT=$(free_port)
[[ $A_MPORT != "$B_MPORT" ]] || B_MPORT=$(free_port)
echo "ok: knee serve on :$SLOW_PORT (quiet) and :$FAST_PORT (queue), metrics :$SERVE_MPORT"

PROM_PORT=$(free_port)
cat >"$TMP/prom.yml" <<EOF
global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: knee_run
    static_configs: [ { targets: ["127.0.0.1:$A_MPORT", "127.0.0.1:$B_MPORT"] } ]
  - job_name: knee_serve
    static_configs: [ { targets: ["127.0.0.1:$SERVE_MPORT"] } ]
EOF
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" >"$TMP/prom.log" 2>&1 &
PIDS+=($!)
PROM="http://127.0.0.1:$PROM_PORT"
for _ in $(seq 300); do curl -sf "$PROM/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$PROM/-/ready" >/dev/null || { tail -20 "$TMP/prom.log"; fail "prometheus did not become ready"; }
echo "ok: prometheus ready on $PROM"

# The two runs: the same buckets (instances merged by le must share them) and the same
# threshold (its 300 ms becomes a bound in both), each lingering with its final values.
BUCKETS=1ms,2.5ms,5ms,10ms,20ms,30ms,40ms,42ms,45ms,50ms,75ms,100ms,250ms,1s
run_bg() { # NAME MPORT URL
    "$KNEE" run -R 300 -d 5s --warmup 1s --threshold 'p99<300ms' --metrics-listen "127.0.0.1:$2" \
        --metrics-buckets "$BUCKETS" --metrics-linger 180s --target "$1=$3" --json "$TMP/$1.json" \
        --out "$TMP/$1.bin" >"$TMP/$1.txt" 2>"$TMP/$1.err" &
    PIDS+=($!)
    printf -v "${1}_PID" '%s' "$!"
}
run_bg slow "$A_MPORT" "http://127.0.0.1:$SLOW_PORT/"
run_bg fast "$B_MPORT" "http://127.0.0.1:$FAST_PORT/work?ms=2"
for _ in $(seq 600); do [[ -s $TMP/slow.json && -s $TMP/fast.json ]] && break; sleep 0.1; done
[[ -s $TMP/slow.json && -s $TMP/fast.json ]] || fail "the runs did not finish: $(cat "$TMP"/*.err)"
grep -q "^metrics on http://127.0.0.1:$A_MPORT/metrics$" "$TMP/slow.err" || fail "no metrics line: $(cat "$TMP/slow.err")"
for r in slow fast; do
    json_check "$TMP/$r.json" 'd["accounting_ok"] and tot["outcomes"]["ok"] > 500 and d["all"]["warmup"]["planned"] > 0' \
        "$r: accounting holds, requests answered, a warm-up"
done
echo "ok: two runs done, lingering with their final values"
curl -sf "http://127.0.0.1:$A_MPORT/metrics" >"$TMP/slow.prom" || fail "slow's endpoint does not answer while lingering"
curl -sf "http://127.0.0.1:$B_MPORT/metrics" >"$TMP/fast.prom" || fail "fast's endpoint does not answer while lingering"
grep -q '^knee_run_finished 1$' "$TMP/slow.prom" || fail "knee_run_finished is not 1 after the run"

python3 - "$PROM" "$TMP" "$KNEE" "$A_MPORT" "$B_MPORT" <<'PY' || exit 1
import json, os, subprocess, sys, time, urllib.parse, urllib.request
prom, tmp, knee = sys.argv[1], sys.argv[2], sys.argv[3]
inst = {"slow": "127.0.0.1:" + sys.argv[4], "fast": "127.0.0.1:" + sys.argv[5]}
runs = {r: json.load(open("%s/%s.json" % (tmp, r))) for r in inst}

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

outcomes = list(runs["slow"]["outcomes"])
want = {o: float(sum(runs[r]["outcomes"][o] for r in runs)) for o in outcomes}
# Poll (bounded) until Prometheus has scraped both instances' final values.
deadline = time.monotonic() + 90
while True:
    got = by('sum by (outcome) (knee_requests_total{job="knee_run"})', "outcome")
    fin = by('knee_run_finished{job="knee_run"}', "instance")
    if got == want and sorted(fin.values()) == [1.0, 1.0]:
        break
    if time.monotonic() > deadline:
        fail("Prometheus never reached the runs' final counts: sum by (outcome) %s, JSON %s, finished %s"
             % (got, want, fin))
    time.sleep(0.5)
print("ok: sum by (outcome) (knee_requests_total) = the two runs' JSON outcomes exactly: %s"
      % {o: int(v) for o, v in want.items() if v})

# Per instance: every counter and histogram count against its own JSON (warm-up left out).
checks = [("knee_planned_requests_total", lambda a: a["accounting"]["planned"]),
          ("knee_sent_requests_total", lambda a: a["accounting"]["sent"]),
          ("knee_dropped_requests_total", lambda a: a["accounting"]["dropped"]),
          ("knee_latency_seconds_count", lambda a: a["latency"]["count"]),
          ("knee_service_seconds_count", lambda a: a["service"]["count"]),
          ("knee_lag_seconds_count", lambda a: a["lag"]["count"]),
          ("knee_received_bytes_total", lambda a: a["bytes_in"]),
          ("knee_connections_opened_total", lambda a: a["connections"]["opened"])]
for metric, field in checks:
    got = by('sum by (instance) (%s{job="knee_run"})' % metric, "instance")
    for r, i in inst.items():
        if got.get(i) != float(field(runs[r]["all"])):
            fail("%s{instance=%s} = %s, JSON %s" % (metric, i, got.get(i), field(runs[r]["all"])))
print("ok: per instance, planned/sent/dropped, latency/service/lag counts, bytes and connections = its JSON")

# knee_responses_total{target,code}: each instance's codes = its JSON's status_codes, exactly.
for r, i in inst.items():
    got = by('sum by (code) (knee_responses_total{job="knee_run",instance="%s"})' % i, "code")
    want_codes = {k: float(v) for k, v in runs[r]["all"]["status_codes"].items()}
    if got != want_codes or not want_codes.get("200"):
        fail("knee_responses_total{instance=%s} by code = %s, JSON status_codes %s" % (i, got, want_codes))
print("ok: per instance, knee_responses_total by code = its JSON's status_codes")

# The merged buckets: Prometheus's sum by (le) = the two instances' own final expositions added.
def buckets_of(path):
    b = {}
    for line in open(path):
        if line.startswith("knee_latency_seconds_bucket{"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            b[le] = b.get(le, 0) + int(line.rsplit(" ", 1)[1])
    return b
own = {}
for r in inst:
    for le, n in buckets_of("%s/%s.prom" % (tmp, r)).items():
        own[le] = own.get(le, 0) + n
merged = by('sum by (le) (knee_latency_seconds_bucket{job="knee_run"})', "le")
if {le: int(v) for le, v in merged.items()} != own:
    fail("sum by (le) in Prometheus %s != the instances' expositions added %s" % (merged, own))
q_prom = float(query('histogram_quantile(0.99, sum by (le) (knee_latency_seconds_bucket{job="knee_run"}))')[0]["value"][1])

# knee's estimate from the same buckets: knee stats over one row per request at its bucket's
# bound (le is inclusive, so the bucket counts are exactly these), with the same bounds.
finite = sorted((float(le), le) for le in own if le != "+Inf")
ms = ["%r" % round(v * 1000, 9) for v, _ in finite]
rows, prev = [], 0
for (v, le), m in zip(finite, ms):
    rows += [m] * (own[le] - prev)
    prev = own[le]
rows += ["%r" % (2 * finite[-1][0] * 1000)] * (own["+Inf"] - prev)
with open(tmp + "/buckets.csv", "w") as f:
    f.write("latency_ms\n" + "\n".join(rows) + "\n")
out = subprocess.run([knee, "stats", tmp + "/buckets.csv", "--buckets", ",".join(ms), "--json"],
                     capture_output=True, text=True, check=True)
q_knee = json.loads(out.stdout)["prometheus"]["p99"]["estimate"] / 1000
if abs(q_prom - q_knee) > 1e-9 * q_knee:
    fail("histogram_quantile(0.99) in Prometheus %.9f s != knee's estimate from the same buckets %.9f s"
         % (q_prom, q_knee))
print("ok: histogram_quantile(0.99, sum by (le) (...)) = %.3f ms = knee's estimate from the same merged buckets"
      % (q_prom * 1000))

# The lesson: the average of the instances' p99s is another number.
per = by('histogram_quantile(0.99, sum by (instance, le) (knee_latency_seconds_bucket{job="knee_run"}))', "instance")
q_avg = float(query('avg(histogram_quantile(0.99, sum by (instance, le) (knee_latency_seconds_bucket{job="knee_run"})))')[0]["value"][1])
if os.environ.get("KNEE_TIER", "timing") == "timing" and abs(q_avg - q_prom) <= 0.05 * q_prom:
    fail("the averaged p99 %.3f ms is within 5%% of the merged p99 %.3f ms: the runs were too alike to show it"
         % (q_avg * 1000, q_prom * 1000))
true = json.loads(subprocess.run([knee, "stats", tmp + "/slow.bin", tmp + "/fast.bin", "--json"],
                                 capture_output=True, text=True, check=True).stdout)
print("ok: the lesson: p99 slow %.3f ms, fast %.3f ms; their average %.3f ms vs merged %.3f ms "
      "(the values' own p99, knee stats over both logs: %.3f ms; JSON p99s %.3f and %.3f ms)"
      % (per[inst["slow"]] * 1000, per[inst["fast"]] * 1000, q_avg * 1000, q_prom * 1000,
         true["all"]["p99"], runs["slow"]["all"]["latency"]["p99"], runs["fast"]["all"]["latency"]["p99"]))

# The server's view: every request the runs sent (warm-up included) was answered ok by knee
# serve, and its server-time histogram counts each of them.
ok_runs = sum(runs[r]["outcomes"]["ok"] + runs[r]["all"]["warmup"]["outcomes"]["ok"] for r in runs)
deadline = time.monotonic() + 30
while True:
    ok_srv = sum(by("knee_serve_ok_requests_total", "server").values())
    t_srv = sum(by('knee_serve_time_seconds_count{outcome="ok"}', "server").values())
    if ok_srv == ok_runs and t_srv == ok_runs:
        break
    if time.monotonic() > deadline:
        fail("knee serve: ok %s, server-time count %s, the runs' ok (warm-up included) %d" % (ok_srv, t_srv, ok_runs))
    time.sleep(0.5)
print("ok: knee serve's ok requests and server-time count = the runs' ok requests, warm-up included (%d)" % ok_runs)

# rate() in the dashboard needs two samples of a series in its window, for both jobs: the
# server's scrapes began with the runs' but a loaded machine can miss some (CI once queried
# knee serve's rate() with one sample in the window and got no data).
deadline = time.monotonic() + 60
while True:
    c = [query('min(count_over_time(%s[1m]))' % s)
         for s in ('knee_planned_requests_total{job="knee_run"}', 'knee_serve_ok_requests_total{job="knee_serve"}')]
    if all(r and float(r[0]["value"][1]) >= 2 for r in c):
        break
    if time.monotonic() > deadline:
        fail("fewer than two samples per series after 60 s (knee_run, knee_serve): %s" % c)
    time.sleep(0.5)
PY

python3 "$KNEE_SRC/tests/e2e/dashboard_queries.py" "$KNEE_SRC/deploy/grafana/knee.json" --query "$PROM" --all || exit 1

# SIGTERM ends each linger at once; the runs exit with their codes (0, or 99 for a threshold).
for r in slow fast; do
    pid_var="${r}_PID"
    kill -TERM "${!pid_var}"
    set +e
    wait "${!pid_var}"
    rc=$?
    set -e
    [[ $rc -eq 0 || $rc -eq 99 ]] || fail "$r exited $rc after SIGTERM ended its linger"
done
echo "ok: SIGTERM ends --metrics-linger; the runs exit with their own codes"
