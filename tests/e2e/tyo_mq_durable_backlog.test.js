// Issue 12, item 7: a durable backlog larger than the connection's outbound bound is replayed a window
// at a time — in ACK mode 256 copies, more as ACKs come back; without ACK mode the next window once the
// transport took the previous one — never queued at once, so the consumer is not cut as slow and nothing is lost.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer } = require('./lib/server');
const { connectV4, waitFor, TIME_SCALE } = require('./lib/clients');

async function connect(t, server) {
  const socket = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => socket.close());
  return socket;
}

// Subscribes `spec` durably, leaves, and has N messages {k, body} stored for it, each confirmed.
async function storeBacklog(t, server, spec, N, body) {
  const first = await connect(t, server);
  first.emit('SUBSCRIBE', spec);
  await first.timeout(5000 * TIME_SCALE).emitWithAck('PING', {});
  first.close();
  await new Promise((r) => setTimeout(r, 200));
  const p = await connect(t, server);
  for (let i = 0; i < N; i += 100) {
    const batch = [];
    for (let k = i; k < Math.min(N, i + 100); k++) {
      batch.push(p.timeout(30000 * TIME_SCALE).emitWithAck('PRODUCE', { event: 'e', from: 'p', message: { k, body } }));
    }
    for (const r of await Promise.all(batch)) assert.equal(r.stored, 1);
  }
}

test('an ACK-mode backlog of 4 MB drains through a 1 MB outbound bound, in order, without a cut', { timeout: 120000 }, async (t) => {
  const server = await startServer(t, { args: ['--storage', 'file'], settings: { transport: { max_outbound_bytes: 1000000 } } });
  const spec = { event: 'e', producer: 'p', consumer: 'w', consumer_id: 'w', durable: true, ack: true, ack_timeout: 60 };
  const N = 2000;
  await storeBacklog(t, server, spec, N, 'x'.repeat(2000));

  const w = await connect(t, server);
  let cut = false;
  w.on('disconnect', () => { cut = true; });
  const seen = [];
  let inFlightMax = 0;
  let acked = 0;
  w.on('CONSUME-p-e', (m) => {
    seen.push(m.message.k);
    inFlightMax = Math.max(inFlightMax, seen.length - acked);
    // ACK a little later, as a real worker does: the window, not the consumer's speed, bounds what is out.
    setTimeout(() => { acked++; w.emit('ACK', { msgId: m.msgId }); }, 1);
  });
  w.emit('SUBSCRIBE', spec);
  await waitFor(() => seen.length >= N || cut, 90000 * TIME_SCALE, 'the whole backlog');
  assert.equal(cut, false, 'the consumer was not cut as slow');
  assert.deepEqual(seen.slice(0, N), Array.from({ length: N }, (_, i) => i), 'every copy once, in order');
  assert.ok(inFlightMax <= 256 + 5, `at most the window in flight (saw ${inFlightMax})`);
  assert.doesNotMatch(server.logs(), /slow consumer/);
});

// Without ACK mode the backlog went out at once: the consumer was cut as slow and every row was deleted
// when queued, so what the cut dropped was lost. Now a window goes once the transport took the previous
// one, and a row is deleted only then.
test('a backlog without ACK mode of 4 MB drains through a 1 MB outbound bound, in order, nothing lost', { timeout: 120000 }, async (t) => {
  const server = await startServer(t, { args: ['--storage', 'file'], settings: { transport: { max_outbound_bytes: 1000000 } } });
  const spec = { event: 'e', producer: 'p', consumer: 'w', consumer_id: 'w', durable: true };
  const N = 2000;
  await storeBacklog(t, server, spec, N, 'x'.repeat(2000));

  const w = await connect(t, server);
  let cut = false;
  w.on('disconnect', () => { cut = true; });
  const seen = [];
  w.on('CONSUME-p-e', (m) => seen.push(m.message.k));
  w.emit('SUBSCRIBE', spec);
  await waitFor(() => seen.length >= N || cut, 90000 * TIME_SCALE, 'the whole backlog');
  assert.equal(cut, false, 'the consumer was not cut as slow');
  assert.deepEqual(seen.slice(0, N), Array.from({ length: N }, (_, i) => i), 'every copy once, in order');
  assert.doesNotMatch(server.logs(), /slow consumer/);
  // Every row was deleted once sent: a second subscription gets nothing more.
  w.emit('SUBSCRIBE', spec);
  await w.timeout(5000 * TIME_SCALE).emitWithAck('PING', {});
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(seen.length, N);
});

// Over long-polling the transport's receipt is the GET that takes the frames: a backlog of several
// windows drains too.
test('a backlog without ACK mode drains to a long-polling consumer, window after window', { timeout: 60000 }, async (t) => {
  const server = await startServer(t, { args: ['--storage', 'file'] });
  const spec = { event: 'e', producer: 'p', consumer: 'pw', consumer_id: 'pw', durable: true };
  const N = 700;
  await storeBacklog(t, server, spec, N, '');
  const w = await connectV4(server.url, { transports: ['polling'] });
  t.after(() => w.close());
  const seen = [];
  w.on('CONSUME-p-e', (m) => seen.push(m.message.k));
  w.emit('SUBSCRIBE', spec);
  await waitFor(() => seen.length >= N, 30000 * TIME_SCALE, 'the whole backlog over polling');
  assert.deepEqual(seen.slice(0, N), Array.from({ length: N }, (_, i) => i));
});
