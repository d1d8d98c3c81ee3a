#!/usr/bin/env bash
# knee run --dry-run: every flag checked and the targets resolved, the plan printed, exit 0;
# no connection is made (knee serve's counters say so) and no output file is created; its
# planned counts are the counts a real run plans; bad input is still exit 2.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s -p null
SP=$PID_s
U="http://127.0.0.1:$PORT_s/"

dry() {
    run_knee run --dry-run "$@" >"$TMP/dry.out" 2>"$TMP/dry.err"
    [[ $RC -eq 0 ]] || { cat "$TMP/dry.err"; fail "exit $RC for --dry-run $*"; }
    grep -q 'nothing was sent' "$TMP/dry.out" || { cat "$TMP/dry.out"; fail "no closing line for $*"; }
}

dry -R 500 -d 10s --warmup 2s --json "$TMP/r.json" -o "$TMP/log.csv" --hlog "$TMP/r.hlog" --threshold 'p99<250ms' "$U"
grep -q '^  5,000 requests planned over 10 s' "$TMP/dry.out" || fail "planned count: $(cat "$TMP/dry.out")"
grep -q 'warm-up: 1,000 of them in the first 2 s' "$TMP/dry.out" || fail "warm-up count"
grep -q -- "--out $TMP/log.csv: one row per request (CSV)" "$TMP/dry.out" || fail "outputs listed"
grep -q -- '--threshold p99<250ms' "$TMP/dry.out" || fail "thresholds listed"
for f in r.json log.csv r.hlog; do [[ ! -e "$TMP/$f" ]] || fail "--dry-run created $f"; done
dry -R 200 --arrivals poisson --target read="$U"r --target write="$U"w --mix read=3,write=1 -m write=POST -b write=xyz
grep -q 'about 2,000 requests planned' "$TMP/dry.out" || fail "Poisson: an expectation"
grep -q '^  read .*150.0/s, about 1,500 planned' "$TMP/dry.out" || fail "read's share: $(cat "$TMP/dry.out")"
dry -c 8 -d 30s "$U"
grep -q 'as many requests as 8 connections complete in 30 s' "$TMP/dry.out" || fail "closed loop by time"
dry -n 1000 -c 3 --target a="$U" --target b="$U"b
grep -q '^  1,000 requests planned, shared by 3 connections' "$TMP/dry.out" || fail "closed loop, --requests"
dry --ramp 100:2000 -d 1m "$U"
grep -q '^  63,000 requests planned over 60 s' "$TMP/dry.out" || fail "ramp count"

# the head line names the I/O engine the run would take and the --io that chose it (auto: epoll,
# which measured as fast; the open loop and TLS always run on epoll), and --timer-slack when set
dry -R 100 -d 1s -t 1 "$U"
grep -q '^knee run: open loop, .*, 1 s, 1 thread on epoll (--io auto)$' "$TMP/dry.out" || fail "--io auto: $(head -1 "$TMP/dry.out")"
! grep -q 'timer-slack' "$TMP/dry.out" || fail "a plan without --timer-slack names one"
dry -R 100 -d 1s -t 1 --timer-slack 2ms --io epoll "$U"
grep -q '^knee run: open loop, constant arrivals, 100.0/s, pool up to 10,000 connections (queue when busy), sends up to 2.000 ms late by --timer-slack, 1 s, 1 thread on epoll (--io epoll)$' "$TMP/dry.out" ||
    fail "--timer-slack and --io epoll: $(head -1 "$TMP/dry.out")"
dry -c 2 -d 1s -t 1 "$U"
grep -q '^knee run: closed loop, 2 connections, 1 s, 1 thread on epoll (--io auto)$' "$TMP/dry.out" || fail "closed loop, --io auto: $(head -1 "$TMP/dry.out")"
# --io uring: planned on io_uring where this process may set one up, else refused (exit 2)
run_knee run --dry-run -c 2 -d 1s -t 1 --io uring "$U" >"$TMP/dry.out" 2>"$TMP/dry.err"
if [[ $RC -eq 0 ]]; then
    grep -q '^knee run: closed loop, 2 connections, 1 s, 1 thread on io_uring (--io uring)$' "$TMP/dry.out" ||
        fail "--io uring: $(head -1 "$TMP/dry.out")"
else
    [[ $RC -eq 2 ]] && grep -q 'cannot set up an io_uring' "$TMP/dry.err" || { cat "$TMP/dry.err"; fail "--io uring: exit $RC"; }
fi

# the planned counts are what a real run plans (constant arrivals, shares over targets)
planned_of() { python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["all"]; print(a["accounting"]["planned"]+a["warmup"]["planned"])' "$1"; }
check_same() {
    dry "$@"
    local want got
    want=$(sed -n 's/^  \([0-9,]*\) requests planned.*/\1/p' "$TMP/dry.out" | tr -d ,)
    run_knee run "$@" --json "$TMP/real.json" >"$TMP/real.out" 2>&1
    [[ $RC -eq 0 ]] || { cat "$TMP/real.out"; fail "real run exit $RC: $*"; }
    got=$(planned_of "$TMP/real.json")
    [[ "$want" == "$got" ]] || fail "dry run plans $want, the run planned $got: $*"
    SENT_TOTAL=$((SENT_TOTAL + $(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["all"]; print(a["accounting"]["sent"]+a["warmup"]["sent"])' "$TMP/real.json")))
}
SENT_TOTAL=0
check_same -R 333 -d 1.5s --warmup 300ms "$U"
check_same -R 250 -d 1s --target a="$U" --target b="$U"b --mix a=2,b=1
check_same -R 1000 -n 777 "$U"

# nothing reached the server from --dry-run: it saw the requests the real runs sent, no more
kill -TERM "$SP"
wait "$SP" 2>/dev/null || true
CONNS=$(sed -n 's/.*"connections_total":\([0-9]*\).*/\1/p' "$TMP/serve-s.out")
[[ -n "$CONNS" ]] || { cat "$TMP/serve-s.out"; fail "no counters from knee serve"; }
REQS=$(sed -n 's/.*"requests":\([0-9]*\).*/\1/p' "$TMP/serve-s.out")
[[ "$REQS" -eq "$SENT_TOTAL" ]] || fail "the server saw $REQS requests, the real runs sent $SENT_TOTAL"

# bad input is still exit 2, one line naming the flag, before anything is resolved or created
bad() {
    local pattern=$1
    shift
    run_knee run --dry-run "$@" >"$TMP/out" 2>"$TMP/err"
    [[ $RC -eq 2 ]] || { cat "$TMP/err"; fail "exit $RC, not 2, for --dry-run $*"; }
    [[ $(wc -l <"$TMP/err") -eq 1 ]] || { cat "$TMP/err"; fail "more than one line for: $*"; }
    grep -q -- "$pattern" "$TMP/err" || { cat "$TMP/err"; fail "no '$pattern' for: $*"; }
    [[ ! -s "$TMP/out" ]] || { cat "$TMP/out"; fail "a plan printed for bad input: $*"; }
}
bad '--think applies' -R 10 --think 1s "$U"
bad '--json /nonexistent/dir/x.json' --json /nonexistent/dir/x.json "$U"
bad '--out /nonexistent/dir/x.bin' -o /nonexistent/dir/x.bin "$U"
bad 'cannot resolve' http://nonexistent.invalid/
bad '--threshold' --threshold 'p99<soon' "$U"
bad '--warmup must be shorter' --warmup 5s -d 2s "$U"
echo "ok"
