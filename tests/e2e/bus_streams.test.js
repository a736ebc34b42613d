// The bus's persistent streams (bus.md §4–§8): the control plane's stream.* and consumer.* events on
// "/control", stream.pub with dedup and expectations, limits and discard policies, retention, and
// consumers — pull (batch, wait, no_wait), push (deliver_subject, deliver_group), every ack kind, ack
// waits, backoff, max_deliver with the dead-letter stream and the advisory, deliver policies — plus
// restarts: kill -9 keeps every acked publish and the consumers' state. Driven with npm socket.io-client.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, tempDir, delay } = require('./lib/server');
const { connectV4, waitFor } = require('./lib/clients');
const { BIG_BATCHES, call, ok, fails } = require('./lib/bus');

async function open(server, t, nsp = '') {
  const s = await connectV4(`${server.url}${nsp}`, { transports: ['websocket'], parser: BIG_BATCHES });
  t.after(() => s.close());
  return s;
}
// Both namespaces of one server.
async function setup(server, t) {
  return { ctl: await open(server, t, '/control'), data: await open(server, t) };
}
const texts = (messages) => messages.map((m) => m.data.toString());

test('streams: create is idempotent, conflicts are 409, overlaps refused, info/list/delete', async (t) => {
  const server = await startServer(t);
  const { ctl } = await setup(server, t);
  const { stream } = await ok(ctl, 'stream.create', { name: 'ORDERS', subjects: ['orders.*'] });
  assert.equal(stream.name, 'ORDERS');
  assert.deepEqual(stream.subjects, ['orders.*']);
  assert.equal(stream.storage, 'file');
  assert.equal(stream.retention, 'limits');
  assert.equal(stream.discard, 'old');
  assert.equal(stream.dedup_window_ms, 120000);
  assert.equal(stream.max_msgs, -1);
  assert.ok(stream.created_ms > 0);
  await delay(5);
  const again = await ok(ctl, 'stream.create', { name: 'ORDERS', subjects: ['orders.*'], max_msgs: 0, storage: 'file' });
  assert.equal(again.stream.created_ms, stream.created_ms, 'idempotent: the effective config is the same (§8.5)');
  await fails(ctl, 'stream.create', { name: 'ORDERS', subjects: ['orders.*'], max_msgs: 5 }, 409);
  await fails(ctl, 'stream.create', { name: 'OTHER', subjects: ['orders.new'] }, 409, /overlap/);
  await fails(ctl, 'stream.create', { name: 'OTHER2', subjects: ['*.new'] }, 409, /overlap/);
  await fails(ctl, 'stream.create', { name: 'OTHER3', subjects: ['>'] }, 409, /overlap/);
  await ok(ctl, 'stream.create', { name: 'OTHER', subjects: ['orders'] });  // one token: no overlap with orders.*
  await ok(ctl, 'stream.create', { name: 'MEM', subjects: ['mem.>'], storage: 'memory' });
  const { streams } = await ok(ctl, 'stream.list', {});
  assert.deepEqual(streams.map((s) => s.name).sort(), ['MEM', 'ORDERS', 'OTHER']);
  await fails(ctl, 'stream.update', { name: 'MEM', subjects: ['mem.>'], storage: 'file' }, 400, /storage/);
  await fails(ctl, 'stream.update', { name: 'NOPE', subjects: ['nope'] }, 404);
  const info = await ok(ctl, 'stream.info', { name: 'ORDERS' });
  assert.deepEqual(info.state, { messages: 0, bytes: 0, first_seq: 1, last_seq: 0, first_ts_ms: 0, last_ts_ms: 0, consumer_count: 0 });
  assert.deepEqual(info.consumers, []);
  await ok(ctl, 'stream.delete', { name: 'OTHER' });
  await fails(ctl, 'stream.info', { name: 'OTHER' }, 404);
  await fails(ctl, 'stream.delete', { name: 'OTHER' }, 404);
  for (const [payload, re] of [[{}, /^name/], [{ name: 'a.b' }, /^name/], [{ name: 'x'.repeat(65) }, /^name/],
    [{ name: 'S', subjects: 'a' }, /^subjects/], [{ name: 'S', subjects: ['a..b'] }, /^subjects/],
    [{ name: 'S', max_msgs: -2 }, /^max_msgs/], [{ name: 'S', max_bytes: 1.5 }, /^max_bytes/],
    [{ name: 'S', storage: 'disk' }, /^storage/], [{ name: 'S', retention: 'all' }, /^retention/],
    [{ name: 'S', discard: 'oldest' }, /^discard/], [{ name: 'S', dead_letter_stream: 'S' }, /^dead_letter_stream/]]) {
    await fails(ctl, 'stream.create', payload, 400, re);
  }
  await fails(ctl, 'stream.info', { name: 'ORDERS', extra: 1, nope: [] }, 404).catch(() => {});
});

