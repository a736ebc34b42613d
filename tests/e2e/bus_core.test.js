// The bus's core messaging (bus.md §2–§4, §8) on namespace "/": pub/sub with binary and string data,
// headers, `*` and `>`, queue groups, unsub with max, request/reply (inbox, 503 no responders, 408),
// $SYS rules, every malformed request's 400, auth on "/" (CONNECT token, AUTHENTICATION, 401, roles),
// realms kept apart; and "/control"'s admission rules and `stats`. Driven with npm socket.io-client.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { connectV4, connectErrorV4, emitAck, waitFor } = require('./lib/clients');
const { call, ok, fails, inbox } = require('./lib/bus');

function connect(server, t, opts = {}) {
  return connectV4(server.url, { transports: ['websocket'], ...opts }).then((s) => {
    t.after(() => s.close());
    return s;
  });
}
function control(server, t, auth) {
  return connectV4(`${server.url}/control`, { transports: ['websocket'], ...(auth ? { auth } : {}) }).then((s) => {
    t.after(() => s.close());
    return s;
  });
}

test('pub/sub: binary and string data arrive as bytes, with headers and reply', async (t) => {
  const server = await startServer(t);
  const a = await connect(server, t);
  const b = await connect(server, t);
  const got = inbox(b);
  const { sid } = await ok(b, 'sub', { subject: 'orders.*' });
  assert.equal(typeof sid, 'string');
  await ok(a, 'pub', { subject: 'orders.new', data: Buffer.from([0, 1, 2, 255]), header: { 'X-A': '1', k: 'v' } });
  await ok(a, 'pub', { subject: 'orders.old', data: 'héllo', reply: 'back.here' });
  await ok(a, 'pub', { subject: 'orders.new.deep', data: 'not matched by *' });
  await waitFor(() => got.length >= 2);
  await delay(100);
  assert.equal(got.length, 2);
  assert.equal(got[0].sid, sid);
  assert.equal(got[0].subject, 'orders.new');
  assert.ok(Buffer.isBuffer(got[0].data));
  assert.deepEqual([...got[0].data], [0, 1, 2, 255]);
  assert.deepEqual(got[0].header, { 'X-A': '1', k: 'v' });
  assert.equal(got[0].reply, undefined);
  assert.ok(Buffer.isBuffer(got[1].data), 'string data is delivered as binary (§8.21)');
  assert.equal(got[1].data.toString('utf8'), 'héllo');
  assert.equal(got[1].reply, 'back.here');
  assert.equal(got[1].header, undefined);
});

test('pub/sub: ">" takes one or more tokens; a publisher hears itself; fire-and-forget pub works', async (t) => {
  const server = await startServer(t);
  const a = await connect(server, t);
  const got = inbox(a);
  await ok(a, 'sub', { subject: 'a.>' });
  await ok(a, 'sub', { subject: 'a.b.c' });
  a.emit('pub', { subject: 'a', data: 'no' });  // no ack id: executed, unanswered
  a.emit('pub', { subject: 'a.b', data: '1' });
  a.emit('pub', { subject: 'a.b.c', data: '2' });
  await waitFor(() => got.length >= 3);
  await delay(100);
  assert.deepEqual(got.map((m) => `${m.subject}:${m.data}`).sort(), ['a.b.c:2', 'a.b.c:2', 'a.b:1']);
});

