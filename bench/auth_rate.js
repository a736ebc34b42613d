#!/usr/bin/env node
// AUTHENTICATIONs answered per second: C connected sockets each authenticate once, all at the same time,
// with a static token, a JWT (global jwt_secret) or a token an external validator (an HTTP server in this
// process) accepts. Start the server with the settings this prints for `--print-settings PORT`, e.g.:
//   node bench/auth_rate.js --print-settings 18999 > /tmp/auth.json
//   siomq-server --settings /tmp/auth.json --port 17352 &
//   node bench/auth_rate.js http://127.0.0.1:17352 1000 18999
// Prints one JSON line per token kind.
const crypto = require('crypto');
const http = require('http');
const { connect } = require('./lib');

const JWT_SECRET = 'bench-jwt-secret';
const b64url = (b) => Buffer.from(b).toString('base64').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
function jwt(payload) {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify(payload));
  return `${head}.${body}.${b64url(crypto.createHmac('sha256', JWT_SECRET).update(`${head}.${body}`).digest())}`;
}

if (process.argv[2] === '--print-settings') {
  const port = Number(process.argv[3] || 18999);
  console.log(JSON.stringify({
    auth: {
      enabled: true, jwt_secret: JWT_SECRET, auth_url: `http://127.0.0.1:${port}/check`,
      tokens: [{ token: 'bench-static', realm: 'bench', role: 'both' }],
    },
  }));
  process.exit(0);
}

const url = process.argv[2] || 'http://127.0.0.1:17352';
const count = Number(process.argv[3] || 1000);
const validatorPort = Number(process.argv[4] || 18999);

async function round(kind, tokenFor) {
  const sockets = [];
  for (let i = 0; i < count; i++) sockets.push(await connect(url));
  const start = process.hrtime.bigint();
  const answers = await Promise.all(sockets.map((s, i) => new Promise((resolve) => {
    s.once('AUTH_OK', () => resolve(true));
    s.once('AUTH_FAIL', () => resolve(false));
    s.emit('AUTHENTICATION', { token: tokenFor(i) });
  })));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  for (const s of sockets) s.close();
  const ok = answers.filter(Boolean).length;
  console.log(JSON.stringify({ kind, sockets: count, ok, seconds: +seconds.toFixed(3), auths_per_s: Math.round(count / seconds) }));
}

(async () => {
  const validator = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ realm: 'bench', role: 'both', token: JSON.parse(body).token.length }));
    });
  });
  await new Promise((r) => validator.listen(validatorPort, '127.0.0.1', r));
  await round('static', () => 'bench-static');
  await round('jwt', (i) => jwt({ realm: 'bench', role: 'both', sub: `u${i}`, exp: Math.floor(Date.now() / 1000) + 600 }));
  await round('external', (i) => `opaque-${i}`);
  validator.close();
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
