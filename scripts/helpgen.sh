#!/bin/sh
# Generates what must never drift from knee's --help texts, by running the built binary:
#   scripts/helpgen.sh man   KNEE [OUT]   the man page knee.1: every command, subcommand, flag
#   scripts/helpgen.sh bash  KNEE [OUT]   bash completion: subcommands, flags, lab's experiments and
#                                         the words a flag takes (presets, --io, --arrivals, ...)
#   scripts/helpgen.sh zsh   KNEE [OUT]   zsh completion (#compdef knee), the same with descriptions
#   scripts/helpgen.sh flags KNEE [OUT]   one line per flag: "knee CMD<TAB>--long<TAB>-s<TAB>META"
#                                         (tests/e2e/docs_flags.sh checks each is in docs/REFERENCE.md)
#   scripts/helpgen.sh commands KNEE [OUT]  one line per command: "knee", "knee run", "knee hlog show"...
# Output goes to stdout, or to OUT (replaced only when the whole output was generated).
# The help texts come from src/cli's option tables (src/cli/opt.c prints them), so their
# layout is regular: a section header alone on a line ("options:", "commands:"), options as
# "  -s, --long META   help" or "      --long META   help" (help on the next line, indented,
# when META is long), subcommands as "  name   help" under "commands:" or "calculators:". The
# words a flag takes come from `knee --list-values` (hidden; lines "CMD<TAB>--flag<TAB>word ...",
# printed from the tables that define the words), read after the help texts under "@@values".
# POSIX sh and awk only (mawk is enough): the build needs nothing beyond the compiler.
set -eu
[ $# -eq 2 ] || [ $# -eq 3 ] || {
    echo "usage: $0 man|bash|zsh|flags|commands KNEE [OUT]" >&2
    exit 2
}
mode=$1
knee=$2
out=${3:-}
if [ -n "$out" ]; then
    sh "$0" "$mode" "$knee" >"$out.tmp" || {
        rm -f "$out.tmp"
        exit 1
    }
    exec mv "$out.tmp" "$out"
fi
case $mode in man | bash | zsh | flags | commands) ;; *)
    echo "$0: unknown mode '$mode'" >&2
    exit 2
    ;;
esac

# The subcommands a command's help lists (none for a command with options only).
subs() {
    # shellcheck disable=SC2086  # $1 is a command path: "" or "hlog", split on purpose
    "$knee" $1 --help | awk '/^(commands|calculators):$/ { on = 1; next } /^$/ || /^[^ ]/ { on = 0 } on && /^  [a-z0-9]/ { print $1 }'
}

# Every help text, each after a line "@@ PATH" (PATH empty for `knee --help`).
dump() {
    echo "@@ "
    "$knee" --help
    for c in $(subs ""); do
        echo "@@ $c"
        "$knee" "$c" --help
        for s in $(subs "$c"); do
            echo "@@ $c $s"
            "$knee" "$c" "$s" --help
        done
    done
    echo "@@values"
    "$knee" --list-values
}

version=$("$knee" --version | awk '{ print $NF; exit }')
help=$(dump)

printf '%s\n' "$help" | awk -v mode="$mode" -v version="$version" '
function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
# roff: backslashes, hyphens (so flags copy and paste as ASCII) and a leading dot or quote
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.\047]/) s = "\\&" s
    return s
}
# a single-quoted shell word
function sq(s) { gsub(/\047/, "\047\\\047\047", s); return "\047" s "\047" }

# Parse an option line into o_short, o_long, o_meta, o_help (o_help empty: on the next line).
function parse_opt(line,    spec, rest, i) {
    o_short = ""; o_long = ""; o_meta = ""; o_help = ""
    line = substr(line, 3)
    if (line ~ /^-[^-], /) { o_short = substr(line, 1, 2); line = substr(line, 5) }
    sub(/^ +/, "", line)
    i = index(line, "  ")
    if (i) { spec = substr(line, 1, i - 1); o_help = trim(substr(line, i)) } else spec = trim(line)
    i = index(spec, " ")
    if (i) { o_long = substr(spec, 1, i - 1); o_meta = substr(spec, i + 1) } else o_long = spec
}

