#!/usr/bin/env bash
# What live metrics cost knee run: a 50,000/s open loop against nginx (Debian, one worker, a
# tiny static response) without and with --metrics-listen scraped every second, in
# interleaved pairs (off, on, off, on, ...) so drift on a shared machine hits both alike.
# nginx and the scraper (a curl loop, one GET /metrics a second, as Prometheus would send)
# are pinned to CPU 0, the generator (one thread) to CPU 1. Per run: the generator's lag p99
# and p99.9, the share sent on time, and its CPU time per request (user + system from
# /usr/bin/time over requests sent, warm-up included); with metrics, the scrapes answered.
#
#   bench/metrics_overhead.sh                    REPS=5 DURATION=10 RATE=50000
#   REPS=2 DURATION=3 bench/metrics_overhead.sh  a smoke run
#
# Environment: KNEE (default build/knee), REPS, DURATION (s), RATE (/s), SERVER_CPU (0),
# GEN_CPU (1). Needs nginx, curl, taskset, /usr/bin/time, python3.
set -euo pipefail
source "$(dirname "$0")/common.bash" # KNEE, SERVER_CPU, GEN_CPU; the repository root
REPS=${REPS:-5}
DURATION=${DURATION:-10}
RATE=${RATE:-50000}
bench_need nginx curl taskset python3 /usr/bin/time
SCRAPER_PID=
bench_exit_hook() { [[ -z $SCRAPER_PID ]] || { kill "$SCRAPER_PID" && wait "$SCRAPER_PID"; } 2>/dev/null || true; }
bench_tmp knee-bench-metrics
MPORT=$(free_port)
bench_nginx "$SERVER_CPU" # PORT, URL
echo "# knee run -t 1 -R $RATE -d ${DURATION}s, without and with --metrics-listen scraped every 1 s;"
echo "# nginx $(nginx_version) and the scraper on CPU $SERVER_CPU, generator on CPU $GEN_CPU," \
    "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# scrape_loop: GET /metrics once a second (whatever answers), counting 200s, until killed.
scrape_loop() {
    local n=0
    while :; do
        if curl -sf -o "$TMP/last.prom" "http://127.0.0.1:$MPORT/metrics" 2>/dev/null; then
            n=$((n + 1))
            echo "$n" >"$TMP/scrapes"
        fi
        sleep 1
    done
}

# one RUN_ID on|off
one() {
    local i=$1 mode=$2 extra=()
    if [[ $mode == on ]]; then
        extra=(--metrics-listen "127.0.0.1:$MPORT")
        echo 0 >"$TMP/scrapes"
        taskset -c "$SERVER_CPU" bash -c "$(declare -f scrape_loop); TMP=$TMP MPORT=$MPORT scrape_loop" &
        SCRAPER_PID=$!
    fi
    /usr/bin/time -f '%U %S' -o "$TMP/$mode$i.time" taskset -c "$GEN_CPU" \
        "$KNEE" run -t 1 -R "$RATE" -d "${DURATION}s" "${extra[@]}" --json "$TMP/$mode$i.json" "$URL" \
        >/dev/null 2>"$TMP/$mode$i.err" || true
    local scrapes=-
    if [[ $mode == on ]]; then
        kill "$SCRAPER_PID" 2>/dev/null && wait "$SCRAPER_PID" 2>/dev/null || true
        SCRAPER_PID=
        scrapes=$(cat "$TMP/scrapes")
        grep -q '^knee_planned_requests_total{' "$TMP/last.prom" 2>/dev/null || scrapes="$scrapes(no-data)"
    fi
    python3 - "$TMP/$mode$i" "$i" "$mode" "$scrapes" <<'PY' | tee -a "$TMP/rows"
import json, sys
p, i, mode, scrapes = sys.argv[1:5]
d = json.load(open(p + ".json"))
a = d["all"]
sent = a["accounting"]["sent"] + a["warmup"]["sent"]
cpu = sum(map(float, open(p + ".time").read().split()[-2:]))
print("%-4s %-8s %10d %10.4f %12.3f %12.3f %12.3f %8s" % (i, "metrics" if mode == "on" else "none", sent,
      d["sent_on_schedule"], a["lag"]["p99"], a["lag"]["p99.9"], cpu / sent * 1e6, scrapes))
PY
}

echo
printf '%-4s %-8s %10s %10s %12s %12s %12s %8s\n' pair mode sent on_sched lag_p99_ms lag_p999_ms cpu_us_req scrapes
: >"$TMP/rows"
for i in $(seq "$REPS"); do
    one "$i" off
    one "$i" on
done
python3 - "$TMP/rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for mode in ("none", "metrics"):
    r = [x for x in rows if x[1] == mode]
    med = lambda j: statistics.median(float(x[j]) for x in r)
    print("median %-8s %10.0f %10.4f %12.3f %12.3f %12.3f" % (mode, med(2), med(3), med(4), med(5), med(6)))
PY
echo
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
