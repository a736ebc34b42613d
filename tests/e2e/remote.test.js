// tyo-mq §12: REMOTE_TICKET_REQUEST on "/", the /remote relay namespace (tickets, auth, every built-in
// rule direction, binary frames byte for byte, the catch-all, reserved events, role guards, acks
// stripped), `remote.*` settings reloaded live, configured relay namespaces, `get`'s namespaces, the
// bounds, and isolation between sessions and between realms.
//
// "Not relayed" is observed with a marker: the same sender then sends an event that is relayed to the
// same receiver; relayed events of one sender arrive in order, so once the marker is in, anything
// relayed before it would be too.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const { startServer, delay } = require('./lib/server');
const { connectV4, connectErrorV4, emitAck, once, waitFor, TIME_SCALE } = require('./lib/clients');
const { authenticate, manage } = require('./lib/tyo_auth');

const ADMIN = 'admin-secret-token';

async function main(server, t) {
  const s = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => s.close());
  return s;
}

// REMOTE_TICKET_REQUEST with an ack; resolves with the answer.
async function ticket(socket, payload) {
  const [reply] = await emitAck(socket, 'REMOTE_TICKET_REQUEST', payload);
  return reply;
}

// A socket on `nsp` (its own connection) that sent `auth`; resolves with {socket, event, body}, where
// event is auth_ok or auth_error.
async function authOn(server, t, auth, nsp = '/remote') {
  const socket = await connectV4(server.url + nsp, { transports: ['websocket'] });
  t.after(() => socket.close());
  const answer = new Promise((resolve) => {
    socket.once('auth_ok', (body) => resolve({ event: 'auth_ok', body }));
    socket.once('auth_error', (body) => resolve({ event: 'auth_error', body }));
  });
  socket.emit('auth', auth);
  return { socket, ...(await answer) };
}

// A peer of `role` in `session` (a fresh ticket from `mainSocket`), authenticated.
async function peer(server, t, mainSocket, role, session, nsp = '/remote') {
  const r = await ticket(mainSocket, { role, session_id: session, ...(nsp === '/remote' ? {} : { namespace: nsp }) });
  assert.equal(r.ok, true, JSON.stringify(r));
  const { socket, event, body } = await authOn(server, t, { ticket: r.ticket, role, session_id: session }, nsp);
  assert.equal(event, 'auth_ok', JSON.stringify(body));
  return socket;
}

async function pair(server, t, mainSocket, session = 's-' + crypto.randomBytes(4).toString('hex'), nsp = '/remote') {
  const agent = await peer(server, t, mainSocket, 'agent', session, nsp);
  const viewer = await peer(server, t, mainSocket, 'viewer', session, nsp);
  return { agent, viewer, session };
}

// Records every event a socket receives, with its arguments.
function record(socket) {
  const got = [];
  socket.onAny((event, ...args) => got.push({ event, args }));
  return got;
}

// Sends `marker` from `from` and waits until `to` got it; then returns what `to` received before it.
async function untilMarker(from, to, got, marker = 'marker.' + crypto.randomBytes(3).toString('hex')) {
  from.emit(marker, { m: 1 });
  await waitFor(() => got.some((e) => e.event === marker), 5000 * TIME_SCALE, marker);
  return got.filter((e) => e.event !== marker && !e.event.startsWith('marker.'));
}