function add_opt(p) {
    nopt[p]++
    OL[p, nopt[p]] = o_long; OS[p, nopt[p]] = o_short; OM[p, nopt[p]] = o_meta; OH[p, nopt[p]] = o_help
}

# ---- read every help text into arrays: per path its lines, options, subcommands, words
/^@@values$/ { invalues = 1; next }
invalues {
    n = split($0, vs, "\t")
    if (n == 3 && vs[2] != "") { VAL[vs[1], vs[2]] = vs[3]; nval++; VK[nval] = vs[1] SUBSEP vs[2] }
    next
}
/^@@ / {
    p = substr($0, 4); np++; P[np] = p; nl[p] = 0; sec = ""; pend = 0; inusage = 0
    next
}
{
    nl[p]++; L[p, nl[p]] = $0
    inusage = $0 ~ /^usage: / || (inusage && $0 ~ /^       knee /)
    if (inusage) {
        # words a usage line offers as alternatives: [a|b|c] or <a|b|c>
        u = $0
        while (match(u, /[[<][a-z0-9]+(\|[a-z0-9]+)+[]>]/)) {
            w = substr(u, RSTART + 1, RLENGTH - 2); u = substr(u, RSTART + RLENGTH)
            n = split(w, ws, "|")
            for (k = 1; k <= n; k++) if (!((p, ws[k]) in isword)) { isword[p, ws[k]] = 1; WORDS[p] = WORDS[p] " " ws[k] }
        }
        # flags named in the usage lines (knee --version)
        u = $0
        while (match(u, /--[a-z][a-z0-9-]*/)) {
            w = substr(u, RSTART, RLENGTH); u = substr(u, RSTART + RLENGTH)
            if (!((p, w) in hasopt)) { hasopt[p, w] = 1; o_long = w; o_short = ""; o_meta = ""; o_help = trim($0); sub(/^usage: /, "", o_help); add_opt(p) }
        }
    }
    if ($0 == "") { if (sec == "options") sec = ""; next }
    if ($0 ~ /^[a-z][a-z ]*:$/) { sec = substr($0, 1, length($0) - 1); next }
    if ($0 ~ /^[^ ]/) { sec = ""; next }
    if (sec == "options") {
        if (pend && $0 ~ /^                              [^ ]/) { OH[p, nopt[p]] = trim($0); pend = 0; next }
        if ($0 ~ /^  (-[^ -], )?--[a-z]/ || $0 ~ /^      --[a-z]/) {
            parse_opt($0)
            if ((p, o_long) in hasopt) {
                for (k = 1; k <= nopt[p]; k++) if (OL[p, k] == o_long) { OS[p, k] = o_short; OM[p, k] = o_meta; OH[p, k] = o_help }
            } else { hasopt[p, o_long] = 1; add_opt(p) }
            pend = (o_help == "")
        }
    } else if (sec == "commands" || sec == "calculators") {
        if ($0 ~ /^  [a-z0-9]/) {
            n = split(trim($0), ws, " ")
            s = ws[1]; h = trim(substr(trim($0), length(s) + 1))
            nsub[p]++; SN[p, nsub[p]] = s; SH[p, nsub[p]] = h
        }
    }
}

# ---- output
function opt_words(p,    k, s) {
    s = ""
    for (k = 1; k <= nopt[p]; k++) { s = s " " OL[p, k]; if (OS[p, k] != "") s = s " " OS[p, k] }
    return trim(s)
}
function val_words(p,    k, s) {
    s = ""
    for (k = 1; k <= nopt[p]; k++) if (OM[p, k] != "") { s = s " " OL[p, k]; if (OS[p, k] != "") s = s " " OS[p, k] }
    return trim(s)
}
function sub_words(p,    k, s) {
    s = ""
    for (k = 1; k <= nsub[p]; k++) s = s " " SN[p, k]
    return trim(s)
}

