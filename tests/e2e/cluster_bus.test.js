// The bus across a cluster's nodes (docs/scale-out.md "The bus across nodes"): core pub/sub with `*` and
// `>` reaches subscribers on every node (in order, data, header and reply intact); a queue group gets each
// message once in the whole cluster, spread over its members wherever they are; request/reply works with
// the responder on another node, and "no responders" is answered only when nobody anywhere subscribes; a
// stream binding a subject on one node stores what is published on another; faults: redis away and back, a
// node killed (with our C++ client moving to another node under load).
// Needs SIOMQ_TEST_REDIS_URL (the test script starts one) and redis-server on the PATH.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { connectV4, waitFor, TIME_SCALE } = require('./lib/clients');
const { redis } = require('./lib/redis');
const { call, ok, fails, inbox } = require('./lib/bus');
const { clusterPrefix, startNode, privateRedis, delay, CROSS_MS } = require('./lib/cluster');
const { makeCli } = require('./lib/cli');

const REDIS_URL = process.env.SIOMQ_TEST_REDIS_URL;
const skip = !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set';
const LEASE_MS = 2000;

async function open(t, node, nsp = '') {
  const s = await connectV4(`${node.url}${nsp}`, { transports: ['websocket'] });
  t.after(() => s.close());
  return s;
}

// Until node `from`'s interest in Redis holds a term containing `text`, then a moment for the other
// nodes' directories (built at most every 20 ms).
async function shared(prefix, from, text) {
  await waitFor(async () => {
    const [fields] = await redis(REDIS_URL, ['HKEYS', `${prefix}:node:${from}:interest`]);
    return (fields || []).some((f) => f.includes(text));
  }, CROSS_MS, `${text} in node ${from}'s interest`);
  await delay(200 * TIME_SCALE);
}
async function unshared(prefix, from, text) {
  await waitFor(async () => {
    const [fields] = await redis(REDIS_URL, ['HKEYS', `${prefix}:node:${from}:interest`]);
    return !(fields || []).some((f) => f.includes(text));
  }, CROSS_MS, `${text} gone from node ${from}'s interest`);
  await delay(200 * TIME_SCALE);
}

async function threeNodes(t) {
  const prefix = clusterPrefix(t, REDIS_URL);
  const nodes = [];
  for (const id of ['node-a', 'node-b', 'node-c']) nodes.push(await startNode(t, { url: REDIS_URL, prefix, nodeId: id }));
  return { prefix, nodes };
}

test('core pub/sub across nodes: wildcards, data, header and reply intact, in order; unsub stops it',
  { skip }, async (t) => {
    const { prefix, nodes } = await threeNodes(t);
    const [pub, onA, onB, onC] = await Promise.all([nodes[0], nodes[0], nodes[1], nodes[2]].map((n) => open(t, n)));
    const [gotA, gotB, gotC] = [inbox(onA), inbox(onB), inbox(onC)];
    await ok(onA, 'sub', { subject: 'orders.*' });
    const { sid: sidB } = await ok(onB, 'sub', { subject: 'orders.*' });
    await ok(onC, 'sub', { subject: 'orders.>' });
    await shared(prefix, 'node-b', '"borders.*"');
    await shared(prefix, 'node-c', '"borders.>"');

    await ok(pub, 'pub', { subject: 'orders.new', data: Buffer.from([0, 1, 2, 255]), header: { 'X-A': '1' }, reply: 'back.here' });
    await ok(pub, 'pub', { subject: 'orders.new.deep', data: 'only for >' });
    const total = 200;
    for (let i = 0; i < total; i++) pub.emit('pub', { subject: 'orders.seq', data: String(i) });
    await waitFor(() => gotB.length === total + 1 && gotC.length === total + 2 && gotA.length === total + 1, CROSS_MS,
      'every message on every node that subscribes');
    await delay(200);
    assert.equal(gotB.length, total + 1, 'B: nothing extra (orders.* does not match orders.new.deep)');
    assert.equal(gotC.length, total + 2);
    const first = gotB[0];
    assert.equal(first.subject, 'orders.new');
    assert.equal(first.sid, sidB, 'the sid of the subscription on its own node');
    assert.deepEqual([...first.data], [0, 1, 2, 255], 'binary data crosses intact');
    assert.deepEqual(first.header, { 'X-A': '1' });
    assert.equal(first.reply, 'back.here');
    assert.deepEqual(gotC.map((m) => m.subject).slice(0, 2).sort(), ['orders.new', 'orders.new.deep']);
    assert.deepEqual(gotB.slice(1).map((m) => m.data.toString()), [...Array(total).keys()].map(String), 'in order');

    await ok(onB, 'unsub', { sid: sidB });
    await unshared(prefix, 'node-b', '"borders.*"');
    gotB.length = 0;
    gotC.length = 0;
    await ok(pub, 'pub', { subject: 'orders.late', data: 'x' });
    await waitFor(() => gotC.length === 1, CROSS_MS, 'C still subscribed');
    await delay(200);
    assert.equal(gotB.length, 0, 'B unsubscribed: nothing more');
    for (const n of nodes) await n.stop();
  });

