// Issue 12, items 3, 4 and 9: realm "*" (the mirror of every realm) only for an admin credential;
// malformed realm names refused; a realm that requires auth refuses token-less consumers unless it opts
// in; an external validator grants only within its scope and only the five roles.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { TIME_SCALE } = require('./lib/clients');
const { authenticate, startValidator, manage, connectFor: client } = require('./lib/tyo_auth');

const ADMIN = 'admin-secret-token';

function settings(auth = {}) {
  return {
    auth: {
      enabled: true,
      tokens: [
        { token: ADMIN, realm: '*', role: 'admin' },
        { token: 'tok-locked-producer', realm: 'locked', role: 'producer' },
        { token: 'tok-locked-worker', realm: 'locked', role: 'consumer' },
      ],
      realms: {
        default: { required: false },
        locked: { required: true },
        opted: { required: true, allow_anonymous_consumers: true },
        keyed: { key: 'sesame' },
      },
      ...auth,
    },
  };
}

const fail = (code, message) => ({ event: 'AUTH_FAIL', body: { code, message } });

test('realm "*" is refused to every request without an admin credential, and the mirror stays silent', async (t) => {
  const server = await startServer(t, { settings: settings() });
  for (const payload of [{ realm: '*', role: 'consumer' }, { realm: '*', role: 'both' }, { realm: '*' },
    { realm: '*', role: 'admin' }, { realm: '*', role: 'producer', key: 'x' }]) {
    const s = await client(server, t);
    assert.deepEqual(await authenticate(s, payload), fail(403, "Realm '*' requires an admin credential"), JSON.stringify(payload));
  }
  // The gate's implicit grant after a refused AUTHENTICATION {realm:"*"} is refused too.
  const spy = await client(server, t);
  await authenticate(spy, { realm: '*', role: 'consumer' });
  const got = [];
  spy.on('CONSUME-p-e', (m) => got.push(m));
  spy.on('AUTH_FAIL', () => {});
  spy.emit('SUBSCRIBE', { event: 'e', producer: 'p' });
  spy.emit('CONSUMER', { name: 'spy' });
  await delay(100 * TIME_SCALE);
  // Traffic in another realm: the spy must see none of it.
  const p = await client(server, t);
  assert.equal((await authenticate(p, { realm: 'default', role: 'producer' })).event, 'AUTH_OK');
  const c = await client(server, t);
  const seen = [];
  c.on('CONSUME-p-e', (m) => seen.push(m));
  c.emit('SUBSCRIBE', { event: 'e', producer: 'p' });
  await c.timeout(5000 * TIME_SCALE).emitWithAck('PING', {});
  p.emit('PRODUCE', { event: 'e', from: 'p', message: 'secret of default' });
  await delay(300 * TIME_SCALE);
  assert.equal(seen.length, 1, 'the realm\'s own subscriber got it');
  assert.deepEqual(got, [], 'nothing reached the would-be mirror');
  // An admin still reaches "*".
  const admin = await client(server, t);
  assert.deepEqual(await authenticate(admin, { token: ADMIN }), { event: 'AUTH_OK', body: { realm: '*', role: 'admin' } });
});

test('malformed realm names are refused: empty-by-control, NUL, over 256 bytes; and "*" cannot be declared in settings', async (t) => {
  const server = await startServer(t, { settings: settings() });
  for (const realm of ['a\u0000b', 'line\nbreak', 'x'.repeat(257)]) {
    const s = await client(server, t);
    const r = await authenticate(s, { realm, role: 'consumer' });
    assert.equal(r.event, 'AUTH_FAIL', JSON.stringify(realm).slice(0, 40));
    assert.equal(r.body.code, 400);
  }
  const s = await client(server, t);
  assert.equal((await authenticate(s, { realm: 'r'.repeat(256), role: 'consumer' })).event, 'AUTH_OK', '256 bytes is a name');
  // Settings: a management command cannot declare "*" or a bad name.
  const admin = await client(server, t);
  await authenticate(admin, { token: ADMIN });
  for (const realm of ['*', 'bad\u0001name']) {
    const reply = await manage(admin, { command: 'add_realm', realm, settings: { required: false } }, ADMIN);
    assert.equal(reply.ok, false, `add_realm ${JSON.stringify(realm)}: ${JSON.stringify(reply)}`);
  }
});

