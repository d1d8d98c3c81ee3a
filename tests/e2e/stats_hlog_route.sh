#!/usr/bin/env bash
# `knee stats FILE.hlog` is `knee hlog stats FILE.hlog`: same numbers, text and JSON.
# tier: exact
set -euo pipefail
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$KNEE_BUILD/bench_hlog" gen "$tmp/a.hlog" --tags api >/dev/null
"$KNEE" stats "$tmp/a.hlog" > "$tmp/via_stats.txt"
"$KNEE" hlog stats "$tmp/a.hlog" > "$tmp/via_hlog.txt"
diff "$tmp/via_stats.txt" "$tmp/via_hlog.txt"
grep -q '^api ' "$tmp/via_stats.txt"
"$KNEE" stats "$tmp/a.hlog" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["groups"]["api"]["count"] > 0'
echo "1 passed, 0 failed"
