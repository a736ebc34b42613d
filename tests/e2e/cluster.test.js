// Several siomq nodes on one Redis (tyo-mq §10, docs/scale-out.md): live messages relayed between nodes,
// broadcasts re-run on each node, the settings document shared (last writer wins, a late node adopts
// it), a manager proof's nonce used once in the whole cluster, enrolment requests filed, polled and
// decided from any node, the E2EE key directory shared, a reference (Node.js tyo-mq) node on the
// same keys — played by this test from §10's shapes — and Redis going away, or being cut off, and coming
// back. Needs SIOMQ_TEST_REDIS_URL (the test script starts one) and redis-server on the PATH.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { connectV4, emitAck, once: onceArgs, waitFor, TIME_SCALE } = require('./lib/clients');
const { manage, authenticate, signedAck, sha256 } = require('./lib/tyo_auth');
const { redis, subscriber } = require('./lib/redis');
const {
  clusterPrefix, startNode, privateRedis, pausableProxy, delay, client, collect, settle, subscribe, CROSS_MS, warmUp, real,
} = require('./lib/cluster');

const REDIS_URL = process.env.SIOMQ_TEST_REDIS_URL;
const ADMIN = 'cluster-admin-token';
const once = async (socket, event) => (await onceArgs(socket, event))[0];

async function threeNodes(t, settings = {}) {
  const prefix = clusterPrefix(t, REDIS_URL);
  const nodes = [];
  for (const id of ['node-a', 'node-b', 'node-c']) nodes.push(await startNode(t, { url: REDIS_URL, prefix, nodeId: id, settings }));
  return { prefix, nodes };
}

test('three nodes: a message produced on one reaches exact, TM-ALL and topic subscribers on every node, once each',
  { skip: !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set' }, async (t) => {
    const { nodes: [a, b, c] } = await threeNodes(t);
    const [p, onA, onB, onC, topicC] = await Promise.all([a, a, b, c, c].map((n) => client(t, n)));
    p.emit('PRODUCER', { name: 'orders' });
    await subscribe(onA, { event: 'placed', producer: 'orders', consumer: 'audit' });
    await subscribe(onB, { event: 'placed', producer: 'orders', consumer: 'mailer' });
    await subscribe(onC, { event: 'TM-ALL', producer: 'orders', consumer: 'all-of-orders' });
    await subscribe(topicC, { event: 'placed/+', producer: 'TYO-MQ-ALL', consumer: 'topics', mode: 'topic' });
    const allA = collect(onA, 'CONSUME-orders-placed');
    const allB = collect(onB, 'CONSUME-orders-placed');
    const allC = collect(onC, 'CONSUME-orders-TM-ALL');
    const allTopic = [];
    topicC.onAny((event, m) => { if (event.startsWith('CONSUME-')) allTopic.push(m); });
    // Until each node's subscriptions are in node A's view of the cluster's interest.
    await warmUp(p, { event: 'placed/warm', from: 'orders' }, () => allTopic.length > 0 && allC.length > 0);
    await warmUp(p, { event: 'placed', from: 'orders' }, () => allB.length > 0);
    await settle(p, onA, onB, onC, topicC);
    const [gotA, gotB, gotC] = [allA, allB, allC].map((list) => ({ get length() { return real(list).length; }, list }));
    const gotTopic = { get length() { return real(allTopic).length; } };
    p.emit('PRODUCE', { event: 'placed', from: 'orders', message: { id: 1, total: 9.5 } });
    p.emit('PRODUCE', { event: 'placed/eu', from: 'orders', message: 'eu', contentType: 'text/plain' });
    await waitFor(() => gotA.length === 1 && gotB.length === 1 && gotC.length === 2 && gotTopic.length === 1, CROSS_MS,
      'deliveries on all three nodes');
    assert.deepEqual(real(allB)[0], { event: 'placed', message: { id: 1, total: 9.5 }, from: 'orders' });
    assert.deepEqual(real(allA)[0], real(allB)[0]);
    assert.deepEqual(real(allC)[0], real(allB)[0]);
    assert.deepEqual(real(allTopic)[0], { event: 'placed/eu', message: 'eu', from: 'orders', content_type: 'text/plain' });
    // And the other way: produced on C, delivered on A and B.
    const q = await client(t, c);
    await warmUp(q, { event: 'placed', from: 'orders' }, () => allA.length - real(allA).length > 1 && allB.length - real(allB).length > 1);
    q.emit('PRODUCE', { event: 'placed', from: 'orders', message: 2 });
    await waitFor(() => gotA.length === 2 && gotB.length === 2, CROSS_MS, 'deliveries from node C');
    await delay(200);
    await settle(p, onA, onB, onC, topicC, q);
    assert.deepEqual([gotA.length, gotB.length, gotC.length, gotTopic.length], [2, 2, 3, 1], 'nothing delivered twice');
    for (const n of [a, b, c]) await n.stop();
  });

