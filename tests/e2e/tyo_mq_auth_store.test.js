// auth_store (tyo-mq §10): realms, tokens and management tokens in a durable store instead of the
// settings file. Imported once and removed from the file; management changes and removals survive
// restarts and never come back from the file; an ephemeral realm that expired while the server was down
// is swept at boot; backup_auth_store makes a copy a new server starts from.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startServer, runServerOnce, tempDir, delay } = require('./lib/server');
const { connectV4, emitAck } = require('./lib/clients');
const { manage, signedAck, authenticate, sha256, connectFor } = require('./lib/tyo_auth');

const ADMIN = 'admin-secret-token';
const RKEY = 'manager-key-of-r1';

// A settings file and an auth store in `dir`, shared by the servers a test starts in turn.
function deployment(t, auth = {}) {
  const dir = tempDir(t);
  const settingsFile = path.join(dir, 'settings.json');
  const storeDir = path.join(dir, 'auth');
  const write = (doc) => fs.writeFileSync(settingsFile, JSON.stringify(doc, null, 2));
  write({
    auth_store: { filename: storeDir },
    limits: { messages_per_second: 1000 },
    auth: {
      enabled: true,
      jwt_secret: 'jwt-secret',
      tokens: [{ token: ADMIN, realm: '*', role: 'admin' }, { token: 'tok-r1', realm: 'r1', role: 'both', client_id: 'c1' }],
      realms: { default: { required: false }, r1: { manager_key: RKEY } },
      ...auth,
    },
  });
  return {
    dir, settingsFile, storeDir, write,
    read: () => JSON.parse(fs.readFileSync(settingsFile, 'utf8')),
    start: () => startServer(t, { args: ['--settings', settingsFile], dataDir: path.join(dir, 'data') }),
  };
}

// AUTHENTICATION with `token` on a fresh socket: 'AUTH_OK <realm>' or 'AUTH_FAIL'.
async function authAs(server, t, token) {
  const s = await connectFor(server, t);
  const r = await authenticate(s, { token });
  s.close();
  return r.event === 'AUTH_OK' ? `AUTH_OK ${r.body.realm}` : r.event;
}

// A token for `realm` through §7 enrolment, approved by the admin: a token added by a signed command.
async function enrol(server, t, mgr, realm, token) {
  const requester = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => requester.close());
  const [filed] = await emitAck(requester, 'AUTHORIZATION_REQUEST', { realm, client_id: `id-${token}`, client_name: 'device', client_token: token });
  assert.equal(filed.ok, true);
  const decided = await signedAck(mgr, 'AUTHORIZATION_DECIDE', { request_id: filed.request_id, approved: true, role: 'both' }, ADMIN);
  assert.equal(decided.ok, true, JSON.stringify(decided));
  requester.close();
}

// The auth block of a management reply's settings (the block itself, or nested under `auth`).
const authOf = (reply) => reply.settings.auth || reply.settings;

const holdsStoredPart = (doc) => ['realms', 'tokens', 'management_tokens', 'managementTokens'].some((k) => doc.auth && k in doc.auth);

