// Issue 12, item 8 (the realm side): realms that clients make up are capped (limits.max_realms) and
// reclaimed once empty; names made by PRODUCE's `from` count against the caps on names like PRODUCER's.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { TIME_SCALE } = require('./lib/clients');
const { authenticate, manage, connectFor: client } = require('./lib/tyo_auth');

const ADMIN = 'admin-secret-token';
const fail = (code, message) => ({ event: 'AUTH_FAIL', body: { code, message } });

// Auth on; realms nobody configured admit consumers without a credential, as the reference does.
function settings(extra = {}) {
  return {
    auth: { enabled: true, tokens: [{ token: ADMIN, realm: '*', role: 'admin' }], realms: { default: { required: false } } },
    ...extra,
  };
}

async function consumerIn(server, t, realm) {
  const s = await client(server, t);
  const answer = await authenticate(s, { realm, role: 'consumer' });
  if (answer.event === 'AUTH_OK') {
    s.emit('CONSUMER', { name: `c-${Math.random()}` });
    await s.timeout(5000 * TIME_SCALE).emitWithAck('PING', {});
  }
  return { s, answer };
}

test('limits.max_realms caps the realms clients bring into being; empty ones are reclaimed', async (t) => {
  const server = await startServer(t, {
    settings: settings({ limits: { max_realms: 3 }, idle_eviction: { enabled: true, ttl_ms: 100, interval_ms: 200 } }),
  });
  const held = [];
  for (const realm of ['made-up-1', 'made-up-2', 'made-up-3']) {
    const { s, answer } = await consumerIn(server, t, realm);
    assert.equal(answer.event, 'AUTH_OK', realm);
    held.push(s);
  }
  const { answer: over } = await consumerIn(server, t, 'made-up-4');
  assert.deepEqual(over, fail(429, 'Too many realms on this server (limits.max_realms)'));
  // A realm that exists still admits newcomers.
  assert.equal((await consumerIn(server, t, 'made-up-2')).answer.event, 'AUTH_OK');
  // Once its clients leave and their names are evicted, a realm is forgotten and makes room.
  for (const s of held) s.close();
  let again;
  for (let i = 0; i < 50; i++) {
    await delay(200);
    again = (await consumerIn(server, t, 'made-up-5')).answer;
    if (again.event === 'AUTH_OK') break;
  }
  assert.equal(again.event, 'AUTH_OK', 'room again after the empty realms were reclaimed');
  assert.match(server.logs(), /empty realms forgotten/);
});

test('names made by PRODUCE `from` count against max_registrations_per_realm', async (t) => {
  const server = await startServer(t, { settings: settings({ limits: { max_registrations_per_realm: 10 } }) });
  const s = await client(server, t);
  assert.equal((await authenticate(s, { realm: 'default', role: 'producer' })).event, 'AUTH_OK');
  for (let i = 0; i < 50; i++) s.emit('PRODUCE', { event: 'e', from: `fresh-${i}`, message: i });
  await s.timeout(5000 * TIME_SCALE).emitWithAck('PING', {});
  const admin = await client(server, t);
  assert.equal((await authenticate(admin, { token: ADMIN })).event, 'AUTH_OK');
  const stats = await manage(admin, { command: 'stats' }, ADMIN);
  assert.equal(stats.stats.realms.default.producers.total, 10, 'bound up to the cap, not 50');
});
