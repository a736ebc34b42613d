#!/usr/bin/env bash
# Instructions per acked durable message, per server thread, counted by callgrind: a measure of the
# server's work that the shared VM's noise does not move (repeated runs of one build agree within about
# 1.5%), for judging a change of a few percent that timed runs cannot see. Instructions are not time:
# cache misses do not show (a hash lookup removed saves more time than its instructions say), and at
# the pace valgrind allows (the default 2,000 msg/s) the store writer's groups are small, so its count
# is not its shape at full speed. Timed runs (compare.sh) stay the judge of speed.
#
#   bash bench/instructions.sh SERVER-BINARY [RATE] [SECONDS]
#
# Needs valgrind (`apt-get install valgrind`) and a built `siomq` generator next to the server
# (SIOMQ_CLI to use another). Prints one line: acked=N writer=… queues=… worker=… (instructions a message).
set -euo pipefail
server=$(realpath "$1")
rate=${2:-2000}
seconds=${3:-5}
cli=${SIOMQ_CLI:-$(dirname "$server")/siomq}
port=17997
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
# Instrumentation starts off: only what runs between the two callgrind_control calls is counted.
valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --dump-instr=no \
  --callgrind-out-file="$work/cg.out" "$server" --threads 1 --storage file --sync batch \
  --data-dir "$work/data" --port "$port" --log-level warn >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.2; done
run() { "$cli" bench durable -p 1 -c 1 --rate "$rate" --url "http://127.0.0.1:$port" -d "$1" -q --json; }
run 2 >/dev/null  # warm-up: first-use costs (RocksDB's files, the allocator's caches) are not counted
callgrind_control -i on "$pid" >/dev/null 2>&1
out=$(run "$seconds")
callgrind_control -d "$pid" >/dev/null 2>&1
acked=$(node -e 'console.log(JSON.parse(process.argv[1]).acked)' "$out")
line="acked=$acked"
# One file per thread of the dump; a thread is named by the function its work runs under.
for f in "$work"/cg.out.1-*; do
  ir=$(awk '/^summary:/ {print $2; exit}' "$f")
  [ -n "$ir" ] && [ "$ir" -gt 0 ] || continue
  name=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null | grep -m1 -o -E \
    'store::Writer::run|DurableQueues::State::run_written|WebSocketConnection::on_readable' || true)
  case $name in
    *Writer*) name=writer ;; *run_written*) name=queues ;; *on_readable*) name=worker ;; *) continue ;;
  esac
  line+=" $name=$((ir / acked))"
done
echo "$line"
