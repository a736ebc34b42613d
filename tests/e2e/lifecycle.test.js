// The process: graceful shutdown, SIGHUP reload, settings validation, command line.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startServer, runServerOnce, delay } = require('./lib/server');
const { connectV4, connectV2, ping, withTimeout, RawEio } = require('./lib/clients');

test('SIGTERM with 20 connected clients: every client sees the disconnect, exit 0 within 5 s', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const clients = [];
  t.after(() => { for (const c of clients) c.close(); });
  for (let i = 0; i < 20; i++) {
    const kind = i % 4;
    const socket = kind === 3
      ? await connectV2(server.url, { transports: ['websocket'] })
      : await connectV4(kind === 2 ? `${server.url}/diagnostics` : server.url,
        { transports: kind === 0 ? ['websocket'] : ['polling'] });
    clients.push(socket);
  }
  const disconnected = clients.map((c) => new Promise((resolve) => c.once('disconnect', resolve)));
  // Some traffic in flight too.
  await Promise.all(clients.filter((_, i) => i % 4 < 2).map((c, i) => ping(c, { i })));
  const { elapsed } = await server.stop();  // asserts exit code 0 within 5 s
  assert.ok(elapsed < 5000);
  const reasons = await withTimeout(Promise.all(disconnected), 5000, 'clients to see the disconnect');
  assert.equal(reasons.length, 20);
  assert.match(server.logs(), /SIGTERM: shutting down/);
});

test('SIGINT is a graceful shutdown too', async (t) => {
  const server = await startServer(t);
  const raw = new RawEio(server.url);
  t.after(() => raw.close());
  await raw.open();
  await raw.connect('/');
  server.kill('SIGINT');
  const exit = await withTimeout(server.exited, 5000, 'exit after SIGINT');
  assert.deepEqual(exit, { code: 0, signal: null });
  await raw.waitClosed(5000);
  assert.match(server.logs(), /SIGINT: shutting down/);
});

