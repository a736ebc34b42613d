// The web console's server side without a browser: its port (pages, security headers, methods, paths that
// are not files), and the /console namespace's contract — who may sign in (the admin token, a realm
// manager's proof; nobody else, and not on the main port), what each sees (a manager its own realm only),
// the deltas (whole at first, then only what changed), `watch`, and the cap on sessions.
// The browser tests are console.test.js.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { startServer } = require('./lib/server');
const { io, connectV4, waitFor, emitAck, withTimeout, TIME_SCALE } = require('./lib/clients');
const { sign } = require('./lib/tyo_auth');

const ADMIN = 'console-api-admin-token';
const KEY = 'console-api-shop-key';
const SETTINGS = {
  auth: {
    enabled: true,
    tokens: [{ token: ADMIN, realm: '*', role: 'admin' }],
    realms: { shop: { manager_key: KEY }, other: { manager_key: 'other-key' }, lobby: { required: false } },
  },
  console: { enabled: true, port: 0 },
};

async function startConsole(t, settings = SETTINGS) {
  const srv = await startServer(t, { settings });
  const m = await srv.waitForLog(/console listening on [^\s]+:(\d+)/);
  return { srv, consolePort: Number(m[1]) };
}

// A /console socket: resolves with {socket, hello, deltas} once it has its hello and first delta, or
// rejects with the CONNECT_ERROR's message.
function openConsole(port, auth) {
  return withTimeout(new Promise((resolve, reject) => {
    const socket = io(`http://127.0.0.1:${port}/console`, { auth, transports: ['websocket'], reconnection: false, forceNew: true });
    const deltas = [];
    let hello = null;
    socket.on('connect_error', (e) => { socket.close(); reject(new Error(e.message)); });
    socket.on('hello', (h) => { hello = h; });
    socket.on('delta', (d) => {
      deltas.push(d);
      if (deltas.length === 1) resolve({ socket, hello, deltas });
    });
  }), 10000 * TIME_SCALE, 'console hello and first delta');
}

function managerAuth(realm, key) {
  return { realm, proof: sign('CONSOLE_CONNECT', { realm }, key) };
}

// The view as the page keeps it: every delta applied in order.
function viewOf(deltas) {
  const view = new Map();
  for (const d of deltas) {
    for (const [k, v] of Object.entries(d.set)) view.set(k, v);
    for (const k of d.del) view.delete(k);
  }
  return view;
}

