// The bus through our own C++ client transport (client/, driven by `siomq raw`, tools/raw_session.h):
// every event of bus.md §4–§5 and every error code, with binary data both ways against npm
// socket.io-client peers. The shapes asserted are the ones bus_core/bus_streams assert over socket.io-client.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { startServer, SERVER_BIN, delay } = require('./lib/server');
const { connectV4, waitFor } = require('./lib/clients');
const { ok: sioOk, inbox } = require('./lib/bus');

const CLI = path.join(path.dirname(SERVER_BIN), 'siomq');
const PLACEHOLDER = { _placeholder: true, num: 0 };

// One `siomq raw` process: a Socket.IO session of the C++ client on one namespace.
class Raw {
  static async open(t, url, { nsp = '/', auth, eio = 4 } = {}) {
    const args = ['raw', '--url', url, '--nsp', nsp, '--eio', String(eio)];
    if (auth) args.push('--auth', JSON.stringify(auth));
    const raw = new Raw(spawn(CLI, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
    t.after(() => raw.close());
    await raw.connected;
    return raw;
  }

  constructor(child) {
    this.child = child;
    this.acks = new Map();
    this.events = new Map();
    this.stderr = '';
    this.next = 0;
    this.exit = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    child.stderr.on('data', (d) => { this.stderr += d; });
    this.connected = new Promise((resolve, reject) => {
      this.exit.then((code) => reject(new Error(`siomq raw exited ${code}: ${this.stderr}`)));
      readline.createInterface({ input: child.stdout }).on('line', (line) => {
        const m = JSON.parse(line);
        if (m.connected) resolve(m.sid);
        else if (m.ack !== undefined) this.acks.get(m.ack)?.(m);
        else if (m.event !== undefined) this.events.get(m.event)?.push(m);
        else if (m.error !== undefined) this.lastError = m.error;
      });
    });
  }

  send(line) { this.child.stdin.write(`${JSON.stringify(line)}\n`); }

  // The ack's one argument (bus.md §1), with any Buffer attachments put in place of their placeholders.
  call(event, payload, attachments = []) {
    const tag = `t${this.next++}`;
    return new Promise((resolve) => {
      this.acks.set(tag, (m) => {
        this.acks.delete(tag);
        assert.equal(m.args.length, 1, `${event}: exactly one ack argument`);
        resolve(resolve_placeholders(m.args[0], m.attachments));
      });
      this.send({ emit: event, args: [payload], ack: tag, attachments: attachments.map((b) => b.toString('base64')) });
    });
  }
  async ok(event, payload, attachments) {
    const r = await this.call(event, payload, attachments);
    assert.equal(r.ok, true, `${event} ${JSON.stringify(payload)} -> ${JSON.stringify(r)}`);
    return r;
  }
  async fails(event, payload, code, re) {
    const r = await this.call(event, payload);
    assert.equal(r.ok, false, `${event} ${JSON.stringify(payload)} should fail: ${JSON.stringify(r)}`);
    assert.equal(r.error.code, code, `${event} ${JSON.stringify(payload)}: ${JSON.stringify(r)}`);
    if (re) assert.match(r.error.message, re);
    return r;
  }
  // Every `event` from now on, with its attachments in place.
  on(event) {
    const got = [];
    this.events.set(event, { push: (m) => got.push(resolve_placeholders(m.args[0], m.attachments)) });
    this.send({ on: event });
    return got;
  }
  close() {
    if (this.child.exitCode === null) this.child.kill();
  }
}

// Replaces {_placeholder, num} in a received value by the attachment's bytes (a Buffer).
function resolve_placeholders(value, attachments) {
  if (Array.isArray(value)) return value.map((v) => resolve_placeholders(v, attachments));
  if (value && typeof value === 'object') {
    if (value._placeholder === true && Number.isInteger(value.num)) return Buffer.from(attachments[value.num], 'base64');
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve_placeholders(v, attachments)]));
  }
  return value;
}

async function sio(t, url) {
  const s = await connectV4(url, { transports: ['websocket'] });
  t.after(() => s.close());
  return s;
}

// ---- core messaging on "/" -------------------------------------------------------------------------------

