#!/usr/bin/env node
// bench/compare.sh's table: the median of each metric over the rounds, per server, and how many times
// better siomq is than each peer (throughput: siomq / peer; latency and memory: peer / siomq).
// With a baseline (siomq at an earlier revision), its column shows siomq / baseline the same way.
// Usage: node bench/compare-table.js RESULTS.jsonl ROUNDS DURATION [BASELINE_REV]
const fs = require('fs');
const os = require('os');
const { execSync } = require('child_process');

const [file, rounds, duration, baseline] = process.argv.slice(2);
const rows = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

// The generator's one-way latency, and the server's own part of it (siomq only: its read-to-write histogram,
// bench/server-latency.js), which the brief's latency bar is judged on.
function latency() {
  return [['p50 µs', (r) => r.latency_us && r.latency_us.p50, false], ['p99 µs', (r) => r.latency_us && r.latency_us.p99, false],
    ['server-side p50 µs', (r, row) => row.server_latency_us && row.server_latency_us.p50, false],
    ['server-side p99 µs', (r, row) => row.server_latency_us && row.server_latency_us.p99, false]];
}

// id -> what is read from a result, and whether more is better.
const metrics = {
  'pubsub-1-1': [['deliveries/s', (r) => r.deliveries_per_s, true]],
  'fanout-1-50': [['deliveries/s', (r) => r.deliveries_per_s, true]],
  'latency-2k': latency(),
  'latency-10k': latency(),
  durable: [['acked/s', (r) => r.acked_per_s, true]],
  'durable-4-16': [['acked/s', (r) => r.acked_per_s, true]],
  topics: [['deliveries/s', (r) => r.deliveries_per_s, true]],
  group: [['deliveries/s', (r) => r.deliveries_per_s, true]],
  chunked: [['MiB/s', (r) => (r.deliveries_per_s * r.size) / (1 << 20), true]],
  'connections-10k': [['KiB RSS / connection', (r) => r.server_kib_per_connection, false]],
};
const what = {
  'pubsub-1-1': '1 producer → 1 consumer, 64 B, max rate',
  'fanout-1-50': '1 producer → 50 consumers, 64 B, max rate',
  'latency-2k': 'one-way latency at 2,000 msg/s, 64 B',
  'latency-10k': 'one-way latency at 10,000 msg/s, 64 B',
  durable: 'durable + ACK, 1 → 1, 64 B (siomq: file store, group commit)',
  'durable-4-16': 'durable + ACK, 4 producers → 16 consumers, 64 B (file store, group commit)',
  topics: 'wildcard subscribers, 1 → 4',
  group: 'consumer group of 4 workers',
  chunked: '1 MiB messages as chunks, 1 → 1',
  'connections-10k': '10,000 idle connections',
};
// The peers in the table: those that ran, in this order.
const peers = ['baseline', 'siomq-tls', 'siomq-q2', 'tyo-mq', 'relay'].filter((s) => rows.some((r) => r.server === s));
const label = { baseline: `siomq ${baseline || 'baseline'}`, 'siomq-tls': 'siomq over TLS', 'siomq-q2': 'siomq, 2 queues threads', 'tyo-mq': 'tyo-mq', relay: 'relay' };

const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return undefined;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x) => {
  if (x === undefined) return '—';
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString('en-US');
  return x.toFixed(x >= 10 ? 1 : 2);
};

function cell(id, server, read) {
  const mine = rows.filter((r) => r.id === id && r.server === server);
  if (mine.length === 0) return { text: 'not run' };
  const lacks = mine.find((r) => r.lacks);
  if (lacks) return { text: `n/a: ${lacks.lacks}` };
  const ok = mine.filter((r) => r.result);
  const failed = mine.length - ok.length;
  const lost = ok.reduce((n, r) => n + (r.result.lost || 0), 0);
  const value = median(ok.map((r) => read(r.result, r)));
  let text = fmt(value);
  if (failed) text += ` (${failed} of ${mine.length} runs failed)`;
  if (lost) text += ` (${lost.toLocaleString('en-US')} lost)`;
  return { text, value };
}

function git(cmd) {
  try { return execSync(cmd, { encoding: 'utf8' }).trim(); } catch { return '?'; }
}

const lines = [];
lines.push(`# siomq side by side — ${new Date().toISOString().slice(0, 10)}`);
lines.push('');
lines.push(`Written by \`bench/compare.sh\` at ${git('git rev-parse --short HEAD')}: ${os.cpus().length} cores ` +
  `(${os.cpus()[0] ? os.cpus()[0].model.trim() : '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.release()}; ` +
  `node ${process.version}. Medians of ${rounds} rounds of ${duration} s, order alternating; each run on a fresh ` +
  'server pinned to core 0, the load generator (`siomq bench`, one thread) on core 1.');
lines.push('');
lines.push('- **siomq**: `siomq-server --threads 1 --storage file --sync batch` (the embedded default store, fsynced group commits).');
if (peers.includes('tyo-mq'))
  lines.push('- **tyo-mq**: the Node.js broker from npm, `tyo-mq@0.2.14` (Socket.IO v2, driven over Engine.IO 3), its logger silenced.');
if (peers.includes('baseline'))
  lines.push(`- **siomq ${baseline}**: the same server as built at revision ${baseline}, with the same flags.`);
if (peers.includes('siomq-tls'))
  lines.push('- **siomq over TLS**: the same server and flags with `--tls-cert/--tls-key` (a self-signed P-256 certificate), ' +
    'driven over `wss://` by the same load generator; its "× better" is the cost of TLS.');
if (peers.includes('siomq-q2'))
  lines.push('- **siomq, 2 queues threads**: the same server and flags with `--queue-threads 2`: two durable queue ' +
    'shards sharing the one server core (what sharding costs or saves there; it cannot show scaling).');
if (peers.includes('relay'))
  lines.push('- **relay**: `bench/peers/relay.js`, a hand-written socket.io@4 relay with an in-memory durable queue and ACK.');
lines.push('');
lines.push('"× better" is siomq / peer for throughput and peer / siomq for latency and memory. On a shared virtual ' +
  'machine absolute figures move by up to 2× between runs minutes apart (latency tails most): compare the ratios, ' +
  'measured side by side.');
lines.push('');
lines.push(`| scenario | metric | siomq |${peers.map((p) => ` ${label[p]} | × better |`).join('')}`);
lines.push(`|---|---|---:|${peers.map(() => '---:|---:|').join('')}`);
for (const [id, list] of Object.entries(metrics)) {
  for (const [name, read, higher] of list) {
    const cells = Object.fromEntries(['siomq', ...peers].map((s) => [s, cell(id, s, read)]));
    if (Object.values(cells).every((c) => c.text === 'not run')) continue;
    const ratio = (peer) => {
      const a = cells.siomq.value;
      const b = cells[peer].value;
      if (a === undefined || b === undefined || a <= 0 || b <= 0) return '—';
      return `${(higher ? a / b : b / a).toFixed(1)}×`;
    };
    lines.push(`| ${what[id]} | ${name} | ${cells.siomq.text} |` +
      peers.map((p) => ` ${cells[p].text} | ${ratio(p)} |`).join(''));
  }
}
process.stdout.write(lines.join('\n') + '\n');
