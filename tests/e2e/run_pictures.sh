#!/usr/bin/env bash
# Terminal pictures: knee run and knee stats draw a histogram of doubling buckets and a p99
# sparkline below their text when stdout is a terminal wide enough (a pty made by python3's
# pty module, its window size set), in colour unless NO_COLOR is set, in ASCII when the locale
# is not UTF-8; never when stdout is a pipe or a file, and not on a terminal too narrow. The
# text above them is the same in every case.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"

start_knee_serve s --preset null --duration 60s
PORT=$PORT_s

# tty COLUMNS OUT ENV... -- CMD...: CMD with stdout on a pty COLUMNS wide (stderr to OUT.err),
# in exactly the environment given (python would otherwise coerce the C locale to UTF-8)
tty() {
    local cols=$1 out=$2
    shift 2
    python3 - "$cols" "$out" "$@" <<'PY'
import fcntl, os, pty, struct, subprocess, sys, termios
cols, out = int(sys.argv[1]), sys.argv[2]
args = sys.argv[3:]
sep = args.index("--")
env = dict(kv.split("=", 1) for kv in args[:sep])
cmd = args[sep + 1:]
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
with open(out + ".err", "wb") as err:
    p = subprocess.Popen(cmd, stdout=slave, stderr=err, stdin=subprocess.DEVNULL, env=env)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the child closed the pty
        break
    if not chunk:
        break
    data += chunk
rc = p.wait()
open(out, "wb").write(data.replace(b"\r\n", b"\n"))
sys.exit(rc)
PY
}

BASE=(PATH="$PATH" HOME="$TMP" TERM=xterm)
"$KNEE" run -R 200 -d 2s --threads 1 --out "$TMP/run.bin" "http://127.0.0.1:$PORT/" >"$TMP/piped.txt"
tty 120 "$TMP/color.txt" "${BASE[@]}" LANG=C.UTF-8 -- "$KNEE" run -R 200 -d 2s --threads 1 "http://127.0.0.1:$PORT/"
tty 120 "$TMP/nocolor.txt" "${BASE[@]}" LANG=C.UTF-8 NO_COLOR=1 -- "$KNEE" run -R 200 -d 2s --threads 1 \
    "http://127.0.0.1:$PORT/"
tty 120 "$TMP/ascii.txt" "${BASE[@]}" LANG=C -- "$KNEE" run -R 200 -d 2s --threads 1 "http://127.0.0.1:$PORT/"
tty 40 "$TMP/narrow.txt" "${BASE[@]}" LANG=C.UTF-8 -- "$KNEE" run -R 200 -d 2s --threads 1 "http://127.0.0.1:$PORT/"

python3 - "$TMP" <<'PY'
import re, sys
tmp = sys.argv[1]
def text(n): return open(f"{tmp}/{n}.txt", encoding="utf-8").read()
HIST = "latency (ms), planned send -> full response (T5 - T0), doubling buckets"
piped, color, nocolor, ascii_, narrow = (text(n) for n in ("piped", "color", "nocolor", "ascii", "narrow"))
# a pipe and a narrow terminal: the summary alone
for name, t in (("piped", piped), ("narrow", narrow)):
    assert HIST not in t and "p99 per second" not in t and "\x1b" not in t, f"{name}: pictures where none belong:\n{t}"
    assert t.rstrip("\n").splitlines()[-1].startswith(("percentiles:", "  !", "  - ", "note:")) or "warnings" in t, name
# a wide terminal: the summary, then the pictures (the summary's text as on a pipe, up to its numbers)
for name, t in (("color", color), ("nocolor", nocolor), ("ascii", ascii_)):
    assert HIST in t and "  p99 per second  " in t, f"{name}: no pictures:\n{t}"
    head = t[:t.index("\n" + HIST)]
    assert head.startswith("knee run: open loop") and "\nrequests\n" in head, name
    assert "<- p99" in t, f"{name}: the p99's bucket is not marked in words"
    rows = re.findall(r"^ +[\d.]+\.\.[\d.]* ms +(\d+) +[\d.]+% ", t, re.M)
    assert sum(map(int, rows)) == 400, f"{name}: the buckets hold {rows}, not the 400 requests"
assert "\x1b[31m" in color and "\x1b[36m" in color, "no colour on a colour terminal"
assert "\x1b[3" not in nocolor and "\x1b[2m" not in nocolor, "colour despite NO_COLOR"
assert "\u2588" in nocolor, "no block characters in a UTF-8 locale"
assert "\u2588" not in ascii_ and "\u2581" not in ascii_ and "#" in ascii_, "non-ASCII bars in the C locale"
print("pictures ok")
PY

# knee stats: the same rule
"$KNEE" stats "$TMP/run.bin" >"$TMP/stats_piped.txt"
tty 120 "$TMP/stats_tty.txt" "${BASE[@]}" LANG=C.UTF-8 -- "$KNEE" stats "$TMP/run.bin"
grep -q 'latency_ms, doubling buckets (all groups)' "$TMP/stats_piped.txt" && fail "knee stats drew pictures into a pipe"
grep -q 'latency_ms, doubling buckets (all groups)' "$TMP/stats_tty.txt" || fail "knee stats drew no pictures on a terminal"
grep -q '  p99 per 1 s (bucket bound)  ' "$TMP/stats_tty.txt" || fail "knee stats drew no sparkline"
cmp -s <(head -c "$(stat -c %s "$TMP/stats_piped.txt")" "$TMP/stats_tty.txt") "$TMP/stats_piped.txt" ||
    fail "knee stats' text differs on a terminal"
echo "1 passed, 0 failed"
