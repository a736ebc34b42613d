// tyo-mq §8.1 proofs, signed in the browser exactly as a tyo-mq client signs them: the console has no
// private path into the broker, so its actions and its /console login carry the same proofs.
import { sha256 } from './vendor/sha256.min.mjs';

// JSON with object keys in JavaScript's default sort order at every depth, no whitespace, keys whose
// value is undefined skipped, array holes and undefined elements as null (what JSON.stringify does).
export function stableStringify(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) {
    return `[${Array.from(v, (x) => (x === undefined ? 'null' : stableStringify(x))).join(',')}]`;
  }
  const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(v[k])}`).join(',')}}`;
}

// 16 random bytes as 32 lowercase hex digits.
export function randomNonce() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

// {timestamp, nonce, signature} for `action` over `body` with `key`.
export function sign(action, body, key, { timestamp = Date.now(), nonce = randomNonce() } = {}) {
  const base = `${action}\n${String(timestamp)}\n${nonce}\n${stableStringify(body === undefined ? {} : body)}`;
  return { timestamp, nonce, signature: sha256.hmac(key, base) };
}
