// tyo-mq signed manager commands (§8) and the enrolment flow (§7): proofs (missing, forged, stale,
// replayed), every command of §8.2's table with its success and its error codes, realm-scoped signing,
// ephemeral realms, realm disposal, the DLQ commands, and settings persistence across a restart.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { startServer, delay } = require('./lib/server');
const { connectV4, emitAck, waitFor, once, TIME_SCALE } = require('./lib/clients');
const { sign, manage, signedAck, authenticate, collect, sha256, connectFor: admin } = require('./lib/tyo_auth');

const ADMIN = 'admin-secret-token';
const RKEY = 'manager-key-of-r1';

function settings(auth = {}, extra = {}) {
  return {
    auth: {
      enabled: true,
      tokens: [
        { token: ADMIN, realm: '*', role: 'admin' },
        { token: 'tok-r1', realm: 'r1', role: 'both', client_id: 'c1', client_name: 'one' },
        { token: 'tok-r1-b', realm: 'r1', role: 'consumer', client_id: 'c2' },
      ],
      realms: { default: { required: false }, r1: { manager_key: RKEY, key: 'psk' } },
      jwt_secret: 'jwt-secret',
      ...auth,
    },
    ...extra,
  };
}

const readSettings = (server) => JSON.parse(fs.readFileSync(server.settingsFile, 'utf8'));

test('§8.1 proofs: missing, forged, wrong key, stale either way, replayed nonce; the event form when there is no ack', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const s = await admin(server, t);
  const body = { command: 'get' };
  const [missing] = await emitAck(s, 'AUTH_MANAGEMENT_COMMAND', { body });
  assert.deepEqual(missing, { ok: false, code: 401, message: 'Missing manager proof' });
  for (const [what, proof] of [
    ['forged', { ...sign('AUTH_MANAGEMENT_COMMAND', body, ADMIN), signature: 'ab'.repeat(32) }],
    ['another key', sign('AUTH_MANAGEMENT_COMMAND', body, 'not-admin')],
    ['a realm key for an admin command', sign('AUTH_MANAGEMENT_COMMAND', body, RKEY)],
    ['another action', sign('AUTHORIZATION_NEXT', body, ADMIN)],
    ['another body', sign('AUTH_MANAGEMENT_COMMAND', { command: 'stats' }, ADMIN)],
    ['6 minutes old', sign('AUTH_MANAGEMENT_COMMAND', body, ADMIN, { timestamp: Date.now() - 360000 })],
    ['6 minutes ahead', sign('AUTH_MANAGEMENT_COMMAND', body, ADMIN, { timestamp: Date.now() + 360000 })],
    ['odd-length hex', { ...sign('AUTH_MANAGEMENT_COMMAND', body, ADMIN), signature: 'abc' }],
  ]) {
    const [r] = await emitAck(s, 'AUTH_MANAGEMENT_COMMAND', { body, proof });
    assert.deepEqual(r, { ok: false, code: 401, message: 'Invalid manager proof' }, what);
  }
  const proof = sign('AUTH_MANAGEMENT_COMMAND', body, ADMIN);
  const [first] = await emitAck(s, 'AUTH_MANAGEMENT_COMMAND', { body, proof });
  assert.equal(first.ok, true);
  const [again] = await emitAck(s, 'AUTH_MANAGEMENT_COMMAND', { body, proof });
  assert.deepEqual(again, { ok: false, code: 401, message: 'Manager proof nonce was already used' });
  // Key order and spacing of the body do not matter; its values do.
  const reordered = { b: [1, { y: 2, x: 1 }], command: 'get', a: 'é' };
  const [ok] = await emitAck(s, 'AUTH_MANAGEMENT_COMMAND', { body: { a: 'é', command: 'get', b: [1, { x: 1, y: 2 }] },
    proof: sign('AUTH_MANAGEMENT_COMMAND', reordered, ADMIN) });
  assert.equal(ok.ok, true);
  // Without an ack callback: a proof failure is AUTH_MANAGEMENT_FAIL, a synchronous result AUTH_MANAGEMENT_RESULT (even ok:false).
  const fails = collect(s, 'AUTH_MANAGEMENT_FAIL');
  const results = collect(s, 'AUTH_MANAGEMENT_RESULT');
  s.emit('AUTH_MANAGEMENT_COMMAND', { body });
  s.emit('AUTH_MANAGEMENT_COMMAND', { body: { command: 'nope' }, proof: sign('AUTH_MANAGEMENT_COMMAND', { command: 'nope' }, ADMIN) });
  s.emit('AUTH_MANAGEMENT_COMMAND', { body: { command: 'dlq_discard', msg_id: 'x' },
    proof: sign('AUTH_MANAGEMENT_COMMAND', { command: 'dlq_discard', msg_id: 'x' }, ADMIN) });
  await waitFor(() => fails.length === 2 && results.length === 1);
  assert.equal(fails[0].message, 'Missing manager proof');
  assert.deepEqual(results[0], { ok: false, code: 400, message: 'unknown management command' });
  assert.equal(fails[1].code, 404);  // an asynchronous command's failure
  // Non-object payloads.
  const [bad] = await emitAck(s, 'AUTH_MANAGEMENT_COMMAND', 'not json');
  assert.equal(bad.code, 400);
  const [badBody] = await emitAck(s, 'AUTH_MANAGEMENT_COMMAND', { body: [1], proof: sign('AUTH_MANAGEMENT_COMMAND', [1], ADMIN) });
  assert.equal(badBody.code, 400);
});

