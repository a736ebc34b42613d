// The read-only HTTP API of tyo-mq §9 (first table) on the server's own port, driven with Node's `http`
// module: /health and /healthz, /api/metrics (Prometheus text, the reference's names and labels, bounded
// label sets), /api/stats, /api/realms/{realm}/dlq and POST /api/realms with management tokens — every
// route, its codes and exact JSON shapes, and that refused requests change nothing.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const { startServer, runServerOnce, writeSettings, delay } = require('./lib/server');
const { connectV4, waitFor, TIME_SCALE } = require('./lib/clients');

const ADMIN = 'http-api-admin-token';
const MGMT = 'http-api-mgmt-token';

// One HTTP request; resolves with { status, headers, body } (body as text). `body` may be an object (sent
// as JSON) or a string.
function request(server, method, path, { headers = {}, body } = {}) {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path, agent: false, headers: {
      ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
      ...headers,
    } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.setTimeout(10000 * TIME_SCALE, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
const get = (server, path, headers) => request(server, 'GET', path, { headers });
const bearer = (token) => ({ authorization: `Bearer ${token}` });
const json = (res) => {
  assert.match(res.headers['content-type'], /^application\/json/);
  return JSON.parse(res.body);
};

async function connect(t, server) {
  const socket = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => socket.close());
  return socket;
}

async function settle(...sockets) {
  await Promise.all(sockets.map((s) => s.timeout(5000 * TIME_SCALE).emitWithAck('PING', {})));
  await delay(50);
}

// The samples of a Prometheus text exposition: [{ name, labels: {k: v}, labelOrder: [k…], value }]. Every
// line must be a comment or a well-formed sample.
function samples(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `malformed sample line: ${line}`);
    const labels = {};
    const labelOrder = [];
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
      let l;
      let seen = 0;
      while ((l = re.exec(m[3]))) {
        labels[l[1]] = l[2];
        labelOrder.push(l[1]);
        seen += l[0].length;
      }
      assert.equal(seen, m[3].length, `malformed labels: ${line}`);
    }
    out.push({ name: m[1], labels, labelOrder, value: Number(m[4]) });
  }
  return out;
}
const find = (all, name, labels = {}) =>
  all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

const AUTH = { enabled: true, tokens: [{ token: ADMIN, realm: '*', role: 'admin' }], realms: { default: { required: false } } };

// ---------------------------------------------------------------------------------------------
// Off by default; health

test('without http_api nothing is served: every path gets the bare 403', async (t) => {
  const server = await startServer(t, { settings: {} });
  for (const path of ['/health', '/healthz', '/api/metrics', '/api/stats', '/api/realms/default/dlq']) {
    const res = await get(server, path);
    assert.equal(res.status, 403, path);
    assert.equal(res.body, '');
  }
  const post = await request(server, 'POST', '/api/realms', { body: { realm: 'x', manager_key: 'k' } });
  assert.equal(post.status, 403);
});

test('/health and /healthz: 200 {status, version, uptime_seconds, node_id:null} without a token; 405 for other methods', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true }, auth: AUTH } });
  for (const path of ['/health', '/healthz', '/health?probe=1']) {
    const res = await get(server, path);
    assert.equal(res.status, 200, path);
    const body = json(res);
    assert.deepEqual(Object.keys(body), ['status', 'version', 'uptime_seconds', 'node_id']);
    assert.equal(body.status, 'ok');
    assert.match(body.version, /^\d+\.\d+\.\d+/);
    assert.ok(Number.isInteger(body.uptime_seconds) && body.uptime_seconds >= 0);
    assert.equal(body.node_id, null);
  }
  for (const method of ['POST', 'DELETE', 'HEAD']) {
    const res = await request(server, method, '/health');
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.allow, 'GET');
    if (method !== 'HEAD') assert.deepEqual(json(res), { ok: false, code: 405, message: 'method not allowed' });
  }
  // Paths the API does not have are not claimed.
  for (const path of ['/api', '/api/', '/api/nothing', '/health/x', '/api/realms/default', '/api/realms//dlq']) {
    assert.equal((await get(server, path)).status, 403, path);
  }
});

