// The streams page: one realm's bus streams and their consumers (the watched "detail" key), and, with the
// admin token, stream.create / stream.purge / stream.delete on the bus control plane.
import { h, fill, table, confirmButton, status, realmPicker, fmtInt, fmtBytes } from './dom.js';

export function streamsPage(root, ctx, realm) {
  if (realm) ctx.watch(realm);
  const { isAdmin } = ctx.api;
  const picker = realmPicker('streams-realm', realm, (r) => `#/streams/${encodeURIComponent(r)}`, (r) => r.streams > 0);
  const line = h('div', { class: 'status', 'data-testid': 'streams-status' });
  const listEl = h('div', null, h('p', { class: 'note' }, 'Loading…'));
  const armed = new Map();
  let shown = null;
  let streams = [];

  async function act(what, fn) {
    try {
      status(line, `${what}…`);
      const r = await fn();
      status(line, r.purged !== undefined ? `${what}: done (${r.purged} purged)` : `${what}: done`);
    } catch (e) {
      status(line, `${what} failed: ${e.message}`, 'error');
    }
  }

  function render() {
    const rows = [];
    for (const s of streams) {
      const seqs = s.messages ? `${fmtInt(s.first_seq)} … ${fmtInt(s.last_seq)}` : `— (next ${fmtInt((s.last_seq || 0) + 1)})`;
      rows.push(h('tr', { 'data-testid': `stream-row-${s.name}` },
        h('td', null, h('strong', null, s.name)), h('td', { class: 'mono' }, (s.subjects || []).join(' ')),
        h('td', null, s.storage), h('td', null, s.retention),
        h('td', { class: 'num', 'data-testid': `stream-messages-${s.name}` }, fmtInt(s.messages)),
        h('td', { class: 'num' }, fmtBytes(s.bytes)), h('td', { class: 'num' }, seqs),
        h('td', { class: 'actions' }, isAdmin ? [
          confirmButton(armed, `purge:${s.name}`, 'Purge', `stream-purge-${s.name}`, () => act(`Purge ${s.name}`, () => ctx.api.streamPurge(realm, s.name))),
          confirmButton(armed, `delete:${s.name}`, 'Delete', `stream-delete-${s.name}`, () => act(`Delete ${s.name}`, () => ctx.api.streamDelete(realm, s.name))),
        ] : null)));
      rows.push(h('tr', { class: 'expanded' }, h('td', { colspan: 8 },
        table(`stream-consumers-${s.name}`, ['Consumer', 'Kind', 'Pending', 'Ack pending', 'Redelivered', 'Waiting pulls', 'Delivered (stream seq)', 'Ack floor (stream seq)'],
          (s.consumers || []).map((c) => [c.name, c.push ? 'push' : 'pull', fmtInt(c.pending), fmtInt(c.ack_pending), fmtInt(c.redelivered),
            fmtInt(c.waiting), fmtInt(c.delivered_stream), fmtInt(c.ack_floor_stream)]), { empty: 'No consumers.', num: [2, 3, 4, 5, 6, 7] }))));
    }
    fill(listEl, table('streams-table', ['Stream', 'Subjects', 'Storage', 'Retention', 'Messages', 'Bytes', 'Sequences', ''], rows,
      { empty: 'No streams in this realm.' }));
  }

  fill(root, h('h1', null, 'Streams'),
    h('div', { class: 'toolbar' }, h('label', null, 'Realm ', picker.el)),
    isAdmin ? createForm(realm, line, ctx, act) : h('p', { class: 'note', 'data-testid': 'streams-read-only' },
      'Read-only: creating, purging and deleting streams needs the admin token.'),
    line, listEl);

  return {
    update(store) {
      picker.update(store);
      const d = store.get('detail');
      if (!d || d.realm !== realm) return;
      const key = JSON.stringify(d.streams || []);
      if (key === shown) return;
      shown = key;
      streams = d.streams || [];
      render();
    },
    unmount() {},
  };
}

const LIMITS = [['max_msgs', 'Max messages', -1], ['max_bytes', 'Max bytes', -1], ['max_age_ms', 'Max age (ms)', 0]];

function createForm(realm, line, ctx, act) {
  const field = (testid, attrs = {}) => h('input', { 'data-testid': testid, ...attrs });
  const name = field('stream-name', { required: true, placeholder: 'ORDERS', pattern: '[A-Za-z0-9_\\-]{1,64}' });
  const subjects = field('stream-subjects', { required: true, placeholder: 'orders.> payments.*' });
  const select = (testid, values) => h('select', { 'data-testid': testid }, values.map((v) => h('option', { value: v }, v)));
  const storage = select('stream-storage', ['file', 'memory']);
  const retention = select('stream-retention', ['limits', 'interest', 'workqueue']);
  const limits = LIMITS.map(([key, label]) => [key, label, field(`stream-${key.replace(/_/g, '-')}`, { type: 'number', min: -1, step: 1, placeholder: 'unlimited' })]);
  const submit = (e) => {
    e.preventDefault();
    const config = {
      name: name.value.trim(),
      subjects: subjects.value.split(/[\s,]+/).filter(Boolean),
      storage: storage.value,
      retention: retention.value,
    };
    LIMITS.forEach(([key, , unlimited], i) => {
      const v = limits[i][2].value.trim();
      config[key] = v === '' ? unlimited : Number(v);
    });
    if (!config.name || !config.subjects.length) {
      status(line, 'A stream needs a name and at least one subject.', 'error');
      return;
    }
    act(`Create ${config.name}`, () => ctx.api.streamCreate(realm, config));
  };
  return h('form', { class: 'inline-form', 'data-testid': 'stream-form', onsubmit: submit },
    h('h2', null, 'Create a stream'),
    h('label', null, 'Name', name), h('label', null, 'Subjects', subjects),
    h('label', null, 'Storage', storage), h('label', null, 'Retention', retention),
    limits.map(([, label, input]) => h('label', null, label, input)),
    h('button', { type: 'submit', 'data-testid': 'stream-create', class: 'primary', disabled: !realm }, 'Create'));
}
