// TLS terminated by the server (issue 14 §6): https and wss on one port or on a second one (`tls.port`),
// Socket.IO over WebSocket, long-polling and the polling → WebSocket upgrade, a polling session whose
// TLS connections move between workers, curl, TLS 1.1 refused, plain HTTP refused, the handshake
// deadline and the connection cap, the certificate reloaded on SIGHUP (and a failed reload keeping the
// old one), the chain completed from `ca` or the certificate file, and the start-up errors for files that
// cannot be used (exit code 4).
//
// Certificates are made at test time with the openssl CLI (self-signed, for localhost and 127.0.0.1);
// none is checked in.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const tls = require('node:tls');
const https = require('node:https');
const { execFileSync, spawnSync } = require('node:child_process');
const { startServer, runServerOnce, delay } = require('./lib/server');
const { connectV4, once, waitFor, withTimeout, RawEio } = require('./lib/clients');

const EIO = '/socket.io/?EIO=4&transport=polling';

// A fresh self-signed certificate and key in `dir`: { cert, key, pem, fingerprint }.
function makeCert(dir, name) {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
  const pem = fs.readFileSync(cert, 'utf8');
  return { cert, key, pem, fingerprint: new (require('node:crypto').X509Certificate)(pem).fingerprint256 };
}

function certDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'siomq-tls-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function tlsServer(t, extra = {}, opts = {}) {
  const dir = certDir(t);
  const c = makeCert(dir, 'first');
  const settings = { tls: { cert: c.cert, key: c.key, ...extra.tls }, ...extra.settings };
  const server = await startServer(t, { settings, ...opts });
  return { server, cert: c, dir, url: `https://localhost:${server.port}` };
}

// The certificate a new TLS connection to `port` is served: its SHA-256 fingerprint.
function servedFingerprint(port, ca) {
  return withTimeout(new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca }, () => {
      const fp = s.getPeerCertificate().fingerprint256;
      s.end();
      resolve(fp);
    });
    s.on('error', reject);
  }), 5000, 'tls connect');
}

