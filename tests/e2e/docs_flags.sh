#!/usr/bin/env bash
# Docs that cannot drift: every flag that the built binary's --help lists, for every command
# and subcommand, appears in docs/REFERENCE.md's section where a user of that command looks
# (the "## knee <command>" section; the flags of `knee` itself anywhere in the page). The
# flags are read from the binary by scripts/helpgen.sh, the same reader that writes the man
# page and the completions, so a new flag without a line in the reference fails here.
# tier: exact
set -euo pipefail
: "${KNEE:?KNEE must name the knee binary}" "${KNEE_SRC:?KNEE_SRC must name the source dir}"
ref=$KNEE_SRC/docs/REFERENCE.md
name=docs/REFERENCE.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sh "$KNEE_SRC/scripts/helpgen.sh" flags "$KNEE" >"$tmp/flags"
[[ $(wc -l <"$tmp/flags") -ge 50 ]] || { echo "FAIL: only $(wc -l <"$tmp/flags") flags read from $KNEE --help" >&2; exit 1; }

# The reference's section of a command: from its "## knee CMD" heading to the next "## ".
section() {
    awk -v h="## knee $1" 'index($0, h) == 1 && substr($0, length(h) + 1, 1) ~ /^(:|$| )/ { on = 1; print; next }
                            on && /^## / { exit } on { print }' "$ref"
}

missing=0 checked=0
# lines "knee CMD<TAB>--long<TAB>-s<TAB>META", where -s and META may be empty
while IFS= read -r line; do
    cmd=${line%%$'\t'*}
    rest=${line#*$'\t'}
    long=${rest%%$'\t'*}
    meta=${rest##*$'\t'}
    top=${cmd#knee}
    top=${top# }
    top=${top%% *}
    if [[ -z $top ]]; then
        text=$(cat "$ref")
        where=$name
    else
        [[ -s $tmp/sec.$top ]] || section "$top" >"$tmp/sec.$top"
        [[ -s $tmp/sec.$top ]] || { echo "FAIL: $name has no '## knee $top' section" >&2; exit 1; }
        text=$(cat "$tmp/sec.$top")
        where="$name's '## knee $top' section"
    fi
    [[ $long == --help ]] && text=$(cat "$ref") where=$name # every command takes it
    checked=$((checked + 1))
    # the flag as a word of its own: --rate must not be found inside --rates
    if ! grep -qE -- "(^|[^a-zA-Z0-9-])${long}([^a-zA-Z0-9-]|\$)" <<<"$text"; then
        echo "FAIL: $cmd $long${meta:+ $meta} ($cmd --help) is not in $where" >&2
        missing=$((missing + 1))
    fi
done <"$tmp/flags"
if ((missing)); then
    echo "$missing of $checked flags undocumented: add them to $name where a user of the command looks" >&2
    exit 1
fi
echo "ok: all $checked flags of $(cut -f1 "$tmp/flags" | sort -u | wc -l) commands are in $name"
echo "1 passed, 0 failed"