# the alternatives of the usage line that are not subcommands (the lab experiments)
function extra_words(p,    n, ws, k, j, s, dup) {
    s = ""
    n = split(trim(WORDS[p]), ws, " ")
    for (k = 1; k <= n; k++) {
        dup = 0
        for (j = 1; j <= nsub[p]; j++) if (SN[p, j] == ws[k]) dup = 1
        if (!dup) s = s " " ws[k]
    }
    return trim(s)
}

function do_flags(    i, p, k) {
    for (i = 1; i <= np; i++) {
        p = P[i]
        for (k = 1; k <= nopt[p]; k++) printf "%s\t%s\t%s\t%s\n", trim("knee " p), OL[p, k], OS[p, k], OM[p, k]
    }
}

function do_bash(    i, p, extra, k, kk) {
    print "# bash completion for knee: its subcommands and their flags."
    print "# Generated from the --help texts by scripts/helpgen.sh; do not edit."
    print ""
    print "# _knee_spec PATH: the subcommands, extra words, flags and flags that take a value of"
    print "# the command PATH (\"\", \"run\", \"hlog show\", ...)."
    print "_knee_spec()"
    print "{"
    print "    case $1 in"
    for (i = 1; i <= np; i++) {
        p = P[i]
        extra = extra_words(p)
        printf "    %s)\n", sq(p)
        printf "        _knee_subs=%s\n", sq(sub_words(p))
        printf "        _knee_words=%s\n", sq(extra)
        printf "        _knee_opts=%s\n", sq(opt_words(p))
        printf "        _knee_vals=%s\n", sq(val_words(p))
        print "        ;;"
    }
    print "    *)"
    print "        _knee_subs= _knee_words= _knee_opts= _knee_vals="
    print "        ;;"
    print "    esac"
    print "}"
    print ""
    print "# _knee_values PATH FLAG: the words the flag takes (none: a file name or free text)."
    print "_knee_values()"
    print "{"
    print "    case \"$1 $2\" in"
    for (k = 1; k <= nval; k++) {
        split(VK[k], kk, SUBSEP)
        printf "    %s) echo %s ;;\n", sq(kk[1] " " kk[2]), sq(VAL[kk[1], kk[2]])
    }
    print "    esac"
    print "}"
    print ""
    print "_knee()"
    print "{"
    print "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd=\"\" w i"
    print "    local _knee_subs _knee_words _knee_opts _knee_vals"
    print "    for ((i = 1; i < COMP_CWORD; i++)); do"
    print "        w=${COMP_WORDS[i]}"
    print "        _knee_spec \"$cmd\""
    print "        [[ \" $_knee_subs \" == *\" $w \"* ]] && cmd=${cmd:+$cmd }$w"
    print "    done"
    print "    _knee_spec \"$cmd\""
    print "    COMPREPLY=()"
    print "    # the value of a flag: its words, else the default completion (file names)"
    print "    if [[ $prev == -* && \" $_knee_vals \" == *\" $prev \"* ]]; then"
    print "        w=$(_knee_values \"$cmd\" \"$prev\")"
    print "        [[ -n $w ]] && mapfile -t COMPREPLY < <(compgen -W \"$w\" -- \"$cur\")"
    print "        return 0"
    print "    fi"
    print "    if [[ $cur == -* ]]; then"
    print "        mapfile -t COMPREPLY < <(compgen -W \"$_knee_opts\" -- \"$cur\")"
    print "    else"
    print "        mapfile -t COMPREPLY < <(compgen -W \"$_knee_subs $_knee_words\" -- \"$cur\")"
    print "    fi"
    print "}"
    print "complete -o default -F _knee knee"
}