test('queue groups: exactly one member of each (pattern, queue) group, spread evenly', async (t) => {
  const server = await startServer(t);
  const pub = await connect(server, t);
  const members = [];
  for (let i = 0; i < 3; ++i) {
    const s = await connect(server, t);
    members.push({ s, got: inbox(s) });
    await ok(s, 'sub', { subject: 'work.*', queue: 'workers' });
  }
  const other = await connect(server, t);
  const otherGot = inbox(other);
  await ok(other, 'sub', { subject: 'work.*', queue: 'auditors' });
  const plain = await connect(server, t);
  const plainGot = inbox(plain);
  await ok(plain, 'sub', { subject: 'work.>' });
  for (let i = 0; i < 300; ++i) await ok(pub, 'pub', { subject: 'work.item', data: String(i) });
  await waitFor(() => members.reduce((n, m) => n + m.got.length, 0) >= 300 && otherGot.length >= 300 && plainGot.length >= 300);
  await delay(100);
  const counts = members.map((m) => m.got.length);
  assert.equal(counts.reduce((a, b) => a + b, 0), 300, `exactly one copy per message: ${counts}`);
  for (const c of counts) assert.ok(c >= 80 && c <= 120, `evenly spread: ${counts}`);
  const seen = new Set(members.flatMap((m) => m.got.map((x) => x.data.toString())));
  assert.equal(seen.size, 300);
  assert.equal(otherGot.length, 300, 'another queue name is another group');
  assert.equal(plainGot.length, 300);
});

test('unsub: removes at once, or after max more messages; unknown and foreign sids are 404', async (t) => {
  const server = await startServer(t);
  const a = await connect(server, t);
  const b = await connect(server, t);
  const got = inbox(a);
  const s1 = (await ok(a, 'sub', { subject: 'x' })).sid;
  const s2 = (await ok(a, 'sub', { subject: 'y' })).sid;
  await ok(b, 'pub', { subject: 'y', data: 'before' });  // delivered before the unsub: not counted (§8.2)
  await waitFor(() => got.length === 1);
  await ok(a, 'unsub', { sid: s2, max: 2 });
  await ok(a, 'unsub', { sid: s1 });
  for (let i = 0; i < 4; ++i) {
    await ok(b, 'pub', { subject: 'x', data: `x${i}` });
    await ok(b, 'pub', { subject: 'y', data: `y${i}` });
  }
  await delay(200);
  assert.deepEqual(got.map((m) => m.data.toString()), ['before', 'y0', 'y1']);
  await fails(a, 'unsub', { sid: s1 }, 404);
  await fails(a, 'unsub', { sid: s2 }, 404, /sid/);  // gone once its max was reached
  const s3 = (await ok(a, 'sub', { subject: 'z' })).sid;
  await fails(b, 'unsub', { sid: s3 }, 404);  // another socket's sid
  await ok(a, 'unsub', { sid: s3, max: 0 });
});

test('request/reply: inbox subject, first reply wins, 503 at once, 408 on timeout', async (t) => {
  const server = await startServer(t);
  const requester = await connect(server, t);
  const responder = await connect(server, t);
  const second = await connect(server, t);
  for (const [s, name] of [[responder, 'one'], [second, 'two']]) {
    s.on('msg', (m) => {
      if (!m.reply) return;
      const delayMs = name === 'one' ? 0 : 150;
      setTimeout(() => s.emit('pub', { subject: m.reply, data: Buffer.from(`${name}:${m.data}`), header: { who: name } }), delayMs);
    });
    await ok(s, 'sub', { subject: 'svc.echo' });
  }
  const r = await ok(requester, 'request', { subject: 'svc.echo', data: 'ping', timeout_ms: 2000 });
  assert.match(r.msg.subject, /^_INBOX\./, 'the reply subject is the inbox (§8.4)');
  assert.ok(Buffer.isBuffer(r.msg.data));
  assert.equal(r.msg.data.toString(), 'one:ping');
  assert.deepEqual(r.msg.header, { who: 'one' });

  const t0 = Date.now();
  await fails(requester, 'request', { subject: 'svc.nobody', data: 'x' }, 503, /no responders/);
  assert.ok(Date.now() - t0 < 1000, 'no responders is answered at once');

  const silent = await connect(server, t);
  await ok(silent, 'sub', { subject: 'svc.silent' });
  const t1 = Date.now();
  await fails(requester, 'request', { subject: 'svc.silent', data: 'x', timeout_ms: 300 }, 408);
  assert.ok(Date.now() - t1 >= 280, 'the timeout is honoured');

  // Queue-group responders: one answers.
  const q1 = await connect(server, t);
  const q2 = await connect(server, t);
  let answered = 0;
  for (const s of [q1, q2]) {
    s.on('msg', (m) => { answered++; s.emit('pub', { subject: m.reply, data: 'q' }); });
    await ok(s, 'sub', { subject: 'svc.q', queue: 'g' });
  }
  for (let i = 0; i < 10; ++i) assert.equal((await ok(requester, 'request', { subject: 'svc.q', data: 'x' })).msg.data.toString(), 'q');
  await delay(100);
  assert.equal(answered, 10);
});

