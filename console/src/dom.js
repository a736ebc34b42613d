// Building the DOM without HTML strings (the CSP forbids inline code, and data never becomes markup),
// plus the number formats every page shares.

// h('a', {href: '#/x', 'data-testid': 'nav-x', onclick: fn}, 'text', child, [more]) -> element.
// `on<event>` keys add listeners, `class` sets className, `value`/`checked` set the property (a select's
// value after its options exist); null, undefined and false attributes and children are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  const props = {};
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value' || k === 'checked') props[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  Object.assign(el, props);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// Replaces everything inside `el` with `children`.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A data table: `headers` are strings, each row an array of cells (text or nodes) or a ready <tr>;
// `num` lists the columns to right-align, `empty` is the text of a table without rows.
export function table(testid, headers, rows, { empty = 'None.', num = [] } = {}) {
  const cell = (c, i) => h('td', { class: num.includes(i) ? 'num' : null }, c);
  const body = rows.length
    ? rows.map((r) => (r instanceof Node ? r : h('tr', null, r.map(cell))))
    : [h('tr', null, h('td', { colspan: headers.length, class: 'empty' }, empty))];
  return h('table', { 'data-testid': testid },
    h('thead', null, h('tr', null, headers.map((x) => h('th', null, x)))),
    h('tbody', null, body));
}

// A number card for the overview and realm pages.
export function card(label, value, testid) {
  return h('div', { class: 'card' }, h('div', { class: 'label' }, label),
    h('div', { class: 'value', 'data-testid': testid }, value));
}

// A button that acts on its second click within a few seconds (an inline confirmation: dialogs would
// block tests). `armed` is a Map the page keeps, so that a re-render does not lose the first click.
export function confirmButton(armed, key, label, testid, action) {
  const isArmed = (armed.get(key) || 0) > Date.now();
  return h('button', {
    'data-testid': testid,
    class: isArmed ? 'danger armed' : 'danger',
    onclick: (e) => {
      if ((armed.get(key) || 0) > Date.now()) {
        armed.delete(key);
        action();
        return;
      }
      armed.set(key, Date.now() + 5000);
      e.currentTarget.textContent = `Confirm ${label.toLowerCase()}`;
      e.currentTarget.classList.add('armed');
    },
  }, isArmed ? `Confirm ${label.toLowerCase()}` : label);
}

// A one-line message under a form or table: kind is 'ok' or 'error'.
export function status(el, text, kind = 'ok') {
  el.textContent = text;
  el.className = `status ${text ? kind : ''}`;
  el.dataset.kind = text ? kind : '';
}

export const fmtInt = (n) => (typeof n === 'number' ? Math.round(n).toLocaleString('en-US') : '—');

export function fmtRate(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);
}

export function fmtBytes(n) {
  if (typeof n !== 'number') return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

// 93784 -> "1d 2h 3m", 75 -> "1m 15s".
export function fmtDuration(seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '—';
  let s = Math.max(0, Math.floor(seconds));
  const parts = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60]]) {
    if (s >= size) { parts.push(`${Math.floor(s / size)}${unit}`); s %= size; }
  }
  if (parts.length < 2) parts.push(`${s}s`);
  return parts.slice(0, 3).join(' ');
}

export const fmtMicros = (us) => (typeof us === 'number' ? (us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${Math.round(us)} µs`) : '—');

// The age of something stamped at `ms` (unix ms) as seen at `now`.
export const fmtAge = (ms, now = Date.now()) => (typeof ms === 'number' ? fmtDuration((now - ms) / 1000) : '—');

export const yesNo = (b) => (b ? 'yes' : 'no');

// A time the server sent (unix ms or an ISO string) as "2024-05-01 12:00:00" UTC.
export function fmtTime(v) {
  if (v === null || v === undefined || v === '') return '—';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? String(v) : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

// A realm <select> for pages whose route names a realm (#/dlq/<realm>): its options are the realms in
// the store, a choice navigates to hrefFor(realm), and a route without a realm moves to the first one
// whose summary ("realm/<name>") satisfies `prefer`, else to the first one.
export function realmPicker(testid, current, hrefFor, prefer = () => false) {
  const el = h('select', { 'data-testid': testid, onchange: () => { location.hash = hrefFor(el.value); } });
  let shown = null;
  return {
    el,
    update(store) {
      const names = store.realms();
      if (current && !names.includes(current)) names.unshift(current);
      if (!current && names.length) {
        location.replace(hrefFor(names.find((n) => prefer(store.get(`realm/${n}`) || {})) || names[0]));
        return;
      }
      const key = JSON.stringify(names);
      if (key === shown) return;
      shown = key;
      fill(el, names.map((n) => h('option', { value: n }, n)));
      el.value = current || '';
    },
  };
}
