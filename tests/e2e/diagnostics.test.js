// Acks, binary attachments both ways and rooms, through the /diagnostics namespace.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { connectV4, emitAck, once, waitFor } = require('./lib/clients');

// Binary arrives as Buffer (websocket) or ArrayBuffer, depending on transport and client version.
function toBuffer(x) {
  if (Buffer.isBuffer(x)) return x;
  if (x instanceof ArrayBuffer) return Buffer.from(x);
  if (ArrayBuffer.isView(x)) return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  throw new Error(`not binary: ${typeof x} ${JSON.stringify(x)}`);
}

function assertBinary(actual, expected, what) {
  assert.ok(Buffer.isBuffer(actual) || actual instanceof ArrayBuffer || ArrayBuffer.isView(actual),
    `${what} is binary (got ${JSON.stringify(actual)})`);
  assert.ok(toBuffer(actual).equals(expected), `${what} has the same bytes`);
}

function bytes(n, seed = 1) {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

async function echoChecks(socket) {
  // No binary: the arguments come back as they went.
  assert.deepEqual(await emitAck(socket, 'echo', 1, 'two', { three: [3] }, null, true),
    [1, 'two', { three: [3] }, null, true]);
  assert.deepEqual(await emitAck(socket, 'echo'), []);

  // A Buffer at the top level.
  const top = bytes(16);
  const [r1] = await emitAck(socket, 'echo', top);
  assertBinary(r1, top, 'top-level buffer');

  // Empty buffer.
  const [r0] = await emitAck(socket, 'echo', Buffer.alloc(0));
  assertBinary(r0, Buffer.alloc(0), 'empty buffer');

  // Nested in objects and arrays, several attachments in one packet, mixed with plain values.
  const a = bytes(3, 7);
  const b = bytes(1000, 9);
  const c = bytes(70000, 11);
  const [s, n, obj, arr, nil] = await emitAck(socket, 'echo', 'str', 42, { deep: { img: a, tag: 'x' } },
    [b, 'middle', { c }], null);
  assert.equal(s, 'str');
  assert.equal(n, 42);
  assert.equal(obj.deep.tag, 'x');
  assertBinary(obj.deep.img, a, 'buffer nested in an object');
  assert.equal(arr.length, 3);
  assertBinary(arr[0], b, 'buffer in an array');
  assert.equal(arr[1], 'middle');
  assertBinary(arr[2].c, c, 'buffer in an object in an array');
  assert.equal(nil, null);

  // The same buffer twice, and a large one.
  const big = bytes(1024 * 1024, 3);
  const [x, y, z] = await emitAck(socket, 'echo', a, a, big);
  assertBinary(x, a, 'first copy');
  assertBinary(y, a, 'second copy');
  assertBinary(z, big, '1 MiB buffer');

  // Text that looks like a placeholder stays text.
  const fake = { _placeholder: true, num: 0 };
  const [f] = await emitAck(socket, 'echo', fake);
  assert.deepEqual(f, fake);
}

// These tests are about the transport carrying large packets, not about the 1 MiB default max_payload.
const LARGE = { transport: { max_payload: 64 * 1024 * 1024 } };

for (const transports of [['websocket'], ['polling'], ['polling', 'websocket']]) {
  test(`echo acks with binary attachments over ${transports.join('+')}`, async (t) => {
    const server = await startServer(t, { diagnostics: true, settings: LARGE });
    const socket = await connectV4(`${server.url}/diagnostics`, { transports });
    t.after(() => socket.close());
    if (transports.length === 2) {
      await waitFor(() => socket.io.engine.transport.name === 'websocket', 10000, 'upgrade');
    }
    await echoChecks(socket);
    assert.equal(socket.io.engine.transport.name, transports[transports.length - 1]);
    await server.stop();
  });
}

test('server-emitted events carry arguments and binary attachments', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  for (const transports of [['websocket'], ['polling']]) {
    const socket = await connectV4(`${server.url}/diagnostics`, { transports });
    t.after(() => socket.close());
    const a = bytes(64, 5);
    const b = bytes(5, 6);
    const got = once(socket, 'back');
    const ack = await emitAck(socket, 'emit', 'back', { img: a, name: 'pic' }, [b], 'tail', 7);
    assert.deepEqual(ack, [true]);
    const [obj, arr, tail, seven] = await got;
    assert.equal(obj.name, 'pic');
    assertBinary(obj.img, a, `emitted nested buffer (${transports})`);
    assertBinary(arr[0], b, `emitted buffer in array (${transports})`);
    assert.equal(tail, 'tail');
    assert.equal(seven, 7);

    const plain = once(socket, 'plain');
    await emitAck(socket, 'emit', 'plain', { no: 'binary' });
    assert.deepEqual(await plain, [{ no: 'binary' }]);

    const noArgs = once(socket, 'bare');
    await emitAck(socket, 'emit', 'bare');
    assert.deepEqual(await noArgs, []);
  }
  await server.stop();
});

