// Engine.IO 3 / Socket.IO v2 clients (allowEIO3), as old tyo-mq clients connect.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { connectV2, ioV2, RawEio, withTimeout, waitFor, once } = require('./lib/clients');

function toBuffer(x) {
  if (Buffer.isBuffer(x)) return x;
  if (x instanceof ArrayBuffer) return Buffer.from(x);
  if (ArrayBuffer.isView(x)) return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  throw new Error(`not binary: ${JSON.stringify(x)}`);
}

// emit with an ack in the v2 API; resolves with the ack's arguments.
function emitAckV2(socket, event, ...args) {
  return withTimeout(new Promise((resolve) => socket.emit(event, ...args, (...reply) => resolve(reply))), 10000,
    `v2 ack for ${event}`);
}

async function pingV2(socket, payload) {
  const [reply] = await emitAckV2(socket, 'PING', payload);
  assert.equal(typeof reply, 'string', 'PING ack is a JSON string');
  return JSON.parse(reply);
}

const TRANSPORTS = [
  ['default (polling, then websocket)', undefined],
  ['websocket only', ['websocket']],
  ['polling only', ['polling']],
];

for (const [name, transports] of TRANSPORTS) {
  test(`socket.io-client v2: ${name}: connects, PINGs, socket.id is the Engine.IO sid`, async (t) => {
    const server = await startServer(t);
    const socket = await connectV2(server.url, transports ? { transports } : {});
    t.after(() => socket.close());
    const engine = socket.io.engine;
    assert.match(engine.id, /^[A-Za-z0-9_-]{20}$/);
    assert.equal(socket.id, engine.id, 'v2 socket id is the Engine.IO sid');
    if (!transports) await waitFor(() => engine.transport.name === 'websocket', 10000, 'v2 upgrade');
    assert.equal(engine.transport.name, transports ? transports[0] : 'websocket');
    const body = await pingV2(socket, { v: 2, s: 'x' });
    assert.equal(body.v, 2);
    assert.equal(body.s, 'x');
    assert.equal(body.pong, 'PONG');
    assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
    // Several in a row.
    const many = await Promise.all([1, 2, 3].map((i) => pingV2(socket, { i })));
    assert.deepEqual(many.map((b) => b.i), [1, 2, 3]);
    await server.stop();
  });

  test(`socket.io-client v2: ${name}: binary echo on /diagnostics`, async (t) => {
    const server = await startServer(t, { diagnostics: true });
    const socket = await connectV2(`${server.url}/diagnostics`, transports ? { transports } : {});
    t.after(() => socket.close());
    assert.equal(socket.id, `/diagnostics#${socket.io.engine.id}`, 'v2 namespace socket id');
    if (!transports) await waitFor(() => socket.io.engine.transport.name === 'websocket', 10000, 'v2 upgrade');
    const a = Buffer.from([0, 1, 2, 250, 255]);
    const b = Buffer.alloc(20000, 7);
    const [top, nested, text] = await emitAckV2(socket, 'echo', a, { deep: [b, 'x'] }, 'plain');
    assert.ok(toBuffer(top).equals(a), 'top-level buffer');
    assert.ok(toBuffer(nested.deep[0]).equals(b), 'nested buffer');
    assert.equal(nested.deep[1], 'x');
    assert.equal(text, 'plain');
    assert.deepEqual(await emitAckV2(socket, 'echo', 1, 'two'), [1, 'two']);
    // Server-emitted binary.
    const got = once(socket, 'back');
    await emitAckV2(socket, 'emit', 'back', { img: a });
    const [obj] = await got;
    assert.ok(toBuffer(obj.img).equals(a));
    await server.stop();
  });
}

test('socket.io-client v2 and v4 in the same room', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const v2 = await connectV2(`${server.url}/diagnostics`, { transports: ['websocket'] });
  t.after(() => v2.close());
  const { connectV4, emitAck } = require('./lib/clients');
  const v4 = await connectV4(`${server.url}/diagnostics`, { transports: ['websocket'] });
  t.after(() => v4.close());
  await emitAckV2(v2, 'join', 'mixed');
  await emitAck(v4, 'join', 'mixed');
  const got2 = once(v2, 'hi');
  const got4 = once(v4, 'hi');
  const blob = Buffer.from('binary in a room');
  await emitAck(v4, 'to_room', 'mixed', 'hi', { blob });
  assert.ok(toBuffer((await got2)[0].blob).equals(blob));
  assert.ok(toBuffer((await got4)[0].blob).equals(blob));
  await server.stop();
});

test('socket.io-client v2: unknown namespace is refused', async (t) => {
  const server = await startServer(t);
  const socket = ioV2(`${server.url}/nope`, { forceNew: true, reconnection: false, transports: ['websocket'] });
  t.after(() => socket.close());
  const [err] = await once(socket, 'error');
  assert.equal(err, 'Invalid namespace');
  await server.stop();
});

for (const transports of [['websocket'], ['polling']]) test(`socket.io-client v2: heartbeat on a short interval (${transports})`, async (t) => {
  const server = await startServer(t, { settings: { transport: { ping_interval: 300, ping_timeout: 300 } } });
  const socket = await connectV2(server.url, { transports });
  t.after(() => socket.close());
  let pongs = 0;
  socket.on('pong', () => { pongs++; });
  let reason = null;
  socket.on('disconnect', (r) => { reason = r; });
  await delay(2000);
  assert.equal(reason, null, 'still connected');
  assert.ok(pongs >= 3, `the server answered the client's pings (${pongs} pongs)`);
  const body = await pingV2(socket, { alive: true });
  assert.equal(body.alive, true);
  await server.stop();
});

test('EIO3 raw websocket: the server joins "/" by itself and drops a client that never pings', async (t) => {
  const server = await startServer(t, { settings: { transport: { ping_interval: 300, ping_timeout: 300 } } });
  const raw = new RawEio(server.url, { query: 'EIO=3&transport=websocket', autoPong: false });
  t.after(() => raw.close());
  const open = await raw.open();
  const openedAt = Date.now();
  assert.equal(open.pingInterval, 300);
  assert.equal(await raw.next(), '40', 'auto-connect to the main namespace');
  raw.send('2probe');
  assert.equal(await raw.next(), '3probe', 'the server answers a v3 ping with a pong');
  raw.send('421["PING",{"v":3}]');
  const ack = await raw.next();
  assert.match(ack, /^431\["\{\\"v\\":3,/);
  await withTimeout(raw.closedPromise, 5000, 'silent EIO3 client to be dropped');
  assert.ok(raw.closedAt - openedAt >= 450, 'not before interval + timeout');
  assert.ok(!raw.messages.includes('2'), 'an EIO3 server does not ping');
  await server.stop();
});

test('allow_eio3: false refuses Engine.IO 3', async (t) => {
  const server = await startServer(t, { settings: { transport: { allow_eio3: false } } });
  const res = await fetch(`${server.url}/socket.io/?EIO=3&transport=polling`);
  assert.equal(res.status, 400);
  assert.deepEqual(await res.json(), { code: 5, message: 'Unsupported protocol version' });
  const v4 = await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`);
  assert.equal(v4.status, 200);
  await v4.text();
  await server.stop();
});

test('socket.io-client v2: a namespace CONNECT with a query string ("/diagnostics?token=x")', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const socket = await connectV2(`${server.url}/diagnostics`, { transports: ['websocket'], query: { token: 'x' } });
  t.after(() => socket.close());
  assert.equal(socket.id, `/diagnostics#${socket.io.engine.id}`);
  assert.deepEqual(await emitAckV2(socket, 'echo', 'with query'), ['with query']);
  await server.stop();
});
