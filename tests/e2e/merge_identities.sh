#!/usr/bin/env bash
# knee merge checks each shard's own identities before it adds anything: a shard's JSON whose
# events contradict its counts (events.planned edited to 2^62), whose accounting does not add up,
# whose "all" is not the sum of its targets, with a negative rate or without an outcome table is
# refused (exit 2, one line naming the shard file and the broken identity, no output written);
# the shards as knee run wrote them still merge (exit 0).
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s --preset null
U="http://127.0.0.1:$PORT_s/"
cd "$TMP"
for i in 0 1; do
    "$KNEE" run -R 400 -n 60 -t 1 --shard "$i/2" --json "s$i.json" "$U" >/dev/null 2>&1
done
"$KNEE" merge s0.json s1.json --json ok.json >/dev/null || fail "the shards as written do not merge"

# broken NAME PATTERN PYTHON: s1.json edited by PYTHON (over d) as bad.json; knee merge refuses it
# with exit 2 and PATTERN on one line naming bad.json, and writes no merged JSON
broken() {
    local name=$1 pattern=$2
    python3 - "$3" <<'PY'
import json, sys
d = json.load(open("s1.json"))
exec(sys.argv[1])
json.dump(d, open("bad.json", "w"))
PY
    rm -f merged.json
    run_knee merge s0.json bad.json --json merged.json >out.txt 2>err.txt
    [[ $RC -eq 2 ]] || { cat out.txt err.txt >&2; fail "$name: exit $RC, want 2"; }
    [[ $(wc -l <err.txt) -eq 1 ]] || { cat err.txt >&2; fail "$name: want one line"; }
    grep -q "^knee merge: bad.json: .*$pattern" err.txt || fail "$name: got: $(cat err.txt)"
    [[ ! -e merged.json ]] || fail "$name: a merged JSON was written"
    echo "ok: $name refused: $(cat err.txt)"
}

H='d["shard"]["histograms"]'
broken "events.planned = 2^62" 'events.planned 4611686018427387904 > the 30 requests planned' \
    "$H['targets'][0]['events']['planned'] = 2**62; $H['all']['events']['planned'] = 2**62"
broken "all's events.sends" 'all: events.sends ' "$H['all']['events']['sends'] += 1"
broken "events.ok above completed" 'events.ok ' "$H['targets'][0]['events']['ok'] = 10**6"
broken "accounting.planned" 'accounting: planned 31 != sent 30 + dropped 0' \
    'd["targets"][0]["accounting"]["planned"] += 1'
broken "transport causes" 'accounting: outcomes.transport 0 != the transport causes.* sum 5' \
    'd["targets"][0]["accounting"]["transport_causes"]["reset"] = 5'
broken "all is not the targets' sum" "all: accounting: planned 40 != the targets' sum 30" \
    'a = d["all"]["accounting"]; a["planned"] += 10; a["sent"] += 10; a["outcomes"]["ok"] += 10'
broken "a negative rate" 'config.rate is negative or not a number' 'd["config"]["rate"] = -200'
broken "a negative stream rate" 'shard.streams\[\].rate_from is negative' 'd["shard"]["streams"][0]["rate_from"] = -1'
broken "a negative goodput" 'rates.goodput is negative or not a number' 'd["targets"][0]["rates"]["goodput"] = -3.5'
broken "no outcome table" 'accounting.outcomes.ok is missing or not a count' 'del d["targets"][0]["accounting"]["outcomes"]'
broken "no outcome table in all" 'all.accounting.outcomes.ok is missing or not a count' 'del d["all"]["accounting"]["outcomes"]'
broken "status codes above the responses" 'status_codes add up to 1030 > the 30 responses' \
    'd["targets"][0]["status_codes"]["200"] += 1000; d["all"]["status_codes"]["200"] += 1000'
broken "a status code that is not a count" 'status_codes.404 is not a count' 'd["targets"][0]["status_codes"]["404"] = "x"'