test('bad management input is refused with its code and changes nothing, in memory or on disk', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const s = await admin(server, t);
  const before = await manage(s, { command: 'get' }, ADMIN);
  const fileBefore = fs.readFileSync(server.settingsFile, 'utf8');
  const bad = [
    [{ command: 'add_realm', realm: 'x', required: 'yes' }, 400],
    [{ command: 'add_realm', realm: 5 }, 400],
    [{ command: 'add_realm', realm: 'x', manager_key: ['k'] }, 400],
    [{ command: 'add_realm', realm: 'x', ttl: -5 }, 400],
    [{ command: 'add_realm', realm: 'x', ttl: '10 minutes' }, 400],
    [{ command: 'set_realm_lifetime', realm: 'r1', ttl: 'later' }, 400],
    [{ command: 'set_realm_key', realm: 'r1', key: 42 }, 400],
    [{ command: 'set_realm_acceptance', realm: 'r1' }, 400],
    [{ command: 'rename_realm', from: 'r1' }, 400],
    [{ command: 'add_management_token', token: '', realm_prefix: 'x' }, 400],
    [{ command: 'add_management_token', token: 't', realm_prefix: 7 }, 400],
    [{ command: 'revoke_management_token', token_hash: 1 }, 400],
    [{ command: 'set_external_auth', auth_url: 'javascript:alert(1)' }, 400],
    [{ command: 'revoke_token', token: 7 }, 400],
    [{ command: 'revoke_token', allow_admin: 'yes', token: ADMIN }, 400],
    [{ command: 'set_global_auth' }, 400],
    [{ command: 'set_persistence', storage: 'memory', storage_options: 'x' }, 400],
    [{ command: 42 }, 400],
    [{}, 400],
  ];
  for (const [body, code] of bad) {
    const r = await manage(s, body, ADMIN);
    assert.equal(r.ok, false, JSON.stringify(body));
    assert.equal(r.code, code, JSON.stringify(body));
    assert.equal(typeof r.message, 'string');
  }
  assert.deepEqual(await manage(s, { command: 'get' }, ADMIN), before);
  assert.equal(fs.readFileSync(server.settingsFile, 'utf8'), fileBefore);
});

test('get: public settings hide every secret', async (t) => {
  const server = await startServer(t, {
    settings: settings({
      auth_secret: 's3', external_validators: [{ realm_prefix: 'x-', auth_url: 'http://127.0.0.1:1/', auth_secret: 's4' }],
      management_tokens: [{ token: 'mgmt', realm_prefix: 'tenant-', max_ttl: '1h' }],
    }, { storage: 'memory', storage_options: { url: 'redis://x' } }),
  });
  const s = await admin(server, t);
  const r = await manage(s, { command: 'get' }, ADMIN);
  assert.equal(r.ok, true);
  const text = JSON.stringify(r.settings);
  for (const secret of [ADMIN, 'tok-r1', RKEY, 'psk', 'jwt-secret', 's3', 's4', '"mgmt"']) assert.ok(!text.includes(secret), secret);
  assert.deepEqual(r.settings.tokens[1], { realm: 'r1', role: 'both', client_id: 'c1', client_name: 'one', token_hash: sha256('tok-r1') });
  assert.deepEqual(r.settings.realms.r1, { manager_key_configured: true, key_configured: true });
  assert.equal(r.settings.jwt_secret, '<configured>');
  assert.equal(r.settings.auth_secret, '<configured>');
  assert.deepEqual(r.settings.management_tokens, [{ realm_prefix: 'tenant-', token_hash: sha256('mgmt'), max_ttl: '1h' }]);
  assert.deepEqual(r.settings.persistence, { storage: 'memory', storage_options: { url: 'redis://x' } });
});

// Issue 14 §1: the public settings are the `auth` block itself, with its keys at the top level (a tyo-mq
// manager reads `settings.realms.<r>.manager_key_configured` and `settings.management_tokens`), plus
// persistence and namespaces; every settings command answers the same shape as `get`.
test('§8.2 public settings: the auth block at the top level, exactly, in get and in a settings command', async (t) => {
  const server = await startServer(t, {
    settings: {
      auth: {
        enabled: true,
        tokens: [{ token: ADMIN, realm: '*', role: 'admin' }],
        realms: { r1: { manager_key: RKEY } },
        management_tokens: [{ token: 'mgmt', realm_prefix: 'tenant-' }],
        jwt_secret: 'jwt-secret',
      },
      limits: { enabled: true, messages_per_second: 1000 },
      storage: 'memory',
    },
  });
  const s = await admin(server, t);
  const expected = {
    enabled: true,
    tokens: [{ realm: '*', role: 'admin', client_id: null, client_name: null, token_hash: sha256(ADMIN) }],
    realms: { r1: { manager_key_configured: true } },
    management_tokens: [{ realm_prefix: 'tenant-', token_hash: sha256('mgmt') }],
    jwt_secret: '<configured>',
    persistence: { storage: 'memory', storage_options: {} },
    namespaces: [{ name: '/remote', type: 'builtin' }],
  };
  const got = await manage(s, { command: 'get' }, ADMIN);
  assert.deepEqual(got, { ok: true, settings: expected });
  const added = await manage(s, { command: 'add_realm', realm: 'r2', manager_key: 'k2', required: true }, ADMIN);
  assert.equal(added.ok, true);
  assert.deepEqual(added.settings, { ...expected, realms: { ...expected.realms, r2: { required: true, manager_key_configured: true } } });
  assert.equal(added.settings.auth, undefined);
});

