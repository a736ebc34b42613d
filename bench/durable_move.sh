#!/usr/bin/env bash
# Durable queues moving between the nodes of a cluster (docs/scale-out.md "Durable queues across nodes"):
# a private redis-server and two siomq-server nodes on the redis store (one I/O thread each) on core 0,
# bench/durable_move.js on core 1. For each shape, a backlog stored on A for an offline consumer is
# taken to B by the consumer's SUBSCRIBE there (a move, then the replay), and, for comparison, replayed
# on A itself (no move).
#
#   bash bench/durable_move.sh [--build DIR] [--out FILE]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build-bench
out=""
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "durable_move.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ ! -x "$build/src/siomq-server" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIOMQ_TESTS=OFF >/dev/null
  cmake --build "$build" --target siomq-server >/dev/null
fi
server="$build/src/siomq-server"
dir=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

redis_port=17400
taskset -c 0 redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >/dev/null &
pids+=($!)
sleep 0.5
for n in a b; do
  port=$([[ $n == a ]] && echo 17401 || echo 17402)
  cat > "$dir/$n.json" <<JSON
{"cluster":{"enabled":true,"redis_url":"redis://127.0.0.1:$redis_port","node_id":"node-$n","node_lease_ms":1000},
 "storage_options":{"url":"redis://127.0.0.1:$redis_port","prefix":"bench"}}
JSON
  taskset -c 0 "$server" --port "$port" --threads 1 --storage redis --settings "$dir/$n.json" --log-level warn \
    --data-dir "$dir/data-$n" >"$dir/$n.log" 2>&1 &
  pids+=($!)
done
sleep 1.5

table="| backlog | mode | stored on A (s) | moved to B and replayed (s) | replayed on A, no move (s) |
|---|---|---|---|---|"
for shape in "10000 0" "10000 1" "100000 0"; do
  read -r messages ack <<<"$shape"
  moved=$(taskset -c 1 node bench/durable_move.js http://127.0.0.1:17401 http://127.0.0.1:17402 "$messages" 64 "$ack")
  stayed=$(taskset -c 1 node bench/durable_move.js http://127.0.0.1:17401 http://127.0.0.1:17401 "$messages" 64 "$ack")
  field() { node -e "console.log(JSON.parse(process.argv[1])[process.argv[2]])" "$1" "$2"; }
  mode=$([[ $ack == 1 ]] && echo "ACK mode" || echo "durable")
  table+="
| $messages | $mode | $(field "$moved" store_s) | $(field "$moved" move_and_replay_s) | $(field "$stayed" move_and_replay_s) |"
done
rate() { taskset -c 1 node bench/durable_rate.js "$@" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).acked_per_s))"; }
table+="

| durable + ACK 1 → 1, 20,000 messages, 2,000 confirms in flight | acked/s |
|---|---|
| producer and consumer on A | $(rate http://127.0.0.1:17401 20000 64 2000) |
| producer on B, consumer on A (each confirm waits for A's answer) | $(rate http://127.0.0.1:17402 20000 64 2000 http://127.0.0.1:17401) |"
echo "$table"
if [[ -n "$out" ]]; then
  { echo "# Durable queues moving between nodes ($(date -u +%Y-%m-%d), bench/durable_move.sh)"; echo; echo "$table"; } >"$out"
fi
