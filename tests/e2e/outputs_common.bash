# Shared by tests/e2e/outputs_never_destroyed.sh and run_outputs.sh (sourced, not a test
# itself): run_common.bash (temp dir, children always killed, fail), a knee serve null on a
# free port, the output nodes those tests put where knee is asked to write, and their checks'
# helpers. Sets root (yes when this machine lets the test make character devices) and PORT.
source "$KNEE_SRC/tests/e2e/run_common.bash"

root=yes
if ! mknod "$TMP/probe" c 1 3 2>/dev/null; then
    root=no
    echo "note: cannot mknod here (not root): the character-device cases are skipped"
fi
rm -f "$TMP/probe"

start_knee_serve s --preset null --duration 300s
PORT=$PORT_s

nfail=0
bad() { echo "FAIL: $*" >&2; nfail=$((nfail + 1)); }

kind() { # the kind of a node, not following a symlink
    if [[ -L $1 ]]; then echo symlink; elif [[ -c $1 ]]; then echo "chardev $(stat -c '%t:%T' "$1")";
    elif [[ -p $1 ]]; then echo fifo; elif [[ -f $1 ]]; then echo file; elif [[ -e $1 ]]; then echo other; else echo missing; fi
}

# The cases make_output_node makes; needs_root CASE: true when CASE needs a character device
# and this machine cannot make one.
OUTPUT_CASES="chardev-full chardev-null fifo symlink symlink-full existing existing-bad"
needs_root() { [[ $1 == chardev-* || $1 == symlink-full ]] && [[ $root == no ]]; }

# knee_words ARGS: knee with ARGS split into words (bounded: 120 s); sets rc, leaves stdout and
# stderr in $TMP/stdout and $TMP/err.
knee_words() {
    set +e
    # shellcheck disable=SC2086
    timeout 120 "$KNEE" $1 >"$TMP/stdout" 2>"$TMP/err"
    rc=$?
    set -e
}

# make_output_node CASE NODE DIR: puts at NODE what CASE names (the character devices need root),
# with what it needs beside it in DIR; sets reader (the FIFO reader's pid, else empty).
#   chardev-full  a character device with /dev/full's numbers (writes fail: ENOSPC)
#   chardev-null  one with /dev/null's numbers (writes succeed)
#   fifo          a FIFO whose reader copies what it gets to DIR/fifo.got
#   symlink       a symlink to DIR/target, a regular file holding OLD
#   symlink-full  a symlink to DIR/full, a device with /dev/full's numbers
#   existing, existing-bad  a regular file holding OLD
make_output_node() {
    local case=$1 node=$2 dir=$3
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
    *) fail "make_output_node: no case $case" ;;
    esac
}

# release_reader NODE: waits for the FIFO reader make_output_node started (nothing without one).
# A run that failed before opening the FIFO leaves the reader waiting: release it (bounded:
# once the reader is gone, opening the FIFO for writing would block).
release_reader() {
    [[ -n $reader ]] || return 0
    if kill -0 "$reader" 2>/dev/null; then timeout 2 bash -c ': >"$1"' _ "$1" 2>/dev/null || true; fi
    wait "$reader" 2>/dev/null || true
}

# no_temp_left DIR LABEL: no temporary file (.NAME.knee-XXXXXX) is left in DIR.
no_temp_left() {
    local left
    left=$(find "$1" -maxdepth 1 -name '.*.knee-*' 2>/dev/null | head -n 3)
    [[ -z $left ]] || bad "$2: temporary files left behind: $left"
}