test('realm commands: add, auth, acceptance, manager key, key, e2ee, lifetime, rename; each error code', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const s = await admin(server, t);
  const m = (body) => manage(s, body, ADMIN);
  let r = await m({ command: 'add_realm', realm: 'shop', manager_key: 'shop-key', key: 'k1', e2ee: 'opportunistic' });
  assert.equal(r.ok, true);
  assert.deepEqual(r.settings.realms.shop, { required: true, manager_key_configured: true, key_configured: true, e2ee: 'opportunistic' });
  assert.deepEqual(await m({ command: 'add_realm', realm: 'shop' }), { ok: false, code: 409, message: "Realm 'shop' already exists" });
  assert.equal((await m({ command: 'add_realm', realm: 'tmp', ttl: 'soon' })).code, 400);
  assert.equal((await m({ command: 'add_realm', realm: 'tmp', ttl: 0 })).code, 400);
  assert.equal((await m({ command: 'add_realm', realm: '' })).code, 400);
  assert.equal((await m({ command: 'add_realm', realm: 'tmp', e2ee: 'maybe' })).code, 400);
  r = await m({ command: 'add_realm', realm: 'tmp', ttl: '2h' });
  const expires = r.settings.realms.tmp.expires_at;
  assert.equal(r.settings.realms.tmp.ephemeral, true);
  assert.ok(Math.abs(expires - (Date.now() + 7200000)) < 60000);

  r = await m({ command: 'set_realm_auth', realm: 'brand-new', required: false });
  assert.deepEqual(r.settings.realms['brand-new'], { required: false });  // created
  assert.equal((await m({ command: 'set_realm_auth', realm: 'x', required: 'no' })).code, 400);
  r = await m({ command: 'set_realm_acceptance', realm: 'shop', required: false });
  assert.equal(r.settings.realms.shop.require_acceptance, false);
  assert.equal((await m({ command: 'set_realm_manager_key', realm: 'ghost', manager_key: 'k' })).code, 404);
  r = await m({ command: 'set_realm_manager_key', realm: 'shop' });  // absent: removed
  assert.equal(r.settings.realms.shop.manager_key_configured, undefined);
  assert.equal((await m({ command: 'set_realm_key', realm: 'ghost', key: 'k' })).code, 404);
  r = await m({ command: 'set_realm_key', realm: 'shop', preshared_key: 'k2', require_key: true });
  assert.equal(r.settings.realms.shop.key_configured, true);
  assert.equal(r.settings.realms.shop.require_key, true);
  r = await m({ command: 'set_realm_e2ee', realm: 'shop', policy: 'required' });
  assert.equal(r.settings.realms.shop.e2ee, 'required');
  assert.equal((await m({ command: 'set_realm_e2ee', realm: 'shop', e2ee: 'sometimes' })).code, 400);
  r = await m({ command: 'set_realm_lifetime', realm: 'shop', ttl: 60 });
  assert.ok(r.settings.realms.shop.expires_at > Date.now() + 50000);
  r = await m({ command: 'set_realm_lifetime', realm: 'shop', ephemeral: false });
  assert.equal(r.settings.realms.shop.expires_at, undefined);

  // The live settings follow at once: the key now guards shop, acceptance is off for producers.
  const c = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => c.close());
  assert.deepEqual(await authenticate(c, { realm: 'shop', role: 'consumer', key: 'k1' }),
    { event: 'AUTH_FAIL', body: { code: 401, message: "Realm 'shop' requires a valid pre-shared key" } });
  const c2 = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => c2.close());
  assert.deepEqual(await authenticate(c2, { realm: 'shop', role: 'both', key: 'k2' }), { event: 'AUTH_OK', body: { realm: 'shop', role: 'both' } });
  // e2ee required: a PRODUCE without enc is refused with ERROR -6.
  const [refused] = await emitAck(c2, 'PRODUCE', { event: 'e', from: 'p', message: 'plain' });
  assert.equal(refused.code, 400);
  assert.match(refused.message, /end-to-end/);
  const [sealed] = await emitAck(c2, 'PRODUCE', { event: 'e', from: 'p', message: 'Y2lwaGVy', enc: { v: 1 } });
  assert.equal(sealed.ok, true);

  // rename_realm copies the settings and moves the tokens; the old name stays locked with its keys
  // (issue 12: what is stored under it must not become an open realm), marked renamed_to.
  assert.equal((await m({ command: 'rename_realm', from: 'ghost', to: 'x' })).code, 404);
  assert.equal((await m({ command: 'rename_realm', from: 'r1', to: 'shop' })).code, 409);
  assert.equal((await m({ command: 'rename_realm', from: 'default', to: 'y' })).code, 400);
  r = await m({ command: 'rename_realm', from: 'r1', to: 'r1-renamed' });
  assert.deepEqual(r.settings.realms.r1, { manager_key_configured: true, key_configured: true, renamed_to: 'r1-renamed' });
  assert.deepEqual(r.settings.realms['r1-renamed'], { manager_key_configured: true, key_configured: true });
  const moved = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => moved.close());
  assert.deepEqual(await authenticate(moved, { token: 'tok-r1' }), { event: 'AUTH_OK', body: { realm: 'r1-renamed', role: 'both' } });
});

