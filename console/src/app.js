// The console's entry point: the login, the session (credentials in sessionStorage only), the left
// navigation and the hash router (#/overview, #/realms, #/realm/<name>, #/dlq[/<realm>],
// #/streams[/<realm>], #/enrolment, #/settings).
import { h, fill } from './dom.js';
import { newManager, openConsole } from './live.js';
import { createApi } from './api.js';
import { overviewPage, settingsPage } from './pages_server.js';
import { realmsPage, realmPage } from './pages_realms.js';
import { dlqPage } from './pages_dlq.js';
import { streamsPage } from './pages_streams.js';
import { enrolmentPage } from './pages_enrolment.js';

const STORAGE_KEY = 'siomq.console.credentials';
const PAGES = {
  overview: ['Overview', overviewPage],
  realms: ['Realms', realmsPage],
  realm: [null, realmPage],
  dlq: ['Dead letters', dlqPage],
  streams: ['Streams', streamsPage],
  enrolment: ['Enrolment', enrolmentPage],
  settings: ['Settings', settingsPage],
};

const root = document.getElementById('app');
let session = null;   // {creds, manager, live, api, hello, page, main, nav, statusEl, bannerEl}

// --- credentials -----------------------------------------------------------------------------------

function loadCreds() {
  try {
    const c = JSON.parse(sessionStorage.getItem(STORAGE_KEY));
    if (c && c.kind === 'token' && typeof c.token === 'string') return { kind: 'token', token: c.token };
    if (c && c.kind === 'manager' && typeof c.realm === 'string' && typeof c.key === 'string') {
      return { kind: 'manager', realm: c.realm, key: c.key };
    }
  } catch { /* nothing usable stored */ }
  return null;
}

const saveCreds = (creds) => sessionStorage.setItem(STORAGE_KEY, JSON.stringify(creds));
const clearCreds = () => sessionStorage.removeItem(STORAGE_KEY);

// --- login -----------------------------------------------------------------------------------------

function showLogin(error = '') {
  const kind = h('select', { 'data-testid': 'login-kind', onchange: () => showFields() },
    h('option', { value: 'token' }, 'Admin token'), h('option', { value: 'manager' }, 'Realm manager key'));
  const token = h('input', { type: 'password', autocomplete: 'off', 'data-testid': 'login-token' });
  const realm = h('input', { autocomplete: 'off', 'data-testid': 'login-realm' });
  const key = h('input', { type: 'password', autocomplete: 'off', 'data-testid': 'login-key' });
  const tokenFields = h('div', null, h('label', null, 'Admin token', token));
  const managerFields = h('div', null, h('label', null, 'Realm', realm), h('label', null, 'Manager key', key));
  const errorEl = h('div', { class: 'status error', 'data-testid': 'login-error', role: 'alert', hidden: !error }, error);
  const submit = h('button', { type: 'submit', class: 'primary', 'data-testid': 'login-submit' }, 'Sign in');
  const showFields = () => {
    tokenFields.hidden = kind.value !== 'token';
    managerFields.hidden = kind.value !== 'manager';
  };
  const form = h('form', {
    class: 'login',
    'data-testid': 'login',
    onsubmit: (e) => {
      e.preventDefault();
      const creds = kind.value === 'token' ? { kind: 'token', token: token.value }
        : { kind: 'manager', realm: realm.value.trim(), key: key.value };
      if (creds.kind === 'manager' && (!creds.realm || !creds.key)) {
        errorEl.textContent = 'A realm and its manager key are needed.';
        errorEl.hidden = false;
        return;
      }
      errorEl.hidden = true;
      submit.disabled = true;
      submit.textContent = 'Signing in…';
      start(creds);
    },
  },
  h('h1', null, 'siomq console'),
  h('label', null, 'Sign in with', kind), tokenFields, managerFields, errorEl, submit);
  showFields();
  fill(root, h('div', { class: 'login-page' }, form));
  (kind.value === 'token' ? token : realm).focus();
}

// --- session ---------------------------------------------------------------------------------------

