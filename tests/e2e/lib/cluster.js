// Helpers for the cluster tests: several siomq-server nodes on one Redis (a prefix of their own per test,
// its keys deleted afterwards), a private redis-server that a test may kill and restart, and a TCP proxy
// in front of Redis that can stop forwarding (a partition without a closed connection).
'use strict';

const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { startServer, delay } = require('./server');
const { redis } = require('./redis');
const { connectV4, waitFor, collect, TIME_SCALE } = require('./clients');

// A cluster prefix of the test's own; every key under it is deleted after the test.
function clusterPrefix(t, url) {
  const prefix = `siomq-e2e-cluster-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  t.after(async () => {
    try {
      const [keys] = await redis(url, ['KEYS', `${prefix}:*`]);
      if (keys && keys.length) await redis(url, ['DEL', ...keys]);
    } catch { /* the test's redis may be gone already */ }
  });
  return prefix;
}

// Starts a node of the cluster `prefix` on `url`; resolves once it has joined (its log says so).
async function startNode(t, { url, prefix, nodeId, settings = {}, waitJoin = true, args = [] }) {
  const node = await startServer(t, {
    settings: { ...settings, cluster: { enabled: true, redis_url: url, prefix, node_id: nodeId, ...(settings.cluster || {}) } },
    args,
  });
  if (waitJoin) await node.waitForLog(/cluster: node \S+ joined/, 10000 * TIME_SCALE);
  return node;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

// A redis-server of the test's own (no persistence), on `port` (default: a free one). kill() ends it
// with SIGKILL; start() again on the same port brings it back empty.
async function privateRedis(t, port) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'siomq-e2e-redis-'));
  const p = port || await freePort();
  let child = null;
  const self = {
    port: p,
    url: `redis://127.0.0.1:${p}`,
    async start() {
      child = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
        '--dir', dir], { stdio: 'ignore' });
      await waitFor(async () => {
        try { return (await redis(self.url, ['PING']))[0] === 'PONG'; } catch { return false; }
      }, 10000, 'redis-server answering');
    },
    async kill() {
      if (!child) return;
      const c = child;
      child = null;
      const exited = new Promise((resolve) => c.on('exit', resolve));
      c.kill('SIGKILL');
      await exited;
    },
  };
  t.after(async () => {
    await self.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await self.start();
  return self;
}

// A TCP proxy to `target` (a port on 127.0.0.1). pause(): bytes stop flowing both ways, connections stay
// open (what a partition looks like to TCP); resume() lets them through again.
async function pausableProxy(t, target) {
  let paused = false;
  const pairs = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    const pair = { client, upstream };
    pairs.add(pair);
    const pipe = (from, to) => from.on('data', (d) => { if (!paused) to.write(d); });
    pipe(client, upstream);
    pipe(upstream, client);
    const end = () => { client.destroy(); upstream.destroy(); pairs.delete(pair); };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const { client, upstream } of pairs) { client.destroy(); upstream.destroy(); }
    server.close();
  });
  return {
    url: `redis://127.0.0.1:${server.address().port}`,
    pause() { paused = true; },
    resume() { paused = false; },
  };
}

// A WebSocket client of `node`, closed after the test.
async function client(t, node) {
  const s = await connectV4(node.url, { transports: ['websocket'] });
  t.after(() => s.close());
  return s;
}

// A round trip through each socket's server, so that what was sent before has been handled.
async function settle(...sockets) {
  await Promise.all(sockets.map((s) => s.timeout(5000).emitWithAck('PING', {})));
}

async function subscribe(socket, fields) {
  socket.emit('SUBSCRIBE', fields);
  await settle(socket);
}

// What a relayed message takes to cross: the subscriber sees it within this (generous under sanitizers).
const CROSS_MS = 5000 * TIME_SCALE;

// A subscription made on one node reaches the others' view of its interest a round trip through Redis
// later (docs/scale-out.md): `producer` sends { event, from, message: '__warm-up__' } every 50 ms until
// each of `received()` says it has one. Tests then leave the warm-up copies out of what they count.
const WARM_UP = '__warm-up__';
async function warmUp(producer, { event, from, extra = {} }, received) {
  await waitFor(async () => {
    producer.emit('PRODUCE', { event, from, message: WARM_UP, ...extra });
    await delay(50);
    return received();
  }, CROSS_MS, `a warm-up '${event}' crossing`);
}
const real = (list) => list.filter((m) => m.message !== WARM_UP);

module.exports = {
  clusterPrefix, startNode, privateRedis, pausableProxy, delay, client, collect, settle, subscribe, CROSS_MS, warmUp, real,
  WARM_UP,
};
