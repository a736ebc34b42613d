// Misbehaving and slow clients: each is cut off on its own while everyone else is served.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const net = require('node:net');
const { startServer, delay } = require('./lib/server');
const { RawEio, connectV4, ping, withTimeout, clientFrame, handmadeWebSocket } = require('./lib/clients');

test('heartbeat: a client that answers pings stays; one that stops is closed after interval + timeout', async (t) => {
  const server = await startServer(t, { settings: { transport: { ping_interval: 300, ping_timeout: 300 } } });
  const good = new RawEio(server.url, { autoPong: true });
  const silent = new RawEio(server.url, { autoPong: false });
  t.after(() => { good.close(); silent.close(); });
  const [goodOpen, silentOpen] = await Promise.all([good.open(), silent.open()]);
  const silentOpenedAt = Date.now();
  assert.equal(goodOpen.pingInterval, 300);
  assert.equal(silentOpen.pingTimeout, 300);
  await Promise.all([good.connect('/'), silent.connect('/')]);

  await withTimeout(silent.closedPromise, 5000, 'silent client to be dropped');
  const elapsed = silent.closedAt - silentOpenedAt;
  // interval + timeout is 600 ms; the lower bound shows it was the heartbeat and not something else.
  assert.ok(elapsed >= 450, `closed after ${elapsed} ms, before the heartbeat could expire`);
  assert.ok(silent.messages.includes('2'), 'the server pinged the silent client');

  await delay(Math.max(0, 2500 - (Date.now() - silentOpenedAt)));
  assert.equal(good.closed, false, 'the answering client is still connected after 2.5 s');
  assert.ok(good.pings >= 3, `the server kept pinging (${good.pings} pings)`);
  good.send('421["PING",{"alive":true}]');
  assert.match(await good.next(), /^431\["\{\\"alive\\":true/);
  await server.stop();
});

test('heartbeat: socket.io-client keeps a session alive over a short heartbeat', async (t) => {
  const server = await startServer(t, { settings: { transport: { ping_interval: 200, ping_timeout: 400 } } });
  const socket = await connectV4(server.url);  // polling, then websocket
  t.after(() => socket.close());
  let reason = null;
  socket.on('disconnect', (r) => { reason = r; });
  await delay(2000);
  assert.equal(reason, null);
  const { body } = await ping(socket, { ok: 1 });
  assert.equal(body.ok, 1);
  await server.stop();
});

test('a client that never joins a namespace is dropped after connect_timeout', async (t) => {
  const server = await startServer(t, { settings: { transport: { connect_timeout: 500 } } });
  const idle = new RawEio(server.url);
  const joined = new RawEio(server.url);
  t.after(() => { idle.close(); joined.close(); });
  await Promise.all([idle.open(), joined.open()]);
  await joined.connect('/');
  const t0 = Date.now();
  await withTimeout(idle.closedPromise, 5000, 'idle session to be dropped');
  assert.ok(Date.now() - t0 >= 300, 'not before the timeout');
  await delay(500);
  assert.equal(joined.closed, false);
  await server.stop();
});

test('a websocket frame larger than max_payload closes that connection only', async (t) => {
  const server = await startServer(t, { settings: { transport: { max_payload: 1000 } } });
  const big = new RawEio(server.url);
  const small = new RawEio(server.url);
  t.after(() => { big.close(); small.close(); });
  await Promise.all([big.open(), small.open()]);
  assert.equal(big.handshake.maxPayload, 1000);
  await Promise.all([big.connect('/'), small.connect('/')]);

  // Just under the limit is fine.
  const fits = `421["PING",{"p":"${'x'.repeat(900)}"}]`;
  assert.ok(Buffer.byteLength(fits) <= 1000);
  small.send(fits);
  assert.match(await small.next(), /^431\[/);

  big.send(`42["PING",{"p":"${'x'.repeat(2000)}"}]`);
  const code = await big.waitClosed(5000);
  assert.equal(code, 1009, 'closed with "message too big"');
  small.send('422["PING",{}]');
  assert.match(await small.next(), /^432\[/);
  assert.equal(small.closed, false);

  // Also as a fragmented message whose pieces are each small.
  const frag = new RawEio(server.url);
  t.after(() => frag.close());
  await frag.open();
  await frag.connect('/');
  const ws = frag.ws;
  const piece = 'y'.repeat(400);
  ws.send(`42["PING","${piece}`, { fin: false });
  ws.send(piece, { fin: false });
  ws.send(`${piece}"]`, { fin: true });
  assert.equal(await frag.waitClosed(5000), 1009);
  small.send('423["PING",{}]');
  assert.match(await small.next(), /^433\[/);
  await server.stop();
});

test('garbage bytes on a raw TCP socket: the server closes it and keeps serving', async (t) => {
  const server = await startServer(t);
  const client = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => client.close());
  const payloads = [
    Buffer.concat([Buffer.from([0x01, 0xff, 0x00]), crypto.randomBytes(4096)]),
    Buffer.from('\r\n\r\n\r\n'),
    Buffer.from('GET / HTTP/9.9\r\n\r\n'),
    Buffer.from('GET /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nContent-Length: -5\r\n\r\n'),
    Buffer.from('POST /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'),
    Buffer.from('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'),  // a TLS ClientHello
  ];
  for (const bytes of payloads) {
    const sock = net.connect(server.port, '127.0.0.1');
    t.after(() => sock.destroy());
    sock.on('error', () => {});
    sock.on('data', () => {});
    const closed = new Promise((resolve) => sock.on('close', resolve));
    await new Promise((resolve) => sock.on('connect', resolve));
    sock.write(bytes);
    await withTimeout(closed, 5000, `server to close after ${JSON.stringify(bytes.slice(0, 24).toString('latin1'))}`);
    const { body } = await ping(client, { alive: true });
    assert.equal(body.alive, true);
  }
  // Garbage after a successful websocket upgrade.
  const sock = await handmadeWebSocket(server.port);
  t.after(() => sock.destroy());
  const closed = new Promise((resolve) => sock.on('close', resolve));
  sock.resume();
  sock.write(crypto.randomBytes(2048));
  await withTimeout(closed, 5000, 'server to close a websocket that sent garbage');
  const { body } = await ping(client, { still: true });
  assert.equal(body.still, true);
  await server.stop();
});

test('slowloris: a request trickled byte by byte is cut off after http_request_timeout', async (t) => {
  const server = await startServer(t, { settings: { transport: { http_request_timeout: 1000 } } });
  const sock = net.connect(server.port, '127.0.0.1');
  t.after(() => sock.destroy());
  sock.on('error', () => {});
  let answer = '';
  sock.on('data', (d) => { answer += d.toString('latin1'); });
  let closedAt = null;
  const closed = new Promise((resolve) => sock.on('close', () => { closedAt = Date.now(); resolve(); }));
  await new Promise((resolve) => sock.on('connect', resolve));
  const t0 = Date.now();
  const request = 'GET /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'a'.repeat(200);
  let i = 0;
  const trickle = setInterval(() => {
    if (sock.destroyed || i >= request.length) return;
    sock.write(request[i++]);
  }, 50);
  t.after(() => clearInterval(trickle));
  await withTimeout(closed, 8000, 'slowloris connection to be dropped');
  clearInterval(trickle);
  const elapsed = closedAt - t0;
  assert.ok(elapsed < 5000, `dropped after ${elapsed} ms`);
  assert.ok(elapsed >= 800, `dropped after ${elapsed} ms, before the timeout`);
  assert.ok(i < request.length, 'cut off before the request was complete');
  assert.doesNotMatch(answer, /^HTTP\/1\.1 200/);

  // An idle connection that sends nothing is dropped too; a normal request still works.
  const idle = net.connect(server.port, '127.0.0.1');
  t.after(() => idle.destroy());
  idle.on('error', () => {});
  await withTimeout(new Promise((resolve) => idle.on('close', resolve)), 5000, 'idle connection to be dropped');
  const res = await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`);
  assert.equal(res.status, 200);
  await res.text();
  await server.stop();
});

test('slow consumer: a client that never reads is closed once its queue passes max_outbound_bytes', async (t) => {
  const server = await startServer(t, { diagnostics: true, settings: { transport: { max_outbound_bytes: 1048576 } } });
  const other = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => other.close());

  const sock = await handmadeWebSocket(server.port);  // paused: never reads
  t.after(() => sock.destroy());
  const closed = new Promise((resolve) => sock.on('close', resolve));
  sock.write(clientFrame('40/diagnostics,'));
  sock.write(clientFrame('42/diagnostics,["flood",5000,10000]'));

  // Meanwhile the other client is served.
  for (let i = 0; i < 5; i++) {
    const { body } = await ping(other, { i });
    assert.equal(body.i, i);
  }
  await server.waitForLog('slow consumer', 10000);
  // The server closed the connection: once we read what is buffered, we see the end.
  sock.resume();
  sock.on('data', () => {});
  await withTimeout(closed, 10000, 'slow consumer socket to be closed');
  const { body } = await ping(other, { after: 'flood' });
  assert.equal(body.after, 'flood');
  await server.stop();
});

test('slow consumer over polling: a client that stops polling is closed too', async (t) => {
  const server = await startServer(t, { diagnostics: true, settings: { transport: { max_outbound_bytes: 1048576 } } });
  const other = await connectV4(server.url, { transports: ['polling'] });
  t.after(() => other.close());
  const open = JSON.parse((await (await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`)).text()).slice(1));
  const url = `${server.url}/socket.io/?EIO=4&transport=polling&sid=${open.sid}`;
  await fetch(url, { method: 'POST', body: '40/diagnostics,' }).then((r) => r.text());
  await fetch(url, { method: 'POST', body: '42/diagnostics,["flood",500,10000]' }).then((r) => r.text());
  await server.waitForLog('slow consumer', 10000);
  const res = await fetch(url, { method: 'POST', body: '6' });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).code, 1, 'the session is gone');
  const { body } = await ping(other, { ok: 1 });
  assert.equal(body.ok, 1);
  await server.stop();
});