test('stream.pub: seq, dedup by msg_id and Msg-Id, expectations, 404 and 409, direct get', async (t) => {
  const server = await startServer(t);
  const { ctl, data } = await setup(server, t);
  await ok(ctl, 'stream.create', { name: 'KV', subjects: ['kv.>'] });
  const a = await ok(data, 'stream.pub', { subject: 'kv.a', data: Buffer.from('one'), header: { h: '1' } });
  assert.deepEqual(a, { ok: true, stream: 'KV', seq: 1, duplicate: false });
  assert.equal((await ok(data, 'stream.pub', { subject: 'kv.b', data: 'two', msg_id: 'id-1' })).seq, 2);
  assert.deepEqual(await ok(data, 'stream.pub', { subject: 'kv.b', data: 'again', msg_id: 'id-1' }),
    { ok: true, stream: 'KV', seq: 2, duplicate: true });
  assert.deepEqual(await ok(data, 'stream.pub', { subject: 'kv.c', data: 'x', header: { 'Msg-Id': 'id-1' } }),
    { ok: true, stream: 'KV', seq: 2, duplicate: true }, 'msg_id and Msg-Id share one id space (§8.9)');
  assert.equal((await ok(data, 'stream.pub', { subject: 'kv.a', data: 'three', expect_last_seq: 2 })).seq, 3);
  await fails(data, 'stream.pub', { subject: 'kv.a', data: 'x', expect_last_seq: 2 }, 409);
  await fails(data, 'stream.pub', { subject: 'kv.a', data: 'x', expect_last_subject_seq: 1 }, 409);
  assert.equal((await ok(data, 'stream.pub', { subject: 'kv.a', data: 'four', expect_last_subject_seq: 3 })).seq, 4);
  assert.equal((await ok(data, 'stream.pub', { subject: 'kv.new', data: 'n', expect_last_subject_seq: 0 })).seq, 5);
  await fails(data, 'stream.pub', { subject: 'nobody.binds', data: 'x' }, 404);
  await fails(data, 'stream.pub', { subject: 'kv.a', data: 'x', stream: 'OTHER' }, 409);
  await fails(data, 'stream.pub', { subject: 'kv.*', data: 'x' }, 400, /^subject/);
  await fails(data, 'stream.pub', { subject: 'kv.a', data: 'x', expect_last_seq: -1 }, 400, /^expect_last_seq/);
  await fails(data, 'stream.pub', { subject: 'kv.a', data: 'x', msg_id: 7 }, 400, /^msg_id/);
  const { message } = await ok(ctl, 'stream.get', { name: 'KV', seq: 1 });
  assert.equal(message.stream, 'KV');
  assert.equal(message.subject, 'kv.a');
  assert.equal(message.seq, 1);
  assert.ok(Buffer.isBuffer(message.data));
  assert.equal(message.data.toString(), 'one');
  assert.deepEqual(message.header, { h: '1' });
  assert.ok(message.timestamp_ms > 0);
  const last = await ok(ctl, 'stream.get', { name: 'KV', last_by_subject: 'kv.a' });
  assert.equal(last.message.seq, 4);
  assert.equal(last.message.data.toString(), 'four');
  await fails(ctl, 'stream.get', { name: 'KV', seq: 99 }, 404);
  await fails(ctl, 'stream.get', { name: 'KV', last_by_subject: 'kv.zzz' }, 404);
  await fails(ctl, 'stream.get', { name: 'KV' }, 400, /^seq/);
  // A core pub on a bound subject is stored too; a stream.pub reaches core subscribers (§8.8).
  const got = [];
  data.on('msg', (m) => got.push(m));
  await ok(data, 'sub', { subject: 'kv.>' });
  await ok(data, 'pub', { subject: 'kv.core', data: 'core' });
  await ok(data, 'stream.pub', { subject: 'kv.both', data: 'both' });
  await waitFor(async () => (await call(ctl, 'stream.info', { name: 'KV' })).state.messages === 7);
  await waitFor(() => got.length === 2);
  assert.deepEqual(got.map((m) => m.data.toString()).sort(), ['both', 'core']);
  // Regression: a core pub's Msg-Id header deduplicates in the stream as a stream.pub's does (§8.9):
  // subscribers get both copies (core pub is at-most-once, nothing is deduplicated there), the stream one.
  await ok(data, 'pub', { subject: 'kv.dup', data: 'd1', header: { 'msg-id': 'dup-1' } });
  await ok(data, 'pub', { subject: 'kv.dup', data: 'd2', header: { 'Msg-Id': 'dup-1' } });
  await ok(data, 'stream.pub', { subject: 'kv.dup', data: 'd3', msg_id: 'dup-1' }).then((r) => assert.equal(r.duplicate, true));
  await waitFor(() => got.length === 4);
  const info = await call(ctl, 'stream.info', { name: 'KV' });
  assert.equal(info.state.messages, 8, 'one kv.dup message stored');
  assert.equal((await ok(ctl, 'stream.get', { name: 'KV', last_by_subject: 'kv.dup' })).message.data.toString(), 'd1');
});

