// HTTP publish's Server-Sent Events (tyo-mq §9): GET /sub/:realm/:event with Bearer or ticket, the
// head and comments, frames, exact event matching, the stream caps, the slow-reader drop, and resume by
// Last-Event-ID / ?since= from the guaranteed history, exactly once across the replay boundary.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, tempDir, delay } = require('./lib/server');
const { connectV4, waitFor } = require('./lib/clients');
const { authenticate } = require('./lib/tyo_auth');
const { request, bearer, openSse } = require('./lib/http_pub');
const { storeFor } = require('./lib/redis');

const REDIS_URL = process.env.SIOMQ_TEST_REDIS_URL;

const TOKENS = [
  { token: 'prod-shop', realm: 'shop', role: 'producer' },
  { token: 'cons-shop', realm: 'shop', role: 'consumer' },
  { token: 'cons-other', realm: 'other', role: 'consumer' },
];
const settings = (extra = {}) => ({
  http_publish: { enabled: true, ...extra },
  auth: { enabled: true, tokens: TOKENS, realms: { shop: {}, other: {} } },
});
const pub = (server, path, body, token = 'prod-shop') =>
  request(server.port, 'POST', path, { headers: { ...bearer(token), 'content-type': 'application/json' }, body });

test('GET /sub: head, ": ok", frames of /pub and socket.io PRODUCE, exact event match, keep-alive comments', async (t) => {
  const server = await startServer(t, { settings: settings({ sse_keep_alive_ms: 300 }) });
  const s = await openSse(server.port, '/sub/shop/Orders', bearer('cons-shop'));
  t.after(() => s.close());
  assert.equal(s.status, 200);
  assert.equal(s.headers['content-type'], 'text/event-stream');
  assert.equal(s.headers['cache-control'], 'no-cache');
  assert.equal(s.headers.connection, 'keep-alive');
  assert.equal(s.headers['x-accel-buffering'], 'no');
  await waitFor(() => s.comments.includes('ok'));
  assert.ok(s.raw.startsWith(': ok\n\n'));
  const r = await pub(server, '/pub/shop/Orders', '{"n":1}');
  assert.equal(r.status, 202);
  await pub(server, '/pub/shop/orders', '{"n":"lowercase: not ours"}');
  const p = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => p.close());
  await authenticate(p, { token: 'prod-shop' });
  p.emit('PRODUCE', { event: 'Orders', from: 'sock', message: { n: 2 }, id: 'my-id-1', to: ['x'], enc: { v: 1 } });
  p.emit('PRODUCE', { event: 'Orders', from: 'sock2', message: 3 });
  await s.waitFrames(3);
  assert.deepEqual(s.frames[0], { id: r.json.msg_id, event: 'message',
    data: { event: 'Orders', data: { n: 1 }, producer: s.frames[0].data.producer, content_type: 'application/json' } });
  assert.match(s.frames[0].data.producer, /^http:[0-9a-f]{8}$/);
  assert.deepEqual(s.frames[1], { id: 'my-id-1', event: 'message',
    data: { event: 'Orders', data: { n: 2 }, producer: 'sock', enc: { v: 1 }, to: ['x'] } });
  assert.match(s.frames[2].id, /^m-[0-9a-f]{24}$/);
  assert.equal(s.frames[2].data.producer, 'sock2');
  await waitFor(() => s.comments.includes('keep-alive'), 3000, 'a keep-alive comment');
  await delay(100);
  assert.equal(s.frames.length, 3, 'the lowercase event was not delivered');
  await server.stop();
});

