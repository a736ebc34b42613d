#!/usr/bin/env bash
# The one test command: installs what is needed, builds, and runs every suite —
#   1. release build (the server, the CLI and the client package): crash cycles (tests/crash: kill -9 at
#      full speed, where an optimised server matters), the examples built against the installed client
#      package (tests/examples/run.sh);
#   2. AddressSanitizer + UBSan build (clang-14): unit tests and the client library's tests against real
#      servers (tests/client), the end-to-end tests, crash cycles and short libFuzzer runs;
#   3. ThreadSanitizer build (clang-14): the concurrency end-to-end tests and the client library's tests.
# Each suite runs once, in the build where it checks the most: the end-to-end and unit suites under ASan
# (the unit tests two at a time; each is a process of its own), not again in the release build — the
# same code, checked less, for a sixth of the run's 40-minute budget. Compile time is most of the
# run on a cold machine, so the test builds are unity builds and carry less debug information than a
# developer's build: line tables (stack traces and sanitizer reports keep file:line), and -O1.
# A private redis-server (a free port from 6390, in a temporary directory) serves the redis store's
# tests: SIOMQ_TEST_REDIS_URL names it for the unit, end-to-end and crash tests; it is stopped on exit.
# Any sanitizer report fails the run. Ends with one line "tests: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/setup.sh --tests || { echo "setup failed"; exit 1; }

passed=0
failed=0
failed_steps=()
logdir=$(mktemp -d /tmp/siomq-test.XXXXXX)
redis_dir=""

cleanup() {
  if [[ -n "$redis_dir" && -f "$redis_dir/redis.pid" ]]; then
    kill "$(cat "$redis_dir/redis.pid")" 2>/dev/null
    for _ in $(seq 50); do [[ -f "$redis_dir/redis.pid" ]] || break; sleep 0.1; done
  fi
  [[ -n "$redis_dir" ]] && rm -rf "$redis_dir"
  rm -rf "$logdir"
}
trap cleanup EXIT

# run_step NAME KIND COMMAND...: KIND says how to count tests in the output (ctest, node, one).
run_step() {
  local name=$1 kind=$2
  shift 2
  local log="$logdir/$name.log"
  echo "=== $name"
  local start=$SECONDS
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local p=0 f=0
  case $kind in
    ctest)
      local line
      line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
      if [[ $line =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
        f=${BASH_REMATCH[1]}
        p=$((BASH_REMATCH[2] - f))
      fi ;;
    node)
      p=$(grep -E "^# pass [0-9]+" "$log" | tail -1 | awk '{print $3}')
      f=$(grep -E "^# fail [0-9]+" "$log" | tail -1 | awk '{print $3}')
      p=${p:-0}
      f=${f:-0} ;;
    one)
      if [ "$rc" -eq 0 ]; then p=1; else f=1; fi ;;
    gtest)
      p=$(grep -E "^\[  PASSED  \] [0-9]+ tests?" "$log" | tail -1 | awk '{print $4}')
      f=$(grep -E "^ ?[0-9]+ FAILED TESTS?" "$log" | tail -1 | awk '{print $1}')
      p=${p:-0}
      f=${f:-0} ;;
    examples)
      local line
      line=$(grep -E "^examples: [0-9]+ passed, [0-9]+ failed" "$log" | tail -1)
      if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
        p=${BASH_REMATCH[1]}
        f=${BASH_REMATCH[2]}
      fi ;;
  esac
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" -ne 0 ]; then failed_steps+=("$name"); fi
  echo "=== $name: exit $rc, $p passed, $f failed, $((SECONDS - start)) s"
}

configure() {  # configure DIR [cmake args...]
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
}