test('queue groups across nodes: each message once in the whole cluster, spread; plain subscribers get all',
  { skip }, async (t) => {
    const { prefix, nodes } = await threeNodes(t);
    const [pub, mA, mB, mC, mC2, plain] = await Promise.all([0, 0, 1, 2, 2, 1].map((i) => open(t, nodes[i])));
    const members = [mA, mB, mC, mC2];
    const got = members.map((s) => inbox(s));
    for (const s of members) await ok(s, 'sub', { subject: 'work.*', queue: 'workers' });
    const audit = inbox(plain);
    await ok(plain, 'sub', { subject: 'work.>' });
    await shared(prefix, 'node-b', '"q7:workerswork.*"');
    await shared(prefix, 'node-c', '"q7:workerswork.*"');
    await shared(prefix, 'node-b', '"bwork.>"');
    const total = 300;
    for (let i = 0; i < total; i++) pub.emit('pub', { subject: 'work.item', data: String(i) });
    await waitFor(() => got.reduce((n, l) => n + l.length, 0) === total && audit.length === total, CROSS_MS,
      'each item once in the group, every item to the plain subscriber');
    await delay(300);
    const all = got.flat().map((m) => Number(m.data.toString())).sort((x, y) => x - y);
    assert.deepEqual(all, [...Array(total).keys()], 'each item exactly once across the group');
    const [a, b, c] = [got[0].length, got[1].length, got[2].length + got[3].length];
    assert.ok(a >= 50 && b >= 50 && c >= 50, `spread over the three nodes: ${a}/${b}/${c}`);
    assert.ok(got[2].length > 0 && got[3].length > 0, 'node C spreads its turns over its members');

    // No member on the publishing node: every turn goes to the others, still once each.
    mA.close();
    for (const l of got) l.length = 0;
    await unshared(prefix, 'node-a', '"q7:workerswork.*"');  // node A has dropped its member
    for (let i = 0; i < 60; i++) pub.emit('pub', { subject: 'work.item', data: String(i) });
    await waitFor(() => got[1].length + got[2].length + got[3].length === 60, CROSS_MS, 'the 60 items on B and C');
    await delay(300);
    assert.equal(got[0].length, 0);
    assert.equal(got[1].length + got[2].length + got[3].length, 60);
    assert.ok(got[1].length > 0 && got[2].length + got[3].length > 0, `${got.map((l) => l.length)}`);
    for (const n of nodes) await n.stop();
  });

test('request/reply across nodes: the responder elsewhere answers; no responders only when nobody anywhere',
  { skip }, async (t) => {
    const { prefix, nodes } = await threeNodes(t);
    const [requester, r1, r2] = await Promise.all([0, 1, 2].map((i) => open(t, nodes[i])));
    for (const [s, name] of [[r1, 'b'], [r2, 'c']]) {
      s.on('msg', (m) => {
        if (m.reply && m.subject === 'svc.echo') s.emit('pub', { subject: m.reply, data: Buffer.from(`${name}:${m.data}`), header: { who: name } });
      });
      await ok(s, 'sub', { subject: 'svc.echo', queue: 'svc' });
    }
    await fails(requester, 'request', { subject: 'svc.nobody', data: 'x' }, 503, /no responders/);
    await shared(prefix, 'node-b', '"q3:svcsvc.echo"');
    await shared(prefix, 'node-c', '"q3:svcsvc.echo"');
    const answers = { b: 0, c: 0 };
    for (let i = 0; i < 20; i++) {
      const r = await ok(requester, 'request', { subject: 'svc.echo', data: `ping${i}`, timeout_ms: 5000 });
      assert.match(r.msg.subject, /^_INBOX\./);
      const [who, data] = r.msg.data.toString().split(':');
      assert.equal(data, `ping${i}`);
      assert.deepEqual(r.msg.header, { who });
      answers[who]++;
    }
    assert.equal(answers.b + answers.c, 20);
    assert.ok(answers.b > 0 && answers.c > 0, `the group's turns spread over B and C: ${JSON.stringify(answers)}`);
    // A proxy on B hands the request on to a backend on C with the same reply subject: C's reply still
    // finds the requester on A (the inbox names A's node).
    r1.on('msg', (m) => { if (m.subject === 'svc.proxy') r1.emit('pub', { subject: 'svc.backend', data: m.data, reply: m.reply }); });
    await ok(r1, 'sub', { subject: 'svc.proxy' });
    r2.on('msg', (m) => { if (m.subject === 'svc.backend') r2.emit('pub', { subject: m.reply, data: Buffer.from(`backend:${m.data}`) }); });
    await ok(r2, 'sub', { subject: 'svc.backend' });
    await shared(prefix, 'node-b', '"bsvc.proxy"');
    await shared(prefix, 'node-c', '"bsvc.backend"');
    const proxied = await ok(requester, 'request', { subject: 'svc.proxy', data: 'deep', timeout_ms: 5000 });
    assert.equal(proxied.msg.data.toString(), 'backend:deep');
    // The inboxes were never shared as interest: a request costs the cluster no interest change.
    const [fields] = await redis(REDIS_URL, ['HKEYS', `${prefix}:node:node-a:interest`]);
    assert.ok(!(fields || []).some((f) => f.includes('_INBOX')), `node A's interest: ${fields}`);
    // Nobody anywhere again: 503 at once.
    r1.close();
    r2.close();
    await unshared(prefix, 'node-b', '"q3:svcsvc.echo"');
    await unshared(prefix, 'node-c', '"q3:svcsvc.echo"');
    await unshared(prefix, 'node-c', '"bsvc.backend"');
    const t0 = Date.now();
    await fails(requester, 'request', { subject: 'svc.echo', data: 'x', timeout_ms: 5000 }, 503, /no responders/);
    assert.ok(Date.now() - t0 < 2000, 'answered at once');
    for (const n of nodes) await n.stop();
  });