test('each flag switches its routes off; the settings are read live (SIGHUP)', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true, health: false, stats: false, metrics: false } } });
  for (const path of ['/health', '/healthz', '/api/metrics', '/api/stats', '/api/realms/default/dlq'])
    assert.equal((await get(server, path)).status, 403, path);
  writeSettings(server.dir, { http_api: { enabled: true } });
  server.kill('SIGHUP');
  await waitFor(async () => (await get(server, '/health')).status === 200, 5000, 'the reload');
  assert.equal((await get(server, '/api/stats')).status, 200);
  writeSettings(server.dir, { http_api: { enabled: false } });
  server.kill('SIGHUP');
  await waitFor(async () => (await get(server, '/health')).status === 403, 5000, 'the reload');
});

test('a malformed http_api block stops the start-up (strict types and keys)', () => {
  for (const http_api of [{ enabled: 'yes' }, { enabled: true, metrics_auth: 0 }, { enabled: true, metricsauth: false }, true]) {
    const r = runServerOnce({ settings: { http_api } });
    assert.equal(r.code, 1, JSON.stringify(http_api));
    assert.match(r.output, /http_api/);
  }
});

// ---------------------------------------------------------------------------------------------
// Admin bearer auth

test('with auth on, metrics, stats and dlq need an admin token (sha256 compare); health does not', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true }, auth: {
    ...AUTH, tokens: [...AUTH.tokens, { token: 'realm-token', realm: 'r1', role: 'both' }],
    management_tokens: [{ token: MGMT, realm_prefix: 'apps:' }] } } });
  const DENIED = { ok: false, code: 401, message: 'Bearer admin token required' };
  for (const path of ['/api/metrics', '/api/stats', '/api/realms/default/dlq']) {
    for (const headers of [{}, bearer('wrong'), bearer('realm-token'), bearer(MGMT), { authorization: ADMIN },
      { authorization: `Basic ${ADMIN}` }, { authorization: 'Bearer ' }, bearer(`${ADMIN}x`)]) {
      const res = await get(server, path, headers);
      assert.equal(res.status, 401, `${path} ${JSON.stringify(headers)}`);
      assert.deepEqual(json(res), DENIED);
    }
    for (const headers of [bearer(ADMIN), { authorization: `bearer   ${ADMIN}  ` }, { authorization: `BEARER\t${ADMIN}` }])
      assert.equal((await get(server, path, headers)).status, 200, `${path} ${JSON.stringify(headers)}`);
  }
  assert.equal((await get(server, '/health')).status, 200);
});

test('metrics_auth:false opens /api/metrics only', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true, metrics_auth: false }, auth: AUTH } });
  assert.equal((await get(server, '/api/metrics')).status, 200);
  assert.equal((await get(server, '/api/stats')).status, 401);
});

// ---------------------------------------------------------------------------------------------
// Metrics

