#!/usr/bin/env bash
# knee run --live under a real terminal (tmux, on a private socket): the view appears with its
# labels, honours NO_COLOR, and when the run ends the terminal is given back (main screen,
# cursor shown, echo on) with the normal summary on it; Ctrl-C mid-run drains, writes --json and
# restores the terminal too. Without a terminal on stdout --live is refused (exit 2). The timing
# tier checks that the view is redrawn about once a second with the rate it sends.
# tier: exact timing
source "$KNEE_SRC/tests/e2e/run_common.bash"

command -v tmux >/dev/null || fail "tmux is not installed (scripts/deps.sh --test installs it)"
start_knee_serve web
URL="http://127.0.0.1:$PORT_web/"
SOCK="$TMP/tmux.sock"
tm() { tmux -S "$SOCK" "$@"; }

# pane NAME ENV... -- KNEE-ARGS...: a tmux session NAME (100x30) running knee with KNEE-ARGS
# under env ENV, then printing its exit code and the terminal's echo setting, then waiting.
pane() {
    local name=$1
    shift
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    {
        echo 'trap : INT' # the pane's shell outlives a Ctrl-C that knee handles
        printf 'env'
        printf ' %q' "${envs[@]}" "$KNEE" "$@"
        echo
        echo 'rc=$?'
        echo 'printf "\nknee exited %s\n" "$rc"'
        echo 'printf "ECHO=%s\n" "$(stty -a | tr " ;" "\n\n" | grep -x -e echo -e -echo)"'
        echo 'exec sleep 600'
    } >"$TMP/pane-$name.sh"
    tm new-session -d -s "$name" -x 100 -y 30 "bash $TMP/pane-$name.sh"
    local spid
    spid=$(tm display-message -p -t "$name" '#{pid}')
    [[ -n $spid ]] && PIDS+=("$spid") # the tmux server: cleanup ends it
}

# wait_for NAME REGEX SECONDS: poll the pane's screen (every 0.2 s, bounded) until it matches.
wait_for() {
    local i
    for i in $(seq $(($3 * 5))); do
        tm capture-pane -p -t "$1" >"$TMP/screen" 2>/dev/null || true
        grep -qE -- "$2" "$TMP/screen" && return 0
        sleep 0.2
    done
    cat "$TMP/screen" >&2
    fail "$1: no /$2/ on the screen within $3 s"
}

# everything the pane ever showed on its main screen (history and screen, wrapped lines joined)
scrollback() { tm capture-pane -p -J -S - -t "$1"; }

