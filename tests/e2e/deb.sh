#!/usr/bin/env bash
# make deb end to end: the package is built from these sources exactly as `make deb` builds
# it (in a scratch build directory), its control fields and files are checked, apt accepts
# its dependencies on this machine (a simulation: nothing is installed), it is unpacked with
# `dpkg -x` into a scratch root (never into the system), and the unpacked knee runs:
# --version, and a short `knee run` against the unpacked `knee serve` on 127.0.0.1.
# Heavy (it compiles knee once more, beside the other tests: its timeout is 20 minutes).
# tier: exact
set -euo pipefail
: "${KNEE:?}" "${KNEE_SRC:?}" "${KNEE_BUILD:?}"
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
if grep -q '^KNEE_SANITIZE:BOOL=ON' "$KNEE_BUILD/CMakeCache.txt"; then
    echo "skipped: the package is built without sanitizers; the plain test suite builds and tests it"
    exit 77
fi
for tool in dpkg-deb apt-get python3 groff; do
    command -v $tool >/dev/null || fail "$tool not found (scripts/deps.sh --test installs it)"
done
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]:-}"; do [[ -z $p ]] || kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

# Build it the way `make deb` does, in a directory of this build (kept: the next run is quick).
dir=$KNEE_BUILD/deb
unset MAKEFLAGS MFLAGS MAKELEVEL
make -C "$KNEE_SRC" deb DEB="$dir" JOBS=2 >"$tmp/make.out" 2>&1 || { cat "$tmp/make.out"; fail "make deb failed"; }
version=$("$KNEE" --version | awk '{ print $NF }')
deb=$dir/knee_${version}_$(dpkg --print-architecture).deb
[[ -s $deb ]] || { cat "$tmp/make.out"; fail "make deb did not write $deb"; }

dpkg-deb -f "$deb" Package Version Depends Section >"$tmp/control"
grep -qx 'Package: knee' "$tmp/control" || fail "Package: $(cat "$tmp/control")"
grep -qx "Version: $version" "$tmp/control" || fail "Version is not $version: $(cat "$tmp/control")"
depends=$(sed -n 's/^Depends: //p' "$tmp/control")
for lib in libc6 libhttp-parser2.9 zlib1g libssl3 libnghttp2-14; do
    [[ ", $depends" == *", $lib "* || ", $depends," == *", $lib,"* ]] || fail "Depends lacks $lib: $depends"
done
dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|' >"$tmp/files"
for f in /usr/bin/knee /usr/share/man/man1/knee.1.gz /usr/share/bash-completion/completions/knee \
    /usr/share/zsh/vendor-completions/_knee; do
    grep -qxF "$f" "$tmp/files" || fail "the package lacks $f (it has: $(grep -v '/$' "$tmp/files" | tr '\n' ' '))"
done
echo "ok: $(basename "$deb"): Depends: $depends"
apt-get install --simulate --no-install-recommends "$deb" >"$tmp/apt.out" 2>&1 ||
    { cat "$tmp/apt.out"; fail "apt cannot satisfy the package's dependencies"; }
echo "ok: apt accepts its dependencies (simulated, nothing installed)"

root=$tmp/root
dpkg -x "$deb" "$root"
bin=$root/usr/bin/knee
[[ $("$bin" --version) == "knee $version" ]] || fail "unpacked knee --version: $("$bin" --version)"
if ldd "$bin" | grep -q 'not found'; then fail "unpacked knee misses a library: $(ldd "$bin")"; fi
zcat "$root/usr/share/man/man1/knee.1.gz" | groff -k -man -Tutf8 -ww -z 2>"$tmp/groff.err"
[[ ! -s $tmp/groff.err ]] || fail "the packaged man page has roff warnings: $(head -3 "$tmp/groff.err")"
grep -q -- '--rate' "$root/usr/share/bash-completion/completions/knee" || fail "packaged bash completion lacks --rate"
echo "ok: unpacked into a scratch root; $("$bin" --version) runs"

# The unpacked knee serve and knee run talk to each other on 127.0.0.1.
"$bin" serve --preset null --listen 127.0.0.1:0 --duration 60s >"$tmp/serve.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q '^listening on' "$tmp/serve.out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/serve.out")
[[ -n $port ]] || fail "the unpacked knee serve did not start: $(cat "$tmp/serve.out")"
"$bin" run -c 2 -n 200 --json "$tmp/run.json" "http://127.0.0.1:$port/" >"$tmp/run.out" 2>&1 ||
    { cat "$tmp/run.out"; fail "the unpacked knee run exited $?"; }
python3 - "$tmp/run.json" <<'PY' || fail "knee run against knee serve"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["outcomes"]["ok"] == 200 and d["accounting_ok"], d["outcomes"]
PY
kill -TERM "${pids[0]}"
wait "${pids[0]}" || fail "the unpacked knee serve did not stop cleanly"
pids=()
grep -q '"ok":200' "$tmp/serve.out" || fail "the server did not count 200 requests: $(tail -1 "$tmp/serve.out")"
echo "ok: the unpacked knee run sent 200 requests to the unpacked knee serve, all ok"
echo "1 passed, 0 failed"
