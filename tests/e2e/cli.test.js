// The `siomq` command-line client (tools/siomq.cc, tools/cli/) against real servers: every command at
// least once, human and --json output, the exit codes scripts rely on (0 ok, 1 refused, 2 usage,
// 3 cannot connect, 4 timeout, 5 not found), contexts (flags, environment, the context file), and
// round trips between CLI processes (tyo-mq pub → sub, bus req → reply).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { startServer } = require('./lib/server');
const { connectV4, waitFor, TIME_SCALE } = require('./lib/clients');
const { makeCli } = require('./lib/cli');

const ADMIN = 'admin-secret-token';
const AUTH = {
  auth: {
    enabled: true,
    tokens: [
      { token: ADMIN, realm: '*', role: 'admin' },
      { token: 'tok-sec', realm: 'sec', role: 'both' },
    ],
    realms: { default: { required: false }, r1: { manager_key: 'mk-r1' }, sec: { e2ee: 'required' } },
  },
};
const DOWN = 'http://127.0.0.1:1';

const LEAVES = ['pub', 'sub', 'bus pub', 'bus sub', 'req', 'reply', 'bus req', 'bus reply', 'stream add', 'stream ls',
  'stream info', 'stream rm', 'stream purge', 'stream get', 'stream edit', 'consumer add', 'consumer ls', 'consumer info',
  'consumer rm', 'consumer next', 'auth request', 'auth next', 'auth approve', 'auth reject', 'realm add', 'realm rm',
  'realm ls', 'realm rename', 'realm key', 'realm manager-key', 'realm auth', 'realm acceptance', 'realm e2ee',
  'realm lifetime', 'dlq ls', 'dlq replay', 'dlq discard', 'settings get', 'settings reload', 'token revoke', 'stats',
  'context save', 'context show', 'context use', 'context ls', 'context rm', 'ping', 'completion bash'];

test('help: every command has examples and the exit codes; usage errors exit 2; completion bash is a valid script', async (t) => {
  const cli = makeCli(t);
  const top = await cli.run(['--help']);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /Exit codes: 0 ok, 1 the server refused .* 2 usage error,\s+3 cannot connect, 4 timeout, 5 not found/s);
  for (const leaf of LEAVES) {
    const r = await cli.run([...leaf.split(' '), '--help']);
    assert.equal(r.code, 0, leaf);
    assert.match(r.stdout, /Examples:\n {2}siomq /, leaf);
    if (leaf !== 'completion bash') assert.match(r.stdout, /Exit codes: 0 ok, 1 refused by the server, 2 usage/, leaf);
  }
  for (const args of [[], ['stream'], ['stream', 'add'], ['nope'], ['pub', 'e', '--ttl', 'x'], ['sub', 'e', '--timeout', '5q'],
    ['sub', 'e', '--durable'], ['stream', 'get', 'S'], ['token', 'revoke'], ['realm', 'ls'], ['bus', 'pub', 's', 'd', '-H', 'novalue'],
    ['realm', 'key', 'r1', '--admin-token', 'a'], ['realm', 'key', 'r1', 'k', '--clear', '--admin-token', 'a']]) {
    const r = await cli.run(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
  const completion = await cli.run(['completion', 'bash']);
  assert.equal(completion.code, 0);
  assert.match(completion.stdout, /complete -F _siomq siomq/);
  assert.match(completion.stdout, /"stream add"\) echo "[^"]*--max-msgs-per-subject/);
  assert.match(completion.stdout, /""\) echo "pub sub bus req reply stream consumer auth realm dlq settings token stats context ping raw bench completion"/);
  assert.equal(spawnSync('bash', ['-n'], { input: completion.stdout }).status, 0, 'bash -n');
});

test('cannot connect: exit 3, the reason on stderr and {error} with --json', async (t) => {
  const cli = makeCli(t, { url: DOWN });
  for (const args of [['pub', 'e', '1'], ['sub', 'e'], ['req', 's', 'x'], ['bus', 'sub', 's'], ['stream', 'ls'],
    ['realm', 'ls', '--admin-token', ADMIN], ['ping']]) {
    const r = await cli.run(args);
    assert.equal(r.code, 3, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /Connection refused/);
  }
  const r = await cli.run(['stream', 'ls', '--json']);
  assert.equal(r.code, 3);
  assert.equal(r.json().error.code, 604);
});

