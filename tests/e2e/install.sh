#!/usr/bin/env bash
# make install's files, installed from this build into a scratch DESTDIR: the binary runs,
# the man page renders without a roff warning and documents every flag, and the bash and
# zsh completions offer every subcommand and every flag. The flags come from the binary's
# own --help (scripts/helpgen.sh flags), so the check grows with the option tables.
# tier: exact
set -euo pipefail
: "${KNEE:?}" "${KNEE_SRC:?}" "${KNEE_BUILD:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
for tool in groff zsh; do
    command -v $tool >/dev/null || fail "$tool not found (scripts/deps.sh --test installs it)"
done

root=$tmp/root
DESTDIR=$root cmake --install "$KNEE_BUILD" --prefix /usr/local >"$tmp/install.out"
bin=$root/usr/local/bin/knee
man=$root/usr/local/share/man/man1/knee.1.gz
bashc=$root/usr/local/share/bash-completion/completions/knee
zshc=$(find "$root" -name _knee)
for f in "$bin" "$man" "$bashc" "$zshc"; do
    [[ -s $f ]] || fail "make install did not install $f (installed: $(find "$root" -type f | sed "s|$root||" | tr '\n' ' '))"
done
[[ $zshc == */share/zsh/site-functions/_knee || $zshc == */share/zsh/vendor-completions/_knee ]] ||
    fail "zsh completion in a directory zsh does not read: ${zshc#"$root"}"
[[ -x $bin ]] || fail "the installed knee is not executable"
[[ $("$bin" --version) == "$("$KNEE" --version)" ]] || fail "installed knee --version: $("$bin" --version)"
echo "ok: installed $(find "$root" -type f | sed "s|$root||" | tr '\n' ' ')"

sh "$KNEE_SRC/scripts/helpgen.sh" flags "$KNEE" >"$tmp/flags"
nflags=$(wc -l <"$tmp/flags")
[[ $nflags -ge 50 ]] || fail "only $nflags flags read from knee --help"
sh "$KNEE_SRC/scripts/helpgen.sh" commands "$KNEE" >"$tmp/commands"

# The man page: no roff warnings, a section per command, every flag (as \-\-flag in roff).
zcat "$man" >"$tmp/knee.1"
groff -k -man -Tutf8 -ww -z "$tmp/knee.1" 2>"$tmp/groff.err"
[[ ! -s $tmp/groff.err ]] || fail "groff warns about knee.1: $(head -5 "$tmp/groff.err")"
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$tmp/knee.1" >"$tmp/knee.1.txt"
while read -r cmd; do
    [[ $cmd == knee ]] && continue
    grep -qxF ".SS \"$cmd\"" "$tmp/knee.1.txt" || fail "knee.1 has no section for $cmd"
done <"$tmp/commands"
while IFS= read -r line; do
    long=${line#*$'\t'}
    long=${long%%$'\t'*}
    grep -qE -- "(^|[^a-zA-Z0-9-])${long}([^a-zA-Z0-9-]|\$)" "$tmp/knee.1.txt" || fail "knee.1 does not mention $long"
done <"$tmp/flags"
echo "ok: knee.1 renders without warnings and documents $(wc -l <"$tmp/commands") commands and $nflags flags"

# bash: complete "knee CMD --" for each command; every flag of CMD must be offered, and the
# subcommands after "knee", "knee hlog" and "knee model".
cat >"$tmp/complete.bash" <<'EOF'
source "$1"
complete_words() { # complete_words WORD...: the completions of the last word
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _knee
    ((${#COMPREPLY[@]} == 0)) || printf '%s\n' "${COMPREPLY[@]}"
}
while IFS= read -r cmd; do
    read -ra w <<<"$cmd"
    complete_words "${w[@]}" -- >"$2/bash.$(tr ' ' _ <<<"$cmd")"
done <"$2/commands"
complete_words knee "" >"$2/bash.subs"
complete_words knee hlog "" >"$2/bash.subs_hlog"
complete_words knee run -o "" >"$2/bash.value"
EOF
bash "$tmp/complete.bash" "$bashc" "$tmp"
while IFS= read -r line; do
    cmd=${line%%$'\t'*}
    long=${line#*$'\t'}
    long=${long%%$'\t'*}
    grep -qxF -- "$long" "$tmp/bash.$(tr ' ' _ <<<"$cmd")" || fail "bash: '$cmd --<TAB>' does not offer $long"
done <"$tmp/flags"
sed -n 's/^knee \([a-z0-9]*\)$/\1/p' "$tmp/commands" >"$tmp/top" # lab, run, ...
[[ $(wc -l <"$tmp/top") -ge 6 ]] || fail "only $(wc -l <"$tmp/top") commands in knee --help"
while read -r c; do
    grep -qxF "$c" "$tmp/bash.subs" || fail "bash: 'knee <TAB>' does not offer $c"
done <"$tmp/top"
for c in show stats tags merge; do grep -qxF "$c" "$tmp/bash.subs_hlog" || fail "bash: 'knee hlog <TAB>' lacks $c"; done
[[ ! -s $tmp/bash.value ]] || fail "bash: the value of -o is completed with words, not file names: $(cat "$tmp/bash.value")"
echo "ok: bash completion offers every subcommand and all $nflags flags"

# zsh: the completion function with zsh's completion builtins replaced by stubs that print
# what they were given.
zsh -n "$zshc" || fail "zsh cannot parse $zshc"
cat >"$tmp/complete.zsh" <<'EOF'
_describe() { print -rl -- ${(P)${@[-1]}}; }
compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@"; }
_files() { print -r -- '<files>'; }
complete_words() { # complete_words WORD...: what _knee offers for the last word
    words=("$@")
    CURRENT=$#
    PREFIX=${words[CURRENT]}
    source "$ZSHC"
}
while IFS= read -r cmd; do
    complete_words ${=cmd} -- >"$OUT/zsh.${cmd// /_}"
done <"$OUT/commands"
complete_words knee "" >"$OUT/zsh.subs"
complete_words knee run --json "" >"$OUT/zsh.value"
EOF
ZSHC=$zshc OUT=$tmp zsh -f "$tmp/complete.zsh"
while IFS= read -r line; do
    cmd=${line%%$'\t'*}
    long=${line#*$'\t'}
    long=${long%%$'\t'*}
    grep -q -- "^${long}:" "$tmp/zsh.${cmd// /_}" || fail "zsh: '$cmd --<TAB>' does not offer $long"
done <"$tmp/flags"
while read -r c; do
    grep -q "^$c:" "$tmp/zsh.subs" || fail "zsh: 'knee <TAB>' does not offer $c"
done <"$tmp/top"
[[ $(cat "$tmp/zsh.value") == "<files>" ]] || fail "zsh: the value of --json is not completed as a file name"
echo "ok: zsh completion offers every subcommand and all $nflags flags"
echo "1 passed, 0 failed"