test('C++ client, core: pub/sub with binary and string data both ways, headers, reply, `*` and `>`', async (t) => {
  const server = await startServer(t);
  const cpp = await Raw.open(t, server.url);
  const js = await sio(t, server.url);
  const cppGot = cpp.on('msg');
  const jsGot = inbox(js);
  const { sid } = await cpp.ok('sub', { subject: 'orders.*' });
  assert.equal(typeof sid, 'string');
  await sioOk(js, 'sub', { subject: 'orders.>' });
  // C++ -> JS: a binary attachment and a header.
  const bytes = Buffer.from([0, 1, 2, 255, 128]);
  await cpp.ok('pub', { subject: 'orders.new', data: PLACEHOLDER, header: { 'X-Trace': 'abc' }, reply: 'back.here' }, [bytes]);
  // JS -> C++: string data arrives as bytes.
  await sioOk(js, 'pub', { subject: 'orders.eu', data: 'hello' });
  await sioOk(js, 'pub', { subject: 'orders.eu.deep', data: 'not for *' });
  await waitFor(() => jsGot.length === 3 && cppGot.length === 2);
  const fromCpp = jsGot.find((m) => m.subject === 'orders.new');
  assert.deepEqual(Buffer.from(fromCpp.data), bytes);
  assert.deepEqual(fromCpp.header, { 'X-Trace': 'abc' });
  assert.equal(fromCpp.reply, 'back.here');
  assert.deepEqual(cppGot.map((m) => m.subject), ['orders.new', 'orders.eu']);
  assert.ok(cppGot.every((m) => m.sid === sid));
  assert.deepEqual(cppGot[0].data, bytes);
  assert.equal(cppGot[1].data.toString(), 'hello');
});

test('C++ client over Engine.IO v3: binary attachments both ways (the 4-prefixed binary frames)', async (t) => {
  const server = await startServer(t);
  const cpp = await Raw.open(t, server.url, { eio: 3 });
  const js = await sio(t, server.url);
  const jsGot = inbox(js);
  const cppGot = cpp.on('msg');
  await sioOk(js, 'sub', { subject: 'v3' });
  await cpp.ok('sub', { subject: 'v3' });
  const bytes = Buffer.from([4, 0, 1, 2, 3]);
  await cpp.ok('pub', { subject: 'v3', data: PLACEHOLDER }, [bytes]);
  await waitFor(() => jsGot.length === 1 && cppGot.length === 1);
  assert.deepEqual(Buffer.from(jsGot[0].data), bytes);
  assert.deepEqual(cppGot[0].data, bytes);
});

test('C++ client, core: unsub now and after max; request with a reply, 503 at once, 408 on timeout', async (t) => {
  const server = await startServer(t);
  const cpp = await Raw.open(t, server.url);
  const got = cpp.on('msg');
  const a = await cpp.ok('sub', { subject: 'tick' });
  await cpp.ok('unsub', { sid: a.sid, max: 2 });
  for (let i = 0; i < 4; ++i) await cpp.ok('pub', { subject: 'tick', data: `t${i}` });
  await delay(150);
  assert.deepEqual(got.map((m) => m.data.toString()), ['t0', 't1'], 'auto-unsubscribed after max');
  await cpp.fails('unsub', { sid: a.sid }, 404);
  await cpp.fails('unsub', { sid: 'nope' }, 404);

  // A socket.io-client responder answers the C++ requester.
  const responder = await sio(t, server.url);
  responder.on('msg', (m) => responder.emit('pub', { subject: m.reply, data: `re:${Buffer.from(m.data)}` }));
  await sioOk(responder, 'sub', { subject: 'svc.echo' });
  const r = await cpp.ok('request', { subject: 'svc.echo', data: 'ping', timeout_ms: 2000 });
  assert.equal(r.msg.data.toString(), 're:ping');
  assert.match(r.msg.subject, /^_INBOX\./);
  await cpp.fails('request', { subject: 'svc.nobody', data: 'x' }, 503, /no responders/);
  await sioOk(responder, 'sub', { subject: 'svc.silent' });
  responder.off('msg');
  await cpp.fails('request', { subject: 'svc.silent', data: 'x', timeout_ms: 200 }, 408);
});