test('$SYS subjects: publishing is 403 and delivers nothing; subscribing is allowed', async (t) => {
  const server = await startServer(t);
  const a = await connect(server, t);
  const got = inbox(a);
  await ok(a, 'sub', { subject: '$SYS.>' });
  await fails(a, 'pub', { subject: '$SYS.ADVISORY.X', data: 'x' }, 403);
  await fails(a, 'request', { subject: '$SYS.X', data: 'x' }, 403);
  await delay(100);
  assert.equal(got.length, 0);
});

test('malformed requests: 400 naming the field, nothing delivered', async (t) => {
  const server = await startServer(t);
  const a = await connect(server, t);
  const got = inbox(a);
  await ok(a, 'sub', { subject: '>' });
  const long = 'a.'.repeat(600) + 'b';
  const cases = [
    ['pub', undefined, /payload/],
    ['pub', 'a string', /payload/],
    ['pub', JSON.stringify({ subject: 'a', data: 'x' }), /payload/],
    ['pub', [1, 2], /payload/],
    ['pub', { data: 'x' }, /^subject/],
    ['pub', { subject: 'a.*', data: 'x' }, /^subject.*wildcard/],
    ['pub', { subject: 'a.>', data: 'x' }, /^subject/],
    ['pub', { subject: 'a..b', data: 'x' }, /^subject.*empty token/],
    ['pub', { subject: 'a b', data: 'x' }, /^subject.*whitespace/],
    ['pub', { subject: '', data: 'x' }, /^subject/],
    ['pub', { subject: long, data: 'x' }, /^subject.*1024/],
    ['pub', { subject: 7, data: 'x' }, /^subject/],
    ['pub', { subject: 'a' }, /^data/],
    ['pub', { subject: 'a', data: 42 }, /^data/],
    ['pub', { subject: 'a', data: { x: 1 } }, /^data/],
    ['pub', { subject: 'a', data: 'x', header: 'h' }, /^header/],
    ['pub', { subject: 'a', data: 'x', header: { k: 1 } }, /^header/],
    ['pub', { subject: 'a', data: 'x', header: { k: ['v'] } }, /^header/],
    ['pub', { subject: 'a', data: 'x', reply: 'r.*' }, /^reply/],
    ['sub', {}, /^subject/],
    ['sub', { subject: 'a.>.b' }, /^subject.*last/],
    ['sub', { subject: 'a', queue: '' }, /^queue/],
    ['sub', { subject: 'a', queue: 'a b' }, /^queue/],
    ['sub', { subject: 'a', queue: 5 }, /^queue/],
    ['unsub', {}, /^sid/],
    ['unsub', { sid: 1 }, /^sid/],
    ['unsub', { sid: '1', max: -1 }, /^max/],
    ['unsub', { sid: '1', max: 1.5 }, /^max/],
    ['unsub', { sid: '1', max: '2' }, /^max/],
    ['request', { subject: 'a', data: 'x', timeout_ms: 0 }, /^timeout_ms/],
    ['request', { subject: 'a', data: 'x', timeout_ms: 60001 }, /^timeout_ms/],
    ['request', { subject: 'a', data: 'x', timeout_ms: 10.5 }, /^timeout_ms/],
    ['request', { subject: 'a.*', data: 'x' }, /^subject/],
  ];
  for (const [event, payload, re] of cases) {
    const reply = payload === undefined ? await emitAck(a, event) : await emitAck(a, event, payload);
    assert.equal(reply.length, 1);
    assert.equal(reply[0].ok, false, `${event} ${JSON.stringify(payload)}`);
    assert.equal(reply[0].error.code, 400, `${event} ${JSON.stringify(payload)}: ${JSON.stringify(reply[0])}`);
    assert.match(reply[0].error.message, re, `${event} ${JSON.stringify(payload)}`);
  }
  await delay(100);
  assert.equal(got.length, 0, 'nothing was published by a refused request');
  await ok(a, 'pub', { subject: 'still.fine', data: '' });
  await waitFor(() => got.length === 1);
  assert.equal(got[0].data.length, 0);
});

