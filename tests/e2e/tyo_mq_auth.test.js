// tyo-mq authentication and authorization (protocol §6 with §0 rows 8 and 9): every branch of
// AUTHENTICATION (§6.2) in its order, the token checks of §6.4 (per-realm JWT, global JWT, static
// tokens, external validators over HTTP), the gate on protocol events (§6.3, §6.5), anonymous names
// (§6.6), the admin-token bootstrap (§6.1) and realm isolation, with npm socket.io-client@4.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const net = require('node:net');
const { startServer, delay } = require('./lib/server');
const { connectV4, emitAck, waitFor, once, TIME_SCALE } = require('./lib/clients');
const { jwt, b64url, authenticate, collect, startValidator, selfSignedCert, manage, connectFor: client } = require('./lib/tyo_auth');
const crypto = require('node:crypto');

const ADMIN = 'admin-secret-token';
const JWT_SECRET = 'global-jwt-secret';
const REALM_KEY = 'realm-k-manager-key';

function settings(auth = {}, extra = {}) {
  return {
    auth: {
      enabled: true,
      tokens: [
        { token: ADMIN, realm: '*', role: 'admin' },
        { token: 'tok-a-producer', realm: 'a', role: 'producer', client_id: 'pa' },
        { token: 'tok-a-consumer', realm: 'a', role: 'consumer', client_id: 'ca' },
        { token: 'tok-b-both', realm: 'b', role: 'both' },
      ],
      realms: {
        open: { required: false },
        keyed: { key: 'sesame' },
        managed: { manager_key: REALM_KEY },
      },
      ...auth,
    },
    ...extra,
  };
}

const NOW_S = () => Math.floor(Date.now() / 1000);

test('auth off: AUTHENTICATION answers {realm:default, role:both}, again and again', async (t) => {
  const server = await startServer(t, { settings: {} });
  const s = await client(server, t);
  for (const payload of [{}, { token: 'anything', realm: 'x', role: 'producer' }]) {
    const r = await authenticate(s, payload);
    assert.deepEqual(r, { event: 'AUTH_OK', body: { realm: 'default', role: 'both' } });
  }
});

test('§6.2 in order: payload, manager role, open realm, role/key branch, missing token', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const cases = [
    ['not json', 401, 'Invalid authentication payload'],
    [{ token: 42 }, 401, 'Invalid authentication payload'],
    [{ realm: ['a'] }, 401, 'Invalid authentication payload'],
    [{ role: 'manager' }, 401, 'Manager role requires manual authorization'],
    [{ realm: 'keyed', role: 'consumer' }, 401, "Realm 'keyed' requires a valid pre-shared key"],
    [{ realm: 'keyed', role: 'consumer', key: 'wrong' }, 401, "Realm 'keyed' requires a valid pre-shared key"],
    [{ realm: 'keyed', role: 'consumer', key: 7 }, 401, "Realm 'keyed' requires a valid pre-shared key"],
    [{ realm: 'keyed', role: 'producer' }, 403, "Producer must be accepted into realm 'keyed'"],
    [{ realm: 'keyed', key: 'sesame' }, 403, "Producer must be accepted into realm 'keyed'"],  // role both
    [{ role: 'producer' }, 403, "Producer must be accepted into realm 'default'"],
    [{}, 401, 'Missing authentication token'],
    [{ realm: 'a' }, 401, 'Missing authentication token'],
    [{ token: 'no-such-token' }, 401, 'Invalid authentication token'],
    [{ token: 'x'.repeat(9000) }, 401, 'Invalid authentication token'],
  ];
  for (const [payload, code, message] of cases) {
    const s = await client(server, t);
    const r = await authenticate(s, payload);
    assert.deepEqual(r, { event: 'AUTH_FAIL', body: { code, message } }, JSON.stringify(payload).slice(0, 80));
    // The ack callback hears the same (§0 row 8's spirit).
    const [ack] = await emitAck(s, 'AUTHENTICATION', payload);
    assert.deepEqual(ack, { ok: false, code, message });
  }
  const granted = [
    [{ realm: 'open', role: 'producer' }, { realm: 'open', role: 'producer' }],
    [{ realm: 'open', role: 'admin' }, { realm: 'open', role: 'both' }],  // step 5 never grants more than both
    [{ realm: 'keyed', role: 'consumer', key: 'sesame' }, { realm: 'keyed', role: 'consumer' }],
    [{ token: 'tok-a-producer', realm: 'b', role: 'consumer' }, { realm: 'a', role: 'producer' }],  // the token wins
  ];
  for (const [payload, body] of granted) {
    const s = await client(server, t);
    assert.deepEqual(await authenticate(s, payload), { event: 'AUTH_OK', body });
    assert.deepEqual(await authenticate(s, payload), {
      event: 'AUTH_FAIL', body: { code: 403, message: 'Socket is already authenticated' },
    });
  }
});

