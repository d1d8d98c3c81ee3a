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
# {PORT} by a knee serve null on 127.0.0.1. BAD is the same command made to fail on its
# input before it writes ({BADIN} is a malformed interval log), or empty. knee run's flags
# go here with one line each, e.g.:
#   run --json|run -n 20 -c 2 http://127.0.0.1:{PORT}/ --json {OUT}||run -n 20 --rate=-1 http://127.0.0.1:{PORT}/ --json {OUT}
TABLE='
hlog merge -o|hlog merge {IN} -o {OUT}||hlog merge {BADIN} -o {OUT}
lab --out csv|lab nagle --duration 1s --warmup 0 --quiet --out {OUT}|nagle-closed.csv|
lab --out json|lab nagle --duration 1s --warmup 0 --quiet --out {OUT}|nagle-closed.json|
capacity --json|capacity --rates 100 --reps 1 --step 300ms --warmup 0 --settle 0 --no-cross-check --slo p99<1s http://127.0.0.1:{PORT}/ --json {OUT}||capacity --rates 100 --reps 0 --slo p99<1s http://127.0.0.1:{PORT}/ --json {OUT}
capacity --html|capacity --rates 100 --reps 1 --step 300ms --warmup 0 --settle 0 --no-cross-check --slo p99<1s http://127.0.0.1:{PORT}/ --html {OUT}||capacity --rates 100 --reps 0 --slo p99<1s http://127.0.0.1:{PORT}/ --html {OUT}
'
source "$KNEE_SRC/tests/e2e/run_common.bash"

root=yes
if ! mknod "$TMP/probe" c 1 3 2>/dev/null; then
    root=no
    echo "note: cannot mknod here (not root): the character-device cases are skipped"
fi
rm -f "$TMP/probe"

"$KNEE" serve --preset null --listen 127.0.0.1:0 --duration 300s >"$TMP/serve.out" 2>&1 &
PIDS+=($!)
for i in $(seq 100); do grep -q '^listening on' "$TMP/serve.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/serve.out")
[[ -n "$PORT" ]] || fail "knee serve did not start"

# a valid interval log ({IN}) and a malformed one ({BADIN})
"$KNEE" run -R 100 -d 1s --threads 1 --hlog "$TMP/in.hlog" "http://127.0.0.1:$PORT/" >/dev/null || fail "knee run for {IN}"
printf '#[StartTime: 1700000000.000]\n0.000,1.000,0.000,HISTF*AAAA\n' >"$TMP/bad.hlog"

nfail=0
bad() { echo "FAIL: $*" >&2; nfail=$((nfail + 1)); }