test('realm-scoped signing: the realm manager_key may run four commands and gets a cut-down reply; management tokens clamp its lifetime', async (t) => {
  const server = await startServer(t, {
    settings: settings({
      realms: { r1: { manager_key: RKEY }, 'tenant-a': { manager_key: 'tenant-key' }, default: { manager_key: 'default-key' } },
      management_tokens: [{ token: 'mt', realm_prefix: 'tenant-', ephemeral_only: true, max_ttl: 600 }],
    }),
  });
  const s = await admin(server, t);
  let r = await manage(s, { command: 'set_realm_key', realm: 'r1', key: 'new-psk' }, RKEY);
  assert.deepEqual(r, { ok: true, realm: 'r1', settings: { realms: { r1: { manager_key_configured: true, key_configured: true } } } });
  r = await manage(s, { command: 'set_realm_acceptance', realm: 'r1', required: false }, RKEY);
  assert.equal(r.settings.realms.r1.require_acceptance, false);
  r = await manage(s, { command: 'set_realm_e2ee', realm: 'r1', e2ee: 'off' }, RKEY);
  assert.equal(r.settings.realms.r1.e2ee, 'off');
  // Not for other commands, other realms, or default.
  for (const body of [{ command: 'get' }, { command: 'set_realm_auth', realm: 'r1', required: false },
    { command: 'set_realm_key', realm: 'tenant-a', key: 'x' }]) {
    assert.deepEqual(await manage(s, body, RKEY), { ok: false, code: 401, message: 'Invalid manager proof' }, body.command);
  }
  assert.equal((await manage(s, { command: 'set_realm_key', realm: 'default', key: 'x' }, 'default-key')).code, 401);
  // set_realm_lifetime by the tenant's manager: ephemeral forced, ttl capped at max_ttl (600 s).
  r = await manage(s, { command: 'set_realm_lifetime', realm: 'tenant-a', ephemeral: false, ttl: '1d' }, 'tenant-key');
  assert.equal(r.ok, true);
  const cfg = r.settings.realms['tenant-a'];
  assert.equal(cfg.ephemeral, true);
  assert.ok(cfg.expires_at <= Date.now() + 600000 && cfg.expires_at > Date.now() + 500000, String(cfg.expires_at - Date.now()));
  // An admin is not clamped.
  r = await manage(s, { command: 'set_realm_lifetime', realm: 'tenant-a', ephemeral: false }, ADMIN);
  assert.equal(r.settings.realms['tenant-a'].expires_at, undefined);
});

// Regression: a settings file that wrote the camelCase aliases (managementTokens, externalValidators,
// authUrl) lost its management tokens on the first add_management_token (the new snake_case list hid
// the alias) and kept its global validator after set_external_auth cleared it.
test('settings commands edit the camelCase aliases a settings file used, never hide them', async (t) => {
  const server = await startServer(t, { settings: settings({
    managementTokens: [{ token: 'old-mt', realmPrefix: 'old-' }],
    externalValidators: [{ realmPrefix: 'v-', authUrl: 'http://127.0.0.1:9/v' }],
    authUrl: 'http://127.0.0.1:9/global', authSecret: 'g',
  }) });
  const s = await admin(server, t);
  const m = (body) => manage(s, body, ADMIN);
  assert.equal((await m({ command: 'add_management_token', token: 'old-mt', realm_prefix: 'x' })).code, 409);
  let r = await m({ command: 'add_management_token', token: 'new-mt', realm_prefix: 'new-' });
  assert.deepEqual(r.settings.management_tokens.map((e) => e.token_hash), [sha256('old-mt'), sha256('new-mt')]);
  r = await m({ command: 'set_external_auth', auth_url: '', realm_prefix: 'v-' });
  assert.deepEqual(r.settings.external_validators, []);
  r = await m({ command: 'set_external_auth', auth_url: '' });
  assert.equal(r.settings.auth_url, undefined);
  const file = readSettings(server).auth;
  for (const alias of ['managementTokens', 'externalValidators', 'authUrl', 'authSecret']) assert.equal(file[alias], undefined, alias);
  assert.equal(file.management_tokens.length, 2);
  r = await m({ command: 'revoke_management_token', token_hash: sha256('old-mt') });
  assert.deepEqual(r.settings.management_tokens.map((e) => e.token_hash), [sha256('new-mt')]);
});