test('§6.4 JWTs: per-realm manager_key, global secret; forged, expired, early, alg none, padded, no realm', async (t) => {
  const server = await startServer(t, { settings: settings({ jwt_secret: JWT_SECRET }) });
  const good = [
    [jwt({ realm: 'x', role: 'consumer', exp: NOW_S() + 60 }, JWT_SECRET), { realm: 'x', role: 'consumer' }],
    [jwt({ realm: 'managed', role: 'consumer' }, REALM_KEY), { realm: 'managed', role: 'consumer' }],
  ];
  for (const [token, body] of good) {
    const s = await client(server, t);
    assert.deepEqual(await authenticate(s, { token, realm: 'ignored' }), { event: 'AUTH_OK', body });
  }
  const valid = jwt({ realm: 'x', role: 'both' }, JWT_SECRET);
  const [h, p] = valid.split('.');
  const bad = {
    forged: jwt({ realm: 'x', role: 'both' }, 'not-the-secret'),
    'realm key used for another realm': jwt({ realm: 'x', role: 'both' }, REALM_KEY),
    expired: jwt({ realm: 'x', role: 'both', exp: NOW_S() - 1 }, JWT_SECRET),
    'not yet valid': jwt({ realm: 'x', role: 'both', nbf: NOW_S() + 60 }, JWT_SECRET),
    'alg none': `${b64url(JSON.stringify({ alg: 'none' }))}.${p}.`,
    'alg HS512': jwt({ realm: 'x', role: 'both' }, JWT_SECRET, { alg: 'HS512' }),
    padded: `${valid}=`,
    'standard base64 signature': `${h}.${p}.${crypto.createHmac('sha256', JWT_SECRET).update(`${h}.${p}`).digest('base64')}`,
    'no realm': jwt({ role: 'both' }, JWT_SECRET),
    'no role': jwt({ realm: 'x' }, JWT_SECRET),
    'two parts': `${h}.${p}`,
    // Issue 12: a role outside §6.5's five is refused rather than granted (it could pass no gate anyway).
    'unknown role': jwt({ realm: 'managed', role: 'weird-role' }, REALM_KEY),
    '"*" for a non-admin': jwt({ realm: '*', role: 'consumer' }, JWT_SECRET),
  };
  const same = await client(server, t);
  for (const [what, token] of Object.entries(bad)) {
    assert.deepEqual(await authenticate(same, { token }),
      { event: 'AUTH_FAIL', body: { code: 401, message: 'Invalid authentication token' } }, what);
  }
  // None of the refusals left a grant behind: the socket is still unauthenticated, and can log in.
  const [gated] = await emitAck(same, 'PRODUCE', { event: 'e', from: 'p' });
  assert.equal(gated.code, 401);
  assert.deepEqual(await authenticate(same, { token: valid }), { event: 'AUTH_OK', body: { realm: 'x', role: 'both' } });
});

