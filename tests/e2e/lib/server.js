// Starts a real siomq-server process for one test and stops it afterwards, whatever the outcome.
//
// The binary comes from $SIOMQ_SERVER (default: build/src/siomq-server of this checkout). Each server
// gets its own temporary directory (settings file, data dir, working directory) and a free port.
// Any sanitizer report in its output fails the test.
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');

const E2E_DIR = path.resolve(__dirname, '..');
const SERVER_BIN = process.env.SIOMQ_SERVER
  ? path.resolve(process.env.SIOMQ_SERVER)
  : path.resolve(E2E_DIR, '../../build/src/siomq-server');

const SANITIZER_MARKERS = [
  'ERROR: AddressSanitizer',
  'runtime error:',
  'WARNING: ThreadSanitizer',
  'ERROR: LeakSanitizer',
];

const START_TIMEOUT_MS = process.env.SIOMQ_SANITIZED ? 60000 : 15000;
const STOP_TIMEOUT_MS = 5000;

function sanitizerReport(text) {
  return SANITIZER_MARKERS.find((m) => text.includes(m));
}

function assertNoSanitizerReport(text) {
  const marker = sanitizerReport(text);
  assert.equal(marker, undefined, `sanitizer report in server output (${marker}):\n${text.slice(0, 8000)}`);
}

function makeTempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'siomq-e2e-'));
}

// Writes `settings` (an object, or a raw string for broken files) into dir/settings.json.
function writeSettings(dir, settings) {
  const file = path.join(dir, 'settings.json');
  fs.writeFileSync(file, typeof settings === 'string' ? settings : JSON.stringify(settings, null, 2));
  return file;
}