test('metrics: Prometheus text with the reference names and sorted labels; a series appears at its first increment', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true } } });
  const before = await get(server, '/api/metrics');
  assert.equal(before.status, 200);
  assert.equal(before.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  let all = samples(before.body);
  for (const name of ['tyo_mq_messages_produced_total', 'tyo_mq_messages_delivered_total', 'tyo_mq_messages_queued_total',
    'tyo_mq_messages_dlq_total', 'tyo_mq_ack_timeout_total', 'tyo_mq_rate_limited_total', 'tyo_mq_sse_connections_total',
    'tyo_mq_connections_total']) {
    assert.equal(find(all, name).length, 0, `${name} before any increment`);
    assert.doesNotMatch(before.body, new RegExp(`# TYPE ${name} `), `${name}'s TYPE line before any increment`);
  }
  assert.equal(find(all, 'tyo_mq_connections_current')[0].value, 0);
  assert.match(before.body, /# TYPE tyo_mq_connections_current gauge/);
  for (const name of ['siomq_deliveries_total', 'siomq_messages_stored_total', 'siomq_messages_acked_total',
    'siomq_messages_redelivered_total', 'siomq_messages_dead_lettered_total', 'siomq_slow_consumers_total',
    'siomq_messages_queued', 'siomq_messages_in_flight', 'siomq_dead_letters'])
    assert.equal(find(all, name).length, 1, name);
  assert.deepEqual(find(all, 'siomq_worker_sessions').map((s) => s.labels.worker).sort(), ['0', '1']);

  const p = await connect(t, server);
  const c = await connect(t, server);
  const got = [];
  c.on('CONSUME-p-e', (m) => got.push(m));
  c.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'c' });
  await settle(c);
  p.emit('PRODUCE', { event: 'e', from: 'p', message: 1 });
  p.emit('PRODUCE', { event: 'e', from: 'p', message: 2 });
  p.emit('PRODUCE', { event: 'other "quoted"\\', from: 'p', message: 3 });
  await waitFor(() => got.length === 2, 5000, 'the deliveries');
  await settle(p);

  const after = await get(server, '/api/metrics');
  all = samples(after.body);
  for (const s of all) assert.deepEqual(s.labelOrder, [...s.labelOrder].sort(), `labels sorted: ${JSON.stringify(s)}`);
  assert.deepEqual(find(all, 'tyo_mq_messages_produced_total', { realm: 'default', event: 'e' }).map((s) => s.value), [2]);
  assert.deepEqual(find(all, 'tyo_mq_messages_produced_total', { event: 'other \\"quoted\\"\\\\' }).map((s) => s.value), [1]);
  assert.deepEqual(find(all, 'tyo_mq_messages_delivered_total', { realm: 'default', event: 'p-e' }).map((s) => s.value), [2]);
  assert.equal(find(all, 'tyo_mq_messages_delivered_total').length, 1);
  assert.ok(find(all, 'tyo_mq_connections_total')[0].value >= 2);
  assert.ok(find(all, 'tyo_mq_connections_current')[0].value >= 2);
  assert.ok(find(all, 'siomq_deliveries_total')[0].value >= 2);
  assert.ok(find(all, 'siomq_worker_sessions').reduce((n, s) => n + s.value, 0) >= 2);
  assert.equal(find(all, 'tyo_mq_messages_queued_total').length, 0, 'nothing stored');
  // The server's own latency: each delivery and answer written over the WebSockets, from its read.
  const written = find(all, 'siomq_read_to_write_seconds_count')[0].value;
  assert.ok(written >= 2, `the two deliveries at least: ${written}`);
  const buckets = find(all, 'siomq_read_to_write_seconds_bucket').map((s) => s.value);
  assert.ok(buckets.length > 10 && buckets.every((n, i) => i === 0 || n >= buckets[i - 1]), 'cumulative buckets');
  assert.equal(buckets[buckets.length - 1], written, 'the +Inf bucket holds every frame');
  assert.ok(find(all, 'siomq_read_to_write_seconds_sum')[0].value > 0);
});

test('metrics: client-chosen label values are bounded: past 1000 series per family they count as __other__', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true } } });
  const p = await connect(t, server);
  for (let i = 0; i < 1010; i++) p.emit('PRODUCE', { event: `ev-${i}`, from: 'p', message: i });
  p.emit('PRODUCE', { event: 'x'.repeat(300), from: 'p', message: 'long' });
  await settle(p);
  const all = samples((await get(server, '/api/metrics')).body);
  const produced = find(all, 'tyo_mq_messages_produced_total');
  assert.equal(produced.length, 1001, '1000 series and __other__');
  assert.deepEqual(find(all, 'tyo_mq_messages_produced_total', { event: '__other__', realm: '__other__' }).map((s) => s.value), [11]);
  assert.equal(produced.reduce((n, s) => n + s.value, 0), 1011);
});

test('metrics: stored copies, ACK timeouts and the DLQ per realm; rate-limit refusals by reason', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true }, limits: { messages_per_second: 1, message_burst: 3 } },
    args: ['--storage', 'memory'] });
  const p = await connect(t, server);
  const c = await connect(t, server);
  const got = [];
  c.on('CONSUME-p-e', (m) => got.push(m));
  c.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'c', consumer_id: 'c', durable: true, ack: true,
    ack_timeout: '100ms', retry: { max_attempts: 1 } });
  await settle(c);
  p.emit('PRODUCE', { event: 'e', from: 'p', message: 'poison' });
  await server.waitForLog(/dead-lettered \S+ for c in realm default/, 5000);
  for (let i = 0; i < 5; i++) p.emit('PRODUCE', { event: 'flood', from: 'p' });
  await delay(200);
  const all = samples((await get(server, '/api/metrics')).body);
  assert.deepEqual(find(all, 'tyo_mq_messages_queued_total').map((s) => [s.labels, s.value]), [[{ realm: 'default' }, 1]]);
  assert.deepEqual(find(all, 'tyo_mq_ack_timeout_total').map((s) => [s.labels, s.value]), [[{ realm: 'default' }, 1]]);
  assert.deepEqual(find(all, 'tyo_mq_messages_dlq_total').map((s) => [s.labels, s.value]), [[{ realm: 'default' }, 1]]);
  assert.deepEqual(find(all, 'tyo_mq_messages_delivered_total', { event: 'p-e' }).map((s) => s.value), [1]);
  assert.ok(find(all, 'tyo_mq_rate_limited_total', { reason: 'messages_per_second' })[0].value >= 2);
  assert.equal(find(all, 'siomq_messages_stored_total')[0].value, 1);
  assert.equal(find(all, 'siomq_messages_dead_lettered_total')[0].value, 1);
  assert.equal(find(all, 'siomq_dead_letters')[0].value, 1);
  assert.equal(find(all, 'siomq_messages_queued')[0].value, 0);
  assert.ok(find(all, 'siomq_store_write_seconds_count').length === 1);
});