test('REMOTE_TICKET_REQUEST: the ack and REMOTE_TICKET carry the same ticket; defaults, aliases and bad requests', async (t) => {
  const server = await startServer(t);
  const s = await main(server, t);
  const event = once(s, 'REMOTE_TICKET');
  const r = await ticket(s, { role: 'viewer', session_id: 'sess-1', machine_id: 'host-1' });
  assert.equal(r.ok, true);
  assert.equal(r.session_id, 'sess-1');
  assert.equal(r.role, 'viewer');
  assert.equal(r.expires_in, 60);
  assert.match(r.ticket, /^[0-9a-f]{32}$/);
  assert.deepEqual((await event)[0], r);
  assert.deepEqual(Object.keys(r).sort(), ['expires_in', 'ok', 'role', 'session_id', 'ticket']);

  const d = await ticket(s, {});  // role agent, a random session id
  assert.equal(d.role, 'agent');
  assert.match(d.session_id, /^[0-9a-f]{16}$/);
  assert.notEqual(d.ticket, r.ticket);
  const noPayload = await new Promise((resolve) => s.emit('REMOTE_TICKET_REQUEST', resolve));
  assert.equal(noPayload.ok, true);
  const str = await ticket(s, JSON.stringify({ role: 'viewer', sessionId: 'from-alias' }));
  assert.equal(str.session_id, 'from-alias');
  assert.equal(str.role, 'viewer');
  const num = await ticket(s, { session_id: 42 });
  assert.equal(num.session_id, '42');

  for (const [bad, message] of [
    ['{not json', 'Invalid remote ticket request JSON'],
    [{ role: 'admin' }, 'role must be "agent" or "viewer"'],
    [{ session_id: 'x'.repeat(129) }, 'session_id must be 1 to 128 bytes'],
    [{ session_id: { a: 1 } }, 'session_id must be a string'],
    [{ namespace: '/nope' }, 'No relay namespace /nope'],
  ]) {
    const fail = once(s, 'REMOTE_TICKET_FAIL');
    const reply = await ticket(s, bad);
    assert.equal(reply.ok, false, JSON.stringify(bad));
    assert.equal(reply.message, message);
    assert.equal(reply.code, bad.namespace ? 404 : 400);
    assert.deepEqual((await fail)[0], reply);
  }
});

test('/remote auth: auth_ok; single use; unknown ticket, session and role mismatch give auth_error and a disconnect', async (t) => {
  const server = await startServer(t);
  const s = await main(server, t);
  const r = await ticket(s, { role: 'agent', session_id: 'sess-a' });
  const ok = await authOn(server, t, { ticket: r.ticket, session_id: 'sess-a', role: 'agent' });
  assert.equal(ok.event, 'auth_ok');
  assert.deepEqual(ok.body, { session_id: 'sess-a', role: 'agent' });
  // Authenticating again on the same socket changes nothing.
  ok.socket.emit('auth', { ticket: r.ticket });
  assert.deepEqual((await once(ok.socket, 'auth_error'))[0], { message: 'Socket is already authenticated' });
  assert.equal(ok.socket.connected, true);

  const cases = [
    [{ ticket: r.ticket }, 'Invalid or expired ticket'],  // used once already
    [{ ticket: 'deadbeef'.repeat(4) }, 'Invalid or expired ticket'],
    [{}, 'Invalid or expired ticket'],
    [{ ticket: (await ticket(s, { session_id: 'one' })).ticket, session_id: 'two' }, 'Ticket session mismatch'],
    [{ ticket: (await ticket(s, { role: 'viewer' })).ticket, role: 'agent' }, 'Ticket role mismatch'],
  ];
  for (const [auth, message] of cases) {
    const { socket, event, body } = await authOn(server, t, auth);
    assert.equal(event, 'auth_error', JSON.stringify(auth));
    assert.deepEqual(body, { message });
    await waitFor(() => !socket.connected, 5000 * TIME_SCALE, 'disconnect after auth_error');
  }
  // A ticket for a session whose mismatch was refused is spent as well (single use).
  const spent = await ticket(s, { session_id: 'three' });
  assert.equal((await authOn(server, t, { ticket: spent.ticket, session_id: 'four' })).event, 'auth_error');
  assert.equal((await authOn(server, t, { ticket: spent.ticket, session_id: 'three' })).event, 'auth_error');
});

test('tickets expire (remote.ticket_ttl_ms), expires_in follows it; the ticket bounds answer 429', async (t) => {
  const server = await startServer(t, { settings: { remote: { ticket_ttl_ms: 300, max_tickets_per_socket: 3 } } });
  const s = await main(server, t);
  const r = await ticket(s, { session_id: 'late' });
  assert.equal(r.expires_in, 1);
  await delay(500);
  const late = await authOn(server, t, { ticket: r.ticket });
  assert.deepEqual([late.event, late.body], ['auth_error', { message: 'Invalid or expired ticket' }]);
  // The expired one no longer counts: three fit, the fourth is refused, another socket has its own count.
  for (let i = 0; i < 3; i++) assert.equal((await ticket(s, {})).ok, true);
  const over = await ticket(s, {});
  assert.deepEqual(over, { ok: false, code: 429, message: 'Too many unredeemed remote tickets for this socket' });
  const other = await main(server, t);
  assert.equal((await ticket(other, {})).ok, true);
});

