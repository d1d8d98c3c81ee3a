#!/usr/bin/env bash
# Installs the Debian packages knee needs, and only those that are missing. Idempotent: a
# second run installs nothing and never calls apt-get update.
#   scripts/deps.sh           what the knee binary needs to build (make, make lab, make install)
#   scripts/deps.sh --deb     also what `make deb` needs
#   scripts/deps.sh --test    also what the tests need (make test; includes --deb: a test builds the package)
#   scripts/deps.sh --bench   also the peer tools the benchmarks compare against (make bench)
# Flags combine. A new library the binary links is one line in `build` (and its
# find_package in CMakeLists.txt); the .deb finds its runtime package by itself (shlibdeps).
set -euo pipefail

build=(
  build-essential cmake pkg-config      # toolchain (build-essential brings dpkg-dev)
  libhttp-parser-dev                    # HTTP/1.1 parsing (client and server)
  zlib1g-dev                            # HdrHistogram V2 compressed encoding
  libjansson-dev                        # JSON parsing (knee report reads run JSON)
  libssl-dev                            # TLS (OpenSSL): https:// targets, knee serve --tls
  libnghttp2-dev                        # HTTP/2 (nghttp2): h2 and h2c, client and knee serve --h2
  liburing-dev                          # io_uring (liburing): knee run --io uring (runtime: liburing2)
  libngtcp2-dev libnghttp3-dev libngtcp2-crypto-gnutls-dev libgnutls28-dev  # HTTP/3 (QUIC): knee run --http3, knee serve --h3
  libsnappy-dev                         # snappy compression: knee run --remote-write (runtime: libsnappy1v5)
  python3                               # scripts/fetch-uplot.sh checks uPlot's integrity hash with it
)
# npm fetches the pinned uPlot that knee report embeds (scripts/fetch-uplot.sh, once per build tree)
command -v npm >/dev/null || build+=(npm)
deb=(
  file                                  # CPack's DEB generator finds the binaries to scan with it
)
test=(
  libcmocka-dev                         # unit tests
  python3                               # independent cross-checks of the statistics, e2e clients
  clang libclang-rt-14-dev              # fuzz targets (libFuzzer)
  clang-format                          # `make format-check` (CI)
  default-jdk-headless libhdrhistogram-java  # HdrHistogram reference implementation (hlog interop tests)
  nginx-light                           # a real peer server for end-to-end tests (also over TLS and h2)
  openssl nghttp2-client                # test certificates (openssl CLI); h2load, an independent h2 client
  prometheus                            # scrapes knee --metrics-listen (tests/e2e/metrics_prometheus.sh; promtool)
  chromium                              # headless browser for tests/e2e/report_browser.sh
  groff-base                            # the generated man page is checked for roff warnings
  zsh                                   # the generated zsh completion is loaded and exercised
  slurmd slurmctld slurm-client munge   # a one-node Slurm cluster runs knee run --shard (tests/e2e/slurm.sh)
  python3-yaml                          # deploy/kubernetes manifests checked as YAML (tests/e2e/deploy_kubernetes.sh)
  python3-cryptography                  # a QUIC Initial by hand: a handshake that never finishes (tests/e2e/serve_h3.sh)
  iproute2                              # network namespaces: shards with their own addresses (tests/e2e/shard_netns.sh)
  tmux                                  # a real terminal for knee run --live (tests/e2e/run_live.sh)
  tinyproxy                             # a real HTTP proxy for knee run --proxy (tests/e2e/run_proxy.sh)
  caddy                                 # a real HTTP/3 server: knee run --http3 (tests/e2e/run_http3_caddy.sh)
)
bench=(
  wrk apache2-utils hey nghttp2-client linux-perf time util-linux  # the peers and the tools around them
  valgrind                              # callgrind: instructions per request (bench/open_loop_cost.sh, instr_per_request.sh)
  nginx-light python3                   # the target server and the scripts' helpers
)

pkgs=("${build[@]}")
for arg in "$@"; do
  case $arg in
    --deb) pkgs+=("${deb[@]}") ;;
    --test) pkgs+=("${deb[@]}" "${test[@]}") ;;
    --bench) pkgs+=("${bench[@]}") ;;
    *) echo "usage: $0 [--deb] [--test] [--bench]" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    [[ " ${missing[*]} " == *" $p "* ]] || missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