// ---------------------------------------------------------------------------------------------
// Stats and the DLQ

test('/api/stats: the stats command\'s shape per realm', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true } } });
  const p = await connect(t, server);
  const c = await connect(t, server);
  p.emit('PRODUCER', { name: 'sp' });
  c.emit('CONSUMER', { name: 'sc' });
  c.emit('SUBSCRIBE', { event: 'e', producer: 'sp', consumer: 'sc' });
  await settle(p, c);
  const res = await get(server, '/api/stats');
  assert.equal(res.status, 200);
  const body = json(res);
  assert.deepEqual(Object.keys(body).sort(), ['connections_current', 'realms']);
  assert.equal(body.connections_current, 2);
  assert.deepEqual(body.realms.default, { producers: { total: 1, online: 1 }, consumers: { total: 1, online: 1 }, subscriptions: 1 });
  assert.equal((await request(server, 'POST', '/api/stats')).status, 405);
});

test('/api/realms/{realm}/dlq: the realm\'s dead letters, percent-decoded realm names, 400 on a bad escape', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true } }, args: ['--storage', 'memory'] });
  const p = await connect(t, server);
  const c = await connect(t, server);
  c.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'c', consumer_id: 'c', durable: true, ack: true,
    ack_timeout: '100ms', retry: { max_attempts: 1 } });
  await settle(c);
  p.emit('PRODUCE', { event: 'e', from: 'p', message: { n: 1 } });
  await server.waitForLog(/dead-lettered \S+ for c in realm default/, 5000);
  const res = await get(server, '/api/realms/default/dlq');
  assert.equal(res.status, 200);
  const body = json(res);
  assert.deepEqual(Object.keys(body), ['realm', 'entries']);
  assert.equal(body.realm, 'default');
  assert.equal(body.entries.length, 1);
  const e = body.entries[0];
  assert.deepEqual(Object.keys(e).sort(), ['consumer', 'created_at', 'dead_lettered_at', 'event', 'expires_at', 'id', 'message',
    'producer', 'realm', 'reason'].sort());
  assert.equal(e.realm, 'default');
  assert.equal(e.event, 'p-e');
  assert.equal(e.consumer, 'c');
  assert.equal(e.producer, 'p');
  assert.deepEqual(e.message, { event: 'e', message: { n: 1 }, from: 'p' });
  assert.equal(e.reason, 'ack timeout after 1 attempt(s)');
  assert.match(e.id, /^msg-/);
  assert.deepEqual(json(await get(server, '/api/realms/other/dlq')), { realm: 'other', entries: [] });
  assert.deepEqual(json(await get(server, '/api/realms/a%20b%2Fc/dlq')), { realm: 'a b/c', entries: [] });
  for (const path of ['/api/realms/%zz/dlq', '/api/realms/a%0Ab/dlq', '/api/realms/%/dlq']) {
    const bad = await get(server, path);
    assert.equal(bad.status, 400, path);
    assert.equal(json(bad).code, 400);
  }
  const post = await request(server, 'POST', '/api/realms/default/dlq');
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET');
});

// ---------------------------------------------------------------------------------------------
// POST /api/realms

const MGMT_AUTH = { ...AUTH, management_tokens: [{ token: MGMT, realm_prefix: 'apps:' }] };
const realmsOnDisk = (server) => JSON.parse(fs.readFileSync(server.settingsFile, 'utf8')).auth.realms || {};
const createRealm = (server, body, token = MGMT) => request(server, 'POST', '/api/realms', { headers: bearer(token), body });

