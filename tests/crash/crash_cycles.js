#!/usr/bin/env node
// Crash safety of the durable store: kill -9 the server while producers publish with confirms, restart
// it on the same data, and check that every confirmed message is delivered. See README.md.
//
//   node tests/crash/crash_cycles.js [cycles] [--storage file|redis] [--producers N] [--redis-url URL]
//                                    [--data-dir DIR] [--min-ms 200] [--max-ms 1500] [--sync batch|always]
//                                    [--seed S] [--keep] [--verbose]
//
// SIOMQ_SERVER names the server binary (default build/src/siomq-server); SIOMQ_TEST_REDIS_URL is the
// default --redis-url. Prints "crash cycles: …, lost: 0, …" and exits 1 when anything was lost, an
// ACKed message came back, or the server failed to start on its own data.
'use strict';

const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const { seededRandom } = require(path.join(ROOT, 'tests/e2e/lib/seeded_random'));
const { io } = require(require.resolve('socket.io-client', { paths: [path.join(ROOT, 'tests/e2e')] }));

// ---------------------------------------------------------------------------------------------
// Options

function parseArgs(argv) {
  const o = {
    cycles: 20, storage: 'file', producers: 4, window: 64, redisUrl: process.env.SIOMQ_TEST_REDIS_URL,
    dataDir: null, minMs: 200, maxMs: 1500, sync: 'batch', seed: null, keep: false, verbose: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (/^\d+$/.test(a)) o.cycles = Number(a);
    else if (a === '--cycles') o.cycles = Number(value());
    else if (a === '--storage') o.storage = value();
    else if (a === '--producers') o.producers = Number(value());
    else if (a === '--window') o.window = Number(value());
    else if (a === '--redis-url') o.redisUrl = value();
    else if (a === '--data-dir') o.dataDir = path.resolve(value());
    else if (a === '--min-ms') o.minMs = Number(value());
    else if (a === '--max-ms') o.maxMs = Number(value());
    else if (a === '--sync') o.sync = value();
    else if (a === '--seed') o.seed = Number(value());
    else if (a === '--keep') o.keep = true;
    else if (a === '--verbose' || a === '-v') o.verbose = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!['file', 'redis'].includes(o.storage)) throw new Error('--storage is file or redis');
  if (o.storage === 'redis' && !o.redisUrl) throw new Error('--storage redis needs --redis-url or SIOMQ_TEST_REDIS_URL');
  if (!(o.cycles >= 1 && o.producers >= 1 && o.minMs >= 0 && o.maxMs >= o.minMs)) throw new Error('bad numbers');
  return o;
}

// Replayable with --seed (tests/e2e/lib/seeded_random.js).
const rng = seededRandom;

const delay = (ms) => new Promise((r) => setTimeout(r, ms));
const SANITIZER_MARKERS = ['ERROR: AddressSanitizer', 'runtime error:', 'WARNING: ThreadSanitizer', 'ERROR: LeakSanitizer'];
const TIME_SCALE = process.env.SIOMQ_SANITIZED ? 4 : 1;

// ---------------------------------------------------------------------------------------------
// The server

const SERVER_BIN = process.env.SIOMQ_SERVER ? path.resolve(process.env.SIOMQ_SERVER) : path.join(ROOT, 'build/src/siomq-server');