test('tokens: management tokens, external auth, revoke_token (by token, hash, realm+client_id; admins only with allow_admin)', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const s = await admin(server, t);
  const m = (body) => manage(s, body, ADMIN);
  let r = await m({ command: 'add_management_token', token: 'mt-1', realm_prefix: 'team-', ephemeral_only: true, max_ttl: '2h' });
  assert.deepEqual(r.settings.management_tokens, [{ realm_prefix: 'team-', token_hash: sha256('mt-1'), ephemeral_only: true, max_ttl: '2h' }]);
  assert.equal((await m({ command: 'add_management_token', token: 'mt-1', realm_prefix: 'x' })).code, 409);
  assert.equal((await m({ command: 'add_management_token', token: 'mt-2', realm_prefix: 'x', max_ttl: 'forever' })).code, 400);
  assert.equal((await m({ command: 'revoke_management_token', token_hash: sha256('nope') })).code, 404);
  r = await m({ command: 'revoke_management_token', token_hash: sha256('mt-1') });
  assert.deepEqual(r.settings.management_tokens, []);

  assert.equal((await m({ command: 'set_external_auth', auth_url: 'ftp://x' })).code, 400);
  assert.equal((await m({ command: 'set_external_auth', auth_url: 'http://v/', realm: 'a', realm_prefix: 'b' })).code, 400);
  r = await m({ command: 'set_external_auth', auth_url: 'http://127.0.0.1:9/check', auth_secret: 'sec', realm: 'r1' });
  assert.equal(r.settings.realms.r1.auth_url, 'http://127.0.0.1:9/check');
  assert.equal(r.settings.realms.r1.auth_secret_configured, true);
  r = await m({ command: 'set_external_auth', auth_url: 'http://127.0.0.1:9/p', realm_prefix: 'p-' });
  assert.deepEqual(r.settings.external_validators, [{ realm_prefix: 'p-', auth_url: 'http://127.0.0.1:9/p' }]);
  r = await m({ command: 'set_external_auth', auth_url: 'http://127.0.0.1:9/global', auth_secret: 'g' });
  assert.equal(r.settings.auth_url, 'http://127.0.0.1:9/global');
  r = await m({ command: 'set_external_auth', auth_url: '', realm_prefix: 'p-' });
  assert.deepEqual(r.settings.external_validators, []);

  assert.equal((await m({ command: 'revoke_token' })).code, 400);
  assert.equal((await m({ command: 'revoke_token', token: 'no-such' })).code, 404);
  r = await m({ command: 'revoke_token', token: 'tok-r1' });
  assert.deepEqual(r.revoked, [{ realm: 'r1', role: 'both', client_id: 'c1', client_name: 'one', token_hash: sha256('tok-r1') }]);
  r = await m({ command: 'revoke_token', realm: 'r1', client_id: 'c2' });
  assert.equal(r.revoked.length, 1);
  assert.equal((await m({ command: 'revoke_token', token_hash: sha256(ADMIN) })).code, 404);  // admins are skipped
  // A revoked token no longer authenticates.
  const c = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => c.close());
  assert.equal((await authenticate(c, { token: 'tok-r1' })).body.code, 401);
  r = await m({ command: 'revoke_token', token_hash: sha256(ADMIN), allow_admin: true });
  assert.equal(r.revoked[0].role, 'admin');
  assert.deepEqual(await manage(s, { command: 'get' }, ADMIN), { ok: false, code: 401, message: 'Invalid manager proof' });
});

test('set_global_auth, set_persistence, reload_settings; every change is in the file and survives a restart', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const s = await admin(server, t);
  const m = (body) => manage(s, body, ADMIN);
  assert.equal((await m({ command: 'set_global_auth', enabled: 'yes' })).code, 400);
  let r = await m({ command: 'set_persistence', storage: 'mongodb' });
  assert.deepEqual(r, { ok: false, code: 400, message: "unsupported storage backend 'mongodb'" });
  assert.equal((await m({ command: 'set_persistence', storage: 'redis', default_ttl: 'soon' })).code, 400);
  r = await m({ command: 'set_persistence', backend: 'redis', url: 'redis://127.0.0.1:1', prefix: 'p' });
  assert.equal(r.code, 500);  // nobody listens there: the store stays
  assert.match(r.message, /cannot open the store/);
  r = await m({ command: 'set_persistence', storage: 'memory', default_ttl: '2h' });
  assert.equal(r.ok, true);
  assert.deepEqual(r.settings.persistence, { storage: 'memory', storage_options: { default_ttl: '2h' } });
  await m({ command: 'add_realm', realm: 'kept', required: false });
  r = await m({ command: 'set_global_auth', enabled: false });
  assert.equal(r.settings.enabled, false);
  const onDisk = readSettings(server);
  assert.equal(onDisk.auth.enabled, false);
  assert.deepEqual(onDisk.auth.realms.kept, { required: false });
  assert.equal(onDisk.storage, 'memory');
  // No temporary files are left beside it.
  assert.deepEqual(fs.readdirSync(server.dir).filter((f) => f.includes('.tmp')), []);

  // reload_settings re-reads the file; a broken file is a 500 and the last good settings stay.
  onDisk.auth.enabled = true;
  onDisk.storage = 'memory';
  fs.writeFileSync(server.settingsFile, JSON.stringify(onDisk));
  r = await m({ command: 'reload_settings' });
  assert.equal(r.settings.enabled, true);
  fs.writeFileSync(server.settingsFile, '{ broken');
  r = await m({ command: 'reload_settings' });
  assert.equal(r.code, 500);
  r = await m({ command: 'get' });
  assert.equal(r.settings.realms.kept.required, false);

  // Without a settings file: reload is a 400, changes live in memory only.
  const bare = await startServer(t, { env: { TYO_MQ_ADMIN_TOKEN: 'bare-admin' } });
  const b = await admin(bare, t);
  assert.equal((await manage(b, { command: 'set_global_auth', enabled: true }, 'x')).code, 401);  // auth off: no admin token yet

  // Restart on the same file: the realm and the storage change are there.
  fs.writeFileSync(server.settingsFile, JSON.stringify({ ...onDisk, storage: 'memory' }));
  await server.stop();
  const again = await startServer(t, { settings: JSON.parse(fs.readFileSync(server.settingsFile, 'utf8')) });
  const a = await admin(again, t);
  r = await manage(a, { command: 'get' }, ADMIN);
  assert.deepEqual(r.settings.realms.kept, { required: false });
});