test('a stream on one node stores what is published to its subjects on another, deduplicated by Msg-Id; its stream.pub reaches other nodes',
  { skip }, async (t) => {
    const { prefix, nodes } = await threeNodes(t);
    const ctl = await open(t, nodes[1], '/control');
    await ok(ctl, 'stream.create', { name: 'ORDERS', subjects: ['orders.>'] });
    await shared(prefix, 'node-b', '"sorders.>"');
    const pub = await open(t, nodes[0]);
    for (let i = 0; i < 5; i++) await ok(pub, 'pub', { subject: `orders.${i}`, data: String(i) });
    await ok(pub, 'pub', { subject: 'orders.dup', data: 'once', header: { 'Msg-Id': 'm-1' } });
    await ok(pub, 'pub', { subject: 'orders.dup', data: 'once', header: { 'Msg-Id': 'm-1' } });
    await ok(pub, 'pub', { subject: 'other.x', data: 'not bound' });
    await fails(pub, 'request', { subject: 'orders.req', data: 'x' }, 503, /no responders/);  // a stream answers none
    await waitFor(async () => (await ok(ctl, 'stream.info', { name: 'ORDERS' })).state.messages === 6, CROSS_MS,
      'the five messages and one of the duplicates in the stream on B');
    await delay(300);
    assert.equal((await ok(ctl, 'stream.info', { name: 'ORDERS' })).state.messages, 6);
    // A stream.pub on B reaches core subscribers on C, as a pub does (and is stored once, on B).
    const onC = await open(t, nodes[2]);
    const gotC = inbox(onC);
    await ok(onC, 'sub', { subject: 'orders.*' });
    await shared(prefix, 'node-c', '"borders.*"');
    const onB = await open(t, nodes[1]);
    const { seq } = await ok(onB, 'stream.pub', { subject: 'orders.api', data: 'via the stream' });
    assert.equal(seq, 7);
    await waitFor(() => gotC.length === 1, CROSS_MS, 'the stream.pub on C');
    assert.equal(gotC[0].data.toString(), 'via the stream');
    await delay(200);
    assert.equal((await ok(ctl, 'stream.info', { name: 'ORDERS' })).state.messages, 7, 'not stored twice');
    for (const n of nodes) await n.stop();
  });