test('a client that reads is not a slow consumer: the outbound bound counts only what is unsent', async (t) => {
  const server = await startServer(t, { diagnostics: true, settings: { transport: { max_outbound_bytes: 1048576 } } });
  for (const transports of [['websocket'], ['polling']]) {
    const socket = await connectV4(`${server.url}/diagnostics`, { transports });
    t.after(() => socket.close());
    let received = 0;
    let bytes = 0;
    socket.on('flood', (s) => { received++; bytes += s.length; });
    let reason = null;
    socket.on('disconnect', (r) => { reason = r; });
    // 5 bursts of 500 kB: 2.5 MB in total, never more than 0.5 MB queued at once.
    for (let burst = 1; burst <= 5; burst++) {
      socket.emit('flood', 50, 10000);
      await withTimeout((async () => {
        while (received < burst * 50 && reason === null) await delay(10);
      })(), 10000, `burst ${burst} (${transports})`);
      assert.equal(reason, null, `disconnected during burst ${burst} (${transports})`);
    }
    assert.equal(received, 250);
    assert.equal(bytes, 250 * 10000);
    assert.ok(!server.logs().includes('slow consumer'), 'nobody was a slow consumer');
  }
  await server.stop();
});

test('a text frame with invalid UTF-8 closes that connection with 1007', async (t) => {
  const server = await startServer(t);
  const bad = new RawEio(server.url);
  const good = new RawEio(server.url);
  t.after(() => { bad.close(); good.close(); });
  await Promise.all([bad.open(), good.open()]);
  await Promise.all([bad.connect('/'), good.connect('/')]);
  bad.ws.send(Buffer.from([0x34, 0x32, 0x5b, 0x22, 0xff, 0xfe, 0x22, 0x5d]), { binary: false });  // 42["\xff\xfe"]
  assert.equal(await bad.waitClosed(5000), 1007);
  good.send('421["PING",{"x":"é"}]');
  assert.match(await good.next(), /^431\["\{\\"x\\":\\"é\\"/);
  await server.stop();
});