# start_redis: a redis-server of our own on the first free port from 6390, persisting every write
# (appendfsync always) so that the redis store's crash test means something; exports its URL.
start_redis() {
  local port
  for port in $(seq 6390 6409); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue  # taken
    redis_dir=$(mktemp -d /tmp/siomq-redis.XXXXXX)
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync always \
      --dir "$redis_dir" --daemonize yes --pidfile "$redis_dir/redis.pid" --logfile "$redis_dir/redis.log" || return 1
    for _ in $(seq 100); do
      if [[ "$(redis-cli -p "$port" ping 2>/dev/null)" == PONG ]]; then
        export SIOMQ_TEST_REDIS_URL="redis://127.0.0.1:$port"
        echo "redis-server on port $port"
        return 0
      fi
      sleep 0.1
    done
    cat "$redis_dir/redis.log"
    return 1
  done
  echo "no free port for redis-server in 6390-6409"
  return 1
}
# Not through run_step: its pipe would run start_redis in a subshell, and the URL must reach us.
echo "=== redis-server"
if start_redis; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  failed_steps+=(redis-server)
  echo "=== redis-server: could not start; the redis store's tests are skipped"
fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp"

# 1. Release build.
# Unity builds (16 sources a translation unit): each build here starts cold, and the heavy headers are then
# compiled once a batch, not once a file (README, "Building by hand").
unity=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
# -O1, not the -O2 users build with: about a fifth less compile time (one unity batch, 4 runs: 39-41 s at -O2,
# 32-34 s at -O1), still an optimised server for the crash cycles; the benchmarks build their own -O2.
release_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "${unity[@]}")
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG"
                 -DCMAKE_CXX_COMPILER=clang++-14 "${unity[@]}")
run_step build-release one bash -c "$(declare -f configure); configure build-test $(printf '%q ' "${release_flags[@]}") \
  -DSIOMQ_TESTS=OFF && cmake --build build-test"
# The client package as users get it: installed, examples/ built against it and run against real servers.
run_step examples examples bash tests/examples/run.sh build-test
# kill -9 while producers publish with confirms; every confirmed message must come back (tests/crash/README.md).
run_step crash-file one env SIOMQ_SERVER="$root/build-test/src/siomq-server" node tests/crash/crash_cycles.js 20 --storage file
run_step crash-redis one env SIOMQ_SERVER="$root/build-test/src/siomq-server" node tests/crash/crash_cycles.js 5 --storage redis

# 2. AddressSanitizer + UndefinedBehaviorSanitizer, with the fuzz targets.
run_step build-asan one bash -c "$(declare -f configure); configure build-asan $(printf '%q ' "${sanitizer_flags[@]}") \
  -DSIOMQ_SANITIZE=address,undefined -DSIOMQ_FUZZ=ON -DSIOMQ_FUZZ_SECONDS=8 && cmake --build build-asan"
run_step unit-asan ctest ctest --test-dir build-asan --output-on-failure -LE fuzz -j2
# The console's browser test leaves a screenshot of each page in build-asan/console-shots (CI artifacts).
run_step e2e-asan node env SIOMQ_SERVER="$root/build-asan/src/siomq-server" SIOMQ_SANITIZED=1 \
  SIOMQ_CONSOLE_SHOTS="$root/build-asan/console-shots" bash tests/e2e/run.sh
run_step crash-asan one env SIOMQ_SERVER="$root/build-asan/src/siomq-server" SIOMQ_SANITIZED=1 \
  node tests/crash/crash_cycles.js 5 --storage file
# Each fuzz target for SIOMQ_FUZZ_SECONDS (8) from the checked-in seeds, two at a time (one core each);
# longer runs are by hand (tests/fuzz/README.md).
run_step fuzz ctest ctest --test-dir build-asan --output-on-failure -L fuzz -j2

# 3. ThreadSanitizer: the tests where several worker threads share state, and the client library, whose calls
# come from any thread (the server and the client tests are built, not the CLI nor the unit tests).
run_step build-tsan one bash -c "$(declare -f configure); configure build-tsan $(printf '%q ' "${sanitizer_flags[@]}") \
  -DSIOMQ_SANITIZE=thread && cmake --build build-tsan --target siomq-server siomq_client_tests"
# (The CLI a test drives — cluster_bus.test.js's C++ client — is the release build's: the server is under test.)
run_step e2e-tsan node env SIOMQ_SERVER="$root/build-tsan/src/siomq-server" SIOMQ_CLI="$root/build-test/src/siomq" \
  SIOMQ_SANITIZED=1 bash tests/e2e/run.sh --concurrency
run_step client-tsan gtest build-tsan/tests/siomq_client_tests

echo
if ((${#failed_steps[@]})); then echo "failed steps: ${failed_steps[*]}"; fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#failed_steps[@]} -eq 0 ]