const TOKENS = [
  { token: 'admin-t', realm: '*', role: 'admin' },
  { token: 'a-both', realm: 'ra', role: 'both' },
  { token: 'b-both', realm: 'rb', role: 'both' },
  { token: 'a-prod', realm: 'ra', role: 'producer' },
  { token: 'a-cons', realm: 'ra', role: 'consumer' },
  { token: 'a-mgr', realm: 'ra', role: 'manager' },
  { token: 'a-admin', realm: 'ra', role: 'admin' },
];
const AUTH_SETTINGS = { auth: { enabled: true, tokens: TOKENS, realms: { default: { required: false } } } };

test('auth on "/": 401 until a credential; CONNECT token; realms never cross; roles', async (t) => {
  const server = await startServer(t, { settings: AUTH_SETTINGS });
  const anon = await connect(server, t);
  await fails(anon, 'sub', { subject: 'a' }, 401);
  await fails(anon, 'pub', { subject: 'a', data: 'x' }, 401);
  const badToken = await connect(server, t, { auth: { token: 'wrong' } });
  await fails(badToken, 'sub', { subject: 'a' }, 401, /unauthenticated/);
  // AUTHENTICATION afterwards lifts the 401.
  const late = await emitAck(badToken, 'AUTHENTICATION', { token: 'a-both' });
  assert.equal(late[0].ok ?? true, true);
  await waitFor(async () => (await call(badToken, 'sub', { subject: 'late' })).ok === true);

  const a = await connect(server, t, { auth: { token: 'a-both' } });
  const b = await connect(server, t, { auth: { token: 'b-both' } });
  const aGot = inbox(a);
  const bGot = inbox(b);
  await ok(a, 'sub', { subject: 'shared.>' });
  await ok(b, 'sub', { subject: 'shared.>' });
  await ok(a, 'pub', { subject: 'shared.x', data: 'from-a' });
  await ok(b, 'pub', { subject: 'shared.x', data: 'from-b' });
  await waitFor(() => aGot.length >= 1 && bGot.length >= 1);
  await delay(150);
  assert.deepEqual(aGot.map((m) => m.data.toString()), ['from-a']);
  assert.deepEqual(bGot.map((m) => m.data.toString()), ['from-b']);
  // No responders in rb for a subject only ra serves.
  a.on('msg', (m) => { if (m.reply) a.emit('pub', { subject: m.reply, data: 'a' }); });
  await ok(a, 'sub', { subject: 'svc.only-a' });
  await fails(b, 'request', { subject: 'svc.only-a', data: 'x' }, 503);

  const prod = await connect(server, t, { auth: { token: 'a-prod' } });
  const cons = await connect(server, t, { auth: { token: 'a-cons' } });
  await fails(prod, 'sub', { subject: 'x' }, 403);
  await ok(prod, 'pub', { subject: 'x', data: 'x' });
  await fails(cons, 'pub', { subject: 'x', data: 'x' }, 403);
  await ok(cons, 'sub', { subject: 'x' });
});