test('limits: discard old and new, max_msg_size 413, per subject, max_bytes, max_age_ms, purge keeps seqs', async (t) => {
  const server = await startServer(t);
  const { ctl, data } = await setup(server, t);
  await ok(ctl, 'stream.create', { name: 'OLD', subjects: ['old'], max_msgs: 3 });
  for (let i = 1; i <= 5; ++i) await ok(data, 'stream.pub', { subject: 'old', data: `m${i}` });
  let info = await ok(ctl, 'stream.info', { name: 'OLD' });
  assert.equal(info.state.messages, 3);
  assert.equal(info.state.first_seq, 3);
  assert.equal(info.state.last_seq, 5);
  await ok(ctl, 'stream.create', { name: 'NEW', subjects: ['new'], max_msgs: 2, discard: 'new', max_msg_size: 10 });
  await ok(data, 'stream.pub', { subject: 'new', data: 'a' });
  await ok(data, 'stream.pub', { subject: 'new', data: 'b' });
  await fails(data, 'stream.pub', { subject: 'new', data: 'c' }, 503, /maximum messages exceeded/);
  await fails(data, 'stream.pub', { subject: 'new', data: 'x'.repeat(11) }, 413);
  await ok(ctl, 'stream.create', { name: 'BYTES', subjects: ['bytes'], max_bytes: 900, discard: 'new' });
  await ok(data, 'stream.pub', { subject: 'bytes', data: 'x'.repeat(100) });
  await fails(data, 'stream.pub', { subject: 'bytes', data: 'x'.repeat(150) }, 503, /maximum bytes exceeded/);
  await ok(ctl, 'stream.create', { name: 'PER', subjects: ['per.*'], max_msgs_per_subject: 2 });
  for (const s of ['a', 'a', 'b', 'a', 'b', 'b']) await ok(data, 'stream.pub', { subject: `per.${s}`, data: s });
  info = await ok(ctl, 'stream.info', { name: 'PER' });
  assert.equal(info.state.messages, 4);
  await ok(ctl, 'stream.create', { name: 'AGE', subjects: ['age'], max_age_ms: 300 });
  await ok(data, 'stream.pub', { subject: 'age', data: 'soon gone' });
  await waitFor(async () => (await call(ctl, 'stream.info', { name: 'AGE' })).state.messages === 0, 3000);
  // update applies new limits at once (§8.6)
  await ok(ctl, 'stream.update', { name: 'OLD', subjects: ['old'], max_msgs: 1 });
  info = await ok(ctl, 'stream.info', { name: 'OLD' });
  assert.equal(info.state.messages, 1);
  assert.equal(info.state.first_seq, 5);
  // purge: by subject with keep, then everything; seqs are never reused
  assert.equal((await ok(ctl, 'stream.purge', { name: 'PER', subject: 'per.a', keep: 1 })).purged, 1);
  assert.equal((await ok(ctl, 'stream.purge', { name: 'PER' })).purged, 3);
  info = await ok(ctl, 'stream.info', { name: 'PER' });
  assert.equal(info.state.first_seq, 7);
  assert.equal(info.state.last_seq, 6);
  assert.equal((await ok(data, 'stream.pub', { subject: 'per.a', data: 'after' })).seq, 7);
});