test('with auth on, tickets come after AUTHENTICATION (the [] gate): 401 before, 403 for a producer token in a closed realm', async (t) => {
  const server = await startServer(t, {
    settings: {
      auth: {
        enabled: true,
        tokens: [
          { token: 'tok-both', realm: 'closed', role: 'both' },
          { token: 'tok-prod', realm: 'closed', role: 'producer' },
        ],
        realms: { closed: { required: true } },
      },
    },
  });
  const s = await main(server, t);
  const fail = once(s, 'AUTH_FAIL');
  const before = await ticket(s, { session_id: 'x' });
  assert.deepEqual(before, { ok: false, code: 401, message: 'Authentication required before REMOTE_TICKET_REQUEST' });
  assert.equal((await fail)[0].code, 401);
  assert.equal((await authenticate(s, { token: 'tok-both' })).event, 'AUTH_OK');
  const r = await ticket(s, { role: 'agent', session_id: 'x' });
  assert.equal(r.ok, true);
  assert.equal((await authOn(server, t, { ticket: r.ticket, role: 'agent' })).event, 'auth_ok');

  const p = await main(server, t);
  assert.equal((await authenticate(p, { token: 'tok-prod' })).event, 'AUTH_OK');
  const refused = await ticket(p, {});
  assert.equal(refused.ok, false);
  assert.equal(refused.code, 403);
});

test('nothing is relayed before auth; an unauthenticated socket is disconnected after remote.auth_timeout_ms', async (t) => {
  const server = await startServer(t, { settings: { remote: { auth_timeout_ms: 400 } } });
  const s = await main(server, t);
  const agent = await peer(server, t, s, 'agent', 'pre');
  const got = record(agent);
  const r = await ticket(s, { role: 'viewer', session_id: 'pre' });
  const viewer = await connectV4(server.url + '/remote', { transports: ['websocket'] });
  t.after(() => viewer.close());
  viewer.emit('input.early', { before: 'auth' });
  viewer.emit('auth', { ticket: r.ticket });
  await once(viewer, 'auth_ok');
  assert.deepEqual(await untilMarker(viewer, agent, got), []);

  const idle = await connectV4(server.url + '/remote', { transports: ['websocket'] });
  t.after(() => idle.close());
  const timeout = once(idle, 'auth_error');
  assert.deepEqual((await timeout)[0], { message: 'Authentication timeout' });
  await waitFor(() => !idle.connected, 5000 * TIME_SCALE, 'disconnect after the auth timeout');
  await delay(600);
  assert.equal(viewer.connected, true, 'an authenticated socket stays');
});

