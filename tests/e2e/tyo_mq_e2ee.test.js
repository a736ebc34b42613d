// The E2EE directories of tyo-mq (protocol §12, §0 row 13) against a real server: KEY_PUBLISH /
// KEY_LOOKUP, PREKEY_PUBLISH / PREKEY_TAKE with the Kyber prekey required and the one-time pool, their
// caps and field bounds, realm isolation, durability across restarts (kill -9 included) on the file and
// redis stores, realm removal and set_persistence, 501 for sealed sender and push, and the realm's
// `e2ee: required` policy on PRODUCE.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, tempDir, delay } = require('./lib/server');
const { connectV4, emitAck, once } = require('./lib/clients');
const { manage, authenticate } = require('./lib/tyo_auth');
const { storeFor } = require('./lib/redis');

const REDIS_URL = process.env.SIOMQ_TEST_REDIS_URL;
const ADMIN = 'admin-secret-token';

function authSettings(extra = {}) {
  return {
    auth: {
      enabled: true,
      tokens: [
        { token: ADMIN, realm: '*', role: 'admin' },
        { token: 'tok-a', realm: 'realm-a', role: 'both' },
        { token: 'tok-b', realm: 'realm-b', role: 'both' },
      ],
      realms: { default: { required: false }, 'realm-a': {}, 'realm-b': {}, sealed: { e2ee: 'required', required: false } },
    },
    ...extra,
  };
}

async function client(server, t, auth) {
  const s = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => s.close());
  if (auth) assert.equal((await authenticate(s, auth)).event, 'AUTH_OK');
  return s;
}

// Registers `name` on `socket` (CONSUMER, or PRODUCER with `producer`) and waits for the server to have it.
async function register(socket, name, producer = false) {
  socket.emit(producer ? 'PRODUCER' : 'CONSUMER', { name });
  await emitAck(socket, 'PING', {});
}

const ask = async (socket, event, payload) => (await emitAck(socket, event, payload))[0];

function b64(n, fill = 'A') {
  return fill.repeat(n);
}

function bundle(overrides = {}) {
  return {
    identity_key: 'SURFTlQtUFVC',
    registration_id: 4242,
    device_id: 1,
    signed_prekey_id: 7,
    signed_prekey: 'U0lHTkVELVBVQg==',
    signed_prekey_sig: 'U0lHTkVELVNJRw',
    kyber_prekey_id: 9,
    kyber_prekey: 'S1lCRVItUFVC',
    kyber_prekey_sig: 'S1lCRVItU0lH',
    one_time_prekeys: [{ id: 1, key: 'T1RQLTE=' }, { id: 2, key: 'T1RQLTI=' }, { id: 3, key: 'T1RQLTM=' }],
    ...overrides,
  };
}