// Connects /console with `creds`; they are stored only once the server said hello.
function start(creds) {
  stop();
  const manager = newManager();
  const s = { creds, manager, hello: null, page: null };
  session = s;
  s.live = openConsole(manager, creds, {
    onHello(hello) {
      if (session !== s) return;
      const first = !s.hello;
      s.hello = hello;
      if (!first) return;
      saveCreds(creds);
      s.api = createApi(manager, creds);
      renderShell(s);
      route();
    },
    onDelta(store) {
      if (session === s && s.page) update(s, store);
    },
    onRefused(message) {
      if (session !== s) return;
      stop();
      clearCreds();
      showLogin(message === 'unauthorized' ? 'Refused: unauthorized (check the token, realm or key).' : `Refused: ${message}`);
    },
    onStatus(text) {
      if (s.statusEl) s.statusEl.textContent = text;
    },
  });
}

function stop() {
  const s = session;
  session = null;
  if (!s) return;
  if (s.page) s.page.unmount();
  if (s.api) s.api.close();
  s.live.close();
}

function signOut() {
  stop();
  clearCreds();
  history.replaceState(null, '', location.pathname);
  showLogin();
}

function renderShell(s) {
  const { hello } = s;
  const who = hello.role === 'admin' ? 'admin' : `manager of ${hello.realm}`;
  s.nav = new Map();
  const links = Object.entries(PAGES).filter(([, [label]]) => label).map(([name, [label]]) => {
    const a = h('a', { href: `#/${name}`, 'data-testid': `nav-${name}` }, label);
    s.nav.set(name, a);
    return a;
  });
  if (hello.role !== 'admin') {
    const a = h('a', { href: `#/realm/${encodeURIComponent(hello.realm)}`, 'data-testid': 'nav-realm' }, `Realm ${hello.realm}`);
    s.nav.set('realm', a);
    links.splice(2, 0, a);
  }
  s.statusEl = h('span', { 'data-testid': 'conn-status' }, 'live');
  s.bannerEl = h('div', { class: 'status error', 'data-testid': 'page-error', hidden: true });
  s.main = h('main');
  fill(root, h('div', { class: 'shell' },
    h('nav', { class: 'side' },
      h('div', { class: 'brand' }, 'siomq'),
      links,
      h('div', { class: 'who' },
        h('div', { 'data-testid': 'whoami' }, who),
        h('div', { class: 'meta' }, `v${hello.version}`, hello.node_id ? ` · ${hello.node_id}` : '',
          hello.auth_enabled ? '' : ' · auth off'),
        h('div', { class: 'meta' }, s.statusEl),
        h('button', { 'data-testid': 'signout', onclick: signOut }, 'Sign out'))),
    h('div', { class: 'content' }, s.bannerEl, s.main)));
}

// --- router ----------------------------------------------------------------------------------------

function parseHash() {
  const m = /^#\/([a-z]+)(?:\/(.*))?$/.exec(location.hash);
  let arg = null;
  try {
    arg = m && m[2] ? decodeURIComponent(m[2]) : null;
  } catch { /* a malformed escape: no argument */ }
  return { name: m && PAGES[m[1]] ? m[1] : null, arg };
}

function route() {
  const s = session;
  if (!s || !s.hello) return;
  let { name, arg } = parseHash();
  const manager = s.hello.role !== 'admin';
  if (!name || (name === 'realm' && !arg)) {
    location.replace(manager ? `#/realm/${encodeURIComponent(s.hello.realm)}` : '#/overview');
    return;
  }
  // A manager sees its own realm only.
  if (manager && arg !== null && arg !== s.hello.realm) {
    location.replace(`#/${name}/${encodeURIComponent(s.hello.realm)}`);
    return;
  }
  if (s.page) s.page.unmount();
  s.bannerEl.hidden = true;
  let wanted = null;
  const ctx = { hello: s.hello, api: s.api, creds: s.creds, watch: (realm) => { wanted = realm; } };
  const container = h('div', { 'data-testid': `page-${name}` });
  fill(s.main, container);
  s.page = PAGES[name][1](container, ctx, arg);
  s.live.watch(wanted, (message) => {
    s.bannerEl.textContent = `Live details unavailable: ${message}`;
    s.bannerEl.hidden = false;
  });
  for (const [n, a] of s.nav) a.classList.toggle('active', n === name);
  update(s, s.live.store);
}

function update(s, store) {
  try {
    s.page.update(store);
  } catch (e) {
    console.error('console page update failed', e);
  }
}

window.addEventListener('hashchange', route);
const stored = loadCreds();
if (stored) {
  fill(root, h('p', { class: 'note connecting' }, 'Connecting…'));
  start(stored);
} else {
  showLogin();
}
