#!/usr/bin/env bash
# knee stats on bad input: every case exits 2 with one line on stderr naming the file and,
# for text, the line (for a binary log, the record); never a crash, never output on stdout.
# tier: exact
set -euo pipefail
KNEE=${KNEE:-$PWD/build/knee}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

# expect_bad NAME "expected stderr substring" [knee stats args...] ; the file is $work/NAME
expect_bad() {
  local want=$1; shift
  local out err rc=0
  out=$("$KNEE" stats "$@" 2>"$work/err") || rc=$?
  err=$(cat "$work/err")
  if [[ $rc -ne 2 ]]; then
    echo "FAIL ($*): exit $rc, want 2; stderr: $err"; fails=$((fails + 1)); return
  fi
  if [[ $(printf '%s\n' "$err" | wc -l) -ne 1 ]]; then
    echo "FAIL ($*): want one line on stderr, got: $err"; fails=$((fails + 1)); return
  fi
  if [[ "$err" != *"$want"* ]]; then
    echo "FAIL ($*): stderr '$err' lacks '$want'"; fails=$((fails + 1)); return
  fi
  if [[ -n "$out" ]]; then
    echo "FAIL ($*): printed to stdout on error"; fails=$((fails + 1)); return
  fi
  echo "ok: $err"
}

cd "$work"
printf 'server,start_s,service_ms\nA,0.1,3\n' > nocol.csv
expect_bad "nocol.csv:1: no column 'latency_ms' in the header (columns: server, start_s, service_ms)" nocol.csv

printf 'server,start_s,latency_ms\nA,0.1,3\nA,0.2,3.5ms\n' > nonnum.csv
expect_bad "nonnum.csv:3: latency_ms: '3.5ms' is not a number" nonnum.csv

printf 'server,start_s,latency_ms\r\nA,0.1,3\r\nB,0.2,nan\r\n' > nan.csv
expect_bad "nan.csv:3: latency_ms: 'nan' is not a number (NaN)" nan.csv

printf 'server,start_s,latency_ms\nA,0.1,3\nA,0.2,-0.5\n' > neg.csv
expect_bad "neg.csv:3: latency_ms: -0.5 is negative" neg.csv

printf 'server,start_s,latency_ms\nA,0.1,3\n"B,x",0.2\nA,0.3,4\n' > ragged.csv
expect_bad "ragged.csv:3: 2 fields, but the header has 3" ragged.csv

: > empty.csv
expect_bad "empty.csv: empty file" empty.csv

printf 'server,start_s,latency_ms\n' > header.csv
expect_bad "header.csv: no data rows" header.csv

printf 'server,start_s,latency_ms\nA,0.1,"3\n' > quote.csv
expect_bad "quote.csv:2: end of input inside a quoted field" quote.csv

python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 4)' > junk.bin
expect_bad "junk.bin: unknown file type" junk.bin

printf 'server,latency_ms\nA,1\n' | gzip > data.csv.gz
expect_bad "data.csv.gz: unknown file type: gzip-compressed" data.csv.gz

printf '#[StartTime: 0]\n' > run.hlog
expect_bad "run.hlog: no intervals" run.hlog   # an .hlog goes to knee hlog stats, which names the problem

# input quoted in an error line is escaped: CR, LF and ESC in a quoted cell (and in a file
# name) print as \r, \n and \x1b, so the message stays one line and the terminal sees no
# control sequence (expect_bad checks the single line)
printf 'server,start_s,latency_ms\nA,0.1,"3\r\n4\033[2J"\n' > ctl.csv
expect_bad "ctl.csv:2: latency_ms: '3\\r\\n4\\x1b[2J' is not a number" ctl.csv
cp ctl.csv "$(printf 'x\033]0;t\007.csv')"
expect_bad "x\\x1b]0;t\\x07.csv:2:" "$(printf 'x\033]0;t\007.csv')"
if LC_ALL=C grep -q $'\033' "$work/err"; then echo "FAIL: a raw ESC reached stderr"; fails=$((fails + 1)); fi

# binary logs: a newer version, a truncated record, an out-of-range field
python3 - <<'PY'
import struct
def hdr(version=1):
    return b"\x89KRQ\r\n\x1a\n" + struct.pack("<HHIII", version, 0, 24 + 3, 60, 1) + struct.pack("<H", 1) + b"A"
rec = struct.pack("<QQQQQQIIHBB", 10**9, 10**9, 10**9 + 10**6, 10**9 + 5 * 10**6, 0, 100, 0, 0, 200, 0, 0)
open("v9.bin", "wb").write(hdr(9) + rec)
open("trunc.bin", "wb").write(hdr() + rec + rec[:30])
bad = bytearray(rec); bad[58] = 42
open("badrec.bin", "wb").write(hdr() + rec + bytes(bad))
PY
expect_bad "v9.bin: request log version 9 is newer than this knee reads (2)" v9.bin
expect_bad "trunc.bin: record 1 is truncated" trunc.bin
expect_bad "badrec.bin: record 1: outcome 42 is not defined" badrec.bin

expect_bad "missing.csv: No such file or directory" missing.csv

# bad options
printf 'server,start_s,latency_ms\nA,0.1,3\nB,0.2,4\n' > ok.csv
expect_bad "--where: 'outcome' is not COL=VALUE" ok.csv --where outcome
expect_bad "ok.csv:1: --where: no column 'outcome'" ok.csv --where outcome=ok
expect_bad "--window-group: no group named 'C'" ok.csv --window-group C
expect_bad "--under: 'fast' is not a number or a duration" ok.csv --under fast
expect_bad "--buckets: '5,3' is not an increasing list" ok.csv --buckets 5,3
expect_bad "--buckets: '-5,10': a bound below 0 (-5) can count nothing" ok.csv --buckets=-5,10
expect_bad "--until must be later than --skip" ok.csv --skip 2s --until 1s
expect_bad "no values left to analyse: 2 rows read, 0 left out by --where, 2 by --skip/--until" ok.csv --skip 10s
expect_bad "--expect-median needs a column in milliseconds" ok.csv --column start_s --expect-median 5ms
expect_bad "missing argument" 

# the good file still works, and a bad one after it stops everything
"$KNEE" stats ok.csv > /dev/null
expect_bad "neg.csv:3:" ok.csv neg.csv

[[ $fails -eq 0 ]] || { echo "$fails failures"; exit 1; }
echo "all bad inputs rejected with exit 2"