test('tyo-mq pub → sub: JSON, text from stdin, --string, confirms, progress, and --count ending the subscriber', async (t) => {
  const server = await startServer(t);
  const cli = makeCli(t, { url: server.url });
  const sub = await cli.start(['sub', 'orders.created', '--count', '3', '--json']);
  const pub = await cli.run(['pub', 'orders.created', '{"id":42}', '--producer', 'shop']);
  assert.equal(pub.code, 0, pub.stderr);
  assert.equal(pub.stdout, "published 1 message on 'orders.created' as 'shop'\n");
  const piped = await cli.run(['pub', 'orders.created', '--confirm', '--json'], { input: 'plain text\n' });
  assert.equal(piped.code, 0, piped.stderr);
  assert.deepEqual(piped.json(), { event: 'orders.created', producer: 'siomq-cli', published: 1, stored: [0] });
  assert.equal((await cli.run(['pub', 'orders.created', '7', '--string', '-q'])).code, 0);
  const got = await sub.result;
  assert.equal(got.code, 0, got.stderr);
  assert.deepEqual(got.lines(), [
    { event: 'orders.created', from: 'shop', message: { id: 42 } },
    { event: 'orders.created', from: 'siomq-cli', message: 'plain text' },
    { event: 'orders.created', from: 'siomq-cli', message: '7' },
  ]);

  // Human lines, topic mode, and --count N with progress on stderr (none with -q).
  const topic = await cli.start(['sub', 'orders/+/status', '--topic', '--count', '20']);
  const many = await cli.run(['pub', 'orders/7/status', '"paid"', '--count', '20']);
  assert.equal(many.code, 0, many.stderr);
  assert.match(many.stderr, /^published 2\/20\n(published \d+\/20\n)*published 20\/20\n$/);
  assert.equal((await cli.run(['pub', 'orders/7/status', '1', '--count', '20', '-q'])).stderr, '');
  const lines = (await topic.result).stdout.trim().split('\n');
  assert.equal(lines.length, 20);
  assert.equal(lines[0], '[#1] orders/7/status from siomq-cli: "paid"');
});

test('tyo-mq durable + ACK: copies stored while the consumer is away come with the next sub', async (t) => {
  const server = await startServer(t);
  const cli = makeCli(t, { url: server.url });
  const first = await cli.start(['sub', 'jobs', '--producer', 'p', '--consumer', 'worker', '--durable', '--ack', '--count', '1']);
  assert.equal((await cli.run(['pub', 'jobs', '1', '--producer', 'p'])).code, 0);
  assert.equal((await first.result).code, 0);
  const offline = await cli.run(['pub', 'jobs', '{"n":2}', '--producer', 'p', '--confirm']);
  assert.equal(offline.stdout, "published 1 message on 'jobs' as 'p', stored 1 copy\n");
  const again = await cli.run(['sub', 'jobs', '--producer', 'p', '--consumer', 'worker', '--durable', '--ack', '--count', '1', '--json']);
  assert.equal(again.code, 0, again.stderr);
  const [m] = again.lines();
  assert.deepEqual(m.message, { n: 2 });
  assert.match(m.msg_id, /^msg-/);
  // Nothing more: the delivery was acknowledged, and --timeout without a message is exit 4.
  const idle = await cli.run(['sub', 'jobs', '--producer', 'p', '--consumer', 'worker', '--durable', '--timeout', '500ms']);
  assert.equal(idle.code, 4, idle.stderr);
  assert.match(idle.stderr, /timeout: 0 messages received/);
});

test('tyo-mq refusals: a bad token and an E2EE-required realm are exit 1 with the server\'s code', async (t) => {
  const server = await startServer(t, { settings: AUTH });
  const cli = makeCli(t, { url: server.url });
  const bad = await cli.run(['sub', 'e', '--token', 'nope']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /sub: authenticate: .*\(code 401\)/);
  const e2ee = await cli.run(['pub', 'e', '{}', '--token', 'tok-sec', '--json']);
  assert.equal(e2ee.code, 1, e2ee.stderr);
  assert.equal(e2ee.json().error.code, -6);
  assert.equal((await cli.run(['pub', 'e', '{}', '--token', 'tok-sec', '--confirm'])).code, 1);
});

