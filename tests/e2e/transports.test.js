// Transports (polling, WebSocket, the upgrade between them) and the tyo-mq PING event (§3.8).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { connectV4, ping, waitFor, RawEio } = require('./lib/clients');

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function assertIsoTimestamp(ts) {
  assert.equal(typeof ts, 'string');
  assert.match(ts, ISO_RE);
  const when = new Date(ts);
  assert.equal(when.toISOString(), ts, 'timestamp round-trips through Date');
  assert.ok(Math.abs(Date.now() - when.getTime()) < 5 * 60 * 1000, `timestamp ${ts} is near now`);
}

// What the reference computes: JSON.stringify({...payload, pong:"PONG", timestamp}).
function expectedPing(payload, timestamp) {
  return JSON.stringify({ ...payload, pong: 'PONG', timestamp });
}

test('default transports: polling first, then upgrade to websocket', async (t) => {
  const server = await startServer(t);
  const socket = await connectV4(server.url);
  t.after(() => socket.close());
  const engine = socket.io.engine;
  await waitFor(() => engine.transport.name === 'websocket', 10000, 'upgrade to websocket');
  assert.equal(engine.transport.name, 'websocket');
  const { body } = await ping(socket, { hello: 'after upgrade' });
  assert.equal(body.hello, 'after upgrade');
  assert.equal(body.pong, 'PONG');
  await server.stop();
});

test('websocket-only transport', async (t) => {
  const server = await startServer(t);
  const socket = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => socket.close());
  assert.equal(socket.io.engine.transport.name, 'websocket');
  const { body } = await ping(socket, { n: 1 });
  assert.equal(body.n, 1);
  await server.stop();
});

test('polling-only transport, with a heartbeat shorter than the test', async (t) => {
  const server = await startServer(t, { settings: { transport: { ping_interval: 300, ping_timeout: 1000 } } });
  const socket = await connectV4(server.url, { transports: ['polling'] });
  t.after(() => socket.close());
  let disconnected = null;
  socket.on('disconnect', (reason) => { disconnected = reason; });
  assert.equal(socket.io.engine.transport.name, 'polling');
  for (let i = 0; i < 5; i++) {
    const { body } = await ping(socket, { i });
    assert.equal(body.i, i);
  }
  // Several heartbeats pass over long-polling; the session must survive them.
  await delay(1500);
  assert.equal(disconnected, null);
  assert.equal(socket.io.engine.transport.name, 'polling');
  const { body } = await ping(socket, { last: true });
  assert.equal(body.last, true);
  await server.stop();
});

test('PING ack is a JSON string of the payload plus pong and timestamp', async (t) => {
  const server = await startServer(t);
  const socket = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => socket.close());
  const payload = { a: 1, b: 'two', nested: { c: [1, 2, 3] }, nil: null, t: true };
  const { raw, body } = await ping(socket, payload);
  assert.equal(body.a, 1);
  assert.equal(body.b, 'two');
  assert.deepEqual(body.nested, { c: [1, 2, 3] });
  assert.equal(body.nil, null);
  assert.equal(body.t, true);
  assert.equal(body.pong, 'PONG');
  assertIsoTimestamp(body.timestamp);
  assert.equal(raw, expectedPing(payload, body.timestamp), 'byte-identical to the reference');
  await server.stop();
});

test('PING reply matches JS object spread for every kind of payload', async (t) => {
  const server = await startServer(t);
  const socket = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => socket.close());
  const payloads = [
    'ab',                            // a string spreads into {"0":"a","1":"b"}
    '',
    'héllo',
    'a\u{1F600}b',                   // outside the BMP: two lone surrogates
    [10, 'x', { y: 1 }],             // an array spreads by index
    { pong: 'mine', keep: 1 },       // pong is overwritten in place
    { timestamp: 'old', z: 0 },
    { 10: 'ten', 2: 'two', b: 1, a: 2, 1: 'one' },  // integer keys first, in order
    { s: 'quote " backslash \\ newline \n tab \t \u0001 \u2028 é' },
    { n: 0.1, big: 1e21, neg: -0.5, int: 123456789012, small: 1e-7 },
    null,
    42,
    true,
    {},
  ];
  for (const payload of payloads) {
    const { raw, body } = await ping(socket, payload);
    assertIsoTimestamp(body.timestamp);
    assert.equal(raw, expectedPing(payload, body.timestamp), `payload ${JSON.stringify(payload)}`);
  }
  await server.stop();
});

test('PING without an ack gets nothing back and the connection goes on', async (t) => {
  const server = await startServer(t);
  const raw = new RawEio(server.url);
  t.after(() => raw.close());
  await raw.open();
  await raw.connect('/');
  raw.send('42["PING",{"no":"ack"}]');
  raw.send('42["PING"]');
  raw.send('421["PING",{"x":1}]');
  const reply = await raw.next();
  assert.match(reply, /^431\[/, 'the first message after the un-acked PINGs is the ack of the third');
  const body = JSON.parse(JSON.parse(reply.slice(3))[0]);
  assert.equal(body.x, 1);
  await delay(300);
  assert.deepEqual(raw.messages, [], 'nothing else was sent');
  assert.equal(raw.closed, false);

  // The same through socket.io-client.
  const socket = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => socket.close());
  socket.emit('PING', { fire: 'and forget' });
  const { body: b2 } = await ping(socket, { then: 'ack' });
  assert.equal(b2.then, 'ack');
  await server.stop();
});
