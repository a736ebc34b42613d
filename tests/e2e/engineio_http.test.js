// Engine.IO over plain HTTP, driven with fetch: the handshake, error answers, CORS, long-poll rules.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { startServer, delay } = require('./lib/server');
const { connectV4, ping, waitFor, withTimeout } = require('./lib/clients');

const EIO = '/socket.io/?EIO=4&transport=polling';

async function handshake(server, headers = {}) {
  const res = await fetch(`${server.url}${EIO}`, { headers });
  assert.equal(res.status, 200);
  const body = await res.text();
  assert.equal(body[0], '0', `open packet: ${body}`);
  return { res, open: JSON.parse(body.slice(1)) };
}

// Whether the session behind `url` is gone. Probed with a POST of a noop packet, which a live session
// answers at once with "ok" (a GET would long-poll, and an aborted GET would disturb the session).
async function sessionGone(url) {
  const res = await fetch(url, { method: 'POST', body: '6' });
  const body = await res.text();
  if (res.status === 200) return false;
  assert.equal(res.status, 400, body);
  assert.deepEqual(JSON.parse(body), { code: 1, message: 'Session ID unknown' });
  return true;
}

async function expectError(res, status, code, message) {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') || '', /application\/json/);
  assert.deepEqual(await res.json(), { code, message });
}

test('handshake: open packet with the default heartbeat and maxPayload', async (t) => {
  const server = await startServer(t);
  const { res, open } = await handshake(server);
  assert.deepEqual(Object.keys(open).sort(), ['maxPayload', 'pingInterval', 'pingTimeout', 'sid', 'upgrades']);
  assert.match(open.sid, /^[A-Za-z0-9_-]{20}$/);
  assert.deepEqual(open.upgrades, ['websocket']);
  assert.equal(open.pingInterval, 5000);
  assert.equal(open.pingTimeout, 10000);
  assert.equal(open.maxPayload, 1048576);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  // Two handshakes, two sessions.
  const { open: other } = await handshake(server);
  assert.notEqual(other.sid, open.sid);
  await server.stop();
});

test('handshake: configured transport values are announced', async (t) => {
  const server = await startServer(t, {
    settings: { transport: { ping_interval: 1234, ping_timeout: 4321, max_payload: 100000 } },
  });
  const { open } = await handshake(server);
  assert.equal(open.pingInterval, 1234);
  assert.equal(open.pingTimeout, 4321);
  assert.equal(open.maxPayload, 100000);
  await server.stop();
});

test('polling session by hand: connect, PING with ack, close', async (t) => {
  const server = await startServer(t);
  const { open } = await handshake(server);
  const url = `${server.url}${EIO}&sid=${open.sid}`;
  let res = await fetch(url, { method: 'POST', body: '40', headers: { 'content-type': 'text/plain;charset=UTF-8' } });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'ok');
  res = await fetch(url);
  const connected = await res.text();
  assert.match(connected, /^40\{"sid":"[A-Za-z0-9_-]{20}"\}$/);
  assert.notEqual(JSON.parse(connected.slice(2)).sid, open.sid, 'socket id differs from the engine sid');
  // Two packets in one POST, separated by the record separator.
  res = await fetch(url, { method: 'POST', body: '42["PING",{"a":1}]\x1e421["PING",{"b":2}]' });
  assert.equal(res.status, 200);
  res = await fetch(url);
  const body = await res.text();
  assert.match(body, /^431\["\{.*\}"\]$/, `ack: ${body}`);
  const reply = JSON.parse(JSON.parse(body.slice(3))[0]);
  assert.equal(reply.b, 2);
  assert.equal(reply.pong, 'PONG');
  assert.equal(reply.a, undefined);
  // Client-side close.
  res = await fetch(url, { method: 'POST', body: '1' });
  assert.equal(res.status, 200);
  await waitFor(() => sessionGone(url), 5000, 'session to close');
  await expectError(await fetch(url), 400, 1, 'Session ID unknown');
  await server.stop();
});

