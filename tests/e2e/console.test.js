// The web console in a real browser (headless Chromium through playwright-core) against a real server:
// the login and what an unauthenticated visitor sees, the overview's live numbers and charts under load,
// the realms and a realm's clients and queues, the DLQ (inspect, replay, discard), enrolment decisions as
// admin and as a realm manager, streams (create, purge, delete) and the settings, which never show a
// secret. Each test also fails on a page error or a Content-Security-Policy violation.
//
// Screenshots of every page go to $SIOMQ_CONSOLE_SHOTS (else a fresh temporary directory, logged once);
// with SIOMQ_CONSOLE_DOC_SHOT=1 the overview under load is also written to docs/console.png.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { startServer, delay } = require('./lib/server');
const { connectV4, emitAck, waitFor, once, TIME_SCALE } = require('./lib/clients');
const { authenticate, manage, collect } = require('./lib/tyo_auth');
const { ok: busOk, call: busCall } = require('./lib/bus');

const CHROMIUM = '/usr/bin/chromium';
const ADMIN = 'console-admin-token-5f1d0c9e';
const SHOP_KEY = 'shop-manager-key-77aa';
const SHOP_TOKEN = 'shop-client-token-31b2';
const WAIT_MS = 15000 * TIME_SCALE;

const SETTINGS = {
  auth: {
    enabled: true,
    tokens: [
      { token: ADMIN, realm: '*', role: 'admin' },
      { token: SHOP_TOKEN, realm: 'shop', role: 'both', client_id: 'shop-app' },
    ],
    realms: { shop: { manager_key: SHOP_KEY, require_acceptance: true } },
  },
  console: { enabled: true, port: 0 },
};

// --- the browser, the server, the page -------------------------------------------------------------

let browser;
test.before(async () => {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is needed for the console tests (CI installs it)`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});
test.after(async () => {
  if (browser) await browser.close();
});

let shotsDir = null;
function shots() {
  if (!shotsDir) {
    shotsDir = process.env.SIOMQ_CONSOLE_SHOTS || fs.mkdtempSync(path.join(os.tmpdir(), 'siomq-console-shots-'));
    fs.mkdirSync(shotsDir, { recursive: true });
    console.log(`# console screenshots in ${shotsDir}`);
  }
  return shotsDir;
}
const shot = (page, name) => page.screenshot({ path: path.join(shots(), `${name}.png`), fullPage: true });

// A server with the console on its own port; `url` is the console page.
async function startConsole(t) {
  const server = await startServer(t, { settings: SETTINGS });
  const [, port] = await server.waitForLog(/console listening on [^\s]+:(\d+)/, 5000 * TIME_SCALE);
  const [, version] = server.logs().match(/siomq-server (\S+) listening on/);
  return { server, url: `http://127.0.0.1:${port}/console/`, version };
}

// A page in a fresh browser context; `problems` collects page errors and CSP violations.
async function openPage(t) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  t.after(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  return { page, problems };
}

async function loginAdmin(page, url) {
  await page.goto(url);
  await page.getByTestId('login-token').fill(ADMIN);
  await page.getByTestId('login-submit').click();
  await page.getByTestId('nav-overview').waitFor();
}

async function loginManager(page, url) {
  await page.goto(url);
  await page.getByTestId('login-kind').selectOption('manager');
  await page.getByTestId('login-realm').fill('shop');
  await page.getByTestId('login-key').fill(SHOP_KEY);
  await page.getByTestId('login-submit').click();
  await page.getByTestId('nav-enrolment').waitFor();
}

const text = async (locator) => ((await locator.textContent()) || '').trim();
const storedKeys = (page) => page.evaluate(() => Object.keys(sessionStorage).length + Object.keys(localStorage).length);

// Waits until `locator`'s text satisfies `pred` (a RegExp or a function of the text).
async function waitText(locator, pred, what) {
  const matches = typeof pred === 'function' ? pred : (s) => pred.test(s);
  let last;
  try {
    await waitFor(async () => matches(last = await text(locator)), WAIT_MS, what, 100);
  } catch (e) {
    throw new Error(`${e.message} (last text: ${JSON.stringify(last)})`);
  }
  return last;
}

// --- tyo-mq and bus clients in realm shop (on the server's main port) ------------------------------

