// Client-side helpers for the end-to-end tests: Socket.IO clients (v4 and v2), a raw Engine.IO
// WebSocket client (npm `ws`, speaking the wire format by hand like the Go tyo-mq client) and a
// hand-made WebSocket over a plain TCP socket (for a client that never reads).
'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const net = require('node:net');
const { io, Manager } = require('socket.io-client');
const ioV2 = require('socket.io-client-v2');
const WebSocket = require('ws');

// Sanitizer builds (SIOMQ_SANITIZED=1) run several times slower: waits stretch, bounds do not tighten.
const TIME_SCALE = process.env.SIOMQ_SANITIZED ? 4 : 1;
const DEFAULT_TIMEOUT_MS = 10000 * TIME_SCALE;

// Rejects with `what` when `promise` does not settle within `ms`.
function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// The first emission of `event` (its arguments as an array), or a timeout error.
function once(emitter, event, ms = DEFAULT_TIMEOUT_MS) {
  return withTimeout(new Promise((resolve) => emitter.once(event, (...args) => resolve(args))), ms,
    `event ${event}`);
}

// Resolves when `pred()` holds, checking every `step` ms.
async function waitFor(pred, ms = DEFAULT_TIMEOUT_MS, what = 'condition', step = 20) {
  const t0 = Date.now();
  for (;;) {
    if (await pred()) return;
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, step));
  }
}

// A socket.io-client@4 socket with reconnection off unless asked; resolves once connected.
async function connectV4(url, opts = {}, ms = DEFAULT_TIMEOUT_MS) {
  const socket = io(url, { forceNew: true, reconnection: false, timeout: ms, ...opts });
  try {
    await withTimeout(new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('connect_error', reject);
    }), ms, `connect to ${url}`);
  } catch (err) {
    socket.close();
    throw err;
  }
  return socket;
}

// The connect_error a socket.io-client@4 socket gets (it must not connect).
async function connectErrorV4(url, opts = {}, ms = DEFAULT_TIMEOUT_MS) {
  const socket = io(url, { forceNew: true, reconnection: false, ...opts });
  try {
    return await withTimeout(new Promise((resolve, reject) => {
      socket.once('connect', () => reject(new Error(`${url} connected but should have been refused`)));
      socket.once('connect_error', resolve);
    }), ms, `connect_error from ${url}`);
  } finally {
    socket.close();
  }
}

// emit with an ack callback; resolves with the ack's arguments as an array.
function emitAck(socket, event, ...args) {
  return withTimeout(new Promise((resolve) => socket.emit(event, ...args, (...reply) => resolve(reply))),
    DEFAULT_TIMEOUT_MS, `ack for ${event}`);
}

// PING on namespace "/": the ack carries a JSON string, which is returned parsed (with the raw text).
async function ping(socket, payload = {}) {
  const [reply] = await emitAck(socket, 'PING', payload);
  if (typeof reply !== 'string') throw new Error(`PING ack is not a string: ${JSON.stringify(reply)}`);
  return { raw: reply, body: JSON.parse(reply) };
}

// A socket.io-client v2 (Engine.IO 3) socket; resolves once connected.
async function connectV2(url, opts = {}, ms = DEFAULT_TIMEOUT_MS) {
  const socket = ioV2(url, { forceNew: true, reconnection: false, timeout: ms, ...opts });
  try {
    await withTimeout(new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('connect_error', reject);
      socket.once('error', reject);
    }), ms, `v2 connect to ${url}`);
  } catch (err) {
    socket.close();
    throw err;
  }
  return socket;
}

// A raw Engine.IO v4 WebSocket client: every text or binary message is queued, and next() takes
// the first one matching a predicate. With `autoPong`, a server ping "2" is answered "3".
class RawEio {
  constructor(url, { autoPong = true, query = 'EIO=4&transport=websocket', wsOptions = {} } = {}) {
    this.messages = [];
    this.waiters = [];
    this.autoPong = autoPong;
    this.closed = false;
    this.closeCode = null;
    this.ws = new WebSocket(`${url.replace(/^http/, 'ws')}/socket.io/?${query}`, wsOptions);
    this.ws.on('message', (data, isBinary) => {
      const msg = isBinary ? Buffer.from(data) : data.toString('utf8');
      if (msg === '2') this.pings = (this.pings || 0) + 1;
      if (this.autoPong && msg === '2') {
        this.send('3');
        return;
      }
      this.messages.push(msg);
      this.pump();
    });
    this.ws.on('error', () => {});  // a close follows; tests look at `closed`
    this.closedPromise = new Promise((resolve) => {
      this.ws.on('close', (code) => {
        this.closed = true;
        this.closeCode = code;
        this.closedAt = Date.now();
        this.pump();
        resolve(code);
      });
    });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', resolve);
      this.ws.once('error', reject);
    });
    this.opened.catch(() => {});
  }

  // Opens the socket and reads the Engine.IO open packet; returns it parsed.
  async open(ms = DEFAULT_TIMEOUT_MS) {
    await withTimeout(this.opened, ms, 'websocket open');
    const open = await this.next((m) => typeof m === 'string' && m.startsWith('0'), ms);
    this.handshake = JSON.parse(open.slice(1));
    return this.handshake;
  }

  // Joins a namespace ("/" by default); returns the CONNECT reply's data.
  async connect(nsp = '/', ms = DEFAULT_TIMEOUT_MS) {
    const prefix = nsp === '/' ? '40' : `40${nsp},`;
    this.send(prefix);
    const reply = await this.next((m) => typeof m === 'string' && (m.startsWith(prefix) || m.startsWith(nsp === '/' ? '44' : `44${nsp},`)), ms);
    if (reply.startsWith('44')) throw new Error(`CONNECT refused: ${reply}`);
    return JSON.parse(reply.slice(prefix.length));
  }

  send(data) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(data);
  }

  pump() {
    for (const w of [...this.waiters]) {
      const i = this.messages.findIndex(w.pred);
      if (i >= 0) {
        const [m] = this.messages.splice(i, 1);
        this.waiters.splice(this.waiters.indexOf(w), 1);
        clearTimeout(w.timer);
        w.resolve(m);
      } else if (this.closed) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        clearTimeout(w.timer);
        w.reject(new Error(`connection closed (code ${this.closeCode}) while waiting; got ${JSON.stringify(this.messages)}`));
      }
    }
  }

  // The first queued or future message satisfying `pred`.
  next(pred = () => true, ms = DEFAULT_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      const w = { pred, resolve, reject };
      w.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`no matching message within ${ms} ms; got ${JSON.stringify(this.messages)}`));
      }, ms);
      this.waiters.push(w);
      this.pump();
    });
  }

  // Resolves with the close code once the server closes the connection.
  waitClosed(ms = DEFAULT_TIMEOUT_MS) {
    return withTimeout(this.closedPromise, ms, 'server closing the websocket');
  }

  close() {
    if (!this.closed) this.ws.terminate();
  }
}

