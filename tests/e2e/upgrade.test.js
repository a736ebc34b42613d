// The polling → WebSocket upgrade, by hand: probe, pause, switch, and the ways it can go wrong.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, delay } = require('./lib/server');
const { RawEio, withTimeout, connectV4, ping } = require('./lib/clients');

const EIO = '/socket.io/?EIO=4&transport=polling';

async function pollingSession(server) {
  const res = await fetch(`${server.url}${EIO}`);
  const open = JSON.parse((await res.text()).slice(1));
  const url = `${server.url}${EIO}&sid=${open.sid}`;
  assert.equal((await fetch(url, { method: 'POST', body: '40' })).status, 200);
  assert.match(await (await fetch(url)).text(), /^40\{"sid"/);
  return { sid: open.sid, url };
}

function probe(server, sid) {
  return new RawEio(server.url, { query: `EIO=4&transport=websocket&sid=${sid}` });
}

test('upgrade by hand: 2probe/3probe, the pending GET gets a noop, 5 switches, old transport refused', async (t) => {
  const server = await startServer(t);
  const { sid, url } = await pollingSession(server);
  const pending = fetch(url).then((r) => r.text());
  await delay(100);
  const ws = probe(server, sid);
  t.after(() => ws.close());
  await withTimeout(ws.opened, 5000, 'probe websocket open');
  ws.send('2probe');
  assert.equal(await ws.next(), '3probe');
  assert.equal(await withTimeout(pending, 5000, 'pending GET released'), '6', 'noop packet releases the poll');
  ws.send('5');
  await delay(100);
  ws.send('421["PING",{"over":"ws"}]');
  assert.match(await ws.next(), /^431\["\{\\"over\\":\\"ws\\"/);
  // Polling is over for this session.
  const get = await fetch(url);
  assert.equal(get.status, 400);
  assert.equal((await get.json()).code, 3);
  const post = await fetch(url, { method: 'POST', body: '42["PING"]' });
  assert.equal(post.status, 400);
  await post.text();
  // The session itself lives on.
  ws.send('422["PING",{}]');
  assert.match(await ws.next(), /^432\[/);
  // A second upgrade attempt on the upgraded session is refused.
  const again = probe(server, sid);
  t.after(() => again.close());
  await assert.rejects(withTimeout(again.opened, 5000, 'second upgrade'));
  ws.send('423["PING",{}]');
  assert.match(await ws.next(), /^433\[/);
  await server.stop();
});

test('packets queued during the upgrade are delivered over the websocket', async (t) => {
  const server = await startServer(t, { diagnostics: true });
  const { sid, url } = await pollingSession(server);
  await fetch(url, { method: 'POST', body: '40/diagnostics,' }).then((r) => r.text());
  assert.match(await (await fetch(url)).text(), /^40\/diagnostics,/);
  const ws = probe(server, sid);
  t.after(() => ws.close());
  await withTimeout(ws.opened, 5000, 'probe open');
  ws.send('2probe');
  assert.equal(await ws.next(), '3probe');
  // While paused, the client still POSTs; the replies must wait for the websocket.
  await fetch(url, { method: 'POST', body: '421["PING",{"q":1}]\x1e42/diagnostics,2["echo","queued"]' }).then((r) => r.text());
  await delay(200);
  ws.send('5');
  const a = await ws.next();
  const b = await ws.next();
  assert.match(a, /^431\["\{\\"q\\":1,/);
  assert.equal(b, '43/diagnostics,2["queued"]');
  await server.stop();
});

test('a probe that never completes is dropped after upgrade_timeout; polling goes on', async (t) => {
  const server = await startServer(t, { settings: { transport: { upgrade_timeout: 500 } } });
  const { sid, url } = await pollingSession(server);
  const ws = probe(server, sid);
  t.after(() => ws.close());
  await withTimeout(ws.opened, 5000, 'probe open');
  const t0 = Date.now();
  await ws.waitClosed(5000);
  assert.ok(Date.now() - t0 >= 300, 'not before upgrade_timeout');
  // Still a polling session.
  await fetch(url, { method: 'POST', body: '421["PING",{}]' }).then((r) => r.text());
  assert.match(await (await fetch(url)).text(), /^431\[/);
  await server.stop();
});

test('a bad probe (wrong packet, binary) is closed and polling goes on', async (t) => {
  const server = await startServer(t);
  const { sid, url } = await pollingSession(server);
  for (const bad of ['5', '2notprobe', Buffer.from([1, 2])]) {
    const ws = probe(server, sid);
    t.after(() => ws.close());
    await withTimeout(ws.opened, 5000, 'probe open');
    ws.send(bad);
    await ws.waitClosed(5000);
    await fetch(url, { method: 'POST', body: '421["PING",{}]' }).then((r) => r.text());
    assert.match(await (await fetch(url)).text(), /^431\[/, `polling still works after probe ${JSON.stringify(bad)}`);
  }
  await server.stop();
});

test('websocket requests that are not proper upgrades are refused', async (t) => {
  const server = await startServer(t);
  // transport=websocket without Upgrade headers.
  let res = await fetch(`${server.url}/socket.io/?EIO=4&transport=websocket`);
  assert.equal(res.status, 400);
  assert.equal((await res.json()).code, 3);
  // Upgrade to an unknown sid.
  const ws = new RawEio(server.url, { query: 'EIO=4&transport=websocket&sid=nosuchsessionxxxxxxx' });
  t.after(() => ws.close());
  await assert.rejects(withTimeout(ws.opened, 5000, 'upgrade to unknown sid'), /400/);
  // A wrong Sec-WebSocket-Version.
  res = await fetch(`${server.url}/socket.io/?EIO=4&transport=websocket`, {
    headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '8', 'sec-websocket-key': 'AAAAAAAAAAAAAAAAAAAAAA==' },
  }).catch((e) => e);
  if (!(res instanceof Error)) {
    assert.equal(res.status, 400);
    await res.text();
  }
  const client = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => client.close());
  await ping(client, {});
  await server.stop();
});

test('EIO3 upgrade by hand: the released GET carries a length-prefixed noop "1:6"', async (t) => {
  const server = await startServer(t);
  const res = await fetch(`${server.url}/socket.io/?EIO=3&transport=polling`);
  const body = await res.text();
  assert.match(body, /^\d+:0\{/, 'EIO3 payloads are length-prefixed');
  const open = JSON.parse(body.slice(body.indexOf(':') + 2));
  const url = `${server.url}/socket.io/?EIO=3&transport=polling&sid=${open.sid}`;
  assert.equal(await (await fetch(url)).text(), '2:40', 'EIO3 joins "/" by itself');
  const pending = fetch(url).then((r) => r.text());
  await delay(100);
  const ws = new RawEio(server.url, { query: `EIO=3&transport=websocket&sid=${open.sid}` });
  t.after(() => ws.close());
  await withTimeout(ws.opened, 5000, 'probe open');
  ws.send('2probe');
  assert.equal(await ws.next(), '3probe');
  assert.equal(await withTimeout(pending, 5000, 'pending GET released'), '1:6');
  await server.stop();
});
