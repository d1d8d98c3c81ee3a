#!/usr/bin/env bash
# Errors that suggest the fix, each checked to the letter with its exit code 2: did-you-mean
# for long options, commands, calculators, presets, experiments and word flags; lists of
# choices from the tables that define them; a URL without a scheme; a run JSON given to knee
# stats or knee compare (the log beside it); a self-signed https target (the reason and the
# flags, exit 3); and the value completion bash and zsh generate from --help (compgen).
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
cd "$TMP"

# hint EXIT 'EXACT STDERR' ARGS...: knee ARGS exits EXIT and prints exactly that on stderr.
hint() {
    local want_rc=$1 want=$2
    shift 2
    run_knee "$@" >out 2>err
    [[ $RC -eq $want_rc ]] || { cat err >&2; fail "knee $*: exit $RC, expected $want_rc"; }
    [[ $(cat err) == "$want" ]] || fail "knee $*: stderr was
$(cat err)
expected
$want"
}

U=http://127.0.0.1:9/
# ---- did you mean: options (one place: the option table reader) ----------------------------------
hint 2 "knee run: unknown option '--rat': did you mean --rate?" run --rat 100 "$U"
hint 2 "knee run: unknown option '--rat': did you mean --rate?" run --rat=100 "$U"
hint 2 "knee run: unknown option '--rtae': did you mean --rate?" run --rtae 100 "$U"
hint 2 "knee run: unknown option '-rate': did you mean --rate?" run -rate 100 "$U"
hint 2 "knee run: unknown option '-rat': did you mean --rate?" run -rat 100 "$U"
hint 2 "knee run: unknown option '--dur': did you mean --duration?" run --dur 1s "$U"
hint 2 "knee run: unknown option '--zzz' (see knee run --help)" run --zzz "$U"
hint 2 "knee capacity: unknown option '--rat': did you mean --rates?" capacity --rat 100 "$U"
hint 2 "knee stats: unknown option '--colum': did you mean --column?" stats --colum x f.csv
hint 2 "knee serve: unknown option '--prest': did you mean --preset?" serve --prest null
hint 2 "knee compare: unknown option '--befor': did you mean --before?" compare --befor a --after b
hint 2 "knee report: unknown option '--outptu': did you mean --output?" report --outptu x.html a.json
hint 2 "knee hlog stats: unknown option '--form': did you mean --from?" hlog stats --form 1 x.hlog
hint 2 "knee model mm1: unknown option '--servce': did you mean --service?" model mm1 --servce 10ms

# ---- did you mean: commands, calculators ---------------------------------------------------------
hint 2 "knee: unknown command 'rn': did you mean run?" rn
hint 2 "knee: unknown command 'capacty': did you mean capacity?" capacty
hint 2 "knee: unknown command 'rnu': did you mean run?" help rnu
hint 2 "knee: unknown command 'frobnicate' (one of lab, run, capacity, serve, compare, stats, hlog, merge, report, model)" frobnicate
hint 2 "knee hlog: unknown command 'shw': did you mean show?" hlog shw
hint 2 "knee model: unknown calculator 'erlang' (one of mm1, mmc, md1, little, fanout, ladder)" model erlang
hint 2 "knee model: unknown calculator 'fanot': did you mean fanout?" model fanot

# ---- lists of choices from their tables, with did-you-mean ---------------------------------------
presets="report, quiet, queue, flat, fanout, null, stall, stream"
hint 2 "knee serve: --preset: unknown preset 'bogus' (one of $presets)" serve --preset bogus
hint 2 "knee serve: --preset: unknown preset 'stal' (one of $presets): did you mean stall?" serve --preset stal
hint 2 "knee serve: --listen: unknown preset 'nul' (one of $presets): did you mean null?" serve --listen nul@127.0.0.1:0
"$KNEE" serve --help >serve.help
grep -qF -- "-p, --preset NAME           the preset (one of: $presets; default quiet)" serve.help ||
    fail "knee serve --help: --preset's line does not list the presets"
