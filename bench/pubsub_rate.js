#!/usr/bin/env node
// Delivered messages per second, 1 producer -> C consumers, with socket.io-client@4 over WebSocket.
// Usage: node bench/pubsub_rate.js [url] [consumers] [messages] [size]
// The producer sends `messages` PRODUCEs of `size`-byte strings in bursts of 500 (acknowledged by a PING
// between bursts, so the client never queues unboundedly); the run ends when every consumer has them all.
// With TOKEN set in the environment every connection first sends AUTHENTICATION {token} (the gate's
// cost on an authenticated socket). Prints one JSON line. Node clients are slow: the figure is bound by the client side (see issue 6's
// C++ load generator for the server's limits).
const { connect: connectTo } = require('./lib');

const url = process.argv[2] || 'http://127.0.0.1:17352';
const token = process.env.TOKEN;
const connect = async () => {
  const s = await connectTo(url);
  if (token) {
    const ok = new Promise((resolve, reject) => { s.once('AUTH_OK', resolve); s.once('AUTH_FAIL', reject); });
    s.emit('AUTHENTICATION', { token });
    await ok;
  }
  return s;
};
const consumers = Number(process.argv[3] || 1);
const messages = Number(process.argv[4] || 100000);
const size = Number(process.argv[5] || 64);

(async () => {
  const producer = await connect();
  const subs = [];
  let delivered = 0;
  for (let i = 0; i < consumers; i++) {
    const c = await connect();
    c.emit('SUBSCRIBE', { event: 'bench', producer: 'bench-p', consumer: `bench-c${i}` });
    c.on('CONSUME-bench-p-bench', () => { delivered++; });
    await c.emitWithAck('PING', {});
    subs.push(c);
  }
  const body = 'x'.repeat(size);
  const want = messages * consumers;
  const start = process.hrtime.bigint();
  for (let sent = 0; sent < messages;) {
    for (let k = 0; k < 500 && sent < messages; k++, sent++) producer.emit('PRODUCE', { event: 'bench', from: 'bench-p', message: body });
    await producer.emitWithAck('PING', {});
  }
  while (delivered < want) await new Promise((r) => setTimeout(r, 5));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ url, consumers, messages, size, delivered, seconds: +seconds.toFixed(3),
    deliveries_per_s: Math.round(delivered / seconds) }));
  for (const s of [producer, ...subs]) s.close();
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
