#!/usr/bin/env node
// The Node.js tyo-mq broker from npm (tyo-mq@0.2.14, Socket.IO v2 / Engine.IO 3) on PORT (default 17352),
// as its own server.js starts it. Usage: node bench/peers/tyo-mq-server.js [port]
const path = require('path');
const Server = require(path.join(__dirname, 'node_modules/tyo-mq')).Server;

const port = Number(process.argv[2] || process.env.PORT || 17352);
const server = new Server();
// Its logger writes a line per subscription (error level) and per message (debug level, to stdout): the
// best case for it is a quiet logger (the message text is still built: that is in its code).
const quiet = () => {};
server.logger = { log: console.log, info: quiet, warn: console.warn, error: quiet, debug: quiet };
server.start(port);
process.on('SIGTERM', () => process.exit(0));