async function shopClient(t, server) {
  const s = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => s.close());
  const r = await authenticate(s, { token: SHOP_TOKEN });
  assert.equal(r.event, 'AUTH_OK', JSON.stringify(r));
  return s;
}

// A round trip, so that everything emitted before has been handled.
const settle = (...sockets) => Promise.all(sockets.map((s) => s.timeout(5000 * TIME_SCALE).emitWithAck('PING', {})));

// --- the tests -------------------------------------------------------------------------------------

test('an unauthenticated visitor sees only the login form; wrong credentials are refused and nothing is stored', async (t) => {
  const { url } = await startConsole(t);
  const { page, problems } = await openPage(t);
  await page.goto(url);
  await page.getByTestId('login').waitFor();
  await delay(1500 * TIME_SCALE);  // long enough for a delta, had one been sent
  const noData = async () => {
    assert.equal(await page.locator('table').count(), 0, 'no table');
    assert.equal(await page.locator('[data-testid^="nav-"], [data-testid^="ov-"], [data-testid="settings-json"]').count(), 0, 'no data');
  };
  await noData();
  assert.equal(await page.getByTestId('login-error').isVisible(), false);
  await shot(page, 'login');

  await page.getByTestId('login-token').fill('not-the-admin-token');
  await page.getByTestId('login-submit').click();
  await waitText(page.getByTestId('login-error'), /unauthorized/, 'the refusal');
  assert.equal(await storedKeys(page), 0, 'nothing stored');
  await noData();

  await page.getByTestId('login-kind').selectOption('manager');
  await page.getByTestId('login-realm').fill('shop');
  await page.getByTestId('login-key').fill('not-the-key');
  await page.getByTestId('login-submit').click();
  await waitText(page.getByTestId('login-error'), /unauthorized/, 'the manager key refusal');
  assert.equal(await storedKeys(page), 0, 'nothing stored');
  await noData();
  await shot(page, 'login-refused');
  // A reload still shows the login form only.
  await page.reload();
  await page.getByTestId('login').waitFor();
  await noData();
  assert.deepEqual(problems, []);
});

test('admin overview: version and live numbers; load moves the messages chart; the session survives a reload until sign-out', async (t) => {
  const { server, url, version } = await startConsole(t);
  const { page, problems } = await openPage(t);
  await loginAdmin(page, url);
  await waitText(page.getByTestId('ov-version'), (s) => s === version, 'the version');
  await waitText(page.getByTestId('ov-connections'), /^\d+$/, 'the connection count');
  await waitText(page.getByTestId('ov-store'), /sync/, 'the store');
  assert.equal(await page.getByTestId('whoami').textContent(), 'admin');
  const stored = await page.evaluate(() => JSON.parse(sessionStorage.getItem(sessionStorage.key(0))));
  assert.deepEqual(stored, { kind: 'token', token: ADMIN });
  assert.equal(await page.evaluate(() => localStorage.length + document.cookie.length), 0, 'no localStorage, no cookie');
  assert.ok(!page.url().includes(ADMIN), 'not in the URL');

  // Load: a producer publishing to a consumer for a few seconds.
  const consumer = await shopClient(t, server);
  const producer = await shopClient(t, server);
  let received = 0;
  consumer.on('CONSUME-p-tick', () => { received++; });
  consumer.emit('SUBSCRIBE', { event: 'tick', producer: 'p', consumer: 'watcher' });
  producer.emit('PRODUCER', { name: 'p' });
  await settle(consumer, producer);
  // 100 to 900 messages a second, in a slow wave (so that the doc's screenshot shows a curve).
  let n = 0;
  const load = setInterval(() => {
    const burst = 5 + Math.round(4 * Math.sin(Date.now() / 3000));
    for (let i = 0; i < burst; i++) producer.emit('PRODUCE', { event: 'tick', from: 'p', message: n++ });
  }, 10);
  t.after(() => clearInterval(load));
  const chart = page.getByTestId('chart-messages');
  await waitFor(async () => Number(await chart.getAttribute('data-last-in')) > 50 && Number(await chart.getAttribute('data-last-out')) > 50,
    WAIT_MS, 'the chart\'s in and out rates above 50/s', 100);
  assert.ok(Number(await text(page.getByTestId('rate-in'))) > 0, 'the rate card');
  assert.ok(Number(await page.getByTestId('chart-connections').getAttribute('data-last-connections')) >= 2, 'the two clients');
  assert.ok(received > 0);
  if (process.env.SIOMQ_CONSOLE_DOC_SHOT === '1') {
    await delay(20000);  // a curve over a few points
    await page.screenshot({ path: path.resolve(__dirname, '../../docs/console.png') });
  }
  await shot(page, 'overview');
  clearInterval(load);
  // The rate falls back to 0 once the load stops: the numbers are live.
  await waitFor(async () => (await chart.getAttribute('data-last-in')) === '0', WAIT_MS, 'the in rate back to 0', 100);
  assert.ok(Number(await chart.getAttribute('data-points')) >= 3, 'the chart kept its points');
  assert.match(await text(page.getByTestId('totals-table')), new RegExp(`Produced \\(tyo-mq\\)${n.toLocaleString('en-US')}`));

  // A reload keeps the session (sessionStorage); sign-out forgets it.
  await page.reload();
  await page.getByTestId('ov-version').waitFor();
  await page.getByTestId('signout').click();
  await page.getByTestId('login').waitFor();
  assert.equal(await storedKeys(page), 0);
  assert.equal(await page.locator('[data-testid^="nav-"]').count(), 0);
  assert.deepEqual(problems, []);
});