test('SIGTERM while a long-poll GET is pending answers it with a close packet', async (t) => {
  const server = await startServer(t);
  const open = JSON.parse((await (await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`)).text()).slice(1));
  const url = `${server.url}/socket.io/?EIO=4&transport=polling&sid=${open.sid}`;
  const poll = fetch(url).then((r) => r.text());
  await delay(200);
  await server.stop();
  assert.equal(await withTimeout(poll, 5000, 'pending poll'), '1');
});

test('SIGHUP: a valid file is reloaded; a broken one is refused and the last good settings stay', async (t) => {
  const server = await startServer(t, { settings: { transport: { ping_interval: 2000 } } });
  const socket = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => socket.close());

  fs.writeFileSync(server.settingsFile, JSON.stringify({ transport: { ping_interval: 3000 }, limits: {} }));
  server.kill('SIGHUP');
  await server.waitForLog('SIGHUP: settings reloaded', 5000);

  for (const broken of ['{ this is not json', '[]', '{"transport":{"ping_interval":"x"}}']) {
    const before = server.logs().split('keeping the last good settings').length;
    fs.writeFileSync(server.settingsFile, broken);
    server.kill('SIGHUP');
    await server.waitForLog(new RegExp(`(keeping the last good settings[\\s\\S]*){${before}}`), 5000);
    assert.ok(server.isRunning(), `still running after a SIGHUP with ${broken}`);
    const { body } = await ping(socket, { after: broken });
    assert.equal(body.after, broken);
  }
  fs.rmSync(server.settingsFile);
  server.kill('SIGHUP');
  await server.waitForLog(/keeping the last good settings: cannot read/, 5000);
  assert.ok(server.isRunning());

  // Transport values apply at the next start: new sessions still get the values the server started with.
  const res = await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`);
  assert.equal(JSON.parse((await res.text()).slice(1)).pingInterval, 2000);
  await server.stop();
});

test('SIGHUP without a settings file is harmless', async (t) => {
  const server = await startServer(t);
  server.kill('SIGHUP');
  await server.waitForLog('SIGHUP: no settings file to reload', 5000);
  const socket = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => socket.close());
  await ping(socket, {});
  await server.stop();
});

test('signals sent right after the listening line are handled gracefully', async (t) => {
  for (let i = 0; i < 10; i++) {
    const hup = await startServer(t);
    hup.kill('SIGHUP');  // no delay: the listening line is the readiness signal
    await hup.waitForLog('SIGHUP: no settings file to reload', 5000);
    await hup.stop();
    const term = await startServer(t);
    await term.stop();  // SIGTERM at once; must still exit 0
  }
});

test('settings: unknown keys are logged and ignored', async (t) => {
  const server = await startServer(t, {
    settings: { bogus_key: 1, auth: {}, transport: { ping_interval: 4000, nonsense: true } },
  });
  await server.waitForLog(/warn.*unknown key 'bogus_key'/, 5000);
  await server.waitForLog(/warn.*unknown key 'transport\.nonsense'/, 5000);
  assert.doesNotMatch(server.logs(), /unknown key 'auth'/, 'tyo-mq keys are known');
  const res = await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`);
  assert.equal(JSON.parse((await res.text()).slice(1)).pingInterval, 4000, 'the rest of the file applies');
  await server.stop();
});

const INVALID = [
  [{ transport: { ping_interval: 'x' } }, /transport\.ping_interval must be a positive integer/],
  [{ transport: { ping_timeout: -1 } }, /transport\.ping_timeout must be a positive integer/],
  [{ transport: { upgrade_timeout: 0 } }, /transport\.upgrade_timeout must be a positive integer/],
  [{ transport: { connect_timeout: 1.5 } }, /transport\.connect_timeout must be a positive integer/],
  [{ transport: { http_request_timeout: null } }, /transport\.http_request_timeout must be a positive integer/],
  [{ transport: { max_payload: 'big' } }, /transport\.max_payload must be a positive integer/],
  [{ transport: { max_outbound_bytes: 0 } }, /transport\.max_outbound_bytes must be a positive integer/],
  [{ transport: { max_http_header: [] } }, /transport\.max_http_header must be a positive integer/],
  [{ transport: { path: 'no-slash' } }, /transport\.path must start with '\/'/],
  [{ transport: { path: 5 } }, /transport\.path must be a string/],
  [{ transport: { allow_eio3: 'yes' } }, /transport\.allow_eio3 must be a boolean/],
  [{ transport: 'fast' }, /transport must be an object/],
  [{ diagnostics: 'yes' }, /diagnostics must be a boolean/],
  [[1, 2], /settings must be a JSON object/],
  ['{"unterminated": ', /is not valid JSON/],
];

test('settings: an invalid value stops the start-up with a clear message', async () => {
  for (const [settings, message] of INVALID) {
    const r = runServerOnce({ settings });
    assert.notEqual(r.code, 0, `exit code for ${JSON.stringify(settings)}`);
    assert.equal(r.signal, null, 'exits by itself, no crash');
    assert.match(r.output, message, `message for ${JSON.stringify(settings)}`);
    assert.match(r.output, /cannot start/);
    assert.doesNotMatch(r.output, /listening on/);
  }
  const missing = runServerOnce({ args: ['--settings', '/nonexistent/siomq.json'] });
  assert.notEqual(missing.code, 0);
  assert.match(missing.output, /cannot read settings file \/nonexistent\/siomq\.json/);
});

test('settings: TYO_MQ_SETTINGS_FILE and TYO_MQ_MAX_HTTP_BUFFER_SIZE', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'siomq-e2e-env-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'env-settings.json');
  fs.writeFileSync(file, JSON.stringify({ transport: { ping_interval: 1111 } }));
  const server = await startServer(t, { env: { TYO_MQ_SETTINGS_FILE: file, TYO_MQ_MAX_HTTP_BUFFER_SIZE: '4096' } });
  const res = await fetch(`${server.url}/socket.io/?EIO=4&transport=polling`);
  const open = JSON.parse((await res.text()).slice(1));
  assert.equal(open.pingInterval, 1111);
  assert.equal(open.maxPayload, 4096);
  await server.stop();

  const bad = runServerOnce({ env: { TYO_MQ_MAX_HTTP_BUFFER_SIZE: 'lots' } });
  assert.notEqual(bad.code, 0);
  assert.match(bad.output, /TYO_MQ_MAX_HTTP_BUFFER_SIZE must be a positive integer/);
});

test('command line: --version, --help, bad options', () => {
  const version = runServerOnce({ args: ['--version'] });
  assert.equal(version.code, 0);
  assert.match(version.output, /^siomq-server \d+\.\d+\.\d+/);
  const help = runServerOnce({ args: ['--help'] });
  assert.equal(help.code, 0);
  assert.match(help.output, /--settings/);
  assert.match(help.output, /--diagnostics/);
  const bad = runServerOnce({ args: ['--log-level', 'loud'] });
  assert.notEqual(bad.code, 0);
  assert.doesNotMatch(bad.output, /listening on/);
});

test('a port already in use is a clear start-up error', async (t) => {
  const server = await startServer(t);
  const r = runServerOnce({ port: server.port });
  assert.notEqual(r.code, 0);
  assert.match(r.output, /cannot start/);
  await server.stop();
});
