#!/usr/bin/env node
// The server's own part of a latency run: siomq_read_to_write_seconds (from a WebSocket read to the write
// of what it caused, net/write_latency.h) scraped from /api/metrics before and after the run; the
// difference's p50 and p99, interpolated within a bucket as Prometheus's histogram_quantile does.
// Prints {"p50":µs,"p99":µs,"count":n}, or {} when the server has no such histogram (an older siomq).
// Usage: node bench/server-latency.js BEFORE.txt AFTER.txt
const fs = require('fs');

function buckets(file) {
  const out = new Map();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^siomq_read_to_write_seconds_bucket\{le="([^"]+)"\} (\d+)/.exec(line);
    if (m) out.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  }
  return out;
}

const [before, after] = process.argv.slice(2).map(buckets);
if (after.size === 0) {
  process.stdout.write('{}\n');
  process.exit(0);
}
const bounds = [...after.keys()].sort((a, b) => a - b);
const cumulative = bounds.map((le) => after.get(le) - (before.get(le) || 0));
const total = cumulative[cumulative.length - 1];
function quantile(q) {
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) {
    if (cumulative[i] < rank) continue;
    const lo = i === 0 ? 0 : bounds[i - 1];
    const below = i === 0 ? 0 : cumulative[i - 1];
    if (bounds[i] === Infinity) return lo * 1e6;  // past the last bound: its lower edge, as Prometheus does
    const inBucket = cumulative[i] - below;
    return (lo + (bounds[i] - lo) * (inBucket ? (rank - below) / inBucket : 1)) * 1e6;
  }
  return undefined;
}
process.stdout.write(JSON.stringify(total ? { p50: quantile(0.5), p99: quantile(0.99), count: total } : {}) + '\n');