test('realms and a realm page: clients, their subscriptions, and a durable queue waiting for an offline consumer', async (t) => {
  const { server, url } = await startConsole(t);
  const live = await shopClient(t, server);
  live.emit('CONSUMER', { name: 'c-live' });
  live.emit('SUBSCRIBE', { event: 'orders', producer: 'p', consumer: 'c-live', group: 'billing' });
  const away = await shopClient(t, server);
  away.emit('SUBSCRIBE', { event: 'orders', producer: 'p', consumer: 'c-away', consumer_id: 'c-away', durable: true });
  const producer = await shopClient(t, server);
  producer.emit('PRODUCER', { name: 'p' });
  await settle(live, away, producer);
  away.close();
  await delay(200);
  for (let i = 0; i < 3; i++) await emitAck(producer, 'PRODUCE', { event: 'orders', from: 'p', message: { order: i } });

  const { page, problems } = await openPage(t);
  await loginAdmin(page, url);
  await page.getByTestId('nav-realms').click();
  const row = page.getByTestId('realm-row-shop');
  const cells = row.locator('td');
  await waitText(cells.nth(1), (s) => s === '1 / 1', 'producers online / total');
  await waitText(cells.nth(2), (s) => s === '1 / 2', 'consumers online / total');
  await waitText(cells.nth(4), (s) => s === '3', 'queued');
  await shot(page, 'realms');

  await page.getByTestId('realm-link-shop').click();
  assert.match(page.url(), /#\/realm\/shop$/);
  await waitText(page.getByTestId('producers-table'), /p\s*yes/, 'the producer online');
  const consumers = page.getByTestId('consumers-table');
  await waitText(consumers, /c-live/, 'the live consumer');
  const liveRow = consumers.locator('tr', { hasText: 'c-live' });
  assert.deepEqual((await liveRow.locator('td').allTextContents()).map((s) => s.trim()),
    ['c-live', 'yes', 'orders', 'p', 'exact', 'billing', 'no', 'no']);
  const awayRow = consumers.locator('tr', { hasText: 'c-away' });
  assert.deepEqual((await awayRow.locator('td').allTextContents()).slice(0, 4).map((s) => s.trim()), ['c-away', 'no', 'orders', 'p']);
  const queue = page.getByTestId('queues-table').locator('tr', { hasText: 'c-away' });
  await waitText(queue.locator('td').nth(3), (s) => s === '3', 'the queue depth');
  assert.match(await text(queue.locator('td').nth(5)), /^\d+s$/, 'the oldest message\'s age');
  await shot(page, 'realm');
  assert.deepEqual(problems, []);
});

test('DLQ: a dead-lettered message is inspected and replayed (the consumer gets it again), another one discarded', async (t) => {
  const { server, url } = await startConsole(t);
  const worker = await shopClient(t, server);
  const got = collect(worker, 'CONSUME-p-jobs');
  let acking = false;
  worker.on('CONSUME-p-jobs', (m) => { if (acking) worker.emit('ACK', { msgId: m.msgId }); });
  worker.emit('SUBSCRIBE', { event: 'jobs', producer: 'p', consumer: 'worker', consumer_id: 'worker', durable: true, ack: true,
    ack_timeout: '100ms', retry: { max_attempts: 1 } });
  const producer = await shopClient(t, server);
  await settle(worker, producer);
  for (const job of [1, 2]) await emitAck(producer, 'PRODUCE', { event: 'jobs', from: 'p', message: { job } });
  await waitFor(() => (server.logs().match(/dead-lettered \S+ for worker/g) || []).length === 2, WAIT_MS, 'two dead letters');

  const { page, problems } = await openPage(t);
  await loginAdmin(page, url);
  await page.getByTestId('nav-dlq').click();
  await page.getByTestId('dlq-realm').selectOption('shop');
  const rows = page.locator('[data-testid^="dlq-row-"]');
  await waitFor(async () => (await rows.count()) === 2, WAIT_MS, 'two rows', 100);
  const ids = (await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.testid))).map((s) => s.slice('dlq-row-'.length));
  const jobOf = {};
  for (const id of ids) {
    await page.getByTestId(`dlq-inspect-${id}`).click();
    const shown = JSON.parse(await page.getByTestId(`dlq-message-${id}`).textContent());
    assert.equal(shown.event, 'jobs');
    assert.equal(shown.from, 'p');
    jobOf[shown.message.job] = id;
  }
  assert.deepEqual(Object.keys(jobOf).sort(), ['1', '2']);
  await shot(page, 'dlq');

  // Replay job 1: the worker (now acknowledging) receives it again and it leaves the list.
  acking = true;
  const before = got.filter((m) => m.message.job === 1).length;
  await page.getByTestId(`dlq-replay-${jobOf[1]}`).click();
  await waitText(page.getByTestId('dlq-status'), /done \(new message \S+\)/, 'the replay\'s answer');
  await waitFor(() => got.filter((m) => m.message.job === 1).length > before, WAIT_MS, 'the replayed delivery');
  await page.getByTestId(`dlq-row-${jobOf[1]}`).waitFor({ state: 'detached' });
  // Once (it went out twice before: DurableQueuesTest.ADlqReplayIsDeliveredOnce).
  await delay(300);
  assert.equal(got.filter((m) => m.message.job === 1).length, before + 1, 'the replay is delivered once');

  // Discard job 2 (a second click confirms).
  await page.getByTestId(`dlq-discard-${jobOf[2]}`).click();
  await delay(300);
  assert.equal(await page.getByTestId(`dlq-row-${jobOf[2]}`).count(), 1, 'one click does not discard');
  await page.getByTestId(`dlq-discard-${jobOf[2]}`).click();
  await page.getByTestId(`dlq-row-${jobOf[2]}`).waitFor({ state: 'detached' });
  await waitText(page.getByTestId('dlq-table'), /No dead letters/, 'an empty list');
  const admin = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => admin.close());
  assert.deepEqual((await manage(admin, { command: 'dlq_list', realm: 'shop' }, ADMIN)).entries, []);
  assert.deepEqual(problems, []);
});