test('/control: token rules (§3, §8.18) and stats', async (t) => {
  const open = await startServer(t);
  const c = await control(open, t);
  const d = await connect(open, t);
  await ok(d, 'sub', { subject: 'one' });
  await ok(d, 'sub', { subject: 'two', queue: 'q' });
  await ok(d, 'pub', { subject: 'one', data: 'abc' });
  await delay(100);
  const { stats } = await ok(c, 'stats', {});
  for (const k of ['server_id', 'version', 'uptime_ms', 'connections', 'total_connections', 'subscriptions', 'in_msgs',
    'out_msgs', 'in_bytes', 'out_bytes', 'slow_consumers', 'streams', 'consumers', 'stream_msgs', 'stream_bytes', 'rss_bytes']) {
    assert.ok(k in stats, `stats.${k}`);
  }
  assert.equal(stats.subscriptions, 2);
  assert.equal(stats.connections, 1, 'client sockets on "/"');
  assert.ok(stats.in_msgs >= 1 && stats.out_msgs >= 1 && stats.in_bytes >= 3);
  assert.ok(stats.rss_bytes > 1e6);

  const server = await startServer(t, { settings: { ...AUTH_SETTINGS, bus: { control_token: 'ctl-secret' } } });
  assert.equal((await connectErrorV4(`${server.url}/control`, { transports: ['websocket'] })).message, 'unauthorized');
  for (const token of ['wrong', 'a-both', 'a-cons']) {
    const err = await connectErrorV4(`${server.url}/control`, { transports: ['websocket'], auth: { token } });
    assert.equal(err.message, 'unauthorized', token);
  }
  const err = await connectErrorV4(`${server.url}/control`, { transports: ['websocket'], auth: { token: 'a-mgr', realm: 'rb' } });
  assert.equal(err.message, 'unauthorized', 'a manager is confined to its own realm');
  // Regression (review of issue 15): an admin of one realm is confined to it, like a manager; only the
  // server's admin (realm "*") chooses any realm, and "*" itself is never one to manage.
  for (const auth of [{ token: 'a-admin', realm: 'rb' }, { token: 'admin-t', realm: '*' }, { token: 'ctl-secret', realm: '*' },
    { token: 'admin-t', realm: 'bad\u0001name' }]) {
    const refused = await connectErrorV4(`${server.url}/control`, { transports: ['websocket'], auth });
    assert.equal(refused.message, 'unauthorized', JSON.stringify(auth));
  }
  await control(server, t, { token: 'a-admin' });
  await control(server, t, { token: 'a-admin', realm: 'ra' });
  await control(server, t, { token: 'ctl-secret' });
  await control(server, t, { token: 'admin-t', realm: 'rb' });
  await control(server, t, { token: 'a-mgr' });
  await control(server, t, { token: 'a-mgr', realm: 'ra' });
});

test('bus.enabled false: no bus events, no /control', async (t) => {
  const server = await startServer(t, { settings: { bus: { enabled: false } } });
  const err = await connectErrorV4(`${server.url}/control`, { transports: ['websocket'] });
  assert.ok(err);
  const a = await connect(server, t);
  let answered = false;
  a.emit('sub', { subject: 'x' }, () => { answered = true; });
  await delay(200);
  assert.equal(answered, false, 'an unknown event is ignored');
});

