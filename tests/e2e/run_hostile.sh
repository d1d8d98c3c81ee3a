#!/usr/bin/env bash
# Hostile peers: bodies that trickle (1 byte per 100 ms) or never end (chunked forever,
# Content-Length 10^15, gigabytes at full speed), headers that trickle or never end, interim
# (1xx) responses without end, responses
# nobody asked for (after the response, later on an idle connection, a flood on an idle
# connection). The load engine parses responses and never stores them: its memory stays
# bounded (peak RSS within 16 MiB of a run against a well-behaved server), the timeout fires
# on time, and every request ends in its outcome class with the accounting intact.
source "$KNEE_SRC/tests/e2e/run_common.bash"
start_fault_server
B="http://127.0.0.1:$FS_PORT"

# The exit code: 0 for a run with an ok request; a run without one (every request timed out,
# say) may end in the documented failed-run code, never in 2 (bad input) or a signal.
run_rc_ok() { # JSON
    [[ $RC -eq 0 ]] && return 0
    [[ -s $1 && $RC -ne 2 && $RC -lt 128 ]] || return 1
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["outcomes"]["ok"] != 0)' "$1"
}

run_json() { # NAME FLAGS... URL: runs knee, the exit code checked by run_rc_ok
    local name=$1
    shift
    run_knee run --timeout 1s -d 2s "$@" --json "$TMP/$name.json" >"$TMP/$name.txt" 2>&1
    run_rc_ok "$TMP/$name.json" || { cat "$TMP/$name.txt"; fail "$name: exit $RC"; }
    json_check "$TMP/$name.json" 'identity(acc) and d["accounting_ok"] and acc["sent"] > 0' "$name: accounting"
}

run_json base_closed -c 4 "$B/ok"
run_json base_open -R 20 "$B/ok"
BASE_KB=$(python3 -c 'import json,sys; print(max(json.load(open(f))["environment"]["peak_rss_kb"] for f in sys.argv[1:]))' \
    "$TMP/base_closed.json" "$TMP/base_open.json")
BOUND_KB=$((BASE_KB + 16384))

# NAME PATH OUTCOME [extra check]: closed and open loop
hostile() {
    local name=$1 path=$2 outcome=$3 extra=${4:-True}
    local mode
    for mode in closed open; do
        local flags=(-c 4)
        [[ $mode == open ]] && flags=(-R 20)
        [[ $name == push_later || $name == flood_idle ]] && [[ $mode == closed ]] && flags+=(--think 100ms)
        run_json "$name.$mode" "${flags[@]}" "$B/$path"
        json_check "$TMP/$name.$mode.json" "acc['outcomes']['$outcome'] == acc['sent']" "$name ($mode): every request $outcome"
        json_check "$TMP/$name.$mode.json" "d['environment']['peak_rss_kb'] <= $BOUND_KB" \
            "$name ($mode): peak RSS within 16 MiB of the baseline ($BASE_KB kB)"
        json_check "$TMP/$name.$mode.json" "$extra" "$name ($mode): $extra"
    done
}

# the timeout fires on time (1 s, 250 ms of slack: see run_timeout.sh; 2 ms below for the
# histogram's 3 significant digits) while bytes keep coming
on_time='tot["service"]["min"] >= 998 and tot["service"]["max"] <= 1250'
many_bytes='tot["bytes_in"] > 20 * 1024 * 1024' # the flood did flow: tens of MB parsed, not kept
hostile trickle_body "trickle-body?ms=100" timeout "$on_time"
hostile trickle_headers "trickle-headers?ms=100" timeout "$on_time"
hostile endless_chunked endless-chunked timeout "$on_time and $many_bytes"
hostile huge_length huge-length timeout "$on_time and $many_bytes"
hostile endless_interim endless-interim timeout "$on_time and $many_bytes"
# headers without end: the parser's 80 KiB cap on a response head ends them
hostile endless_headers endless-headers invalid
# responses nobody asked for: counted, their connection closed, the requests themselves fine
hostile unsolicited unsolicited ok 'tot["connections"]["unsolicited_bytes"] >= 1'
hostile push_later "push-later?ms=20" ok 'tot["connections"]["unsolicited_bytes"] >= 1'
hostile flood_idle flood-idle ok 'tot["connections"]["unsolicited_bytes"] >= 1'
grep -q 'sent bytes nobody asked for' "$TMP/flood_idle.open.txt" || fail "flood_idle: no warning"
echo "ok"