exps="stats, queue, knee, fanout, nagle, compare, capacity, tls, stream, all"
hint 2 "knee lab: unknown experiment 'nosuch' (one of $exps)" lab nosuch
hint 2 "knee lab: unknown experiment 'quee' (one of $exps): did you mean queue?" lab quee
"$KNEE" lab --help >lab.help
grep -qF "usage: knee lab [options] [${exps//, /|}]" lab.help || fail "knee lab --help: usage"
hint 2 "knee run: --io 'epol': expected one of auto, epoll, uring; did you mean epoll?" run --io epol "$U"
hint 2 "knee run: --arrivals 'possion': expected one of constant, poisson; did you mean poisson?" \
    run --arrivals possion -R 10 "$U"
hint 2 "knee run: --when-busy 'wait': expected one of queue, drop" run --when-busy wait -R 10 "$U"
hint 2 "knee compare: --fail-if 'p95+5%': unknown metric 'p95' (p50, p90, p99, p99.9, mean)" \
    compare --fail-if p95+5% a b
hint 2 "knee capacity: --tls-resume 'maybe': expected one of on, off" \
    capacity --tls-resume maybe --max 100 --slo 'p99<1s' "$U"

# ---- a URL without a scheme ----------------------------------------------------------------------
hint 2 "knee run: 127.0.0.1:8080/: not a URL (no scheme): did you mean http://127.0.0.1:8080/?" run 127.0.0.1:8080/
hint 2 "knee run: localhost/x: not a URL (no scheme): did you mean http://localhost/x?" run localhost/x
hint 2 "knee run: [::1]:80/: not a URL (no scheme): did you mean http://[::1]:80/?" run '[::1]:80/'
hint 2 "knee run: localhost:9/x: not a URL (no scheme): did you mean http://localhost:9/x?" \
    run --target a=localhost:9/x
hint 2 "knee capacity: 127.0.0.1:8080/: not a URL (no scheme): did you mean http://127.0.0.1:8080/?" \
    capacity --max 100 --slo 'p99<1s' 127.0.0.1:8080/
hint 2 "knee capacity: --probe '127.0.0.1:9/': expected an http:// URL: did you mean http://127.0.0.1:9/?" \
    capacity --max 100 --slo 'p99<1s' --probe 127.0.0.1:9/ "$U"
hint 2 "knee run: /x: not a URL (expected http://host[:port]/path)" run /x

# ---- a run JSON where per-request data is wanted -------------------------------------------------
start_knee_serve null --preset null
N=http://127.0.0.1:$PORT_null/
for s in a b; do
    "$KNEE" run -n 50 -R 500 --json $s.json --out $s.bin "$N" >/dev/null 2>&1 || fail "knee run $s"
done
hint 2 "knee stats: a.json: a knee run's JSON summary holds no per-request data: give knee stats that run's log (a.bin)" \
    stats a.json
mkdir elsewhere && cp a.json elsewhere/a.json
hint 2 "knee stats: elsewhere/a.json: a knee run's JSON summary holds no per-request data: give knee stats that run's log (a.bin)" \
    stats elsewhere/a.json # not beside it: the --out its args name
echo '{"schema": "knee-capacity/1"}' >cap.json
hint 2 "knee stats: cap.json: a JSON file (schema knee-capacity/1) holds no per-request data: give knee stats a CSV or knee's binary log" \
    stats cap.json