# run NAME ARGS OUTARG: knee with the placeholders filled; sets rc, leaves stderr in $TMP/err
run_knee() {
    local args=$1 out=$2
    args=${args//\{OUT\}/$out}
    args=${args//\{IN\}/$TMP/in.hlog}
    args=${args//\{BADIN\}/$TMP/bad.hlog}
    args=${args//\{PORT\}/$PORT}
    set +e
    # shellcheck disable=SC2086
    timeout 120 "$KNEE" $args >"$TMP/stdout" 2>"$TMP/err"
    rc=$?
    set -e
}

kind() { # the kind of a node, not following a symlink
    if [[ -L $1 ]]; then echo symlink; elif [[ -c $1 ]]; then echo "chardev $(stat -c '%t:%T' "$1")";
    elif [[ -p $1 ]]; then echo fifo; elif [[ -f $1 ]]; then echo file; elif [[ -e $1 ]]; then echo other; else echo missing; fi
}

no_temp_left() {
    local left
    left=$(find "$1" -maxdepth 1 -name '.*.knee-*' 2>/dev/null | head -n 3)
    [[ -z $left ]] || bad "$2: temporary files left behind: $left"
}

while IFS='|' read -r name args file badargs; do
    [[ -n $name ]] || continue
    for case in chardev-full chardev-null fifo symlink symlink-full existing existing-bad; do
        [[ $case == chardev-* || $case == symlink-full ]] && [[ $root == no ]] && continue
        [[ $case == existing-bad && -z $badargs && -z $file ]] && continue
        dir="$TMP/case.$RANDOM$RANDOM"
        mkdir -p "$dir/out"
        if [[ -n $file ]]; then outarg="$dir/out"; node="$dir/out/$file"; else outarg="$dir/out/o"; node="$dir/out/o"; fi
        label="$name [$case]"
        reader=
        case $case in
        chardev-full) mknod "$node" c 1 7 ;;
        chardev-null) mknod "$node" c 1 3 ;;
        fifo)
            mkfifo "$node"
            cat "$node" >"$dir/fifo.got" &
            reader=$!
            ;;
        symlink)
            echo OLD >"$dir/target"
            ln -s "$dir/target" "$node"
            ;;
        symlink-full)
            mknod "$dir/full" c 1 7
            ln -s "$dir/full" "$node"
            ;;
        existing | existing-bad) echo OLD >"$node" ;;
        esac
        before=$(kind "$node")
        if [[ $case == existing-bad ]]; then
            if [[ -n $badargs ]]; then
                run_knee "$badargs" "$outarg"
            else
                # an output of the same run that fails first: the sibling .csv is a full device
                [[ $root == yes ]] || continue
                sib="$dir/out/${file%.*}.csv"
                [[ $sib != "$node" ]] || continue
                mknod "$sib" c 1 7
                run_knee "$args" "$outarg"
            fi
            [[ $rc -ne 0 ]] || bad "$label: the failing run exited 0"
        else
            run_knee "$args" "$outarg"
        fi
        if [[ -n $reader ]]; then
            # a run that failed before opening the FIFO leaves the reader waiting: release it
            # (bounded: once the reader is gone, opening the FIFO for writing would block)
            if kill -0 "$reader" 2>/dev/null; then timeout 2 bash -c ': >"$1"' _ "$node" 2>/dev/null || true; fi
            wait "$reader" 2>/dev/null || true
        fi
        after=$(kind "$node")
        [[ $after == "$before" ]] || bad "$label: the node was a $before and is now a $after"
        case $case in
        chardev-full | symlink-full)
            [[ $rc -eq 1 ]] || bad "$label: exit $rc, want 1 ($(cat "$TMP/err"))"
            [[ $(wc -l <"$TMP/err") -eq 1 ]] || bad "$label: want one line on stderr: $(cat "$TMP/err")"
            grep -qF "$node" "$TMP/err" || bad "$label: stderr does not name $node: $(cat "$TMP/err")"
            grep -q 'No space left on device' "$TMP/err" || bad "$label: stderr lacks the reason: $(cat "$TMP/err")"
            [[ $case != symlink-full ]] || [[ $(kind "$dir/full") == "chardev 1:7" ]] || bad "$label: the symlink's device changed"
            ;;
        existing-bad)
            [[ $(cat "$node") == OLD ]] || bad "$label: the old content was not kept: $(head -c 200 "$node")"
            ;;
        *)
            [[ $rc -eq 0 ]] || bad "$label: exit $rc, want 0 ($(cat "$TMP/err"))"
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

# results on standard output that cannot be written: exit 1 with the reason (not 0, not a crash)
printf 'server,start_s,latency_ms\nA,0.1,3\nA,0.2,4\n' >"$TMP/small.csv"
for cmdline in "stats $TMP/small.csv" "stats $TMP/small.csv --json" "hlog stats $TMP/in.hlog" \
    "hlog show $TMP/in.hlog --all-tags" "hlog tags $TMP/in.hlog" "hlog merge $TMP/in.hlog -o -" \
    "capacity --rates 100 --reps 1 --step 300ms --warmup 0 --settle 0 --no-cross-check --slo p99<1s http://127.0.0.1:$PORT/"; do
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