test('built-in rules: every direction, role guards, binary and base64 frames byte for byte, sender excluded', async (t) => {
  const server = await startServer(t);
  const s = await main(server, t);
  const { agent, viewer, session } = await pair(server, t, s);
  const viewer2 = await peer(server, t, s, 'viewer', session);
  const atAgent = record(agent);
  const atViewer = record(viewer);
  const atViewer2 = record(viewer2);

  // frame, agent → viewers: a Buffer arrives byte for byte at every viewer, and a base64 {frame} as a Buffer.
  const bytes = crypto.randomBytes(65536);
  const small = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x00]);
  agent.emit('frame', bytes);
  agent.emit('frame', { session_id: session, frame: small.toString('base64') });
  agent.emit('frame', { frame: bytes });  // an object whose frame is binary
  // agent → viewers: rtc.offer; to the opposite side: rtc.ice and an unlisted event.
  agent.emit('rtc.offer', { sdp: 'offer' });
  agent.emit('rtc.ice', { c: 'from-agent' });
  agent.emit('clipboard.set', { text: 'x' });
  // Role guards: an agent cannot send viewer-only events.
  agent.emit('input.mouse', { x: 1 });
  agent.emit('rtc.answer', { sdp: 'no' });
  await untilMarker(agent, viewer, atViewer);
  await untilMarker(agent, viewer2, atViewer2);
  for (const got of [atViewer, atViewer2]) {
    const frames = got.filter((e) => e.event === 'frame');
    assert.equal(frames.length, 3);
    assert.ok(Buffer.isBuffer(frames[0].args[0]));
    assert.equal(Buffer.compare(frames[0].args[0], bytes), 0);
    assert.equal(Buffer.compare(frames[1].args[0], small), 0);
    assert.equal(Buffer.compare(frames[2].args[0], bytes), 0);
    assert.equal(frames[0].args.length, 1);
    assert.deepEqual(got.filter((e) => e.event !== 'frame' && !e.event.startsWith('marker.')).map((e) => [e.event, e.args]), [
      ['rtc.offer', [{ sdp: 'offer' }]],
      ['rtc.ice', [{ c: 'from-agent' }]],
      ['clipboard.set', [{ text: 'x' }]],
    ]);
  }

  // viewer → agent: input.*, remote.setmonitor, rtc.answer, rtc.ready, rtc.ice, unlisted; a viewer
  // cannot send frames or offers, and the other viewer hears none of it (nor the sender itself).
  viewer.emit('input.mouse', { x: 100, y: 200, button: 'left' });
  viewer.emit('input.keyboard', { key: 'A' });
  viewer.emit('input.anything.new', { n: 1 });
  viewer.emit('remote.setmonitor', { monitor: 2 });
  viewer.emit('rtc.answer', { sdp: 'answer' });
  viewer.emit('rtc.ready', {});
  viewer.emit('rtc.ice', { c: 'from-viewer' });
  viewer.emit('chat', 'hello');
  viewer.emit('frame', small);
  viewer.emit('rtc.offer', { sdp: 'bad' });
  const seen = await untilMarker(viewer, agent, atAgent);
  assert.deepEqual(seen.map((e) => [e.event, e.args]), [
    ['input.mouse', [{ x: 100, y: 200, button: 'left' }]],
    ['input.keyboard', [{ key: 'A' }]],
    ['input.anything.new', [{ n: 1 }]],
    ['remote.setmonitor', [{ monitor: 2 }]],
    ['rtc.answer', [{ sdp: 'answer' }]],
    ['rtc.ready', [{}]],
    ['rtc.ice', [{ c: 'from-viewer' }]],
    ['chat', ['hello']],
  ]);
  await delay(100);
  assert.equal(atViewer2.filter((e) => e.event.startsWith('input') || e.event === 'chat').length, 0);
});

test('the catch-all: several arguments (binary among them) verbatim, no argument as {}, acks stripped, reserved names never relayed', async (t) => {
  const server = await startServer(t);
  const s = await main(server, t);
  const { agent, viewer } = await pair(server, t, s);
  const atAgent = record(agent);
  const blob = crypto.randomBytes(1000);
  let acked = false;
  viewer.emit('multi', 1, 'two', { three: [3] }, blob, null);
  viewer.emit('bare');
  viewer.emit('with.ack', { a: 1 }, () => { acked = true; });
  for (const reserved of ['auth_ok', 'auth_error', 'auth', 'RATE_LIMITED', 'error', 'ping', 'reconnect']) {
    viewer.emit(reserved, { forged: true });
  }
  const seen = await untilMarker(viewer, agent, atAgent);
  assert.deepEqual(seen.map((e) => e.event), ['multi', 'bare', 'with.ack']);
  const [n, two, three, buf, nil] = seen[0].args;
  assert.deepEqual([n, two, three, nil], [1, 'two', { three: [3] }, null]);
  assert.equal(Buffer.compare(buf, blob), 0);
  assert.deepEqual(seen[1].args, [{}]);
  assert.deepEqual(seen[2].args, [{ a: 1 }]);  // no callback reached the agent
  await delay(200);
  assert.equal(acked, false, 'the sender\'s callback is never answered');
});

