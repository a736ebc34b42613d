// A minimal Redis client for the tests (no npm package needed): one command per connection, RESP
// replies parsed into strings, numbers, arrays, null or an Error. Used to look at what the redis store
// wrote and to remove a test's keys afterwards.
'use strict';

const net = require('node:net');

// { host, port, db } of a redis://[:password@]host[:port][/db] URL (password ignored: tests use none).
function parseUrl(url) {
  const u = new URL(url);
  return { host: u.hostname || '127.0.0.1', port: Number(u.port) || 6379, db: Number(u.pathname.slice(1)) || 0 };
}

function encode(args) {
  let out = `*${args.length}\r\n`;
  for (const a of args) {
    const b = Buffer.from(String(a), 'utf8');
    out += `$${b.length}\r\n${b.toString('utf8')}\r\n`;
  }
  return out;
}

// Parses one reply at `pos`; returns [value, next position] or null when more bytes are needed.
function parse(buf, pos) {
  const eol = buf.indexOf('\r\n', pos);
  if (eol < 0) return null;
  const type = String.fromCharCode(buf[pos]);
  const line = buf.toString('utf8', pos + 1, eol);
  const next = eol + 2;
  switch (type) {
    case '+': return [line, next];
    case '-': return [new Error(line), next];
    case ':': return [Number(line), next];
    case '$': {
      const n = Number(line);
      if (n < 0) return [null, next];
      if (buf.length < next + n + 2) return null;
      return [buf.toString('utf8', next, next + n), next + n + 2];
    }
    case '*': {
      const n = Number(line);
      if (n < 0) return [null, next];
      const items = [];
      let p = next;
      for (let i = 0; i < n; i++) {
        const r = parse(buf, p);
        if (!r) return null;
        items.push(r[0]);
        p = r[1];
      }
      return [items, p];
    }
    default: throw new Error(`unexpected RESP type ${type}`);
  }
}

// Runs the commands (arrays of arguments) on one connection, after SELECT db; resolves with their replies.
function redis(url, ...commands) {
  const { host, port, db } = parseUrl(url);
  const all = db ? [['SELECT', db], ...commands] : commands;
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, host);
    let buf = Buffer.alloc(0);
    const replies = [];
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`redis ${url}: no reply`)); }, 10000);
    sock.on('error', (err) => { clearTimeout(timer); reject(err); });
    sock.on('connect', () => sock.write(all.map(encode).join('')));
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      let pos = 0;
      for (;;) {
        const r = parse(buf, pos);
        if (!r) break;
        replies.push(r[0]);
        pos = r[1];
      }
      buf = buf.subarray(pos);
      if (replies.length === all.length) {
        clearTimeout(timer);
        sock.end();
        resolve(db ? replies.slice(1) : replies);
      }
    });
  });
}

// Where a test's store lives across its restarts: a data directory of its own (`file`), or a key prefix
// of its own in SIOMQ_TEST_REDIS_URL (`redis`), its hashes (every record family's) deleted after the
// test. Returns { args, dataDir, store } — `store` goes into the settings (redis: storage_options).
function storeFor(t, backend, tempDir) {
  if (backend === 'file') return { args: ['--storage', 'file'], dataDir: tempDir(t), store: {} };
  const url = process.env.SIOMQ_TEST_REDIS_URL;
  const prefix = `siomq-e2e-${process.pid}-${require('node:crypto').randomBytes(6).toString('hex')}`;
  const hashes = ['rows', 'dead', 'subs', 'stream', 'consumers', 'directory', 'quarantine'];
  t.after(() => redis(url, ['DEL', ...hashes.map((h) => `${prefix}:${h}`)]));
  return { args: ['--storage', 'redis'], store: { storage_options: { url, prefix } } };
}

// A SUBSCRIBE connection: every message on `channels` is kept as {channel, message}; close() ends it.
// Resolves once Redis confirmed every channel. With { pattern: true } it PSUBSCRIBEs instead: an observer
// that PUBSUB NUMSUB does not count (so siomq nodes do not take it for a reference node).
function subscriber(url, channels, { pattern = false } = {}) {
  const { host, port } = parseUrl(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, host);
    let buf = Buffer.alloc(0);
    const messages = [];
    let confirmed = 0;
    sock.on('error', reject);
    sock.on('connect', () => sock.write(encode([pattern ? 'PSUBSCRIBE' : 'SUBSCRIBE', ...channels])));
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      let pos = 0;
      for (;;) {
        const r = parse(buf, pos);
        if (!r) break;
        pos = r[1];
        const [kind, channel, body] = r[0];
        if ((kind === 'subscribe' || kind === 'psubscribe') && ++confirmed === channels.length) {
          resolve({ messages, close: () => sock.destroy() });
        }
        if (kind === 'message') messages.push({ channel, message: body });
        if (kind === 'pmessage') messages.push({ channel: r[0][2], message: r[0][3] });
      }
      buf = buf.subarray(pos);
    });
  });
}

module.exports = { redis, storeFor, subscriber, parseUrl };