test('faults: while redis is away each node serves its own bus clients and a request only others could answer is 503 at once; after, the bus crosses again',
  async (t) => {
    const r = await privateRedis(t);
    const prefix = 'siomq-e2e-bus-outage';
    const a = await startNode(t, { url: r.url, prefix, nodeId: 'node-a' });
    const b = await startNode(t, { url: r.url, prefix, nodeId: 'node-b' });
    const [pub, localSub, requester] = await Promise.all([a, a, a].map((n) => open(t, n)));
    const [remoteSub, responder] = await Promise.all([b, b].map((n) => open(t, n)));
    const [local, remote] = [inbox(localSub), inbox(remoteSub)];
    await ok(localSub, 'sub', { subject: 'tick' });
    await ok(remoteSub, 'sub', { subject: 'tick' });
    responder.on('msg', (m) => { if (m.reply) responder.emit('pub', { subject: m.reply, data: 'pong' }); });
    await ok(responder, 'sub', { subject: 'svc' });
    await waitFor(async () => {
      await ok(pub, 'pub', { subject: 'tick', data: 'warm-up' });
      await delay(50);
      return remote.length > 0;
    }, CROSS_MS, 'a tick crossing');
    assert.equal((await ok(requester, 'request', { subject: 'svc', data: 'x', timeout_ms: 5000 })).msg.data.toString(), 'pong');
    await r.kill();
    await a.waitForLog(/cluster: redis at \S+ lost/, 10000 * TIME_SCALE);
    local.length = 0;
    await ok(pub, 'pub', { subject: 'tick', data: 'during' });
    await waitFor(() => local.length === 1, CROSS_MS, 'local delivery during the outage');
    const t0 = Date.now();
    await fails(requester, 'request', { subject: 'svc', data: 'x', timeout_ms: 5000 }, 503, /no responders/);
    assert.ok(Date.now() - t0 < 2000, 'the other nodes cannot be reached: no responders at once');
    await r.start();
    await a.waitForLog(/cluster: redis at \S+ is back/, 10000 * TIME_SCALE);
    await b.waitForLog(/cluster: redis at \S+ is back/, 10000 * TIME_SCALE);
    // The restarted redis lost every node's interest: each writes its own again, and the bus crosses.
    remote.length = 0;
    await waitFor(async () => {
      await ok(pub, 'pub', { subject: 'tick', data: 'after' });
      await delay(100);
      return remote.some((m) => m.data.toString() === 'after');
    }, CROSS_MS, 'the bus across nodes after redis came back');
    assert.equal((await ok(requester, 'request', { subject: 'svc', data: 'x', timeout_ms: 5000 })).msg.data.toString(), 'pong');
    await a.stop();
    await b.stop();
  });

test('faults: a node killed with kill -9 stops being given requests once its lease ends: no responders again',
  { skip }, async (t) => {
    const prefix = clusterPrefix(t, REDIS_URL);
    const settings = { cluster: { node_lease_ms: LEASE_MS } };
    const a = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-a', settings });
    const b = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-b', settings });
    const requester = await open(t, a);
    const responder = await open(t, b);
    responder.on('msg', (m) => { if (m.reply) responder.emit('pub', { subject: m.reply, data: 'pong' }); });
    await ok(responder, 'sub', { subject: 'svc', queue: 'q' });
    await shared(prefix, 'node-b', '"q1:qsvc"');
    assert.equal((await ok(requester, 'request', { subject: 'svc', data: 'x', timeout_ms: 5000 })).msg.data.toString(), 'pong');
    await b.crash();
    // Within a lease and a heartbeat, with room for a slow sanitizer build: then no responders, at once.
    await waitFor(async () => {
      const r = await call(requester, 'request', { subject: 'svc', data: 'x', timeout_ms: 300 });
      return !r.ok && r.error.code === 503;
    }, 3 * LEASE_MS * TIME_SCALE + 5000, 'the dead node\'s responders forgotten');
    await a.stop();
  });

test('faults: kill -9 under load — our C++ client (siomq reply, two URLs) moves to the other node and answers again',
  { skip }, async (t) => {
    const prefix = clusterPrefix(t, REDIS_URL);
    const settings = { cluster: { node_lease_ms: LEASE_MS } };
    const a = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-a', settings });
    const b = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-b', settings });
    const c = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-c', settings });
    const cli = makeCli(t, { url: null });
    // The responder: the C++ client on B, with C as its other URL.
    await cli.start(['reply', 'svc.k', 'pong', '--queue', 'k', '-s', `${b.url},${c.url}`]);
    await shared(prefix, 'node-b', '"q1:ksvc.k"');
    const requester = await open(t, a);
    let answered = 0;
    let failed = 0;
    let running = true;
    const load = (async () => {
      while (running) {
        const r = await call(requester, 'request', { subject: 'svc.k', data: 'x', timeout_ms: 300 * TIME_SCALE });
        if (r.ok && r.msg.data.toString() === 'pong') answered++;
        else failed++;
      }
    })();
    await waitFor(() => answered >= 20, CROSS_MS, 'answers from the C++ responder on B');
    await b.crash();
    const atCrash = answered;
    // Its client reconnects to C and subscribes there; A sends C the requests (B's turn ends with its
    // lease at the latest).
    await shared(prefix, 'node-c', '"q1:ksvc.k"');
    await waitFor(() => answered >= atCrash + 20, 3 * LEASE_MS * TIME_SCALE + CROSS_MS, 'answers again, from node C');
    running = false;
    await load;
    assert.ok(failed < answered, `answered ${answered}, failed ${failed} (while B was dying)`);
    await a.stop();
    await c.stop();
  });
