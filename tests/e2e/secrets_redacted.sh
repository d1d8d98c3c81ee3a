#!/usr/bin/env bash
# Credentials never reach a result file: the values of Authorization, Proxy-Authorization,
# Cookie and of any --header-secret header are sent as given but recorded as "<redacted>" in
# environment.args — in knee run's JSON and HTML, in each --repeat repetition's JSON, in the
# JSON knee merge writes of the shards; a plain -H header is kept as typed.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_fault_server
U="http://127.0.0.1:$FS_PORT/require?header=x-api-key"
cd "$TMP"
SECRETS=(-H 'Authorization: Bearer S3CRET-A' -H 'cookie: sid=S3CRET-B' --header-secret 'X-Api-Key: S3CRET-C'
    --header='Proxy-Authorization: Basic S3CRET-D' -H 'X-Trace: kept-as-typed')

# no_secret FILE...: none of the secrets in any file, "<redacted>" and the plain header in each JSON
no_secret() {
    local f
    for f in "$@"; do
        ! grep -q 'S3CRET' "$f" || fail "$f keeps a credential: $(grep -o '.\{30\}S3CRET.\{10\}' "$f" | head -1)"
    done
}

"$KNEE" run -n 6 -c 1 -t 1 "${SECRETS[@]}" --json run.json --html run.html "$U" >/dev/null 2>&1
json_check run.json 'tot["outcomes"]["ok"] == 6' "the --header-secret header was sent (the server requires it)"
json_check run.json '("Authorization: <redacted>" in d["environment"]["args"] and
    "cookie: <redacted>" in d["environment"]["args"] and "X-Api-Key: <redacted>" in d["environment"]["args"] and
    "--header=Proxy-Authorization: <redacted>" in d["environment"]["args"] and
    "X-Trace: kept-as-typed" in d["environment"]["args"])' "environment.args redacted, the plain header kept"
no_secret run.json run.html
echo "ok: knee run's JSON and HTML keep no credential"

"$KNEE" run -n 4 -c 1 -t 1 "${SECRETS[@]}" --repeat 2 --out-dir rep "$U" >/dev/null 2>&1
[[ -f rep/rep-1.json && -f rep/repeat.json ]] || fail "--repeat wrote no repetitions"
no_secret rep/*
echo "ok: knee run --repeat's files keep no credential"

for i in 0 1; do
    "$KNEE" run -n 8 -c 2 -t 1 --shard "$i/2" "${SECRETS[@]}" --json "s$i.json" "$U" >/dev/null 2>&1
done
no_secret s0.json s1.json
"$KNEE" merge s0.json s1.json --json merged.json >/dev/null
no_secret merged.json
json_check merged.json 'tot["outcomes"]["ok"] == 8' "the merged shards"
echo "ok: knee merge's JSON keeps no credential"