test('pull consumers: batch, wait, no_wait, ack, nak, term, progress, ack wait, max_ack_pending, info', async (t) => {
  const server = await startServer(t);
  const { ctl, data } = await setup(server, t);
  await ok(ctl, 'stream.create', { name: 'JOBS', subjects: ['jobs.>'] });
  for (let i = 1; i <= 5; ++i) await ok(data, 'stream.pub', { subject: `jobs.${i % 2 ? 'odd' : 'even'}`, data: `j${i}` });
  const { consumer } = await ok(ctl, 'consumer.add', { stream: 'JOBS', name: 'w', ack_wait_ms: 400, max_ack_pending: 3 });
  assert.equal(consumer.name, 'w');
  assert.equal(consumer.config.ack_policy, 'explicit');
  assert.equal(consumer.config.deliver_policy, 'all');
  assert.deepEqual(consumer.delivered, { consumer_seq: 0, stream_seq: 0 });
  assert.equal(consumer.num_pending, 5);
  await ok(ctl, 'consumer.add', { stream: 'JOBS', name: 'w', ack_wait_ms: 400, max_ack_pending: 3 });  // idempotent
  await fails(ctl, 'consumer.add', { stream: 'JOBS', name: 'w', ack_wait_ms: 500 }, 409);

  let r = await ok(data, 'consumer.pull', { consumer: 'w', batch: 10 });
  assert.deepEqual(texts(r.messages), ['j1', 'j2', 'j3'], 'max_ack_pending caps what is out');
  assert.deepEqual(r.messages.map((m) => [m.stream, m.seq, m.delivered]), [['JOBS', 1, 1], ['JOBS', 2, 1], ['JOBS', 3, 1]]);
  assert.ok(r.messages.every((m) => Buffer.isBuffer(m.data)));
  assert.deepEqual((await ok(data, 'consumer.pull', { consumer: 'w', no_wait: true })).messages, []);
  await ok(data, 'consumer.ack', { consumer: 'w', seq: 1 });
  await fails(data, 'consumer.ack', { consumer: 'w', seq: 1 }, 404);
  await fails(data, 'consumer.ack', { consumer: 'w', seq: 0 }, 400, /^seq/);
  await fails(data, 'consumer.ack', { consumer: 'w', seq: 'x' }, 400, /^seq/);
  await fails(data, 'consumer.ack', { consumer: 'nobody', seq: 1 }, 404);
  await ok(data, 'consumer.nak', { consumer: 'w', seq: 2 });
  await ok(data, 'consumer.term', { consumer: 'w', seq: 3, reason: 'bad' });
  r = await ok(data, 'consumer.pull', { consumer: 'w', batch: 10 });
  assert.deepEqual(r.messages.map((m) => [m.seq, m.delivered]), [[2, 2], [4, 1], [5, 1]], 'the nak first, then new ones');
  let info = (await ok(ctl, 'consumer.info', { stream: 'JOBS', name: 'w' })).consumer;
  assert.equal(info.num_ack_pending, 3);
  assert.equal(info.num_redelivered, 1);
  assert.equal(info.num_pending, 0);
  assert.deepEqual(info.ack_floor, { consumer_seq: 3, stream_seq: 1 });
  // progress holds seq 4; 2 and 5 time out and come back with delivered incremented.
  const t0 = Date.now();
  const keepAlive = setInterval(() => data.emit('consumer.progress', { consumer: 'w', seq: 4 }), 100);
  r = await ok(data, 'consumer.pull', { consumer: 'w', batch: 10, wait_ms: 2000 });
  clearInterval(keepAlive);
  assert.ok(Date.now() - t0 >= 300, 'redelivered only after the ack wait');
  assert.deepEqual(r.messages.map((m) => [m.seq, m.delivered]), [[2, 3], [5, 2]]);
  for (const seq of [2, 4, 5]) await ok(data, 'consumer.ack', { consumer: 'w', seq });
  info = (await ok(ctl, 'consumer.info', { stream: 'JOBS', name: 'w' })).consumer;
  assert.equal(info.num_ack_pending, 0);
  assert.deepEqual(info.ack_floor.stream_seq, 5);
  // A waiting pull wakes on a new message.
  const waiting = call(data, 'consumer.pull', { consumer: 'w', batch: 5, wait_ms: 5000 });
  await delay(100);
  await ok(data, 'stream.pub', { subject: 'jobs.late', data: 'late' });
  r = await waiting;
  assert.deepEqual(texts(r.messages), ['late']);
  const t1 = Date.now();
  assert.deepEqual((await ok(data, 'consumer.pull', { consumer: 'w', wait_ms: 200 })).messages, []);
  assert.ok(Date.now() - t1 >= 180);
  for (const [payload, re] of [[{ consumer: 'w', batch: 0 }, /^batch/], [{ consumer: 'w', batch: 1001 }, /^batch/],
    [{ consumer: 'w', wait_ms: 60001 }, /^wait_ms/], [{ consumer: 'w', no_wait: 1 }, /^no_wait/], [{}, /^consumer/]]) {
    await fails(data, 'consumer.pull', payload, 400, re);
  }
  await ok(ctl, 'consumer.delete', { stream: 'JOBS', name: 'w' });
  await fails(data, 'consumer.pull', { consumer: 'w' }, 404);
});

