// A client whose connection the server closes reconnects by itself and gets a new identity.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer } = require('./lib/server');
const { io, Manager, once, ping, emitAck, waitFor } = require('./lib/clients');

for (const transports of [['websocket'], ['polling', 'websocket'], ['polling']]) {
  test(`reconnect after the server closes the connection (${transports.join('+')})`, async (t) => {
    const server = await startServer(t, { diagnostics: true });
    const manager = new Manager(server.url, {
      transports, forceNew: true, reconnection: true, reconnectionDelay: 100, reconnectionDelayMax: 500,
    });
    const main = manager.socket('/');
    const diag = manager.socket('/diagnostics');
    t.after(() => { main.close(); diag.close(); });
    await Promise.all([once(main, 'connect'), once(diag, 'connect')]);
    if (transports.includes('websocket')) {
      await waitFor(() => manager.engine.transport.name === 'websocket', 10000, 'upgrade');
    }
    const before = { main: main.id, diag: diag.id, engine: manager.engine.id };
    await ping(main, { first: 1 });

    const mainGone = once(main, 'disconnect');
    const reconnected = once(manager, 'reconnect', 15000);
    reconnected.catch(() => {});  // awaited below; do not let an early failure leave it unhandled
    const mainBack = new Promise((resolve) => main.once('disconnect', () => main.once('connect', resolve)));
    // bye(true): the server disconnects /diagnostics and closes the whole Engine.IO session.
    diag.emit('bye', true);
    const [reason] = await mainGone;
    // Over polling the client may see its next GET refused ("transport error") rather than a close
    // packet; see the polling close test in engineio_http.test.js.
    assert.ok(['transport close', 'transport error'].includes(reason), `the other namespace sees the transport go (${reason})`);
    await reconnected;
    await mainBack;
    assert.ok(main.connected);
    assert.notEqual(main.id, before.main, 'new socket id');
    assert.notEqual(manager.engine.id, before.engine, 'new Engine.IO session');
    const { body } = await ping(main, { again: 2 });
    assert.equal(body.again, 2);
    // The namespace the server disconnected stays disconnected (Socket.IO semantics).
    assert.equal(diag.connected, false);
    await server.stop();
  });
}

test('reconnect after a namespace-only server disconnect is up to the client', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const socket = io(`${server.url}/diagnostics`, {
    transports: ['websocket'], forceNew: true, reconnectionDelay: 100, reconnectionDelayMax: 500,
  });
  t.after(() => socket.close());
  await once(socket, 'connect');
  const firstId = socket.id;
  const gone = once(socket, 'disconnect');
  socket.emit('bye', false);
  assert.equal((await gone)[0], 'io server disconnect');
  socket.connect();
  await once(socket, 'connect');
  assert.notEqual(socket.id, firstId);
  assert.deepEqual(await emitAck(socket, 'echo', 'back'), ['back']);
  await server.stop();
});

test('clients reconnect to a restarted server on the same port', async (t) => {
  const first = await startServer(t);
  const socket = io(first.url, {
    transports: ['websocket'], forceNew: true, reconnectionDelay: 100, reconnectionDelayMax: 300,
  });
  t.after(() => socket.close());
  await once(socket, 'connect');
  const id1 = socket.id;
  const gone = once(socket, 'disconnect');
  await first.stop();
  await gone;
  // Listening before the restart: the client may be back before startServer returns.
  const back = once(socket, 'connect', 15000);
  const second = await startServer(t, { port: first.port });
  assert.equal(second.port, first.port);
  await back;
  assert.notEqual(socket.id, id1);
  const { body } = await ping(socket, { restarted: true });
  assert.equal(body.restarted, true);
  await second.stop();
});
