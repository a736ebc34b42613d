#!/usr/bin/env bash
# Installs everything siomq needs on Debian 12: the build toolchain, the libraries named in
# ARCHITECTURE.md, the web console's browser libraries (into console/node_modules: the build embeds them),
# and the npm test clients (into tests/e2e/node_modules); with --tests also Debian's chromium for the
# console's browser tests. Idempotent: a second run installs nothing and takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  clang-14 libclang-rt-14-dev
  libboost1.81-dev
  libsimdjson-dev nlohmann-json3-dev
  librocksdb-dev libhiredis-dev redis-server
  libssl-dev openssl curl
  libspdlog-dev libfmt-dev libcli11-dev prometheus-cpp-dev
  libgoogle-perftools-dev
  libgtest-dev
)
# --tests: also what only the tests use: Debian's chromium for the console's browser tests, and a font
# (packages come without their recommendations here, and a page without any font lays its text out empty).
[[ "${1:-}" == --tests ]] && packages+=(chromium fonts-liberation)
# Node.js may come from elsewhere (its npm bundled); Debian's npm is only wanted where there is none.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The console's browser libraries, pinned by console/package-lock.json (the server's build embeds them).
if [ ! -d console/node_modules ] || [ console/package.json -nt console/node_modules ]; then
  (cd console && npm ci --no-audit --no-fund --loglevel=error)
  touch console/node_modules
fi

# npm test clients, pinned by tests/e2e/package-lock.json.
if [ ! -d tests/e2e/node_modules ] || [ tests/e2e/package.json -nt tests/e2e/node_modules ]; then
  (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
  touch tests/e2e/node_modules
fi
