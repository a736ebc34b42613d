// Socket.IO namespaces: refusals, multiplexing, and malformed packets that close one connection only.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { Manager, connectV4, connectErrorV4, emitAck, ping, once, withTimeout, RawEio } = require('./lib/clients');

test('an unknown namespace gets connect_error "Invalid namespace"', async (t) => {
  const server = await startServer(t);
  const err = await connectErrorV4(`${server.url}/nope`, { transports: ['websocket'] });
  assert.equal(err.message, 'Invalid namespace');
  // /diagnostics is only served when enabled.
  const err2 = await connectErrorV4(`${server.url}/diagnostics`, { transports: ['polling'] });
  assert.equal(err2.message, 'Invalid namespace');
  await server.stop();
});

test('a refused CONNECT gets connect_error with the message', async (t) => {
  const server = await startServer(t, { settings: { diagnostics: true } });
  const err = await connectErrorV4(`${server.url}/diagnostics`, {
    transports: ['websocket'], auth: { refuse: 'not today, "friend"' },
  });
  assert.equal(err.message, 'not today, "friend"');
  // Non-refusing auth connects.
  const ok = await connectV4(`${server.url}/diagnostics`, { transports: ['websocket'], auth: { token: 'x' } });
  t.after(() => ok.close());
  assert.ok(ok.connected);
  await server.stop();
});

test('a refused namespace leaves the other namespaces of the connection working', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const raw = new RawEio(server.url);
  t.after(() => raw.close());
  await raw.open();
  await raw.connect('/');
  raw.send('40/diagnostics,{"refuse":"no"}');
  assert.equal(await raw.next((m) => m.startsWith('44')), '44/diagnostics,{"message":"no"}');
  raw.send('40/nope,');
  assert.equal(await raw.next((m) => m.startsWith('44')), '44/nope,{"message":"Invalid namespace"}');
  raw.send('421["PING",{}]');
  assert.match(await raw.next(), /^431\["/);
  // After a refusal the namespace can still be joined.
  const joined = await raw.connect('/diagnostics');
  assert.match(joined.sid, /^[A-Za-z0-9_-]{20}$/);
  await server.stop();
});

test('two namespaces multiplexed on one connection; disconnecting one keeps the other', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  for (const transports of [['websocket'], ['polling']]) {
    const manager = new Manager(server.url, { transports, reconnection: false, forceNew: true });
    const main = manager.socket('/');
    const diag = manager.socket('/diagnostics');
    t.after(() => { main.close(); diag.close(); manager.engine && manager.engine.close(); });
    await Promise.all([once(main, 'connect'), once(diag, 'connect')]);
    const engineId = manager.engine.id;
    assert.notEqual(main.id, diag.id, 'each namespace has its own socket id');
    assert.notEqual(main.id, engineId);

    const { body } = await ping(main, { on: 'main' });
    assert.equal(body.on, 'main');
    assert.deepEqual(await emitAck(diag, 'echo', 'diag'), ['diag']);
    // Interleaved on the same connection.
    const results = await Promise.all([ping(main, { k: 1 }), emitAck(diag, 'echo', 2), ping(main, { k: 3 })]);
    assert.equal(results[0].body.k, 1);
    assert.deepEqual(results[1], [2]);
    assert.equal(results[2].body.k, 3);

    let mainDisconnected = false;
    main.on('disconnect', () => { mainDisconnected = true; });
    diag.disconnect();
    await delay(300);
    assert.equal(mainDisconnected, false);
    assert.equal(manager.engine.id, engineId, 'same Engine.IO session');
    const { body: after } = await ping(main, { still: 'here' });
    assert.equal(after.still, 'here');

    // /diagnostics can be joined again on the same connection.
    diag.connect();
    await once(diag, 'connect');
    assert.equal(manager.engine.id, engineId);
    assert.deepEqual(await emitAck(diag, 'echo', 'again'), ['again']);
    main.close();
    diag.close();
  }
  await server.stop();
});

test('server-side disconnect of one namespace (bye(false)) keeps the connection', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const manager = new Manager(server.url, { transports: ['websocket'], reconnection: false, forceNew: true });
  const main = manager.socket('/');
  const diag = manager.socket('/diagnostics');
  t.after(() => { main.close(); diag.close(); });
  await Promise.all([once(main, 'connect'), once(diag, 'connect')]);
  const gone = once(diag, 'disconnect');
  diag.emit('bye', false);
  const [reason] = await gone;
  assert.equal(reason, 'io server disconnect');
  assert.equal(main.connected, true);
  const { body } = await ping(main, { ok: 1 });
  assert.equal(body.ok, 1);
  await server.stop();
});

// Each case is sent after CONNECT to "/"; the connection must be closed, and nothing else harmed.
const MALFORMED = [
  ['unknown Socket.IO packet type', ['4garbage']],
  ['event data that is not an array', ['42{"not":"array"}']],
  ['event with an empty array', ['42[]']],
  ['event name that is not a string', ['42[{"a":1}]']],
  ['truncated JSON', ['42["PING",{"a":']],
  ['text while a binary attachment is expected', ['451-["echo",{"_placeholder":true,"num":0}]', '42["PING"]']],
  ['binary attachment nobody asked for', [Buffer.from([1, 2, 3])]],
  ['event for a namespace not joined', ['42/diagnostics,["echo"]']],
  ['unknown Engine.IO packet type', ['9hello']],
  ['empty message', ['']],
  ['CONNECT_ERROR from a client', ['44{"message":"x"}']],
  ['DISCONNECT with a payload', ['41["x"]']],
  ['negative attachment count', ['45-1-["echo"]']],
];

test('malformed packets close only the offending connection', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const bystander = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => bystander.close());
  let bystanderDisconnected = null;
  bystander.on('disconnect', (r) => { bystanderDisconnected = r; });
  const pollingBystander = await connectV4(`${server.url}/diagnostics`, { transports: ['polling'] });
  t.after(() => pollingBystander.close());

  for (const [what, frames] of MALFORMED) {
    const raw = new RawEio(server.url);
    t.after(() => raw.close());
    await raw.open();
    await raw.connect('/');
    for (const f of frames) raw.send(f);
    await withTimeout(raw.closedPromise, 5000, `server to close the connection after ${what}`);
    assert.equal(bystanderDisconnected, null, `bystander still connected after ${what}`);
    const { body } = await ping(bystander, { after: what });
    assert.equal(body.after, what);
  }
  assert.deepEqual(await emitAck(pollingBystander, 'echo', 'fine'), ['fine']);
  assert.ok(server.isRunning());
  await server.stop();
});

test('malformed packets over polling close only that session', async (t) => {
  const server = await startServer(t);
  const bystander = await connectV4(server.url, { transports: ['polling'] });
  t.after(() => bystander.close());
  for (const body of ['42{"not":"array"}', '4garbage', '42[]']) {
    const open = JSON.parse((await (await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`)).text()).slice(1));
    const url = `${server.url}/socket.io/?EIO=4&transport=polling&sid=${open.sid}`;
    assert.equal((await fetch(url, { method: 'POST', body: '40' })).status, 200);
    assert.match(await (await fetch(url)).text(), /^40\{/);
    const poll = fetch(url).then((r) => r.text());
    await fetch(url, { method: 'POST', body }).then((r) => r.arrayBuffer());
    assert.equal(await withTimeout(poll, 5000, 'pending poll to end'), '1', `close packet after ${body}`);
    const res = await fetch(url, { method: 'POST', body: '6' });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).code, 1);
    const { body: pong } = await ping(bystander, { after: body });
    assert.equal(pong.after, body);
  }
  await server.stop();
});
