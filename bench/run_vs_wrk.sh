#!/usr/bin/env bash
# knee run vs wrk (knee with each I/O engine: --io epoll and --io uring), and knee's open-loop timing, against nginx (Debian, one worker, a tiny
# static response). nginx is pinned to CPU 0 and the generator to CPU 1 (taskset), one
# generator thread each, the same connections; A/B pairs are interleaved (wrk, knee, wrk,
# knee, ...) so drift on a shared machine hits both alike. CPU time per request comes from
# /usr/bin/time (user + system of the generator process).
#
#   bench/run_vs_wrk.sh                 REPS=5 DURATION=10 CONNS=16 (closed loop) + open loop
#   REPS=2 DURATION=3 bench/run_vs_wrk.sh   a smoke run
#
# Environment: KNEE (default build/knee), REPS, DURATION (s), CONNS, SERVER_CPU (0), GEN_CPU (1),
# OPEN_RATE (50000), OPEN_P50_RATE (10000), OPEN (1; 0 skips the open loop). Needs nginx, wrk, taskset, /usr/bin/time, python3.
set -euo pipefail
source "$(dirname "$0")/common.bash" # KNEE, SERVER_CPU, GEN_CPU; the repository root
REPS=${REPS:-5}
DURATION=${DURATION:-10}
CONNS=${CONNS:-16}
OPEN_RATE=${OPEN_RATE:-50000}
OPEN_P50_RATE=${OPEN_P50_RATE:-10000}
OPEN=${OPEN:-1} # 0: the closed loop only
bench_need nginx wrk taskset python3 /usr/bin/time
bench_tmp knee-bench
bench_nginx "$SERVER_CPU" # PORT, URL
echo "# nginx $(nginx_version) on CPU $SERVER_CPU, generator on CPU $GEN_CPU, $(nproc) CPUs," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "## closed loop, max throughput: $CONNS connections, 1 thread, ${DURATION}s, $REPS interleaved triples"
echo "## (wrk, knee --io epoll, knee --io uring; CPU = user + system per request, us)"
printf '%-4s %10s %10s %10s %8s %8s %9s %9s %9s\n' pair wrk_rps epoll_rps uring_rps ep/wrk ur/wrk wrk_cpu epoll_cpu uring_cpu
: >"$TMP/pairs"
for i in $(seq "$REPS"); do
    run_timed "$TMP/w$i" wrk -t1 -c"$CONNS" -d"${DURATION}s" "$URL"
    for io in epoll uring; do
        run_timed "$TMP/k$io$i" "$KNEE" run -t 1 -c "$CONNS" -d "${DURATION}s" --io "$io" --json "$TMP/k$io$i.json" "$URL"
    done
    python3 - "$TMP/w$i" "$TMP/kepoll$i" "$TMP/kuring$i" "$i" >>"$TMP/pairs" <<'PY'
import json, re, sys
w, ke, ku, i = sys.argv[1:5]
wout = open(w + ".out").read()
wreq = int(re.search(r"(\d+) requests in", wout).group(1))
wrps = float(re.search(r"Requests/sec:\s+([\d.]+)", wout).group(1))
wcpu = sum(map(float, open(w + ".time").read().split()[-2:]))
row = [i, wrps]
cpus = [wcpu / wreq * 1e6]
for k in (ke, ku):
    d = json.load(open(k + ".json"))
    assert d["config"]["io_engine"] == ("uring" if k == ku else "epoll"), k
    kreq = d["all"]["accounting"]["sent"]
    row.append(d["rates"]["completed"])
    cpus.append(sum(map(float, open(k + ".time").read().split()[-2:])) / kreq * 1e6)
row += [row[2] / wrps, row[3] / wrps] + cpus
print(*row)
PY
    tail -1 "$TMP/pairs" | awk '{printf "%-4s %10.0f %10.0f %10.0f %8.3f %8.3f %9.2f %9.2f %9.2f\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}'