test('ack policies all and none, filter_subject, deliver policies, backoff', async (t) => {
  const server = await startServer(t);
  const { ctl, data } = await setup(server, t);
  await ok(ctl, 'stream.create', { name: 'S', subjects: ['s.*'] });
  for (let i = 1; i <= 6; ++i) await ok(data, 'stream.pub', { subject: i % 2 ? 's.a' : 's.b', data: `m${i}` });
  await ok(ctl, 'consumer.add', { stream: 'S', name: 'all', ack_policy: 'all' });
  let r = await ok(data, 'consumer.pull', { consumer: 'all', batch: 4 });
  await ok(data, 'consumer.ack', { consumer: 'all', seq: 3 });
  let info = (await ok(ctl, 'consumer.info', { stream: 'S', name: 'all' })).consumer;
  assert.equal(info.num_ack_pending, 1, 'acking 3 acked 1..3');
  await ok(ctl, 'consumer.add', { stream: 'S', name: 'none', ack_policy: 'none', filter_subject: 's.b' });
  r = await ok(data, 'consumer.pull', { consumer: 'none', batch: 10 });
  assert.deepEqual(texts(r.messages), ['m2', 'm4', 'm6']);
  info = (await ok(ctl, 'consumer.info', { stream: 'S', name: 'none' })).consumer;
  assert.equal(info.num_ack_pending, 0);
  assert.equal(info.ack_floor.stream_seq, 6);
  await ok(ctl, 'consumer.add', { stream: 'S', name: 'last', deliver_policy: 'last', filter_subject: 's.a' });
  assert.deepEqual(texts((await ok(data, 'consumer.pull', { consumer: 'last', batch: 10 })).messages), ['m5']);
  await ok(ctl, 'consumer.add', { stream: 'S', name: 'new', deliver_policy: 'new' });
  assert.deepEqual((await ok(data, 'consumer.pull', { consumer: 'new', no_wait: true })).messages, []);
  await ok(ctl, 'consumer.add', { stream: 'S', name: 'seq', deliver_policy: 'by_start_seq', opt_start_seq: 5 });
  assert.deepEqual(texts((await ok(data, 'consumer.pull', { consumer: 'seq', batch: 10 })).messages), ['m5', 'm6']);
  const mid = (await ok(ctl, 'stream.get', { name: 'S', seq: 4 })).message.timestamp_ms;
  await ok(ctl, 'consumer.add', { stream: 'S', name: 'time', deliver_policy: 'by_start_time', opt_start_time_ms: mid + 1000000 });
  assert.deepEqual((await ok(data, 'consumer.pull', { consumer: 'time', no_wait: true })).messages, []);
  await fails(ctl, 'consumer.add', { stream: 'S', name: 'bad', deliver_policy: 'by_start_seq' }, 400, /opt_start_seq/);
  await fails(ctl, 'consumer.add', { stream: 'S', name: 'a.b' }, 400, /^name/);
  await fails(ctl, 'consumer.add', { stream: 'NOPE', name: 'x' }, 404);
  await fails(ctl, 'consumer.add', { stream: 'S', name: 'all', ack_policy: 'none' }, 409);
  await ok(ctl, 'stream.create', { name: 'T', subjects: ['t'] });
  await fails(ctl, 'consumer.add', { stream: 'T', name: 'all' }, 409, /another stream/);
  // backoff replaces ack_wait for redeliveries (§8.13)
  await ok(ctl, 'consumer.add', { stream: 'S', name: 'bo', ack_wait_ms: 60000, backoff_ms: [100, 300], filter_subject: 's.a',
    deliver_policy: 'last' });
  const t0 = Date.now();
  await ok(data, 'consumer.pull', { consumer: 'bo', batch: 1 });
  r = await ok(data, 'consumer.pull', { consumer: 'bo', batch: 1, wait_ms: 3000 });
  assert.equal(r.messages[0].delivered, 2);
  assert.ok(Date.now() - t0 >= 90 && Date.now() - t0 < 2000, `first wait ~100 ms: ${Date.now() - t0}`);
});