test('set_persistence moves the live store: what is queued goes along, and a restart finds it there', async (t) => {
  const { tempDir } = require('./lib/server');
  const target = tempDir(t);
  const server = await startServer(t, { settings: settings({}, { storage: 'memory' }) });
  const s = await admin(server, t);
  // An offline durable consumer in r1 with one message waiting, and one in the DLQ.
  const c = await connectV4(server.url, { transports: ['websocket'] });
  await authenticate(c, { token: 'tok-r1' });
  c.emit('CONSUMER', { name: 'away' });
  c.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'away', consumer_id: 'away', durable: true, ack: true,
    ack_timeout: '50ms', retry: { max_attempts: 1 } });
  await delay(100);
  await emitAck(c, 'PRODUCE', { event: 'e', from: 'p', message: 'dead' });
  await waitFor(async () => (await manage(s, { command: 'dlq_list' }, ADMIN)).entries.length === 1);
  c.close();
  await delay(100);
  const p = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => p.close());
  await authenticate(p, { token: 'tok-r1' });
  assert.deepEqual((await emitAck(p, 'PRODUCE', { event: 'e', from: 'p', message: 'kept' }))[0], { ok: true, stored: 1 });

  // A non-empty target is refused.
  const busy = tempDir(t);
  const other = await startServer(t, { settings: {}, dataDir: busy });
  const o = await connectV4(other.url, { transports: ['websocket'] });
  o.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'z', consumer_id: 'z', durable: true });
  await delay(100);
  o.close();
  await other.stop();
  assert.deepEqual(await manage(s, { command: 'set_persistence', storage: 'file', path: busy }, ADMIN),
    { ok: false, code: 409, message: 'the target store is not empty' });

  const r = await manage(s, { command: 'set_persistence', storage: 'sqlite', path: target, default_ttl: 3600 }, ADMIN);
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.deepEqual(r.settings.persistence, { storage: 'sqlite', storage_options: { path: target, default_ttl: 3600 } });
  await server.waitForLog(/store: memory -> file/);
  // New messages go to the new store too.
  assert.deepEqual((await emitAck(p, 'PRODUCE', { event: 'e', from: 'p', message: 'after' }))[0], { ok: true, stored: 1 });
  // Its own directory is locked while it runs.
  assert.equal((await manage(s, { command: 'set_persistence', storage: 'file', path: target }, ADMIN)).code, 500);
  const saved = readSettings(server);
  await server.stop();

  // A restart on that directory delivers both, in order, and still has the DLQ entry.
  const again = await startServer(t, { settings: saved, dataDir: target });
  const a = await admin(again, t);
  assert.equal((await manage(a, { command: 'dlq_list', realm: 'r1' }, ADMIN)).entries.length, 1);
  const back = await connectV4(again.url, { transports: ['websocket'] });
  t.after(() => back.close());
  await authenticate(back, { token: 'tok-r1' });
  const got = collect(back, 'CONSUME-p-e');
  back.emit('CONSUMER', { name: 'away' });
  back.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'away', consumer_id: 'away', durable: true, ack: true });
  await waitFor(() => got.length === 2);
  assert.deepEqual(got.map((m) => m.message), ['kept', 'after']);
});

test('set_persistence to redis: the queued rows are written there', async (t) => {
  const REDIS_URL = process.env.SIOMQ_TEST_REDIS_URL;
  if (!REDIS_URL) return t.skip('SIOMQ_TEST_REDIS_URL is not set');
  const { redis } = require('./lib/redis');
  const prefix = `siomq-move-${process.pid}-${Date.now()}`;
  t.after(() => redis(REDIS_URL, ['DEL', `${prefix}:rows`, `${prefix}:dead`, `${prefix}:subs`]));
  const server = await startServer(t, { settings: settings({}, { storage: 'file' }) });
  const s = await admin(server, t);
  const c = await connectV4(server.url, { transports: ['websocket'] });
  await authenticate(c, { token: 'tok-r1' });
  c.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'away', consumer_id: 'away', durable: true });
  await delay(100);
  c.close();  // away goes offline: what follows is stored
  await delay(100);
  const p = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => p.close());
  await authenticate(p, { token: 'tok-r1' });
  for (let i = 0; i < 3; i++) assert.deepEqual((await emitAck(p, 'PRODUCE', { event: 'e', from: 'p', message: i }))[0], { ok: true, stored: 1 });
  const r = await manage(s, { command: 'set_persistence', storage: 'redis', storage_options: { url: REDIS_URL, prefix } }, ADMIN);
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.deepEqual(await redis(REDIS_URL, ['HLEN', `${prefix}:subs`]), [1]);
  assert.deepEqual(await redis(REDIS_URL, ['HLEN', `${prefix}:rows`]), [3]);
  // Later writes go there as well.
  await emitAck(p, 'PRODUCE', { event: 'e', from: 'p', message: 3 });
  await waitFor(async () => (await redis(REDIS_URL, ['HLEN', `${prefix}:rows`]))[0] === 4);
});

