// 1,000 concurrent socket.io-client@4 connections. Run alone (see run.sh): it loads the machine.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { connectV4, ping, waitFor, withTimeout } = require('./lib/clients');

const CLIENTS = 1000;
const BATCH = 100;

test(`${CLIENTS} concurrent websocket clients connect, PING and disconnect`, async (t) => {
  const server = await startServer(t);
  const sockets = [];
  t.after(() => { for (const s of sockets) s.close(); });
  const t0 = Date.now();
  for (let i = 0; i < CLIENTS; i += BATCH) {
    const batch = [];
    for (let j = i; j < Math.min(CLIENTS, i + BATCH); j++) {
      batch.push(connectV4(server.url, { transports: ['websocket'] }, 30000));
    }
    sockets.push(...await Promise.all(batch));
  }
  const connectedIn = Date.now() - t0;
  assert.equal(sockets.length, CLIENTS);
  assert.ok(sockets.every((s) => s.connected));
  assert.equal(new Set(sockets.map((s) => s.id)).size, CLIENTS, 'every socket id is unique');

  // All of them connected at once, each PINGs (in batches, so that acks do not time out on a slow box).
  let disconnects = 0;
  for (const s of sockets) s.on('disconnect', () => { disconnects++; });
  for (let i = 0; i < CLIENTS; i += BATCH) {
    const replies = await Promise.all(sockets.slice(i, i + BATCH).map((s, k) => ping(s, { n: i + k })));
    replies.forEach((r, k) => {
      assert.equal(r.body.n, i + k);
      assert.equal(r.body.pong, 'PONG');
    });
  }
  assert.equal(disconnects, 0, 'nobody was dropped while all were connected');
  t.diagnostic(`connected ${CLIENTS} clients in ${connectedIn} ms; whole run ${Date.now() - t0} ms`);

  for (const s of sockets) s.disconnect();
  await delay(500);

  // Healthy afterwards: a fresh client works, polling and websocket.
  for (const transports of [['websocket'], ['polling']]) {
    const fresh = await connectV4(server.url, { transports });
    const { body } = await ping(fresh, { after: 'crowd' });
    assert.equal(body.after, 'crowd');
    fresh.close();
  }
  await withTimeout(server.stop(), 10000, 'server stop');
});
