// Helpers for the bus's end-to-end tests: calls that check bus.md §1's one-argument answers, the `msg`
// inbox, and a socket.io-client parser that takes pulls of more than 10 messages (one attachment each).
'use strict';

const assert = require('node:assert/strict');
const parser = require('socket.io-parser');
const { emitAck } = require('./clients');

// socket.io-client's decoder takes at most 10 attachments a packet by default; a pull of a larger batch
// carries one per message (§8.21), so these clients raise it, as docs/bus.md tells JavaScript users to.
const BIG_BATCHES = {
  Encoder: parser.Encoder,
  Decoder: class extends parser.Decoder { constructor() { super({ maxAttachments: 1000 }); } },
};

async function call(socket, event, payload) {
  const reply = await emitAck(socket, event, payload);
  assert.equal(reply.length, 1, `${event}: exactly one ack argument`);
  return reply[0];
}
async function ok(socket, event, payload) {
  const r = await call(socket, event, payload);
  assert.equal(r.ok, true, `${event} ${JSON.stringify(payload)} -> ${JSON.stringify(r)}`);
  return r;
}
async function fails(socket, event, payload, code, re) {
  const r = await call(socket, event, payload);
  assert.equal(r.ok, false, `${event} ${JSON.stringify(payload)} should fail: ${JSON.stringify(r)}`);
  assert.equal(r.error.code, code, `${event} ${JSON.stringify(payload)}: ${JSON.stringify(r)}`);
  if (re) assert.match(r.error.message, re);
  return r;
}
// Collects `msg` events.
function inbox(socket) {
  const got = [];
  socket.on('msg', (m) => got.push(m));
  return got;
}

module.exports = { BIG_BATCHES, call, ok, fails, inbox };
