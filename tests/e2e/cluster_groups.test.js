// Consumer groups across a cluster's nodes (docs/scale-out.md "Consumer groups"): a message is delivered
// once per group in the whole cluster, its turns spread over the nodes where the group has online
// members (and over the members on each), while ungrouped subscribers everywhere get every message.
// Needs SIOMQ_TEST_REDIS_URL (the test script starts one) and redis-server on the PATH.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { waitFor } = require('./lib/clients');
const { redis } = require('./lib/redis');
const { clusterPrefix, startNode, delay, client, collect, settle, subscribe, CROSS_MS } = require('./lib/cluster');

const REDIS_URL = process.env.SIOMQ_TEST_REDIS_URL;
const skip = !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set';

// Until node `from` is known to have an online member of `group` in Redis, then a moment for the note.
async function groupShared(prefix, from, group) {
  await waitFor(async () => {
    const [fields] = await redis(REDIS_URL, ['HKEYS', `${prefix}:node:${from}:interest`]);
    return (fields || []).some((f) => f.includes(`"g${group.length}:${group}`));
  }, CROSS_MS, `node ${from}'s members of ${group} in its interest`);
  await delay(200);
}

test('one delivery per group across three nodes, spread over them; ungrouped subscribers get every message',
  { skip }, async (t) => {
    const prefix = clusterPrefix(t, REDIS_URL);
    const nodes = [];
    for (const id of ['node-a', 'node-b', 'node-c']) nodes.push(await startNode(t, { url: REDIS_URL, prefix, nodeId: id }));
    const [onA, onB, onC, plain, p] = await Promise.all([nodes[0], nodes[1], nodes[2], nodes[1], nodes[0]].map((n) => client(t, n)));
    const members = [[onA, 'w1'], [onB, 'w2'], [onC, 'w3']];
    for (const [s, name] of members) await subscribe(s, { event: 'job', producer: 'p', consumer: name, group: 'workers' });
    await subscribe(plain, { event: 'job', producer: 'p', consumer: 'audit' });
    const got = members.map(([s]) => collect(s, 'CONSUME-p-job'));
    const audit = collect(plain, 'CONSUME-p-job');
    await groupShared(prefix, 'node-b', 'workers');
    await groupShared(prefix, 'node-c', 'workers');
    const total = 300;
    for (let i = 0; i < total; i++) p.emit('PRODUCE', { event: 'job', from: 'p', message: i });
    await settle(p);
    await waitFor(() => got.reduce((n, l) => n + l.length, 0) === total && audit.length === total, CROSS_MS,
      'every job once in the group, and every job to the ungrouped subscriber');
    await delay(300);
    const all = got.flat().map((m) => m.message).sort((x, y) => x - y);
    assert.deepEqual(all, [...Array(total).keys()], 'each job exactly once across the group');
    for (const list of got) assert.ok(list.length >= total / 6, `spread: ${got.map((l) => l.length)}`);
    // A member leaving: its node has none online, so the turns go to the others only.
    onC.close();
    await waitFor(async () => {
      const [fields] = await redis(REDIS_URL, ['HKEYS', `${prefix}:node:node-c:interest`]);
      return !(fields || []).some((f) => f.includes('"g7:workers'));
    }, CROSS_MS, 'node C\'s member gone from its interest');
    await delay(200);
    for (const l of got) l.length = 0;
    for (let i = 0; i < 60; i++) p.emit('PRODUCE', { event: 'job', from: 'p', message: i });
    await waitFor(() => got[0].length + got[1].length === 60, CROSS_MS, 'the 60 jobs on A and B');
    await delay(300);
    assert.equal(got[2].length, 0);
    assert.ok(got[0].length > 0 && got[1].length > 0, `${got.map((l) => l.length)}`);
    for (const n of nodes) await n.stop();
  });

test('a group with no member on the producing node: every turn goes to the other nodes, once',
  { skip }, async (t) => {
    const prefix = clusterPrefix(t, REDIS_URL);
    const a = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-a' });
    const b = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-b' });
    const [p, m1, m2] = [await client(t, a), await client(t, b), await client(t, b)];
    await subscribe(m1, { event: 'e', producer: 'TYO-MQ-ALL', consumer: 'm1', group: 'g' });
    await subscribe(m2, { event: 'e', producer: 'TYO-MQ-ALL', consumer: 'm2', group: 'g' });
    const got = [collect(m1, 'CONSUME-tyo-mq-all-e'), collect(m2, 'CONSUME-tyo-mq-all-e')];
    await groupShared(prefix, 'node-b', 'g');
    for (let i = 0; i < 40; i++) p.emit('PRODUCE', { event: 'e', from: 'anyone', message: i });
    await waitFor(() => got[0].length + got[1].length === 40, CROSS_MS, 'the 40 messages on B');
    await delay(300);
    assert.equal(got[0].length + got[1].length, 40);
    assert.equal(got[0].length, 20, 'node B takes turns among its own members');
    await a.stop();
    await b.stop();
  });
