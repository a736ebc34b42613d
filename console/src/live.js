// The read-only live data: the /console namespace's connection and the store its deltas build.
//
// The server sends `hello` once and then a `delta` {t, set, del} every second (the first one carries
// every key). The store keeps key -> value and, from the cumulative totals of "overview", the message
// rates of the last five minutes for the charts.
import { Manager } from './vendor/socket.io.esm.min.js';
import { sign } from './proof.js';

export const HISTORY_MS = 5 * 60 * 1000;

// The keys a delta set, and the rates derived from consecutive overviews.
export class LiveStore {
  constructor() {
    this.values = new Map();
    this.t = null;                      // unix ms of the last delta
    this.rates = { in: 0, out: 0 };     // messages per second over the last interval
    // Parallel arrays (uPlot's data layout): seconds, in/s, out/s, connections.
    this.history = { t: [], in: [], out: [], conn: [] };
    this.prev = null;                   // {t, in, out} counters of the previous sample
  }

  // A new connection's first delta carries every key again: forget what the old one said.
  reset() {
    this.values.clear();
  }

  apply(delta) {
    for (const k of delta.del || []) this.values.delete(k);
    for (const [k, v] of Object.entries(delta.set || {})) this.values.set(k, v);
    if (typeof delta.t === 'number') {
      this.t = delta.t;
      this.sample(delta.t);
    }
  }

  get(key) {
    return this.values.get(key);
  }

  // The names of the realms in scope, sorted ("realm/<name>" keys).
  realms() {
    return [...this.values.keys()].filter((k) => k.startsWith('realm/')).map((k) => k.slice(6)).sort();
  }

  // One point per delta. in = produced + bus_in, out = delivered + bus_out, divided by the time between
  // the two deltas; a counter that went down (a restarted server) counts as 0.
  sample(t) {
    const ov = this.values.get('overview');
    if (!ov) return;
    const tot = ov.totals || {};
    const counters = { in: (tot.produced || 0) + (tot.bus_in || 0), out: (tot.delivered || 0) + (tot.bus_out || 0) };
    let rin = null;
    let rout = null;
    if (this.prev && t > this.prev.t) {
      const dt = (t - this.prev.t) / 1000;
      rin = Math.max(0, counters.in - this.prev.in) / dt;
      rout = Math.max(0, counters.out - this.prev.out) / dt;
      this.rates = { in: rin, out: rout };
    } else if (this.prev && t <= this.prev.t) {
      return;  // a repeated or out-of-order delta adds no point
    }
    this.prev = { t, ...counters };
    const h = this.history;
    h.t.push(t / 1000);
    h.in.push(rin);
    h.out.push(rout);
    h.conn.push(typeof ov.connections === 'number' ? ov.connections : null);
    let drop = 0;
    while (drop < h.t.length && h.t[drop] < (t - HISTORY_MS) / 1000) drop++;
    if (drop) for (const k of Object.keys(h)) h[k].splice(0, drop);
  }
}

// The auth of a /console CONNECT. A manager key signs a fresh proof each time (nonces are single use),
// which is why socket.io-client gets a function: it is called again on every reconnection.
export function consoleAuth(creds) {
  if (creds.kind === 'manager') return { realm: creds.realm, proof: sign('CONSOLE_CONNECT', { realm: creds.realm }, creds.key) };
  return creds.token ? { token: creds.token } : {};
}

// One Socket.IO connection to this origin for the session; every namespace rides on it.
export function newManager() {
  return new Manager(location.origin, { transports: ['websocket'], reconnectionDelayMax: 5000 });
}

// Opens /console on `manager`. Callbacks: onHello(hello), onDelta(store), onRefused(message) (a login
// refused, or a connection lost before any hello: the socket is closed), onStatus(text) for the
// connection line. Returns {store, watch(realm), close()}.
export function openConsole(manager, creds, { onHello, onDelta, onRefused, onStatus }) {
  const store = new LiveStore();
  const socket = manager.socket('/console', { auth: (cb) => cb(consoleAuth(creds)) });
  let greeted = false;
  let watching = null;
  let onWatchError = () => {};

  const sendWatch = () => {
    socket.timeout(10000).emit('watch', { realm: watching }, (err, reply) => {
      if (err) onWatchError('the server did not answer watch');
      else if (!reply || !reply.ok) onWatchError(`${reply && reply.code ? `${reply.code}: ` : ''}${(reply && reply.message) || 'watch refused'}`);
    });
  };

  socket.on('connect', () => {
    store.reset();
    onStatus('live');
    if (watching !== null) sendWatch();
  });
  socket.on('hello', (hello) => {
    greeted = true;
    onHello(hello);
  });
  socket.on('delta', (delta) => {
    store.apply(delta);
    onDelta(store);
  });
  socket.on('connect_error', (err) => {
    // Before a hello every failure is the login's answer; afterwards only a refusal (the socket is no
    // longer active) ends the session, and a lost transport is retried by the manager.
    if (!greeted || !socket.active) {
      socket.disconnect();
      onRefused((err && err.message) || 'connection failed');
    } else {
      onStatus('reconnecting…');
    }
  });
  socket.on('disconnect', (reason) => {
    // The server ending the namespace is final (socket.io-client does not retry it): the session is over.
    if (reason === 'io server disconnect') onRefused('the server ended the console session');
    else if (reason !== 'io client disconnect') onStatus('reconnecting…');
  });

  return {
    store,
    // Asks for the "detail" key of `realm` (null: none). Remembered and sent again after a reconnection.
    watch(realm, onError = () => {}) {
      onWatchError = onError;
      if (realm === watching) return;
      watching = realm;
      if (socket.connected) sendWatch();
    },
    close() {
      socket.disconnect();
    },
  };
}