test('GET /sub auth: ticket (single use, realm-bound), ?token= 401, no token 401, other realm 403, producer 403, 405', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const ticket = (await request(server.port, 'POST', '/sub-ticket/shop', { headers: bearer('cons-shop') })).json.ticket;
  const other = (await request(server.port, 'POST', '/sub-ticket/shop', { headers: bearer('cons-shop') })).json.ticket;
  const s = await openSse(server.port, `/sub/shop/e?ticket=${ticket}`);
  t.after(() => s.close());
  assert.equal(s.status, 200);
  const again = await request(server.port, 'GET', `/sub/shop/e?ticket=${ticket}`);
  assert.equal(again.status, 401);
  const wrongRealm = await request(server.port, 'GET', `/sub/other/e?ticket=${other}`);
  assert.equal(wrongRealm.status, 401);
  assert.equal((await request(server.port, 'GET', `/sub/shop/e?ticket=${other}`)).status, 401, 'used up by the failed try');
  assert.equal((await request(server.port, 'GET', '/sub/shop/e?token=cons-shop')).status, 401);
  assert.equal((await request(server.port, 'GET', '/sub/shop/e')).status, 401);
  assert.equal((await request(server.port, 'GET', '/sub/shop/e', { headers: bearer('cons-other') })).status, 403);
  assert.equal((await request(server.port, 'GET', '/sub/shop/e', { headers: bearer('prod-shop') })).status, 403);
  assert.equal((await request(server.port, 'GET', '/sub/shop/__proto__', { headers: bearer('cons-shop') })).status, 400);
  const bad = await request(server.port, 'GET', '/sub/shop/e', { headers: { ...bearer('cons-shop'), 'last-event-id': 'x'.repeat(300) } });
  assert.equal(bad.status, 400);
  const post = await request(server.port, 'POST', '/sub/shop/e', { headers: bearer('cons-shop') });
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET');
  await server.stop();
});

test('stream caps: per realm 503 (checked first), per address 429; a closed stream frees its place', async (t) => {
  const server = await startServer(t, { settings: settings({ sse_streams_per_realm: 2, sse_streams_per_ip: 3 }) });
  const a = await openSse(server.port, '/sub/shop/e', bearer('cons-shop'));
  const b = await openSse(server.port, '/sub/shop/f', bearer('cons-shop'));
  const c = await request(server.port, 'GET', '/sub/shop/e', { headers: bearer('cons-shop') });
  assert.equal(c.status, 503, c.body);
  assert.equal(c.json.code, 503);
  const d = await openSse(server.port, '/sub/other/e', bearer('cons-other'));
  assert.equal(d.status, 200);
  const e = await request(server.port, 'GET', '/sub/other/e', { headers: bearer('cons-other') });
  assert.equal(e.status, 429, e.body);
  a.close();
  await delay(200);
  const f = await openSse(server.port, '/sub/shop/e', bearer('cons-shop'));
  t.after(() => { b.close(); d.close(); f.close(); });
  assert.equal(f.status, 200);
  await server.stop();
});

test('a reader that stops reading is dropped past its pending-output cap; the others keep receiving', async (t) => {
  // Big bodies, so that the kernel's socket buffers (tens of MiB on loopback) fill quickly.
  const server = await startServer(t, { settings: settings({ sse_max_pending_bytes: 2 * 1024 * 1024, max_body_bytes: 1000000 }) });
  const slow = await openSse(server.port, '/sub/shop/big', bearer('cons-shop'));
  const fast = await openSse(server.port, '/sub/shop/big', bearer('cons-shop'));
  t.after(() => { slow.close(); fast.close(); });
  slow.req.socket.pause();
  const body = JSON.stringify('z'.repeat(900000));
  const N = 45;  // 40 MB
  for (let i = 0; i < N; i++) assert.equal((await pub(server, '/pub/shop/big', body)).status, 202);
  await fast.waitFrames(N, 20000);
  slow.req.socket.resume();
  await Promise.race([slow.closed, delay(10000)]);
  assert.ok(slow.frames.length < N, `the slow reader got ${slow.frames.length} of ${N}`);
  assert.equal(fast.frames.length, N);
  await server.stop();
});