test('binary attachments cross nodes as binary: a message, a broadcast, and the §10 envelope carries them in base64',
  { skip: !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set' }, async (t) => {
    const { prefix, nodes: [a, b] } = await threeNodes(t);
    const observer = await subscriber(REDIS_URL, [`${prefix}:node:node-b`], { pattern: true });
    t.after(() => observer.close());
    const [p, c] = [await client(t, a), await client(t, b)];
    p.emit('PRODUCER', { name: 'p' });
    c.emit('CONSUMER', { name: 'member' });
    await subscribe(c, { event: 'blob', producer: 'p', consumer: 'c' });
    const got = collect(c, 'CONSUME-p-blob');
    await warmUp(p, { event: 'blob', from: 'p' }, () => got.length > 0);
    p.emit('PRODUCE', { event: 'blob', from: 'p', message: { data: Buffer.from([1, 2, 3]), more: [Buffer.from('hi')] } });
    await waitFor(() => real(got).length === 1, CROSS_MS, 'the binary message on node B');
    const m = real(got)[0].message;
    assert.ok(Buffer.isBuffer(m.data) || m.data instanceof ArrayBuffer, 'delivered as binary');
    assert.deepEqual([...Buffer.from(m.data)], [1, 2, 3]);
    assert.equal(Buffer.from(m.more[0]).toString(), 'hi');
    const envelope = JSON.parse(observer.messages.map((x) => x.message).find((x) => x.includes('attachments')));
    assert.deepEqual(envelope.payload.attachments, ['AQID', 'aGk=']);
    assert.deepEqual(envelope.payload.message, { data: { _placeholder: true, num: 0 }, more: [{ _placeholder: true, num: 1 }] });
    const news = once(c, 'CONSUME-News');
    p.emit('PRODUCE', { event: 'News', from: 'p', message: Buffer.from('all'), method: 'broadcast', broadcast: 'realm' });
    assert.equal(Buffer.from((await news).message).toString(), 'all');
    for (const n of [a, b]) await n.stop();
  });

test('a broadcast is re-run on every node: the realm\'s members everywhere get it',
  { skip: !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set' }, async (t) => {
    const { nodes: [a, b, c] } = await threeNodes(t);
    const [p, m1, m2] = await Promise.all([a, b, c].map((n) => client(t, n)));
    p.emit('PRODUCER', { name: 'Hub' });
    m1.emit('CONSUMER', { name: 'listener-b' });
    m2.emit('PRODUCER', { name: 'someone-c' });
    await settle(p, m1, m2);
    const got = [once(m1, 'CONSUME-hub-news'), once(m2, 'CONSUME-News')];
    p.emit('PRODUCE', { event: 'News', from: 'Hub', message: 'hi', method: 'broadcast', broadcast: 'realm' });
    for (const payload of await Promise.all(got)) assert.deepEqual(payload, { event: 'News', message: 'hi', from: 'Hub' });
    for (const n of [a, b, c]) await n.stop();
  });

