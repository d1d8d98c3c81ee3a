# Shared by tests/e2e/capacity_*.sh (sourced, not a test itself): run_common.bash (temp dir,
# children always killed, fail, run_knee), knee serve on a free port, and JSON checks of the
# knee-capacity/1 document.
source "$KNEE_SRC/tests/e2e/run_common.bash"

# start_serve NAME ARGS...: knee serve ARGS on 127.0.0.1:0 (behind the command in the array
# SERVE_WRAP, e.g. nice, when set); sets PORT_<NAME> and PID_<NAME>.
SERVE_WRAP=()
start_serve() {
    local name=$1
    shift
    "${SERVE_WRAP[@]}" "$KNEE" serve -l 127.0.0.1:0 "$@" >"$TMP/serve-$name.out" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    local i port=""
    for i in $(seq 100); do
        port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/serve-$name.out")
        [[ -n $port ]] && break
        sleep 0.1
    done
    [[ -n $port ]] || { cat "$TMP/serve-$name.out" >&2; fail "knee serve $* did not start"; }
    printf -v "PORT_$name" '%s' "$port"
    printf -v "PID_$name" '%s' "$pid"
}

# cap_check FILE 'python expression over d' MESSAGE
cap_check() {
    python3 - "$1" "$2" "$3" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
if not eval(sys.argv[2], {"d": d}):
    print("FAIL: %s: %s\n  capacity %s verdict %s reasons %s" % (sys.argv[3], sys.argv[2], d.get("capacity"),
          d.get("verdict"), d.get("reasons")), file=sys.stderr)
    sys.exit(1)
PY
}

# cap_value FILE 'python expression over d': prints its value.
cap_value() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# cap_machine_measured FILE: true (and says why on stdout) when knee capacity itself found that
# the machine, not the candidate, may have been measured: a probe failed (the check before every
# repetition that the generator delivers 115% of the top rate: the repetition is excluded), a
# step was "not delivered" (generator-limited: lag above --lag-limit, or fewer sends than
# planned: the step counts as not held), or the environment record calls a repetition BUSY (the
# reason knee capacity gives with "rerun on a quiet machine"). A test whose expected verdict did
# not come repeats such a measurement once; the second one's checks then stand (a second
# failure fails the test).
cap_machine_measured() {
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
why = ["probe of rep %d failed: %s" % (p["rep"], p["reason"]) for p in d["probes"] if not p["ok"]]
why += ["%g/s rep %d: %s" % (g["rate"], i + 1, r["reason"]) for g in d["ladder"] for i, r in enumerate(g["reps"])
        if d["repetitions"][i]["valid"] and "not delivered" in r["reason"]]
busy = [str(i + 1) for i, e in enumerate(d["environment"]) if e.get("busy")]
if busy:
    why.append("the machine was busy (others took most of the CPUs) during repetition %s" % ", ".join(busy))
print("; ".join(why))
sys.exit(0 if why else 1)
PY
}