test('§6.4 external validators: realm url, longest prefix, global; secret header; scope, refusals, errors, timeout', async (t) => {
  const seen = [];
  const validator = await startValidator(t, (req) => {
    seen.push(req);
    const token = req.body && req.body.token;
    if (token === 'realm-tok') return { body: { realm: 'ext', role: 'producer' } };
    if (token === 'prefix-tok') return { body: { realm: 'team-blue-1', role: 'consumer', valid: true } };
    if (token === 'global-tok') return { body: { realm: 'anywhere', role: 'both', ok: true } };
    if (token === 'outside-scope') return { body: { realm: 'elsewhere', role: 'both' } };
    if (token === 'says-invalid') return { body: { realm: 'ext', role: 'both', valid: false } };
    if (token === 'says-not-ok') return { body: { realm: 'ext', role: 'both', ok: false } };
    if (token === 'no-role') return { body: { realm: 'ext' } };
    if (token === 'server-error') return { status: 500, body: { realm: 'ext', role: 'both' } };
    if (token === 'not-json') return { body: 'hello' };
    if (token === 'slow') return { delayMs: 3000, body: { realm: 'ext', role: 'both' } };
    return { status: 401, body: { ok: false } };
  });
  // A port nobody listens on.
  const closed = await new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
  const server = await startServer(t, {
    settings: settings({
      auth_url: `${validator.url}/global`,
      external_validators: [
        { realm_prefix: 'team-', auth_url: `${validator.url}/team`, auth_secret: 'short-prefix' },
        { realm_prefix: 'team-blue-', auth_url: `${validator.url}/team-blue`, auth_secret: 'long-prefix' },
        { realm_prefix: 'down-', auth_url: `http://127.0.0.1:${closed}/` },
      ],
      validator_timeout: '500ms',
      realms: { ext: { auth_url: `${validator.url}/realm`, auth_secret: 'realm-secret' } },
    }),
  });
  const auth = async (payload) => authenticate(await client(server, t), payload);
  assert.deepEqual(await auth({ token: 'realm-tok', realm: 'ext' }), { event: 'AUTH_OK', body: { realm: 'ext', role: 'producer' } });
  let r = seen.at(-1);
  assert.equal(r.path, '/realm');
  assert.deepEqual(r.body, { token: 'realm-tok', realm: 'ext' });
  assert.equal(r.headers['x-mq-auth-secret'], 'realm-secret');
  assert.equal(r.headers['content-type'], 'application/json');

  assert.deepEqual(await auth({ token: 'prefix-tok', realm: 'team-blue-1' }),
    { event: 'AUTH_OK', body: { realm: 'team-blue-1', role: 'consumer' } });
  r = seen.at(-1);
  assert.equal(r.path, '/team-blue');  // the longest prefix
  assert.equal(r.headers['x-mq-auth-secret'], 'long-prefix');

  assert.deepEqual(await auth({ token: 'global-tok' }), { event: 'AUTH_OK', body: { realm: 'anywhere', role: 'both' } });
  r = seen.at(-1);
  assert.equal(r.path, '/global');
  assert.deepEqual(r.body, { token: 'global-tok' });
  assert.equal(r.headers['x-mq-auth-secret'], undefined);

  // The realm hint can come from an (unverifiable) JWT's realm claim.
  const hinted = jwt({ realm: 'ext', role: 'both' }, 'unknown-secret');
  await auth({ token: hinted });
  assert.equal(seen.at(-1).path, '/realm');

  const refused = { event: 'AUTH_FAIL', body: { code: 401, message: 'Invalid authentication token' } };
  assert.deepEqual(await auth({ token: 'outside-scope', realm: 'team-red' }), refused);  // answered outside team-
  for (const token of ['says-invalid', 'says-not-ok', 'no-role', 'server-error', 'not-json', 'unknown']) {
    assert.deepEqual(await auth({ token, realm: 'ext' }), refused, token);
  }
  const failed = { event: 'AUTH_FAIL', body: { code: 401, message: 'Authentication failed' } };
  assert.deepEqual(await auth({ token: 'anything', realm: 'down-1' }), failed);
  const t0 = Date.now();
  assert.deepEqual(await auth({ token: 'slow', realm: 'ext' }), failed);
  assert.ok(Date.now() - t0 < 2500 * TIME_SCALE, 'the validator timeout (500 ms) applies');
  // The server kept serving while waiting.
  assert.deepEqual(await auth({ token: 'tok-b-both' }), { event: 'AUTH_OK', body: { realm: 'b', role: 'both' } });
});

