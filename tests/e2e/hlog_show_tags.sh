#!/usr/bin/env bash
# knee hlog show on knee's own log (every interval tagged with its target) without --tag: it
# shows every tag merged, says so on one stderr line, and its total count is the log's; from a
# file and from standard input alike. A log with untagged intervals still shows those (the
# reference tool's default), without a note; --tag shows one tag.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s --preset null --duration 60s
PORT=$PORT_s
"$KNEE" run --target api=http://127.0.0.1:$PORT/a@100 --target web=http://127.0.0.1:$PORT/b@50 \
    -d 2s --threads 1 --hlog "$TMP/r.hlog" >/dev/null

total=$("$KNEE" hlog stats "$TMP/r.hlog" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["all"]["count"])')
[[ $total -gt 0 ]] || fail "empty log"
# the last table row of the .hgrm layout is "value 1.0 TotalCount inf"
last_count() { awk '$2 ~ /^1\.0+$/ {n = $3} END {print n}' "$1"; }

for src in file stdin; do
    if [[ $src == file ]]; then
        "$KNEE" hlog show "$TMP/r.hlog" >"$TMP/show.out" 2>"$TMP/show.err" || fail "show ($src) exited $?"
    else
        "$KNEE" hlog show - <"$TMP/r.hlog" >"$TMP/show.out" 2>"$TMP/show.err" || fail "show ($src) exited $?"
    fi
    [[ $(wc -l <"$TMP/show.err") -eq 1 ]] || fail "show ($src): want one note on stderr: $(cat "$TMP/show.err")"
    grep -q 'has no untagged intervals: showing all 2 tags merged (api+web); --tag T for one' "$TMP/show.err" ||
        fail "show ($src): note: $(cat "$TMP/show.err")"
    [[ $(last_count "$TMP/show.out") == "$total" ]] || fail "show ($src): total $(last_count "$TMP/show.out"), log $total"
done

# --tag: that tag alone, no note
"$KNEE" hlog show "$TMP/r.hlog" --tag api >"$TMP/api.out" 2>"$TMP/api.err"
[[ ! -s "$TMP/api.err" ]] || fail "--tag printed a note: $(cat "$TMP/api.err")"
api=$("$KNEE" hlog stats "$TMP/r.hlog" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["groups"]["api"]["count"])')
[[ $(last_count "$TMP/api.out") == "$api" ]] || fail "--tag api: $(last_count "$TMP/api.out") vs $api"

# untagged intervals (the tag taken off the api lines): those are shown, as the reference does
sed 's/^Tag=api,//' "$TMP/r.hlog" >"$TMP/mixed.hlog"
"$KNEE" hlog show "$TMP/mixed.hlog" >"$TMP/mixed.out" 2>"$TMP/mixed.err"
[[ ! -s "$TMP/mixed.err" ]] || fail "untagged log printed a note: $(cat "$TMP/mixed.err")"
[[ $(last_count "$TMP/mixed.out") == "$api" ]] || fail "untagged: $(last_count "$TMP/mixed.out") vs $api"
# a file name holding ESC and CR (tags cannot: the reader refuses control bytes in them):
# knee hlog stats (and knee stats, which hands *.hlog to it) print it escaped, never raw
ctl="$TMP/x"$'\x1b'"[2J"$'\r'"y.hlog"
cp "$TMP/r.hlog" "$ctl"
for cmd in "hlog stats" "stats"; do
    # shellcheck disable=SC2086
    "$KNEE" $cmd "$ctl" >"$TMP/ctl.out" 2>&1 || fail "$cmd: exited $?: $(cat "$TMP/ctl.out")"
    grep -q $'[\x1b\r]' "$TMP/ctl.out" && fail "$cmd: a raw control byte on stdout: $(cat -A "$TMP/ctl.out")"
    grep -qF 'x\x1b[2J\ry.hlog: ' "$TMP/ctl.out" || fail "$cmd: no escaped name: $(cat "$TMP/ctl.out")"
done
echo "ok"