test('remote.* reloads live: relay_unlisted off, a new rule, a disabled built-in, an allow-list, per-event max_bytes, frame size', async (t) => {
  // The markers have a rule of their own, so that they pass whatever the other settings say.
  const markers = { 'marker.*': { to: 'opposite' } };
  const server = await startServer(t, { settings: { remote: { max_frame_bytes: 1000, relay: markers } } });
  const s = await main(server, t);
  const { agent, viewer } = await pair(server, t, s);
  const atAgent = record(agent);
  const atViewer = record(viewer);

  // The frame cap: 1000 bytes pass, 1001 do not (binary and base64).
  agent.emit('frame', crypto.randomBytes(1000));
  agent.emit('frame', crypto.randomBytes(1001));
  agent.emit('frame', { frame: crypto.randomBytes(1001).toString('base64') });
  agent.emit('frame', { frame: 'not base64!' });
  const frames = (await untilMarker(agent, viewer, atViewer)).filter((e) => e.event === 'frame');
  assert.deepEqual(frames.map((e) => e.args[0].length), [1000]);

  const write = (remote) => fs.writeFileSync(server.settingsFile,
    JSON.stringify({ remote: { ...remote, relay: { ...markers, ...remote.relay } } }));
  // Each change must show within about a second (the file is checked once a second).
  const within = async (what, check) => {
    const t0 = Date.now();
    await waitFor(check, 3000 * TIME_SCALE, what, 50);
    t.diagnostic(`${what}: applied after ${Date.now() - t0} ms`);
  };
  const relays = async (from, to, got, event) => {
    got.length = 0;
    from.emit(event, { probe: true });
    return (await untilMarker(from, to, got)).some((e) => e.event === event);
  };

  write({ relay_unlisted: 'off' });
  await within('relay_unlisted off', async () => !(await relays(viewer, agent, atAgent, 'unlisted.one')));
  assert.equal(await relays(viewer, agent, atAgent, 'rtc.ready'), true, 'built-in rules still relay');
  write({ relay_unlisted: 'off', relay: { 'custom.x': { from: 'viewer', to: 'agent' }, 'input.*': { enabled: false } } });
  await within('a new rule', () => relays(viewer, agent, atAgent, 'custom.x'));
  assert.equal(await relays(viewer, agent, atAgent, 'input.mouse'), false, 'a disabled built-in');
  assert.equal(await relays(agent, viewer, atViewer, 'custom.x'), false, 'the role guard of a configured rule');

  write({ allow: ['marker.*', 'frame', 'rtc.*'], relay: { 'rtc.ice': { to: 'opposite', max_bytes: 40 } } });
  await within('the allow-list', async () => !(await relays(viewer, agent, atAgent, 'custom.x')));
  assert.equal(await relays(viewer, agent, atAgent, 'chat.unlisted'), false, 'unlisted is on again, but not on the allow-list');
  assert.equal(await relays(viewer, agent, atAgent, 'rtc.ready'), true);
  assert.equal(await relays(viewer, agent, atAgent, 'input.mouse'), false, 'not on the allow-list');
  viewer.emit('rtc.ice', { c: 'x'.repeat(64) });
  viewer.emit('rtc.ice', { c: 'ok' });
  const ice = (await untilMarker(viewer, agent, atAgent)).filter((e) => e.event === 'rtc.ice');
  assert.deepEqual(ice.map((e) => e.args[0]), [{ c: 'ok' }], 'max_bytes of rtc.ice');

  // A broken version is refused whole: the last good one stays.
  write({ relay: { frame: { to: 'sideways' } } });
  await server.waitForLog(/remote\.relay\.frame\.to must be/, 5000 * TIME_SCALE);
  assert.equal(await relays(viewer, agent, atAgent, 'input.mouse'), false);
});

test('bounds: viewers and agents per session, the per-socket event rate', async (t) => {
  const server = await startServer(t, {
    settings: { remote: { max_viewers_per_session: 1, max_agents_per_session: 1, events_per_second: 5, event_burst: 5 } },
  });
  const s = await main(server, t);
  const { agent, viewer, session } = await pair(server, t, s);
  for (const role of ['viewer', 'agent']) {
    const r = await ticket(s, { role, session_id: session });
    const extra = await authOn(server, t, { ticket: r.ticket });
    assert.deepEqual([extra.event, extra.body], ['auth_error', { message: `Too many ${role}s in this session` }]);
  }
  // A peer leaving frees its place.
  viewer.close();
  await waitFor(async () => {
    const r = await ticket(s, { role: 'viewer', session_id: session });
    const again = await authOn(server, t, { ticket: r.ticket });
    return again.event === 'auth_ok';
  }, 5000 * TIME_SCALE, 'a free viewer place');

  const limited = once(agent, 'RATE_LIMITED');
  for (let i = 0; i < 20; i++) agent.emit('burst', { i });
  const [body] = await limited;
  assert.equal(body.code, 429);
  assert.equal(body.reason, 'events_per_second');
  assert.ok(body.retry_after >= 1);
});

