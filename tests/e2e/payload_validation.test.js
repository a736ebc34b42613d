// Issue 12, items 1 and 2: JSON that reaches the broker by another route than the packet itself — a
// payload sent as a JSON string, the joined pieces of PRODUCE_CHUNK — meets the same validation as the
// packet (JSON.parse-able, UTF-8, at most 1024 deep) before anything reads, relays or stores it; and a
// store holding an unreadable record still starts, with the record moved to the quarantine.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { startServer, tempDir, delay } = require('./lib/server');
const { connectV4, TIME_SCALE } = require('./lib/clients');
const { redis } = require('./lib/redis');

const REDIS_URL = process.env.SIOMQ_TEST_REDIS_URL;
const EVENT = 'CONSUME-p-e';

async function connect(t, server) {
  const socket = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => socket.close());
  return socket;
}

const ask = (socket, event, payload) => socket.timeout(10000 * TIME_SCALE).emitWithAck(event, payload);

// A round trip: the server is alive and has handled everything this socket sent before.
async function alive(socket) {
  const reply = await ask(socket, 'PING', {});
  assert.ok(reply, 'PING answered');
}

// `depth` nested arrays around 1, as text.
const nested = (depth) => '['.repeat(depth) + '1' + ']'.repeat(depth);

// A durable subscriber of p/e that records every delivery.
async function durableSubscriber(t, server, name = 'w') {
  const socket = await connect(t, server);
  const got = [];
  socket.on(EVENT, (m) => got.push(m));
  socket.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: name, consumer_id: name, durable: true });
  await alive(socket);
  return { socket, got };
}

// The string payloads a client can send that must not be stored: each is refused (code 400 to the ack callback) and
// nothing is delivered.
const POISON = {
  'invalid JSON': '{"event":"e","from":"p","message":{]}',
  'nested 1,025 deep': `{"event":"e","from":"p","message":${nested(1024)}}`,
  'nested 200,000 deep': `{"event":"e","from":"p","message":${nested(200000)}}`,
  // JSON.parse takes a lone surrogate; the packet validator (and so every stored row) does not.
  'a lone surrogate': '{"event":"e","from":"p","message":"\\ud800"}',
  'trailing text': '{"event":"e","from":"p","message":1} x',
};

test('a PRODUCE sent as a JSON string is validated like a packet: poison is refused, never stored', async (t) => {
  const dataDir = tempDir(t);
  let server = await startServer(t, { args: ['--storage', 'file'], dataDir });
  const { socket: w } = await durableSubscriber(t, server);
  w.close();
  const p = await connect(t, server);
  for (const [what, text] of Object.entries(POISON)) {
    const reply = await ask(p, 'PRODUCE', text);
    assert.equal(reply.ok, false, `${what}: refused (${JSON.stringify(reply).slice(0, 200)})`);
    assert.equal(reply.code, 400, what);
    assert.match(reply.message, /payload string/, what);
  }
  // A valid string payload still goes through, and is the only thing stored.
  const good = await ask(p, 'PRODUCE', JSON.stringify({ event: 'e', from: 'p', message: { deep: nested(100) } }));
  assert.equal(good.ok, true, JSON.stringify(good));
  assert.equal(good.stored, 1);
  await server.stop();

  server = await startServer(t, { args: ['--storage', 'file'], dataDir });
  const { got } = await durableSubscriber(t, server);
  await delay(200 * TIME_SCALE);
  assert.deepEqual(got.map((m) => m.message), [{ deep: nested(100) }], 'the valid message alone was stored and replayed');
});

test('a string payload nested 200,000 deep in AUTHORIZATION_REQUEST, SUBSCRIBE, UNSUBSCRIBE or a management command is an error, not a crash', async (t) => {
  const server = await startServer(t, { settings: { auth: { enrolment: true } } });
  const s = await connect(t, server);
  const deep = nested(200000);
  const cases = {
    AUTHORIZATION_REQUEST: `{"realm":"r","client_id":"c","client_name":"n","client_token":"t","challenge_response":${deep}}`,
    SUBSCRIBE: `{"event":"e","options":${deep}}`,
    UNSUBSCRIBE: `{"event":"e","producer":"p","x":${deep}}`,
    AUTHENTICATION: `{"token":"x","extra":${deep}}`,
    AUTHORIZATION_NEXT: `{"body":${deep},"proof":{}}`,
  };
  for (const [event, text] of Object.entries(cases)) {
    s.emit(event, text);
    await alive(s);
  }
  assert.ok(server.isRunning(), 'the server is still running');
  const reply = await ask(s, 'AUTHORIZATION_REQUEST', cases.AUTHORIZATION_REQUEST);
  assert.equal(reply.ok, false, JSON.stringify(reply).slice(0, 200));
});

// Pieces of a PRODUCE's JSON text, as tyo-mq clients send PRODUCE_CHUNK.
async function produceChunked(socket, text, pieces = 3) {
  const transferId = crypto.randomUUID();
  const size = Math.ceil(text.length / pieces);
  let last;
  for (let i = 0; i < pieces; i++) {
    last = await ask(socket, 'PRODUCE_CHUNK', { transferId, index: i, total: pieces, data: text.slice(i * size, (i + 1) * size) });
  }
  return last;
}