test('max_deliver: the dead-letter stream gets one copy with Dlq-* headers, and the advisory is published', async (t) => {
  const server = await startServer(t);
  const { ctl, data } = await setup(server, t);
  await ok(ctl, 'stream.create', { name: 'DLQ', subjects: ['dlq.>'] });
  await ok(ctl, 'stream.create', { name: 'WORK', subjects: ['work'], dead_letter_stream: 'DLQ' });
  const advisories = [];
  data.on('msg', (m) => { if (m.subject.startsWith('$SYS.')) advisories.push(m); });
  await ok(data, 'sub', { subject: '$SYS.ADVISORY.>' });
  await ok(data, 'stream.pub', { subject: 'work', data: 'poison', header: { k: 'v' } });
  await ok(ctl, 'consumer.add', { stream: 'WORK', name: 'c', ack_wait_ms: 100, max_deliver: 2 });
  assert.equal((await ok(data, 'consumer.pull', { consumer: 'c' })).messages[0].delivered, 1);
  assert.equal((await ok(data, 'consumer.pull', { consumer: 'c', wait_ms: 2000 })).messages[0].delivered, 2);
  await waitFor(async () => (await call(ctl, 'stream.info', { name: 'DLQ' })).state.messages === 1, 3000);
  const { message } = await ok(ctl, 'stream.get', { name: 'DLQ', seq: 1 });
  assert.equal(message.data.toString(), 'poison');
  assert.deepEqual(message.header, { k: 'v', 'Dlq-Stream': 'WORK', 'Dlq-Consumer': 'c', 'Dlq-Seq': '1', 'Dlq-Reason': 'max_deliver' });
  await waitFor(() => advisories.length === 1);
  assert.equal(advisories[0].subject, '$SYS.ADVISORY.MAX_DELIVER.WORK.c');
  assert.deepEqual((await ok(data, 'consumer.pull', { consumer: 'c', wait_ms: 300 })).messages, []);
  await fails(data, 'consumer.ack', { consumer: 'c', seq: 1 }, 404);
  // term: one copy with the reason
  await ok(data, 'stream.pub', { subject: 'work', data: 'bad' });
  const r = await ok(data, 'consumer.pull', { consumer: 'c' });
  await ok(data, 'consumer.term', { consumer: 'c', seq: r.messages[0].seq, reason: 'unparseable' });
  await waitFor(async () => (await call(ctl, 'stream.info', { name: 'DLQ' })).state.messages === 2, 3000);
  assert.equal((await ok(ctl, 'stream.get', { name: 'DLQ', seq: 2 })).message.header['Dlq-Reason'], 'term: unparseable');
});

test('push consumers: deliver_subject, deliver_group, msg carries stream fields, acks pace it', async (t) => {
  const server = await startServer(t);
  const { ctl, data } = await setup(server, t);
  const w1 = await open(server, t);
  const w2 = await open(server, t);
  const got = [];
  for (const w of [w1, w2]) {
    w.on('msg', (m) => {
      got.push({ w, m });
      w.emit('consumer.ack', { consumer: 'pusher', seq: m.seq });
    });
    await ok(w, 'sub', { subject: 'deliver.here', queue: 'grp' });
  }
  await ok(ctl, 'stream.create', { name: 'P', subjects: ['p.*'] });
  await ok(ctl, 'consumer.add', { stream: 'P', name: 'pusher', deliver_subject: 'deliver.here', deliver_group: 'grp', max_ack_pending: 5 });
  for (let i = 0; i < 40; ++i) await ok(data, 'stream.pub', { subject: 'p.x', data: `v${i}` });
  await waitFor(() => got.length >= 40);
  await delay(200);
  assert.equal(got.length, 40, 'each message once across the group');
  const m = got[0].m;
  assert.equal(m.subject, 'p.x', 'the stored subject (§8.15)');
  assert.equal(m.stream, 'P');
  assert.equal(m.consumer, 'pusher');
  assert.ok(m.seq >= 1 && m.delivered === 1 && m.timestamp_ms > 0);
  assert.ok(got.some((g) => g.w === w1) && got.some((g) => g.w === w2), 'spread over the group');
  await fails(data, 'consumer.pull', { consumer: 'pusher' }, 409);
});

