// What the Node benchmarks share: the socket.io-client@4 of the e2e tests, and a WebSocket connection.
const path = require('path');
const { io } = require(path.join(__dirname, '../tests/e2e/node_modules/socket.io-client'));

// A new WebSocket-only connection to `url`, without reconnection; resolves once connected.
const connect = (url) => new Promise((resolve, reject) => {
  const s = io(url, { transports: ['websocket'], forceNew: true, reconnection: false });
  s.once('connect', () => resolve(s));
  s.once('connect_error', reject);
});

module.exports = { io, connect };
