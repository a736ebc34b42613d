// The server-wide pages: the overview (the "overview" key, admins only, with two live charts) and the
// read-only settings (the "settings" key: the public settings, secrets already masked by the server).
import { h, fill, card, table, fmtInt, fmtBytes, fmtDuration, fmtMicros, fmtRate } from './dom.js';
import { lineChart } from './charts.js';

// [label, testid, value(overview, store)] for the cards, in order.
const SERVER_CARDS = [
  ['Version', 'ov-version', (o) => o.version],
  ['Node', 'ov-node', (o) => o.node_id || '(standalone)'],
  ['Uptime', 'ov-uptime', (o) => fmtDuration(o.uptime_s)],
  ['Connections', 'ov-connections', (o) => fmtInt(o.connections)],
  ['Messages in /s', 'rate-in', (o, s) => fmtRate(s.rates.in)],
  ['Messages out /s', 'rate-out', (o, s) => fmtRate(s.rates.out)],
  ['Realms', 'ov-realms', (o) => fmtInt(o.realms_total)],
  ['Worker threads', 'ov-threads', (o) => fmtInt(o.threads)],
  ['Memory (RSS)', 'ov-rss', (o) => fmtBytes(o.rss_bytes)],
  ['Slow consumers cut', 'ov-slow', (o) => fmtInt(o.slow_consumers)],
];
const STORE_CARDS = [
  ['Store', 'ov-store', (o) => `${o.store?.backend ?? '—'} (sync ${o.store?.sync ?? '—'})`],
  ['Store writes', 'ov-store-writes', (o) => fmtInt(o.store?.writes)],
  ['Write latency (last / avg)', 'ov-store-latency', (o) => `${fmtMicros(o.store?.write_last_us)} / ${fmtMicros(o.store?.write_avg_us)}`],
  ['Store failures', 'ov-store-failures', (o) => fmtInt(o.store?.failures)],
];
const QUEUE_CARDS = [
  ['Queued', 'ov-queued', (o) => fmtInt(o.queues?.queued)],
  ['Queued bytes', 'ov-queued-bytes', (o) => fmtBytes(o.queues?.queued_bytes)],
  ['In flight', 'ov-in-flight', (o) => fmtInt(o.queues?.in_flight)],
  ['Dead letters', 'ov-dead', (o) => fmtInt(o.queues?.dead)],
];
const TOTALS = [['produced', 'Produced (tyo-mq)'], ['delivered', 'Delivered (tyo-mq)'], ['bus_in', 'Bus in'],
  ['bus_out', 'Bus out'], ['enqueued', 'Stored copies'], ['acked', 'Acknowledged'], ['redelivered', 'Redelivered'],
  ['dead_lettered', 'Dead-lettered'], ['expired', 'Expired']];

export function overviewPage(root, ctx) {
  const { hello } = ctx;
  if (!ctx.api.isAdmin) {
    fill(root,
      h('h1', null, 'Overview'),
      h('div', { class: 'cards' }, card('Version', hello.version || '—', 'ov-version'), card('Node', hello.node_id || '(standalone)', 'ov-node')),
      h('p', { class: 'note', 'data-testid': 'overview-admin-only' },
        'Server-wide numbers need the admin token. ',
        h('a', { href: `#/realm/${encodeURIComponent(hello.realm || '')}`, 'data-testid': 'overview-own-realm' }, `Open realm ${hello.realm}`)));
    return { update() {}, unmount() {} };
  }

  const cells = new Map();
  const group = (title, defs) => h('section', null, h('h2', null, title), h('div', { class: 'cards' }, defs.map(([label, testid]) => {
    const c = card(label, '—', testid);
    cells.set(testid, c.querySelector('.value'));
    return c;
  })));
  const totals = h('div');
  const msgEl = h('div', { class: 'chart', 'data-testid': 'chart-messages' });
  const connEl = h('div', { class: 'chart', 'data-testid': 'chart-connections' });
  fill(root,
    h('h1', null, 'Overview'),
    group('Server', SERVER_CARDS),
    h('section', { class: 'charts' },
      h('div', { class: 'chart-box' }, h('h2', null, 'Messages per second'), msgEl),
      h('div', { class: 'chart-box' }, h('h2', null, 'Connections'), connEl)),
    group('Store', STORE_CARDS),
    group('Durable queues', QUEUE_CARDS),
    h('section', null, h('h2', null, 'Totals since start'), totals));
  const messages = lineChart(msgEl, [{ label: 'in', stroke: '#2563eb' }, { label: 'out', stroke: '#16a34a', dash: [6, 4] }]);
  const connections = lineChart(connEl, [{ label: 'connections', stroke: '#9333ea' }]);

  return {
    update(store) {
      const o = store.get('overview');
      if (!o) return;
      for (const [, testid, value] of [...SERVER_CARDS, ...STORE_CARDS, ...QUEUE_CARDS]) {
        cells.get(testid).textContent = value(o, store) ?? '—';
      }
      fill(totals, table('totals-table', ['Counter', 'Value'], TOTALS.map(([k, label]) => [label, fmtInt(o.totals?.[k])]), { num: [1] }));
      const hist = store.history;
      messages.setData([hist.t, hist.in, hist.out]);
      connections.setData([hist.t, hist.conn]);
    },
    unmount() {
      messages.destroy();
      connections.destroy();
    },
  };
}

export function settingsPage(root) {
  const pre = h('pre', { class: 'settings', 'data-testid': 'settings-json' }, 'Loading…');
  fill(root, h('h1', null, 'Settings'),
    h('p', { class: 'note' }, 'The public settings, read-only. Secrets are shown only as whether they are configured.'), pre);
  let shown = null;
  return {
    update(store) {
      const s = store.get('settings');
      if (s === undefined) return;
      const text = JSON.stringify(s, null, 2);
      if (text !== shown) pre.textContent = shown = text;
    },
    unmount() {},
  };
}
