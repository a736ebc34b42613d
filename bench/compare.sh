#!/usr/bin/env bash
# siomq side by side with its peers: the Node.js tyo-mq broker (tyo-mq@0.2.14 from npm, Socket.IO v2) and a
# hand-written socket.io@4 relay (bench/peers/relay.js). Every scenario runs against each server in turn,
# for ROUNDS rounds (the order alternates), each run on a freshly started server pinned to core 0 while
# `siomq bench` runs on core 1. Writes the medians and siomq/peer ratios to bench/results/<date>.md.
#
#   bash bench/compare.sh [--rounds N] [--duration SECONDS] [--only scenario,...] [--out FILE]
#                         [--baseline REV] [--servers siomq,baseline,tyo-mq,relay]
#
# --baseline REV  adds siomq as built at git revision REV (built once into build/baseline-<rev>), run with the
#                 same flags: a restructuring shows what it costs, side by side with what it started from.
# --servers LIST  which servers to run (default: all of siomq, baseline when given, tyo-mq, relay); siomq-tls
#                 (siomq with --tls-cert/--tls-key, driven over wss://, a certificate made for the run) and siomq-q2
#                 (siomq with --queue-threads 2, on the same one core) only when named.
# --no-bus        skips the bus's table: without --only, --servers or --baseline, the run ends with
#                 bench/bus_compare.sh (the bus against nats-server) at the same rounds and duration.
# --prebuilt DIR  runs DIR/src/siomq-server and DIR/src/siomq instead of building build/ (and, with
#                 --baseline, BASE/src/siomq-server where BASE is given by --baseline-build): for a tree
#                 already built with other flags, e.g. a unity build.
#
# Installs what it needs (scripts/setup.sh, then `npm ci` in bench/peers), builds the release binaries.
set -euo pipefail
called_from=$PWD
cd "$(dirname "$0")/.."

rounds=3
duration=5
only=""
baseline=""
servers_arg=""
bus=1
prebuilt=""
baseline_prebuilt=""
out="bench/results/$(date -u +%F).md"
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --baseline) baseline=$(git rev-parse --short "$2"); shift 2 ;;
    --servers) servers_arg=$2; shift 2 ;;
    --no-bus) bus=0; shift ;;
    --prebuilt) prebuilt=$(cd "$called_from" && realpath "$2"); shift 2 ;;
    --baseline-build) baseline_prebuilt=$(cd "$called_from" && realpath "$2"); shift 2 ;;
    *) echo "usage: bash bench/compare.sh [--rounds N] [--duration SECONDS] [--only scenario,...] [--out FILE]" \
            "[--baseline REV] [--servers LIST] [--no-bus] [--prebuilt DIR] [--baseline-build DIR]" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh
if [ ! -d bench/peers/node_modules ] || [ bench/peers/package-lock.json -nt bench/peers/node_modules ]; then
  (cd bench/peers && npm ci --no-audit --no-fund --loglevel=error)
  touch bench/peers/node_modules
fi
# shellcheck source=bench/lib.sh
source bench/lib.sh
release_binaries "$prebuilt"
if [ -n "$baseline" ]; then
  baseline_build="build/baseline-$baseline"
  [ -n "$baseline_prebuilt" ] && baseline_build=$baseline_prebuilt
  if [ ! -x "$baseline_build/src/siomq-server" ]; then
    src="build/baseline-src-$baseline"
    rm -rf "$src"
    git worktree add --detach "$src" "$baseline" >/dev/null
    cmake -S "$src" -B "$baseline_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIOMQ_TESTS=OFF >/dev/null
    cmake --build "$baseline_build" --target siomq-server
    git worktree remove --force "$src"
  fi
fi

ulimit -n "$(ulimit -Hn)"
cores=$(nproc)
server_core=0
bench_core=$((cores > 1 ? 1 : 0))
work=$(mktemp -d /tmp/siomq-compare.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
# siomq's HTTP API on, for its metrics: the latency runs read the server's own part from them.
echo '{"http_api": {"enabled": true}}' >"$work/settings.json"
# For siomq-tls: a self-signed certificate for this run (the load generator verifies it with --ca).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost 2>/dev/null

# Scenarios: id | `siomq bench` arguments | what tyo-mq@0.2.14 lacks for it | what the relay lacks.
scenarios=(
  "pubsub-1-1|pubsub -p 1 -c 1||"
  "fanout-1-50|fanout -c 50||"
  "latency-2k|latency -r 2000||"
  "latency-10k|latency -r 10000||"
  "durable|durable -p 1 -c 1|no durable queues or ACK|"
  "durable-4-16|durable -p 4 -c 16|no durable queues or ACK|"
  "topics|topics -p 1 -c 4|no topic wildcards|no topic wildcards"
  "group|group -p 1 -c 4|no consumer groups|no consumer groups"
  "chunked|chunked -p 1 -c 1|no chunked messages|no chunked messages"
  "connections-10k|connections -n 10000||"
)
servers=(siomq)
[ -n "$baseline" ] && servers+=(baseline)
servers+=(tyo-mq relay)
[ -n "$servers_arg" ] && IFS=',' read -r -a servers <<<"$servers_arg"

port_for() {
  case $1 in siomq) echo 17460 ;; tyo-mq) echo 17461 ;; relay) echo 17462 ;; baseline) echo 17463 ;; siomq-tls) echo 17464 ;;
    siomq-q2) echo 17465 ;; esac
}