test('§6.4 https validators: a certificate the server trusts passes, an untrusted one fails the authentication', async (t) => {
  const tls = selfSignedCert(t);
  const validator = await startValidator(t, (req) => ({ body: { realm: 'tls', role: req.body.token === 'good' ? 'both' : '' } }), tls);
  const config = settings({ auth_url: `${validator.url}/check` });
  const trusting = await startServer(t, { settings: config, env: { SSL_CERT_FILE: tls.certFile } });
  assert.deepEqual(await authenticate(await client(trusting, t), { token: 'good' }), { event: 'AUTH_OK', body: { realm: 'tls', role: 'both' } });
  assert.deepEqual(await authenticate(await client(trusting, t), { token: 'bad' }),
    { event: 'AUTH_FAIL', body: { code: 401, message: 'Invalid authentication token' } });
  const asked = validator.requests.length;
  const wary = await startServer(t, { settings: config, env: { SSL_CERT_FILE: '/nonexistent.pem', SSL_CERT_DIR: '/nonexistent' } });
  assert.deepEqual(await authenticate(await client(wary, t), { token: 'good' }),
    { event: 'AUTH_FAIL', body: { code: 401, message: 'Authentication failed' } });
  assert.equal(validator.requests.length, asked, 'nothing was sent over the unverified connection');
  await wary.waitForLog(/TLS handshake failed/);
});

test('§6.3 gate: unauthenticated refusals answer AUTH_FAIL and the ack; nothing is delivered', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const consumer = await client(server, t);
  assert.equal((await authenticate(consumer, { token: 'tok-a-consumer' })).event, 'AUTH_OK');
  consumer.emit('CONSUMER', { name: 'c' });
  consumer.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'c' });
  const got = collect(consumer, 'CONSUME-p-e');
  await delay(100);

  // The default realm requires auth (no `realms.default`), needs no key but acceptance: PRODUCE has no implicit grant.
  const stranger = await client(server, t);
  const fails = collect(stranger, 'AUTH_FAIL');
  const [ack] = await emitAck(stranger, 'PRODUCE', { event: 'e', from: 'p', message: 1 });
  assert.deepEqual(ack, { ok: false, code: 401, message: 'Authentication required before PRODUCE' });
  await waitFor(() => fails.length === 1);
  assert.deepEqual(fails[0], { code: 401, message: 'Authentication required before PRODUCE' });
  // AUTHENTICATION is still possible afterwards.
  assert.equal((await authenticate(stranger, { token: 'tok-a-producer' })).event, 'AUTH_OK');
  const [confirm] = await emitAck(stranger, 'PRODUCE', { event: 'e', from: 'p', message: 2 });
  assert.deepEqual(confirm, { ok: true, stored: 0 });
  await waitFor(() => got.length === 1);
  assert.equal(got[0].message, 2);
});

test('§6.3 implicit grants: consumer only where no key is needed, replaced by a later AUTHENTICATION (§0 row 9)', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const s = await client(server, t);
  const fails = collect(s, 'AUTH_FAIL');
  s.emit('CONSUMER', { name: 'implicit' });  // default: no key needed → consumer
  const [ack] = await emitAck(s, 'PRODUCE', { event: 'e', from: 'p', message: 1 });
  assert.deepEqual(ack, { ok: false, code: 403, message: "Role 'consumer' is not allowed to send PRODUCE" });
  await waitFor(() => fails.length === 1);
  assert.equal(fails[0].code, 403);
  // The implicit grant does not block AUTHENTICATION.
  assert.deepEqual(await authenticate(s, { token: 'tok-b-both' }), { event: 'AUTH_OK', body: { realm: 'b', role: 'both' } });
  const [ok] = await emitAck(s, 'PRODUCE', { event: 'e', from: 'p', message: 1 });
  assert.equal(ok.ok, true);

  // A realm needing a key: the declared (pending) realm decides; no implicit consumer grant.
  const k = await client(server, t);
  await authenticate(k, { realm: 'keyed', role: 'consumer', key: 'nope' });
  const [refused] = await emitAck(k, 'SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'k' });
  assert.deepEqual(refused, { ok: false, code: 401, message: 'Authentication required before SUBSCRIBE' });

  // An open realm grants both implicitly, and enforces no roles.
  const o = await client(server, t);
  await authenticate(o, { realm: 'open', role: 'nothing-good', key: 1, token: '' });
  const [produced] = await emitAck(o, 'PRODUCE', { event: 'e', from: 'p', message: 1 });
  assert.equal(produced.ok, true);
});