if in_tier exact; then
    # --- refused without a terminal, before anything runs
    run_knee run --live -R 10 -d 1s "$URL" >"$TMP/pipe.out" 2>"$TMP/pipe.err"
    [[ $RC -eq 2 ]] || fail "--live on a pipe: exit $RC, want 2"
    grep -q '^knee run: --live needs a terminal on standard output.*--progress' "$TMP/pipe.err" ||
        { cat "$TMP/pipe.err"; fail "--live on a pipe: the message"; }
    [[ ! -s $TMP/pipe.out ]] || fail "--live on a pipe printed on stdout"
    run_knee run --live --progress -R 10 -d 1s "$URL" 2>"$TMP/both.err" >/dev/null
    [[ $RC -eq 2 ]] && grep -q -- '--live and --progress: choose one' "$TMP/both.err" || fail "--live --progress"
    run_knee run --live --repeat 2 --out-dir "$TMP/rep" -R 10 -d 1s "$URL" 2>"$TMP/rep.err" >/dev/null
    [[ $RC -eq 2 ]] && grep -q -- '--live shows one run: not with --repeat' "$TMP/rep.err" || { cat "$TMP/rep.err"; fail "--live --repeat"; }
    run_knee run --live --dry-run -R 10 -d 1s "$URL" >"$TMP/dry.out" 2>&1
    [[ $RC -eq 0 ]] && grep -q '^dry run: ' "$TMP/dry.out" || { cat "$TMP/dry.out"; fail "--live --dry-run"; }

    # --- a whole run, without colour: the view, then the summary on the main screen
    pane a NO_COLOR=1 LANG=C.UTF-8 -- run --live -R 200 -d 4s --json "$TMP/a.json" "$URL"
    wait_for a '^this second +[0-9,]+' 60
    for label in ' knee run --live  open loop 200/s for 4s  http://127.0.0.1:' '^per second +planned +sent +completed +in flight +queued$' \
        '^run mean ' '^latency ms +p50 ' '^  p50 ' '^  p99 ' '^outcomes +ok [0-9,]+' '^status +(200: [0-9,]+|no response yet)' \
        '^lag +max .* against 1.00 ms' '^generator +CPU [0-9.]+ cores on [0-9]+ threads?, busiest' '^Ctrl-C stops planning'; do
        grep -qE -- "$label" "$TMP/screen" || { cat "$TMP/screen"; fail "the view has no /$label/"; }
    done
    grep -qE '[▁▂▃▄▅▆▇█]' "$TMP/screen" || { cat "$TMP/screen"; fail "UTF-8: block characters in the sparklines"; }
    tm capture-pane -p -e -t a >"$TMP/screen-e"
    ! grep -q $'\033\\[[0-9;]*m' <(sed 's/\x1b\[0m//g; s/\x1b\[39m//g; s/\x1b\[49m//g' "$TMP/screen-e") ||
        { cat -v "$TMP/screen-e"; fail "NO_COLOR: the view has colours"; }
    wait_for a '^knee exited' 60
    [[ $(tm display-message -p -t a '#{alternate_on} #{cursor_flag}') == "0 1" ]] ||
        fail "after the run: alternate screen $(tm display-message -p -t a '#{alternate_on}'), cursor $(tm display-message -p -t a '#{cursor_flag}')"
    scrollback a >"$TMP/a.txt"
    grep -q '^knee exited 0$' "$TMP/a.txt" || { cat "$TMP/a.txt"; fail "the --live run's exit code"; }
    grep -q '^ECHO=echo$' "$TMP/a.txt" || { cat "$TMP/a.txt"; fail "echo is back on after --live"; }
    ! grep -qE 'knee run --live|^per second|^Ctrl-C stops' "$TMP/a.txt" || { cat "$TMP/a.txt"; fail "the view stayed on the main screen"; }
    grep -qE 'p99' "$TMP/a.txt" && grep -qiE 'requests|rate' "$TMP/a.txt" || { cat "$TMP/a.txt"; fail "no summary after the view"; }
    json_check "$TMP/a.json" 'identity(acc) and acc["outcomes"]["ok"] == acc["planned"] == 800' "--live: the run as without it"

    # --- Ctrl-C mid-run, with colour and ASCII: drains, writes --json, gives the terminal back
    pane b LANG=C TERM=xterm -- run --live -R 200 -d 60s --json "$TMP/b.json" "$URL"
    wait_for b '^this second +[0-9,]+' 60
    grep -qE '^  p99 [_.:=+*#-]' "$TMP/screen" || { cat "$TMP/screen"; fail "no UTF-8: an ASCII sparkline"; }
    tm capture-pane -p -e -t b >"$TMP/screen-e"
    grep -q $'\033\\[7m knee run --live' "$TMP/screen-e" || { cat -v "$TMP/screen-e"; fail "colour: the title in reverse video"; }
    tm send-keys -t b C-c
    wait_for b '^knee exited' 60
    [[ $(tm display-message -p -t b '#{alternate_on} #{cursor_flag}') == "0 1" ]] || fail "after Ctrl-C: the terminal not restored"
    scrollback b >"$TMP/b.txt"
    grep -q '^knee exited 0$' "$TMP/b.txt" || { cat "$TMP/b.txt"; fail "Ctrl-C under --live: exit code"; }
    grep -q '^ECHO=echo$' "$TMP/b.txt" || { cat "$TMP/b.txt"; fail "echo is back on after Ctrl-C"; }
    grep -q 'interrupted' "$TMP/b.txt" || { cat "$TMP/b.txt"; fail "the summary says the run was interrupted"; }
    json_check "$TMP/b.json" 'd["interrupted"] and identity(acc) and d["accounting_ok"] and acc["outcomes"]["cancelled"] == 0' \
        "Ctrl-C under --live: interrupted, drained, accounted"
fi

if in_tier timing; then
    # redrawn about once a second, each second's rate near the plan's
    pane t NO_COLOR=1 LANG=C.UTF-8 -- run --live -R 200 -d 8s "$URL"
    wait_for t '^this second +[0-9,]+' 60
    first=$(grep -oE '^\[.*\] +[0-9]+s' "$TMP/screen" | grep -oE '[0-9]+s$')
    sleep 2.5
    tm capture-pane -p -t t >"$TMP/screen2"
    second=$(grep -oE '^\[.*\] +[0-9]+s' "$TMP/screen2" | grep -oE '[0-9]+s$')
    [[ -n $first && -n $second && ${second%s} -ge $((${first%s} + 1)) ]] ||
        { cat "$TMP/screen" "$TMP/screen2"; fail "the view was not redrawn in 2.5 s (elapsed $first then $second)"; }
    sent=$(awk '/^this second/ { gsub(",", "", $4); print $4 }' "$TMP/screen2")
    ((sent >= 160 && sent <= 240)) || { cat "$TMP/screen2"; fail "this second's sends $sent, planned 200/s"; }
    wait_for t '^knee exited 0' 60
fi
echo "ok"