test('PRODUCE_CHUNK: the joined text is validated like a packet; poison is refused, never stored', async (t) => {
  const server = await startServer(t, { args: ['--storage', 'file'] });
  const { socket: w } = await durableSubscriber(t, server);
  w.close();
  const p = await connect(t, server);
  for (const [what, text] of Object.entries(POISON)) {
    const reply = await produceChunked(p, text);
    assert.equal(reply.ok, false, `${what}: refused (${JSON.stringify(reply).slice(0, 200)})`);
    assert.match(reply.message, /PRODUCE_CHUNK: the joined data/, what);
  }
  const good = await produceChunked(p, JSON.stringify({ event: 'e', from: 'p', message: 'whole' }));
  assert.equal(good.ok, true, JSON.stringify(good));
  const { got } = await durableSubscriber(t, server);
  await delay(200 * TIME_SCALE);
  assert.deepEqual(got.map((m) => m.message), ['whole']);
});

test('an unreadable row in redis is quarantined at start-up; the server starts and replays the rest', async (t) => {
  if (!REDIS_URL) {
    t.skip('SIOMQ_TEST_REDIS_URL is not set');
    return;
  }
  const prefix = `siomq-e2e-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  t.after(() => redis(REDIS_URL, ['DEL', `${prefix}:rows`, `${prefix}:dead`, `${prefix}:subs`, `${prefix}:quarantine`]));
  const settings = { storage_options: { url: REDIS_URL, prefix } };
  let server = await startServer(t, { settings, args: ['--storage', 'redis'] });
  const { socket: w } = await durableSubscriber(t, server);
  w.close();
  const p = await connect(t, server);
  assert.equal((await ask(p, 'PRODUCE', { event: 'e', from: 'p', message: 'kept' })).stored, 1);
  await server.stop();
  // What a damaged store, or an older broken version, could have left.
  await redis(REDIS_URL, ['HSET', `${prefix}:rows`, '999999', '{"event":"e","from":"p","message":{]}']);

  server = await startServer(t, { settings, args: ['--storage', 'redis'] });
  await server.waitForLog(/1 unreadable records moved to/);
  const [kept] = await redis(REDIS_URL, ['HGET', `${prefix}:quarantine`, 'rows:999999']);
  assert.equal(kept, '{"event":"e","from":"p","message":{]}', 'kept byte for byte');
  const { got } = await durableSubscriber(t, server);
  await delay(200 * TIME_SCALE);
  assert.deepEqual(got.map((m) => m.message), ['kept']);
});

test('PRODUCE_CHUNK budgets count entries, not only bytes: transfers per socket, pieces per transfer, id length', async (t) => {
  const server = await startServer(t);
  const p = await connect(t, server);
  for (let i = 0; i < 16; i++) {
    const r = await ask(p, 'PRODUCE_CHUNK', { transferId: `t${i}`, index: 0, total: 2, data: '' });
    assert.equal(r.ok, true, JSON.stringify(r));
  }
  const over = await ask(p, 'PRODUCE_CHUNK', { transferId: 't16', index: 0, total: 2, data: '' });
  assert.equal(over.ok, false);
  assert.match(over.message, /16 transfers/);
  const q = await connect(t, server);
  const many = await ask(q, 'PRODUCE_CHUNK', { transferId: 'x', index: 0, total: 999999999, data: '' });
  assert.equal(many.ok, false);
  assert.match(many.message, /4096 pieces/);
  const longId = await ask(q, 'PRODUCE_CHUNK', { transferId: 'i'.repeat(100000), index: 0, total: 2, data: '' });
  assert.equal(longId.ok, false);
  assert.match(longId.message, /256 bytes/);
});

test('enrolment holds a bounded number of requests by default: 100 pending per realm, superseded ones dropped', async (t) => {
  const server = await startServer(t, { settings: { auth: { enrolment: true } } });
  // Several sockets: one socket's credential-bearing events are paced (100 in a burst).
  const sockets = await Promise.all([0, 1, 2].map(() => connect(t, server)));
  let sent = 0;
  const request = (client, realm = 'r') => ask(sockets[Math.floor(sent++ / 50)], 'AUTHORIZATION_REQUEST',
    { realm, client_id: client, client_name: 'n', client_token: `tok-${client}`, challenge_response: 'x'.repeat(3000) });
  for (let i = 0; i < 100; i++) assert.equal((await request(`c${i}`)).ok, true);
  const over = await request('c100');
  assert.deepEqual(over, { ok: false, code: 429, message: 'Too many pending authorization requests' });
  assert.equal((await request('c0')).ok, true, 'a client re-filing supersedes its own request and fits');
  assert.equal((await request('c0', 'other')).ok, true, 'another realm is not crowded out');
});

test('client text in log lines is capped and escaped: a HELLO cannot forge or flood log lines', async (t) => {
  const server = await startServer(t);
  const s = await connect(t, server);
  // A valid JSON string payload whose whitespace holds a newline and a fake log line's start.
  s.emit('HELLO', '{"a":1,\n"2026-01-01T00:00:00.000 error FORGED":1}');
  s.emit('HELLO', JSON.stringify({ big: 'y'.repeat(100000) }));
  await alive(s);
  await server.waitForLog('HELLO from', 5000);
  const logs = server.logs();
  assert.doesNotMatch(logs, /\n"2026-01-01T00:00:00.000 error FORGED/, 'no forged line');
  assert.match(logs, /\\x0a"2026-01-01/, 'the newline is escaped');
  const longest = Math.max(...logs.split('\n').map((l) => l.length));
  assert.ok(longest < 1000, `the longest log line has ${longest} bytes`);
});
