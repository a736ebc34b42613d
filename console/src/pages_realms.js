// The realms list ("realm/<name>" keys) and one realm's page (its "detail" key, while watched).
import { h, fill, card, table, fmtInt, fmtBytes, fmtAge, yesNo } from './dom.js';

const realmHref = (name) => `#/realm/${encodeURIComponent(name)}`;
const ratio = (x) => (x ? `${fmtInt(x.online)} / ${fmtInt(x.total)}` : '—');

export function realmsPage(root, ctx) {
  const body = h('div');
  fill(root, h('h1', null, 'Realms'), body);
  return {
    update(store) {
      const rows = store.realms().map((name) => {
        const r = store.get(`realm/${name}`) || {};
        return h('tr', { 'data-testid': `realm-row-${name}` },
          h('td', null, h('a', { href: realmHref(name), 'data-testid': `realm-link-${name}` }, name)),
          [ratio(r.producers), ratio(r.consumers), fmtInt(r.subscriptions), fmtInt(r.queued), fmtInt(r.in_flight),
            fmtInt(r.dead), fmtInt(r.streams), fmtInt(r.enrolment_pending)].map((c) => h('td', { class: 'num' }, c)));
      });
      fill(body, table('realms-table', ['Realm', 'Producers online / total', 'Consumers online / total', 'Subscriptions',
        'Queued', 'In flight', 'DLQ', 'Streams', 'Pending enrolment'], rows, { empty: 'No realm has live state yet.' }));
    },
    unmount() {},
  };
}

export function realmPage(root, ctx, realm) {
  ctx.watch(realm);
  const summary = h('div', { class: 'cards' });
  const detailEl = h('div');
  fill(root,
    h('h1', null, 'Realm ', h('span', { 'data-testid': 'realm-name' }, realm)),
    h('p', { class: 'links' }, h('a', { href: `#/dlq/${encodeURIComponent(realm)}`, 'data-testid': 'realm-dlq-link' }, 'Dead letters'),
      ' · ', h('a', { href: `#/streams/${encodeURIComponent(realm)}`, 'data-testid': 'realm-streams-link' }, 'Streams')),
    summary, detailEl);

  return {
    update(store) {
      const r = store.get(`realm/${realm}`);
      if (!r) {
        fill(summary, h('p', { class: 'note', 'data-testid': 'realm-missing' }, 'This realm has no live state, or is not yours to see.'));
      } else {
        fill(summary, card('Producers online / total', ratio(r.producers), 'realm-producers'),
          card('Consumers online / total', ratio(r.consumers), 'realm-consumers'),
          card('Subscriptions', fmtInt(r.subscriptions), 'realm-subscriptions'), card('Queued', fmtInt(r.queued), 'realm-queued'),
          card('In flight', fmtInt(r.in_flight), 'realm-in-flight'), card('Dead letters', fmtInt(r.dead), 'realm-dead'),
          card('Streams', fmtInt(r.streams), 'realm-streams'), card('Pending enrolment', fmtInt(r.enrolment_pending), 'realm-enrolment'));
      }
      const d = store.get('detail');
      if (!d || d.realm !== realm) {
        fill(detailEl, h('p', { class: 'note' }, 'Loading the realm’s details…'));
        return;
      }
      const now = store.t || Date.now();
      fill(detailEl,
        d.truncated ? h('p', { class: 'note', 'data-testid': 'detail-truncated' }, 'Long lists are cut short: the server sent the first entries only.') : null,
        h('h2', null, 'Producers'),
        table('producers-table', ['Producer', 'Online'], (d.producers || []).map((p) => [p.name, yesNo(p.online)])),
        h('h2', null, 'Consumers and subscriptions'),
        table('consumers-table', ['Consumer', 'Online', 'Event', 'Producer', 'Match', 'Group', 'Durable', 'ACK'],
          (d.consumers || []).flatMap(consumerRows)),
        h('h2', null, 'Durable queues'),
        table('queues-table', ['Key', 'Consumer', 'Consumer id', 'Depth', 'In flight', 'Oldest'],
          (d.queues || []).map((q) => [q.event, q.consumer, q.consumer_id, fmtInt(q.depth), fmtInt(q.in_flight),
            q.oldest_ms === null || q.oldest_ms === undefined ? '—' : fmtAge(q.oldest_ms, now)]), { num: [3, 4, 5] }),
        h('h2', null, 'Streams'),
        table('realm-streams-table', ['Stream', 'Subjects', 'Storage', 'Retention', 'Messages', 'Bytes', 'Consumers'],
          (d.streams || []).map((s) => [s.name, (s.subjects || []).join(' '), s.storage, s.retention, fmtInt(s.messages),
            fmtBytes(s.bytes), fmtInt((s.consumers || []).length)]), { num: [4, 5, 6] }));
    },
    unmount() {},
  };
}

// One row per subscription of `c` (one row if it has none).
function consumerRows(c) {
  const subs = c.subscriptions || [];
  if (!subs.length) return [[c.name, yesNo(c.online), '—', '—', '—', '—', '—', '—']];
  return subs.map((s) => [c.name, yesNo(c.online), s.event, s.producer, s.topic ? 'topic' : 'exact', s.group ?? '—',
    yesNo(s.durable), yesNo(s.ack)]);
}