run_knee compare a.json b.json >cmp.out 2>cmp.err
[[ $RC -eq 0 ]] || { cat cmp.err >&2; fail "knee compare a.json b.json: exit $RC"; }
[[ $(cat cmp.err) == "knee compare: before: read a.bin + a.json (the log beside the run JSON given)
knee compare: after: read b.bin + b.json (the log beside the run JSON given)" ]] || fail "compare: $(cat cmp.err)"
grep -q '^before: 1 repetition, 50 measured requests (a)$' cmp.out || fail "compare read no data: $(cat cmp.out)"
mv a.bin a.kept
hint 2 "knee compare: before: a.json: a run JSON holds no per-request data, and none of a.bin, a.csv, a.hlog is beside it (knee run --out FILE writes the log; give it with the JSON)" \
    compare a.json b.json

# ---- a self-signed https target: the reason and the flags ----------------------------------------
start_knee_serve tls --preset null --tls
T=https://127.0.0.1:$PORT_tls/
run_knee run -n 5 -R 50 "$T" >tls.out 2>tls.err
[[ $RC -eq 3 ]] || { cat tls.out tls.err >&2; fail "self-signed target: exit $RC, expected 3"; }
grep -qxF "  transport 5: tls verify 5 (tls verify: the server's certificate did not verify against the trusted CAs (self-signed, or signed by a CA unknown here); --cacert FILE trusts the CA that signed it, --insecure skips the check)" tls.out ||
    { cat tls.out >&2; fail "self-signed target: no transport line naming the reason and the flags"; }
grep -qE '^tls: no handshake completed: [0-9]+ failed \(tls verify 5: --cacert FILE or --insecure\)$' tls.out ||
    { cat tls.out >&2; fail "self-signed target: no tls line naming the flags"; }
grep -q 'protocol agreed\|tls: ,' tls.out && fail "self-signed target: a stray protocol line"
run_knee capacity --rates 50 --reps 1 --step 300ms --warmup 0 --settle 0 --no-cross-check --slo 'p99<1s' "$T" \
    >cap.out 2>cap.err
grep -qE '^  50/s rep 1: .*not one request ended ok \(the target is down, refuses, or every request failed\); tls verify [0-9]+: the certificate did not verify: --cacert FILE or --insecure' cap.out ||
    { cat cap.out cap.err >&2; fail "knee capacity against a self-signed target: no reason naming the flags"; }
run_knee run -n 5 -R 50 --insecure "$T" >ins.out 2>ins.err
[[ $RC -eq 0 ]] || { cat ins.out ins.err >&2; fail "--insecure: exit $RC"; }

# ---- completion of values, generated from --help and knee --list-values --------------------------
sh "$KNEE_SRC/scripts/helpgen.sh" bash "$KNEE" knee.bash
sh "$KNEE_SRC/scripts/helpgen.sh" zsh "$KNEE" _knee
complete_bash() { # complete_bash WORD...: what bash offers for the last word
    bash -c 'source ./knee.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _knee; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
[[ $(complete_bash knee serve --preset "" | tr '\n' ' ') == "report quiet queue flat fanout null stall stream " ]] ||
    fail "bash: --preset offers $(complete_bash knee serve --preset "")"
[[ $(complete_bash knee serve -p sta) == stall ]] || fail "bash: -p sta offers $(complete_bash knee serve -p sta)"
[[ $(complete_bash knee run --io "" | tr '\n' ' ') == "auto epoll uring " ]] || fail "bash: --io"
[[ $(complete_bash knee capacity --arrivals p) == poisson ]] || fail "bash: capacity --arrivals"
[[ $(complete_bash knee lab ca) == capacity ]] || fail "bash: lab's experiments"
[[ $(complete_bash knee run --rat | tr '\n' ' ') == "--rate " ]] ||
    fail "bash: --rat offers $(complete_bash knee run --rat)"
[[ -z $(complete_bash knee run --json "") ]] || fail "bash: --json offers words (it takes a file)"
if command -v zsh >/dev/null; then
    # _knee outside a completion widget: words and CURRENT set by hand, compadd and _files stubbed
    complete_zsh() { # complete_zsh WORD...: what zsh offers for the last word
        zsh -fc 'source <(sed "\$d" ./_knee); compadd() { print -r -- "${@:2}"; }; _files() { print FILES; }
                 words=("$@"); CURRENT=$#; _knee' _ "$@"
    }
    got=$(complete_zsh knee serve --preset "")
    [[ $got == "report quiet queue flat fanout null stall stream" ]] || fail "zsh: --preset offers '$got'"
    got=$(complete_zsh knee run --io "")
    [[ $got == "auto epoll uring" ]] || fail "zsh: --io offers '$got'"
    got=$(complete_zsh knee run --json "")
    [[ $got == FILES ]] || fail "zsh: --json offers '$got' (it takes a file)"
fi
echo "ok: every hint is exact, exit 2; the self-signed target names the reason and the flags; completion offers values"