test('retention: interest keeps nothing without consumers and drops what all acked; workqueue one consumer per subject', async (t) => {
  const server = await startServer(t);
  const { ctl, data } = await setup(server, t);
  await ok(ctl, 'stream.create', { name: 'I', subjects: ['i'], retention: 'interest' });
  assert.equal((await ok(data, 'stream.pub', { subject: 'i', data: 'nobody' })).seq, 1);
  assert.equal((await ok(ctl, 'stream.info', { name: 'I' })).state.messages, 0);
  await ok(ctl, 'consumer.add', { stream: 'I', name: 'a' });
  await ok(ctl, 'consumer.add', { stream: 'I', name: 'b' });
  assert.equal((await ok(data, 'stream.pub', { subject: 'i', data: 'x' })).seq, 2);
  for (const c of ['a', 'b']) {
    const r = await ok(data, 'consumer.pull', { consumer: c });
    await ok(data, 'consumer.ack', { consumer: c, seq: r.messages[0].seq });
    if (c === 'a') assert.equal((await ok(ctl, 'stream.info', { name: 'I' })).state.messages, 1);
  }
  assert.equal((await ok(ctl, 'stream.info', { name: 'I' })).state.messages, 0);
  await ok(ctl, 'stream.create', { name: 'WQ', subjects: ['wq.*'], retention: 'workqueue' });
  await ok(ctl, 'consumer.add', { stream: 'WQ', name: 'w1', filter_subject: 'wq.a' });
  await fails(ctl, 'consumer.add', { stream: 'WQ', name: 'w2' }, 409);
  await fails(ctl, 'consumer.add', { stream: 'WQ', name: 'w3', filter_subject: 'wq.*' }, 409);
  await ok(ctl, 'consumer.add', { stream: 'WQ', name: 'w4', filter_subject: 'wq.b' });
  await ok(data, 'stream.pub', { subject: 'wq.a', data: 'job' });
  const r = await ok(data, 'consumer.pull', { consumer: 'w1' });
  await ok(data, 'consumer.ack', { consumer: 'w1', seq: r.messages[0].seq });
  assert.equal((await ok(ctl, 'stream.info', { name: 'WQ' })).state.messages, 0);
});

test('realms: streams and consumers never cross; manager tokens are confined', async (t) => {
  const tokens = [
    { token: 'a', realm: 'ra', role: 'both' }, { token: 'b', realm: 'rb', role: 'both' },
    { token: 'ma', realm: 'ra', role: 'manager' }, { token: 'mb', realm: 'rb', role: 'manager' },
  ];
  const server = await startServer(t, { settings: { auth: { enabled: true, tokens } } });
  const conn = async (nsp, token) => {
    const s = await connectV4(`${server.url}${nsp}`, { transports: ['websocket'], auth: { token }, parser: BIG_BATCHES });
    t.after(() => s.close());
    return s;
  };
  const ca = await conn('/control', 'ma');
  const cb = await conn('/control', 'mb');
  const da = await conn('', 'a');
  const db = await conn('', 'b');
  await ok(ca, 'stream.create', { name: 'SAME', subjects: ['x.>'] });
  await ok(cb, 'stream.create', { name: 'SAME', subjects: ['x.>'], max_msgs: 7 });  // another realm's own
  await ok(da, 'stream.pub', { subject: 'x.1', data: 'a' });
  assert.equal((await ok(cb, 'stream.info', { name: 'SAME' })).state.messages, 0);
  await ok(ca, 'consumer.add', { stream: 'SAME', name: 'c' });
  await fails(db, 'consumer.pull', { consumer: 'c' }, 404);
  assert.equal((await ok(da, 'consumer.pull', { consumer: 'c' })).messages.length, 1);
  const anon = await open(server, t);
  await fails(anon, 'stream.pub', { subject: 'x.1', data: 'a' }, 401);
  await fails(anon, 'consumer.pull', { consumer: 'c' }, 401);
});

