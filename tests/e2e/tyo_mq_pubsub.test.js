// tyo-mq live traffic on "/": registration, subscriptions, exact / TYO-MQ-ALL / TM-ALL / topic / group
// routing, presence, UNSUBSCRIBE and malformed requests, against a real server (protocol §3, §4).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { connectV4, once: onceArgs, waitFor, RawEio, collect } = require('./lib/clients');

// The first argument of the next `event` on `socket`.
const once = async (socket, event) => (await onceArgs(socket, event))[0];

async function clients(server, n) {
  const list = [];
  for (let i = 0; i < n; i++) list.push(await connectV4(server.url, { transports: ['websocket'] }));
  return list;
}

// A round trip through the server, so that everything sent before it has been handled.
async function settle(...sockets) {
  await Promise.all(sockets.map((s) => s.timeout(5000).emitWithAck('PING', {})));
  await delay(50);
}

async function subscribe(socket, fields) {
  socket.emit('SUBSCRIBE', fields);
  await settle(socket);
}

test('a producer reaches its subscriber; payloads may be JSON strings; the message is relayed as sent', async (t) => {
  const server = await startServer(t);
  const [p, c] = await clients(server, 2);
  t.after(() => { p.close(); c.close(); });
  p.emit('PRODUCER', { name: 'orders' });
  c.emit('CONSUMER', JSON.stringify({ name: 'mailer', id: 'mailer', consumer_id: 'mailer' }));
  await subscribe(c, JSON.stringify({ event: 'Placed', producer: 'orders', consumer: 'mailer', consumer_id: 'mailer' }));
  const got = collect(c, 'CONSUME-orders-placed');
  p.emit('PRODUCE', { event: 'Placed', from: 'orders', message: { id: 1, items: ['a'] } });
  p.emit('PRODUCE', JSON.stringify({ event: 'Placed', from: 'orders', message: 'two', to: ['x'], enc: { v: 1 } }));
  p.emit('PRODUCE', { event: 'placed-other', from: 'orders', message: 3 });
  await waitFor(() => got.length === 2, 5000, 'two deliveries');
  assert.deepEqual(got[0], { event: 'Placed', message: { id: 1, items: ['a'] }, from: 'orders' });
  assert.deepEqual(got[1], { event: 'Placed', message: 'two', from: 'orders', enc: { v: 1 }, to: ['x'] });
  await settle(p, c);
  assert.equal(got.length, 2);
  await server.stop();
});

test('the raw message bytes are spliced into the delivery, not re-encoded', async (t) => {
  const server = await startServer(t);
  const raw = new RawEio(server.url);
  t.after(() => raw.ws.terminate());
  await raw.open();
  await raw.connect();
  raw.send('42["SUBSCRIBE",{"event":"e","producer":"p","consumer":"c"}]');
  raw.send('421["PING",{}]');
  await raw.next((m) => typeof m === 'string' && m.startsWith('431'));
  raw.send('42["PRODUCE",{"event":"e","from":"p","message":{"n" : 1.50, "u":"\\u00e9"}}]');
  const delivery = await raw.next((m) => typeof m === 'string' && m.startsWith('42["CONSUME-p-e"'));
  assert.equal(delivery, '42["CONSUME-p-e",{"event":"e","message":{"n" : 1.50, "u":"\\u00e9"},"from":"p"}]');
  await server.stop();
});

test('binary attachments in a message reach the consumer', async (t) => {
  const server = await startServer(t);
  const [p, c] = await clients(server, 2);
  t.after(() => { p.close(); c.close(); });
  await subscribe(c, { event: 'blob', producer: 'p', consumer: 'c' });
  const got = collect(c, 'CONSUME-p-blob');
  p.emit('PRODUCE', { event: 'blob', from: 'p', message: { data: Buffer.from([1, 2, 3]), more: [Buffer.from('hi')] } });
  await waitFor(() => got.length === 1, 5000, 'binary delivery');
  assert.deepEqual([...got[0].message.data], [1, 2, 3]);
  assert.equal(Buffer.from(got[0].message.more[0]).toString(), 'hi');
  await server.stop();
});