test('rooms: to_room reaches exactly the members, on every worker; leave works', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const names = ['a', 'b', 'c', 'd', 'e', 'f'];
  const clients = {};
  const received = {};
  for (const name of names) {
    // Alternate transports; with 2 workers, connections land on both.
    const transports = name.charCodeAt(0) % 2 ? ['websocket'] : ['polling'];
    const socket = await connectV4(`${server.url}/diagnostics`, { transports });
    t.after(() => socket.close());
    clients[name] = socket;
    received[name] = [];
    socket.on('news', (...args) => received[name].push(args));
  }
  const members = ['a', 'b', 'c', 'e'];
  for (const name of members) assert.deepEqual(await emitAck(clients[name], 'join', 'r1'), [true]);
  // Another room, to show that room names keep members apart.
  assert.deepEqual(await emitAck(clients.d, 'join', 'r2'), [true]);

  // Sent by a non-member.
  assert.deepEqual(await emitAck(clients.f, 'to_room', 'r1', 'news', { n: 1 }), [true]);
  await waitFor(() => members.every((m) => received[m].length === 1), 10000, 'room delivery #1');
  await delay(300);
  for (const name of names) {
    assert.deepEqual(received[name], members.includes(name) ? [[{ n: 1 }]] : [], `client ${name} after #1`);
  }

  // Sent by a member (it receives its own message), with a binary attachment.
  const blob = bytes(100, 2);
  await emitAck(clients.a, 'to_room', 'r1', 'news', { n: 2, blob });
  await waitFor(() => members.every((m) => received[m].length === 2), 10000, 'room delivery #2');
  for (const m of members) {
    assert.equal(received[m][1][0].n, 2);
    assertBinary(received[m][1][0].blob, blob, `room binary for ${m}`);
  }

  // b leaves, c disconnects: neither gets #3.
  assert.deepEqual(await emitAck(clients.b, 'leave', 'r1'), [true]);
  clients.c.disconnect();
  await delay(200);
  await emitAck(clients.d, 'to_room', 'r1', 'news', { n: 3 });
  await waitFor(() => received.a.length === 3 && received.e.length === 3, 10000, 'room delivery #3');
  await delay(300);
  assert.equal(received.b.length, 2, 'b left the room');
  assert.equal(received.c.length, 2, 'c disconnected');
  assert.equal(received.d.length, 0);
  assert.equal(received.f.length, 0);
  assert.deepEqual(received.a[2], [{ n: 3 }]);

  // r2 is separate.
  await emitAck(clients.a, 'to_room', 'r2', 'news', 'only d');
  await waitFor(() => received.d.length === 1, 10000, 'r2 delivery');
  assert.deepEqual(received.d[0], ['only d']);
  await delay(200);
  assert.equal(received.a.length, 3);

  // A room nobody is in.
  assert.deepEqual(await emitAck(clients.a, 'to_room', 'empty', 'news', 0), [true]);
  await server.stop();
});

test('join and leave are idempotent; leaving a room not joined is harmless', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const socket = await connectV4(`${server.url}/diagnostics`, { transports: ['websocket'] });
  t.after(() => socket.close());
  const got = [];
  socket.on('r', (x) => got.push(x));
  assert.deepEqual(await emitAck(socket, 'leave', 'never'), [true]);
  await emitAck(socket, 'join', 'x');
  await emitAck(socket, 'join', 'x');
  await emitAck(socket, 'to_room', 'x', 'r', 1);
  await waitFor(() => got.length === 1, 10000, 'delivery');
  await delay(200);
  assert.deepEqual(got, [1], 'joining twice delivers once');
  await emitAck(socket, 'leave', 'x');
  await emitAck(socket, 'to_room', 'x', 'r', 2);
  await delay(300);
  assert.deepEqual(got, [1]);
  await server.stop();
});

test('large binary payloads (8 MiB) over websocket and polling', { timeout: 60000 }, async (t) => {
  const server = await startServer(t, { diagnostics: true, settings: LARGE });
  const big = bytes(8 * 1024 * 1024, 77);
  for (const transports of [['websocket'], ['polling']]) {
    const socket = await connectV4(`${server.url}/diagnostics`, { transports });
    t.after(() => socket.close());
    const [r, s] = await emitAck(socket, 'echo', big, 'x'.repeat(1024 * 1024));
    assertBinary(r, big, `8 MiB over ${transports}`);
    assert.equal(s.length, 1024 * 1024);
  }
  await server.stop();
});

test('many polling clients at once (requests hop between workers)', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const sockets = await Promise.all(Array.from({ length: 20 },
    () => connectV4(`${server.url}/diagnostics`, { transports: ['polling'] })));
  t.after(() => { for (const s of sockets) s.close(); });
  await Promise.all(sockets.map(async (socket, i) => {
    for (let k = 0; k < 20; k++) {
      const blob = bytes(100 + k, i);
      const [n, b] = await emitAck(socket, 'echo', `${i}:${k}`, blob);
      assert.equal(n, `${i}:${k}`);
      assertBinary(b, blob, `client ${i} message ${k}`);
    }
  }));
  await server.stop();
});
