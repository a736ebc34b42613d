// tyo-mq: chunked large messages both ways (§3.6, §4.2), broadcast (§4.6), QUIT, HELLO, DEBUG.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { startServer, delay } = require('./lib/server');
const { connectV4, once: onceArgs, waitFor, onChunked } = require('./lib/clients');

const once = async (socket, event) => (await onceArgs(socket, event))[0];
const PIECE = 256 * 1024;

async function clients(server, n) {
  const list = [];
  for (let i = 0; i < n; i++) list.push(await connectV4(server.url, { transports: ['websocket'] }));
  return list;
}

async function settle(...sockets) {
  await Promise.all(sockets.map((s) => s.timeout(10000).emitWithAck('PING', {})));
  await delay(50);
}

// Sends a PRODUCE as PRODUCE_CHUNK pieces, as the tyo-mq clients do for messages over 256 KiB.
function produceChunked(socket, produce) {
  const text = JSON.stringify(produce);
  const transferId = `t-${crypto.randomBytes(4).toString('hex')}`;
  const total = Math.ceil(text.length / PIECE);
  for (let i = 0; i < total; i++) {
    socket.emit('PRODUCE_CHUNK', { transferId, index: i, total, data: text.slice(i * PIECE, (i + 1) * PIECE) });
  }
}

// Resolves with the first complete chunked delivery of `event`.
function receiveChunked(socket, event) {
  return new Promise((resolve) => onChunked(socket, event, resolve));
}

for (const mib of [1, 20]) {
  test(`a ${mib} MiB message travels chunked both ways`, { timeout: 120000 }, async (t) => {
    const server = await startServer(t);
    const [p, c] = await clients(server, 2);
    t.after(() => { p.close(); c.close(); });
    c.emit('SUBSCRIBE', { event: 'big', producer: 'p', consumer: 'c' });
    await settle(c);
    const body = crypto.randomBytes(mib * 1024 * 1024 / 2).toString('hex') + 'é€😀';
    const delivered = receiveChunked(c, 'CONSUME-p-big');
    produceChunked(p, { event: 'big', from: 'p', message: { body } });
    const got = await delivered;
    assert.equal(got.event, 'big');
    assert.equal(got.from, 'p');
    assert.equal(got.message.body.length, body.length);
    assert.ok(got.message.body === body, 'the body arrives intact');
    await server.stop();
  });
}

test('small messages are not chunked; a malformed PRODUCE_CHUNK gets ERROR', async (t) => {
  const server = await startServer(t);
  const [p, c] = await clients(server, 2);
  t.after(() => { p.close(); c.close(); });
  c.emit('SUBSCRIBE', { event: 'small', producer: 'p', consumer: 'c' });
  await settle(c);
  let chunks = 0;
  c.on('CONSUME_CHUNK', () => chunks++);
  const direct = once(c, 'CONSUME-p-small');
  produceChunked(p, { event: 'small', from: 'p', message: 'x'.repeat(1000) });
  assert.equal((await direct).message.length, 1000);
  const error = once(p, 'ERROR');
  p.emit('PRODUCE_CHUNK', { transferId: 'z', index: 3, total: 2, data: '' });
  assert.equal((await error).code, -2);
  await settle(p, c);
  assert.equal(chunks, 0);
  await server.stop();
});

test('broadcast to the realm reaches every registered socket on four events, not unregistered ones', async (t) => {
  const server = await startServer(t);
  const [p, c, idle] = await clients(server, 3);
  t.after(() => { p.close(); c.close(); idle.close(); });
  p.emit('PRODUCER', { name: 'Hub' });
  c.emit('CONSUMER', { name: 'listener' });
  await settle(p, c);
  const events = ['CONSUME-News', 'CONSUME-hub-news', 'CONSUME-tyo-mq-all-news', 'CONSUME-hub-TM-ALL'];
  const got = events.map((e) => once(c, e));
  const self = once(p, 'CONSUME-News');
  let idleGot = 0;
  idle.onAny(() => idleGot++);
  p.emit('PRODUCE', { event: 'News', from: 'Hub', message: 'hi', method: 'broadcast', broadcast: 'realm' });
  for (const payload of await Promise.all(got)) assert.deepEqual(payload, { event: 'News', message: 'hi', from: 'Hub' });
  assert.equal((await self).message, 'hi');  // the sender is registered too
  let misnamed = 0;
  c.on('hub-TM-ALL-CONSUME', () => misnamed++);
  await settle(p, c, idle);
  assert.equal(idleGot, 0);
  assert.equal(misnamed, 0);
  await server.stop();
});

test('broadcast to a group: one copy per member, on the key of its first subscription in the group', async (t) => {
  const server = await startServer(t);
  const [p, a, b, outsider] = await clients(server, 4);
  t.after(() => { for (const s of [p, a, b, outsider]) s.close(); });
  a.emit('SUBSCRIBE', { event: 'jobs', producer: 'p', consumer: 'a', group: 'team' });
  b.emit('SUBSCRIBE', { event: 'other', producer: 'q', consumer: 'b', group: 'team' });
  outsider.emit('SUBSCRIBE', { event: 'jobs', producer: 'p', consumer: 'o' });
  await settle(a, b, outsider);
  const gotA = once(a, 'CONSUME-p-jobs');
  const gotB = once(b, 'CONSUME-q-other');
  let outsiderGot = 0;
  outsider.onAny(() => outsiderGot++);
  p.emit('PRODUCE', { event: 'notice', from: 'p', message: 1, method: 'broadcast', broadcast: 'group', group: 'team' });
  assert.equal((await gotA).event, 'notice');
  assert.equal((await gotB).event, 'notice');
  await settle(p, outsider);
  assert.equal(outsiderGot, 0);
  await server.stop();
});

test('QUIT with the socket id disconnects it; with another id it is refused', async (t) => {
  const server = await startServer(t);
  const [s] = await clients(server, 1);
  t.after(() => s.close());
  const error = once(s, 'ERROR');
  s.emit('QUIT', 'someone-else');
  assert.equal((await error).code, -2);
  assert.ok(s.connected);
  const gone = once(s, 'disconnect');
  s.emit('QUIT', s.id);
  assert.equal(await gone, 'io server disconnect');
  await server.stop();
});

test('HELLO is logged; an empty HELLO gets ERROR instead of crashing; DEBUG is accepted', async (t) => {
  const server = await startServer(t);
  const [s] = await clients(server, 1);
  t.after(() => s.close());
  s.emit('HELLO', { name: 'svc', type: 'producer' });
  s.emit('DEBUG', { anything: true });
  const error = once(s, 'ERROR');
  s.emit('HELLO');
  assert.equal((await error).code, -2);
  await settle(s);
  await waitFor(() => /HELLO from .*"name":"svc"/.test(server.logs()), 5000, 'the HELLO log line');
  await server.stop();
});