test('the producer-name check is case-sensitive; TYO-MQ-ALL opens it; two matching keys give two copies', async (t) => {
  const server = await startServer(t);
  const [p, c1, c2] = await clients(server, 3);
  t.after(() => { p.close(); c1.close(); c2.close(); });
  await subscribe(c1, { event: 'hello', producer: 'proda', consumer: 'c1' });
  const lowerKey = collect(c1, 'CONSUME-proda-hello');
  p.emit('PRODUCE', { event: 'hello', from: 'ProdA', message: 1 });
  await settle(p, c1);
  assert.equal(lowerKey.length, 0, 'subscribed to "proda", produced as "ProdA"');

  await subscribe(c2, { event: 'hello', producer: 'ProdA', consumer: 'c2' });
  await subscribe(c2, { event: 'hello', producer: 'TYO-MQ-ALL', consumer: 'c2' });
  const exact = collect(c2, 'CONSUME-proda-hello');
  const any = collect(c2, 'CONSUME-tyo-mq-all-hello');
  p.emit('PRODUCE', { event: 'Hello', from: 'ProdA', message: 2 });
  await waitFor(() => exact.length === 1 && any.length === 1, 5000, 'a copy per key');
  assert.equal(exact[0].event, 'Hello');
  await server.stop();
});

test('scope all (event TM-ALL) receives every event of the producer on CONSUME-<producer>-TM-ALL', async (t) => {
  const server = await startServer(t);
  const [p, c] = await clients(server, 2);
  t.after(() => { p.close(); c.close(); });
  await subscribe(c, { event: 'TM-ALL', producer: 'Sensor', consumer: 'c', scope: 'all' });
  const got = collect(c, 'CONSUME-sensor-TM-ALL');
  p.emit('PRODUCE', { event: 'temp', from: 'Sensor', message: 20 });
  p.emit('PRODUCE', { event: 'humidity', from: 'Sensor', message: 50 });
  await waitFor(() => got.length === 2, 5000, 'both events');
  assert.deepEqual(got.map((m) => m.event), ['temp', 'humidity']);
  await server.stop();
});

test('topic mode: + and # as the reference matches them, the producer ignored', async (t) => {
  const server = await startServer(t);
  const [p, c] = await clients(server, 2);
  t.after(() => { p.close(); c.close(); });
  const patterns = { 'a/#': [], 'x/+/z': [], 'a+': [] };
  for (const pattern of Object.keys(patterns)) {
    await subscribe(c, { event: pattern, producer: 'TYO-MQ-ALL', consumer: 'c', mode: 'topic' });
    c.on(`CONSUME-tyo-mq-all-${pattern}`, (m) => patterns[pattern].push(m.event));
  }
  for (const topic of ['a', 'a/b/c', 'x//z', 'x/y/z', 'x/y', 'a+', 'ab', 'A/B']) {
    p.emit('PRODUCE', { event: topic, from: 'anyone', message: topic });
  }
  await settle(p, c);
  await waitFor(() => patterns['a/#'].length === 3, 5000, 'a/# deliveries');
  assert.deepEqual(patterns['a/#'], ['a', 'a/b/c', 'A/B']);
  assert.deepEqual(patterns['x/+/z'], ['x//z', 'x/y/z']);
  assert.deepEqual(patterns['a+'], ['a+']);
  await server.stop();
});

