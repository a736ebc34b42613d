#!/usr/bin/env bash
# The bus side by side with nats-server (Debian 12's 2.9.10, JetStream on): the same shapes driven by
# `siomq bench bus-*` against siomq and by bench/nats/nats_bench.c (libnats, Debian's NATS C client)
# against nats-server. Each run is on a freshly started server pinned to core 0, the generator on core 1;
# ROUNDS rounds, the order alternating; medians and siomq/nats ratios go to bench/results/<date>-bus.md.
# nats-server 2.9 answers a JetStream publish before any fsync, so the stream rows compare siomq's
# `--sync never` with it and show `--sync batch` (fsynced group commit, the default) beside it.
#
#   bash bench/bus_compare.sh [--rounds N] [--duration SECONDS] [--out FILE] [--prebuilt DIR]
#
# --prebuilt DIR  runs DIR/src/siomq-server and DIR/src/siomq instead of building build/.
set -euo pipefail
called_from=$PWD
cd "$(dirname "$0")/.."

rounds=3
duration=5
prebuilt=""
out="bench/results/$(date -u +%F)-bus.md"
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --prebuilt) prebuilt=$(cd "$called_from" && realpath "$2"); shift 2 ;;
    *) echo "usage: bash bench/bus_compare.sh [--rounds N] [--duration SECONDS] [--out FILE] [--prebuilt DIR]" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh
if ! command -v nats-server >/dev/null || [ ! -f /usr/include/nats/nats.h ]; then
  ${SUDO:-$( [ "$(id -u)" -eq 0 ] || echo sudo )} apt-get install -y -qq --no-install-recommends nats-server libnats-dev
fi
# shellcheck source=bench/lib.sh
source bench/lib.sh
release_binaries "$prebuilt"
work=$(mktemp -d)
trap 'pkill -f "siomq-server --port 7399" 2>/dev/null || true; pkill -f "nats-server -p 4399" 2>/dev/null || true; rm -rf "$work"' EXIT
cc -O2 -Wall -o "$work/nats_bench" bench/nats/nats_bench.c -lnats
# The stream caps raised past what a run stores (the defaults, 256 MiB a realm counted as twice each message
# plus 384 bytes, hold about 290k 64-byte messages: 2 s at full rate), as nats-server's stream has no limit.
echo '{"bus": {"max_stream_bytes_per_realm": 4294967296, "max_stream_bytes_total": 8589934592}}' >"$work/settings.json"

start_siomq() {  # $1: sync mode
  rm -rf "$work/data"
  taskset -c 0 "$bin/src/siomq-server" --port 7399 --threads 1 --sync "$1" --data-dir "$work/data" --settings "$work/settings.json" \
    --log-level warn &
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/7399) 2>/dev/null && return; sleep 0.05; done
}
start_nats() {
  rm -rf "$work/js"
  taskset -c 0 nats-server -p 4399 -js -sd "$work/js" >/dev/null 2>&1 &
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/4399) 2>/dev/null && return; sleep 0.05; done
}
stop_all() {
  pkill -f "siomq-server --port 7399" 2>/dev/null || true
  pkill -f "nats-server -p 4399" 2>/dev/null || true
  sleep 0.3
}
siomq_run() {  # scenario, sync, extra args...: prints the rate
  local scenario=$1 sync=$2
  shift 2
  start_siomq "$sync"
  taskset -c 1 "$bin/src/siomq" bench "$scenario" --url http://127.0.0.1:7399 -d "$duration" -q --json "$@" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);
      console.log(r.rate + (r.latency_us ? " " + r.latency_us.p50 : ""))})'
  stop_all
}
nats_run() {  # mode, args...: prints the rate (and p50 µs for request)
  start_nats
  taskset -c 1 "$work/nats_bench" nats://127.0.0.1:4399 "$@" | awk '{ if ($0 ~ /round trips/) print $1, $5; else print $1 }'
  stop_all
}

declare -A results
shapes=("pubsub-1" "pubsub-50" "request" "stream-never" "stream-batch" "pull")
for ((r = 0; r < rounds; ++r)); do
  for shape in "${shapes[@]}"; do
    case $shape in
      pubsub-1) s=$(siomq_run bus-pubsub batch -c 1); n=$(nats_run pubsub "$duration" 64 1) ;;
      pubsub-50) s=$(siomq_run bus-pubsub batch -c 50); n=$(nats_run pubsub "$duration" 64 50) ;;
      request) s=$(siomq_run bus-request batch -w 1); n=$(nats_run request "$duration" 64) ;;
      stream-never) s=$(siomq_run bus-stream never -w 1000); n=$(nats_run stream "$duration" 64 1000) ;;
      stream-batch) s=$(siomq_run bus-stream batch -w 1000); n=$(nats_run stream "$duration" 64 1000) ;;
      pull) s=$(siomq_run bus-pull batch -w 1000); n=$(nats_run pull "$duration" 64 1000) ;;
    esac
    results[$shape,siomq]+="$s;"
    results[$shape,nats]+="$n;"
    echo "round $r $shape: siomq $s | nats $n" >&2
  done
done

median() { tr ';' '\n' | awk 'NF' | sort -n -k1,1 | awk '{a[NR]=$0} END {print a[int((NR+1)/2)]}'; }
{
  echo "# The bus against nats-server $(nats-server --version 2>&1 | awk '{print $NF}') — $(date -u +%F)"
  echo
  echo "\`bash bench/bus_compare.sh --rounds $rounds --duration $duration\`: medians of $rounds rounds, 64-byte messages,"
  echo "server on core 0, generator on core 1 (2-core VM). siomq: one worker thread; nats-server: JetStream on, file storage."
  echo
  echo "| shape | siomq | nats-server | siomq / nats |"
  echo "|---|---|---|---|"
  for shape in "${shapes[@]}"; do
    s=$(echo "${results[$shape,siomq]}" | median)
    n=$(echo "${results[$shape,nats]}" | median)
    ratio=$(awk -v a="${s%% *}" -v b="${n%% *}" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "—" }')
    if [ "$shape" = request ]; then  # the goal is on latency: p50 siomq / p50 nats
      ratio="$ratio (p50: $(awk -v a="${s##* }" -v b="${n##* }" 'BEGIN { if (b > 0) printf "%.2f×", a / b }'))"
    fi
    case $shape in
      pubsub-1) label="core pub/sub 1 → 1 (deliveries/s)" ;;
      pubsub-50) label="core pub/sub 1 → 50 (deliveries/s)" ;;
      request) label="request/reply, 1 in flight (round trips/s, p50 µs)" ;;
      stream-never) label="stream publish acked, window 1000 (siomq --sync never)" ;;
      stream-batch) label="stream publish acked, window 1000 (siomq --sync batch: fsynced)" ;;
      pull) label="pull consume + ack, batches of 100 (msgs/s)" ;;
    esac
    echo "| $label | $s | $n | $ratio |"
  done
} > "$out"
cat "$out"