test('C++ client: malformed requests are 400 naming the field; $SYS is 403; nothing delivered', async (t) => {
  const server = await startServer(t);
  const cpp = await Raw.open(t, server.url);
  const watcher = await sio(t, server.url);
  const seen = inbox(watcher);
  await sioOk(watcher, 'sub', { subject: '>' });
  await cpp.fails('pub', { data: 'x' }, 400, /^subject/);
  await cpp.fails('pub', { subject: 'a..b', data: 'x' }, 400, /^subject/);
  await cpp.fails('pub', { subject: 'a.*', data: 'x' }, 400, /^subject/);
  await cpp.fails('sub', { subject: '' }, 400, /^subject/);
  await cpp.fails('sub', { subject: 'a.>.b' }, 400, /^subject/);
  await cpp.fails('request', { subject: 'x', data: 'x', timeout_ms: 60001 }, 400, /^timeout_ms/);
  await cpp.fails('unsub', { sid: 1 }, 400, /^sid/);
  await cpp.fails('stream.pub', { subject: 'x', data: 'x', msg_id: '' }, 400, /^msg_id/);
  await cpp.fails('consumer.pull', { consumer: 'c', batch: 1001 }, 400, /^batch/);
  await cpp.fails('consumer.ack', { consumer: 'c' }, 400, /^seq/);
  await cpp.fails('pub', { subject: '$SYS.x', data: 'x' }, 403);
  await delay(150);
  assert.deepEqual(seen, []);
});

test('C++ client: auth on "/" (401, CONNECT token, roles 403) and /control admission', async (t) => {
  const TOKENS = [
    { token: 'a-both', realm: 'ra', role: 'both' },
    { token: 'a-prod', realm: 'ra', role: 'producer' },
    { token: 'a-mgr', realm: 'ra', role: 'manager' },
  ];
  const server = await startServer(t, {
    settings: { auth: { enabled: true, tokens: TOKENS, realms: { default: { required: false } } }, bus: { control_token: 'ctl' } },
  });
  const anon = await Raw.open(t, server.url);
  await anon.fails('sub', { subject: 'a' }, 401, /unauthenticated/);
  await anon.fails('pub', { subject: 'a', data: 'x' }, 401);
  const prod = await Raw.open(t, server.url, { auth: { token: 'a-prod' } });
  await prod.fails('sub', { subject: 'a' }, 403);
  await prod.ok('pub', { subject: 'a', data: 'x' });
  const both = await Raw.open(t, server.url, { auth: { token: 'a-both' } });
  await both.ok('sub', { subject: 'a' });
  // /control: refused without the control token or a manager's; the refusal is the connect's.
  for (const auth of [undefined, { token: 'wrong' }, { token: 'a-both' }]) {
    await assert.rejects(Raw.open(t, server.url, { nsp: '/control', auth }), /connect refused: unauthorized/);
  }
  const ctl = await Raw.open(t, server.url, { nsp: '/control', auth: { token: 'ctl' } });
  const mgr = await Raw.open(t, server.url, { nsp: '/control', auth: { token: 'a-mgr' } });
  assert.equal((await mgr.ok('stats', {})).stats.subscriptions, 1, "realm ra's one subscription");
  assert.equal((await ctl.ok('stats', {})).stats.subscriptions, 0, 'the control token manages realm default');
  await mgr.ok('stream.create', { name: 'RA', subjects: ['ra.>'] });
  assert.deepEqual((await ctl.ok('stream.list', {})).streams.map((s) => s.name), [], 'realms never cross');
});

// ---- the control plane -------------------------------------------------------------------------------------