test('a realm that requires auth refuses token-less consumers unless allow_anonymous_consumers; their queues stay theirs', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const anon = await client(server, t);
  assert.deepEqual(await authenticate(anon, { realm: 'locked', role: 'consumer' }),
    fail(401, "Realm 'locked' requires authentication for consumers"));
  // Nor can the gate's implicit grant let it SUBSCRIBE to the worker's durable queue.
  const failures = [];
  anon.on('AUTH_FAIL', (b) => failures.push(b));
  anon.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'worker', consumer_id: 'worker', durable: true });
  await delay(100 * TIME_SCALE);
  assert.equal(failures.length, 1, JSON.stringify(failures));
  assert.equal(failures[0].code, 401);
  const opted = await client(server, t);
  assert.deepEqual(await authenticate(opted, { realm: 'opted', role: 'consumer' }), { event: 'AUTH_OK', body: { realm: 'opted', role: 'consumer' } });
  const unconfigured = await client(server, t);
  assert.equal((await authenticate(unconfigured, { realm: 'elsewhere', role: 'consumer' })).event, 'AUTH_OK',
    'an unconfigured keyless realm keeps the reference\'s rule');
  const worker = await client(server, t);
  assert.equal((await authenticate(worker, { token: 'tok-locked-worker' })).event, 'AUTH_OK');
});

test('a realm\'s own validator grants exactly its realm; a prefix validator its prefix; roles are the five', async (t) => {
  const answers = { own: { realm: 'acme-corp', role: 'consumer' } };
  const validator = await startValidator(t, (req) => ({ body: answers[req.body.token] || { realm: 'acme', role: 'root' } }));
  const prefix = await startValidator(t, (req) => ({ body: req.body.token === 'star' ? { realm: '*', role: 'admin' } : { realm: 'ext-1', role: 'both' } }));
  const server = await startServer(t, {
    settings: settings({
      realms: { acme: { auth_url: validator.url } },
      external_validators: [{ realm_prefix: 'ext-', auth_url: prefix.url }],
    }),
  });
  const invalid = fail(401, 'Invalid authentication token');
  assert.deepEqual(await authenticate(await client(server, t), { token: 'own', realm: 'acme' }), invalid, 'acme-corp from acme');
  assert.deepEqual(await authenticate(await client(server, t), { token: 'role', realm: 'acme' }), invalid, 'role root');
  assert.deepEqual(await authenticate(await client(server, t), { token: 'star', realm: 'ext-9' }), invalid, '"*" from a prefix validator');
  assert.deepEqual(await authenticate(await client(server, t), { token: 'fine', realm: 'ext-9' }),
    { event: 'AUTH_OK', body: { realm: 'ext-1', role: 'both' } });
});

test('a consumer name belongs to its connection: another socket cannot UNSUBSCRIBE it or rebind its SUBSCRIBE', async (t) => {
  const server = await startServer(t, { args: ['--storage', 'file'] });
  const worker = await client(server, t);
  const got = [];
  worker.on('CONSUME-p-e', (m) => got.push(m.message));
  worker.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'worker', consumer_id: 'worker', durable: true });
  await worker.timeout(5000 * TIME_SCALE).emitWithAck('PING', {});
  const attacker = await client(server, t);
  const errors = [];
  attacker.on('ERROR', (e) => errors.push(e));
  const un = await attacker.timeout(5000 * TIME_SCALE).emitWithAck('UNSUBSCRIBE', { event: 'e', producer: 'p', consumer: 'worker' });
  assert.deepEqual(un, { ok: false, code: 400, message: "Consumer name 'worker' is bound to another connection" });
  const sub = await attacker.timeout(5000 * TIME_SCALE).emitWithAck('SUBSCRIBE',
    { event: 'e', producer: 'p', consumer: 'worker', consumer_id: 'stolen', durable: true, ack: true });
  assert.equal(sub.ok, false);
  await delay(50);
  assert.ok(errors.every((e) => e.code === -3), JSON.stringify(errors));
  const p = await client(server, t);
  p.emit('PRODUCE', { event: 'e', from: 'p', message: 'still mine' });
  await delay(200 * TIME_SCALE);
  assert.deepEqual(got, ['still mine'], 'the subscription and its queue are intact and unchanged');
  // Its own socket may.
  worker.emit('UNSUBSCRIBE', { event: 'e', producer: 'p', consumer: 'worker' });
  await worker.timeout(5000 * TIME_SCALE).emitWithAck('PING', {});
  p.emit('PRODUCE', { event: 'e', from: 'p', message: 'after' });
  await delay(200 * TIME_SCALE);
  assert.deepEqual(got, ['still mine'], 'unsubscribed by its own socket');
});
