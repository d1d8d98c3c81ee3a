#!/usr/bin/env bash
# Installs the Debian packages knee needs to build, test and benchmark, and only those
# that are missing. Idempotent: a second run installs nothing and never calls apt-get update.
#   scripts/deps.sh          build + test dependencies
#   scripts/deps.sh --bench  also the peer tools the benchmarks compare against
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config      # toolchain
  libhttp-parser-dev                    # HTTP/1.1 parsing (client and server)
  zlib1g-dev                            # HdrHistogram V2 compressed encoding
  libcmocka-dev                         # unit tests
  python3                               # independent cross-check of the statistics
  clang libclang-rt-14-dev              # fuzz targets (libFuzzer)
  clang-format                          # `make format-check` (CI)
  default-jdk-headless libhdrhistogram-java  # HdrHistogram reference implementation (hlog interop tests)
  nginx-light                           # a real peer server for end-to-end tests
  prometheus                            # test dependency: scrapes knee --metrics-listen (tests/e2e/metrics_prometheus.sh; promtool)
)

# knee report (src/html)
pkgs+=(libjansson-dev)                    # binary dep: JSON parsing (knee report reads run JSON)
pkgs+=(chromium)                          # test dep: headless browser for tests/e2e/report_browser.sh
command -v npm >/dev/null || pkgs+=(npm)  # build dep: scripts/fetch-uplot.sh fetches the pinned uPlot
if [[ "${1:-}" == "--bench" ]]; then
  pkgs+=(wrk apache2-utils hey nghttp2-client linux-perf time util-linux)
fi

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
