#!/usr/bin/env node
// A minimal tyo-mq relay on socket.io@4, as a user would hand-write one: PRODUCER / CONSUMER / SUBSCRIBE /
// PRODUCE delivered as CONSUME-<lower(producer-event)>, and durable subscriptions kept in memory with
// ACK. No topics, groups, TTL, chunks, auth or persistence. Usage: node bench/peers/relay.js [port]
const path = require('path');
const { Server } = require(path.join(__dirname, 'node_modules/socket.io'));

const port = Number(process.argv[2] || process.env.PORT || 17353);
const io = new Server(port, { serveClient: false, maxHttpBufferSize: 16 << 20 });

const keyOf = (producer, event) => `${producer}-${event}`.toLowerCase();
const subscribers = new Map();  // key -> Map(consumer name -> subscription)
const durables = new Map();     // consumer id + key -> { socket, key, queue: [], unacked: Map(msgId -> message) }
let nextId = 1;

function deliver(d) {
  while (d.socket && d.socket.connected && d.queue.length > 0) {
    const m = d.queue.shift();
    d.unacked.set(m.msgId, m);
    d.socket.emit(`CONSUME-${d.key}`, m);
  }
}

io.on('connection', (socket) => {
  const mine = [];  // the durable queues this socket consumes
  socket.on('PING', (_, ack) => { if (typeof ack === 'function') ack('PONG'); });
  socket.on('PRODUCER', (p) => { socket.data.producer = p && p.name; });
  socket.on('CONSUMER', (c) => { socket.data.consumer = c && c.name; });
  socket.on('SUBSCRIBE', (s) => {
    if (!s || typeof s.event !== 'string' || typeof s.producer !== 'string') return socket.emit('ERROR', { message: 'bad SUBSCRIBE' });
    const key = keyOf(s.producer, s.event);
    const name = s.consumer || socket.data.consumer || socket.id;
    if (!subscribers.has(key)) subscribers.set(key, new Map());
    const sub = { socket, durable: null };
    if (s.durable) {
      const id = `${s.consumer_id || name}\u0000${key}`;
      if (!durables.has(id)) durables.set(id, { socket, key, queue: [], unacked: new Map() });
      const d = durables.get(id);
      // A new connection gets what the old one left unacknowledged, first and in order.
      d.queue.unshift(...d.unacked.values());
      d.unacked.clear();
      d.socket = socket;
      sub.durable = d;
      mine.push(d);
      deliver(d);
    }
    subscribers.get(key).set(name, sub);
  });
  socket.on('PRODUCE', (m) => {
    if (!m || typeof m.event !== 'string') return socket.emit('ERROR', { message: 'bad PRODUCE' });
    const from = m.from || socket.data.producer;
    const key = keyOf(from, m.event);
    const subs = subscribers.get(key);
    if (!subs) return;
    for (const sub of subs.values()) {
      if (sub.durable) {
        sub.durable.queue.push({ event: m.event, message: m.message, from, msgId: String(nextId++) });
        deliver(sub.durable);
      } else if (sub.socket.connected) {
        sub.socket.emit(`CONSUME-${key}`, { event: m.event, message: m.message, from });
      }
    }
  });
  socket.on('ACK', (a) => {
    const msgId = a && String(a.msgId);
    for (const d of mine) {
      if (d.unacked.delete(msgId)) return socket.emit('ACK_OK', { msgId });
    }
    socket.emit('ACK_FAIL', { msgId, reason: 'unknown' });
  });
  socket.on('disconnect', () => {
    for (const d of mine) if (d.socket === socket) d.socket = null;
  });
});
process.on('SIGTERM', () => process.exit(0));