test('sessions do not cross, and realms do not cross: a ticket opens its session in the requester\'s realm', async (t) => {
  const server = await startServer(t, {
    settings: {
      auth: {
        enabled: true,
        tokens: [
          { token: 'tok-a', realm: 'realm-a', role: 'both' },
          { token: 'tok-b', realm: 'realm-b', role: 'both' },
        ],
        realms: { 'realm-a': { required: true }, 'realm-b': { required: true } },
      },
    },
  });
  const a = await main(server, t);
  const b = await main(server, t);
  assert.equal((await authenticate(a, { token: 'tok-a' })).event, 'AUTH_OK');
  assert.equal((await authenticate(b, { token: 'tok-b' })).event, 'AUTH_OK');

  const one = await pair(server, t, a, 'shared-id');
  const two = await pair(server, t, a, 'other-id');
  const foreignViewer = await peer(server, t, b, 'viewer', 'shared-id');  // same id, realm b
  const foreignAgent = await peer(server, t, b, 'agent', 'shared-id');
  const gotOne = record(one.viewer);
  const gotTwo = record(two.viewer);
  const gotForeign = record(foreignViewer);
  const gotForeignAgent = record(foreignAgent);
  one.agent.emit('frame', Buffer.from('only for session one'));
  one.viewer.emit('input.key', { k: 1 });
  await waitFor(() => gotOne.some((e) => e.event === 'frame'), 5000 * TIME_SCALE, 'frame in session one');
  // Foreign peers have their own markers: their own session works.
  await untilMarker(foreignAgent, foreignViewer, gotForeign);
  await delay(300);
  assert.equal(gotTwo.filter((e) => e.event === 'frame').length, 0, 'another session of the realm');
  assert.equal(gotForeign.filter((e) => e.event === 'frame').length, 0, 'the same session id in another realm');
  assert.equal(gotForeignAgent.filter((e) => e.event === 'input.key').length, 0);
});

