#!/usr/bin/env bash
# knee stats on what knee run wrote reproduces knee run's own summary: a real run against
# knee serve (two targets, a warm-up) with --out as CSV and as the binary log and --json.
#  - the warm-up rows are left out and counted (the CSV's warmup column, the log's flag);
#  - "as_knee_run" (knee's HdrHistogram over the same integer nanoseconds) equals the run's
#    latency summary key for key, per target and for all;
#  - the exact numbers lie within HdrHistogram's bound of them: p50..max at most 1/1024 above,
#    min at most 1/1024 below (the run reports a bucket's lowest value for the minimum);
#  - rows come in completion order (documented): shuffled rows give the same report, and
#    standard input ("-") gives the same numbers, also with --approx.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s --preset quiet --duration 120s
PORT=$PORT_s

for ext in csv bin; do
    "$KNEE" run --target "api=http://127.0.0.1:$PORT/product?id=1@150" --target "web=http://127.0.0.1:$PORT/product?id=2@100" \
        -d 3s --warmup 1s --threads 2 --out "$TMP/r.$ext" --json "$TMP/r.$ext.json" >/dev/null ||
        fail "knee run ($ext) exited $?"
    "$KNEE" stats "$TMP/r.$ext" --json >"$TMP/s.$ext.json" || fail "knee stats r.$ext exited $?"
    "$KNEE" stats - --json <"$TMP/r.$ext" >"$TMP/stdin.$ext.json" || fail "knee stats - ($ext) exited $?"
    "$KNEE" stats - --json --approx <"$TMP/r.$ext" >"$TMP/approx.$ext.json" || fail "knee stats - --approx ($ext) exited $?"
    "$KNEE" stats "$TMP/r.$ext" --json --keep-warmup >"$TMP/keep.$ext.json" || fail "--keep-warmup ($ext) exited $?"
    "$KNEE" stats "$TMP/r.$ext" >"$TMP/s.$ext.txt" || fail "knee stats text ($ext) exited $?"
    grep -q '^as knee run summarises them' "$TMP/s.$ext.txt" || fail "$ext: the text lacks knee run's numbers"
done

# the CSV's rows shuffled (header kept): the same report
{ head -n 1 "$TMP/r.csv"; tail -n +2 "$TMP/r.csv" | python3 -c 'import random,sys; l=sys.stdin.readlines(); random.Random(7).shuffle(l); sys.stdout.writelines(l)'; } >"$TMP/shuffled.csv"
"$KNEE" stats "$TMP/shuffled.csv" --json >"$TMP/shuffled.json"

python3 - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
def load(name):
    return json.load(open(f"{d}/{name}"))
def need(cond, msg):
    if not cond:
        raise SystemExit("FAIL: " + msg)
KEYS = ["count", "mean", "stdev", "min", "max", "p50", "p90", "p95", "p99", "p99.9"]
for ext in ("csv", "bin"):
    run, st = load(f"r.{ext}.json"), load(f"s.{ext}.json")
    warm = sum(t["warmup"]["planned"] for t in run["targets"])
    measured = sum(t["accounting"]["planned"] for t in run["targets"])
    need(warm > 0, f"{ext}: the run had no warm-up")
    need(st["rows"]["read"] == warm + measured, f"{ext}: rows {st['rows']['read']} != {warm} + {measured}")
    need(st["rows"]["filtered_warmup"] == warm, f"{ext}: warm-up rows left out {st['rows']['filtered_warmup']} != {warm}")
    need(st["as_knee_run"] is not None, f"{ext}: no as_knee_run")
    pairs = [(t["name"], t["latency"], st["groups"][t["name"]], st["as_knee_run"]["groups"][t["name"]]) for t in run["targets"]]
    pairs.append(("all", run["all"]["latency"], st["all"], st["as_knee_run"]["all"]))
    for name, r, exact, hdr in pairs:
        for k in KEYS:
            need(hdr[k] == r[k], f"{ext} {name} {k}: knee stats as_knee_run {hdr[k]} != knee run {r[k]}")
        need(exact["count"] == r["count"], f"{ext} {name}: count {exact['count']} != {r['count']}")
        for k in ("p50", "p90", "p95", "p99", "p99.9", "max"):
            need(exact[k] <= r[k] <= exact[k] * (1 + 1 / 1024) + 1e-9,
                 f"{ext} {name} {k}: run {r[k]} not within [exact {exact[k]}, +1/1024]")
        need(r["min"] <= exact["min"] and r["min"] >= exact["min"] * (1 - 1 / 1024) - 1e-9,
             f"{ext} {name} min: run {r['min']} vs exact {exact['min']}")
        need(abs(exact["mean"] - r["mean"]) <= exact["mean"] / 1024 + 1e-9, f"{ext} {name} mean {exact['mean']} vs {r['mean']}")
    # standard input: the same numbers, named "-"
    si = load(f"stdin.{ext}.json")
    need(si["files"] == ["-"], f"{ext}: stdin files {si['files']}")
    for k in ("groups", "all", "as_knee_run", "small_windows", "rows"):
        need(si.get(k) == st.get(k), f"{ext}: stdin differs in {k}")
    ap = load(f"approx.{ext}.json")
    need(ap["all"]["count"] == st["all"]["count"], f"{ext}: --approx count {ap['all']['count']}")
    kp = load(f"keep.{ext}.json")
    need(kp["rows"]["filtered_warmup"] == 0 and kp["rows"]["kept"] == warm + measured, f"{ext}: --keep-warmup {kp['rows']}")
    print(f"{ext}: {st['all']['count']} requests, p99 exact {st['all']['p99']:.6f} ms, knee run {run['all']['latency']['p99']:.6f} ms, "
          f"{st['rows']['out_of_time_order']} rows out of time order")

a, b = load("s.csv.json"), load("shuffled.json")
for k in ("groups", "all", "as_knee_run", "small_window_p99", "small_windows", "averaged_p99", "window_p99", "confidence"):
    need(a.get(k) == b.get(k), f"shuffled rows give a different {k}")
need(b["rows"]["out_of_time_order"] > 0, "the shuffled file was in order?")
print("ok")
PY