test('two consumers in a group share 1,000 messages evenly; an ungrouped one gets all', async (t) => {
  const server = await startServer(t);
  const [p, w1, w2, all] = await clients(server, 4);
  t.after(() => { for (const s of [p, w1, w2, all]) s.close(); });
  await subscribe(w1, { event: 'job', producer: 'p', consumer: 'w1', group: 'workers' });
  await subscribe(w2, { event: 'job', producer: 'p', consumer: 'w2', options: { group: 'workers' } });
  await subscribe(all, { event: 'job', producer: 'p', consumer: 'audit' });
  const g1 = collect(w1, 'CONSUME-p-job');
  const g2 = collect(w2, 'CONSUME-p-job');
  const a = collect(all, 'CONSUME-p-job');
  for (let i = 0; i < 1000; i++) p.emit('PRODUCE', { event: 'job', from: 'p', message: i });
  await waitFor(() => a.length === 1000 && g1.length + g2.length === 1000, 20000, 'all deliveries');
  assert.ok(Math.abs(g1.length - g2.length) <= 1, `${g1.length} vs ${g2.length}`);
  await server.stop();
});

test('presence: SUBSCRIBE-TO, CONNECT and DISCONNECT as §4.7 describes', async (t) => {
  const server = await startServer(t);
  const [p, c] = await clients(server, 2);
  t.after(() => { p.close(); c.close(); });
  p.emit('PRODUCER', { name: 'prod', id: 'prod-id' });
  c.emit('CONSUMER', { name: 'cons', id: 'cons-id' });
  await settle(p, c);
  const subscribeTo = once(p, 'SUBSCRIBE-TO-prod-id');
  c.emit('SUBSCRIBE', { event: 'e', producer: 'prod', consumer: 'cons', id: 'cons-id' });
  assert.deepEqual(await subscribeTo, { name: 'cons', id: 'cons-id', socket: c.id, events: ['prod-e'], online: true });

  // The producer leaves: the consumer hears DISCONNECT; it comes back: SUBSCRIBE-TO again and CONNECT.
  const gone = once(c, 'DISCONNECT-cons-id');
  const producerSocket = p.id;
  p.close();
  assert.deepEqual(await gone, { event: 'DISCONNECT', socket: producerSocket, producer: 'prod' });
  const [p2] = await clients(server, 1);
  t.after(() => p2.close());
  const again = once(p2, 'SUBSCRIBE-TO-prod-id');
  const connect = once(c, 'CONNECT-cons-id');
  p2.emit('PRODUCER', { name: 'prod', id: 'prod-id' });
  assert.equal((await again).name, 'cons');
  assert.deepEqual(await connect, { event: 'CONNECT', socket: p2.id, producer: 'prod' });

  // The consumer leaves: the producer hears DISCONNECT with the consumer's name.
  const left = once(p2, 'DISCONNECT-prod-id');
  const consumerSocket = c.id;
  c.close();
  assert.deepEqual(await left, { event: 'DISCONNECT', socket: consumerSocket, consumer: 'cons' });
  await server.stop();
});

test('every name on a disconnected socket goes offline (§0 row 5)', async (t) => {
  const server = await startServer(t);
  const [multi, watcher] = await clients(server, 2);
  t.after(() => watcher.close());
  multi.emit('PRODUCER', { name: 'first', id: 'first' });
  multi.emit('PRODUCER', { name: 'second', id: 'second' });
  watcher.emit('CONSUMER', { name: 'w', id: 'w' });
  await subscribe(watcher, { event: 'e', producer: 'second', consumer: 'w', id: 'w' });
  const gone = once(watcher, 'DISCONNECT-w');
  multi.close();
  assert.equal((await gone).producer, 'second');
  await server.stop();
});

test('a duplicate consumer name gets ERROR -3 and is disconnected; the holder keeps it', async (t) => {
  const server = await startServer(t);
  const [a, b] = await clients(server, 2);
  t.after(() => { a.close(); b.close(); });
  a.emit('CONSUMER', { name: 'dup' });
  await settle(a);
  const error = once(b, 'ERROR');
  const disconnected = once(b, 'disconnect');
  b.emit('CONSUMER', { name: 'dup' });
  assert.deepEqual(await error, { message: 'Duplicate consumer name: dup', code: -3 });
  await disconnected;
  assert.ok(a.connected);
  await server.stop();
});