test('configured namespaces relay by their own rules; "/" and "/remote" in the config are ignored; get lists them; added live', async (t) => {
  const settings = {
    auth: { enabled: true, tokens: [{ token: ADMIN, realm: '*', role: 'admin' }], realms: { default: { required: false } } },
    namespaces: {
      '/chat': {
        relay: { msg: { from: 'viewer', to: 'agent' }, shout: { to: 'viewers' }, 'marker.*': { to: 'opposite' } },
        relay_unlisted: 'off',
      },
      '/legacy': { module: './namespaces/legacy.js', options: { relay: { hello: { to: 'viewers' } } } },
      '/': { relay_unlisted: 'off' },
      '/remote': { relay_unlisted: 'off' },
    },
  };
  const server = await startServer(t, { settings });
  await server.waitForLog(/namespaces\.\/ ignored/, 5000 * TIME_SCALE);
  await server.waitForLog(/namespaces\.\/remote ignored/, 5000 * TIME_SCALE);
  const s = await main(server, t);
  assert.equal((await authenticate(s, { token: ADMIN })).event, 'AUTH_OK');

  const chat = await pair(server, t, s, 'room-1', '/chat');
  const atAgent = record(chat.agent);
  const atViewer = record(chat.viewer);
  chat.viewer.emit('msg', { text: 'hi' });
  chat.viewer.emit('other', {});  // unlisted: off in /chat
  chat.viewer.emit('input.mouse', {});  // no built-in rules in a configured namespace
  assert.deepEqual((await untilMarker(chat.viewer, chat.agent, atAgent)).map((e) => [e.event, e.args]), [['msg', [{ text: 'hi' }]]]);
  chat.agent.emit('msg', {});  // the role guard
  chat.agent.emit('frame', Buffer.from('x'));
  assert.deepEqual(await untilMarker(chat.agent, chat.viewer, atViewer), []);

  // A viewer's event to the viewers reaches the other viewers, never the sender itself.
  const viewer2 = await peer(server, t, s, 'viewer', 'room-1', '/chat');
  const atViewer2 = record(viewer2);
  chat.viewer.emit('shout', { n: 1 });
  await waitFor(() => atViewer2.some((e) => e.event === 'shout'), 5000 * TIME_SCALE, 'shout at the other viewer');
  chat.agent.emit('shout', { n: 2 });
  await waitFor(() => atViewer.some((e) => e.event === 'shout'), 5000 * TIME_SCALE, 'shout from the agent');
  assert.deepEqual(atViewer.filter((e) => e.event === 'shout').map((e) => e.args[0]), [{ n: 2 }], 'the sender does not hear itself');

  // A /remote ticket does not open /chat, nor a /chat ticket /remote.
  const remoteTicket = await ticket(s, { session_id: 'room-1' });
  assert.equal((await authOn(server, t, { ticket: remoteTicket.ticket }, '/chat')).event, 'auth_error');
  const chatTicket = await ticket(s, { session_id: 'room-1', namespace: '/chat' });
  assert.equal((await authOn(server, t, { ticket: chatTicket.ticket }, '/remote')).event, 'auth_error');

  // The built-ins keep answering: /remote relays unlisted events (its configured "off" was ignored), "/" pings.
  const remote = await pair(server, t, s);
  const atRemote = record(remote.agent);
  remote.viewer.emit('unlisted', { ok: 1 });
  assert.deepEqual((await untilMarker(remote.viewer, remote.agent, atRemote)).map((e) => e.event), ['unlisted']);
  const [pong] = await emitAck(s, 'PING', {});
  assert.match(pong, /pong/);

  // The {module, options} form relays by its options.
  const legacy = await pair(server, t, s, 'l-1', '/legacy');
  legacy.agent.emit('hello', 'there');
  assert.deepEqual((await once(legacy.viewer, 'hello')), ['there']);

  const err = await connectErrorV4(server.url + '/unknown', { transports: ['websocket'] });
  assert.equal(err.message, 'Invalid namespace');

  const got = await manage(s, { command: 'get' }, ADMIN);
  assert.equal(got.ok, true);
  assert.deepEqual(got.settings.namespaces, [
    { name: '/remote', type: 'builtin' },
    { name: '/chat', type: 'relay' },
    { name: '/legacy', type: 'relay' },
  ]);

  // A namespace added to the file attaches within about a second; removing it refuses new sockets.
  const doc = JSON.parse(fs.readFileSync(server.settingsFile, 'utf8'));
  doc.namespaces['/late'] = { relay: {} };
  fs.writeFileSync(server.settingsFile, JSON.stringify(doc));
  await waitFor(async () => {
    try {
      const late = await connectV4(server.url + '/late', { transports: ['websocket'] });
      late.close();
      return true;
    } catch {
      return false;
    }
  }, 3000 * TIME_SCALE, '/late attached', 100);
  const late = await pair(server, t, s, 'late-1', '/late');
  const atLate = record(late.agent);
  late.viewer.emit('anything', 1);
  assert.deepEqual((await untilMarker(late.viewer, late.agent, atLate)).map((e) => e.event), ['anything']);
  delete doc.namespaces['/late'];
  fs.writeFileSync(server.settingsFile, JSON.stringify(doc));
  await waitFor(async () => (await connectErrorV4(server.url + '/late', { transports: ['websocket'] }).catch(() => null)) !== null,
    3000 * TIME_SCALE, '/late detached', 100);
  late.viewer.emit('after.removal', 1);
  await waitFor(() => !late.viewer.connected, 3000 * TIME_SCALE, 'a socket of a removed namespace leaves it');
});

test('a bad namespaces block is a start-up error naming the key', async (t) => {
  const { runServerOnce } = require('./lib/server');
  for (const [namespaces, message] of [
    [{ chat: {} }, /namespaces\.chat is not a namespace name/],
    [{ '/x': { relay: { auth: { to: 'agent' } } } }, /namespaces\.\/x\.relay\.auth is a reserved event name/],
    [{ '/x': { type: 'module' } }, /namespaces\.\/x\.type must be "relay"/],
  ]) {
    const r = await runServerOnce({ settings: { namespaces } });
    assert.notEqual(r.code, 0);
    assert.match(r.output, message);
  }
});
