// HTTP publish (tyo-mq §9): POST /pub/:realm/:event and /pub/:realm?event=, POST /sub-ticket/:realm,
// the 404s while disabled, every refusal code, and that a refused request changes nothing.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { startServer, delay } = require('./lib/server');
const { connectV4, waitFor } = require('./lib/clients');
const { authenticate } = require('./lib/tyo_auth');
const { request, bearer } = require('./lib/http_pub');

const TOKENS = [
  { token: 'prod-shop', realm: 'shop', role: 'producer' },
  { token: 'cons-shop', realm: 'shop', role: 'consumer' },
  { token: 'prod-other', realm: 'other', role: 'producer' },
  { token: 'prod-sealed', realm: 'sealed', role: 'producer' },
];
const SETTINGS = {
  http_publish: { enabled: true },
  auth: { enabled: true, tokens: TOKENS, realms: { shop: {}, other: {}, sealed: { e2ee: 'required' } } },
};

// A socket.io consumer in `realm` subscribed to `event` from any producer; returns its deliveries.
async function subscriber(t, server, token, event) {
  const s = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => s.close());
  await authenticate(s, { token });
  s.emit('CONSUMER', { name: 'c1' });
  const got = [];
  s.on(`CONSUME-tyo-mq-all-${event.toLowerCase()}`, (m) => got.push(m));
  s.emit('SUBSCRIBE', { event, producer: 'TYO-MQ-ALL', consumer: 'c1' });
  await s.timeout(5000).emitWithAck('PING', {});
  return { socket: s, got };
}

const pub = (server, path, token, body, type = 'application/json') =>
  request(server.port, 'POST', path, { headers: { ...bearer(token), 'content-type': type }, body });

test('disabled (the default): /pub, /sub and /sub-ticket answer 404 JSON', async (t) => {
  const server = await startServer(t, { settings: {} });
  for (const [method, path] of [['POST', '/pub/r/e'], ['GET', '/sub/r/e'], ['POST', '/sub-ticket/r'], ['POST', '/pub']]) {
    const r = await request(server.port, method, path);
    assert.equal(r.status, 404, path);
    assert.equal(r.json.ok, false);
    assert.equal(r.json.code, 404);
  }
  await server.stop();
});

test('TYO_MQ_HTTP_PUBLISH_ENABLED=1 enables it; with auth off no token is needed; a socket.io subscriber receives it', async (t) => {
  const server = await startServer(t, { settings: {}, env: { TYO_MQ_HTTP_PUBLISH_ENABLED: '1' } });
  const c = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => c.close());
  c.emit('CONSUMER', { name: 'c1' });
  const got = [];
  c.on('CONSUME-tyo-mq-all-hello', (m) => got.push(m));
  c.emit('SUBSCRIBE', { event: 'hello', producer: 'TYO-MQ-ALL', consumer: 'c1' });
  await c.timeout(5000).emitWithAck('PING', {});
  const r = await pub(server, '/pub/default/hello', null, 'hi there', 'text/plain');
  assert.equal(r.status, 202, r.body);
  await waitFor(() => got.length === 1);
  assert.equal(got[0].message, 'hi there');
  assert.equal(got[0].from, 'http:' + crypto.createHash('sha256').update('').digest('hex').slice(0, 8));
  await server.stop();
});

test('POST /pub: 202 {ok, msg_id}; JSON by content type, else a string; producer http:<sha256[0..8]>; ?event=', async (t) => {
  const server = await startServer(t, { settings: SETTINGS });
  const { got } = await subscriber(t, server, 'cons-shop', 'Orders');
  let r = await pub(server, '/pub/shop/Orders', 'prod-shop', '{"id":7,"items":["a"]}', 'application/json; charset=utf-8');
  assert.equal(r.status, 202, r.body);
  assert.equal(r.json.ok, true);
  assert.match(r.json.msg_id, /^m-[0-9a-f]{24}$/);
  r = await pub(server, '/pub/shop?event=Orders', 'prod-shop', '{"not":"parsed"}', 'text/plain');
  assert.equal(r.status, 202, r.body);
  await waitFor(() => got.length === 2);
  const producer = 'http:' + crypto.createHash('sha256').update('prod-shop').digest('hex').slice(0, 8);
  assert.deepEqual(got[0], { event: 'Orders', message: { id: 7, items: ['a'] }, from: producer,
    content_type: 'application/json; charset=utf-8' });
  assert.equal(got[1].message, '{"not":"parsed"}');
  assert.equal(got[1].content_type, 'text/plain');
  await server.stop();
});

