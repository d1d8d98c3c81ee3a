#!/usr/bin/env bash
# knee under a real Slurm: a one-node cluster on loopback (munged, slurmctld, slurmd with a
# generated configuration, all in a temporary directory), `srun -n 4 knee run --shard auto`
# against knee serve, knee merge, compared with one process running the same plan three
# times: the merged counts equal the plan, and p50/p99 lie within the run-to-run spread of
# the single runs. Then deploy/slurm/knee-shards.sbatch runs as a batch job (sbatch --wait)
# and its collection step merges. Every daemon started is stopped by its pid; bounded time.
# tier: exact timing
# The exact tier: one round of shards (a 1.5 s plan) merged to the plan, and the batch job. The
# timing tier: the one-process runs and the rounds of shards whose latencies are compared.
source "$KNEE_SRC/tests/e2e/run_common.bash"
export PATH=$PATH:/usr/sbin:/sbin
for tool in munged slurmctld slurmd srun sbatch sinfo; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/deps.sh --test)"; exit 77; }
done
[[ $(id -u) -eq 0 ]] || { echo "SKIP: a one-node Slurm cluster with SlurmUser=root needs root"; exit 77; }

S="$TMP/slurm"
mkdir -p "$S/munge" "$S/state" "$S/spool"
chmod 700 "$S/munge"
stop_daemons() {
    local f pids=()
    for f in "$S/ctld.pid" "$S/d.pid" "$S/munge/pid"; do
        [[ -s $f ]] && pids+=("$(cat "$f")")
    done
    local p
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
    done
}
trap 'stop_daemons; cleanup' EXIT

dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$S/munge/munge.key"
munged --force --key-file="$S/munge/munge.key" --socket="$S/munge/sock" --pid-file="$S/munge/pid" \
    --log-file="$S/munge/log" --seed-file="$S/munge/seed" || fail "munged did not start"

host=$(hostname -s)
cat >"$S/slurm.conf" <<EOF
ClusterName=knee-test
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/ctld.pid
SlurmdPidFile=$S/d.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MessageTimeout=10
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=knee Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
export SLURM_CONF="$S/slurm.conf"
slurmctld -f "$S/slurm.conf" -L "$S/ctld.log" || fail "slurmctld did not start"
slurmd -f "$S/slurm.conf" -L "$S/d.log" || fail "slurmd did not start"
for i in $(seq 150); do
    timeout 5 sinfo -h -o %t 2>/dev/null | grep -q idle && break
    sleep 0.2
done
timeout 5 sinfo -h -o %t 2>/dev/null | grep -q idle || { tail "$S/ctld.log" "$S/d.log" >&2; fail "the node never became idle"; }
echo "ok: one-node Slurm cluster up ($(timeout 5 sinfo -h -o '%P %D %t'))"

# the server: 5 ms of work, 20 ms on a 10% miss: p50 ~5 ms, p99 ~20 ms, far above the noise
SERVE_WRAP=("${NICE[@]}")
start_knee_serve s --preset quiet --pool 0 --hit-ms 5 --miss-ms 20 --miss-rate 10%
URL="http://$ADDR_s/"
PLAN=(-R 600 -d 3s --warmup 1s)
TOTAL=1800 PLANNED=1200
if ! in_tier timing; then
    PLAN=(-R 600 -d 1s --warmup 500ms)
    TOTAL=600 PLANNED=300
fi

# shards_round: four shards under srun, one start instant from a file the first task writes,
# merged into $TMP/merged.json
shards_round() {
    rm -f "$TMP"/start "$TMP"/s-[0-9].*
    timeout 120 srun -n 4 --overcommit --kill-on-bad-exit=0 bash -c '
        n=()
        nice -n -10 true 2>/dev/null && n=(nice -n -10)
        exec "${n[@]}" "$0" run "${@:3}" -t 1 --shard auto --start-at "+2s@$1/start" --json "$1/s-$SLURM_PROCID.json" \
            --out "$1/s-$SLURM_PROCID.bin" --hlog "$1/s-$SLURM_PROCID.hlog" "$2" >"$1/s-$SLURM_PROCID.txt" 2>&1
    ' "$KNEE" "$TMP" "$URL" "${PLAN[@]}" || { cat "$TMP"/s-*.txt >&2; fail "srun -n 4 knee run --shard auto"; }
    grep -q 'shard 3/4 (SLURM_PROCID/SLURM_NTASKS)' "$TMP/s-3.txt" || { cat "$TMP/s-3.txt" >&2; fail "the shard from Slurm"; }
    run_knee merge "$TMP"/s-[0-9].json "$TMP"/s-[0-9].bin "$TMP"/s-[0-9].hlog --json "$TMP/merged.json" \
        -o "$TMP/merged.bin" >"$TMP/merge.txt" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/merge.txt" >&2; fail "knee merge exited $RC"; }
    cat "$TMP/merge.txt"
}

# merged_accounting: the merged counts equal the plan, every shard in and none failed
merged_accounting() {
    python3 - "$TMP/merged.json" "$TOTAL" "$PLANNED" <<'PY' || fail "merged accounting"
import json, sys
m = json.load(open(sys.argv[1]))
total = lambda d: d["all"]["accounting"]["planned"] + d["all"]["warmup"]["planned"]
assert total(m) == int(sys.argv[2]), total(m)
assert m["all"]["accounting"]["planned"] == int(sys.argv[3]), m["all"]["accounting"]["planned"]
assert m["accounting_ok"] and m["shard"]["complete"] and m["shard"]["count"] == 4
assert all(not s["failed"] for s in m["shard"]["shards"])
PY
}

