#!/usr/bin/env bash
# siomq across nodes of a cluster (docs/scale-out.md): a private redis-server and three siomq-server nodes
# (one I/O thread each, memory store) on core 0, the load generator on core 1; 64-byte messages.
#
#   bash bench/cluster.sh [--duration 3] [--rounds 3] [--build DIR] [--out FILE]
#
# Shapes (medians of --rounds runs):
#   1-1 on one node, 1-1 across nodes (A -> B), 1-50 across (producer on A, consumers on B and C);
#   a consumer group of 4 members on one node, and spread over B and C (one delivery per message);
#   latency at 10,000 msg/s on one node and across (A -> B);
#   the bus: core pub/sub 1-1 on one node and across (A -> B), request/reply with the responder on one
#   node and across (window 100);
#   scaling: N generators at once, each producing on node i for a consumer on node i+1 (mod N), for
#   N = 1, 2, 3 nodes — with the interest-based relay, and with every message sent to every node as the
#   reference does (reference_relay: "always").
# On two cores everything shares the same two CPUs: read ratios within one run, not capacities.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=3
rounds=3
build=build-bench
out=""
while (($#)); do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "cluster.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [[ ! -x "$build/src/siomq-server" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIOMQ_TESTS=OFF >/dev/null
  cmake --build "$build" --target siomq-server siomq >/dev/null
fi
server="$build/src/siomq-server"
gen="$build/src/siomq"
ulimit -n "$(ulimit -Hn)" || true

work=$(mktemp -d /tmp/siomq-cluster-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

redis_port=$(free_port)
taskset -c 0 redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --logfile "$work/redis.log" &
pids+=($!)
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.05; done

# start_nodes RELAY N: N nodes on a fresh prefix; their URLs in $urls.
urls=()
start_nodes() {
  local relay=$1 n=$2 prefix="bench-$RANDOM$RANDOM" i
  urls=()
  for ((i = 0; i < n; i++)); do
    local port dir
    port=$(free_port)
    dir="$work/node-$prefix-$i"
    mkdir -p "$dir"
    cat >"$dir/settings.json" <<EOF
{"cluster":{"enabled":true,"redis_url":"redis://127.0.0.1:$redis_port","prefix":"$prefix","node_id":"n$i","reference_relay":"$relay"}}
EOF
    taskset -c 0 "$server" --port "$port" --threads 1 --storage memory --settings "$dir/settings.json" \
      --data-dir "$dir" --log-level warn >"$dir/log" 2>&1 &
    pids+=($!)
    urls+=("http://127.0.0.1:$port")
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
  done
  sleep 0.5  # every node's lease and interest written, every node's view read
}

stop_nodes() {
  local p
  for p in "${pids[@]:1}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]:1}"; do wait "$p" 2>/dev/null || true; done
  pids=("${pids[0]}")
}

# bench ARGS...: one run of the generator on core 1; prints its JSON.
bench() { taskset -c 1 "$gen" bench "$@" -d "$duration" --json -q; }
field() { node -e "const j=JSON.parse(require('fs').readFileSync(0,'utf8'));console.log(j$1)"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A results
record() { results["$1"]+="$2 "; }

for ((round = 1; round <= rounds; round++)); do
  echo "round $round/$rounds" >&2
  start_nodes auto 3
  record one-1-1 "$(bench pubsub -p 1 -c 1 --url "${urls[0]}" | field .deliveries_per_s)"
  record cross-1-1 "$(bench pubsub -p 1 -c 1 --url "${urls[0]}" --url "${urls[1]}" | field .deliveries_per_s)"
  record cross-1-50 "$(bench fanout -c 50 --url "${urls[0]}" --url "${urls[1]}" --url "${urls[2]}" | field .deliveries_per_s)"
  record one-group "$(bench group -c 4 --url "${urls[0]}" | field .deliveries_per_s)"
  record cross-group "$(bench group -c 4 --url "${urls[0]}" --url "${urls[1]}" --url "${urls[2]}" | field .deliveries_per_s)"
  lat=$(bench latency -r 10000 --url "${urls[0]}")
  record one-lat-p50 "$(field .latency_us.p50 <<<"$lat")"
  record one-lat-p99 "$(field .latency_us.p99 <<<"$lat")"
  lat=$(bench latency -r 10000 --url "${urls[0]}" --url "${urls[1]}")
  record cross-lat-p50 "$(field .latency_us.p50 <<<"$lat")"
  record cross-lat-p99 "$(field .latency_us.p99 <<<"$lat")"
  record bus-one "$(bench bus-pubsub -p 1 -c 1 --url "${urls[0]}" | field .rate)"
  record bus-cross "$(bench bus-pubsub -p 1 -c 1 --url "${urls[0]}" --url "${urls[1]}" | field .rate)"
  record bus-req-one "$(bench bus-request -w 100 --url "${urls[0]}" | field .rate)"
  record bus-req-cross "$(bench bus-request -w 100 --url "${urls[0]}" --url "${urls[1]}" | field .rate)"
  stop_nodes
  for relay in auto always; do
    for n in 1 2 3; do
      start_nodes "$relay" "$n"
      files=()
      for ((i = 0; i < n; i++)); do
        f="$work/scale-$relay-$n-$i.json"
        files+=("$f")
        bench pubsub -p 1 -c 1 --url "${urls[$i]}" --url "${urls[$(((i + 1) % n))]}" >"$f" &
      done
      wait "${!}" 2>/dev/null || true
      for f in "${files[@]}"; do while [[ ! -s "$f" ]]; do sleep 0.1; done; done
      sleep 0.2
      total=0
      for f in "${files[@]}"; do total=$((total + $(field '.deliveries_per_s|0' <"$f" | cut -d. -f1))); done
      record "scale-$relay-$n" "$total"
      stop_nodes
    done
  done
done

row() { printf '| %s | %s |\n' "$1" "$(tr ' ' '\n' <<<"${results[$2]}" | grep -v '^$' | median)"; }
{
  echo "## siomq across nodes ($(date -u +%F), $rounds rounds of ${duration} s, medians; nodes and redis on core 0, generators on core 1)"
  echo
  echo "| shape | result |"
  echo "|---|---|"
  row "1 → 1 on one node (deliveries/s)" one-1-1
  row "1 → 1 across nodes, A → B (deliveries/s)" cross-1-1
  row "1 → 50 across nodes, consumers on B and C (deliveries/s)" cross-1-50
  row "group of 4 on one node (deliveries/s)" one-group
  row "group of 4 across nodes, members on B and C (deliveries/s)" cross-group
  row "latency at 10k msg/s, one node: p50 (µs)" one-lat-p50
  row "latency at 10k msg/s, one node: p99 (µs)" one-lat-p99
  row "latency at 10k msg/s, across A → B: p50 (µs)" cross-lat-p50
  row "latency at 10k msg/s, across A → B: p99 (µs)" cross-lat-p99
  row "bus: core pub/sub 1 → 1 on one node (deliveries/s)" bus-one
  row "bus: core pub/sub 1 → 1 across nodes, A → B (deliveries/s)" bus-cross
  row "bus: request/reply, responder on the same node (round trips/s, 100 in flight)" bus-req-one
  row "bus: request/reply, responder on B (round trips/s, 100 in flight)" bus-req-cross
  for relay in auto always; do
    for n in 1 2 3; do row "scaling, $n node(s), each producing for the next, relay $relay (deliveries/s, sum)" "scale-$relay-$n"; done
  done
} | tee ${out:+"$out"}