test('POST /pub refusals: 401, 403 (realm, role, E2EE), 405 with allow, 400 names and JSON, 413 both caps; none publishes', async (t) => {
  const server = await startServer(t, { settings: SETTINGS });
  const { got } = await subscriber(t, server, 'cons-shop', 'ev');
  const cases = [
    [await pub(server, '/pub/shop/ev', null, '1'), 401],
    [await pub(server, '/pub/shop/ev', 'nope', '1'), 401],
    [await request(server.port, 'POST', '/pub/shop/ev', { headers: { authorization: 'Basic abc' }, body: '1' }), 401],
    [await pub(server, '/pub/shop/ev', 'prod-other', '1'), 403],
    [await pub(server, '/pub/shop/ev', 'cons-shop', '1'), 403],
    [await pub(server, '/pub/sealed/ev', 'prod-sealed', '1'), 403],
    [await pub(server, '/pub/shop/__proto__', 'prod-shop', '1'), 400],
    [await pub(server, '/pub/constructor/ev', 'prod-shop', '1'), 400],
    [await pub(server, '/pub/shop?event=prototype', 'prod-shop', '1'), 400],
    [await pub(server, '/pub/shop', 'prod-shop', '1'), 400],
    [await pub(server, '/pub/shop/ev', 'prod-shop', '{bad json'), 400],
    [await pub(server, '/pub/shop/ev?broadcast=nope', 'prod-shop', '1'), 400],
    [await pub(server, '/pub/shop/%zz', 'prod-shop', '1'), 400],
    [await pub(server, '/pub/shop/ev', 'prod-shop', 'x'.repeat(64 * 1024 + 1), 'text/plain'), 413],
    [await pub(server, '/pub/shop/ev', 'prod-shop', 'x'.repeat(2 * 1024 * 1024), 'text/plain'), 413],
  ];
  for (const [r, status] of cases) {
    assert.equal(r.status, status, r.body);
    assert.equal(r.json.ok, false, r.body);
    assert.equal(r.json.code, status);
  }
  const get = await request(server.port, 'GET', '/pub/shop/ev', { headers: bearer('prod-shop') });
  assert.equal(get.status, 405);
  assert.equal(get.headers.allow, 'POST');
  // Exactly 64 KiB passes.
  const ok = await pub(server, '/pub/shop/ev', 'prod-shop', 'y'.repeat(64 * 1024), 'text/plain');
  assert.equal(ok.status, 202, ok.body);
  await waitFor(() => got.length === 1);
  await delay(100);
  assert.equal(got.length, 1, 'only the accepted publish was delivered');
  assert.equal(got[0].message.length, 64 * 1024);
  await server.stop();
});

test('POST /pub is rate-limited per token (429), and the E2EE realm accepts nothing without enc', async (t) => {
  const server = await startServer(t, { settings: { ...SETTINGS, limits: { messages_per_second: 1, message_burst: 2 } } });
  const codes = [];
  for (let i = 0; i < 4; i++) codes.push((await pub(server, '/pub/shop/ev', 'prod-shop', String(i))).status);
  assert.deepEqual(codes, [202, 202, 429, 429]);
  // Another token has its own bucket.
  assert.equal((await pub(server, '/pub/other/ev', 'prod-other', '1')).status, 202);
  await server.stop();
});

