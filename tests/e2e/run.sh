#!/usr/bin/env bash
# Runs the end-to-end suite against a real siomq-server binary.
#
#   tests/e2e/run.sh [--concurrency] [extra node --test args]
#
# --concurrency   only the files where several worker threads share state (rooms, the broker, the session registry,
#                 connections moving between workers, shutdown, the durable queues and their store writer, settings
#                 swapped under running handlers, validator callbacks, realms removed from another thread, TLS
#                 sessions moving between workers and the certificate swapped on SIGHUP, the bus's streams thread
#                 delivering through realms the workers route in, the cluster thread delivering relayed messages
#                 and adopting settings, the web console's views gathered across the workers, the queues' and
#                 the streams' threads): the
#                 ThreadSanitizer run uses this.
# SIOMQ_SERVER    the server binary (default: build/src/siomq-server of this checkout)
# SIOMQ_SANITIZED set to 1 for a sanitizer build: the tests wait longer
# E2E_CONCURRENCY test files run side by side (default 2); the 1,000-client test and the browser test run alone.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

if [[ -n "${SIOMQ_SERVER:-}" ]]; then
  SIOMQ_SERVER="$(cd "$(dirname "$SIOMQ_SERVER")" && pwd)/$(basename "$SIOMQ_SERVER")"
else
  SIOMQ_SERVER="$root/build/src/siomq-server"
fi
export SIOMQ_SERVER
if [[ ! -x "$SIOMQ_SERVER" ]]; then
  echo "run.sh: no server binary at $SIOMQ_SERVER (build it, or set SIOMQ_SERVER)" >&2
  exit 2
fi
if [[ ! -d "$here/node_modules/socket.io-client" ]]; then
  echo "run.sh: npm packages missing; run: (cd $here && npm ci)" >&2
  exit 2
fi

concurrency_only=0
if [[ "${1:-}" == --concurrency ]]; then
  concurrency_only=1
  shift
fi

cd "$here"
shopt -s nullglob
if ((concurrency_only)); then
  all=(diagnostics.test.js upgrade.test.js lifecycle.test.js tyo_mq_pubsub.test.js tyo_mq_extras.test.js tyo_mq_durable.test.js
       tyo_mq_auth.test.js tyo_mq_management.test.js http_api.test.js remote.test.js tls.test.js many_clients.test.js
       bus_streams.test.js cluster.test.js cluster_interest.test.js cluster_names.test.js cluster_groups.test.js
       cluster_bus.test.js cluster_durable.test.js console_api.test.js)
else
  all=(*.test.js)
fi
# Run alone, after the others: the 1,000-client test, and the browser test (Chromium's processes would take
# the CPU that the other files' timing-sensitive waits count on).
alone=(many_clients.test.js console.test.js)
files=()
for f in "${all[@]}"; do
  [[ " ${alone[*]} " == *" $f "* ]] || files+=("$f")
done

# One run of the files side by side, then the ones run alone, then one summary over all in node's own
# format, so that a reader of the last "# pass N" line sees the whole suite.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0
start=$SECONDS
# A hung test fails instead of hanging the suite.
timeout_ms=$([[ -n "${SIOMQ_SANITIZED:-}" ]] && echo 600000 || echo 180000)
node --test --test-timeout="$timeout_ms" --test-concurrency="${E2E_CONCURRENCY:-2}" "$@" "${files[@]}" 2>&1 | tee "$logs/1" || status=1
n=2
for f in "${alone[@]}"; do
  if [[ " ${all[*]} " == *" $f "* ]]; then
    node --test --test-timeout="$timeout_ms" --test-concurrency=1 "$@" "$f" 2>&1 | tee "$logs/$n" || status=1
    n=$((n + 1))
  fi
done
echo "# e2e summary"
for key in tests pass fail cancelled skipped todo; do
  echo "# $key $(cat "$logs"/* | awk -v k="$key" '$1 == "#" && $2 == k && NF == 3 { n += $3 } END { print n + 0 }')"
done
echo "# duration_s $((SECONDS - start))"
exit "$status"
