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
