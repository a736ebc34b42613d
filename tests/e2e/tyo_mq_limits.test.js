// tyo-mq limits (§11.1) and idle eviction (§11.2 with §0 row 6): each `limits` key, per-realm
// overrides, live reload, RATE_LIMITED at most once a second, connections per address (with
// trust_proxy and X-Forwarded-For), and which subscriptions the idle sweep forgets.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { startServer, delay } = require('./lib/server');
const { io, connectV4, emitAck, waitFor, once, TIME_SCALE } = require('./lib/clients');
const { authenticate, collect, connectFor: client } = require('./lib/tyo_auth');

// A connection whose RATE_LIMITED and disconnect are watched from the start (they can come right
// after the CONNECT answer).
function refusedClient(server, t, opts = {}) {
  const s = io(server.url, { forceNew: true, reconnection: false, transports: ['websocket'], ...opts });
  t.after(() => s.close());
  return { limited: once(s, 'RATE_LIMITED'), closed: once(s, 'disconnect') };
}

// A consumer of {event:'e', producer:'p'} named `name`.
async function consumer(server, t, name = 'c') {
  const s = await client(server, t);
  s.emit('CONSUMER', { name });
  s.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: name });
  await emitAck(s, 'PING', {});
  return { socket: s, got: collect(s, 'CONSUME-p-e') };
}

test('messages_per_second: a burst of 3 × rate passes, the rest is dropped with one RATE_LIMITED a second', async (t) => {
  const server = await startServer(t, { settings: { limits: { messages_per_second: 2 } } });
  const c = await consumer(server, t);
  const p = await client(server, t);
  const limited = collect(p, 'RATE_LIMITED');
  const acks = [];
  for (let i = 0; i < 20; i++) acks.push(emitAck(p, 'PRODUCE', { event: 'e', from: 'p', message: i }));
  const answers = (await Promise.all(acks)).map(([a]) => a);
  const passed = answers.filter((a) => a.ok).length;
  assert.ok(passed >= 6 && passed <= 7, `passed ${passed}`);  // the burst, plus what refilled meanwhile
  assert.deepEqual(answers.find((a) => !a.ok), { ok: false, code: 429, message: 'rate limited: messages_per_second' });
  await waitFor(() => c.got.length === passed);
  assert.equal(limited.length, 1);
  assert.equal(limited[0].code, 429);
  assert.equal(limited[0].reason, 'messages_per_second');
  assert.ok(limited[0].retry_after >= 1);
  // After a second (and a refill), one more RATE_LIMITED at most.
  await delay(1100);
  for (let i = 0; i < 10; i++) p.emit('PRODUCE', { event: 'e', from: 'p', message: i });
  await emitAck(p, 'PING', {});
  await waitFor(() => limited.length === 2);
  await delay(200);
  assert.equal(limited.length, 2);
});

test('bytes_per_second and bytes_burst: cost is the JSON length; a realm override applies in its realm only', async (t) => {
  const server = await startServer(t, {
    settings: {
      auth: { enabled: true, realms: { default: { required: false }, big: { required: false } } },
      limits: { bytes_per_second: 100, bytes_burst: 1000, realms: { big: { bytes_per_second: 1e6, bytes_burst: 1e7 } } },
    },
  });
  const p = await client(server, t);
  const limited = collect(p, 'RATE_LIMITED');
  const payload = 'x'.repeat(400);
  const results = [];
  for (let i = 0; i < 4; i++) results.push((await emitAck(p, 'PRODUCE', { event: 'e', from: 'p', message: payload }))[0].ok);
  assert.deepEqual(results, [true, true, false, false]);
  await waitFor(() => limited.length === 1);
  assert.equal(limited[0].reason, 'bytes_per_second');
  const big = await client(server, t);
  await authenticate(big, { realm: 'big', role: 'both' });
  for (let i = 0; i < 10; i++) assert.equal((await emitAck(big, 'PRODUCE', { event: 'e', from: 'p', message: payload }))[0].ok, true);
  // PRODUCE_CHUNK pieces are counted as well.
  const [chunk] = await emitAck(p, 'PRODUCE_CHUNK', { transferId: 't', index: 0, total: 2, data: payload });
  assert.equal(chunk.code, 429);
});