test('UNSUBSCRIBE by key or by {event, producer, consumer} stops deliveries', async (t) => {
  const server = await startServer(t);
  const [p, c] = await clients(server, 2);
  t.after(() => { p.close(); c.close(); });
  await subscribe(c, { event: 'one', producer: 'p', consumer: 'c' });
  await subscribe(c, { event: 'two', producer: 'p', consumer: 'c' });
  const one = collect(c, 'CONSUME-p-one');
  const two = collect(c, 'CONSUME-p-two');
  c.emit('UNSUBSCRIBE', 'p-one');
  c.emit('UNSUBSCRIBE', { event: 'two', producer: 'p', consumer: 'c' });
  await settle(c);
  p.emit('PRODUCE', { event: 'one', from: 'p', message: 1 });
  p.emit('PRODUCE', { event: 'two', from: 'p', message: 2 });
  await settle(p, c);
  assert.equal(one.length + two.length, 0);
  await server.stop();
});

test('malformed requests get ERROR (and a failed ack) and the server keeps serving', async (t) => {
  const server = await startServer(t);
  const [bad, p, c] = await clients(server, 3);
  t.after(() => { bad.close(); p.close(); c.close(); });
  const errors = collect(bad, 'ERROR');
  bad.emit('PRODUCE', { from: 'x', message: 1 });
  bad.emit('PRODUCE', null);
  bad.emit('PRODUCE', 'not json');
  bad.emit('PRODUCE', { event: 'e', method: 'broadcast', broadcast: 'realm' });
  bad.emit('SUBSCRIBE', { producer: 'p' });
  bad.emit('SUBSCRIBE', { event: 'e', consumer: 42 });
  bad.emit('PRODUCER', { name: 5 });
  bad.emit('CONSUMER', {});
  const ack = await bad.timeout(5000).emitWithAck('PRODUCE', { message: 'no event' });
  assert.deepEqual(ack, { ok: false, code: 400, message: "PRODUCE requires 'event'" });
  await waitFor(() => errors.length === 9, 5000, 'nine ERROR events');
  assert.equal(errors[4], 'Message name should be a object');
  assert.deepEqual(errors[6], { message: "Incorrect producer's name", code: -1 });
  assert.deepEqual(errors[7], { message: "Incorrect consumer's name", code: -1 });
  for (const i of [0, 1, 2, 3, 5, 8]) assert.equal(errors[i].code, -2, JSON.stringify(errors[i]));
  assert.ok(bad.connected);
  // Everyone else is unaffected.
  await subscribe(c, { event: 'ok', producer: 'p', consumer: 'c' });
  const got = collect(c, 'CONSUME-p-ok');
  p.emit('PRODUCE', { event: 'ok', from: 'p', message: true });
  await waitFor(() => got.length === 1, 5000, 'a delivery after the bad input');
  await server.stop();
});

test('a subscriber that stops reading live traffic is cut off as a slow consumer; the others keep receiving', async (t) => {
  const { handmadeWebSocket, clientFrame } = require('./lib/clients');
  const server = await startServer(t, { settings: { transport: { max_outbound_bytes: 1048576 } } });
  const [p, fast] = await clients(server, 2);
  t.after(() => { p.close(); fast.close(); });
  const slow = await handmadeWebSocket(server.port);  // paused: never reads
  t.after(() => slow.destroy());
  const closed = new Promise((resolve) => slow.on('close', resolve));
  slow.write(clientFrame('40'));
  slow.write(clientFrame('42["SUBSCRIBE",{"event":"tick","producer":"p","consumer":"slow"}]'));
  await subscribe(fast, { event: 'tick', producer: 'p', consumer: 'fast' });
  await delay(200);
  const got = collect(fast, 'CONSUME-p-tick');
  const body = 'y'.repeat(4096);
  for (let i = 0; i < 2000; i++) {
    p.emit('PRODUCE', { event: 'tick', from: 'p', message: body });
    if (i % 200 === 199) await settle(p);
  }
  await waitFor(() => got.length === 2000, 20000, 'the fast consumer gets everything');
  await server.waitForLog('slow consumer', 10000);
  slow.resume();
  slow.on('data', () => {});
  await closed;
  await server.stop();
});
