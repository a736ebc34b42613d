// Issue 12, item 7: an ACK-mode backlog larger than the connection's outbound bound is replayed through
// a prefetch window (256 copies), more as ACKs come back — never queued at once, so the consumer is not
// cut as slow and the queue drains.
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

test('an ACK-mode backlog of 4 MB drains through a 1 MB outbound bound, in order, without a cut', { timeout: 120000 }, async (t) => {
  const server = await startServer(t, { args: ['--storage', 'file'], settings: { transport: { max_outbound_bytes: 1000000 } } });
  const spec = { event: 'e', producer: 'p', consumer: 'w', consumer_id: 'w', durable: true, ack: true, ack_timeout: 60 };
  const first = await connect(t, server);
  first.emit('SUBSCRIBE', spec);
  await first.timeout(5000 * TIME_SCALE).emitWithAck('PING', {});
  first.close();
  await new Promise((r) => setTimeout(r, 200));

  const p = await connect(t, server);
  const N = 2000;
  const body = 'x'.repeat(2000);
  for (let i = 0; i < N; i += 100) {
    const batch = [];
    for (let k = i; k < i + 100; k++) {
      batch.push(p.timeout(30000 * TIME_SCALE).emitWithAck('PRODUCE', { event: 'e', from: 'p', message: { k, body } }));
    }
    for (const r of await Promise.all(batch)) assert.equal(r.stored, 1);
  }

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