test('enrolment: admin approves with a chosen role, a realm manager sees its realm and rejects; managers get no admin data', async (t) => {
  const { server, url } = await startConsole(t);
  const requester = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => requester.close());
  const file = async (clientId, role) => {
    const [r] = await emitAck(requester, 'AUTHORIZATION_REQUEST', { realm: 'shop', client_id: clientId, client_name: `Device ${clientId}`,
      client_token: `${clientId}-token`, role });
    assert.equal(r.ok, true, JSON.stringify(r));
    return r.request_id;
  };
  const first = await file('dev-1', 'producer');

  const { page, problems } = await openPage(t);
  await loginAdmin(page, url);
  await page.getByTestId('nav-enrolment').click();
  await page.getByTestId(`enrol-row-${first}`).waitFor();
  const role = page.getByTestId(`enrol-role-${first}`);
  assert.equal(await role.inputValue(), 'producer', 'the requested role by default');
  await role.selectOption('consumer');
  await delay(1500 * TIME_SCALE);  // a delta or two: the choice stays
  assert.equal(await role.inputValue(), 'consumer');
  await shot(page, 'enrolment');
  const approved = once(requester, 'AUTHORIZATION_APPROVED', WAIT_MS);
  await page.getByTestId(`enrol-approve-${first}`).click();
  assert.deepEqual((await approved)[0], { request_id: first, realm: 'shop', role: 'consumer' });
  await page.getByTestId(`enrol-row-${first}`).waitFor({ state: 'detached' });
  const enrolled = await connectV4(server.url, { transports: ['websocket'] });
  t.after(() => enrolled.close());
  assert.deepEqual(await authenticate(enrolled, { token: 'dev-1-token' }), { event: 'AUTH_OK', body: { realm: 'shop', role: 'consumer' } });

  // A realm manager's session: its realm only, enrolment decisions, no server-wide or DLQ data.
  const second = await file('dev-2', 'both');
  const mgr = await openPage(t);
  await loginManager(mgr.page, url);
  assert.equal(await mgr.page.getByTestId('whoami').textContent(), 'manager of shop');
  assert.match(mgr.page.url(), /#\/realm\/shop$/);
  await waitText(mgr.page.getByTestId('realm-enrolment'), (s) => s === '1', 'the realm\'s pending count');
  await shot(mgr.page, 'manager-realm');
  await mgr.page.getByTestId('nav-overview').click();
  await mgr.page.getByTestId('overview-admin-only').waitFor();
  assert.equal(await mgr.page.getByTestId('chart-messages').count(), 0);
  await mgr.page.getByTestId('nav-dlq').click();
  await mgr.page.getByTestId('dlq-admin-only').waitFor();
  assert.equal(await mgr.page.getByTestId('dlq-table').count(), 0);
  await mgr.page.getByTestId('nav-streams').click();
  await mgr.page.getByTestId('streams-read-only').waitFor();
  assert.equal(await mgr.page.getByTestId('stream-form').count(), 0, 'no stream form');
  await mgr.page.getByTestId('nav-realms').click();
  await mgr.page.getByTestId('realm-row-shop').waitFor();
  assert.equal(await mgr.page.locator('[data-testid^="realm-row-"]').count(), 1, 'its realm only');

  await mgr.page.getByTestId('nav-enrolment').click();
  await mgr.page.getByTestId(`enrol-row-${second}`).waitFor();
  assert.equal(await mgr.page.getByTestId(`enrol-role-${second}`).inputValue(), 'both');
  await shot(mgr.page, 'manager-enrolment');
  const rejected = once(requester, 'AUTHORIZATION_REJECTED', WAIT_MS);
  await mgr.page.getByTestId(`enrol-reason-${second}`).fill('unknown device');
  await mgr.page.getByTestId(`enrol-reject-${second}`).click();
  assert.deepEqual((await rejected)[0], { request_id: second, reason: 'unknown device' });
  await mgr.page.getByTestId(`enrol-row-${second}`).waitFor({ state: 'detached' });
  await waitText(mgr.page.getByTestId('enrol-status'), /done/, 'the decision\'s answer');
  // The admin's page sees it go too.
  await waitText(page.getByTestId('enrolment-table'), /No pending requests/, 'the admin\'s list emptied');
  assert.deepEqual(problems, []);
  assert.deepEqual(mgr.problems, []);
});

