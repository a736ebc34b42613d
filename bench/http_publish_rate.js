#!/usr/bin/env node
// HTTP publish (tyo-mq §9) throughput, with Node's http client (quick to write and what a JavaScript caller
// sees; bound by the client side on a small host, like the other Node scripts here).
//   node bench/http_publish_rate.js pub <url> <connections> <seconds>
//     POST /pub/default/bench with keep-alive, `connections` requests in flight (one per connection);
//     prints requests/s.
//   node bench/http_publish_rate.js pub-guaranteed <url> <connections> <seconds>
//     the same with ?guaranteed=1: each 202 waits for the SSE resume history's store write.
//   node bench/http_publish_rate.js sse <url> <streams> <messages>
//     opens `streams` GET /sub/default/bench streams, publishes `messages` over one keep-alive connection,
//     and prints SSE deliveries/s (streams × messages / time until every stream has them all).
// The server needs http_publish enabled and, for sse, sse_streams_per_realm / sse_streams_per_ip at least
// `streams` (auth off: no token is needed).
const http = require('http');

const [mode = 'pub', url = 'http://127.0.0.1:17352', a = '1', b = '5'] = process.argv.slice(2);
const { hostname, port } = new URL(url);

const PUB_PATH = mode === 'pub-guaranteed' ? '/pub/default/bench?guaranteed=1' : '/pub/default/bench';

function post(agent, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method: 'POST', path: PUB_PATH, agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 202 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function pubRate(connections, seconds) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const until = Date.now() + seconds * 1000;
  let done = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: connections }, async () => {
    while (Date.now() < until) { await post(agent, '{"n":1}'); done++; }
  }));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  agent.destroy();
  console.log(JSON.stringify({ scenario: mode === 'pub-guaranteed' ? 'http_pub_guaranteed' : 'http_pub', connections, requests: done, seconds: +s.toFixed(2),
    requests_per_s: Math.round(done / s) }));
}

async function sseRate(streams, messages) {
  let received = 0;
  const opened = [];
  for (let i = 0; i < streams; i++) {
    opened.push(await new Promise((resolve, reject) => {
      const req = http.get({ host: hostname, port, path: '/sub/default/bench', agent: false }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (t) => { for (let k = t.indexOf('\nevent: message'); k >= 0; k = t.indexOf('\nevent: message', k + 1)) received++; });
        resolve(req);
      });
      req.on('error', reject);
    }));
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < messages; i++) await post(agent, '{"n":1}');
  const want = streams * messages;
  while (received < want) await new Promise((r) => setTimeout(r, 5));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  for (const r of opened) r.destroy();
  agent.destroy();
  console.log(JSON.stringify({ scenario: 'sse_fanout', streams, messages, deliveries: want, seconds: +s.toFixed(2),
    deliveries_per_s: Math.round(want / s) }));
}

(mode === 'sse' ? sseRate(Number(a), Number(b)) : pubRate(Number(a), Number(b))).catch((e) => {
  console.error(e);
  process.exit(1);
});
