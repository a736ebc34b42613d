#!/usr/bin/env bash
# Installs what is needed, builds, and starts siomq-server on port 17352 with the embedded default store.
# Extra arguments go to the server (e.g. --settings FILE, --log-level debug).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIOMQ_TESTS=OFF >/dev/null
cmake --build build
exec build/src/siomq-server --port "${PORT:-17352}" --data-dir "${DATA_DIR:-./data}" "$@"
