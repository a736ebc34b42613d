// Our C++ client (client/sio_client, through the `siomq` CLI built beside the server) against a real server.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { startServer, SERVER_BIN } = require('./lib/server');

const CLI = path.join(path.dirname(SERVER_BIN), 'siomq');

function run(args) {
  return new Promise((resolve) => {
    execFile(CLI, args, { timeout: 60000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('siomq ping: the C++ client connects over WebSocket and gets PING acks', async (t) => {
  const server = await startServer(t);
  const { code, stdout, stderr } = await run(['ping', '--url', server.url, '-n', '50', '--payload', '{"who":"cpp","n":7}']);
  assert.equal(code, 0, stderr);
  const lines = stdout.trim().split('\n');
  assert.match(lines[0], /^connected: socket [A-Za-z0-9_-]{20}, session [A-Za-z0-9_-]{20}$/);
  const replies = lines.filter((l) => l.startsWith('['));
  assert.equal(replies.length, 50);
  for (const line of replies) {
    const args = JSON.parse(line.slice(0, line.lastIndexOf(']') + 1));
    const body = JSON.parse(args[0]);
    assert.equal(body.who, 'cpp');
    assert.equal(body.n, 7);
    assert.equal(body.pong, 'PONG');
    assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
  }
  assert.match(lines.at(-1), /^50 pings, average [0-9.]+ ms$/);
  await server.stop();
});

test('siomq ping: a server that is not there is a clear error and a non-zero exit', async () => {
  const { code, stderr } = await run(['ping', '--url', 'http://127.0.0.1:1']);
  assert.notEqual(code, 0);
  assert.match(stderr, /connect: /);
});

test('siomq ping: a refused namespace CONNECT is reported', async (t) => {
  const server = await startServer(t, { settings: { transport: { path: '/other/' } } });
  const { code, stderr } = await run(['ping', '--url', server.url]);
  assert.notEqual(code, 0);
  assert.match(stderr, /upgrade refused: HTTP\/1\.1 403/);
  await server.stop();
});

test('siomq ping --eio 3: the C++ client speaks Engine.IO v3 (the socket id is the session id; it sends the heartbeat)', async (t) => {
  const server = await startServer(t, { settings: { transport: { ping_interval: 300, ping_timeout: 300 } } });
  const { code, stdout, stderr } = await run(['ping', '--url', server.url, '--eio', '3', '-n', '3']);
  assert.equal(code, 0, stderr);
  const [, socket, session] = /^connected: socket (\S+), session (\S+)$/m.exec(stdout);
  assert.equal(socket, session);
  assert.match(stdout, /^3 pings, average/m);
  // Kept alive by its own pings past pingInterval + pingTimeout: a 2 s load run over v3.
  const r = await run(['bench', 'pubsub', '--url', server.url, '--eio', '3', '-d', '2', '--json', '-q']);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.eio, 3);
  assert.ok(out.sent > 0);
  assert.equal(out.lost, 0);
  await server.stop();
});

// Each scenario, briefly, against a real server: the figures add up (speed is measured in bench/, not here).
test('siomq bench: every scenario runs and accounts for every message', async (t) => {
  const server = await startServer(t);
  const scenarios = [
    ['pubsub', ['-p', '2', '-c', '3'], (o) => o.delivered === o.sent * 3],
    ['fanout', ['-c', '5'], (o) => o.delivered === o.sent * 5],
    ['topics', ['-c', '2'], (o) => o.delivered === o.sent * 2],
    ['group', ['-c', '4'], (o) => o.delivered === o.sent],
    ['durable', ['-c', '2'], (o) => o.delivered === o.sent * 2 && o.acked === o.sent * 2],
    ['latency', ['-r', '2000'], (o) => o.delivered === o.sent && o.latency_us.p50 > 0 && o.latency_us.max >= o.latency_us.p99],
    ['chunked', [], (o) => o.delivered === o.sent],  // 1 MiB: PRODUCE_CHUNK pieces, within max_payload
  ];
  for (const [scenario, args, check] of scenarios) {
    const r = await run(['bench', scenario, '--url', server.url, '-d', '1', '--json', '-q', ...args]);
    assert.equal(r.code, 0, `${scenario}: ${r.stderr}`);
    const out = JSON.parse(r.stdout);
    assert.equal(out.scenario, scenario);
    assert.ok(out.sent > 0, scenario);
    assert.equal(out.lost, 0, `${scenario}: ${r.stdout}`);
    assert.equal(out.errors, 0, scenario);
    assert.ok(check(out), `${scenario}: ${r.stdout}`);
  }
  const pid = server.pid;
  const c = await run(['bench', 'connections', '--url', server.url, '-n', '300', '--json', ...(pid ? ['--server-pid', String(pid)] : [])]);
  assert.equal(c.code, 0, c.stderr);
  const conns = JSON.parse(c.stdout);
  assert.equal(conns.connections, 300);
  if (pid) assert.ok(conns.server_rss_kib_after > 0);
  // A server that is not there: a clear error.
  const down = await run(['bench', 'pubsub', '--url', 'http://127.0.0.1:1', '-d', '1', '-q']);
  assert.notEqual(down.code, 0);
  assert.match(down.stderr, /connect: /);
  await server.stop();
});

// A server shaped like tyo-mq@0.2.14 (Engine.IO and Socket.IO spoken by hand over `ws`): no PING handler,
// and deliveries on CONSUME-<event> rather than CONSUME-<lower(producer-event)>. The generator still
// starts (after its fixed wait) and counts every delivery once, though each consumer subscribes to
// every producer.
test('siomq bench: a server without PING that delivers on CONSUME-<event> is measured too', async (t) => {
  const { WebSocketServer } = require('ws');
  const wss = new WebSocketServer({ port: 0, path: '/socket.io/' });
  t.after(() => wss.close());
  await new Promise((resolve) => wss.on('listening', resolve));
  const subscribers = new Map();  // event -> Set of sockets
  let pings = 0;
  wss.on('connection', (ws) => {
    ws.send('0{"sid":"s' + Math.random().toString(36).slice(2) + '","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}');
    ws.on('message', (data) => {
      const text = data.toString();
      if (text === '40') return ws.send('40{"sid":"x"}');
      if (!text.startsWith('42')) return;
      const [event, arg] = JSON.parse(text.slice(text.search(/\[/)));
      if (event === 'PING') ++pings;  // no answer, as tyo-mq@0.2.14
      if (event === 'SUBSCRIBE') {
        if (!subscribers.has(arg.event)) subscribers.set(arg.event, new Set());
        subscribers.get(arg.event).add(ws);
      }
      if (event === 'PRODUCE') {
        for (const s of subscribers.get(arg.event) || []) {
          s.send('42' + JSON.stringify([`CONSUME-${arg.event}`, { event: arg.event, message: arg.message, from: arg.from }]));
        }
      }
    });
  });
  const url = `http://127.0.0.1:${wss.address().port}`;
  const r = await run(['bench', 'pubsub', '--url', url, '-p', '2', '-c', '2', '-d', '1', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /no answer to PING; started after 2000 ms/);
  const out = JSON.parse(r.stdout);
  assert.ok(out.sent > 0);
  assert.equal(out.delivered, out.sent * 2);
  assert.equal(out.lost, 0);
  assert.equal(pings, 4);
});