test('resume: Last-Event-ID and ?since= replay guaranteed history after the id, exactly once; unknown id replays all; cap comment', async (t) => {
  const server = await startServer(t, { settings: settings({ history_messages: 3 }) });
  const ids = [];
  for (let i = 1; i <= 2; i++) ids.push((await pub(server, `/pub/shop/h?guaranteed=1`, String(i))).json.msg_id);
  await pub(server, '/pub/shop/h', '"not guaranteed"');
  // Resume after the first: the second only, then live.
  const s = await openSse(server.port, '/sub/shop/h', { ...bearer('cons-shop'), 'last-event-id': ids[0] });
  t.after(() => s.close());
  await s.waitFrames(1);
  assert.deepEqual(s.frames.map((f) => f.id), [ids[1]]);
  const live = (await pub(server, '/pub/shop/h?guaranteed=1', '3')).json.msg_id;
  await s.waitFrames(2);
  await delay(100);
  assert.deepEqual(s.frames.map((f) => f.id), [ids[1], live], 'the live guaranteed message once');
  // ?since= an unknown id: the whole window (3 of them), no truncation comment yet.
  const w = await openSse(server.port, '/sub/shop/h?since=unknown', bearer('cons-shop'));
  t.after(() => w.close());
  await w.waitFrames(3);
  assert.deepEqual(w.frames.map((f) => f.data.data), [1, 2, 3]);
  assert.ok(!w.comments.some((c) => c.startsWith('catch-up truncated')));
  // Past the cap of 3 the oldest goes; an unknown id then says the replay was cut.
  await pub(server, '/pub/shop/h?guaranteed=1', '4');
  const x = await openSse(server.port, '/sub/shop/h?since=unknown', bearer('cons-shop'));
  t.after(() => x.close());
  await x.waitFrames(3);
  assert.deepEqual(x.frames.map((f) => f.data.data), [2, 3, 4]);
  assert.ok(x.comments.includes('catch-up truncated (replay capped)'));
  // Without an id nothing is replayed.
  const y = await openSse(server.port, '/sub/shop/h', bearer('cons-shop'));
  t.after(() => y.close());
  await delay(200);
  assert.equal(y.frames.length, 0);
  await server.stop();
});

for (const backend of ['file', 'redis']) {
  test(`resume after a restart (kill -9): the history is stored, the cut stays marked, seq goes on [${backend}]`, async (t) => {
    if (backend === 'redis' && !REDIS_URL) return t.skip('SIOMQ_TEST_REDIS_URL is not set');
    const { args, dataDir, store } = storeFor(t, backend, tempDir);
    const opts = { settings: { ...settings({ history_messages: 3 }), ...store }, args, dataDir };
    const first = await startServer(t, opts);
    const ids = [];
    for (let i = 1; i <= 3; i++) ids.push((await pub(first, '/pub/shop/h?guaranteed=1', String(i))).json.msg_id);
    // A socket.io PRODUCE with no subscriber at all: its confirm too means the history has it on disk.
    const p = await connectV4(first.url, { transports: ['websocket'] });
    await authenticate(p, { token: 'prod-shop' });
    const confirm = await p.timeout(5000).emitWithAck('PRODUCE', { event: 'h', from: 'sock', message: 4, id: 'sock-4', guaranteed: true });
    assert.equal(confirm.ok, true, JSON.stringify(confirm));
    ids.push('sock-4');
    p.close();
    await first.crash();

    const second = await startServer(t, opts);
    const s = await openSse(second.port, '/sub/shop/h', { ...bearer('cons-shop'), 'last-event-id': ids[2] });
    t.after(() => s.close());
    await s.waitFrames(1);
    assert.deepEqual(s.frames.map((f) => [f.id, f.data.data, f.data.producer]), [['sock-4', 4, 'sock']]);
    // The window is 2, 3, 4 (1 went past the cap before the crash): an unknown id says it was cut.
    const w = await openSse(second.port, '/sub/shop/h?since=unknown', bearer('cons-shop'));
    t.after(() => w.close());
    await w.waitFrames(3);
    assert.deepEqual(w.frames.map((f) => f.id), ids.slice(1));
    assert.ok(w.comments.includes('catch-up truncated (replay capped)'));
    // New messages follow the old ones in the same window, live and in the history.
    const next = (await pub(second, '/pub/shop/h?guaranteed=1', '5')).json.msg_id;
    await s.waitFrames(2);
    assert.equal(s.frames[1].id, next);
    await second.stop();
    const third = await startServer(t, opts);
    const x = await openSse(third.port, '/sub/shop/h', { ...bearer('cons-shop'), 'last-event-id': ids[3] });
    t.after(() => x.close());
    await x.waitFrames(1);
    await delay(100);
    assert.deepEqual(x.frames.map((f) => f.id), [next]);
    await third.stop();
  });
}