test('POST /api/realms: 404 while auth is off or no management token is configured', async (t) => {
  const off = await startServer(t, { settings: { http_api: { enabled: true }, auth: { ...MGMT_AUTH, enabled: false } } });
  let res = await createRealm(off, { realm: 'apps:x', manager_key: 'k' });
  assert.equal(res.status, 404);
  assert.deepEqual(json(res), { ok: false, code: 404, message: 'not found' });
  const none = await startServer(t, { settings: { http_api: { enabled: true }, auth: AUTH } });
  res = await createRealm(none, { realm: 'apps:x', manager_key: 'k' }, ADMIN);
  assert.equal(res.status, 404);
  assert.deepEqual(realmsOnDisk(none), AUTH.realms);
});

test('POST /api/realms: creates under the prefix, then only rotates the key; written to the settings file', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true }, auth: MGMT_AUTH } });
  let res = await createRealm(server, { realm: 'apps:acme', manager_key: 'key-one', unknown: [1] });
  assert.equal(res.status, 200, res.body);
  assert.deepEqual(json(res), { ok: true, realm: 'apps:acme', created: true, manager_key_configured: true, ephemeral: false, expires_at: null });
  assert.deepEqual(realmsOnDisk(server)['apps:acme'], { required: true, manager_key: 'key-one' });
  res = await createRealm(server, { realm: 'apps:acme', manager_key: 'key-two', ephemeral: true, ttl: 60 });
  assert.equal(res.status, 200, res.body);
  assert.deepEqual(json(res), { ok: true, realm: 'apps:acme', created: false, manager_key_configured: true, ephemeral: false, expires_at: null });
  assert.deepEqual(realmsOnDisk(server)['apps:acme'], { required: true, manager_key: 'key-two' });
  // An ephemeral realm on request, with its ttl.
  const t0 = Date.now();
  res = await createRealm(server, { realm: 'apps:tmp', manager_key: 'k', ttl: '1h' });
  const body = json(res);
  assert.equal(body.ephemeral, true);
  assert.ok(body.expires_at >= t0 + 3600e3 - 1000 && body.expires_at <= Date.now() + 3600e3 + 1000, JSON.stringify(body));
  assert.equal(realmsOnDisk(server)['apps:tmp'].expires_at, body.expires_at);
  assert.equal((await get(server, '/api/realms')).status, 405);
  assert.equal((await get(server, '/api/realms')).headers.allow, 'POST');
});

