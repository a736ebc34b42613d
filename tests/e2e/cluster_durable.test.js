// Durable delivery from any node (docs/scale-out.md): with the redis store in a cluster, each node keeps its
// durable rows under a section of its own (<store>:<node id>:rows, …) and a durable queue (realm,
// subscription key, consumer id) has one home node at a time (<cluster prefix>:homes:<realm>). A consumer
// that comes back on another node gets its queue there: the stored backlog in order, once; messages it had
// not ACKed, again, and no retry once ACKed there; and after a kill -9 of the home node, every confirmed
// message once that node's lease ended (its section adopted by a live node). ACK mode (§5.2) throughout.
// Needs SIOMQ_TEST_REDIS_URL (the test script starts one) and redis-server on the PATH.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { waitFor, TIME_SCALE, ack } = require('./lib/clients');
const { redis } = require('./lib/redis');
const { clusterPrefix, startNode, delay, client, settle, CROSS_MS, warmUp, real, WARM_UP } = require('./lib/cluster');
const { makeCli } = require('./lib/cli');
const { startServer } = require('./lib/server');

const REDIS_URL = process.env.SIOMQ_TEST_REDIS_URL;
const skip = !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set';
const LEASE_MS = 1000;
const EVENT = 'CONSUME-p-e';  // deliveries of {event:'e', producer:'p'}
const SUB = { event: 'e', producer: 'p', consumer: 'x', consumer_id: 'x', id: 'x', durable: true, ack: true };
// The same with a short ACK timeout and many attempts: a retry of an ACKed message would show within seconds.
const SUB_RETRY = { ...SUB, ack_timeout: `${TIME_SCALE}s`, retry: { max_attempts: 50, delay: '100ms' } };
const ADOPT_MS = 15000 * TIME_SCALE;  // a dead node's lease plus a few seconds
const range = (from, to) => Array.from({ length: to - from }, (_, i) => from + i);