test('settings changed on one node are adopted by the others and by a node that joins later; a proof works once in the cluster',
  { skip: !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set' }, async (t) => {
    const settings = { auth: { enabled: true, tokens: [{ token: ADMIN, realm: '*', role: 'admin' }], realms: { default: { required: false } } } };
    const { prefix, nodes: [a, b, c] } = await threeNodes(t, settings);
    const onA = await client(t, a);
    const body = { command: 'add_realm', realm: 'shop', key: 'shop-psk', manager_key: 'shop-manager' };
    const proof = require('./lib/tyo_auth').sign('AUTH_MANAGEMENT_COMMAND', body, ADMIN);
    const added = await onA.timeout(5000).emitWithAck('AUTH_MANAGEMENT_COMMAND', { body, proof });
    assert.equal(added.ok, true, JSON.stringify(added));
    // The same proof on another node: its nonce was claimed in Redis by node A.
    const onB = await client(t, b);
    const replayed = await onB.timeout(5000).emitWithAck('AUTH_MANAGEMENT_COMMAND', { body, proof });
    assert.deepEqual(replayed, { ok: false, code: 401, message: 'Manager proof nonce was already used' });
    // §10's keys, as a reference node reads them.
    const [doc, rev] = await redis(REDIS_URL, ['GET', `${prefix}:settings`], ['GET', `${prefix}:settings:rev`]);
    const shared = JSON.parse(doc);
    assert.equal(shared.node_id, 'node-a');
    assert.ok(shared.settings.auth.realms.shop, 'the new realm is in the shared document');
    assert.ok(!Number.isNaN(Date.parse(shared.updated_at)));
    assert.ok(Number(rev) >= 1);
    // Nodes B and C adopt it: the realm's key works there.
    for (const node of [b, c]) {
      await waitFor(async () => {
        const s = await connectV4(node.url, { transports: ['websocket'] });
        try { return (await authenticate(s, { realm: 'shop', role: 'consumer', key: 'shop-psk' })).event === 'AUTH_OK'; } finally { s.close(); }
      }, CROSS_MS, `node ${node.port} adopting the new realm`);
    }
    // Each node keeps its own cluster block (its node_id) in its settings file.
    const fileB = JSON.parse(require('node:fs').readFileSync(b.settingsFile, 'utf8'));
    assert.equal(fileB.cluster.node_id, 'node-b');
    assert.ok(fileB.auth.realms.shop);
    // A node joining later serves with the cluster's settings from its first client on.
    const d = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-d', settings });
    const onD = await client(t, d);
    assert.equal((await authenticate(onD, { realm: 'shop', role: 'consumer', key: 'shop-psk' })).event, 'AUTH_OK');
    // A change on the late node travels back (last writer wins).
    const removed = await manage(await client(t, d), { command: 'remove_realm', realm: 'shop' }, ADMIN);
    assert.equal(removed.ok, true, JSON.stringify(removed));
    await waitFor(async () => {
      const got = await manage(onA, { command: 'get' }, ADMIN);
      return got.ok && got.settings.realms && !got.settings.realms.shop;
    }, CROSS_MS, 'node A adopting the removal');
    for (const n of [a, b, c, d]) await n.stop();
  });

test('a realm removed on one node is released on the others: their sockets in it disconnected, the rest untouched',
  { skip: !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set' }, async (t) => {
    const settings = {
      auth: {
        enabled: true, tokens: [{ token: ADMIN, realm: '*', role: 'admin' }],
        realms: { default: { required: false }, shop: { key: 'shop-psk' }, other: { key: 'other-psk' } },
      },
    };
    const { prefix, nodes: [a, b, c] } = await threeNodes(t, settings);
    const inShop = await client(t, b);
    const inOther = await client(t, c);
    assert.equal((await authenticate(inShop, { realm: 'shop', role: 'consumer', key: 'shop-psk' })).event, 'AUTH_OK');
    assert.equal((await authenticate(inOther, { realm: 'other', role: 'consumer', key: 'other-psk' })).event, 'AUTH_OK');
    // Forged notes (anyone who can write to Redis): a realm the settings hold, and "default", stay.
    const inDefault = await client(t, b);
    for (const realm of ['other', 'default']) {
      await redis(REDIS_URL, ['PUBLISH', `${prefix}:realm:removed`, JSON.stringify({ node_id: 'forger', realm })]);
      await c.waitForLog(new RegExp(`removed realm '${realm}', which this node's settings hold; kept`), CROSS_MS);
    }
    await settle(inOther, inDefault);
    assert.equal(inOther.connected && inDefault.connected, true);
    const gone = new Promise((resolve) => inShop.on('disconnect', resolve));
    const removed = await manage(await client(t, a), { command: 'remove_realm', realm: 'shop' }, ADMIN);
    assert.equal(removed.ok, true, JSON.stringify(removed));
    await Promise.race([gone, delay(CROSS_MS).then(() => { throw new Error('the socket in the removed realm stayed on node B'); })]);
    await b.waitForLog(/realm 'shop' removed on node node-a: 1 sockets disconnected here/, CROSS_MS);
    await settle(inOther);
    assert.equal(inOther.connected, true);
    for (const n of [a, b, c]) await n.stop();
  });

