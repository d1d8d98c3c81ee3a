#!/usr/bin/env bash
# The Grafana dashboard (deploy/grafana/knee.json) is valid JSON with the panels of the issue,
# and every query in it parses as PromQL (promtool check rules over the queries written as
# recording rules). tests/e2e/metrics_prometheus.sh runs the same queries on a live Prometheus.
# tier: exact
set -euo pipefail
: "${KNEE_SRC:?KNEE_SRC must name the source dir}"
command -v promtool >/dev/null || { echo "FAIL: promtool missing (scripts/deps.sh installs prometheus)"; exit 1; }
TMP=$(mktemp -d /tmp/knee-dash.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
python3 "$KNEE_SRC/tests/e2e/dashboard_queries.py" "$KNEE_SRC/deploy/grafana/knee.json" --rules "$TMP/rules.yml"
promtool check rules "$TMP/rules.yml" >"$TMP/out" 2>&1 || { cat "$TMP/out"; echo "FAIL: a dashboard query does not parse"; exit 1; }
echo "ok: promtool parses every dashboard query"
# The checker must catch a broken query (a test that cannot fail proves nothing).
sed 's/sum by (outcome) (rate(/sum by (outcome) (rate((/' "$KNEE_SRC/deploy/grafana/knee.json" >"$TMP/bad.json"
python3 "$KNEE_SRC/tests/e2e/dashboard_queries.py" "$TMP/bad.json" --rules "$TMP/bad.yml" >/dev/null
if promtool check rules "$TMP/bad.yml" >/dev/null 2>&1; then echo "FAIL: promtool accepted a broken query"; exit 1; fi
echo "ok: a broken query is caught"
