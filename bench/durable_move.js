#!/usr/bin/env node
// How long a durable consumer's backlog takes to move between nodes (docs/scale-out.md "Durable queues
// across nodes"). Usage: node bench/durable_move.js <url A> <url B> [messages] [size] [ack]
// A consumer subscribes durably on A and leaves; a producer on A stores `messages` copies for it (confirms,
// 2,000 in flight); the consumer then subscribes on B, which takes its home: A moves the queue, B adopts
// it and replays it. Measured: the store on A, and from the SUBSCRIBE on B to the last copy received (with
// `ack` = 1, ACK mode: each copy ACKed as it comes, 256 unacknowledged at most). Prints one JSON line.
const { connect } = require('./lib');

const [urlA, urlB] = [process.argv[2], process.argv[3]];
const messages = Number(process.argv[4] || 10000);
const size = Number(process.argv[5] || 64);
const ack = process.argv[6] === '1';

(async () => {
  const tag = `move-${process.pid}-${Date.now()}`;
  const sub = { event: 'e', producer: `${tag}-p`, consumer: `${tag}-c`, consumer_id: `${tag}-c`, durable: true, ack };
  const first = await connect(urlA);
  first.emit('CONSUMER', { name: sub.consumer, id: sub.consumer });
  first.emit('SUBSCRIBE', sub);
  await first.emitWithAck('PING', {});
  first.close();
  await new Promise((r) => setTimeout(r, 300));  // the name released in the cluster

  const producer = await connect(urlA);
  const body = 'x'.repeat(size);
  let inFlight = 0;
  let wake = null;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < messages; i++) {
    while (inFlight >= 2000) await new Promise((r) => { wake = r; });
    inFlight++;
    producer.emit('PRODUCE', { event: 'e', from: sub.producer, message: body }, (r) => {
      if (!r || !r.ok || r.stored !== 1) { console.error('confirm', r); process.exit(1); }
      inFlight--;
      if (wake) { const w = wake; wake = null; w(); }
    });
  }
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 2));
  const stored = Number(process.hrtime.bigint() - t0) / 1e9;

  const consumer = await connect(urlB);
  let got = 0;
  consumer.on(`CONSUME-${sub.producer}-e`, (m) => {
    got++;
    if (ack) consumer.emit('ACK', { msgId: m.msgId });
  });
  consumer.emit('CONSUMER', { name: sub.consumer, id: sub.consumer });
  const t1 = process.hrtime.bigint();
  consumer.emit('SUBSCRIBE', sub);
  while (got < messages) await new Promise((r) => setTimeout(r, 1));
  const moved = Number(process.hrtime.bigint() - t1) / 1e9;
  console.log(JSON.stringify({ messages, size, ack, store_s: +stored.toFixed(3), move_and_replay_s: +moved.toFixed(3),
    moved_per_s: Math.round(messages / moved) }));
  producer.close();
  consumer.close();
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