test('stats and the DLQ commands: list, discard, replay, per realm', async (t) => {
  const server = await startServer(t, { settings: settings({}, { storage: 'memory' }) });
  const s = await admin(server, t);
  // A consumer in r1 that never ACKs: one attempt of 100 ms, then the DLQ.
  const c = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => c.close());
  await authenticate(c, { token: 'tok-r1' });
  c.emit('CONSUMER', { name: 'c' });
  c.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'c', consumer_id: 'c', durable: true, ack: true,
    ack_timeout: '100ms', retry: { max_attempts: 1 } });
  const got = collect(c, 'CONSUME-p-e');
  await delay(100);
  const [confirm] = await emitAck(c, 'PRODUCE', { event: 'e', from: 'p', message: { n: 1 } });
  assert.deepEqual(confirm, { ok: true, stored: 1 });
  let list;
  await waitFor(async () => {
    list = await manage(s, { command: 'dlq_list', realm: 'r1' }, ADMIN);
    return list.entries.length === 1;
  });
  const entry = list.entries[0];
  assert.equal(list.realm, 'r1');
  assert.equal(entry.realm, 'r1');
  assert.equal(entry.consumer, 'c');
  assert.equal(entry.event, 'p-e');
  assert.equal(entry.producer, 'p');
  assert.deepEqual(entry.message.message, { n: 1 });
  assert.match(entry.reason, /ack timeout/);
  assert.match(entry.created_at, /^\d{4}-\d\d-\d\dT/);
  assert.match(entry.dead_lettered_at, /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual((await manage(s, { command: 'dlq_list', realm: 'other' }, ADMIN)).entries, []);
  assert.equal((await manage(s, { command: 'dlq_list' }, ADMIN)).entries.length, 1);
  // Another realm's name does not reach it.
  assert.equal((await manage(s, { command: 'dlq_discard', msg_id: entry.id, realm: 'other' }, ADMIN)).code, 404);
  assert.equal((await manage(s, { command: 'dlq_replay', msg_id: entry.id, realm: 'other' }, ADMIN)).code, 404);
  const replayed = await manage(s, { command: 'dlq_replay', msg_id: entry.id, realm: 'r1' }, ADMIN);
  assert.equal(replayed.ok, true);
  assert.equal(replayed.msg_id, entry.id);
  assert.notEqual(replayed.new_msg_id, entry.id);
  await waitFor(() => got.some((m) => m.msgId === replayed.new_msg_id));
  await waitFor(async () => (await manage(s, { command: 'dlq_list', realm: 'r1' }, ADMIN)).entries.length === 1);
  const again = (await manage(s, { command: 'dlq_list', realm: 'r1' }, ADMIN)).entries[0];
  assert.deepEqual(await manage(s, { command: 'dlq_discard', msgId: again.id }, ADMIN), { ok: true, msg_id: again.id });
  assert.equal((await manage(s, { command: 'dlq_discard', id: again.id }, ADMIN)).code, 404);
  assert.equal((await manage(s, { command: 'dlq_replay', msg_id: 'msg-none' }, ADMIN)).code, 404);
  assert.equal((await manage(s, { command: 'dlq_replay' }, ADMIN)).code, 400);

  const stats = await manage(s, { command: 'stats' }, ADMIN);
  assert.deepEqual(stats.stats.realms.r1, { producers: { total: 1, online: 1 }, consumers: { total: 1, online: 1 }, subscriptions: 1 });
  assert.ok(stats.stats.connections_current >= 2);
});

test('remove_realm: settings, tokens, live state, sockets, stored rows and DLQ go; default and * refuse', async (t) => {
  const server = await startServer(t, { settings: settings({}, { storage: 'file' }) });
  const s = await admin(server, t);
  const m = (body) => manage(s, body, ADMIN);
  for (const realm of ['default', '*']) assert.equal((await m({ command: 'remove_realm', realm })).code, 400);
  assert.equal((await m({ command: 'remove_realm', realm: 'ghost' })).code, 404);
  // r1: a connected consumer with a stored backlog (durable, offline name) and a live socket.
  const c = await connectV4(server.url, { transports: ['websocket'] });
  await authenticate(c, { token: 'tok-r1' });
  c.emit('CONSUMER', { name: 'live' });
  c.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'offline', consumer_id: 'offline', durable: true });
  await delay(100);
  c.emit('UNSUBSCRIBE', 'nothing');  // harmless
  const idle = await connectV4(server.url, { transports: ['websocket'] });
  await authenticate(idle, { token: 'tok-r1-b' });
  const gone = [once(c, 'disconnect'), once(idle, 'disconnect')];
  const r = await m({ command: 'remove_realm', realm: 'r1' });
  assert.equal(r.ok, true);
  assert.equal(r.removed_tokens, 2);
  assert.equal(r.disconnected_sockets, 2);
  assert.equal(r.settings.realms.r1, undefined);
  await Promise.all(gone);
  assert.equal(readSettings(server).auth.tokens.length, 1);
  const stats = await manage(s, { command: 'stats' }, ADMIN);
  assert.equal(stats.stats.realms.r1, undefined);
  const c2 = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => c2.close());
  assert.equal((await authenticate(c2, { token: 'tok-r1' })).body.code, 401);
});

test('ephemeral realms expire: swept at start-up and while running, with the full disposal', async (t) => {
  const server = await startServer(t, {
    settings: settings({ realms: { old: { required: false, ephemeral: true, expires_at: Date.now() - 1000 }, r1: { manager_key: RKEY } } }),
  });
  const s = await admin(server, t);
  await server.waitForLog(/realm 'old' expired/);
  let r = await manage(s, { command: 'get' }, ADMIN);
  assert.equal(r.settings.realms.old, undefined);
  r = await manage(s, { command: 'add_realm', realm: 'brief', required: false, ttl: '1500ms' }, ADMIN);
  assert.equal(r.ok, true);
  const c = await connectV4(server.url, { transports: ['websocket'] });
  assert.deepEqual(await authenticate(c, { realm: 'brief', role: 'both' }), { event: 'AUTH_OK', body: { realm: 'brief', role: 'both' } });
  c.emit('CONSUMER', { name: 'x' });
  await once(c, 'disconnect', 6000 * TIME_SCALE);
  r = await manage(s, { command: 'get' }, ADMIN);
  assert.equal(r.settings.realms.brief, undefined);
});