// Starts the server on the shared data; resolves with { port, child, output(), exited } once it listens.
async function startServer(o, workDir) {
  const argv = ['--port', '0', '--threads', '2', '--log-level', 'info', '--storage', o.storage, '--sync', o.sync,
    '--data-dir', o.dataDir];
  if (o.storage === 'redis') {
    const settings = path.join(workDir, 'settings.json');
    fs.writeFileSync(settings, JSON.stringify({ storage_options: { url: o.redisUrl, prefix: o.prefix } }));
    argv.push('--settings', settings);
  }
  const child = spawn(SERVER_BIN, argv, { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const onData = (d) => { out += d.toString('utf8'); };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const closed = new Promise((resolve) => child.on('close', resolve));
  const deadline = Date.now() + 30000 * TIME_SCALE;
  for (;;) {
    const m = out.match(/listening on [^\s]+:(\d+) \(/);
    if (m) return { port: Number(m[1]), child, output: () => out, exited, closed };
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      await closed;
      throw new Error(`the server did not start (exit ${child.exitCode} ${child.signalCode}):\n${out}`);
    }
    await delay(10);
  }
}

function connect(port) {
  const socket = io(`http://127.0.0.1:${port}`, { forceNew: true, reconnection: false, transports: ['websocket'] });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// The run

const CONSUMER = 'crash-consumer';
const SUBSCRIPTION = {
  event: 'e', producer: 'p', consumer: CONSUMER, consumer_id: CONSUMER, durable: true, manual_ack: true,
  ack_timeout: '10m',  // no redelivery within a cycle: every delivery after the first is a replay
};

class Ledger {
  constructor() {
    this.messages = new Map();  // uid -> { cycle, confirmed, acked, deliveries, afterAck }
    this.anomalies = [];
  }
  entry(uid) {
    let e = this.messages.get(uid);
    if (!e) {
      e = { confirmed: false, acked: false, deliveries: 0, afterAck: 0 };
      this.messages.set(uid, e);
    }
    return e;
  }
}

// A consumer connection that ACKs every delivery with a callback and records what it saw.
class Consumer {
  constructor(socket, ledger, cycle) {
    this.socket = socket;
    this.ledger = ledger;
    this.pendingAcks = 0;
    this.delivered = 0;
    this.lastDelivery = Date.now();
    this.notFound = 0;
    socket.on('CONSUME-p-e', (m) => {
      this.delivered++;
      this.lastDelivery = Date.now();
      const uid = m && m.message && m.message.uid;
      if (!uid || !m.msgId) {
        ledger.anomalies.push(`cycle ${cycle}: a delivery without uid or msgId: ${JSON.stringify(m).slice(0, 200)}`);
        return;
      }
      const e = ledger.entry(uid);
      e.deliveries++;
      if (e.acked) {
        e.afterAck++;
        if (e.afterAck === 1) ledger.anomalies.push(`cycle ${cycle}: ${uid} delivered again after its ACK_OK`);
      }
      this.pendingAcks++;
      socket.emit('ACK', { msgId: m.msgId }, (reply) => {
        this.pendingAcks--;
        if (reply && reply.ok) e.acked = true;
        else if (reply && reply.code === 404) this.notFound++;
        else ledger.anomalies.push(`cycle ${cycle}: ACK of ${uid} answered ${JSON.stringify(reply)}`);
      });
    });
  }
  // SUBSCRIBE, then a PING round trip: the replay has begun once it returns.
  async subscribe() {
    this.socket.emit('SUBSCRIBE', SUBSCRIPTION);
    await this.socket.timeout(10000 * TIME_SCALE).emitWithAck('PING', {});
    this.lastDelivery = Date.now();
  }
  // Resolves once no delivery came for `quietMs` and every ACK was answered.
  async quiet(quietMs = 700, maxMs = 120000) {
    const t0 = Date.now();
    while (Date.now() - this.lastDelivery < quietMs || this.pendingAcks > 0) {
      if (Date.now() - t0 > maxMs) throw new Error(`no quiet after ${maxMs} ms (${this.pendingAcks} ACKs unanswered)`);
      await delay(50);
    }
  }
}

// A producer publishing durable messages with confirms, `window` at a time, until stop().
function startProducer(socket, ledger, cycle, index, window) {
  let seq = 0;
  let running = true;
  const stats = { sent: 0, confirmed: 0, refused: 0 };
  const sendOne = () => {
    if (!running || !socket.connected) return;
    const uid = `c${cycle}-p${index}-${seq++}`;
    ledger.entry(uid);
    stats.sent++;
    socket.emit('PRODUCE', { event: 'e', from: 'p', durable: true, message: { uid, cycle, producer: index } }, (reply) => {
      const e = ledger.entry(uid);
      if (reply && reply.ok && reply.stored === 1) {
        e.confirmed = true;
        stats.confirmed++;
      } else {
        stats.refused++;
        ledger.anomalies.push(`cycle ${cycle}: confirm of ${uid}: ${JSON.stringify(reply)}`);
      }
      sendOne();
    });
  };
  for (let i = 0; i < window; i++) sendOne();
  return { stats, stop() { running = false; } };
}

function sanitizerReport(text) {
  return SANITIZER_MARKERS.find((m) => text.includes(m));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const seed = o.seed ?? crypto.randomInt(2 ** 31);
  const random = rng(seed);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'siomq-crash-'));
  const ownDataDir = !o.dataDir;
  if (!o.dataDir) o.dataDir = path.join(workDir, 'data');
  o.prefix = `siomq-crash-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  console.log(`crash cycles: ${o.cycles} on ${o.storage} (sync ${o.sync}), ${o.producers} producers, ` +
    `kill after ${o.minMs}-${o.maxMs} ms, seed ${seed}, data ${o.storage === 'file' ? o.dataDir : `${o.redisUrl} prefix ${o.prefix}`}`);

  const ledger = new Ledger();
  const t0 = Date.now();
  let failure = null;
  let unexpectedExit = null;
  let server = null;
  try {
    for (let cycle = 0; cycle <= o.cycles; cycle++) {
      const last = cycle === o.cycles;
      server = await startServer(o, workDir);
      const restartedAt = Date.now();
      // The consumer takes what is stored and ACKs it all; on the first start it creates the subscription.
      const consumer = new Consumer(await connect(server.port), ledger, cycle);
      await consumer.subscribe();
      await consumer.quiet();
      const replayed = consumer.delivered;
      const replayMs = Date.now() - restartedAt;
      // Everything confirmed before the last kill must have been delivered by now.
      const lost = [...ledger.messages].filter(([, e]) => e.confirmed && e.deliveries === 0);
      if (lost.length) {
        failure = `after restart ${cycle}: ${lost.length} confirmed messages never delivered (${lost.slice(0, 5).map(([u]) => u).join(', ')} …)`;
        break;
      }
      if (last) {
        // A clean end: nothing is left in the queue, and a graceful stop exits 0.
        await consumer.subscribe();
        await delay(300);
        await consumer.quiet(300);
        if (consumer.delivered !== replayed) ledger.anomalies.push(`final: ${consumer.delivered - replayed} rows still queued after every ACK`);
        consumer.socket.close();
        server.child.kill('SIGTERM');
        const exit = await Promise.race([server.exited, delay(10000).then(() => null)]);
        if (!exit || exit.code !== 0) unexpectedExit = `graceful stop: ${JSON.stringify(exit)}`;
        await Promise.race([server.closed, delay(1000)]);
        if (o.verbose) console.log(`final restart: ${replayed} replayed in ${replayMs} ms`);
        break;
      }

      // Half the cycles keep the consumer online (ACKs race the kill), half offline (everything stored).
      const online = cycle % 2 === 1;
      if (!online) consumer.socket.close();
      const producers = [];
      for (let i = 0; i < o.producers; i++) producers.push(startProducer(await connect(server.port), ledger, cycle, i, o.window));
      const killAfter = Math.round(o.minMs + random() * (o.maxMs - o.minMs));
      await delay(killAfter);
      server.child.kill('SIGKILL');
      const exit = await server.exited;
      await Promise.race([server.closed, delay(1000)]);
      if (exit.signal !== 'SIGKILL') unexpectedExit = `cycle ${cycle}: the server exited on its own before the kill: ${JSON.stringify(exit)}`;
      for (const p of producers) p.stop();
      await delay(50);  // confirms and deliveries the kernel still held
      const marker = sanitizerReport(server.output());
      if (marker) unexpectedExit = `sanitizer report (${marker})`;
      const sum = producers.reduce((a, p) => ({ sent: a.sent + p.stats.sent, confirmed: a.confirmed + p.stats.confirmed }), { sent: 0, confirmed: 0 });
      if (o.verbose) {
        console.log(`cycle ${cycle + 1}: replayed ${replayed} in ${replayMs} ms; consumer ${online ? 'online' : 'offline'}; ` +
          `killed after ${killAfter} ms: ${sum.sent} sent, ${sum.confirmed} confirmed`);
      }
      for (const p of producers) p.stop();
      consumer.socket.close();
      if (unexpectedExit) break;
      server = null;
    }
  } catch (err) {
    failure = err.stack || String(err);
  } finally {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  }
  if (!failure && server) {
    const marker = sanitizerReport(server.output());
    if (marker) unexpectedExit = `sanitizer report (${marker})`;
  }

  const all = [...ledger.messages.values()];
  const confirmed = all.filter((e) => e.confirmed).length;
  const lost = all.filter((e) => e.confirmed && e.deliveries === 0).length;
  const duplicates = all.filter((e) => e.deliveries > 1).length;
  const unconfirmedDelivered = all.filter((e) => !e.confirmed && e.deliveries > 0).length;
  const resurrected = all.filter((e) => e.afterAck > 0).length;
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  console.log(`crash cycles: ${o.cycles}, confirmed: ${confirmed}, lost: ${lost}, duplicates: ${duplicates}, ` +
    `unconfirmed delivered: ${unconfirmedDelivered}, delivered again after ACK_OK: ${resurrected} ` +
    `(${o.storage}, sync ${o.sync}, ${seconds} s, seed ${seed})`);
  for (const a of ledger.anomalies.slice(0, 20)) console.log(`  anomaly: ${a}`);
  if (ledger.anomalies.length > 20) console.log(`  … ${ledger.anomalies.length - 20} more anomalies`);
  if (failure) console.log(`FAILED: ${failure}`);
  if (unexpectedExit) console.log(`FAILED: ${unexpectedExit}`);
  if ((failure || unexpectedExit) && server) console.log(`server output (end):\n${server.output().slice(-4000)}`);

  if (o.storage === 'redis') await dropRedisKeys(o.redisUrl, o.prefix).catch(() => {});
  if (!o.keep) {
    fs.rmSync(workDir, { recursive: true, force: true });
    if (!ownDataDir) fs.rmSync(o.dataDir, { recursive: true, force: true });
  } else {
    console.log(`kept ${workDir}`);
  }
  const bad = lost > 0 || resurrected > 0 || failure || unexpectedExit || ledger.anomalies.length > 0;
  process.exit(bad ? 1 : 0);
}

// DEL <prefix>:rows, :dead, :subs (RESP by hand: no redis package here).
function dropRedisKeys(url, prefix) {
  const u = new URL(url);
  const args = ['DEL', `${prefix}:rows`, `${prefix}:dead`, `${prefix}:subs`];
  const db = Number(u.pathname.slice(1)) || 0;
  const cmd = (a) => `*${a.length}\r\n${a.map((x) => `$${Buffer.byteLength(String(x))}\r\n${x}\r\n`).join('')}`;
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port) || 6379, u.hostname || '127.0.0.1');
    sock.on('error', reject);
    sock.on('connect', () => sock.write((db ? cmd(['SELECT', db]) : '') + cmd(args)));
    let replies = 0;
    sock.on('data', (d) => {
      replies += (d.toString().match(/\r\n/g) || []).length;
      if (replies >= (db ? 2 : 1)) { sock.end(); resolve(); }
    });
    setTimeout(() => { sock.destroy(); resolve(); }, 3000).unref();
  });
}

main().catch((err) => {
  console.error(err.stack || String(err));
  process.exit(2);
});