test('POST /pub guaranteed=1 is stored for an offline subscriber and replayed; broadcast=realm reaches the realm', async (t) => {
  const server = await startServer(t, { settings: SETTINGS });
  const s = await connectV4(server.url, { transports: ['websocket'] });
  await authenticate(s, { token: 'cons-shop' });
  s.emit('CONSUMER', { name: 'c2', id: 'c2', consumer_id: 'c2' });
  s.emit('SUBSCRIBE', { event: 'g', producer: 'TYO-MQ-ALL', consumer: 'c2', consumer_id: 'c2' });
  await s.timeout(5000).emitWithAck('PING', {});
  s.close();
  await delay(200);
  assert.equal((await pub(server, '/pub/shop/g?guaranteed=1', 'prod-shop', '"kept"')).status, 202);
  assert.equal((await pub(server, '/pub/shop/g', 'prod-shop', '"dropped"')).status, 202);
  const s2 = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => s2.close());
  await authenticate(s2, { token: 'cons-shop' });
  const got = [];
  s2.on('CONSUME-tyo-mq-all-g', (m) => got.push(m));
  s2.on('CONSUME-b', (m) => got.push(m));
  s2.emit('CONSUMER', { name: 'c2', id: 'c2', consumer_id: 'c2' });
  s2.emit('SUBSCRIBE', { event: 'g', producer: 'TYO-MQ-ALL', consumer: 'c2', consumer_id: 'c2' });
  await waitFor(() => got.length === 1);
  assert.equal(got[0].message, 'kept');
  assert.equal((await pub(server, '/pub/shop/b?broadcast=realm', 'prod-shop', '"all"')).status, 202);
  await waitFor(() => got.length === 2);
  assert.equal(got[1].message, 'all');
  await server.stop();
});

test('POST /sub-ticket: 48 hex for a consumer token, 60 s; 401 / 403 / 405 otherwise', async (t) => {
  const server = await startServer(t, { settings: SETTINGS });
  const r = await request(server.port, 'POST', '/sub-ticket/shop', { headers: bearer('cons-shop') });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json.ok, true);
  assert.match(r.json.ticket, /^[0-9a-f]{48}$/);
  assert.equal(r.json.expires_in, 60);
  assert.equal((await request(server.port, 'POST', '/sub-ticket/shop')).status, 401);
  assert.equal((await request(server.port, 'POST', '/sub-ticket/shop', { headers: bearer('cons-shop-x') })).status, 401);
  assert.equal((await request(server.port, 'POST', '/sub-ticket/other', { headers: bearer('cons-shop') })).status, 403);
  assert.equal((await request(server.port, 'POST', '/sub-ticket/shop', { headers: bearer('prod-shop') })).status, 403);
  const get = await request(server.port, 'GET', '/sub-ticket/shop', { headers: bearer('cons-shop') });
  assert.equal(get.status, 405);
  assert.equal(get.headers.allow, 'POST');
  await server.stop();
});

// Regression: the server answered 413 and closed with the rest of the body unread, so the kernel
// reset the connection and a client still writing got EPIPE instead of the answer (seen in CI, through
// Node's http client). It now stops sending (FIN), drops what still arrives, and closes when the client
// does. The client here keeps writing after the answer and the FIN (allowHalfOpen), as one that does
// not read while it sends would.
test('a 413 before the body is read: the client may go on writing, then reads the answer; no reset', async (t) => {
  const server = await startServer(t, { settings: SETTINGS });
  const net = require('node:net');
  const sock = net.connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
  t.after(() => sock.destroy());
  await new Promise((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
  const errors = [];
  sock.on('error', (e) => errors.push(e.code));
  const wrote = (e) => { if (e) errors.push(e.code); };
  let answer = '';
  sock.on('data', (d) => { answer += d.toString('latin1'); });
  const closed = new Promise((resolve) => sock.once('close', resolve));
  sock.write(`POST /pub/shop/ev HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer prod-shop\r\n` +
    `Content-Type: text/plain\r\nContent-Length: ${3 * 1024 * 1024}\r\n\r\n`, wrote);
  sock.write(Buffer.alloc(256 * 1024, 0x78), wrote);
  await waitFor(() => answer.includes('"code":413'));
  await delay(200);  // the server has answered and (before the fix) closed
  for (let i = 0; i < 11; i++) sock.write(Buffer.alloc(256 * 1024, 0x78), wrote);
  sock.end();
  await closed;
  assert.deepEqual(errors, []);
  assert.match(answer, /^HTTP\/1\.1 413 /);
  await server.stop();
});