test('errors: HTTP 400 with {code, message}', async (t) => {
  const server = await startServer(t);
  await expectError(await fetch(`${server.url}/socket.io/?EIO=4&transport=foo`), 400, 0, 'Transport unknown');
  await expectError(await fetch(`${server.url}/socket.io/?EIO=4`), 400, 0, 'Transport unknown');
  await expectError(await fetch(`${server.url}${EIO}&sid=nosuchsession1234567`), 400, 1, 'Session ID unknown');
  await expectError(await fetch(`${server.url}${EIO}`, { method: 'POST', body: '40' }), 400, 2, 'Bad handshake method');
  await expectError(await fetch(`${server.url}/socket.io/?EIO=5&transport=polling`), 400, 5,
    'Unsupported protocol version');
  await expectError(await fetch(`${server.url}/socket.io/?transport=polling`), 400, 5, 'Unsupported protocol version');
  // Errors carry CORS headers for the asking origin too.
  const res = await fetch(`${server.url}/socket.io/?EIO=4&transport=foo`, { headers: { origin: 'http://a.example' } });
  assert.equal(res.headers.get('access-control-allow-origin'), 'http://a.example');
  assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
  await expectError(res, 400, 0, 'Transport unknown');
  // The server still works after all that.
  await handshake(server);
  await server.stop();
});

test('a path that is not Socket.IO gets 403 with an empty body', async (t) => {
  const server = await startServer(t);
  for (const path of ['/nothing', '/', '/socket.io', '/socket.iox/?EIO=4&transport=polling', '/favicon.ico']) {
    const res = await fetch(`${server.url}${path}`);
    assert.equal(res.status, 403, path);
    assert.equal(await res.text(), '', path);
  }
  const res = await fetch(`${server.url}/nothing`, { method: 'POST', body: 'x' });
  assert.equal(res.status, 403);
  assert.equal(await res.text(), '');
  await server.stop();
});

test('a custom transport.path moves the endpoint', async (t) => {
  const server = await startServer(t, { settings: { transport: { path: '/mq' } } });
  assert.equal((await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`)).status, 403);
  const res = await fetch(`${server.url}/mq/?EIO=4&transport=polling`);
  assert.equal(res.status, 200);
  assert.match(await res.text(), /^0\{"sid"/);
  const socket = await connectV4(server.url, { path: '/mq', transports: ['websocket'] });
  t.after(() => socket.close());
  const { body } = await ping(socket, { via: 'mq' });
  assert.equal(body.via, 'mq');
  await server.stop();
});

test('CORS: the Origin is echoed with credentials; OPTIONS preflight is 204', async (t) => {
  const server = await startServer(t);
  const origin = 'http://client.example:8080';
  const { res } = await handshake(server, { origin });
  assert.equal(res.headers.get('access-control-allow-origin'), origin);
  assert.equal(res.headers.get('access-control-allow-credentials'), 'true');

  const pre = await fetch(`${server.url}${EIO}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), origin);
  assert.equal(pre.headers.get('access-control-allow-credentials'), 'true');
  assert.match(pre.headers.get('access-control-allow-methods') || '', /POST/);
  assert.match(pre.headers.get('access-control-allow-headers') || '', /content-type/i);
  assert.equal(await pre.text(), '');
  await server.stop();
});

test('a second concurrent GET on one session is refused and closes the session', async (t) => {
  const server = await startServer(t);
  const { open } = await handshake(server);
  const url = `${server.url}${EIO}&sid=${open.sid}`;
  const first = fetch(url).then(async (r) => ({ status: r.status, body: await r.text() }));
  await delay(300);  // the first GET is now pending on the server
  const second = await fetch(url);
  await expectError(second, 400, 3, 'Bad request');
  const r1 = await withTimeout(first, 5000, 'first GET answered');
  assert.equal(r1.status, 200);
  assert.equal(r1.body, '1', 'the pending GET gets a close packet');
  await waitFor(() => sessionGone(url), 5000, 'session gone');
  await expectError(await fetch(url), 400, 1, 'Session ID unknown');
  await server.stop();
});