test('max_connections_per_ip: the extra connection hears RATE_LIMITED and is closed; trust_proxy counts X-Forwarded-For', async (t) => {
  const server = await startServer(t, { settings: { limits: { max_connections_per_ip: 2 } } });
  await client(server, t);
  await client(server, t);
  const third = refusedClient(server, t);
  const [limited] = await third.limited;
  assert.deepEqual(limited, { code: 429, reason: 'max_connections_per_ip', retry_after: 30 });
  await third.closed;

  const proxied = await startServer(t, { settings: { trust_proxy: true, limits: { max_connections_per_ip: 1 } } });
  // The proxy appends the address it saw; what comes before is the client's to write (issue 12: the
  // last hop counts, so a client cannot dodge the limit by writing a new first hop each time).
  const xff = (ip, written = '10.0.0.1') => ({ extraHeaders: { 'X-Forwarded-For': `${written}, ${ip}` } });
  const a = await client(proxied, t, xff('192.0.2.1'));
  const b = await client(proxied, t, xff('192.0.2.2'));
  await refusedClient(proxied, t, xff('192.0.2.1', '203.0.113.77')).closed;
  for (const s of [a, b]) assert.equal(typeof (await emitAck(s, 'PING', {}))[0], 'string');
  // Without trust_proxy the header is ignored: everyone is 127.0.0.1.
  const direct = await startServer(t, { settings: { limits: { max_connections_per_ip: 1 } } });
  await client(direct, t, xff('192.0.2.1'));
  await refusedClient(direct, t, xff('192.0.2.2')).closed;
});

test('connections_per_minute_per_ip counts connections that already closed', async (t) => {
  const server = await startServer(t, { settings: { limits: { connections_per_minute_per_ip: 3 } } });
  for (let i = 0; i < 3; i++) (await client(server, t)).close();
  const fourth = refusedClient(server, t);
  const [limited] = await fourth.limited;
  assert.equal(limited.reason, 'connections_per_minute_per_ip');
  await fourth.closed;
});

test('registrations and subscriptions per socket and per realm', async (t) => {
  const server = await startServer(t, {
    settings: { limits: { max_registrations_per_socket: 2, max_subscriptions_per_socket: 2, max_registrations_per_realm: 3,
      max_subscriptions_per_realm: 3 } },
  });
  const s = await client(server, t);
  const limited = collect(s, 'RATE_LIMITED');
  s.emit('PRODUCER', { name: 'p1' });
  s.emit('CONSUMER', { name: 'c1' });
  s.emit('PRODUCER', { name: 'p1' });  // the same name again: not a new registration
  s.emit('PRODUCER', { name: 'p2' });  // the third
  for (const event of ['e1', 'e2', 'e1', 'e3']) s.emit('SUBSCRIBE', { event, producer: 'p', consumer: 'c1' });
  await emitAck(s, 'PING', {});
  await waitFor(() => limited.length >= 1);
  assert.deepEqual(limited[0], { code: 429, reason: 'max_registrations_per_socket', retry_after: 60 });
  // The refused registration did not happen: p2 is not bound (a producer named p2 could bind it from elsewhere).
  const other = await client(server, t);
  const otherLimited = collect(other, 'RATE_LIMITED');
  other.emit('CONSUMER', { name: 'c2' });  // the realm's third name
  other.emit('CONSUMER', { name: 'c3' });  // over the realm's 3
  other.emit('SUBSCRIBE', { event: 'e9', producer: 'p', consumer: 'c2' });  // the realm's third subscription
  other.emit('SUBSCRIBE', { event: 'e8', producer: 'p', consumer: 'c2' });  // over
  await emitAck(other, 'PING', {});
  await waitFor(() => otherLimited.length === 1);
  assert.equal(otherLimited[0].reason, 'max_registrations_per_realm');
  await delay(1100);  // RATE_LIMITED is at most once a second
  other.emit('SUBSCRIBE', { event: 'e7', producer: 'p', consumer: 'c2' });
  await waitFor(() => otherLimited.length === 2);
  assert.equal(otherLimited[1].reason, 'max_subscriptions_per_realm');
  // The subscription over the per-socket cap was not made: e3 from p reaches nobody, e1 does.
  const got1 = collect(s, 'CONSUME-p-e1');
  const got3 = collect(s, 'CONSUME-p-e3');
  const p = await client(server, t);
  p.emit('PRODUCE', { event: 'e3', from: 'p', message: 3 });
  p.emit('PRODUCE', { event: 'e1', from: 'p', message: 1 });
  await waitFor(() => got1.length === 1);
  await delay(100);
  assert.equal(got3.length, 0);
});