for (const kill of [true, false]) {
  test(`file streams survive a restart (${kill ? 'kill -9' : 'SIGTERM'}): acked publishes, consumer state; memory streams do not`, async (t) => {
    const dataDir = tempDir(t);
    let server = await startServer(t, { dataDir });
    let { ctl, data } = await setup(server, t);
    await ok(ctl, 'stream.create', { name: 'D', subjects: ['d.>'], dedup_window_ms: 600000 });
    await ok(ctl, 'stream.create', { name: 'M', subjects: ['m'], storage: 'memory' });
    await ok(data, 'stream.pub', { subject: 'm', data: 'lost' });
    const acked = [];
    for (let i = 1; i <= 50; ++i) acked.push((await ok(data, 'stream.pub', { subject: `d.${i % 3}`, data: `p${i}`, msg_id: `id${i}` })).seq);
    await ok(ctl, 'consumer.add', { stream: 'D', name: 'c', ack_wait_ms: 60000 });
    const first = await ok(data, 'consumer.pull', { consumer: 'c', batch: 10 });
    for (const m of first.messages.slice(0, 6)) await ok(data, 'consumer.ack', { consumer: 'c', seq: m.seq });
    await ok(ctl, 'stream.purge', { name: 'D', subject: 'd.0', keep: 0 });  // removes 16 of them
    if (kill) await server.crash(); else await server.stop();
    data.close();
    ctl.close();

    server = await startServer(t, { dataDir });
    ({ ctl, data } = await setup(server, t));
    await fails(ctl, 'stream.info', { name: 'M' }, 404);
    const info = await ok(ctl, 'stream.info', { name: 'D' });
    assert.equal(info.state.last_seq, 50);
    assert.equal(info.state.messages, 50 - 16);
    assert.equal(info.consumers.length, 1);
    assert.equal(info.consumers[0].ack_floor.stream_seq, 6);
    // dedup ids survive (§8.9)
    assert.deepEqual(await ok(data, 'stream.pub', { subject: 'd.1', data: 'dup', msg_id: 'id7' }),
      { ok: true, stream: 'D', seq: 7, duplicate: true });
    // unacked ones come back first, with delivered incremented; acked ones never
    const again = await ok(data, 'consumer.pull', { consumer: 'c', batch: 100 });
    const seqs = again.messages.map((m) => m.seq);
    assert.ok(!seqs.some((s) => s <= 6), `acked never redelivered: ${seqs}`);
    const redelivered = again.messages.filter((m) => m.delivered === 2).map((m) => m.seq);
    assert.deepEqual(redelivered, first.messages.slice(6).map((m) => m.seq).filter((s) => s % 3 !== 0));
    assert.equal(new Set(seqs).size, seqs.length);
    assert.equal((await ok(data, 'stream.pub', { subject: 'd.1', data: 'next' })).seq, 51);
  });
}

// Regressions from the review of issue 15.
test('max_deliver holds however the deliveries came (naks), and a delayed nak waits even when already due', async (t) => {
  const server = await startServer(t);
  const { ctl, data } = await setup(server, t);
  await ok(ctl, 'stream.create', { name: 'DL', subjects: ['dl'] });
  await ok(ctl, 'stream.create', { name: 'N', subjects: ['n'], dead_letter_stream: 'DL' });
  await ok(ctl, 'consumer.add', { stream: 'N', name: 'c', max_deliver: 2, ack_wait_ms: 100 });
  await ok(data, 'stream.pub', { subject: 'n', data: 'x' });
  for (const want of [1, 2]) {
    const r = await ok(data, 'consumer.pull', { consumer: 'c', wait_ms: 1000 });
    assert.equal(r.messages[0].delivered, want);
    await ok(data, 'consumer.nak', { consumer: 'c', seq: 1 });
  }
  assert.deepEqual((await ok(data, 'consumer.pull', { consumer: 'c', wait_ms: 300 })).messages, [], 'no third delivery');
  await waitFor(async () => (await call(ctl, 'stream.info', { name: 'DL' })).state.messages === 1, 3000);
  // A delayed nak of a message whose ack wait already ran out: not before the delay.
  await ok(ctl, 'consumer.add', { stream: 'N', name: 'd', ack_wait_ms: 100 });
  await ok(data, 'consumer.pull', { consumer: 'd' });
  await delay(250);  // the ack wait ran out: due again
  await ok(data, 'consumer.nak', { consumer: 'd', seq: 1, delay_ms: 1500 });
  assert.deepEqual((await ok(data, 'consumer.pull', { consumer: 'd', no_wait: true })).messages, []);
});

test('deleting a workqueue consumer keeps the messages; an ack-none consumer beside a filtered one', async (t) => {
  const server = await startServer(t);
  const { ctl, data } = await setup(server, t);
  await ok(ctl, 'stream.create', { name: 'WQ', subjects: ['a.>', 'b.>'], retention: 'workqueue' });
  await ok(ctl, 'consumer.add', { stream: 'WQ', name: 'wa', filter_subject: 'a.>', ack_policy: 'none' });
  await ok(ctl, 'consumer.add', { stream: 'WQ', name: 'wb', filter_subject: 'b.>' });
  // A waiting pull on the ack-none consumer takes (and so removes) the message while the commit walks
  // the consumers: the next one's filter must not read it after it is gone (ASan caught it).
  const waiting = call(data, 'consumer.pull', { consumer: 'wa', wait_ms: 3000 });
  await delay(100);
  await ok(data, 'stream.pub', { subject: 'a.x', data: '1' });
  assert.equal((await waiting).messages.length, 1);
  for (let i = 0; i < 3; ++i) await ok(data, 'stream.pub', { subject: 'b.x', data: `${i}` });
  await ok(ctl, 'consumer.delete', { stream: 'WQ', name: 'wb' });
  assert.equal((await ok(ctl, 'stream.info', { name: 'WQ' })).state.messages, 3, 'unacked work stays');
});
