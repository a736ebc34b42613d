#!/usr/bin/env node
// PING round-trip rate of one socket.io-client@4 WebSocket client against a running server.
// Usage: node bench/ping_rate.js [url] [seconds] [window]
//   window 1 = strict round trips (one PING in flight); larger windows keep that many in flight.
// Prints one JSON line: {"url","seconds","window","pings","rate_per_s","p50_ms","p99_ms"}.
const { io } = require('./lib');

const url = process.argv[2] || 'http://127.0.0.1:17352';
const seconds = Number(process.argv[3] || 5);
const window = Number(process.argv[4] || 1);

const socket = io(url, { transports: ['websocket'], reconnection: false });
socket.on('connect_error', (e) => { console.error('connect_error', e.message); process.exit(1); });
socket.on('connect', async () => {
  const latencies = [];
  const deadline = process.hrtime.bigint() + BigInt(seconds * 1e9);
  let done = 0;
  async function lane() {
    while (process.hrtime.bigint() < deadline) {
      const t0 = process.hrtime.bigint();
      await socket.emitWithAck('PING', { n: done });
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      done++;
    }
  }
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: window }, lane));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  console.log(JSON.stringify({ url, seconds: elapsed, window, pings: done, rate_per_s: Math.round(done / elapsed),
    p50_ms: +q(0.5).toFixed(3), p99_ms: +q(0.99).toFixed(3) }));
  socket.close();
  process.exit(0);
});
