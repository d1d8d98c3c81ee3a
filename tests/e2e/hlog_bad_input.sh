#!/usr/bin/env bash
# Bad .hlog input through the CLI: every case must end with exactly one clear line on stderr
# naming the file and line, exit code 2, and no crash (the ASan run checks memory too).
# tier: exact
set -euo pipefail
: "${KNEE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
python3 - "$tmp" <<'PY'
import base64, struct, sys, zlib
d = sys.argv[1]
head = "#[Histogram log format version 1.3]\n#[StartTime: 1700000000.000 (seconds since epoch)]\n"
def v2(counts_varints, digits=3, lowest=1, highest=3600000000000, payload_len=None, cookie=0x1c849313):
    p = bytearray()
    for v in counts_varints:
        u = ((v << 1) ^ (v >> 63)) & 0xffffffffffffffff
        for _ in range(8):
            if u < 0x80:
                p.append(u); break
            p.append((u & 0x7f) | 0x80); u >>= 7
        else:
            p.append(u)
    n = len(p) if payload_len is None else payload_len
    return struct.pack(">IIiiqqd", cookie, n, 0, digits, lowest, highest, 1.0) + bytes(p)
def comp(raw, length=None):
    z = zlib.compress(raw, 9)
    return base64.b64encode(struct.pack(">II", 0x1c849314, len(z) if length is None else length) + z).decode()
ok = comp(v2([0, 5]))
cases = {
    "truncated_line": head + f"0.000,1.000,0.000,{ok}\n1.000,1.000\n",
    "bad_base64": head + "0.000,1.000,0.000,HISTF*AAAAAA\n",
    "wrong_cookie": head + "0.000,1.000,0.000," + base64.b64encode(bytes(48)).decode() + "\n",
    "payload_lie": head + f"0.000,1.000,0.000,{comp(v2([0, 5], payload_len=40))}\n",
    "length_lie": head + f"0.000,1.000,0.000,{comp(v2([0, 5]), length=500)}\n",
    "zip_bomb": head + "0.000,1.000,0.000," + comp(struct.pack(">IIiiqqd", 0x1c849313, 64, 0, 3, 1, 3600000000000, 1.0) + bytes(8 << 20)) + "\n",
    "count_overflow": head + f"0.000,1.000,0.000,{comp(v2([0, 1 << 62]))}\n1.000,1.000,0.000,{comp(v2([0, 1 << 62]))}\n",
    "range_too_big": head + f"0.000,1.000,0.000,{comp(v2([0, 5], digits=5, highest=(1 << 63) - 1))}\n",
    "digits_mismatch": head + f"0.000,1.000,0.000,{ok}\n1.000,1.000,0.000,{comp(v2([0, 5], digits=2))}\n",
    "double_histogram": head + "0.000,1.000,0.000," + base64.b64encode(struct.pack(">II", 0x0c72124f, 40) + bytes(40)).decode() + "\n",
}
for name, text in cases.items():
    open(f"{d}/{name}.hlog", "w").write(text)
PY
# file -> the line the error must name
declare -A line=([truncated_line]=4 [bad_base64]=3 [wrong_cookie]=3 [payload_lie]=3 [length_lie]=3 [zip_bomb]=3
                 [count_overflow]=4 [range_too_big]=3 [digits_mismatch]=4 [double_histogram]=3)
for name in "${!line[@]}"; do
  f="$tmp/$name.hlog"
  for cmd in "hlog show" "hlog stats" "hlog merge"; do
    extra=()
    [[ $cmd == "hlog merge" ]] && extra=(-o "$tmp/out.hlog")
    [[ $cmd == "hlog merge" && $name == count_overflow ]] && extra=(-o "$tmp/out.hlog" --slot 10s)
    set +e
    # shellcheck disable=SC2086
    "$KNEE" $cmd "$f" "${extra[@]}" > /dev/null 2> "$tmp/err"
    rc=$?
    set -e
    msg=$(cat "$tmp/err")
    [[ $rc == 2 ]] || fail "$cmd $name: exit $rc, want 2 ($msg)"
    [[ $(wc -l < "$tmp/err") == 1 ]] || fail "$cmd $name: want one line on stderr, got: $msg"
    [[ $msg == *"$name.hlog:${line[$name]}:"* ]] || fail "$cmd $name: message does not name $name.hlog:${line[$name]}: $msg"
    [[ ! -e $tmp/out.hlog ]] || fail "$cmd $name: left a partial output"
  done
  echo "ok: $name -> $msg"
done
# a bad field holding CR, LF and ESC is quoted escaped (\r, \n, \x1b): one line, no raw control byte
printf '#[StartTime: 1]\n0.000,"1.0\033[2J\r",0.000,HISTFAAAA\r\n' > "$tmp/ctl.hlog"
for cmd in "hlog show" "hlog stats"; do
  set +e
  # shellcheck disable=SC2086
  "$KNEE" $cmd "$tmp/ctl.hlog" > /dev/null 2> "$tmp/err"
  rc=$?
  set -e
  [[ $rc == 2 ]] || fail "$cmd ctl: exit $rc, want 2"
  [[ $(wc -l < "$tmp/err") == 1 ]] || fail "$cmd ctl: want one line on stderr, got: $(cat -A "$tmp/err")"
  grep -qF 'ctl.hlog:2: bad interval length' "$tmp/err" || fail "$cmd ctl: $(cat -A "$tmp/err")"
  grep -qF '\x1b[2J' "$tmp/err" || fail "$cmd ctl: ESC not escaped: $(cat -A "$tmp/err")"
  if LC_ALL=C grep -q $'[\033\r]' "$tmp/err"; then fail "$cmd ctl: a raw control byte reached stderr"; fi
done
echo "ok: control bytes in a bad field are escaped"
# usage errors
set +e
"$KNEE" hlog frobnicate 2> /dev/null; [[ $? == 2 ]] || fail "unknown subcommand: want exit 2"
"$KNEE" hlog show "$tmp/nonexistent.hlog" 2> "$tmp/err"; [[ $? == 2 ]] || fail "missing file: want exit 2"
grep -q "nonexistent.hlog" "$tmp/err" || fail "missing file not named"
"$KNEE" hlog merge "$tmp/truncated_line.hlog" 2> /dev/null; [[ $? == 2 ]] || fail "merge without -o: want exit 2"
"$KNEE" hlog merge "$tmp/truncated_line.hlog" -o "$tmp/truncated_line.hlog" 2> /dev/null
[[ $? == 2 ]] || fail "merge onto its own input: want exit 2"
set -e
echo "ok: usage errors exit 2"
