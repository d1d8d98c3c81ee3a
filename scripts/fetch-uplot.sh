#!/usr/bin/env bash
# Fetches the chart library knee report embeds: uPlot (MIT), pinned to one version and checked
# against the integrity hash the npm registry publishes for it, into DEST (the build tree;
# never committed). The build (cmake/report.cmake) calls it when DEST lacks the files.
#   scripts/fetch-uplot.sh DEST
# Offline: KNEE_UPLOT_TARBALL=/path/uplot-VERSION.tgz uses that tarball (same hash check).
set -euo pipefail

UPLOT_VERSION=1.6.32
UPLOT_INTEGRITY=sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw==

dest=${1:?usage: scripts/fetch-uplot.sh DEST}
fail() { echo "fetch-uplot: $*" >&2; exit 1; }

if [[ -f "$dest/.verified" && "$(cat "$dest/.verified")" == "$UPLOT_VERSION $UPLOT_INTEGRITY" ]]; then
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -n "${KNEE_UPLOT_TARBALL:-}" ]]; then
  cp "$KNEE_UPLOT_TARBALL" "$tmp/uplot.tgz" || fail "KNEE_UPLOT_TARBALL=$KNEE_UPLOT_TARBALL: cannot read it"
else
  command -v npm >/dev/null ||
    fail "npm not found (scripts/deps.sh installs it), or set KNEE_UPLOT_TARBALL to a downloaded uplot-$UPLOT_VERSION.tgz"
  if ! (cd "$tmp" && npm pack "uplot@$UPLOT_VERSION" --prefer-offline --silent >npm.out 2>npm.err); then
    fail "cannot fetch uplot@$UPLOT_VERSION from the npm registry (knee report embeds it; the build needs it once): $(tail -n 3 "$tmp/npm.err" | tr '\n' ' ')"
  fi
  mv "$tmp/uplot-$UPLOT_VERSION.tgz" "$tmp/uplot.tgz" || fail "npm pack did not write uplot-$UPLOT_VERSION.tgz"
fi

got=$(python3 -c 'import base64,hashlib,sys; print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode())' "$tmp/uplot.tgz")
[[ "$got" == "$UPLOT_INTEGRITY" ]] ||
  fail "uplot-$UPLOT_VERSION.tgz has integrity $got, expected $UPLOT_INTEGRITY: refusing to embed it"

tar -xzf "$tmp/uplot.tgz" -C "$tmp" package/dist/uPlot.iife.min.js package/dist/uPlot.min.css package/LICENSE \
  package/package.json || fail "the tarball lacks the files knee embeds"
python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["version"]; sys.exit(v != sys.argv[2])' \
  "$tmp/package/package.json" "$UPLOT_VERSION" || fail "package.json does not say version $UPLOT_VERSION"

mkdir -p "$dest"
cp "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" "$tmp/package/LICENSE" "$dest/"
echo "$UPLOT_VERSION" >"$dest/VERSION"
echo "$UPLOT_VERSION $UPLOT_INTEGRITY" >"$dest/.verified"
