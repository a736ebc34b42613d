#!/usr/bin/env node
// Acknowledged durable messages per second, 1 producer -> 1 ACK-mode consumer, socket.io-client@4 over
// WebSocket. Usage: node bench/durable_rate.js [url] [messages] [size] [window] [consumer url]
// (the consumer on another node of a cluster: its copies are stored on its node, and each confirm waits
// for that node's answer).
// The producer sends durable PRODUCEs with publisher confirms, keeping at most `window` unconfirmed; the
// consumer (durable + ack) ACKs each delivery. The run ends when every message is acknowledged (ACK_OK).
// Prints one JSON line. The Node client is part of the measurement (see issue 6's C++ load generator).
const { connect: connectTo } = require('./lib');

const url = process.argv[2] || 'http://127.0.0.1:17352';
const connect = () => connectTo(url);
const messages = Number(process.argv[3] || 50000);
const size = Number(process.argv[4] || 64);
const window = Number(process.argv[5] || 2000);
const consumerUrl = process.argv[6] || url;

(async () => {
  const producer = await connect();
  const consumer = await connectTo(consumerUrl);
  const tag = `bench-${process.pid}-${Date.now()}`;
  let acked = 0;
  consumer.emit('CONSUMER', { name: `${tag}-c`, id: `${tag}-c` });
  consumer.emit('SUBSCRIBE', { event: 'bench', producer: `${tag}-p`, consumer: `${tag}-c`, consumer_id: `${tag}-c`,
    durable: true, ack: true, ack_timeout: 60 });
  consumer.on(`CONSUME-${tag}-p-bench`, (m) => consumer.emit('ACK', { msgId: m.msgId }));
  consumer.on('ACK_OK', () => { acked++; });
  consumer.on('ACK_FAIL', (m) => { console.error('ACK_FAIL', m); process.exit(1); });
  await consumer.emitWithAck('PING', {});
  if (consumerUrl !== url) await new Promise((r) => setTimeout(r, 500));  // its interest reaches the producer's node
  const body = 'x'.repeat(size);
  let inFlight = 0;
  let confirmed = 0;
  let wake = null;
  const start = process.hrtime.bigint();
  for (let sent = 0; sent < messages; sent++) {
    while (inFlight >= window) await new Promise((r) => { wake = r; });
    inFlight++;
    producer.emit('PRODUCE', { event: 'bench', from: `${tag}-p`, message: body }, (r) => {
      if (!r || !r.ok || r.stored !== 1) { console.error('confirm', r); process.exit(1); }
      inFlight--;
      confirmed++;
      if (wake) { const w = wake; wake = null; w(); }
    });
  }
  while (acked < messages) await new Promise((r) => setTimeout(r, 5));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ url, messages, size, window, confirmed, acked, seconds: +seconds.toFixed(3),
    acked_per_s: Math.round(acked / seconds) }));
  producer.close();
  consumer.close();
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