test('§6.5 roles in a realm that requires auth: producer vs consumer events', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const p = await client(server, t);
  await authenticate(p, { token: 'tok-a-producer' });
  for (const event of ['SUBSCRIBE', 'UNSUBSCRIBE', 'ACK', 'CONSUMER']) {
    const [ack] = await emitAck(p, event, { event: 'e', producer: 'p', consumer: 'c', name: 'c', msgId: 'm' });
    assert.deepEqual(ack, { ok: false, code: 403, message: `Role 'producer' is not allowed to send ${event}` });
  }
  const c = await client(server, t);
  await authenticate(c, { token: 'tok-a-consumer' });
  for (const event of ['PRODUCE', 'PRODUCER', 'PRODUCE_CHUNK']) {
    const [ack] = await emitAck(c, event, { event: 'e', from: 'p', name: 'p' });
    assert.deepEqual(ack, { ok: false, code: 403, message: `Role 'consumer' is not allowed to send ${event}` });
  }
  // PING, QUIT, HELLO and DEBUG have an empty role list (§3): only admin, manager and both pass it in a
  // realm that requires auth.
  const [refused] = await emitAck(c, 'PING', {});
  assert.deepEqual(refused, { ok: false, code: 403, message: "Role 'consumer' is not allowed to send PING" });
  const b = await client(server, t);
  await authenticate(b, { token: 'tok-b-both' });
  assert.equal(typeof (await emitAck(b, 'PING', {}))[0], 'string');
  // Unauthenticated in a realm that requires auth: refused; in an open realm: an implicit grant.
  const u = await client(server, t);
  assert.deepEqual((await emitAck(u, 'PING', {}))[0], { ok: false, code: 401, message: 'Authentication required before PING' });
  const o = await client(server, t);
  await authenticate(o, { realm: 'keyed', role: 'consumer', key: 'x' });  // fails, but keyed is remembered
  assert.equal((await emitAck(o, 'HELLO', { name: 'n' }))[0].code, 401);
});

test('§6.6 anonymous names: default allows them, other realms only with allow_anonymous', async (t) => {
  const server = await startServer(t, {
    settings: settings({ realms: { open: { required: false }, anon: { required: false, allow_anonymous: true } } }),
  });
  for (const [realm, allowed] of [['open', false], ['anon', true]]) {
    const s = await client(server, t);
    await authenticate(s, { realm, role: 'both' });
    const errors = collect(s, 'ERROR');
    const gone = once(s, 'disconnect');
    s.emit('PRODUCER', { name: 'ANONYMOUS-42' });
    if (allowed) {
      const [pong] = await emitAck(s, 'PING', {});
      assert.equal(typeof pong, 'string');
      assert.equal(errors.length, 0);
    } else {
      await gone;
      assert.deepEqual(errors[0], { message: "Anonymous names are not allowed in realm 'open'", code: -4 });
    }
  }
  const off = await startServer(t, { settings: {} });
  const s = await connectV4(off.url, { transports: ['websocket'] });
  t.after(() => s.close());
  s.emit('CONSUMER', { name: 'ANONYMOUS' });
  s.emit('PRODUCER', { name: 'ANONYMOUS' });
  const [pong] = await emitAck(s, 'PING', {});
  assert.equal(typeof pong, 'string');
});

