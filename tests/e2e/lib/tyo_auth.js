// Helpers for the auth, management and limits tests: tyo-mq §8.1 proofs signed the way the reference
// clients sign them, HS256 JWTs, AUTHENTICATION round trips, management commands, and a small
// external-validator HTTP server.
'use strict';

const crypto = require('node:crypto');
const http = require('node:http');
const { connectV4, emitAck, once, withTimeout, DEFAULT_TIMEOUT_MS } = require('./clients');

// A websocket socket.io-client@4 connection to `server`, closed after the test.
async function connectFor(server, t, opts = {}) {
  const s = await connectV4(server.url, { transports: ['websocket'], ...opts });
  t.after(() => s.close());
  return s;
}

// tyo-mq's stableStringify: keys sorted by JavaScript's default sort at every depth, no whitespace.
function stableStringify(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : stableStringify(x))).join(',')}]`;
  const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(v[k])}`).join(',')}}`;
}

// {timestamp, nonce, signature} for `action` over `body` with `secret` (§8.1).
function sign(action, body, secret, { timestamp = Date.now(), nonce = crypto.randomBytes(16).toString('hex') } = {}) {
  const base = `${action}\n${String(timestamp)}\n${nonce}\n${stableStringify(body === undefined ? {} : body)}`;
  const signature = crypto.createHmac('sha256', secret).update(base, 'utf8').digest('hex');
  return { timestamp, nonce, signature };
}

// An AUTH_MANAGEMENT_COMMAND with an ack callback; resolves with the reply object.
async function manage(socket, body, secret, proofOpts) {
  const [reply] = await emitAck(socket, 'AUTH_MANAGEMENT_COMMAND', { body, proof: sign('AUTH_MANAGEMENT_COMMAND', body, secret, proofOpts) });
  return reply;
}

// A signed §7 event (AUTHORIZATION_NEXT / AUTHORIZATION_DECIDE) with an ack callback.
async function signedAck(socket, action, body, secret) {
  const [reply] = await emitAck(socket, action, { body, proof: sign(action, body, secret) });
  return reply;
}

function b64url(buf) {
  return Buffer.from(buf).toString('base64').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

// An HS256 JWT of `payload`; `header` overrides the header (alg none, …).
function jwt(payload, secret, header = { alg: 'HS256', typ: 'JWT' }) {
  const head = b64url(JSON.stringify(header));
  const body = b64url(JSON.stringify(payload));
  const sig = b64url(crypto.createHmac('sha256', secret).update(`${head}.${body}`).digest());
  return `${head}.${body}.${sig}`;
}

// AUTHENTICATION; resolves with {event: 'AUTH_OK'|'AUTH_FAIL', body}.
function authenticate(socket, payload, ms = DEFAULT_TIMEOUT_MS) {
  return withTimeout(new Promise((resolve) => {
    const done = (event) => (body) => {
      socket.off('AUTH_OK', ok);
      socket.off('AUTH_FAIL', fail);
      resolve({ event, body });
    };
    const ok = done('AUTH_OK');
    const fail = done('AUTH_FAIL');
    socket.on('AUTH_OK', ok);
    socket.on('AUTH_FAIL', fail);
    socket.emit('AUTHENTICATION', payload);
  }), ms, 'AUTH_OK or AUTH_FAIL');
}

// Collects every emission of `event` on `socket`.
function collect(socket, event) {
  const got = [];
  socket.on(event, (...args) => got.push(args.length === 1 ? args[0] : args));
  return got;
}

const sha256 = (s) => crypto.createHash('sha256').update(s).digest('hex');

// A self-signed certificate for 127.0.0.1 (openssl CLI): {key, cert, certFile}.
function selfSignedCert(t) {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { execFileSync } = require('node:child_process');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'siomq-tls-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile), certFile };
}

// An external token validator (§6.4 step 5) on a free port: `answer(request)` returns
// {status, body, delayMs}; every request is recorded with its headers. With `tls` ({key, cert}) it
// speaks https.
async function startValidator(t, answer, tls) {
  const requests = [];
  const handler = (req, res) => {
    let data = '';
    req.on('data', (c) => { data += c; });
    req.on('end', () => {
      let json = null;
      try { json = JSON.parse(data); } catch { /* recorded as null */ }
      const entry = { path: req.url, headers: req.headers, body: json };
      requests.push(entry);
      const { status = 200, body = {}, delayMs = 0 } = answer(entry) || {};
      setTimeout(() => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      }, delayMs);
    });
  };
  const server = tls ? require('node:https').createServer({ key: tls.key, cert: tls.cert }, handler) : http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return { url: `${tls ? 'https' : 'http'}://127.0.0.1:${server.address().port}`, requests };
}

module.exports = { connectFor, stableStringify, sign, manage, signedAck, jwt, b64url, authenticate, collect, sha256, startValidator, selfSignedCert, once };