test('imported once and removed from the file; changes survive restarts; removals never come back from the file or a reload', async (t) => {
  const d = deployment(t);
  let server = await d.start();
  await server.waitForLog(/auth_store .*: imported 2 realms, 2 tokens and 0 management tokens/);
  let file = d.read();
  assert.equal(holdsStoredPart(file), false, JSON.stringify(file));
  assert.equal(file.auth.jwt_secret, 'jwt-secret');
  assert.deepEqual(file.auth_store, { filename: d.storeDir });
  assert.equal(await authAs(server, t, 'tok-r1'), 'AUTH_OK r1');

  // Signed changes: a realm, a token (enrolment) and a management token.
  let mgr = await connectFor(server, t);
  assert.equal((await manage(mgr, { command: 'add_realm', realm: 'r2', manager_key: 'k2' }, ADMIN)).ok, true);
  await enrol(server, t, mgr, 'r2', 'tok-r2');
  assert.equal((await manage(mgr, { command: 'add_management_token', token: 'mt-1', realm_prefix: 'tmp-' }, ADMIN)).ok, true);
  assert.equal((await manage(mgr, { command: 'set_external_auth', realm: 'r2', auth_url: 'http://127.0.0.1:9/check' }, ADMIN)).ok, true);
  assert.equal((await manage(mgr, { command: 'add_realm', realm: 'r4', required: false }, ADMIN)).ok, true);
  assert.equal((await manage(mgr, { command: 'rename_realm', from: 'r4', to: 'r5' }, ADMIN)).ok, true);
  assert.equal(await authAs(server, t, 'tok-r2'), 'AUTH_OK r2');
  assert.equal(holdsStoredPart(d.read()), false, 'the changes went to the store, not the file');
  await server.stop();

  server = await d.start();
  assert.equal(await authAs(server, t, 'tok-r2'), 'AUTH_OK r2');
  assert.equal(await authAs(server, t, 'tok-r1'), 'AUTH_OK r1');
  mgr = await connectFor(server, t);
  let got = authOf(await manage(mgr, { command: 'get' }, ADMIN));
  assert.ok(got.realms.r2, JSON.stringify(got));
  assert.equal(got.realms.r2.manager_key_configured, true);
  assert.equal(got.realms.r2.auth_url, 'http://127.0.0.1:9/check');
  assert.equal(got.realms.r5.required, false);
  assert.equal(got.realms.r4.renamed_to, 'r5');
  assert.deepEqual(got.management_tokens.map((m) => m.token_hash), [sha256('mt-1')]);
  // A realm's own manager signs a realm-scoped command: stored as well.
  assert.equal((await manage(mgr, { command: 'set_realm_key', realm: 'r1', key: 'psk-1' }, RKEY)).ok, true);

  // Removals: a token revoked, a realm removed (its token with it), a management token revoked.
  assert.equal((await manage(mgr, { command: 'revoke_token', token: 'tok-r1' }, ADMIN)).ok, true);
  const removed = await manage(mgr, { command: 'remove_realm', realm: 'r2' }, ADMIN);
  assert.equal(removed.ok, true, JSON.stringify(removed));
  assert.equal(removed.removed_tokens, 1);
  assert.equal((await manage(mgr, { command: 'revoke_management_token', token_hash: sha256('mt-1') }, ADMIN)).ok, true);
  assert.equal(await authAs(server, t, 'tok-r1'), 'AUTH_FAIL');

  // The file edited while running to bring them back (an old copy of it): a reload ignores that part.
  file = d.read();
  file.auth.tokens = [{ token: 'tok-r1', realm: 'r1' }, { token: 'tok-r2', realm: 'r2' }];
  file.auth.realms = { r2: { required: false } };
  file.limits.messages_per_second = 999;
  d.write(file);
  server.kill('SIGHUP');
  await server.waitForLog(/auth\.realms, auth\.tokens and auth\.management_tokens in .* are ignored/);
  await server.waitForLog('SIGHUP: settings reloaded');
  assert.equal(await authAs(server, t, 'tok-r1'), 'AUTH_FAIL');
  assert.equal(await authAs(server, t, 'tok-r2'), 'AUTH_FAIL');
  assert.equal(holdsStoredPart(d.read()), false, 'removed from the file again');
  assert.equal(d.read().limits.messages_per_second, 999, 'the rest of the edit stays');
  await server.stop();

  // And edited again while it is down.
  file = d.read();
  file.auth.tokens = [{ token: 'tok-r1', realm: 'r1' }];
  d.write(file);
  server = await d.start();
  await server.waitForLog(/are ignored: the auth store holds them/);
  assert.equal(await authAs(server, t, 'tok-r1'), 'AUTH_FAIL');
  assert.equal(await authAs(server, t, 'tok-r2'), 'AUTH_FAIL');
  mgr = await connectFor(server, t);
  got = authOf(await manage(mgr, { command: 'get' }, ADMIN));
  assert.equal(got.realms.r2, undefined);
  assert.equal(got.realms.r1.key_configured, true);
  assert.deepEqual(got.management_tokens, []);
  assert.deepEqual(got.tokens.map((x) => x.token_hash), [sha256(ADMIN)]);
  assert.equal(holdsStoredPart(d.read()), false);
});