test('streams: created from the form, shown with state and consumers, purged and deleted with a confirming second click', async (t) => {
  const { server, url } = await startConsole(t);
  const { page, problems } = await openPage(t);
  await loginAdmin(page, url);
  await page.goto(`${url}#/streams/shop`);
  await page.getByTestId('stream-form').waitFor();
  await page.getByTestId('stream-name').fill('ORDERS');
  await page.getByTestId('stream-subjects').fill('orders.*');
  await page.getByTestId('stream-storage').selectOption('memory');
  await page.getByTestId('stream-retention').selectOption('limits');
  await page.getByTestId('stream-max-msgs').fill('1000');
  await page.getByTestId('stream-create').click();
  await waitText(page.getByTestId('streams-status'), /Create ORDERS: done/, 'the create answer');
  const row = page.getByTestId('stream-row-ORDERS');
  await row.waitFor();
  assert.deepEqual((await row.locator('td').allTextContents()).slice(0, 4).map((s) => s.trim()), ['ORDERS', 'orders.*', 'memory', 'limits']);

  // Messages and a pull consumer with one message delivered and not acknowledged.
  const control = await connectV4(`${server.url}/control`, { transports: ['websocket'], auth: { token: ADMIN, realm: 'shop' } });
  t.after(() => control.close());
  const info = await busOk(control, 'stream.info', { name: 'ORDERS' });
  assert.equal(info.stream.max_msgs, 1000, 'the form\'s limit');
  const data = await connectV4(server.url, { transports: ['websocket'], auth: { token: SHOP_TOKEN } });
  t.after(() => data.close());
  for (let i = 0; i < 3; i++) await busOk(data, 'stream.pub', { subject: 'orders.new', data: `order ${i}` });
  await busOk(control, 'consumer.add', { stream: 'ORDERS', name: 'billing', ack_policy: 'explicit' });
  const pulled = await busOk(data, 'consumer.pull', { consumer: 'billing', batch: 1 });
  assert.equal(pulled.messages.length, 1);
  await waitText(page.getByTestId('stream-messages-ORDERS'), (s) => s === '3', 'three messages');
  const billing = page.getByTestId('stream-consumers-ORDERS').locator('tr', { hasText: 'billing' });
  await waitFor(async () => (await billing.count()) === 1, WAIT_MS, 'the consumer row', 100);
  await waitFor(async () => JSON.stringify((await billing.locator('td').allTextContents()).slice(0, 5).map((s) => s.trim()))
    === JSON.stringify(['billing', 'pull', '2', '1', '0']), WAIT_MS, 'pending 2, ack pending 1, redelivered 0', 100);
  await shot(page, 'streams');

  await page.getByTestId('stream-purge-ORDERS').click();
  await delay(300);
  assert.equal(await text(page.getByTestId('stream-messages-ORDERS')), '3', 'one click does not purge');
  await page.getByTestId('stream-purge-ORDERS').click();
  await waitText(page.getByTestId('streams-status'), /Purge ORDERS: done \(3 purged\)/, 'the purge answer');
  await waitText(page.getByTestId('stream-messages-ORDERS'), (s) => s === '0', 'an empty stream');

  await page.getByTestId('stream-delete-ORDERS').click();
  await page.getByTestId('stream-delete-ORDERS').click();
  await row.waitFor({ state: 'detached' });
  await waitText(page.getByTestId('streams-table'), /No streams/, 'no stream left');
  assert.equal((await busCall(control, 'stream.info', { name: 'ORDERS' })).error.code, 404);

  // A refusal is shown, not swallowed: the same name with another config after re-creating it.
  await page.getByTestId('stream-create').click();
  await waitText(page.getByTestId('streams-status'), /Create ORDERS: done/, 'created again');
  await page.getByTestId('stream-subjects').fill('other.*');
  await page.getByTestId('stream-create').click();
  await waitText(page.getByTestId('streams-status'), /Create ORDERS failed: 409/, 'the conflict');
  assert.deepEqual(problems, []);
});

test('settings: the public settings, read-only, and no secret anywhere on the page', async (t) => {
  const { url } = await startConsole(t);
  const { page, problems } = await openPage(t);
  await loginAdmin(page, url);
  await page.getByTestId('nav-settings').click();
  const pre = page.getByTestId('settings-json');
  const shown = await waitText(pre, /^\{/, 'the settings');
  const settings = JSON.parse(shown);
  // The shape of the signed `get` command's answer (tyo-mq §8.2): tokens as hashes, realm secrets as flags.
  assert.equal(settings.enabled, true);
  assert.deepEqual(settings.realms.shop, { manager_key_configured: true, require_acceptance: true });
  assert.ok(settings.tokens.some((x) => x.realm === '*' && x.role === 'admin' && /^[0-9a-f]{64}$/.test(x.token_hash)));
  assert.equal(await page.locator('input, textarea, [contenteditable]').count(), 0, 'read-only');
  await shot(page, 'settings');
  for (const secret of [ADMIN, SHOP_KEY, SHOP_TOKEN]) {
    assert.ok(!(await page.content()).includes(secret), 'not in the page');
  }
  assert.deepEqual(problems, []);
});