test('realm isolation: same names in two realms never meet; "*" admins see every realm', async (t) => {
  const server = await startServer(t, {
    settings: settings({
      tokens: [
        { token: ADMIN, realm: '*', role: 'admin' },
        { token: 'ta', realm: 'a', role: 'both' },
        { token: 'tb', realm: 'b', role: 'both' },
      ],
    }),
  });
  const sockets = {};
  for (const name of ['a', 'b']) {
    const s = await client(server, t);
    await authenticate(s, { token: `t${name}` });
    s.emit('CONSUMER', { name: 'c' });
    s.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'c', durable: true, ack: true, consumer_id: 'c' });
    sockets[name] = { socket: s, got: collect(s, 'CONSUME-p-e') };
  }
  const admin = await client(server, t);
  await authenticate(admin, { token: ADMIN });
  admin.emit('CONSUMER', { name: 'watcher' });
  admin.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'watcher' });
  const mirrored = collect(admin, 'CONSUME-p-e');
  await delay(150);
  for (const name of ['a', 'b']) {
    const p = await client(server, t);
    await authenticate(p, { token: `t${name}` });
    const [confirm] = await emitAck(p, 'PRODUCE', { event: 'e', from: 'p', message: `for ${name}` });
    assert.deepEqual(confirm, { ok: true, stored: 1 });
  }
  await waitFor(() => sockets.a.got.length === 1 && sockets.b.got.length === 1 && mirrored.length === 2);
  assert.equal(sockets.a.got[0].message, 'for a');
  assert.equal(sockets.b.got[0].message, 'for b');
  assert.deepEqual(mirrored.map((m) => m.message).sort(), ['for a', 'for b']);
  // An ACK from realm b for realm a's message is not found there.
  const [foreign] = await emitAck(sockets.b.socket, 'ACK', { msgId: sockets.a.got[0].msgId });
  assert.equal(foreign.code, 404);
  const [mine] = await emitAck(sockets.a.socket, 'ACK', { msgId: sockets.a.got[0].msgId });
  assert.equal(mine.ok, true);
  // Stats keep the realms apart.
  const stats = await manage(admin, { command: 'stats' }, ADMIN);
  assert.equal(stats.ok, true);
  assert.deepEqual(stats.stats.realms.a.consumers, { total: 1, online: 1 });
  assert.deepEqual(stats.stats.realms.b.consumers, { total: 1, online: 1 });
});

test('§6.1 bootstrap: the admin token from the environment, from .env, or generated into .env', async (t) => {
  const base = { auth: { enabled: true, tokens: [] } };
  // From the environment.
  const fromEnv = await startServer(t, { settings: base, env: { TYO_MQ_ADMIN_TOKEN: 'env-admin' } });
  await fromEnv.waitForLog(/admin token from the environment/);
  let s = await connectV4(fromEnv.url, { transports: ['websocket'] });
  t.after(() => s.close());
  assert.deepEqual(await authenticate(s, { token: 'env-admin' }), { event: 'AUTH_OK', body: { realm: '*', role: 'admin' } });
  // Generated: appended to .env in the working directory, usable at once, not written to the settings.
  const gen = await startServer(t, { settings: base, env: { TYO_MQ_ADMIN_TOKEN: '' } });
  await gen.waitForLog(/admin token from a new random token/);
  const envText = fs.readFileSync(path.join(gen.dir, '.env'), 'utf8');
  const token = /TYO_MQ_ADMIN_TOKEN=([0-9a-f]{64})/.exec(envText)[1];
  s = await connectV4(gen.url, { transports: ['websocket'] });
  t.after(() => s.close());
  assert.deepEqual(await authenticate(s, { token }), { event: 'AUTH_OK', body: { realm: '*', role: 'admin' } });
  assert.ok(!fs.readFileSync(gen.settingsFile, 'utf8').includes(token));
  // From a named env file and a custom variable; auto_admin_token:false generates nothing.
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'siomq-env-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'admin.env'), 'export MY_ADMIN="file-admin"\n');
  const named = await startServer(t, {
    settings: { auth: { enabled: true, env_file: path.join(dir, 'admin.env'), admin_token_env: 'MY_ADMIN' } },
  });
  s = await connectV4(named.url, { transports: ['websocket'] });
  t.after(() => s.close());
  assert.equal((await authenticate(s, { token: 'file-admin' })).event, 'AUTH_OK');
  const none = await startServer(t, { settings: { auth: { enabled: true, auto_admin_token: false } }, env: { TYO_MQ_ADMIN_TOKEN: '' } });
  await none.waitForLog(/no admin token \(auto_admin_token is false\)/);
  assert.ok(!fs.existsSync(path.join(none.dir, '.env')));
});

test('a bad auth block stops the start with the key named', async () => {
  const { runServerOnce } = require('./lib/server');
  for (const [auth, key] of [[{ enabled: 'yes' }, 'auth.enabled'], [{ tokens: [{ realm: 'x' }] }, 'auth.tokens[0].token'],
    [{ realms: { r: { required: 1 } } }, 'auth.realms.r.required']]) {
    const r = await runServerOnce({ settings: { auth } });
    assert.equal(r.code, 1);
    assert.ok(r.output.includes(key), r.output);
  }
});
