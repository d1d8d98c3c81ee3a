# The two test tiers for tests/e2e (sourced by run_common.bash, not a test itself): which part
# of a script this run is for, and the one policy for a timing measurement that knee itself
# calls not valid (docs/INTERNALS.md, "Tests: two tiers").
#
# A script's "# tier:" line (CMakeLists.txt reads it) puts it in the exact tier, the timing tier
# or both; a script in both runs twice, with KNEE_TIER=exact and KNEE_TIER=timing, and each run
# does its own part (in_tier). Run by hand (no KNEE_TIER), a script does both parts.
#
# The policy, for a timing check (a rate kept, a latency shape, a timeout on time) that fails on
# a measurement knee itself calls not valid (knee run's GENERATOR-LIMITED, a failed capacity
# probe, a step "not delivered", a BUSY repetition; knee lab's own spread of its runs): the
# machine, not the engine or the target, was measured. That measurement is repeated once; when
# knee again calls it not valid, the test exits 77, which ctest shows as skipped (the reason on
# stderr): never a pass, never a red. A timing check that fails on a measurement knee calls
# valid fails at once. Exact checks (accounting, exit codes, memory, formats) are never
# repeated and never skipped: they fail where they fail.

# in_tier TIER: true when this run of the script does TIER's part (exact or timing).
in_tier() { [[ -z ${KNEE_TIER:-} || $KNEE_TIER == "$1" ]]; }

# timing_skip REASON: the test is skipped (exit 77, ctest's SKIP_RETURN_CODE), REASON on stderr.
timing_skip() {
    echo "SKIP: $*" >&2
    exit 77
}

# timing_verdict ATTEMPT PROBLEM WHY: after measurement ATTEMPT (1 or 2) of a timing check.
# PROBLEM is what its timing checks found (empty: they passed), WHY is knee's own verdict that
# the machine was measured (empty: knee called the measurement valid). Returns 0 when the
# checks passed, 1 when the measurement is to be repeated (attempt 1, knee called it not
# valid); fails the test (PROBLEM on a valid measurement) or skips it (a second measurement
# knee calls not valid) otherwise. The loop it ends:
#     for attempt in 1 2; do
#         measure; timing_verdict $attempt "$(checks)" "$(run_limited_why out.json)" && break
#     done
timing_verdict() {
    local attempt=$1 problem=$2 why=$3
    [[ -z $problem ]] && return 0
    [[ -n $why ]] || fail "$problem (attempt $attempt; knee called the measurement valid)"
    if [[ $attempt == 1 ]]; then
        echo "# attempt 1: $problem; knee says the machine was measured ($why): once more"
        return 1
    fi
    timing_skip "$problem; knee said twice that the machine, not the target, was measured ($why)"
}

# run_limited_why JSON...: prints knee run's own reasons for every one of these runs it called
# GENERATOR-LIMITED (its sends or timers ran late: the machine shaped the run's timing), nothing
# when it called them all valid (or a file is not there to judge).
run_limited_why() {
    python3 - "$@" <<'PY'
import json, sys
why = []
for p in sys.argv[1:]:
    try:
        d = json.load(open(p))
    except (OSError, ValueError):
        continue  # no run to judge: the test's own checks say so
    if d["generator_limited"]:
        why.append("%s: %s" % (p.rsplit("/", 1)[-1], d["generator"]["reasons"]))
print("; ".join(why))
PY
}

# capacity_machine_why JSON: prints why knee capacity itself found that the machine, not the
# candidate, may have been measured: a probe failed (the check before every repetition that the
# generator delivers 115% of the top rate: the repetition is excluded), a step was "not
# delivered" (generator-limited: lag above --lag-limit, or fewer sends than planned), or the
# environment record calls a repetition BUSY (knee capacity's "rerun on a quiet machine");
# nothing when it found none of these (or the file is not there to judge).
capacity_machine_why() {
    python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(0)  # no measurement to judge: the test's own checks say so
why = ["probe of rep %d failed: %s" % (p["rep"], p["reason"]) for p in d["probes"] if not p["ok"]]
why += ["%g/s rep %d: %s" % (g["rate"], i + 1, r["reason"]) for g in d["ladder"] for i, r in enumerate(g["reps"])
        if d["repetitions"][i]["valid"] and "not delivered" in r["reason"]]
busy = [str(i + 1) for i, e in enumerate(d["environment"]) if e.get("busy")]
if busy:
    why.append("the machine was busy (others took most of the CPUs) during repetition %s" % ", ".join(busy))
print("; ".join(why))
PY
}