test('a POST body larger than max_payload gets 413 and closes the session', async (t) => {
  const server = await startServer(t, { settings: { transport: { max_payload: 1000 } } });
  const { open } = await handshake(server);
  assert.equal(open.maxPayload, 1000);
  const url = `${server.url}${EIO}&sid=${open.sid}`;
  const res = await fetch(url, { method: 'POST', body: '4' + 'x'.repeat(5000) });
  assert.equal(res.status, 413);
  await res.arrayBuffer();
  await waitFor(() => sessionGone(url), 5000, 'session to close after 413');
  await expectError(await fetch(url), 400, 1, 'Session ID unknown');
  // A body within the limit is still accepted on a fresh session.
  const { open: o2 } = await handshake(server);
  const ok = await fetch(`${server.url}${EIO}&sid=${o2.sid}`, { method: 'POST', body: '40' });
  assert.equal(ok.status, 200);
  await server.stop();
});

test('a malformed polling payload gets 400 and closes the session', async (t) => {
  const server = await startServer(t);
  const { open } = await handshake(server);
  const url = `${server.url}${EIO}&sid=${open.sid}`;
  const res = await fetch(url, { method: 'POST', body: '' });
  assert.equal(res.status, 400);
  await res.arrayBuffer();
  await waitFor(() => sessionGone(url), 5000, 'session to close');
  await expectError(await fetch(url), 400, 1, 'Session ID unknown');
  await server.stop();
});

test('an HTTP header block larger than max_http_header is refused', async (t) => {
  const server = await startServer(t, { settings: { transport: { max_http_header: 2048 } } });
  const sock = net.connect(server.port, '127.0.0.1');
  sock.on('error', () => {});
  let got = '';
  sock.on('data', (d) => { got += d.toString(); });
  const closed = new Promise((resolve) => sock.on('close', resolve));
  sock.write(`GET ${EIO} HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(8000)}\r\n\r\n`);
  await withTimeout(closed, 5000, 'server to drop an oversized header');
  assert.doesNotMatch(got, /^HTTP\/1\.1 200/, 'not served');
  // A normal request still works.
  await handshake(server);
  await server.stop();
});

test('a server-side close over polling delivers the queued packets and a close packet on the next GET', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const { open } = await handshake(server);
  const url = `${server.url}${EIO}&sid=${open.sid}`;
  await fetch(url, { method: 'POST', body: '40/diagnostics,' }).then((r) => r.text());
  assert.match(await (await fetch(url)).text(), /^40\/diagnostics,\{"sid"/);
  // No GET is pending when the server closes the session.
  const post = await fetch(url, { method: 'POST', body: '42/diagnostics,["bye",true]' });
  assert.equal(post.status, 200);
  await post.text();
  await delay(200);
  const res = await fetch(url);
  const body = await res.text();
  assert.equal(res.status, 200, `next GET: ${res.status} ${body}`);
  assert.deepEqual(body.split('\x1e'), ['41/diagnostics,', '1']);
  await server.stop();
});

test('a client that aborts its pending long-poll GET closes the session', async (t) => {
  const server = await startServer(t);
  const { open } = await handshake(server);
  const url = `${server.url}${EIO}&sid=${open.sid}`;
  assert.equal((await fetch(url, { method: 'POST', body: '40' })).status, 200);
  assert.match(await (await fetch(url)).text(), /^40/);
  const abort = new AbortController();
  const pending = fetch(url, { signal: abort.signal }).catch((e) => e);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await sessionGone(url), false, 'the session is alive while the GET is pending');
  abort.abort();
  await pending;
  await waitFor(() => sessionGone(url), 5000, 'session to close after the aborted GET');
  await server.stop();
});
