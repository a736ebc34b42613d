// The enrolment page: pending AUTHORIZATION_REQUESTs in scope (the "enrolment" key), approved with a
// role or rejected with a reason through a signed AUTHORIZATION_DECIDE (tyo-mq §7).
import { h, fill, status, fmtTime } from './dom.js';

const ROLES = ['producer', 'consumer', 'both', 'manager', 'admin'];
const HEADERS = ['Request', 'Realm', 'Client', 'Asked for', 'Token (sha-256)', 'Challenge', 'Filed', 'Approve', 'Reject'];

export function enrolmentPage(root, ctx) {
  const line = h('div', { class: 'status', 'data-testid': 'enrol-status' });
  const tbody = h('tbody');
  const rows = new Map();   // request_id -> <tr>, kept across updates so that inputs keep their values
  const empty = h('tr', null, h('td', { colspan: HEADERS.length, class: 'empty' }, 'No pending requests.'));
  fill(root, h('h1', null, 'Enrolment'),
    h('p', { class: 'note' }, 'Clients that filed AUTHORIZATION_REQUEST wait here. Approving adds their token with the chosen role.'),
    line,
    h('table', { 'data-testid': 'enrolment-table' }, h('thead', null, h('tr', null, HEADERS.map((x) => h('th', null, x)))), tbody));

  async function decide(req, tr, approved) {
    const role = tr.querySelector('select').value;
    const reason = tr.querySelector('input').value.trim();
    for (const b of tr.querySelectorAll('button')) b.disabled = true;
    const what = approved ? `Approve ${req.request_id} as ${role}` : `Reject ${req.request_id}`;
    try {
      status(line, `${what}…`);
      await ctx.api.decide({ requestId: req.request_id, approved, role, reason });
      status(line, `${what}: done`);
      tr.classList.add('decided');
    } catch (e) {
      status(line, `${what} failed: ${e.message}`, 'error');
      for (const b of tr.querySelectorAll('button')) b.disabled = false;
    }
  }

  function makeRow(req) {
    const id = req.request_id;
    const role = h('select', { 'data-testid': `enrol-role-${id}` }, ROLES.map((r) => h('option', { value: r }, r)));
    role.value = ROLES.includes(req.role) ? req.role : 'both';
    const reason = h('input', { 'data-testid': `enrol-reason-${id}`, placeholder: 'reason' });
    const tr = h('tr', { 'data-testid': `enrol-row-${id}` },
      h('td', { class: 'mono' }, id), h('td', null, req.realm),
      h('td', null, h('div', null, req.client_name), h('div', { class: 'meta mono' }, req.client_id)),
      h('td', null, req.role), h('td', { class: 'mono', title: req.client_token_hash }, String(req.client_token_hash || '').slice(0, 12)),
      h('td', null, req.challenge_response === null || req.challenge_response === undefined ? '—'
        : h('code', null, JSON.stringify(req.challenge_response))),
      h('td', null, fmtTime(req.created_at)),
      h('td', { class: 'actions' }, role, h('button', { class: 'primary', 'data-testid': `enrol-approve-${id}`, onclick: () => decide(req, tr, true) }, 'Approve')),
      h('td', { class: 'actions' }, reason, h('button', { class: 'danger', 'data-testid': `enrol-reject-${id}`, onclick: () => decide(req, tr, false) }, 'Reject')));
    return tr;
  }

  return {
    update(store) {
      const pending = (store.get('enrolment') || []).filter((r) => !r.status || r.status === 'pending');
      const ids = new Set(pending.map((r) => r.request_id));
      for (const [id, tr] of rows) if (!ids.has(id)) { tr.remove(); rows.delete(id); }
      if (pending.length) empty.remove(); else tbody.append(empty);
      // In the server's order; a row already in place is not touched (moving it would take the focus away).
      pending.forEach((req, i) => {
        if (!rows.has(req.request_id)) rows.set(req.request_id, makeRow(req));
        const tr = rows.get(req.request_id);
        if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null);
      });
    },
    unmount() {},
  };
}