done
python3 - "$TMP/pairs" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
col = lambda j: [r[j] for r in rows]
print("median %9.0f %10.0f %10.0f %8.3f %8.3f %9.2f %9.2f %9.2f" % tuple(statistics.median(col(j)) for j in range(1, 9)))
print("throughput ratio per triple: epoll/wrk %.3f..%.3f, uring/wrk %.3f..%.3f, uring/epoll %.3f..%.3f" % (
    min(col(4)), max(col(4)), min(col(5)), max(col(5)),
    min(r[3] / r[2] for r in rows), max(r[3] / r[2] for r in rows)))
print("CPU per request: epoll/wrk %.3f, uring/wrk %.3f (medians)" % (
    statistics.median(col(7)) / statistics.median(col(6)), statistics.median(col(8)) / statistics.median(col(6))))
PY

# system calls per request of each engine (perf tracepoints; skipped without perf or permission)
if command -v perf >/dev/null && perf stat -e 'syscalls:sys_enter_read' true >/dev/null 2>&1; then
    echo
    echo "## system calls per request (perf stat tracepoints, ${DURATION}s each)"
    EV=syscalls:sys_enter_io_uring_enter,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_sendto
    EV=$EV,syscalls:sys_enter_recvfrom,syscalls:sys_enter_epoll_pwait2,syscalls:sys_enter_epoll_ctl
    for io in epoll uring; do
        taskset -c "$GEN_CPU" perf stat -x, -e "$EV" -o "$TMP/perf.$io" \
            "$KNEE" run -t 1 -c "$CONNS" -d "${DURATION}s" --io "$io" --json "$TMP/s$io.json" "$URL" >/dev/null 2>&1
        python3 - "$TMP/perf.$io" "$TMP/s$io.json" "$io" <<'PY'
import json, sys
sent = json.load(open(sys.argv[2]))["all"]["accounting"]["sent"]
calls = {}
for line in open(sys.argv[1]):
    f = line.split(",")
    if len(f) > 3 and f[0].strip().isdigit() and int(f[0]):
        calls[f[2].replace("syscalls:sys_enter_", "")] = int(f[0]) / sent
print("%-6s %.3f per request: %s" % (sys.argv[3], sum(calls.values()),
      ", ".join("%s %.3f" % kv for kv in sorted(calls.items(), key=lambda kv: -kv[1]))))
PY
    done
else
    echo
    echo "# system calls per request: perf (linux-perf) with tracepoint access is missing, skipped"
fi

if [[ $OPEN == 1 ]]; then
echo
echo "## open loop: hold ${OPEN_RATE}/s for ${DURATION}s from one core ($REPS runs)"
printf '%-4s %12s %10s %12s %12s %10s\n' run planned sent_ratio lag_p99_ms lag_p999_ms limited
for i in $(seq "$REPS"); do
    taskset -c "$GEN_CPU" "$KNEE" run -t 1 -R "$OPEN_RATE" -d "${DURATION}s" --json "$TMP/o$i.json" "$URL" \
        >/dev/null 2>&1 || true
    python3 - "$TMP/o$i.json" "$i" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a = d["all"]
print("%-4s %12d %10.4f %12.3f %12.3f %10s" % (sys.argv[2], a["accounting"]["planned"], d["sent_on_schedule"],
      a["lag"]["p99"], a["lag"]["p99.9"], d["generator_limited"]))
PY
done

echo
echo "## open loop at ${OPEN_P50_RATE}/s: latency p50 (from the plan) vs service p50 (from the send)"
printf '%-4s %12s %12s %12s %12s\n' run latency_p50 service_p50 diff_ms lag_p50_ms
for i in $(seq "$REPS"); do
    taskset -c "$GEN_CPU" "$KNEE" run -t 1 -R "$OPEN_P50_RATE" -d "${DURATION}s" --json "$TMP/p$i.json" "$URL" \
        >/dev/null 2>&1 || true
    python3 - "$TMP/p$i.json" "$i" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["all"]
print("%-4s %12.4f %12.4f %12.4f %12.4f" % (sys.argv[2], a["latency"]["p50"], a["service"]["p50"],
      a["latency"]["p50"] - a["service"]["p50"], a["lag"]["p50"]))
PY
done
fi
echo
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