test('a reference node on the same keys: its messages reach siomq subscribers, ours reach it in §10\'s shape, its settings are adopted; junk on the channels changes nothing',
  { skip: !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set' }, async (t) => {
    const prefix = clusterPrefix(t, REDIS_URL);
    const settings = { auth: { enabled: true, tokens: [{ token: ADMIN, realm: '*', role: 'admin' }], realms: { default: { required: false } } } };
    const a = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-a', settings });
    const ref = await subscriber(REDIS_URL, [`${prefix}:messages`]);
    t.after(() => ref.close());
    // What node-a published (the junk this test publishes itself is skipped).
    const fromA = () => ref.messages.map((m) => { try { return JSON.parse(m.message); } catch { return null; } })
      .filter((m) => m && m.node_id === 'node-a' && m.payload && m.payload.message !== undefined && m.payload.ttl !== 60);
    const [p, c] = [await client(t, a), await client(t, a)];
    await subscribe(c, { event: 'placed', producer: 'orders', consumer: 'mailer' });
    const got = collect(c, 'CONSUME-orders-placed');
    // The reference node's message, as it publishes it.
    const refPayload = {
      realm: 'default', event: 'placed', message: { from: 'ref', n: 1 }, producer: 'orders', ttl: 60, guaranteed: false,
      enc: null, to: null, contentType: null, method: null, broadcast: null, group: null,
    };
    // Junk first: none of it may be delivered or stop the node.
    const junk = ['not json', '{"node_id":"ref-1"}', '{"node_id":"ref-1","payload":{"realm":"default"}}',
      '{"node_id":"ref-1","payload":{"realm":"default","event":5}}', '[' .repeat(5000) + ']'.repeat(5000),
      JSON.stringify({ node_id: 'node-a', payload: refPayload })];  // its own node_id: ignored
    for (const j of junk) await redis(REDIS_URL, ['PUBLISH', `${prefix}:messages`, j]);
    await redis(REDIS_URL, ['PUBLISH', `${prefix}:messages`, JSON.stringify({ node_id: 'ref-1', payload: refPayload })]);
    await waitFor(() => got.length >= 1, CROSS_MS, 'the reference node\'s message');
    await delay(200);
    assert.equal(got.length, 1);
    assert.deepEqual(got[0], { event: 'placed', message: { from: 'ref', n: 1 }, from: 'orders' });
    // Ours, as the reference node reads it.
    p.emit('PRODUCE', { event: 'placed', from: 'orders', message: { n: 2 }, ttl: 30, to: ['x'] });
    await waitFor(() => fromA().length === 1, CROSS_MS, 'our relayed message');
    const ours = fromA()[0];
    assert.deepEqual(ours.payload, {
      realm: 'default', event: 'placed', message: { n: 2 }, producer: 'orders', ttl: 30, guaranteed: false,
      enc: null, to: ['x'], contentType: null, method: null, broadcast: null, group: null,
    });
    // The reference node changes the settings: SET, INCR, PUBLISH, as §10 says.
    const [doc] = await redis(REDIS_URL, ['GET', `${prefix}:settings`]);
    const next = JSON.parse(doc).settings;
    next.auth.tokens.push({ token: 'granted-by-ref', realm: 'default', role: 'consumer' });
    next.cluster = { enabled: true, node_id: 'ref-1', prefix };  // the reference's own block: not taken
    await redis(REDIS_URL, ['SET', `${prefix}:settings`, JSON.stringify({ settings: next, node_id: 'ref-1', updated_at: new Date().toISOString() })]);
    const [rev] = await redis(REDIS_URL, ['INCR', `${prefix}:settings:rev`]);
    await redis(REDIS_URL, ['PUBLISH', `${prefix}:settings:changed`, JSON.stringify({ revision: rev, node_id: 'ref-1' })]);
    await waitFor(async () => {
      const s = await connectV4(a.url, { transports: ['websocket'] });
      try { return (await authenticate(s, { token: 'granted-by-ref' })).event === 'AUTH_OK'; } finally { s.close(); }
    }, CROSS_MS, 'the reference node\'s token adopted');
    // Still node-a, still relaying.
    p.emit('PRODUCE', { event: 'placed', from: 'orders', message: 3 });
    await waitFor(() => fromA().length === 2, CROSS_MS, 'relay after adoption');
    await a.stop();
  });