test('an ephemeral realm that expired while the server was down is swept at boot, its token with it, for good', async (t) => {
  const d = deployment(t);
  let server = await d.start();
  const mgr = await connectFor(server, t);
  const expires = Date.now() + 3000;
  assert.equal((await manage(mgr, { command: 'add_realm', realm: 'tmp-1', ephemeral: true, ttl: '3s' }, ADMIN)).ok, true);
  await enrol(server, t, mgr, 'tmp-1', 'tok-tmp');
  assert.equal(await authAs(server, t, 'tok-tmp'), 'AUTH_OK tmp-1');
  await server.stop();
  assert.doesNotMatch(server.logs(), /realm 'tmp-1' expired/, 'still alive when the server stopped');
  await delay(Math.max(0, expires - Date.now()) + 300);

  server = await d.start();
  await server.waitForLog("realm 'tmp-1' removed: 1 tokens");
  assert.ok(server.logs().indexOf("realm 'tmp-1' removed") < server.logs().indexOf('listening on'), 'before any client');
  assert.equal(await authAs(server, t, 'tok-tmp'), 'AUTH_FAIL');
  await server.stop();
  server = await d.start();
  assert.equal(await authAs(server, t, 'tok-tmp'), 'AUTH_FAIL');
  const got = authOf(await manage(await connectFor(server, t), { command: 'get' }, ADMIN));
  assert.equal(got.realms['tmp-1'], undefined);
  assert.doesNotMatch(server.logs(), /tmp-1/, 'nothing left of it to sweep');
});

test('backup_auth_store: a consistent copy of its moment, which a new server starts from with the same auth', async (t) => {
  const d = deployment(t);
  const server = await d.start();
  const mgr = await connectFor(server, t);
  assert.equal((await manage(mgr, { command: 'add_realm', realm: 'r3', manager_key: 'k3' }, ADMIN)).ok, true);
  await enrol(server, t, mgr, 'r3', 'tok-r3');
  const backup = path.join(d.dir, 'backup');
  assert.deepEqual(await manage(mgr, { command: 'backup_auth_store', path: backup }, ADMIN), { ok: true, path: backup });
  // Refused: an existing target, a missing parent, no path, a realm manager's signature.
  assert.equal((await manage(mgr, { command: 'backup_auth_store', path: backup }, ADMIN)).code, 409);
  assert.equal((await manage(mgr, { command: 'backup_auth_store', path: path.join(d.dir, 'no', 'such') }, ADMIN)).code, 400);
  assert.equal((await manage(mgr, { command: 'backup_auth_store' }, ADMIN)).code, 400);
  assert.equal((await manage(mgr, { command: 'backup_auth_store', path: path.join(d.dir, 'b2') }, RKEY)).code, 401);
  // Changes after the backup are not in it.
  assert.equal((await manage(mgr, { command: 'revoke_token', token: 'tok-r1' }, ADMIN)).ok, true);
  assert.equal(await authAs(server, t, 'tok-r1'), 'AUTH_FAIL');

  const restored = await startServer(t, { settings: { auth_store: { filename: backup }, auth: { enabled: true } } });
  assert.equal(await authAs(restored, t, 'tok-r1'), 'AUTH_OK r1');
  assert.equal(await authAs(restored, t, 'tok-r3'), 'AUTH_OK r3');
  const got = authOf(await manage(await connectFor(restored, t), { command: 'get' }, ADMIN));
  assert.equal(got.realms.r3.manager_key_configured, true);
  assert.doesNotMatch(restored.logs(), /imported/, 'the copy is a store already imported');
});

test('without auth_store nothing changes (backup_auth_store is 400); a bad auth_store stops the start-up with a clear error', async (t) => {
  const plain = await startServer(t, { settings: { auth: { enabled: true, tokens: [{ token: ADMIN, realm: '*', role: 'admin' }] } } });
  assert.deepEqual(await manage(await connectFor(plain, t), { command: 'backup_auth_store', path: path.join(plain.dir, 'b') }, ADMIN),
    { ok: false, code: 400, message: 'no auth_store is configured' });
  assert.ok(holdsStoredPart(JSON.parse(fs.readFileSync(plain.settingsFile, 'utf8'))), 'the tokens stay in the file');

  const dir = tempDir(t);
  const notADirectory = path.join(dir, 'tyo-mq-auth.sqlite');
  fs.writeFileSync(notADirectory, 'SQLite format 3\0');
  let r = runServerOnce({ settings: { auth_store: { filename: notADirectory } } });
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /cannot start: auth_store .*tyo-mq-auth\.sqlite: not a directory/);
  r = runServerOnce({ settings: { auth_store: { filename: 7 } } });
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /auth_store must be \{"filename"/);
});