function zdesc(name, h) { gsub(/:/, "\\:", name); return sq(name ":" h) }
function do_zsh(    i, p, k, kk) {
    print "#compdef knee"
    print "# zsh completion for knee: its subcommands and their flags, with their help lines."
    print "# Generated from the --help texts by scripts/helpgen.sh; do not edit."
    print ""
    print "_knee_spec() {"
    print "  case $1 in"
    for (i = 1; i <= np; i++) {
        p = P[i]
        printf "  %s)\n", sq(p)
        printf "    knee_subn=(%s)\n", sub_words(p)
        printf "    knee_subs=("
        for (k = 1; k <= nsub[p]; k++) printf " %s", zdesc(SN[p, k], SH[p, k])
        print " )"
        printf "    knee_words=(%s)\n", extra_words(p)
        printf "    knee_opts=("
        for (k = 1; k <= nopt[p]; k++) {
            printf " %s", zdesc(OL[p, k], OH[p, k])
            if (OS[p, k] != "") printf " %s", zdesc(OS[p, k], OH[p, k])
        }
        print " )"
        printf "    knee_vals=(%s)\n", val_words(p)
        print "    ;;"
    }
    print "  *)"
    print "    knee_subn=() knee_subs=() knee_words=() knee_opts=() knee_vals=()"
    print "    ;;"
    print "  esac"
    print "}"
    print ""
    print "_knee_values() {"
    print "  case \"$1 $2\" in"
    for (k = 1; k <= nval; k++) {
        split(VK[k], kk, SUBSEP)
        printf "  %s) knee_valw=(%s) ;;\n", sq(kk[1] " " kk[2]), VAL[kk[1], kk[2]]
    }
    print "  *) knee_valw=() ;;"
    print "  esac"
    print "}"
    print ""
    print "_knee() {"
    print "  local cmd=\"\" w i"
    print "  local -a knee_valw"
    print "  local -a knee_subn knee_subs knee_words knee_opts knee_vals"
    print "  for ((i = 2; i < CURRENT; i++)); do"
    print "    w=${words[i]}"
    print "    _knee_spec \"$cmd\""
    print "    (( ${knee_subn[(Ie)$w]} )) && cmd=${cmd:+$cmd }$w"
    print "  done"
    print "  _knee_spec \"$cmd\""
    print "  if (( CURRENT > 2 )) && (( ${knee_vals[(Ie)${words[CURRENT-1]}]} )); then"
    print "    _knee_values \"$cmd\" \"${words[CURRENT-1]}\""
    print "    if (( ${#knee_valw} )); then compadd -- $knee_valw; else _files; fi"
    print "  elif [[ $PREFIX == -* ]]; then"
    print "    _describe -t options option knee_opts"
    print "  else"
    print "    (( ${#knee_subs} )) && _describe -t commands command knee_subs"
    print "    (( ${#knee_words} )) && compadd -- $knee_words"
    print "    _files"
    print "  fi"
    print "}"
    print ""
    print "_knee \"$@\""
}