// A masked client WebSocket frame (RFC 6455 5.2), built by hand for sockets that bypass `ws`.
function clientFrame(payload, opcode = 1) {
  const data = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
  const mask = crypto.randomBytes(4);
  let header;
  if (data.length < 126) {
    header = Buffer.from([0x80 | opcode, 0x80 | data.length]);
  } else if (data.length < 65536) {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 0x80 | 126;
    header.writeUInt16BE(data.length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(data.length), 2);
  }
  const masked = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i++) masked[i] = data[i] ^ mask[i % 4];
  return Buffer.concat([header, mask, masked]);
}

// Opens a TCP socket and performs the WebSocket handshake for Engine.IO v4 by hand; resolves with
// the socket once the 101 arrived. The socket is then paused: nothing more is read unless resumed.
function handmadeWebSocket(port, ms = DEFAULT_TIMEOUT_MS) {
  return withTimeout(new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let head = Buffer.alloc(0);
    sock.on('error', reject);
    sock.on('connect', () => {
      const key = crypto.randomBytes(16).toString('base64');
      sock.write(`GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
        `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    const onData = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onData);
      sock.pause();
      const status = head.slice(0, head.indexOf('\r\n')).toString();
      if (!/^HTTP\/1\.1 101/.test(status)) {
        reject(new Error(`websocket handshake failed: ${status}`));
        sock.destroy();
        return;
      }
      sock.off('error', reject);
      sock.on('error', () => {});
      resolve(sock);
    };
    sock.on('data', onData);
  }), ms, 'hand-made websocket handshake');
}

// Joins the CONSUME_CHUNK pieces of deliveries on `event` (§4.2); calls onDelivery with each parsed one.
function onChunked(socket, event, onDelivery) {
  const transfers = new Map();
  socket.on('CONSUME_CHUNK', (c) => {
    if (c.event !== event) return;
    const pieces = transfers.get(c.transferId) || [];
    pieces[c.index] = c.data;
    transfers.set(c.transferId, pieces);
    if (pieces.filter((x) => x !== undefined).length === c.total) {
      transfers.delete(c.transferId);
      onDelivery(JSON.parse(pieces.join('')));
    }
  });
}

// Every payload of `event` on `socket`, in order.
function collect(socket, event) {
  const got = [];
  socket.on(event, (m) => got.push(m));
  return got;
}

// A tyo-mq ACK with a callback (§3.7): the ACK_OK / ACK_FAIL event and the callback must agree; resolves
// with { name: 'ACK_OK' | 'ACK_FAIL', ...reply }. One ACK at a time per socket.
async function ack(socket, payload) {
  const event = new Promise((resolve) => {
    const ok = (m) => { socket.off('ACK_FAIL', fail); resolve(['ACK_OK', m]); };
    const fail = (m) => { socket.off('ACK_OK', ok); resolve(['ACK_FAIL', m]); };
    socket.once('ACK_OK', ok);
    socket.once('ACK_FAIL', fail);
  });
  const reply = await socket.timeout(5000 * TIME_SCALE).emitWithAck('ACK', payload);
  const [name, body] = await withTimeout(event, 5000 * TIME_SCALE, 'ACK_OK or ACK_FAIL');
  assert.deepEqual(body, reply, 'the event and the callback carry the same answer');
  return { name, ...reply };
}

module.exports = {
  io, Manager, ioV2, WebSocket, ack,
  withTimeout, once, waitFor, connectV4, connectErrorV4, connectV2, emitAck, ping, onChunked, collect,
  RawEio, clientFrame, handmadeWebSocket, DEFAULT_TIMEOUT_MS, TIME_SCALE,
};