// A store prefix of the test's own; every key under it (the old keys and every section's) is deleted after.
function storePrefix(t) {
  const store = `siomq-e2e-durable-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  t.after(async () => {
    try {
      const [keys] = await redis(REDIS_URL, ['KEYS', `${store}*`]);
      if (keys && keys.length) await redis(REDIS_URL, ['DEL', ...keys]);
    } catch { /* redis may be gone already */ }
  });
  return store;
}

// `count` nodes (node-a, node-b, …) of one cluster on the redis store, under a store prefix of the test's own.
async function cluster(t, count) {
  const prefix = clusterPrefix(t, REDIS_URL);
  const store = storePrefix(t);
  const settings = { cluster: { node_lease_ms: LEASE_MS }, storage_options: { url: REDIS_URL, prefix: store } };
  const nodes = [];
  for (let i = 0; i < count; i++) {
    nodes.push(await startNode(t, { url: REDIS_URL, prefix, nodeId: `node-${'abc'[i]}`, settings, args: ['--storage', 'redis'] }));
  }
  return { prefix, store, nodes };
}

const rows = async (store, node) => (await redis(REDIS_URL, ['HLEN', `${store}:${node}:rows`]))[0];
const homes = async (prefix) => (await redis(REDIS_URL, ['HVALS', `${prefix}:homes:default`]))[0];
const nameHolder = async (prefix) => (await redis(REDIS_URL, ['HGET', `${prefix}:consumers:default`, 'x']))[0];

async function homeIs(prefix, node, ms = CROSS_MS) {
  await waitFor(async () => JSON.stringify(await homes(prefix)) === JSON.stringify([node]), ms, `the home on ${node}`);
}

// Consumer 'x' on `node`: CONSUMER, then the durable ACK-mode SUBSCRIBE; deliveries collected in `got`.
async function consumerOn(t, node, fields = SUB) {
  const socket = await client(t, node);
  const got = [];
  socket.on(EVENT, (m) => got.push(m));
  socket.emit('CONSUMER', { name: 'x', id: 'x' });
  socket.emit('SUBSCRIBE', fields);
  await settle(socket);
  return { socket, got, acked: new Set() };
}

// 'x' disconnects; resolves once the cluster released its name (so that another node may take it).
async function leave(prefix, x, ms = CROSS_MS) {
  x.socket.close();
  await waitFor(async () => (await nameHolder(prefix)) === null, ms, 'the name x released');
}

async function producerOn(t, node) {
  const socket = await client(t, node);
  socket.emit('PRODUCER', { name: 'p', id: 'p' });
  await settle(socket);
  return socket;
}

// PRODUCE {n} for each n, one at a time, with a publisher confirm each; every one must be confirmed, with
// its one stored copy counted wherever it was stored (the home may be another node: it answers first).
async function produceAll(p, ns) {
  for (const n of ns) {
    const confirm = await p.timeout(10000 * TIME_SCALE).emitWithAck('PRODUCE', { event: 'e', from: 'p', message: { n } });
    assert.deepEqual(confirm, { ok: true, stored: 1 }, `confirm of ${n}`);
  }
}

// A warm-up crossing from `p` to 'x' (so that p's node routes to x's node), then everything ACKed.
async function warm(p, x) {
  const before = x.got.length;
  await warmUp(p, { event: 'e', from: 'p' }, () => x.got.slice(before).some((m) => m.message === WARM_UP));
  await settle(p, x.socket);
  await delay(100);
  await ackAll(x);
}


// ACKs every delivery 'x' got that it has not ACKed yet (each msgId once): each answers ACK_OK.
async function ackAll(x) {
  for (const m of x.got) {
    if (x.acked.has(m.msgId)) continue;
    x.acked.add(m.msgId);
    assert.deepEqual(await ack(x.socket, { msgId: m.msgId }), { name: 'ACK_OK', ok: true, msgId: m.msgId }, JSON.stringify(m));
  }
}

const ns = (got) => real(got).map((m) => m.message.n);
const distinct = (got) => [...new Set(ns(got))];  // first occurrences, in arrival order

function assertAckFields(got) {
  for (const m of real(got)) {
    assert.equal(typeof m.msgId, 'string', JSON.stringify(m));
    assert.equal(m.msg_id, m.msgId);
    assert.ok(Number.isInteger(m.delivery_attempt) && m.delivery_attempt >= 1, JSON.stringify(m));
  }
}

test('live handover: a durable consumer that moves from node A to B gets the backlog stored on A there, in order and once; A\'s rows go, the home is B',
  { skip }, async (t) => {
    const { prefix, store, nodes: [a, b, c] } = await cluster(t, 3);
    const p = await producerOn(t, c);
    let x = await consumerOn(t, a);
    await homeIs(prefix, 'node-a');
    await warm(p, x);
    await leave(prefix, x);
    await produceAll(p, range(0, 20));
    await waitFor(async () => (await rows(store, 'node-a')) >= 20, CROSS_MS, 'the 20 stored on A');

    x = await consumerOn(t, b);
    await waitFor(() => ns(x.got).length >= 20, 3 * CROSS_MS, 'the backlog on B');
    await settle(x.socket);
    await delay(300);
    assert.deepEqual(ns(x.got), range(0, 20), 'all 20, in order, each once');
    assertAckFields(x.got);
    await ackAll(x);
    await waitFor(async () => (await rows(store, 'node-a')) === 0, CROSS_MS, 'A\'s rows gone');
    await homeIs(prefix, 'node-b');

    // Live traffic from C now reaches x on B.
    await warm(p, x);
    await produceAll(p, range(20, 25));
    await waitFor(() => ns(x.got).length >= 25, CROSS_MS, 'the 5 live messages');
    await settle(x.socket);
    assert.deepEqual(ns(x.got), range(0, 25));
    await ackAll(x);
    for (const n of [a, b, c]) await n.stop();
  });

test('moved while unacknowledged: messages delivered on A and not ACKed come again on B; once ACKed there, no retry',
  { skip }, async (t) => {
    const { prefix, store, nodes: [a, b, c] } = await cluster(t, 3);
    const p = await producerOn(t, c);
    let x = await consumerOn(t, a, SUB_RETRY);
    await homeIs(prefix, 'node-a');
    await warm(p, x);
    await produceAll(p, range(0, 10));
    await waitFor(() => distinct(x.got).length >= 10, CROSS_MS, 'the 10 delivered on A');
    assert.deepEqual(distinct(x.got), range(0, 10));
    await leave(prefix, x);  // none of the 10 ACKed

    x = await consumerOn(t, b, SUB_RETRY);
    await waitFor(() => distinct(x.got).length >= 10, 3 * CROSS_MS, 'the 10 again on B');
    assert.deepEqual(distinct(x.got), range(0, 10), 'each at least once, in order');
    assertAckFields(x.got);
    await ackAll(x);
    const seen = x.got.length;
    await delay(2500 * TIME_SCALE);  // over two ACK timeouts
    assert.deepEqual(x.got.slice(seen), [], 'nothing redelivered after the ACKs');
    await waitFor(async () => (await rows(store, 'node-a')) === 0, CROSS_MS, 'A\'s rows gone');
    await homeIs(prefix, 'node-b');
    for (const n of [a, b, c]) await n.stop();
  });

// After node-a was killed: 'x' subscribes on `b` and gets every one of 0..n-1 (at least once, in any order),
// ACKs them there; node-a's section ends empty (adopted) and the home is node-b. Resolves with 'x' on `b`.
async function adoptedOn(t, b, { prefix, store }, n, what) {
  const x = await consumerOn(t, b);
  await waitFor(() => distinct(x.got).length >= n, ADOPT_MS, `the ${n} on B`);
  assert.deepEqual([...distinct(x.got)].sort((m, k) => m - k), range(0, n), what);
  assertAckFields(x.got);
  await ackAll(x);
  await waitFor(async () => (await rows(store, 'node-a')) === 0, CROSS_MS, 'the dead node\'s section empty');
  await homeIs(prefix, 'node-b');
  return x;
}

test('kill -9 of the home node: the consumer on B gets every confirmed durable message once the lease ended; A\'s section is adopted',
  { skip }, async (t) => {
    const { prefix, store, nodes: [a, b] } = await cluster(t, 2);
    const p = await producerOn(t, a);
    let x = await consumerOn(t, a);
    await homeIs(prefix, 'node-a');
    await leave(prefix, x);
    await produceAll(p, range(0, 50));
    await a.crash();

    x = await adoptedOn(t, b, { prefix, store }, 50, 'no confirmed durable message lost');

    const p2 = await producerOn(t, b);
    await produceAll(p2, range(50, 55));
    await waitFor(() => distinct(x.got).length >= 55, CROSS_MS, 'the 5 produced on B');
    await settle(x.socket);
    assert.deepEqual(distinct(x.got).slice(50), range(50, 55));
    await ackAll(x);
    await b.stop();
  });

test('kill -9 of the node a consumer was online on, with deliveries in flight unACKed: they come again on B',
  { skip }, async (t) => {
    const { prefix, store, nodes: [a, b] } = await cluster(t, 2);
    const p = await producerOn(t, a);
    const x = await consumerOn(t, a);
    await homeIs(prefix, 'node-a');
    await produceAll(p, range(0, 10));
    await waitFor(() => distinct(x.got).length >= 10, CROSS_MS, 'the 10 delivered on A');
    await a.crash();
    // The name stays held by the dead node until its lease ends (cluster_names.test.js).
    await waitFor(async () => (await nameHolder(prefix)) === null, ADOPT_MS, 'the name x swept');

    await adoptedOn(t, b, { prefix, store }, 10, 'none lost');
    await b.stop();
  });

test('a node restarted under a new node id (the default: a random one per process) finds its durable backlog: it adopts its old section',
  { skip }, async (t) => {
    const prefix = clusterPrefix(t, REDIS_URL);
    const store = storePrefix(t);
    const settings = { cluster: { node_lease_ms: LEASE_MS }, storage_options: { url: REDIS_URL, prefix: store } };
    const first = await startNode(t, { url: REDIS_URL, prefix, settings, args: ['--storage', 'redis'] });
    const p = await producerOn(t, first);
    const x = await consumerOn(t, first);
    const [[firstId]] = await redis(REDIS_URL, ['HVALS', `${prefix}:homes:default`]);
    await leave(prefix, x);
    await produceAll(p, range(0, 5));
    await first.stop();

    const second = await startNode(t, { url: REDIS_URL, prefix, settings, args: ['--storage', 'redis'] });
    const again = await consumerOn(t, second);
    await waitFor(() => distinct(again.got).length >= 5, ADOPT_MS, 'the 5 on the restarted node');
    assert.deepEqual(distinct(again.got), range(0, 5), 'in order, none lost');
    await ackAll(again);
    await waitFor(async () => (await rows(store, firstId)) === 0, CROSS_MS, 'the old section empty');
    const [[secondId]] = await redis(REDIS_URL, ['HVALS', `${prefix}:homes:default`]);
    assert.notEqual(secondId, firstId);
    await waitFor(async () => (await redis(REDIS_URL, ['HEXISTS', `${prefix}:sections`, firstId]))[0] === 0, CROSS_MS,
      'the old section dropped');
    await second.stop();
  });

test('kill -9 under load: our C++ client (siomq sub --durable --ack, two URLs) moves to the other node, and every message confirmed as stored reaches it',
  { skip }, async (t) => {
    const { prefix, nodes: [a, b] } = await cluster(t, 2);
    const cli = makeCli(t, { url: null });
    const sub = await cli.start(['sub', 'e', '--producer', 'p', '--consumer', 'x', '--durable', '--ack', '--json', '-s', `${a.url},${b.url}`]);
    const seen = new Set();
    let out = '';
    sub.child.stdout.on('data', (d) => {
      out += d;
      let nl;
      while ((nl = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        try { seen.add(JSON.parse(line).message.n); } catch { /* not a delivery */ }
      }
    });
    await homeIs(prefix, 'node-a');
    // The producer on B: each message's copy is stored on A (the home) until A dies, then on B.
    const p = await producerOn(t, b);
    const promised = [];  // confirmed with a stored copy
    let others = 0;       // refused, timed out, or stored nowhere (between A's lease end and its adoption)
    let running = true;
    let n = 0;
    const load = (async () => {
      while (running) {
        const k = n++;
        const confirm = await p.timeout(10000 * TIME_SCALE).emitWithAck('PRODUCE', { event: 'e', from: 'p', message: { n: k } })
          .catch(() => null);
        if (confirm && confirm.ok && confirm.stored === 1) promised.push(k);
        else others++;
      }
    })();
    await waitFor(() => promised.length >= 50, CROSS_MS, '50 confirmed while A is the home');
    await a.crash();
    const atCrash = promised.length;
    await waitFor(() => promised.length >= atCrash + 50, ADOPT_MS, '50 more confirmed after the kill');
    running = false;
    await load;
    await waitFor(() => promised.every((k) => seen.has(k)), ADOPT_MS, 'every confirmed message at the C++ consumer')
      .catch((e) => { throw new Error(`${e.message}; missing ${promised.filter((k) => !seen.has(k)).slice(0, 20)}`); });
    t.diagnostic(`${n} produced: ${promised.length} confirmed as stored, all delivered; ${others} not promised`);
    assert.ok(others < promised.length, `promised ${promised.length}, not promised ${others}`);
    await homeIs(prefix, 'node-b');
    await b.stop();
  });

test('a home is forgotten with the consumer\'s last subscription (UNSUBSCRIBE)', { skip }, async (t) => {
  const { prefix, nodes: [a] } = await cluster(t, 1);
  const x = await consumerOn(t, a);
  await homeIs(prefix, 'node-a');
  x.socket.emit('UNSUBSCRIBE', { event: 'e', producer: 'p', consumer: 'x' });
  await settle(x.socket);
  await waitFor(async () => (await homes(prefix)).length === 0, CROSS_MS, 'the home forgotten');
  await a.stop();
});

test('a node alone on the redis store that joins a cluster keeps its durable backlog: it moves into the node\'s section',
  { skip }, async (t) => {
    const prefix = clusterPrefix(t, REDIS_URL);
    const store = storePrefix(t);
    const storage = { storage_options: { url: REDIS_URL, prefix: store } };
    const alone = await startServer(t, { settings: storage, args: ['--storage', 'redis'] });
    const p = await producerOn(t, alone);
    const x = await consumerOn(t, alone);
    x.socket.close();
    await delay(200);
    await produceAll(p, range(0, 3));
    await alone.stop();
    assert.equal((await redis(REDIS_URL, ['HLEN', `${store}:rows`]))[0], 3);

    const node = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-a', settings: { ...storage, cluster: { node_lease_ms: LEASE_MS } },
      args: ['--storage', 'redis'] });
    assert.equal((await redis(REDIS_URL, ['HLEN', `${store}:rows`]))[0], 0, 'moved out of the old keys');
    assert.equal(await rows(store, 'node-a'), 3, 'into the node\'s section');
    const again = await consumerOn(t, node);
    await waitFor(() => distinct(again.got).length >= 3, CROSS_MS, 'the 3 kept');
    assert.deepEqual(distinct(again.got), range(0, 3));
    await ackAll(again);
    await node.stop();
  });