test('POST /api/realms: 401, 400 and 403 change nothing', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true }, auth: {
    ...MGMT_AUTH, tokens: [...AUTH.tokens, { token: 'both-token', realm: 'apps:x', role: 'both' }] } } });
  const before = fs.readFileSync(server.settingsFile, 'utf8');
  const REQUIRED = { ok: false, code: 401, message: 'management token required' };
  for (const headers of [{}, bearer('nope'), bearer(ADMIN), bearer('both-token'), { authorization: MGMT }]) {
    const res = await request(server, 'POST', '/api/realms', { headers, body: { realm: 'apps:x', manager_key: 'k' } });
    assert.equal(res.status, 401, JSON.stringify(headers));
    assert.deepEqual(json(res), REQUIRED);
  }
  const bad = [
    [{ manager_key: 'k' }, /realm is required/],
    [{ realm: '', manager_key: 'k' }, /realm is required/],
    [{ realm: 5, manager_key: 'k' }, /realm is required/],
    [{ realm: 'apps:x' }, /manager_key is required/],
    [{ realm: 'apps:x', manager_key: '' }, /manager_key is required/],
    [{ realm: 'apps:x', manager_key: {} }, /manager_key is required/],
    [{ realm: 'apps:x', manager_key: 'k', ephemeral: 'yes' }, /ephemeral must be a boolean/],
    [{ realm: 'apps:x', manager_key: 'k', ttl: 'forever' }, /ttl must be a positive duration/],
    [{ realm: 'apps:x', manager_key: 'k', ttl: 0 }, /ttl must be a positive duration/],
    [{ realm: 'apps:x', manager_key: 'k', ttl: [] }, /ttl must be a positive duration/],
    ['not-json{', /valid JSON/],
    ['[1,2]', /JSON object/],
    ['', /valid JSON/],
    ['['.repeat(5000) + ']'.repeat(5000), /valid JSON/],
    [JSON.stringify({ realm: 'apps:big', manager_key: 'x'.repeat(70 * 1024) }), /too large/],
    [{ realm: 'apps:a\u0001b', manager_key: 'k' }, /control/],
  ];
  for (const [body, message] of bad) {
    const res = await createRealm(server, body);
    assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.body}`);
    const reply = json(res);
    assert.equal(reply.ok, false);
    assert.equal(reply.code, 400);
    assert.match(reply.message, message);
  }
  for (const realm of ['org:evil', 'apps:', 'apps', '*', 'default', 'APPS:x', 'xapps:y']) {
    const res = await createRealm(server, { realm, manager_key: 'k' });
    assert.equal(res.status, 403, realm);
    assert.deepEqual(json(res), { ok: false, code: 403, message: 'realm outside managed prefix' });
  }
  assert.equal(fs.readFileSync(server.settingsFile, 'utf8'), before, 'the settings file is untouched');
  const stats = json(await get(server, '/api/stats', bearer(ADMIN)));
  assert.deepEqual(Object.keys(stats.realms), [], 'no realm came into being');
});

test('POST /api/realms: ephemeral_only and max_ttl clamp what a management token creates', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true }, auth: {
    ...AUTH, management_tokens: [{ token: MGMT, realm_prefix: 'try:', ephemeral_only: true, max_ttl: '7d' }] } } });
  const day = 86400e3;
  let body = json(await createRealm(server, { realm: 'try:plain', manager_key: 'k1' }));
  assert.equal(body.ephemeral, true);
  assert.ok(body.expires_at > Date.now() + day - 5000 && body.expires_at <= Date.now() + day, JSON.stringify(body));
  body = json(await createRealm(server, { realm: 'try:sneaky', manager_key: 'k2', ephemeral: false }));
  assert.equal(body.ephemeral, true, 'ephemeral:false does not stick');
  body = json(await createRealm(server, { realm: 'try:greedy', manager_key: 'k3', ttl: '30d' }));
  assert.ok(body.expires_at <= Date.now() + 7 * day && body.expires_at > Date.now() + 7 * day - 5000, 'capped at max_ttl');
  body = json(await createRealm(server, { realm: 'try:modest', manager_key: 'k4', ttl: '1h' }));
  assert.ok(body.expires_at <= Date.now() + 3600e3 && body.expires_at > Date.now() + 3600e3 - 5000, 'a shorter ttl is kept');
  const disk = realmsOnDisk(server);
  for (const r of ['try:plain', 'try:sneaky', 'try:greedy', 'try:modest']) assert.equal(disk[r].ephemeral, true, r);
});

test('POST /api/realms: realms_per_hour_per_ip gives 429 (counted in the metrics) and creates nothing', async (t) => {
  const server = await startServer(t, { settings: { http_api: { enabled: true }, auth: MGMT_AUTH,
    limits: { enabled: true, realms_per_hour_per_ip: 2 } } });
  // Refused requests do not use the allowance.
  assert.equal((await createRealm(server, { realm: 'org:x', manager_key: 'k' })).status, 403);
  assert.equal((await createRealm(server, { realm: 'apps:x' })).status, 400);
  assert.equal((await createRealm(server, { realm: 'apps:one', manager_key: 'k' })).status, 200);
  assert.equal((await createRealm(server, { realm: 'apps:two', manager_key: 'k' })).status, 200);
  const res = await createRealm(server, { realm: 'apps:three', manager_key: 'k' });
  assert.equal(res.status, 429);
  const body = json(res);
  assert.deepEqual(body, { ok: false, code: 429, message: 'rate limited: realms_per_hour_per_ip', reason: 'realms_per_hour_per_ip',
    retry_after: body.retry_after });
  assert.ok(body.retry_after >= 1700 && body.retry_after <= 1800, `half an hour for one more: ${body.retry_after}`);
  assert.equal(res.headers['retry-after'], String(body.retry_after));
  assert.equal(realmsOnDisk(server)['apps:three'], undefined);
  const all = samples((await get(server, '/api/metrics', bearer(ADMIN))).body);
  assert.deepEqual(find(all, 'tyo_mq_rate_limited_total', { reason: 'realms_per_hour_per_ip' }).map((s) => s.value), [1]);
});
