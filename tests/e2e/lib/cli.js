// Runs the `siomq` CLI (tools/siomq.cc) for the end-to-end tests: one-shot commands (exit code, stdout,
// stderr) and long-running ones (sub, reply) that count as started once they say so on stderr. Each
// test's CLI sees none of the caller's SIOMQ_* variables and a context file of its own.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { SERVER_BIN } = require('./server');
const { TIME_SCALE } = require('./clients');

const CLI_BIN = process.env.SIOMQ_CLI ? path.resolve(process.env.SIOMQ_CLI) : path.join(path.dirname(SERVER_BIN), 'siomq');
const CLI_VARIABLES = ['SIOMQ_URL', 'SIOMQ_TOKEN', 'TYO_MQ_ADMIN_TOKEN', 'SIOMQ_CONTROL_TOKEN', 'SIOMQ_CA', 'SIOMQ_CONTEXT_FILE'];

// One run's outcome; json() parses stdout as one document, lines() as JSON lines.
function outcome(code, signal, stdout, stderr) {
  return {
    code, signal, stdout, stderr,
    json: () => JSON.parse(stdout),
    lines: () => stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l)),
  };
}

// A CLI for test `t`: `url` becomes SIOMQ_URL (unless null), `env` adds variables.
function makeCli(t, { url, env = {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'siomq-cli-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const base = { ...process.env };
  for (const v of CLI_VARIABLES) delete base[v];
  const contextFile = path.join(dir, 'context.json');
  const baseEnv = { ...base, SIOMQ_CONTEXT_FILE: contextFile, ...(url ? { SIOMQ_URL: url } : {}), ...env };
  const children = new Set();
  t.after(() => { for (const c of children) c.kill('SIGKILL'); });

  function spawnCli(args, extraEnv, input) {
    const child = spawn(CLI_BIN, args, { env: { ...baseEnv, ...extraEnv }, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    const stderrWaiters = new Set();
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => {
      stderr += d;
      for (const w of stderrWaiters) w();
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    const result = new Promise((resolve) => {
      child.on('close', (code, signal) => {
        children.delete(child);
        resolve(outcome(code, signal, stdout, stderr));
      });
    });
    // Resolves once stderr matches `re`; rejects after `ms`, or when the process exits first.
    const waitStderr = (re, ms) => new Promise((resolve, reject) => {
      let timer;
      const finish = (err) => {
        stderrWaiters.delete(check);
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const check = () => { if (re.test(stderr)) finish(); };
      timer = setTimeout(() => finish(new Error(`siomq ${args.join(' ')}: no ${re} on stderr in ${ms} ms:\n${stderr}`)), ms);
      stderrWaiters.add(check);
      result.then(() => {
        if (stderrWaiters.has(check)) finish(new Error(`siomq ${args.join(' ')} exited before ${re}:\n${stderr}`));
      });
      check();
    });
    return { child, result, waitStderr };
  }

  return {
    contextFile,
    env: baseEnv,
    // Runs to completion (killed after `timeoutMs`); stdin gets `input` and is closed.
    async run(args, { env: extraEnv = {}, input = '', timeoutMs = 30000 * TIME_SCALE } = {}) {
      const { child, result } = spawnCli(args, extraEnv, input);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await result;
      } finally {
        clearTimeout(timer);
      }
    },
    // Starts a long-running command; resolves once its stderr matches `ready`. `result` resolves at its exit.
    async start(args, { env: extraEnv = {}, ready = /siomq: (subscribed|answering)/, readyMs = 15000 * TIME_SCALE } = {}) {
      const started = spawnCli(args, extraEnv, '');
      await started.waitStderr(ready, readyMs);
      return started;
    },
  };
}

module.exports = { makeCli, CLI_BIN };
