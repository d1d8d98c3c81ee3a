#!/usr/bin/env bash
# knee run --stages: the dry run prints every stage with its planned count; a real run against
# knee serve plans exactly those counts per stage (JSON "stages", by planned time) and its text
# shows one row per stage; stageN. thresholds judge a stage (exit 99 when one fails); two shards
# plan their parts and knee merge adds the stages up to the whole plan; knee report marks the
# stages on its time charts; bad specs (a mix of rates and clients too) and a mix with
# --rate, --ramp, --duration or --requests exit 2 naming the reason. Timing part (apart): each
# stage's sends happen in its own window.
# tier: exact timing
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s -p null
U="http://127.0.0.1:$PORT_s/"
SPEC='40:1s,40..120:1s,0:0.5s,60:0.5s,30..0:1s'

# the dry run's planned count of each stage, one per line
dry_counts() {
    "$KNEE" run --dry-run "$@" | sed -n 's/^    stage \([0-9]*\) .* \([0-9,]*\) planned$/\2/p' | tr -d ,
}

if in_tier exact; then
    # planned per stage: the integrals (40, 80, 0, 30, 15), and in total
    mapfile -t C < <(dry_counts --stages "$SPEC" "$U")
    [[ "${C[*]}" == "40 80 0 30 15" ]] || fail "dry run stage counts: ${C[*]}"
    out=$("$KNEE" run --dry-run --stages "$SPEC" "$U")
    grep -q '^  165 requests planned over 4 s$' <<<"$out" || fail "total: $out"
    grep -q '^    stage 2  40.0 -> 120.0/s .* from 1 s  80 planned$' <<<"$out" || fail "stage 2 row: $out"
    mapfile -t P < <(dry_counts --arrivals poisson --stages "$SPEC" "$U")
    [[ ${#P[@]} -eq 5 ]] || fail "Poisson: ${P[*]}"

    # a real run plans exactly the dry run's counts, stage by stage; every stage's identities hold
    run_knee run --stages "$SPEC" --warmup 0.5s --threshold 'stage3.planned==0' --threshold 'stage2.completed_per_s>0' \
        --json "$TMP/r.json" "$U" >"$TMP/r.out" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/r.out"; fail "run exit $RC"; }
    json_check "$TMP/r.json" '[s["planned"] for s in d["stages"]] == [40, 80, 0, 30, 15]' "planned per stage"
    json_check "$TMP/r.json" 'sum(s["planned"] for s in d["stages"]) == acc["planned"] + tot["warmup"]["planned"] and tot["warmup"]["planned"] == 20' "stages add up to the run, warm-up included"
    json_check "$TMP/r.json" 'all(identity(s) for s in d["stages"])' "stage identities"
    json_check "$TMP/r.json" '[s["index"] for s in d["stages"]] == [1, 2, 3, 4, 5]' "indices"
    json_check "$TMP/r.json" '[(s["from"], s["to"], s["duration_s"]) for s in d["stages"]] == [(40, 40, 1), (40, 120, 1), (0, 0, 0.5), (60, 60, 0.5), (30, 0, 1)]' "the stages as planned"
    json_check "$TMP/r.json" 'd["stages"][3]["start_s"] == 2.5 and d["stages"][1]["rates"]["planned"] == 80' "windows and rates"
    json_check "$TMP/r.json" 'd["stages"][0]["latency"]["count"] == d["stages"][0]["outcomes"]["ok"]' "ok latency"
    json_check "$TMP/r.json" 'len(d["config"]["stages"]) == 5 and d["config"]["duration_s"] == 4' "config.stages"
    json_check "$TMP/r.json" 'all(t["pass"] for t in d["thresholds"])' "stage thresholds"
    grep -q '^stages (requests by planned time' "$TMP/r.out" || fail "no stage rows: $(cat "$TMP/r.out")"
    grep -qE '^  2 +40.0 -> 120.0/s +1s +80 ' "$TMP/r.out" || fail "stage 2's row: $(cat "$TMP/r.out")"
    awk '/^stages \(/ { on = 1 } on && /^$/ { on = 0 } on && length > 100 { bad = 1 } END { exit bad }' "$TMP/r.out" ||
        fail "a stage row over 100 columns: $(cat "$TMP/r.out")"
    "$KNEE" report "$TMP/r.json" -o "$TMP/r.html" >/dev/null 2>&1 || fail "knee report of a stages run"
    grep -qF '"stage_starts_s":[0,1,2,2.5,3]' "$TMP/r.html" || fail "the report's stage marks"
    run_knee run --stages '20:0.5s' --threshold 'stage1.planned>10' --threshold 'stage1.dropped>0' "$U" >"$TMP/t.out" 2>&1
    [[ $RC -eq 99 ]] || { cat "$TMP/t.out"; fail "a failed stage threshold: exit $RC"; }

    # two shards plan their parts; knee merge adds the stages up to the whole plan
    SH=()
    for i in 0 1; do
        "$KNEE" run --stages "$SPEC" --shard $i/2 --json "$TMP/s$i.json" "$U" >"$TMP/s$i.out" 2>&1 &
        SH+=($!)
        PIDS+=($!)
    done
    for p in "${SH[@]}"; do wait "$p" || fail "a shard failed: $(cat "$TMP"/s?.out)"; done
    mapfile -t H < <(dry_counts --stages "$SPEC" --shard 1/2 "$U")
    json_check "$TMP/s1.json" "[s['planned'] for s in d['stages']] == [${H[0]}, ${H[1]}, ${H[2]}, ${H[3]}, ${H[4]}]" "shard 1's part"
    run_knee merge "$TMP/s0.json" "$TMP/s1.json" --json "$TMP/m.json" >"$TMP/m.out" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/m.out"; fail "merge exit $RC"; }
    grep -q 'plan check: the shards planned 165 requests, the whole plan has 165 \[equal\]' "$TMP/m.out" ||
        fail "merge plan check: $(cat "$TMP/m.out")"
    json_check "$TMP/m.json" '[s["planned"] for s in d["stages"]] == [40, 80, 0, 30, 15]' "merged stages"
    json_check "$TMP/m.json" 'all(identity(s) for s in d["stages"])' "merged identities"
    json_check "$TMP/m.json" 'sum(s["latency"]["count"] for s in d["stages"]) == d["all"]["accounting"]["outcomes"]["ok"] + d["all"]["warmup"]["outcomes"]["ok"]' "merged latency"

    # bad input: exit 2, one line naming the stage or the flags
    bad() {
        local want=$1
        shift
        run_knee run --dry-run "$@" "$U" >/dev/null 2>"$TMP/bad.err"
        [[ $RC -eq 2 ]] || fail "exit $RC for $*"
        grep -qF -- "$want" "$TMP/bad.err" || fail "message for $*: $(cat "$TMP/bad.err")"
    }
    bad "knee run: --stages: stage 3 '1000:5x': '5x' is not a duration > 0 such as 30s or 2m" --stages '100:30s,100..1000:2m,1000:5x'
    bad "--stages: stage 1 'fast:1s': 'fast' is not a rate" --stages 'fast:1s'
    bad "--stages: stage 2 is empty" --stages '1:1s,'
    bad "--stages: every stage has rate 0" --stages '0:1s'
    bad "--stages: stage 2 '4c:1s': give all stages as rates or all as clients (Nc), not a mix" --stages '10:1s,4c:1s'
    bad "--stages and --rate: give one" --stages '10:1s' -R 10
    bad "--warmup must be shorter than the stages (4 s)" --stages "$SPEC" --warmup 4s
    bad "--stages and --ramp: give one" --stages '10:1s' --ramp 1:2
    bad "--stages and --duration: give one" --stages '10:1s' -d 5s
    bad "--stages and --requests cannot be combined" --stages '10:1s' -n 5
    bad "--threshold 'stage3.p99<1s': the run has 2 stages (--stages)" --stages '10:1s,5:1s' --threshold 'stage3.p99<1s'
fi

if in_tier timing; then
    # each stage's requests leave in its own window (a loaded machine may send a few late)
    run_knee run --stages '100:1s,100..300:1s,0:0.5s,200:1s' --json "$TMP/t.json" "$U" >"$TMP/t.out" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/t.out"; fail "timing run exit $RC"; }
    json_check "$TMP/t.json" 'all(s["events"]["sent_late"] <= 0.05 * s["planned"] + 2 for s in d["stages"])' "sends in their stage"
fi