// One HTTPS request on its own connection (agent: false) or on `agent`'s.
function request(url, { ca, method = 'GET', body, agent = false } = {}) {
  return withTimeout(new Promise((resolve, reject) => {
    const req = https.request(url, { method, ca, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  }), 10000, `${method} ${url}`);
}

function curl(args) {
  return spawnSync('curl', ['-sS', '--max-time', '5', ...args], { encoding: 'utf8' });
}

// A producer and a consumer on `transports` exchange a message over TLS.
async function produceConsume(url, ca, producerOpts, consumerOpts) {
  const p = await connectV4(url, { ca, ...producerOpts });
  const c = await connectV4(url, { ca, ...consumerOpts });
  try {
    p.emit('PRODUCER', { name: 'tp' });
    c.emit('CONSUMER', { name: 'tc', id: 'tc' });
    c.emit('SUBSCRIBE', { event: 'e', producer: 'tp', consumer: 'tc' });
    await c.timeout(5000).emitWithAck('PING', {});
    await p.timeout(5000).emitWithAck('PING', {});
    const got = once(c, 'CONSUME-tp-e', 5000);
    p.emit('PRODUCE', { event: 'e', from: 'tp', message: { n: 1, s: 'x'.repeat(40000) } });
    const [m] = await got;
    assert.equal(m.message.n, 1);
    assert.equal(m.message.s.length, 40000);
    return { p, c };
  } catch (err) {
    p.close();
    c.close();
    throw err;
  }
}

test('wss, https long-polling and the polling → websocket upgrade carry tyo-mq traffic', async (t) => {
  const { server, cert, url } = await tlsServer(t);
  const ca = cert.pem;
  // WebSocket only → polling only.
  let pair = await produceConsume(url, ca, { transports: ['polling'] }, { transports: ['websocket'] });
  assert.equal(pair.p.io.engine.transport.name, 'polling');
  assert.equal(pair.c.io.engine.transport.name, 'websocket');
  pair.p.close();
  pair.c.close();
  // The default: polling first, then the upgrade to WebSocket over TLS.
  const upgraded = await connectV4(url, { ca });
  t.after(() => upgraded.close());
  await waitFor(() => upgraded.io.engine.transport.name === 'websocket', 5000, 'upgrade to websocket');
  assert.deepEqual((await upgraded.timeout(5000).emitWithAck('PING', { over: 'wss' })).length >= 0, true);
  pair = await produceConsume(url, ca, { transports: ['websocket'] }, {});
  await waitFor(() => pair.c.io.engine.transport.name === 'websocket', 5000, 'consumer upgraded');
  pair.p.close();
  pair.c.close();
  // Without the CA the client refuses the self-signed certificate.
  await assert.rejects(connectV4(url, { transports: ['websocket'] }, 3000));
  await server.stop();
});

test('a polling session whose TLS connections land on both workers (one moved with its TLS state)', async (t) => {
  // No Engine.IO pings in the way: the GETs below carry only the acks.
  const { server, cert, url } = await tlsServer(t, { settings: { transport: { ping_interval: 60000 } } }, { threads: 2 });
  const ca = cert.pem;
  // Each request on a new connection: accepted round-robin, so they alternate between the two workers.
  const open = await request(`${url}${EIO}`, { ca });
  const sid = JSON.parse(open.text.slice(1)).sid;
  const session = `${url}${EIO}&sid=${sid}`;
  assert.equal((await request(session, { ca, method: 'POST', body: '40' })).text, 'ok');
  assert.match((await request(session, { ca })).text, /^40\{"sid"/);
  // One keep-alive connection for the rest: its first request moves it (TLS state and all) to the
  // session's worker if it was accepted elsewhere; the later ones are served there over the same TLS.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  for (let i = 0; i < 3; i++) {
    const pending = request(session, { ca, agent: false });
    await delay(50);
    assert.equal((await request(session, { ca, method: 'POST', body: `42${i}["PING",{"i":${i}}]`, agent })).text, 'ok');
    assert.match((await pending).text, new RegExp(`^43${i}\\[.*i.*${i}`));
  }
  const sockets = Object.values(agent.sockets).flat().concat(Object.values(agent.freeSockets).flat());
  assert.equal(sockets.length, 1, 'the keep-alive requests shared one TLS connection');
  // The upgrade, on the eighth connection (the other worker than the session's, by the count above): it
  // moves, answers 101 over TLS there, and the WebSocket carries on with the same TLS session.
  const pending = request(session, { ca, agent });
  const ws = new RawEio(url.replace(/^https/, 'wss'), { query: `EIO=4&transport=websocket&sid=${sid}`, wsOptions: { ca } });
  t.after(() => ws.ws.terminate());
  await withTimeout(ws.opened, 5000, 'wss probe open');
  ws.send('2probe');
  assert.equal(await ws.next(), '3probe');
  assert.equal(await pending.then((r) => r.text), '6');
  ws.send('5');
  ws.send('429["PING",{"over":"wss"}]');
  assert.match(await ws.next(), /^439\[.*over.*wss/);
  await server.stop();
});

test('curl over https with --cacert; plain HTTP to the TLS port is refused; TLS 1.1 is refused', async (t) => {
  const { server, cert } = await tlsServer(t);
  const ok = curl(['--cacert', cert.cert, `https://localhost:${server.port}${EIO}`]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^0\{"sid"/);
  // Plain HTTP: answered 400 in plain text and closed, and the server keeps serving.
  const plain = curl(['-i', `http://127.0.0.1:${server.port}${EIO}`]);
  assert.match(plain.stdout, /^HTTP\/1\.1 400/);
  assert.match(plain.stdout, /TLS/);
  const old = curl(['--cacert', cert.cert, '--tlsv1.0', '--tls-max', '1.1', `https://localhost:${server.port}${EIO}`]);
  assert.equal(old.status, 35, `curl TLS 1.1: ${old.stderr}`);
  const s11 = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${server.port}`, '-tls1_1'],
    { input: '', encoding: 'utf8', timeout: 5000 });
  assert.match(s11.stdout + s11.stderr, /alert protocol version|no protocols available|Cipher is \(NONE\)/);
  assert.equal(curl(['--cacert', cert.cert, `https://localhost:${server.port}${EIO}`]).status, 0);
  await server.stop();
});

test('min_version "1.3" refuses TLS 1.2', async (t) => {
  const { server, cert } = await tlsServer(t, { tls: { min_version: '1.3' } });
  const url = `https://localhost:${server.port}${EIO}`;
  assert.equal(curl(['--cacert', cert.cert, '--tls-max', '1.2', url]).status, 35);
  assert.equal(curl(['--cacert', cert.cert, '--tlsv1.3', url]).status, 0);
  await server.stop();
});

test('tls.port: plain on the main port, TLS on the second', async (t) => {
  const { server, cert } = await tlsServer(t, { tls: { port: 0 } });
  const [, tlsPort] = await server.waitForLog(/TLS on port (\d+)/);
  const plain = await fetch(`${server.url}${EIO}`);
  assert.match(await plain.text(), /^0\{"sid"/);
  const secure = curl(['--cacert', cert.cert, `https://localhost:${tlsPort}${EIO}`]);
  assert.equal(secure.status, 0, secure.stderr);
  assert.match(secure.stdout, /^0\{"sid"/);
  assert.notEqual(curl(['--cacert', cert.cert, `https://localhost:${server.port}${EIO}`]).status, 0);
  const c = await connectV4(`https://localhost:${tlsPort}`, { ca: cert.pem, transports: ['websocket'] });
  await c.timeout(5000).emitWithAck('PING', {});
  c.close();
  await server.stop();
});

test('SIGHUP reloads the certificate: open connections stay, new ones get it; a bad reload keeps the old one',
  async (t) => {
    const { server, cert, dir } = await tlsServer(t);
    const second = makeCert(dir, 'second');
    const ca = [cert.pem, second.pem];
    assert.equal(await servedFingerprint(server.port, ca), cert.fingerprint);
    const ws = await connectV4(`https://localhost:${server.port}`, { ca: cert.pem, transports: ['websocket'] });
    t.after(() => ws.close());
    // Replace the files in place, as a certificate renewal does.
    fs.copyFileSync(second.cert, cert.cert);
    fs.copyFileSync(second.key, cert.key);
    server.kill('SIGHUP');
    await server.waitForLog(/tls: reloaded/);
    assert.equal(await servedFingerprint(server.port, ca), second.fingerprint);
    assert.ok(ws.connected);
    await ws.timeout(5000).emitWithAck('PING', { after: 'reload' });
    // A key that does not match the certificate: refused, the second certificate stays.
    fs.copyFileSync(path.join(dir, 'first.crt'), cert.cert);
    makeCert(dir, 'third');
    fs.copyFileSync(path.join(dir, 'third.key'), cert.key);
    server.kill('SIGHUP');
    await server.waitForLog(/SIGHUP: keeping the current TLS certificate: .*does not match/);
    assert.equal(await servedFingerprint(server.port, ca), second.fingerprint);
    await ws.timeout(5000).emitWithAck('PING', {});
    await server.stop();
  });

test('the handshake has a deadline, and connections without one count against max_connections', async (t) => {
  const { server, cert } = await tlsServer(t, {
    settings: { transport: { http_request_timeout: 600, max_connections: 3 } },
  });
  // Three TCP connections that never start the handshake fill the cap ...
  const idle = [];
  for (let i = 0; i < 3; i++) {
    const s = net.connect(server.port, '127.0.0.1');
    s.on('error', () => {});
    const closed = new Promise((resolve) => s.on('close', resolve));
    await once(s, 'connect');
    idle.push({ s, closed, t0: Date.now() });
  }
  await delay(100);
  // ... so a TLS client is turned away at once ...
  await assert.rejects(servedFingerprint(server.port, cert.pem));
  // ... until the server cuts the silent ones off at the deadline.
  for (const { closed, t0 } of idle) {
    await withTimeout(closed, 5000, 'idle TLS connection cut off');
    assert.ok(Date.now() - t0 < 4000);
  }
  await delay(50);
  assert.equal(await servedFingerprint(server.port, cert.pem), cert.fingerprint);
  await server.stop();
});

test('certificate or key files that cannot be used stop the start-up with exit code 4 and say why', (t) => {
  const dir = certDir(t);
  const good = makeCert(dir, 'good');
  const other = makeCert(dir, 'other');
  const garbage = path.join(dir, 'garbage.pem');
  fs.writeFileSync(garbage, 'not a certificate\n');
  const cases = [
    [{ cert: path.join(dir, 'missing.crt'), key: good.key }, /cannot read the certificate .*missing\.crt: No such file/],
    [{ cert: good.cert, key: path.join(dir, 'missing.key') }, /cannot read the key .*missing\.key/],
    [{ cert: garbage, key: good.key }, /the certificate .*garbage\.pem is not a PEM certificate/],
    [{ cert: good.cert, key: garbage }, /the key .*garbage\.pem is not an unencrypted PEM private key/],
    [{ cert: good.cert, key: other.key }, /the key .*other\.key does not match the certificate .*good\.crt/],
    [{ cert: good.cert, key: good.key, ca: dir }, /the CA file .* is empty or not a file|cannot read the CA file/],
  ];
  for (const [tlsBlock, message] of cases) {
    const r = runServerOnce({ settings: { tls: tlsBlock } });
    assert.equal(r.code, 4, r.output);
    assert.match(r.output, message);
  }
  // From the command line too; a wrong type in the block is a settings error (exit code 1).
  const cli = runServerOnce({ args: ['--tls-cert', good.cert, '--tls-key', other.key] });
  assert.equal(cli.code, 4, cli.output);
  assert.match(cli.output, /does not match/);
  const half = runServerOnce({ args: ['--tls-cert', good.cert] });
  assert.equal(half.code, 1, half.output);
  assert.match(half.output, /--tls-cert and --tls-key go together/);
  const badType = runServerOnce({ settings: { tls: { cert: good.cert, key: good.key, min_version: '1.1' } } });
  assert.equal(badType.code, 1, badType.output);
  assert.match(badType.output, /tls.min_version must be "1.2" or "1.3"/);
});

// root → intermediate → leaf (for localhost): the client trusts the root only, so it verifies the leaf only
// when the server sends the intermediate.
function makeChain(dir) {
  const run = (args) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  fs.writeFileSync(path.join(dir, 'ca.ext'), 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign\n');
  fs.writeFileSync(path.join(dir, 'leaf.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  run(['req', '-x509', ...ec, '-keyout', 'root.key', '-out', 'root.crt', '-days', '2', '-subj', '/CN=root',
    '-addext', 'basicConstraints=critical,CA:true', '-addext', 'keyUsage=critical,keyCertSign']);
  run(['req', ...ec, '-keyout', 'inter.key', '-out', 'inter.csr', '-subj', '/CN=inter']);
  run(['x509', '-req', '-in', 'inter.csr', '-CA', 'root.crt', '-CAkey', 'root.key', '-CAcreateserial',
    '-out', 'inter.crt', '-days', '2', '-extfile', 'ca.ext']);
  run(['req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost']);
  run(['x509', '-req', '-in', 'leaf.csr', '-CA', 'inter.crt', '-CAkey', 'inter.key', '-CAcreateserial',
    '-out', 'leaf.crt', '-days', '2', '-extfile', 'leaf.ext']);
  fs.writeFileSync(path.join(dir, 'fullchain.crt'),
    fs.readFileSync(path.join(dir, 'leaf.crt'), 'utf8') + fs.readFileSync(path.join(dir, 'inter.crt'), 'utf8'));
  const p = (f) => path.join(dir, f);
  return { root: p('root.crt'), inter: p('inter.crt'), leaf: p('leaf.crt'), key: p('leaf.key'), full: p('fullchain.crt') };
}

test('the intermediate is served from tls.ca or from the certificate file', async (t) => {
  const chain = makeChain(certDir(t));
  for (const [tlsBlock, verifies] of [
    [{ cert: chain.leaf, key: chain.key }, false],
    [{ cert: chain.leaf, key: chain.key, ca: chain.inter }, true],
    [{ cert: chain.full, key: chain.key }, true],
  ]) {
    const server = await startServer(t, { settings: { tls: tlsBlock } });
    const r = curl(['--cacert', chain.root, `https://localhost:${server.port}${EIO}`]);
    assert.equal(r.status === 0, verifies, `${JSON.stringify(tlsBlock)}: ${r.stderr}`);
    await server.stop();
  }
});

test('--tls-cert and --tls-key serve https on the main port', async (t) => {
  const dir = certDir(t);
  const c = makeCert(dir, 'cli');
  const server = await startServer(t, { args: ['--tls-cert', c.cert, '--tls-key', c.key] });
  assert.equal(await servedFingerprint(server.port, c.pem), c.fingerprint);
  await server.stop();
});
