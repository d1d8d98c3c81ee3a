#!/usr/bin/env bash
# Bad input to knee run: one clear line naming what is wrong, exit code 2, nothing sent.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
U=http://127.0.0.1:9/

expect2() {
    local pattern=$1
    shift
    run_knee run "$@" >"$TMP/out" 2>"$TMP/err"
    [[ $RC -eq 2 ]] || { cat "$TMP/err"; fail "exit $RC, not 2, for: $*"; }
    [[ $(wc -l <"$TMP/err") -eq 1 ]] || { cat "$TMP/err"; fail "more than one line for: $*"; }
    grep -q -- "$pattern" "$TMP/err" || { cat "$TMP/err"; fail "no '$pattern' in the message for: $*"; }
}

# https is spoken (tests/e2e/run_tls.sh); its flags are checked like the others
expect2 '--tls-version' --tls-version 1.7 https://127.0.0.1/
expect2 '--h2c applies to http://' --h2c --target a=https://127.0.0.1/
expect2 'no target' -d 1s
expect2 'not a URL' 127.0.0.1:80
expect2 'port' http://127.0.0.1:99999/
expect2 '--rate' -R fast "$U"
expect2 '--rate' -R -5 "$U"
expect2 '--duration' -d 10x "$U"
expect2 '--duration must be > 0' -d 0 "$U"
expect2 '--requests must be > 0' -n 0 "$U"
expect2 '--connections' -c 0 "$U"
expect2 "unknown option '--frobnicate'" --frobnicate "$U"
expect2 '--threshold' --threshold 'p99<soon' "$U"
expect2 '--threshold' --threshold 'latency' "$U"
expect2 '--target' --target nourl "$U"
expect2 "'@x'" --target 'a=http://127.0.0.1/@x'
expect2 'two targets' --target a=$U --target a=$U
expect2 '--think applies' -R 10 --think 1s "$U"
expect2 '--arrivals applies' --arrivals poisson "$U"
expect2 "--arrivals 'uniform'" -R 10 --arrivals uniform "$U"
expect2 '--when-busy' -R 10 --when-busy maybe "$U"
expect2 '--ramp' --ramp 100 "$U"
expect2 '--ramp and --rate' --ramp 1:2 -R 5 "$U"
expect2 '--mix' --target a=$U --mix b=1
expect2 '--mix' --target a=$U --mix a=-1
expect2 '--reject' --reject 5xx "$U"
expect2 '--body' --body @/nonexistent/file "$U"
expect2 '--method' -m 'GE T' "$U"
expect2 'Content-Length' -H 'Content-Length: 5' "$U"
expect2 'Connection' -H 'Connection: close' "$U"
expect2 'warmup' --warmup 5s -d 2s "$U"
expect2 'has no rate' --target a=$U@5 --target b=http://127.0.0.1:10/
expect2 'credentials' http://user:pw@127.0.0.1/
expect2 '@Nc' -R 10 --target 'a=http://127.0.0.1/@4c'
# the checks run_validate holds name the flag too
expect2 '--ramp: FROM and TO' --ramp 0:0 "$U"
expect2 '--ramp needs --duration' --ramp 1:2 -n 100 "$U"
expect2 '--connections must be between 1 and 1000000' -c 2000000 "$U"
expect2 '--connections must be between 1 and 1000000' -c 0 "$U"
expect2 '--threads must be between 1 and 1024' -t 5000 "$U"
expect2 '--expect-body: empty' --expect-body '' "$U"
# wrk's habits: --latency is accepted and says it changes nothing; -s is refused with a pointer
run_knee run --latency --dry-run "$U" >"$TMP/out" 2>"$TMP/err"
[[ $RC -eq 0 ]] && grep -q -- '--latency: accepted for wrk users and ignored' "$TMP/err" || fail "--latency: $(cat "$TMP/err")"
expect2 'knee runs no Lua scripts' -s script.lua "$U"
expect2 'did you mean --rate' -rate 10 "$U"
# the plan's bounds: refused with the limit named, exit 2
expect2 'more than 2 load threads can plan (at most 1,000,000/s per thread' -t 2 -R 1e8 -d 1s "$U"
expect2 'more than' -t 2 -R 1e12 -d 1s "$U"
expect2 'more than' -t 2 -R 1e20 -d 1s "$U"
expect2 'more than' -t 2 -R 1.79e308 -d 1s "$U"
expect2 '--requests 5 at 1e-300/s would take' --rate 1e-300 -n 5 "$U"
# control bytes from input are escaped in the error line
run_knee run $'http://127.0.0.1:99999/\r\nX' >"$TMP/out" 2>"$TMP/err"
[[ $RC -eq 2 && $(wc -l <"$TMP/err") -eq 1 ]] && grep -qF 'http://127.0.0.1:99999/\r\nX' "$TMP/err" ||
    fail "escaped CR LF: $(od -c "$TMP/err" | head)"
expect2 '--when-busy applies' --when-busy drop "$U"
expect2 '--reject: at most 8' $(for s in 500 501 502 503 504 505 506 507 508; do echo --reject $s; done) "$U"
expect2 '--timeout must be > 0' --timeout 0 "$U"
expect2 '--target: two targets' --target a=$U --target a=${U}x
expect2 'no target' --dry-run
# issue 25's small refusals: out-of-range values are named, not read as "not given"
expect2 "--reject '999': the status must be between 100 and 599" --reject 999 "$U"
expect2 "--reject '600:busy': the status must be between 100 and 599" --reject 600:busy "$U"
expect2 '--shards must be between 1 and' --shards 0 "$U"
expect2 '--repeat must be at least 1' --repeat 0 "$U"
expect2 '--repeat must be at least 1' --repeat 0 --dry-run "$U"
# --out into a missing directory, or onto a directory, is bad input (2) like --json and --hlog
expect2 '--out /nonexistent/dir/x.bin: No such file or directory' -n 1 --out /nonexistent/dir/x.bin "$U"
expect2 '--json /nonexistent/dir/x.json: No such file or directory' -n 1 --json /nonexistent/dir/x.json "$U"
expect2 "--out $TMP: Is a directory" -n 1 --out "$TMP" "$U"
# grep without -q reads the whole help: -q would exit at the match, and knee, still writing
# a help longer than its 4 KiB stdout buffer, would die of SIGPIPE (pipefail: a failure)
"$KNEE" run --help | grep 'usage: knee run' >/dev/null || fail "--help"
"$KNEE" help run | grep -- '--when-busy' >/dev/null || fail "help run"
"$KNEE" run --help | grep -- '--dry-run' >/dev/null || fail "--help lists --dry-run"
"$KNEE" run --help | grep -- '-v, --verbose' >/dev/null || fail "--help lists --verbose"
echo "ok"
