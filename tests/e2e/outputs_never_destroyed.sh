#!/usr/bin/env bash
# Outputs never destroyed: knee never removes or replaces a path it did not create. For every output flag in
# the table below, in a temporary directory (never the machine's own /dev nodes):
#   chardev-full  a character device with /dev/full's numbers (writes fail: ENOSPC)
#                 -> exit 1, one line naming the path and the reason; still that device
#   chardev-null  one with /dev/null's numbers (writes succeed) -> exit 0; still that device
#   fifo          a FIFO with a reader -> exit 0; still a FIFO; the reader got the output
#   symlink       a symlink to a regular file -> exit 0; still a symlink; its target holds
#                 the new output
#   symlink-full  a symlink to the full device -> exit 1; the symlink and the device remain
#   existing      a regular file with old content -> exit 0 replaces it; a run that fails
#                 (bad input, or an earlier output of the same run failing) leaves it whole
# and no temporary file (.NAME.knee-XXXXXX) is left beside any of them.
#
# THE TABLE: one line per output flag, "NAME|ARGS|FILE|BAD". ARGS is the knee command line;
# {OUT} is replaced by the output path (or, when FILE is set, by a directory in which knee
# writes FILE: the node under test is put at {OUT}/FILE), {IN} by a valid interval log,
# {BIN} by a binary request log (its run's JSON, {JSON}, beside it), {URL} by a knee serve
# null on 127.0.0.1, {FRESH} by a directory that does not exist yet. BAD is the same command
# made to fail on its input before it writes ({BADIN} is a malformed interval log, {BADCSV} a
# CSV with a bad cell), or "sibling:NAME": the same command with the output NAME beside FILE
# made a full device, so the run fails there first; empty means the sibling NAME.csv.
# knee run's --json, --out and --hlog are in run_outputs.sh; knee run --repeat --out-dir
# (a directory, refused unless new or empty) has its own cases below the table.
# tier: exact
TABLE='
hlog merge -o|hlog merge {IN} -o {OUT}||hlog merge {BADIN} -o {OUT}
lab --out csv|lab nagle --duration 1s --warmup 0 --quiet --out {OUT}|nagle-closed.csv|
lab --out json|lab nagle --duration 1s --warmup 0 --quiet --out {OUT}|nagle-closed.json|
capacity --json|capacity --rates 100 --reps 1 --step 300ms --warmup 0 --settle 0 --no-cross-check --slo p99<60s --lag-limit 60s {URL} --json {OUT}||capacity --rates 100 --reps 0 --slo p99<1s {URL} --json {OUT}
capacity --html|capacity --rates 100 --reps 1 --step 300ms --warmup 0 --settle 0 --no-cross-check --slo p99<60s --lag-limit 60s {URL} --html {OUT}||capacity --rates 100 --reps 0 --slo p99<1s {URL} --html {OUT}
lab --html|lab nagle --duration 1s --warmup 0 --quiet --out {OUT} --html|nagle.html|sibling:nagle-closed.csv
run --html|run -n 20 -c 2 --threads 1 {URL} --html {OUT}||run -n 20 --rate=-1 {URL} --html {OUT}
run --repeat --html|run -R 100 -d 0.2s --threads 1 --repeat 1 --out-dir {FRESH} {URL} --html {OUT}||run -R 100 -d 0.2s --repeat 1 --settle=-1s --out-dir {FRESH} {URL} --html {OUT}
run --repeat --json|run -R 100 -d 0.2s --threads 1 --repeat 1 --out-dir {FRESH} {URL} --json {OUT}||run -R 100 -d 0.2s --repeat 1 --settle=-1s --out-dir {FRESH} {URL} --json {OUT}
stats --html|stats {BIN} --html {OUT}||stats {BADCSV} --html {OUT}
report -o|report {JSON} {BIN} -o {OUT}||report {BADCSV} -o {OUT}
compare --json|compare {BIN} {BIN} --json {OUT}||compare {BIN} {BADCSV} --json {OUT}
compare --html|compare {BIN} {BIN} --html {OUT}||compare {BIN} {BADCSV} --html {OUT}
'
# root, PORT (a knee serve null), bad and nfail, OUTPUT_CASES, needs_root, knee_words, kind,
# make_output_node, release_reader, no_temp_left
source "$KNEE_SRC/tests/e2e/outputs_common.bash"

# a valid interval log ({IN}) and a malformed one ({BADIN}); a binary log and its JSON ({BIN},
# {JSON}); a CSV with a bad cell ({BADCSV})
"$KNEE" run -R 100 -d 1s --threads 1 --hlog "$TMP/in.hlog" --out "$TMP/in.bin" --json "$TMP/in.json" \
    "http://127.0.0.1:$PORT/" >/dev/null || fail "knee run for {IN}"