test('an SSE stream receives a guaranteed socket.io PRODUCE live; once closed its subscription is gone and nothing is stored for it', async (t) => {
  const server = await startServer(t, { settings: settings() });
  const s = await openSse(server.port, '/sub/shop/q', bearer('cons-shop'));
  t.after(() => s.close());
  const p = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => p.close());
  await authenticate(p, { token: 'prod-shop' });
  const ack = await p.timeout(5000).emitWithAck('PRODUCE', { event: 'q', from: 'x', message: 1, guaranteed: true });
  assert.deepEqual(ack, { ok: true, stored: 0 });
  await s.waitFrames(1);
  s.close();
  await delay(200);
  // After the stream closed, its subscription is gone: nothing is stored for it.
  const ack2 = await p.timeout(5000).emitWithAck('PRODUCE', { event: 'q', from: 'x', message: 2, guaranteed: true });
  assert.deepEqual(ack2, { ok: true, stored: 0 });
  await server.stop();
});

// The SSE streams are counted where the HTTP API shows them: tyo_mq_sse_connections_total{realm} from the
// first stream on, and the open streams among the realm's consumers in /api/stats.
test('SSE streams in /api/metrics (tyo_mq_sse_connections_total) and /api/stats (consumers, while open)', async (t) => {
  const ADMIN = 'admin-token';
  const server = await startServer(t, {
    settings: {
      http_publish: { enabled: true },
      http_api: { enabled: true, metrics: true, stats: true },
      auth: { enabled: true, tokens: [...TOKENS, { token: ADMIN, realm: '*', role: 'admin' }], realms: { shop: {}, other: {} } },
    },
  });
  const metrics = async () => (await request(server.port, 'GET', '/api/metrics', { headers: bearer(ADMIN) })).body;
  const consumers = async () => (await request(server.port, 'GET', '/api/stats', { headers: bearer(ADMIN) })).json.realms.shop?.consumers;
  assert.ok(!(await metrics()).includes('tyo_mq_sse_connections_total'), 'no series before the first stream');
  const a = await openSse(server.port, '/sub/shop/Orders', bearer('cons-shop'));
  const b = await openSse(server.port, '/sub/shop/Other', bearer('cons-shop'));
  await waitFor(() => a.comments.includes('ok') && b.comments.includes('ok'));
  assert.match(await metrics(), /^tyo_mq_sse_connections_total\{realm="shop"\} 2$/m);
  const open = await consumers();
  assert.deepEqual(open, { online: 2, total: 2 }, 'each open stream is one consumer');
  b.close();
  await waitFor(async () => (await consumers()).online === open.online - 1, 3000, 'a closed stream leaves the online consumers');
  a.close();
  assert.match(await metrics(), /^tyo_mq_sse_connections_total\{realm="shop"\} 2$/m, 'a total: closing does not lower it');
  // A closed stream's consumer name is forgotten at once, not left for idle eviction (opening and
  // closing streams in a loop would otherwise leave one name per stream).
  for (let i = 0; i < 20; i++) {
    const c = await openSse(server.port, '/sub/shop/Loop', bearer('cons-shop'));
    await waitFor(() => c.comments.includes('ok'));
    c.close();
  }
  await waitFor(async () => (await consumers()) === undefined || (await consumers()).total === 0, 3000,
    'no consumer names left behind');
  await server.stop();
});
