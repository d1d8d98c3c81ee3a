#!/usr/bin/env bash
# Outputs never replace inputs: every command that reads files and writes one refuses an
# output that is one of its inputs — by device and inode, so "./x", a symlink, a hard link and a
# directory's files count — and two outputs onto one file (exit 2, one line, the inputs byte for
# byte as they were, no temporary file left). Devices such as /dev/null stay allowed twice.
# Also: knee run --repeat's write errors name the path once.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s --preset null
U="http://127.0.0.1:$PORT_s/"
D=$TMP/d
mkdir "$D"
cd "$D"

# the inputs: one run's outputs, two shards' outputs, two --repeat directories, a body
"$KNEE" run -n 40 -c 2 -t 1 --json run.json --out run.bin --hlog run.hlog "$U" >/dev/null
"$KNEE" run -n 40 -c 2 -t 1 --out run.csv "$U" >/dev/null
for i in 0 1; do
    "$KNEE" run -n 40 -c 2 -t 1 --shard "$i/2" --json "s$i.json" --out "s$i.bin" --hlog "s$i.hlog" "$U" >/dev/null 2>&1
done
mkdir shards && cp s0.* s1.* shards/
"$KNEE" run -n 30 -c 2 -t 1 --repeat 1 --out-dir before "$U" >/dev/null 2>&1
"$KNEE" run -n 30 -c 2 -t 1 --repeat 1 --out-dir after "$U" >/dev/null 2>&1
echo 'a body' >body.txt
ln -s run.hlog link.hlog
ln run.hlog hard.hlog
find . -type f | sort | xargs sha256sum >"$TMP/before.sum"

# refused PATTERN ARGS...: exit 2, one line with PATTERN, every input unchanged, no temporary file
refused() {
    local pattern=$1
    shift
    run_knee "$@" >"$TMP/out" 2>"$TMP/err"
    [[ $RC -eq 2 ]] || { cat "$TMP/err"; fail "exit $RC, not 2, for: knee $*"; }
    [[ $(wc -l <"$TMP/err") -eq 1 ]] || { cat "$TMP/err"; fail "more than one line for: knee $*"; }
    grep -qF -- "$pattern" "$TMP/err" || { cat "$TMP/err"; fail "no '$pattern' for: knee $*"; }
    find . -type f | sort | xargs sha256sum | diff "$TMP/before.sum" - >&2 || fail "an input changed: knee $*"
    [[ -z $(find . -name '.*.knee-*') ]] || fail "a temporary file left: knee $*"
    echo "ok: knee $*: $(cat "$TMP/err")"
}

# knee merge: --json, -o, --hlog onto a shard's file (by another name, in a directory), two outputs
refused 'knee merge: --json s0.json: is also an input' merge s0.json s1.json --json s0.json
refused 'knee merge: -o ./s1.bin: is also an input' merge s0.json s1.json s0.bin s1.bin -o ./s1.bin
refused 'knee merge: --hlog s0.hlog: is also an input' merge s0.hlog s1.hlog --hlog s0.hlog
refused 'knee merge: --json shards/s1.json: is also an input' merge shards --json shards/s1.json
refused 'knee merge: -o m.out: is also the --json output' merge s0.json s1.json s0.bin s1.bin --json m.out -o m.out
# knee stats --html onto its input
refused 'knee stats: --html run.csv: is also an input' stats --html run.csv run.csv
# knee compare --json / --html into its inputs: a directory's file, a log's STEM.json beside it
refused 'knee compare: --json before/rep-1.json: is also an input' compare before after --json before/rep-1.json
refused 'knee compare: --html after/repeat.json: is also an input' compare before after --html after/repeat.json
refused 'knee compare: --json before/rep-1.json: is also an input (--before)' \
    compare --before before/rep-1.bin --after after/rep-1.bin --json before/rep-1.json
refused 'knee compare: --html ./c.out: is also the --json output' compare before after --json c.out --html ./c.out
# knee report and knee hlog merge, as before, and through a symlink and a hard link
refused 'knee report: -o run.json: is also an input' report run.json -o run.json
refused 'knee report: -o before/rep-1.hlog: is also an input' report before -o before/rep-1.hlog
refused 'knee report: -o run.bin: is also an input (--run)' report --run a=run.json,run.bin -o run.bin
refused 'knee hlog merge: -o link.hlog: is also an input' hlog merge run.hlog -o link.hlog
refused 'knee hlog merge: -o hard.hlog: is also an input' hlog merge run.hlog -o hard.hlog
# knee run: two outputs onto one file, an output onto a file a flag reads
refused 'knee run: --out ./x.json: is also the --json output' run -n 5 --json x.json --out ./x.json "$U"
refused 'knee run: --html x.out: is also the --hlog output' run -n 5 --hlog x.out --html x.out "$U"
refused 'knee run: --json body.txt: is also an input (--body)' run -n 5 -m POST --body @body.txt --json body.txt "$U"
refused 'knee run: --json body.txt: is also an input (--body)' run -n 5 --repeat 2 --out-dir r -m PUT --body @body.txt \
    --json body.txt "$U"
[[ ! -e x.json && ! -e x.out && ! -e r ]] || fail "a refused run created an output"
refused 'knee capacity: --json body.txt: is also an input (--body)' capacity --rates 100 --slo 'p99<1s' -m PUT \
    --body @body.txt --json body.txt "$U"

# allowed: new files, and devices written in place twice
run_knee merge s0.json s1.json s0.bin s1.bin --json m.json -o m.bin >/dev/null 2>"$TMP/err"
[[ $RC -eq 0 && -s m.json && -s m.bin ]] || { cat "$TMP/err"; fail "knee merge into new files: exit $RC"; }
run_knee run -n 5 --json /dev/null --out /dev/null --hlog /dev/null "$U" >/dev/null 2>"$TMP/err"
[[ $RC -eq 0 ]] || { cat "$TMP/err"; fail "knee run with /dev/null three times: exit $RC"; }
run_knee compare before after --json - --html after/cmp.html >/dev/null 2>"$TMP/err"
[[ $RC -eq 0 && -s after/cmp.html ]] || { cat "$TMP/err"; fail "knee compare --html into a side's directory: exit $RC"; }
echo "ok: new files and devices are written"

# knee run --repeat: a file it cannot write is named once (outfile's reason names the path)
run_knee run -R 20 -d 2s -t 1 --repeat 1 --out-dir rep "$U" >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 200); do [[ -d rep ]] && break; sleep 0.05; done
mkdir -p rep/rep-1.json rep/repeat.json # directories where the JSON files go: refused when written
wait "$pid" || true
grep -qF "knee run: rep/rep-1.json: is a directory" "$TMP/err" || { cat "$TMP/err"; fail "--repeat: rep-1.json's error"; }
grep -qF "knee run: rep/repeat.json: is a directory" "$TMP/err" || { cat "$TMP/err"; fail "--repeat: repeat.json's error"; }
if grep -q 'rep-1.json.*rep-1.json\|repeat.json.*repeat.json' "$TMP/err"; then
    cat "$TMP/err"
    fail "--repeat: a path named twice"
fi
echo "ok: --repeat's write errors name the path once"
