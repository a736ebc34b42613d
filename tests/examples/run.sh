#!/usr/bin/env bash
# The client library as its users get it: installs BUILD_DIR's package (cmake --install) into a
# temporary prefix, checks that the installed headers need no Boost, builds examples/ against it as a
# separate CMake project (and one example through pkg-config), and runs every example against real
# siomq-server processes (BUILD_DIR/src/siomq-server).
#
#   tests/examples/run.sh BUILD_DIR
#
# Ends with "examples: N passed, M failed"; exits non-zero when one failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "$1" && pwd)"
work=$(mktemp -d /tmp/siomq-examples.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
passed=0
failed=0
check() {  # check NAME COMMAND...: one result line per check
  local name=$1
  shift
  if "$@" >"$work/$name.out" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
    sed 's/^/     /' "$work/$name.out" | tail -30
  fi
}

prefix="$work/prefix"
check install cmake --install "$build" --prefix "$prefix"
check no-boost-in-headers bash -c "! grep -rn 'include <boost' '$prefix/include/siomq'"
check cmake-package bash -c "cmake -S '$root/examples' -B '$work/build' -G Ninja -DCMAKE_PREFIX_PATH='$prefix' \
  -DCMAKE_BUILD_TYPE=Release && cmake --build '$work/build'"
pcdir=$(dirname "$(find "$prefix" -name siomq.pc | head -1)")
check pkg-config bash -c "c++ -std=c++20 -Wall -Werror '$root/examples/request_reply.cc' -o '$work/request_reply_pc' \
  \$(PKG_CONFIG_PATH='$pcdir' pkg-config --cflags --libs siomq) -Wl,-rpath,'$(dirname "$pcdir")'"

# start_server NAME [settings json]: a server on a free port; sets $url.
start_server() {
  local dir="$work/$1"
  mkdir -p "$dir"
  local args=(--port 0 --threads 1 --data-dir "$dir/data")
  if [[ -n "${2:-}" ]]; then
    echo "$2" >"$dir/settings.json"
    args+=(--settings "$dir/settings.json")
  fi
  "$build/src/siomq-server" "${args[@]}" >"$dir/log" 2>&1 &
  pids+=($!)
  disown
  for _ in $(seq 200); do
    local port
    port=$(grep -oE 'listening on [^ ]+:[0-9]+ \(' "$dir/log" | head -1 | grep -oE ':[0-9]+ ' | tr -d ': ')
    if [[ -n "$port" ]]; then
      url="http://127.0.0.1:$port"
      return 0
    fi
    sleep 0.05
  done
  cat "$dir/log"
  return 1
}

url=""
if start_server plain; then
  for example in tyomq_pubsub durable_consumer request_reply stream_worker stream_worker_static; do
    check "$example" timeout 60 "$work/build/$example" "$url"
  done
  check request_reply_pkg_config timeout 60 "$work/request_reply_pc" "$url"
else
  failed=$((failed + 1))
fi
if start_server auth '{"auth":{"enabled":true,"tokens":[{"token":"admin-token","realm":"*","role":"admin"}],
    "realms":{"default":{"required":false},"r1":{"manager_key":"mk-r1"}}}}'; then
  check enrolment timeout 60 "$work/build/enrolment" "$url" mk-r1
else
  failed=$((failed + 1))
fi
echo "examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