test('limits reload live from the settings file; enabled:false turns them off', async (t) => {
  const server = await startServer(t, { settings: { limits: { messages_per_second: 1, message_burst: 1 } } });
  const p = await client(server, t);
  const send = async () => (await emitAck(p, 'PRODUCE', { event: 'e', from: 'p', message: 1 }))[0].ok;
  assert.equal(await send(), true);
  assert.equal(await send(), false);
  fs.writeFileSync(server.settingsFile, JSON.stringify({ limits: { enabled: false, messages_per_second: 1 } }));
  await server.waitForLog(/settings file .* changed: reloaded/, 5000 * TIME_SCALE);
  for (let i = 0; i < 10; i++) assert.equal(await send(), true);
});

test('idle eviction: offline names and their non-durable subscriptions go; durable subscriptions stay (§0 row 6)', async (t) => {
  const server = await startServer(t, {
    settings: { idle_eviction: { ttl_ms: 300, interval_ms: 100 }, storage: 'memory' },
  });
  // Two consumers, one durable, one not; both go offline.
  for (const [name, durable] of [['plain', false], ['keeper', true]]) {
    const s = await connectV4(server.url, { transports: ['websocket'] });
    s.emit('CONSUMER', { name });
    s.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: name, consumer_id: name, durable });
    await emitAck(s, 'PING', {});
    s.close();
  }
  await server.waitForLog(/idle eviction: \d+ names offline/, 5000 * TIME_SCALE);
  // A producer publishes: the durable subscription still stores a copy, the evicted one is gone.
  const p = await client(server, t);
  const [confirm] = await emitAck(p, 'PRODUCE', { event: 'e', from: 'p', message: 'while away' });
  assert.deepEqual(confirm, { ok: true, stored: 1 });
  // The durable consumer comes back and replays it.
  const k = await client(server, t);
  const got = collect(k, 'CONSUME-p-e');
  k.emit('CONSUMER', { name: 'keeper' });
  k.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'keeper', consumer_id: 'keeper', durable: true });
  await waitFor(() => got.length === 1);
  assert.equal(got[0].message, 'while away');

  // With eviction off, a returning consumer's old non-durable subscription still works without a SUBSCRIBE.
  const kept = await startServer(t, { settings: { idle_eviction: { enabled: false } } });
  const s = await connectV4(kept.url, { transports: ['websocket'] });
  s.emit('CONSUMER', { name: 'plain' });
  s.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'plain' });
  await emitAck(s, 'PING', {});
  s.close();
  await delay(200);
  const back = await client(kept, t);
  const again = collect(back, 'CONSUME-p-e');
  back.emit('CONSUMER', { name: 'plain' });
  await emitAck(back, 'PING', {});
  const p2 = await client(kept, t);
  p2.emit('PRODUCE', { event: 'e', from: 'p', message: 'still subscribed' });
  await waitFor(() => again.length === 1);
});