if ! in_tier timing; then
    cd "$TMP"
    shards_round
    merged_accounting
    echo "ok: srun -n 4 shards merged = the plan"
fi

if in_tier timing; then
# one process, three times: the run-to-run spread
for k in 1 2 3; do
    timeout 60 "${NICE[@]}" "$KNEE" run "${PLAN[@]}" -t 1 --json "$TMP/one-$k.json" "$URL" >"$TMP/one-$k.txt" 2>&1 ||
        fail "one-process run $k"
done

# Four shards under srun, merged. The merge names the shards whose own lag shaped their numbers
# (GENERATOR-LIMITED): then they measured this loaded machine, not the server, and the
# comparison below means nothing. Likewise a round in which the server's own time (its
# Server-Timing "work", merged from the shards' histograms) lies outside the band of the
# one-process runs' (the same rule as below): the machine slowed the server, not the merge (a
# shared 2-core machine did, once: work p99 43 ms against 20 ms). Such a round is run once more,
# and the test skipped when the second one is disturbed too (timing_verdict, timing.bash): a CI
# machine at load average ~10 disturbed every round (every shard GENERATOR-LIMITED, lag p99
# 19-38 ms, timer lateness p99 20-51 ms), an honest verdict on that machine. The server, the
# single runs and the shards run at nice -10 where allowed (NICE, run_common.bash; inside the
# srun task as well, which slurmd starts).
cd "$TMP"
for round in 1 2; do
    shards_round
    merged_accounting
    # prints why the round is not comparable and exits 3, or exits 0
    rc=0
    why=$(python3 - "$TMP/merged.json" "$TMP"/one-[123].json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
if m["generator"]["limited"]:
    print("generator-limited shards (their lag shaped their numbers)")
    sys.exit(3)
work = lambda d: d["targets"][0]["server_timing"]["work"]["p99"]
vals = [work(json.load(open(p))) for p in sys.argv[2:]]
lo, hi = min(vals), max(vals)
w = max(hi - lo, 0.10 * sum(vals) / len(vals), 1.0)
if not lo - w <= work(m) <= hi + w:
    print("the server's own work p99 %.3f ms, outside [%.3f, %.3f] of the one-process runs': "
          "the machine slowed the server" % (work(m), lo - w, hi + w))
    sys.exit(3)
PY
    ) || rc=$?
    [[ $rc == 0 || $rc == 3 ]] || fail "round $round: the comparability check failed (exit $rc)"
    problem=""
    [[ $rc == 3 ]] && problem="round $round not comparable"
    timing_verdict $round "$problem" "$why" && break
done

python3 - "$TMP/merged.json" "$TMP"/one-[123].json <<'PY' || fail "merged against one process"
import json, sys
m = json.load(open(sys.argv[1]))
ones = [json.load(open(p)) for p in sys.argv[2:]]
total = lambda d: d["all"]["accounting"]["planned"] + d["all"]["warmup"]["planned"]
assert all(total(o) == 1800 for o in ones), [total(o) for o in ones]
assert m["all"]["accounting"]["planned"] == ones[0]["all"]["accounting"]["planned"] == 1200
# the run-to-run spread of the single runs, and the merged value inside it (widened by the
# spread itself and a floor, since three runs give a narrow band by chance)
for p, floor_rel, floor_ms in (("p50", 0.05, 0.1), ("p99", 0.10, 1.0)):
    vals = [o["all"]["latency"][p] for o in ones]
    lo, hi = min(vals), max(vals)
    w = max(hi - lo, floor_rel * sum(vals) / len(vals), floor_ms)
    got = m["all"]["latency"][p]
    print("%s: one process %s, spread %.3f ms; 4 shards merged %.3f ms; band [%.3f, %.3f]"
          % (p, ["%.3f" % v for v in vals], hi - lo, got, lo - w, hi + w))
    assert lo - w <= got <= hi + w, (p, got, lo - w, hi + w)
PY
echo "ok: srun -n 4 shards merged = the plan, p50/p99 within the one-process spread"
fi
in_tier exact || exit 0

# the batch script for real clusters, as a batch job on this one
mkdir -p "$TMP/batch"
timeout 180 env KNEE="$KNEE" OUT="$TMP/batch" START_DELAY=3 sbatch --wait --ntasks=2 --cpus-per-task=1 --overcommit \
    --output="$TMP/batch/job.out" "$KNEE_SRC/deploy/slurm/knee-shards.sbatch" "$URL" -R 300 -d 2s >"$TMP/sbatch.out" 2>&1 ||
    { cat "$TMP/sbatch.out" "$TMP/batch/job.out" "$TMP"/batch/*.txt >&2 || true; fail "sbatch knee-shards.sbatch"; }
json_check "$TMP/batch/merged.json" \
    'd["shard"]["complete"] and d["shard"]["count"] == 2 and acc["planned"] == 600 and d["accounting_ok"]' \
    "the batch job's merged result"
grep -q 'plan check: the shards planned 600 requests, the whole plan has 600 \[equal\]' "$TMP/batch/job.out" ||
    { cat "$TMP/batch/job.out" >&2; fail "the batch job's merge output"; }
echo "ok: deploy/slurm/knee-shards.sbatch ran as a batch job and merged its 2 shards"
