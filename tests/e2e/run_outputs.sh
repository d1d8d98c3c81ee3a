#!/usr/bin/env bash
# Outputs never destroyed, and errors that name them, for knee run's outputs (--json FILE, --json -, --hlog, --out binary and CSV,
# the summary on stdout): knee never removes or replaces a path it did not create, and an
# output that was asked for and not written is exit 1 with one line naming the path and the
# reason. For every output flag, in a temporary directory (never the machine's own /dev):
#   chardev-full  a character device with /dev/full's numbers (writes fail: ENOSPC)
#                 -> exit 1, one line on stderr naming the path and the reason; still that device
#   chardev-null  one with /dev/null's numbers -> exit 0; still that device
#   fifo          a FIFO with a reader -> exit 0; still a FIFO; the reader got the output
#   symlink       a symlink to a regular file -> exit 0; still a symlink; its target holds the
#                 new output
#   symlink-full  a symlink to the full device -> exit 1; the symlink and the device remain
#   existing      a regular file with old content -> exit 0 replaces it (wrk/k6/vegeta habit)
#   existing-bad  the same, and the run fails after the outputs were opened (a target that
#                 does not resolve: exit 2) -> the old content is whole
# and no temporary file (.NAME.knee-XXXXXX) is left beside any of them.
# (The same harness as tests/e2e/outputs_never_destroyed.sh for the other commands; these
# rows can move into its table.)
#
# THE TABLE: "NAME|ARGS|NODE|BAD": ARGS is the knee command line, {OUT} the node under test
# (named NODE in its directory), {PORT} a knee serve null on 127.0.0.1; BAD the same command
# made to fail after opening its outputs.
# tier: exact
TABLE='
run --json|run -n 20 -c 2 http://127.0.0.1:{PORT}/ --json {OUT}|o.json|run -n 20 -c 2 http://knee-no-such-host.invalid/ --json {OUT}
run --hlog|run -n 20 -c 2 http://127.0.0.1:{PORT}/ --hlog {OUT}|o.hlog|run -n 20 -c 2 http://knee-no-such-host.invalid/ --hlog {OUT}
run --out binary|run -n 20 -c 2 http://127.0.0.1:{PORT}/ --out {OUT}|o.bin|run -n 20 -c 2 http://knee-no-such-host.invalid/ --out {OUT}
run --out csv|run -R 50 -d 400ms http://127.0.0.1:{PORT}/ --out {OUT}|o.csv|run -R 50 -d 400ms http://knee-no-such-host.invalid/ --out {OUT}
'
# root, PORT (a knee serve null), bad and nfail, OUTPUT_CASES, needs_root, knee_words, kind,
# make_output_node, release_reader, no_temp_left
source "$KNEE_SRC/tests/e2e/outputs_common.bash"

# knee with the placeholders filled; sets rc, leaves stdout and stderr in $TMP
run_args() {
    local args=$1 out=$2
    args=${args//\{OUT\}/$out}
    args=${args//\{PORT\}/$PORT}
    knee_words "$args"
}

while IFS='|' read -r name args file badargs; do
    [[ -n $name ]] || continue
    for case in $OUTPUT_CASES; do
        needs_root "$case" && continue
        dir="$TMP/case.$RANDOM$RANDOM"
        mkdir -p "$dir/out"
        node="$dir/out/$file"
        label="$name [$case]"
        make_output_node "$case" "$node" "$dir"
        before=$(kind "$node")
        if [[ $case == existing-bad ]]; then
            run_args "$badargs" "$node"
            [[ $rc -eq 2 ]] || bad "$label: the failing run exited $rc, want 2 ($(cat "$TMP/err"))"
        else
            run_args "$args" "$node"
        fi
        release_reader "$node"
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
            cmp -s "$node" <(echo OLD) || bad "$label: the old content was not kept"
            ;;
        *)
            [[ $rc -eq 0 ]] || bad "$label: exit $rc, want 0 ($(cat "$TMP/err"))"
            ;;
        esac
        case $case in
        fifo) [[ -s $dir/fifo.got ]] || bad "$label: the FIFO's reader got nothing" ;;
        symlink)
            [[ -f $dir/target ]] || bad "$label: the symlink's target is gone"
            ! cmp -s "$dir/target" <(echo OLD) || bad "$label: the symlink's target was not written"
            ;;
        existing) ! cmp -s "$node" <(echo OLD) && [[ -s $node ]] || bad "$label: the existing file was not replaced" ;;
        esac
        no_temp_left "$dir/out" "$label"
        no_temp_left "$dir" "$label"
        [[ $nfail -eq 0 ]] && echo "ok: $label"
    done
done <<<"$TABLE"

# standard output: --json - and the summary itself, when stdout cannot be written, are exit 1
# with the reason; the device stays a device. A FIFO reader gets the JSON.
if [[ $root == yes ]]; then
    mknod "$TMP/full" c 1 7
    for cmdline in "run -n 20 -c 2 http://127.0.0.1:$PORT/ --json -" "run -n 20 -c 2 http://127.0.0.1:$PORT/"; do
        set +e
        # shellcheck disable=SC2086
        "$KNEE" $cmdline >"$TMP/full" 2>"$TMP/err"
        rc=$?
        set -e
        [[ $rc -eq 1 ]] || bad "knee $cmdline >full: exit $rc, want 1 ($(cat "$TMP/err"))"
        grep -q 'standard output: No space left on device' "$TMP/err" || bad "knee $cmdline >full: $(cat "$TMP/err")"
        [[ $(kind "$TMP/full") == "chardev 1:7" ]] || bad "knee $cmdline >full: the device changed"
    done
    [[ $nfail -eq 0 ]] && echo "ok: standard output that cannot be written is exit 1"
fi
mkfifo "$TMP/pipe"
cat "$TMP/pipe" >"$TMP/pipe.got" &
reader=$!
"$KNEE" run -n 20 -c 2 "http://127.0.0.1:$PORT/" --json - >"$TMP/pipe" 2>/dev/null || bad "--json - into a FIFO: exit $?"
wait "$reader"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"] == "knee-run/2"' "$TMP/pipe.got" ||
    bad "--json - into a FIFO: the reader did not get the JSON"
[[ -p $TMP/pipe ]] || bad "the FIFO is no longer a FIFO"

[[ -c /dev/full ]] || bad "/dev/full is not a character device on this machine (something removed it)"
[[ $nfail -eq 0 ]] || { echo "$nfail failures"; exit 1; }
echo "1 passed, 0 failed"