// A temporary directory removed after the test (for a data dir that several servers share in turn).
function tempDir(t) {
  const dir = makeTempDir();
  if (t) t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Starts a server; resolves once it logs its listening line.
//   t         the node:test context: the server is stopped in t.after even if the test fails
//   settings  object written as the --settings file (omit for none)
//   args      extra command-line arguments
//   dataDir   --data-dir (absolute; default: data/ in the server's own temporary directory), so that
//             a second server can start on the data of the first
//   diagnostics  adds --diagnostics
//   threads   --threads (default 2, so that cross-worker paths run)
//   queueThreads  --queue-threads (default 2, so that queues on different shards and requests passed
//             between them run)
//   port      --port (default 0: a free port)
// Returns { port, url, settingsFile, dir, stop(), kill(signal), logs(), waitForLog(re, ms), exited }.
async function startServer(t, opts = {}) {
  const { settings, args = [], diagnostics = false, threads = 2, queueThreads = 2, logLevel = 'info', env = {},
    port: askedPort = 0, dataDir } = opts;
  const dir = makeTempDir();
  const argv = ['--port', String(askedPort), '--threads', String(threads), '--queue-threads', String(queueThreads),
    '--log-level', logLevel, '--data-dir', dataDir || path.join(dir, 'data')];
  let settingsFile;
  if (settings !== undefined) {
    settingsFile = writeSettings(dir, settings);
    argv.push('--settings', settingsFile);
  }
  if (diagnostics) argv.push('--diagnostics');
  argv.push(...args);

  const child = await spawnRetrying(SERVER_BIN, argv, {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const logWaiters = new Set();
  const onData = (chunk) => {
    output += chunk.toString('utf8');
    for (const w of logWaiters) w();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);

  let exitInfo = null;
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
  });
  // Resolves once the stdio pipes are drained too, so that logs() is complete after an exit.
  const closed = new Promise((resolve) => child.on('close', resolve));

  let stopped = false;
  // After the test: kill the server if it still runs, and fail the test if it crashed, exited
  // badly on its own, or printed a sanitizer report (the log goes into the TAP output as well).
  const cleanup = async () => {
    const crashed = exitInfo && !stopped && (exitInfo.signal !== null || exitInfo.code !== 0) ? exitInfo : null;
    if (!exitInfo) {
      child.kill('SIGKILL');
      await exited;
    }
    await Promise.race([closed, idle(1000)]);
    fs.rmSync(dir, { recursive: true, force: true });
    if (process.env.SIOMQ_E2E_LOGS) process.stderr.write(`--- server log (${dir}):\n${output}`);
    const marker = sanitizerReport(output);
    if (crashed || marker) {
      const why = marker ? `sanitizer report (${marker})` : `server exited on its own: ${JSON.stringify(crashed)}`;
      if (t) {
        t.diagnostic(`${why}; server output:`);
        for (const line of output.split('\n').slice(0, 300)) t.diagnostic(line.slice(0, 400));
      }
      throw new Error(`${why}; server output (start):\n${output.slice(0, 4000)}`);
    }
  };
  if (t) t.after(cleanup);

  const waitForLog = (re, ms = 5000) => new Promise((resolve, reject) => {
    const check = () => {
      const m = typeof re === 'string' ? (output.includes(re) ? [re] : null) : output.match(re);
      if (m) {
        logWaiters.delete(check);
        clearTimeout(timer);
        resolve(m);
      }
    };
    const timer = setTimeout(() => {
      logWaiters.delete(check);
      reject(new Error(`server did not log ${re} within ${ms} ms; output:\n${output}`));
    }, ms);
    logWaiters.add(check);
    check();
  });

  const started = await Promise.race([
    waitForLog(/listening on [^\s]+:(\d+) \(/, START_TIMEOUT_MS).then((m) => ({ port: Number(m[1]) })),
    exited.then((e) => ({ exit: e })),
  ]);
  if (started.exit) {
    await Promise.race([closed, idle(1000)]);
    throw new Error(`server exited during start-up (${JSON.stringify(started.exit)}):\n${output}`);
  }
  const port = started.port;

  return {
    port,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    dir,
    settingsFile,
    pid: child.pid,
    logs: () => output,
    waitForLog,
    exited,
    isRunning: () => !exitInfo,
    kill: (signal) => child.kill(signal),
    // kill -9 on purpose (a crash test): the test goes on, the cleanup does not count it as a crash.
    async crash() {
      stopped = true;
      if (!exitInfo) child.kill('SIGKILL');
      await exited;
      await Promise.race([closed, idle(1000)]);
      assertNoSanitizerReport(output);
      return exitInfo;
    },
    // Graceful stop: SIGTERM, then the process must exit 0 within 5 s.
    async stop() {
      if (stopped) return exitInfo;
      stopped = true;
      assert.equal(exitInfo, null, `server exited before stop: ${JSON.stringify(exitInfo)}\n${output}`);
      const t0 = Date.now();
      child.kill('SIGTERM');
      const result = await Promise.race([exited, idle(STOP_TIMEOUT_MS + 2000).then(() => null)]);
      const elapsed = Date.now() - t0;
      assert.ok(result, `server did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM:\n${output}`);
      await Promise.race([closed, idle(1000)]);
      assertNoSanitizerReport(output);
      assert.deepEqual(result, { code: 0, signal: null }, `server exit after SIGTERM:\n${output}`);
      assert.ok(elapsed < STOP_TIMEOUT_MS, `server took ${elapsed} ms to exit after SIGTERM`);
      // The watchdog also exits 0: a shutdown that only ended through it did not drain properly.
      assert.doesNotMatch(output, /shutdown took too long/, 'shutdown finished without the watchdog');
      return { ...result, elapsed };
    },
  };
}

// Spawns, retrying for a few seconds while the binary is being relinked (EACCES, ETXTBSY).
async function spawnRetrying(file, argv, options) {
  const deadline = Date.now() + 10000;
  for (;;) {
    const child = spawn(file, argv, options);
    const err = await new Promise((resolve) => {
      child.once('spawn', () => resolve(null));
      child.once('error', resolve);
    });
    if (!err) return child;
    if (!['EACCES', 'ETXTBSY'].includes(err.code) || Date.now() > deadline) {
      throw new Error(`cannot spawn ${file}: ${err.message}`);
    }
    await delay(250);
  }
}

// Runs the server to completion (for start-up failures and --version); returns { code, signal, output }.
// `dataDir` as for startServer.
function runServerOnce({ settings, args = [], env = {}, port = 0, timeoutMs = 10000, dataDir } = {}) {
  const dir = makeTempDir();
  try {
    const argv = ['--port', String(port), '--threads', '1', '--data-dir', dataDir || path.join(dir, 'data')];
    if (settings !== undefined) argv.push('--settings', writeSettings(dir, settings));
    argv.push(...args);
    let r;
    for (let attempt = 0; ; attempt++) {
      r = spawnSync(SERVER_BIN, argv, { cwd: dir, env: { ...process.env, ...env }, timeout: timeoutMs, encoding: 'utf8', killSignal: 'SIGKILL' });
      // Retried while the binary is being relinked.
      if (!r.error || !['EACCES', 'ETXTBSY'].includes(r.error.code) || attempt >= 40) break;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    }
    if (r.error) throw r.error;
    const output = (r.stdout || '') + (r.stderr || '');
    assertNoSanitizerReport(output);
    return { code: r.status, signal: r.signal, output };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// A delay that does not keep the process alive (for the losing side of a race).
function idle(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

module.exports = { startServer, runServerOnce, writeSettings, tempDir, SERVER_BIN, delay };