printf '#[StartTime: 1700000000.000]\n0.000,1.000,0.000,HISTF*AAAA\n' >"$TMP/bad.hlog"
printf 'server,start_s,latency_ms\nA,0.1,fast\n' >"$TMP/bad.csv"

# run NAME ARGS OUTARG: knee with the placeholders filled; sets rc, leaves stderr in $TMP/err
run_knee() {
    local args=$1 out=$2
    args=${args//\{OUT\}/$out}
    args=${args//\{IN\}/$TMP/in.hlog}
    args=${args//\{BADIN\}/$TMP/bad.hlog}
    args=${args//\{BIN\}/$TMP/in.bin}
    args=${args//\{JSON\}/$TMP/in.json}
    args=${args//\{BADCSV\}/$TMP/bad.csv}
    args=${args//\{URL\}/http://127.0.0.1:$PORT/}
    args=${args//\{FRESH\}/$dir/fresh.$RANDOM$RANDOM}
    knee_words "$args"
}

while IFS='|' read -r name args file badargs; do
    [[ -n $name ]] || continue
    sibling=
    if [[ $badargs == sibling:* ]]; then
        sibling=${badargs#sibling:}
        badargs=
    fi
    for case in $OUTPUT_CASES; do
        needs_root "$case" && continue
        [[ $case == existing-bad && -z $badargs && -z $file ]] && continue
        dir="$TMP/case.$RANDOM$RANDOM"
        mkdir -p "$dir/out"
        if [[ -n $file ]]; then outarg="$dir/out"; node="$dir/out/$file"; else outarg="$dir/out/o"; node="$dir/out/o"; fi
        label="$name [$case]"
        make_output_node "$case" "$node" "$dir"
        before=$(kind "$node")
        if [[ $case == existing-bad ]]; then
            if [[ -n $badargs ]]; then
                run_knee "$badargs" "$outarg"
            else
                # an output of the same run that fails first: the sibling .csv is a full device
                [[ $root == yes ]] || continue
                sib="$dir/out/${sibling:-${file%.*}.csv}"
                [[ $sib != "$node" ]] || continue
                mknod "$sib" c 1 7
                run_knee "$args" "$outarg"
            fi
            [[ $rc -ne 0 ]] || bad "$label: the failing run exited 0"
        else
            run_knee "$args" "$outarg"
        fi
        release_reader "$node"
        after=$(kind "$node")
        [[ $after == "$before" ]] || bad "$label: the node was a $before and is now a $after"
        case $case in
        chardev-full | symlink-full)
            [[ $rc -eq 1 ]] || bad "$label: exit $rc, want 1 ($(cat "$TMP/err"))"
            # one line, beside knee lab's note on where its files are (printed even with --quiet)
            [[ $(grep -vc '^knee lab: per-request CSV and JSON summaries are in ' "$TMP/err") -eq 1 ]] ||
                bad "$label: want one line on stderr: $(cat "$TMP/err")"
            [[ $(grep -oF "$node" "$TMP/err" | wc -l) -eq 1 ]] || bad "$label: stderr does not name $node once: $(cat "$TMP/err")"
            grep -q 'No space left on device' "$TMP/err" || bad "$label: stderr lacks the reason: $(cat "$TMP/err")"
            [[ $case != symlink-full ]] || [[ $(kind "$dir/full") == "chardev 1:7" ]] || bad "$label: the symlink's device changed"
            ;;
        existing-bad)
            [[ $(cat "$node") == OLD ]] || bad "$label: the old content was not kept: $(head -c 200 "$node")"
            ;;
        *)
            # knee capacity's verdict is the machine's to give (a probe that a loaded host cannot
            # deliver makes it INVALID, exit 3), and INVALID writes every output all the same:
            # what is checked here is the output, below
            [[ $rc -eq 0 || ($name == capacity* && $rc -eq 3) ]] || bad "$label: exit $rc, want 0 ($(cat "$TMP/err"))"
            ;;
        esac
        case $case in
        fifo) [[ -s $dir/fifo.got ]] || bad "$label: the FIFO's reader got nothing" ;;
        symlink)
            [[ -f $dir/target ]] || bad "$label: the symlink's target is gone"
            [[ $(cat "$dir/target") != OLD ]] || bad "$label: the symlink's target was not written"
            ;;
        existing) [[ $(cat "$node") != OLD && -s $node ]] || bad "$label: the existing file was not replaced" ;;
        esac
        no_temp_left "$dir/out" "$label"
        [[ $nfail -eq 0 ]] && echo "ok: $label"
    done
done <<<"$TABLE"

# knee run --repeat --out-dir DIR: a new or empty DIR gets rep-K.{bin,hlog,json} and
# repeat.json; a DIR with anything in it, or a DIR that is not a directory (a device, a FIFO,
# a regular file, a symlink to one), is refused with exit 2 before the first request and
# left exactly as it was (there is no full-device case: nothing can be put in DIR first).
REP=(run -R 100 -d 0.2s --threads 1 --repeat 2 "http://127.0.0.1:$PORT/")
outdir() { # outdir LABEL DIR WANT-RC WANT-STDERR
    set +e
    timeout 60 "$KNEE" "${REP[@]}" --out-dir "$2" >"$TMP/stdout" 2>"$TMP/err"
    rc=$?
    set -e
    [[ $rc -eq $3 ]] || bad "--out-dir $1: exit $rc, want $3 ($(cat "$TMP/err"))"
    [[ -z $4 ]] || grep -qF -- "$4" "$TMP/err" || bad "--out-dir $1: stderr lacks '$4': $(cat "$TMP/err")"
    if [[ $3 -ne 0 ]]; then ! grep -q 'requests' "$TMP/stdout" || bad "--out-dir $1: requests sent before refusing"; fi
}
want_reps="rep-1.bin rep-1.hlog rep-1.json rep-2.bin rep-2.hlog rep-2.json repeat.json"
d="$TMP/outdir"
mkdir -p "$d"
outdir new "$d/new" 0 ""
[[ $(cd "$d/new" && echo *) == "$want_reps" ]] || bad "--out-dir new: wrote $(ls -A "$d/new")"
mkdir "$d/empty" "$d/linked"
outdir empty "$d/empty" 0 ""
[[ $(cd "$d/empty" && echo *) == "$want_reps" ]] || bad "--out-dir empty: wrote $(ls -A "$d/empty")"
ln -s "$d/linked" "$d/link"
outdir symlink-to-empty "$d/link" 0 ""
[[ -L $d/link && $(cd "$d/linked" && echo *) == "$want_reps" ]] || bad "--out-dir symlink to an empty dir: $(ls -lA "$d")"
for case in chardev-full fifo symlink existing; do
    [[ $case == chardev-full && $root == no ]] && continue
    for where in inside itself; do
        c="$d/$case.$where"
        mkdir -p "$c"
        if [[ $where == inside ]]; then node="$c/dir/rep-1.json" outarg="$c/dir" want="not empty"; mkdir "$c/dir"
        else node="$c/dir" outarg="$c/dir" want="not a directory"; fi
        make_output_node "$case" "$node" "$c"
        before=$(kind "$node")
        outdir "$case $where" "$outarg" 2 "knee run: --out-dir $outarg: $want"
        if [[ -n $reader ]]; then
            release_reader "$node"
            [[ ! -s $c/fifo.got ]] || bad "--out-dir $case $where: knee wrote into the FIFO"
        fi
        [[ $(kind "$node") == "$before" ]] || bad "--out-dir $case $where: the node was a $before and is now a $(kind "$node")"
        [[ $case != existing ]] || [[ $(cat "$node") == OLD ]] || bad "--out-dir $case $where: the file changed"
        [[ $case != symlink ]] || [[ $(cat "$c/target") == OLD ]] || bad "--out-dir $case $where: the symlink's target changed"
        [[ $where == itself ]] || [[ $(ls -A "$c/dir") == rep-1.json ]] || bad "--out-dir $case $where: DIR now holds $(ls -A "$c/dir")"
        no_temp_left "$c" "--out-dir $case $where"
    done
done
[[ $nfail -eq 0 ]] && echo "ok: run --repeat --out-dir (new, empty, a symlink to one; refused: not empty, not a directory)"

# results on standard output that cannot be written: exit 1 with the reason (not 0, not a crash)
printf 'server,start_s,latency_ms\nA,0.1,3\nA,0.2,4\n' >"$TMP/small.csv"
for cmdline in "stats $TMP/small.csv" "stats $TMP/small.csv --json" "hlog stats $TMP/in.hlog" \
    "hlog show $TMP/in.hlog --all-tags" "hlog tags $TMP/in.hlog" "hlog merge $TMP/in.hlog -o -" \
    "capacity --rates 100 --reps 1 --step 300ms --warmup 0 --settle 0 --no-cross-check --slo p99<60s --lag-limit 60s http://127.0.0.1:$PORT/" \
    "compare $TMP/in.bin $TMP/in.bin --json -"; do
    set +e
    # shellcheck disable=SC2086
    "$KNEE" $cmdline >/dev/full 2>"$TMP/err"
    rc=$?
    set -e
    [[ $rc -eq 1 ]] || bad "knee $cmdline >/dev/full: exit $rc, want 1"
    grep -q 'No space left on device' "$TMP/err" || bad "knee $cmdline >/dev/full: $(cat "$TMP/err")"
done
[[ $nfail -eq 0 ]] && echo "ok: standard output that cannot be written is exit 1"

# /dev/full itself is still the machine's character device (a broken machine is named here)
[[ -c /dev/full ]] || bad "/dev/full is not a character device on this machine (something removed it)"
[[ $nfail -eq 0 ]] || { echo "$nfail failures"; exit 1; }
echo "all outputs kept what knee did not create"
