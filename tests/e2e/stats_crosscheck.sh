#!/usr/bin/env bash
# knee stats against an independent Python standard-library implementation over seeded data
# of several shapes (see stats_crosscheck.py for what is compared and to which tolerance).
# tier: exact
set -euo pipefail
KNEE=${KNEE:-build/knee}
KNEE_SRC=${KNEE_SRC:-.}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$KNEE_SRC/tests/e2e/stats_crosscheck.py" "$KNEE" "$work"
