// HTTP publish helpers (tyo-mq §9): plain requests with Node's http (a keep-alive agent optional) and a
// raw Server-Sent Events reader that parses frames and comments as they arrive.
'use strict';

const http = require('node:http');

// Resolves { status, headers, body (string), json (parsed or undefined) }.
function request(port, method, path, { headers = {}, body, agent } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: agent || false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: res.headers, body: text, json });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function bearer(token) { return token ? { authorization: `Bearer ${token}` } : {}; }

// Opens GET `path` as an event stream. Resolves once the head arrived (or the request was answered
// otherwise): { status, headers, frames: [{id, event, data}], comments: [text], raw, res, req, body,
// closed (promise), waitFrames(n, ms), pause(), resume(), close() }.
function openSse(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const stream = { frames: [], comments: [], raw: '' };
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path, headers, agent: false }, (res) => {
      stream.status = res.statusCode;
      stream.headers = res.headers;
      stream.res = res;
      let pending = '';
      stream.closed = new Promise((r) => { res.on('close', r); res.on('error', r); });
      res.on('error', () => {});
      res.on('data', (c) => {
        const text = c.toString('utf8');
        if (stream.raw.length < 65536) stream.raw += text;  // the start, for assertions and messages
        pending += text;
        let end;
        // Only the new bytes (and the separator's first byte before them) can hold a new frame end.
        if (pending.indexOf('\n\n', Math.max(0, pending.length - text.length - 1)) < 0) return;
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (block.startsWith(':')) { stream.comments.push(block.slice(1).trim()); continue; }
          const f = {};
          for (const line of block.split('\n')) {
            const i = line.indexOf(': ');
            f[line.slice(0, i)] = line.slice(i + 2);
          }
          if (f.data) f.data = JSON.parse(f.data);
          stream.frames.push(f);
        }
      });
      resolve(stream);
    });
    stream.req = req;
    req.on('error', (e) => { if (!stream.res) reject(e); });
    req.end();
    stream.waitFrames = async (n, ms = 5000) => {
      const until = Date.now() + ms;
      while (stream.frames.length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} frames, have ${stream.frames.length}: ${stream.raw}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return stream.frames;
    };
    stream.close = () => { req.destroy(); };
  });
}

module.exports = { request, bearer, openSse };
