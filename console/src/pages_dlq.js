// The dead-letter page: one realm's DLQ through the signed dlq_list / dlq_replay / dlq_discard commands
// (admin token only). The list reloads after each action and whenever the realm's DLQ count changes.
import { h, fill, table, confirmButton, status, realmPicker, fmtTime } from './dom.js';

export function dlqPage(root, ctx, realm) {
  if (!ctx.api.isAdmin) {
    fill(root, h('h1', null, 'Dead letters'),
      h('p', { class: 'note', 'data-testid': 'dlq-admin-only' }, 'The dead-letter commands need the admin token: sign in with it to see and replay dead letters.'));
    return { update() {}, unmount() {} };
  }
  if (realm) ctx.watch(realm);
  const picker = realmPicker('dlq-realm', realm, (r) => `#/dlq/${encodeURIComponent(r)}`, (r) => r.dead > 0);
  const line = h('div', { class: 'status', 'data-testid': 'dlq-status' });
  const listEl = h('div');
  const open = new Set();        // ids whose message is expanded
  const armed = new Map();       // discard buttons clicked once
  let entries = [];
  let lastDead = null;
  let loading = 0;

  async function reload() {
    if (!realm) return;
    const mine = ++loading;
    try {
      const r = await ctx.api.dlqList(realm);
      if (mine !== loading) return;
      entries = r.entries || [];
      render();
    } catch (e) {
      if (mine === loading) status(line, `Could not list the dead letters: ${e.message}`, 'error');
    }
  }

  async function act(what, fn) {
    try {
      status(line, `${what}…`);
      const r = await fn();
      status(line, r.new_msg_id ? `${what}: done (new message ${r.new_msg_id})` : `${what}: done`);
    } catch (e) {
      status(line, `${what} failed: ${e.message}`, 'error');
    }
    await reload();
  }

  function render() {
    const rows = [];
    for (const e of entries) {
      const isOpen = open.has(e.id);
      rows.push(h('tr', { 'data-testid': `dlq-row-${e.id}` },
        h('td', { class: 'mono' }, e.id), h('td', null, e.event), h('td', null, e.consumer), h('td', null, e.producer ?? '—'),
        h('td', null, e.reason ?? '—'), h('td', null, fmtTime(e.dead_lettered_at)),
        h('td', { class: 'actions' },
          h('button', { 'data-testid': `dlq-inspect-${e.id}`, onclick: () => { if (isOpen) open.delete(e.id); else open.add(e.id); render(); } },
            isOpen ? 'Hide' : 'Inspect'),
          h('button', { 'data-testid': `dlq-replay-${e.id}`, onclick: () => act(`Replay ${e.id}`, () => ctx.api.dlqReplay(realm, e.id)) }, 'Replay'),
          confirmButton(armed, e.id, 'Discard', `dlq-discard-${e.id}`, () => act(`Discard ${e.id}`, () => ctx.api.dlqDiscard(realm, e.id))))));
      if (isOpen) {
        rows.push(h('tr', { class: 'expanded' }, h('td', { colspan: 7 },
          h('div', { class: 'meta' }, `created ${fmtTime(e.created_at)} · expires ${e.expires_at ? fmtTime(e.expires_at) : 'never'}`),
          h('pre', { 'data-testid': `dlq-message-${e.id}` }, JSON.stringify(e.message, null, 2)))));
      }
    }
    fill(listEl, table('dlq-table', ['Id', 'Event', 'Consumer', 'Producer', 'Reason', 'Dead-lettered', ''], rows,
      { empty: 'No dead letters in this realm.' }));
  }

  fill(root, h('h1', null, 'Dead letters'),
    h('div', { class: 'toolbar' }, h('label', null, 'Realm ', picker.el),
      h('button', { 'data-testid': 'dlq-reload', onclick: reload, disabled: !realm }, 'Reload')),
    line, listEl);
  reload();

  return {
    update(store) {
      picker.update(store);
      const dead = realm ? store.get(`realm/${realm}`)?.dead : undefined;
      if (dead !== undefined && lastDead !== null && dead !== lastDead) reload();
      if (dead !== undefined) lastDead = dead;
    },
    unmount() { loading++; },
  };
}