test('bus: req → reply, pub → sub with headers and queue groups, no responders (1), a slow responder (4)', async (t) => {
  const server = await startServer(t);
  const cli = makeCli(t, { url: server.url });
  const reply = await cli.start(['reply', 'svc.echo', 'pong', '--count', '2', '--json']);
  const r1 = await cli.run(['req', 'svc.echo', 'hello', '-H', 'Trace-Id:t1']);
  assert.equal(r1.code, 0, r1.stderr);
  assert.equal(r1.stdout, 'pong\n');
  const r2 = await cli.run(['bus', 'req', 'svc.echo', '--json'], { input: 'from stdin' });
  assert.equal(r2.code, 0, r2.stderr);
  assert.equal(r2.json().data, 'pong');
  const served = await reply.result;
  assert.equal(served.code, 0, served.stderr);
  const requests = served.lines();
  assert.deepEqual(requests.map((m) => [m.subject, m.data, m.header]), [['svc.echo', 'hello', { 'Trace-Id': 't1' }], ['svc.echo', 'from stdin', undefined]]);
  assert.match(requests[0].reply, /^_INBOX\./);

  const queued = await cli.start(['bus', 'reply', 'svc.q', 'ok', '--queue', 'svc', '--count', '1']);
  assert.equal((await cli.run(['req', 'svc.q', 'x'])).stdout, 'ok\n');
  assert.match((await queued.result).stdout, /^\[#1\] Received on "svc\.q" reply _INBOX\.\S+\nx\n\n$/);

  const none = await cli.run(['req', 'svc.echo', 'x', '--json']);
  assert.equal(none.code, 1);
  assert.deepEqual(none.json(), { error: { code: 503, message: 'no responders' } });
  const silent = await cli.start(['bus', 'sub', 'svc.slow']);
  const slow = await cli.run(['req', 'svc.slow', 'x', '--timeout', '300ms']);
  assert.equal(slow.code, 4, slow.stderr);
  silent.child.kill('SIGINT');
  assert.equal((await silent.result).code, 0);

  const sub = await cli.start(['bus', 'sub', 'orders.>', '--queue', 'q', '--count', '2']);
  assert.equal((await cli.run(['bus', 'pub', 'orders.eu', 'order 1', '--header', 'A:1'])).stdout,
    "published 1 message (7 bytes) on 'orders.eu'\n");
  assert.equal((await cli.run(['bus', 'pub', 'orders.us', 'order 2', '--json'])).json().published, 1);
  const got = await sub.result;
  assert.equal(got.code, 0, got.stderr);
  assert.equal(got.stdout, '[#1] Received on "orders.eu"\nA: 1\norder 1\n\n[#2] Received on "orders.us"\norder 2\n\n');
});

test('streams: add, ls, info, edit, get, purge, rm; stream publishes with --ack and dedup; 404 is exit 5', async (t) => {
  const server = await startServer(t);
  const cli = makeCli(t, { url: server.url });
  const add = await cli.run(['stream', 'add', 'ORDERS', '--subjects', 'orders.>,returns.*', '--storage', 'memory', '--max-msgs', '100',
    '--discard', 'new', '--dedup-window-ms', '60000', '--json']);
  assert.equal(add.code, 0, add.stderr);
  const created = add.json();
  assert.deepEqual(created.config.subjects, ['orders.>', 'returns.*']);
  assert.equal(created.config.storage, 'memory');
  assert.equal(created.config.max_msgs, 100);
  assert.equal(created.config.discard, 'new');
  assert.equal(created.state.messages, 0);
  assert.equal((await cli.run(['stream', 'add', 'ORDERS', '--subjects', 'other.>'])).code, 1);

  const a1 = await cli.run(['bus', 'pub', 'orders.eu', 'order 1', '--ack', '--msg-id', 'o1']);
  assert.equal(a1.stdout, 'stored in ORDERS seq 1\n');
  const dup = await cli.run(['bus', 'pub', 'orders.eu', 'order 1', '--ack', '--msg-id', 'o1', '--json']);
  assert.deepEqual(dup.json(), { subject: 'orders.eu', published: 1, acks: [{ stream: 'ORDERS', seq: 1, duplicate: true }] });
  assert.equal((await cli.run(['bus', 'pub', 'orders.us', 'order 2', '--ack', '-H', 'K:V'])).code, 0);
  assert.equal((await cli.run(['bus', 'pub', 'orders.us', 'x', '--ack', '--expect-last-seq', '1'])).code, 1);  // 409

  const ls = await cli.run(['stream', 'ls']);
  assert.match(ls.stdout, /^NAME\s+SUBJECTS\s+STORAGE\s+RETENTION\s+MESSAGES\s+BYTES\s+CONSUMERS\s+LAST SEQ\nORDERS\s+orders\.>,returns\.\*\s+memory\s+limits\s+2\s/);
  assert.equal((await cli.run(['stream', 'ls', '--json'])).json().streams[0].state.last_seq, 2);
  const info = await cli.run(['stream', 'info', 'ORDERS']);
  assert.match(info.stdout, /^Stream:\s+ORDERS\nSubjects:\s+orders\.>, returns\.\*\n/);
  assert.match(info.stdout, /\nMessages:\s+2\n/);

  const edit = await cli.run(['stream', 'edit', 'ORDERS', '--max-msgs', '10', '--json']);
  assert.equal(edit.code, 0, edit.stderr);
  assert.equal(edit.json().config.max_msgs, 10);
  assert.equal(edit.json().config.discard, 'new', 'flags not given keep their values');

  const get = await cli.run(['stream', 'get', 'ORDERS', '2']);
  assert.equal(get.stdout, '[#1] Received on "orders.us" stream ORDERS seq 2\nK: V\norder 2\n\n');
  const last = (await cli.run(['stream', 'get', 'ORDERS', '--last-by-subject', 'orders.eu', '--json'])).json();
  assert.deepEqual([last.subject, last.data, last.seq, last.stream], ['orders.eu', 'order 1', 1, 'ORDERS']);
  assert.equal((await cli.run(['stream', 'get', 'ORDERS', '9'])).code, 5);

  assert.equal((await cli.run(['stream', 'purge', 'ORDERS', '--subject', 'orders.eu'])).stdout, 'purged 1 message from ORDERS\n');
  assert.deepEqual((await cli.run(['stream', 'purge', 'ORDERS', '--keep', '0', '--json'])).json(), { stream: 'ORDERS', purged: 1 });
  assert.equal((await cli.run(['stream', 'rm', 'ORDERS'])).stdout, 'deleted stream ORDERS\n');
  for (const args of [['stream', 'info', 'ORDERS'], ['stream', 'rm', 'ORDERS'], ['stream', 'edit', 'ORDERS', '--max-msgs', '1']]) {
    const r = await cli.run([...args, '--json']);
    assert.equal(r.code, 5, args.join(' '));
    assert.equal(r.json().error.code, 404);
  }
  assert.equal((await cli.run(['stream', 'ls'])).stdout, 'no streams\n');
});

test('consumers: add, ls, info, next (acked, --no-ack, progress, nothing left: exit 4), rm', async (t) => {
  const server = await startServer(t);
  const cli = makeCli(t, { url: server.url });
  assert.equal((await cli.run(['stream', 'add', 'JOBS', '--subjects', 'jobs.>'])).code, 0);
  for (let i = 1; i <= 5; i++) assert.equal((await cli.run(['bus', 'pub', `jobs.${i}`, `job ${i}`, '--ack', '-q'])).code, 0);
  const add = await cli.run(['consumer', 'add', 'JOBS', 'workers', '--filter', 'jobs.>', '--ack-wait-ms', '60000', '--max-deliver', '3',
    '--backoff-ms', '60000,120000']);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stdout, /^Consumer:\s+workers\nStream:\s+JOBS\nFilter:\s+jobs\.>\n/);
  assert.match(add.stdout, /\nBackoff:\s+60000, 120000 ms\n/);
  assert.equal((await cli.run(['consumer', 'add', 'NOPE', 'c'])).code, 5);

  const next = await cli.run(['consumer', 'next', 'JOBS', 'workers', '--count', '3', '--json']);
  assert.equal(next.code, 0, next.stderr);
  assert.deepEqual(next.lines().map((m) => [m.subject, m.data, m.seq, m.delivered]), [['jobs.1', 'job 1', 1, 1], ['jobs.2', 'job 2', 2, 1], ['jobs.3', 'job 3', 3, 1]]);
  assert.match(next.stderr, /received 3\/3, acked/);
  const pending = await cli.run(['consumer', 'next', 'JOBS', 'workers', '--count', '5', '--no-ack', '--timeout', '300ms', '-q']);
  assert.equal(pending.code, 0, pending.stderr);
  assert.equal(pending.stderr, '');
  assert.match(pending.stdout, /\[#2\] Received on "jobs\.5" stream JOBS seq 5/);
  const info = (await cli.run(['consumer', 'info', 'JOBS', 'workers', '--json'])).json();
  assert.deepEqual([info.ack_floor.stream_seq, info.num_ack_pending, info.num_pending, info.config.max_deliver], [3, 2, 0, 3]);
  const empty = await cli.run(['consumer', 'next', 'JOBS', 'workers', '--timeout', '300ms']);
  assert.equal(empty.code, 4);
  assert.match(empty.stderr, /no message within 300ms/);

  const ls = await cli.run(['consumer', 'ls', 'JOBS']);
  assert.match(ls.stdout, /^NAME\s+FILTER\s+MODE\s+ACK\s+DELIVERED\s+ACK FLOOR\s+PENDING\s+ACK PENDING\s+REDELIVERED\nworkers\s+jobs\.>\s+pull\s+explicit\s+5\s+3\s+0\s+2\s+0$/m);
  assert.equal((await cli.run(['consumer', 'ls', 'JOBS', '--json'])).json().consumers[0].name, 'workers');
  assert.equal((await cli.run(['consumer', 'rm', 'JOBS', 'workers'])).stdout, 'deleted consumer workers of JOBS\n');
  assert.equal((await cli.run(['consumer', 'info', 'JOBS', 'workers'])).code, 5);
  assert.equal((await cli.run(['consumer', 'ls', 'JOBS'])).stdout, 'no consumers on JOBS\n');
});

test('auth: request --wait decided by a realm manager, reject, bad proofs (1), unknown requests (5), no secret (2)', async (t) => {
  const server = await startServer(t, { settings: AUTH });
  const cli = makeCli(t, { url: server.url });
  const waiting = await cli.start(['auth', 'request', '--realm', 'r1', '--client-id', 'dev-1', '--wait', '--json'],
    { ready: /waiting for the decision/ });
  const next = await cli.run(['auth', 'next', '--realm', 'r1', '--manager-key', 'mk-r1', '--json']);
  assert.equal(next.code, 0, next.stderr);
  const pending = next.json().request;
  assert.equal(pending.client_id, 'dev-1');
  assert.equal(pending.status, 'pending');
  const human = await cli.run(['auth', 'next', '--realm', 'r1', '--manager-key', 'mk-r1']);
  assert.match(human.stdout, new RegExp(`^Request:\\s+${pending.request_id}\\nStatus:\\s+pending\\nRealm:\\s+r1\\n`));
  const approve = await cli.run(['auth', 'approve', pending.request_id, '--realm', 'r1', '--manager-key', 'mk-r1', '--role', 'consumer']);
  assert.equal(approve.code, 0, approve.stderr);
  assert.match(approve.stdout, /Status:\s+approved/);
  const decided = await waiting.result;
  assert.equal(decided.code, 0, decided.stderr);
  const doc = decided.json();
  assert.deepEqual(doc.decision, { approved: true, realm: 'r1', role: 'consumer', reason: '' });
  assert.match(doc.client_token, /^[0-9a-f]{32}$/);
  // The approved token authenticates.
  const asClient = await cli.run(['sub', 'e', '--token', doc.client_token, '--realm', 'r1', '--timeout', '200ms']);
  assert.equal(asClient.code, 4, asClient.stderr);

  const filed = await cli.run(['auth', 'request', '--realm', 'r1', '--client-id', 'dev-2', '--client-token', 'my-own-token']);
  assert.equal(filed.code, 0, filed.stderr);
  assert.match(filed.stdout, /^request (\S+) for realm r1: pending\n$/);
  const id = /^request (\S+)/.exec(filed.stdout)[1];
  const reject = await cli.run(['auth', 'reject', id, '--reason', 'unknown device', '--admin-token', ADMIN, '--json']);
  assert.equal(reject.json().request.status, 'rejected');
  assert.equal((await cli.run(['auth', 'next', '--admin-token', ADMIN])).stdout, 'no pending request\n');
  const forged = await cli.run(['auth', 'next', '--realm', 'r1', '--manager-key', 'wrong']);
  assert.equal(forged.code, 1);
  assert.match(forged.stderr, /Invalid manager proof \(code 401\)/);
  assert.equal((await cli.run(['auth', 'approve', 'authreq-none', '--admin-token', ADMIN])).code, 5);
  assert.equal((await cli.run(['auth', 'next'])).code, 2);
  const timeout = await cli.run(['auth', 'request', '--realm', 'r1', '--client-id', 'dev-3', '--wait', '--timeout', '300ms']);
  assert.equal(timeout.code, 4, timeout.stderr);
});

test('realm: add, ls, key, manager-key, auth, acceptance, e2ee, lifetime, rename, rm (signed by the admin token or the realm\'s key)', async (t) => {
  const server = await startServer(t, { settings: AUTH });
  const cli = makeCli(t, { url: server.url, env: { TYO_MQ_ADMIN_TOKEN: ADMIN } });
  const run = async (...args) => {
    const r = await cli.run(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  assert.equal(await run('realm', 'add', 'r2', '--manager-key', 'mk-r2', '--key', 'psk'), 'added realm r2\n');
  assert.equal(await run('realm', 'key', 'r2', 'psk2', '--require-key', 'on', '--manager-key', 'mk-r2'), 'set the key of realm r2\n');
  assert.equal(await run('realm', 'acceptance', 'r2', 'on', '--manager-key', 'mk-r2'), 'realm r2: acceptance required\n');
  assert.equal(await run('realm', 'lifetime', 'r2', 'ephemeral', '--ttl', '2h', '--manager-key', 'mk-r2'), 'realm r2: ephemeral for 2h\n');
  assert.equal(await run('realm', 'e2ee', 'r2', 'opportunistic'), 'realm r2: e2ee opportunistic\n');
  assert.equal(await run('realm', 'auth', 'r2', 'off'), 'realm r2: authentication not required\n');
  assert.equal(await run('realm', 'manager-key', 'r2', 'mk-new'), 'set the manager key of realm r2\n');
  const ls = await run('realm', 'ls');
  assert.match(ls, /^REALM\s+AUTH REQUIRED\s+MANAGER KEY\s+KEY\s+ACCEPTANCE\s+E2EE\s+EPHEMERAL\s+EXPIRES\s+RENAMED TO\n/);
  assert.match(ls, /\nr2\s+no\s+yes\s+yes\s+yes\s+opportunistic\s+yes\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+-\n/);
  assert.match(ls, /\nr1\s+yes\s+yes\s+no\s+no\s+-\s+no\s+-\s+-\n/);
  const realms = (await cli.run(['realm', 'ls', '--json'])).json().realms;
  assert.equal(realms.find((r) => r.name === 'r2').e2ee, 'opportunistic');
  assert.equal(JSON.stringify(realms).includes('mk-new'), false, 'no secret in the settings');
  // The old manager key no longer signs; the realm's key cannot sign an admin command.
  assert.equal((await cli.run(['realm', 'acceptance', 'r2', 'off', '--manager-key', 'mk-r2'])).code, 1);
  assert.equal((await cli.run(['realm', 'key', 'r2', '--clear', '--manager-key', 'mk-new'])).stdout, 'cleared the key of realm r2\n');
  assert.match(await run('realm', 'ls'), /\nr2\s+no\s+yes\s+no\s/);
  assert.equal(await run('realm', 'lifetime', 'r2', 'permanent'), 'realm r2: permanent\n');
  assert.equal(await run('realm', 'manager-key', 'r2', '--clear'), 'cleared the manager key of realm r2\n');
  assert.equal(await run('realm', 'rename', 'r2', 'r3'), 'renamed realm r2 to r3\n');
  assert.equal((await cli.run(['realm', 'rename', 'r2', 'r4'])).code, 5);
  const rm = await cli.run(['realm', 'rm', 'r3', '--json']);
  assert.equal(rm.json().ok, true);
  assert.equal((await cli.run(['realm', 'rm', 'r3'])).code, 5);
  assert.equal((await cli.run(['realm', 'add', 'bad', '--admin-token', 'not-the-admin'])).code, 1);
});

test('dlq ls/replay/discard, settings get/reload, token revoke, stats', async (t) => {
  const server = await startServer(t, { settings: AUTH });
  const cli = makeCli(t, { url: server.url, env: { TYO_MQ_ADMIN_TOKEN: ADMIN } });
  assert.equal((await cli.run(['dlq', 'ls'])).stdout, 'no dead letters\n');
  // A dead letter: an ACK-mode copy that is never acknowledged, with one attempt.
  const consumer = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => consumer.close());
  consumer.emit('SUBSCRIBE', { event: 'e', producer: 'p', consumer: 'c', consumer_id: 'c', durable: true, ack: true,
    ack_timeout: '200ms', retry: { max_attempts: 1 } });
  await consumer.timeout(5000 * TIME_SCALE).emitWithAck('PING', {});
  assert.equal((await cli.run(['pub', 'e', '{"n":1}', '--producer', 'p', '--confirm'])).code, 0);
  await server.waitForLog(/dead-lettered \S+ for c in realm default/, 5000 * TIME_SCALE);
  const entries = (await cli.run(['dlq', 'ls', '--json'])).json().entries;
  assert.equal(entries.length, 1);
  assert.deepEqual([entries[0].event, entries[0].consumer, entries[0].realm], ['p-e', 'c', 'default']);
  assert.match((await cli.run(['dlq', 'ls', '--realm', 'default'])).stdout, new RegExp(`^ID\\s+REALM\\s+EVENT.*\\n${entries[0].id}\\s+default\\s+p-e\\s+p\\s+c\\s`));
  const replay = await cli.run(['dlq', 'replay', entries[0].id, '--json']);
  assert.equal(replay.code, 0, replay.stderr);
  assert.match(replay.json().new_msg_id, /^msg-/);
  await waitFor(async () => (await cli.run(['dlq', 'ls', '--json'])).json().entries.length === 1, 5000 * TIME_SCALE, 'dead-lettered again');
  const again = (await cli.run(['dlq', 'ls', '--json'])).json().entries[0];
  assert.equal((await cli.run(['dlq', 'discard', again.id])).stdout, `discarded ${again.id}\n`);
  assert.equal((await cli.run(['dlq', 'discard', again.id])).code, 5);
  assert.equal((await cli.run(['dlq', 'replay', 'msg-none'])).code, 5);

  const settings = await cli.run(['settings', 'get']);
  assert.equal(settings.code, 0, settings.stderr);
  assert.equal(JSON.parse(settings.stdout).enabled, true);
  assert.equal(settings.stdout.includes(ADMIN), false, 'the admin token is never echoed');
  assert.equal((await cli.run(['settings', 'get', '--json'])).json().settings.realms.r1.manager_key_configured, true);
  assert.equal((await cli.run(['settings', 'reload'])).stdout, 'reloaded the settings\n');

  assert.equal((await cli.run(['token', 'revoke', 'tok-sec'])).stdout, 'revoked\n');
  assert.equal((await cli.run(['sub', 'e', '--token', 'tok-sec'])).code, 1);
  assert.equal((await cli.run(['token', 'revoke', 'tok-sec'])).code, 5);
  assert.equal((await cli.run(['token', 'revoke', '--client-id', 'c9', '--realm', 'sec'])).code, 5);

  const stats = await cli.run(['stats']);
  assert.equal(stats.code, 0, stats.stderr);
  assert.match(stats.stdout, /^Server:\s+\S+\nVersion:\s+\S+\n/);
  assert.match(stats.stdout, /\ntyo-mq:\nREALM\s+PRODUCERS\s+ONLINE\s+CONSUMERS\s+ONLINE\s+SUBSCRIPTIONS\n/);
  const doc = (await cli.run(['stats', '--json'])).json();
  assert.ok(doc.bus.connections >= 1);
  assert.equal(doc.tyomq.ok, true);
  assert.ok('default' in doc.tyomq.stats.realms);
  // Without the admin token: the bus's control plane refuses (auth is on), exit 1.
  assert.equal((await cli.run(['stats'], { env: { TYO_MQ_ADMIN_TOKEN: '' } })).code, 1);
});

test('bus control token: refused without it (1), taken from the flag, the environment or the admin token', async (t) => {
  const server = await startServer(t, { settings: { bus: { control_token: 'ctl' } } });
  const cli = makeCli(t, { url: server.url });
  const refused = await cli.run(['stream', 'ls']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /connect refused on \/control: unauthorized/);
  assert.equal((await cli.run(['stream', 'ls', '--control-token', 'ctl'])).stdout, 'no streams\n');
  assert.equal((await cli.run(['stream', 'add', 'S', '--json'], { env: { SIOMQ_CONTROL_TOKEN: 'ctl' } })).code, 0);
  assert.equal((await cli.run(['stream', 'info', 'S', '--admin-token', 'ctl', '--json'])).json().config.subjects[0], 'S');
  // The data plane needs no control token.
  assert.equal((await cli.run(['bus', 'pub', 'S', 'x', '--ack'])).stdout, 'stored in S seq 1\n');
});

test('contexts: save (mode 0600), show masks secrets, use, --context, precedence flag > env > file > default', async (t) => {
  const server = await startServer(t);
  const other = await startServer(t);
  const cli = makeCli(t, { url: null });
  const none = (await cli.run(['context', 'show', '--json'])).json();
  assert.deepEqual([none.context, none.servers, none.source.servers], [null, ['http://127.0.0.1:17352'], 'default']);

  const save = await cli.run(['context', 'save', '--name', 'dev', '--server', server.url, '--token', 'tok-secret-1',
    '--admin-token', 'adm-secret-2', '--realm', 'r1']);
  assert.equal(save.code, 0, save.stderr);
  assert.match(save.stdout, /saved context dev in .* \(now the current one\)/);
  assert.equal(fs.statSync(cli.contextFile).mode & 0o777, 0o600);
  const file = JSON.parse(fs.readFileSync(cli.contextFile, 'utf8'));
  assert.deepEqual(file, { current: 'dev', contexts: { dev: { servers: [server.url], token: 'tok-secret-1', admin_token: 'adm-secret-2', realm: 'r1' } } });
  assert.equal((await cli.run(['context', 'save', '--name', 'other', '--server', other.url])).stdout,
    `saved context other in ${cli.contextFile}\n`);

  for (const args of [['context', 'show'], ['context', 'show', '--json'], ['context', 'show', 'dev'], ['context', 'show', 'dev', '--json'], ['context', 'ls', '--json']]) {
    const r = await cli.run(args);
    assert.equal(r.code, 0, args.join(' '));
    assert.doesNotMatch(r.stdout + r.stderr, /secret/, `${args.join(' ')} shows no secret`);
    assert.match(r.stdout, /\*{8}/);
  }
  const shown = (await cli.run(['context', 'show', '--json'])).json();
  assert.deepEqual([shown.context, shown.servers, shown.token, shown.realm, shown.source.servers, shown.source.token],
    ['dev', [server.url], '********', 'r1', 'context', 'context']);
  assert.match((await cli.run(['context', 'ls'])).stdout, /^NAME\s+CURRENT\s+SERVERS\s+REALM\ndev\s+\*\s+\S+\s+r1\nother\s+\S+\s+r1\n$/);

  // The file's server is used; the environment beats it; a flag beats both.
  assert.equal((await cli.run(['stream', 'ls'])).stdout, 'no streams\n', 'the current context\'s server');
  const viaEnv = await cli.run(['context', 'show', '--json'], { env: { SIOMQ_URL: other.url, SIOMQ_TOKEN: 'env-tok' } });
  assert.deepEqual([viaEnv.json().servers, viaEnv.json().source.servers, viaEnv.json().source.token], [[other.url], 'env', 'env']);
  const viaFlag = await cli.run(['context', 'show', '--json', '-s', `${DOWN},${server.url}`], { env: { SIOMQ_URL: other.url } });
  assert.deepEqual([viaFlag.json().servers, viaFlag.json().source.servers], [[DOWN, server.url], 'flag']);
  // A real command follows the same order: the environment's dead server beats the file's live one.
  assert.equal((await cli.run(['stream', 'ls'], { env: { SIOMQ_URL: DOWN } })).code, 3);
  assert.equal((await cli.run(['stream', 'ls', '--server', server.url], { env: { SIOMQ_URL: DOWN } })).code, 0);
  // Several servers: the first that answers.
  assert.equal((await cli.run(['stream', 'ls', '-s', DOWN, '-s', server.url])).code, 0);

  assert.equal((await cli.run(['context', 'use', 'other'])).stdout, 'using context other\n');
  assert.equal((await cli.run(['context', 'show', '--json'])).json().servers[0], other.url);
  assert.equal((await cli.run(['context', 'show', '--json', '--context', 'dev'])).json().servers[0], server.url);
  assert.equal((await cli.run(['context', 'use', 'nope'])).code, 5);
  assert.equal((await cli.run(['stats', '--context', 'nope'])).code, 5);
  assert.equal((await cli.run(['context', 'rm', 'other'])).stdout, 'removed context other\n');
  assert.equal((await cli.run(['context', 'show', '--json'])).json().context, null);
  fs.writeFileSync(cli.contextFile, 'not json');
  const broken = await cli.run(['stream', 'ls']);
  assert.equal(broken.code, 2);
  assert.match(broken.stderr, /is not a JSON object/);
});

test('ping: --json and --eio 3', async (t) => {
  const server = await startServer(t);
  const cli = makeCli(t, { url: server.url });
  const r = await cli.run(['ping', '-n', '2', '--eio', '3', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = r.json();
  assert.equal(doc.replies.length, 2);
  assert.equal(doc.socket, doc.session, 'Engine.IO v3: the socket id is the session id');
  assert.equal(JSON.parse(doc.replies[0].reply[0]).pong, 'PONG');
});

test('sub and bus sub reconnect: after a server restart they subscribe again and keep receiving', async (t) => {
  const first = await startServer(t);
  const cli = makeCli(t, { url: first.url });
  const tyo = await cli.start(['sub', 'ev', '--count', '1']);
  const bus = await cli.start(['bus', 'sub', 'x.>', '--count', '1', '--json']);
  await first.stop();
  const second = await startServer(t, { port: first.port });
  await Promise.all([tyo.waitStderr(/siomq: reconnected/, 15000 * TIME_SCALE), bus.waitStderr(/siomq: reconnected/, 15000 * TIME_SCALE)]);
  assert.equal((await cli.run(['pub', 'ev', '"again"', '-s', second.url])).code, 0);
  assert.equal((await cli.run(['bus', 'pub', 'x.y', 'again', '-s', second.url])).code, 0);
  const [a, b] = await Promise.all([tyo.result, bus.result]);
  assert.equal(a.stdout, '[#1] ev from siomq-cli: "again"\n');
  assert.match(a.stderr, /disconnected \(.*\), reconnecting\nsiomq: reconnected/);
  assert.deepEqual(b.lines(), [{ subject: 'x.y', data: 'again' }]);
});