test('C++ client, /control: every stream.* and consumer.* event, stats, and their 400/404/409/413', async (t) => {
  const server = await startServer(t);
  const ctl = await Raw.open(t, server.url, { nsp: '/control' });
  const data = await Raw.open(t, server.url);
  const created = await ctl.ok('stream.create', { name: 'KV', subjects: ['kv.>'], max_msg_size: 16 });
  assert.equal(created.stream.name, 'KV');
  assert.deepEqual(created.stream.subjects, ['kv.>']);
  await ctl.ok('stream.create', { name: 'KV', subjects: ['kv.>'], max_msg_size: 16 });  // idempotent
  await ctl.fails('stream.create', { name: 'KV', subjects: ['other'] }, 409);
  await ctl.fails('stream.create', { name: 'KV2', subjects: ['kv.a'] }, 409, /overlap/);
  await ctl.fails('stream.create', { name: 'bad name', subjects: ['x'] }, 400, /^name/);
  await ctl.fails('stream.create', { name: 'X', max_msgs: 'many' }, 400, /^max_msgs/);
  const updated = await ctl.ok('stream.update', { name: 'KV', subjects: ['kv.>'], max_msg_size: 32, max_msgs: 100 });
  assert.equal(updated.stream.max_msgs, 100);
  await ctl.fails('stream.update', { name: 'KV', subjects: ['kv.>'], storage: 'memory' }, 400, /storage/);
  await ctl.fails('stream.update', { name: 'NOPE', subjects: ['n'] }, 404);

  for (const [subject, text] of [['kv.a', 'one'], ['kv.b', 'two'], ['kv.a', 'three']]) {
    await data.ok('stream.pub', { subject, data: text });
  }
  await data.fails('stream.pub', { subject: 'kv.a', data: 'x'.repeat(33) }, 413);
  const info = await ctl.ok('stream.info', { name: 'KV' });
  assert.equal(info.state.messages, 3);
  assert.equal(info.state.last_seq, 3);
  assert.deepEqual((await ctl.ok('stream.list', {})).streams.map((s) => s.name), ['KV']);
  const got = await ctl.ok('stream.get', { name: 'KV', seq: 2 });
  assert.equal(got.message.subject, 'kv.b');
  assert.equal(got.message.data.toString(), 'two');
  assert.equal((await ctl.ok('stream.get', { name: 'KV', last_by_subject: 'kv.a' })).message.seq, 3);
  await ctl.fails('stream.get', { name: 'KV', seq: 99 }, 404);
  await ctl.fails('stream.info', { name: 'NOPE' }, 404);

  const consumer = await ctl.ok('consumer.add', { stream: 'KV', name: 'w', filter_subject: 'kv.a' });
  assert.equal(consumer.consumer.config.name, 'w');
  assert.equal((await ctl.ok('consumer.info', { stream: 'KV', name: 'w' })).consumer.num_pending, 2);
  await ctl.fails('consumer.add', { stream: 'KV', name: 'w', filter_subject: 'kv.b' }, 409);
  await ctl.fails('consumer.add', { stream: 'NOPE', name: 'x' }, 404);
  await ctl.fails('consumer.info', { stream: 'KV', name: 'nope' }, 404);
  assert.equal((await ctl.ok('stream.purge', { name: 'KV', subject: 'kv.a', keep: 1 })).purged, 1);
  assert.equal((await ctl.ok('stream.info', { name: 'KV' })).state.messages, 2);
  await ctl.ok('consumer.delete', { stream: 'KV', name: 'w' });
  await ctl.fails('consumer.delete', { stream: 'KV', name: 'w' }, 404);
  const stats = (await ctl.ok('stats', {})).stats;
  assert.equal(stats.streams, 1);
  assert.equal(stats.stream_msgs, 2);
  await ctl.ok('stream.delete', { name: 'KV' });
  await ctl.fails('stream.delete', { name: 'KV' }, 404);
  assert.deepEqual((await ctl.ok('stream.list', {})).streams, []);
});

// ---- streams and consumers on "/" --------------------------------------------------------------------------