test('enrolment across nodes: filed on A, polled on B, decided on C; the requester hears of it once its token works on A; a reference node\'s requests and decisions interoperate',
  { skip: !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set' }, async (t) => {
    const settings = {
      auth: {
        enabled: true, tokens: [{ token: ADMIN, realm: '*', role: 'admin' }],
        realms: { default: { required: false }, shop: { required: true, manager_key: 'shop-manager' } },
      },
    };
    const { prefix, nodes: [a, b, c] } = await threeNodes(t, settings);
    const readDoc = async () => JSON.parse((await redis(REDIS_URL, ['GET', `${prefix}:authreqs`]))[0] || '{}');
    const notes = await subscriber(REDIS_URL, [`${prefix}:authreq:decided`]);
    t.after(() => notes.close());
    // The requester on A; the moment it hears of the approval, it authenticates with its token on A.
    const requester = await client(t, a);
    const heard = new Promise((resolve) => requester.once('AUTHORIZATION_APPROVED', async (m) => {
      const s = await connectV4(a.url, { transports: ['websocket'] });
      try { resolve({ m, auth: await authenticate(s, { token: 'tok-1' }) }); } finally { s.close(); }
    }));
    const request = { realm: 'shop', client_id: 'dev-1', client_name: 'phone', client_token: 'tok-1', role: 'consumer',
      challenge_response: { code: [1, 2] } };
    const [filed] = await emitAck(requester, 'AUTHORIZATION_REQUEST', request);
    assert.equal(filed.ok, true, JSON.stringify(filed));
    // In Redis, in the reference's shape: the whole request, where its requester is included.
    const stored = (await readDoc())[filed.request_id];
    assert.equal(stored.status, 'pending');
    assert.equal(stored.client_token, 'tok-1');
    assert.equal(stored.client_token_hash, sha256('tok-1'));
    assert.deepEqual(stored.challenge_response, { code: [1, 2] });
    assert.equal(stored.node_id, 'node-a');
    assert.equal(typeof stored.socket_id, 'string');
    assert.ok(!Number.isNaN(Date.parse(stored.created_at)));
    // The realm's manager polls on B: the request, never its token.
    const mgrB = await client(t, b);
    const next = await signedAck(mgrB, 'AUTHORIZATION_NEXT', { realm: 'shop' }, 'shop-manager');
    assert.equal(next.ok, true, JSON.stringify(next));
    assert.equal(next.request.request_id, filed.request_id);
    assert.equal(next.request.client_token_hash, sha256('tok-1'));
    assert.equal(next.request.client_token, undefined);
    // And decides on C; a second decision (on B) finds nothing pending.
    const mgrC = await client(t, c);
    const decided = await signedAck(mgrC, 'AUTHORIZATION_DECIDE', { request_id: filed.request_id, approved: true }, 'shop-manager');
    assert.equal(decided.ok, true, JSON.stringify(decided));
    assert.equal(decided.request.status, 'approved');
    const again = await signedAck(mgrB, 'AUTHORIZATION_DECIDE', { request_id: filed.request_id, approved: false }, ADMIN);
    assert.deepEqual(again, { ok: false, code: 404, message: 'Pending authorization request not found' });
    const { m, auth } = await heard;
    assert.deepEqual(m, { request_id: filed.request_id, realm: 'shop', role: 'consumer' });
    assert.equal(auth.event, 'AUTH_OK', JSON.stringify(auth));
    assert.equal((await readDoc())[filed.request_id].status, 'approved');
    await waitFor(() => notes.messages.length === 1, CROSS_MS, 'the decision note');
    const note = JSON.parse(notes.messages[0].message);
    assert.equal(note.node_id, 'node-c');
    assert.equal(note.request.request_id, filed.request_id);
    assert.equal(note.request.node_id, 'node-a');

    // A reference node's request (written as it writes one) is polled and rejected here; the note says so.
    const refRequest = {
      request_id: 'authreq-ref-1', status: 'pending', realm: 'shop', role: 'producer', client_id: 'dev-ref', client_name: 'ref',
      client_token: 'tok-ref', client_token_hash: sha256('tok-ref'), challenge_response: null,
      created_at: new Date().toISOString(), socket_id: 'ref-socket', node_id: 'ref-1',
    };
    const doc = await readDoc();
    doc[refRequest.request_id] = refRequest;
    await redis(REDIS_URL, ['SET', `${prefix}:authreqs`, JSON.stringify(doc)]);
    const refNext = await signedAck(mgrB, 'AUTHORIZATION_NEXT', {}, ADMIN);
    assert.equal(refNext.request.request_id, 'authreq-ref-1');
    const rejected = await signedAck(mgrB, 'AUTHORIZATION_DECIDE', { request_id: 'authreq-ref-1', approved: false, reason: 'unknown device' }, ADMIN);
    assert.equal(rejected.request.status, 'rejected');
    await waitFor(() => notes.messages.length === 2, CROSS_MS, 'the second decision note');
    const refNote = JSON.parse(notes.messages[1].message);
    assert.equal(refNote.node_id, 'node-b');
    assert.deepEqual({ ...refNote.request, decided_at: undefined },
      { ...refRequest, status: 'rejected', decision_reason: 'unknown device', decided_at: undefined });

    // A reference node decides a request filed on B: it adds the token (SET, INCR, PUBLISH) and announces.
    const requester2 = await client(t, b);
    const told = new Promise((resolve) => requester2.once('AUTHORIZATION_APPROVED', resolve));
    const [filed2] = await emitAck(requester2, 'AUTHORIZATION_REQUEST', { realm: 'shop', client_id: 'dev-2', client_name: 'tablet', client_token: 'tok-2' });
    assert.equal(filed2.ok, true, JSON.stringify(filed2));
    const doc2 = await readDoc();
    Object.assign(doc2[filed2.request_id], { status: 'approved', role: 'consumer', decided_at: new Date().toISOString(), decision_reason: null });
    await redis(REDIS_URL, ['SET', `${prefix}:authreqs`, JSON.stringify(doc2)]);
    const current = JSON.parse((await redis(REDIS_URL, ['GET', `${prefix}:settings`]))[0]).settings;
    current.auth.tokens.push({ token: 'tok-2', realm: 'shop', role: 'consumer', client_id: 'dev-2' });
    await redis(REDIS_URL, ['SET', `${prefix}:settings`, JSON.stringify({ settings: current, node_id: 'ref-1', updated_at: new Date().toISOString() })]);
    const [rev] = await redis(REDIS_URL, ['INCR', `${prefix}:settings:rev`]);
    await redis(REDIS_URL, ['PUBLISH', `${prefix}:settings:changed`, JSON.stringify({ revision: rev, node_id: 'ref-1' })],
      ['PUBLISH', `${prefix}:authreq:decided`, JSON.stringify({ node_id: 'ref-1', request: doc2[filed2.request_id] })]);
    assert.deepEqual(await told, { request_id: filed2.request_id, realm: 'shop', role: 'consumer' });
    assert.equal((await authenticate(await client(t, b), { token: 'tok-2' })).event, 'AUTH_OK');
    for (const n of [a, b, c]) await n.stop();
  });

