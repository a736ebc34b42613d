// The wire as the Go tyo-mq client speaks it: a bare WebSocket to /socket.io/?EIO=4&transport=websocket,
// Engine.IO and Socket.IO packets written by hand, no Socket.IO library.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { RawEio, connectV4, ping, withTimeout } = require('./lib/clients');

test('raw websocket: open packet, CONNECT, PING with and without ack id', async (t) => {
  const server = await startServer(t);
  const raw = new RawEio(server.url);
  t.after(() => raw.close());
  const open = await raw.open();
  assert.match(open.sid, /^[A-Za-z0-9_-]{20}$/);
  assert.deepEqual(open.upgrades, [], 'no upgrade from websocket');
  assert.equal(open.pingInterval, 5000);
  assert.equal(open.pingTimeout, 10000);
  assert.equal(open.maxPayload, 1048576);

  raw.send('40');
  const connected = await raw.next();
  assert.match(connected, /^40\{"sid":"[A-Za-z0-9_-]{20}"\}$/);
  const socketId = JSON.parse(connected.slice(2)).sid;
  assert.notEqual(socketId, open.sid, 'the Socket.IO id is not the Engine.IO sid');

  raw.send('421["PING",{"x":1}]');
  const reply = await raw.next();
  assert.match(reply, /^431\["/);
  const args = JSON.parse(reply.slice(3));
  assert.equal(args.length, 1);
  assert.equal(typeof args[0], 'string', 'the ack carries a JSON string');
  const body = JSON.parse(args[0]);
  assert.equal(body.x, 1);
  assert.equal(body.pong, 'PONG');
  assert.ok(!Number.isNaN(Date.parse(body.timestamp)));

  // Large ack ids, and several in flight, answered in order.
  raw.send('424294967296["PING",{"big":true}]');
  raw.send('427["PING","s"]');
  raw.send('42["PING",{}]');
  raw.send('428["PING"]');
  assert.match(await raw.next(), /^434294967296\["\{\\"big\\":true,/);
  assert.match(await raw.next(), /^437\["\{\\"0\\":\\"s\\",\\"pong\\":\\"PONG\\"/);
  assert.match(await raw.next(), /^438\["\{\\"pong\\":\\"PONG\\",\\"timestamp\\":/);
  await delay(200);
  assert.deepEqual(raw.messages, []);

  // An unknown event is ignored; an ack from the client is ignored; the connection stays.
  raw.send('42["NO_SUCH_EVENT",1]');
  raw.send('4399["whatever"]');
  raw.send('429["PING",{"still":1}]');
  assert.match(await raw.next(), /^439\["\{\\"still\\":1,/);

  // Namespace disconnect, then reconnect on the same Engine.IO session.
  raw.send('41');
  await delay(100);
  raw.send('40');
  const again = await raw.next();
  assert.match(again, /^40\{"sid":"/);
  assert.notEqual(JSON.parse(again.slice(2)).sid, socketId, 'a new socket id');
  raw.send('4210["PING",{}]');
  assert.match(await raw.next(), /^4310\["/);

  // Engine.IO close: the server closes the connection.
  raw.send('1');
  await raw.waitClosed(5000);
  await server.stop();
});

test('raw websocket: CONNECT twice is harmless; events before CONNECT close the connection', async (t) => {
  const server = await startServer(t);
  const a = new RawEio(server.url);
  t.after(() => a.close());
  await a.open();
  await a.connect('/');
  a.send('40');
  a.send('421["PING",{}]');
  const next = await a.next();
  assert.match(next, /^431\[/, `second CONNECT changes nothing (got ${next})`);

  const b = new RawEio(server.url);
  t.after(() => b.close());
  await b.open();
  b.send('42["PING",{}]');
  await b.waitClosed(5000);
  a.send('422["PING",{}]');
  assert.match(await a.next(), /^432\[/);
  await server.stop();
});

test('raw websocket and socket.io-client side by side, PING in a loop', async (t) => {
  const server = await startServer(t);
  const raw = new RawEio(server.url);
  t.after(() => raw.close());
  await raw.open();
  await raw.connect('/');
  const client = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => client.close());
  for (let i = 0; i < 50; i++) {
    raw.send(`42${i}["PING",{"i":${i}}]`);
  }
  const pings = [];
  for (let i = 0; i < 50; i++) pings.push(ping(client, { i }));
  for (let i = 0; i < 50; i++) {
    const m = await raw.next();
    assert.ok(m.startsWith(`43${i}[`), `ack ${i} in order: ${m}`);
    assert.equal(JSON.parse(JSON.parse(m.slice(2 + String(i).length))[0]).i, i);
  }
  const results = await Promise.all(pings);
  results.forEach((r, i) => assert.equal(r.body.i, i));
  await server.stop();
});

test('raw websocket: control frames (ping gets pong; a close frame ends the session)', async (t) => {
  const server = await startServer(t);
  const raw = new RawEio(server.url);
  t.after(() => raw.close());
  await raw.open();
  await raw.connect('/');
  const pong = new Promise((resolve) => raw.ws.once('pong', resolve));
  raw.ws.ping(Buffer.from('hello'));
  const [data] = [await withTimeout(pong, 5000, 'websocket pong')];
  assert.equal(Buffer.from(data).toString(), 'hello', 'pong echoes the ping payload');
  raw.send('421["PING",{}]');
  assert.match(await raw.next(), /^431\[/);
  raw.ws.close(1000, 'bye');
  assert.equal(await raw.waitClosed(5000), 1000);
  const other = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => other.close());
  await ping(other, {});
  await server.stop();
});

test('numbers beyond 64 bits are valid JSON, as JSON.parse takes them: the connection stays and PING spreads them', async (t) => {
  const server = await startServer(t);
  const raw = new RawEio(server.url);
  t.after(() => raw.ws.terminate());
  await raw.open();
  await raw.connect();
  raw.send('427["PING",{"big":100000000000000000000,"huge":1e400,"exact":9007199254740993}]');
  const reply = await raw.next((m) => typeof m === 'string' && m.startsWith('437'));
  const body = JSON.parse(JSON.parse(reply.slice(3))[0]);
  const expected = JSON.parse(JSON.stringify(JSON.parse('{"big":100000000000000000000,"huge":1e400,"exact":9007199254740993}')));
  assert.equal(body.big, expected.big);
  assert.equal(body.huge, null);
  assert.equal(body.exact, expected.exact);
  assert.equal(raw.closed, false);
  await server.stop();
});