test('KEY_PUBLISH / KEY_LOOKUP: publish, replace by key_id, unknown identity, only for a name held by this connection', async (t) => {
  const server = await startServer(t, {});
  const dev = await client(server, t);
  const op = await client(server, t);
  await register(dev, 'dev-consumer');
  await register(op, 'op-console', true);

  const before = Date.now();
  assert.deepEqual(await ask(dev, 'KEY_PUBLISH', { identity: 'dev-consumer', key_id: 'dev-1-enc', alg: 'ecdh-es-p256-a256gcm', public_key: 'QkFTRTY0LVBVQktFWQ==' }), { ok: true });
  // A producer name may publish too; no key_id means "default", no alg leaves it out.
  assert.deepEqual(await ask(op, 'KEY_PUBLISH', { identity: 'op-console', public_key: 'T1AtUFVC' }), { ok: true });

  let r = await ask(op, 'KEY_LOOKUP', { identity: 'dev-consumer' });
  assert.equal(r.keys.length, 1);
  assert.deepEqual({ ...r.keys[0], updated_at: undefined },
    { key_id: 'dev-1-enc', alg: 'ecdh-es-p256-a256gcm', public_key: 'QkFTRTY0LVBVQktFWQ==', updated_at: undefined });
  assert.match(r.keys[0].updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(Date.parse(r.keys[0].updated_at) >= before - 1000);
  assert.deepEqual((await ask(dev, 'KEY_LOOKUP', { identity: 'op-console' })).keys.map((k) => [k.key_id, k.alg, k.public_key]),
    [['default', undefined, 'T1AtUFVC']]);

  // Re-publishing a key_id replaces it rather than adding one.
  await ask(dev, 'KEY_PUBLISH', { identity: 'dev-consumer', key_id: 'dev-1-enc', public_key: 'Uk9UQVRFRA' });
  r = await ask(op, 'KEY_LOOKUP', { identity: 'dev-consumer' });
  assert.deepEqual(r.keys.map((k) => [k.key_id, k.public_key, k.alg]), [['dev-1-enc', 'Uk9UQVRFRA', undefined]]);

  // Unknown identity: an empty list, not an error.
  assert.deepEqual(await ask(op, 'KEY_LOOKUP', { identity: 'nobody-here' }), { keys: [] });

  // A name this connection never registered, and a name held by another connection: 403, nothing stored.
  for (const identity of ['someone-else', 'dev-consumer']) {
    r = await ask(op, 'KEY_PUBLISH', { identity, key_id: 'k1', public_key: 'WA' });
    assert.equal(r.ok, false);
    assert.equal(r.code, 403);
    assert.match(r.message, /not registered/);
  }
  assert.deepEqual(await ask(op, 'KEY_LOOKUP', { identity: 'someone-else' }), { keys: [] });
  assert.equal((await ask(op, 'KEY_LOOKUP', { identity: 'dev-consumer' })).keys[0].public_key, 'Uk9UQVRFRA');
  // Once the name goes offline with its connection, it no longer speaks for it; its keys stay.
  dev.close();
  await delay(100);
  const late = await client(server, t);
  assert.equal((await ask(late, 'KEY_PUBLISH', { identity: 'dev-consumer', public_key: 'WA' })).code, 403);
  assert.equal((await ask(late, 'KEY_LOOKUP', { identity: 'dev-consumer' })).keys.length, 1);
});

test('KEY_PUBLISH caps: 8 keys per identity (429), field bounds (400); a refused request changes nothing', async (t) => {
  const server = await startServer(t, {});
  const dev = await client(server, t);
  await register(dev, 'dev');
  const cases = [
    [{ identity: 'dev', key_id: 'big', public_key: 'x'.repeat(4097) }, /public_key exceeds 4096/],
    [{ identity: 'dev', key_id: 'k'.repeat(129), public_key: 'UA' }, /key_id/],
    [{ identity: 'dev', key_id: 'é'.repeat(129), public_key: 'UA' }, /key_id/],
    [{ identity: 'dev', key_id: 'a', alg: 'x'.repeat(65), public_key: 'UA' }, /alg/],
    [{ identity: 'dev', key_id: 'a', public_key: 'not base64!' }, /base64/],
    [{ identity: 'dev', key_id: 'a', public_key: '=' }, /base64/],
    [{ identity: 'dev', key_id: 'a' }, /public_key is required/],
    [{ identity: 'dev', key_id: 'a', public_key: 42 }, /public_key must be a string/],
    [{ identity: 'dev', key_id: 7, public_key: 'UA' }, /key_id must be a string/],
    [{ key_id: 'a', public_key: 'UA' }, /identity is required/],
    [{ identity: 'd'.repeat(1025), public_key: 'UA' }, /identity exceeds/],
  ];
  for (const [payload, re] of cases) {
    const r = await ask(dev, 'KEY_PUBLISH', payload);
    assert.equal(r.ok, false, JSON.stringify(payload).slice(0, 80));
    assert.equal(r.code, 400, JSON.stringify(payload).slice(0, 80));
    assert.match(r.message, re);
  }
  // 4096 characters and a 128-character key_id are within the bounds.
  assert.deepEqual(await ask(dev, 'KEY_PUBLISH', { identity: 'dev', key_id: 'k'.repeat(128), public_key: 'x'.repeat(4096) }), { ok: true });
  for (let i = 1; i < 8; i++) assert.deepEqual(await ask(dev, 'KEY_PUBLISH', { identity: 'dev', key_id: `k${i}`, public_key: `UFVC${i}` }), { ok: true });
  const over = await ask(dev, 'KEY_PUBLISH', { identity: 'dev', key_id: 'one-too-many', public_key: 'UFVC' });
  assert.equal(over.code, 429);
  assert.match(over.message, /published keys/);
  // Replacing an existing key_id still works at the cap.
  assert.deepEqual(await ask(dev, 'KEY_PUBLISH', { identity: 'dev', key_id: 'k1', public_key: 'Uk9UQVRFRA' }), { ok: true });
  const keys = (await ask(dev, 'KEY_LOOKUP', { identity: 'dev' })).keys;
  assert.equal(keys.length, 8);
  assert.equal(keys.find((k) => k.key_id === 'k1').public_key, 'Uk9UQVRFRA');
  assert.equal(keys.find((k) => k.key_id === 'one-too-many'), undefined);
  // A payload that is not an object: ERROR -2 and a 400 answer.
  const error = once(dev, 'ERROR');
  assert.equal((await ask(dev, 'KEY_LOOKUP', 'not json')).code, 400);
  assert.equal((await error)[0].code, -2);
});

test('the directories are per realm: realm-a cannot see realm-b\'s keys or take its prekeys', async (t) => {
  const server = await startServer(t, { settings: authSettings() });
  const inA = await client(server, t, { token: 'tok-a' });
  const inB = await client(server, t, { token: 'tok-b' });
  await register(inA, 'alice');
  await register(inB, 'alice');  // the same name in another realm
  assert.deepEqual(await ask(inA, 'KEY_PUBLISH', { identity: 'alice', public_key: 'UFVCLUE' }), { ok: true });
  assert.equal((await ask(inA, 'PREKEY_PUBLISH', { identity: 'alice', ...bundle() })).ok, true);
  assert.deepEqual(await ask(inB, 'KEY_LOOKUP', { identity: 'alice' }), { keys: [] });
  assert.deepEqual(await ask(inB, 'PREKEY_TAKE', { identity: 'alice' }), { ok: true, found: false });
  // realm-b's own alice publishes separately; realm-a still sees its own.
  await ask(inB, 'KEY_PUBLISH', { identity: 'alice', public_key: 'UFVCLUI' });
  assert.deepEqual((await ask(inA, 'KEY_LOOKUP', { identity: 'alice' })).keys.map((k) => k.public_key), ['UFVCLUE']);
  assert.deepEqual((await ask(inB, 'KEY_LOOKUP', { identity: 'alice' })).keys.map((k) => k.public_key), ['UFVCLUI']);
  // realm-a's pool is untouched by realm-b's attempt.
  assert.equal((await ask(inA, 'PREKEY_TAKE', { identity: 'alice' })).one_time_prekey_id, 1);
  // The gate: an unauthenticated socket in a realm that requires auth gets AUTH_FAIL and a 401 answer.
  const anon = await client(server, t);
  await authenticate(anon, { realm: 'realm-a' });
  const fail = once(anon, 'AUTH_FAIL');
  const r = await ask(anon, 'KEY_LOOKUP', { identity: 'alice' });
  assert.equal(r.ok, false);
  assert.equal((await fail)[0].code, r.code);
});

test('PREKEY_PUBLISH / PREKEY_TAKE: one-time prekeys consumed one per take, the empty pool, republish, the cap of 100', async (t) => {
  const server = await startServer(t, {});
  const alice = await client(server, t);
  const bob = await client(server, t);
  await register(alice, 'alice');
  await register(bob, 'bob', true);

  assert.deepEqual(await ask(alice, 'PREKEY_PUBLISH', { identity: 'alice', ...bundle() }), { ok: true, one_time_available: 3 });
  const b1 = await ask(bob, 'PREKEY_TAKE', { identity: 'alice' });
  assert.deepEqual({ ...b1, updated_at: undefined }, {
    ok: true, found: true, identity: 'alice', registration_id: 4242, device_id: 1, identity_key: 'SURFTlQtUFVC',
    signed_prekey_id: 7, signed_prekey: 'U0lHTkVELVBVQg==', signed_prekey_sig: 'U0lHTkVELVNJRw', kyber_prekey_id: 9,
    kyber_prekey: 'S1lCRVItUFVC', kyber_prekey_sig: 'S1lCRVItU0lH', one_time_prekey: 'T1RQLTE=', one_time_prekey_id: 1,
    one_time_remaining: 2, updated_at: undefined,
  });
  assert.match(b1.updated_at, /Z$/);
  const b2 = await ask(bob, 'PREKEY_TAKE', { identity: 'alice' });
  assert.deepEqual([b2.one_time_prekey_id, b2.one_time_prekey, b2.one_time_remaining], [2, 'T1RQLTI=', 1]);
  const b3 = await ask(bob, 'PREKEY_TAKE', { identity: 'alice' });
  assert.deepEqual([b3.one_time_prekey_id, b3.one_time_remaining], [3, 0]);
  // Pool empty: the bundle still, without a one-time prekey.
  const b4 = await ask(bob, 'PREKEY_TAKE', { identity: 'alice' });
  assert.deepEqual([b4.found, b4.one_time_prekey, b4.one_time_prekey_id, b4.one_time_remaining, b4.kyber_prekey],
    [true, null, null, 0, 'S1lCRVItUFVC']);
  // Unknown identity.
  assert.deepEqual(await ask(bob, 'PREKEY_TAKE', { identity: 'nobody' }), { ok: true, found: false });

  // Republishing replaces the static part and adds to the pool (a reused id replaces its prekey).
  assert.deepEqual(await ask(alice, 'PREKEY_PUBLISH', { identity: 'alice', ...bundle({ signed_prekey: 'djI', one_time_prekeys: [{ id: 9, key: 'T1RQLTk' }] }) }),
    { ok: true, one_time_available: 1 });
  assert.deepEqual(await ask(alice, 'PREKEY_PUBLISH', { identity: 'alice', ...bundle({ one_time_prekeys: [{ id: 10, key: 'MTA' }, { id: 9, key: 'TkVX' }] }) }),
    { ok: true, one_time_available: 2 });
  let b = await ask(bob, 'PREKEY_TAKE', { identity: 'alice' });
  assert.deepEqual([b.signed_prekey, b.one_time_prekey_id, b.one_time_prekey], ['U0lHTkVELVBVQg==', 10, 'MTA']);
  b = await ask(bob, 'PREKEY_TAKE', { identity: 'alice' });
  assert.deepEqual([b.one_time_prekey_id, b.one_time_prekey, b.one_time_remaining], [9, 'TkVX', 0]);

  // At most 100 in the pool: the oldest go when a publish overfills it; more than 100 in one publish is a 400.
  const batch = (from, n) => Array.from({ length: n }, (_, i) => ({ id: from + i, key: 'SyR' + (from + i) }));
  assert.equal((await ask(alice, 'PREKEY_PUBLISH', { identity: 'alice', ...bundle({ one_time_prekeys: batch(100, 100) }) })).one_time_available, 100);
  assert.equal((await ask(alice, 'PREKEY_PUBLISH', { identity: 'alice', ...bundle({ one_time_prekeys: batch(200, 5) }) })).one_time_available, 100);
  assert.equal((await ask(bob, 'PREKEY_TAKE', { identity: 'alice' })).one_time_prekey_id, 105);
  const tooMany = await ask(alice, 'PREKEY_PUBLISH', { identity: 'alice', ...bundle({ one_time_prekeys: batch(300, 101) }) });
  assert.equal(tooMany.code, 400);
  assert.match(tooMany.message, /more than 100/);
  let taken = 1;
  for (;;) {
    const x = await ask(bob, 'PREKEY_TAKE', { identity: 'alice' });
    if (x.one_time_prekey_id === null) break;
    taken += 1;
    assert.ok(taken <= 100);
  }
  assert.equal(taken, 100);
});

test('PREKEY_PUBLISH validates every field: Kyber prekey required, base64 and length bounds, ids, identity held here', async (t) => {
  const server = await startServer(t, {});
  const alice = await client(server, t);
  await register(alice, 'alice');
  const noKyber = bundle();
  delete noKyber.kyber_prekey;
  delete noKyber.kyber_prekey_sig;
  const cases = [
    [noKyber, /kyber_prekey is required/],
    [bundle({ kyber_prekey_sig: undefined }), /kyber_prekey_sig is required/],
    [bundle({ kyber_prekey: 'A'.repeat(4097) }), /kyber_prekey exceeds 4096/],
    [bundle({ identity_key: undefined }), /identity_key is required/],
    [bundle({ signed_prekey: 'A'.repeat(513) }), /signed_prekey exceeds 512/],
    [bundle({ signed_prekey_sig: 'no spaces allowed' }), /signed_prekey_sig must be base64/],
    [bundle({ registration_id: -1 }), /registration_id must be an integer/],
    [bundle({ device_id: 1.5 }), /device_id must be an integer/],
    [bundle({ signed_prekey_id: 4294967296 }), /signed_prekey_id must be an integer/],
    [bundle({ kyber_prekey_id: '9' }), /kyber_prekey_id must be an integer/],
    [bundle({ one_time_prekeys: 'x' }), /one_time_prekeys must be an array/],
    [bundle({ one_time_prekeys: [{ id: 1 }] }), /key is required/],
    [bundle({ one_time_prekeys: [{ id: 1, key: 'A'.repeat(513) }] }), /key exceeds 512/],
    [bundle({ one_time_prekeys: [7] }), /must be an object/],
  ];
  for (const [payload, re] of cases) {
    const r = await ask(alice, 'PREKEY_PUBLISH', { identity: 'alice', ...payload });
    assert.equal(r.code, 400, `${re}: ${JSON.stringify(r)}`);
    assert.match(r.message, re);
  }
  assert.deepEqual(await ask(alice, 'PREKEY_TAKE', { identity: 'alice' }), { ok: true, found: false });
  const r = await ask(alice, 'PREKEY_PUBLISH', { identity: 'someone-else', ...bundle() });
  assert.equal(r.code, 403);
  assert.match(r.message, /not registered/);
  // The largest bundle within the bounds is accepted.
  const big = bundle({ kyber_prekey: 'K'.repeat(4096), identity_key: 'I'.repeat(512),
    one_time_prekeys: Array.from({ length: 100 }, (_, i) => ({ id: i, key: 'O'.repeat(512) })) });
  assert.deepEqual(await ask(alice, 'PREKEY_PUBLISH', { identity: 'alice', ...big }), { ok: true, one_time_available: 100 });
});

for (const backend of ['file', 'redis']) {
  test(`a restart keeps the directories; a consumed one-time prekey stays consumed, even after kill -9 [${backend}]`, async (t) => {
    if (backend === 'redis' && !REDIS_URL) return t.skip('SIOMQ_TEST_REDIS_URL is not set');
    const { args, dataDir, store: storage } = storeFor(t, backend, tempDir);
    const store = { args, dataDir, settings: storage };
    const first = await startServer(t, store);
    const alice = await connectV4(first.url, { transports: ['websocket'] });
    const bob = await connectV4(first.url, { transports: ['websocket'] });
    await register(alice, 'alice');
    await register(bob, 'bob', true);
    assert.deepEqual(await ask(alice, 'KEY_PUBLISH', { identity: 'alice', key_id: 'k1', alg: 'x25519', public_key: 'S0VZLTE' }), { ok: true });
    assert.equal((await ask(alice, 'PREKEY_PUBLISH', { identity: 'alice', ...bundle() })).ok, true);
    assert.equal((await ask(bob, 'PREKEY_TAKE', { identity: 'alice' })).one_time_prekey_id, 1);
    // Answered means written: a crash right after loses nothing.
    await first.crash();
    alice.close();
    bob.close();

    const second = await startServer(t, store);
    const carol = await client(second, t);
    const keys = (await ask(carol, 'KEY_LOOKUP', { identity: 'alice' })).keys;
    assert.deepEqual(keys.map((k) => [k.key_id, k.alg, k.public_key]), [['k1', 'x25519', 'S0VZLTE']]);
    const b = await ask(carol, 'PREKEY_TAKE', { identity: 'alice' });
    assert.deepEqual([b.found, b.kyber_prekey, b.signed_prekey_sig, b.one_time_prekey_id, b.one_time_remaining],
      [true, 'S1lCRVItUFVC', 'U0lHTkVELVNJRw', 2, 1]);
    await second.stop();

    // A graceful restart as well: OTP-2's consumption was written before its answer.
    const third = await startServer(t, store);
    const dave = await client(third, t);
    assert.deepEqual([(await ask(dave, 'PREKEY_TAKE', { identity: 'alice' })).one_time_prekey_id,
      (await ask(dave, 'PREKEY_TAKE', { identity: 'alice' })).one_time_prekey_id], [3, null]);
  });
}

test('remove_realm purges the realm\'s directories (stored too); set_persistence moves them to the new store', async (t) => {
  const dataDir = tempDir(t);
  const server = await startServer(t, { settings: authSettings({ storage: 'file' }), dataDir });
  const admin = await client(server, t);
  const m = (body) => manage(admin, body, ADMIN);
  const a = await client(server, t, { token: 'tok-a' });
  const b = await client(server, t, { token: 'tok-b' });
  await register(a, 'alice');
  await register(b, 'bob');
  await ask(a, 'KEY_PUBLISH', { identity: 'alice', public_key: 'QQ' });
  await ask(a, 'PREKEY_PUBLISH', { identity: 'alice', ...bundle() });
  await ask(b, 'KEY_PUBLISH', { identity: 'bob', public_key: 'Qg' });
  const gone = once(a, 'disconnect');
  assert.equal((await m({ command: 'remove_realm', realm: 'realm-a' })).ok, true);
  await gone;
  // A realm that only has directory entries is still a realm to remove.
  const lone = await client(server, t, { token: 'tok-b' });
  assert.equal((await m({ command: 'add_realm', realm: 'realm-a', required: false })).ok, true);
  const a2 = await client(server, t, { realm: 'realm-a', role: 'both' });
  assert.deepEqual(await ask(a2, 'KEY_LOOKUP', { identity: 'alice' }), { keys: [] });
  assert.deepEqual(await ask(a2, 'PREKEY_TAKE', { identity: 'alice' }), { ok: true, found: false });
  assert.equal((await ask(lone, 'KEY_LOOKUP', { identity: 'bob' })).keys.length, 1);

  // set_persistence to a fresh data directory: realm-b's key goes along; a restart there has it.
  const target = tempDir(t);
  assert.equal((await m({ command: 'set_persistence', storage: 'file', path: target })).ok, true);
  await server.waitForLog(/store: file -> file/);
  assert.deepEqual(await ask(b, 'KEY_PUBLISH', { identity: 'bob', key_id: 'after', public_key: 'QWZ0ZXI' }), { ok: true });
  await server.stop();
  const moved = await startServer(t, { settings: authSettings(), dataDir: target, args: ['--storage', 'file'] });
  const c = await client(moved, t, { token: 'tok-b' });
  assert.deepEqual((await ask(c, 'KEY_LOOKUP', { identity: 'bob' })).keys.map((k) => k.key_id), ['default', 'after']);
  const ca = await client(moved, t, { token: 'tok-a' });
  assert.deepEqual(await ask(ca, 'KEY_LOOKUP', { identity: 'alice' }), { keys: [] });
  // And the old directory, restarted, no longer has realm-a's entries either.
  await moved.stop();
  const old = await startServer(t, { settings: authSettings(), dataDir, args: ['--storage', 'file'] });
  const o = await client(old, t, { token: 'tok-a' });
  assert.deepEqual(await ask(o, 'KEY_LOOKUP', { identity: 'alice' }), { keys: [] });
  assert.deepEqual(await ask(o, 'PREKEY_TAKE', { identity: 'alice' }), { ok: true, found: false });
});

test('sealed sender and push answer 501', async (t) => {
  const server = await startServer(t, {});
  const s = await client(server, t);
  await register(s, 'me');
  for (const event of ['SEALED_CERT_REQUEST', 'SEALED_UAK_SET', 'SEALED_DELIVER', 'SEALED_SUBSCRIBE', 'PUSH_REGISTER', 'PUSH_UNREGISTER']) {
    const r = await ask(s, event, { identity: 'me', to: { realm: 'default', identity: 'x' }, blob: 'QQ' });
    assert.equal(r.ok, false, event);
    assert.equal(r.code, 501, event);
    assert.match(r.message, /not available/);
  }
});

test('a realm with e2ee: required refuses a PRODUCE without enc (ERROR -6, nothing delivered); with enc it is relayed', async (t) => {
  const server = await startServer(t, { settings: authSettings() });
  const producer = await client(server, t, { realm: 'sealed', role: 'both' });
  const consumer = await client(server, t, { realm: 'sealed', role: 'both' });
  await register(producer, 'op', true);
  await register(consumer, 'dev');
  const got = [];
  consumer.on('CONSUME-op-cmd', (m) => got.push(m));
  consumer.emit('SUBSCRIBE', { event: 'cmd', producer: 'op', consumer: 'dev' });
  await emitAck(consumer, 'PING', {});
  for (const extra of [{}, { enc: null }]) {
    const error = once(producer, 'ERROR');
    producer.emit('PRODUCE', { event: 'cmd', from: 'op', message: { hello: 'world' }, ...extra });
    const [e] = await error;
    assert.equal(e.code, -6);
    assert.match(e.message, /requires end-to-end encrypted/);
  }
  const enc = { v: 1, alg: 'ecdh-es-p256-a256gcm', epk: 'RVBL', iv: 'SVY', kid: 'k1' };
  producer.emit('PRODUCE', { event: 'cmd', from: 'op', message: 'Q0lQSEVS', enc, to: 'dev' });
  await emitAck(producer, 'PING', {});
  await delay(200);
  assert.deepEqual(got, [{ event: 'cmd', message: 'Q0lQSEVS', from: 'op', enc, to: 'dev' }]);
});