# ---- the man page
# st: what was printed last: "" (nothing yet), "hdr" (a section header), "pp" (filled
# text), "tp" (an indented entry), "nf" (inside a no-fill block)
function nf_on() {
    if (st == "nf") { if (blank) print ".sp"; blank = 0; return }
    if (st != "hdr") print ".PP"
    print ".nf"; st = "nf"; blank = 0
}
function nf_off() { if (st == "nf") print ".fi"; st = "" }
function tp(head, h) { nf_off(); print ".TP"; print head; print esc(h); st = "tp" }
function opt_head(p, k,    s) {
    s = ""
    if (OS[p, k] != "") s = "\\fB" esc(OS[p, k]) "\\fR, "
    s = s "\\fB" esc(OL[p, k]) "\\fR"
    if (OM[p, k] != "") s = s " \\fI" esc(OM[p, k]) "\\fR"
    return s
}
# One help text as the body of a section: usage, summary, then its sections in order.
function man_block(p,    i, line, k, ks, phase, sec, u) {
    st = ""; blank = 0; phase = "usage"; sec = ""; ks = 0
    for (i = 1; i <= nl[p]; i++) {
        line = L[p, i]
        if (phase == "usage") {
            if (line == "") { nf_off(); phase = "summary"; continue }
            u = trim(line); sub(/^usage: /, "", u)
            nf_on(); print "\\fB" esc(u) "\\fR"
            continue
        }
        if (phase == "summary") {
            if (line == "") { if (st == "pp") phase = "rest"; continue }
            if (line !~ /^[a-z][a-z ]*:$/) { if (st != "pp") print ".PP"; st = "pp"; print esc(line); continue }
            phase = "rest"
        }
        if (line ~ /^[a-z][a-z ]*:$/) {
            nf_off(); sec = substr(line, 1, length(line) - 1)
            print ".PP"; print "\\fB" esc(sec) ":\\fR"; st = "hdr"
            continue
        }
        if (line == "") { blank = 1; if (sec == "options") sec = ""; continue }
        if (line ~ /^[^ ]/) sec = ""
        if (sec == "options" && (line ~ /^  (-[^ -], )?--[a-z]/ || line ~ /^      --[a-z]/)) {
            parse_opt(line)
            for (k = 1; k <= nopt[p]; k++) if (OL[p, k] == o_long) break
            tp(opt_head(p, k), OH[p, k])
            continue
        }
        if (sec == "options" && line ~ /^                              [^ ]/) continue # help of a long flag
        if ((sec == "commands" || sec == "calculators") && line ~ /^  [a-z0-9]/) {
            ks++; tp("\\fB" esc(SN[p, ks]) "\\fR", SH[p, ks])
            continue
        }
        if (st == "pp" || st == "tp") nf_off()
        nf_on(); print esc(line)
    }
    nf_off()
}
function do_man(    i, p, name, line) {
    for (i = 1; i <= nl[""]; i++) {
        line = L["", i]
        if (line ~ /^knee +— /) { name = substr(line, index(line, "— ") + length("— ")); break }
    }
    print ".\\\" knee(1): generated from the --help texts by scripts/helpgen.sh; do not edit."
    printf ".TH KNEE 1 \"\" \"knee %s\" \"User Commands\"\n", version
    print ".SH NAME"
    print "knee \\- " esc(name)
    print ".SH SYNOPSIS"
    print ".nf"
    for (i = 1; i <= nl[""]; i++) {
        line = L["", i]
        if (line ~ /^usage: +knee/ || (insyn && line ~ /^ +knee/)) { sub(/^(usage:)? +/, "", line); print "\\fB" esc(line) "\\fR"; insyn = 1 }
        else if (insyn) break
    }
    print ".fi"
    print ".SH DESCRIPTION"
    print "knee is " esc(name) "."
    print "Each command prints its own help with"
    print ".BR \"knee \\fIcommand\\fP \\-\\-help\" ;"
    print "this page collects them all."
    for (k = 1; k <= nsub[""]; k++) { print ".TP"; print "\\fB" esc(SN["", k]) "\\fR"; print esc(SH["", k]) }
    print ".SH COMMANDS"
    for (i = 2; i <= np; i++) {
        p = P[i]
        printf ".SS \"knee %s\"\n", esc(p)
        man_block(p)
    }
    print ".SH \"EXIT STATUS\""
    for (i = 1; i <= nl[""]; i++) {
        line = L["", i]
        if (line ~ /^exit codes: /) { sub(/^exit codes: /, "", line); print esc(line) "." }
    }
    print ".SH \"SEE ALSO\""
    print "docs/REFERENCE.md of the knee sources: every command and flag with real output;"
    print "README.md is the short tour, and docs/ holds the measurements, the formats of every"
    print "file knee reads or writes, and how each number is computed."
}

END {
    if (np < 2 || nsub[""] == 0) { print "helpgen.sh: no commands found in the help texts" > "/dev/stderr"; exit 1 }
    if (mode == "flags") do_flags()
    else if (mode == "commands") for (i = 1; i <= np; i++) print trim("knee " P[i])
    else if (mode == "bash") do_bash()
    else if (mode == "zsh") do_zsh()
    else do_man()
}
'