test('§7 enrolment: request, poll, approve (token persisted, requester told), reject, supersede, errors', async (t) => {
  const server = await startServer(t, { settings: settings({}, { limits: { max_pending_authorization_requests: 3 } }) });
  const mgr = await admin(server, t);
  const requester = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => requester.close());
  const okEvents = collect(requester, 'AUTHORIZATION_REQUEST_OK');
  const request = { realm: 'r1', client_id: 'dev-1', client_name: 'Device 1', client_token: 'dev-1-token', role: 'producer',
    challenge_response: { answer: 42 } };
  const [filed] = await emitAck(requester, 'AUTHORIZATION_REQUEST', request);
  assert.equal(filed.ok, true);
  assert.equal(filed.status, 'pending');
  assert.match(filed.request_id, /^authreq-[0-9a-z]+-[0-9a-f]{12}$/);
  await waitFor(() => okEvents.length === 1);
  assert.deepEqual(okEvents[0], filed);

  for (const [bad, what] of [[{ ...request, client_id: 5 }, 'client_id'], [{ ...request, realm: '' }, 'realm'],
    [{ ...request, client_token: undefined }, 'client_token']]) {
    const [r] = await emitAck(requester, 'AUTHORIZATION_REQUEST', bad);
    assert.equal(r.code, 400, what);
    assert.match(r.message, new RegExp(what));
  }
  // NEXT: an admin sees the oldest pending one, with the token only as its hash; a realm manager must name its realm.
  let next = await signedAck(mgr, 'AUTHORIZATION_NEXT', {}, ADMIN);
  assert.equal(next.ok, true);
  const pub = next.request;
  assert.equal(pub.request_id, filed.request_id);
  assert.equal(pub.client_token_hash, sha256('dev-1-token'));
  assert.ok(!JSON.stringify(pub).includes('dev-1-token'));
  assert.deepEqual({ ...pub, created_at: 0 }, {
    request_id: filed.request_id, status: 'pending', realm: 'r1', role: 'producer', client_id: 'dev-1', client_name: 'Device 1',
    client_token_hash: sha256('dev-1-token'), challenge_response: { answer: 42 }, created_at: 0, decided_at: null, decision_reason: null,
  });
  assert.equal((await signedAck(mgr, 'AUTHORIZATION_NEXT', {}, RKEY)).code, 401);
  next = await signedAck(mgr, 'AUTHORIZATION_NEXT', { realm: 'r1' }, RKEY);
  assert.equal(next.request.request_id, filed.request_id);
  assert.equal((await signedAck(mgr, 'AUTHORIZATION_NEXT', { realm: 'other' }, ADMIN)).request, null);

  // A new request from the same client supersedes the old one.
  const [second] = await emitAck(requester, 'AUTHORIZATION_REQUEST', { ...request, role: 'superuser' });
  next = await signedAck(mgr, 'AUTHORIZATION_NEXT', {}, ADMIN);
  assert.equal(next.request.request_id, second.request_id);
  assert.equal(next.request.role, 'both');  // an unknown role becomes both
  assert.deepEqual(await signedAck(mgr, 'AUTHORIZATION_DECIDE', { request_id: filed.request_id, approved: true }, ADMIN),
    { ok: false, code: 404, message: 'Pending authorization request not found' });
  assert.equal((await signedAck(mgr, 'AUTHORIZATION_DECIDE', { request_id: second.request_id, approved: 'yes' }, ADMIN)).code, 400);
  // Signed by another realm's key: refused.
  assert.equal((await signedAck(mgr, 'AUTHORIZATION_DECIDE', { request_id: second.request_id, approved: true }, 'other')).code, 401);

  const approved = once(requester, 'AUTHORIZATION_APPROVED');
  const decided = await signedAck(mgr, 'AUTHORIZATION_DECIDE', { request_id: second.request_id, approved: true, role: 'producer' }, RKEY);
  assert.equal(decided.ok, true);
  assert.equal(decided.request.status, 'approved');
  assert.equal(decided.request.role, 'producer');
  assert.match(decided.request.decided_at, /^\d{4}-/);
  assert.deepEqual((await approved)[0], { request_id: second.request_id, realm: 'r1', role: 'producer' });
  const token = readSettings(server).auth.tokens.find((x) => x.client_id === 'dev-1');
  assert.equal(token.token, 'dev-1-token');
  assert.equal(token.role, 'producer');
  assert.deepEqual(await authenticate(requester, { token: 'dev-1-token' }), { event: 'AUTH_OK', body: { realm: 'r1', role: 'producer' } });

  // A rejection with a reason; the event form of the answers without an ack callback.
  const [third] = await emitAck(requester, 'AUTHORIZATION_REQUEST', { ...request, client_id: 'dev-2', client_token: 't2' });
  const rejected = once(requester, 'AUTHORIZATION_REJECTED');
  const results = collect(mgr, 'AUTHORIZATION_DECIDE_RESULT');
  const body = { request_id: third.request_id, approved: false, reason: 'unknown device' };
  mgr.emit('AUTHORIZATION_DECIDE', { body, proof: sign('AUTHORIZATION_DECIDE', body, ADMIN) });
  assert.deepEqual((await rejected)[0], { request_id: third.request_id, reason: 'unknown device' });
  await waitFor(() => results.length === 1);
  assert.equal(results[0].request.decision_reason, 'unknown device');
  const fails = collect(mgr, 'AUTHORIZATION_FAIL');
  mgr.emit('AUTHORIZATION_NEXT', { body: {} });
  await waitFor(() => fails.length === 1);
  assert.equal(fails[0].message, 'Missing manager proof');

  // max_pending_authorization_requests: 3.
  for (let i = 0; i < 3; i++) await emitAck(requester, 'AUTHORIZATION_REQUEST', { ...request, client_id: `n${i}` });
  const [full] = await emitAck(requester, 'AUTHORIZATION_REQUEST', { ...request, client_id: 'n9' });
  assert.deepEqual(full, { ok: false, code: 429, message: 'Too many pending authorization requests' });
});