start_server() {  # start_server NAME: starts it pinned to the server core, waits for its port
  local name=$1 port
  port=$(port_for "$name")
  case $name in
    siomq | baseline | siomq-tls | siomq-q2)
      local binary=$bin/src/siomq-server extra_args=()
      [ "$name" = baseline ] && binary="$baseline_build/src/siomq-server"
      [ "$name" = siomq-tls ] && extra_args=(--tls-cert "$work/cert.pem" --tls-key "$work/key.pem")
      [ "$name" = siomq-q2 ] && extra_args=(--queue-threads 2)
      rm -rf "$work/data"
      taskset -c "$server_core" "$binary" --port "$port" --threads 1 --storage file --sync batch \
        --data-dir "$work/data" --settings "$work/settings.json" --log-level warn "${extra_args[@]}" >"$work/server.log" 2>&1 &
      ;;
    tyo-mq) taskset -c "$server_core" node bench/peers/tyo-mq-server.js "$port" >"$work/server.log" 2>&1 & ;;
    relay) taskset -c "$server_core" node bench/peers/relay.js "$port" >"$work/server.log" 2>&1 & ;;
  esac
  server_pid=$!
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "compare: $name did not start" >&2
  cat "$work/server.log" >&2
  return 1
}

stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

results="$work/results.jsonl"
: >"$results"
for round in $(seq "$rounds"); do
  for entry in "${scenarios[@]}"; do
    IFS='|' read -r id args lacks_tyo lacks_relay <<<"$entry"
    if [ -n "$only" ] && [[ ",$only," != *",$id,"* ]]; then continue; fi
    # Alternate the order: round 1 siomq first, round 2 siomq last, ...
    order=("${servers[@]}")
    if ((round % 2 == 0)); then
      order=()
      for ((i = ${#servers[@]} - 1; i >= 0; i--)); do order+=("${servers[i]}"); done
    fi
    for name in "${order[@]}"; do
      lacks=""
      [ "$name" = tyo-mq ] && lacks=$lacks_tyo
      [ "$name" = relay ] && lacks=$lacks_relay
      if [ -n "$lacks" ]; then
        printf '{"server":"%s","id":"%s","round":%d,"lacks":"%s"}\n' "$name" "$id" "$round" "$lacks" >>"$results"
        continue
      fi
      eio=4
      [ "$name" = tyo-mq ] && eio=3
      start_server "$name"
      extra=()
      [[ $id == connections* ]] && extra=(--server-pid "$server_pid")
      echo "round $round: $id on $name" >&2
      # shellcheck disable=SC2086
      url="http://127.0.0.1:$(port_for "$name")"
      [ "$name" = siomq-tls ] && url="https://localhost:$(port_for "$name")" && extra+=(--ca "$work/cert.pem")
      # siomq's latency runs: its histogram from read to write, before and after (bench/server-latency.js).
      scrape=0
      [[ $id == latency* && $name != tyo-mq && $name != relay ]] && scrape=1
      ((scrape)) && { curl -sk "$url/api/metrics" >"$work/metrics-before.txt" || : >"$work/metrics-before.txt"; }
      if line=$(taskset -c "$bench_core" "$bin/src/siomq" bench $args --url "$url" \
                  --eio "$eio" -d "$duration" --json -q "${extra[@]}"); then
        server="{}"
        if ((scrape)); then
          curl -sk "$url/api/metrics" >"$work/metrics-after.txt" || : >"$work/metrics-after.txt"
          server=$(node bench/server-latency.js "$work/metrics-before.txt" "$work/metrics-after.txt" || echo "{}")
        fi
        printf '{"server":"%s","id":"%s","round":%d,"result":%s,"server_latency_us":%s}\n' "$name" "$id" "$round" "$line" \
          "$server" >>"$results"
      else
        printf '{"server":"%s","id":"%s","round":%d,"failed":true}\n' "$name" "$id" "$round" >>"$results"
      fi
      stop_server
    done
  done
done

mkdir -p "$(dirname "$out")"
node bench/compare-table.js "$results" "$rounds" "$duration" "$baseline" >"$out"
cat "$out"
echo "compare: wrote $out" >&2

if ((bus)) && [ -z "$only" ] && [ -z "$servers_arg" ] && [ -z "$baseline" ]; then
  bash bench/bus_compare.sh --rounds "$rounds" --duration "$duration" ${prebuilt:+--prebuilt "$prebuilt"}
fi
