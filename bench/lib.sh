# shellcheck shell=bash
# Shell helpers of the bench scripts (sourced; bench/lib.js is the Node side).

# Sets `bin` to the build tree whose src/siomq-server and src/siomq a bench runs: PREBUILT (a tree already
# built, e.g. a unity build) when given, else build/, configured as a release build and built here.
# shellcheck disable=SC2034  # `bin` is the caller's
release_binaries() {  # release_binaries [PREBUILT]
  bin=build
  if [ -n "${1:-}" ]; then
    bin=$1
    return
  fi
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build --target siomq-server siomq
}
