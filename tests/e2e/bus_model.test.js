// A randomized model test of streams and pull consumers (issue 15's proof): a small in-memory model of a
// file stream with a dead-letter stream and two consumers is driven by the same seeded random sequence
// of publishes (some duplicates), pulls, acks (some of seqs not pending), naks, ack-wait timeouts and
// kill -9 restarts as a real server, and the two are compared after every step: the messages each pull
// returns (seq and delivery count), every ack's answer, and the stream's and consumers' info.
// SIOMQ_MODEL_SEED replays one sequence; SIOMQ_MODEL_STEPS sets its length.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { startServer, tempDir, delay } = require('./lib/server');
const { connectV4, TIME_SCALE } = require('./lib/clients');
const { BIG_BATCHES, call } = require('./lib/bus');
const { seededRandom } = require('./lib/seeded_random');

// Replayable: the same seed, the same sequence.
const rng = seededRandom;

const ACK_WAIT_MS = 250 * TIME_SCALE;
const MAX_DELIVER = 3;
const MAX_ACK_PENDING = 6;
const CONSUMERS = ['c1', 'c2'];

// The model: what bus.md §4–§8 say the server must do, written as plainly as possible.
class Model {
  constructor() {
    this.lastSeq = 0;
    this.ids = new Map();  // msg_id -> seq
    this.dead = 0;         // copies in the dead-letter stream
    this.consumers = new Map(CONSUMERS.map((c) => [c, { cursor: 0, pending: new Map() }]));
  }
  publish(msgId) {
    if (msgId !== undefined && this.ids.has(msgId)) return { seq: this.ids.get(msgId), duplicate: true };
    const seq = ++this.lastSeq;
    if (msgId !== undefined) this.ids.set(msgId, seq);
    return { seq, duplicate: false };
  }
  pull(name, batch) {
    const c = this.consumers.get(name);
    const out = [];
    const again = [...c.pending.entries()].filter(([, p]) => !p.inFlight).map(([s]) => s).sort((a, b) => a - b);
    for (const seq of again) {
      if (out.length >= batch) break;
      const p = c.pending.get(seq);
      // Delivered max_deliver times already (nak'd, or cut by a restart): dead, never a time more.
      if (p.deliveries >= MAX_DELIVER) {
        c.pending.delete(seq);
        this.dead++;
        continue;
      }
      p.deliveries++;
      p.inFlight = true;
      out.push([seq, p.deliveries]);
    }
    while (out.length < batch && c.pending.size < MAX_ACK_PENDING && c.cursor < this.lastSeq) {
      const seq = ++c.cursor;
      c.pending.set(seq, { deliveries: 1, inFlight: true });
      out.push([seq, 1]);
    }
    return out;
  }
  ack(name, seq) {
    const c = this.consumers.get(name);
    if (!c.pending.has(seq)) return 404;
    c.pending.delete(seq);
    return 200;
  }
  nak(name, seq) {
    const p = this.consumers.get(name).pending.get(seq);
    if (!p) return 404;
    p.inFlight = false;
    return 200;
  }
  timeout() {
    for (const c of this.consumers.values()) {
      for (const [seq, p] of [...c.pending.entries()]) {
        if (!p.inFlight) continue;
        if (p.deliveries >= MAX_DELIVER) {
          c.pending.delete(seq);
          this.dead++;
        } else {
          p.inFlight = false;
        }
      }
    }
  }
  restart() {
    for (const c of this.consumers.values()) for (const p of c.pending.values()) p.inFlight = false;
  }
  info(name) {
    const c = this.consumers.get(name);
    const seqs = [...c.pending.keys()].sort((a, b) => a - b);
    return {
      delivered: c.cursor,
      ack_floor: seqs.length ? seqs[0] - 1 : c.cursor,
      num_ack_pending: c.pending.size,
      num_pending: this.lastSeq - c.cursor,
      num_redelivered: [...c.pending.values()].filter((p) => p.deliveries > 1).length,
    };
  }
}


