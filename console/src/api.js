// The console's actions, sent through the broker's public APIs exactly as any client sends them:
// signed tyo-mq commands on namespace "/" (DLQ, enrolment decisions) and the bus control plane on
// "/control" (streams). Each call resolves with the server's `{ok:true, ...}` answer or rejects with an
// Error whose message is the server's code and text.
import { sign } from './proof.js';

const TIMEOUT_MS = 15000;

// tyo-mq answers {ok:false, code, message}; the bus answers {ok:false, error:{code, message}}.
export function errorText(reply) {
  if (!reply || typeof reply !== 'object') return 'no answer';
  const e = reply.error && typeof reply.error === 'object' ? reply.error : reply;
  const text = e.message || 'refused';
  return e.code !== undefined ? `${e.code}: ${text}` : text;
}

async function call(socket, event, payload) {
  let reply;
  try {
    reply = await socket.timeout(TIMEOUT_MS).emitWithAck(event, payload);
  } catch {
    throw new Error(`the server did not answer ${event}`);
  }
  if (!reply || reply.ok !== true) throw new Error(errorText(reply));
  return reply;
}

// Resolves once `socket` is connected; rejects with the server's refusal.
function connected(socket) {
  if (socket.connected) return Promise.resolve(socket);
  return new Promise((resolve, reject) => {
    const done = () => { socket.off('connect', ok); socket.off('connect_error', fail); };
    const ok = () => { done(); resolve(socket); };
    const fail = (err) => { done(); socket.disconnect(); reject(new Error((err && err.message) || 'connection failed')); };
    socket.on('connect', ok);
    socket.on('connect_error', fail);
    if (!socket.active) socket.connect();
  });
}

// `manager` is the session's Socket.IO manager, `creds` its stored credentials.
export function createApi(manager, creds) {
  const isAdmin = creds.kind === 'token';
  let main = null;
  let control = null;
  let controlRealm = null;

  // Namespace "/" (tyo-mq). Signed commands need no AUTHENTICATION first.
  function tyo() {
    if (!main) main = manager.socket('/');
    return connected(main);
  }

  // Namespace "/control" for `realm` (its CONNECT auth names the realm, so another realm reconnects).
  function controlFor(realm) {
    if (!isAdmin) return Promise.reject(new Error('streams can be changed with the admin token only'));
    if (!control) control = manager.socket('/control', { auth: { token: creds.token, realm } });
    if (controlRealm !== realm) {
      if (control.active) control.disconnect();
      control.auth = { token: creds.token, realm };
      controlRealm = realm;
    }
    return connected(control);
  }

  async function manage(body) {
    if (!isAdmin) throw new Error('the admin token is needed');
    const s = await tyo();
    return call(s, 'AUTH_MANAGEMENT_COMMAND', { body, proof: sign('AUTH_MANAGEMENT_COMMAND', body, creds.token) });
  }

  return {
    isAdmin,
    dlqList: (realm) => manage({ command: 'dlq_list', realm }),
    dlqReplay: (realm, msgId) => manage({ command: 'dlq_replay', msg_id: msgId, realm }),
    dlqDiscard: (realm, msgId) => manage({ command: 'dlq_discard', msg_id: msgId, realm }),

    // An enrolment decision, signed with the admin token or the realm's manager key.
    async decide({ requestId, approved, role, reason }) {
      const body = { request_id: requestId, approved, role: approved ? role || undefined : undefined,
        reason: !approved && reason ? reason : undefined };
      const s = await tyo();
      return call(s, 'AUTHORIZATION_DECIDE', { body, proof: sign('AUTHORIZATION_DECIDE', body, isAdmin ? creds.token : creds.key) });
    },

    streamCreate: async (realm, config) => call(await controlFor(realm), 'stream.create', config),
    streamPurge: async (realm, name) => call(await controlFor(realm), 'stream.purge', { name }),
    streamDelete: async (realm, name) => call(await controlFor(realm), 'stream.delete', { name }),

    close() {
      for (const s of [main, control]) if (s) s.disconnect();
    },
  };
}