test('the E2EE key directory across nodes: published on A, looked up on B and C, capped cluster-wide; a reference node\'s keys adopted; a late node copies it all',
  { skip: !REDIS_URL && 'SIOMQ_TEST_REDIS_URL is not set' }, async (t) => {
    const { prefix, nodes: [a, b, c] } = await threeNodes(t);
    const ask = async (socket, event, payload) => (await emitAck(socket, event, payload))[0];
    const readDoc = async () => JSON.parse((await redis(REDIS_URL, ['GET', `${prefix}:e2eekeys`]))[0] || '{}');
    const alice = await client(t, a);
    alice.emit('CONSUMER', { name: 'alice' });
    await settle(alice);
    assert.deepEqual(await ask(alice, 'KEY_PUBLISH', { identity: 'alice', key_id: 'k1', alg: 'ecdh-es-p256-a256gcm', public_key: 'QUxJQ0UtMQ==' }), { ok: true });
    // In Redis as §10's document, and on every node's KEY_LOOKUP.
    const stored = (await readDoc()).default.alice;
    assert.deepEqual({ ...stored[0], updated_at: undefined }, { key_id: 'k1', alg: 'ecdh-es-p256-a256gcm', public_key: 'QUxJQ0UtMQ==', updated_at: undefined });
    assert.match(stored[0].updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    for (const node of [b, c]) {
      const s = await client(t, node);
      await waitFor(async () => (await ask(s, 'KEY_LOOKUP', { identity: 'alice' })).keys.length === 1, CROSS_MS, `node ${node.port} copying alice's key`);
      assert.deepEqual(await ask(s, 'KEY_LOOKUP', { identity: 'alice' }), { keys: stored });
    }
    // The per-identity cap holds across nodes: alice (now on B) has 7 more keys, the 9th is refused there.
    alice.close();
    const alice2 = await client(t, b);
    alice2.emit('CONSUMER', { name: 'alice' });
    await settle(alice2);
    for (let i = 2; i <= 8; i++) {
      assert.deepEqual(await ask(alice2, 'KEY_PUBLISH', { identity: 'alice', key_id: `k${i}`, public_key: 'QUxJQ0U=' }), { ok: true });
    }
    const ninth = await ask(alice2, 'KEY_PUBLISH', { identity: 'alice', key_id: 'k9', public_key: 'QUxJQ0U=' });
    assert.equal(ninth.code, 429, JSON.stringify(ninth));
    const onC = await client(t, c);
    await waitFor(async () => (await ask(onC, 'KEY_LOOKUP', { identity: 'alice' })).keys.length === 8, CROSS_MS, 'eight keys on C');
    // A reference node writes bob's key and announces it; junk in the document is skipped.
    const doc = await readDoc();
    doc.default.bob = [{ key_id: 'default', alg: 'ecdh-es-p256-a256gcm', public_key: 'Qk9C', updated_at: new Date().toISOString() },
      { key_id: 'bad', public_key: 'not base64!' }];
    doc.broken = 7;
    await redis(REDIS_URL, ['SET', `${prefix}:e2eekeys`, JSON.stringify(doc)]);
    await redis(REDIS_URL, ['PUBLISH', `${prefix}:e2eekeys:changed`, JSON.stringify({ node_id: 'ref-1', realm: 'default', identity: 'bob' })]);
    await waitFor(async () => (await ask(onC, 'KEY_LOOKUP', { identity: 'bob' })).keys.length === 1, CROSS_MS, 'bob\'s key from the reference node');
    assert.equal((await ask(onC, 'KEY_LOOKUP', { identity: 'bob' })).keys[0].public_key, 'Qk9C');
    // A node joining later copies the whole directory.
    const d = await startNode(t, { url: REDIS_URL, prefix, nodeId: 'node-d' });
    const onD = await client(t, d);
    await waitFor(async () => (await ask(onD, 'KEY_LOOKUP', { identity: 'alice' })).keys.length === 8, CROSS_MS, 'node D copying the directory');
    assert.equal((await ask(onD, 'KEY_LOOKUP', { identity: 'bob' })).keys.length, 1);
    for (const n of [a, b, c, d]) await n.stop();
  });

test('redis goes away and comes back: each node keeps serving its own clients, says so once, and relays again',
  async (t) => {
    const r = await privateRedis(t);
    const prefix = 'siomq-e2e-outage';
    const a = await startNode(t, { url: r.url, prefix, nodeId: 'node-a' });
    const b = await startNode(t, { url: r.url, prefix, nodeId: 'node-b' });
    const [p, localC, remoteC] = [await client(t, a), await client(t, a), await client(t, b)];
    await subscribe(localC, { event: 'tick', producer: 'clock', consumer: 'local' });
    await subscribe(remoteC, { event: 'tick', producer: 'clock', consumer: 'remote' });
    const local = collect(localC, 'CONSUME-clock-tick');
    const remote = collect(remoteC, 'CONSUME-clock-tick');
    await warmUp(p, { event: 'tick', from: 'clock' }, () => remote.length > 0);
    p.emit('PRODUCE', { event: 'tick', from: 'clock', message: 1 });
    await waitFor(() => real(local).length === 1 && real(remote).length === 1, CROSS_MS, 'first tick on both nodes');
    await r.kill();
    await a.waitForLog(/cluster: redis at \S+ lost/, 10000 * TIME_SCALE);
    p.emit('PRODUCE', { event: 'tick', from: 'clock', message: 2 });
    await waitFor(() => real(local).length === 2, CROSS_MS, 'local delivery during the outage');
    await delay(1500);  // a few reconnection attempts: still one line in the log
    assert.equal(a.logs().match(/cluster: redis at \S+ (lost|unreachable)/g).length, 1, a.logs());
    await r.start();
    await a.waitForLog(/cluster: redis at \S+ is back/, 10000 * TIME_SCALE);
    await b.waitForLog(/cluster: redis at \S+ is back/, 10000 * TIME_SCALE);
    await waitFor(async () => {
      p.emit('PRODUCE', { event: 'tick', from: 'clock', message: 3 });
      await delay(100);
      return remote.some((m) => m.message === 3);
    }, CROSS_MS, 'relay after redis came back');
    await a.stop();
    await b.stop();
  });

test('a node cut off from redis (the connection stays open, nothing flows) notices within seconds and rejoins',
  async (t) => {
    const r = await privateRedis(t);
    const proxy = await pausableProxy(t, r.port);
    const settings = { auth: { enabled: true, tokens: [{ token: ADMIN, realm: '*', role: 'admin' }], realms: { default: { required: false } } } };
    const a = await startNode(t, { url: proxy.url, prefix: 'siomq-e2e-partition', nodeId: 'node-a', settings });
    const b = await startNode(t, { url: r.url, prefix: 'siomq-e2e-partition', nodeId: 'node-b' });
    proxy.pause();
    await a.waitForLog(/cluster: redis at \S+ lost: no answer to PING/, 10000 * TIME_SCALE);
    // Node A refuses manager commands meanwhile rather than let a proof be replayed elsewhere.
    const s = await client(t, a);
    const reply = await manage(s, { command: 'get' }, ADMIN);
    assert.deepEqual(reply, { ok: false, code: 503, message: "the cluster's store (redis) is unavailable; retry later" });
    // So is an enrolment request: filed only where every node's managers can see it.
    const [filed] = await emitAck(s, 'AUTHORIZATION_REQUEST', { realm: 'r', client_id: 'c', client_name: 'n', client_token: 't' });
    assert.deepEqual(filed, { ok: false, code: 503, message: "the cluster's store (redis) is unavailable; retry later" });
    // And a key: published only where every node can copy it.
    s.emit('CONSUMER', { name: 'carol' });
    await settle(s);
    const [published] = await emitAck(s, 'KEY_PUBLISH', { identity: 'carol', public_key: 'Q0FST0w=' });
    assert.deepEqual(published, { ok: false, code: 503, message: "the cluster's store (redis) is unavailable; retry later" });
    proxy.resume();
    await a.waitForLog(/cluster: redis at \S+ is back/, 15000 * TIME_SCALE);
    const [p, c] = [await client(t, a), await client(t, b)];
    await subscribe(c, { event: 'e', producer: 'p', consumer: 'c' });
    const got = collect(c, 'CONSUME-p-e');
    await waitFor(async () => {
      p.emit('PRODUCE', { event: 'e', from: 'p', message: 'after' });
      await delay(100);
      return got.length > 0;
    }, CROSS_MS, 'relay after the partition');
    await a.stop();
    await b.stop();
  });
