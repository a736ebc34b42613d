// Issue 12, items 5 and 6 (the network side): PING in linear time; a Socket.IO packet with its binary
// attachments within max_payload; a polling body charged per packet; a default max_payload that suits
// tyo-mq (1 MiB) and a server-wide connection cap.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { startServer, delay } = require('./lib/server');
const { connectV4, waitFor, RawEio, withTimeout, TIME_SCALE } = require('./lib/clients');

const EIO = '/socket.io/?EIO=4&transport=polling';

// PING answers its ack with the JSON *string* of the payload plus pong and timestamp (§3.8).
async function ping(socket, payload) {
  return JSON.parse(await socket.timeout(10000 * TIME_SCALE).emitWithAck('PING', payload));
}

async function connect(t, server, opts = {}) {
  const socket = await connectV4(server.url, { transports: ['websocket'], ...opts });
  t.after(() => socket.close());
  return socket;
}

test('PING with a 200,000-character string is answered at once (the spread was quadratic)', async (t) => {
  const server = await startServer(t);
  const s = await connect(t, server);
  const t0 = Date.now();
  const reply = await ping(s, 'x'.repeat(200000));
  const ms = Date.now() - t0;
  assert.equal(reply.pong, 'PONG');
  assert.equal(reply['199999'], 'x');
  t.diagnostic(`answered in ${ms} ms`);
});

test('the default max_payload is 1 MiB, and a packet\'s attachments count in it', async (t) => {
  const server = await startServer(t);
  const s = await connect(t, server);
  assert.equal(s.io.engine.transport.name, 'websocket');
  // Two attachments of 600 KB: each frame fits, the packet does not.
  const closed = new Promise((resolve) => s.once('disconnect', resolve));
  s.emit('PRODUCE', { event: 'e', from: 'p', a: Buffer.alloc(600000, 1), b: Buffer.alloc(600000, 2) });
  await closed;
  // A packet of 600 KB is fine, and the server is well.
  const ok = await connect(t, server);
  const reply = await ping(ok, { n: 'y'.repeat(600000) });
  assert.equal(reply.pong, 'PONG');
});

test('a polling body of many no-op packets is refused by its packet count, not decoded into many times its size', async (t) => {
  const server = await startServer(t);
  const res = await fetch(`${server.url}${EIO}`);
  const open = JSON.parse((await res.text()).slice(1));
  const body = `6${'\x1e6'.repeat(400000)}`;  // 800 KB: under max_payload, 400,001 packets
  const post = await fetch(`${server.url}${EIO}&sid=${open.sid}`, { method: 'POST', body });
  assert.equal(post.status, 400);
  await post.arrayBuffer();
  const small = await fetch(`${server.url}${EIO}`);
  assert.equal(small.status, 200, 'the server goes on');
  await small.arrayBuffer();
});

test('transport.max_connections caps the connections of the whole server', async (t) => {
  const server = await startServer(t, { settings: { transport: { max_connections: 5 } } });
  const sockets = [];
  t.after(() => sockets.forEach((s) => s.destroy()));
  const states = await Promise.all(Array.from({ length: 10 }, () => new Promise((resolve) => {
    const c = net.connect(server.port, '127.0.0.1');
    sockets.push(c);
    let closed = false;
    c.on('close', () => { closed = true; });
    c.on('error', () => {});
    setTimeout(() => resolve(closed), 500 * TIME_SCALE);
  })));
  assert.equal(states.filter((closed) => !closed).length, 5, JSON.stringify(states));
  await waitFor(() => server.logs().includes('refusing new ones'), 2000, 'the refusal log line');
  sockets.forEach((s) => s.destroy());
  await delay(200);
  const s = await connect(t, server);
  assert.equal((await ping(s, {})).pong, 'PONG', 'room again once they closed');
});

test('without a limits block a socket holds at most 1,000 subscriptions, and credential guesses are paced', async (t) => {
  const server = await startServer(t, { settings: { auth: { enabled: true, realms: { default: { required: false } } } } });
  const s = await connect(t, server);
  const limited = [];
  s.on('RATE_LIMITED', (m) => limited.push(m));
  for (let i = 0; i < 1005; i++) s.emit('SUBSCRIBE', { event: `e${i}`, producer: 'p', consumer: 'c' });
  await ping(s, {});
  assert.ok(limited.some((m) => m.reason === 'max_subscriptions_per_socket'), JSON.stringify(limited));
  const guesser = await connect(t, server);
  const answers = [];
  for (let i = 0; i < 130; i++) {
    answers.push(guesser.timeout(10000 * TIME_SCALE).emitWithAck('AUTHENTICATION', { token: `guess-${i}` }));
  }
  const replies = await Promise.all(answers);
  const paced = replies.filter((r) => r.code === 429).length;
  assert.ok(paced >= 20, `${paced} of 130 guesses were paced`);
  assert.ok(replies.filter((r) => r.code === 401).length >= 100, 'a burst of 100 is answered');
});

test('a peer that stops reading is reset 5 s after its close, not kept with its queued frames', async (t) => {
  const { handmadeWebSocket, clientFrame } = require('./lib/clients');
  // A bound well above what the kernel's socket buffers absorb, so the close frame stays queued.
  const server = await startServer(t, { diagnostics: true, settings: { transport: { max_outbound_bytes: 32 * 1048576 } } });
  const sock = await handmadeWebSocket(server.port);  // paused: never reads
  t.after(() => sock.destroy());
  sock.write(clientFrame('40/diagnostics,'));
  sock.write(clientFrame('42/diagnostics,["flood",5000,10000]'));
  await server.waitForLog('slow consumer', 10000 * TIME_SCALE);
  await server.waitForLog('connection reset', 15000 * TIME_SCALE);
});

// A binary packet whose attachments never come was held for as long as the client kept answering pings.
// Now its attachments get one heartbeat period (ping interval + ping timeout), then the session closes.
test('a binary packet whose attachments never arrive closes its session after one heartbeat period', async (t) => {
  const server = await startServer(t, { settings: { transport: { ping_interval: 300, ping_timeout: 300 } } });
  const raw = new RawEio(server.url);
  t.after(() => raw.close());
  await raw.open();
  await raw.connect();
  raw.send('451-["PRODUCE",{"event":"e","from":"p","message":{"_placeholder":true,"num":0}}]');
  const t0 = Date.now();
  await withTimeout(raw.closedPromise, 10000 * TIME_SCALE, 'the session closed');
  t.diagnostic(`closed after ${Date.now() - t0} ms; pings answered: ${raw.pings || 0}`);
  assert.ok(raw.pings >= 1, 'the client kept answering pings meanwhile');
});