test('tyo bridge: PRODUCE reaches tyo.<P>.<E> and a stream; a bus pub reaches CONSUME-; off in other realms', async (t) => {
  const server = await startServer(t, { settings: { bus: { tyo_bridge_realms: ['default'] } } });
  const bus = await connect(server, t);
  const got = inbox(bus);
  await ok(bus, 'sub', { subject: 'tyo.>' });
  const ctl = await control(server, t);
  await ok(ctl, 'stream.create', { name: 'TYO', subjects: ['tyo.>'] });
  // tyo-mq producer and consumer on "/"
  const producer = await connect(server, t);
  producer.emit('PRODUCER', { name: 'shop.eu' });
  producer.emit('PRODUCE', { event: 'order placed', message: { id: 7 }, from: 'shop.eu' });
  await waitFor(() => got.length === 1);
  assert.equal(got[0].subject, 'tyo.shop%2Eeu.order%20placed', 'tokens escaped');
  assert.deepEqual(JSON.parse(got[0].data.toString()), { id: 7 });
  assert.deepEqual(got[0].header, { 'Tyo-From': 'shop.eu', 'Tyo-Event': 'order placed' });
  await waitFor(async () => (await call(ctl, 'stream.info', { name: 'TYO' })).state.messages === 1);

  const consumer = await connect(server, t);
  const consumed = [];
  consumer.emit('CONSUMER', { name: 'c1' });
  consumer.emit('SUBSCRIBE', { event: 'order placed', producer: 'shop.eu', consumer: 'c1' });
  await delay(100);
  consumer.onAny((event, payload) => { if (event.startsWith('CONSUME-')) consumed.push(payload); });
  await ok(bus, 'pub', { subject: 'tyo.shop%2Eeu.order%20placed', data: JSON.stringify({ id: 8 }) });
  await ok(bus, 'pub', { subject: 'tyo.shop%2Eeu.order%20placed', data: 'plain text' });
  await waitFor(() => consumed.length === 2);
  assert.deepEqual(consumed[0].message, { id: 8 });
  assert.equal(consumed[0].from, 'shop.eu');
  assert.equal(consumed[1].message, 'plain text');
  await delay(100);
  assert.equal(got.length, 3, 'the bus pubs reached bus subscribers once each; nothing was bridged back');
});

test('tyo bridge: off by default', async (t) => {
  const server = await startServer(t);
  const bus = await connect(server, t);
  const got = inbox(bus);
  await ok(bus, 'sub', { subject: 'tyo.>' });
  const producer = await connect(server, t);
  producer.emit('PRODUCE', { event: 'e', message: 1, from: 'p' });
  await delay(200);
  assert.equal(got.length, 0);
});

// Regression (review of issue 15): a delivery sent under the realm's lock could close its own slow
// consumer, whose end took that lock again — the worker deadlocked and the realm stayed locked.
test('a slow consumer cut by its own publishes does not lock up its realm', async (t) => {
  const { handmadeWebSocket, clientFrame } = require('./lib/clients');
  const server = await startServer(t, { settings: { transport: { max_outbound_bytes: 2 * 1024 * 1024 } } });
  const raw = await handmadeWebSocket(server.port);
  t.after(() => raw.destroy());
  raw.write(clientFrame('40'));
  await delay(100);
  raw.write(clientFrame('42["sub",{"subject":"self"}]'));
  await delay(100);
  const big = 'y'.repeat(500 * 1024);
  for (let i = 0; i < 40; ++i) raw.write(clientFrame(`42["pub",{"subject":"self","data":"${big}"}]`));
  await delay(500);
  // The realm still routes, and the server still serves new clients.
  const a = await connect(server, t);
  const got = inbox(a);
  await ok(a, 'sub', { subject: 'self' });
  await ok(a, 'pub', { subject: 'self', data: 'alive' });
  await waitFor(() => got.some((m) => m.data.toString() === 'alive'));
});

// Regression (security review of issue 15): /control tokens could be guessed as fast as CONNECTs could be
// sent (each on a new namespace socket, where tyo-mq's per-socket pace does not reach). Refusals are now
// paced per remote address: out of attempts, even the right token is refused until the pace allows.
test('/control: refused CONNECTs are paced per address', async (t) => {
  const server = await startServer(t, {
    settings: { bus: { control_token: 'ctl-secret' }, limits: { credential_attempts_per_second: 1, credential_attempt_burst: 3 } },
  });
  const url = `${server.url}/control`;
  for (let i = 0; i < 3; ++i) {
    assert.equal((await connectErrorV4(url, { transports: ['websocket'], auth: { token: `guess${i}` } })).message, 'unauthorized');
  }
  assert.equal((await connectErrorV4(url, { transports: ['websocket'], auth: { token: 'ctl-secret' } })).message, 'unauthorized',
    'out of attempts: the right token waits too');
  await delay(1100);
  await control(server, t, { token: 'ctl-secret' });
});