test('the console port serves the embedded pages with the security headers, and nothing else', async (t) => {
  const { consolePort } = await startConsole(t);
  const base = `http://127.0.0.1:${consolePort}`;
  const root = await fetch(`${base}/`, { redirect: 'manual' });
  assert.equal(root.status, 302);
  assert.equal(root.headers.get('location'), '/console/');
  const page = await fetch(`${base}/console/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type'), /^text\/html/);
  const csp = page.headers.get('content-security-policy');
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  const html = await page.text();
  assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]+<\/script>|<style|\sstyle=|\son[a-z]+=/i, 'no inline script, style or handler');
  // The vendored libraries are there, with their types; an ETag answers 304.
  const lib = await fetch(`${base}/console/vendor/socket.io.esm.min.js`);
  assert.equal(lib.status, 200);
  assert.match(lib.headers.get('content-type'), /^text\/javascript/);
  const again = await fetch(`${base}/console/vendor/socket.io.esm.min.js`, { headers: { 'if-none-match': lib.headers.get('etag') } });
  assert.equal(again.status, 304);
  // No file is looked up: a path is a key of the embedded table or nothing (fetch resolves "..": 403 then).
  for (const p of ['/console/nope.js', '/console/../settings.json', '/console/%2e%2e/x', '/console/vendor/']) {
    assert.ok([403, 404].includes((await fetch(base + p)).status), p);
  }
  assert.equal((await fetch(`${base}/console/`, { method: 'POST', body: 'x' })).status, 405);
  // The HTTP API and HTTP publish are not on the console's port.
  assert.equal((await fetch(`${base}/api/stats`)).status, 403);
});

test('who may sign in: the admin token or a realm manager proof, on the console port only', async (t) => {
  const { srv, consolePort } = await startConsole(t);
  await assert.rejects(openConsole(consolePort, {}), /unauthorized/);
  await assert.rejects(openConsole(consolePort, { token: 'wrong' }), /unauthorized/);
  await assert.rejects(openConsole(consolePort, managerAuth('shop', 'wrong-key')), /unauthorized/);
  await assert.rejects(openConsole(consolePort, managerAuth('nokey', KEY)), /unauthorized/);
  // A proof is used once.
  const proof = managerAuth('shop', KEY);
  const first = await openConsole(consolePort, proof);
  first.socket.close();
  await assert.rejects(openConsole(consolePort, proof), /unauthorized/);
  // The main port has no /console namespace, even for the admin token.
  await assert.rejects(openConsole(srv.port, { token: ADMIN }), /Invalid namespace/);

  const admin = await openConsole(consolePort, { token: ADMIN });
  assert.deepEqual(admin.hello, { auth_enabled: true, node_id: null, realm: null, role: 'admin', version: admin.hello.version });
  admin.socket.close();
});

test('an admin sees the overview and every realm; deltas carry what changed; watch adds a realm detail', async (t) => {
  const { srv, consolePort } = await startConsole(t);
  const admin = await openConsole(consolePort, { token: ADMIN });
  t.after(() => admin.socket.close());
  let view = viewOf(admin.deltas);
  assert.ok(view.has('overview'));
  assert.ok(view.has('realm/shop') && view.has('realm/other'));
  assert.ok(view.has('settings') && view.has('enrolment'));
  assert.doesNotMatch(JSON.stringify(view.get('settings')), new RegExp(`${ADMIN}|${KEY}`), 'no secret in the settings');
  // Later deltas carry only changed keys: the settings do not come again.
  await waitFor(() => admin.deltas.length >= 3, 10000 * TIME_SCALE, 'three deltas');
  assert.ok(admin.deltas.slice(1).every((d) => !('settings' in d.set)));

  // A consumer in an open realm shows up, with its subscription, once the realm is watched.
  const consumer = await connectV4(`http://127.0.0.1:${srv.port}`);
  t.after(() => consumer.close());
  consumer.emit('AUTHENTICATION', { realm: 'lobby' });
  consumer.emit('CONSUMER', { name: 'watcher' });
  consumer.emit('SUBSCRIBE', { event: 'tick', producer: 'clock', consumer: 'watcher', durable: true });
  assert.deepEqual((await emitAck(admin.socket, 'watch', { realm: 'lobby' }))[0], { ok: true });
  await waitFor(() => {
    const d = viewOf(admin.deltas).get('detail');
    return d && d.realm === 'lobby' && d.consumers.some((c) => c.name === 'watcher' && c.subscriptions.some((s) => s.event.includes('tick')));
  }, 10000 * TIME_SCALE, 'the consumer and its subscription in the detail');
  view = viewOf(admin.deltas);
  assert.equal(view.get('realm/lobby').consumers.online, 1);
  // Offline, its durable queue fills: depth, the oldest copy's time, and the realm's count.
  consumer.close();
  const producer = await connectV4(`http://127.0.0.1:${srv.port}`);
  t.after(() => producer.close());
  producer.emit('AUTHENTICATION', { realm: 'lobby' });
  producer.emit('PRODUCER', { name: 'clock' });
  const before = Date.now();
  for (let i = 0; i < 3; i++) producer.emit('PRODUCE', { event: 'tick', from: 'clock', message: { i } });
  // (The realms' queue counts are a pass made at most once a second: they may follow the detail by one.)
  await waitFor(() => {
    const v = viewOf(admin.deltas);
    const d = v.get('detail');
    return d && d.queues.some((q) => q.consumer === 'watcher' && q.depth === 3) && v.get('realm/lobby').queued === 3;
  }, 10000 * TIME_SCALE, 'the durable queue with 3 copies, in the detail and the realm\'s count');
  view = viewOf(admin.deltas);
  const queue = view.get('detail').queues.find((q) => q.consumer === 'watcher');
  assert.ok(queue.oldest_ms >= before - 1000 && queue.oldest_ms <= Date.now(), `oldest_ms ${queue.oldest_ms}`);
  assert.equal(view.get('realm/lobby').queued, 3);
  assert.equal(view.get('realm/lobby').consumers.online, 0);
  assert.ok(view.get('overview').totals.produced >= 3);
  // Unwatching drops the detail.
  assert.deepEqual((await emitAck(admin.socket, 'watch', { realm: null }))[0], { ok: true });
  await waitFor(() => !viewOf(admin.deltas).has('detail'), 10000 * TIME_SCALE, 'the detail deleted');
  // Bad watch requests are 400 and change nothing.
  assert.equal((await emitAck(admin.socket, 'watch', { realm: 5 }))[0].code, 400);
  assert.equal((await emitAck(admin.socket, 'watch', { realm: '*' }))[0].code, 400);
  assert.equal((await emitAck(admin.socket, 'watch', 'shop'))[0].code, 400);
});

test('a realm manager sees its own realm only', async (t) => {
  const { consolePort } = await startConsole(t);
  const manager = await openConsole(consolePort, managerAuth('shop', KEY));
  t.after(() => manager.socket.close());
  assert.equal(manager.hello.role, 'manager');
  assert.equal(manager.hello.realm, 'shop');
  const view = viewOf(manager.deltas);
  assert.deepEqual([...view.keys()].sort(), ['enrolment', 'realm/shop', 'settings']);
  assert.deepEqual(Object.keys(view.get('settings').realms), ['shop']);
  const [refused] = await emitAck(manager.socket, 'watch', { realm: 'other' });
  assert.equal(refused.code, 403);
  assert.deepEqual((await emitAck(manager.socket, 'watch', { realm: 'shop' }))[0], { ok: true });
  await waitFor(() => viewOf(manager.deltas).get('detail')?.realm === 'shop', 10000 * TIME_SCALE, 'its realm detail');
});

test('at most 16 console sessions at once', async (t) => {
  const { consolePort } = await startConsole(t);
  const open = [];
  t.after(() => open.forEach((c) => c.socket.close()));
  for (let i = 0; i < 16; i++) open.push(await openConsole(consolePort, { token: ADMIN }));
  await assert.rejects(openConsole(consolePort, { token: ADMIN }), /too many console sessions/);
  open.pop().socket.close();
  await waitFor(async () => {
    try {
      open.push(await openConsole(consolePort, { token: ADMIN }));
      return true;
    } catch {
      return false;
    }
  }, 10000 * TIME_SCALE, 'a session again once one closed', 200);
});

test('sessions end when their credential goes: a rotated manager key, a removed admin token', async (t) => {
  const { srv, consolePort } = await startConsole(t);
  const manager = await openConsole(consolePort, managerAuth('shop', KEY));
  const admin = await openConsole(consolePort, { token: ADMIN });
  const second = 'console-api-second-admin';
  const closed = (c) => new Promise((resolve) => c.socket.on('disconnect', resolve));
  const managerClosed = closed(manager);
  const write = (auth) => fs.writeFileSync(srv.settingsFile, JSON.stringify({ ...SETTINGS, auth }));
  write({ ...SETTINGS.auth, realms: { ...SETTINGS.auth.realms, shop: { manager_key: 'rotated' } } });
  await withTimeout(managerClosed, 10000 * TIME_SCALE, 'the manager session closed');
  assert.ok(admin.socket.connected, 'the admin stays');
  const other = await openConsole(consolePort, { token: ADMIN });
  t.after(() => other.socket.close());
  const adminClosed = closed(admin);
  write({ ...SETTINGS.auth, tokens: [{ token: second, realm: '*', role: 'admin' }] });
  await withTimeout(adminClosed, 10000 * TIME_SCALE, 'the admin session closed');
  await assert.rejects(openConsole(consolePort, { token: ADMIN }), /unauthorized/);
});

test('managers hold two sessions per realm at most; the admin keeps its places', async (t) => {
  const { consolePort } = await startConsole(t);
  const open = [];
  t.after(() => open.forEach((c) => c.socket.close()));
  for (let i = 0; i < 2; i++) open.push(await openConsole(consolePort, managerAuth('shop', KEY)));
  await assert.rejects(openConsole(consolePort, managerAuth('shop', KEY)), /too many console sessions/);
  open.push(await openConsole(consolePort, managerAuth('other', 'other-key')));
  open.push(await openConsole(consolePort, { token: ADMIN }));
});

test('another site\'s page cannot use the console port; a subscription-heavy realm gives a bounded detail', async (t) => {
  const { srv, consolePort } = await startConsole(t);
  // A browser on another origin sends its Origin: refused before any Engine.IO session.
  const polled = await fetch(`http://127.0.0.1:${consolePort}/socket.io/?EIO=4&transport=polling`, { headers: { origin: 'https://evil.example' } });
  assert.equal(polled.status, 403);
  const own = await fetch(`http://127.0.0.1:${consolePort}/socket.io/?EIO=4&transport=polling`, { headers: { origin: `http://127.0.0.1:${consolePort}` } });
  assert.equal(own.status, 200);

  // Two consumers of 300 subscriptions each: 500 in all are listed (each one's own count is below it).
  for (const name of ['greedy', 'greedier']) {
    const consumer = await connectV4(`http://127.0.0.1:${srv.port}`);
    t.after(() => consumer.close());
    consumer.emit('AUTHENTICATION', { realm: 'lobby' });
    consumer.emit('CONSUMER', { name });
    for (let i = 0; i < 300; i++) consumer.emit('SUBSCRIBE', { event: `e${i}`, producer: 'p', consumer: name });
  }
  const admin = await openConsole(consolePort, { token: ADMIN });
  t.after(() => admin.socket.close());
  await emitAck(admin.socket, 'watch', { realm: 'lobby' });
  await waitFor(() => viewOf(admin.deltas).get('detail')?.truncated === true, 10000 * TIME_SCALE, 'a truncated detail');
  const subs = viewOf(admin.deltas).get('detail').consumers.reduce((n, c) => n + c.subscriptions.length, 0);
  assert.equal(subs, 500);
});
