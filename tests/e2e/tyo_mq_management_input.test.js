// Issue 12, items 5 (management part), 11 and 16: a realm manager's durations and URLs are checked in
// one linear pass (no std::regex); a signed body is capped and the proof's cheap checks come before
// canonicalising; `get` masks secrets under every accepted alias.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer } = require('./lib/server');
const { emitAck } = require('./lib/clients');
const { authenticate, manage, sign, connectFor: client } = require('./lib/tyo_auth');

const ADMIN = 'admin-secret-token';
const RKEY = 'manager-key-of-r1';

function settings(auth = {}, extra = {}) {
  return {
    auth: {
      enabled: true,
      tokens: [{ token: ADMIN, realm: '*', role: 'admin' }],
      realms: { default: { required: false }, r1: { manager_key: RKEY } },
      ...auth,
    },
    ...extra,
  };
}

async function admin(server, t) {
  const s = await client(server, t);
  assert.equal((await authenticate(s, { token: ADMIN })).event, 'AUTH_OK');
  return s;
}

test('a realm manager\'s 60,000-digit ttl and a 100 KB auth_url are refused, not a crash', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const s = await client(server, t);
  const huge = '9'.repeat(60000);
  for (const ttl of [huge, `${huge}.5h`, `1.${huge}`]) {
    const r = await manage(s, { command: 'set_realm_lifetime', realm: 'r1', ttl }, RKEY);
    assert.equal(r.ok, false, JSON.stringify(r).slice(0, 200));
    assert.equal(r.code, 400);
  }
  const a = await admin(server, t);
  const url = `http://h/${'a'.repeat(100000)}`;
  const r = await manage(a, { command: 'set_external_auth', realm: 'r1', auth_url: url }, ADMIN);
  assert.equal(r.ok, false);
  assert.equal((await manage(s, { command: 'set_realm_lifetime', realm: 'r1', ttl: '12h' }, RKEY)).ok, true,
    'a plain duration still works');
});

test('a 480 KB management body with a bogus proof is refused before any canonicalising; a signed body is capped', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const s = await client(server, t);
  // Just under the 256 KiB cap: the bogus proof is refused without canonicalising 18,000 keys.
  const body = { command: 'get' };
  for (let i = 0; i < 18000; i++) body[`k${i}`] = i;
  const bogus = { timestamp: Date.now(), nonce: 'n1', signature: 'not-hex' };
  const t0 = process.hrtime.bigint();
  const [r] = await emitAck(s, 'AUTH_MANAGEMENT_COMMAND', { body, proof: bogus });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  assert.deepEqual(r, { ok: false, code: 401, message: 'Invalid manager proof' });
  t.diagnostic(`bogus proof over ${JSON.stringify(body).length} bytes answered in ${ms.toFixed(1)} ms`);
  // Properly signed but 480 KB: refused with 413, whoever signed it.
  const large = { command: 'get' };
  for (let i = 0; i < 40000; i++) large[`k${i}`] = i;
  const [big] = await emitAck(s, 'AUTH_MANAGEMENT_COMMAND', { body: large, proof: sign('AUTH_MANAGEMENT_COMMAND', large, ADMIN) });
  assert.equal(big.ok, false);
  assert.equal(big.code, 413);
});

test('get masks secrets under every alias the settings accept (camelCase too) and a store URL\'s password', async (t) => {
  const secrets = ['mgmt-camel', 'auth-secret-camel', 'jwt-camel', 'ext-secret-camel', 'realm-mk-camel', 'realm-psk-camel',
    'realm-auth-secret-camel', 'redis-password'];
  const server = await startServer(t, {
    settings: settings({
      managementTokens: [{ token: 'mgmt-camel', realmPrefix: 'tenant-', maxTtl: '1h' }],
      authSecret: 'auth-secret-camel',
      jwtSecret: 'jwt-camel',
      externalValidators: [{ realmPrefix: 'x-', authUrl: 'http://127.0.0.1:1/', authSecret: 'ext-secret-camel' }],
      realms: {
        default: { required: false },
        r1: { manager_key: RKEY },
        camel: { managerKey: 'realm-mk-camel', presharedKey: 'realm-psk-camel', authSecret: 'realm-auth-secret-camel' },
      },
    }, { storage: 'memory', storage_options: { url: 'redis://user:redis-password@127.0.0.1:1' } }),
  });
  const a = await admin(server, t);
  const r = await manage(a, { command: 'get' }, ADMIN);
  assert.equal(r.ok, true, JSON.stringify(r));
  const text = JSON.stringify(r.settings);
  for (const secret of secrets) assert.ok(!text.includes(secret), `${secret} leaked: ${text}`);
  assert.equal(r.settings.jwt_secret, '<configured>');
  assert.deepEqual(r.settings.realms.camel, { manager_key_configured: true, key_configured: true, auth_secret_configured: true });
  assert.equal(r.settings.management_tokens[0].realm_prefix, 'tenant-');
  assert.equal(r.settings.persistence.storage_options.url, 'redis://user:<configured>@127.0.0.1:1');
});

test('rename_realm keeps the old name locked with its keys: its stored queues do not become an open realm', async (t) => {
  const server = await startServer(t, { settings: settings({ realms: { default: { required: false }, acme: { key: 'acme-psk' } } }) });
  const w = await client(server, t);
  assert.equal((await authenticate(w, { realm: 'acme', role: 'consumer', key: 'acme-psk' })).event, 'AUTH_OK');
  w.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'worker', consumer_id: 'worker', durable: true });
  await w.timeout(5000).emitWithAck('PING', {});
  w.close();
  const a = await admin(server, t);
  const r = await manage(a, { command: 'rename_realm', from: 'acme', to: 'acme-2' }, ADMIN);
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(r.settings.realms.acme.renamed_to, 'acme-2');
  const anon = await client(server, t);
  assert.deepEqual(await authenticate(anon, { realm: 'acme', role: 'consumer' }),
    { event: 'AUTH_FAIL', body: { code: 401, message: "Realm 'acme' requires a valid pre-shared key" } });
});