test('randomized model: streams and pull consumers match the model after every step, across kill -9', async (t) => {
  const seed = Number(process.env.SIOMQ_MODEL_SEED || Date.now() % 1000000);
  // Shorter under the sanitizers (their run is the slow part of the test command), as long in release.
  const steps = Number(process.env.SIOMQ_MODEL_STEPS || (process.env.SIOMQ_SANITIZED ? 60 : 160));
  const random = rng(seed);
  const pick = (items) => items[Math.floor(random() * items.length)];
  const dataDir = tempDir(t);
  let server;
  let ctl;
  let data;
  const connect = async () => {
    server = await startServer(t, { dataDir });
    ctl = await connectV4(`${server.url}/control`, { transports: ['websocket'], parser: BIG_BATCHES });
    data = await connectV4(server.url, { transports: ['websocket'], parser: BIG_BATCHES });
  };
  const disconnect = () => {
    ctl.close();
    data.close();
  };
  t.after(() => disconnect());
  await connect();
  const must = async (socket, event, payload) => {
    const r = await call(socket, event, payload);
    assert.equal(r.ok, true, `${event} ${JSON.stringify(payload)} -> ${JSON.stringify(r)}`);
    return r;
  };
  await must(ctl, 'stream.create', { name: 'DEAD', subjects: ['dead'] });
  await must(ctl, 'stream.create', { name: 'M', subjects: ['m.*'], dead_letter_stream: 'DEAD', dedup_window_ms: 3600000 });
  for (const c of CONSUMERS) {
    await must(ctl, 'consumer.add', { stream: 'M', name: c, ack_wait_ms: ACK_WAIT_MS, max_deliver: MAX_DELIVER,
      max_ack_pending: MAX_ACK_PENDING });
  }
  const model = new Model();
  const log = [];
  const where = () => `seed ${seed}, step ${log.length}: ${log.slice(-8).join(' | ')}`;

  for (let step = 0; step < steps; ++step) {
    const r = random();
    if (r < 0.3) {
      const msgId = random() < 0.3 ? `id${Math.floor(random() * 20)}` : undefined;
      log.push(`pub ${msgId ?? ''}`);
      const got = await must(data, 'stream.pub', { subject: `m.${pick(['a', 'b'])}`, data: `s${step}`, ...(msgId ? { msg_id: msgId } : {}) });
      const want = model.publish(msgId);
      assert.deepEqual({ seq: got.seq, duplicate: got.duplicate }, want, where());
    } else if (r < 0.55) {
      const c = pick(CONSUMERS);
      const batch = 1 + Math.floor(random() * 4);
      log.push(`pull ${c} ${batch}`);
      const got = await must(data, 'consumer.pull', { consumer: c, batch, no_wait: true });
      assert.deepEqual(got.messages.map((m) => [m.seq, m.delivered]), model.pull(c, batch), where());
      for (const m of got.messages) assert.equal(m.data.toString(), `s${m.data.toString().slice(1)}`);
    } else if (r < 0.77) {
      const c = pick(CONSUMERS);
      const pending = [...model.consumers.get(c).pending.keys()];
      const seq = pending.length && random() < 0.85 ? pick(pending) : 1 + Math.floor(random() * (model.lastSeq + 2));
      log.push(`ack ${c} ${seq}`);
      const got = await call(data, 'consumer.ack', { consumer: c, seq });
      assert.equal(got.ok ? 200 : got.error.code, model.ack(c, seq), where());
    } else if (r < 0.86) {
      const c = pick(CONSUMERS);
      const pending = [...model.consumers.get(c).pending.keys()];
      if (!pending.length) continue;
      const seq = pick(pending);
      log.push(`nak ${c} ${seq}`);
      const got = await call(data, 'consumer.nak', { consumer: c, seq });
      assert.equal(got.ok ? 200 : got.error.code, model.nak(c, seq), where());
    } else if (r < 0.96) {
      log.push('timeout');
      await delay(ACK_WAIT_MS * 2);
      model.timeout();
    } else {
      log.push('kill -9');
      await server.crash();
      disconnect();
      await connect();
      model.restart();
    }
    // Compare after every step.
    const info = await must(ctl, 'stream.info', { name: 'M' });
    assert.equal(info.state.last_seq, model.lastSeq, where());
    assert.equal(info.state.messages, model.lastSeq, where());
    for (const ci of info.consumers) {
      const want = model.info(ci.name);
      assert.deepEqual({
        delivered: ci.delivered.stream_seq, ack_floor: ci.ack_floor.stream_seq, num_ack_pending: ci.num_ack_pending,
        num_pending: ci.num_pending, num_redelivered: ci.num_redelivered,
      }, want, `${ci.name}: ${where()}`);
    }
    const dead = await must(ctl, 'stream.info', { name: 'DEAD' });
    assert.equal(dead.state.messages, model.dead, where());
  }
  t.diagnostic(`seed ${seed}: ${steps} steps, ${log.filter((s) => s === 'kill -9').length} restarts, ${model.lastSeq} messages`);
});