test('C++ client, "/": stream.pub (seq, dedup, 404, 409), pull with binary data, ack/nak/term/progress', async (t) => {
  const server = await startServer(t);
  const ctl = await Raw.open(t, server.url, { nsp: '/control' });
  const cpp = await Raw.open(t, server.url);
  await ctl.ok('stream.create', { name: 'JOBS', subjects: ['jobs.>'], dead_letter_stream: 'DLQ' });
  await ctl.ok('stream.create', { name: 'DLQ', subjects: ['dlq.jobs'] });
  const bytes = Buffer.from([9, 8, 7, 0, 255]);
  const first = await cpp.ok('stream.pub', { subject: 'jobs.a', data: PLACEHOLDER, msg_id: 'm1' }, [bytes]);
  assert.deepEqual([first.stream, first.seq, first.duplicate], ['JOBS', 1, false]);
  const again = await cpp.ok('stream.pub', { subject: 'jobs.a', data: 'other', header: { 'Msg-Id': 'm1' } });
  assert.deepEqual([again.seq, again.duplicate], [1, true]);
  assert.equal((await cpp.ok('stream.pub', { subject: 'jobs.b', data: 'two', expect_last_seq: 1 })).seq, 2);
  await cpp.fails('stream.pub', { subject: 'jobs.c', data: 'x', expect_last_seq: 1 }, 409, /last sequence/);
  await cpp.fails('stream.pub', { subject: 'nobody.binds', data: 'x' }, 404);
  await cpp.ok('stream.pub', { subject: 'jobs.c', data: 'three' });

  await ctl.ok('consumer.add', { stream: 'JOBS', name: 'w', ack_wait_ms: 30000, max_deliver: 2 });
  const pulled = await cpp.ok('consumer.pull', { consumer: 'w', batch: 10, no_wait: true });
  assert.deepEqual(pulled.messages.map((m) => m.seq), [1, 2, 3]);
  assert.deepEqual(pulled.messages[0].data, bytes, 'binary data back through the C++ client');
  assert.equal(pulled.messages[1].data.toString(), 'two');
  assert.ok(pulled.messages.every((m) => m.delivered === 1 && m.stream === 'JOBS'));
  assert.deepEqual((await cpp.ok('consumer.pull', { consumer: 'w', batch: 5, no_wait: true })).messages, []);
  await cpp.ok('consumer.ack', { consumer: 'w', seq: 1 });
  await cpp.fails('consumer.ack', { consumer: 'w', seq: 1 }, 404, /not pending/);
  await cpp.fails('consumer.ack', { consumer: 'nope', seq: 1 }, 404);
  await cpp.ok('consumer.progress', { consumer: 'w', seq: 2 });
  await cpp.ok('consumer.nak', { consumer: 'w', seq: 2 });
  const redelivered = await cpp.ok('consumer.pull', { consumer: 'w', batch: 1, wait_ms: 2000 });
  assert.deepEqual(redelivered.messages.map((m) => [m.seq, m.delivered]), [[2, 2]]);
  await cpp.ok('consumer.term', { consumer: 'w', seq: 3, reason: 'bad input' });
  await waitFor(async () => (await ctl.call('stream.info', { name: 'DLQ' })).state.messages === 1);
  const dead = await ctl.ok('stream.get', { name: 'DLQ', seq: 1 });
  assert.equal(dead.message.data.toString(), 'three');
  assert.match(dead.message.header['Dlq-Reason'], /bad input/);
  assert.equal(dead.message.header['Dlq-Consumer'], 'w');
  // A pull that waits is answered by the next publish.
  const waiting = cpp.call('consumer.pull', { consumer: 'w', batch: 1, wait_ms: 5000 });
  await delay(50);
  await cpp.ok('stream.pub', { subject: 'jobs.d', data: 'four' });
  assert.deepEqual((await waiting).messages.map((m) => m.data.toString()), ['four']);
  await cpp.fails('consumer.pull', { consumer: 'nope' }, 404);
});

test('C++ client: a push consumer delivers to a C++ subscriber; 429 at the subscription cap', async (t) => {
  const server = await startServer(t, { settings: { limits: { max_subscriptions_per_socket: 2 } } });
  const ctl = await Raw.open(t, server.url, { nsp: '/control' });
  const cpp = await Raw.open(t, server.url);
  await ctl.ok('stream.create', { name: 'P', subjects: ['p.>'] });
  await ctl.ok('consumer.add', { stream: 'P', name: 'pusher', deliver_subject: 'deliver.here', ack_policy: 'none' });
  const got = cpp.on('msg');
  await cpp.ok('sub', { subject: 'deliver.here' });
  for (const text of ['a', 'b', 'c']) await cpp.ok('stream.pub', { subject: 'p.x', data: text });
  await waitFor(() => got.length === 3);
  assert.deepEqual(got.map((m) => [m.data.toString(), m.stream, m.seq]), [['a', 'P', 1], ['b', 'P', 2], ['c', 'P', 3]]);
  await cpp.ok('sub', { subject: 'two' });
  await cpp.fails('sub', { subject: 'three' }, 429);
});
